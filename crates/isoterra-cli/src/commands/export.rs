//! `isoterra export`

use std::time::Instant;

use anyhow::{Context, bail};
use isoterra::export::{
    GlbMesh, PngOptions, polylines_json, polylines_svg, render_side2d_png, write_glb, write_obj,
};
use isoterra::mesh::Polyline;
use isoterra::store::{Side2dDocument, VoxelDocument};
use isoterra::world::Side2dWorld;

use crate::args::{ExportArgs, ExportFormat};
use crate::commands::doc::Doc;
use crate::commands::{parse, write_atomic};

pub fn run(a: &ExportArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let doc = Doc::open(&a.file)?;
    let load_ms = ms(t0);
    let (bytes, mesh_ms, counts) = match doc {
        Doc::Side2d(mut d) => side2d(&mut d, a)?,
        Doc::Voxel(mut d) => voxel(&mut d, a)?,
    };
    let t2 = Instant::now();
    write_atomic(&a.out, &bytes)?;
    let write_ms = ms(t2);
    if a.timings {
        let mut line = serde_json::json!({
            "load_ms": load_ms, "mesh_ms": mesh_ms, "write_ms": write_ms, "bytes": bytes.len()
        });
        if let (Some(obj), serde_json::Value::Object(extra)) = (line.as_object_mut(), counts) {
            obj.extend(extra);
        }
        eprintln!("{line}");
    }
    println!("wrote {} ({} bytes)", a.out.display(), bytes.len());
    Ok(())
}

type Exported = (Vec<u8>, f64, serde_json::Value);

fn side2d(doc: &mut Side2dDocument, a: &ExportArgs) -> anyhow::Result<Exported> {
    if a.region.is_some() || a.lod != 0 {
        bail!("--region and --lod apply to voxel worlds; a side2d export covers the whole world");
    }
    let t1 = Instant::now();
    doc.rebuild();
    let world = doc.world();
    let contours = world.contours();
    let bytes = match a.format {
        ExportFormat::Png => png(world, &contours, a.scale)?,
        ExportFormat::Svg => svg(world, &contours).into_bytes(),
        ExportFormat::Colliders => {
            let colliders = world
                .colliders(a.tolerance)
                .context("cannot build colliders")?;
            polylines_json(&colliders).into_bytes()
        }
        other => bail!(
            "format {} does not apply to side2d worlds (side2d exports png, svg, colliders)",
            format_name(other)
        ),
    };
    let counts = serde_json::json!({ "contours": contours.len() });
    Ok((bytes, ms(t1), counts))
}

fn voxel(doc: &mut VoxelDocument, a: &ExportArgs) -> anyhow::Result<Exported> {
    if !matches!(a.format, ExportFormat::Glb | ExportFormat::Obj) {
        bail!(
            "format {} does not apply to voxel worlds (voxel exports glb, obj)",
            format_name(a.format)
        );
    }
    if a.lod != 0 {
        bail!(
            "voxel export meshes at full resolution; --lod {} is not available yet",
            a.lod
        );
    }
    let region = a.region.as_deref().context(
        "a voxel world is endless: say which part to export with --region X0,Y0,Z0,X1,Y1,Z1",
    )?;
    let (lo, hi) = parse::region3(region)?;
    let t1 = Instant::now();
    let (min, max) = doc.world().chunks_covering(lo, hi)?;
    doc.ensure_region(min, max)?;
    doc.rebuild(None);
    let world = doc.world();
    let mut coords: Vec<[i32; 3]> = world
        .meshed_chunks()
        .filter(|c| (0..3).all(|k| min[k] <= c[k] && c[k] <= max[k]))
        .collect();
    coords.sort_by_key(|c| (c[2], c[1], c[0]));
    let names: Vec<String> = coords
        .iter()
        .map(|c| format!("chunk_{}_{}_{}", c[0], c[1], c[2]))
        .collect();
    let mut meshes = Vec::new();
    let mut triangles = 0;
    for (c, name) in coords.iter().zip(&names) {
        if let Some(m) = world.chunk_mesh(*c)
            && !m.is_empty()
        {
            triangles += m.triangle_count();
            meshes.push(GlbMesh::new(name, &m.positions, &m.indices).with_normals(&m.normals));
        }
    }
    let mesh_ms = ms(t1);
    let bytes = match a.format {
        ExportFormat::Glb => write_glb(&meshes)?,
        _ => write_obj(&meshes)?.into_bytes(),
    };
    let counts = serde_json::json!({ "chunks": meshes.len(), "triangles": triangles });
    Ok((bytes, mesh_ms, counts))
}

fn format_name(f: ExportFormat) -> &'static str {
    match f {
        ExportFormat::Png => "png",
        ExportFormat::Svg => "svg",
        ExportFormat::Colliders => "colliders",
        ExportFormat::Glb => "glb",
        ExportFormat::Obj => "obj",
    }
}

fn png(world: &Side2dWorld, contours: &[Polyline], scale: Option<f32>) -> anyhow::Result<Vec<u8>> {
    let mut options = PngOptions::DEFAULT.with_iso(world.params().iso);
    if let Some(s) = scale {
        options = options.with_pixels_per_cell(s);
    }
    Ok(render_side2d_png(
        world.field(),
        Some(world.materials()),
        world.table(),
        contours,
        &options,
    )?)
}

fn svg(world: &Side2dWorld, contours: &[Polyline]) -> String {
    let f = world.field();
    let [ox, oy] = f.origin();
    let w = (f.width() - 1) as f32 * f.cell_size();
    let h = (f.height() - 1) as f32 * f.cell_size();
    polylines_svg(contours, [ox, oy, w, h], &Default::default())
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
