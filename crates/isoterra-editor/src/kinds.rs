//! The open world, whatever its kind: tools, brush stamps, previews,
//! commits, history, exports and chunk frames.

use std::path::Path;

use isoterra_field::{HeightParams, HeightPreset, Side2dGen, Side2dPreset, VoxelGen, VoxelPreset};
use isoterra_store::{
    HEIGHTMAP_KIND, HeightmapDocument, MAP_KIND, MapDocument, SIDE2D_KIND, Side2dDocument,
    StoreError, VOXEL_KIND, VoxelDocument, detect_kind,
};
use isoterra_world::{
    Brush, BrushShape, BrushTool, Edit, Edit3, EditDirection, HeightBrush, HeightEdit, HeightTool,
    HeightmapParams, MapBrush, MapBrushShape, MapEdit, MapParams, MapPreset, MapStroke, MapTool,
    Side2dParams, VoxelBrush, VoxelParams, VoxelTool,
};
use serde_json::{Value, json};

use crate::EditorError;
use crate::color;
use crate::frame::{
    KIND_HEIGHTMAP, KIND_MAP, KIND_SIDE2D, KIND_VOXEL, LAYER_LINES, LAYER_TERRAIN, LAYER_WATER,
    encode_frame,
};
use crate::protocol::{Reject, StrokeBegin, param_number, point, ranged};

/// Smallest and largest brush radius, in world units.
pub(crate) const RADIUS: [f64; 2] = [0.5, 100.0];
/// Smallest and largest strength.
pub(crate) const STRENGTH: [f64; 2] = [0.0, 1.0];
/// Largest coordinate a dab or camera may name.
pub(crate) const COORD_LIMIT: f64 = 1.0e7;
/// Largest view distance.
pub(crate) const VIEW_DISTANCE: [f64; 2] = [1.0, 4000.0];
/// Side-view sizes a new world may have, in cells.
const SIDE2D_SIZE: [u32; 2] = [16, 4096];
/// Map sizes a new world may have, in cells.
const MAP_SIZE: [u32; 2] = [16, isoterra_field::map::MAX_MAP_CELLS];

/// An open world file.
pub(crate) enum Doc {
    Side2d(Box<Side2dDocument>),
    Heightmap(Box<HeightmapDocument>),
    Voxel(Box<VoxelDocument>),
    Map(Box<MapDocument>),
}

/// One brush stamp of a stroke.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Stamp {
    Side2d(Brush),
    Height(HeightBrush),
    Voxel(VoxelBrush),
    /// A map brush (targets resolved at the first dab) and a dab in cells.
    Map(MapBrush, [f32; 2]),
}

/// A stamp applied in memory only, to take back.
#[derive(Debug, Clone)]
pub(crate) enum Preview {
    Side2d(Edit),
    Height(HeightEdit),
    Voxel(Edit3),
    Map(MapEdit),
}

/// A stroke's tool and brush, from `stroke_begin`; each dab places it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Template {
    stamp: Stamp,
    /// Voxel flatten: the plane normal (the plane passes through the first dab).
    normal: Option<[f32; 3]>,
}

/// Where the history stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct History {
    pub can_undo: bool,
    pub can_redo: bool,
    pub strokes: u64,
}

impl History {
    pub fn json(&self) -> Value {
        json!({"can_undo": self.can_undo, "can_redo": self.can_redo, "strokes": self.strokes})
    }
}

/// A download.
pub(crate) struct Download {
    pub bytes: Vec<u8>,
    pub content_type: &'static str,
    pub file_name: String,
}

fn store_reject(e: StoreError) -> Reject {
    match e {
        StoreError::World(w) => Reject::invalid(w.to_string()),
        other => Reject::new("storage", other.to_string()),
    }
}

/// A tool of the `welcome` list; `key` is its one-character shortcut.
fn tool_json(name: &str, color: &str, key: char, params: Value) -> Value {
    json!({"name": name, "color": color, "key": key.to_string(), "params": params})
}

impl Doc {
    /// Opens `path`, or creates the default world there when it is missing.
    pub fn open_or_create(path: &Path) -> Result<Doc, EditorError> {
        if !path.exists() {
            return Ok(Doc::create_default(path)?);
        }
        let kind = detect_kind(path)?;
        Ok(match kind.as_str() {
            SIDE2D_KIND => Doc::Side2d(Box::new(Side2dDocument::open(path)?)),
            HEIGHTMAP_KIND => Doc::Heightmap(Box::new(HeightmapDocument::open(path)?)),
            VOXEL_KIND => Doc::Voxel(Box::new(VoxelDocument::open(path)?)),
            MAP_KIND => Doc::Map(Box::new(MapDocument::open(path)?)),
            other => {
                return Err(EditorError::UnsupportedKind {
                    path: path.display().to_string(),
                    kind: other.to_string(),
                });
            }
        })
    }

    /// The default world: a map with the default preset.
    fn create_default(path: &Path) -> Result<Doc, StoreError> {
        Doc::create(path, MAP_KIND, MapParams::DEFAULT.seed, None, None).map_err(|r| match r {
            CreateError::Store(e) => e,
            CreateError::Reject(r) => StoreError::InvalidInput {
                what: "default world",
                reason: r.message,
            },
        })
    }

    /// Creates a world of `kind` at `path` (which must not exist).
    pub fn create(
        path: &Path,
        kind: &str,
        seed: u64,
        size: Option<[u32; 2]>,
        preset: Option<&str>,
    ) -> Result<Doc, CreateError> {
        match kind {
            SIDE2D_KIND => {
                let [w, h] = size.unwrap_or([256, 128]);
                for v in [w, h] {
                    if !(SIDE2D_SIZE[0]..=SIDE2D_SIZE[1]).contains(&v) {
                        return Err(CreateError::Reject(Reject::invalid(format!(
                            "size must be in {}..={} cells on each axis, got {w}x{h}",
                            SIDE2D_SIZE[0], SIDE2D_SIZE[1]
                        ))));
                    }
                }
                let preset: Side2dPreset = preset.unwrap_or("hills").parse().map_err(
                    |e: isoterra_field::FieldError| {
                        CreateError::Reject(Reject::invalid(e.to_string()))
                    },
                )?;
                let generator = Side2dGen::DEFAULT
                    .with_preset(preset)
                    .with_seed(seed)
                    .with_width_cells(w)
                    .with_height_cells(h);
                let params = Side2dParams::DEFAULT
                    .with_generator(generator)
                    .with_chunk_cells(32);
                let doc = Side2dDocument::create(path, &params).map_err(CreateError::Store)?;
                Ok(Doc::Side2d(Box::new(doc)))
            }
            HEIGHTMAP_KIND => {
                let name = preset.unwrap_or("hills");
                let preset = HeightPreset::from_name(name).ok_or_else(|| {
                    CreateError::Reject(Reject::invalid(format!(
                        "unknown heightmap preset `{name}` (hills, mountains, islands)"
                    )))
                })?;
                let params = HeightmapParams::DEFAULT
                    .with_generator(HeightParams::preset(preset))
                    .with_seed(seed);
                let doc = HeightmapDocument::create(path, &params).map_err(CreateError::Store)?;
                Ok(Doc::Heightmap(Box::new(doc)))
            }
            VOXEL_KIND => {
                let preset: VoxelPreset = preset.unwrap_or("caves").parse().map_err(
                    |e: isoterra_field::FieldError| {
                        CreateError::Reject(Reject::invalid(e.to_string()))
                    },
                )?;
                let params = VoxelParams::DEFAULT.with_generator(VoxelGen::new(preset, seed));
                let doc = VoxelDocument::create(path, &params).map_err(CreateError::Store)?;
                Ok(Doc::Voxel(Box::new(doc)))
            }
            MAP_KIND => {
                let defaults = MapParams::DEFAULT;
                let [w, d] = size.unwrap_or([defaults.width_cells, defaults.depth_cells]);
                for v in [w, d] {
                    if !(MAP_SIZE[0]..=MAP_SIZE[1]).contains(&v) {
                        return Err(CreateError::Reject(Reject::invalid(format!(
                            "size must be in {}..={} cells on each axis, got {w}x{d}",
                            MAP_SIZE[0], MAP_SIZE[1]
                        ))));
                    }
                }
                let preset: MapPreset = match preset {
                    None => defaults.preset,
                    Some(p) => p.parse().map_err(|e: isoterra_world::WorldError| {
                        CreateError::Reject(Reject::invalid(e.to_string()))
                    })?,
                };
                let params = defaults.with_size(w, d).with_seed(seed).with_preset(preset);
                let doc = MapDocument::create(path, &params).map_err(CreateError::Store)?;
                Ok(Doc::Map(Box::new(doc)))
            }
            other => Err(CreateError::Reject(Reject::invalid(format!(
                "unknown world kind `{other}` (map, side2d, heightmap, voxel)"
            )))),
        }
    }

    pub fn kind_name(&self) -> &'static str {
        match self {
            Doc::Side2d(_) => SIDE2D_KIND,
            Doc::Heightmap(_) => HEIGHTMAP_KIND,
            Doc::Voxel(_) => VOXEL_KIND,
            Doc::Map(_) => MAP_KIND,
        }
    }

    /// The `world` object of `welcome` and `/api/info`.
    pub fn world_json(&self, file: &Path) -> Value {
        let file = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match self {
            Doc::Side2d(d) => {
                let info = d.info();
                let p = d.params();
                let cell = p.generator.cell_size;
                let [w, h] = p.cells();
                json!({
                    "kind": SIDE2D_KIND, "file": file, "seed": info.seed, "preset": info.preset,
                    "size": [w, h],
                    "bounds": {"min": [0.0, 0.0, 0.0], "max": [w as f32 * cell, h as f32 * cell, 0.0]},
                    "chunk_cells": p.chunk_cells, "cell_size": cell,
                    "materials": d.world().table().iter().map(|m| json!({
                        "name": m.name, "color": m.color, "indestructible": m.indestructible
                    })).collect::<Vec<_>>(),
                })
            }
            Doc::Heightmap(d) => {
                let info = d.info();
                let p = d.params();
                json!({
                    "kind": HEIGHTMAP_KIND, "file": file, "seed": info.seed, "preset": Value::Null,
                    "size": Value::Null, "bounds": Value::Null,
                    "chunk_cells": p.chunk_cells, "cell_size": p.cell_size,
                    "height_range": info.height_range, "lod_count": p.lod_count,
                    "view_distance": p.view_distance,
                })
            }
            Doc::Voxel(d) => {
                let info = d.info();
                let p = d.params();
                json!({
                    "kind": VOXEL_KIND, "file": file, "seed": info.seed, "preset": info.preset,
                    "size": Value::Null, "bounds": Value::Null,
                    "chunk_cells": p.chunk_cells, "cell_size": 1.0,
                })
            }
            Doc::Map(d) => {
                let info = d.info();
                let p = d.params();
                let cs = p.mesh.cell_size;
                let lh = p.mesh.level_height;
                json!({
                    "kind": MAP_KIND, "file": file, "seed": info.seed, "preset": info.preset,
                    "size": [p.width_cells, p.depth_cells],
                    "bounds": {
                        "min": [0.0, -p.mesh.chasm_depth - 64.0, 0.0],
                        "max": [p.width_cells as f32 * cs, f32::from(isoterra_field::map::MAX_LEVEL + 1) * lh + 64.0, p.depth_cells as f32 * cs],
                    },
                    "chunk_cells": p.chunk_cells, "cell_size": cs, "level_height": lh,
                    "textures": isoterra_export::MAP_PALETTE.iter().map(|c| srgb(*c, 1.0)).collect::<Vec<_>>(),
                })
            }
        }
    }

    /// The `tools` list of `welcome`.
    pub fn tools_json(&self) -> Value {
        match self {
            Doc::Side2d(d) => {
                let mats = d.world().table().len().saturating_sub(1);
                json!([
                    tool_json("dig", "#ff9800", '1', json!([])),
                    tool_json(
                        "fill",
                        "#4caf50",
                        '2',
                        json!([
                            {"name": "material", "min": 0, "max": mats, "default": 0}
                        ])
                    ),
                ])
            }
            Doc::Heightmap(_) => json!([
                tool_json("raise", "#4caf50", '1', json!([])),
                tool_json("lower", "#795548", '2', json!([])),
                tool_json("smooth", "#2196f3", '3', json!([])),
                tool_json(
                    "flatten",
                    "#9c27b0",
                    '4',
                    json!([
                        {"name": "height", "min": -1.0e6, "max": 1.0e6, "default": null}
                    ])
                ),
                tool_json(
                    "noise",
                    "#ffc107",
                    '5',
                    json!([
                        {"name": "seed", "min": 0, "max": 4294967295u64, "default": 0}
                    ])
                ),
            ]),
            Doc::Map(_) => json!([
                tool_json("raise", "#4caf50", '1', json!([])),
                tool_json("lower", "#795548", '2', json!([])),
                tool_json(
                    "cliff-up",
                    "#f44336",
                    '3',
                    json!([
                        {"name": "level", "min": 0, "max": 15, "default": null}
                    ])
                ),
                tool_json(
                    "cliff-down",
                    "#b71c1c",
                    '4',
                    json!([
                        {"name": "level", "min": 0, "max": 15, "default": null}
                    ])
                ),
                tool_json("ramp", "#ffb300", '5', json!([])),
                tool_json("smooth", "#2196f3", '6', json!([])),
                tool_json(
                    "plateau",
                    "#9c27b0",
                    '7',
                    json!([
                        {"name": "height", "min": -1.0e4, "max": 1.0e4, "default": null}
                    ])
                ),
                tool_json("noise", "#cddc39", '8', json!([])),
                tool_json(
                    "water-raise",
                    "#00bcd4",
                    '9',
                    json!([
                        {"name": "height", "min": -1.0e4, "max": 1.0e4, "default": null}
                    ])
                ),
                tool_json(
                    "water-lower",
                    "#1a237e",
                    '0',
                    json!([
                        {"name": "height", "min": -1.0e4, "max": 1.0e4, "default": null}
                    ])
                ),
                tool_json(
                    "paint",
                    "#e91e63",
                    '-',
                    json!([
                        {"name": "texture", "min": 0, "max": 15, "default": 0}
                    ])
                ),
                tool_json(
                    "pathing",
                    "#9e9e9e",
                    '=',
                    json!([
                        {"name": "pathing", "values": ["walk", "fly", "build"], "default": ["build"]},
                        {"name": "clear", "values": [false, true], "default": false}
                    ])
                ),
            ]),
            Doc::Voxel(_) => json!([
                tool_json("dig", "#ff9800", '1', json!([])),
                tool_json(
                    "add",
                    "#4caf50",
                    '2',
                    json!([
                        {"name": "material", "min": 0, "max": 255, "default": 0}
                    ])
                ),
                tool_json("smooth", "#2196f3", '3', json!([])),
                tool_json(
                    "flatten",
                    "#9c27b0",
                    '4',
                    json!([
                        {"name": "normal", "min": -1, "max": 1, "default": [0, 1, 0]}
                    ])
                ),
                tool_json(
                    "paint",
                    "#e91e63",
                    '5',
                    json!([
                        {"name": "material", "min": 0, "max": 255, "default": 1}
                    ])
                ),
            ]),
        }
    }

    /// The `limits` object of `welcome`.
    pub fn limits_json(&self) -> Value {
        json!({
            "radius": RADIUS, "strength": STRENGTH,
            "dabs_per_stroke": crate::MAX_DABS_PER_STROKE,
            "message_bytes": crate::MAX_MESSAGE_BYTES,
            "coordinate": COORD_LIMIT, "view_distance": VIEW_DISTANCE,
        })
    }

    /// The export formats of this kind.
    pub fn exports(&self) -> &'static [&'static str] {
        match self {
            Doc::Side2d(_) => &["png", "svg", "colliders"],
            Doc::Heightmap(_) => &["png16", "r16", "glb", "obj"],
            Doc::Voxel(_) => &["glb", "obj"],
            Doc::Map(_) => &[
                "glb",
                "png-layers",
                "png-layers-sidecar",
                "tiled",
                "pathing",
            ],
        }
    }

    pub fn history(&self) -> History {
        let (total, pos, redo) = match self {
            Doc::Side2d(d) => {
                let i = d.info();
                (i.strokes_total, i.undo_position, i.redo_available)
            }
            Doc::Heightmap(d) => {
                let i = d.info();
                (i.strokes_total, i.undo_position, i.redo_available)
            }
            Doc::Voxel(d) => {
                let i = d.info();
                (i.strokes_total, i.undo_position, i.redo_available)
            }
            Doc::Map(d) => {
                let i = d.info();
                (i.strokes_total, i.undo_position, i.redo_available)
            }
        };
        History {
            can_undo: pos > 0,
            can_redo: redo && total > pos,
            strokes: pos,
        }
    }

    pub fn content_hash(&self) -> String {
        match self {
            Doc::Side2d(d) => d.content_hash(),
            Doc::Heightmap(d) => d.content_hash(),
            Doc::Voxel(d) => d.content_hash(),
            Doc::Map(d) => d.content_hash(),
        }
    }

    /// Checks a `stroke_begin` and builds its template.
    pub fn template(&self, b: &StrokeBegin) -> Result<Template, Reject> {
        let radius = ranged("radius", b.radius, RADIUS[0], RADIUS[1])?;
        let strength = ranged("strength", b.strength, STRENGTH[0], STRENGTH[1])?;
        let empty = serde_json::Map::new();
        let params = b.params.as_ref().unwrap_or(&empty);
        let unknown = |tools: &str| {
            Reject::new(
                "unknown_tool",
                format!("unknown tool `{}` for this world (tools: {tools})", b.tool),
            )
        };
        let shape = match b.shape.as_deref() {
            None | Some("circle") => BrushShape::Circle,
            Some("square") => BrushShape::Square,
            Some("diamond") if matches!(self, Doc::Map(_)) => BrushShape::Circle,
            Some(other) => {
                return Err(Reject::invalid(format!(
                    "shape must be `circle`, `square` (or `diamond` on maps), got `{other}`"
                )));
            }
        };
        let template = match self {
            Doc::Map(d) => {
                let tool: MapTool = match b.tool.parse() {
                    Ok(t) if b.tool != "water" => t,
                    _ => {
                        return Err(unknown(
                            "raise, lower, cliff-up, cliff-down, ramp, smooth, plateau, noise, water-raise, water-lower, paint, pathing",
                        ));
                    }
                };
                let map_shape = match b.shape.as_deref() {
                    Some("square") => MapBrushShape::Square,
                    Some("diamond") => MapBrushShape::Diamond,
                    _ => MapBrushShape::Circle,
                };
                let cs = d.params().mesh.cell_size;
                let mut brush = MapBrush::new(tool, radius / cs)
                    .with_shape(map_shape)
                    .with_strength(strength);
                let has = |k: &str| params.get(k).is_some_and(|v| !v.is_null());
                match tool {
                    MapTool::Plateau | MapTool::WaterRaise | MapTool::WaterLower
                        if has("height") =>
                    {
                        let h = param_number(params, "height", -1.0e4, 1.0e4, 0.0)?;
                        brush = brush.with_height(Some(h as f32));
                    }
                    MapTool::CliffUp | MapTool::CliffDown if has("level") => {
                        let l = param_number(params, "level", 0.0, 15.0, 0.0)?;
                        if l.fract() != 0.0 {
                            return Err(Reject::invalid("params.level must be a whole number"));
                        }
                        brush = brush.with_level(Some(l as u8));
                    }
                    MapTool::Paint => {
                        let t = param_number(params, "texture", 0.0, 15.0, 0.0)?;
                        if t.fract() != 0.0 {
                            return Err(Reject::invalid("params.texture must be a whole number"));
                        }
                        brush = brush.with_texture(t as u8);
                    }
                    MapTool::Pathing => {
                        let bits = match params.get("pathing") {
                            None | Some(Value::Null) => isoterra_field::PathingOverride::NO_BUILD,
                            Some(Value::Array(names)) => {
                                let mut bits = 0u8;
                                for n in names {
                                    bits |= match n.as_str() {
                                        Some("walk") => isoterra_field::PathingOverride::NO_WALK,
                                        Some("fly") => isoterra_field::PathingOverride::NO_FLY,
                                        Some("build") => isoterra_field::PathingOverride::NO_BUILD,
                                        _ => {
                                            return Err(Reject::invalid(
                                                "params.pathing holds `walk`, `fly` or `build`",
                                            ));
                                        }
                                    };
                                }
                                bits
                            }
                            Some(_) => {
                                return Err(Reject::invalid(
                                    "params.pathing must be a list of `walk`, `fly`, `build`",
                                ));
                            }
                        };
                        let clear = match params.get("clear") {
                            None | Some(Value::Null) => false,
                            Some(Value::Bool(c)) => *c,
                            Some(_) => {
                                return Err(Reject::invalid("params.clear must be true or false"));
                            }
                        };
                        brush = brush.with_pathing(bits).with_pathing_set(!clear);
                    }
                    _ => {}
                }
                brush
                    .validate()
                    .map_err(|e| Reject::invalid(e.to_string()))?;
                Template {
                    stamp: Stamp::Map(brush, [0.0, 0.0]),
                    normal: None,
                }
            }
            Doc::Side2d(d) => {
                let tool = match b.tool.as_str() {
                    "dig" => BrushTool::Dig,
                    "fill" => BrushTool::Fill,
                    _ => return Err(unknown("dig, fill")),
                };
                let mats = d.world().table().len().saturating_sub(1) as f64;
                let material = param_number(params, "material", 0.0, mats, 0.0)? as u8;
                let brush = Brush::new(tool, [0.0, 0.0], radius)
                    .with_shape(shape)
                    .with_strength(strength)
                    .with_material(material);
                brush
                    .validate()
                    .map_err(|e| Reject::invalid(e.to_string()))?;
                Template {
                    stamp: Stamp::Side2d(brush),
                    normal: None,
                }
            }
            Doc::Heightmap(d) => {
                let tool = match b.tool.as_str() {
                    "raise" => HeightTool::Raise,
                    "lower" => HeightTool::Lower,
                    "smooth" => HeightTool::Smooth,
                    "flatten" => HeightTool::Flatten,
                    "noise" => HeightTool::Noise,
                    _ => return Err(unknown("raise, lower, smooth, flatten, noise")),
                };
                let mut brush = HeightBrush::new(tool, [0.0, 0.0], radius).with_strength(strength);
                if tool == HeightTool::Flatten && params.get("height").is_some_and(|v| !v.is_null())
                {
                    let h = param_number(params, "height", -1.0e6, 1.0e6, 0.0)?;
                    brush = brush.with_target_height(Some(h as f32));
                }
                if tool == HeightTool::Noise {
                    let s = param_number(params, "seed", 0.0, 4_294_967_295.0, 0.0)?;
                    brush = brush.with_seed(s as u64);
                }
                brush
                    .validate(d.params().cell_size)
                    .map_err(|e| Reject::invalid(e.to_string()))?;
                Template {
                    stamp: Stamp::Height(brush),
                    normal: None,
                }
            }
            Doc::Voxel(_) => {
                let tool = match b.tool.as_str() {
                    "dig" => VoxelTool::Dig,
                    "add" => VoxelTool::Add,
                    "smooth" => VoxelTool::Smooth,
                    "flatten" => VoxelTool::Flatten,
                    "paint" => VoxelTool::Paint,
                    _ => return Err(unknown("dig, add, smooth, flatten, paint")),
                };
                let default_mat = if tool == VoxelTool::Paint { 1.0 } else { 0.0 };
                let material = param_number(params, "material", 0.0, 255.0, default_mat)? as u8;
                let mut normal = None;
                if tool == VoxelTool::Flatten {
                    let n = match params.get("normal") {
                        None | Some(Value::Null) => [0.0, 1.0, 0.0],
                        Some(v) => {
                            let n: [f64; 3] = serde_json::from_value(v.clone()).map_err(|_| {
                                Reject::invalid("params.normal must be three numbers")
                            })?;
                            point("params.normal", n, 1.0)?
                        }
                    };
                    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
                    if len <= 1e-3 {
                        return Err(Reject::invalid("params.normal must not be zero"));
                    }
                    normal = Some([n[0] / len, n[1] / len, n[2] / len]);
                }
                let brush = VoxelBrush::new(tool, [0.0; 3], radius)
                    .with_strength(strength)
                    .with_material(material);
                brush
                    .validate()
                    .map_err(|e| Reject::invalid(e.to_string()))?;
                Template {
                    stamp: Stamp::Voxel(brush),
                    normal,
                }
            }
        };
        Ok(template)
    }

    /// The stamp of a dab at `at` (checked); `first` is the stroke's first
    /// dab (voxel flatten's plane passes through it).
    pub fn stamp(
        &self,
        t: &Template,
        at: [f64; 3],
        first: Option<[f32; 3]>,
    ) -> Result<Stamp, Reject> {
        let p = point("at", at, COORD_LIMIT)?;
        Ok(match t.stamp {
            Stamp::Map(mut b, _) => {
                let Doc::Map(d) = self else {
                    return Err(Reject::invalid("the stamp does not fit this world"));
                };
                let cs = d.params().mesh.cell_size;
                let cell = [p[0] / cs, p[2] / cs];
                // Targets taken "under the first dab" are fixed there, so that
                // the live preview (dab by dab) and the recorded stroke agree.
                let origin = match first {
                    Some(f) => [f[0] / cs, f[2] / cs],
                    None => cell,
                };
                resolve_map_targets(d, &mut b, origin)?;
                Stamp::Map(b, cell)
            }
            Stamp::Side2d(b) => Stamp::Side2d(b.with_center([p[0], p[1]])),
            Stamp::Height(b) => Stamp::Height(b.with_center([p[0], p[2]])),
            Stamp::Voxel(mut b) => {
                b.center = p;
                if let Some(n) = t.normal {
                    let o = first.unwrap_or(p);
                    b = b.with_plane(n, n[0] * o[0] + n[1] * o[1] + n[2] * o[2]);
                }
                Stamp::Voxel(b)
            }
        })
    }

    /// Applies a stamp in memory only.
    pub fn preview(&mut self, s: &Stamp) -> Result<Preview, Reject> {
        match (self, s) {
            (Doc::Side2d(d), Stamp::Side2d(b)) => {
                d.preview(b).map(Preview::Side2d).map_err(store_reject)
            }
            (Doc::Heightmap(d), Stamp::Height(b)) => d
                .world_mut()
                .apply_brush(b)
                .map(Preview::Height)
                .map_err(|e| Reject::invalid(e.to_string())),
            (Doc::Voxel(d), Stamp::Voxel(b)) => d
                .world_mut()
                .apply_brush(b)
                .map(Preview::Voxel)
                .map_err(|e| Reject::invalid(e.to_string())),
            (Doc::Map(d), Stamp::Map(b, at)) => d
                .world_mut()
                .apply_stroke(&MapStroke::dab(*b, *at))
                .map(Preview::Map)
                .map_err(|e| Reject::invalid(e.to_string())),
            _ => Err(Reject::invalid("the stamp does not fit this world")),
        }
    }

    /// Takes back a preview.
    pub fn revert(&mut self, p: &Preview) {
        let _ = match (self, p) {
            (Doc::Side2d(d), Preview::Side2d(e)) => d.revert_preview(e).is_ok(),
            (Doc::Heightmap(d), Preview::Height(e)) => {
                d.world_mut().apply_edit(e, EditDirection::Backward).is_ok()
            }
            (Doc::Voxel(d), Preview::Voxel(e)) => {
                d.world_mut().apply_edit(e, EditDirection::Backward).is_ok()
            }
            (Doc::Map(d), Preview::Map(e)) => {
                d.world_mut().apply_edit(e, EditDirection::Backward).is_ok()
            }
            _ => false,
        };
    }

    /// Records a whole stroke (no previews may be applied): its id and the
    /// number of nodes it changed.
    pub fn commit(&mut self, stamps: &[Stamp]) -> Result<(Option<i64>, usize), Reject> {
        match self {
            Doc::Side2d(d) => {
                let brushes = stamps_of(stamps, |s| match s {
                    Stamp::Side2d(b) => Some(*b),
                    _ => None,
                });
                let o = d.stroke_stamps(&brushes).map_err(store_reject)?;
                Ok((o.id, o.changed_nodes))
            }
            Doc::Heightmap(d) => {
                let brushes = stamps_of(stamps, |s| match s {
                    Stamp::Height(b) => Some(*b),
                    _ => None,
                });
                let o = d.stroke_stamps(&brushes).map_err(store_reject)?;
                Ok((o.id, o.changed_nodes))
            }
            Doc::Voxel(d) => {
                let brushes = stamps_of(stamps, |s| match s {
                    Stamp::Voxel(b) => Some(*b),
                    _ => None,
                });
                let o = d.stroke_stamps(&brushes).map_err(store_reject)?;
                Ok((o.id, o.changed_nodes))
            }
            Doc::Map(d) => {
                let mut brush = None;
                let mut dabs = Vec::with_capacity(stamps.len());
                for s in stamps {
                    if let Stamp::Map(b, at) = s {
                        brush.get_or_insert(*b);
                        dabs.push(*at);
                    }
                }
                let Some(brush) = brush else {
                    return Ok((None, 0));
                };
                let o = d
                    .stroke(&MapStroke::new(brush, dabs))
                    .map_err(store_reject)?;
                Ok((o.id, o.changed_nodes))
            }
        }
    }

    pub fn undo(&mut self) -> Result<Option<i64>, Reject> {
        match self {
            Doc::Side2d(d) => d.undo(),
            Doc::Heightmap(d) => d.undo(),
            Doc::Voxel(d) => d.undo(),
            Doc::Map(d) => d.undo(),
        }
        .map_err(store_reject)
    }

    pub fn redo(&mut self) -> Result<Option<i64>, Reject> {
        match self {
            Doc::Side2d(d) => d.redo(),
            Doc::Heightmap(d) => d.redo(),
            Doc::Voxel(d) => d.redo(),
            Doc::Map(d) => d.redo(),
        }
        .map_err(store_reject)
    }
}

/// Why a new world could not be created.
#[derive(Debug)]
pub(crate) enum CreateError {
    Reject(Reject),
    Store(StoreError),
}

/// The frames of a side-view chunk: its fill mesh coloured by material, and
/// its contour lines.
pub(crate) fn side2d_frames(
    doc: &Side2dDocument,
    chunk: &isoterra_world::Side2dChunk,
) -> [Vec<u8>; 2] {
    let table = doc.world().table();
    let mesh = &chunk.mesh;
    let mut colors = vec![[128, 128, 128, 255]; mesh.positions.len()];
    for sub in &mesh.submeshes {
        let c = table
            .get(sub.material)
            .map(|m| m.color)
            .unwrap_or([128, 128, 128, 255]);
        let start = sub.start as usize;
        let end = (start + sub.count as usize).min(mesh.indices.len());
        for &i in &mesh.indices[start.min(end)..end] {
            if let Some(slot) = colors.get_mut(i as usize) {
                *slot = c;
            }
        }
    }
    let coord = [chunk.coord[0] as i32, chunk.coord[1] as i32, 0];
    let normals: Vec<[f32; 3]> = if mesh.normals.len() == mesh.positions.len() {
        mesh.normals.clone()
    } else {
        vec![[0.0, 0.0, 1.0]; mesh.positions.len()]
    };
    let terrain = encode_frame(
        KIND_SIDE2D,
        LAYER_TERRAIN,
        0,
        coord,
        &mesh.positions,
        &normals,
        &colors,
        &mesh.indices,
    );
    let mut positions = Vec::new();
    let mut indices = Vec::new();
    for line in &chunk.polylines {
        let base = positions.len() as u32;
        let n = line.points.len() as u32;
        positions.extend(line.points.iter().map(|p| [p[0], p[1], 0.0]));
        for k in 0..n.saturating_sub(1) {
            indices.extend([base + k, base + k + 1]);
        }
        if line.closed && n > 2 {
            indices.extend([base + n - 1, base]);
        }
    }
    let line_normals = vec![[0.0, 0.0, 1.0]; positions.len()];
    let line_colors = vec![color::OUTLINE; positions.len()];
    let lines = encode_frame(
        KIND_SIDE2D,
        LAYER_LINES,
        0,
        coord,
        &positions,
        &line_normals,
        &line_colors,
        &indices,
    );
    [terrain, lines]
}

/// The frame of a heightmap chunk mesh, coloured by height and slope.
pub(crate) fn heightmap_frame(
    range: [f32; 2],
    chunk: [i32; 2],
    lod: u8,
    mesh: &isoterra_mesh::HeightmapMesh,
) -> Vec<u8> {
    let span = (range[1] - range[0]).max(1e-3);
    let colors: Vec<[u8; 4]> = mesh
        .positions
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let up = mesh.normals.get(i).map(|n| n[1]).unwrap_or(1.0);
            let c = color::terrain((p[1] - range[0]) / span, up);
            if i as u32 >= mesh.skirt_vertex_start {
                color::shade(c, 0.7)
            } else {
                c
            }
        })
        .collect();
    encode_frame(
        KIND_HEIGHTMAP,
        LAYER_TERRAIN,
        lod,
        [chunk[0], 0, chunk[1]],
        &mesh.positions,
        &mesh.normals,
        &colors,
        &mesh.indices,
    )
}

/// The frame of voxel chunk `chunk`'s mesh at `lod`, coloured by material.
pub(crate) fn voxel_frame(
    chunk: [i32; 3],
    lod: u8,
    positions: &[[f32; 3]],
    normals: &[[f32; 3]],
    materials: &[u8],
    indices: &[u32],
) -> Vec<u8> {
    let colors: Vec<[u8; 4]> = (0..positions.len())
        .map(|i| {
            let c = color::voxel_material(materials.get(i).copied().unwrap_or(0));
            // Faces pointing down are a little darker (cave ceilings).
            let down = normals.get(i).map(|n| n[1]).unwrap_or(0.0);
            if down < -0.5 { color::shade(c, 0.8) } else { c }
        })
        .collect();
    encode_frame(
        KIND_VOXEL,
        LAYER_TERRAIN,
        lod,
        chunk,
        positions,
        normals,
        &colors,
        indices,
    )
}

/// An export of the open world in `format`; `region` is the optional
/// `region` query value (numbers separated by commas).
pub(crate) fn export(
    doc: &mut Doc,
    format: &str,
    region: Option<&str>,
) -> Result<Download, Reject> {
    if !doc.exports().contains(&format) {
        return Err(Reject::invalid(format!(
            "format `{format}` does not apply to {} worlds (formats: {})",
            doc.kind_name(),
            doc.exports().join(", ")
        )));
    }
    let fail = |e: &dyn std::fmt::Display| Reject::new("storage", e.to_string());
    match doc {
        Doc::Map(d) => {
            let p = *d.params();
            let layers = d.world().layers();
            let m = p.mesh;
            let (bytes, content_type, file_name) = match format {
                "glb" => {
                    let options = mesh_options(&p);
                    let bytes =
                        isoterra_export::export_map_glb(layers, &options).map_err(|e| fail(&e))?;
                    (bytes, "model/gltf-binary", "map.glb")
                }
                "png-layers" | "png-layers-sidecar" => {
                    let mesh = isoterra_export::PngLayersMesh::new(
                        m.cell_size,
                        m.level_height,
                        m.chasm_depth,
                    );
                    let out = isoterra_export::export_png_layers(layers, Some(mesh))
                        .map_err(|e| fail(&e))?;
                    if format == "png-layers" {
                        (out.png, "image/png", "map-layers.png")
                    } else {
                        (out.sidecar, "application/json", "map-layers.json")
                    }
                }
                "tiled" => {
                    let bytes = isoterra_export::export_tiled(
                        layers,
                        None,
                        &isoterra_export::TiledExport::DEFAULT,
                    )
                    .map_err(|e| fail(&e))?;
                    (bytes, "application/json", "map.tmj")
                }
                _ => {
                    let rules =
                        isoterra_world::PathingRules::DEFAULT.with_level_height(m.level_height);
                    let grid =
                        isoterra_world::pathing_grid(layers, &rules).map_err(|e| fail(&e))?;
                    let bytes = isoterra_export::pathing_png(&grid).map_err(|e| fail(&e))?;
                    (bytes, "image/png", "map-pathing.png")
                }
            };
            Ok(Download {
                bytes,
                content_type,
                file_name: file_name.to_string(),
            })
        }
        Doc::Side2d(d) => {
            d.rebuild();
            let world = d.world();
            let contours = world.contours();
            let (bytes, ty, ext) = match format {
                "png" => {
                    let options = isoterra_export::PngOptions::DEFAULT.with_iso(world.params().iso);
                    let bytes = isoterra_export::render_side2d_png(
                        world.field(),
                        Some(world.materials()),
                        world.table(),
                        &contours,
                        &options,
                    )
                    .map_err(|e| fail(&e))?;
                    (bytes, "image/png", "png")
                }
                "svg" => {
                    let f = world.field();
                    let [ox, oy] = f.origin();
                    let w = (f.width() - 1) as f32 * f.cell_size();
                    let h = (f.height() - 1) as f32 * f.cell_size();
                    let s = isoterra_export::polylines_svg(
                        &contours,
                        [ox, oy, w, h],
                        &Default::default(),
                    );
                    (s.into_bytes(), "image/svg+xml", "svg")
                }
                _ => {
                    let colliders = world
                        .colliders(0.05)
                        .map_err(|e| Reject::invalid(e.to_string()))?;
                    (
                        isoterra_export::polylines_json(&colliders).into_bytes(),
                        "application/json",
                        "json",
                    )
                }
            };
            Ok(Download {
                bytes,
                content_type: ty,
                file_name: format!("world.{ext}"),
            })
        }
        Doc::Heightmap(d) => {
            let r = parse_region(region, 4, [-128.0, -128.0, 128.0, 128.0, 0.0, 0.0])?;
            let cell = d.params().cell_size;
            let first = [(r[0] / cell).floor() as i64, (r[1] / cell).floor() as i64];
            let last = [(r[2] / cell).ceil() as i64, (r[3] / cell).ceil() as i64];
            let dims = [last[0] - first[0] + 1, last[1] - first[1] + 1];
            if dims[0] < 1 || dims[1] < 1 || dims[0] * dims[1] > 1 << 24 {
                return Err(Reject::invalid("region must hold 1 to 2^24 nodes"));
            }
            let dims = [dims[0] as u32, dims[1] as u32];
            match format {
                "png16" | "r16" => {
                    let range = d.info().height_range;
                    let mut heights = Vec::new();
                    d.world()
                        .region_heights(first, dims, &mut heights)
                        .map_err(|e| Reject::invalid(e.to_string()))?;
                    let bytes = if format == "png16" {
                        isoterra_export::export_png16(&heights, dims, range)
                    } else {
                        isoterra_export::export_r16(&heights, dims, range)
                    }
                    .map_err(|e| fail(&e))?;
                    let ty = if format == "png16" {
                        "image/png"
                    } else {
                        "application/octet-stream"
                    };
                    let ext = if format == "png16" { "png" } else { "r16" };
                    Ok(Download {
                        bytes,
                        content_type: ty,
                        file_name: format!("heightmap.{ext}"),
                    })
                }
                _ => {
                    let n = i64::from(d.params().chunk_cells);
                    let c0 = [first[0].div_euclid(n), first[1].div_euclid(n)];
                    let c1 = [
                        (last[0] - 1).max(first[0]).div_euclid(n),
                        (last[1] - 1).max(first[1]).div_euclid(n),
                    ];
                    if (c1[0] - c0[0] + 1) * (c1[1] - c0[1] + 1) > 1024 {
                        return Err(Reject::invalid("region covers more than 1024 chunks"));
                    }
                    let mut meshes = Vec::new();
                    for cz in c0[1]..=c1[1] {
                        for cx in c0[0]..=c1[0] {
                            let key = isoterra_world::MeshKey::new([cx as i32, cz as i32], 0);
                            let m = d
                                .world_mut()
                                .mesh(&key)
                                .map_err(|e| Reject::invalid(e.to_string()))?;
                            meshes.push((format!("chunk_{cx}_{cz}"), m));
                        }
                    }
                    let glb: Vec<isoterra_export::GlbMesh> = meshes
                        .iter()
                        .map(|(name, m)| isoterra_export::GlbMesh::from_heightmap(name, m))
                        .collect();
                    mesh_download(&glb, format, "heightmap")
                }
            }
        }
        Doc::Voxel(d) => {
            let r = parse_region(region, 6, [-32.0, -32.0, -32.0, 32.0, 32.0, 32.0])?;
            let (min, max) = d
                .world()
                .chunks_covering([r[0], r[1], r[2]], [r[3], r[4], r[5]])
                .map_err(|e| Reject::invalid(e.to_string()))?;
            let count: i64 = (0..3)
                .map(|k| i64::from(max[k]) - i64::from(min[k]) + 1)
                .product();
            if count > 4096 {
                return Err(Reject::invalid("region covers more than 4096 chunks"));
            }
            // The region's chunks are meshed here, into buffers of their
            // own: the world's dirty set (what the stream follows) and its
            // mesh cache are left alone.
            let mut need = Vec::new();
            let (lo, hi) = (
                min.map(|v| v.saturating_sub(1)),
                max.map(|v| v.saturating_add(1)),
            );
            for z in lo[2]..=hi[2] {
                for y in lo[1]..=hi[1] {
                    for x in lo[0]..=hi[0] {
                        need.push([x, y, z]);
                    }
                }
            }
            d.world_mut().load_chunks(&need);
            let world = d.world();
            let mut mesher = isoterra_world::VoxelMesher::new();
            let mut names = Vec::new();
            let mut parts = Vec::new();
            for z in min[2]..=max[2] {
                for y in min[1]..=max[1] {
                    for x in min[0]..=max[0] {
                        let mut m = isoterra_world::VoxelChunkMesh::default();
                        world.mesh_chunk([x, y, z], &mut mesher, &mut m);
                        if !m.is_empty() {
                            names.push(format!("chunk_{x}_{y}_{z}"));
                            parts.push(m);
                        }
                    }
                }
            }
            let glb: Vec<isoterra_export::GlbMesh> = names
                .iter()
                .zip(&parts)
                .map(|(n, m)| {
                    isoterra_export::GlbMesh::new(n, &m.positions, &m.indices)
                        .with_normals(&m.normals)
                })
                .collect();
            mesh_download(&glb, format, "voxel")
        }
    }
}

fn mesh_download(
    glb: &[isoterra_export::GlbMesh],
    format: &str,
    stem: &str,
) -> Result<Download, Reject> {
    let fail = |e: isoterra_export::ExportError| Reject::new("storage", e.to_string());
    if format == "glb" {
        Ok(Download {
            bytes: isoterra_export::write_glb(glb).map_err(fail)?,
            content_type: "model/gltf-binary",
            file_name: format!("{stem}.glb"),
        })
    } else {
        Ok(Download {
            bytes: isoterra_export::write_obj(glb).map_err(fail)?.into_bytes(),
            content_type: "text/plain; charset=utf-8",
            file_name: format!("{stem}.obj"),
        })
    }
}

/// Parses `n` finite numbers separated by commas (mins first, then maxes).
fn parse_region(region: Option<&str>, n: usize, default: [f32; 6]) -> Result<[f32; 6], Reject> {
    let Some(text) = region else {
        return Ok(default);
    };
    let values: Vec<f32> = text
        .split(',')
        .map(|s| s.trim().parse::<f32>())
        .collect::<Result<_, _>>()
        .map_err(|_| Reject::invalid(format!("region must be {n} numbers separated by commas")))?;
    if values.len() != n
        || values
            .iter()
            .any(|v| !v.is_finite() || v.abs() > COORD_LIMIT as f32)
    {
        return Err(Reject::invalid(format!(
            "region must be {n} finite numbers"
        )));
    }
    let half = n / 2;
    let mut out = [0.0; 6];
    for k in 0..half {
        let (a, b) = (values[k], values[k + half]);
        if a >= b {
            return Err(Reject::invalid("region must have min < max on every axis"));
        }
        out[k] = a;
        out[k + half] = b;
    }
    if n == 4 {
        Ok([out[0], out[1], out[2], out[3], 0.0, 0.0])
    } else {
        Ok(out)
    }
}

/// Fixes the targets a map tool takes "under the first dab" (plateau height,
/// cliff level) at `origin`, in cells.
fn resolve_map_targets(d: &MapDocument, b: &mut MapBrush, origin: [f32; 2]) -> Result<(), Reject> {
    let p = d.params();
    let layers = d.world().layers();
    let x = origin[0].round().clamp(0.0, p.width_cells as f32) as usize;
    let z = origin[1].round().clamp(0.0, p.depth_cells as f32) as usize;
    let i = z * (p.width_cells as usize + 1) + x;
    if i >= layers.node_count() {
        return Ok(());
    }
    match b.tool {
        MapTool::Plateau if b.height.is_none() => b.height = Some(layers.height[i]),
        MapTool::CliffUp | MapTool::CliffDown if b.level.is_none() => {
            let base = i32::from(layers.level_of(i));
            let target = if b.tool == MapTool::CliffUp {
                base + 1
            } else {
                base - 1
            };
            if !(0..=i32::from(isoterra_field::map::MAX_LEVEL)).contains(&target) {
                return Err(Reject::invalid(format!(
                    "the cliff level under the first dab is {base}; levels stay in 0..=15"
                )));
            }
            b.level = Some(target as u8);
        }
        _ => {}
    }
    Ok(())
}

/// The mesher options of a map.
pub(crate) fn mesh_options(p: &MapParams) -> isoterra_mesh::MapMeshOptions {
    isoterra_mesh::MapMeshOptions::DEFAULT
        .with_cell_size(p.mesh.cell_size)
        .with_level_height(p.mesh.level_height)
        .with_chasm_depth(p.mesh.chasm_depth)
}

/// A linear colour as 8-bit sRGB with alpha `a`.
fn srgb(c: [f32; 3], a: f32) -> [u8; 4] {
    let g = |v: f32| {
        let v = v.clamp(0.0, 1.0);
        let s = if v <= 0.003_130_8 {
            12.92 * v
        } else {
            1.055 * v.powf(1.0 / 2.4) - 0.055
        };
        (s * 255.0).round() as u8
    };
    [
        g(c[0]),
        g(c[1]),
        g(c[2]),
        (a.clamp(0.0, 1.0) * 255.0).round() as u8,
    ]
}

/// The frames of a map chunk: terrain coloured by splat (cliff walls darker)
/// and water coloured and faded by depth. A chunk without water gets an
/// empty water frame, which removes what a client held.
pub(crate) fn map_frames(
    doc: &MapDocument,
    chunk: [u32; 2],
    mesher: &mut isoterra_mesh::MapMesher,
    out: &mut isoterra_mesh::MapMeshOutput,
) -> Option<[Vec<u8>; 2]> {
    let [x0, z0, x1, z1] = doc.world().chunk_cells(chunk)?;
    let rect = isoterra_mesh::CellRect::new(x0, z0, x1, z1);
    let options = mesh_options(doc.params());
    mesher
        .mesh(doc.world().layers(), rect, &options, out)
        .ok()?;
    let coord = [chunk[0] as i32, 0, chunk[1] as i32];
    let t = &out.terrain;
    let colors: Vec<[u8; 4]> = (0..t.positions.len())
        .map(|i| {
            let splat = t
                .splat
                .get(i)
                .copied()
                .unwrap_or(isoterra_field::Splat::single(0));
            let blend = t.blend.get(i).copied().unwrap_or(0.0);
            let c = isoterra_export::splat_color(splat, blend);
            // Walls a little darker again, so cliffs read from above.
            let dark = 1.0 - 0.3 * blend.clamp(0.0, 1.0);
            srgb([c[0] * dark, c[1] * dark, c[2] * dark], 1.0)
        })
        .collect();
    let terrain = encode_frame(
        KIND_MAP,
        LAYER_TERRAIN,
        0,
        coord,
        &t.positions,
        &t.normals,
        &colors,
        &t.indices,
    );
    let w = &out.water;
    let shallow = [0.16f32, 0.55, 0.62];
    let deep = isoterra_export::WATER_COLOR;
    let water_colors: Vec<[u8; 4]> = (0..w.positions.len())
        .map(|i| {
            let depth = w.depth.get(i).copied().unwrap_or(0.0);
            let k = if depth.is_finite() {
                (depth / 3.0).clamp(0.0, 1.0)
            } else {
                1.0
            };
            let c = [
                shallow[0] + (deep[0] - shallow[0]) * k,
                shallow[1] + (deep[1] - shallow[1]) * k,
                shallow[2] + (deep[2] - shallow[2]) * k,
            ];
            srgb(c, 0.35 + 0.5 * k)
        })
        .collect();
    let water = encode_frame(
        KIND_MAP,
        LAYER_WATER,
        0,
        coord,
        &w.positions,
        &w.normals,
        &water_colors,
        &w.indices,
    );
    Some([terrain, water])
}

/// The brushes of one kind among a stroke's stamps, in order.
fn stamps_of<B>(stamps: &[Stamp], pick: impl Fn(&Stamp) -> Option<B>) -> Vec<B> {
    stamps.iter().filter_map(pick).collect()
}
