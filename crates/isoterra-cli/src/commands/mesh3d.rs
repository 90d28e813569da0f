//! `isoterra mesh3d`: the isosurface of any 3D `.npy` array.
//!
//! Vertex coordinates are in sample-index units: x along the array's last
//! axis, then y, then z (the array's shape is `(Z, Y, X)`).

use std::time::Instant;

use anyhow::{Context, bail};
use isoterra::export::{GlbMesh, read_npy3_file, write_glb, write_obj, write_ply};
use isoterra::mesh::{CellBox, CubesOptions, CubesOutput, MarchingCubes};

use crate::args::{Mesh3dArgs, MeshFormat};
use crate::commands::write_atomic_with;

pub fn run(a: &Mesh3dArgs) -> anyhow::Result<()> {
    if !a.iso.is_finite() {
        bail!("--iso must be a finite number, got {}", a.iso);
    }
    if !(a.iso_nudge.is_finite() && a.iso_nudge >= 0.0) {
        bail!(
            "--iso-nudge must be a finite number >= 0, got {}",
            a.iso_nudge
        );
    }
    let iso = a.iso - a.iso_nudge;
    if a.iso_nudge > 0.0 && iso == a.iso {
        bail!(
            "--iso-nudge {} is too small to move --iso {} in 32-bit floats; use a larger one",
            a.iso_nudge,
            a.iso
        );
    }
    let threads = super::worker_threads(a.threads)?;
    let pool = super::worker_pool(threads)?;
    let t0 = Instant::now();
    // Large float32 files are read by the worker threads.
    let field = pool
        .install(|| read_npy3_file(&a.npy))
        .with_context(|| format!("cannot read {}", a.npy.display()))?;
    let load_ms = ms(t0);

    let t1 = Instant::now();
    let options = CubesOptions::DEFAULT
        .with_iso(iso)
        .with_normals(!a.no_normals);
    // A fresh output: one thread reserves room for it and meshes straight
    // into it, several count their slabs and fill their parts.
    let mut out = CubesOutput::default();
    pool.install(|| {
        MarchingCubes::new().with_parallel(threads > 1).mesh(
            &field,
            CellBox::whole(&field),
            &options,
            &mut out,
        )
    })
    .context("meshing failed")?;
    let mesh_ms = ms(t1);
    let t_check = Instant::now();
    let zero_area = pool.install(|| zero_area_triangles(&out));
    let check_ms = ms(t_check);
    if zero_area > 0 {
        eprintln!(
            "note: {zero_area} zero-area triangles: samples exactly at --iso {} (try --iso-nudge 1e-3 for integer data)",
            a.iso
        );
    }

    let t2 = Instant::now();
    let name = a
        .npy
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "isosurface".into());
    let mesh = GlbMesh::new(&name, &out.positions, &out.indices).with_normals(&out.normals);
    // Written straight from the mesher's arrays (no second copy), the PLY
    // and OBJ encoded on the worker threads.
    write_atomic_with(&a.out, |w| {
        pool.install(|| match a.format {
            MeshFormat::Ply => write_ply(&mesh, w),
            MeshFormat::Obj => write_obj(&[mesh], w),
            MeshFormat::Glb => write_glb(&[mesh], w),
        })
        .map_err(anyhow::Error::from)
    })?;
    let write_ms = ms(t2);
    if a.timings {
        eprintln!(
            "{}",
            serde_json::json!({
                "load_ms": load_ms, "mesh_ms": mesh_ms, "check_ms": check_ms,
                "write_ms": write_ms,
                "vertices": out.vertex_count(), "triangles": out.triangle_count(),
                "zero_area_triangles": zero_area,
                "dims": field.dims(), "threads": threads
            })
        );
    }
    Ok(())
}

/// Triangles whose corners are collinear or coincide (cross product 0),
/// counted on the worker threads (a dense volume's mesh has ten million
/// triangles or more).
fn zero_area_triangles(out: &CubesOutput) -> usize {
    use rayon::prelude::*;
    let p = &out.positions[..];
    out.indices
        .par_chunks(3 << 14)
        .map(|block| {
            block
                .chunks_exact(3)
                .filter(|t| {
                    // The mesher's indices are in range (checked by the
                    // writers too); one that is not counts as degenerate.
                    let (Some(a), Some(b), Some(c)) = (
                        p.get(t[0] as usize),
                        p.get(t[1] as usize),
                        p.get(t[2] as usize),
                    ) else {
                        return true;
                    };
                    zero_area(*a, *b, *c)
                })
                .count()
        })
        .sum()
}

/// Whether the cross product of `b - a` and `c - a` is exactly zero. The
/// differences of `f32` values are exact in `f64`, and so are their
/// products, so each component is compared exactly.
fn zero_area(a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> bool {
    let d = |p: [f32; 3], k: usize| f64::from(p[k]) - f64::from(a[k]);
    let (u, v) = ([d(b, 0), d(b, 1), d(b, 2)], [d(c, 0), d(c, 1), d(c, 2)]);
    u[1] * v[2] == u[2] * v[1] && u[2] * v[0] == u[0] * v[2] && u[0] * v[1] == u[1] * v[0]
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_area_means_coincident_or_collinear_corners() {
        let a = [0.5, 1.0, 2.0];
        assert!(zero_area(a, a, [3.0, 1.0, 2.0]), "two corners coincide");
        assert!(zero_area(a, [1.5, 2.0, 3.0], [2.5, 3.0, 4.0]), "collinear");
        assert!(!zero_area(a, [1.5, 1.0, 2.0], [0.5, 1.0, 2.5]));
        // A sliver is not zero: the test is exact, without a tolerance.
        assert!(!zero_area(a, [1.5, 1.0, 2.0], [2.5, 1.0, 2.0 + 1e-6]));

        let out = CubesOutput {
            positions: vec![a, [1.5, 1.0, 2.0], [0.5, 1.0, 2.5], [2.5, 1.0, 2.0]],
            indices: vec![0, 1, 2, 0, 1, 3, 0, 2, 9],
            ..CubesOutput::default()
        };
        // The second is collinear, the third names a vertex that is not there.
        assert_eq!(zero_area_triangles(&out), 2);
    }
}
