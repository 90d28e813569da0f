//! Improved Perlin gradient noise in 2D and 3D, seeded by lattice hashing.

use super::hash::{
    LATTICE_MUL, P32_X, P32_Y, P32_Z, lattice_top, lattice_top_mul, mix64, opaque_lattice_mul,
};
use super::kernel::{fade, floor_i32, grad2_diag, grad3};
use super::{LANES, Noise2, Noise3, clamp_unit};

/// Scale that maps the analytic 3D maximum (about 1.03636) below 1.
pub(crate) const SCALE3: f32 = 0.9648;

/// Seeded improved Perlin noise (quintic fade, hashed gradients).
///
/// The gradient at each lattice point is chosen by a 32-bit hash of the seed
/// and the lattice coordinates, so the noise needs no permutation table.
/// Values lie in `[-1, 1]` (see the [module docs](crate::noise) for the
/// analytic bounds). Lattice coordinates are 32-bit and wrap: the noise
/// repeats with a period of `2^32` lattice cells, and coordinates beyond
/// about `±2^24` lose fractional precision.
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
    key: u32,
}

impl Perlin {
    /// Noise for `seed`.
    pub const fn new(seed: u64) -> Self {
        Perlin {
            seed,
            key: (mix64(seed ^ 0x5EED_9E37_79B9_7F4A) >> 32) as u32,
        }
    }

    /// The seed this noise was built from.
    pub const fn seed(&self) -> u64 {
        self.seed
    }
}

/// Everything about one `y` that a 2D lattice kernel needs; computed once per
/// row of a batch and once per call of the point API, with the same operations.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Row2 {
    pub(crate) py0: u32,
    pub(crate) py1: u32,
    pub(crate) fy: f32,
    pub(crate) fy1: f32,
    pub(crate) v: f32,
}

impl Row2 {
    /// Row data for kernels that do not use it.
    pub(crate) const PLACEHOLDER: Row2 = Row2 {
        py0: 0,
        py1: 0,
        fy: 0.0,
        fy1: 0.0,
        v: 0.0,
    };

    #[inline(always)]
    pub(crate) fn new(y: f32) -> Self {
        let iy = floor_i32(y);
        let fy = y - iy as f32;
        let py0 = (iy as u32).wrapping_mul(P32_Y);
        Row2 {
            py0,
            py1: py0.wrapping_add(P32_Y),
            fy,
            fy1: fy - 1.0,
            v: fade(fy),
        }
    }
}

/// The `y` and `z` parts of a 3D lattice kernel (see [`Row2`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Row3 {
    pub(crate) p00: u32,
    pub(crate) p10: u32,
    pub(crate) p01: u32,
    pub(crate) p11: u32,
    pub(crate) fy: f32,
    pub(crate) fz: f32,
    pub(crate) fy1: f32,
    pub(crate) fz1: f32,
    pub(crate) v: f32,
    pub(crate) w: f32,
    /// The lattice hash multiplier, always [`LATTICE_MUL`] (batch loops set
    /// it through [`Row3::with_opaque_mul`]).
    pub(crate) mul: u32,
}

impl Row3 {
    /// Row data for kernels that do not use it.
    pub(crate) const PLACEHOLDER: Row3 = Row3 {
        p00: 0,
        p10: 0,
        p01: 0,
        p11: 0,
        fy: 0.0,
        fz: 0.0,
        fy1: 0.0,
        fz1: 0.0,
        v: 0.0,
        w: 0.0,
        mul: LATTICE_MUL,
    };

    #[inline(always)]
    pub(crate) fn new(y: f32, z: f32) -> Self {
        let iy = floor_i32(y);
        let iz = floor_i32(z);
        let fy = y - iy as f32;
        let fz = z - iz as f32;
        let py0 = (iy as u32).wrapping_mul(P32_Y);
        let py1 = py0.wrapping_add(P32_Y);
        let pz0 = (iz as u32).wrapping_mul(P32_Z);
        let pz1 = pz0.wrapping_add(P32_Z);
        Row3 {
            p00: py0 ^ pz0,
            p10: py1 ^ pz0,
            p01: py0 ^ pz1,
            p11: py1 ^ pz1,
            fy,
            fz,
            fy1: fy - 1.0,
            fz1: fz - 1.0,
            v: fade(fy),
            w: fade(fz),
            mul: LATTICE_MUL,
        }
    }

    /// The same row with `mul` (which must be [`LATTICE_MUL`], usually from
    /// [`opaque_lattice_mul`]) as its hash multiplier: the same values,
    /// faster vector code (see [`lattice_top_mul`]).
    #[inline(always)]
    pub(crate) fn with_opaque_mul(mut self, mul: u32) -> Self {
        debug_assert_eq!(mul, LATTICE_MUL);
        self.mul = mul;
        self
    }
}

/// 2D improved Perlin noise at `x` on row `r`, before the final clamp
/// (analytic range `[-1, 1]`).
#[inline(always)]
pub(crate) fn perlin2_row(key: u32, x: f32, r: &Row2) -> f32 {
    let ix = floor_i32(x);
    let fx = x - ix as f32;
    let fx1 = fx - 1.0;
    let px0 = (ix as u32).wrapping_mul(P32_X);
    let px1 = px0.wrapping_add(P32_X);
    let n00 = grad2_diag(lattice_top(key, px0 ^ r.py0), fx, r.fy);
    let n10 = grad2_diag(lattice_top(key, px1 ^ r.py0), fx1, r.fy);
    let n01 = grad2_diag(lattice_top(key, px0 ^ r.py1), fx, r.fy1);
    let n11 = grad2_diag(lattice_top(key, px1 ^ r.py1), fx1, r.fy1);
    let u = fade(fx);
    let a = n00 + u * (n10 - n00);
    let b = n01 + u * (n11 - n01);
    a + r.v * (b - a)
}

/// 3D improved Perlin noise at `x` on row `r`, scaled by [`SCALE3`], before
/// the final clamp (analytic range within `[-1, 1]`).
#[inline(always)]
pub(crate) fn perlin3_row(key: u32, x: f32, r: &Row3) -> f32 {
    let ix = floor_i32(x);
    let fx = x - ix as f32;
    let fx1 = fx - 1.0;
    let px0 = (ix as u32).wrapping_mul(P32_X);
    let px1 = px0.wrapping_add(P32_X);
    let n000 = grad3(lattice_top_mul(key, px0 ^ r.p00, r.mul), fx, r.fy, r.fz);
    let n100 = grad3(lattice_top_mul(key, px1 ^ r.p00, r.mul), fx1, r.fy, r.fz);
    let n010 = grad3(lattice_top_mul(key, px0 ^ r.p10, r.mul), fx, r.fy1, r.fz);
    let n110 = grad3(lattice_top_mul(key, px1 ^ r.p10, r.mul), fx1, r.fy1, r.fz);
    let n001 = grad3(lattice_top_mul(key, px0 ^ r.p01, r.mul), fx, r.fy, r.fz1);
    let n101 = grad3(lattice_top_mul(key, px1 ^ r.p01, r.mul), fx1, r.fy, r.fz1);
    let n011 = grad3(lattice_top_mul(key, px0 ^ r.p11, r.mul), fx, r.fy1, r.fz1);
    let n111 = grad3(lattice_top_mul(key, px1 ^ r.p11, r.mul), fx1, r.fy1, r.fz1);
    let n = [[n000, n100], [n010, n110], [n001, n101], [n011, n111]];
    blend3(n, fade(fx), r)
}

/// The trilinear blend of a sample's eight corner terms, scaled by
/// [`SCALE3`]: `n[k]` is `[left, right]` in x of corner `k` in (y, z), `k`
/// = 0 for (y0, z0), 1 for (y1, z0), 2 for (y0, z1), 3 for (y1, z1); `u`
/// is the sample's fade in x. Every 3D Perlin build blends through this, so
/// they all do the same operations in the same order.
#[inline(always)]
pub(crate) fn blend3(n: [[f32; 2]; 4], u: f32, r: &Row3) -> f32 {
    let [[n000, n100], [n010, n110], [n001, n101], [n011, n111]] = n;
    let a0 = n000 + u * (n100 - n000);
    let b0 = n010 + u * (n110 - n010);
    let a1 = n001 + u * (n101 - n001);
    let b1 = n011 + u * (n111 - n011);
    let c0 = a0 + r.v * (b0 - a0);
    let c1 = a1 + r.v * (b1 - a1);
    (c0 + r.w * (c1 - c0)) * SCALE3
}

impl Noise2 for Perlin {
    #[inline]
    fn sample2(&self, x: f32, y: f32) -> f32 {
        clamp_unit(perlin2_row(self.key, x, &Row2::new(y)))
    }

    #[inline]
    fn sample2_lanes(&self, x: &[f32; LANES], y: &[f32; LANES]) -> [f32; LANES] {
        std::array::from_fn(|l| clamp_unit(perlin2_row(self.key, x[l], &Row2::new(y[l]))))
    }

    #[inline]
    fn sample2_row(&self, x: &[f32; LANES], y: f32) -> [f32; LANES] {
        let r = Row2::new(y);
        std::array::from_fn(|l| clamp_unit(perlin2_row(self.key, x[l], &r)))
    }
}

impl Noise3 for Perlin {
    #[inline]
    fn sample3(&self, x: f32, y: f32, z: f32) -> f32 {
        clamp_unit(perlin3_row(self.key, x, &Row3::new(y, z)))
    }

    #[inline]
    fn sample3_lanes(&self, x: &[f32; LANES], y: &[f32; LANES], z: &[f32; LANES]) -> [f32; LANES] {
        std::array::from_fn(|l| clamp_unit(perlin3_row(self.key, x[l], &Row3::new(y[l], z[l]))))
    }

    #[inline]
    fn sample3_row(&self, x: &[f32; LANES], y: f32, z: f32) -> [f32; LANES] {
        let r = Row3::new(y, z).with_opaque_mul(opaque_lattice_mul());
        std::array::from_fn(|l| clamp_unit(perlin3_row(self.key, x[l], &r)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_on_lattice_points() {
        let p = Perlin::new(9);
        for (x, y) in [(0.0, 0.0), (3.0, -2.0), (-17.0, 40.0)] {
            assert_eq!(p.sample2(x, y), 0.0);
            assert_eq!(p.sample3(x, y, 5.0), 0.0);
        }
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

    #[test]
    fn cell_centre_reaches_one_when_all_diagonals_point_in() {
        // Build the extreme case by hand: corner gradients (1,1), (-1,1),
        // (1,-1), (-1,-1) pointing at the centre give exactly 1.
        let d = [(0.5f32, 0.5f32), (-0.5, 0.5), (0.5, -0.5), (-0.5, -0.5)];
        let mut sum = 0.0;
        for (cx, cy) in d {
            // Signs that point at the centre.
            let sx = (cx < 0.0) as u32;
            let sy = (cy < 0.0) as u32;
            sum += 0.25 * grad2_diag((sx << 31) | (sy << 30), cx, cy);
        }
        assert_eq!(sum, 1.0);
    }
}
