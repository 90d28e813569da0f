//! Integer hashing used to derive every random quantity from a seed.
//!
//! Nothing here keeps state: each value is a pure function of its inputs, so
//! results never depend on evaluation order or thread count.

/// The splitmix64 step: a bijective mix of a 64-bit value.
#[inline(always)]
pub(crate) const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Derives an independent 64-bit key from a seed and a stream number (a
/// layer, an octave, ...). Different streams of the same seed are unrelated.
#[inline]
pub(crate) const fn derive(seed: u64, stream: u64) -> u64 {
    mix64(
        mix64(seed ^ 0x9E37_79B9_7F4A_7C15)
            .wrapping_add(stream.wrapping_mul(0xD1B5_4A32_D192_ED03)),
    )
}

/// Hash of a key and a 2D lattice point.
#[inline(always)]
pub(crate) const fn hash2(key: u64, x: i32, y: i32) -> u64 {
    let packed = (x as u32 as u64) | ((y as u32 as u64) << 32);
    mix64(key ^ packed)
}

/// A uniform value in `[0, 1)` from the top 24 bits of a hash.
#[inline(always)]
pub(crate) const fn unit_f32(h: u64) -> f32 {
    (h >> 40) as f32 * (1.0 / (1u64 << 24) as f32)
}

/// 32-bit multiplier that spreads lattice x coordinates (odd).
pub(crate) const P32_X: u32 = 0x8DA6_B343;
/// 32-bit multiplier that spreads lattice y coordinates (odd).
pub(crate) const P32_Y: u32 = 0xD816_3841;
/// 32-bit multiplier that spreads lattice z coordinates (odd).
pub(crate) const P32_Z: u32 = 0xCB1A_B31F;

/// A fast 32-bit hash of a key and pre-multiplied lattice coordinates
/// (`x * P32_X ^ y * P32_Y ...`), good in its top bits. It is built from
/// 32-bit integer operations only, so eight of them run in one vector
/// register.
#[inline(always)]
pub(crate) const fn lattice32(key: u32, primed: u32) -> u32 {
    let h = (key ^ primed).wrapping_mul(0x27D4_EB2D);
    h ^ (h >> 15)
}

/// The multiplier of [`lattice_top`].
pub(crate) const LATTICE_MUL: u32 = 0x27D4_EB2D;

/// The cheaper hash for gradient selection, which reads only the top bits:
/// a multiply alone mixes every input bit into them.
#[inline(always)]
pub(crate) const fn lattice_top(key: u32, primed: u32) -> u32 {
    lattice_top_mul(key, primed, LATTICE_MUL)
}

/// [`lattice_top`] with its multiplier passed in; `mul` must be
/// [`LATTICE_MUL`].
///
/// Batch loops pass the multiplier through [`std::hint::black_box`] once per
/// row: with a constant, the optimiser rewrites every later shift of the
/// hash (`h << 3` to pick a gradient sign bit) as one more vector multiply
/// by a shifted constant (three multiplies per 3D corner instead of one).
/// That is neutral where vector multiplies are cheap (measured on AMD EPYC)
/// and avoids two slow multiplies per corner elsewhere. The value is the
/// same integer either way.
#[inline(always)]
pub(crate) const fn lattice_top_mul(key: u32, primed: u32, mul: u32) -> u32 {
    (key ^ primed).wrapping_mul(mul)
}

/// [`LATTICE_MUL`], hidden from the optimiser (see [`lattice_top_mul`]).
#[inline(always)]
pub(crate) fn opaque_lattice_mul() -> u32 {
    std::hint::black_box(LATTICE_MUL)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_and_points_differ() {
        assert_ne!(derive(1, 0), derive(1, 1));
        assert_ne!(derive(1, 0), derive(2, 0));
        assert_ne!(hash2(7, 1, 0), hash2(7, 0, 1));
        assert_ne!(lattice32(7, P32_X), lattice32(7, P32_Y));
    }

    #[test]
    fn lattice32_top_bits_are_balanced() {
        let mut counts = [0u32; 16];
        let mut low = [0u32; 16];
        for y in -64i32..64 {
            for x in -64i32..64 {
                let primed = (x as u32).wrapping_mul(P32_X) ^ (y as u32).wrapping_mul(P32_Y);
                let h = lattice32(0x1234_5678, primed);
                counts[(h >> 28) as usize] += 1;
                low[((h >> 8) & 15) as usize] += 1;
            }
        }
        for c in counts.iter().chain(low.iter()) {
            assert!((850..=1200).contains(c), "{counts:?} {low:?}");
        }
        let mut top = [0u32; 16];
        for y in -64i32..64 {
            for x in -64i32..64 {
                let primed = (x as u32).wrapping_mul(P32_X) ^ (y as u32).wrapping_mul(P32_Y);
                top[(lattice_top(0x9E37_79B9, primed) >> 28) as usize] += 1;
            }
        }
        assert!(top.iter().all(|c| (850..=1200).contains(c)), "{top:?}");
    }

    #[test]
    fn unit_values_lie_in_half_open_range() {
        assert_eq!(unit_f32(0), 0.0);
        assert!(unit_f32(u64::MAX) < 1.0);
        // Roughly uniform: the mean of many hashes is near 0.5.
        let mean: f64 = (0..10_000)
            .map(|i| unit_f32(hash2(3, i, -i)) as f64)
            .sum::<f64>()
            / 10_000.0;
        assert!((mean - 0.5).abs() < 0.02, "mean {mean}");
    }
}
