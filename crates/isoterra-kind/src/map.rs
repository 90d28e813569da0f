//! A map world in the kind layer: its strokes' brushes and its exports.

use isoterra_export::{
    PngLayersMesh, TiledExport, export_map_glb, export_png_layers, export_tiled, export_tiled_tmx,
    pathing_png,
};
use isoterra_store::{ChunkStore, MapDocument};
use isoterra_world::{MapBrush, PathingRules, pathing_grid};
use serde_json::json;

use crate::export::{ExportFile, FileRole};
use crate::stroke::{Brief, Stamp, map_shape, map_tool, pathing_bits};
use crate::{ExportFormat, ExportRequest, Exported, KindError, Template};

/// The template of a stroke of `tool` on a map world.
pub(crate) fn template<S: ChunkStore>(
    d: &MapDocument<S>,
    b: &Brief<'_>,
) -> Result<Template, KindError> {
    let Brief {
        kind: _,
        tool,
        params,
        radius,
        strength,
        shape,
    } = *b;
    let invalid = |e: isoterra_world::WorldError| KindError::invalid(e.to_string());
    let stamp = {
        let cs = d.params().mesh.cell_size;
        let mtool = map_tool(tool.name)?;
        let mut brush = MapBrush::new(mtool, radius / cs)
            .with_shape(map_shape(shape)?)
            .with_strength(strength)
            .with_height(params.number("height")?.map(|h| h as f32))
            .with_level(params.number("level")?.map(|l| l as u8));
        if let Some(t) = params.number("texture")? {
            brush = brush.with_texture(t as u8);
        }
        if mtool == isoterra_world::MapTool::Pathing {
            let flags = params.flags("pathing")?;
            if flags.is_empty() {
                return Err(KindError::invalid(
                    "params.pathing names no flag; use a list of walk, fly, build",
                ));
            }
            brush = brush
                .with_pathing(pathing_bits(&flags))
                .with_pathing_set(!params.boolean("clear")?);
        }
        brush.validate().map_err(invalid)?;
        Stamp::Map(brush, [0.0, 0.0])
    };
    Ok(Template {
        stamp,
        normal: None,
    })
}

/// Exports a map world.
pub(crate) fn export<S: ChunkStore>(
    d: &mut MapDocument<S>,
    req: &ExportRequest,
) -> Result<Exported, KindError> {
    if req.region.is_some() || req.lod != 0 || req.range.is_some() {
        return Err(KindError::invalid(
            "--region, --lod and --range do not apply to map worlds; a map export covers the whole map",
        ));
    }
    let params = *d.params();
    let layers = d.world().layers();
    let rules = PathingRules::DEFAULT.with_level_height(params.mesh.level_height);
    let invalid = |e: isoterra_world::WorldError| KindError::invalid(e.to_string());
    Ok(match req.format {
        ExportFormat::Glb => Exported::one(
            export_map_glb(layers, &params.mesh)?,
            "model/gltf-binary",
            "map.glb",
            json!({}),
        ),
        ExportFormat::PngLayers => {
            let m = PngLayersMesh::new(
                params.mesh.cell_size,
                params.mesh.level_height,
                params.mesh.chasm_depth,
            );
            let files = export_png_layers(layers, Some(m))?;
            let mut out = Exported::one(files.png, "image/png", "map-layers.png", json!({}));
            out.files.push(ExportFile {
                role: FileRole::Sidecar,
                bytes: files.sidecar,
                content_type: "application/json",
                file_name: "map-layers.json",
            });
            out
        }
        ExportFormat::Tiled => {
            let grid = pathing_grid(layers, &rules).map_err(invalid)?;
            if req.tmx {
                let bytes = export_tiled_tmx(layers, Some(&grid), &TiledExport::DEFAULT)?;
                Exported::one(bytes, "application/xml", "map.tmx", json!({}))
            } else {
                let bytes = export_tiled(layers, Some(&grid), &TiledExport::DEFAULT)?;
                Exported::one(bytes, "application/json", "map.tmj", json!({}))
            }
        }
        _ => {
            let grid = pathing_grid(layers, &rules).map_err(invalid)?;
            Exported::one(
                pathing_png(&grid)?,
                "image/png",
                "map-pathing.png",
                json!({}),
            )
        }
    })
}
