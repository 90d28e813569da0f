//! Seeded coherent noise.
//!
//! Every generator here is a pure function of `(seed, coordinates)`: random
//! quantities come from integer hashes of the seed and lattice coordinates,
//! never from a global random number generator, so the same inputs give the
//! same bits on every thread and every run.
//!
//! # Generators and their analytic ranges
//!
//! Every [`Noise2`] / [`Noise3`] implementation in this crate returns values in
//! the closed range `[-1, 1]` for *any* input, including non-finite
//! coordinates (which give an unspecified value inside the range):
//!
//! * [`Perlin`] 2D uses the 4 diagonal gradients `(±1, ±1)` (two sign flips
//!   and an add per corner); its analytic maximum is exactly `1`, reached at
//!   a cell centre when all four corner gradients point at it.
//! * [`Perlin`] 3D uses the 12 cube-edge gradients of improved noise; their
//!   analytic maximum is about `1.0364` (found near `(0.355, 0.481, 0.5)` in a
//!   cell), so the 3D value is scaled by `0.9648` to stay inside `[-1, 1]`.
//! * [`OpenSimplex2`] divides its kernel sum by the worst case over every
//!   gradient choice (see its docs).
//! * [`ValueNoise`] is a convex blend of lattice values in `[-1, 1)`.
//! * [`Cellular`] maps its distance through the distance's analytic bound.
//! * [`Fractal`] (and [`Fbm`]) shape every octave into `[-1, 1]` and divide
//!   the weighted sum by the sum of the amplitudes — the analytic bound of
//!   the sum; it never looks at the data.
//! * [`NoiseGraph`] combines these and reports the analytic range of the
//!   whole tree ([`NoiseGraph::range`]).
//!
//! A final clamp absorbs the last bits of floating-point rounding.
//! Normalisation always uses these analytic ranges, never a chunk's own
//! minimum and maximum (that is what makes seams between chunks).
//!
//! # Batch fills
//!
//! [`fill2`] and [`fill3`] sample a regular grid into a slice. Sample `(i, j)`
//! is taken at exactly `[origin[0] + i as f32 * step[0], origin[1] + j as f32 * step[1]]`
//! (same for z), so a batch fill is bit-identical to calling the point API at
//! those coordinates.
//!
//! The generators compute eight samples at a time ([`LANES`]): kernels are
//! written branch-free over arrays of eight (floor by integer conversion with
//! a correction, 32-bit integer hashing, gradients chosen by arithmetic), so
//! the compiler turns them into vector code, and on x86-64 CPUs with AVX2
//! they run in an AVX2 build chosen at run time. The row fills of a
//! [`Fractal`] (and so [`fill2`], [`fill3`] and the height and density
//! grids) run sixteen samples a group in an AVX-512 build where the CPU has
//! it ([`vector_build`] says which). Only IEEE-exact operations are used (no
//! fused multiply-add, no `sin`/`exp`/`powf`), in the same order for one
//! sample and for a group, so every path gives the same bits on every
//! machine.

mod cellular;
mod fbm;
mod fill;
mod fractal;
mod graph;
pub(crate) mod hash;
pub(crate) mod kernel;
mod perlin;
mod simplex;
mod value;

/// Which build of the batch loops (row fills, heights, densities) this
/// process runs: `"avx512"` (16 lanes a group), `"avx2"` (8) or
/// `"portable"`. All three give the same bits; only the speed differs, so
/// benchmark reports name it. `ISOTERRA_NO_AVX512` set before the first
/// call keeps a process on `"avx2"`.
pub fn vector_build() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if kernel::have_avx512() {
            return "avx512";
        }
        if kernel::have_avx2() {
            return "avx2";
        }
    }
    "portable"
}

pub use cellular::{Cellular, CellularReturn};
pub use fbm::{Fbm, FbmParams, fill_fbm2, fill_fbm3};
pub(crate) use fill::check_grid;
pub use fill::{fill2, fill3};
pub use fractal::{Basis, Fractal, FractalKind, FractalParams};
pub use graph::{NoiseGraph, NoiseNode, WarpParams};
pub use perlin::Perlin;
pub use simplex::OpenSimplex2;
pub use value::ValueNoise;

/// Number of samples the batch kernels compute side by side.
pub const LANES: usize = 8;

/// A 2D noise function with values in `[-1, 1]`.
pub trait Noise2 {
    /// The value at `(x, y)`, always within `[-1, 1]`. Non-finite coordinates
    /// give an unspecified value inside the range.
    fn sample2(&self, x: f32, y: f32) -> f32;

    /// Eight samples at `(x[l], y[l])`. Every lane is bit for bit what
    /// [`sample2`](Self::sample2) returns there; implementations override this
    /// only to compute the same operations on eight lanes at once.
    #[inline]
    fn sample2_lanes(&self, x: &[f32; LANES], y: &[f32; LANES]) -> [f32; LANES] {
        std::array::from_fn(|l| self.sample2(x[l], y[l]))
    }

    /// Eight samples on one row, at `(x[l], y)`; bit for bit what
    /// [`sample2`](Self::sample2) returns there.
    #[inline]
    fn sample2_row(&self, x: &[f32; LANES], y: f32) -> [f32; LANES] {
        self.sample2_lanes(x, &[y; LANES])
    }

    /// Fills `out[i]` with the sample at `(x0 + i as f32 * dx, y)`, bit for
    /// bit what [`sample2`](Self::sample2) returns there. [`fill2`] calls
    /// this once per row.
    fn fill_row2(&self, x0: f32, dx: f32, y: f32, out: &mut [f32]) {
        let mut chunks = out.chunks_exact_mut(LANES);
        let mut i = 0usize;
        for c in &mut chunks {
            let x: [f32; LANES] = std::array::from_fn(|l| x0 + (i + l) as f32 * dx);
            c.copy_from_slice(&self.sample2_row(&x, y));
            i += LANES;
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            let last = rest.len() - 1;
            let x: [f32; LANES] = std::array::from_fn(|l| x0 + (i + l.min(last)) as f32 * dx);
            let v = self.sample2_row(&x, y);
            rest.copy_from_slice(&v[..rest.len()]);
        }
    }
}

/// A 3D noise function with values in `[-1, 1]`.
pub trait Noise3 {
    /// The value at `(x, y, z)`, always within `[-1, 1]`. Non-finite
    /// coordinates give an unspecified value inside the range.
    fn sample3(&self, x: f32, y: f32, z: f32) -> f32;

    /// Eight samples at `(x[l], y[l], z[l])`, each bit for bit what
    /// [`sample3`](Self::sample3) returns there.
    #[inline]
    fn sample3_lanes(&self, x: &[f32; LANES], y: &[f32; LANES], z: &[f32; LANES]) -> [f32; LANES] {
        std::array::from_fn(|l| self.sample3(x[l], y[l], z[l]))
    }

    /// Eight samples on one row, at `(x[l], y, z)`; bit for bit what
    /// [`sample3`](Self::sample3) returns there.
    #[inline]
    fn sample3_row(&self, x: &[f32; LANES], y: f32, z: f32) -> [f32; LANES] {
        self.sample3_lanes(x, &[y; LANES], &[z; LANES])
    }

    /// Fills `out[i]` with the sample at `(x0 + i as f32 * dx, y, z)`, bit
    /// for bit what [`sample3`](Self::sample3) returns there. [`fill3`] calls
    /// this once per row.
    fn fill_row3(&self, x0: f32, dx: f32, y: f32, z: f32, out: &mut [f32]) {
        let mut chunks = out.chunks_exact_mut(LANES);
        let mut i = 0usize;
        for c in &mut chunks {
            let x: [f32; LANES] = std::array::from_fn(|l| x0 + (i + l) as f32 * dx);
            c.copy_from_slice(&self.sample3_row(&x, y, z));
            i += LANES;
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            let last = rest.len() - 1;
            let x: [f32; LANES] = std::array::from_fn(|l| x0 + (i + l.min(last)) as f32 * dx);
            let v = self.sample3_row(&x, y, z);
            rest.copy_from_slice(&v[..rest.len()]);
        }
    }

    /// Fills `out` with a grid of `dims[0]` samples a row and `dims[1]` rows
    /// a slab (x fastest, then y, then z; as many whole slabs as `out`
    /// holds, and nothing past them): row `j` of slab `k` is
    /// [`fill_row3`](Self::fill_row3) at `origin[0]`, `step[0]`, `y =
    /// origin[1] + j as f32 * step[1]`, `z = origin[2] + k as f32 *
    /// step[2]`, bit for bit. [`fill3`] checks its grid and calls this once;
    /// generators override it to share work between the rows.
    fn fill_grid3(&self, origin: [f32; 3], step: [f32; 3], dims: [usize; 2], out: &mut [f32]) {
        for_each_row3(origin, step, dims, out, |y, z, row| {
            self.fill_row3(origin[0], step[0], y, z, row)
        });
    }
}

/// Calls `f(y, z, row)` for every row of a grid as
/// [`Noise3::fill_grid3`] lays it out.
#[inline(always)]
pub(crate) fn for_each_row3(
    origin: [f32; 3],
    step: [f32; 3],
    dims: [usize; 2],
    out: &mut [f32],
    mut f: impl FnMut(f32, f32, &mut [f32]),
) {
    // A slab larger than `out` (or than memory) leaves nothing to fill.
    let slab = dims[0].saturating_mul(dims[1]);
    if slab == 0 || slab > out.len() {
        return;
    }
    for (k, slab) in out.chunks_exact_mut(slab).enumerate() {
        let z = origin[2] + k as f32 * step[2];
        for (j, row) in slab.chunks_exact_mut(dims[0]).enumerate() {
            let y = origin[1] + j as f32 * step[1];
            f(y, z, row);
        }
    }
}

impl<N: Noise2 + ?Sized> Noise2 for &N {
    #[inline]
    fn sample2(&self, x: f32, y: f32) -> f32 {
        (**self).sample2(x, y)
    }

    #[inline]
    fn sample2_lanes(&self, x: &[f32; LANES], y: &[f32; LANES]) -> [f32; LANES] {
        (**self).sample2_lanes(x, y)
    }

    #[inline]
    fn sample2_row(&self, x: &[f32; LANES], y: f32) -> [f32; LANES] {
        (**self).sample2_row(x, y)
    }

    #[inline]
    fn fill_row2(&self, x0: f32, dx: f32, y: f32, out: &mut [f32]) {
        (**self).fill_row2(x0, dx, y, out)
    }
}

impl<N: Noise3 + ?Sized> Noise3 for &N {
    #[inline]
    fn sample3(&self, x: f32, y: f32, z: f32) -> f32 {
        (**self).sample3(x, y, z)
    }

    #[inline]
    fn sample3_lanes(&self, x: &[f32; LANES], y: &[f32; LANES], z: &[f32; LANES]) -> [f32; LANES] {
        (**self).sample3_lanes(x, y, z)
    }

    #[inline]
    fn sample3_row(&self, x: &[f32; LANES], y: f32, z: f32) -> [f32; LANES] {
        (**self).sample3_row(x, y, z)
    }

    #[inline]
    fn fill_row3(&self, x0: f32, dx: f32, y: f32, z: f32, out: &mut [f32]) {
        (**self).fill_row3(x0, dx, y, z, out)
    }

    #[inline]
    fn fill_grid3(&self, origin: [f32; 3], step: [f32; 3], dims: [usize; 2], out: &mut [f32]) {
        (**self).fill_grid3(origin, step, dims, out)
    }
}

/// Clamps to `[-1, 1]`, mapping NaN into the range as well.
#[inline(always)]
#[allow(clippy::manual_clamp)] // `clamp` would keep NaN; this maps it into range.
pub(crate) fn clamp_unit(v: f32) -> f32 {
    // `f32::max` returns the other operand when one is NaN.
    v.max(-1.0).min(1.0)
}
