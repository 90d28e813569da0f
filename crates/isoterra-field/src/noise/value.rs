//! Value noise: random values at lattice points, smoothly interpolated.

use super::hash::{P32_X, lattice32, mix64};
use super::kernel::{fade, floor_i32, signed_unit};
use super::perlin::{Row2, Row3};
use super::{LANES, Noise2, Noise3, clamp_unit};

/// Seeded value noise: every lattice point holds a hashed value in
/// `[-1, 1)`, blended with the quintic fade curve.
///
/// The result is a convex combination of lattice values, so its analytic
/// range is `[-1, 1)`. Cheaper and blockier than [`Perlin`](crate::Perlin).
///
/// ```
/// use isoterra_field::{Noise2, ValueNoise};
/// let v = ValueNoise::new(3).sample2(0.5, 1.25);
/// assert!((-1.0..1.0).contains(&v));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ValueNoise {
    seed: u64,
    key: u32,
}

impl ValueNoise {
    /// Noise for `seed`.
    pub const fn new(seed: u64) -> Self {
        ValueNoise {
            seed,
            key: (mix64(seed ^ 0x7A1E_0000_5EED_0001) >> 32) as u32,
        }
    }

    /// The seed this noise was built from.
    pub const fn seed(&self) -> u64 {
        self.seed
    }
}

/// 2D value noise at `x` on row `r` (range `[-1, 1)`).
#[inline(always)]
pub(crate) fn value2_row(key: u32, x: f32, r: &Row2) -> f32 {
    let ix = floor_i32(x);
    let fx = x - ix as f32;
    let px0 = (ix as u32).wrapping_mul(P32_X);
    let px1 = px0.wrapping_add(P32_X);
    let v00 = signed_unit(lattice32(key, px0 ^ r.py0));
    let v10 = signed_unit(lattice32(key, px1 ^ r.py0));
    let v01 = signed_unit(lattice32(key, px0 ^ r.py1));
    let v11 = signed_unit(lattice32(key, px1 ^ r.py1));
    let u = fade(fx);
    let a = v00 + u * (v10 - v00);
    let b = v01 + u * (v11 - v01);
    a + r.v * (b - a)
}

/// 3D value noise at `x` on row `r` (range `[-1, 1)`).
#[inline(always)]
pub(crate) fn value3_row(key: u32, x: f32, r: &Row3) -> f32 {
    let ix = floor_i32(x);
    let fx = x - ix as f32;
    let px0 = (ix as u32).wrapping_mul(P32_X);
    let px1 = px0.wrapping_add(P32_X);
    let v000 = signed_unit(lattice32(key, px0 ^ r.p00));
    let v100 = signed_unit(lattice32(key, px1 ^ r.p00));
    let v010 = signed_unit(lattice32(key, px0 ^ r.p10));
    let v110 = signed_unit(lattice32(key, px1 ^ r.p10));
    let v001 = signed_unit(lattice32(key, px0 ^ r.p01));
    let v101 = signed_unit(lattice32(key, px1 ^ r.p01));
    let v011 = signed_unit(lattice32(key, px0 ^ r.p11));
    let v111 = signed_unit(lattice32(key, px1 ^ r.p11));
    let u = fade(fx);
    let a0 = v000 + u * (v100 - v000);
    let b0 = v010 + u * (v110 - v010);
    let a1 = v001 + u * (v101 - v001);
    let b1 = v011 + u * (v111 - v011);
    let c0 = a0 + r.v * (b0 - a0);
    let c1 = a1 + r.v * (b1 - a1);
    c0 + r.w * (c1 - c0)
}

impl Noise2 for ValueNoise {
    #[inline]
    fn sample2(&self, x: f32, y: f32) -> f32 {
        clamp_unit(value2_row(self.key, x, &Row2::new(y)))
    }

    #[inline]
    fn sample2_lanes(&self, x: &[f32; LANES], y: &[f32; LANES]) -> [f32; LANES] {
        std::array::from_fn(|l| clamp_unit(value2_row(self.key, x[l], &Row2::new(y[l]))))
    }

    #[inline]
    fn sample2_row(&self, x: &[f32; LANES], y: f32) -> [f32; LANES] {
        let r = Row2::new(y);
        std::array::from_fn(|l| clamp_unit(value2_row(self.key, x[l], &r)))
    }
}

impl Noise3 for ValueNoise {
    #[inline]
    fn sample3(&self, x: f32, y: f32, z: f32) -> f32 {
        clamp_unit(value3_row(self.key, x, &Row3::new(y, z)))
    }

    #[inline]
    fn sample3_lanes(&self, x: &[f32; LANES], y: &[f32; LANES], z: &[f32; LANES]) -> [f32; LANES] {
        std::array::from_fn(|l| clamp_unit(value3_row(self.key, x[l], &Row3::new(y[l], z[l]))))
    }

    #[inline]
    fn sample3_row(&self, x: &[f32; LANES], y: f32, z: f32) -> [f32; LANES] {
        let r = Row3::new(y, z);
        std::array::from_fn(|l| clamp_unit(value3_row(self.key, x[l], &r)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lattice_points_hold_their_hashed_values() {
        let n = ValueNoise::new(4);
        let a = n.sample2(2.0, 3.0);
        let b = n.sample2(2.0 + 1e-6, 3.0);
        assert!((a - b).abs() < 1e-4);
        // Different lattice points hold different values.
        assert_ne!(n.sample2(0.0, 0.0), n.sample2(1.0, 0.0));
    }
}
