//! Improved Perlin gradient noise in 2D and 3D, seeded by lattice hashing.

use std::f32::consts::SQRT_2;

use super::hash::{PRIME_X, PRIME_Y, PRIME_Z, lattice, mix64};
use super::{Noise2, Noise3, clamp_unit};

/// 16 gradient directions, 22.5 degrees apart, each of length √2.
const GRAD2: [[f32; 2]; 16] = [
    [SQRT_2, 0.0],
    [1.306_563, 0.541_196_1],
    [1.0, 1.0],
    [0.541_196_1, 1.306_563],
    [0.0, SQRT_2],
    [-0.541_196_1, 1.306_563],
    [-1.0, 1.0],
    [-1.306_563, 0.541_196_1],
    [-SQRT_2, 0.0],
    [-1.306_563, -0.541_196_1],
    [-1.0, -1.0],
    [-0.541_196_1, -1.306_563],
    [0.0, -SQRT_2],
    [0.541_196_1, -1.306_563],
    [1.0, -1.0],
    [1.306_563, -0.541_196_1],
];

/// The 12 cube-edge gradients of improved noise, padded to 16 entries by
/// repeating four of them (the classic trick that avoids a modulo).
const GRAD3: [[f32; 3]; 16] = [
    [1.0, 1.0, 0.0],
    [-1.0, 1.0, 0.0],
    [1.0, -1.0, 0.0],
    [-1.0, -1.0, 0.0],
    [1.0, 0.0, 1.0],
    [-1.0, 0.0, 1.0],
    [1.0, 0.0, -1.0],
    [-1.0, 0.0, -1.0],
    [0.0, 1.0, 1.0],
    [0.0, -1.0, 1.0],
    [0.0, 1.0, -1.0],
    [0.0, -1.0, -1.0],
    [1.0, 1.0, 0.0],
    [-1.0, 1.0, 0.0],
    [0.0, -1.0, 1.0],
    [0.0, -1.0, -1.0],
];

/// Scale that maps the analytic 3D maximum (about 1.03636) below 1.
const SCALE3: f32 = 0.9648;

/// Seeded improved Perlin noise (quintic fade, hashed gradients).
///
/// The gradient at each lattice point is chosen by a 64-bit hash of the seed
/// and the lattice coordinates, so the noise has no period and needs no
/// permutation table. Values lie in `[-1, 1]` (see the [module docs](crate::noise)
/// for the analytic bounds). Lattice coordinates are 32-bit: coordinates
/// beyond about `±2^24` lose fractional precision.
///
/// ```
/// use isoterra_field::{Noise2, Perlin};
/// let p = Perlin::new(42);
/// let v = p.sample2(3.25, -7.5);
/// assert!((-1.0..=1.0).contains(&v));
/// assert_eq!(v, Perlin::new(42).sample2(3.25, -7.5));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Perlin {
    seed: u64,
    key: u64,
}

impl Perlin {
    /// Noise for `seed`.
    pub const fn new(seed: u64) -> Self {
        Perlin {
            seed,
            key: mix64(seed ^ 0x5EED_9E37_79B9_7F4A),
        }
    }

    /// The seed this noise was built from.
    pub const fn seed(&self) -> u64 {
        self.seed
    }
}

/// Integer part (rounded toward negative infinity) and fractional part.
/// Saturates far outside the `i32` range and maps NaN to lattice 0.
#[inline(always)]
fn split(v: f32) -> (i32, f32) {
    let t = v as i32;
    let i = if (t as f32) > v {
        t.saturating_sub(1)
    } else {
        t
    };
    (i, v - i as f32)
}

/// The quintic fade curve `6t^5 - 15t^4 + 10t^3`.
#[inline(always)]
fn fade(t: f32) -> f32 {
    t * t * t * (t * (t * 6.0 - 15.0) + 10.0)
}

#[inline(always)]
fn grad2(h: u64, dx: f32, dy: f32) -> f32 {
    let g = GRAD2[(h >> 60) as usize];
    g[0] * dx + g[1] * dy
}

#[inline(always)]
fn grad3(h: u64, dx: f32, dy: f32, dz: f32) -> f32 {
    let g = GRAD3[(h >> 60) as usize];
    g[0] * dx + g[1] * dy + g[2] * dz
}

/// 2D improved Perlin noise for a hashed key; the building block of
/// [`Perlin`] and the fBm octaves.
#[inline(always)]
pub(crate) fn perlin2(key: u64, x: f32, y: f32) -> f32 {
    let (ix, fx) = split(x);
    let (iy, fy) = split(y);
    // Lattice coordinates are spread by multiplication once; the "+1"
    // neighbours just add the multiplier (wrapping, like the i32 lattice).
    let px0 = (ix as i64 as u64).wrapping_mul(PRIME_X);
    let px1 = px0.wrapping_add(PRIME_X);
    let py0 = (iy as i64 as u64).wrapping_mul(PRIME_Y);
    let py1 = py0.wrapping_add(PRIME_Y);
    let n00 = grad2(lattice(key, px0 ^ py0), fx, fy);
    let n10 = grad2(lattice(key, px1 ^ py0), fx - 1.0, fy);
    let n01 = grad2(lattice(key, px0 ^ py1), fx, fy - 1.0);
    let n11 = grad2(lattice(key, px1 ^ py1), fx - 1.0, fy - 1.0);
    let u = fade(fx);
    let v = fade(fy);
    let a = n00 + u * (n10 - n00);
    let b = n01 + u * (n11 - n01);
    clamp_unit(a + v * (b - a))
}

/// 3D improved Perlin noise for a hashed key.
#[inline(always)]
pub(crate) fn perlin3(key: u64, x: f32, y: f32, z: f32) -> f32 {
    let (ix, fx) = split(x);
    let (iy, fy) = split(y);
    let (iz, fz) = split(z);
    let px0 = (ix as i64 as u64).wrapping_mul(PRIME_X);
    let px1 = px0.wrapping_add(PRIME_X);
    let py0 = (iy as i64 as u64).wrapping_mul(PRIME_Y);
    let py1 = py0.wrapping_add(PRIME_Y);
    let pz0 = (iz as i64 as u64).wrapping_mul(PRIME_Z);
    let pz1 = pz0.wrapping_add(PRIME_Z);
    let (gx, gy, gz) = (fx - 1.0, fy - 1.0, fz - 1.0);
    let n000 = grad3(lattice(key, px0 ^ py0 ^ pz0), fx, fy, fz);
    let n100 = grad3(lattice(key, px1 ^ py0 ^ pz0), gx, fy, fz);
    let n010 = grad3(lattice(key, px0 ^ py1 ^ pz0), fx, gy, fz);
    let n110 = grad3(lattice(key, px1 ^ py1 ^ pz0), gx, gy, fz);
    let n001 = grad3(lattice(key, px0 ^ py0 ^ pz1), fx, fy, gz);
    let n101 = grad3(lattice(key, px1 ^ py0 ^ pz1), gx, fy, gz);
    let n011 = grad3(lattice(key, px0 ^ py1 ^ pz1), fx, gy, gz);
    let n111 = grad3(lattice(key, px1 ^ py1 ^ pz1), gx, gy, gz);
    let u = fade(fx);
    let v = fade(fy);
    let w = fade(fz);
    let a0 = n000 + u * (n100 - n000);
    let b0 = n010 + u * (n110 - n010);
    let a1 = n001 + u * (n101 - n001);
    let b1 = n011 + u * (n111 - n011);
    let c0 = a0 + v * (b0 - a0);
    let c1 = a1 + v * (b1 - a1);
    clamp_unit((c0 + w * (c1 - c0)) * SCALE3)
}

impl Noise2 for Perlin {
    #[inline]
    fn sample2(&self, x: f32, y: f32) -> f32 {
        perlin2(self.key, x, y)
    }
}

impl Noise3 for Perlin {
    #[inline]
    fn sample3(&self, x: f32, y: f32, z: f32) -> f32 {
        perlin3(self.key, x, y, z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gradients_have_equal_length() {
        for g in GRAD2 {
            let len2 = g[0] * g[0] + g[1] * g[1];
            assert!((len2 - 2.0).abs() < 1e-5, "{g:?}");
        }
        for g in GRAD3 {
            assert_eq!(g[0].abs() + g[1].abs() + g[2].abs(), 2.0);
        }
    }

    #[test]
    fn zero_on_lattice_points() {
        let p = Perlin::new(9);
        for (x, y) in [(0.0, 0.0), (3.0, -2.0), (-17.0, 40.0)] {
            assert_eq!(p.sample2(x, y), 0.0);
            assert_eq!(p.sample3(x, y, 5.0), 0.0);
        }
    }

    #[test]
    fn split_rounds_toward_negative_infinity() {
        assert_eq!(split(1.5), (1, 0.5));
        assert_eq!(split(-1.5), (-2, 0.5));
        assert_eq!(split(-2.0), (-2, 0.0));
        assert_eq!(split(f32::NAN).0, 0);
        assert_eq!(split(-1e20).0, i32::MIN);
    }

    #[test]
    fn non_finite_coordinates_stay_in_range() {
        let p = Perlin::new(1);
        for v in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e30, -1e30] {
            let a = p.sample2(v, 0.5);
            let b = p.sample3(0.5, v, v);
            assert!((-1.0..=1.0).contains(&a), "{v} -> {a}");
            assert!((-1.0..=1.0).contains(&b), "{v} -> {b}");
        }
    }

    #[test]
    fn reaches_most_of_its_range() {
        // The bound is tight enough to be useful: dense sampling gets close to it.
        let p = Perlin::new(5);
        let mut lo: f32 = 0.0;
        let mut hi: f32 = 0.0;
        for j in 0..400 {
            for i in 0..400 {
                let v = p.sample2(i as f32 * 0.25 + 0.125, j as f32 * 0.25 + 0.125);
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
        assert!(hi > 0.7 && lo < -0.7, "range [{lo}, {hi}]");
    }
}
