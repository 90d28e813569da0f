//! Seeded coherent noise.
//!
//! Every generator here is a pure function of `(seed, coordinates)`: random
//! quantities come from integer hashes of the seed and lattice coordinates,
//! never from a global random number generator, so the same inputs give the
//! same bits on every thread and every run.
//!
//! # Output range
//!
//! Every [`Noise2`] / [`Noise3`] implementation in this crate returns values in
//! the closed range `[-1, 1]` for *any* input, including non-finite
//! coordinates (which give an unspecified value inside the range):
//!
//! * [`Perlin`] 2D uses 16 gradient directions of length `√2`; its analytic
//!   maximum is exactly `1`, reached at a cell centre when all four corner
//!   gradients point at it.
//! * [`Perlin`] 3D uses the 12 cube-edge gradients of improved noise; their
//!   analytic maximum is about `1.0364` (found near `(0.355, 0.481, 0.5)` in a
//!   cell), so the 3D value is scaled by `0.9648` to stay inside `[-1, 1]`.
//! * [`Fbm`] divides the sum of its octaves by the sum of their amplitudes,
//!   which is the analytic bound of the sum; it never looks at the data.
//!
//! A final clamp absorbs the last bits of floating-point rounding.
//!
//! # Batch fills
//!
//! [`fill2`] and [`fill3`] sample a regular grid into a slice. Sample `(i, j)`
//! is taken at exactly `[origin[0] + i as f32 * step[0], origin[1] + j as f32 * step[1]]`
//! (same for z), so a batch fill is bit-identical to calling the point API at
//! those coordinates.

mod fbm;
mod fill;
pub(crate) mod hash;
mod perlin;

pub use fbm::{Fbm, FbmParams, fill_fbm2, fill_fbm3};
pub use fill::{fill2, fill3};
pub use perlin::Perlin;

/// A 2D noise function with values in `[-1, 1]`.
pub trait Noise2 {
    /// The value at `(x, y)`, always within `[-1, 1]`. Non-finite coordinates
    /// give an unspecified value inside the range.
    fn sample2(&self, x: f32, y: f32) -> f32;
}

/// A 3D noise function with values in `[-1, 1]`.
pub trait Noise3 {
    /// The value at `(x, y, z)`, always within `[-1, 1]`. Non-finite
    /// coordinates give an unspecified value inside the range.
    fn sample3(&self, x: f32, y: f32, z: f32) -> f32;
}

impl<N: Noise2 + ?Sized> Noise2 for &N {
    #[inline]
    fn sample2(&self, x: f32, y: f32) -> f32 {
        (**self).sample2(x, y)
    }
}

impl<N: Noise3 + ?Sized> Noise3 for &N {
    #[inline]
    fn sample3(&self, x: f32, y: f32, z: f32) -> f32 {
        (**self).sample3(x, y, z)
    }
}

/// Clamps to `[-1, 1]`, mapping NaN into the range as well.
#[inline(always)]
#[allow(clippy::manual_clamp)] // `clamp` would keep NaN; this maps it into range.
pub(crate) fn clamp_unit(v: f32) -> f32 {
    // `f32::max` returns the other operand when one is NaN.
    v.max(-1.0).min(1.0)
}
