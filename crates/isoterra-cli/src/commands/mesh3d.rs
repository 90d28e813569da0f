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
    let field =
        read_npy3_file(&a.npy).with_context(|| format!("cannot read {}", a.npy.display()))?;
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
    let zero_area = zero_area_triangles(&out);
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
    match a.format {
        // Written straight from the mesher's arrays: no second copy.
        MeshFormat::Ply => write_atomic_with(&a.out, |w| Ok(write_ply(&mesh, w)?))?,
        MeshFormat::Obj => write_atomic_with(&a.out, |w| Ok(write_obj(&[mesh], w)?))?,
        MeshFormat::Glb => write_atomic_with(&a.out, |w| Ok(write_glb(&[mesh], w)?))?,
    }
    let write_ms = ms(t2);
    if a.timings {
        eprintln!(
            "{}",
            serde_json::json!({
                "load_ms": load_ms, "mesh_ms": mesh_ms, "write_ms": write_ms,
                "vertices": out.vertex_count(), "triangles": out.triangle_count(),
                "zero_area_triangles": zero_area,
                "dims": field.dims(), "threads": threads
            })
        );
    }
    Ok(())
}

/// Triangles whose corners are collinear or coincide (cross product 0).
fn zero_area_triangles(out: &CubesOutput) -> usize {
    out.indices
        .chunks_exact(3)
        .filter(|t| {
            let [a, b, c] = [0, 1, 2].map(|k| out.positions[t[k] as usize].map(f64::from));
            let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
            let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
            u[1] * v[2] - u[2] * v[1] == 0.0
                && u[2] * v[0] - u[0] * v[2] == 0.0
                && u[0] * v[1] - u[1] * v[0] == 0.0
        })
        .count()
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
