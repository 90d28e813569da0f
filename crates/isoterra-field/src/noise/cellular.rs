//! Cellular (Worley) noise: distances to hashed feature points.

use super::hash::{P32_X, P32_Y, P32_Z, lattice32, mix64};
use super::kernel::{floor_i32, sel};
use super::{Noise2, Noise3, clamp_unit};
use crate::FieldError;

/// Which distance [`Cellular`] noise returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum CellularReturn {
    /// Distance to the nearest feature point (round cells).
    #[default]
    F1,
    /// Distance to the second-nearest feature point.
    F2,
    /// `F2 - F1`: zero on cell borders (cracks, veins).
    F2MinusF1,
}

/// Geometry of one cellular evaluation: jitter and the output scales that
/// map the analytic distance bounds onto `[-1, 1]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CellShape {
    pub(crate) ret: CellularReturn,
    pub(crate) jitter: f32,
    /// `2 / B1`, B1 the bound of F1.
    scale1: f32,
    /// `2 / B2`, B2 the bound of F2 (and of F2 - F1).
    scale2: f32,
}

impl CellShape {
    /// A shape for kernels that are not cellular (never evaluated).
    pub(crate) const PLACEHOLDER: CellShape = CellShape {
        ret: CellularReturn::F1,
        jitter: 0.0,
        scale1: 1.0,
        scale2: 1.0,
    };

    /// Shape for `dims` (2 or 3) dimensions; `jitter` must be in `[0, 1]`.
    pub(crate) fn new(ret: CellularReturn, jitter: f32, dims: u32) -> Result<Self, FieldError> {
        if !(0.0..=1.0).contains(&jitter) {
            return Err(FieldError::param(
                "jitter",
                jitter,
                "must be between 0 and 1 (1 places feature points anywhere in their cell)",
            ));
        }
        let (b1, b2) = bounds(jitter, dims);
        Ok(CellShape {
            ret,
            jitter,
            scale1: 2.0 / b1,
            scale2: 2.0 / b2,
        })
    }

    #[inline(always)]
    fn finish(&self, d1: f32, d2: f32) -> f32 {
        let f1 = d1.sqrt();
        let f2 = d2.sqrt();
        match self.ret {
            CellularReturn::F1 => f1 * self.scale1 - 1.0,
            CellularReturn::F2 => f2 * self.scale2 - 1.0,
            CellularReturn::F2MinusF1 => (f2 - f1) * self.scale2 - 1.0,
        }
    }
}

/// Analytic bounds `(B1, B2)` of F1 and F2 for a jitter and a dimension.
///
/// The feature point of a cell lies within `0.5 ± jitter/2` of the cell
/// centre on each axis. The sample's own cell therefore gives
/// `F1 <= B1 = √d (0.5 + j/2)`. The neighbour across the nearest face is at
/// most `1 + j/2` away along that axis and `0.5 + j/2` along the others; both
/// cells are in the searched 3^d block, so `F2 <= B2 = √((1 + j/2)² + (d-1)(0.5 + j/2)²)`.
pub(crate) fn bounds(jitter: f32, dims: u32) -> (f32, f32) {
    let side = 0.5 + 0.5 * jitter as f64;
    let far = 1.0 + 0.5 * jitter as f64;
    let d = dims as f64;
    let b1 = (d * side * side).sqrt();
    let b2 = (far * far + (d - 1.0) * side * side).sqrt();
    (b1 as f32, b2 as f32)
}

/// Jittered feature offset in `[0.5 - j/2, 0.5 + j/2)` from hash bits,
/// `inv` being one over the number of bit patterns.
#[inline(always)]
fn offset(bits: u32, inv: f32, jitter: f32) -> f32 {
    0.5 + jitter * (bits as i32 as f32 * inv - 0.5)
}

/// Keeps the two smallest squared distances.
#[inline(always)]
fn push(d: f32, d1: &mut f32, d2: &mut f32) {
    let nearer = d < *d1;
    *d2 = sel(nearer, *d1, sel(d < *d2, d, *d2));
    *d1 = sel(nearer, d, *d1);
}

/// 2D cellular value in `[-1, 1]` before the clamp.
#[inline(always)]
pub(crate) fn cellular2(key: u32, s: &CellShape, x: f32, y: f32) -> f32 {
    let i = floor_i32(x);
    let j = floor_i32(y);
    let fx = x - i as f32;
    let fy = y - j as f32;
    let px = (i as u32).wrapping_mul(P32_X);
    let py = (j as u32).wrapping_mul(P32_Y);
    let (mut d1, mut d2) = (f32::MAX, f32::MAX);
    for dj in -1i32..=1 {
        let pyj = py.wrapping_add((dj as u32).wrapping_mul(P32_Y));
        for di in -1i32..=1 {
            let h = lattice32(key, px.wrapping_add((di as u32).wrapping_mul(P32_X)) ^ pyj);
            let dx = di as f32 + offset(h >> 16, 1.0 / 65_536.0, s.jitter) - fx;
            let dy = dj as f32 + offset(h & 0xFFFF, 1.0 / 65_536.0, s.jitter) - fy;
            push(dx * dx + dy * dy, &mut d1, &mut d2);
        }
    }
    s.finish(d1, d2)
}

/// 3D cellular value in `[-1, 1]` before the clamp.
#[inline(always)]
pub(crate) fn cellular3(key: u32, s: &CellShape, x: f32, y: f32, z: f32) -> f32 {
    let i = floor_i32(x);
    let j = floor_i32(y);
    let k = floor_i32(z);
    let fx = x - i as f32;
    let fy = y - j as f32;
    let fz = z - k as f32;
    let px = (i as u32).wrapping_mul(P32_X);
    let py = (j as u32).wrapping_mul(P32_Y);
    let pz = (k as u32).wrapping_mul(P32_Z);
    let (mut d1, mut d2) = (f32::MAX, f32::MAX);
    for dk in -1i32..=1 {
        let pzk = pz.wrapping_add((dk as u32).wrapping_mul(P32_Z));
        for dj in -1i32..=1 {
            let pyj = py.wrapping_add((dj as u32).wrapping_mul(P32_Y)) ^ pzk;
            for di in -1i32..=1 {
                let h = lattice32(key, px.wrapping_add((di as u32).wrapping_mul(P32_X)) ^ pyj);
                let dx = di as f32 + offset(h >> 22, 1.0 / 1024.0, s.jitter) - fx;
                let dy = dj as f32 + offset((h >> 12) & 0x3FF, 1.0 / 1024.0, s.jitter) - fy;
                let dz = dk as f32 + offset((h >> 2) & 0x3FF, 1.0 / 1024.0, s.jitter) - fz;
                push(dx * dx + dy * dy + dz * dz, &mut d1, &mut d2);
            }
        }
    }
    s.finish(d1, d2)
}

/// Seeded cellular (Worley) noise in 2D and 3D.
///
/// Each lattice cell holds one feature point, placed by hashing within
/// `0.5 ± jitter/2` of the cell centre on every axis; the noise is a distance
/// to the nearest ([`CellularReturn::F1`]) or second-nearest
/// ([`CellularReturn::F2`]) feature point, or their difference, searched over
/// the 3×3 (3×3×3) block of cells around the sample.
///
/// Range: the distance `F` is mapped by `2 F / B - 1` with the analytic bound
/// `B` of that distance (see below), so values lie in `[-1, 1]`: `-1` on a
/// feature point (F1) or a cell border (F2 − F1). With `d` dimensions and
/// jitter `j`: `B1 = √d (0.5 + j/2)` for F1, `B2 = √((1 + j/2)² + (d-1)(0.5 + j/2)²)`
/// for F2 and F2 − F1. With `j <= 0.5` in 2D, F1 is the exact nearest
/// distance (no feature outside the block can be nearer), so F1 noise is
/// continuous; larger jitter may rarely show a seam at a cell border.
///
/// ```
/// use isoterra_field::{Cellular, CellularReturn, Noise2};
/// let c = Cellular::new(9, CellularReturn::F1, 0.5)?;
/// assert!((-1.0..=1.0).contains(&c.sample2(3.3, -1.2)));
/// # Ok::<(), isoterra_field::FieldError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cellular {
    seed: u64,
    key: u32,
    shape2: CellShape,
    shape3: CellShape,
}

impl Cellular {
    /// Cellular noise for `seed`, returning `ret`, with feature points
    /// jittered by `jitter` (in `[0, 1]`; `0` is a regular grid).
    ///
    /// Errors: `jitter` outside `[0, 1]` or NaN.
    pub fn new(seed: u64, ret: CellularReturn, jitter: f32) -> Result<Self, FieldError> {
        Ok(Cellular {
            seed,
            key: (mix64(seed ^ 0xCE11_0000_5EED_0003) >> 32) as u32,
            shape2: CellShape::new(ret, jitter, 2)?,
            shape3: CellShape::new(ret, jitter, 3)?,
        })
    }

    /// The seed this noise was built from.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// What the noise returns.
    pub fn return_type(&self) -> CellularReturn {
        self.shape2.ret
    }

    /// The feature-point jitter.
    pub fn jitter(&self) -> f32 {
        self.shape2.jitter
    }
}

impl Noise2 for Cellular {
    #[inline]
    fn sample2(&self, x: f32, y: f32) -> f32 {
        clamp_unit(cellular2(self.key, &self.shape2, x, y))
    }
}

impl Noise3 for Cellular {
    #[inline]
    fn sample3(&self, x: f32, y: f32, z: f32) -> f32 {
        clamp_unit(cellular3(self.key, &self.shape3, x, y, z))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_grow_with_jitter() {
        let (a1, a2) = bounds(0.0, 2);
        assert!((a1 - 0.5f32.sqrt()).abs() < 1e-6);
        assert!((a2 - 1.25f32.sqrt()).abs() < 1e-6);
        let (b1, b2) = bounds(1.0, 3);
        assert!(b1 > a1 && b2 > a2);
    }

    #[test]
    fn zero_jitter_is_a_regular_grid() {
        let c = Cellular::new(1, CellularReturn::F1, 0.0).unwrap();
        // Cell centres are feature points: F1 = 0 maps to -1.
        assert_eq!(c.sample2(0.5, 0.5), -1.0);
        assert_eq!(c.sample2(7.5, -3.5), -1.0);
        assert_eq!(c.sample3(0.5, 1.5, 2.5), -1.0);
    }

    #[test]
    fn bad_jitter_is_rejected() {
        for j in [-0.1, 1.5, f32::NAN, f32::INFINITY] {
            assert!(Cellular::new(1, CellularReturn::F2, j).is_err());
        }
    }
}
