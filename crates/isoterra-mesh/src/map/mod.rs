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
//!   from corner `(x, z)` to `(x + 1, z + 1)`. Any other cell is cut the way
//!   marching squares cuts it, first along the chasm line `ground = 0` and
//!   then along every rim `level = k + 0.5` its corners span (banded
//!   contouring, all levels in one pass): a line crosses each cell side whose
//!   ends lie on different sides of it at the point interpolated linearly
//!   along the side, and runs *straight* across the cell between two such
//!   crossings; where four sides are crossed (a saddle), the average of the
//!   four corners decides which pairs join, as everywhere in this crate
//!   (the centre is solid when the average is at or above the iso value).
//!   So a rim is exactly the marching-squares contour of the `level` field
//!   (what `side2d` draws for a density field): a straight chord through
//!   every cell, with vertices only on cell sides, none inside a cell.
//!   Where a rim meets the chasm line inside a cell, they meet at the
//!   intersection of their two segments. Every piece between the lines is a
//!   convex polygon, fanned into triangles.
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
//!   in a slope (a ramp). Walls face out of the higher level. A ramp over a
//!   level field that is linear across it (softness 1) is one plane: every
//!   vertex lies on it, whatever the cell cut.
//! * **Chasms.** Where `ground < 0` there is no top. The chasm rim
//!   (`ground = 0`) gets a wall facing the chasm that drops by `chasm_depth`
//!   below the lowest band at the rim point; where a cliff rim meets a chasm
//!   rim the walls share their vertical edges. The bottom edges of chasm walls
//!   are the only open edges of the terrain mesh apart from the map's outer
//!   border.
//! * **Water.** The water height is interpolated to the terrain's vertices
//!   like the other layers. A node has water where `water` lies above its
//!   ground surface (`node_surface`); a dry node among wet ones (any of the
//!   eight around it) counts with the highest of their water heights, but
//!   never above its own ground, so a lake painted next to
//!   [`NO_WATER`](isoterra_field::map::NO_WATER) ends where the ground rises
//!   above it, and water painted where the ground falls away comes down to
//!   the ground at the first dry node (no cell-stepped edge). The water mesh is the part of the
//!   terrain's tops that lies under the water: every top triangle is clipped
//!   where its depth `water - y` (linear over the triangle) crosses `0`, and
//!   the wet part is laid at the water height. So the water ends exactly on
//!   the shoreline of the ground mesh and never covers dry ground (no
//!   overlap, no z-fighting), ends at the foot of a cliff wall it reaches
//!   (deep there), and is absent over chasms. Each water vertex carries its
//!   depth (`0` on the shoreline); water normals follow the water's own
//!   slope, with dry neighbours counting as level.
//!
//! # Seams and welding
//!
//! Every point where a line crosses a cell side is interpolated from the
//! side's lower-index node to its higher-index node (in `f64`, rounded once),
//! so two chunks that share the side compute bit-identical points; a crossing
//! that lands exactly on a node, or on another crossing of the same side,
//! *is* that node or crossing. The only points inside a cell are where a rim
//! meets the chasm line, computed by that cell alone. Vertices are welded
//! through integer keys (node, side, event, band; for an inside point the
//! cell, the two segments and the rim), never by comparing positions. A
//! shoreline point on a terrain edge is interpolated from the edge's end with
//! the smaller key. Normals read one node beyond the rectangle (central
//! differences of `level`, `softness`, `height`, `ground` and `water` in the
//! whole map), so meshing a map in chunks gives the same triangles, bit for
//! bit, as meshing it whole.
//!
//! # Attributes
//!
//! * **Normals** (unit length): top faces use the gradient of the band's
//!   surface; a vertex on a rim adds the horizontal direction out of the higher
//!   level (weighted by `1 - softness`) and a vertex on a chasm rim the
//!   direction into the chasm, so tops keep `y > 0`; wall bottoms in a chasm
//!   face into the chasm.
//! * **Splat**: a node's own; a point on a cell side takes the side's
//!   lower-index node; a point inside a cell (where a rim meets the chasm
//!   line) takes the lowest-index corner of the cell.
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
    /// Per vertex, the unit mean of the normals of the *top* triangles that
    /// use it (pointing up), or `None` for a vertex no top uses. Cliff and
    /// chasm walls are vertical (their two rows of vertices share x and
    /// z); every other triangle is a top.
    pub fn top_normals(&self) -> Vec<Option<[f32; 3]>> {
        self.tops().1
    }

    /// Which triangles are tops, and [`top_normals`](Self::top_normals).
    fn tops(&self) -> (Vec<bool>, Vec<Option<[f32; 3]>>) {
        let mut is_top = Vec::with_capacity(self.indices.len() / 3);
        let mut sum: Vec<Option<[f32; 3]>> = vec![None; self.positions.len()];
        for tri in self.indices.chunks_exact(3) {
            let n = top_face_normal([0, 1, 2].map(|k| self.positions[tri[k] as usize]));
            is_top.push(n.is_some());
            let Some(n) = n else {
                continue;
            };
            for &v in tri {
                let s = sum[v as usize].get_or_insert([0.0; 3]);
                for k in 0..3 {
                    s[k] += n[k];
                }
            }
        }
        for v in sum.iter_mut().flatten() {
            let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
            *v = if len > 0.0 {
                [v[0] / len, v[1] / len, v[2] / len]
            } else {
                [0.0, 1.0, 0.0]
            };
        }
        (is_top, sum)
    }

    /// The same mesh with the tops apart from the walls at the rims.
    ///
    /// The mesher shares each rim vertex between a cliff wall and the top
    /// it bounds (so there are no cracks), with the wall's blend and a
    /// normal tilted out of the cliff. A renderer that interpolates them
    /// over the tops' triangles that reach the rim draws wedges of wall
    /// colour and tilted light, as irregular as those triangles: a
    /// saw-tooth along every rim. Here every top triangle that uses a
    /// vertex with a wall blend gets its own copy of it (same position,
    /// splat and splat node; blend `0`; the [`top_normals`](Self::top_normals)
    /// normal); the walls keep the shared vertices. Triangles keep their
    /// order and positions bit for bit.
    pub fn tops_apart(&self) -> MapMeshBuffers {
        let mut out = self.clone();
        let (is_top, tops) = self.tops();
        let mut copy: Vec<u32> = vec![u32::MAX; self.positions.len()];
        for (tri, top) in out.indices.chunks_exact_mut(3).zip(is_top) {
            if !top {
                continue;
            }
            for v in tri.iter_mut() {
                let i = *v as usize;
                if self.blend[i] <= 0.0 {
                    continue;
                }
                if copy[i] == u32::MAX {
                    copy[i] = out.positions.len() as u32;
                    out.positions.push(self.positions[i]);
                    out.normals.push(tops[i].unwrap_or([0.0, 1.0, 0.0]));
                    out.splat.push(self.splat[i]);
                    out.blend.push(0.0);
                    out.splat_node.push(self.splat_node[i]);
                }
                *v = copy[i];
            }
        }
        out
    }

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

/// The upward unit normal of a top triangle, or `None` for a vertical
/// (wall) or degenerate one.
fn top_face_normal(p: [[f32; 3]; 3]) -> Option<[f32; 3]> {
    let e1 = [p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]];
    let e2 = [p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]];
    let n = [
        e1[1] * e2[2] - e1[2] * e2[1],
        e1[2] * e2[0] - e1[0] * e2[2],
        e1[0] * e2[1] - e1[1] * e2[0],
    ];
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    if !(len > 0.0 && (n[1] / len).abs() > 1.0e-3) {
        return None;
    }
    let s = if n[1] < 0.0 { -1.0 / len } else { 1.0 / len };
    Some([n[0] * s, n[1] * s, n[2] * s])
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
