//! The reusable heightmap chunk mesher and its output buffers.

use crate::MeshError;

use super::input::{ChunkSide, HeightChunkInput, HeightmapOptions};

/// One chunk's mesh: positions, normals, UVs, morph data and a triangle list.
///
/// The surface comes first: `(n + 1)²` grid vertices, row-major with x fastest,
/// and its triangles; then the skirt (if any) from
/// [`skirt_vertex_start`](Self::skirt_vertex_start) and
/// [`skirt_index_start`](Self::skirt_index_start). All per-vertex arrays have
/// the same length.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HeightmapMesh {
    /// Vertex positions `[x, height, z]` in world units.
    pub positions: Vec<[f32; 3]>,
    /// Unit vertex normals (central differences over the apron), pointing up.
    pub normals: Vec<[f32; 3]>,
    /// Texture coordinates: world `(x, z) / uv_scale`.
    pub uvs: Vec<[f32; 2]>,
    /// Morph weight: 1 for a vertex that disappears at the next coarser LOD,
    /// 0 for one that stays (see the module documentation for the blend).
    pub morph: Vec<f32>,
    /// The height of the next coarser LOD's surface at the vertex's x, z.
    pub morph_targets: Vec<f32>,
    /// Triangle list, counter-clockwise seen from outside (from above for the
    /// surface, from outside the chunk for skirts).
    pub indices: Vec<u32>,
    /// Index of the first skirt vertex (`positions.len()` when there is no skirt).
    pub skirt_vertex_start: u32,
    /// Index in `indices` of the first skirt index (`indices.len()` when there is
    /// no skirt).
    pub skirt_index_start: u32,
}

impl HeightmapMesh {
    /// Clears every buffer, keeping its memory.
    pub fn reset(&mut self) {
        self.positions.clear();
        self.normals.clear();
        self.uvs.clear();
        self.morph.clear();
        self.morph_targets.clear();
        self.indices.clear();
        self.skirt_vertex_start = 0;
        self.skirt_index_start = 0;
    }

    /// Number of vertices, skirt included.
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// Number of triangles, skirt included.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// The surface triangles (without the skirt).
    pub fn surface_indices(&self) -> &[u32] {
        &self.indices[..self.skirt_index_start as usize]
    }

    /// The skirt triangles (empty without a skirt).
    pub fn skirt_indices(&self) -> &[u32] {
        &self.indices[self.skirt_index_start as usize..]
    }
}

/// The CDLOD blend factor for a vertex at `distance` from the viewer: 0 up to
/// `morph_start`, rising linearly to 1 at `morph_end`, 1 beyond.
///
/// `t = clamp((distance - morph_start) / (morph_end - morph_start), 0, 1)`;
/// when `morph_end <= morph_start` it is a step at `morph_start`. A NaN
/// distance gives 0. The rendered height is
/// `height + morph * t * (morph_target - height)` (see [`HeightmapMesh`]).
pub fn morph_blend(distance: f32, morph_start: f32, morph_end: f32) -> f32 {
    if morph_end <= morph_start {
        return if distance >= morph_start { 1.0 } else { 0.0 };
    }
    let t = (distance - morph_start) / (morph_end - morph_start);
    if t >= 1.0 {
        1.0
    } else if t > 0.0 {
        t
    } else {
        0.0
    }
}

/// A reusable heightmap chunk mesher: levels of detail, crack-free seams, skirts
/// and morphing.
///
/// A heightmap lies in the x/z plane with the height on y (right-handed, y up).
/// The world is cut into square chunks of `N` cells (`N` a power of two,
/// default 64). Chunk `(cx, cz)` owns the global nodes `[c*N, c*N + N]` on each
/// axis; neighbouring chunks share their border row of nodes.
///
/// # Sampling at a level of detail
///
/// At LOD `k` a chunk samples every `s = 2^k`-th node, so it has
/// `n = N / s` cells per side and `(n + 1)²` vertices. Its input is a grid of
/// `(n + 3)²` heights: the chunk's own nodes plus a one-node apron ring, taken at
/// the same step `s`, row-major with x fastest, then z:
///
/// ```text
///   sample (i, j), i, j in 0..n+3  <->  global node (cx*N + (i-1)*s, cz*N + (j-1)*s)
///
///   z ^  a a a a a a      a = apron sample (used for normals only)
///     |  a o o o o a      o = chunk node (a vertex)
///     |  a o o o o a
///     |  a o o o o a      here n = 3 cells: 4 x 4 vertices, 6 x 6 samples
///     |  a o o o o a
///     |  a a a a a a
///     +----------------> x
/// ```
///
/// [`sample_chunk_heights`](crate::sample_chunk_heights) fills such a grid from a function of global node
/// indices.
///
/// # Positions, normals and UVs
///
/// * **Position** of the vertex at global node `(gx, gz)`:
///   `x = (origin_x as f64 + gx as f64 * cell_size as f64) as f32`, the same for
///   `z`, and `y` = the height sample, unchanged. Both chunks that share a border
///   evaluate this one formula on the same integers, so their border positions are
///   bit-identical.
/// * **Normal** by central differences over the apron:
///   `normalize(h(i-1, j) - h(i+1, j), 2 * s * cell_size, h(i, j-1) - h(i, j+1))`,
///   evaluated in `f64` and rounded once to `f32`. Chunks at the same LOD read the
///   same four samples for a shared border vertex, so their normals are
///   bit-identical too (no lighting seam). Normals are unit length and point up.
/// * **UV** = `(x / uv_scale, z / uv_scale)` in world units, so textures tile
///   across chunks without seams.
///
/// # Triangles
///
/// Cell `(i, j)` with corners `v00 = (i, j)`, `v10 = (i+1, j)`, `v01 = (i, j+1)`,
/// `v11 = (i+1, j+1)` is split along its `v00`–`v11` diagonal into
/// `(v00, v01, v11)` and `(v00, v11, v10)`: counter-clockwise seen from above
/// (+y), so face normals point up. A chunk has `2 n²` triangles before stitching.
///
/// # Seams between levels (stitching)
///
/// Neighbours obey the 2:1 rule: an edge neighbour is at most one level coarser
/// or finer. On an edge whose neighbour is one level *coarser*, every odd vertex
/// of that edge is folded onto the even vertex before it (lower index along the
/// edge): the triangles that used it now use the even vertex, and the one
/// triangle per pair of edge cells that becomes degenerate is dropped. The fine
/// edge then consists of exactly the coarse neighbour's edge segments: no cracks
/// and no T-junctions. The odd vertices stay in the vertex buffer (so the vertex
/// count is always `(n + 1)²`) but no triangle uses them. A stitched edge removes
/// `n / 2` triangles, so a chunk has `2 n² - (n / 2) * stitched_edges`
/// surface triangles. The coarser chunk needs nothing: its edge is already the
/// common edge. See [`HeightChunkInput::neighbours`](crate::HeightChunkInput::neighbours).
///
/// # Skirts
///
/// With [`HeightmapOptions::skirt_depth`](crate::HeightmapOptions::skirt_depth) `> 0` every border also gets a
/// vertical strip hanging `skirt_depth` below its vertices (the used ones: every
/// other vertex on a stitched edge). Skirt vertices copy the border vertex's
/// normal, UV and morph data; skirt faces point outward. They follow the surface
/// data in the buffers, starting at [`HeightmapMesh::skirt_vertex_start`] and
/// [`HeightmapMesh::skirt_index_start`].
///
/// # Morphing (CDLOD style)
///
/// Each vertex carries `morph` (1 when the vertex disappears at LOD `k + 1`, that
/// is when its index is odd on either axis; 0 when it survives) and
/// `morph_target`, the height the LOD `k + 1` mesh has at the vertex's x, z:
/// the mean of the two neighbours along the odd axis, or, for a vertex odd on
/// both axes, the mean of its `(i-1, j-1)` and `(i+1, j+1)` neighbours (the
/// coarse cell's diagonal). A renderer blends with
///
/// ```text
///   t = morph_blend(distance_to_viewer, morph_start, morph_end)   // 0..1
///   y = height + morph * t * (morph_target - height)
/// ```
///
/// At `t = 1` the chunk has exactly the shape of its LOD `k + 1` mesh, so the
/// switch to the coarser level does not pop. A chunk at the coarsest level
/// (`n = 1`) has `morph = 0` everywhere.
///
/// # Reuse
///
/// It keeps the triangle index pattern of the last `(cells per side, stitched
/// edges)` it built and its per-column scratch, so meshing many chunks of one
/// size into a reused [`HeightmapMesh`] allocates nothing after the first call.
///
/// # Example
///
/// ```
/// use isoterra_mesh::{HeightChunkInput, HeightmapMesh, HeightmapMesher, HeightmapOptions, sample_chunk_heights};
///
/// let mut heights = Vec::new();
/// // An 8-cell chunk at LOD 1 (4 cells per side, 5 x 5 vertices, 7 x 7 samples).
/// sample_chunk_heights(8, 1, [0, 0], &mut heights, |[x, z]| 0.1 * (x + z) as f32).unwrap();
/// let input = HeightChunkInput::new(&heights).with_cells(8).with_lod(1);
/// let mut mesher = HeightmapMesher::new();
/// let mut mesh = HeightmapMesh::default();
/// mesher.mesh(&input, &HeightmapOptions::DEFAULT, &mut mesh).unwrap();
/// assert_eq!(mesh.vertex_count(), 25);
/// assert_eq!(mesh.triangle_count(), 2 * 4 * 4);
/// ```
#[derive(Debug, Clone, Default)]
pub struct HeightmapMesher {
    template_key: Option<(u32, u8)>,
    template: Vec<u32>,
    xs: Vec<f32>,
    zs: Vec<f32>,
    us: Vec<f32>,
    vs: Vec<f32>,
}

const NEG_X: u8 = 1 << 0;
const POS_X: u8 = 1 << 1;
const NEG_Z: u8 = 1 << 2;
const POS_Z: u8 = 1 << 3;

impl HeightmapMesher {
    /// A mesher with empty scratch buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Meshes one chunk into `out` (cleared first, memory kept).
    ///
    /// Errors (and `out` is left untouched): `cells` not a power of two in
    /// `1..=4096`, `lod > log2(cells)`, a wrong number of height samples, a NaN or
    /// infinite height (the error names its sample), a non-finite origin, a cell
    /// size or UV scale that is not finite and positive, a negative skirt depth,
    /// or a neighbour LOD above `lod + 1`.
    pub fn mesh(
        &mut self,
        input: &HeightChunkInput<'_>,
        options: &HeightmapOptions,
        out: &mut HeightmapMesh,
    ) -> Result<(), MeshError> {
        options.validate()?;
        let (n, mut stitch) = input.validate()?;
        if !options.stitch {
            stitch = 0;
        }
        out.reset();
        // Room for the skirts too, so that a new output is allocated once
        // (not grown, and copied, when the skirts are added).
        let skirts = options.skirt_depth > 0.0;
        let (skirt_vertices, skirt_indices) = if skirts {
            let side = n as usize + 1;
            (4 * side, 4 * 6 * (side - 1))
        } else {
            (0, 0)
        };
        self.fill_axes(input, n, options.uv_scale);
        self.fill_vertices(input, n, skirt_vertices, out);
        if self.template_key != Some((n, stitch)) {
            self.template.clear();
            build_surface_indices(n, stitch, &mut self.template);
            self.template_key = Some((n, stitch));
        }
        out.indices.reserve(self.template.len() + skirt_indices);
        out.indices.extend_from_slice(&self.template);
        out.skirt_vertex_start = out.positions.len() as u32;
        out.skirt_index_start = out.indices.len() as u32;
        if skirts {
            add_skirts(n, stitch, options.skirt_depth, out);
        }
        Ok(())
    }

    /// World x of every vertex column and z of every vertex row, by the one
    /// position formula, and their texture coordinates.
    fn fill_axes(&mut self, input: &HeightChunkInput<'_>, n: u32, uv_scale: f32) {
        let step = 1i64 << input.lod;
        let cs = f64::from(input.cell_size);
        let axis = |out: &mut Vec<f32>, chunk: i32, origin: f32| {
            out.clear();
            let base = i64::from(chunk) * i64::from(input.cells);
            for i in 0..=i64::from(n) {
                let node = base + i * step;
                out.push((f64::from(origin) + node as f64 * cs) as f32);
            }
        };
        axis(&mut self.xs, input.chunk[0], input.origin[0]);
        axis(&mut self.zs, input.chunk[1], input.origin[1]);
        self.us.clear();
        self.us.extend(self.xs.iter().map(|x| x / uv_scale));
        self.vs.clear();
        self.vs.extend(self.zs.iter().map(|z| z / uv_scale));
    }

    /// The surface vertices, with room for `extra` more (the skirts).
    fn fill_vertices(
        &self,
        input: &HeightChunkInput<'_>,
        n: u32,
        extra: usize,
        out: &mut HeightmapMesh,
    ) {
        let h = input.heights;
        let side = n as usize + 3;
        let v = n as usize + 1;
        let count = v * v + extra;
        out.positions.reserve(count);
        out.normals.reserve(count);
        out.uvs.reserve(count);
        out.morph.reserve(count);
        out.morph_targets.reserve(count);
        let two_step = 2.0 * f64::from(1u32 << input.lod) * f64::from(input.cell_size);
        let two_step2 = two_step * two_step;
        let has_coarser = n >= 2;
        let (xs, us) = (&self.xs[..v], &self.us[..v]);
        for j in 0..v {
            let z = self.zs[j];
            let uv_v = self.vs[j];
            // Vertex row `j` is sample row `j + 1`; `below` and `above` are the
            // sample rows at `j` and `j + 2`, each starting one column left of
            // vertex 0.
            let below = &h[j * side..j * side + side];
            let mid = &h[(j + 1) * side..(j + 1) * side + side];
            let above = &h[(j + 2) * side..(j + 2) * side + side];
            let odd_j = j & 1 == 1;
            for i in 0..v {
                let height = mid[i + 1];
                out.positions.push([xs[i], height, z]);
                let dx = f64::from(mid[i]) - f64::from(mid[i + 2]);
                let dz = f64::from(below[i + 1]) - f64::from(above[i + 1]);
                let inv = 1.0 / (dx * dx + two_step2 + dz * dz).sqrt();
                out.normals.push([
                    (dx * inv) as f32,
                    (two_step * inv) as f32,
                    (dz * inv) as f32,
                ]);
                out.uvs.push([us[i], uv_v]);
                let pair = match (has_coarser, i & 1 == 1, odd_j) {
                    (false, _, _) | (true, false, false) => None,
                    (true, true, false) => Some((mid[i], mid[i + 2])),
                    (true, false, true) => Some((below[i + 1], above[i + 1])),
                    (true, true, true) => Some((below[i], above[i + 2])),
                };
                match pair {
                    None => {
                        out.morph.push(0.0);
                        out.morph_targets.push(height);
                    }
                    Some((a, b)) => {
                        out.morph.push(1.0);
                        out.morph_targets
                            .push(((f64::from(a) + f64::from(b)) * 0.5) as f32);
                    }
                }
            }
        }
    }
}

/// The vertex that grid vertex `(i, j)` stands for after folding the odd
/// vertices of stitched edges onto the even vertex before them.
#[inline]
fn folded(n: u32, stitch: u8, i: u32, j: u32) -> u32 {
    let (mut i, mut j) = (i, j);
    if (j == 0 && stitch & NEG_Z != 0) || (j == n && stitch & POS_Z != 0) {
        i &= !1;
    }
    if (i == 0 && stitch & NEG_X != 0) || (i == n && stitch & POS_X != 0) {
        j &= !1;
    }
    j * (n + 1) + i
}

#[inline]
fn push_triangle(out: &mut Vec<u32>, a: u32, b: u32, c: u32) {
    if a != b && b != c && a != c {
        out.extend_from_slice(&[a, b, c]);
    }
}

/// Surface triangles of an `n x n` cell grid with the given stitched edges.
fn build_surface_indices(n: u32, stitch: u8, out: &mut Vec<u32>) {
    let v = n + 1;
    out.reserve(6 * n as usize * n as usize);
    for j in 0..n {
        let edge_row = j == 0 || j + 1 == n;
        for i in 0..n {
            let (v00, v10, v01, v11) = if stitch != 0 && (edge_row || i == 0 || i + 1 == n) {
                (
                    folded(n, stitch, i, j),
                    folded(n, stitch, i + 1, j),
                    folded(n, stitch, i, j + 1),
                    folded(n, stitch, i + 1, j + 1),
                )
            } else {
                let v00 = j * v + i;
                (v00, v00 + 1, v00 + v, v00 + v + 1)
            };
            push_triangle(out, v00, v01, v11);
            push_triangle(out, v00, v11, v10);
        }
    }
}

/// The used border vertices of `side`, in the order that makes the skirt face
/// outward: −z by increasing x, +x by increasing z, +z by decreasing x, −x by
/// decreasing z.
fn border_vertex(n: u32, side: ChunkSide, t: u32) -> u32 {
    let v = n + 1;
    match side {
        ChunkSide::NegZ => t,
        ChunkSide::PosX => t * v + n,
        ChunkSide::PosZ => n * v + (n - t),
        ChunkSide::NegX => (n - t) * v,
    }
}

fn add_skirts(n: u32, stitch: u8, depth: f32, out: &mut HeightmapMesh) {
    for side in [
        ChunkSide::NegZ,
        ChunkSide::PosX,
        ChunkSide::PosZ,
        ChunkSide::NegX,
    ] {
        let step = if stitch & (1 << side.index()) != 0 {
            2
        } else {
            1
        };
        let first_bottom = out.positions.len() as u32;
        let mut count = 0u32;
        let mut t = 0;
        while t <= n {
            let top = border_vertex(n, side, t) as usize;
            let [x, y, z] = out.positions[top];
            out.positions.push([x, y - depth, z]);
            out.normals.push(out.normals[top]);
            out.uvs.push(out.uvs[top]);
            out.morph.push(out.morph[top]);
            out.morph_targets.push(out.morph_targets[top] - depth);
            count += 1;
            t += step;
        }
        for k in 0..count - 1 {
            let a = border_vertex(n, side, k * step);
            let b = border_vertex(n, side, (k + 1) * step);
            let (ab, bb) = (first_bottom + k, first_bottom + k + 1);
            out.indices.extend_from_slice(&[a, b, ab, b, bb, ab]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(n: u32) -> Vec<f32> {
        vec![0.0; (n as usize + 3) * (n as usize + 3)]
    }

    #[test]
    fn flat_chunk_has_grid_counts_and_up_normals() {
        let h = flat(4);
        let input = HeightChunkInput::new(&h).with_cells(4);
        let mut mesh = HeightmapMesh::default();
        HeightmapMesher::new()
            .mesh(&input, &HeightmapOptions::DEFAULT, &mut mesh)
            .unwrap();
        assert_eq!(mesh.vertex_count(), 25);
        assert_eq!(mesh.triangle_count(), 32);
        assert!(mesh.normals.iter().all(|n| *n == [0.0, 1.0, 0.0]));
        assert_eq!(mesh.positions[6], [1.0, 0.0, 1.0]);
        assert_eq!(mesh.skirt_indices(), &[] as &[u32]);
    }

    #[test]
    fn folded_moves_odd_edge_vertices_only() {
        let n = 4;
        assert_eq!(folded(n, NEG_Z, 1, 0), 0);
        assert_eq!(folded(n, NEG_Z, 3, 0), 2);
        assert_eq!(folded(n, NEG_Z, 3, 1), 5 + 3);
        assert_eq!(folded(n, POS_X, 4, 3), 2 * 5 + 4);
        assert_eq!(folded(n, NEG_X | NEG_Z, 0, 1), 0);
        assert_eq!(folded(n, 0, 3, 0), 3);
    }

    #[test]
    fn morph_blend_ramps_and_clamps() {
        assert_eq!(morph_blend(5.0, 10.0, 20.0), 0.0);
        assert_eq!(morph_blend(15.0, 10.0, 20.0), 0.5);
        assert_eq!(morph_blend(25.0, 10.0, 20.0), 1.0);
        assert_eq!(morph_blend(f32::NAN, 10.0, 20.0), 0.0);
        assert_eq!(morph_blend(10.0, 10.0, 10.0), 1.0);
        assert_eq!(morph_blend(9.0, 10.0, 10.0), 0.0);
    }
}
