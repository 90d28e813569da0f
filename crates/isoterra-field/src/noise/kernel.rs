//! Small branch-free building blocks shared by the noise kernels.
//!
//! Everything here uses only IEEE-exact operations (`+`, `-`, `*`, compares,
//! selects, integer bit operations and float/int conversions), never a fused
//! multiply-add or a library function, so the same inputs give the same bits
//! whether a kernel runs on one value or on eight or sixteen lanes of a vector
//! register.

/// True when this x86-64 CPU can run the AVX2 builds of the batch loops
/// (the result is cached by the standard library).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn have_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

/// True when this x86-64 CPU can run the AVX-512 builds of the row loops
/// (16 lanes a group instead of 8; the values are the same bits).
///
/// Setting the environment variable `ISOTERRA_NO_AVX512` (to anything) before
/// the first call keeps a process on the AVX2 builds, to compare the two on
/// one machine. The answer is decided once per process.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn have_avx512() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var_os("ISOTERRA_NO_AVX512").is_none()
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512dq")
    })
}

/// Runs the first of `avx512`, `avx2` and `plain` this CPU can run and
/// returns its value from the enclosing function: the three are builds of
/// one body (with `#[target_feature]` on the first two), so they give the
/// same bits and differ only in how many lanes an instruction handles.
macro_rules! widest {
    (avx512: $avx512:expr, avx2: $avx2:expr, plain: $plain:expr $(,)?) => {{
        #[cfg(target_arch = "x86_64")]
        if $crate::noise::kernel::have_avx512() {
            // SAFETY: the CPU supports AVX-512 (checked just above).
            return unsafe { $avx512 };
        }
        #[cfg(target_arch = "x86_64")]
        if $crate::noise::kernel::have_avx2() {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { $avx2 };
        }
        $plain
    }};
}
pub(crate) use widest;

/// Calls `f(first, last)` for the groups of up to `N` consecutive indices
/// that cover `0..len`: a group starts at `first` and holds
/// `first..=first + last`; a batch loop fills its lanes past `last` with
/// the last index again and keeps only the first `last + 1` results.
#[inline(always)]
pub(crate) fn groups<const N: usize>(len: usize, mut f: impl FnMut(usize, usize)) {
    let mut first = 0;
    while first < len {
        f(first, (len - first).min(N) - 1);
        first += N;
    }
}

/// Coordinates are clamped to this magnitude before conversion to an
/// integer lattice index, so the conversion never overflows.
const INDEX_LIMIT: f32 = 2.0e9;

/// Rounds toward negative infinity, as an `i32`.
///
/// Non-finite and huge values are first clamped to `±2e9` (NaN goes to
/// `-2e9`), so the result is always defined. Unlike `v as i32` this compiles
/// to plain vector conversions when eight of them run side by side.
#[inline(always)]
pub(crate) fn floor_i32(v: f32) -> i32 {
    // Two selects that compile to one max and one min: NaN fails the first
    // compare and becomes -2e9; values in range (-0.0 included) pass
    // through unchanged.
    let c = if v > -INDEX_LIMIT { v } else { -INDEX_LIMIT };
    let c = if c < INDEX_LIMIT { c } else { INDEX_LIMIT };
    // SAFETY: `c` is finite and within ±2e9, so truncation fits in an i32.
    let t: i32 = unsafe { c.to_int_unchecked() };
    t - ((t as f32 > c) as i32)
}

/// The quintic fade curve `6t^5 - 15t^4 + 10t^3`.
#[inline(always)]
pub(crate) fn fade(t: f32) -> f32 {
    t * t * t * (t * (t * 6.0 - 15.0) + 10.0)
}

/// Flips the sign of `v` when `bit` (0 or 1) is set.
#[inline(always)]
pub(crate) fn flip(v: f32, bit: u32) -> f32 {
    f32::from_bits(v.to_bits() ^ (bit << 31))
}

/// `a` when `c`, else `b` (compiles to a blend).
#[inline(always)]
pub(crate) fn sel(c: bool, a: f32, b: f32) -> f32 {
    if c { a } else { b }
}

/// Dot product of `(dx, dy)` with one of the 4 diagonal gradients
/// `(±1, ±1)`, chosen by the top two bits of `h`: two sign flips and an add.
#[inline(always)]
pub(crate) fn grad2_diag(h: u32, dx: f32, dy: f32) -> f32 {
    f32::from_bits(dx.to_bits() ^ (h & 0x8000_0000))
        + f32::from_bits(dy.to_bits() ^ ((h << 1) & 0x8000_0000))
}

/// Dot product of `(dx, dy)` with one of 8 gradients of length `√2`
/// (the four diagonals `(±1, ±1)` and the axes `(±√2, 0)`, `(0, ±√2)`),
/// chosen by the top three bits of `h` with arithmetic, not a table.
#[inline(always)]
pub(crate) fn grad2(h: u32, dx: f32, dy: f32) -> f32 {
    let sx = h >> 31;
    let sy = (h >> 30) & 1;
    let axis = (h >> 29) & 1 != 0;
    let p = sel(axis, sel(sy != 0, dx, dy) * std::f32::consts::SQRT_2, dx);
    let q = sel(axis, 0.0, dy);
    flip(p, sx) + flip(q, sy)
}

/// Dot product of `(dx, dy, dz)` with one of the 12 cube-edge gradients of
/// improved noise (16 slots, four repeated), chosen by the top four bits of
/// `h` with selects.
#[inline(always)]
pub(crate) fn grad3(h: u32, dx: f32, dy: f32, dz: f32) -> f32 {
    // With g = h >> 28 (bits b31 b30 b29 b28): u is dx for g < 8, else dy;
    // v is dy for g < 4, dx for g = 12 or 14, else dz. Every choice is
    // tested on a sign bit (b31, b28, b31 != b30), which a vector blend
    // reads directly, with no compare.
    let neg = |bits: u32| (bits as i32) < 0;
    let u = sel(neg(h), dy, dx);
    let inner = sel(neg(h), sel(neg(h << 3), dz, dx), dy);
    let v = sel(neg(h ^ (h << 1)), dz, inner);
    flip(u, (h >> 28) & 1) + flip(v, (h >> 29) & 1)
}

/// A value in `[-1, 1)` from the top 24 bits of a hash (exact in f32).
#[inline(always)]
pub(crate) fn signed_unit(h: u32) -> f32 {
    (h >> 8) as i32 as f32 * (1.0 / 8_388_608.0) - 1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_rounds_toward_negative_infinity() {
        assert_eq!(floor_i32(1.5), 1);
        assert_eq!(floor_i32(-1.5), -2);
        assert_eq!(floor_i32(-2.0), -2);
        assert_eq!(floor_i32(0.0), 0);
        assert_eq!(floor_i32(-0.0), 0);
        assert_eq!(floor_i32(f32::NAN), -2_000_000_000);
        assert_eq!(floor_i32(f32::INFINITY), 2_000_000_000);
        assert_eq!(floor_i32(-1e20), -2_000_000_000);
    }

    #[test]
    fn gradients_cover_their_sets() {
        use std::collections::HashSet;
        let mut g2 = HashSet::new();
        let mut g3 = HashSet::new();
        for top in 0..16u32 {
            let h = top << 28;
            let a = grad2(h, 1.0, 0.0);
            let b = grad2(h, 0.0, 1.0);
            assert!((a * a + b * b - 2.0).abs() < 1e-6, "{a} {b}");
            g2.insert((a.to_bits(), b.to_bits()));
            let v = [
                grad3(h, 1.0, 0.0, 0.0),
                grad3(h, 0.0, 1.0, 0.0),
                grad3(h, 0.0, 0.0, 1.0),
            ];
            assert_eq!(v.iter().map(|c| c.abs()).sum::<f32>(), 2.0, "{v:?}");
            g3.insert(v.map(f32::to_bits));
        }
        assert_eq!(g2.len(), 8);
        let mut diag = HashSet::new();
        for top in 0..4u32 {
            let h = top << 30;
            let (a, b) = (grad2_diag(h, 1.0, 0.0), grad2_diag(h, 0.0, 1.0));
            assert_eq!((a.abs(), b.abs()), (1.0, 1.0));
            diag.insert((a.to_bits(), b.to_bits()));
        }
        assert_eq!(diag.len(), 4);
        assert_eq!(g3.len(), 12);
    }

    #[test]
    fn hash_values_lie_in_their_ranges() {
        assert_eq!(signed_unit(0), -1.0);
        assert!(signed_unit(u32::MAX) < 1.0);
    }
}
