//! Exports of a world of any kind: the formats each kind offers, one
//! request type, and the files an export makes.

use std::fmt;
use std::io::Write as _;
use std::str::FromStr;

use isoterra_export::{
    GlbMesh, export_glb, export_obj, export_obj_mtl, write_glb, write_obj, write_obj_mtl,
};
use isoterra_field::MaterialTable;
use isoterra_store::ChunkStore;
use serde_json::{Map, Value};

use isoterra_world::{ChunkCoord, StreamConfig, StreamViewer, desired_chunks};

use crate::AnyDocument;
use crate::schema::COORD_LIMIT;
use crate::{Document, KindError, WorldKind};

/// Largest number of chunks one mesh export (glb, OBJ) covers.
pub const MAX_EXPORT_CHUNKS: i64 = 4096;
/// Largest number of nodes one heightmap image export (PNG16, R16) holds.
pub const MAX_EXPORT_NODES: u64 = 1 << 28;

/// An export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExportFormat {
    /// A picture: terrain coloured by material with contour lines (side2d).
    Png,
    /// The contours as SVG paths (side2d).
    Svg,
    /// Collider polylines as JSON (side2d: the ground's outlines; map:
    /// each cliff level's outlines and height).
    Colliders,
    /// glTF 2.0 binary (every kind; side2d: the fill mesh with its
    /// colliders beside it).
    Glb,
    /// Wavefront OBJ and its `.mtl` (every kind).
    Obj,
    /// 16-bit grayscale PNG heightmap (heightmap).
    Png16,
    /// Raw little-endian 16-bit heightmap (heightmap).
    R16,
    /// OpenEXR heightmap, one 32-bit float channel of heights: no range,
    /// nothing clips (heightmap).
    Exr,
    /// 16-bit RGB layer image and its JSON sidecar (map).
    PngLayers,
    /// Tiled map with level and pathing layers, JSON or TMX (map).
    Tiled,
    /// The pathing grid as an RGB PNG (map).
    Pathing,
}

impl ExportFormat {
    /// Every format.
    pub const ALL: [ExportFormat; 11] = [
        ExportFormat::Png,
        ExportFormat::Svg,
        ExportFormat::Colliders,
        ExportFormat::Glb,
        ExportFormat::Obj,
        ExportFormat::Png16,
        ExportFormat::R16,
        ExportFormat::Exr,
        ExportFormat::PngLayers,
        ExportFormat::Tiled,
        ExportFormat::Pathing,
    ];

    /// The format's name, as `--format` and the editor take it.
    pub const fn name(self) -> &'static str {
        match self {
            ExportFormat::Png => "png",
            ExportFormat::Svg => "svg",
            ExportFormat::Colliders => "colliders",
            ExportFormat::Glb => "glb",
            ExportFormat::Obj => "obj",
            ExportFormat::Png16 => "png16",
            ExportFormat::R16 => "r16",
            ExportFormat::Exr => "exr",
            ExportFormat::PngLayers => "png-layers",
            ExportFormat::Tiled => "tiled",
            ExportFormat::Pathing => "pathing",
        }
    }

    /// The formats a world of `kind` exports.
    pub fn of(kind: WorldKind) -> &'static [ExportFormat] {
        kind.spec().formats()
    }
}

impl ExportFormat {
    /// The files an export of this format makes beside the main one for a
    /// world of `kind`, in the order [`Exported::files`] lists them.
    pub fn companions(self, kind: WorldKind) -> &'static [FileRole] {
        kind.spec().companions(self)
    }
}

impl ExportFormat {
    /// The media type and file name of a mesh export's main file (glb or
    /// OBJ) for a world of `kind`; `None` for the other formats. They are
    /// known before the export runs, so that a download can name the file
    /// it is about to stream.
    pub fn mesh_file(self, kind: WorldKind) -> Option<(&'static str, &'static str)> {
        let names = kind.spec().mesh_names();
        match self {
            ExportFormat::Glb => Some(("model/gltf-binary", names.glb)),
            ExportFormat::Obj => Some((OBJ_MEDIA_TYPE, names.obj)),
            _ => None,
        }
    }
}

/// The media type of OBJ files and their material libraries.
const OBJ_MEDIA_TYPE: &str = "text/plain; charset=utf-8";

/// The file names of a kind's mesh exports.
pub(crate) struct MeshNames {
    /// The default stem of the material library a mesh OBJ names.
    stem: &'static str,
    glb: &'static str,
    obj: &'static str,
    mtl: &'static str,
}

impl MeshNames {
    /// The names: the material library's default stem, the glb, the OBJ
    /// and the material library.
    pub(crate) const fn new(
        stem: &'static str,
        glb: &'static str,
        obj: &'static str,
        mtl: &'static str,
    ) -> Self {
        MeshNames {
            stem,
            glb,
            obj,
            mtl,
        }
    }
}

/// The name the `mtllib` line of a mesh OBJ of a `kind` world gives its
/// material library (the request's stem, or the kind's).
pub(crate) fn mtl_library_name(req: &ExportRequest, kind: WorldKind) -> String {
    format!(
        "{}.mtl",
        req.stem.as_deref().unwrap_or(kind.spec().mesh_names().stem)
    )
}

/// The media type and name of a mesh OBJ's material library for a `kind`
/// world.
pub(crate) fn mtl_file(kind: WorldKind) -> (&'static str, &'static str) {
    (OBJ_MEDIA_TYPE, kind.spec().mesh_names().mtl)
}

impl fmt::Display for ExportFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ExportFormat {
    type Err = KindError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ExportFormat::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| KindError::invalid(format!("unknown export format `{s}`")))
    }
}

/// What to export.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExportRequest {
    /// The format.
    pub format: ExportFormat,
    /// The region of an endless world, as text: `X0,Z0,X1,Z1` (heightmap)
    /// or `X0,Y0,Z0,X1,Y1,Z1` (voxel), world units. Bounded worlds export
    /// whole and take none.
    pub region: Option<String>,
    /// Level of detail of a mesh export (0 = full resolution).
    pub lod: u8,
    /// The height range 16-bit codes map to (heightmap images; default: the
    /// generator's fixed range).
    pub range: Option<[f32; 2]>,
    /// PNG pixels per cell (side2d; default: about 1024 pixels wide).
    pub scale: Option<f32>,
    /// Collider simplification tolerance in cells (side2d).
    pub tolerance: f32,
    /// Tiled: write TMX instead of JSON.
    pub tmx: bool,
    /// The name the files are saved under, without extension: an OBJ's
    /// `mtllib` line names `STEM.mtl`. Default: the kind's download name
    /// (`voxel`, `heightmap`, `world`).
    pub stem: Option<String>,
    /// R16: pad a region that is not square to a square (the larger side),
    /// repeating the last row and column, instead of refusing it. Engines
    /// read a raw heightmap's size from its length, so it must be square.
    pub pad: bool,
    /// 16-bit heightmap images: refuse an export that would clip heights
    /// to the range, instead of clipping them and saying so in the
    /// `warnings` of its counts.
    pub strict: bool,
    /// Heightmap and voxel mesh exports: the chunks around a point at the
    /// LODs a stream shows there, stitched crack-free, instead of a
    /// `region` at one `lod`.
    pub lod_rings: Option<LodRings>,
}

/// A mesh export at mixed LOD around a point, as the editor and the engine
/// plugin stream it: the chunks within [`radius`](Self::radius) of
/// [`around`](Self::around), chunk LODs from the rings (one level coarser
/// past each radius, neighbours at most one level apart), each chunk
/// stitched to its coarser neighbours (heightmap) or given transition
/// cells toward its finer ones (voxel).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LodRings {
    /// Ring radii in world units, ascending: chunks nearer than the first
    /// are LOD 0, then one level more past each. Empty: the world's own
    /// streaming rings (what the editor streams with).
    pub rings: Vec<f32>,
    /// The centre as text, world units: `X,Z` (heightmap) or `X,Y,Z`
    /// (voxel).
    pub around: String,
    /// How far from the centre chunks are exported, world units. Default:
    /// twice the last ring.
    pub radius: Option<f32>,
}

impl LodRings {
    /// Rings `rings` (empty: the world's) around `around`.
    pub fn new(rings: Vec<f32>, around: impl Into<String>) -> Self {
        LodRings {
            rings,
            around: around.into(),
            radius: None,
        }
    }

    /// Sets [`radius`](Self::radius).
    pub fn with_radius(mut self, radius: Option<f32>) -> Self {
        self.radius = radius;
        self
    }

    /// The wanted `(chunk, LOD)` set for a stream `config` whose chunk
    /// grid has `axes` axes (2: x/z, 3: x/y/z); `default_rings` stands in
    /// for empty [`rings`](Self::rings).
    pub(crate) fn selection(
        &self,
        config: &StreamConfig,
        axes: usize,
        default_rings: Vec<f32>,
    ) -> Result<Vec<(ChunkCoord, u8)>, KindError> {
        let form = if axes == 2 { "X,Z" } else { "X,Y,Z" };
        let at = numbers(&self.around, axes, form).map_err(|_| {
            KindError::invalid(format!(
                "--around `{}` is not {form}: finite world coordinates within ±{COORD_LIMIT}",
                self.around
            ))
        })?;
        let position = if axes == 2 {
            [at[0], 0.0, at[1]]
        } else {
            [at[0], at[1], at[2]]
        };
        let rings = if self.rings.is_empty() {
            default_rings
        } else {
            self.rings.clone()
        };
        if rings.iter().any(|r| !r.is_finite() || *r <= 0.0)
            || rings.windows(2).any(|w| w[0] >= w[1])
        {
            return Err(KindError::invalid(format!(
                "--lod-rings {rings:?}: ring radii must be finite, above 0 and ascending"
            )));
        }
        let radius = self
            .radius
            .unwrap_or_else(|| rings.last().map_or(config.chunk_size, |r| 2.0 * r));
        if !radius.is_finite() || radius <= 0.0 {
            return Err(KindError::invalid(format!(
                "--radius {radius} must be a finite distance above 0"
            )));
        }
        let max_radius = if axes == 2 {
            StreamConfig::MAX_RADIUS_2D
        } else {
            StreamConfig::MAX_RADIUS_3D
        } * config.chunk_size;
        if radius > max_radius {
            return Err(KindError::TooLarge(format!(
                "--radius {radius} reaches past {max_radius} world units; export at most \
                 {MAX_EXPORT_CHUNKS} chunks at a time"
            )));
        }
        let viewer = StreamViewer::new(position, radius).with_lod_distances(rings);
        let selection = desired_chunks(&[viewer], config).map_err(KindError::from)?;
        if selection.len() as i64 > MAX_EXPORT_CHUNKS {
            return Err(KindError::TooLarge(format!(
                "--radius {radius} around {} covers {} chunks; export at most \
                 {MAX_EXPORT_CHUNKS} at a time",
                self.around,
                selection.len()
            )));
        }
        Ok(selection)
    }
}

impl ExportRequest {
    /// A request for `format` with every option at its default.
    pub fn new(format: ExportFormat) -> Self {
        ExportRequest {
            format,
            region: None,
            lod: 0,
            range: None,
            scale: None,
            tolerance: 0.05,
            tmx: false,
            stem: None,
            pad: false,
            strict: false,
            lod_rings: None,
        }
    }

    /// Sets [`lod_rings`](Self::lod_rings).
    pub fn with_lod_rings(mut self, lod_rings: Option<LodRings>) -> Self {
        self.lod_rings = lod_rings;
        self
    }

    /// Sets the region.
    pub fn with_region(mut self, region: Option<String>) -> Self {
        self.region = region;
        self
    }
}

/// What a file of an export is to its export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileRole {
    /// The file the user asked for.
    Main,
    /// A JSON file that goes beside it (the map layer image's sidecar).
    Sidecar,
    /// The material library an OBJ names in its `mtllib` line (`.mtl`).
    Materials,
    /// The collider polylines of a side2d mesh export (`.colliders.json`).
    Colliders,
    /// The tileset image a Tiled map refers to (`.tiles.png`).
    Tileset,
}

impl FileRole {
    /// A short name of the role: `main`, `sidecar`, `mtl`, `colliders`.
    pub const fn name(self) -> &'static str {
        match self {
            FileRole::Main => "main",
            FileRole::Sidecar => "sidecar",
            FileRole::Materials => "mtl",
            FileRole::Colliders => "colliders",
            FileRole::Tileset => "tileset",
        }
    }

    /// The extension that replaces the main file's for a file of this role
    /// (`None` for the main file).
    pub const fn extension(self) -> Option<&'static str> {
        match self {
            FileRole::Main => None,
            FileRole::Sidecar => Some("json"),
            FileRole::Materials => Some("mtl"),
            FileRole::Colliders => Some("colliders.json"),
            FileRole::Tileset => Some("tiles.png"),
        }
    }
}

/// One file of an export.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportFile {
    /// What the file is to the export.
    pub role: FileRole,
    /// Its contents.
    pub bytes: Vec<u8>,
    /// Its media type.
    pub content_type: &'static str,
    /// A file name for a download.
    pub file_name: &'static str,
}

/// The result of an export: its files (the main one first) and counts of
/// what it holds (`chunks`, `triangles`, `contours`, `width`, …).
#[derive(Debug, Clone, PartialEq)]
pub struct Exported {
    /// The files, the [`FileRole::Main`] one first.
    pub files: Vec<ExportFile>,
    /// What the export holds.
    pub counts: Map<String, Value>,
}

impl Exported {
    pub(crate) fn one(
        bytes: Vec<u8>,
        content_type: &'static str,
        file_name: &'static str,
        counts: Value,
    ) -> Self {
        let counts = match counts {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        Exported {
            files: vec![ExportFile {
                role: FileRole::Main,
                bytes,
                content_type,
                file_name,
            }],
            counts,
        }
    }

    /// The main file.
    pub fn main(&self) -> &ExportFile {
        &self.files[0]
    }
}

/// Parses `n` comma-separated finite numbers within the coordinate limit.
fn numbers(text: &str, n: usize, form: &str) -> Result<Vec<f32>, KindError> {
    let parts: Vec<&str> = text.split(',').collect();
    if parts.len() != n {
        return Err(KindError::invalid(format!("region `{text}` is not {form}")));
    }
    parts
        .iter()
        .map(|p| {
            let v: f32 = p.trim().parse().map_err(|_| {
                KindError::invalid(format!("`{p}` in region `{text}` is not a number ({form})"))
            })?;
            if !v.is_finite() || f64::from(v).abs() > COORD_LIMIT {
                return Err(KindError::invalid(format!(
                    "region `{text}` must hold finite numbers within ±{COORD_LIMIT}"
                )));
            }
            Ok(v)
        })
        .collect()
}

/// A region `lo..=hi` of `axes` numbers each.
pub(crate) fn region(
    text: &str,
    axes: usize,
    form: &str,
) -> Result<(Vec<f32>, Vec<f32>), KindError> {
    let v = numbers(text, 2 * axes, form)?;
    let (lo, hi) = v.split_at(axes);
    if lo.iter().zip(hi).any(|(a, b)| a > b) {
        return Err(KindError::invalid(format!(
            "region `{text}` is inverted: the minimum corner must come first ({form})"
        )));
    }
    Ok((lo.to_vec(), hi.to_vec()))
}

impl<S: ChunkStore> Document<S> {
    /// The formats this world exports.
    pub fn exports(&self) -> &'static [ExportFormat] {
        ExportFormat::of(self.kind())
    }

    /// Exports the world (open strokes' previews left out).
    ///
    /// # Errors
    ///
    /// [`KindError::Invalid`] for a format or option that does not apply to
    /// this kind, a bad region or one that is too large; export errors.
    pub fn export(&mut self, req: &ExportRequest) -> Result<Exported, KindError> {
        self.check_export(req)?;
        self.with_previews_lifted(|doc| export_any(doc, req, &mut MainOut::bytes()))
    }

    /// Exports the world like [`export`](Self::export), writing the main
    /// file to `main` instead of returning it; the other files (sidecars,
    /// materials) are returned.
    ///
    /// Mesh files (glb, OBJ) of every kind are encoded straight into
    /// `main` from the meshes, so the file is never held whole in memory
    /// (a 4096 x 4096 map's 1.9 GB glb, 5.3 GB OBJ); an OBJ's material
    /// library comes back in `others`. Every other export is made as by
    /// `export` and then written.
    ///
    /// # Errors
    ///
    /// As [`export`](Self::export), and [`KindError::Export`] when writing
    /// to `main` fails (what was written before is left there).
    pub fn export_to(
        &mut self,
        req: &ExportRequest,
        main: &mut dyn std::io::Write,
    ) -> Result<StreamedExport, KindError> {
        self.check_export(req)?;
        let mut out = Counting { inner: main, n: 0 };
        let mut to = MainOut::to(&mut out);
        let mut e = self.with_previews_lifted(|doc| export_any(doc, req, &mut to))?;
        let written = to.written;
        let first = e.files.remove(0);
        if !written {
            out.write_all(&first.bytes)
                .map_err(isoterra_export::ExportError::Write)?;
        }
        Ok(StreamedExport {
            main_bytes: out.n,
            content_type: first.content_type,
            file_name: first.file_name,
            others: e.files,
            counts: e.counts,
        })
    }

    /// Refuses a format or an option that does not apply to this world.
    fn check_export(&self, req: &ExportRequest) -> Result<(), KindError> {
        let kind = self.kind();
        if !self.exports().contains(&req.format) {
            let names: Vec<&str> = self.exports().iter().map(|f| f.name()).collect();
            return Err(KindError::invalid(format!(
                "format {} does not apply to {kind} worlds ({kind} exports {})",
                req.format,
                names.join(", ")
            )));
        }
        if let Some(r) = &req.lod_rings {
            // Rings of LOD around a point: the endless kinds' meshes.
            let meshes = !self.kind().is_bounded()
                && matches!(req.format, ExportFormat::Glb | ExportFormat::Obj);
            if !meshes {
                return Err(KindError::invalid(format!(
                    "--lod-rings applies to glb and obj exports of heightmap and voxel worlds, \
                     not {} of {kind}",
                    req.format
                )));
            }
            if req.region.is_some() || req.lod != 0 {
                return Err(KindError::invalid(format!(
                    "--lod-rings exports the chunks around `{}` at their ring's LOD: \
                     --region and --lod do not apply",
                    r.around
                )));
            }
        }
        if req.pad && req.format != ExportFormat::R16 {
            return Err(KindError::invalid(format!(
                "--pad applies to r16 exports, not {}",
                req.format
            )));
        }
        Ok(())
    }
}

/// The export of any kind's document, its main file returned or written to
/// `main`.
fn export_any<S: ChunkStore>(
    doc: &mut AnyDocument<S>,
    req: &ExportRequest,
    main: &mut MainOut<'_>,
) -> Result<Exported, KindError> {
    doc.ops_mut().export(req, main)
}

/// Where an export's main file goes: into the returned [`Exported`], or,
/// for files encoded as they are written (meshes), into a writer.
pub(crate) struct MainOut<'a> {
    writer: Option<&'a mut dyn std::io::Write>,
    /// True once the main file went to the writer; the returned
    /// [`Exported`]'s main file is then empty.
    written: bool,
}

impl<'a> MainOut<'a> {
    /// The main file is returned as bytes.
    pub(crate) fn bytes() -> Self {
        MainOut {
            writer: None,
            written: false,
        }
    }

    fn to(w: &'a mut dyn std::io::Write) -> Self {
        MainOut {
            writer: Some(w),
            written: false,
        }
    }

    /// The writer to encode the main file into, if there is one; the file
    /// counts as written from then on.
    pub(crate) fn writer(&mut self) -> Option<&mut dyn std::io::Write> {
        let w = self.writer.as_mut()?;
        self.written = true;
        Some(&mut **w)
    }
}

/// What [`Document::export_to`] wrote and returns.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamedExport {
    /// Bytes of the main file, written to the writer.
    pub main_bytes: u64,
    /// The main file's media type.
    pub content_type: &'static str,
    /// A file name for the main file.
    pub file_name: &'static str,
    /// The other files, in the order [`Exported::files`] lists them after
    /// the main one.
    pub others: Vec<ExportFile>,
    /// What the export holds.
    pub counts: Map<String, Value>,
}

/// A writer that counts the bytes passed on.
struct Counting<'a> {
    inner: &'a mut dyn std::io::Write,
    n: u64,
}

impl std::io::Write for Counting<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let k = self.inner.write(buf)?;
        self.n += k as u64;
        Ok(k)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Positions, normals, per-vertex materials and indices of one chunk's mesh.
pub(crate) type MeshParts = (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<u8>, Vec<u32>);

/// A linear RGBA colour (glTF's `baseColorFactor`) of an 8-bit sRGB one.
pub(crate) fn linear_rgba(c: [u8; 4]) -> [f32; 4] {
    let lin = |v: u8| {
        let s = f32::from(v) / 255.0;
        let l = if s <= 0.040_45 {
            s / 12.92
        } else {
            ((s + 0.055) / 1.055).powf(2.4)
        };
        l.clamp(0.0, 1.0)
    };
    [lin(c[0]), lin(c[1]), lin(c[2]), f32::from(c[3]) / 255.0]
}

/// The name and linear base colour of every material id (all 256): the
/// table's own, and for an id past its end `material_ID` with the colour of
/// `id % len`.
pub(crate) fn material_list(table: &MaterialTable) -> Vec<(String, [f32; 4])> {
    let colors: Vec<[f32; 4]> = table.iter().map(|m| linear_rgba(m.color)).collect();
    (0..=255u8)
        .map(|id| match table.get(id) {
            Some(m) => (m.name.clone(), colors[usize::from(id)]),
            None => (
                format!("material_{id}"),
                colors[usize::from(id) % colors.len()],
            ),
        })
        .collect()
}

/// The material of a triangle from its vertices' ids: the one two or three
/// of them share, else the smallest.
fn triangle_material(m: [u8; 3]) -> u8 {
    if m[0] == m[1] || m[0] == m[2] {
        m[0]
    } else if m[1] == m[2] {
        m[1]
    } else {
        m[0].min(m[1]).min(m[2])
    }
}

/// The ranges of a grouped triangle list: `(material, start, count)`.
pub(crate) type MaterialRanges = Vec<(u8, u32, u32)>;

/// Reorders a triangle list so that the triangles of each material are
/// contiguous (materials ascending, triangles in their original order
/// within one) and returns the ranges `(material, start, count)`.
pub(crate) fn group_by_material(
    indices: &[u32],
    materials: &[u8],
) -> (Vec<u32>, Vec<(u8, u32, u32)>) {
    let id = |i: u32| materials.get(i as usize).copied().unwrap_or(0);
    let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); 256];
    for t in indices.chunks_exact(3) {
        let m = triangle_material([id(t[0]), id(t[1]), id(t[2])]);
        buckets[usize::from(m)].extend_from_slice(t);
    }
    let mut out = Vec::with_capacity(indices.len());
    let mut ranges = Vec::new();
    for (m, b) in buckets.iter().enumerate() {
        if !b.is_empty() {
            ranges.push((m as u8, out.len() as u32, b.len() as u32));
            out.extend_from_slice(b);
        }
    }
    (out, ranges)
}

/// A glb or OBJ file of `meshes` of a `kind` world (named by
/// [`ExportFormat::mesh_file`]): an OBJ of meshes with materials comes with
/// its `.mtl`. With a writer in `main`, the file is encoded into it as it is
/// made.
pub(crate) fn mesh_file(
    meshes: &[GlbMesh],
    req: &ExportRequest,
    kind: WorldKind,
    counts: Value,
    main: &mut MainOut<'_>,
) -> Result<Exported, KindError> {
    let (media, name) = req
        .format
        .mesh_file(kind)
        .ok_or_else(|| KindError::invalid(format!("{} is not a mesh format", req.format)))?;
    if req.format == ExportFormat::Glb {
        let bytes = match main.writer() {
            Some(w) => {
                write_glb(meshes, w)?;
                Vec::new()
            }
            None => export_glb(meshes)?,
        };
        return Ok(Exported::one(bytes, media, name, counts));
    }
    let textured = meshes
        .iter()
        .any(|m| m.material.is_some() || !m.primitives.is_empty());
    if !textured {
        let bytes = match main.writer() {
            Some(w) => {
                write_obj(meshes, w)?;
                Vec::new()
            }
            None => export_obj(meshes)?.into_bytes(),
        };
        return Ok(Exported::one(bytes, media, name, counts));
    }
    let lib = mtl_library_name(req, kind);
    let (bytes, library) = match main.writer() {
        Some(w) => (Vec::new(), write_obj_mtl(meshes, &lib, w)?),
        None => {
            let files = export_obj_mtl(meshes, &lib)?;
            (files.obj.into_bytes(), files.mtl)
        }
    };
    let mut out = Exported::one(bytes, media, name, counts);
    let (mtl_media, mtl_name) = mtl_file(kind);
    out.files.push(ExportFile {
        role: FileRole::Materials,
        bytes: library.into_bytes(),
        content_type: mtl_media,
        file_name: mtl_name,
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_parse_and_bad_ones_are_refused() {
        let f = "X0,Y0,Z0,X1,Y1,Z1";
        assert_eq!(
            region("0,0,0,4,5,6", 3, f).unwrap(),
            (vec![0.0, 0.0, 0.0], vec![4.0, 5.0, 6.0])
        );
        assert!(region("0,0,0,4,5", 3, f).is_err());
        assert!(region("5,0,0,4,5,6", 3, f).is_err());
        assert!(region("nan,0,1,1", 2, f).is_err());
        assert!(region("1e30,0,1e31,1", 2, f).is_err());
        assert!(region("inf,0,1,1", 2, f).is_err());
        assert_eq!(
            region("1,2,1,2", 2, f).unwrap(),
            (vec![1.0, 2.0], vec![1.0, 2.0])
        );
    }

    #[test]
    fn triangles_are_grouped_by_their_material() {
        // Vertex materials 0 0 1 1 2: triangles (0,1,2) -> 0, (2,3,4) -> 1,
        // (4,0,2) -> 0 (all differ: the smallest), (3,4,4) -> 2.
        let materials = [0, 0, 1, 1, 2];
        let indices = [0, 1, 2, 2, 3, 4, 4, 0, 2, 3, 4, 4];
        let (out, ranges) = group_by_material(&indices, &materials);
        assert_eq!(out, [0, 1, 2, 4, 0, 2, 2, 3, 4, 3, 4, 4]);
        assert_eq!(ranges, [(0, 0, 6), (1, 6, 3), (2, 9, 3)]);
    }

    #[test]
    fn material_colours_are_linear_and_every_id_has_a_name() {
        assert_eq!(linear_rgba([255, 0, 255, 255]), [1.0, 0.0, 1.0, 1.0]);
        let mid = linear_rgba([128, 128, 128, 128])[0];
        assert!((mid - 0.2158).abs() < 1e-3, "{mid}");
        let list = material_list(&MaterialTable::voxel_default());
        assert_eq!(list.len(), 256);
        assert_eq!(list[0].0, "earth");
        assert_eq!(list[9].0, "material_9");
        assert_eq!(list[9].1, list[1].1);
    }

    #[test]
    fn every_kind_exports_and_formats_round_trip() {
        for kind in WorldKind::ALL {
            assert!(!ExportFormat::of(kind).is_empty());
        }
        for f in ExportFormat::ALL {
            assert_eq!(f.name().parse::<ExportFormat>().unwrap(), f);
        }
    }
}
