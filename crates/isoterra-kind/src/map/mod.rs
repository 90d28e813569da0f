//! A map world in the kind layer: its defaults, tools, strokes and exports
//! ([`MapKind`] and the map document's [`TypedDocument`]).

mod bake;
mod preview;
mod recipe;

pub use recipe::MapRecipe;

use isoterra_export::{
    PngLayersMesh, TiledExport, export_map_glb, export_map_obj, export_pathing_png,
    export_png_layers, export_tiled, export_tiled_tmx, tiled_tileset_png, write_map_glb,
    write_map_obj,
};
use isoterra_store::{ChunkStore, MapDocument, StoreError};
use isoterra_world::{
    CLIFF_SLOPE_RANGE, DEFAULT_COLLIDER_TOLERANCE, DEFAULT_RAMP_LENGTH, MapBrush, MapParams,
    MapPreset, MapStroke, PathingRules, RAMP_LENGTH_RANGE, level_colliders, pathing_grid,
};
use serde_json::json;

use crate::BakeSource;
use crate::Stamp;
use crate::WorldParams;
use crate::create::{KindDefaults, MAP_SIZE};
use crate::document::Committed;
use crate::export::{ExportFile, FileRole, MainOut, MeshNames, mtl_file, mtl_library_name};
use crate::kind::Preview;
use crate::per_kind::{
    KindSpec, Settings, TypedDocument, committed, misfit, refused, store_forwards,
};
use crate::schema::{ParamKind, ParamSpec, ToolSpec, tool};
use crate::stroke::{Brief, map_shape, map_tool, pathing_bits};
use crate::{ExportFormat, ExportRequest, Exported, KindError, Template, WorldKind};

/// The map kind's facts.
pub(crate) struct MapKind;

impl KindSpec for MapKind {
    fn kind(&self) -> WorldKind {
        WorldKind::Map
    }

    fn summary(&self) -> &'static str {
        "Top-down map with cliff levels, ramps, water, textures and pathing"
    }

    fn defaults(&self) -> KindDefaults {
        KindDefaults {
            size: Some([
                MapParams::DEFAULT.width_cells,
                MapParams::DEFAULT.depth_cells,
            ]),
            size_range: Some(MAP_SIZE),
            preset: MapParams::DEFAULT.preset.name(),
            presets: &["island", "plateaus", "blank"],
            chunk: MapParams::DEFAULT.chunk_cells,
        }
    }

    fn params(&self, s: &Settings<'_>) -> Result<WorldParams, KindError> {
        let [w, h] = s.size.unwrap_or([256, 256]);
        let preset: MapPreset = s
            .preset
            .parse()
            .map_err(|_| s.unknown_preset(self.kind()))?;
        let mut params = MapParams::DEFAULT
            .with_size(w, h)
            .with_seed(s.seed)
            .with_preset(preset)
            .with_chunk_cells(s.chunk);
        params.mesh.cell_size = s.cell;
        Ok(WorldParams::Map(params))
    }

    fn recipe_fields(&self, out: &mut Vec<crate::RecipeField>) {
        recipe::fields(out);
    }

    fn preview(
        &self,
        params: &WorldParams,
        n: u32,
        _area: Option<f32>,
    ) -> Result<crate::Preview, KindError> {
        preview::preview(params, n)
    }

    fn tools(&self, materials: usize) -> Vec<ToolSpec> {
        tools(materials)
    }

    fn shapes(&self) -> &'static [&'static str] {
        &["circle", "square", "diamond"]
    }

    fn formats(&self) -> &'static [ExportFormat] {
        &[
            ExportFormat::Glb,
            ExportFormat::Obj,
            ExportFormat::PngLayers,
            ExportFormat::Tiled,
            ExportFormat::Pathing,
            ExportFormat::Colliders,
        ]
    }

    fn companions(&self, format: ExportFormat) -> &'static [FileRole] {
        match format {
            ExportFormat::PngLayers => &[FileRole::Sidecar],
            ExportFormat::Tiled => &[FileRole::Tileset],
            ExportFormat::Obj => &[FileRole::Materials],
            _ => &[],
        }
    }

    fn mesh_names(&self) -> MeshNames {
        MeshNames::new("map", "map.glb", "map.obj", "map.mtl")
    }

    fn has_ground_queries(&self) -> bool {
        false
    }

    fn point_axes(&self) -> &'static [usize] {
        &[0, 2]
    }
}

impl<S: ChunkStore> TypedDocument<S> for MapDocument<S> {
    store_forwards!(MapDocument);

    fn kind(&self) -> WorldKind {
        WorldKind::Map
    }

    fn params(&self) -> WorldParams {
        WorldParams::Map(*MapDocument::params(self))
    }

    fn bake_source(&self) -> BakeSource<'_> {
        BakeSource::Map(self.world())
    }

    fn template(&self, b: &Brief<'_>) -> Result<Template, KindError> {
        template(self, b)
    }

    /// The first dab fixes the brush's targets (a plateau height or a
    /// cliff level, see `fix_targets`); later dabs reuse them.
    fn stamp(
        &self,
        t: &Template,
        p: [f32; 3],
        first: Option<[f32; 3]>,
    ) -> Result<Stamp, KindError> {
        let Stamp::Map(b, _) = t.stamp else {
            return Err(misfit());
        };
        let cs = MapDocument::params(self).mesh.cell_size;
        let cell = [p[0] / cs, p[2] / cs];
        let b = if first.is_none() {
            self.world().resolve_brush(&b, cell)?
        } else {
            b
        };
        Ok(Stamp::Map(b, cell))
    }

    /// A map tool's targets (plateau height, cliff level) are taken under
    /// the first dab, against the world as it was before the stroke showed
    /// anything; later dabs reuse them.
    fn fix_targets(&self, t: Template, first: &Stamp) -> Template {
        match (t.stamp, first) {
            (Stamp::Map(..), Stamp::Map(b, _)) => Template {
                stamp: Stamp::Map(*b, [0.0, 0.0]),
                ..t
            },
            _ => t,
        }
    }

    /// A map stroke places its dabs as [`MapStroke::along`] does.
    fn path_dabs(
        &self,
        t: &Template,
        points: &[[f64; 3]],
        _max: usize,
    ) -> Result<Vec<[f64; 3]>, KindError> {
        let Stamp::Map(b, _) = t.stamp else {
            return Err(misfit());
        };
        let cs = f64::from(MapDocument::params(self).mesh.cell_size);
        let cells: Vec<[f32; 2]> = points
            .iter()
            .map(|p| [(p[0] / cs) as f32, (p[2] / cs) as f32])
            .collect();
        let spacing = (b.radius / 4.0).max(0.25);
        let along = MapStroke::along(b, &cells, spacing)?;
        Ok(along
            .dabs
            .iter()
            .map(|c| [f64::from(c[0]) * cs, 0.0, f64::from(c[1]) * cs])
            .collect())
    }

    fn dab_size(&self, t: &Template) -> Result<(f32, f32), KindError> {
        let Stamp::Map(b, _) = t.stamp else {
            return Err(misfit());
        };
        let cs = MapDocument::params(self).mesh.cell_size;
        Ok((b.radius * cs, cs))
    }

    fn preview(&mut self, s: &Stamp) -> Result<Preview, KindError> {
        let Stamp::Map(b, at) = s else {
            return Err(misfit());
        };
        MapDocument::preview(self, &MapStroke::dab(*b, *at))
            .map(Preview::Map)
            .map_err(refused)
    }

    fn revert(&mut self, p: &Preview) -> Result<(), StoreError> {
        match p {
            Preview::Map(e) => self.revert_preview(e),
            _ => Ok(()),
        }
    }

    /// The stroke's brush is its first stamp's (the targets fixed there).
    fn commit(&mut self, stamps: &[Stamp]) -> Result<Committed, KindError> {
        let mut brush = None;
        let mut dabs = Vec::with_capacity(stamps.len());
        for s in stamps {
            if let Stamp::Map(b, at) = s {
                brush.get_or_insert(*b);
                dabs.push(*at);
            }
        }
        let Some(brush) = brush else {
            return Ok(Committed {
                id: None,
                changed_nodes: 0,
            });
        };
        let o = self.stroke(&MapStroke::new(brush, dabs)).map_err(refused)?;
        Ok(committed(o.id, o.changed_nodes))
    }

    fn export(
        &mut self,
        req: &ExportRequest,
        main: &mut MainOut<'_>,
    ) -> Result<Exported, KindError> {
        export(self, req, main)
    }
}

/// The tools of this kind (the kind's part of the [tool schema](crate::schema::tools)).
fn tools(_materials: usize) -> Vec<ToolSpec> {
    let cliff = |d: &'static str| {
        vec![
            ParamSpec::number("level", 0.0, 15.0, None, true, d),
            ParamSpec::number(
                "slope",
                f64::from(*CLIFF_SLOPE_RANGE.start()),
                f64::from(*CLIFF_SLOPE_RANGE.end()),
                Some(0.0),
                false,
                "Cells of slope at the rim, inside the brush (0: a vertical wall).",
            ),
        ]
    };
    let height = |d: &'static str| vec![ParamSpec::number("height", -1.0e4, 1.0e4, None, false, d)];
    vec![
        tool(
            "raise",
            "#4caf50",
            '1',
            "Lifts the ground inside the brush.",
            vec![],
        ),
        tool(
            "lower",
            "#795548",
            '2',
            "Sinks the ground inside the brush.",
            vec![],
        ),
        tool(
            "cliff-up",
            "#f44336",
            '3',
            "Raises the cliff level by one (or to the chosen level).",
            cliff("The target level (default: one above the level under the first dab)."),
        ),
        tool(
            "cliff-down",
            "#b71c1c",
            '4',
            "Lowers the cliff level by one (or to the chosen level).",
            cliff("The target level (default: one below the level under the first dab)."),
        ),
        tool(
            "ramp",
            "#ffb300",
            '5',
            "Turns cliffs into walkable slopes between their levels.",
            vec![ParamSpec::number(
                "length",
                f64::from(*RAMP_LENGTH_RANGE.start()),
                f64::from(*RAMP_LENGTH_RANGE.end()),
                Some(f64::from(DEFAULT_RAMP_LENGTH)),
                false,
                "Cells of slope per cliff level (longer is gentler).",
            )],
        ),
        tool(
            "smooth",
            "#2196f3",
            '6',
            "Evens out the ground height.",
            vec![],
        ),
        tool(
            "plateau",
            "#9c27b0",
            '7',
            "Levels the ground at one height.",
            height("The height (default: the height under the first dab)."),
        ),
        tool(
            "noise",
            "#cddc39",
            '8',
            "Adds bumps where the ground is not a ramp.",
            vec![],
        ),
        tool(
            "water-raise",
            "#00bcd4",
            '9',
            "Raises the water surface (floods low ground).",
            height("The water height (default: a step above the current one)."),
        ),
        tool(
            "water-lower",
            "#1a237e",
            '0',
            "Lowers the water surface.",
            height("The water height (default: a step below the current one)."),
        ),
        tool(
            "paint",
            "#e91e63",
            '-',
            "Paints a ground texture.",
            vec![ParamSpec::number(
                "texture",
                0.0,
                15.0,
                Some(0.0),
                true,
                "The texture (0..=15 of the world's palette).",
            )],
        ),
        tool(
            "pathing",
            "#9e9e9e",
            '=',
            "Blocks (or clears) walking, flying or building.",
            vec![
                ParamSpec {
                    name: "pathing",
                    kind: ParamKind::Flags {
                        values: &["walk", "fly", "build"],
                        default: &["build"],
                    },
                    description: "What to block.",
                },
                ParamSpec {
                    name: "clear",
                    kind: ParamKind::Bool { default: false },
                    description: "Clear the flags instead of setting them.",
                },
            ],
        ),
    ]
}

/// The template of a stroke of `tool` on a map world.
fn template<S: ChunkStore>(d: &MapDocument<S>, b: &Brief<'_>) -> Result<Template, KindError> {
    let Brief {
        kind: _,
        tool,
        params,
        radius,
        strength,
        shape,
    } = *b;
    let stamp = {
        let cs = d.params().mesh.cell_size;
        let mtool = map_tool(tool.name)?;
        let mut brush = MapBrush::new(mtool, radius / cs)
            .with_shape(map_shape(shape)?)
            .with_strength(strength)
            .with_height(params.number("height")?.map(|h| h as f32))
            .with_level(params.number("level")?.map(|l| l as u8))
            .with_length(params.number("length")?.map(|l| l as f32))
            .with_slope(params.number("slope")?.map(|w| w as f32));
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
        brush.validate()?;
        Stamp::Map(brush, [0.0, 0.0])
    };
    Ok(Template {
        stamp,
        normal: None,
    })
}

/// Refuses what does not apply to a map export.
fn check_map_export(req: &ExportRequest) -> Result<(), KindError> {
    if req.region.is_some() || req.lod != 0 || req.range.is_some() {
        return Err(KindError::invalid(
            "--region, --lod and --range do not apply to map worlds; a map export covers the whole map",
        ));
    }
    Ok(())
}

/// Exports a map world.
fn export<S: ChunkStore>(
    d: &mut MapDocument<S>,
    req: &ExportRequest,
    main: &mut MainOut<'_>,
) -> Result<Exported, KindError> {
    check_map_export(req)?;
    let params = *d.params();
    let layers = d.world().layers();
    let rules = PathingRules::DEFAULT.with_level_height(params.mesh.level_height);
    Ok(match req.format {
        ExportFormat::Colliders => {
            // Each level's outlines in world units, simplified to 0.05 cell,
            // with the height a game extrudes its walls to. Written from
            // structs of f32, so numbers are their shortest decimals.
            #[derive(serde::Serialize)]
            struct Level {
                level: u8,
                height: f32,
                polylines: Vec<Vec<[f32; 2]>>,
            }
            #[derive(serde::Serialize)]
            struct Colliders {
                format: &'static str,
                version: u32,
                cell_size: f32,
                level_height: f32,
                chasm_depth: f32,
                tolerance_cells: f32,
                size: [f32; 2],
                levels: Vec<Level>,
            }
            let cell = params.mesh.cell_size;
            let levels: Vec<Level> = level_colliders(layers, DEFAULT_COLLIDER_TOLERANCE)?
                .into_iter()
                .map(|l| Level {
                    level: l.level,
                    height: f32::from(l.level) * params.mesh.level_height,
                    polylines: l
                        .polylines
                        .iter()
                        .map(|p| p.iter().map(|&[x, z]| [x * cell, z * cell]).collect())
                        .collect(),
                })
                .collect();
            let count = json!({
                "levels": levels.len(),
                "polylines": levels.iter().map(|l| l.polylines.len()).sum::<usize>(),
            });
            let doc = Colliders {
                format: "isoterra-map-colliders",
                version: 1,
                cell_size: cell,
                level_height: params.mesh.level_height,
                chasm_depth: params.mesh.chasm_depth,
                tolerance_cells: DEFAULT_COLLIDER_TOLERANCE,
                size: [
                    params.width_cells as f32 * cell,
                    params.depth_cells as f32 * cell,
                ],
                levels,
            };
            let bytes = serde_json::to_vec(&doc).map_err(|e| KindError::invalid(e.to_string()))?;
            Exported::one(bytes, "application/json", "map.colliders.json", count)
        }
        // Mesh files are encoded into the writer when there is one: the
        // whole map's file is never held.
        ExportFormat::Glb | ExportFormat::Obj => {
            let (media, name) = req
                .format
                .mesh_file(WorldKind::Map)
                .expect("glb and obj are mesh formats");
            if req.format == ExportFormat::Glb {
                let bytes = match main.writer() {
                    Some(w) => {
                        write_map_glb(layers, &params.mesh, w)?;
                        Vec::new()
                    }
                    None => export_map_glb(layers, &params.mesh)?,
                };
                return Ok(Exported::one(bytes, media, name, json!({})));
            }
            // `usemtl terrain|cliff|water` groups and the `.mtl` they name.
            let lib = mtl_library_name(req, WorldKind::Map);
            let (bytes, mtl) = match main.writer() {
                Some(w) => (Vec::new(), write_map_obj(layers, &params.mesh, &lib, w)?),
                None => {
                    let files = export_map_obj(layers, &params.mesh, &lib)?;
                    (files.obj.into_bytes(), files.mtl)
                }
            };
            let mut out = Exported::one(bytes, media, name, json!({}));
            let (mtl_media, mtl_name) = mtl_file(WorldKind::Map);
            out.files.push(ExportFile {
                role: FileRole::Materials,
                bytes: mtl.into_bytes(),
                content_type: mtl_media,
                file_name: mtl_name,
            });
            out
        }
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
            let grid = pathing_grid(layers, &rules)?;
            // The tileset image goes beside the map, under the map's name
            // (as the CLI writes it: `-o m.tmj` gives `m.tiles.png`).
            let image = format!(
                "{}.{}",
                req.stem.as_deref().unwrap_or("map"),
                FileRole::Tileset.extension().unwrap_or("tiles.png")
            );
            let options = TiledExport::DEFAULT.with_image(image);
            let mut out = if req.tmx {
                let bytes = export_tiled_tmx(layers, Some(&grid), &options)?;
                Exported::one(bytes, "application/xml", "map.tmx", json!({}))
            } else {
                let bytes = export_tiled(layers, Some(&grid), &options)?;
                Exported::one(bytes, "application/json", "map.tmj", json!({}))
            };
            out.files.push(ExportFile {
                role: FileRole::Tileset,
                bytes: tiled_tileset_png(options.tile_size)?,
                content_type: "image/png",
                file_name: "map.tiles.png",
            });
            out
        }
        _ => {
            let grid = pathing_grid(layers, &rules)?;
            Exported::one(
                export_pathing_png(&grid)?,
                "image/png",
                "map-pathing.png",
                json!({}),
            )
        }
    })
}
