//! glTF 2.0 binary (`.glb`) export of triangle meshes, one node per mesh.
//!
//! The file holds one scene whose nodes are the given meshes (each with an
//! optional translation), one buffer in the GLB `BIN` chunk, one buffer view
//! per attribute and per index list (4-byte aligned, with its `target`), and
//! accessors for `POSITION` (with exact `min`/`max`), `NORMAL`, `TEXCOORD_0`,
//! `COLOR_0`, application-specific attributes (`_MATERIAL`, `_SPLAT0`, …) and
//! the indices of each primitive (`UNSIGNED_SHORT` when the mesh has at most 65 535
//! vertices, `UNSIGNED_INT` otherwise). Coordinates are written as given:
//! glTF is right-handed with y up, as isoterra is, in metres when one world
//! unit is a metre. UVs are written as given (isoterra meshes use world
//! position / uv_scale, meant for repeating textures).

use isoterra_field::first_non_finite;
use isoterra_mesh::HeightmapMesh;
use serde_json::{Map, Value, json};

use crate::ExportError;

/// GLB magic `glTF`, little-endian.
const GLB_MAGIC: u32 = 0x4654_6C67;
/// GLB chunk type `JSON`.
const CHUNK_JSON: u32 = 0x4E4F_534A;
/// GLB chunk type `BIN\0`.
const CHUNK_BIN: u32 = 0x004E_4942;
const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;
const FLOAT: u32 = 5126;
const UNSIGNED_SHORT: u32 = 5123;
const UNSIGNED_INT: u32 = 5125;
/// Triangle list primitive mode.
const TRIANGLES: u32 = 4;

/// One mesh to export: borrowed vertex arrays and a triangle list.
///
/// `normals` and `uvs` are optional (pass empty slices to leave them out);
/// when given they hold one entry per position. Build it with
/// [`GlbMesh::new`] or [`GlbMesh::from_heightmap`] and the `with_*` setters.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct GlbMesh<'a> {
    /// Node and mesh name. Default value: `""` (no name written).
    pub name: &'a str,
    /// Vertex positions. Every coordinate must be finite.
    pub positions: &'a [[f32; 3]],
    /// Unit vertex normals, one per position, or empty. Default value: empty.
    pub normals: &'a [[f32; 3]],
    /// Texture coordinates, one per position, or empty. Default value: empty.
    pub uvs: &'a [[f32; 2]],
    /// Triangle list: a multiple of three indices, each below
    /// `positions.len()`. A mesh without triangles becomes a node without a mesh.
    pub indices: &'a [u32],
    /// Translation of the mesh's node (positions stay as given). Default value:
    /// `None`.
    pub translation: Option<[f32; 3]>,
    /// Linear RGBA vertex colours in `0..=1` (`COLOR_0`), one per position, or
    /// empty. Default value: empty.
    pub colors: &'a [[f32; 4]],
    /// The mesh's material, or `None` for the glTF default material; used
    /// when [`primitives`](Self::primitives) is empty. Default value: `None`.
    pub material: Option<GlbMaterial<'a>>,
    /// Index ranges drawn with a material each: one glTF primitive per range,
    /// all sharing the mesh's vertex attributes. Empty: one primitive of every
    /// index with [`material`](Self::material). Default value: empty.
    pub primitives: &'a [GlbPrimitive<'a>],
    /// Application-specific vertex attributes (names start with `_`, such as
    /// `_MATERIAL` or `_SPLAT0`), one value per position. Default value: empty.
    pub attributes: &'a [GlbAttribute<'a>],
}

/// A range of a [`GlbMesh`]'s triangle list drawn with one material.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct GlbPrimitive<'a> {
    /// First index of the range in [`GlbMesh::indices`]; a multiple of 3.
    pub start: u32,
    /// Number of indices; a multiple of 3 (ranges without any are left out).
    pub count: u32,
    /// The range's material, or `None` for the glTF default material.
    pub material: Option<GlbMaterial<'a>>,
}

impl<'a> GlbPrimitive<'a> {
    /// The range `start..start + count` of the indices, drawn with `material`.
    pub const fn new(start: u32, count: u32, material: Option<GlbMaterial<'a>>) -> Self {
        GlbPrimitive {
            start,
            count,
            material,
        }
    }
}

/// The values of a [`GlbAttribute`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GlbAttributeData<'a> {
    /// One float per vertex (`SCALAR`).
    Scalar(&'a [f32]),
    /// Four floats per vertex (`VEC4`).
    Vec4(&'a [[f32; 4]]),
}

impl GlbAttributeData<'_> {
    fn len(&self) -> usize {
        match self {
            GlbAttributeData::Scalar(v) => v.len(),
            GlbAttributeData::Vec4(v) => v.len(),
        }
    }

    fn all_finite(&self) -> bool {
        match self {
            GlbAttributeData::Scalar(v) => v.iter().all(|c| c.is_finite()),
            GlbAttributeData::Vec4(v) => v.iter().flatten().all(|c| c.is_finite()),
        }
    }
}

/// An application-specific vertex attribute of a [`GlbMesh`] (glTF requires
/// such names to start with `_`; three.js reads them as `_material`, Blender
/// as a float attribute of that name). Floats, one entry per position.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct GlbAttribute<'a> {
    /// The attribute's semantic, starting with `_`, such as `_MATERIAL`.
    pub name: &'a str,
    /// Its values.
    pub data: GlbAttributeData<'a>,
}

impl<'a> GlbAttribute<'a> {
    /// An attribute `name` holding `data`.
    pub const fn new(name: &'a str, data: GlbAttributeData<'a>) -> Self {
        GlbAttribute { name, data }
    }
}

/// A metallic-roughness material for [`GlbMesh::material`]: a base colour
/// (multiplied with the vertex colours), fully rough and not metallic.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct GlbMaterial<'a> {
    /// Material name. Default value: `""` (no name written).
    pub name: &'a str,
    /// Linear RGBA base colour factor, each in `0..=1`. Default value: `[1, 1, 1, 1]`.
    pub base_color: [f32; 4],
    /// Blend with what is behind using the alpha (`alphaMode: BLEND`) instead of
    /// drawing opaque. Default value: `false`.
    pub blend: bool,
    /// Draw both sides of each triangle. Default value: `false`.
    pub double_sided: bool,
}

impl<'a> GlbMaterial<'a> {
    /// An opaque white material.
    pub const DEFAULT: GlbMaterial<'static> = GlbMaterial {
        name: "",
        base_color: [1.0; 4],
        blend: false,
        double_sided: false,
    };

    /// A material with a name and base colour (opaque, one-sided).
    pub const fn new(name: &'a str, base_color: [f32; 4]) -> Self {
        GlbMaterial {
            name,
            base_color,
            blend: false,
            double_sided: false,
        }
    }

    /// Sets [`name`](Self::name).
    pub const fn with_name(mut self, name: &'a str) -> Self {
        self.name = name;
        self
    }

    /// Sets [`base_color`](Self::base_color).
    pub const fn with_base_color(mut self, base_color: [f32; 4]) -> Self {
        self.base_color = base_color;
        self
    }

    /// Sets [`blend`](Self::blend).
    pub const fn with_blend(mut self, blend: bool) -> Self {
        self.blend = blend;
        self
    }

    /// Sets [`double_sided`](Self::double_sided).
    pub const fn with_double_sided(mut self, double_sided: bool) -> Self {
        self.double_sided = double_sided;
        self
    }
}

impl<'a> GlbMesh<'a> {
    /// A mesh with positions and triangles only.
    pub const fn new(name: &'a str, positions: &'a [[f32; 3]], indices: &'a [u32]) -> Self {
        GlbMesh {
            name,
            positions,
            normals: &[],
            uvs: &[],
            indices,
            translation: None,
            colors: &[],
            material: None,
            primitives: &[],
            attributes: &[],
        }
    }

    /// A heightmap chunk mesh with its normals and UVs (skirts included).
    pub fn from_heightmap(name: &'a str, mesh: &'a HeightmapMesh) -> Self {
        GlbMesh {
            name,
            positions: &mesh.positions,
            normals: &mesh.normals,
            uvs: &mesh.uvs,
            indices: &mesh.indices,
            translation: None,
            colors: &[],
            material: None,
            primitives: &[],
            attributes: &[],
        }
    }

    /// Sets [`colors`](Self::colors).
    pub const fn with_colors(mut self, colors: &'a [[f32; 4]]) -> Self {
        self.colors = colors;
        self
    }

    /// Sets [`material`](Self::material).
    pub const fn with_material(mut self, material: Option<GlbMaterial<'a>>) -> Self {
        self.material = material;
        self
    }

    /// Sets [`primitives`](Self::primitives).
    pub const fn with_primitives(mut self, primitives: &'a [GlbPrimitive<'a>]) -> Self {
        self.primitives = primitives;
        self
    }

    /// Sets [`attributes`](Self::attributes).
    pub const fn with_attributes(mut self, attributes: &'a [GlbAttribute<'a>]) -> Self {
        self.attributes = attributes;
        self
    }

    /// The ranges of the triangle list with their materials: the
    /// [`primitives`](Self::primitives) without empty ones, or one range of
    /// every index with [`material`](Self::material).
    pub(crate) fn ranges(&self) -> Vec<GlbPrimitive<'a>> {
        if self.primitives.is_empty() {
            vec![GlbPrimitive::new(
                0,
                self.indices.len() as u32,
                self.material,
            )]
        } else {
            self.primitives
                .iter()
                .copied()
                .filter(|p| p.count > 0)
                .collect()
        }
    }

    /// Sets [`normals`](Self::normals).
    pub const fn with_normals(mut self, normals: &'a [[f32; 3]]) -> Self {
        self.normals = normals;
        self
    }

    /// Sets [`uvs`](Self::uvs).
    pub const fn with_uvs(mut self, uvs: &'a [[f32; 2]]) -> Self {
        self.uvs = uvs;
        self
    }

    /// Sets [`translation`](Self::translation).
    pub const fn with_translation(mut self, translation: Option<[f32; 3]>) -> Self {
        self.translation = translation;
        self
    }

    /// Checks lengths, index range and finiteness; `k` is the mesh's position in
    /// the list, for messages.
    pub(crate) fn validate(&self, k: usize) -> Result<(), ExportError> {
        let n = self.positions.len();
        let bad = |what: &'static str, detail: String| {
            Err(ExportError::InvalidMesh {
                mesh: k,
                name: self.name.to_string(),
                what,
                detail,
            })
        };
        if !self.normals.is_empty() && self.normals.len() != n {
            return bad(
                "normals",
                format!("{} normals for {n} positions", self.normals.len()),
            );
        }
        if !self.uvs.is_empty() && self.uvs.len() != n {
            return bad("uvs", format!("{} UVs for {n} positions", self.uvs.len()));
        }
        if !self.colors.is_empty() && self.colors.len() != n {
            return bad(
                "colors",
                format!("{} colours for {n} positions", self.colors.len()),
            );
        }
        if let Some(i) = self
            .colors
            .iter()
            .position(|c| !c.iter().all(|v| (0.0..=1.0).contains(v)))
        {
            return bad(
                "colors",
                format!("colour {i} is not in 0..=1: {:?}", self.colors[i]),
            );
        }
        let materials = self.primitives.iter().map(|p| p.material);
        for m in std::iter::once(self.material).chain(materials).flatten() {
            if !m.base_color.iter().all(|v| (0.0..=1.0).contains(v)) {
                return bad(
                    "material",
                    format!("base colour {:?} is not in 0..=1", m.base_color),
                );
            }
        }
        for (k, p) in self.primitives.iter().enumerate() {
            let end = u64::from(p.start) + u64::from(p.count);
            if !p.start.is_multiple_of(3) || !p.count.is_multiple_of(3) {
                return bad(
                    "primitives",
                    format!(
                        "primitive {k} ({}..{end}) does not start and end on a triangle",
                        p.start
                    ),
                );
            }
            if end > self.indices.len() as u64 {
                return bad(
                    "primitives",
                    format!(
                        "primitive {k} ({}..{end}) runs past the {} indices",
                        p.start,
                        self.indices.len()
                    ),
                );
            }
        }
        for a in self.attributes {
            let builtin = ["POSITION", "NORMAL", "TEXCOORD_0", "COLOR_0"];
            if !a.name.starts_with('_') || builtin.contains(&a.name) {
                return bad(
                    "attributes",
                    format!("attribute `{}` must be named `_NAME`", a.name),
                );
            }
            if a.data.len() != n {
                return bad(
                    "attributes",
                    format!("{} values of `{}` for {n} positions", a.data.len(), a.name),
                );
            }
            if !a.data.all_finite() {
                return bad(
                    "attributes",
                    format!("attribute `{}` has a value that is not finite", a.name),
                );
            }
        }
        if let Some((k, _)) = self
            .attributes
            .iter()
            .enumerate()
            .find(|(k, a)| self.attributes[..*k].iter().any(|b| b.name == a.name))
        {
            return bad(
                "attributes",
                format!("attribute `{}` is given twice", self.attributes[k].name),
            );
        }
        if !self.indices.len().is_multiple_of(3) {
            return bad(
                "indices",
                format!("{} indices is not a multiple of 3", self.indices.len()),
            );
        }
        if let Some(i) = first_index_at_or_above(self.indices, n) {
            return bad(
                "indices",
                format!(
                    "index {} at {i} is out of range for {n} vertices",
                    self.indices[i]
                ),
            );
        }
        if let Some(i) = first_non_finite(self.positions.as_flattened()).map(|c| c / 3) {
            return bad(
                "positions",
                format!("position {i} is not finite: {:?}", self.positions[i]),
            );
        }
        if let Some(i) = first_non_finite(self.normals.as_flattened()).map(|c| c / 3) {
            return bad(
                "normals",
                format!("normal {i} is not finite: {:?}", self.normals[i]),
            );
        }
        if let Some(i) = first_non_finite(self.uvs.as_flattened()).map(|c| c / 2) {
            return bad("uvs", format!("UV {i} is not finite: {:?}", self.uvs[i]));
        }
        if let Some(t) = self.translation
            && !t.iter().all(|c| c.is_finite())
        {
            return bad("translation", format!("{t:?} is not finite"));
        }
        Ok(())
    }
}

/// Place of the first index that is `n` or more, if any: each block is
/// checked by its largest index, without a branch, and only a block with
/// one out of range is searched (a large mesh has tens of millions).
fn first_index_at_or_above(indices: &[u32], n: usize) -> Option<usize> {
    const BLOCK: usize = 1024;
    for (b, block) in indices.chunks(BLOCK).enumerate() {
        let max = block.iter().fold(0, |m, &i| m.max(i));
        if max as usize >= n {
            return block
                .iter()
                .position(|&i| i as usize >= n)
                .map(|j| b * BLOCK + j);
        }
    }
    None
}

/// The kind of an application-specific attribute's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AttributeKind {
    Scalar,
    Vec4,
}

/// What the file's JSON says of one part of a mesh (a set of vertices and
/// the primitives drawn from them): everything but its bytes. A mesh made
/// one part at a time is laid out from its parts' shapes before any part
/// is made.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PartShape<'a> {
    pub vertices: usize,
    pub normals: bool,
    pub uvs: bool,
    pub colors: bool,
    pub attributes: Vec<(&'a str, AttributeKind)>,
    /// The part's non-empty index ranges with their materials.
    pub ranges: Vec<GlbPrimitive<'a>>,
    /// The bounds of the positions (`POSITION` needs them).
    pub min: [f32; 3],
    pub max: [f32; 3],
}

impl<'a> PartShape<'a> {
    /// The shape of a whole mesh (one part).
    pub fn of(m: &GlbMesh<'a>) -> Self {
        let attributes = m
            .attributes
            .iter()
            .map(|a| {
                let kind = match a.data {
                    GlbAttributeData::Scalar(_) => AttributeKind::Scalar,
                    GlbAttributeData::Vec4(_) => AttributeKind::Vec4,
                };
                (a.name, kind)
            })
            .collect();
        let ranges = if m.indices.is_empty() {
            Vec::new()
        } else {
            m.ranges()
        };
        Self::measured(m, ranges, attributes)
    }

    /// The shape of mesh `m` said to have `ranges` and `attributes` (which
    /// may outlive the mesh): its vertex count, which of the standard
    /// attributes it has and its bounds.
    pub fn measured(
        m: &GlbMesh<'_>,
        ranges: Vec<GlbPrimitive<'a>>,
        attributes: Vec<(&'a str, AttributeKind)>,
    ) -> Self {
        let (min, max) = bounds(m.positions);
        PartShape {
            vertices: m.positions.len(),
            normals: !m.normals.is_empty(),
            uvs: !m.uvs.is_empty(),
            colors: !m.colors.is_empty(),
            attributes,
            ranges,
            min,
            max,
        }
    }

    /// The byte lengths of the part's buffer views, in file order:
    /// positions, normals, UVs, colours, attributes, then each range's
    /// indices.
    fn view_lengths(&self) -> Vec<usize> {
        let n = self.vertices;
        let mut out = vec![n * 12];
        if self.normals {
            out.push(n * 12);
        }
        if self.uvs {
            out.push(n * 8);
        }
        if self.colors {
            out.push(n * 16);
        }
        for (_, kind) in &self.attributes {
            out.push(match kind {
                AttributeKind::Scalar => n * 4,
                AttributeKind::Vec4 => n * 16,
            });
        }
        let index = if self.short_indices() { 2 } else { 4 };
        out.extend(self.ranges.iter().map(|r| r.count as usize * index));
        out
    }

    /// Indices are written as `u16` when every one is below 65 535 (the
    /// primitive restart value of `u16` indices).
    fn short_indices(&self) -> bool {
        self.vertices <= 65_535
    }
}

/// The bounds of `positions` (infinite for none).
pub(crate) fn bounds(positions: &[[f32; 3]]) -> ([f32; 3], [f32; 3]) {
    let mut min = [f32::INFINITY; 3];
    let mut max = [f32::NEG_INFINITY; 3];
    for p in positions {
        for k in 0..3 {
            min[k] = min[k].min(p[k]);
            max[k] = max[k].max(p[k]);
        }
    }
    (min, max)
}

/// A mesh of a `.glb` laid out before its bytes exist: its node's name and
/// translation and the shapes of its parts (a mesh written whole has one).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MeshShape<'a> {
    pub name: &'a str,
    pub translation: Option<[f32; 3]>,
    pub parts: Vec<PartShape<'a>>,
}

/// Hands each part's mesh to the writer: called once per part, in the
/// order the parts are written, with the mesh and part number and the
/// function that writes the part (which must be called once).
pub(crate) type PartSource<'s> = dyn FnMut(
        usize,
        usize,
        &mut dyn FnMut(&GlbMesh<'_>) -> Result<(), ExportError>,
    ) -> Result<(), ExportError>
    + 's;

/// The binary chunk as it is written: a block of about 64 KiB at a time,
/// each view zero-padded to 4 bytes.
struct BinWriter<'w, W: std::io::Write + ?Sized> {
    w: &'w mut W,
    buf: Vec<u8>,
    written: usize,
}

impl<W: std::io::Write + ?Sized> BinWriter<'_, W> {
    const BLOCK: usize = 64 * 1024;

    /// Writes `items`, each encoded by `encode` into `size` bytes, as one view.
    fn view<T>(
        &mut self,
        items: &[T],
        size: usize,
        encode: impl Fn(&T, &mut Vec<u8>),
    ) -> Result<(), ExportError> {
        let mut from = 0;
        while from < items.len() {
            // As many items as fill the block, at least one.
            let step = (Self::BLOCK.saturating_sub(self.buf.len()) / size).max(1);
            let to = (from + step).min(items.len());
            for item in &items[from..to] {
                encode(item, &mut self.buf);
            }
            from = to;
            if self.buf.len() >= Self::BLOCK {
                self.flush()?;
            }
        }
        while !(self.written + self.buf.len()).is_multiple_of(4) {
            self.buf.push(0);
        }
        Ok(())
    }

    fn floats<const N: usize>(&mut self, items: &[[f32; N]]) -> Result<(), ExportError> {
        self.view(items, 4 * N, |v, out| {
            for c in v {
                out.extend_from_slice(&c.to_le_bytes());
            }
        })
    }

    fn flush(&mut self) -> Result<(), ExportError> {
        self.written += self.buf.len();
        self.w.write_all(&self.buf).map_err(ExportError::Write)?;
        self.buf.clear();
        Ok(())
    }

    /// Writes the views of `m`, which has the shape `shape`.
    fn part(&mut self, m: &GlbMesh<'_>, shape: &PartShape<'_>) -> Result<(), ExportError> {
        self.floats(m.positions)?;
        self.floats(m.normals)?;
        self.floats(m.uvs)?;
        self.floats(m.colors)?;
        for a in m.attributes {
            match a.data {
                GlbAttributeData::Scalar(v) => self.view(v, 4, |c, out| {
                    out.extend_from_slice(&c.to_le_bytes());
                })?,
                GlbAttributeData::Vec4(v) => self.floats(v)?,
            }
        }
        for r in &shape.ranges {
            let (s, e) = (r.start as usize, (r.start + r.count) as usize);
            let indices = &m.indices[s..e];
            if shape.short_indices() {
                // Every index is below the vertex count, which is below 65 535.
                self.view(indices, 2, |&i, out| {
                    out.extend_from_slice(&(i as u16).to_le_bytes());
                })?;
            } else {
                self.view(indices, 4, |&i, out| {
                    out.extend_from_slice(&i.to_le_bytes());
                })?;
            }
        }
        Ok(())
    }
}

fn material_json(m: &GlbMaterial<'_>) -> Value {
    let mut o = Map::new();
    if !m.name.is_empty() {
        o.insert("name".into(), json!(m.name));
    }
    o.insert(
        "pbrMetallicRoughness".into(),
        json!({
            "baseColorFactor": m.base_color.map(f64::from),
            "metallicFactor": 0.0,
            "roughnessFactor": 1.0,
        }),
    );
    if m.blend {
        o.insert("alphaMode".into(), json!("BLEND"));
    }
    if m.double_sided {
        o.insert("doubleSided".into(), json!(true));
    }
    Value::Object(o)
}

/// Writes meshes as a glTF 2.0 binary file (`.glb`) and returns its bytes
/// (what [`write_glb`] writes, collected).
///
/// One scene, one node per mesh (named, with its translation); meshes without
/// triangles become nodes without a mesh. A mesh has one primitive per
/// [`GlbPrimitive`] range (or one of all its triangles), each with its own
/// index accessor and sharing the vertex accessors; equal materials are
/// written once. `asset.generator` is `"isoterra"`.
///
/// Errors (nothing is produced): a mesh whose normals or UVs do not match its
/// positions, whose index count is not a multiple of 3 or whose indices are
/// out of range, a NaN or infinite coordinate or translation, or a file over
/// the 4 GiB GLB limit.
pub fn export_glb(meshes: &[GlbMesh<'_>]) -> Result<Vec<u8>, ExportError> {
    let mut out = Vec::new();
    // The file's size is known before its first byte: reserve it once.
    write_glb_sized(meshes, &mut out, |v, total| v.reserve_exact(total))?;
    Ok(out)
}

/// Writes meshes as a glTF 2.0 binary file (`.glb`) to `w`, exactly the bytes
/// [`export_glb`] returns, without holding the file in memory: the JSON
/// chunk is laid out first (every length is known from the arrays), then
/// the binary chunk is encoded straight from the meshes' arrays in blocks
/// of about 64 KiB. A large mesh costs its own arrays and no second copy.
///
/// Errors: as [`export_glb`], checked before anything is written, and
/// [`ExportError::Write`] when `w` fails.
pub fn write_glb<W: std::io::Write + ?Sized>(
    meshes: &[GlbMesh<'_>],
    w: &mut W,
) -> Result<(), ExportError> {
    write_glb_sized(meshes, w, |_, _| {})
}

/// [`write_glb`], telling `sized` the file's length in bytes before the
/// first one is written.
fn write_glb_sized<W: std::io::Write + ?Sized>(
    meshes: &[GlbMesh<'_>],
    w: &mut W,
    sized: impl FnOnce(&mut W, usize),
) -> Result<(), ExportError> {
    for (k, m) in meshes.iter().enumerate() {
        m.validate(k)?;
    }
    let shapes: Vec<MeshShape<'_>> = meshes
        .iter()
        .map(|m| MeshShape {
            name: m.name,
            translation: m.translation,
            parts: vec![PartShape::of(m)],
        })
        .collect();
    let order: Vec<(usize, usize)> = (0..meshes.len()).map(|k| (k, 0)).collect();
    write_glb_parts(&shapes, &order, w, sized, &mut |k, _, emit| {
        emit(&meshes[k])
    })
}

/// Writes a `.glb` whose meshes are made one part at a time: the file is
/// laid out from `shapes` (the JSON chunk is written first), then `source`
/// is asked for each part in `order` (a list of `(mesh, part)`, each part
/// once; the binary chunk holds them in that order) and its bytes are
/// written as it is handed over. Only one part need be held at a time.
///
/// A part handed over must be valid and have exactly the shape it was laid
/// out with, or the export fails with [`ExportError::InvalidMesh`] (the
/// file is then cut short).
pub(crate) fn write_glb_parts<W: std::io::Write + ?Sized>(
    shapes: &[MeshShape<'_>],
    order: &[(usize, usize)],
    w: &mut W,
    sized: impl FnOnce(&mut W, usize),
    source: &mut PartSource<'_>,
) -> Result<(), ExportError> {
    // Where each part's views start in the binary chunk, in the order the
    // parts are written.
    let mut lengths: Vec<Vec<Vec<usize>>> = shapes
        .iter()
        .map(|m| {
            m.parts
                .iter()
                .map(|p| {
                    if p.ranges.is_empty() {
                        Vec::new()
                    } else {
                        p.view_lengths()
                    }
                })
                .collect()
        })
        .collect();
    let mut offsets: Vec<Vec<Vec<usize>>> = lengths
        .iter()
        .map(|m| m.iter().map(|p| vec![0; p.len()]).collect())
        .collect();
    let mut bin_len = 0usize;
    for &(k, p) in order {
        for (v, len) in lengths[k][p].iter().enumerate() {
            offsets[k][p][v] = bin_len;
            bin_len = (bin_len + len).next_multiple_of(4);
        }
    }
    let mut nodes = Vec::with_capacity(shapes.len());
    let mut gltf_meshes = Vec::new();
    let mut materials = Vec::new();
    let mut seen: Vec<GlbMaterial<'_>> = Vec::new();
    let mut views = Vec::new();
    let mut accessors = Vec::new();
    for (k, m) in shapes.iter().enumerate() {
        let mut node = Map::new();
        if !m.name.is_empty() {
            node.insert("name".into(), json!(m.name));
        }
        if let Some(t) = m.translation {
            node.insert("translation".into(), json!(t.map(f64::from)));
        }
        let mut primitives = Vec::new();
        for (p, part) in m.parts.iter().enumerate() {
            if part.ranges.is_empty() {
                continue;
            }
            let lens = std::mem::take(&mut lengths[k][p]);
            let mut next = 0;
            // Lays out the next view and an accessor of it.
            let mut accessor = |component: u32, count: usize, kind: &str, target: u32| {
                views.push(json!({
                    "buffer": 0,
                    "byteOffset": offsets[k][p][next],
                    "byteLength": lens[next],
                    "target": target,
                }));
                next += 1;
                let mut a = Map::new();
                a.insert("bufferView".into(), json!(views.len() - 1));
                a.insert("componentType".into(), json!(component));
                a.insert("count".into(), json!(count));
                a.insert("type".into(), json!(kind));
                accessors.push(Value::Object(a));
                accessors.len() - 1
            };
            let n = part.vertices;
            let mut attributes = Map::new();
            let position = accessor(FLOAT, n, "VEC3", ARRAY_BUFFER);
            attributes.insert("POSITION".into(), json!(position));
            if part.normals {
                attributes.insert(
                    "NORMAL".into(),
                    json!(accessor(FLOAT, n, "VEC3", ARRAY_BUFFER)),
                );
            }
            if part.uvs {
                attributes.insert(
                    "TEXCOORD_0".into(),
                    json!(accessor(FLOAT, n, "VEC2", ARRAY_BUFFER)),
                );
            }
            if part.colors {
                attributes.insert(
                    "COLOR_0".into(),
                    json!(accessor(FLOAT, n, "VEC4", ARRAY_BUFFER)),
                );
            }
            for (name, kind) in &part.attributes {
                let kind = match kind {
                    AttributeKind::Scalar => "SCALAR",
                    AttributeKind::Vec4 => "VEC4",
                };
                attributes.insert(
                    (*name).into(),
                    json!(accessor(FLOAT, n, kind, ARRAY_BUFFER)),
                );
            }
            let component = if part.short_indices() {
                UNSIGNED_SHORT
            } else {
                UNSIGNED_INT
            };
            let index_accessors: Vec<usize> = part
                .ranges
                .iter()
                .map(|r| accessor(component, r.count as usize, "SCALAR", ELEMENT_ARRAY_BUFFER))
                .collect();
            // f32 -> f64 is exact, so the JSON numbers read back to the same f32.
            if let Value::Object(a) = &mut accessors[position] {
                a.insert("min".into(), json!(part.min.map(f64::from)));
                a.insert("max".into(), json!(part.max.map(f64::from)));
            }
            for (range, indices) in part.ranges.iter().zip(index_accessors) {
                let mut primitive = Map::new();
                primitive.insert("attributes".into(), Value::Object(attributes.clone()));
                primitive.insert("indices".into(), json!(indices));
                primitive.insert("mode".into(), json!(TRIANGLES));
                if let Some(mat) = range.material {
                    // Equal materials are written once, so an importer makes
                    // one material per name, not one per chunk.
                    let index = match seen.iter().position(|x| *x == mat) {
                        Some(i) => i,
                        None => {
                            seen.push(mat);
                            materials.push(material_json(&mat));
                            materials.len() - 1
                        }
                    };
                    primitive.insert("material".into(), json!(index));
                }
                primitives.push(Value::Object(primitive));
            }
        }
        if !primitives.is_empty() {
            let mut mesh = Map::new();
            if !m.name.is_empty() {
                mesh.insert("name".into(), json!(m.name));
            }
            mesh.insert("primitives".into(), Value::Array(primitives));
            node.insert("mesh".into(), json!(gltf_meshes.len()));
            gltf_meshes.push(Value::Object(mesh));
        }
        nodes.push(Value::Object(node));
    }
    let mut doc = Map::new();
    doc.insert(
        "asset".into(),
        json!({ "version": "2.0", "generator": "isoterra" }),
    );
    doc.insert("scene".into(), json!(0));
    doc.insert(
        "scenes".into(),
        json!([{ "nodes": (0..nodes.len()).collect::<Vec<_>>() }]),
    );
    doc.insert("nodes".into(), Value::Array(nodes));
    if !gltf_meshes.is_empty() {
        doc.insert("meshes".into(), Value::Array(gltf_meshes));
        if !materials.is_empty() {
            doc.insert("materials".into(), Value::Array(materials));
        }
        doc.insert("accessors".into(), Value::Array(accessors));
        doc.insert("bufferViews".into(), Value::Array(views));
        doc.insert("buffers".into(), json!([{ "byteLength": bin_len }]));
    }
    // Serialising a tree of plain values cannot fail.
    let mut json_bytes = serde_json::to_vec(&Value::Object(doc)).unwrap_or_default();
    while !json_bytes.len().is_multiple_of(4) {
        json_bytes.push(b' ');
    }
    let bin_chunk = if bin_len == 0 { 0 } else { 8 + bin_len };
    let total = 12 + 8 + json_bytes.len() + bin_chunk;
    let too_large = || {
        ExportError::param(
            "meshes",
            format!("{total} bytes"),
            "a .glb file is limited to 4 GiB; export fewer or coarser chunks",
        )
    };
    let total32 = u32::try_from(total).map_err(|_| too_large())?;
    sized(w, total);
    let mut head = Vec::with_capacity(28 + json_bytes.len());
    head.extend_from_slice(&GLB_MAGIC.to_le_bytes());
    head.extend_from_slice(&2u32.to_le_bytes());
    head.extend_from_slice(&total32.to_le_bytes());
    head.extend_from_slice(&(json_bytes.len() as u32).to_le_bytes());
    head.extend_from_slice(&CHUNK_JSON.to_le_bytes());
    head.extend_from_slice(&json_bytes);
    if bin_len > 0 {
        // Within the total, so within u32.
        head.extend_from_slice(&(bin_len as u32).to_le_bytes());
        head.extend_from_slice(&CHUNK_BIN.to_le_bytes());
    }
    w.write_all(&head).map_err(ExportError::Write)?;
    let mut bin = BinWriter {
        w,
        buf: Vec::with_capacity(BinWriter::<W>::BLOCK + 64),
        written: 0,
    };
    for &(k, p) in order {
        let shape = &shapes[k].parts[p];
        if shape.ranges.is_empty() {
            continue;
        }
        let mut handed = 0;
        source(k, p, &mut |m: &GlbMesh<'_>| {
            m.validate(k)?;
            if PartShape::of(m) != *shape {
                return Err(ExportError::InvalidMesh {
                    mesh: k,
                    name: shapes[k].name.to_string(),
                    what: "part",
                    detail: format!("part {p} is not the shape it was laid out with"),
                });
            }
            handed += 1;
            bin.part(m, shape)
        })?;
        if handed != 1 {
            return Err(ExportError::InvalidMesh {
                mesh: k,
                name: shapes[k].name.to_string(),
                what: "part",
                detail: format!("part {p} was handed over {handed} times, not once"),
            });
        }
    }
    bin.flush()
}

#[cfg(test)]
mod tests {
    use super::first_index_at_or_above;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn first_index_at_or_above_is_the_plain_search(
            indices in proptest::collection::vec(0u32..5000, 0..3000),
            n in 0usize..6000,
        ) {
            prop_assert_eq!(
                first_index_at_or_above(&indices, n),
                indices.iter().position(|&i| i as usize >= n)
            );
        }
    }

    #[test]
    fn an_index_in_a_later_block_is_found() {
        let mut indices = vec![7u32; 5000];
        assert_eq!(first_index_at_or_above(&indices, 8), None);
        indices[4097] = 8;
        indices[4999] = u32::MAX;
        assert_eq!(first_index_at_or_above(&indices, 8), Some(4097));
        assert_eq!(first_index_at_or_above(&indices, 9), Some(4999));
        assert_eq!(first_index_at_or_above(&indices, 0), Some(0));
    }
}
