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

/// Samples `noise` on a `dims[0] x dims[1]` grid into `out` (row-major, x
/// fastest). Sample `(i, j)` is `noise.sample2(origin[0] + i as f32 * step[0],
/// origin[1] + j as f32 * step[1])`, bit for bit.
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
    for (j, row) in out.chunks_exact_mut(dims[0] as usize).enumerate() {
        let y = origin[1] + j as f32 * step[1];
        for (i, v) in row.iter_mut().enumerate() {
            *v = noise.sample2(origin[0] + i as f32 * step[0], y);
        }
    }
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
    let row = dims[0] as usize;
    let plane = row * dims[1] as usize;
    for (k, slab) in out.chunks_exact_mut(plane).enumerate() {
        let z = origin[2] + k as f32 * step[2];
        for (j, line) in slab.chunks_exact_mut(row).enumerate() {
            let y = origin[1] + j as f32 * step[1];
            for (i, v) in line.iter_mut().enumerate() {
                *v = noise.sample3(origin[0] + i as f32 * step[0], y, z);
            }
        }
    }
    Ok(())
}
