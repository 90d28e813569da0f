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
        if let Some(i) = self.indices.iter().position(|&i| i as usize >= n) {
            return bad(
                "indices",
                format!(
                    "index {} at {i} is out of range for {n} vertices",
                    self.indices[i]
                ),
            );
        }
        if let Some(i) = self
            .positions
            .iter()
            .position(|p| !p.iter().all(|c| c.is_finite()))
        {
            return bad(
                "positions",
                format!("position {i} is not finite: {:?}", self.positions[i]),
            );
        }
        if let Some(i) = self
            .normals
            .iter()
            .position(|p| !p.iter().all(|c| c.is_finite()))
        {
            return bad(
                "normals",
                format!("normal {i} is not finite: {:?}", self.normals[i]),
            );
        }
        if let Some(i) = self
            .uvs
            .iter()
            .position(|p| !p.iter().all(|c| c.is_finite()))
        {
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

/// Builds the binary buffer, its views and accessors.
/// The bytes of one buffer view, borrowed from the meshes until the file is
/// written.
enum Piece<'a> {
    Vec3(&'a [[f32; 3]]),
    Vec4(&'a [[f32; 4]]),
    Vec2(&'a [[f32; 2]]),
    Scalar(&'a [f32]),
    /// Indices written as `u16` (every index below 65 535).
    Index16(&'a [u32]),
    Index32(&'a [u32]),
}

impl Piece<'_> {
    fn byte_len(&self) -> usize {
        match self {
            Piece::Vec3(d) => d.len() * 12,
            Piece::Vec4(d) => d.len() * 16,
            Piece::Vec2(d) => d.len() * 8,
            Piece::Scalar(d) => d.len() * 4,
            Piece::Index16(d) => d.len() * 2,
            Piece::Index32(d) => d.len() * 4,
        }
    }

    /// Appends the little-endian bytes of elements `from..to` to `out`.
    fn encode(&self, from: usize, to: usize, out: &mut Vec<u8>) {
        let floats = |out: &mut Vec<u8>, v: &[f32]| {
            for c in v {
                out.extend_from_slice(&c.to_le_bytes());
            }
        };
        match self {
            Piece::Vec3(d) => d[from..to].iter().for_each(|v| floats(out, v)),
            Piece::Vec4(d) => d[from..to].iter().for_each(|v| floats(out, v)),
            Piece::Vec2(d) => d[from..to].iter().for_each(|v| floats(out, v)),
            Piece::Scalar(d) => floats(out, &d[from..to]),
            Piece::Index16(d) => {
                for &i in &d[from..to] {
                    out.extend_from_slice(&(i as u16).to_le_bytes());
                }
            }
            Piece::Index32(d) => {
                for &i in &d[from..to] {
                    out.extend_from_slice(&i.to_le_bytes());
                }
            }
        }
    }

    fn len(&self) -> usize {
        match self {
            Piece::Vec3(d) => d.len(),
            Piece::Vec4(d) => d.len(),
            Piece::Vec2(d) => d.len(),
            Piece::Scalar(d) => d.len(),
            Piece::Index16(d) | Piece::Index32(d) => d.len(),
        }
    }
}

/// The buffer's layout: its views (as JSON and as the pieces that fill
/// them) and accessors. The bytes are written only when the file is.
#[derive(Default)]
struct Builder<'a> {
    bin_len: usize,
    pieces: Vec<Piece<'a>>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl<'a> Builder<'a> {
    /// Lays out `piece` as a new buffer view (4-byte aligned) and returns
    /// its index.
    fn view(&mut self, piece: Piece<'a>, target: u32) -> usize {
        let offset = self.bin_len;
        let length = piece.byte_len();
        self.bin_len = (offset + length).next_multiple_of(4);
        self.pieces.push(piece);
        self.views.push(json!({
            "buffer": 0,
            "byteOffset": offset,
            "byteLength": length,
            "target": target,
        }));
        self.views.len() - 1
    }

    fn accessor(&mut self, mut accessor: Map<String, Value>, view: usize) -> usize {
        accessor.insert("bufferView".into(), json!(view));
        self.accessors.push(Value::Object(accessor));
        self.accessors.len() - 1
    }

    fn vec3(&mut self, data: &'a [[f32; 3]], bounds: bool) -> usize {
        let view = self.view(Piece::Vec3(data), ARRAY_BUFFER);
        let mut a = Map::new();
        a.insert("componentType".into(), json!(FLOAT));
        a.insert("count".into(), json!(data.len()));
        a.insert("type".into(), json!("VEC3"));
        if bounds {
            let mut min = [f32::INFINITY; 3];
            let mut max = [f32::NEG_INFINITY; 3];
            for p in data {
                for k in 0..3 {
                    min[k] = min[k].min(p[k]);
                    max[k] = max[k].max(p[k]);
                }
            }
            // f32 -> f64 is exact, so the JSON numbers read back to the same f32.
            a.insert("min".into(), json!(min.map(f64::from)));
            a.insert("max".into(), json!(max.map(f64::from)));
        }
        self.accessor(a, view)
    }

    fn vec4(&mut self, data: &'a [[f32; 4]]) -> usize {
        let view = self.view(Piece::Vec4(data), ARRAY_BUFFER);
        let mut a = Map::new();
        a.insert("componentType".into(), json!(FLOAT));
        a.insert("count".into(), json!(data.len()));
        a.insert("type".into(), json!("VEC4"));
        self.accessor(a, view)
    }

    fn scalar(&mut self, data: &'a [f32]) -> usize {
        let view = self.view(Piece::Scalar(data), ARRAY_BUFFER);
        let mut a = Map::new();
        a.insert("componentType".into(), json!(FLOAT));
        a.insert("count".into(), json!(data.len()));
        a.insert("type".into(), json!("SCALAR"));
        self.accessor(a, view)
    }

    fn vec2(&mut self, data: &'a [[f32; 2]]) -> usize {
        let view = self.view(Piece::Vec2(data), ARRAY_BUFFER);
        let mut a = Map::new();
        a.insert("componentType".into(), json!(FLOAT));
        a.insert("count".into(), json!(data.len()));
        a.insert("type".into(), json!("VEC2"));
        self.accessor(a, view)
    }

    fn indices(&mut self, indices: &'a [u32], vertices: usize) -> usize {
        // 65535 is the primitive restart value for u16 indices, so u16 is used only
        // when every index is below it.
        let (view, component) = if vertices <= 65_535 {
            (
                self.view(Piece::Index16(indices), ELEMENT_ARRAY_BUFFER),
                UNSIGNED_SHORT,
            )
        } else {
            (
                self.view(Piece::Index32(indices), ELEMENT_ARRAY_BUFFER),
                UNSIGNED_INT,
            )
        };
        let mut a = Map::new();
        a.insert("componentType".into(), json!(component));
        a.insert("count".into(), json!(indices.len()));
        a.insert("type".into(), json!("SCALAR"));
        self.accessor(a, view)
    }

    /// Writes the buffer's bytes (every view, zero-padded to 4 bytes) to
    /// `w` in blocks of about 64 KiB.
    fn write_bin<W: std::io::Write + ?Sized>(&self, w: &mut W) -> Result<(), ExportError> {
        const BLOCK: usize = 64 * 1024;
        let mut buf = Vec::with_capacity(BLOCK + 64);
        let mut written = 0usize;
        for piece in &self.pieces {
            let n = piece.len();
            let per = piece.byte_len().checked_div(n).unwrap_or(1).max(1);
            let mut from = 0;
            while from < n {
                // As many elements as fill the block, at least one.
                let step = (BLOCK.saturating_sub(buf.len()) / per).max(1);
                let to = (from + step).min(n);
                piece.encode(from, to, &mut buf);
                from = to;
                if buf.len() >= BLOCK {
                    written += buf.len();
                    w.write_all(&buf).map_err(ExportError::Write)?;
                    buf.clear();
                }
            }
            while !(written + buf.len()).is_multiple_of(4) {
                buf.push(0);
            }
        }
        w.write_all(&buf).map_err(ExportError::Write)?;
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
    let mut b = Builder::default();
    let mut nodes = Vec::with_capacity(meshes.len());
    let mut gltf_meshes = Vec::new();
    let mut materials = Vec::new();
    let mut seen: Vec<GlbMaterial<'_>> = Vec::new();
    for m in meshes {
        let mut node = Map::new();
        if !m.name.is_empty() {
            node.insert("name".into(), json!(m.name));
        }
        if let Some(t) = m.translation {
            node.insert("translation".into(), json!(t.map(f64::from)));
        }
        if !m.indices.is_empty() {
            let mut attributes = Map::new();
            attributes.insert("POSITION".into(), json!(b.vec3(m.positions, true)));
            if !m.normals.is_empty() {
                attributes.insert("NORMAL".into(), json!(b.vec3(m.normals, false)));
            }
            if !m.uvs.is_empty() {
                attributes.insert("TEXCOORD_0".into(), json!(b.vec2(m.uvs)));
            }
            if !m.colors.is_empty() {
                attributes.insert("COLOR_0".into(), json!(b.vec4(m.colors)));
            }
            for a in m.attributes {
                let accessor = match a.data {
                    GlbAttributeData::Scalar(v) => b.scalar(v),
                    GlbAttributeData::Vec4(v) => b.vec4(v),
                };
                attributes.insert(a.name.into(), json!(accessor));
            }
            let mut mesh = Map::new();
            if !m.name.is_empty() {
                mesh.insert("name".into(), json!(m.name));
            }
            let mut primitives = Vec::new();
            for range in m.ranges() {
                let (s, e) = (range.start as usize, (range.start + range.count) as usize);
                let indices = b.indices(&m.indices[s..e], m.positions.len());
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
        doc.insert(
            "accessors".into(),
            Value::Array(std::mem::take(&mut b.accessors)),
        );
        doc.insert(
            "bufferViews".into(),
            Value::Array(std::mem::take(&mut b.views)),
        );
        doc.insert("buffers".into(), json!([{ "byteLength": b.bin_len }]));
    }
    // Serialising a tree of plain values cannot fail.
    let mut json_bytes = serde_json::to_vec(&Value::Object(doc)).unwrap_or_default();
    while !json_bytes.len().is_multiple_of(4) {
        json_bytes.push(b' ');
    }
    let bin_chunk = if b.bin_len == 0 { 0 } else { 8 + b.bin_len };
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
    if b.bin_len > 0 {
        // Within the total, so within u32.
        head.extend_from_slice(&(b.bin_len as u32).to_le_bytes());
        head.extend_from_slice(&CHUNK_BIN.to_le_bytes());
    }
    w.write_all(&head).map_err(ExportError::Write)?;
    b.write_bin(w)
}
