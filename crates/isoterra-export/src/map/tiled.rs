//! Tiled maps (`.tmj` JSON and `.tmx` XML, with embedded or external
//! tilesets) imported as map layers, and map layers exported as Tiled maps
//! with a tileset image.
//!
//! Tile `(column, row)` of a Tiled map is map cell `(x, z) = (column, row)`:
//! Tiled's rows grow downwards on screen, as the map's z axis does seen from
//! above (y up, right-handed).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use isoterra_field::map::{MAX_LEVEL, MAX_MAP_CELLS, MapLayers};
use isoterra_world::{PathingGrid, PathingRules, high_ground, pathing_grid};
use serde_json::{Map, Value, json};

use super::pathing_png::{pathing_color, rgb_png};
use super::tmx::{looks_like_xml, tmx_to_json, tsx_to_json};
use crate::ExportError;

/// Tiled stores flip and rotation flags in the top four bits of a gid.
const GID_MASK: u32 = 0x0fff_ffff;

/// Chunk coordinates of infinite maps beyond this (in tiles) are refused.
const MAX_CHUNK_COORD: i64 = 1 << 31;

/// Options of [`import_tiled`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TiledImport {
    /// Name of the tile layer to read; `None` takes the first tile layer
    /// (group layers are searched depth-first). Default value: `None`.
    pub layer: Option<String>,
    /// Map cells per tile along each axis, `1..=16`. At 2 a single solid tile
    /// still becomes a small round island. Default value: `2`.
    pub cells_per_tile: u32,
    /// Passes of a `[1 2 1] / 4` smoothing filter over the node fields,
    /// `0..=8`; more passes give rounder shapes. Default value: `1`.
    pub smooth_passes: u32,
    /// Global tile ids that count as solid, besides tiles whose tileset
    /// gives them the bool property [`solid_property`](Self::solid_property)
    /// `= true`. Default value: empty.
    pub solid_gids: Vec<u32>,
    /// Global tile ids with a cliff level, besides tiles whose tileset gives
    /// them the int property [`level_property`](Self::level_property)
    /// `= N`. Default value: empty.
    pub level_gids: Vec<(u32, u8)>,
    /// The name of the bool tile property that makes a tile solid (land).
    /// Default value: `"solid"`.
    pub solid_property: Cow<'static, str>,
    /// The name of the int tile property that gives a tile its cliff level.
    /// Default value: `"level"`.
    pub level_property: Cow<'static, str>,
}

impl TiledImport {
    /// The defaults (see each field).
    pub const DEFAULT: TiledImport = TiledImport {
        layer: None,
        cells_per_tile: 2,
        smooth_passes: 1,
        solid_gids: Vec::new(),
        level_gids: Vec::new(),
        solid_property: Cow::Borrowed("solid"),
        level_property: Cow::Borrowed("level"),
    };

    /// Sets [`layer`](Self::layer).
    pub fn with_layer(mut self, layer: Option<String>) -> Self {
        self.layer = layer;
        self
    }

    /// Sets [`cells_per_tile`](Self::cells_per_tile).
    pub const fn with_cells_per_tile(mut self, v: u32) -> Self {
        self.cells_per_tile = v;
        self
    }

    /// Sets [`smooth_passes`](Self::smooth_passes).
    pub const fn with_smooth_passes(mut self, v: u32) -> Self {
        self.smooth_passes = v;
        self
    }

    /// Sets [`solid_gids`](Self::solid_gids).
    pub fn with_solid_gids(mut self, gids: Vec<u32>) -> Self {
        self.solid_gids = gids;
        self
    }

    /// Sets [`level_gids`](Self::level_gids).
    pub fn with_level_gids(mut self, gids: Vec<(u32, u8)>) -> Self {
        self.level_gids = gids;
        self
    }

    /// Sets [`solid_property`](Self::solid_property).
    pub fn with_solid_property(mut self, name: impl Into<String>) -> Self {
        self.solid_property = Cow::Owned(name.into());
        self
    }

    /// Sets [`level_property`](Self::level_property).
    pub fn with_level_property(mut self, name: impl Into<String>) -> Self {
        self.level_property = Cow::Owned(name.into());
        self
    }
}

impl Default for TiledImport {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// How tile layer data is written by [`export_tiled`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum TiledEncoding {
    /// A plain JSON array of gids (Tiled's "CSV" format).
    #[default]
    Csv,
    /// Base64 of little-endian `u32` gids, uncompressed.
    Base64,
    /// Base64 of zlib-compressed gids.
    Base64Zlib,
    /// Base64 of gzip-compressed gids.
    Base64Gzip,
    /// Base64 of Zstandard-compressed gids.
    Base64Zstd,
}

impl TiledEncoding {
    fn names(self) -> (&'static str, &'static str) {
        match self {
            TiledEncoding::Csv => ("csv", ""),
            TiledEncoding::Base64 => ("base64", ""),
            TiledEncoding::Base64Zlib => ("base64", "zlib"),
            TiledEncoding::Base64Gzip => ("base64", "gzip"),
            TiledEncoding::Base64Zstd => ("base64", "zstd"),
        }
    }
}

/// The map property with which [`export_tiled`] and [`export_tiled_tmx`]
/// say how many map cells one tile is (1: one tile per cell).
pub const CELLS_PER_TILE_PROPERTY: &str = "isoterra.cells_per_tile";

/// The cells per tile a Tiled map (JSON or TMX) says it was written with
/// (its [`CELLS_PER_TILE_PROPERTY`] map property, as isoterra's exports
/// carry), or `None` when it does not say (or is not a Tiled map):
/// importing with that many cells per tile gives back the exported map's
/// size.
pub fn tiled_cells_per_tile(bytes: &[u8]) -> Option<u32> {
    let v = parse_root(bytes).ok()?;
    v.get("properties")?
        .as_array()?
        .iter()
        .find(|p| p.get("name").and_then(Value::as_str) == Some(CELLS_PER_TILE_PROPERTY))?
        .get("value")?
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| (1..=16).contains(n))
}

/// Options of [`export_tiled`] and [`export_tiled_tmx`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TiledExport {
    /// Tile width and height in pixels, `1..=4096` (`1..=`
    /// [`MAX_TILESET_IMAGE_TILE`] with an image). Default value: `32`.
    pub tile_size: u32,
    /// Layer data encoding. Default value: [`TiledEncoding::Csv`].
    pub encoding: TiledEncoding,
    /// The file name (relative to the map) of the tileset image the map
    /// refers to, as [`tiled_tileset_png`] draws it; `None` leaves the
    /// tileset without an image (Tiled then draws a "missing image" cross
    /// for every tile). Default value: `None`.
    pub image: Option<Cow<'static, str>>,
}

/// The largest tile size, in pixels, of a tileset image
/// ([`tiled_tileset_png`]): its 7 x 7 tiles are then 1,792 pixels square.
pub const MAX_TILESET_IMAGE_TILE: u32 = 256;

/// Tiles per row of the tileset image.
const ATLAS_COLUMNS: u32 = 7;

impl TiledExport {
    /// The defaults (see each field).
    pub const DEFAULT: TiledExport = TiledExport {
        tile_size: 32,
        encoding: TiledEncoding::Csv,
        image: None,
    };

    /// Sets [`image`](Self::image).
    pub fn with_image(mut self, file_name: impl Into<String>) -> Self {
        self.image = Some(Cow::Owned(file_name.into()));
        self
    }

    /// Sets [`tile_size`](Self::tile_size).
    pub const fn with_tile_size(mut self, v: u32) -> Self {
        self.tile_size = v;
        self
    }

    /// Sets [`encoding`](Self::encoding).
    pub const fn with_encoding(mut self, v: TiledEncoding) -> Self {
        self.encoding = v;
        self
    }
}

impl Default for TiledExport {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The tile ids (local to the exported tileset, first gid 1) written by
/// [`export_tiled`].
pub struct TiledTiles;

impl TiledTiles {
    /// Local id of the tile of cliff level `k` is `LEVEL + k` (`k` in `0..=15`);
    /// properties `level = k` (int) and `solid = true`.
    pub const LEVEL: u32 = 0;
    /// Local id of the chasm tile (no ground); properties `level = 0`, `solid = false`.
    pub const CHASM: u32 = 16;
    /// Local id of the pathing tile with [`PathingGrid`] bits `b` is
    /// `PATHING + b` (`b` in `0..=31`); properties `pathing = b` (int) and
    /// `walk`, `fly`, `build`, `shallow_water`, `deep_water` (bool).
    pub const PATHING: u32 = 17;
    /// Tiles in the tileset.
    pub const COUNT: u32 = 49;
}

/// One tile layer read from a Tiled map: its size in tiles and its gids
/// (flip flags removed), row-major.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TiledLayer {
    /// The layer's name.
    pub name: String,
    /// Width in tiles.
    pub width: u32,
    /// Height in tiles.
    pub height: u32,
    /// Gids, row-major with columns fastest; 0 is an empty tile.
    pub gids: Vec<u32>,
}

fn jerr(msg: impl Into<String>) -> ExportError {
    ExportError::TiledJson(msg.into())
}

fn get_u64(o: &Map<String, Value>, key: &str, what: &str) -> Result<u64, ExportError> {
    o.get(key)
        .and_then(Value::as_u64)
        .ok_or_else(|| jerr(format!("{what} needs a non-negative integer \"{key}\"")))
}

fn get_i64(o: &Map<String, Value>, key: &str, what: &str) -> Result<i64, ExportError> {
    o.get(key)
        .and_then(Value::as_i64)
        .ok_or_else(|| jerr(format!("{what} needs an integer \"{key}\"")))
}

/// Parses a map, JSON or TMX, into the shape of Tiled JSON and checks its
/// type and orientation. External tilesets stay references.
fn parse_root(bytes: &[u8]) -> Result<Map<String, Value>, ExportError> {
    let root = if looks_like_xml(bytes) {
        tmx_to_json(bytes)?
    } else {
        let root: Value = serde_json::from_slice(bytes).map_err(|e| jerr(e.to_string()))?;
        let Value::Object(root) = root else {
            return Err(jerr("the top level is not an object"));
        };
        root
    };
    if let Some(t) = root.get("type").and_then(Value::as_str)
        && t != "map"
    {
        return Err(jerr(format!("\"type\" is {t:?}, expected \"map\"")));
    }
    match root.get("orientation") {
        None => {}
        Some(Value::String(o)) if o == "orthogonal" => {}
        Some(Value::String(o)) => return Err(ExportError::TiledOrientation(o.clone())),
        Some(_) => return Err(jerr("\"orientation\" is not a string")),
    }
    Ok(root)
}

/// Every tile layer of the map, depth-first through groups.
fn tile_layers<'a>(layers: &'a [Value], out: &mut Vec<&'a Map<String, Value>>) {
    for l in layers {
        let Some(o) = l.as_object() else { continue };
        match o.get("type").and_then(Value::as_str) {
            Some("tilelayer") => out.push(o),
            Some("group") => {
                if let Some(Value::Array(inner)) = o.get("layers") {
                    tile_layers(inner, out);
                }
            }
            _ => {}
        }
    }
}

/// Decodes the `data` of a layer or chunk into `count` gids.
///
/// `o` holds the data; the encoding and compression are `o`'s when it names
/// an encoding, else `layer`'s (Tiled writes them on the layer, also for the
/// chunks of infinite maps).
fn decode_data(
    layer: &Map<String, Value>,
    o: &Map<String, Value>,
    count: usize,
    what: &str,
) -> Result<Vec<u32>, ExportError> {
    // A chunk that names its own encoding brings its own compression too.
    let from = if o.contains_key("encoding") { o } else { layer };
    let encoding = from
        .get("encoding")
        .and_then(Value::as_str)
        .unwrap_or("csv");
    let compression = from
        .get("compression")
        .and_then(Value::as_str)
        .unwrap_or("");
    let data = o
        .get("data")
        .ok_or_else(|| jerr(format!("{what} has no \"data\"")))?;
    let gids = match encoding {
        "csv" => {
            if !compression.is_empty() {
                return Err(ExportError::TiledCompression(format!(
                    "compression {compression:?} with encoding \"csv\""
                )));
            }
            let arr = data
                .as_array()
                .ok_or_else(|| jerr(format!("{what}: csv \"data\" is not an array")))?;
            if arr.len() != count {
                return Err(jerr(format!(
                    "{what} has {} tiles, expected {count}",
                    arr.len()
                )));
            }
            arr.iter()
                .map(|v| {
                    v.as_u64()
                        .and_then(|g| u32::try_from(g).ok())
                        .ok_or_else(|| jerr(format!("{what}: tile {v} is not a 32-bit gid")))
                })
                .collect::<Result<Vec<u32>, _>>()?
        }
        "base64" => {
            if !matches!(compression, "" | "zlib" | "gzip" | "zstd") {
                return Err(ExportError::TiledCompression(format!(
                    "compression {compression:?}"
                )));
            }
            let text = data
                .as_str()
                .ok_or_else(|| jerr(format!("{what}: base64 \"data\" is not a string")))?;
            let raw = BASE64
                .decode(text.trim())
                .map_err(|e| jerr(format!("{what}: bad base64 data: {e}")))?;
            let want = count * 4;
            let bytes = match compression {
                "" => raw,
                c => inflate(c, &raw, want)
                    .map_err(|e| jerr(format!("{what}: cannot decompress {c} data: {e}")))?,
            };
            if bytes.len() != want {
                return Err(jerr(format!(
                    "{what} data has {} bytes, expected {want} ({count} tiles)",
                    bytes.len()
                )));
            }
            bytes
                .chunks_exact(4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect()
        }
        e => {
            return Err(ExportError::TiledCompression(format!("encoding {e:?}")));
        }
    };
    Ok(gids.into_iter().map(|g| g & GID_MASK).collect())
}

/// Decompresses at most `want + 1` bytes (so a bomb cannot exhaust memory).
fn inflate(kind: &str, raw: &[u8], want: usize) -> std::io::Result<Vec<u8>> {
    let limit = want as u64 + 1;
    let mut out = Vec::with_capacity(want);
    match kind {
        "zlib" => {
            flate2::read::ZlibDecoder::new(raw)
                .take(limit)
                .read_to_end(&mut out)?;
        }
        "gzip" => {
            flate2::read::GzDecoder::new(raw)
                .take(limit)
                .read_to_end(&mut out)?;
        }
        _ => {
            zstd::stream::read::Decoder::new(raw)?
                .take(limit)
                .read_to_end(&mut out)?;
        }
    }
    Ok(out)
}

fn check_tiles(w: u64, h: u64) -> Result<(), ExportError> {
    if w == 0 || h == 0 {
        return Err(jerr(format!("a tile layer of {w}x{h} tiles is empty")));
    }
    if w > MAX_MAP_CELLS as u64 || h > MAX_MAP_CELLS as u64 {
        return Err(ExportError::MapTooLarge {
            width: w,
            height: h,
            max: MAX_MAP_CELLS,
        });
    }
    Ok(())
}

/// Reads one tile layer (or, for `None`, the first tile layer that holds a
/// tile) of a Tiled map, JSON (`.tmj`) or XML (`.tmx`): finite layers in CSV
/// or base64 (uncompressed, zlib, gzip or zstd), and infinite maps, whose
/// chunks are assembled into the rectangle that bounds them (missing tiles
/// are 0). An empty layer of an infinite map (no chunks, as Tiled writes
/// it) is a layer of empty tiles of the layer's (or the map's) size.
///
/// Errors: malformed JSON or members ([`ExportError::TiledJson`]), malformed
/// XML ([`ExportError::TiledXml`]), an encoding or compression not listed
/// ([`ExportError::TiledCompression`]), a missing layer
/// ([`ExportError::TiledLayerNotFound`]), a non-orthogonal map
/// ([`ExportError::TiledOrientation`]), a layer wider or taller than
/// [`MAX_MAP_CELLS`] tiles ([`ExportError::MapTooLarge`]).
pub fn read_tiled_layer(bytes: &[u8], layer: Option<&str>) -> Result<TiledLayer, ExportError> {
    let root = parse_root(bytes)?;
    read_layer(&root, layer)
}

fn read_layer(root: &Map<String, Value>, layer: Option<&str>) -> Result<TiledLayer, ExportError> {
    let layers = root
        .get("layers")
        .and_then(Value::as_array)
        .ok_or_else(|| jerr("the map has no \"layers\" array"))?;
    let mut all = Vec::new();
    tile_layers(layers, &mut all);
    let name_of = |o: &Map<String, Value>| {
        o.get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    match layer {
        Some(n) => match all.iter().find(|o| name_of(o) == n) {
            Some(o) => decode_layer(root, o, name_of(o)),
            None => Err(ExportError::TiledLayerNotFound {
                name: n.to_string(),
                available: all.iter().map(|o| name_of(o)).collect(),
            }),
        },
        None => {
            // The first layer with a tile; a map whose layers are all empty
            // gives its first.
            let mut first = None;
            for o in &all {
                let l = decode_layer(root, o, name_of(o))?;
                if l.gids.iter().any(|&g| g != 0) {
                    return Ok(l);
                }
                first.get_or_insert(l);
            }
            first.ok_or_else(|| ExportError::TiledLayerNotFound {
                name: String::new(),
                available: Vec::new(),
            })
        }
    }
}

fn decode_layer(
    root: &Map<String, Value>,
    o: &Map<String, Value>,
    name: String,
) -> Result<TiledLayer, ExportError> {
    let what = format!("layer {name:?}");
    if let Some(Value::Array(chunks)) = o.get("chunks") {
        if chunks.is_empty() {
            // Tiled writes an empty layer of an infinite map with no chunks;
            // its size is the layer's, or the map's.
            let size = |key: &str| {
                o.get(key)
                    .and_then(Value::as_u64)
                    .filter(|&n| n > 0)
                    .or_else(|| root.get(key).and_then(Value::as_u64))
                    .unwrap_or(0)
            };
            let (w, h) = (size("width"), size("height"));
            if w == 0 || h == 0 {
                return Err(jerr(format!(
                    "{what} is empty (no chunks) and neither it nor the map gives a size"
                )));
            }
            check_tiles(w, h)?;
            return Ok(TiledLayer {
                name,
                width: w as u32,
                height: h as u32,
                gids: vec![0; (w * h) as usize],
            });
        }
        let mut rects = Vec::with_capacity(chunks.len());
        for c in chunks {
            let c = c
                .as_object()
                .ok_or_else(|| jerr(format!("{what}: a chunk is not an object")))?;
            let x = get_i64(c, "x", "a chunk")?;
            let y = get_i64(c, "y", "a chunk")?;
            if x.abs() > MAX_CHUNK_COORD || y.abs() > MAX_CHUNK_COORD {
                return Err(jerr(format!(
                    "{what}: chunk at ({x}, {y}) is beyond +-{MAX_CHUNK_COORD} tiles"
                )));
            }
            let w = get_u64(c, "width", "a chunk")?;
            let h = get_u64(c, "height", "a chunk")?;
            check_tiles(w, h)?;
            rects.push((c, x, y, w as i64, h as i64));
        }
        let x0 = rects.iter().map(|r| r.1).min().unwrap_or(0);
        let y0 = rects.iter().map(|r| r.2).min().unwrap_or(0);
        let x1 = rects.iter().map(|r| r.1 + r.3).max().unwrap_or(0);
        let y1 = rects.iter().map(|r| r.2 + r.4).max().unwrap_or(0);
        let (w, h) = ((x1 - x0) as u64, (y1 - y0) as u64);
        check_tiles(w, h)?;
        let mut gids = vec![0u32; (w * h) as usize];
        for (c, x, y, cw, ch) in rects {
            let data = decode_data(o, c, (cw * ch) as usize, &what)?;
            for r in 0..ch {
                let row = ((y - y0 + r) * w as i64 + (x - x0)) as usize;
                let src = (r * cw) as usize;
                gids[row..row + cw as usize].copy_from_slice(&data[src..src + cw as usize]);
            }
        }
        return Ok(TiledLayer {
            name,
            width: w as u32,
            height: h as u32,
            gids,
        });
    }
    let w = get_u64(o, "width", &what)?;
    let h = get_u64(o, "height", &what)?;
    check_tiles(w, h)?;
    let gids = decode_data(o, o, (w * h) as usize, &what)?;
    Ok(TiledLayer {
        name,
        width: w as u32,
        height: h as u32,
        gids,
    })
}

/// Replaces each external tileset reference (`{"firstgid", "source"}`) of
/// the map by the tileset it names, read through `resolve`, JSON (`.tsj`)
/// or XML (`.tsx`), keeping the map's `firstgid`. Each source is read once.
fn resolve_tilesets(
    root: &mut Map<String, Value>,
    resolve: Option<&mut TiledFiles<'_>>,
) -> Result<(), ExportError> {
    let Some(Value::Array(sets)) = root.get_mut("tilesets") else {
        return Ok(());
    };
    let mut resolve = resolve;
    let mut cache: HashMap<String, Map<String, Value>> = HashMap::new();
    for set in sets.iter_mut() {
        let Some(obj) = set.as_object_mut() else {
            continue;
        };
        let Some(source) = obj.get("source").and_then(Value::as_str).map(str::to_owned) else {
            continue;
        };
        let fail = |reason: String| ExportError::TiledTileset {
            source_path: source.clone(),
            reason,
        };
        let loaded = match cache.get(&source) {
            Some(t) => t.clone(),
            None => {
                let Some(read) = resolve.as_deref_mut() else {
                    return Err(fail(
                        "the map was given without the files beside it; import it from a file"
                            .into(),
                    ));
                };
                let bytes = read(&source).map_err(&fail)?;
                let t = if looks_like_xml(&bytes) {
                    tsx_to_json(&bytes).map_err(|e| fail(e.to_string()))?
                } else {
                    match serde_json::from_slice(&bytes) {
                        Ok(Value::Object(t)) => t,
                        Ok(_) => return Err(fail("the top level is not an object".into())),
                        Err(e) => return Err(fail(format!("malformed JSON: {e}"))),
                    }
                };
                if let Some(ty) = t.get("type").and_then(Value::as_str)
                    && ty != "tileset"
                {
                    return Err(fail(format!("\"type\" is {ty:?}, expected \"tileset\"")));
                }
                if t.contains_key("source") {
                    return Err(fail("a tileset file cannot refer to another".into()));
                }
                cache.insert(source.clone(), t.clone());
                t
            }
        };
        let first = obj.get("firstgid").cloned();
        *obj = loaded;
        if let Some(f) = first {
            obj.insert("firstgid".into(), f);
        }
    }
    Ok(())
}

/// How an import reads the files a Tiled map refers to (its external
/// tilesets): given the path as the map writes it (relative to the map's
/// directory), the file's bytes, or why they cannot be had.
pub type TiledFiles<'a> = dyn FnMut(&str) -> Result<Vec<u8>, String> + 'a;

/// `solid` and `level` properties of tiles, by gid.
#[derive(Default)]
struct TileProps {
    solid: Vec<(u32, bool)>,
    level: Vec<(u32, i64)>,
}

/// Records the solid or level property of tile `gid` (named by `options`);
/// others are ignored.
fn add_prop(
    props: &mut TileProps,
    options: &TiledImport,
    gid: u32,
    name: &str,
    value: Option<&Value>,
) -> Result<(), ExportError> {
    if name == options.solid_property {
        {
            let v = match value {
                Some(Value::Bool(b)) => *b,
                Some(Value::String(s)) => s == "true",
                Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
                _ => false,
            };
            props.solid.push((gid, v));
        }
    }
    if name == options.level_property {
        {
            let v = value
                .and_then(|v| {
                    v.as_i64()
                        .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
                        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                })
                .ok_or_else(|| {
                    jerr(format!(
                        "tile gid {gid}: property {name:?} is not an integer"
                    ))
                })?;
            props.level.push((gid, v));
        }
    }
    Ok(())
}

fn tile_props(root: &Map<String, Value>, options: &TiledImport) -> Result<TileProps, ExportError> {
    let mut props = TileProps::default();
    let Some(sets) = root.get("tilesets") else {
        return Ok(props);
    };
    let sets = sets
        .as_array()
        .ok_or_else(|| jerr("\"tilesets\" is not an array"))?;
    for set in sets {
        let set = set
            .as_object()
            .ok_or_else(|| jerr("a tileset is not an object"))?;
        let first = get_u64(set, "firstgid", "a tileset")?;
        let gid_of = |id: u64| {
            first
                .checked_add(id)
                .and_then(|g| u32::try_from(g).ok())
                .ok_or_else(|| jerr("a tile gid overflows"))
        };
        if let Some(Value::Array(tiles)) = set.get("tiles") {
            for t in tiles {
                let Some(t) = t.as_object() else { continue };
                let gid = gid_of(get_u64(t, "id", "a tileset tile")?)?;
                // A tile whose class (`type` before Tiled 1.9 and since
                // 1.10, `class` in 1.9) is the solid property's name is solid.
                let class = t
                    .get("type")
                    .or_else(|| t.get("class"))
                    .and_then(Value::as_str);
                if class == Some(&*options.solid_property) {
                    props.solid.push((gid, true));
                }
                let Some(Value::Array(ps)) = t.get("properties") else {
                    continue;
                };
                for p in ps {
                    let name = p.get("name").and_then(Value::as_str).unwrap_or("");
                    add_prop(&mut props, options, gid, name, p.get("value"))?;
                }
            }
        }
        // Maps saved before Tiled 1.2: {"tileproperties": {"3": {"solid": true}}}.
        if let Some(Value::Object(old)) = set.get("tileproperties") {
            for (id, ps) in old {
                let id: u64 = id
                    .parse()
                    .map_err(|_| jerr(format!("tileproperties key {id:?} is not a tile id")))?;
                let gid = gid_of(id)?;
                if let Value::Object(ps) = ps {
                    for (name, value) in ps {
                        add_prop(&mut props, options, gid, name, Some(value))?;
                    }
                }
            }
        }
    }
    Ok(props)
}

/// Imports a tile layer of a Tiled map, JSON (`.tmj`) or XML (`.tmx`), as
/// map layers. The map's tilesets must be embedded; [`import_tiled_with`]
/// also reads external ones.
///
/// Each tile is `cells_per_tile x cells_per_tile` map cells. A tile is
/// *solid* when its gid is in `solid_gids`, its tileset tile has the bool
/// property named by `solid_property` (`solid`) set, or its class is that
/// name; its *level* comes from `level_gids` or the int property named by
/// `level_property` (`level`), 0 otherwise. When any tile of the layer is solid,
/// solid tiles are land and the others chasm; otherwise the whole map is land.
///
/// Node values are sampled from the tiles (a node on a tile edge or corner
/// takes the mean of the tiles that touch it), then smoothed by
/// `smooth_passes` passes of a `[1 2 1] / 4` filter along x and z, so that
/// marching squares gives round shapes: ground is `2 * land - 1` (iso 0 on
/// the smoothed tile edges), level the smoothed tile levels (rims at `k + 0.5`).
/// Softness and height are 0, there is no water, texture 0 everywhere.
///
/// Errors: as [`read_tiled_layer`], plus a level outside `0..=15`
/// ([`ExportError::InvalidParameter`] naming the gid), options out of range,
/// a map of more than [`MAX_MAP_CELLS`] cells per side, and an external
/// tileset ([`ExportError::TiledTileset`]).
pub fn import_tiled(bytes: &[u8], options: &TiledImport) -> Result<MapLayers, ExportError> {
    import(bytes, options, None)
}

/// [`import_tiled`] for a map whose tilesets may be external files
/// (`.tsj` or `.tsx`, Tiled's default when a tileset is made on its own):
/// `files` reads each by the path the map gives, relative to the map.
///
/// Errors: as [`import_tiled`]; a tileset that cannot be read or is
/// malformed is [`ExportError::TiledTileset`] naming it.
pub fn import_tiled_with(
    bytes: &[u8],
    options: &TiledImport,
    files: &mut TiledFiles<'_>,
) -> Result<MapLayers, ExportError> {
    import(bytes, options, Some(files))
}

fn import(
    bytes: &[u8],
    options: &TiledImport,
    files: Option<&mut TiledFiles<'_>>,
) -> Result<MapLayers, ExportError> {
    if !(1..=16).contains(&options.cells_per_tile) {
        return Err(ExportError::param(
            "cells_per_tile",
            options.cells_per_tile,
            "must lie in 1..=16",
        ));
    }
    if options.smooth_passes > 8 {
        return Err(ExportError::param(
            "smooth_passes",
            options.smooth_passes,
            "must lie in 0..=8",
        ));
    }
    if let Some(&(gid, l)) = options.level_gids.iter().find(|(_, l)| *l > MAX_LEVEL) {
        return Err(ExportError::InvalidParameter {
            name: "level",
            value: format!("{l} (gid {gid})"),
            reason: "cliff levels lie in 0..=15",
        });
    }
    let mut root = parse_root(bytes)?;
    resolve_tilesets(&mut root, files)?;
    let props = tile_props(&root, options)?;
    let layer = read_layer(&root, options.layer.as_deref())?;
    let s = options.cells_per_tile;
    let (cw, ch) = (
        layer.width as u64 * s as u64,
        layer.height as u64 * s as u64,
    );
    if cw > MAX_MAP_CELLS as u64 || ch > MAX_MAP_CELLS as u64 {
        return Err(ExportError::MapTooLarge {
            width: cw,
            height: ch,
            max: MAX_MAP_CELLS,
        });
    }
    // Classify each distinct gid once, every lookup by hash: linear in the
    // tiles, the distinct gids and the properties (a list scanned per gid
    // made a layer of many distinct gids quadratic).
    let solid_opt: HashSet<u32> = options.solid_gids.iter().copied().collect();
    let solid_prop: HashSet<u32> = props
        .solid
        .iter()
        .filter(|&&(_, v)| v)
        .map(|&(g, _)| g)
        .collect();
    // The first entry of a gid wins, as a search from the front would find.
    let mut level_opt: HashMap<u32, i64> = HashMap::with_capacity(options.level_gids.len());
    for &(g, l) in &options.level_gids {
        level_opt.entry(g).or_insert(i64::from(l));
    }
    let mut level_prop: HashMap<u32, i64> = HashMap::with_capacity(props.level.len());
    for &(g, l) in &props.level {
        level_prop.entry(g).or_insert(l);
    }
    let mut solid = Vec::with_capacity(layer.gids.len());
    let mut level = Vec::with_capacity(layer.gids.len());
    let mut cache: HashMap<u32, (bool, u8)> = HashMap::new();
    for &g in &layer.gids {
        let (sol, lev) = match cache.get(&g) {
            Some(&c) => c,
            None => {
                let sol = g != 0 && (solid_opt.contains(&g) || solid_prop.contains(&g));
                let lev = if g == 0 {
                    0
                } else {
                    level_opt
                        .get(&g)
                        .or_else(|| level_prop.get(&g))
                        .copied()
                        .unwrap_or(0)
                };
                if !(0..=MAX_LEVEL as i64).contains(&lev) {
                    return Err(ExportError::InvalidParameter {
                        name: "level",
                        value: format!("{lev} (gid {g})"),
                        reason: "cliff levels lie in 0..=15",
                    });
                }
                cache.insert(g, (sol, lev as u8));
                (sol, lev as u8)
            }
        };
        solid.push(sol);
        level.push(lev);
    }
    let any_solid = solid.iter().any(|&b| b);
    let mut map = MapLayers::new(cw as u32, ch as u32)?;
    let [nx, nz] = map.nodes();
    let (tw, th) = (layer.width as usize, layer.height as usize);
    let mut land = vec![0f32; map.node_count()];
    let mut lev = vec![0f32; map.node_count()];
    for z in 0..nz {
        let rows = touching(z, s, th);
        for x in 0..nx {
            let cols = touching(x, s, tw);
            let (mut l_sum, mut v_sum, mut k) = (0f32, 0f32, 0f32);
            for r in rows.clone() {
                for c in cols.clone() {
                    let t = r * tw + c;
                    l_sum += if !any_solid || solid[t] { 1.0 } else { 0.0 };
                    v_sum += level[t] as f32;
                    k += 1.0;
                }
            }
            let i = z as usize * nx as usize + x as usize;
            land[i] = l_sum / k;
            lev[i] = v_sum / k;
        }
    }
    let mut scratch = Vec::new();
    for _ in 0..options.smooth_passes {
        smooth(&mut land, nx as usize, nz as usize, &mut scratch);
        smooth(&mut lev, nx as usize, nz as usize, &mut scratch);
    }
    for (g, l) in map.ground.iter_mut().zip(&land) {
        *g = 2.0 * l - 1.0;
    }
    map.level.copy_from_slice(&lev);
    map.validate()?;
    Ok(map)
}

/// Tiles along one axis touching node `n` at `s` cells per tile: the tile
/// holding it, or both tiles of a shared edge (clamped to the map).
fn touching(n: u32, s: u32, tiles: usize) -> std::ops::Range<usize> {
    let t = (n / s) as usize;
    if n.is_multiple_of(s) {
        let lo = t.saturating_sub(1);
        let hi = t.min(tiles - 1);
        lo..hi + 1
    } else {
        t..t + 1
    }
}

/// One `[1 2 1] / 4` pass along x then z, edges clamped.
fn smooth(v: &mut [f32], nx: usize, nz: usize, tmp: &mut Vec<f32>) {
    tmp.clear();
    tmp.extend_from_slice(v);
    for z in 0..nz {
        for x in 0..nx {
            let l = tmp[z * nx + x.saturating_sub(1)];
            let r = tmp[z * nx + (x + 1).min(nx - 1)];
            v[z * nx + x] = (l + 2.0 * tmp[z * nx + x] + r) * 0.25;
        }
    }
    tmp.clear();
    tmp.extend_from_slice(v);
    for z in 0..nz {
        for x in 0..nx {
            let d = tmp[z.saturating_sub(1) * nx + x];
            let u = tmp[(z + 1).min(nz - 1) * nx + x];
            v[z * nx + x] = (d + 2.0 * tmp[z * nx + x] + u) * 0.25;
        }
    }
}

/// The gids of the two exported layers.
fn export_layers(
    map: &MapLayers,
    pathing: Option<&PathingGrid>,
    options: &TiledExport,
) -> Result<(Vec<u32>, Vec<u32>), ExportError> {
    if !(1..=4096).contains(&options.tile_size) {
        return Err(ExportError::param(
            "tile_size",
            options.tile_size,
            "must lie in 1..=4096 pixels",
        ));
    }
    if options.image.is_some() {
        check_image_tile(options.tile_size)?;
    }
    map.validate()?;
    let owned;
    let grid = match pathing {
        Some(g) => {
            if (g.width_cells(), g.depth_cells()) != (map.width_cells(), map.depth_cells()) {
                return Err(ExportError::param(
                    "pathing",
                    format!("{}x{} cells", g.width_cells(), g.depth_cells()),
                    "the pathing grid must have the map's size",
                ));
            }
            g
        }
        None => {
            owned = pathing_grid(map, &PathingRules::DEFAULT)?;
            &owned
        }
    };
    let hg = high_ground(map);
    let nx = map.nodes()[0] as usize;
    let (w, d) = (map.width_cells() as usize, map.depth_cells() as usize);
    let mut levels = Vec::with_capacity(w * d);
    for z in 0..d {
        for x in 0..w {
            let i = z * nx + x;
            let g = map.ground[i] + map.ground[i + 1] + map.ground[i + nx] + map.ground[i + nx + 1];
            let local = if g < 0.0 {
                TiledTiles::CHASM
            } else {
                TiledTiles::LEVEL + hg[z * w + x] as u32
            };
            levels.push(local + 1);
        }
    }
    let path = grid
        .cells()
        .iter()
        .map(|&b| TiledTiles::PATHING + b as u32 + 1)
        .collect();
    Ok((levels, path))
}

fn tile_properties(id: u32) -> Vec<(&'static str, &'static str, String)> {
    if id < TiledTiles::CHASM {
        vec![
            ("level", "int", id.to_string()),
            ("solid", "bool", "true".into()),
        ]
    } else if id == TiledTiles::CHASM {
        vec![
            ("level", "int", "0".into()),
            ("solid", "bool", "false".into()),
        ]
    } else {
        let b = (id - TiledTiles::PATHING) as u8;
        let flag = |bit: u8| (b & bit != 0).to_string();
        vec![
            ("pathing", "int", b.to_string()),
            ("walk", "bool", flag(PathingGrid::WALK)),
            ("fly", "bool", flag(PathingGrid::FLY)),
            ("build", "bool", flag(PathingGrid::BUILD)),
            ("shallow_water", "bool", flag(PathingGrid::SHALLOW_WATER)),
            ("deep_water", "bool", flag(PathingGrid::DEEP_WATER)),
        ]
    }
}

fn encode_gids(gids: &[u32], encoding: TiledEncoding) -> Result<Value, ExportError> {
    let raw = || {
        gids.iter()
            .flat_map(|g| g.to_le_bytes())
            .collect::<Vec<u8>>()
    };
    let io = |e: std::io::Error| ExportError::param("tile data", e, "compression failed");
    let bytes = match encoding {
        TiledEncoding::Csv => return Ok(json!(gids)),
        TiledEncoding::Base64 => raw(),
        TiledEncoding::Base64Zlib => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(&raw()).map_err(io)?;
            e.finish().map_err(io)?
        }
        TiledEncoding::Base64Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(&raw()).map_err(io)?;
            e.finish().map_err(io)?
        }
        TiledEncoding::Base64Zstd => zstd::encode_all(&raw()[..], 3).map_err(io)?,
    };
    Ok(json!(BASE64.encode(bytes)))
}

/// Exports a map as a Tiled JSON map (`.tmj`, orthogonal, finite): one tile
/// per cell, an embedded tileset `isoterra` (tiles listed in [`TiledTiles`],
/// with their properties) and two tile layers:
///
/// * `level`: the high-ground level of the cell
///   ([`high_ground`]), or the chasm tile where the mean ground density of
///   the cell's corners is below 0;
/// * `pathing`: the cell's [`PathingGrid`] bits (`pathing`, or the grid of
///   [`PathingRules::DEFAULT`] when `None`).
///
/// Importing the result with [`import_tiled`] reads the `level` layer back
/// (its tiles carry `solid` and `level`).
///
/// Errors: invalid layers, a pathing grid of another size, a bad tile size.
pub fn export_tiled(
    map: &MapLayers,
    pathing: Option<&PathingGrid>,
    options: &TiledExport,
) -> Result<Vec<u8>, ExportError> {
    let (levels, path) = export_layers(map, pathing, options)?;
    let (w, d) = (map.width_cells(), map.depth_cells());
    let (encoding, compression) = options.encoding.names();
    let layer = |id: u32, name: &str, gids: &[u32]| -> Result<Value, ExportError> {
        // The pathing layer would hide the levels under it: it is there to
        // be shown on demand, half transparent.
        let pathing = name == "pathing";
        let mut o = Map::new();
        o.insert("id".into(), json!(id));
        o.insert("name".into(), json!(name));
        o.insert("type".into(), json!("tilelayer"));
        o.insert("x".into(), json!(0));
        o.insert("y".into(), json!(0));
        o.insert("width".into(), json!(w));
        o.insert("height".into(), json!(d));
        o.insert("opacity".into(), json!(if pathing { 0.6 } else { 1.0 }));
        o.insert("visible".into(), json!(!pathing));
        // CSV data is a plain array with no `encoding` (as Tiled writes
        // it); base64 names its compression, empty for none. Loaders that
        // read `compression` whenever `encoding` is present (pytiled_parser,
        // the loader behind Python Arcade) then find it.
        if options.encoding != TiledEncoding::Csv {
            o.insert("encoding".into(), json!(encoding));
            o.insert("compression".into(), json!(compression));
        }
        o.insert("data".into(), encode_gids(gids, options.encoding)?);
        Ok(Value::Object(o))
    };
    let tiles: Vec<Value> = (0..TiledTiles::COUNT)
        .map(|id| {
            let props: Vec<Value> = tile_properties(id)
                .into_iter()
                .map(|(name, ty, value)| {
                    let v = match ty {
                        "int" => json!(value.parse::<i64>().unwrap_or(0)),
                        _ => json!(value == "true"),
                    };
                    json!({ "name": name, "type": ty, "value": v })
                })
                .collect();
            json!({ "id": id, "properties": props })
        })
        .collect();
    let ts = options.tile_size;
    let mut tileset = json!({
        "firstgid": 1,
        "name": "isoterra",
        "tilewidth": ts,
        "tileheight": ts,
        "tilecount": TiledTiles::COUNT,
        "columns": 0,
        "margin": 0,
        "spacing": 0,
        "properties": [{ "name": "legend", "type": "string", "value": LEGEND }],
        "tiles": tiles,
    });
    if let (Some(image), Some(o)) = (&options.image, tileset.as_object_mut()) {
        let side = ATLAS_COLUMNS * ts;
        o.insert("columns".into(), json!(ATLAS_COLUMNS));
        o.insert("image".into(), json!(image));
        o.insert("imagewidth".into(), json!(side));
        o.insert("imageheight".into(), json!(side));
    }
    let doc = json!({
        "type": "map",
        "version": "1.10",
        "tiledversion": "1.10.2",
        "orientation": "orthogonal",
        "renderorder": "right-down",
        "infinite": false,
        "width": w,
        "height": d,
        "tilewidth": ts,
        "tileheight": ts,
        "compressionlevel": -1,
        // One tile per map cell: an import of this file reads it back at
        // its own size (see `tiled_cells_per_tile`).
        "properties": [{ "name": CELLS_PER_TILE_PROPERTY, "type": "int", "value": 1 }],
        "nextlayerid": 3,
        "nextobjectid": 1,
        "layers": [layer(1, "level", &levels)?, layer(2, "pathing", &path)?],
        "tilesets": [tileset],
    });
    serde_json::to_vec(&doc).map_err(|e| jerr(e.to_string()))
}

/// The same map as [`export_tiled`], written as Tiled XML (`.tmx`), for
/// readers that only take TMX (such as the `tiled` crate). The layer data is
/// CSV for [`TiledEncoding::Csv`], else base64 with the same compression.
///
/// Errors: as [`export_tiled`].
pub fn export_tiled_tmx(
    map: &MapLayers,
    pathing: Option<&PathingGrid>,
    options: &TiledExport,
) -> Result<Vec<u8>, ExportError> {
    let (levels, path) = export_layers(map, pathing, options)?;
    let (w, d) = (map.width_cells(), map.depth_cells());
    let ts = options.tile_size;
    let mut s = String::new();
    s.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    s.push_str(&format!(
        "<map version=\"1.10\" tiledversion=\"1.10.2\" orientation=\"orthogonal\" renderorder=\"right-down\" width=\"{w}\" height=\"{d}\" tilewidth=\"{ts}\" tileheight=\"{ts}\" infinite=\"0\" nextlayerid=\"3\" nextobjectid=\"1\">\n"
    ));
    s.push_str(&format!(
        " <properties>\n  <property name=\"{CELLS_PER_TILE_PROPERTY}\" type=\"int\" value=\"1\"/>\n </properties>\n"
    ));
    let columns = if options.image.is_some() {
        ATLAS_COLUMNS
    } else {
        0
    };
    s.push_str(&format!(
        " <tileset firstgid=\"1\" name=\"isoterra\" tilewidth=\"{ts}\" tileheight=\"{ts}\" tilecount=\"{}\" columns=\"{columns}\">\n",
        TiledTiles::COUNT
    ));
    s.push_str(&format!(
        "  <properties>\n   <property name=\"legend\" value=\"{}\"/>\n  </properties>\n",
        xml_escape(LEGEND)
    ));
    if let Some(image) = &options.image {
        let side = ATLAS_COLUMNS * ts;
        s.push_str(&format!(
            "  <image source=\"{}\" width=\"{side}\" height=\"{side}\"/>\n",
            xml_escape(image)
        ));
    }
    for id in 0..TiledTiles::COUNT {
        s.push_str(&format!("  <tile id=\"{id}\">\n   <properties>\n"));
        for (name, ty, value) in tile_properties(id) {
            s.push_str(&format!(
                "    <property name=\"{name}\" type=\"{ty}\" value=\"{value}\"/>\n"
            ));
        }
        s.push_str("   </properties>\n  </tile>\n");
    }
    s.push_str(" </tileset>\n");
    let (encoding, compression) = options.encoding.names();
    for (id, name, gids) in [(1, "level", &levels), (2, "pathing", &path)] {
        let shown = if name == "pathing" {
            " visible=\"0\" opacity=\"0.6\""
        } else {
            ""
        };
        s.push_str(&format!(
            " <layer id=\"{id}\" name=\"{name}\" width=\"{w}\" height=\"{d}\"{shown}>\n"
        ));
        if options.encoding == TiledEncoding::Csv {
            s.push_str("  <data encoding=\"csv\">\n");
            for row in gids.chunks(w as usize) {
                let line: Vec<String> = row.iter().map(u32::to_string).collect();
                s.push_str(&line.join(","));
                s.push_str(",\n");
            }
            // The last row has no trailing comma.
            s.truncate(s.len() - 2);
            s.push_str("\n  </data>\n");
        } else {
            let data = encode_gids(gids, options.encoding)?;
            let comp = if compression.is_empty() {
                String::new()
            } else {
                format!(" compression=\"{compression}\"")
            };
            s.push_str(&format!(
                "  <data encoding=\"{encoding}\"{comp}>{}</data>\n",
                data.as_str().unwrap_or("")
            ));
        }
        s.push_str(" </layer>\n");
    }
    s.push_str("</map>\n");
    Ok(s.into_bytes())
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// What the tiles of the exported tileset mean, as the tileset's `legend`
/// property says it.
const LEGEND: &str = "Tiles 0-15: cliff level 0-15 (green low, tan middle, white high; the number is the level). \
Tile 16: chasm (no ground, dark). \
Tiles 17-48: pathing bits 0-31 (red 160: not walkable, +80 deep water; green 160: buildable, +80 shallow water; blue: not flyable). \
Each tile's properties say the same: level, solid, pathing, walk, fly, build, shallow_water, deep_water.";

fn check_image_tile(tile_size: u32) -> Result<(), ExportError> {
    if !(1..=MAX_TILESET_IMAGE_TILE).contains(&tile_size) {
        return Err(ExportError::param(
            "tile_size",
            tile_size,
            "a tileset image takes tiles of 1..=256 pixels",
        ));
    }
    Ok(())
}

/// The colour of the tile with local id `id` (see [`TiledTiles`]).
fn tile_color(id: u32) -> [u8; 3] {
    if id < TiledTiles::CHASM {
        // Green through tan to snow, as a relief map.
        const STOPS: [(f32, [f32; 3]); 3] = [
            (0.0, [74.0, 140.0, 64.0]),
            (0.5, [168.0, 140.0, 92.0]),
            (1.0, [240.0, 240.0, 236.0]),
        ];
        let t = id as f32 / 15.0;
        let (a, b) = if t <= 0.5 {
            (STOPS[0], STOPS[1])
        } else {
            (STOPS[1], STOPS[2])
        };
        let f = (t - a.0) / (b.0 - a.0);
        let mix = |i: usize| (a.1[i] + (b.1[i] - a.1[i]) * f).round() as u8;
        [mix(0), mix(1), mix(2)]
    } else if id == TiledTiles::CHASM {
        [20, 20, 32]
    } else {
        pathing_color((id - TiledTiles::PATHING) as u8)
    }
}

/// Digits 0-9 in a 3 x 5 pixel font, one row per `u8`, bit 2 the left column.
const DIGITS: [[u8; 5]; 10] = [
    [7, 5, 5, 5, 7],
    [2, 6, 2, 2, 7],
    [7, 1, 7, 4, 7],
    [7, 1, 7, 1, 7],
    [5, 5, 7, 1, 1],
    [7, 4, 7, 1, 7],
    [7, 4, 7, 5, 7],
    [7, 1, 1, 1, 1],
    [7, 5, 7, 5, 7],
    [7, 5, 7, 1, 7],
];

/// The tileset image an export with [`TiledExport::image`] refers to: an
/// 8-bit RGB PNG of [`TiledTiles::COUNT`] tiles of `tile_size` pixels, 7 per
/// row in local id order. Level tiles run green to white and carry their
/// level as a number (at 12 pixels and more), the chasm tile is dark, and
/// pathing tiles have the colours of [`pathing_color`]; every tile has a
/// darker one-pixel border (at 8 pixels and more) so that cells stay
/// apart when zoomed in.
///
/// Errors: a tile size outside `1..=`[`MAX_TILESET_IMAGE_TILE`].
pub fn tiled_tileset_png(tile_size: u32) -> Result<Vec<u8>, ExportError> {
    check_image_tile(tile_size)?;
    let ts = tile_size as usize;
    let side = ATLAS_COLUMNS as usize * ts;
    let mut rgb = vec![0u8; side * side * 3];
    for id in 0..TiledTiles::COUNT {
        let (col, row) = ((id % ATLAS_COLUMNS) as usize, (id / ATLAS_COLUMNS) as usize);
        let c = tile_color(id);
        let dark = c.map(|v| (v as f32 * 0.7) as u8);
        let light = c.iter().map(|&v| v as u32).sum::<u32>() > 3 * 150;
        let ink = if light { [24, 24, 24] } else { [240, 240, 240] };
        // The level as a number: one or two digits, scaled to the tile.
        let text: Vec<usize> = if id < TiledTiles::CHASM && ts >= 12 {
            id.to_string()
                .bytes()
                .map(|b| (b - b'0') as usize)
                .collect()
        } else {
            Vec::new()
        };
        let glyph_w = (text.len() * 4).saturating_sub(1);
        // The number is about a third of the tile high.
        let scale = (ts / 15).max(1);
        let (tw, th) = (glyph_w * scale, 5 * scale);
        let (ox, oy) = ((ts - tw.min(ts)) / 2, (ts - th.min(ts)) / 2);
        for y in 0..ts {
            for x in 0..ts {
                let border = ts >= 8 && (x == 0 || y == 0 || x == ts - 1 || y == ts - 1);
                let mut px = if border { dark } else { c };
                if !text.is_empty() && x >= ox && y >= oy && x < ox + tw && y < oy + th {
                    let (gx, gy) = ((x - ox) / scale, (y - oy) / scale);
                    let (digit, cx) = (gx / 4, gx % 4);
                    if cx < 3 && DIGITS[text[digit]][gy] & (4 >> cx) != 0 {
                        px = ink;
                    }
                }
                let i = ((row * ts + y) * side + col * ts + x) * 3;
                rgb[i..i + 3].copy_from_slice(&px);
            }
        }
    }
    rgb_png(side as u32, side as u32, &rgb)
}
