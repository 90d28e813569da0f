//! `isoterra mesh3d`: the isosurface of any 3D `.npy` array.
//!
//! Vertex coordinates are in sample-index units: x along the array's last
//! axis, then y, then z (the array's shape is `(Z, Y, X)`).

use std::time::Instant;

use anyhow::{Context, bail};
use isoterra::export::{GlbMesh, export_glb, export_obj, export_ply, read_npy3};
use isoterra::mesh::{CellBox, CubesOptions, CubesOutput, MarchingCubes};

use crate::args::{Mesh3dArgs, MeshFormat};
use crate::commands::write_atomic;

pub fn run(a: &Mesh3dArgs) -> anyhow::Result<()> {
    if !a.iso.is_finite() {
        bail!("--iso must be a finite number, got {}", a.iso);
    }
    let t0 = Instant::now();
    let field = read_npy3(&super::read_input(&a.npy, super::MAX_DOCUMENT_INPUT)?)
        .with_context(|| format!("cannot read {}", a.npy.display()))?;
    let load_ms = ms(t0);

    let t1 = Instant::now();
    let options = CubesOptions::DEFAULT
        .with_iso(a.iso)
        .with_normals(!a.no_normals);
    let mut out = CubesOutput::default();
    MarchingCubes::new()
        .mesh(&field, CellBox::whole(&field), &options, &mut out)
        .context("meshing failed")?;
    let mesh_ms = ms(t1);

    let t2 = Instant::now();
    let name = a
        .npy
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "isosurface".into());
    let mesh = GlbMesh::new(&name, &out.positions, &out.indices).with_normals(&out.normals);
    let bytes = match a.format {
        MeshFormat::Obj => export_obj(&[mesh])?.into_bytes(),
        MeshFormat::Ply => export_ply(&mesh)?,
        MeshFormat::Glb => export_glb(&[mesh])?,
    };
    write_atomic(&a.out, &bytes)?;
    let write_ms = ms(t2);
    if a.timings {
        eprintln!(
            "{}",
            serde_json::json!({
                "load_ms": load_ms, "mesh_ms": mesh_ms, "write_ms": write_ms,
                "vertices": out.vertex_count(), "triangles": out.triangle_count(),
                "dims": field.dims()
            })
        );
    }
    Ok(())
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
