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

/// Multiplier that spreads lattice x coordinates (a large odd constant).
pub(crate) const PRIME_X: u64 = 0x9E37_79B9_7F4A_7C15;
/// Multiplier that spreads lattice y coordinates.
pub(crate) const PRIME_Y: u64 = 0xC2B2_AE3D_27D4_EB4F;
/// Multiplier that spreads lattice z coordinates.
pub(crate) const PRIME_Z: u64 = 0x1656_67B1_9E37_79F9;
/// Final multiplier of [`lattice`].
const LATTICE_MUL: u64 = 0xD6E8_FEB8_6659_FD93;

/// A fast hash of a key and pre-multiplied lattice coordinates
/// (`x * PRIME_X ^ y * PRIME_Y ...`), good in its top bits. Used to pick
/// gradients, where it runs four or eight times per sample.
#[inline(always)]
pub(crate) const fn lattice(key: u64, primed: u64) -> u64 {
    let h = (key ^ primed).wrapping_mul(LATTICE_MUL);
    (h ^ (h >> 29)).wrapping_mul(LATTICE_MUL)
}

/// A uniform value in `[0, 1)` from the top 24 bits of a hash.
#[inline(always)]
pub(crate) const fn unit_f32(h: u64) -> f32 {
    (h >> 40) as f32 * (1.0 / (1u64 << 24) as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_and_points_differ() {
        assert_ne!(derive(1, 0), derive(1, 1));
        assert_ne!(derive(1, 0), derive(2, 0));
        assert_ne!(hash2(7, 1, 0), hash2(7, 0, 1));
        let p =
            |x: i64, y: i64| (x as u64).wrapping_mul(PRIME_X) ^ (y as u64).wrapping_mul(PRIME_Y);
        assert_ne!(lattice(7, p(1, 0)) >> 60, lattice(7, p(0, 1)) >> 60);
    }

    #[test]
    fn lattice_top_bits_are_balanced() {
        // Each of the 16 gradient slots gets close to 1/16 of a block of lattice points.
        let mut counts = [0u32; 16];
        for y in -64i64..64 {
            for x in -64i64..64 {
                let primed = (x as u64).wrapping_mul(PRIME_X) ^ (y as u64).wrapping_mul(PRIME_Y);
                counts[(lattice(99, primed) >> 60) as usize] += 1;
            }
        }
        for c in counts {
            assert!((850..=1200).contains(&c), "{counts:?}");
        }
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
