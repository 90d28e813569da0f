//! One-pass meshing of a top-down `map` world: terraced ground, cliff walls,
//! ramps, chasms and water.
//!
//! The layers come from [`isoterra_field::map::MapLayers`]; the mesher is
//! [`MapMesher`].
//!
//! # Model
//!
//! The map lies on the x/z plane with height on y. Node `(x, z)` sits at
//! `(x * cell_size, surface, z * cell_size)`. A node's band is its cliff level
//! [`level_index`](isoterra_field::map::level_index)`(level)`; cliff rims are
//! the iso lines of the `level` field at `k + 0.5`.
//!
//! * **Cells.** A cell whose four corners are on land (`ground >= 0`) and in
//!   one band is a flat-topology quad: two triangles split along the diagonal
//!   from corner `(x, z)` to `(x + 1, z + 1)`. Any other cell is split into four
//!   triangles around its centre (values at the centre are the average of the
//!   corners, which also decides saddles), and every triangle is cut, with
//!   linear interpolation, first by the chasm line `ground = 0` and then by
//!   every rim `level = k + 0.5` its corners span (banded contouring, all levels
//!   in one pass).
//! * **Tops.** A piece of band `b` is a flat-shaded-by-vertex top face whose
//!   vertices have height
//!   `y = (b + (clamp(level, 0, 15) - b) * softness) * level_height + height`,
//!   with `level`, `softness` and `height` interpolated to the vertex. At a
//!   node of band `b` this is exactly
//!   [`node_surface`](isoterra_field::map::node_surface).
//! * **Cliff walls.** On a rim between bands `k` and `k + 1` each rim point has
//!   two vertices: the upper band's (at `lerp(k + 1, k + 0.5, s)` levels) and
//!   the lower band's (at `lerp(k, k + 0.5, s)` levels), so the wall is
//!   `(1 - s) * level_height` high. The wall is a strip between these two rows
//!   of vertices and *shares* them with the two top faces: the mesh has no
//!   cracks by construction. Where both vertices are at the same height
//!   (softness 1) they are one vertex and the wall vanishes: the two tops meet
//!   in a slope (a ramp). Walls face out of the higher level.
//! * **Chasms.** Where `ground < 0` there is no top. The chasm rim
//!   (`ground = 0`) gets a wall facing the chasm that drops by `chasm_depth`
//!   below the lowest band at the rim point; where a cliff rim meets a chasm
//!   rim the walls share their vertical edges. The bottom edges of chasm walls
//!   are the only open edges of the terrain mesh apart from the map's outer
//!   border.
//! * **Water.** Where `water` lies above the node's ground surface
//!   (`node_surface`), a separate mesh at the (interpolated) water height, cut
//!   at the shoreline `water - ground = 0` (two triangles per cell on the same
//!   diagonal as the tops), with a per-vertex depth `water - ground` (`0` on
//!   the shore). A dry node next to wet ones (edge neighbours) counts with the
//!   highest of their water heights, so a lake painted next to
//!   [`NO_WATER`](isoterra_field::map::NO_WATER) ends where the ground rises
//!   above it; shore vertices take the water height of the wet end of their
//!   cell side, and water normals ignore dry neighbours.
//!
//! # Seams and welding
//!
//! Every point where a rim crosses a cell side is interpolated from the side's
//! lower-index node to its higher-index node (in `f64`, rounded once), so two
//! chunks that share the side compute bit-identical points; a crossing that
//! lands exactly on a node, or on another crossing of the same side, *is* that
//! node or crossing. Vertices are welded through integer keys (node, side,
//! event, band), never by comparing positions. Normals read one node beyond the
//! rectangle (central differences of `level`, `softness`, `height`, `ground` and
//! `water` in the whole map), so meshing a map in chunks gives the same
//! triangles, bit for bit, as meshing it whole.
//!
//! # Attributes
//!
//! * **Normals** (unit length): top faces use the gradient of the band's
//!   surface; a vertex on a rim adds the horizontal direction out of the higher
//!   level (weighted by `1 - softness`) and a vertex on a chasm rim the
//!   direction into the chasm, so tops keep `y > 0`; wall bottoms in a chasm
//!   face into the chasm.
//! * **Splat**: a node's own; a point on a cell side takes the side's
//!   lower-index node; a point inside a cell (its centre, or on a line from a
//!   corner to the centre) takes the lowest-index corner of the cell, or the
//!   corner the line starts from.
//!   Each terrain vertex records that node
//!   ([`MapMeshBuffers::splat_node`]), so a texture-only edit refreshes the
//!   splats in place with [`MapMesher::update_attributes`], bit for bit what
//!   a full remesh gives.
//! * **Blend** (`0` ground top, `1` cliff wall): `1 - softness` at points on a
//!   cliff rim, `1` on chasm rims and chasm wall bottoms, `0` elsewhere; shared
//!   rim vertices carry the wall's value and the tops fade from it.

mod mesher;

pub use mesher::MapMesher;

use isoterra_field::Splat;
#[cfg(doc)]
use isoterra_field::map::MapLayers;

/// Options for [`MapMesher`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
#[non_exhaustive]
pub struct MapMeshOptions {
    /// World units per cell along x and z. Finite and greater than zero.
    /// Default value: `1.0`.
    pub cell_size: f32,
    /// World units per cliff level. Finite and greater than zero.
    /// Default value: `1.0`.
    pub level_height: f32,
    /// How far chasm walls drop below the ground where `ground < 0`. Finite and
    /// greater than zero. Default value: `2.0`.
    pub chasm_depth: f32,
}

impl MapMeshOptions {
    /// The default options.
    pub const DEFAULT: MapMeshOptions = MapMeshOptions {
        cell_size: 1.0,
        level_height: 1.0,
        chasm_depth: 2.0,
    };

    /// Sets [`MapMeshOptions::cell_size`].
    pub const fn with_cell_size(mut self, cell_size: f32) -> Self {
        self.cell_size = cell_size;
        self
    }

    /// Sets [`MapMeshOptions::level_height`].
    pub const fn with_level_height(mut self, level_height: f32) -> Self {
        self.level_height = level_height;
        self
    }

    /// Sets [`MapMeshOptions::chasm_depth`].
    pub const fn with_chasm_depth(mut self, chasm_depth: f32) -> Self {
        self.chasm_depth = chasm_depth;
        self
    }
}

impl Default for MapMeshOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The terrain mesh of a map: tops, cliff walls, slopes and chasm walls in one
/// welded triangle list (counter-clockwise seen from the side the normal points to).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MapMeshBuffers {
    /// Vertex positions in world units.
    pub positions: Vec<[f32; 3]>,
    /// Unit vertex normals.
    pub normals: Vec<[f32; 3]>,
    /// Texture splat per vertex.
    pub splat: Vec<Splat>,
    /// Cliff blend per vertex: `0` ground top, `1` cliff wall.
    pub blend: Vec<f32>,
    /// Per vertex, the storage index (in the map's [`MapLayers`]) of the node
    /// whose splat the vertex carries: `splat[v] == layers.splat[splat_node[v]]`.
    /// [`MapMesher::update_attributes`] uses it to refresh `splat` after a
    /// texture-only edit without remeshing.
    pub splat_node: Vec<u32>,
    /// Triangle list.
    pub indices: Vec<u32>,
}

impl MapMeshBuffers {
    /// Clears every buffer, keeping its memory.
    pub fn clear(&mut self) {
        self.positions.clear();
        self.normals.clear();
        self.splat.clear();
        self.blend.clear();
        self.splat_node.clear();
        self.indices.clear();
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }
}

/// The water mesh of a map: a welded triangle list at the water surface,
/// normals up the water's slope.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WaterBuffers {
    /// Vertex positions in world units.
    pub positions: Vec<[f32; 3]>,
    /// Unit vertex normals.
    pub normals: Vec<[f32; 3]>,
    /// Water depth (`water - ground`) per vertex; `0` on the shoreline.
    pub depth: Vec<f32>,
    /// Triangle list.
    pub indices: Vec<u32>,
}

impl WaterBuffers {
    /// Clears every buffer, keeping its memory.
    pub fn clear(&mut self) {
        self.positions.clear();
        self.normals.clear();
        self.depth.clear();
        self.indices.clear();
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }
}

/// What one [`MapMesher::mesh`] call produces; `clear` keeps the memory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MapMeshOutput {
    /// The terrain mesh.
    pub terrain: MapMeshBuffers,
    /// The water mesh.
    pub water: WaterBuffers,
}

impl MapMeshOutput {
    /// Clears both meshes, keeping their memory.
    pub fn clear(&mut self) {
        self.terrain.clear();
        self.water.clear();
    }
}
