//! OpenSimplex2-style noise: simplex noise on the triangular lattice in 2D
//! and on the rotated body-centred cubic lattice in 3D, with the
//! `(r0² - d²)^4` radial kernel.
//!
//! 2D: the plane is skewed so that the triangular lattice becomes the square
//! lattice split along its diagonal; a sample gets contributions from the
//! three corners of its triangle (kernel radius² `0.5`, the triangle height
//! squared, so no other lattice point can reach it).
//!
//! 3D: the coordinates are first turned by an orthonormal map that puts the
//! lattice's main diagonal along `y` (fewer axis-aligned artefacts in
//! horizontal slices). The lattice is the union of two cubic lattices offset
//! by `(½, ½, ½)`; a sample sums the kernels of the eight corners of its cube
//! in each of them (kernel radius² `0.6 < 1`, so no point outside the cube
//! can reach it). Summing every corner, not just the nearest few, keeps the
//! noise continuous everywhere.

use super::hash::{P32_X, P32_Y, P32_Z, lattice_top, mix64};
use super::kernel::{floor_i32, grad2, grad3, sel};
use super::{Noise2, Noise3, clamp_unit};

/// Skew factor of the 2D lattice, `(√3 - 1) / 2`.
const SKEW2: f32 = 0.366_025_42;
/// Unskew factor of the 2D lattice, `(3 - √3) / 6`.
const UNSKEW2: f32 = 0.211_324_87;
/// Output scale of the 2D kernel sum (see [`OpenSimplex2`] for its range).
const SCALE2: f32 = 1.0 / SIMPLEX2_MAX;
/// Bound of the absolute 2D kernel sum: the dense search in the tests finds
/// `0.014256` for the worst gradient choice at every point; 1% headroom.
const SIMPLEX2_MAX: f32 = 0.0144;
/// Output scale of the 3D kernel sum.
const SCALE3: f32 = 1.0 / SIMPLEX3_MAX;
/// Bound of the absolute 3D kernel sum: the dense search finds `0.030583`; 1% headroom.
const SIMPLEX3_MAX: f32 = 0.0309;
/// Kernel radius squared in 3D.
const RADIUS3: f32 = 0.6;

/// Seeded OpenSimplex2-style noise (smooth, fewer grid artefacts than
/// [`Perlin`](crate::Perlin)), 2D and 3D.
///
/// Range: `[-1, 1]`. The kernel sum is divided by its bound: at every point
/// of a dense grid over a cell, each corner takes the gradient most aligned
/// with its offset (an upper bound for any seed), and the largest such sum
/// (2D `0.014256`, 3D `0.030583`) gets 1% headroom. A final clamp absorbs
/// rounding, so every value lies in `[-1, 1]`.
///
/// ```
/// use isoterra_field::{Noise2, Noise3, OpenSimplex2};
/// let n = OpenSimplex2::new(1);
/// assert!((-1.0..=1.0).contains(&n.sample2(0.3, 7.1)));
/// assert!((-1.0..=1.0).contains(&n.sample3(0.3, 7.1, -2.0)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OpenSimplex2 {
    seed: u64,
    key: u32,
}

impl OpenSimplex2 {
    /// Noise for `seed`.
    pub const fn new(seed: u64) -> Self {
        OpenSimplex2 {
            seed,
            key: (mix64(seed ^ 0x0515_0000_5EED_0002) >> 32) as u32,
        }
    }

    /// The seed this noise was built from.
    pub const fn seed(&self) -> u64 {
        self.seed
    }
}

#[inline(always)]
fn kernel2(h: u32, dx: f32, dy: f32) -> f32 {
    let a = 0.5 - dx * dx - dy * dy;
    let a = sel(a > 0.0, a, 0.0);
    let a2 = a * a;
    a2 * a2 * grad2(h, dx, dy)
}

/// Raw 2D kernel sum (before scaling).
#[inline(always)]
fn simplex2_raw(key: u32, x: f32, y: f32) -> f32 {
    let s = (x + y) * SKEW2;
    let xs = x + s;
    let ys = y + s;
    let i = floor_i32(xs);
    let j = floor_i32(ys);
    let fx = xs - i as f32;
    let fy = ys - j as f32;
    let t = (fx + fy) * UNSKEW2;
    let x0 = fx - t;
    let y0 = fy - t;
    // Lower triangle (x > y in skewed space): middle corner is (1, 0).
    let lower = fx > fy;
    let x1 = x0 - sel(lower, 1.0, 0.0) + UNSKEW2;
    let y1 = y0 - sel(lower, 0.0, 1.0) + UNSKEW2;
    let x2 = x0 + (2.0 * UNSKEW2 - 1.0);
    let y2 = y0 + (2.0 * UNSKEW2 - 1.0);
    let pi0 = (i as u32).wrapping_mul(P32_X);
    let pi1 = pi0.wrapping_add(P32_X);
    let pj0 = (j as u32).wrapping_mul(P32_Y);
    let pj1 = pj0.wrapping_add(P32_Y);
    let mid = if lower { pi1 ^ pj0 } else { pi0 ^ pj1 };
    kernel2(lattice_top(key, pi0 ^ pj0), x0, y0)
        + kernel2(lattice_top(key, mid), x1, y1)
        + kernel2(lattice_top(key, pi1 ^ pj1), x2, y2)
}

/// 2D OpenSimplex2-style noise, scaled to `[-1, 1]` but not clamped.
#[inline(always)]
pub(crate) fn simplex2(key: u32, x: f32, y: f32) -> f32 {
    simplex2_raw(key, x, y) * SCALE2
}

#[inline(always)]
fn kernel3(h: u32, dx: f32, dy: f32, dz: f32) -> f32 {
    let a = RADIUS3 - dx * dx - dy * dy - dz * dz;
    let a = sel(a > 0.0, a, 0.0);
    let a2 = a * a;
    a2 * a2 * grad3(h, dx, dy, dz)
}

/// Sum of the kernels of the eight corners of the cube around `(x, y, z)`
/// on one cubic lattice.
#[inline(always)]
fn cube3(key: u32, x: f32, y: f32, z: f32) -> f32 {
    let i = floor_i32(x);
    let j = floor_i32(y);
    let k = floor_i32(z);
    let (fx, fy, fz) = (x - i as f32, y - j as f32, z - k as f32);
    let (gx, gy, gz) = (fx - 1.0, fy - 1.0, fz - 1.0);
    let px0 = (i as u32).wrapping_mul(P32_X);
    let px1 = px0.wrapping_add(P32_X);
    let py0 = (j as u32).wrapping_mul(P32_Y);
    let py1 = py0.wrapping_add(P32_Y);
    let pz0 = (k as u32).wrapping_mul(P32_Z);
    let pz1 = pz0.wrapping_add(P32_Z);
    kernel3(lattice_top(key, px0 ^ py0 ^ pz0), fx, fy, fz)
        + kernel3(lattice_top(key, px1 ^ py0 ^ pz0), gx, fy, fz)
        + kernel3(lattice_top(key, px0 ^ py1 ^ pz0), fx, gy, fz)
        + kernel3(lattice_top(key, px1 ^ py1 ^ pz0), gx, gy, fz)
        + kernel3(lattice_top(key, px0 ^ py0 ^ pz1), fx, fy, gz)
        + kernel3(lattice_top(key, px1 ^ py0 ^ pz1), gx, fy, gz)
        + kernel3(lattice_top(key, px0 ^ py1 ^ pz1), fx, gy, gz)
        + kernel3(lattice_top(key, px1 ^ py1 ^ pz1), gx, gy, gz)
}

/// Raw 3D kernel sum (before scaling).
#[inline(always)]
fn simplex3_raw(key: u32, x: f32, y: f32, z: f32) -> f32 {
    // Orthonormal turn: reflect through the plane normal to (1, 1, 1) and negate.
    let r = (x + y + z) * (2.0 / 3.0);
    let (xr, yr, zr) = (r - x, r - y, r - z);
    cube3(key, xr, yr, zr) + cube3(key ^ 0x9E37_79B9, xr + 0.5, yr + 0.5, zr + 0.5)
}

/// 3D OpenSimplex2-style noise, scaled to `[-1, 1]` but not clamped.
#[inline(always)]
pub(crate) fn simplex3(key: u32, x: f32, y: f32, z: f32) -> f32 {
    simplex3_raw(key, x, y, z) * SCALE3
}

impl Noise2 for OpenSimplex2 {
    #[inline]
    fn sample2(&self, x: f32, y: f32) -> f32 {
        clamp_unit(simplex2(self.key, x, y))
    }

    #[inline]
    fn sample2_lanes(&self, x: &[f32; 8], y: &[f32; 8]) -> [f32; 8] {
        std::array::from_fn(|l| clamp_unit(simplex2(self.key, x[l], y[l])))
    }
}

impl Noise3 for OpenSimplex2 {
    #[inline]
    fn sample3(&self, x: f32, y: f32, z: f32) -> f32 {
        clamp_unit(simplex3(self.key, x, y, z))
    }

    #[inline]
    fn sample3_lanes(&self, x: &[f32; 8], y: &[f32; 8], z: &[f32; 8]) -> [f32; 8] {
        std::array::from_fn(|l| clamp_unit(simplex3(self.key, x[l], y[l], z[l])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The largest magnitude of the kernel sum at `p` over every choice of
    /// corner gradients: each corner independently picks the gradient most
    /// aligned with its displacement.
    fn bound2(x: f32, y: f32) -> f32 {
        let mut sum = 0.0;
        for j in -3i32..=3 {
            for i in -3i32..=3 {
                let t = (i + j) as f32 * UNSKEW2;
                let (dx, dy) = (x - (i as f32 - t), y - (j as f32 - t));
                let a = (0.5 - dx * dx - dy * dy).max(0.0);
                let best =
                    (dx.abs() + dy.abs()).max(std::f32::consts::SQRT_2 * dx.abs().max(dy.abs()));
                sum += a * a * a * a * best;
            }
        }
        sum
    }

    fn bound3(x: f32, y: f32, z: f32) -> f32 {
        let mut sum = 0.0;
        for off in [0.0f32, 0.5] {
            for k in -2i32..=2 {
                for j in -2i32..=2 {
                    for i in -2i32..=2 {
                        let d = [x - i as f32 - off, y - j as f32 - off, z - k as f32 - off];
                        let a = (RADIUS3 - d[0] * d[0] - d[1] * d[1] - d[2] * d[2]).max(0.0);
                        let mut m = d.map(f32::abs);
                        m.sort_by(f32::total_cmp);
                        sum += a * a * a * a * (m[1] + m[2]);
                    }
                }
            }
        }
        sum
    }

    /// The bound search: the scale constants must cover it.
    #[test]
    fn scale_constants_cover_the_worst_case() {
        let mut m2 = 0.0f32;
        let n = 120;
        for j in 0..=n {
            for i in 0..=n {
                m2 = m2.max(bound2(i as f32 / n as f32, j as f32 / n as f32));
            }
        }
        let mut m3 = 0.0f32;
        let n = 24;
        for k in 0..=n {
            for j in 0..=n {
                for i in 0..=n {
                    m3 = m3.max(bound3(
                        i as f32 / n as f32,
                        j as f32 / n as f32,
                        k as f32 / n as f32,
                    ));
                }
            }
        }
        assert!(m2 <= SIMPLEX2_MAX && m2 > 0.99 * 0.014_25, "{m2}");
        assert!(m3 <= SIMPLEX3_MAX && m3 > 0.98 * 0.030_58, "{m3}");
    }
}
