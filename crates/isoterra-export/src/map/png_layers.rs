//! Map layers as a 16-bit RGB PNG plus a JSON sidecar, and the runtime loader.
//!
//! # Format
//!
//! The PNG has one pixel per *node*: `(width_cells + 1) x (depth_cells + 1)`
//! pixels, pixel `(x, row)` is node `(x, z = row)` (seen from above, z grows
//! down the image). It is RGB at 16 bits per channel; every channel holds a
//! code `c` in `0..=65535` on a power-of-two grid, so decoding is exact in
//! `f32`:
//!
//! | channel | layer      | value |
//! |---------|------------|-------|
//! | R       | `ground`   | `(c - 32768) * 2^(e - 15)`, `e` = `ground_exponent` of the sidecar (`2^e` bounds `abs(ground)`); codes `1..=65535` |
//! | G       | `level`    | `(c - 32768) / 2048` (steps of 1/2048 level) |
//! | B       | `softness` | `c / 32768` (steps of 1/32768) |
//!
//! The sidecar is JSON: `format` (`"isoterra-map-layers"`), `version` (1),
//! `width_cells`, `depth_cells`, `quantization` (the formulas above as
//! numbers), optional `mesh` options (`cell_size`, `level_height`,
//! `chasm_depth`), and `layers` with `height`, `water` (little-endian `f32`),
//! `splat` (8 bytes per node: four ids, four weights) and `pathing` (one byte
//! per node), each zstd-compressed and base64-encoded.
//!
//! # What is exact
//!
//! Height, water, splat and pathing round-trip bit for bit. Ground, level and
//! softness round-trip bit for bit when their values lie on the grid above;
//! [`quantize_for_png`] puts any map on it, and exporting a quantised map and
//! loading it back gives the same layers, hence the same meshes, bit for bit.
//! Other maps come back within half a step per channel.

use std::io::{Cursor, Read};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use isoterra_field::map::{MAX_MAP_CELLS, MapLayers, Splat};
use serde_json::{Value, json};

use crate::ExportError;

const FORMAT: &str = "isoterra-map-layers";
const VERSION: u64 = 1;
const LEVEL_SCALE: f32 = 2048.0;
const SOFT_SCALE: f32 = 32768.0;
/// Largest ground exponent (ground values up to 2^100).
const MAX_EXPONENT: i32 = 100;

/// Mesh options stored in the sidecar, so a loader meshes the map as the
/// editor did.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct PngLayersMesh {
    /// World units per cell. Default value: `1.0`.
    pub cell_size: f32,
    /// World units per cliff level. Default value: `1.0`.
    pub level_height: f32,
    /// Depth of chasm walls in world units. Default value: `2.0`.
    pub chasm_depth: f32,
}

impl PngLayersMesh {
    /// The defaults (see each field).
    pub const DEFAULT: PngLayersMesh = PngLayersMesh {
        cell_size: 1.0,
        level_height: 1.0,
        chasm_depth: 2.0,
    };

    /// Mesh options from their three values.
    pub const fn new(cell_size: f32, level_height: f32, chasm_depth: f32) -> Self {
        PngLayersMesh {
            cell_size,
            level_height,
            chasm_depth,
        }
    }

    /// Sets [`cell_size`](Self::cell_size).
    pub const fn with_cell_size(mut self, v: f32) -> Self {
        self.cell_size = v;
        self
    }

    /// Sets [`level_height`](Self::level_height).
    pub const fn with_level_height(mut self, v: f32) -> Self {
        self.level_height = v;
        self
    }

    /// Sets [`chasm_depth`](Self::chasm_depth).
    pub const fn with_chasm_depth(mut self, v: f32) -> Self {
        self.chasm_depth = v;
        self
    }
}

impl Default for PngLayersMesh {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The two files of a layer export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PngLayers {
    /// The 16-bit RGB PNG (ground, level, softness).
    pub png: Vec<u8>,
    /// The JSON sidecar (everything else).
    pub sidecar: Vec<u8>,
}

/// What the sidecar says besides the layers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PngLayersInfo {
    /// Cells along x.
    pub width_cells: u32,
    /// Cells along z.
    pub depth_cells: u32,
    /// The mesh options, when the export recorded them.
    pub mesh: Option<PngLayersMesh>,
}

/// `2^k` as an exact `f32` (`k` in `-126..=127`).
fn pow2(k: i32) -> f32 {
    f32::from_bits(((k + 127) as u32) << 23)
}

/// The smallest exponent `e >= 0` with `abs(v) < 2^e` for every ground value.
fn ground_exponent(ground: &[f32]) -> i32 {
    let m = ground.iter().fold(0f32, |m, v| m.max(v.abs()));
    let mut e = 0;
    while e < MAX_EXPONENT && pow2(e) <= m {
        e += 1;
    }
    e
}

#[inline]
fn enc_ground(v: f32, e: i32) -> u16 {
    let c = (v / pow2(e - 15)).round() + 32768.0;
    c.clamp(1.0, 65535.0) as u16
}

#[inline]
fn dec_ground(c: u16, e: i32) -> f32 {
    (c as f32 - 32768.0) * pow2(e - 15)
}

#[inline]
fn enc_level(v: f32) -> u16 {
    (v * LEVEL_SCALE + 32768.0).round().clamp(0.0, 65535.0) as u16
}

#[inline]
fn dec_level(c: u16) -> f32 {
    (c as f32 - 32768.0) / LEVEL_SCALE
}

#[inline]
fn enc_soft(v: f32) -> u16 {
    (v * SOFT_SCALE).round().clamp(0.0, 65535.0) as u16
}

#[inline]
fn dec_soft(c: u16) -> f32 {
    c as f32 / SOFT_SCALE
}

/// The map with ground, level and softness moved onto the PNG grid (see the
/// module docs); other layers are unchanged. Exporting the result with
/// [`export_png_layers`] and loading it with [`load_png_layers`] gives it
/// back bit for bit.
///
/// Errors when the layers are invalid.
pub fn quantize_for_png(map: &MapLayers) -> Result<MapLayers, ExportError> {
    map.validate()?;
    let e = ground_exponent(&map.ground);
    let mut out = map.clone();
    for g in &mut out.ground {
        *g = dec_ground(enc_ground(*g, e), e);
    }
    for l in &mut out.level {
        *l = dec_level(enc_level(*l));
    }
    for s in &mut out.softness {
        *s = dec_soft(enc_soft(*s));
    }
    Ok(out)
}

fn pack(bytes: &[u8]) -> Result<Value, ExportError> {
    let z = zstd::encode_all(bytes, 3)
        .map_err(|e| ExportError::MapLayers(format!("zstd compression failed: {e}")))?;
    Ok(json!(BASE64.encode(z)))
}

fn unpack(v: Option<&Value>, name: &str, want: usize) -> Result<Vec<u8>, ExportError> {
    let bad = |m: String| ExportError::MapLayers(format!("sidecar layer {name:?}: {m}"));
    let text = v
        .and_then(|v| v.get("data"))
        .and_then(Value::as_str)
        .ok_or_else(|| bad("missing \"data\" string".into()))?;
    let raw = BASE64
        .decode(text)
        .map_err(|e| bad(format!("bad base64: {e}")))?;
    let mut out = Vec::with_capacity(want);
    zstd::stream::read::Decoder::new(&raw[..])
        .and_then(|d| d.take(want as u64 + 1).read_to_end(&mut out))
        .map_err(|e| bad(format!("bad zstd data: {e}")))?;
    if out.len() != want {
        return Err(bad(format!("{} bytes, expected {want}", out.len())));
    }
    Ok(out)
}

/// Exports the layers as a 16-bit RGB PNG and a JSON sidecar (see the module
/// docs for the format). `mesh` records the mesh options in the sidecar.
///
/// Errors when the layers are invalid or the PNG encoder fails.
pub fn export_png_layers(
    map: &MapLayers,
    mesh: Option<PngLayersMesh>,
) -> Result<PngLayers, ExportError> {
    map.validate()?;
    if let Some(m) = mesh
        && ![m.cell_size, m.level_height, m.chasm_depth]
            .iter()
            .all(|v| v.is_finite())
    {
        return Err(ExportError::param(
            "mesh",
            format!("{m:?}"),
            "mesh options must be finite",
        ));
    }
    let e = ground_exponent(&map.ground);
    let [nx, nz] = map.nodes();
    let n = map.node_count();
    let mut data = Vec::with_capacity(n * 6);
    for i in 0..n {
        data.extend_from_slice(&enc_ground(map.ground[i], e).to_be_bytes());
        data.extend_from_slice(&enc_level(map.level[i]).to_be_bytes());
        data.extend_from_slice(&enc_soft(map.softness[i]).to_be_bytes());
    }
    let png_err = |e: png::EncodingError| ExportError::Png(e.to_string());
    let mut png_bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut png_bytes, nx, nz);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Sixteen);
        enc.set_compression(png::Compression::Fast);
        let mut w = enc.write_header().map_err(png_err)?;
        w.write_image_data(&data).map_err(png_err)?;
        w.finish().map_err(png_err)?;
    }
    let f32s = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let splat: Vec<u8> = map.splat.iter().flat_map(|s| s.to_bytes()).collect();
    let mut doc = json!({
        "format": FORMAT,
        "version": VERSION,
        "width_cells": map.width_cells(),
        "depth_cells": map.depth_cells(),
        "image": { "bit_depth": 16, "r": "ground", "g": "level", "b": "softness", "pixel": "node (x, z = row)" },
        "quantization": {
            "ground_exponent": e,
            "ground": { "offset": 32768, "step": pow2(e - 15), "min_code": 1 },
            "level": { "offset": 32768, "step": 1.0 / LEVEL_SCALE },
            "softness": { "offset": 0, "step": 1.0 / SOFT_SCALE },
        },
        "layers": {
            "height": { "encoding": "f32le+zstd+base64", "data": pack(&f32s(&map.height))? },
            "water": { "encoding": "f32le+zstd+base64", "data": pack(&f32s(&map.water))? },
            "splat": { "encoding": "ids4+weights4+zstd+base64", "data": pack(&splat)? },
            "pathing": { "encoding": "u8+zstd+base64", "data": pack(&map.pathing)? },
        },
    });
    if let Some(m) = mesh {
        doc["mesh"] = json!({
            "cell_size": m.cell_size,
            "level_height": m.level_height,
            "chasm_depth": m.chasm_depth,
        });
    }
    let sidecar =
        serde_json::to_vec_pretty(&doc).map_err(|e| ExportError::MapLayers(e.to_string()))?;
    Ok(PngLayers {
        png: png_bytes,
        sidecar,
    })
}

fn parse_sidecar(sidecar: &[u8]) -> Result<(Value, PngLayersInfo, i32), ExportError> {
    let bad = |m: String| ExportError::MapLayers(m);
    let doc: Value =
        serde_json::from_slice(sidecar).map_err(|e| bad(format!("sidecar is not JSON: {e}")))?;
    if doc.get("format").and_then(Value::as_str) != Some(FORMAT) {
        return Err(bad(format!("sidecar \"format\" is not {FORMAT:?}")));
    }
    if doc.get("version").and_then(Value::as_u64) != Some(VERSION) {
        return Err(bad(format!(
            "sidecar version {:?} is not supported (expected {VERSION})",
            doc.get("version")
        )));
    }
    let dim = |k: &str| -> Result<u32, ExportError> {
        doc.get(k)
            .and_then(Value::as_u64)
            .filter(|&v| (1..=MAX_MAP_CELLS as u64).contains(&v))
            .map(|v| v as u32)
            .ok_or_else(|| {
                bad(format!(
                    "sidecar \"{k}\" must be an integer in 1..={MAX_MAP_CELLS}"
                ))
            })
    };
    let (w, d) = (dim("width_cells")?, dim("depth_cells")?);
    let e = doc
        .pointer("/quantization/ground_exponent")
        .and_then(Value::as_i64)
        .filter(|e| (0..=MAX_EXPONENT as i64).contains(e))
        .ok_or_else(|| {
            bad(format!(
                "sidecar ground_exponent must be an integer in 0..={MAX_EXPONENT}"
            ))
        })? as i32;
    let mesh = match doc.get("mesh") {
        None | Some(Value::Null) => None,
        Some(m) => {
            let f = |k: &str| -> Result<f32, ExportError> {
                m.get(k)
                    .and_then(Value::as_f64)
                    .map(|v| v as f32)
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| bad(format!("sidecar mesh.{k} must be a finite number")))
            };
            Some(PngLayersMesh::new(
                f("cell_size")?,
                f("level_height")?,
                f("chasm_depth")?,
            ))
        }
    };
    Ok((
        doc,
        PngLayersInfo {
            width_cells: w,
            depth_cells: d,
            mesh,
        },
        e,
    ))
}

/// Reads the size and mesh options recorded in a sidecar.
///
/// Errors when the sidecar is malformed.
pub fn read_png_layers_sidecar(sidecar: &[u8]) -> Result<PngLayersInfo, ExportError> {
    parse_sidecar(sidecar).map(|(_, info, _)| info)
}

/// Rebuilds map layers from a PNG and its sidecar written by
/// [`export_png_layers`] (see the module docs for what is exact).
///
/// Errors: a malformed or mismatched PNG or sidecar (wrong image size, color
/// type or bit depth, corrupt layer data, an unknown format version) and
/// layers that fail validation.
pub fn load_png_layers(png_bytes: &[u8], sidecar: &[u8]) -> Result<MapLayers, ExportError> {
    let (doc, info, e) = parse_sidecar(sidecar)?;
    let (nx, nz) = (info.width_cells + 1, info.depth_cells + 1);
    let n = nx as usize * nz as usize;
    let dec_err = |e: png::DecodingError| ExportError::PngDecode(e.to_string());
    let limits = png::Limits {
        bytes: n * 6 + (1 << 20),
    };
    let mut decoder = png::Decoder::new_with_limits(Cursor::new(png_bytes), limits);
    decoder.set_transformations(png::Transformations::IDENTITY);
    let mut reader = decoder.read_info().map_err(dec_err)?;
    let pi = reader.info();
    if (pi.width, pi.height) != (nx, nz) {
        return Err(ExportError::MapLayers(format!(
            "the PNG is {}x{} pixels but the sidecar's map needs {nx}x{nz} (one pixel per node)",
            pi.width, pi.height
        )));
    }
    if pi.color_type != png::ColorType::Rgb || pi.bit_depth != png::BitDepth::Sixteen {
        return Err(ExportError::MapLayers(format!(
            "the PNG must be 16-bit RGB, found {:?} at {} bits",
            pi.color_type, pi.bit_depth as u8
        )));
    }
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| ExportError::PngDecode("image too large".into()))?;
    let mut buf = vec![0u8; size];
    let frame = reader.next_frame(&mut buf).map_err(dec_err)?;
    let line = frame.line_size;
    // Only now that the image matches the sidecar is the map allocated.
    let mut map = MapLayers::new(info.width_cells, info.depth_cells)?;
    for z in 0..nz as usize {
        let row = buf
            .get(z * line..z * line + nx as usize * 6)
            .ok_or_else(|| ExportError::PngDecode("short image data".into()))?;
        for (x, px) in row.chunks_exact(6).enumerate() {
            let i = z * nx as usize + x;
            map.ground[i] = dec_ground(u16::from_be_bytes([px[0], px[1]]), e);
            map.level[i] = dec_level(u16::from_be_bytes([px[2], px[3]]));
            map.softness[i] = dec_soft(u16::from_be_bytes([px[4], px[5]]));
        }
    }
    let layers = doc.get("layers");
    let field = |k: &str| layers.and_then(|l| l.get(k));
    let f32s = |b: Vec<u8>| -> Vec<f32> {
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    map.height = f32s(unpack(field("height"), "height", n * 4)?);
    map.water = f32s(unpack(field("water"), "water", n * 4)?);
    map.splat = unpack(field("splat"), "splat", n * 8)?
        .chunks_exact(8)
        .map(|c| Splat::from_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
        .collect();
    map.pathing = unpack(field("pathing"), "pathing", n)?;
    map.validate()?;
    Ok(map)
}
