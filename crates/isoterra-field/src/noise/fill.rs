//! Filling regular grids from a noise function.

use super::{Noise2, Noise3};
use crate::FieldError;

fn check_axis(name: &'static str, origin: f32, step: f32, n: u32) -> Result<(), FieldError> {
    if !origin.is_finite() {
        return Err(FieldError::param(
            name,
            origin,
            "grid origin must be finite",
        ));
    }
    if !step.is_finite() {
        return Err(FieldError::param(name, step, "grid step must be finite"));
    }
    let last = origin + n.saturating_sub(1) as f32 * step;
    if !last.is_finite() {
        return Err(FieldError::param(
            name,
            last,
            "the far end of the grid is not finite; use a smaller step or size",
        ));
    }
    Ok(())
}

fn check_len(dims: &[u32], got: usize) -> Result<usize, FieldError> {
    let mut n: u64 = 1;
    for &d in dims {
        n = n.checked_mul(d as u64).ok_or_else(|| {
            FieldError::param("dims", format!("{dims:?}"), "the sample count overflows")
        })?;
    }
    let n = usize::try_from(n).map_err(|_| {
        FieldError::param("dims", format!("{dims:?}"), "the sample count overflows")
    })?;
    if n != got {
        return Err(FieldError::LengthMismatch { expected: n, got });
    }
    Ok(n)
}

/// Checks a grid request of 2 or 3 axes (see [`fill2`] for the rules).
pub(crate) fn check_grid(
    origin: &[f32],
    step: &[f32],
    dims: &[u32],
    len: usize,
) -> Result<(), FieldError> {
    for (a, name) in ["x", "y", "z"].iter().enumerate().take(dims.len()) {
        check_axis(name, origin[a], step[a], dims[a])?;
    }
    check_len(dims, len)?;
    Ok(())
}

#[inline(always)]
fn grid2<N: Noise2 + ?Sized>(
    noise: &N,
    origin: [f32; 2],
    step: [f32; 2],
    width: usize,
    out: &mut [f32],
) {
    for (j, row) in out.chunks_exact_mut(width).enumerate() {
        let y = origin[1] + j as f32 * step[1];
        noise.fill_row2(origin[0], step[0], y, row);
    }
}

/// Samples `noise` on a `dims[0] x dims[1]` grid into `out` (row-major, x
/// fastest). Sample `(i, j)` is `noise.sample2(origin[0] + i as f32 * step[0],
/// origin[1] + j as f32 * step[1])`, bit for bit.
///
/// Rows go through [`Noise2::fill_row2`]: the generators of this crate
/// compute eight samples at a time (in an AVX2 build on x86-64 CPUs that
/// have it), with the same bits as the point API.
///
/// Errors (nothing written): non-finite origin, step or grid end, or
/// `out.len() != dims[0] * dims[1]`. Empty dimensions are allowed.
pub fn fill2<N: Noise2 + ?Sized>(
    noise: &N,
    origin: [f32; 2],
    step: [f32; 2],
    dims: [u32; 2],
    out: &mut [f32],
) -> Result<(), FieldError> {
    check_axis("x", origin[0], step[0], dims[0])?;
    check_axis("y", origin[1], step[1], dims[1])?;
    check_len(&dims, out.len())?;
    if out.is_empty() {
        return Ok(());
    }
    grid2(noise, origin, step, dims[0] as usize, out);
    Ok(())
}

/// Samples `noise` on a `dims[0] x dims[1] x dims[2]` grid into `out`
/// (x fastest, then y, then z), bit-identical to the point API at
/// `origin + index * step` per axis. Errors as [`fill2`].
pub fn fill3<N: Noise3 + ?Sized>(
    noise: &N,
    origin: [f32; 3],
    step: [f32; 3],
    dims: [u32; 3],
    out: &mut [f32],
) -> Result<(), FieldError> {
    check_axis("x", origin[0], step[0], dims[0])?;
    check_axis("y", origin[1], step[1], dims[1])?;
    check_axis("z", origin[2], step[2], dims[2])?;
    check_len(&dims, out.len())?;
    if out.is_empty() {
        return Ok(());
    }
    noise.fill_grid3(origin, step, [dims[0] as usize, dims[1] as usize], out);
    Ok(())
}
