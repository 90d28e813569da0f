//! Crack-free marching cubes between chunks of different levels of detail.
//!
//! The design, the position formula and the caller's rules are written on
//! [`LodMesher`].

use super::sink::{Sink, VecSink};
use super::tables::{CENTRE, corner, edge_corners, face_corners, tables};
use super::{CellBox, CubesOptions, CubesOutput};
use crate::MeshError;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A small multiplicative hasher for the integer keys of the triangulation
/// cache.
#[derive(Debug, Default, Clone, Copy)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 31)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(23) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write_u32(&mut self, x: u32) {
        self.write_u64(x as u64);
    }
}

/// Recipe tag: a loop fanned from one of its points (triangle count follows).
const FAN: u8 = 0;
/// Recipe tag: a loop around a centre vertex (point count follows).
const CENTRED: u8 = 1;
/// Recipe tag: no more loops.
const END: u8 = 2;
/// Bytes of encoded triangulations kept before the cache starts over.
const MAX_RECIPE_BYTES: usize = 1 << 22;

/// Largest chunk size (cells per axis) accepted by [`LodMesher`].
pub const MAX_LOD_CELLS: u32 = 256;

/// Largest LOD accepted by [`LodMesher`].
pub const MAX_LOD: u8 = 20;

/// One chunk for [`LodMesher::mesh`]: its samples at its own LOD and, on the
/// faces that touch a finer chunk, the fine samples of the face.
///
/// Faces are numbered `f = 2 * axis + side` (`axis` 0 = x, 1 = y, 2 = z; `side` 1
/// on the plus side). Chunk edges are numbered `e = 4 * axis + u + 2 * v`, where
/// `axis` is the edge's direction and `u`, `v` are its sides (0 minus, 1 plus)
/// along the other two axes in increasing order (so edge 0 runs along x at
/// `y = 0, z = 0` and edge 11 along z at the plus ends of x and y).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct LodChunkInput<'a> {
    /// The chunk's `(cells + 1)^3` samples at its LOD (x fastest, then y, then z):
    /// node `(i, j, k)` is base node `base_node + (i, j, k) * 2^lod`.
    pub samples: &'a [f32],
    /// Cells per axis, `1..=`[`MAX_LOD_CELLS`].
    pub cells: u32,
    /// The chunk's LOD, `0..=`[`MAX_LOD`]; it samples every `2^lod` base nodes.
    pub lod: u8,
    /// Global base-grid index of the chunk's first node.
    pub base_node: [i64; 3],
    /// Size of a base cell in world units (finite, positive).
    pub base_cell_size: f32,
    /// Bit `f` set when the neighbour across face `f` is at LOD `lod - 1`.
    pub finer_faces: u8,
    /// Bit `e` set when the neighbour across chunk edge `e` (the chunk that
    /// touches this one along that edge only) is at LOD `lod - 1`. The edges of
    /// a face in `finer_faces` are refined anyway.
    pub finer_edges: u16,
    /// Fine samples of face `f`: `(2 * cells + 1)^2` values at LOD `lod - 1`,
    /// row-major over the face's two other axes in increasing order (the lower
    /// axis fastest). Required for every face in `finer_faces` and for at least
    /// one of the two faces of every edge in `finer_edges`.
    pub fine_faces: [Option<&'a [f32]>; 6],
    /// Optional samples for the gradient normals: `(cells + 3)^3` values at the
    /// chunk's LOD, x fastest, then y, then z, where index
    /// `((k + 1) * (cells + 3) + (j + 1)) * (cells + 3) + (i + 1)` holds node
    /// `(i, j, k)` for `i, j, k` in `-1..=cells + 1` (base node
    /// `base_node + (i, j, k) * 2^lod`). Its inner `(cells + 1)^3` nodes must
    /// equal [`samples`](Self::samples) bit for bit (checked). With it every
    /// node gradient is a central difference, so chunks of the same LOD give
    /// bit-identical normals on the faces they share; without it the gradients
    /// are one-sided on the chunk's first and last node of each axis.
    pub apron: Option<&'a [f32]>,
    /// Optional fine samples around face `f`, for the normals of the vertices
    /// the chunk shares with its finer neighbours: the nodes at LOD `lod - 1`
    /// of a box that is 3 nodes thick across the face and `2 * cells + 3` wide
    /// along the face's two axes, x fastest, then y, then z. The box starts one
    /// fine step before the face's first fine node on every axis, so its middle
    /// layer holds the face and one ring around it, and its inner
    /// `(2 * cells + 1)^2` nodes of that layer must equal
    /// [`fine_faces`](Self::fine_faces)`[f]` bit for bit (checked). Used only
    /// where `fine_faces[f]` is given. With it, the vertices on the refined
    /// parts of the face (a refined face, or a chunk edge in
    /// [`finer_edges`](Self::finer_edges)) get their normals from central
    /// differences at the fine spacing, exactly as the finer chunk computes
    /// them from its own [`apron`](Self::apron).
    pub fine_aprons: [Option<&'a [f32]>; 6],
    /// Optional material ids, one per node of [`samples`](Self::samples) in
    /// the same layout. When present, every output vertex gets the id of the
    /// solid node of its edge in [`CubesOutput::materials`].
    pub materials: Option<&'a [u8]>,
}

impl<'a> LodChunkInput<'a> {
    /// A chunk with no finer neighbour, at base node `0` with unit base cells.
    pub fn new(samples: &'a [f32], cells: u32, lod: u8) -> Self {
        LodChunkInput {
            samples,
            cells,
            lod,
            base_node: [0; 3],
            base_cell_size: 1.0,
            finer_faces: 0,
            finer_edges: 0,
            fine_faces: [None; 6],
            fine_aprons: [None; 6],
            apron: None,
            materials: None,
        }
    }

    /// Sets [`apron`](Self::apron): `(cells + 3)^3` samples of the nodes
    /// `-1..=cells + 1` on each axis.
    pub fn with_apron(mut self, apron: &'a [f32]) -> Self {
        self.apron = Some(apron);
        self
    }

    /// Sets [`materials`](Self::materials): `(cells + 1)^3` material ids laid out
    /// like the samples.
    pub fn with_materials(mut self, materials: &'a [u8]) -> Self {
        self.materials = Some(materials);
        self
    }

    /// Sets [`base_node`](Self::base_node).
    pub fn with_base_node(mut self, base_node: [i64; 3]) -> Self {
        self.base_node = base_node;
        self
    }

    /// Sets [`base_cell_size`](Self::base_cell_size).
    pub fn with_base_cell_size(mut self, base_cell_size: f32) -> Self {
        self.base_cell_size = base_cell_size;
        self
    }

    /// Marks face `face` (`0..6`) as bordering a finer chunk whose face samples
    /// are `fine` (see [`fine_faces`](Self::fine_faces)). A face outside `0..6`
    /// is ignored.
    pub fn with_finer_face(mut self, face: u8, fine: &'a [f32]) -> Self {
        if face < 6 {
            self.finer_faces |= 1 << face;
            self.fine_faces[face as usize] = Some(fine);
        }
        self
    }

    /// Marks chunk edge `edge` (`0..12`) as touching a finer chunk. An edge
    /// outside `0..12` is ignored.
    pub fn with_finer_edge(mut self, edge: u8) -> Self {
        if edge < 12 {
            self.finer_edges |= 1 << edge;
        }
        self
    }

    /// Supplies the fine samples of face `face` without marking it finer (for a
    /// face whose only refined parts are edges in [`finer_edges`](Self::finer_edges)).
    /// A face outside `0..6` is ignored.
    pub fn with_fine_face_samples(mut self, face: u8, fine: &'a [f32]) -> Self {
        if face < 6 {
            self.fine_faces[face as usize] = Some(fine);
        }
        self
    }

    /// Sets [`fine_aprons`](Self::fine_aprons)`[face]`: the `3 * (2 * cells + 3)^2`
    /// fine samples around face `face` (`0..6`). A face outside `0..6` is ignored.
    pub fn with_fine_apron(mut self, face: u8, fine_apron: &'a [f32]) -> Self {
        if face < 6 {
            self.fine_aprons[face as usize] = Some(fine_apron);
        }
        self
    }

    /// Number of transition cells (cells with at least one refined edge); `0`
    /// for invalid input.
    pub fn transition_cell_count(&self) -> u64 {
        let n = self.cells;
        if n == 0 || n > MAX_LOD_CELLS {
            return 0;
        }
        let g = Geometry::new(self);
        let mut count = 0;
        for k in 0..n {
            for j in 0..n {
                for i in 0..n {
                    if g.cell_splits([i, j, k]).0 != 0 {
                        count += 1;
                    }
                }
            }
        }
        count
    }
}

/// Which edges and faces of the chunk boundary are refined.
#[derive(Clone, Copy)]
struct Geometry {
    n: u32,
    finer_faces: u8,
    finer_edges: u16,
}

impl Geometry {
    fn new(input: &LodChunkInput<'_>) -> Self {
        Geometry {
            n: input.cells,
            finer_faces: input.finer_faces,
            finer_edges: input.finer_edges,
        }
    }

    /// The class of cell `c`: bit `a` set when it touches the minus face of
    /// axis `a`, bit `3 + a` when it touches the plus face.
    #[inline(always)]
    fn class_of(&self, c: [u32; 3]) -> usize {
        let last = self.n - 1;
        let mut class = 0;
        for (a, &ca) in c.iter().enumerate() {
            if ca == 0 {
                class |= 1 << a;
            }
            if ca == last {
                class |= 8 << a;
            }
        }
        class
    }

    /// The refined edges (bit `e`, cube edge numbering) and refined faces (bit
    /// `f`) of the cells of `class`.
    fn class_splits(&self, class: usize) -> (u16, u8) {
        let mut faces_on = 0u8;
        for a in 0..3 {
            if class & (1 << a) != 0 {
                faces_on |= 1 << (2 * a);
            }
            if class & (8 << a) != 0 {
                faces_on |= 1 << (2 * a + 1);
            }
        }
        let mut edges = 0u16;
        for e in 0..12u8 {
            let axis = (e / 4) as usize;
            let (lo, _) = edge_corners(e);
            let cc = corner(lo);
            let mut faces = 0u8;
            let mut sides = [0usize; 2];
            let mut on = 0;
            for (slot, b) in (0..3).filter(|&b| b != axis).enumerate() {
                let f = 2 * b + cc[b] as usize;
                if faces_on & (1 << f) != 0 {
                    faces |= 1 << f;
                    sides[slot] = cc[b] as usize;
                    on += 1;
                }
            }
            let split = faces & self.finer_faces != 0
                || (on == 2 && self.finer_edges & (1 << (4 * axis + sides[0] + 2 * sides[1])) != 0);
            if split {
                edges |= 1 << e;
            }
        }
        (edges, faces_on & self.finer_faces)
    }

    /// The refined edges and faces of cell `c`.
    fn cell_splits(&self, c: [u32; 3]) -> (u16, u8) {
        self.class_splits(self.class_of(c))
    }
}

/// Local node index of a transition cell (`0..27`) from local half-cell
/// coordinates in `0..=2`.
const fn local(l: [u8; 3]) -> u8 {
    l[0] + 3 * l[1] + 9 * l[2]
}

const fn local_coords(n: u8) -> [u8; 3] {
    LOCAL_COORDS[n as usize]
}

/// Local half-cell coordinates of the 27 local nodes.
const LOCAL_COORDS: [[u8; 3]; 27] = {
    let mut t = [[0u8; 3]; 27];
    let mut n = 0;
    while n < 27 {
        t[n] = [(n % 3) as u8, ((n / 3) % 3) as u8, (n / 9) as u8];
        n += 1;
    }
    t
};

/// The cube edge between corners `a` and `b` (one bit apart).
fn edge_between(a: u8, b: u8) -> u8 {
    let axis = (a ^ b).trailing_zeros() as u8;
    let c = corner(a.min(b));
    let r = match axis {
        0 => c[1] | (c[2] << 1),
        1 => c[0] | (c[2] << 1),
        _ => c[0] | (c[1] << 1),
    };
    axis * 4 + r
}

/// The boundary of a transition cell: face cycles of local nodes,
/// counter-clockwise seen from outside.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CellShape {
    cycles: [[u8; 8]; 24],
    /// `subs[c][j]`: the sub-edge id ([`sub_edge`]) from node `j` of cycle `c`
    /// to the next one.
    subs: [[u8; 8]; 24],
    /// Bit `n` of `masks[c]` set for every local node of cycle `c`.
    masks: [u32; 24],
    lens: [u8; 24],
    count: u8,
    /// Bit `n` set for every local node on the boundary.
    nodes: u32,
}

impl CellShape {
    /// The shape with refined cube edges `edges` and refined faces `faces`.
    pub(crate) fn new(edges: u16, faces: u8) -> Self {
        let mut s = CellShape {
            cycles: [[0; 8]; 24],
            subs: [[0; 8]; 24],
            masks: [0; 24],
            lens: [0; 24],
            count: 0,
            nodes: 0,
        };
        let node = |k: u8| local(corner(k).map(|c| 2 * c));
        let mid = |a: u8, b: u8| {
            let (ca, cb) = (corner(a), corner(b));
            local([0, 1, 2].map(|i| ca[i] + cb[i]))
        };
        for f in 0..6u8 {
            let q = face_corners(f);
            if faces & (1 << f) != 0 {
                let centre = {
                    let (c0, c2) = (corner(q[0]), corner(q[2]));
                    local([0, 1, 2].map(|i| c0[i] + c2[i]))
                };
                for j in 0..4 {
                    let prev = q[(j + 3) % 4];
                    let next = q[(j + 1) % 4];
                    s.push(&[node(q[j]), mid(q[j], next), centre, mid(prev, q[j])]);
                }
            } else {
                let mut cyc = [0u8; 8];
                let mut len = 0;
                for j in 0..4 {
                    let (a, b) = (q[j], q[(j + 1) % 4]);
                    cyc[len] = node(a);
                    len += 1;
                    if edges & (1 << edge_between(a, b)) != 0 {
                        cyc[len] = mid(a, b);
                        len += 1;
                    }
                }
                s.push(&cyc[..len]);
            }
        }
        s
    }

    fn push(&mut self, cyc: &[u8]) {
        let i = self.count as usize;
        self.cycles[i][..cyc.len()].copy_from_slice(cyc);
        for j in 0..cyc.len() {
            self.subs[i][j] = sub_edge(cyc[j], cyc[(j + 1) % cyc.len()]);
            self.masks[i] |= 1 << cyc[j];
        }
        self.lens[i] = cyc.len() as u8;
        self.count += 1;
        for &n in cyc {
            self.nodes |= 1 << n;
        }
    }
}

/// The loops of one transition cell: points are grid sub-edges given by their
/// two local nodes (lower first).
#[derive(Clone, Copy)]
pub(crate) struct CellLoops {
    /// Sub-edges of the crossing points.
    pub points: [[u8; 2]; 48],
    pub point_count: u8,
    /// `next[p]`: the point the segment starting at `p` ends on.
    pub next: [u8; 48],
    /// The cube face planes each point's sub-edge lies on ([`SUB_PLANES`]).
    pub planes: [u8; 48],
}

/// Local node steps of the segments of a cell's face cycles: half a cell or a
/// whole cell along x, y or z.
const SEGMENT_STEPS: [u8; 6] = [1, 3, 9, 2, 6, 18];

/// The id of the cycle segment between local nodes `a` and `b` (half a cell
/// or a whole cell apart along one axis): `6 * lower + k` with
/// `SEGMENT_STEPS[k] = |a - b|`, below 162.
const fn sub_edge(a: u8, b: u8) -> u8 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    let k = match hi - lo {
        1 => 0,
        3 => 1,
        9 => 2,
        2 => 3,
        6 => 4,
        _ => 5,
    };
    6 * lo + k
}

/// Per segment id ([`sub_edge`]): bit `2 * axis + side` for every cube face
/// plane the segment lies on.
const SUB_PLANES: [u8; 162] = {
    let mut t = [0u8; 162];
    let mut id = 0;
    while id < 162 {
        let lo = (id / 6) as u8;
        let k = id % 6;
        let hi = lo as usize + SEGMENT_STEPS[k] as usize;
        if hi < 27 && local_coords(lo)[k % 3] as usize + 1 + k / 3 <= 2 {
            t[id] = planes([lo, hi as u8]);
        }
        id += 1;
    }
    t
};

/// Traces the loops of a transition cell with node values `vals` (only the
/// shape's nodes are read).
#[cfg(test)]
pub(crate) fn trace(shape: &CellShape, vals: &[f32; 27], iso: f32) -> CellLoops {
    let mut solid_nodes = 0u32;
    let mut nodes = shape.nodes;
    while nodes != 0 {
        let n = nodes.trailing_zeros();
        nodes &= nodes - 1;
        solid_nodes |= ((vals[n as usize] >= iso) as u32) << n;
    }
    trace_signs(shape, vals, iso, solid_nodes)
}

/// [`trace`] with the signs of the shape's nodes given: bit `n` of
/// `solid_nodes` set when local node `n` is solid.
fn trace_signs(shape: &CellShape, vals: &[f32; 27], iso: f32, solid_nodes: u32) -> CellLoops {
    let mut lp = CellLoops {
        points: [[0; 2]; 48],
        point_count: 0,
        next: [u8::MAX; 48],
        planes: [0; 48],
    };
    // Point of each sub-edge, by sub-edge id.
    let mut slot = [u8::MAX; 162];
    for c in 0..shape.count as usize {
        let on = solid_nodes & shape.masks[c];
        if on == 0 || on == shape.masks[c] {
            continue;
        }
        let m = shape.lens[c] as usize;
        let cyc = &shape.cycles[c];
        let mut bits = 0u32;
        for (j, &node) in cyc[..m].iter().enumerate() {
            bits |= ((solid_nodes >> node) & 1) << j;
        }
        // Bit `j`: node `j` and the next one differ.
        let next_bits = (bits >> 1) | ((bits & 1) << (m - 1));
        let mut crossing = bits ^ next_bits;
        if crossing == 0 {
            continue;
        }
        let mut cross = [0u8; 8];
        let mut rising = [false; 8];
        let mut count = 0;
        while crossing != 0 {
            let j = crossing.trailing_zeros() as usize;
            crossing &= crossing - 1;
            let sub = shape.subs[c][j];
            let mut p = slot[sub as usize];
            if p == u8::MAX {
                p = lp.point_count;
                let (a, b) = (cyc[j], cyc[if j + 1 == m { 0 } else { j + 1 }]);
                lp.points[p as usize] = if a < b { [a, b] } else { [b, a] };
                lp.planes[p as usize] = SUB_PLANES[sub as usize];
                lp.point_count += 1;
                slot[sub as usize] = p;
            }
            cross[count] = p;
            rising[count] = bits & (1 << j) == 0;
            count += 1;
        }
        let joined = if m == 4 && count == 4 {
            let v = |j: usize| vals[cyc[j] as usize] - iso;
            let (s, a) = if bits & 1 != 0 {
                (v(0) * v(2), v(1) * v(3))
            } else {
                (v(1) * v(3), v(0) * v(2))
            };
            s >= a
        } else {
            2 * bits.count_ones() as usize >= m
        };
        for i in 0..count {
            if rising[i] {
                let to = if joined {
                    cross[(i + count - 1) % count]
                } else {
                    cross[(i + 1) % count]
                };
                lp.next[cross[i] as usize] = to;
            }
        }
    }
    lp
}

/// Bit `2 * axis + side` for every cube face plane the sub-edge lies on.
const fn planes(p: [u8; 2]) -> u8 {
    let (a, b) = (local_coords(p[0]), local_coords(p[1]));
    let mut m = 0;
    let mut q = 0;
    while q < 3 {
        if a[q] == b[q] {
            if a[q] == 0 {
                m |= 1 << (2 * q);
            } else if a[q] == 2 {
                m |= 1 << (2 * q + 1);
            }
        }
        q += 1;
    }
    m
}

/// Triangulates a loop of point slots into `tris` (counter-clockwise seen from
/// the air side, as the loop runs). Returns `false` when the loop needs a centre
/// vertex (then nothing is written).
pub(crate) fn triangulate_loop(
    lp: &CellLoops,
    poly: &[u8],
    tris: &mut impl FnMut([u8; 3]),
) -> bool {
    let n = poly.len();
    if n == 3 {
        tris([poly[0], poly[1], poly[2]]);
        return true;
    }
    let pl = |i: usize| lp.planes[poly[i % n] as usize];
    for s in 0..n {
        if (2..n - 1).all(|i| pl(s) & pl(s + i) == 0) {
            for i in 1..n - 1 {
                tris([poly[s], poly[(s + i) % n], poly[(s + i + 1) % n]]);
            }
            return true;
        }
    }
    false
}

/// A reusable marching cubes mesher for chunks with LOD transitions.
///
/// A chunk of `N` cells per axis at LOD `k` covers `N * 2^k` base cells and
/// samples the field every `2^k` base nodes. Where a neighbour that touches the
/// chunk (across a face or a chunk edge) is one level finer, the chunk's outermost
/// cells become *transition cells*: each keeps its place and size (no shrinking,
/// so no vertex has to be moved afterwards and no special shader is needed), but
/// its boundary is refined to match the finer neighbour:
///
/// * a cell face lying on a chunk face whose neighbour is finer is split into
///   the four quads of the fine grid (nine nodes, read from the fine samples of
///   that face), each decided by the same asymptotic decider as the fine
///   neighbour's cells, so both sides draw the same segments on it;
/// * a cell edge lying on the chunk boundary gets its midpoint node when any chunk
///   touching that edge is finer, so the cells of every chunk around the edge see
///   the same polygons on their shared faces.
///
/// ```text
///      coarse chunk (LOD k)          | finer chunk (LOD k-1)
///   +-----------+-----------+--------o-----+-----+
///   |           |           |        |     |     |
///   |  regular  |  regular  | trans. o-----+-----+   o: fine nodes on the shared
///   |   cell    |   cell    |  cell  |     |     |      face, read from the
///   +-----------+-----------+--------o-----+-----+      `fine_faces` samples
/// ```
///
/// A transition cell is a polyhedron whose faces are quads or polygons with up
/// to eight nodes. Its surface is built like the regular cells' (see
/// `tables.rs`): on every face the iso-crossings are joined by directed segments
/// that keep the solid on their right seen from outside; a plain quad with four
/// crossings is decided by the asymptotic decider, a polygon with a midpoint and
/// four or more crossings joins its solid runs when at least half of its nodes are
/// solid (a rule of the face's values alone, so both cells that share it agree).
/// The segments close into loops; a loop is fanned from a point whose diagonals
/// cross the cell's interior, or around a centre vertex when there is none, so
/// no transition cell ever draws a chord on a face another cell could share.
/// Cells that touch no refined edge use the regular tables: a chunk without
/// finer neighbours goes through [`MarchingCubes`](crate::MarchingCubes)'s
/// scan, and so do the inner cells `[1, cells - 1)^3` of a chunk with transitions
/// (its outer layer is meshed around them, sharing the vertices on the inner
/// box's faces by grid edge; when a sample exactly at `iso` puts such a vertex
/// on a node, the whole chunk is meshed cell by cell instead). The outer layer
/// packs the signs of its coarse node rows and of the fine face rows into bit
/// words, so the cells whose nodes all have one sign are skipped 64 at a time;
/// only the others are meshed, with their crossed sub-edges' vertices kept in
/// flat arrays indexed by grid edge. A transition cell's loops depend only on
/// its shape, the signs of its nodes and the asymptotic decider of its quads
/// with four crossings, so each such pattern is traced and triangulated once
/// and replayed from a table the mesher keeps across calls.
///
/// # Positions
///
/// A vertex on a grid edge along axis `a` is measured in the frame of the chunk
/// that holds the edge at the edge's own resolution: the chunk itself for a
/// whole edge, the finer neighbour for half an edge of a refined face. With that
/// frame's first base node `base`, its step `step = 2^lod` base cells, the edge's
/// local lower node `i` (`0 <= i < cells`) and
/// `t = clamp((iso - v_a) / (v_b - v_a), 0, 1)` from the lower node to the upper
/// one, the coordinate along `a` is
/// `(base as f32 + (i as f32 + t) * step as f32) * base_cell_size` when `i + t`
/// is fractional, and the other coordinates are
/// `(global base node) as f32 * base_cell_size`. Every chunk that shares the edge
/// (at the same LOD, or a coarser chunk reading the finer one's face samples)
/// evaluates the same expression on the same numbers, so the positions on shared
/// faces are bit-identical. Keep `base_node` within ±2^24 for exact integer
/// coordinates.
///
/// # Rules for the caller
///
/// * The 2:1 rule holds for every pair of chunks that touch (by a face, an edge
///   or a corner): their LODs differ by at most one.
/// * The coarse side adapts: a chunk says which faces ([`LodChunkInput::finer_faces`])
///   and which chunk edges ([`LodChunkInput::finer_edges`]) touch a chunk one level
///   finer, and supplies the fine samples of those faces. The finer chunk meshes
///   as usual.
/// * Fine face samples at even positions are nodes of the chunk itself and must
///   equal its samples bit for bit (checked).
///
/// # Output
///
/// Positions are in world units (`base_node` and `base_cell_size` of the input),
/// triangles are counter-clockwise seen from outside the solid, vertices are
/// welded by grid edge inside a chunk.
///
/// Optional normals are `-∇f` normalised, as [`MarchingCubes`](crate::MarchingCubes)
/// computes them: node gradients are central differences at the chunk's own
/// spacing (over [`LodChunkInput::apron`] when given; one-sided on the chunk's
/// first and last node of each axis without it), and a vertex on the chunk-grid
/// edge from node `a` to node `b` takes `-(g_a + t * (g_b - g_a))` normalised
/// (the edge direction from its solid node to its air node where that vanishes).
/// With aprons, two chunks of the same LOD give bit-identical normals to the
/// vertices of the faces they share. Where this differs from the regular mesher:
/// a vertex whose coordinate falls exactly on a node takes that node's gradient;
/// a centre vertex of the inner regular scan takes the trilinear blend of the
/// node gradients at its position; a centre vertex of a transition cell takes
/// the normalised sum of its loop's normals.
///
/// On the refined parts of the boundary (refined faces and refined chunk
/// edges) the vertices are the finer neighbour's: a vertex on half an edge,
/// and a vertex exactly on a node there, takes the normal the finer chunk
/// computes for it, bit for bit, when the face's
/// [`fine_aprons`](LodChunkInput::fine_aprons) entry is given (fine node
/// gradients as central differences at the fine spacing, blended along the
/// half edge with its `t` in the finer chunk's frame, as above). So with
/// aprons on every chunk and fine aprons on the coarse side, every vertex two
/// chunks share (same LOD or one level apart) has one position and one normal.
/// The only vertices of a coarse chunk on such a face that the finer chunk
/// lacks are centres of loops lying flat on the face, whose triangles stay on
/// it. Without a fine apron, a half-edge vertex takes the trilinear blend of
/// the coarse node gradients at its position (close to, not equal to, the
/// finer neighbour's normal).
///
/// With [`LodChunkInput::materials`], every vertex on a chunk-grid edge takes
/// the id of the edge's solid node (of the node itself when it lies exactly on
/// one), a vertex on half an edge the id of the coarse node at or below its
/// solid fine node (halved coordinates rounded down), and a centre vertex the id
/// of the first vertex of its loop (the inner scan's centre vertices: the
/// nearest node). Mesh every
/// chunk of a world with this mesher (fine ones too): [`MarchingCubes::mesh`](crate::MarchingCubes::mesh)
/// measures positions from each chunk's own origin, so its seams match only up
/// to rounding.
///
/// # Example
///
/// ```
/// use isoterra_mesh::{CubesOptions, CubesOutput, LodChunkInput, LodMesher};
///
/// // A ball of radius 5 around base node (8, 4, 4), seen by a chunk of 4 cells
/// // at LOD 1 (it covers base nodes 0..=8 and samples every second node).
/// let ball = |x: i64, y: i64, z: i64| {
///     let d = [x as f32 - 8.0, y as f32 - 4.0, z as f32 - 4.0];
///     5.0 - (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
/// };
/// let mut samples = Vec::new();
/// for k in 0..5 {
///     for j in 0..5 {
///         for i in 0..5 {
///             samples.push(ball(2 * i, 2 * j, 2 * k));
///         }
///     }
/// }
/// // Its +x face (face 1) borders a chunk at LOD 0: pass that chunk's 9 x 9
/// // samples of the face (y fastest, then z).
/// let mut fine = Vec::new();
/// for z in 0..9 {
///     for y in 0..9 {
///         fine.push(ball(8, y, z));
///     }
/// }
/// let input = LodChunkInput::new(&samples, 4, 1).with_finer_face(1, &fine);
/// let mut out = CubesOutput::default();
/// LodMesher::new().mesh(&input, &CubesOptions::DEFAULT, &mut out).unwrap();
/// assert!(out.triangle_count() > 0);
/// ```
#[derive(Debug, Default, Clone)]
pub struct LodMesher {
    loop_ids: Vec<u32>,
    /// Per cell class: [`REGULAR`], [`UNKNOWN`] or an index into `resolved`.
    classes: Vec<u8>,
    resolved: Vec<Resolved>,
    /// The regular mesher, for chunks without finer neighbours.
    cubes: super::MarchingCubes,
    /// Sign bits of the chunk's node rows along x (see `pack_nodes`).
    node_bits: Vec<u64>,
    /// Sign bits of the node columns along y at the x faces (see `pack_nodes`).
    col_bits: Vec<u64>,
    /// Per refined face, per row of face cells: the cells with a solid fine
    /// node, then the cells with an air fine node (see `pack_faces`).
    face_bits: [Vec<u64>; 6],
    /// Sign bits of one refined face's fine samples, one row of words per
    /// fine row (see `pack_faces`).
    face_rows: Vec<u64>,
    /// Shapes resolved by earlier calls, by [`Resolved::key`].
    known: std::collections::HashMap<u64, Resolved>,
    /// Triangulations of transition cells by shape and signs
    /// ([`LodMesher::transition_cell`]): offsets into `recipe_bytes`.
    recipes: HashMap<(u64, u32), u32, BuildHasherDefault<KeyHasher>>,
    /// Encoded triangulations: the point count, per point its two local
    /// nodes, `axis | whole << 2` and its segment id ([`sub_edge`]), then per loop either `FAN` and its
    /// triangles or `CENTRED` and its points, and `END`.
    recipe_bytes: Vec<u8>,
    /// Vertex ids of whole chunk edges, three per node, valid where the
    /// matching `stamps` entry equals `stamp`.
    edge_ids: Vec<u32>,
    stamps: Vec<u32>,
    /// Vertex ids of half edges on the chunk faces, two per face node, with
    /// their stamps.
    fine_ids: Vec<u32>,
    fine_stamps: Vec<u32>,
    stamp: u32,
    /// Where each output vertex lies, for its normal and material.
    recs: Vec<Rec>,
    /// Loop vertex ids of the centre vertices in `recs`.
    centre_ids: Vec<u32>,
}

/// Where an output vertex lies, in the chunk's local node units.
#[derive(Debug, Clone, Copy)]
enum Rec {
    /// Exactly on node `g`.
    Node { g: [u32; 3] },
    /// On the chunk-grid edge from node `g` along `axis`, at `t` (strictly
    /// between the nodes).
    Edge { g: [u32; 3], axis: u8, t: f32 },
    /// On half an edge of a refined face: the local position and the coarse
    /// node whose material it takes.
    Point { p: [f32; 3], mat: [u32; 3] },
    /// On half an edge of a refined face, from fine node `h` (half-cell
    /// coordinates) along `axis`, at `t` of the fine edge, with the fine apron
    /// of face `face` for its normal.
    Fine {
        face: u8,
        h: [u32; 3],
        axis: u8,
        t: f32,
    },
    /// Exactly on fine node `h` of a refined part of face `face` (which has a
    /// fine apron).
    FineNode { face: u8, h: [u32; 3] },
    /// The centre of a loop whose vertex ids are
    /// `centre_ids[start..start + len]`.
    Centre { start: u32, len: u32 },
}

/// The record of a vertex at `g[axis] + t` on the edge from node `g` along
/// `axis`: a vertex whose coordinate is a whole number lies on a node (the
/// meshing uses [`edge_rec_up`], equal on its range).
#[cfg(test)]
fn edge_rec(g: [u32; 3], axis: usize, t: f32) -> Rec {
    let x = g[axis] as f32 + t;
    if x.fract() == 0.0 {
        let mut at = g;
        at[axis] = x as u32;
        Rec::Node { g: at }
    } else {
        Rec::Edge {
            g,
            axis: axis as u8,
            t,
        }
    }
}

/// Class slot: the cells of this class are regular.
const REGULAR: u8 = 254;
/// Class slot: not resolved yet in this call.
const UNKNOWN: u8 = 255;

/// A transition cell shape with the reads of its nodes resolved for one chunk.
#[derive(Debug, Clone, Copy)]
struct Resolved {
    shape: CellShape,
    /// Nodes read from the chunk samples, and their offsets from the cell's
    /// first corner.
    coarse_node: [u8; 8],
    coarse_off: [usize; 8],
    coarse_count: u8,
    /// Nodes read from fine face samples: the face, and the offset from the
    /// face cell's first fine node.
    fine_node: [u8; 19],
    fine: [(u8, usize); 19],
    fine_count: u8,
    /// Faces read by `fine`.
    fine_faces: u8,
    /// The refined cube edges and faces of the shape, `edges | faces << 12`.
    shape_key: u64,
    /// The shape's cycles of four nodes (the ones an asymptotic decider may
    /// split).
    quads: [u8; 24],
    quad_count: u8,
    /// Per segment id ([`sub_edge`]) of the shape: where its vertex is kept,
    /// relative to the cell ([`LodMesher::transition_cell`]): `WHOLE_SLOT` or
    /// the chunk face of a half edge in the high byte, the offset from the
    /// cell's first slot in the low 24 bits.
    slots: [u32; 162],
    /// The chunk faces the half edges of the shape lie on.
    slot_faces: u8,
}

/// [`Resolved::slots`] kind: a whole chunk-grid edge.
const WHOLE_SLOT: u32 = 6;

/// The two axes of a face of `axis`, in increasing order.
const fn face_axes(axis: usize) -> (usize, usize) {
    match axis {
        0 => (1, 2),
        1 => (0, 2),
        _ => (0, 1),
    }
}

impl Resolved {
    /// Everything [`Resolved::new`] depends on.
    fn key(input: &LodChunkInput<'_>, class: usize, edges: u16, faces: u8) -> u64 {
        let avail = (0..6).fold(0u64, |m, f| m | (input.fine_faces[f].is_some() as u64) << f);
        class as u64
            | (edges as u64) << 6
            | (faces as u64) << 18
            | avail << 24
            | (input.cells as u64) << 30
    }

    fn new(input: &LodChunkInput<'_>, class: usize, edges: u16, faces: u8) -> Self {
        let shape = CellShape::new(edges, faces);
        let s = input.cells as usize + 1;
        let side = 2 * input.cells as usize + 1;
        let mut r = Resolved {
            shape,
            coarse_node: [0; 8],
            coarse_off: [0; 8],
            coarse_count: 0,
            fine_node: [0; 19],
            fine: [(0, 0); 19],
            fine_count: 0,
            fine_faces: 0,
            shape_key: edges as u64 | (faces as u64) << 12,
            quads: [0; 24],
            quad_count: 0,
            slots: [0; 162],
            slot_faces: 0,
        };
        // The chunk face planes the cell lies on (bit `2 * axis + side`).
        let mut chunk_planes = 0u8;
        for b in 0..3 {
            if class & (1 << b) != 0 {
                chunk_planes |= 1 << (2 * b);
            }
            if class & (8 << b) != 0 {
                chunk_planes |= 1 << (2 * b + 1);
            }
        }
        for c in 0..shape.count as usize {
            for &sub in &shape.subs[c][..shape.lens[c] as usize] {
                let lo = sub / 6;
                let k = (sub % 6) as usize;
                let axis = k % 3;
                let l = local_coords(lo).map(|x| x as usize);
                r.slots[sub as usize] = if k >= 3 {
                    // `LodMesher::vertex_along`'s slot of a whole edge, less
                    // `3 * first` of the cell.
                    let g = l.map(|x| x / 2);
                    WHOLE_SLOT << 24 | (3 * ((g[2] * s + g[1]) * s + g[0]) + axis) as u32
                } else {
                    // Its slot of a half edge: on the first chunk face plane
                    // across an axis other than `axis`, less the face cell's
                    // first slot (twice its first fine node).
                    let on = SUB_PLANES[sub as usize] & chunk_planes;
                    debug_assert!(on != 0, "half edges lie on the chunk boundary");
                    let f = on.trailing_zeros() as usize;
                    let (u, v) = face_axes(f / 2);
                    r.slot_faces |= 1 << f;
                    ((f as u32) << 24)
                        | (2 * (f * side * side + l[v] * side + l[u]) + (axis == v) as usize) as u32
                };
            }
        }
        for c in 0..shape.count {
            if shape.lens[c as usize] == 4 {
                r.quads[r.quad_count as usize] = c;
                r.quad_count += 1;
            }
        }
        let mut bits = shape.nodes;
        while bits != 0 {
            let n = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            let l = local_coords(n);
            if l.iter().all(|c| c % 2 == 0) {
                let l = l.map(|c| (c / 2) as usize);
                let i = r.coarse_count as usize;
                r.coarse_node[i] = n;
                r.coarse_off[i] = (l[2] * s + l[1]) * s + l[0];
                r.coarse_count += 1;
                continue;
            }
            for b in 0..3 {
                let f = if l[b] == 0 && class & (1 << b) != 0 {
                    2 * b
                } else if l[b] == 2 && class & (8 << b) != 0 {
                    2 * b + 1
                } else {
                    continue;
                };
                if input.fine_faces[f].is_some() {
                    let (u, v) = face_axes(b);
                    let i = r.fine_count as usize;
                    r.fine_node[i] = n;
                    r.fine[i] = (f as u8, l[v] as usize * side + l[u] as usize);
                    r.fine_count += 1;
                    r.fine_faces |= 1 << f;
                    break;
                }
            }
        }
        // Group the fine reads by face (the order of the reads is free).
        let fc = r.fine_count as usize;
        let mut order: [usize; 19] = std::array::from_fn(|i| i);
        order[..fc].sort_by_key(|&i| r.fine[i].0);
        let (fine, fine_node) = (r.fine, r.fine_node);
        for (k, &i) in order[..fc].iter().enumerate() {
            r.fine[k] = fine[i];
            r.fine_node[k] = fine_node[i];
        }
        debug_assert_eq!(
            (r.coarse_count + r.fine_count) as u32,
            shape.nodes.count_ones(),
            "validated input has every fine sample"
        );
        r
    }
}

/// The layout of a fine apron ([`LodChunkInput::fine_aprons`]).
#[derive(Debug, Clone, Copy)]
struct FineApron {
    axis: usize,
    /// Strides of the box along x, y and z.
    stride: [usize; 3],
}

impl FineApron {
    fn new(face: u8, cells: u32) -> Self {
        let wide = 2 * cells as usize + 3;
        let axis = face as usize / 2;
        let mut dims = [wide; 3];
        dims[axis] = 3;
        FineApron {
            axis,
            stride: [1, dims[0], dims[0] * dims[1]],
        }
    }

    /// Index of the fine node at half-cell coordinates `h` (on the face's
    /// plane; the coordinate across the face is ignored).
    #[inline(always)]
    fn index(&self, h: [u32; 3]) -> usize {
        let mut i = 0;
        for (q, (&c, &st)) in h.iter().zip(&self.stride).enumerate() {
            let b = if q == self.axis { 1 } else { c as usize + 1 };
            i += b * st;
        }
        i
    }

    /// The gradient at fine node `h`: central differences at the fine
    /// spacing, as the finer chunk computes them over its apron.
    #[inline(always)]
    fn gradient(&self, ring: &[f32], h: [u32; 3]) -> [f32; 3] {
        let i = self.index(h);
        let st = self.stride;
        [0, 1, 2].map(|q| (ring[i + st[q]] - ring[i - st[q]]) * 0.5)
    }
}

/// Validated view of the input.
struct Chunk<'a> {
    input: &'a LodChunkInput<'a>,
    geo: Geometry,
    iso: f32,
    /// Base cells per chunk cell, `2^lod`.
    step: i64,
    /// The fine face samples, empty where absent.
    fines: [&'a [f32]; 6],
}

impl Chunk<'_> {
    /// A face with a fine apron whose plane holds the fine node at half-cell
    /// coordinates `h` (and the half edge from it along `along`, when
    /// `along < 3`), if any. With `refined_only`, the node must also lie on a
    /// refined part of the boundary (a face in `finer_faces`, or a chunk edge
    /// in `finer_edges`); otherwise it is known to.
    fn fine_face_of(&self, h: [u32; 3], along: usize, refined_only: bool) -> Option<u8> {
        let input = self.input;
        if input.fine_aprons.iter().all(Option::is_none) {
            return None;
        }
        let full = 2 * input.cells;
        let mut planes = 0u8;
        for (q, &c) in h.iter().enumerate() {
            if q == along {
                continue;
            }
            if c == 0 {
                planes |= 1 << (2 * q);
            } else if c == full {
                planes |= 1 << (2 * q + 1);
            }
        }
        let mut refined = !refined_only || planes & input.finer_faces != 0;
        if !refined {
            for e in 0..12u8 {
                let (b0, b1) = face_axes((e / 4) as usize);
                let edge_planes =
                    1 << (2 * b0 + (e & 1) as usize) | 1 << (2 * b1 + ((e >> 1) & 1) as usize);
                if input.finer_edges & (1 << e) != 0 && planes & edge_planes == edge_planes {
                    refined = true;
                }
            }
        }
        if !refined {
            return None;
        }
        (0..6u8).find(|&f| {
            planes & (1 << f) != 0
                && input.fine_faces[f as usize].is_some()
                && input.fine_aprons[f as usize].is_some()
        })
    }

    fn coarse(&self, i: [u32; 3]) -> f32 {
        let s = (self.input.cells + 1) as usize;
        self.input.samples[(i[2] as usize * s + i[1] as usize) * s + i[0] as usize]
    }
}

/// True when every value is finite: `v - v` is exactly `+0.0` for a finite
/// `v` and NaN for an infinite or NaN one, so the OR of their bits is zero
/// exactly when all are finite. One branch-free pass, which the compiler
/// vectorises (it may not fold `v - v`, which is not zero for every float).
#[allow(clippy::eq_op)]
fn all_finite(values: &[f32]) -> bool {
    values.iter().fold(0u32, |acc, v| acc | (v - v).to_bits()) == 0
}

/// Whether `a` and `b` (of one length) hold the same bits: one
/// branch-free pass that vectorises, for the common case where they do.
fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .fold(0u32, |acc, (x, y)| acc | (x.to_bits() ^ y.to_bits()))
            == 0
}

fn check_input(input: &LodChunkInput<'_>, iso: f32) -> Result<(), MeshError> {
    if !iso.is_finite() {
        return Err(MeshError::param("iso", iso, "must be finite"));
    }
    let n = input.cells;
    if n == 0 || n > MAX_LOD_CELLS {
        return Err(MeshError::param(
            "cells",
            n,
            "must be in 1..=256 cells per axis",
        ));
    }
    if input.lod > MAX_LOD {
        return Err(MeshError::param("lod", input.lod, "must be at most 20"));
    }
    if !(input.base_cell_size.is_finite() && input.base_cell_size > 0.0) {
        return Err(MeshError::param(
            "base_cell_size",
            input.base_cell_size,
            "must be finite and positive",
        ));
    }
    if input.base_node.iter().any(|c| c.unsigned_abs() > 1 << 40) {
        return Err(MeshError::param(
            "base_node",
            format!("{:?}", input.base_node),
            "coordinates must be within ±2^40",
        ));
    }
    if input.finer_faces >= 1 << 6 || input.finer_edges >= 1 << 12 {
        return Err(MeshError::param(
            "finer_faces / finer_edges",
            format!("{:#b} / {:#b}", input.finer_faces, input.finer_edges),
            "faces are bits 0..6 and chunk edges bits 0..12",
        ));
    }
    if input.lod == 0 && (input.finer_faces != 0 || input.finer_edges != 0) {
        return Err(MeshError::param(
            "lod",
            0,
            "a chunk at LOD 0 has no finer neighbour: clear finer_faces and finer_edges",
        ));
    }
    let s = n as usize + 1;
    if input.samples.len() != s * s * s {
        return Err(MeshError::LengthMismatch {
            name: "samples",
            expected: s * s * s,
            got: input.samples.len(),
        });
    }
    if !all_finite(input.samples)
        && let Some(i) = input.samples.iter().position(|v| !v.is_finite())
    {
        return Err(MeshError::NonFiniteSample {
            name: "samples",
            index: i,
            value: input.samples[i],
        });
    }
    let side = 2 * n as usize + 1;
    for f in 0..6u8 {
        if input.finer_faces & (1 << f) != 0 && input.fine_faces[f as usize].is_none() {
            return Err(MeshError::MissingFineSamples { face: f });
        }
        let Some(fine) = input.fine_faces[f as usize] else {
            continue;
        };
        if fine.len() != side * side {
            return Err(MeshError::LengthMismatch {
                name: "fine_faces",
                expected: side * side,
                got: fine.len(),
            });
        }
        if !all_finite(fine)
            && let Some(i) = fine.iter().position(|v| !v.is_finite())
        {
            return Err(MeshError::NonFiniteSample {
                name: "fine_faces",
                index: i,
                value: fine[i],
            });
        }
        // The even fine samples are the chunk's nodes on the face.
        let axis = f as usize / 2;
        let (a, b) = face_axes(axis);
        let stride = [1, s, s * s];
        let first = if f % 2 == 0 {
            0
        } else {
            n as usize * stride[axis]
        };
        let (su, sv) = (stride[a], stride[b]);
        for v in 0..s {
            let fine_row = &fine[2 * v * side..][..side];
            let row = first + v * sv;
            let coarse_row = &input.samples[row..=row + n as usize * su];
            let same = nodes_match(fine_row, coarse_row, su);
            if !same {
                let u = (0..s)
                    .find(|&u| fine_row[2 * u].to_bits() != input.samples[row + u * su].to_bits())
                    .unwrap_or(0);
                return Err(MeshError::FineSampleMismatch {
                    face: f,
                    index: 2 * v * side + 2 * u,
                });
            }
        }
    }
    for f in 0..6 {
        let (Some(fine), Some(ring)) = (input.fine_faces[f], input.fine_aprons[f]) else {
            continue;
        };
        let wide = side + 2;
        if ring.len() != 3 * wide * wide {
            return Err(MeshError::LengthMismatch {
                name: "fine_aprons",
                expected: 3 * wide * wide,
                got: ring.len(),
            });
        }
        if !all_finite(ring)
            && let Some(i) = ring.iter().position(|v| !v.is_finite())
        {
            return Err(MeshError::NonFiniteSample {
                name: "fine_aprons",
                index: i,
                value: ring[i],
            });
        }
        let lay = FineApron::new(f as u8, n);
        for v in 0..side {
            for u in 0..side {
                let mut h = [0u32; 3];
                let (a, b) = face_axes(f / 2);
                h[a] = u as u32;
                h[b] = v as u32;
                let i = lay.index(h);
                if ring[i].to_bits() != fine[v * side + u].to_bits() {
                    return Err(MeshError::param(
                        "fine_aprons",
                        i,
                        "must equal the fine face samples on the face",
                    ));
                }
            }
        }
    }
    for e in 0..12u8 {
        if input.finer_edges & (1 << e) == 0 {
            continue;
        }
        let axis = e / 4;
        let (b0, b1) = face_axes(axis as usize);
        let r = e % 4;
        let fa = 2 * b0 as u8 + (r & 1);
        let fb = 2 * b1 as u8 + (r >> 1);
        if input.fine_faces[fa as usize].is_none() && input.fine_faces[fb as usize].is_none() {
            return Err(MeshError::MissingFineSamples { face: fa });
        }
    }
    if let Some(m) = input.materials
        && m.len() != s * s * s
    {
        return Err(MeshError::LengthMismatch {
            name: "materials",
            expected: s * s * s,
            got: m.len(),
        });
    }
    if let Some(apron) = input.apron {
        let a = s + 2;
        if apron.len() != a * a * a {
            return Err(MeshError::LengthMismatch {
                name: "apron",
                expected: a * a * a,
                got: apron.len(),
            });
        }
        if !all_finite(apron)
            && let Some(i) = apron.iter().position(|v| !v.is_finite())
        {
            return Err(MeshError::NonFiniteSample {
                name: "apron",
                index: i,
                value: apron[i],
            });
        }
        for k in 0..s {
            for j in 0..s {
                let row = ((k + 1) * a + j + 1) * a + 1;
                let own = &input.samples[(k * s + j) * s..(k * s + j + 1) * s];
                let theirs = &apron[row..row + s];
                if !same_bits(own, theirs)
                    && let Some(i) = (0..s).find(|&i| own[i].to_bits() != theirs[i].to_bits())
                {
                    return Err(MeshError::param(
                        "apron",
                        row + i,
                        "must equal the chunk's own samples at its inner nodes",
                    ));
                }
            }
        }
    }
    Ok(())
}

impl LodMesher {
    /// A mesher with empty scratch buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Meshes every cell of the chunk into `out` (which is reset first), with
    /// transition cells on the faces and edges that touch a finer chunk.
    ///
    /// Uses [`CubesOptions::iso`] and [`CubesOptions::normals`]; fills
    /// [`CubesOutput::materials`] when the input has
    /// [`materials`](LodChunkInput::materials).
    ///
    /// # Errors
    ///
    /// [`MeshError::InvalidParameter`] for a non-finite `iso`, `cells` outside
    /// `1..=`[`MAX_LOD_CELLS`], `lod` above [`MAX_LOD`], a bad `base_cell_size`,
    /// out-of-range flag bits or finer neighbours at LOD 0;
    /// [`MeshError::LengthMismatch`] for a sample slice of the wrong length;
    /// [`MeshError::NonFiniteSample`] for NaN or infinite samples;
    /// [`MeshError::MissingFineSamples`] when a refined face or edge has no fine
    /// samples; [`MeshError::FineSampleMismatch`] when a fine face sample at a
    /// node of the chunk differs from the chunk's own sample. `apron` and
    /// `materials` of the wrong length give [`MeshError::LengthMismatch`], a
    /// non-finite apron sample [`MeshError::NonFiniteSample`], and an apron whose
    /// inner nodes differ from `samples` [`MeshError::InvalidParameter`]. On error `out` is
    /// left untouched.
    pub fn mesh(
        &mut self,
        input: &LodChunkInput<'_>,
        options: &CubesOptions,
        out: &mut CubesOutput,
    ) -> Result<(), MeshError> {
        check_input(input, options.iso)?;
        if self.recipe_bytes.len() > MAX_RECIPE_BYTES {
            self.recipes.clear();
            self.recipe_bytes.clear();
        }
        out.reset();
        self.recs.clear();
        self.centre_ids.clear();
        if input.finer_faces == 0 && input.finer_edges == 0 {
            self.mesh_regular(input, options, out);
            return Ok(());
        }
        let s = input.cells as usize + 1;
        let slots = 3 * s * s * s;
        if self.edge_ids.len() < slots {
            self.edge_ids.resize(slots, 0);
            self.stamps.resize(slots, 0);
        }
        let side = 2 * s - 1;
        let fine_slots = if input.finer_faces != 0 || input.finer_edges != 0 {
            12 * side * side
        } else {
            0
        };
        if self.fine_ids.len() < fine_slots {
            self.fine_ids.resize(fine_slots, 0);
            self.fine_stamps.resize(fine_slots, 0);
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.stamps.fill(0);
            self.fine_stamps.fill(0);
            self.stamp = 1;
        }
        let chunk = Chunk {
            input,
            geo: Geometry::new(input),
            iso: options.iso,
            step: 1i64 << input.lod,
            fines: input.fine_faces.map(|f| f.unwrap_or(&[])),
        };
        let n = input.cells;
        self.classes.clear();
        self.classes.resize(64, UNKNOWN);
        self.resolved.clear();
        // The inner cells go through the regular scan when its vertices on the
        // inner box's faces can be matched to their grid edges; the outer layer
        // of cells is meshed cell by cell around them.
        let inner = n >= 3 && self.mesh_inner(&chunk, out);
        if inner {
            self.mesh_outer(&chunk, out);
        } else {
            out.reset();
            self.recs.clear();
            self.centre_ids.clear();
            self.stamp_next();
            for k in 0..n {
                for j in 0..n {
                    for i in 0..n {
                        self.cell(&chunk, [i, j, k], out);
                    }
                }
            }
        }
        self.finish(input, options, out);
        Ok(())
    }

    /// Records the vertices the regular scan wrote to `out` from `from` on
    /// (positions still in local node units).
    #[cfg(test)]
    fn record_scan(&mut self, input: &LodChunkInput<'_>, iso: f32, from: usize, out: &CubesOutput) {
        let s = input.cells as usize + 1;
        for p in &out.positions[from..] {
            self.recs.push(scan_rec(*p, input.samples, s, iso));
        }
    }

    /// Fills the normals and materials of `out` from the vertex records.
    fn finish(&self, input: &LodChunkInput<'_>, options: &CubesOptions, out: &mut CubesOutput) {
        debug_assert_eq!(self.recs.len(), out.positions.len());
        let iso = options.iso;
        let n = input.cells;
        let s = n as usize + 1;
        let at = |g: [u32; 3]| (g[2] as usize * s + g[1] as usize) * s + g[0] as usize;
        let layouts: [FineApron; 6] = std::array::from_fn(|f| FineApron::new(f as u8, n));
        let ring = |f: u8| input.fine_aprons[f as usize].unwrap_or(&[]);
        if options.normals {
            let grads = Grads { input, n };
            out.normals.clear();
            for rec in &self.recs {
                let m = match *rec {
                    Rec::Node { .. } | Rec::Edge { .. } | Rec::Point { .. } => {
                        grid_normal(&grads, iso, rec)
                    }
                    Rec::Fine { face, h, axis, t } => {
                        let (lay, ring) = (&layouts[face as usize], ring(face));
                        let axis = axis as usize;
                        let ga = lay.gradient(ring, h);
                        let mut b = h;
                        b[axis] += 1;
                        let gb = lay.gradient(ring, b);
                        let v = [0, 1, 2].map(|q| ga[q] + t * (gb[q] - ga[q]));
                        outward(v, axis, ring[lay.index(h)] >= iso)
                    }
                    Rec::FineNode { face, h } => {
                        let (lay, ring) = (&layouts[face as usize], ring(face));
                        let solid = ring[lay.index(h)] >= iso;
                        outward(lay.gradient(ring, h), 1, !solid)
                    }
                    Rec::Centre { start, len } => {
                        let ids = &self.centre_ids[start as usize..(start + len) as usize];
                        let mut v = [0.0f32; 3];
                        for &id in ids {
                            let m = out.normals[id as usize];
                            for q in 0..3 {
                                v[q] += m[q];
                            }
                        }
                        let l = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
                        if l > 1e-6 {
                            v.map(|c| c / l)
                        } else {
                            out.normals[ids[0] as usize]
                        }
                    }
                };
                out.normals.push(m);
            }
        }
        if let Some(mats) = input.materials {
            out.materials.clear();
            for rec in &self.recs {
                let id = match *rec {
                    Rec::Node { .. } | Rec::Edge { .. } | Rec::Point { .. } => {
                        grid_material(mats, input.samples, s, iso, rec)
                    }
                    Rec::Fine { face, h, axis, .. } => {
                        let (lay, ring) = (&layouts[face as usize], ring(face));
                        let mut b = h;
                        if ring[lay.index(h)] < iso {
                            b[axis as usize] += 1;
                        }
                        mats[at(b.map(|c| c / 2))]
                    }
                    Rec::FineNode { h, .. } => mats[at(h.map(|c| c / 2))],
                    Rec::Centre { start, .. } => {
                        out.materials[self.centre_ids[start as usize] as usize]
                    }
                };
                out.materials.push(id);
            }
        }
    }

    /// Adds the centre vertex of the loop in `loop_ids` and returns its id.
    fn centre_vertex(&mut self, out: &mut CubesOutput) -> u32 {
        let start = self.centre_ids.len() as u32;
        self.centre_ids.extend_from_slice(&self.loop_ids);
        self.recs.push(Rec::Centre {
            start,
            len: self.loop_ids.len() as u32,
        });
        centre(&self.loop_ids, out)
    }

    /// Packs the signs of the chunk's node rows along x that the outer layer's
    /// full rows read (`j` or `k` in `{0, 1, n - 1, n}`) into `node_bits`, `wr`
    /// words per row (returned; the last word of a row stays zero; the other
    /// rows are left as they are), and the signs of the node columns along y
    /// at `x` in `{0, 1, n - 1, n}` into `col_bits`, `wc1` words per column,
    /// column `(4 * z + slot)` for the four `x` in that order.
    fn pack_nodes(&mut self, input: &LodChunkInput<'_>, iso: f32) -> usize {
        let n = input.cells as usize;
        let s = n + 1;
        let wr = s.div_ceil(64) + 1;
        self.node_bits.resize(s * s * wr, 0);
        let near = |j: usize| j <= 1 || j + 1 >= n;
        for k in 0..s {
            // All rows of the planes near the ends, rows `0, 1, n - 1, n`
            // of the others.
            let mut j = 0;
            while j < s {
                let row = &input.samples[(k * s + j) * s..][..s];
                let out = &mut self.node_bits[(k * s + j) * wr..][..wr];
                // The row fills all words but the spare one, which
                // `pack_row` zeroes.
                pack_row(row, iso, out);
                j = if j == 1 && !near(k) {
                    (n - 1).max(2)
                } else {
                    j + 1
                };
            }
        }
        let wc1 = wr;
        self.col_bits.clear();
        self.col_bits.resize(4 * s * wc1, 0);
        pack_columns(input.samples, s, iso, &mut self.col_bits, wc1);
        wr
    }

    /// Fills `face_bits` for the refined faces: per row `v` of face cells,
    /// `wc = ceil(n / 64)` words with bit `u` set when one of the nine fine
    /// nodes of face cell `(u, v)` is solid, then `wc` words with the bit set
    /// when one is air.
    fn pack_faces(&mut self, chunk: &Chunk<'_>) {
        let n = chunk.input.cells as usize;
        let side = 2 * n + 1;
        let wf = side.div_ceil(64) + 1;
        let wc = n.div_ceil(64);
        for f in 0..6 {
            if chunk.input.finer_faces & (1 << f) == 0 {
                continue;
            }
            // Row `r` of the face: `wf` words from `r * wf` (its bits past the
            // row cleared, the last word zero).
            let mut masks = [0u64; MAX_FINE_WORDS];
            for (w, m) in masks.iter_mut().enumerate().take(wf - 1) {
                *m = valid_bits(w, side);
            }
            self.face_rows.resize(side * wf, 0);
            for (row, words) in chunk.fines[f]
                .chunks_exact(side)
                .zip(self.face_rows.chunks_exact_mut(wf))
            {
                pack_row(row, chunk.iso, words);
            }
            let face_rows = &self.face_rows;
            let bits = &mut self.face_bits[f];
            bits.resize(n * 2 * wc, 0);
            for v in 0..n {
                // The three fine rows `2v..=2v + 2` of the face cells' nodes
                // (their spare words zero).
                let rows = &face_rows[2 * v * wf..(2 * v + 3) * wf];
                let (r0, rest) = rows.split_at(wf);
                let (r1, r2) = rest.split_at(wf);
                let mut solid = [0u64; MAX_FINE_WORDS];
                let mut air = [0u64; MAX_FINE_WORDS];
                for (((s, a), &m), ((&x, &y), &z)) in solid
                    .iter_mut()
                    .zip(air.iter_mut())
                    .zip(&masks)
                    .zip(r0.iter().zip(r1).zip(r2))
                    .take(wf - 1)
                {
                    *s = x | y | z;
                    *a = !(x & y & z) & m;
                }
                let out = &mut bits[v * 2 * wc..(v + 1) * 2 * wc];
                let any_solid = solid[..wf - 1].iter().fold(0, |m, &w| m | w);
                let any_air = air[..wf - 1].iter().fold(0, |m, &w| m | w);
                if any_solid == 0 || any_air == 0 {
                    // One sign on the three fine rows: every face cell (and
                    // the bit past the last one, as below) has it.
                    for c in 0..wc {
                        let full = valid_bits(c, n + 1);
                        out[c] = if any_solid != 0 { full } else { 0 };
                        out[wc + c] = if any_air != 0 { full } else { 0 };
                    }
                    continue;
                }
                for (k, words) in [&solid, &air].into_iter().enumerate() {
                    // Bit `2u` of `t`: one of the fine nodes `2u..=2u + 2`.
                    let t = |w: usize| {
                        words[w]
                            | (words[w] >> 1 | words[w + 1] << 63)
                            | (words[w] >> 2 | words[w + 1] << 62)
                    };
                    for c in 0..wc {
                        out[k * wc + c] = even_bits(t(2 * c)) | even_bits(t(2 * c + 1)) << 32;
                    }
                }
            }
        }
    }

    /// Meshes the outer layer of cells around the inner box, in the order
    /// `z`, `y`, `x`. The cells whose nodes all have the same sign (the
    /// coarse corners from `node_bits` and `col_bits`, the fine nodes of their
    /// refined faces from `face_bits`) are skipped a word at a time.
    fn mesh_outer(&mut self, chunk: &Chunk<'_>, out: &mut CubesOutput) {
        let input = chunk.input;
        let n = input.cells as usize;
        let wr = self.pack_nodes(input, chunk.iso);
        self.pack_faces(chunk);
        let wc = n.div_ceil(64);
        let ff = input.finer_faces;
        // Refined chunk edges on no refined face: their cells also have fine
        // nodes off the face summaries, so they are always meshed.
        let mut loose = 0u16;
        for e in 0..12u8 {
            let (b0, b1) = face_axes((e / 4) as usize);
            let fa = 2 * b0 + (e & 1) as usize;
            let fb = 2 * b1 + ((e >> 1) & 1) as usize;
            if input.finer_edges & (1 << e) != 0 && ff & (1 << fa | 1 << fb) == 0 {
                loose |= 1 << e;
            }
        }
        let last = n - 1;
        for k in 0..n {
            if k == 0 || k == last {
                for j in 0..n {
                    self.outer_row(chunk, [j, k], wr, loose, out);
                }
                continue;
            }
            self.outer_row(chunk, [0, k], wr, loose, out);
            // The middle rows: cells 0 and n - 1 only, found a column of
            // cells along y at a time.
            let mut cols = [[0u64; MAX_CELL_WORDS]; 2];
            for (side, col) in cols.iter_mut().enumerate() {
                let face = side;
                let bits = &self.col_bits;
                let c = |z: usize, slot: usize| (4 * z + 2 * side + slot) * wr;
                let (a0, a1, b0, b1) = (c(k, 0), c(k, 1), c(k + 1, 0), c(k + 1, 1));
                for (w, word) in col.iter_mut().enumerate().take(wc) {
                    let word_at =
                        |o: usize| [bits[o + w], bits[o + w] >> 1 | bits[o + w + 1] << 63];
                    let [r0, r1] = word_at(a0);
                    let [r2, r3] = word_at(a1);
                    let [r4, r5] = word_at(b0);
                    let [r6, r7] = word_at(b1);
                    let mut solid = r0 | r1 | r2 | r3 | r4 | r5 | r6 | r7;
                    let mut air = !(r0 & r1 & r2 & r3 & r4 & r5 & r6 & r7);
                    if ff & (1 << face) != 0 {
                        let fb = &self.face_bits[face][k * 2 * wc..];
                        solid |= fb[w];
                        air |= fb[wc + w];
                    }
                    // Rows 1..n - 1 only (rows 0 and n - 1 are full rows,
                    // which hold every cell on a chunk edge).
                    *word = solid & air & valid_bits(w, last) & !((w == 0) as u64);
                }
            }
            let [first, second] = cols;
            for (w, (&c0, &c1)) in first.iter().zip(&second).enumerate().take(wc) {
                let mut m = c0 | c1;
                while m != 0 {
                    let j = w * 64 + m.trailing_zeros() as usize;
                    m &= m - 1;
                    for (col, i) in [(c0, 0), (c1, last)] {
                        if col & (1 << (j % 64)) != 0 {
                            self.cell(chunk, [i as u32, j as u32, k as u32], out);
                        }
                    }
                }
            }
            self.outer_row(chunk, [last, k], wr, loose, out);
        }
    }

    /// Meshes the cells of the full outer-layer row `(j, k)` along x that are
    /// not uniform.
    #[inline(always)]
    fn outer_row(
        &mut self,
        chunk: &Chunk<'_>,
        [j, k]: [usize; 2],
        wr: usize,
        loose: u16,
        out: &mut CubesOutput,
    ) {
        let input = chunk.input;
        let n = input.cells as usize;
        let s = n + 1;
        let wc = n.div_ceil(64);
        let ff = input.finer_faces;
        let last = n - 1;
        let (lw, lb) = (last / 64, 1u64 << (last % 64));
        let row = |jj: usize, kk: usize| (kk * s + jj) * wr;
        let (a0, a1, b0, b1) = (row(j, k), row(j + 1, k), row(j, k + 1), row(j + 1, k + 1));
        for w in 0..wc {
            let bits = &self.node_bits;
            let word_at = |o: usize| [bits[o + w], bits[o + w] >> 1 | bits[o + w + 1] << 63];
            let [r0, r1] = word_at(a0);
            let [r2, r3] = word_at(a1);
            let [r4, r5] = word_at(b0);
            let [r6, r7] = word_at(b1);
            let mut solid = r0 | r1 | r2 | r3 | r4 | r5 | r6 | r7;
            let mut air = !(r0 & r1 & r2 & r3 & r4 & r5 & r6 & r7);
            // Faces along the row: face cell `(i, k)` or `(i, j)`.
            for (f, on, v) in [
                (2, j == 0, k),
                (3, j == last, k),
                (4, k == 0, j),
                (5, k == last, j),
            ] {
                if on && ff & (1 << f) != 0 {
                    let fb = &self.face_bits[f][v * 2 * wc..];
                    solid |= fb[w];
                    air |= fb[wc + w];
                }
            }
            // Faces across the row: face cell `(j, k)` for cell 0 or n - 1.
            for (f, bit_w, bit) in [(0, 0, 1u64), (1, lw, lb)] {
                if w == bit_w && ff & (1 << f) != 0 {
                    let fb = &self.face_bits[f][k * 2 * wc..];
                    let on = |x: u64| if (x >> (j % 64)) & 1 != 0 { bit } else { 0 };
                    solid |= on(fb[j / 64]);
                    air |= on(fb[wc + j / 64]);
                }
            }
            let mut m = solid & air & valid_bits(w, n);
            if loose != 0 {
                m |= loose_cells(loose, [j, k], n, w);
            }
            while m != 0 {
                let i = w * 64 + m.trailing_zeros() as usize;
                m &= m - 1;
                self.cell(chunk, [i as u32, j as u32, k as u32], out);
            }
        }
    }

    /// Meshes cell `c` by its class.
    #[inline(always)]
    fn cell(&mut self, chunk: &Chunk<'_>, c: [u32; 3], out: &mut CubesOutput) {
        let class = chunk.geo.class_of(c);
        let mut slot = self.classes[class];
        if slot == UNKNOWN {
            slot = self.resolve_class(chunk, class);
        }
        if slot == REGULAR {
            self.regular_cell(chunk, c, out);
        } else {
            self.transition_cell(chunk, c, slot as usize, out);
        }
    }

    /// Resolves the cells of `class` for this chunk (once per call) and
    /// returns their slot in `classes`.
    #[cold]
    #[inline(never)]
    fn resolve_class(&mut self, chunk: &Chunk<'_>, class: usize) -> u8 {
        let input = chunk.input;
        let (edges, faces) = chunk.geo.class_splits(class);
        let slot = if edges == 0 {
            REGULAR
        } else {
            let key = Resolved::key(input, class, edges, faces);
            let r = *self
                .known
                .entry(key)
                .or_insert_with(|| Resolved::new(input, class, edges, faces));
            self.resolved.push(r);
            (self.resolved.len() - 1) as u8
        };
        self.classes[class] = slot;
        slot
    }

    /// Starts a new generation of vertex slots.
    fn stamp_next(&mut self) {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.stamps.fill(0);
            self.fine_stamps.fill(0);
            self.stamp = 1;
        }
    }

    /// Meshes the cells `[1, n - 1)^3` with the regular scan into `out` and
    /// registers its vertices on the faces of that box under their grid edges.
    /// Returns `false` (with `out` partly written) when such a vertex cannot be
    /// matched to one edge (it sits exactly on a node), so the caller meshes the
    /// whole chunk cell by cell instead.
    fn mesh_inner(&mut self, chunk: &Chunk<'_>, out: &mut CubesOutput) -> bool {
        let input = chunk.input;
        let n = input.cells;
        let s = n + 1;
        self.scan_records(
            input,
            chunk.iso,
            CellBox::new(1, 1, 1, n - 1, n - 1, n - 1),
            out,
        );
        let su = s as usize;
        let on_face = |c: f32| c == 1.0 || c == (n - 1) as f32;
        for (id, p) in out.positions.iter().enumerate() {
            if !p.iter().any(|&c| on_face(c)) {
                continue;
            }
            let mut axis = 3;
            for (q, c) in p.iter().enumerate() {
                if !whole_up(*c) {
                    if axis != 3 {
                        return false;
                    }
                    axis = q;
                }
            }
            if axis == 3 {
                return false;
            }
            let g = p.map(|c| c as u32 as usize);
            if !(0..3).any(|q| q != axis && on_face(p[q])) {
                continue;
            }
            // Confirm it is the edge's vertex: the same `t` gives the same point.
            let ia = (g[2] * su + g[1]) * su + g[0];
            let ib = ia + [1, su, su * su][axis];
            let (va, vb) = (input.samples[ia], input.samples[ib]);
            #[allow(clippy::manual_clamp)]
            let t = ((chunk.iso - va) / (vb - va)).max(0.0).min(1.0);
            if (g[axis] as f32 + t).to_bits() != p[axis].to_bits() {
                return false;
            }
            let slot = 3 * ia + axis;
            self.stamps[slot] = self.stamp;
            self.edge_ids[slot] = id as u32;
        }
        let (base, step, cs) = (input.base_node, chunk.step, input.base_cell_size);
        for p in &mut out.positions {
            for q in 0..3 {
                p[q] = world_up(base[q], p[q], step, cs);
            }
        }
        true
    }

    /// A chunk without transition cells: the regular scan in node-index units,
    /// then every coordinate mapped by [`world`].
    fn mesh_regular(
        &mut self,
        input: &LodChunkInput<'_>,
        options: &CubesOptions,
        out: &mut CubesOutput,
    ) {
        let s = input.cells + 1;
        self.scan_records(input, options.iso, CellBox::of_dims([s; 3]), out);
        finish_records(input, options, &self.recs, out);
    }

    /// The regular scan of `cells` into `out` (reset first), positions in
    /// node-index units, with each vertex's record in `recs` (cleared
    /// first), taken from the scan itself: the edge and `t` it measured,
    /// rather than found again from the position.
    fn scan_records(
        &mut self,
        input: &LodChunkInput<'_>,
        iso: f32,
        cells: CellBox,
        out: &mut CubesOutput,
    ) {
        out.reset();
        self.recs.clear();
        let s = input.cells + 1;
        let mut sink = RecSink {
            out: VecSink(out),
            recs: &mut self.recs,
            samples: input.samples,
            s: s as usize,
            iso,
        };
        self.cubes
            .scan_into(input.samples, [s; 3], cells, iso, &mut sink);
    }

    /// The regular scan of every cell of the chunk, without normals,
    /// positions in node-index units.
    #[cfg(test)]
    fn scan_regular(
        &mut self,
        input: &LodChunkInput<'_>,
        options: &CubesOptions,
        out: &mut CubesOutput,
    ) {
        let s = input.cells + 1;
        self.cubes.run(
            input.samples,
            None,
            [s; 3],
            [0.0; 3],
            1.0,
            CellBox::of_dims([s; 3]),
            &options.with_normals(false),
            out,
        );
    }

    /// The vertex of the sub-edge from half-cell node `ha` to `hb` (one axis
    /// apart, `ha` lower) with values `va`, `vb`.
    fn vertex(
        &mut self,
        chunk: &Chunk<'_>,
        ha: [u32; 3],
        hb: [u32; 3],
        va: f32,
        vb: f32,
        out: &mut CubesOutput,
    ) -> u32 {
        let axis = (0..3).find(|&q| ha[q] != hb[q]).unwrap_or(0);
        let whole = hb[axis] - ha[axis] == 2;
        self.vertex_along(chunk, ha, hb, axis, whole, va, vb, out)
    }

    /// [`LodMesher::vertex`] with the axis of the sub-edge and whether it
    /// is a whole edge given.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn vertex_along(
        &mut self,
        chunk: &Chunk<'_>,
        ha: [u32; 3],
        hb: [u32; 3],
        axis: usize,
        whole: bool,
        va: f32,
        vb: f32,
        out: &mut CubesOutput,
    ) -> u32 {
        let slot = slot_of(chunk, ha, axis, whole);
        let stamps = if whole {
            &self.stamps
        } else {
            &self.fine_stamps
        };
        if stamps[slot] == self.stamp {
            return if whole {
                self.edge_ids[slot]
            } else {
                self.fine_ids[slot]
            };
        }
        self.new_vertex(chunk, ha, hb, axis, whole, va, vb, slot, out)
    }

    /// Adds the vertex of [`LodMesher::vertex_along`] kept in `slot` (not
    /// made yet in this call) and returns its id.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn new_vertex(
        &mut self,
        chunk: &Chunk<'_>,
        ha: [u32; 3],
        hb: [u32; 3],
        axis: usize,
        whole: bool,
        va: f32,
        vb: f32,
        slot: usize,
        out: &mut CubesOutput,
    ) -> u32 {
        #[allow(clippy::manual_clamp)]
        let t = ((chunk.iso - va) / (vb - va)).max(0.0).min(1.0);
        let cs = chunk.input.base_cell_size;
        let base = chunk.input.base_node;
        let step = chunk.step;
        let mut p = [0.0f32; 3];
        if whole {
            for q in 0..3 {
                // `world` of a whole coordinate.
                p[q] = (base[q] + (ha[q] / 2) as i64 * step) as f32 * cs;
            }
            p[axis] = world_up(base[axis], (ha[axis] / 2) as f32 + t, step, cs);
        } else {
            // Measured in the frame of the finer chunk that owns the half edge,
            // exactly as that chunk measures it.
            let half = step / 2;
            for q in 0..3 {
                // `world` of a whole coordinate.
                p[q] = (base[q] + ha[q] as i64 * half) as f32 * cs;
            }
            let n = chunk.input.cells;
            let j = ha[axis] / n;
            let frame = base[axis] + (j * n) as i64 * half;
            p[axis] = world_up(frame, (ha[axis] - j * n) as f32 + t, half, cs);
        }
        let rec = if whole {
            match edge_rec_up(ha.map(|c| c / 2), axis, t) {
                Rec::Node { g } => {
                    let h = g.map(|c| 2 * c);
                    match chunk.fine_face_of(h, 3, true) {
                        Some(face) => Rec::FineNode { face, h },
                        None => Rec::Node { g },
                    }
                }
                rec => rec,
            }
        } else if let Some(face) = chunk.fine_face_of(ha, axis, false) {
            // As the finer chunk records it: on a node when its local
            // coordinate plus `t` is a whole number.
            let n = chunk.input.cells;
            let local = (ha[axis] % n) as f32 + t;
            if whole_up(local) {
                let mut h = ha;
                h[axis] = ha[axis] - ha[axis] % n + local as u32;
                Rec::FineNode { face, h }
            } else {
                Rec::Fine {
                    face,
                    h: ha,
                    axis: axis as u8,
                    t,
                }
            }
        } else {
            let mut q = ha.map(|c| c as f32 * 0.5);
            q[axis] += t * 0.5;
            let solid = if va >= chunk.iso { ha } else { hb };
            Rec::Point {
                p: q,
                mat: solid.map(|c| c / 2),
            }
        };
        let id = out.positions.len() as u32;
        out.positions.push(p);
        self.recs.push(rec);
        let (ids, stamps) = if whole {
            (&mut self.edge_ids, &mut self.stamps)
        } else {
            (&mut self.fine_ids, &mut self.fine_stamps)
        };
        stamps[slot] = self.stamp;
        ids[slot] = id;
        id
    }

    fn regular_cell(&mut self, chunk: &Chunk<'_>, c: [u32; 3], out: &mut CubesOutput) {
        let iso = chunk.iso;
        let vals: [f32; 8] = std::array::from_fn(|k| {
            let cc = corner(k as u8);
            chunk.coarse([0, 1, 2].map(|a| c[a] + cc[a] as u32))
        });
        let mut case = 0u8;
        for (k, v) in vals.iter().enumerate() {
            if *v >= iso {
                case |= 1 << k;
            }
        }
        if case == 0 || case == 255 {
            return;
        }
        let t = tables();
        let mut d = 0u8;
        for (i, f) in t.ambiguous_faces(case).iter().enumerate() {
            let s = (vals[f.solid[0] as usize] - iso) * (vals[f.solid[1] as usize] - iso);
            let a = (vals[f.air[0] as usize] - iso) * (vals[f.air[1] as usize] - iso);
            if s >= a {
                d |= 1 << i;
            }
        }
        let entry = &t.cases[case as usize];
        let sub = t.subs[entry.sub_start as usize + d as usize];
        let h = |k: u8| {
            let cc = corner(k);
            [0, 1, 2].map(|a| 2 * (c[a] + cc[a] as u32))
        };
        let mut edge_id = [u32::MAX; 13];
        let tris = &t.tri_edges[sub.start as usize..sub.start as usize + 3 * sub.count as usize];
        for &e in tris {
            if e != CENTRE && edge_id[e as usize] == u32::MAX {
                let (a, b) = edge_corners(e);
                edge_id[e as usize] =
                    self.vertex(chunk, h(a), h(b), vals[a as usize], vals[b as usize], out);
            }
        }
        if sub.centre_len != 0 {
            let lp = &t.centre_loops
                [sub.centre_start as usize..sub.centre_start as usize + sub.centre_len as usize];
            self.loop_ids.clear();
            self.loop_ids
                .extend(lp.iter().map(|&e| edge_id[e as usize]));
            edge_id[CENTRE as usize] = self.centre_vertex(out);
        }
        for &e in tris {
            out.indices.push(edge_id[e as usize]);
        }
    }

    #[inline(never)]
    fn transition_cell(
        &mut self,
        chunk: &Chunk<'_>,
        c: [u32; 3],
        slot: usize,
        out: &mut CubesOutput,
    ) {
        let r = &self.resolved[slot];
        let input = chunk.input;
        let s = input.cells as usize + 1;
        let side = 2 * input.cells as usize + 1;
        let first = (c[2] as usize * s + c[1] as usize) * s + c[0] as usize;
        let mut vals = [0.0f32; 27];
        let mut solid_nodes = 0u32;
        for i in 0..r.coarse_count as usize {
            let v = input.samples[first + r.coarse_off[i]];
            vals[r.coarse_node[i] as usize] = v;
            let is_solid = (v >= chunk.iso) as u32;
            solid_nodes |= is_solid << r.coarse_node[i];
        }
        // The fine nodes, a face at a time (`Resolved::fine` is grouped by
        // face).
        let mut i = 0;
        let fine_count = r.fine_count as usize;
        while i < fine_count {
            let f = r.fine[i].0;
            let (u, w) = face_axes(f as usize / 2);
            let face = &chunk.fines[f as usize][2 * c[w] as usize * side + 2 * c[u] as usize..];
            while i < fine_count && r.fine[i].0 == f {
                let v = face[r.fine[i].1];
                let node = r.fine_node[i];
                vals[node as usize] = v;
                solid_nodes |= ((v >= chunk.iso) as u32) << node;
                i += 1;
            }
        }
        // Every node of the shape was read: the cell is uniform when none or
        // all of them are solid.
        if solid_nodes == 0 || solid_nodes == r.shape.nodes {
            return;
        }
        // The loops depend only on the shape, the signs and the asymptotic
        // decider of the four-node cycles with four crossings: their
        // triangulation is traced once per such pattern and replayed.
        let shape = &r.shape;
        let (mut dec, mut nd) = (0u32, 0);
        for &q in &r.quads[..r.quad_count as usize] {
            let mask = shape.masks[q as usize];
            let on = solid_nodes & mask;
            if on == 0 || on == mask {
                continue;
            }
            let cyc = &shape.cycles[q as usize];
            let bit = |j: usize| (solid_nodes >> cyc[j]) & 1;
            let bits = bit(0) | bit(1) << 1 | bit(2) << 2 | bit(3) << 3;
            if bits == 0b0101 || bits == 0b1010 {
                let v = |j: usize| vals[cyc[j] as usize] - chunk.iso;
                let (s, a) = if bits & 1 != 0 {
                    (v(0) * v(2), v(1) * v(3))
                } else {
                    (v(1) * v(3), v(0) * v(2))
                };
                dec |= ((s >= a) as u32) << nd;
                nd += 1;
            }
        }
        let key = (r.shape_key << 27 | solid_nodes as u64, dec);
        let at = match self.recipes.get(&key) {
            Some(&at) => at as usize,
            None => {
                let lp = trace_signs(shape, &vals, chunk.iso, solid_nodes);
                let at = self.recipe_bytes.len();
                encode_recipe(&lp, &mut self.recipe_bytes);
                self.recipes.insert(key, at as u32);
                at
            }
        };
        let h = |n: u8| {
            let l = local_coords(n);
            [0, 1, 2].map(|a| 2 * c[a] + l[a] as u32)
        };
        // The cell's first vertex slot of whole edges, and of the half edges
        // on each chunk face it touches (see `Resolved::slots`).
        let mut slot_base = [0usize; 8];
        slot_base[WHOLE_SLOT as usize] = 3 * first;
        let mut faces = r.slot_faces;
        while faces != 0 {
            let f = faces.trailing_zeros() as usize;
            faces &= faces - 1;
            let (u, w) = face_axes(f / 2);
            slot_base[f] = 2 * (2 * c[w] as usize * side + 2 * c[u] as usize);
        }
        let bytes = std::mem::take(&mut self.recipe_bytes);
        let rec = &bytes[at..];
        let count = rec[0] as usize;
        let points = &rec[1..1 + 4 * count];
        // The vertices made before (by this cell's neighbours) first, then
        // the new ones in point order (the order they were always made in).
        // `ids[i]` holds the slot of a new point until its vertex is made.
        let mut ids = [0u32; 48];
        let mut new = [0u8; 48];
        let mut new_count = 0;
        let slots = &self.resolved[slot].slots;
        for (i, p) in points.chunks_exact(4).enumerate() {
            let at = slots[p[3] as usize];
            let vslot = slot_base[(at >> 24) as usize & 7] + (at & 0xff_ffff) as usize;
            let whole = p[2] & 4 != 0;
            debug_assert_eq!(whole, at >> 24 == WHOLE_SLOT);
            debug_assert_eq!(vslot, slot_of(chunk, h(p[0]), (p[2] & 3) as usize, whole));
            let (ids_of, stamps) = if whole {
                (&self.edge_ids, &self.stamps)
            } else {
                (&self.fine_ids, &self.fine_stamps)
            };
            if stamps[vslot] == self.stamp {
                ids[i] = ids_of[vslot];
            } else {
                ids[i] = vslot as u32;
                new[new_count] = i as u8;
                new_count += 1;
            }
        }
        for &i in &new[..new_count] {
            let vslot = ids[i as usize] as usize;
            let p = &points[4 * i as usize..4 * i as usize + 4];
            let (a, b, ax) = (p[0], p[1], p[2]);
            let (axis, whole) = ((ax & 3) as usize, ax & 4 != 0);
            let (va, vb) = (vals[a as usize], vals[b as usize]);
            ids[i as usize] = self.new_vertex(chunk, h(a), h(b), axis, whole, va, vb, vslot, out);
        }
        let mut at = 1 + 4 * count;
        loop {
            let (tag, len) = (rec[at], rec[at + 1] as usize);
            at += 2;
            match tag {
                FAN => {
                    let tris = &rec[at..at + 3 * len];
                    out.indices.extend(tris.iter().map(|&p| ids[p as usize]));
                    at += 3 * len;
                }
                CENTRED => {
                    let poly = &rec[at..at + len];
                    self.loop_ids.clear();
                    self.loop_ids.extend(poly.iter().map(|&p| ids[p as usize]));
                    let mid = self.centre_vertex(out);
                    for i in 0..len {
                        out.indices.extend_from_slice(&[
                            mid,
                            ids[poly[i] as usize],
                            ids[poly[(i + 1) % len] as usize],
                        ]);
                    }
                    at += len;
                }
                _ => break,
            }
        }
        self.recipe_bytes = bytes;
    }
}

/// The vertex slot of the sub-edge from half-cell node `ha` along `axis`: in
/// `edge_ids` for a whole edge, in `fine_ids` for half an edge.
#[inline(always)]
fn slot_of(chunk: &Chunk<'_>, ha: [u32; 3], axis: usize, whole: bool) -> usize {
    if whole {
        let n = chunk.input.cells as usize + 1;
        let g = ha.map(|c| (c / 2) as usize);
        3 * ((g[2] * n + g[1]) * n + g[0]) + axis
    } else {
        // A half edge lies in a chunk face plane: index it by that face.
        let full = 2 * chunk.input.cells;
        let side = full as usize + 1;
        let (mut f, mut b) = (0, 0);
        for q in (0..3).filter(|&q| q != axis) {
            if ha[q] == 0 || ha[q] == full {
                f = 2 * q + (ha[q] == full) as usize;
                b = q;
                break;
            }
        }
        let (u, v) = face_axes(b);
        2 * ((f * side + ha[v] as usize) * side + ha[u] as usize) + (axis == v) as usize
    }
}

/// Most rows of a chunk plane, rounded up to whole 16-byte loads.
#[cfg(target_arch = "x86_64")]
const MAX_PLANE_ROWS: usize = (MAX_LOD_CELLS as usize + 1).next_multiple_of(16);

/// For every plane `k` of the `s^3` chunk nodes and row `j` in it, packs the
/// signs (`>= iso`) of nodes `x = 0, 1, s - 2, s - 1` into bit `j` of the
/// columns `4 * k + slot` of `out` (word `w` at `(4 * k + slot) * stride + w`;
/// `out` is zero on entry).
fn pack_columns(samples: &[f32], s: usize, iso: f32, out: &mut [u64], stride: usize) {
    let n = s - 1;
    for (k, plane) in samples.chunks_exact(s * s).enumerate() {
        let out = &mut out[4 * k * stride..4 * (k + 1) * stride];
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{
                __m128i, _mm_castpd_ps, _mm_cmpge_ps, _mm_load_sd, _mm_loadh_pd, _mm_loadu_si128,
                _mm_movemask_epi8, _mm_movemask_ps, _mm_set1_ps, _mm_slli_epi64,
            };
            // Byte `j`: the four signs of row `j` (bits 0..4); the bytes past
            // the last row stay zero.
            let mut nib = [0u8; MAX_PLANE_ROWS];
            // SAFETY: SSE2 is part of the x86_64 baseline. Each row holds
            // `s >= 2` values, so the two-value loads at `0` and `n - 1` stay
            // inside it (unaligned loads are allowed), and the 16-byte loads
            // of `nib` read `16 * b .. 16 * b + 16 <= MAX_PLANE_ROWS` bytes.
            unsafe {
                let t = _mm_set1_ps(iso);
                for (j, row) in plane.chunks_exact(s).enumerate() {
                    let p = row.as_ptr();
                    let lo = _mm_load_sd(p as *const f64);
                    let v = _mm_castpd_ps(_mm_loadh_pd(lo, p.add(n - 1) as *const f64));
                    nib[j] = _mm_movemask_ps(_mm_cmpge_ps(v, t)) as u8;
                }
                // Shifting each 64-bit lane left by `7 - slot` moves bit
                // `slot` of every byte to its top bit (the other bits land
                // below a top bit), which `movemask` gathers for 16 rows.
                for b in 0..s.div_ceil(16) {
                    let x = _mm_loadu_si128(nib.as_ptr().add(16 * b) as *const __m128i);
                    let cols = [
                        _mm_movemask_epi8(_mm_slli_epi64::<7>(x)),
                        _mm_movemask_epi8(_mm_slli_epi64::<6>(x)),
                        _mm_movemask_epi8(_mm_slli_epi64::<5>(x)),
                        _mm_movemask_epi8(_mm_slli_epi64::<4>(x)),
                    ];
                    let (w, at) = (16 * b / 64, 16 * b % 64);
                    for (slot, m) in cols.into_iter().enumerate() {
                        out[slot * stride + w] |= (m as u32 as u64) << at;
                    }
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        for (j, row) in plane.chunks_exact(s).enumerate() {
            let (w, bit) = (j / 64, j % 64);
            for (slot, x) in [0, 1, n - 1, n].into_iter().enumerate() {
                out[slot * stride + w] |= ((row[x] >= iso) as u64) << bit;
            }
        }
    }
}

/// True when `fine[2 * u]` equals `coarse[u * su]` bit for bit for every `u`
/// in `0..=n`, where `fine` holds `2 * n + 1` values and `coarse`
/// `n * su + 1`: the bitwise differences OR-ed together (a plain pass without
/// early exits), four at a time with SSE2 where the nodes are contiguous.
#[inline(always)]
fn nodes_match(fine: &[f32], coarse: &[f32], su: usize) -> bool {
    let n = fine.len() / 2;
    let mut d = fine[2 * n].to_bits() ^ coarse[n * su].to_bits();
    let mut u = 0;
    #[cfg(target_arch = "x86_64")]
    if su == 1 {
        use std::arch::x86_64::{
            _mm_castps_si128, _mm_cmpeq_epi32, _mm_loadu_ps, _mm_movemask_epi8, _mm_or_si128,
            _mm_setzero_si128, _mm_shuffle_ps, _mm_xor_si128,
        };
        assert!(fine.len() > 2 * n && coarse.len() > n);
        // SAFETY: SSE2 is part of the x86_64 baseline; the loads read fine
        // values `2 * u .. 2 * u + 8 <= 2 * n` and coarse values
        // `u .. u + 4 <= n` (checked above; unaligned loads are allowed).
        unsafe {
            let mut acc = _mm_setzero_si128();
            while u + 4 <= n {
                let a = _mm_loadu_ps(fine.as_ptr().add(2 * u));
                let b = _mm_loadu_ps(fine.as_ptr().add(2 * u + 4));
                // Values 0 and 2 of `a`, then of `b`.
                let even = _mm_shuffle_ps::<0b10_00_10_00>(a, b);
                let c = _mm_loadu_ps(coarse.as_ptr().add(u));
                acc = _mm_or_si128(
                    acc,
                    _mm_xor_si128(_mm_castps_si128(even), _mm_castps_si128(c)),
                );
                u += 4;
            }
            let zero = _mm_movemask_epi8(_mm_cmpeq_epi32(acc, _mm_setzero_si128()));
            d |= (zero != 0xffff) as u32;
        }
    }
    if su == 1 {
        for (f, c) in fine[2 * u..2 * n].chunks_exact(2).zip(&coarse[u..n]) {
            d |= f[0].to_bits() ^ c.to_bits();
        }
    } else {
        for u in u..n {
            d |= fine[2 * u].to_bits() ^ coarse[u * su].to_bits();
        }
    }
    d == 0
}

/// Packs `values[i] >= iso` into bit `i % 64` of word `i / 64` of `out` and
/// zeroes the words past the values: sixteen values at a time (four SSE2
/// compares narrowed to one byte mask), then one at a time.
#[inline(always)]
fn pack_row(values: &[f32], iso: f32, out: &mut [u64]) {
    let mut chunks = values.chunks_exact(64);
    let mut w = 0;
    for chunk in &mut chunks {
        out[w] = pack16s(chunk, iso, 4);
        w += 1;
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let blocks = rest.len() / 16;
        let mut word = pack16s(rest, iso, blocks);
        for (i, &v) in rest.iter().enumerate().skip(16 * blocks) {
            word |= ((v >= iso) as u64) << i;
        }
        out[w] = word;
        w += 1;
    }
    // Usually one spare word: a plain store instead of a `memset` call.
    match &mut out[w..] {
        [] => {}
        [o] => *o = 0,
        tail => tail.fill(0),
    }
}

/// The signs (`>= iso`) of the first `16 * blocks` values (`blocks <= 4`,
/// within `values`) in bits `0..16 * blocks`.
#[inline(always)]
fn pack16s(values: &[f32], iso: f32, blocks: usize) -> u64 {
    debug_assert!(blocks <= 4 && 16 * blocks <= values.len());
    let mut word = 0u64;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            _mm_castps_si128, _mm_cmpge_ps, _mm_loadu_ps, _mm_movemask_epi8, _mm_packs_epi16,
            _mm_packs_epi32, _mm_set1_ps,
        };
        assert!(16 * blocks <= values.len());
        // SAFETY: SSE2 is part of the x86_64 baseline; block `b` reads values
        // `16 * b .. 16 * b + 16 <= values.len()` (checked above; unaligned
        // loads are allowed).
        unsafe {
            let t = _mm_set1_ps(iso);
            let c = |p: *const f32| _mm_castps_si128(_mm_cmpge_ps(_mm_loadu_ps(p), t));
            for b in 0..blocks {
                let p = values.as_ptr().add(16 * b);
                // All-ones or zero lanes narrow to all-ones or zero bytes, in
                // order.
                let bytes = _mm_packs_epi16(
                    _mm_packs_epi32(c(p), c(p.add(4))),
                    _mm_packs_epi32(c(p.add(8)), c(p.add(12))),
                );
                word |= (_mm_movemask_epi8(bytes) as u32 as u64) << (16 * b);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    for (i, &v) in values[..16 * blocks].iter().enumerate() {
        word |= ((v >= iso) as u64) << i;
    }
    word
}

/// Appends the triangulation of the loops `lp` to `bytes` in the layout of
/// `LodMesher::recipe_bytes`: the points in order (their two local nodes,
/// `axis | whole << 2` and their segment id), then each loop (in the
/// order of its first point) fanned from a point whose diagonals cross the
/// cell, or around a centre vertex.
fn encode_recipe(lp: &CellLoops, bytes: &mut Vec<u8>) {
    let count = lp.point_count as usize;
    bytes.push(count as u8);
    for &[a, b] in &lp.points[..count] {
        let (la, lb) = (local_coords(a), local_coords(b));
        let axis = (0..3).find(|&q| la[q] != lb[q]).unwrap_or(0);
        let whole = lb[axis] - la[axis] == 2;
        bytes.extend_from_slice(&[a, b, axis as u8 | (whole as u8) << 2, sub_edge(a, b)]);
    }
    let mut seen = 0u64;
    let mut poly = [0u8; 48];
    for start in 0..lp.point_count {
        if seen & (1 << start) != 0 {
            continue;
        }
        let mut len = 0;
        let mut cur = start;
        while seen & (1 << cur) == 0 && cur != u8::MAX {
            seen |= 1 << cur;
            poly[len] = cur;
            len += 1;
            cur = lp.next[cur as usize];
        }
        debug_assert_eq!(cur, start, "transition loops close");
        let poly = &poly[..len];
        let head = bytes.len();
        bytes.extend_from_slice(&[FAN, 0]);
        let mut tris = 0u8;
        let done = triangulate_loop(lp, poly, &mut |t: [u8; 3]| {
            bytes.extend_from_slice(&t);
            tris += 1;
        });
        if done {
            bytes[head + 1] = tris;
        } else {
            bytes[head] = CENTRED;
            bytes[head + 1] = len as u8;
            bytes.extend_from_slice(poly);
        }
    }
    bytes.extend_from_slice(&[END, 0]);
}

/// Most words of a row of cells.
const MAX_CELL_WORDS: usize = (MAX_LOD_CELLS as usize).div_ceil(64);

/// Most words of a packed fine face row (plus the spare zero word).
const MAX_FINE_WORDS: usize = (2 * MAX_LOD_CELLS as usize + 1).div_ceil(64) + 1;

/// Mask of the bits of word `w` that name one of `n` items.
#[inline(always)]
fn valid_bits(w: usize, n: usize) -> u64 {
    let end = n.saturating_sub(w * 64);
    if end >= 64 { !0 } else { (1u64 << end) - 1 }
}

/// The even bits of `x` gathered into its low 32 bits.
#[inline(always)]
fn even_bits(x: u64) -> u64 {
    let mut x = x & 0x5555_5555_5555_5555;
    x = (x | x >> 1) & 0x3333_3333_3333_3333;
    x = (x | x >> 2) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | x >> 4) & 0x00ff_00ff_00ff_00ff;
    x = (x | x >> 8) & 0x0000_ffff_0000_ffff;
    (x | x >> 16) & 0x0000_0000_ffff_ffff
}

/// Word `w` of the cells of the outer-layer row `(j, k)` along x that touch a
/// chunk edge in `loose`.
fn loose_cells(loose: u16, [j, k]: [usize; 2], n: usize, w: usize) -> u64 {
    let last = n - 1;
    let side = |c: usize| -> Option<usize> {
        if c == 0 {
            Some(0)
        } else if c == last {
            Some(1)
        } else {
            None
        }
    };
    let bit = |i: usize| if i / 64 == w { 1u64 << (i % 64) } else { 0 };
    let mut m = 0;
    // Edges along x: the whole row.
    if let (Some(u), Some(v)) = (side(j), side(k))
        && loose & (1 << (u + 2 * v)) != 0
    {
        m |= valid_bits(w, n);
    }
    for (u, i) in [(0usize, 0usize), (1, last)] {
        // Edges along y (sides x, z) and along z (sides x, y).
        if let Some(v) = side(k)
            && loose & (1 << (4 + u + 2 * v)) != 0
        {
            m |= bit(i);
        }
        if let Some(v) = side(j)
            && loose & (1 << (8 + u + 2 * v)) != 0
        {
            m |= bit(i);
        }
    }
    m
}

/// The world coordinate of local coordinate `p` (in cells of `step` base
/// cells) of a chunk whose first node is base node `base`. Integer coordinates
/// are computed exactly from the global node, fractional ones as
/// `(base + p * step) * base_cell_size` (the meshing uses [`world_up`],
/// equal on its range).
#[cfg(test)]
fn world(base: i64, p: f32, step: i64, cs: f32) -> f32 {
    if p.fract() == 0.0 {
        (base + p as i64 * step) as f32 * cs
    } else {
        (base as f32 + p * step as f32) * cs
    }
}

/// True when `x` (finite, at least zero and below `2^32`) is a whole number:
/// what `x.fract() == 0.0` says, without a call to `trunc`.
#[inline(always)]
fn whole_up(x: f32) -> bool {
    (x as u32) as f32 == x
}

/// [`world`] of a coordinate `p` in `[0, 2^32)`.
#[inline(always)]
fn world_up(base: i64, p: f32, step: i64, cs: f32) -> f32 {
    if whole_up(p) {
        (base + p as u32 as i64 * step) as f32 * cs
    } else {
        (base as f32 + p * step as f32) * cs
    }
}

/// [`edge_rec`] of an edge whose `g[axis] + t` lies in `[0, 2^32)`.
#[inline(always)]
fn edge_rec_up(g: [u32; 3], axis: usize, t: f32) -> Rec {
    let x = g[axis] as f32 + t;
    if whole_up(x) {
        let mut at = g;
        at[axis] = x as u32;
        Rec::Node { g: at }
    } else {
        Rec::Edge {
            g,
            axis: axis as u8,
            t,
        }
    }
}

/// The normals and materials of a regular scan's vertices from their
/// records `recs` (one per vertex), and their positions mapped by
/// [`world_up`].
fn finish_records(
    input: &LodChunkInput<'_>,
    options: &CubesOptions,
    recs: &[Rec],
    out: &mut CubesOutput,
) {
    debug_assert_eq!(recs.len(), out.positions.len());
    let iso = options.iso;
    let n = input.cells;
    let s = n as usize + 1;
    let grads = Grads { input, n };
    let (base, step, cs) = (input.base_node, 1i64 << input.lod, input.base_cell_size);
    let len = out.positions.len();
    let CubesOutput {
        positions,
        normals,
        materials,
        ..
    } = out;
    if options.normals {
        // Gradients first, then one pass that normalises them: the square
        // roots and divisions of many vertices overlap there, instead of
        // each waiting in the middle of its vertex's work.
        normals.clear();
        normals.extend(recs.iter().map(|rec| grid_gradient(&grads, rec)));
        for (m, rec) in normals.iter_mut().zip(recs) {
            *m = inverted_unit(*m).unwrap_or_else(|| {
                let (axis, lower_is_solid) = grid_fallback(&grads, iso, rec);
                outward(*m, axis, lower_is_solid)
            });
        }
    }
    if input.materials.is_some() {
        materials.clear();
        materials.reserve(len);
    }
    for (p, rec) in positions.iter_mut().zip(recs) {
        if let Some(mats) = input.materials {
            materials.push(grid_material(mats, input.samples, s, iso, rec));
        }
        match *rec {
            // Whole coordinates: the integer form of `world_up`.
            Rec::Node { g } => {
                for q in 0..3 {
                    p[q] = world_whole(base[q], g[q], step, cs);
                }
            }
            Rec::Edge { g, axis, .. } => {
                for q in 0..3 {
                    p[q] = if q == axis as usize {
                        world_up(base[q], p[q], step, cs)
                    } else {
                        world_whole(base[q], g[q], step, cs)
                    };
                }
            }
            _ => {
                for q in 0..3 {
                    p[q] = world_up(base[q], p[q], step, cs);
                }
            }
        }
    }
}

/// [`world_up`] of the whole coordinate `g`.
#[inline(always)]
fn world_whole(base: i64, g: u32, step: i64, cs: f32) -> f32 {
    (base + g as i64 * step) as f32 * cs
}

/// A sink for the regular scan that keeps each vertex's record beside its
/// position (node-index units): the edge and `t` of an edge vertex as the
/// scan made it, the record [`scan_rec`] finds for any other vertex.
struct RecSink<'a> {
    out: VecSink<'a>,
    recs: &'a mut Vec<Rec>,
    samples: &'a [f32],
    s: usize,
    iso: f32,
}

impl Sink for RecSink<'_> {
    const COUNT: bool = false;

    #[inline(always)]
    fn vertex<const N: bool, const M: bool>(&mut self, p: [f32; 3], n: [f32; 3], m: u8) -> u32 {
        self.recs.push(scan_rec(p, self.samples, self.s, self.iso));
        self.out.vertex::<N, M>(p, n, m)
    }

    #[inline(always)]
    fn edge_vertex<const N: bool, const M: bool>(
        &mut self,
        p: [f32; 3],
        n: [f32; 3],
        m: u8,
        g: [u32; 3],
        axis: usize,
        t: f32,
    ) -> u32 {
        // What `scan_rec` finds from `p`: the lower node's coordinate plus
        // `t` is `p[axis]` (the scan's origin is 0 and its cell size 1).
        self.recs.push(edge_rec_up(g, axis, t));
        self.out.vertex::<N, M>(p, n, m)
    }

    fn position(&self, id: u32) -> [f32; 3] {
        self.out.position(id)
    }

    fn normal(&self, id: u32) -> [f32; 3] {
        self.out.normal(id)
    }

    fn material(&self, id: u32) -> u8 {
        self.out.material(id)
    }

    #[inline(always)]
    fn corners(&mut self, n: usize, id: impl Fn(usize) -> u32) {
        self.out.corners(n, id)
    }
}

/// The record of a vertex the regular scan made at `p` (local node units,
/// in `[0, cells]`), on a chunk of `s` nodes a side with `samples`.
#[inline(always)]
fn scan_rec(p: [f32; 3], samples: &[f32], s: usize, iso: f32) -> Rec {
    // `whole_up` and a cast stand for `fract() == 0.0` and `floor()`; bit
    // `q` is set when coordinate `q` is fractional.
    let fractional = u32::from(!whole_up(p[0]))
        | u32::from(!whole_up(p[1])) << 1
        | u32::from(!whole_up(p[2])) << 2;
    let g = p.map(|c| c as u32);
    match fractional {
        0 => Rec::Node { g },
        1 | 2 | 4 => {
            let axis = fractional.trailing_zeros() as usize;
            let ia = (g[2] as usize * s + g[1] as usize) * s + g[0] as usize;
            let ib = ia + [1, s, s * s][axis];
            let (va, vb) = (samples[ia], samples[ib]);
            #[allow(clippy::manual_clamp)]
            let t = ((iso - va) / (vb - va)).max(0.0).min(1.0);
            edge_rec_up(g, axis, t)
        }
        _ => Rec::Point {
            p,
            mat: p.map(|c| c.round() as u32),
        },
    }
}

/// The normal of a vertex recorded on the chunk's own grid (a node, an edge
/// or a point; the fine and centre records are the caller's).
#[inline(always)]
fn grid_normal(grads: &Grads<'_>, iso: f32, rec: &Rec) -> [f32; 3] {
    let (axis, lower_is_solid) = grid_fallback(grads, iso, rec);
    outward(grid_gradient(grads, rec), axis, lower_is_solid)
}

/// The density gradient at a vertex recorded on the chunk's own grid, which
/// [`grid_normal`] turns outward and normalises.
#[inline(always)]
fn grid_gradient(grads: &Grads<'_>, rec: &Rec) -> [f32; 3] {
    match *rec {
        Rec::Node { g } => grads.node(g),
        Rec::Edge { g, axis, t } => {
            let axis = axis as usize;
            let ga = grads.node(g);
            let mut b = g;
            b[axis] += 1;
            let gb = grads.node(b);
            [0, 1, 2].map(|q| ga[q] + t * (gb[q] - ga[q]))
        }
        Rec::Point { p, .. } => grads.at(p),
        _ => unreachable!("a fine or centre record is not on the chunk's grid"),
    }
}

/// The axis and side [`outward`] falls back to for a vertex recorded on the
/// chunk's own grid whose gradient cannot be normalised.
#[inline(always)]
fn grid_fallback(grads: &Grads<'_>, iso: f32, rec: &Rec) -> (usize, bool) {
    let s = grads.n as usize + 1;
    let samples = grads.input.samples;
    let at = |g: [u32; 3]| (g[2] as usize * s + g[1] as usize) * s + g[0] as usize;
    match *rec {
        Rec::Node { g } => (1, samples[at(g)] < iso),
        Rec::Edge { g, axis, .. } => (axis as usize, samples[at(g)] >= iso),
        Rec::Point { mat, .. } => (1, samples[at(mat)] < iso),
        _ => unreachable!("a fine or centre record is not on the chunk's grid"),
    }
}

/// The material of a vertex recorded on the chunk's own grid: the id of
/// its node, of its edge's solid node, or of the node nearest its point.
#[inline(always)]
fn grid_material(mats: &[u8], samples: &[f32], s: usize, iso: f32, rec: &Rec) -> u8 {
    let at = |g: [u32; 3]| (g[2] as usize * s + g[1] as usize) * s + g[0] as usize;
    match *rec {
        Rec::Node { g } => mats[at(g)],
        Rec::Edge { g, axis, .. } => {
            let mut b = g;
            if samples[at(g)] < iso {
                b[axis as usize] += 1;
            }
            mats[at(b)]
        }
        Rec::Point { mat, .. } => mats[at(mat)],
        _ => unreachable!("a fine or centre record is not on the chunk's grid"),
    }
}

/// Adds the mean of the loop's vertices and returns its id.
fn centre(loop_ids: &[u32], out: &mut CubesOutput) -> u32 {
    let mut p = [0.0f32; 3];
    for &id in loop_ids {
        let q = out.positions[id as usize];
        for k in 0..3 {
            p[k] += q[k];
        }
    }
    let inv = 1.0 / loop_ids.len() as f32;
    out.positions.push(p.map(|c| c * inv));
    (out.positions.len() - 1) as u32
}

/// Node gradients of a chunk at its own spacing (unscaled: the normals only
/// need their direction).
struct Grads<'a> {
    input: &'a LodChunkInput<'a>,
    n: u32,
}

impl Grads<'_> {
    /// The gradient at node `g` (`0..=cells` per axis): central differences
    /// over the apron when there is one, one-sided on the chunk's first and
    /// last node of each axis otherwise.
    #[inline(always)]
    fn node(&self, g: [u32; 3]) -> [f32; 3] {
        let n = self.n as usize;
        let mut out = [0.0f32; 3];
        if let Some(apron) = self.input.apron {
            let a = n + 3;
            let i = ((g[2] as usize + 1) * a + g[1] as usize + 1) * a + g[0] as usize + 1;
            let st = [1, a, a * a];
            for q in 0..3 {
                out[q] = (apron[i + st[q]] - apron[i - st[q]]) * 0.5;
            }
        } else {
            let s = n + 1;
            let samples = self.input.samples;
            let i = (g[2] as usize * s + g[1] as usize) * s + g[0] as usize;
            let st = [1, s, s * s];
            for q in 0..3 {
                out[q] = if g[q] == 0 {
                    samples[i + st[q]] - samples[i]
                } else if g[q] as usize == n {
                    samples[i] - samples[i - st[q]]
                } else {
                    (samples[i + st[q]] - samples[i - st[q]]) * 0.5
                };
            }
        }
        out
    }

    /// The trilinear blend of the node gradients at local position `p`.
    fn at(&self, p: [f32; 3]) -> [f32; 3] {
        let last = self.n - 1;
        // `v as u32` rounds toward zero and saturates (NaN and negative values
        // give 0): the same as `v.floor().max(0.0) as u32`.
        let c = p.map(|v| (v as u32).min(last));
        let f: [f32; 3] = std::array::from_fn(|q| (p[q] - c[q] as f32).clamp(0.0, 1.0));
        let wq: [[f32; 2]; 3] = std::array::from_fn(|q| [1.0 - f[q], f[q]]);
        let mut out = [0.0f32; 3];
        for k in 0..8u8 {
            let cc = corner(k);
            // `((1 * a) * b) * c` with `1 * a == a` exactly.
            let w = wq[0][cc[0] as usize] * wq[1][cc[1] as usize] * wq[2][cc[2] as usize];
            // A zero weight adds a zero, which leaves the sum as it is (it
            // starts at +0 and so is never -0).
            if w == 0.0 {
                continue;
            }
            let g = self.node([0, 1, 2].map(|q| c[q] + cc[q] as u32));
            for q in 0..3 {
                out[q] += w * g[q];
            }
        }
        out
    }
}

/// `-v` normalised, where its squared length is a normal finite number
/// (`outward`'s common case, which a pass over many vertices runs alone).
#[inline(always)]
fn inverted_unit(v: [f32; 3]) -> Option<[f32; 3]> {
    let l2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    if (f32::MIN_POSITIVE..f32::INFINITY).contains(&l2) {
        let r = -1.0 / l2.sqrt();
        Some(v.map(|c| c * r))
    } else {
        None
    }
}

/// `-v` normalised; where that is impossible (zero or non-finite), the unit
/// vector along `axis`, pointing up when `lower_is_solid` and down otherwise.
fn outward(v: [f32; 3], axis: usize, lower_is_solid: bool) -> [f32; 3] {
    if let Some(n) = inverted_unit(v) {
        return n;
    }
    let big = v[0].abs().max(v[1].abs()).max(v[2].abs());
    if v.iter().all(|c| c.is_finite()) && big > 0.0 {
        let s = v.map(|c| c / big);
        let l = (s[0] * s[0] + s[1] * s[1] + s[2] * s[2]).sqrt();
        return s.map(|c| -c / l);
    }
    let mut e = [0.0; 3];
    e[axis] = if lower_is_solid { 1.0 } else { -1.0 };
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A small deterministic generator for test values.
    fn lcg(state: &mut u64) -> f32 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*state >> 40) as f32 / (1u64 << 24) as f32) * 0.9 + 0.05
    }

    /// Checks that a cell's loops close, use each crossed sub-edge once, and
    /// that its triangles form oriented disks bounded by the face segments.
    fn check_cell(shape: &CellShape, vals: &[f32; 27]) {
        let lp = trace(shape, vals, 0.0);
        // Every crossed sub-edge of the boundary is a point, with one outgoing
        // and one incoming segment.
        let mut crossed = 0;
        for c in 0..shape.count as usize {
            let m = shape.lens[c] as usize;
            for j in 0..m {
                let (a, b) = (shape.cycles[c][j], shape.cycles[c][(j + 1) % m]);
                if (vals[a as usize] >= 0.0) != (vals[b as usize] >= 0.0) {
                    crossed += 1;
                }
            }
        }
        // Each sub-edge lies on two face cycles.
        assert_eq!(crossed, 2 * lp.point_count as usize);
        let mut incoming = [0; 48];
        for p in 0..lp.point_count as usize {
            assert!(lp.next[p] < lp.point_count, "open loop");
            incoming[lp.next[p] as usize] += 1;
        }
        assert!(incoming[..lp.point_count as usize].iter().all(|&k| k == 1));
        // Triangles: segments used once forward, chords once each way.
        let mut directed = HashMap::new();
        let mut seen = 0u64;
        let mut centre_id = 100u8;
        for start in 0..lp.point_count {
            if seen & (1 << start) != 0 {
                continue;
            }
            let mut poly = Vec::new();
            let mut cur = start;
            while seen & (1 << cur) == 0 {
                seen |= 1 << cur;
                poly.push(cur);
                cur = lp.next[cur as usize];
            }
            assert_eq!(cur, start);
            let mut tris = Vec::new();
            if !triangulate_loop(&lp, &poly, &mut |t| tris.push(t)) {
                for i in 0..poly.len() {
                    tris.push([centre_id, poly[i], poly[(i + 1) % poly.len()]]);
                }
                centre_id += 1;
            }
            for t in tris {
                for k in 0..3 {
                    *directed.entry((t[k], t[(k + 1) % 3])).or_insert(0) += 1;
                }
            }
        }
        for (&(a, b), &count) in &directed {
            assert_eq!(count, 1);
            let segment = a < 48 && lp.next[a as usize] == b;
            assert_eq!(directed.contains_key(&(b, a)), !segment, "{a}->{b}");
        }
    }

    #[test]
    fn every_fine_face_pattern_closes() {
        // A cell with its minus-x face refined (and the four edges of that face),
        // over all 2^9 fine-face sign patterns and all 2^4 inner corner patterns.
        let edges = (0..12u8)
            .filter(|&e| {
                let (a, b) = edge_corners(e);
                corner(a)[0] == 0 && corner(b)[0] == 0
            })
            .fold(0u16, |m, e| m | (1 << e));
        let shape = CellShape::new(edges, 1);
        let nodes: Vec<u8> = (0..27u8).filter(|&n| shape.nodes & (1 << n) != 0).collect();
        assert_eq!(nodes.len(), 13);
        let mut rng = 7u64;
        for pattern in 0..(1u32 << 13) {
            for _ in 0..2 {
                let mut vals = [0.0f32; 27];
                for (i, &n) in nodes.iter().enumerate() {
                    let mag = lcg(&mut rng);
                    vals[n as usize] = if pattern & (1 << i) != 0 { mag } else { -mag };
                }
                check_cell(&shape, &vals);
            }
        }
    }

    #[test]
    fn random_shapes_close() {
        let mut rng = 11u64;
        for edges in [0u16, 1, 0b1000_0000_0001, 0x0f0, 0xfff] {
            for faces in 0..64u8 {
                // A refined face refines its edges.
                let mut e = edges;
                for f in 0..6u8 {
                    if faces & (1 << f) != 0 {
                        let q = face_corners(f);
                        for j in 0..4 {
                            e |= 1 << edge_between(q[j], q[(j + 1) % 4]);
                        }
                    }
                }
                let shape = CellShape::new(e, faces);
                for _ in 0..200 {
                    let mut vals = [0.0f32; 27];
                    for v in vals.iter_mut() {
                        *v = lcg(&mut rng) - 0.5;
                    }
                    check_cell(&shape, &vals);
                }
            }
        }
    }

    #[test]
    fn plain_shape_matches_regular_cube() {
        let s = CellShape::new(0, 0);
        assert_eq!(s.count, 6);
        assert!(s.lens[..6].iter().all(|&l| l == 4));
        assert_eq!(s.nodes.count_ones(), 8);
    }

    #[test]
    fn up_variants_agree_with_the_general_ones() {
        let mut state = 7u64;
        for i in 0..2000u32 {
            let x = match i % 4 {
                0 => (i / 4) as f32,
                1 => (i / 4) as f32 + lcg(&mut state),
                2 => (i / 4) as f32 * 0.5,
                _ => lcg(&mut state) * 4096.0,
            };
            for (base, step) in [(0i64, 1i64), (-37, 2), (1 << 20, 8)] {
                let (a, b) = (world(base, x, step, 0.75), world_up(base, x, step, 0.75));
                assert_eq!(a.to_bits(), b.to_bits(), "{x}");
            }
            let g = [i % 5, i / 4, 3];
            let t = x.fract();
            for axis in 0..3 {
                let same = match (edge_rec(g, axis, t), edge_rec_up(g, axis, t)) {
                    (Rec::Node { g: a }, Rec::Node { g: b }) => a == b,
                    (
                        Rec::Edge {
                            g: a,
                            axis: p,
                            t: s,
                        },
                        Rec::Edge {
                            g: b,
                            axis: q,
                            t: u,
                        },
                    ) => a == b && p == q && s.to_bits() == u.to_bits(),
                    _ => false,
                };
                assert!(same, "{g:?} {axis} {t}");
            }
        }
    }

    /// A regular chunk meshed the general way: the scan, the records found
    /// from its positions, positions mapped by `world_up`, then `finish`.
    fn regular_by_records(input: &LodChunkInput<'_>, options: &CubesOptions) -> CubesOutput {
        let mut m = LodMesher::new();
        let mut out = CubesOutput::default();
        m.scan_regular(input, options, &mut out);
        m.record_scan(input, options.iso, 0, &out);
        let (base, step, cs) = (input.base_node, 1i64 << input.lod, input.base_cell_size);
        for p in &mut out.positions {
            for q in 0..3 {
                p[q] = world_up(base[q], p[q], step, cs);
            }
        }
        m.finish(input, options, &mut out);
        out
    }

    fn bits3(v: &[[f32; 3]]) -> Vec<[u32; 3]> {
        v.iter().map(|p| p.map(f32::to_bits)).collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// A chunk without transition cells, its vertex records handed over
        /// by the scan and finished in one pass, gives the bits of the
        /// records found again from the scan's positions: positions,
        /// normals (from the apron or one-sided), materials and triangles.
        /// Values are drawn from a few levels, the iso level among them, so
        /// vertices land on nodes as well as between them.
        #[test]
        fn one_pass_regular_finish_matches_the_records(
            cells in 1u32..7,
            lod in 0u8..4,
            base in proptest::array::uniform3(-5000i64..5000),
            cell_size in proptest::sample::select(vec![1.0f32, 0.75, 2.5]),
            iso in proptest::sample::select(vec![0.0f32, 0.3, -1.25]),
            picks in proptest::collection::vec(0usize..6, 9 * 9 * 9),
            scale in proptest::collection::vec(0.1f32..3.0, 9 * 9 * 9),
            use_apron: bool,
            use_mats: bool,
            normals: bool,
        ) {
            let a = cells as usize + 3;
            let s = cells as usize + 1;
            let level = |i: usize| -> f32 {
                match picks[i] {
                    0 => iso,
                    1 => iso + scale[i],
                    2 => iso - scale[i],
                    3 => iso + 1.0,
                    4 => iso - 0.5,
                    _ => -0.0,
                }
            };
            let apron: Vec<f32> = (0..a * a * a).map(level).collect();
            let mut samples = Vec::with_capacity(s * s * s);
            for k in 0..s {
                for j in 0..s {
                    let at = ((k + 1) * a + j + 1) * a + 1;
                    samples.extend_from_slice(&apron[at..at + s]);
                }
            }
            let mats: Vec<u8> = (0..s * s * s).map(|i| (i * 7 % 5) as u8).collect();
            let mut input = LodChunkInput::new(&samples, cells, lod)
                .with_base_node(base)
                .with_base_cell_size(cell_size);
            if use_apron {
                input = input.with_apron(&apron);
            }
            if use_mats {
                input = input.with_materials(&mats);
            }
            let options = CubesOptions::DEFAULT.with_iso(iso).with_normals(normals);
            let mut got = CubesOutput::default();
            LodMesher::new().mesh(&input, &options, &mut got).unwrap();
            let want = regular_by_records(&input, &options);
            proptest::prop_assert_eq!(bits3(&got.positions), bits3(&want.positions));
            proptest::prop_assert_eq!(bits3(&got.normals), bits3(&want.normals));
            proptest::prop_assert_eq!(&got.materials, &want.materials);
            proptest::prop_assert_eq!(&got.indices, &want.indices);
        }
    }

    #[test]
    fn all_finite_finds_every_non_finite_value() {
        let mut values = vec![
            0.0f32,
            -0.0,
            1.5,
            -3.0e38,
            f32::MAX,
            f32::MIN_POSITIVE,
            1e-45,
        ];
        values.extend((0..200).map(|i| i as f32 - 77.5));
        assert!(all_finite(&values));
        assert!(all_finite(&[]));
        for bad in [f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            for at in [0, 5, 64, values.len() - 1] {
                let mut v = values.clone();
                v[at] = bad;
                assert!(!all_finite(&v), "{bad} at {at}");
            }
        }
    }

    #[test]
    fn whole_up_agrees_with_fract() {
        let mut state = 7u64;
        for i in 0..2000u32 {
            let x = match i % 3 {
                0 => (i / 3) as f32,
                1 => (i / 3) as f32 + lcg(&mut state).abs(),
                _ => (i / 3) as f32 + 0.5,
            };
            assert_eq!(whole_up(x), x.fract() == 0.0, "{x}");
        }
    }

    #[test]
    fn cached_triangulations_match_fresh_ones() {
        // A bumpy ball on a chunk of 6 cells at LOD 1 with every face finer.
        let f = |x: i64, y: i64, z: i64| {
            let d = [x as f32 - 6.3, y as f32 - 5.7, z as f32 - 6.1];
            let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            4.6 - r + 0.7 * (0.9 * x as f32).sin() * (1.3 * y as f32 + 0.4 * z as f32).cos()
        };
        let n = 6i64;
        let mut samples = Vec::new();
        for k in 0..=n {
            for j in 0..=n {
                for i in 0..=n {
                    samples.push(f(2 * i, 2 * j, 2 * k));
                }
            }
        }
        let side = 2 * n + 1;
        let faces: Vec<Vec<f32>> = (0..6)
            .map(|face| {
                let axis = face / 2;
                let at = if face % 2 == 0 { 0 } else { 2 * n };
                let mut v = Vec::new();
                for b in 0..side {
                    for a in 0..side {
                        let p = match axis {
                            0 => [at, a, b],
                            1 => [a, at, b],
                            _ => [a, b, at],
                        };
                        v.push(f(p[0], p[1], p[2]));
                    }
                }
                v
            })
            .collect();
        let mut input = LodChunkInput::new(&samples, n as u32, 1);
        for (face, fine) in faces.iter().enumerate() {
            input = input.with_finer_face(face as u8, fine);
        }
        let opts = CubesOptions::DEFAULT;
        let mut reused = LodMesher::new();
        let mut first = CubesOutput::default();
        reused.mesh(&input, &opts, &mut first).unwrap();
        assert!(!reused.recipes.is_empty());
        let mut again = CubesOutput::default();
        reused.mesh(&input, &opts, &mut again).unwrap();
        let mut fresh = CubesOutput::default();
        LodMesher::new().mesh(&input, &opts, &mut fresh).unwrap();
        assert!(first.triangle_count() > 0);
        for out in [&again, &fresh] {
            assert_eq!(out.indices, first.indices);
            let bits = |o: &CubesOutput| {
                o.positions
                    .iter()
                    .chain(&o.normals)
                    .flat_map(|p| p.map(f32::to_bits))
                    .collect::<Vec<_>>()
            };
            assert_eq!(bits(out), bits(&first));
        }
    }
}
