//! Marching squares: fill mesh + contour segments in one pass.
//! (API skeleton; the implementation replaces every `todo!()`.)

use isoterra_field::{Field2, MaterialGrid};

use crate::MeshError;

/// A rectangle of *cells*, `x0..x1` by `y0..y1` (half-open). Cell `(x, y)` has
/// corners at nodes `(x, y)`, `(x+1, y)`, `(x, y+1)`, `(x+1, y+1)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CellRect {
    /// First cell column (inclusive).
    pub x0: u32,
    /// First cell row (inclusive).
    pub y0: u32,
    /// End cell column (exclusive).
    pub x1: u32,
    /// End cell row (exclusive).
    pub y1: u32,
}

/// A global key for a point on the grid: a node, or a crossed horizontal or
/// vertical edge. Keys do not depend on chunking, so welding and contour
/// joining across chunks compare integers, never floats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EdgeKey(pub u64);

/// Options for [`MarchingSquares`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct SquaresOptions {
    /// Iso level; a node is solid when `value >= iso`. Default value: `0.0`.
    pub iso: f32,
    /// World units per texture repeat (UV = world position / uv_scale). Default value: `1.0`.
    pub uv_scale: f32,
    /// Emit the fill mesh. Default value: `true`.
    pub fill: bool,
    /// Emit contour segments. Default value: `true`.
    pub segments: bool,
}

/// A fill mesh at z = 0, normals +z, counter-clockwise triangles.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FillMesh {
    /// Vertex positions `[x, y, 0]` in world units.
    pub positions: Vec<[f32; 3]>,
    /// Vertex normals, all `[0, 0, 1]`.
    pub normals: Vec<[f32; 3]>,
    /// Texture coordinates, world position / uv_scale.
    pub uvs: Vec<[f32; 2]>,
    /// Triangle list.
    pub indices: Vec<u32>,
    /// Index ranges per material (empty when no material grid was given).
    pub submeshes: Vec<Submesh>,
}

/// An index range of a [`FillMesh`] drawn with one material.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Submesh {
    /// Material id.
    pub material: u8,
    /// First index in `indices`.
    pub start: u32,
    /// Number of indices.
    pub count: u32,
}

/// Contour segments, solid on the left of each directed segment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Segments {
    /// Points in world units.
    pub points: Vec<[f32; 2]>,
    /// The global key of each point.
    pub keys: Vec<EdgeKey>,
    /// Directed segments as index pairs into `points`.
    pub segments: Vec<[u32; 2]>,
}

/// What one meshing call produces; `reset` keeps the memory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SquaresOutput {
    /// The fill mesh.
    pub fill: FillMesh,
    /// The contour segments.
    pub segments: Segments,
}

/// A triangle strip mesh along contours (a grass rim): u runs along the
/// contour, v across it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StripMesh {
    /// Vertex positions `[x, y, 0]`.
    pub positions: Vec<[f32; 3]>,
    /// Texture coordinates.
    pub uvs: Vec<[f32; 2]>,
    /// Triangle list.
    pub indices: Vec<u32>,
}

/// A reusable marching squares mesher.
#[derive(Debug, Default)]
pub struct MarchingSquares {
    _scratch: Vec<u32>,
}

impl SquaresOptions {
    /// The defaults.
    pub const DEFAULT: Self = SquaresOptions {
        iso: 0.0,
        uv_scale: 1.0,
        fill: true,
        segments: true,
    };
}

impl Default for SquaresOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl SquaresOutput {
    /// Clears every buffer, keeping its memory.
    pub fn reset(&mut self) {
        todo!()
    }
}

impl MarchingSquares {
    /// A mesher with empty scratch buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Meshes the cells of `cells` of `field` into `out` (which is reset first).
    pub fn mesh(
        &mut self,
        field: &Field2,
        materials: Option<&MaterialGrid>,
        cells: CellRect,
        options: &SquaresOptions,
        out: &mut SquaresOutput,
    ) -> Result<(), MeshError> {
        let _ = (field, materials, cells, options, out);
        todo!()
    }
}

/// Builds a strip of `width` world units along the polylines, on the solid side.
pub fn edge_strip(polylines: &[crate::Polyline], width: f32, out: &mut StripMesh) -> Result<(), MeshError> {
    let _ = (polylines, width, out);
    todo!()
}
