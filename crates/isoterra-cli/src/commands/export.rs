//! `isoterra export`

use std::time::Instant;

use anyhow::{Context, bail};
use isoterra::export::{
    GlbMesh, PngOptions, export_png16, export_r16, polylines_json, polylines_svg,
    render_side2d_png, write_glb, write_obj,
};
use isoterra::mesh::Polyline;
use isoterra::store::{HeightmapDocument, Side2dDocument, VoxelDocument};
use isoterra::world::Side2dWorld;
use isoterra::world::{MeshKey, VoxelLodMesher};

use crate::args::{ExportArgs, ExportFormat};
use crate::commands::doc::Doc;
use crate::commands::{parse, write_atomic};

pub fn run(a: &ExportArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let doc = Doc::open(&a.file)?;
    let load_ms = ms(t0);
    let (bytes, mesh_ms, counts) = match doc {
        Doc::Map(d) => return super::map::export(&d, a, t0),
        Doc::Side2d(mut d) => side2d(&mut d, a)?,
        Doc::Voxel(mut d) => voxel(&mut d, a)?,
        Doc::Heightmap(mut d) => heightmap(&mut d, a)?,
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
    if a.region.is_some() || a.lod != 0 || a.range.is_some() {
        bail!(
            "--region, --lod and --range apply to voxel and heightmap worlds; a side2d export covers the whole world"
        );
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
    let region = a.region.as_deref().context(
        "a voxel world is endless: say which part to export with --region X0,Y0,Z0,X1,Y1,Z1",
    )?;
    let (lo, hi) = parse::region3(region)?;
    let t1 = Instant::now();
    let (min, max) = doc.world().chunks_covering(lo, hi)?;
    let mut names = Vec::new();
    let mut outputs = Vec::new();
    if a.lod == 0 {
        doc.ensure_region(min, max)?;
        doc.rebuild(None);
        let world = doc.world();
        let mut coords: Vec<[i32; 3]> = world
            .meshed_chunks()
            .filter(|c| (0..3).all(|k| min[k] <= c[k] && c[k] <= max[k]))
            .collect();
        coords.sort_by_key(|c| (c[2], c[1], c[0]));
        for c in coords {
            if let Some(m) = world.chunk_mesh(c)
                && !m.is_empty()
            {
                names.push(format!("chunk_{}_{}_{}", c[0], c[1], c[2]));
                outputs.push((m.positions.clone(), m.normals.clone(), m.indices.clone()));
            }
        }
    } else {
        // Coarser levels sample every 2^lod nodes; unedited chunks come
        // straight from the generator, so nothing needs loading.
        let meshed = VoxelLodMesher::new().mesh_region(doc.world(), min, max, a.lod)?;
        for (c, m) in meshed {
            if !m.indices.is_empty() {
                names.push(format!("lod{}_chunk_{}_{}_{}", a.lod, c[0], c[1], c[2]));
                outputs.push((m.positions, m.normals, m.indices));
            }
        }
    }
    let mut meshes = Vec::new();
    let mut triangles = 0;
    for (name, (positions, normals, indices)) in names.iter().zip(&outputs) {
        triangles += indices.len() / 3;
        meshes.push(GlbMesh::new(name, positions, indices).with_normals(normals));
    }
    let mesh_ms = ms(t1);
    let bytes = match a.format {
        ExportFormat::Glb => write_glb(&meshes)?,
        _ => write_obj(&meshes)?.into_bytes(),
    };
    let counts = serde_json::json!({ "chunks": meshes.len(), "triangles": triangles });
    Ok((bytes, mesh_ms, counts))
}

fn heightmap(doc: &mut HeightmapDocument, a: &ExportArgs) -> anyhow::Result<Exported> {
    if !matches!(
        a.format,
        ExportFormat::Png16 | ExportFormat::R16 | ExportFormat::Glb | ExportFormat::Obj
    ) {
        bail!(
            "format {} does not apply to heightmap worlds (heightmap exports png16, r16, glb, obj)",
            format_name(a.format)
        );
    }
    let region = a.region.as_deref().context(
        "a heightmap world is endless: say which part to export with --region X0,Z0,X1,Z1",
    )?;
    let (lo, hi) = parse::region2(region)?;
    let params = *doc.params();
    let cell = params.cell_size;
    // Nodes covering the region, both ends included.
    let first = [(lo[0] / cell).floor() as i64, (lo[1] / cell).floor() as i64];
    let last = [(hi[0] / cell).ceil() as i64, (hi[1] / cell).ceil() as i64];
    let t1 = Instant::now();
    match a.format {
        ExportFormat::Png16 | ExportFormat::R16 => {
            if a.lod != 0 {
                bail!("png16 and r16 export every node; --lod applies to glb and obj");
            }
            let w = u32::try_from(last[0] - first[0] + 1).ok();
            let h = u32::try_from(last[1] - first[1] + 1).ok();
            let (Some(w), Some(h)) = (w, h) else {
                bail!("region `{region}` is too large to export as one image");
            };
            if u64::from(w) * u64::from(h) > 1 << 28 {
                bail!("region `{region}` has {w}x{h} nodes; at most 2^28 fit in one export");
            }
            let range = match &a.range {
                Some(r) => parse::range(r)?,
                None => doc.info().height_range,
            };
            let mut heights = Vec::new();
            doc.world().region_heights(first, [w, h], &mut heights)?;
            let bytes = if a.format == ExportFormat::Png16 {
                export_png16(&heights, [w, h], range)?
            } else {
                export_r16(&heights, [w, h], range)?
            };
            let counts = serde_json::json!({ "width": w, "height": h, "range": range });
            Ok((bytes, ms(t1), counts))
        }
        _ => {
            if a.range.is_some() {
                bail!("--range applies to png16 and r16 exports");
            }
            if a.lod > params.max_lod() {
                bail!(
                    "--lod {} is beyond this world's coarsest level {}",
                    a.lod,
                    params.max_lod()
                );
            }
            let n = i64::from(params.chunk_cells);
            let c0 = [first[0].div_euclid(n), first[1].div_euclid(n)];
            let c1 = [
                (last[0] - 1).max(first[0]).div_euclid(n),
                (last[1] - 1).max(first[1]).div_euclid(n),
            ];
            let count = (c1[0] - c0[0] + 1) * (c1[1] - c0[1] + 1);
            if count > 4096 {
                bail!("region `{region}` covers {count} chunks; export at most 4096 at a time");
            }
            let mut meshes = Vec::new();
            for cz in c0[1]..=c1[1] {
                for cx in c0[0]..=c1[0] {
                    let chunk = [cx as i32, cz as i32];
                    let key = MeshKey::new(chunk, a.lod).with_neighbours([a.lod; 4]);
                    meshes.push((format!("chunk_{cx}_{cz}"), doc.world_mut().mesh(&key)?));
                }
            }
            let glb: Vec<GlbMesh> = meshes
                .iter()
                .map(|(name, m)| GlbMesh::from_heightmap(name, m))
                .collect();
            let triangles: usize = meshes.iter().map(|(_, m)| m.indices.len() / 3).sum();
            let mesh_ms = ms(t1);
            let bytes = if a.format == ExportFormat::Glb {
                write_glb(&glb)?
            } else {
                write_obj(&glb)?.into_bytes()
            };
            let counts = serde_json::json!({ "chunks": glb.len(), "triangles": triangles });
            Ok((bytes, mesh_ms, counts))
        }
    }
}

fn format_name(f: ExportFormat) -> &'static str {
    match f {
        ExportFormat::Png => "png",
        ExportFormat::Svg => "svg",
        ExportFormat::Colliders => "colliders",
        ExportFormat::Glb => "glb",
        ExportFormat::Obj => "obj",
        ExportFormat::Png16 => "png16",
        ExportFormat::R16 => "r16",
        ExportFormat::PngLayers => "png-layers",
        ExportFormat::Tiled => "tiled",
        ExportFormat::Pathing => "pathing",
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
