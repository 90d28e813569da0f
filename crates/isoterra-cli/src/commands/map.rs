//! The `map` world kind on the command line: `new`, `stroke`, `undo`,
//! `redo`, `info`, `export` and `import` of Tiled maps.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use isoterra::export::{
    PngLayersMesh, TiledExport, TiledImport, export_map_glb, export_png_layers, export_tiled,
    export_tiled_tmx, import_tiled, pathing_png,
};
use isoterra::field::map::PathingOverride;
use isoterra::mesh::MapMeshOptions;
use isoterra::store::MapDocument;
use isoterra::world::{
    MapBrush, MapBrushShape, MapParams, MapPreset, MapStroke, MapTool, PathingRules, pathing_grid,
};

use crate::args::{ExportArgs, ExportFormat, ImportArgs, InfoArgs, NewArgs, Shape, StrokeArgs};
use crate::commands::{parse, write_atomic};

/// Mesh options of a map's parameters.
fn mesh_options(params: &MapParams) -> MapMeshOptions {
    MapMeshOptions::DEFAULT
        .with_cell_size(params.mesh.cell_size)
        .with_level_height(params.mesh.level_height)
        .with_chasm_depth(params.mesh.chasm_depth)
}

/// Pathing rules that match a map's mesh.
fn rules(params: &MapParams) -> PathingRules {
    PathingRules::DEFAULT.with_level_height(params.mesh.level_height)
}

/// `isoterra new FILE --kind map`.
pub fn new(a: &NewArgs) -> anyhow::Result<()> {
    let (w, d) = parse::size(&a.size)?;
    let preset: MapPreset = a
        .preset
        .as_deref()
        .unwrap_or("island")
        .parse()
        .context("unknown map preset; valid presets: island, plateaus, blank")?;
    if !(a.cell_size.is_finite() && a.cell_size > 0.0) {
        bail!("--cell-size must be a finite number above 0");
    }
    let mut params = MapParams::DEFAULT
        .with_size(w, d)
        .with_seed(a.seed)
        .with_preset(preset)
        .with_chunk_cells(a.chunk.unwrap_or(64));
    params.mesh.cell_size = a.cell_size;
    let doc = MapDocument::create(&a.file, &params)
        .with_context(|| format!("cannot create {}", a.file.display()))?;
    let info = doc.info();
    println!(
        "created {} (map, {w}x{d} cells, seed {}, preset {}, {}x{} chunks)",
        a.file.display(),
        a.seed,
        preset.name(),
        info.chunks[0],
        info.chunks[1]
    );
    Ok(())
}

/// Parses `walk,fly,build` into [`PathingOverride`] bits.
fn pathing_bits(text: &str) -> anyhow::Result<u8> {
    let mut bits = 0;
    for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        bits |= match word.to_ascii_lowercase().as_str() {
            "walk" => PathingOverride::NO_WALK,
            "fly" => PathingOverride::NO_FLY,
            "build" => PathingOverride::NO_BUILD,
            "all" => PathingOverride::ALL,
            _ => bail!("unknown pathing flag `{word}` in `{text}`; use walk, fly, build or all"),
        };
    }
    if bits == 0 {
        bail!("--pathing `{text}` names no flag; use a list of walk, fly, build");
    }
    Ok(bits)
}

/// `isoterra stroke FILE` on a map.
pub fn stroke(doc: &mut MapDocument, a: &StrokeArgs) -> anyhow::Result<()> {
    let tool: MapTool = a.tool.parse().context("unknown map tool")?;
    let cell = doc.params().mesh.cell_size;
    let to_cells = |p: [f32; 2]| [p[0] / cell, p[1] / cell];
    let at = to_cells(parse::point(&a.at)?);
    let shape = match a.shape {
        Shape::Circle => MapBrushShape::Circle,
        Shape::Square => MapBrushShape::Square,
        Shape::Diamond => MapBrushShape::Diamond,
    };
    let mut brush = MapBrush::new(tool, a.radius / cell)
        .with_shape(shape)
        .with_strength(a.strength)
        .with_height(a.height)
        .with_level(a.level)
        .with_pathing_set(!a.clear);
    if let Some(t) = a.texture {
        brush = brush.with_texture(t);
    }
    if let Some(p) = &a.pathing {
        brush = brush.with_pathing(pathing_bits(p)?);
    }
    let stroke = match &a.to {
        Some(to) => {
            let to = to_cells(parse::point(to).context("--to")?);
            let spacing = (brush.radius / 4.0).max(0.25);
            MapStroke::along(brush, &[at, to], spacing).context("stroke refused")?
        }
        None => MapStroke::dab(brush, at),
    };
    let outcome = doc.stroke(&stroke).context("stroke refused")?;
    match outcome.id {
        Some(id) => println!(
            "stroke {id}: {} nodes changed, {} chunks to remesh",
            outcome.changed_nodes,
            outcome.dirty.len()
        ),
        None => println!("stroke changed nothing; nothing recorded"),
    }
    Ok(())
}

/// `isoterra info FILE` on a map; `hash` is what `--hash` prints (the world
/// and its baked chunks, as for the other kinds).
pub fn info(doc: &MapDocument, a: &InfoArgs, hash: Option<String>) -> anyhow::Result<()> {
    let mut value = serde_json::to_value(doc.info())?;
    let grid = pathing_grid(doc.world().layers(), &rules(doc.params()))?;
    value["walkable_cells"] = grid.count(isoterra::world::PathingGrid::WALK).into();
    value["buildable_cells"] = grid.count(isoterra::world::PathingGrid::BUILD).into();
    if a.json {
        if let Some(hash) = &hash {
            value["hash"] = hash.as_str().into();
        }
        println!("{}", serde_json::to_string(&value)?);
        return Ok(());
    }
    println!("{:<16} {}", "file:", a.file.display());
    if let serde_json::Value::Object(map) = &value {
        for (k, v) in map {
            let v = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            println!("{:<16} {v}", format!("{}:", k.replace('_', " ")));
        }
    }
    if let Some(hash) = hash {
        println!("{hash}");
    }
    Ok(())
}

/// The sidecar path of a `png-layers` export: the output with `.json`.
fn sidecar_path(out: &Path) -> PathBuf {
    out.with_extension("json")
}

/// `isoterra export FILE` on a map.
pub fn export(doc: &MapDocument, a: &ExportArgs, t0: Instant) -> anyhow::Result<()> {
    if a.region.is_some() || a.lod != 0 || a.range.is_some() {
        bail!(
            "--region, --lod and --range do not apply to map worlds; a map export covers the whole map"
        );
    }
    let load_ms = ms(t0);
    let layers = doc.world().layers();
    let params = doc.params();
    let t1 = Instant::now();
    let mut extra: Option<(PathBuf, Vec<u8>)> = None;
    let bytes = match a.format {
        ExportFormat::Glb => export_map_glb(layers, &mesh_options(params))?,
        ExportFormat::PngLayers => {
            if a.out.extension().is_some_and(|e| e == "json") {
                bail!(
                    "the layer image needs a .png output name; its sidecar is written beside it as .json"
                );
            }
            let m = PngLayersMesh::new(
                params.mesh.cell_size,
                params.mesh.level_height,
                params.mesh.chasm_depth,
            );
            let files = export_png_layers(layers, Some(m))?;
            extra = Some((sidecar_path(&a.out), files.sidecar));
            files.png
        }
        ExportFormat::Tiled => {
            let grid = pathing_grid(layers, &rules(params))?;
            let tmx = a
                .out
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("tmx"));
            if tmx {
                export_tiled_tmx(layers, Some(&grid), &TiledExport::DEFAULT)?
            } else {
                export_tiled(layers, Some(&grid), &TiledExport::DEFAULT)?
            }
        }
        ExportFormat::Pathing => pathing_png(&pathing_grid(layers, &rules(params))?)?,
        other => bail!(
            "format {other:?} does not apply to map worlds (map exports glb, png-layers, tiled, pathing)"
        ),
    };
    let mesh_ms = ms(t1);
    let t2 = Instant::now();
    if let Some((path, side)) = &extra {
        write_atomic(path, side)?;
    }
    write_atomic(&a.out, &bytes)?;
    let write_ms = ms(t2);
    if a.timings {
        eprintln!(
            "{}",
            serde_json::json!({
                "load_ms": load_ms, "mesh_ms": mesh_ms, "write_ms": write_ms, "bytes": bytes.len()
            })
        );
    }
    println!("wrote {} ({} bytes)", a.out.display(), bytes.len());
    if let Some((path, side)) = &extra {
        println!("wrote {} ({} bytes)", path.display(), side.len());
    }
    Ok(())
}

/// Whether an import input is a Tiled JSON map.
pub fn is_tiled(input: &Path) -> bool {
    input
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .is_some_and(|e| e == "json" || e == "tmj")
}

/// `isoterra import MAP.tiled.json --layer NAME -o FILE`.
pub fn import(a: &ImportArgs) -> anyhow::Result<()> {
    if a.range.is_some() {
        bail!("--range applies to heightmap images, not to Tiled maps");
    }
    let bytes =
        std::fs::read(&a.input).with_context(|| format!("cannot read {}", a.input.display()))?;
    let options = TiledImport::DEFAULT.with_layer(a.layer.clone());
    let layers = import_tiled(&bytes, &options)
        .with_context(|| format!("cannot import {}", a.input.display()))?;
    let (w, d) = (layers.width_cells(), layers.depth_cells());
    let mut params = MapParams::DEFAULT
        .with_size(w, d)
        .with_preset(MapPreset::Blank);
    params.mesh.cell_size = a.cell_size;
    if a.out.exists() {
        bail!(
            "{} already exists; choose another output file",
            a.out.display()
        );
    }
    if let Err(e) = MapDocument::create_with_layers(&a.out, &params, layers) {
        // Leave nothing half-written behind.
        let _ = std::fs::remove_file(&a.out);
        return Err(e).with_context(|| format!("cannot create {}", a.out.display()));
    }
    println!(
        "imported {} ({}x{} cells) into {}",
        a.input.display(),
        w,
        d,
        a.out.display()
    );
    Ok(())
}

fn ms(t: Instant) -> f64 {
    (t.elapsed().as_secs_f64() * 1e5).round() / 100.0
}
