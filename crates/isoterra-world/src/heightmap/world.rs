//! The heightmap world: generated heights plus a sparse edit layer, sculpt
//! edits with exact undo, and cached chunk meshes built on worker threads.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, PoisonError};

use isoterra_field::{Fractal, FractalParams, HeightGen, Noise2};
use isoterra_mesh::{
    HeightChunkInput, HeightfieldCollider, HeightmapMesh, HeightmapMesher, sample_chunk_heights,
};

use super::brush::{HeightBrush, HeightEdit, HeightTool, MAX_SCULPT_HEIGHT};
use super::extent::HeightOutside;
use super::params::{HeightmapParams, MAX_NODE_COORD};
use super::select::Frustum;
use crate::{EditDirection, WorldError};

/// Which mesh of a chunk: its LOD and the LODs of its edge neighbours
/// (−x, +x, −z, +z, as [`HeightChunkInput::neighbours`] takes them; see
/// [`neighbour_lods`](crate::neighbour_lods)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MeshKey {
    /// Chunk coordinates `[cx, cz]`.
    pub chunk: [i32; 2],
    /// Level of detail.
    pub lod: u8,
    /// Neighbour LODs (each `lod` or `lod + 1`).
    pub neighbours: [u8; 4],
}

impl MeshKey {
    /// A key whose neighbours are all at `lod` (no stitching).
    pub const fn new(chunk: [i32; 2], lod: u8) -> Self {
        MeshKey {
            chunk,
            lod,
            neighbours: [lod; 4],
        }
    }

    /// Sets [`neighbours`](Self::neighbours).
    pub const fn with_neighbours(mut self, neighbours: [u8; 4]) -> Self {
        self.neighbours = neighbours;
        self
    }
}

/// A chunk mesh finished on a worker thread, handed back by
/// [`HeightmapWorld::poll`].
#[derive(Debug, Clone)]
pub struct MeshReady {
    /// The mesh that was requested.
    pub key: MeshKey,
    /// The mesh, or why it could not be built.
    pub mesh: Result<Arc<HeightmapMesh>, WorldError>,
}

/// Generated heights plus the edit layer: everything a mesh build reads.
/// Cheap to clone (shared generator, shared edit chunks).
#[derive(Debug, Clone)]
struct HeightSource {
    params: Arc<HeightmapParams>,
    generator: Arc<HeightGen>,
    layer: HashMap<[i32; 2], Arc<Vec<f32>>>,
}

impl HeightSource {
    /// The height under the edit layer: the generator's, or with an
    /// imported extent whose outside is its edge, 0 inside and the edge
    /// profile outside.
    fn generated(&self, g: [i64; 2]) -> f32 {
        if let Some(e) = &self.params.extent
            && e.outside == HeightOutside::Edge
        {
            return if e.contains(g) { 0.0 } else { e.edge_height(g) };
        }
        self.generator
            .height_at(self.params.node_coord(g[0]), self.params.node_coord(g[1]))
    }

    fn owner(&self, g: [i64; 2]) -> ([i32; 2], usize) {
        let n = i64::from(self.params.chunk_cells);
        let c = [g[0].div_euclid(n) as i32, g[1].div_euclid(n) as i32];
        let idx = (g[1].rem_euclid(n) * n + g[0].rem_euclid(n)) as usize;
        (c, idx)
    }

    fn delta(&self, g: [i64; 2]) -> f32 {
        if self.layer.is_empty() {
            return 0.0;
        }
        let (c, idx) = self.owner(g);
        self.layer.get(&c).map_or(0.0, |d| d[idx])
    }

    fn height(&self, g: [i64; 2]) -> f32 {
        Self::on_layer(self.generated(g), self.delta(g))
    }

    /// A node's height from its generated height and its edit-layer delta:
    /// a zero delta adds nothing (not even `-0.0 + 0.0`).
    #[inline]
    fn on_layer(generated: f32, delta: f32) -> f32 {
        if delta.to_bits() == 0 {
            generated
        } else {
            generated + delta
        }
    }

    /// The source limited to the edit chunks a mesh of `chunk` can read.
    fn around(&self, chunk: [i32; 2]) -> HeightSource {
        let mut layer = HashMap::new();
        for dz in -1..=1 {
            for dx in -1..=1 {
                let c = [chunk[0].wrapping_add(dx), chunk[1].wrapping_add(dz)];
                if let Some(d) = self.layer.get(&c) {
                    layer.insert(c, Arc::clone(d));
                }
            }
        }
        HeightSource {
            params: Arc::clone(&self.params),
            generator: Arc::clone(&self.generator),
            layer,
        }
    }

    fn check_key(&self, key: &MeshKey) -> Result<(), WorldError> {
        if key.lod > self.params.max_lod() {
            return Err(WorldError::param(
                "lod",
                key.lod,
                "must be below the world's lod_count",
            ));
        }
        let n = i64::from(self.params.chunk_cells);
        for c in key.chunk {
            if (i64::from(c) * n).abs() > MAX_NODE_COORD - 2 * n {
                return Err(WorldError::param(
                    "chunk",
                    format!("{:?}", key.chunk),
                    "is too far from the origin (nodes must stay within 2^30)",
                ));
            }
        }
        Ok(())
    }

    fn chunk_heights(
        &self,
        chunk: [i32; 2],
        lod: u8,
        out: &mut Vec<f32>,
    ) -> Result<(), WorldError> {
        self.check_key(&MeshKey::new(chunk, lod))?;
        if self.chunk_heights_batch(chunk, lod, out)? {
            return Ok(());
        }
        sample_chunk_heights(self.params.chunk_cells, lod, chunk, out, |g| self.height(g))?;
        Ok(())
    }

    /// The heights of [`sample_chunk_heights`] through the generator's batch
    /// fill (see [`block_heights_batch`](Self::block_heights_batch)).
    fn chunk_heights_batch(
        &self,
        chunk: [i32; 2],
        lod: u8,
        out: &mut Vec<f32>,
    ) -> Result<bool, WorldError> {
        let cells = i64::from(self.params.chunk_cells);
        let step = 1i64 << lod;
        let side = ((cells >> lod) + 3) as u32;
        let g0 = [
            i64::from(chunk[0]) * cells - step,
            i64::from(chunk[1]) * cells - step,
        ];
        self.block_heights_batch(g0, step, [side, side], out)
    }

    /// The generated heights (under the edit layer) of the nodes
    /// `g0 + (i, j) * step` for `i < dims[0]`, `j < dims[1]` (row-major, x
    /// fastest) through the generator's batch fill (eight samples at a
    /// time), when that gives the same bits as
    /// [`generated`](Self::generated): the batch takes sample `i` at
    /// `origin + i as f32 * step`, which must equal
    /// [`HeightmapParams::node_coord`] of every node on both axes (true for
    /// unit cells, and whenever the products are exact). Returns
    /// `Ok(false)`, writing nothing, when it does not apply (an imported
    /// extent whose outside is its edge, or inexact coordinates).
    fn generated_block_batch(
        &self,
        g0: [i64; 2],
        step: i64,
        dims: [u32; 2],
        out: &mut Vec<f32>,
    ) -> Result<bool, WorldError> {
        if self
            .params
            .extent
            .as_ref()
            .is_some_and(|e| e.outside == HeightOutside::Edge)
        {
            return Ok(false);
        }
        let origin = [self.params.node_coord(g0[0]), self.params.node_coord(g0[1])];
        let st = self.params.node_coord(step);
        let exact = |a: usize| {
            (0..i64::from(dims[a])).all(|i| {
                let batch = origin[a] + i as f32 * st;
                batch.to_bits() == self.params.node_coord(g0[a] + i * step).to_bits()
            })
        };
        if !(exact(0) && exact(1)) {
            return Ok(false);
        }
        let n = dims[0] as usize;
        out.clear();
        out.resize(n * dims[1] as usize, 0.0);
        self.generator.fill_heights(origin, [st, st], dims, out)?;
        Ok(true)
    }

    /// The generated heights (under the edit layer) of the nodes
    /// `g0 + (i, j)`, `i < dims[0]`, `j < dims[1]`, row-major: the bits of
    /// [`generated`](Self::generated), eight at a time where
    /// [`generated_block_batch`](Self::generated_block_batch) applies.
    fn generated_block(
        &self,
        g0: [i64; 2],
        dims: [u32; 2],
        out: &mut Vec<f32>,
    ) -> Result<(), WorldError> {
        if self.generated_block_batch(g0, 1, dims, out)? {
            return Ok(());
        }
        out.clear();
        for j in 0..i64::from(dims[1]) {
            for i in 0..i64::from(dims[0]) {
                out.push(self.generated([g0[0] + i, g0[1] + j]));
            }
        }
        Ok(())
    }

    /// [`generated_block_batch`](Self::generated_block_batch) plus the edit
    /// layer: the bits of [`height`](Self::height), or `Ok(false)` where the
    /// batch does not apply.
    fn block_heights_batch(
        &self,
        g0: [i64; 2],
        step: i64,
        dims: [u32; 2],
        out: &mut Vec<f32>,
    ) -> Result<bool, WorldError> {
        if !self.generated_block_batch(g0, step, dims, out)? {
            return Ok(false);
        }
        let n = dims[0] as usize;
        if !self.layer.is_empty() {
            for (j, row) in out.chunks_exact_mut(n).enumerate() {
                let gz = g0[1] + j as i64 * step;
                for (i, h) in row.iter_mut().enumerate() {
                    *h = Self::on_layer(*h, self.delta([g0[0] + i as i64 * step, gz]));
                }
            }
        }
        Ok(true)
    }

    fn build(
        &self,
        key: &MeshKey,
        mesher: &mut HeightmapMesher,
        heights: &mut Vec<f32>,
        out: &mut HeightmapMesh,
    ) -> Result<(), WorldError> {
        self.chunk_heights(key.chunk, key.lod, heights)?;
        let input = HeightChunkInput::new(heights)
            .with_cells(self.params.chunk_cells)
            .with_lod(key.lod)
            .with_chunk(key.chunk)
            .with_cell_size(self.params.cell_size)
            .with_neighbours(key.neighbours);
        mesher.mesh(&input, &self.params.mesh, out)?;
        Ok(())
    }

    fn build_new(&self, key: &MeshKey) -> Result<HeightmapMesh, WorldError> {
        let mut mesh = HeightmapMesh::default();
        self.build(key, &mut HeightmapMesher::new(), &mut Vec::new(), &mut mesh)?;
        Ok(mesh)
    }
}

type JobResult = (MeshKey, u64, Result<HeightmapMesh, WorldError>);

/// An endless heightmap: heights from a [`HeightGen`] plus a sparse edit
/// layer, sculpt brushes with exact undo, and chunk meshes with levels of
/// detail.
///
/// # Heights and the edit layer
///
/// The height of global node `(gx, gz)` is `generated + delta`, where
/// `generated` is the generator at the node's world position (see
/// [`HeightmapParams`]) and `delta` comes from the edit layer: a map from
/// chunk to a `chunk_cells²` grid of deltas over the nodes the chunk owns
/// (`[c*N, c*N + N)` on each axis, row-major, x fastest). Only chunks with a
/// non-zero delta are in the layer, so only edited chunks need saving.
///
/// # Meshes
///
/// A chunk mesh at LOD `k` reads the `(n + 3)²` nodes of
/// [`sample_chunk_heights`] (its nodes at step `2^k` plus a one-node apron
/// for normals). Chunks at the same LOD share their border vertices and
/// normals bit for bit. Meshes are cached per [`MeshKey`]; an edit drops
/// exactly the cached meshes whose nodes it changed and marks their chunks
/// dirty.
///
/// # Threads
///
/// [`request`](Self::request) builds a mesh on a rayon worker (the global
/// pool, or the one given to [`set_thread_pool`](Self::set_thread_pool))
/// and [`poll`](Self::poll) / [`wait`](Self::wait) hand results back on the
/// caller's thread. A mesh is a pure function of the parameters, the edit
/// layer and its key, so the bytes do not depend on thread count or timing.
/// Without the `parallel` feature, `request` builds at once.
///
/// ```
/// use isoterra_world::{
///     EditDirection, HeightBrush, HeightTool, HeightmapParams, HeightmapSource, HeightmapWorld,
///     MeshKey, StreamViewer, desired_chunks, neighbour_lods,
/// };
///
/// # fn main() -> Result<(), isoterra_world::WorldError> {
/// let params = HeightmapParams::DEFAULT.with_seed(42).with_view_distance(128.0);
/// let mut world = HeightmapWorld::new(&params)?;
///
/// // Which chunks at which LOD around a viewer (with the world's LOD rings),
/// // and their stitched meshes. A `StreamScheduler` over the
/// // `HeightmapSource` would build and hand them out as the viewer moves.
/// let config = HeightmapSource::from_world(&world)?.stream_config();
/// let rings = (0..params.max_lod()).map(|k| params.lod_distance * (1u32 << k) as f32);
/// let viewer = StreamViewer::new([0.0, 20.0, 0.0], params.view_distance)
///     .with_lod_distances(rings.collect());
/// let selection: Vec<([i32; 2], u8)> = desired_chunks(&[viewer], &config)?
///     .into_iter()
///     .map(|(c, lod)| ([c[0], c[1]], lod))
///     .collect();
/// for ((chunk, lod), neighbours) in selection.iter().zip(neighbour_lods(&selection)) {
///     world.request(MeshKey::new(*chunk, *lod).with_neighbours(neighbours))?;
/// }
/// let ready = world.wait();
/// assert_eq!(ready.len(), selection.len());
///
/// // Sculpt, then undo exactly.
/// let edit = world.apply_brush(&HeightBrush::new(HeightTool::Raise, [10.0, 5.0], 12.0))?;
/// assert!(world.dirty_count() > 0);
/// world.apply_edit(&edit, EditDirection::Backward)?;
/// assert!(world.edited_chunks().is_empty());
/// # Ok(())
/// # }
/// ```
pub struct HeightmapWorld {
    src: HeightSource,
    meshes: HashMap<MeshKey, Arc<HeightmapMesh>>,
    dirty: BTreeSet<[i32; 2]>,
    epochs: HashMap<[i32; 2], u64>,
    pending: HashSet<MeshKey>,
    tx: Sender<JobResult>,
    rx: Mutex<Receiver<JobResult>>,
    mesher: HeightmapMesher,
    scratch: Vec<f32>,
    #[cfg(feature = "parallel")]
    pool: Option<Arc<rayon::ThreadPool>>,
}

impl std::fmt::Debug for HeightmapWorld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeightmapWorld")
            .field("params", &self.src.params)
            .field("edited_chunks", &self.src.layer.len())
            .field("cached_meshes", &self.meshes.len())
            .field("dirty", &self.dirty.len())
            .field("pending", &self.pending.len())
            .finish()
    }
}

/// `ceil(a / n)` for `n > 0`.
fn div_ceil(a: i64, n: i64) -> i64 {
    -((-a).div_euclid(n))
}

/// Where a ray meets a heightmap ([`HeightmapWorld::raycast`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeightHit {
    /// The first point at or under the ground, in world units.
    pub point: [f32; 3],
    /// Unit surface normal there, pointing up out of the ground.
    pub normal: [f32; 3],
    /// Distance from the ray's origin, in world units.
    pub distance: f32,
}

impl HeightmapWorld {
    /// A world with no edits.
    ///
    /// # Errors
    ///
    /// Invalid parameters (see [`HeightmapParams::validate`]).
    pub fn new(params: &HeightmapParams) -> Result<Self, WorldError> {
        params.validate()?;
        let generator = HeightGen::new(&params.generator, params.seed)?;
        let (tx, rx) = channel();
        Ok(HeightmapWorld {
            src: HeightSource {
                params: Arc::new(params.clone()),
                generator: Arc::new(generator),
                layer: HashMap::new(),
            },
            meshes: HashMap::new(),
            dirty: BTreeSet::new(),
            epochs: HashMap::new(),
            pending: HashSet::new(),
            tx,
            rx: Mutex::new(rx),
            mesher: HeightmapMesher::new(),
            scratch: Vec::new(),
            #[cfg(feature = "parallel")]
            pool: None,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &HeightmapParams {
        &self.src.params
    }

    /// The height generator.
    pub fn generator(&self) -> &HeightGen {
        &self.src.generator
    }

    /// The analytic range of the generated heights (edits may leave it).
    pub fn generated_range(&self) -> [f32; 2] {
        self.src.generator.range()
    }

    /// The generated height of global node `g` (without edits).
    pub fn generated_height(&self, g: [i64; 2]) -> f32 {
        self.src.generated(g)
    }

    /// The edit-layer delta of global node `g` (0 when unedited).
    pub fn delta(&self, g: [i64; 2]) -> f32 {
        self.src.delta(g)
    }

    /// The height of global node `g`: generated plus delta.
    pub fn height(&self, g: [i64; 2]) -> f32 {
        self.src.height(g)
    }

    /// The ground height at world point `(x, z)`: bilinear between the four
    /// nodes around it. `None` for a non-finite point or one beyond the
    /// node range.
    pub fn height_at(&self, x: f32, z: f32) -> Option<f32> {
        let cs = self.params().cell_size;
        let (fx, fz) = (x / cs, z / cs);
        let limit = MAX_NODE_COORD as f32 - 1.0;
        if !(fx.is_finite() && fz.is_finite()) || fx.abs() > limit || fz.abs() > limit {
            return None;
        }
        let (x0, z0) = (fx.floor(), fz.floor());
        let (tx, tz) = (fx - x0, fz - z0);
        let (gx, gz) = (x0 as i64, z0 as i64);
        let h = |dx: i64, dz: i64| self.height([gx + dx, gz + dz]);
        let a = h(0, 0) + (h(1, 0) - h(0, 0)) * tx;
        let b = h(0, 1) + (h(1, 1) - h(0, 1)) * tx;
        Some(a + (b - a) * tz)
    }

    /// The first point where the ray from `origin` along the unit vector
    /// `dir` goes under the ground, within `max` world units: marched in
    /// steps of a quarter cell, the first step that goes under bisected.
    /// A ray that starts under the ground hits at its origin. Returns the
    /// point, the surface normal there (up-facing, from the bilinear
    /// heights) and the distance; `None` for no hit or non-finite input.
    pub fn raycast(&self, origin: [f32; 3], dir: [f32; 3], max: f32) -> Option<HeightHit> {
        if !(origin.iter().chain(&dir).all(|v| v.is_finite()) && max.is_finite() && max >= 0.0) {
            return None;
        }
        let cs = self.params().cell_size;
        let at = |t: f32| [0, 1, 2].map(|a| origin[a] + dir[a] * t);
        let below = |t: f32| {
            let p = at(t);
            self.height_at(p[0], p[2]).map(|h| p[1] - h)
        };
        if below(0.0)? <= 0.0 {
            return Some(HeightHit {
                point: origin,
                normal: [0.0, 1.0, 0.0],
                distance: 0.0,
            });
        }
        let step = 0.25 * cs;
        let mut t0 = 0.0;
        while t0 < max {
            let t1 = (t0 + step).min(max);
            if below(t1)? <= 0.0 {
                let (mut lo, mut hi) = (t0, t1);
                for _ in 0..24 {
                    let mid = 0.5 * (lo + hi);
                    if below(mid)? <= 0.0 {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                let p = at(hi);
                let e = 0.5 * cs;
                let dx = self.height_at(p[0] + e, p[2])? - self.height_at(p[0] - e, p[2])?;
                let dz = self.height_at(p[0], p[2] + e)? - self.height_at(p[0], p[2] - e)?;
                let n = [-dx, 2.0 * e, -dz];
                let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
                return Some(HeightHit {
                    point: p,
                    normal: n.map(|v| v / len),
                    distance: hi,
                });
            }
            t0 = t1;
        }
        None
    }

    /// Fills `out` with the heights of a `dims[0] x dims[1]` block of nodes
    /// starting at global node `first` (row-major, x fastest).
    ///
    /// # Errors
    ///
    /// Zero or too large dims (more than `2^26` nodes) or nodes beyond
    /// `±2^30`; `out` is untouched then.
    pub fn region_heights(
        &self,
        first: [i64; 2],
        dims: [u32; 2],
        out: &mut Vec<f32>,
    ) -> Result<(), WorldError> {
        let count = u64::from(dims[0]) * u64::from(dims[1]);
        if count == 0 || count > 1 << 26 {
            return Err(WorldError::param(
                "dims",
                format!("{dims:?}"),
                "must be non-zero with at most 2^26 nodes",
            ));
        }
        for a in 0..2 {
            let last = first[a] + i64::from(dims[a]) - 1;
            if first[a].abs() > MAX_NODE_COORD || last.abs() > MAX_NODE_COORD {
                return Err(WorldError::param(
                    "first",
                    format!("{first:?}"),
                    "nodes must stay within +-2^30",
                ));
            }
        }
        // Eight generated heights at a time where that gives the same bits.
        if self.src.block_heights_batch(first, 1, dims, out)? {
            return Ok(());
        }
        out.clear();
        out.reserve(count as usize);
        for j in 0..i64::from(dims[1]) {
            for i in 0..i64::from(dims[0]) {
                out.push(self.src.height([first[0] + i, first[1] + j]));
            }
        }
        Ok(())
    }

    /// Computes the edit that sets a block of nodes to given heights (an
    /// import), without changing anything: node `first + (i, j)` gets
    /// `heights[j * dims[0] + i]`, stored as the delta
    /// `height - generated`. Reading it back gives `generated + delta`,
    /// which equals the given height up to one `f32` rounding.
    ///
    /// # Errors
    ///
    /// Dims as [`region_heights`](Self::region_heights), a length that is
    /// not `dims[0] * dims[1]`, or a height that is not finite or beyond
    /// `±1e9`.
    pub fn set_heights_edit(
        &self,
        first: [i64; 2],
        dims: [u32; 2],
        heights: &[f32],
    ) -> Result<HeightEdit, WorldError> {
        let mut current = Vec::new();
        self.region_heights(first, dims, &mut current)?;
        if heights.len() != current.len() {
            return Err(WorldError::mismatch(
                "height count",
                current.len(),
                heights.len(),
            ));
        }
        if let Some(h) = heights
            .iter()
            .find(|h| !(h.is_finite() && h.abs() <= MAX_SCULPT_HEIGHT))
        {
            return Err(WorldError::param(
                "heights",
                h,
                "every height must be finite and at most 1e9 in magnitude",
            ));
        }
        let mut edit = HeightEdit::default();
        let w = dims[0] as usize;
        for (k, &h) in heights.iter().enumerate() {
            let g = [first[0] + (k % w) as i64, first[1] + (k / w) as i64];
            let before = self.src.delta(g);
            let after = h - self.src.generated(g);
            if !after.is_finite() {
                return Err(WorldError::param(
                    "heights",
                    h,
                    "the difference to the generated height overflows",
                ));
            }
            if after.to_bits() != before.to_bits() {
                edit.nodes.push(g);
                edit.before.push(before);
                edit.after.push(after);
            }
        }
        Ok(edit)
    }

    /// Lays a block of heights straight into the edit layer, without an
    /// edit to undo (a world made from an imported image starts with them):
    /// node `first + (i, j)` gets `heights[j * dims[0] + i]`, stored as the
    /// delta `height - generated` (exact where the base is 0, as inside an
    /// extent whose outside is its edge). Unlike
    /// [`set_heights_edit`](Self::set_heights_edit) it holds no per-node
    /// record, so it takes blocks up to [`MAX_EXTENT_SIDE`](super::MAX_EXTENT_SIDE)
    /// nodes a side within the memory of the heights. Returns the edit
    /// chunks it wrote, sorted.
    ///
    /// # Errors
    ///
    /// Zero or too large dims, a length that is not `dims[0] * dims[1]`,
    /// nodes beyond `±2^30`, or a height that is not finite or beyond
    /// `±1e9`; nothing changes then.
    pub fn import_heights(
        &mut self,
        first: [i64; 2],
        dims: [u32; 2],
        heights: &[f32],
    ) -> Result<Vec<[i32; 2]>, WorldError> {
        let (w, h) = (dims[0] as usize, dims[1] as usize);
        if w == 0 || h == 0 || dims.iter().any(|&d| d > super::MAX_EXTENT_SIDE) {
            return Err(WorldError::param(
                "dims",
                format!("{dims:?}"),
                "must be from 1 to 2^20 nodes a side",
            ));
        }
        if heights.len() as u64 != w as u64 * h as u64 {
            return Err(WorldError::mismatch("height count", w * h, heights.len()));
        }
        for a in 0..2 {
            let last = first[a] + i64::from(dims[a]) - 1;
            if first[a].abs() > MAX_NODE_COORD - 2 * i64::from(self.src.params.chunk_cells)
                || last.abs() > MAX_NODE_COORD - 2 * i64::from(self.src.params.chunk_cells)
            {
                return Err(WorldError::param(
                    "first",
                    format!("{first:?}"),
                    "nodes must stay within +-2^30",
                ));
            }
        }
        if let Some(v) = heights
            .iter()
            .find(|v| !(v.is_finite() && v.abs() <= MAX_SCULPT_HEIGHT))
        {
            return Err(WorldError::param(
                "heights",
                v,
                "every height must be finite and at most 1e9 in magnitude",
            ));
        }
        let n = i64::from(self.src.params.chunk_cells);
        let nu = n as usize;
        let last = [first[0] + w as i64 - 1, first[1] + h as i64 - 1];
        let c0 = [first[0].div_euclid(n), first[1].div_euclid(n)];
        let c1 = [last[0].div_euclid(n), last[1].div_euclid(n)];
        let mut staged = Vec::new();
        for cz in c0[1]..=c1[1] {
            for cx in c0[0]..=c1[0] {
                let chunk = [cx as i32, cz as i32];
                let mut deltas = self
                    .src
                    .layer
                    .get(&chunk)
                    .map_or_else(|| vec![0.0; nu * nu], |d| d.to_vec());
                let base = [cx * n, cz * n];
                let z_lo = first[1].max(base[1]);
                let z_hi = last[1].min(base[1] + n - 1);
                let x_lo = first[0].max(base[0]);
                let x_hi = last[0].min(base[0] + n - 1);
                for gz in z_lo..=z_hi {
                    let row = (gz - first[1]) as usize * w;
                    for gx in x_lo..=x_hi {
                        let v = heights[row + (gx - first[0]) as usize];
                        let d = v - self.src.generated([gx, gz]);
                        if !d.is_finite() {
                            return Err(WorldError::param(
                                "heights",
                                v,
                                "the difference to the generated height overflows",
                            ));
                        }
                        deltas[((gz - base[1]) * n + gx - base[0]) as usize] = d;
                    }
                }
                staged.push((chunk, deltas));
            }
        }
        let mut ring = Vec::new();
        let mut written = Vec::with_capacity(staged.len());
        for (chunk, deltas) in staged {
            if deltas.iter().all(|d| d.to_bits() == 0) {
                self.src.layer.remove(&chunk);
            } else {
                self.src.layer.insert(chunk, Arc::new(deltas));
            }
            let base = [i64::from(chunk[0]) * n, i64::from(chunk[1]) * n];
            for k in 0..n {
                ring.extend_from_slice(&[
                    [base[0] + k, base[1]],
                    [base[0] + k, base[1] + n - 1],
                    [base[0], base[1] + k],
                    [base[0] + n - 1, base[1] + k],
                ]);
            }
            written.push(chunk);
        }
        self.invalidate(&ring);
        written.sort_unstable();
        Ok(written)
    }

    /// The chunks of the edit layer, sorted.
    pub fn edited_chunks(&self) -> Vec<[i32; 2]> {
        let mut v: Vec<[i32; 2]> = self.src.layer.keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// The delta grid of an edited chunk (`chunk_cells²` values over the
    /// nodes it owns, row-major, x fastest).
    pub fn edit_chunk(&self, chunk: [i32; 2]) -> Option<&[f32]> {
        self.src.layer.get(&chunk).map(|d| d.as_slice())
    }

    /// Replaces the delta grid of a chunk (loading a saved world); an
    /// all-zero grid removes the chunk from the layer. Drops the cached
    /// meshes that read the chunk's nodes and marks them dirty.
    ///
    /// # Errors
    ///
    /// A grid that is not `chunk_cells²` long or holds a non-finite value, or
    /// a chunk too far from the origin; nothing changes then.
    pub fn set_edit_chunk(&mut self, chunk: [i32; 2], deltas: Vec<f32>) -> Result<(), WorldError> {
        let n = self.src.params.chunk_cells as usize;
        if deltas.len() != n * n {
            return Err(WorldError::mismatch(
                "edit chunk length",
                n * n,
                deltas.len(),
            ));
        }
        if deltas.iter().any(|d| !d.is_finite()) {
            return Err(WorldError::param(
                "deltas",
                "non-finite value",
                "every delta must be finite",
            ));
        }
        self.src.check_key(&MeshKey::new(chunk, 0))?;
        let ni = i64::from(self.src.params.chunk_cells);
        let base = [i64::from(chunk[0]) * ni, i64::from(chunk[1]) * ni];
        let mut nodes = Vec::with_capacity(n * n);
        for j in 0..ni {
            for i in 0..ni {
                nodes.push([base[0] + i, base[1] + j]);
            }
        }
        if deltas.iter().all(|d| d.to_bits() == 0) {
            self.src.layer.remove(&chunk);
        } else {
            self.src.layer.insert(chunk, Arc::new(deltas));
        }
        self.invalidate(&nodes);
        Ok(())
    }

    /// Chunks whose meshes changed since the last
    /// [`take_dirty`](Self::take_dirty), sorted.
    pub fn dirty_chunks(&self) -> Vec<[i32; 2]> {
        self.dirty.iter().copied().collect()
    }

    /// Number of dirty chunks.
    pub fn dirty_count(&self) -> usize {
        self.dirty.len()
    }

    /// Returns the dirty chunks, sorted, and clears the set.
    pub fn take_dirty(&mut self) -> Vec<[i32; 2]> {
        std::mem::take(&mut self.dirty).into_iter().collect()
    }

    /// Every `(chunk, lod)` whose mesh reads one of `nodes`, sorted: at LOD
    /// `k` (step `s = 2^k`) chunk `c` reads node `g` when both coordinates
    /// are multiples of `s` and `c*N - s <= g <= c*N + N + s` on both axes.
    pub fn chunks_reading(&self, nodes: &[[i64; 2]]) -> Vec<([i32; 2], u8)> {
        let n = i64::from(self.src.params.chunk_cells);
        let mut out = BTreeSet::new();
        for lod in 0..self.src.params.lod_count {
            let s = 1i64 << lod;
            let mut seen: HashSet<[i64; 4]> = HashSet::new();
            for g in nodes {
                if g[0].rem_euclid(s) != 0 || g[1].rem_euclid(s) != 0 {
                    continue;
                }
                let r = [
                    div_ceil(g[0] - n - s, n),
                    (g[0] + s).div_euclid(n),
                    div_ceil(g[1] - n - s, n),
                    (g[1] + s).div_euclid(n),
                ];
                if !seen.insert(r) {
                    continue;
                }
                for cz in r[2]..=r[3] {
                    for cx in r[0]..=r[1] {
                        out.insert(([cx as i32, cz as i32], lod));
                    }
                }
            }
        }
        out.into_iter().collect()
    }

    /// Every `(chunk, lod)` whose mesh an edit changes, sorted (see
    /// [`chunks_reading`](Self::chunks_reading)).
    pub fn affected(&self, edit: &HeightEdit) -> Vec<([i32; 2], u8)> {
        self.chunks_reading(&edit.nodes)
    }

    fn invalidate(&mut self, nodes: &[[i64; 2]]) {
        let hit = self.chunks_reading(nodes);
        if hit.is_empty() {
            return;
        }
        let set: HashSet<([i32; 2], u8)> = hit.iter().copied().collect();
        self.meshes.retain(|k, _| !set.contains(&(k.chunk, k.lod)));
        for (c, _) in hit {
            self.dirty.insert(c);
            *self.epochs.entry(c).or_insert(0) += 1;
        }
    }

    /// Applies a sculpt brush and returns what it changed (empty when the
    /// brush covers no node or changes nothing).
    ///
    /// # Errors
    ///
    /// An invalid brush (see [`HeightBrush::validate`]) or a sculpted height
    /// that would not be finite or leave `±1e9`; nothing changes then.
    pub fn apply_brush(&mut self, brush: &HeightBrush) -> Result<HeightEdit, WorldError> {
        let edit = self.brush_edit(brush)?;
        self.write(&edit, EditDirection::Forward);
        Ok(edit)
    }

    /// Computes what a brush would change, without changing anything.
    ///
    /// # Errors
    ///
    /// As [`apply_brush`](Self::apply_brush).
    pub fn brush_edit(&self, brush: &HeightBrush) -> Result<HeightEdit, WorldError> {
        let p = &self.src.params;
        brush.validate(p.cell_size)?;
        let cs = f64::from(p.cell_size);
        let cx = f64::from(brush.center[0]) / cs;
        let cz = f64::from(brush.center[1]) / cs;
        let r = f64::from(brush.radius) / cs;
        let x0 = (cx - r).ceil() as i64;
        let x1 = (cx + r).floor() as i64;
        let z0 = (cz - r).ceil() as i64;
        let z1 = (cz + r).floor() as i64;
        let mut edit = HeightEdit::default();
        if x0 > x1 || z0 > z1 {
            return Ok(edit);
        }
        let strength = f64::from(brush.strength);
        let amount = f64::from(brush.radius) * 0.25;
        let target = match (brush.tool, brush.target_height) {
            (HeightTool::Flatten, Some(t)) => f64::from(t),
            (HeightTool::Flatten, None) => {
                f64::from(self.src.height([cx.round() as i64, cz.round() as i64]))
            }
            _ => 0.0,
        };
        let noise = if brush.tool == HeightTool::Noise {
            let seed = p.seed ^ brush.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5C0_1D5;
            let fp = FractalParams::DEFAULT
                .with_octaves(3)
                .with_frequency(2.0 / brush.radius);
            Some(Fractal::new(&fp, seed)?)
        } else {
            None
        };
        // Eroded heights of the brush's square (erode and thermal).
        let eroded = match brush.tool {
            HeightTool::Erode | HeightTool::Thermal => {
                self.eroded_square(brush, [x0, z0], [x1, z1])?
            }
            _ => Vec::new(),
        };
        let ew = (x1 - x0 + 1) as usize;
        // Generated heights of the square with a one-node ring (for
        // smoothing), read once: eight at a time where that gives the same
        // bits (see `region_heights`).
        let w = (x1 - x0 + 3) as usize;
        let mut generated = Vec::new();
        self.src.generated_block(
            [x0 - 1, z0 - 1],
            [w as u32, (z1 - z0 + 3) as u32],
            &mut generated,
        )?;
        // Heights before the stamp, with the ring.
        let old: Vec<f32> = if brush.tool == HeightTool::Smooth {
            let mut v = Vec::with_capacity(generated.len());
            for (j, gz) in (z0 - 1..=z1 + 1).enumerate() {
                for (i, gx) in (x0 - 1..=x1 + 1).enumerate() {
                    v.push(HeightSource::on_layer(
                        generated[j * w + i],
                        self.src.delta([gx, gz]),
                    ));
                }
            }
            v
        } else {
            Vec::new()
        };
        for gz in z0..=z1 {
            for gx in x0..=x1 {
                let dx = gx as f64 - cx;
                let dz = gz as f64 - cz;
                let d = (dx * dx + dz * dz).sqrt();
                if d >= r {
                    continue;
                }
                let t = 1.0 - d / r;
                let wgt = t * t * (3.0 - 2.0 * t);
                let g = [gx, gz];
                let before = self.src.delta(g);
                let base = generated[(gz - z0 + 1) as usize * w + (gx - x0 + 1) as usize];
                let change = match brush.tool {
                    HeightTool::Raise => strength * wgt * amount,
                    HeightTool::Lower => -strength * wgt * amount,
                    HeightTool::Smooth => {
                        let i = (gx - x0 + 1) as usize;
                        let j = (gz - z0 + 1) as usize;
                        let mut sum = 0.0f64;
                        for jj in j - 1..=j + 1 {
                            for ii in i - 1..=i + 1 {
                                sum += f64::from(old[jj * w + ii]);
                            }
                        }
                        strength * wgt * (sum / 9.0 - f64::from(old[j * w + i]))
                    }
                    HeightTool::Flatten => {
                        strength * wgt * (target - f64::from(HeightSource::on_layer(base, before)))
                    }
                    HeightTool::Noise => {
                        let n = noise
                            .as_ref()
                            .map_or(0.0, |f| f.sample2(p.node_coord(gx), p.node_coord(gz)));
                        strength * wgt * amount * f64::from(n)
                    }
                    HeightTool::Erode | HeightTool::Thermal => {
                        let e = eroded[(gz - z0) as usize * ew + (gx - x0) as usize];
                        strength
                            * wgt
                            * (f64::from(e) - f64::from(HeightSource::on_layer(base, before)))
                    }
                };
                let after = (f64::from(before) + change) as f32;
                let h = base + after;
                if !(after.is_finite() && h.is_finite() && h.abs() <= MAX_SCULPT_HEIGHT) {
                    return Err(WorldError::param(
                        "brush",
                        format!("{:?}", brush.center),
                        "the sculpted height would leave +-1e9",
                    ));
                }
                if after.to_bits() != before.to_bits() {
                    edit.nodes.push(g);
                    edit.before.push(before);
                    edit.after.push(after);
                }
            }
        }
        Ok(edit)
    }

    /// The heights of nodes `lo..=hi` after the erosion of `brush`'s tool
    /// (see [`HeightTool::Erode`] and [`HeightTool::Thermal`]), by the
    /// tiling rule: grown by the erosion's margin, eroded, cut back.
    fn eroded_square(
        &self,
        brush: &HeightBrush,
        lo: [i64; 2],
        hi: [i64; 2],
    ) -> Result<Vec<f32>, WorldError> {
        use isoterra_field::erosion::{erode_tile, thermal_tile};
        let p = &self.src.params;
        let dims = [(hi[0] - lo[0] + 1) as u32, (hi[1] - lo[1] + 1) as u32];
        // The block the erosion reads (the square grown by its margin), read
        // once: eight generated heights at a time where that gives the same
        // bits (see `region_heights`).
        let margin = if brush.tool == HeightTool::Erode {
            HeightTool::ERODE_PARAMS.margin()
        } else {
            HeightTool::THERMAL_PARAMS.margin()
        };
        let first = [lo[0] - i64::from(margin), lo[1] - i64::from(margin)];
        let grown = [dims[0] + 2 * margin, dims[1] + 2 * margin];
        let mut block = Vec::new();
        self.region_heights(first, grown, &mut block)?;
        let height = |x: i64, z: i64| {
            let (i, j) = ((x - first[0]) as usize, (z - first[1]) as usize);
            block[j * grown[0] as usize + i]
        };
        // Heights in erosion units (see the tools), scaled back after.
        let (out, unit) = if brush.tool == HeightTool::Erode {
            let unit = self.erosion_height_unit();
            let seed = p.seed ^ brush.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x000E_70DE;
            let out = erode_tile(&HeightTool::ERODE_PARAMS, seed, lo, dims, |x, z| {
                height(x, z) / unit
            })?;
            (out, unit)
        } else {
            let cs = p.cell_size;
            let out = thermal_tile(&HeightTool::THERMAL_PARAMS, lo, dims, |x, z| {
                height(x, z) / cs
            })?;
            (out, cs)
        };
        Ok(out.into_iter().map(|v| v * unit).collect())
    }

    /// The height unit hydraulic erosion works in (the erode tool, and
    /// `isoterra erode`): the span of the generator's heights, at least one
    /// cell size. Droplet parameters are tuned for heights of about 0..1, so
    /// the same settings carve low hills and high mountains alike.
    pub fn erosion_height_unit(&self) -> f32 {
        let [lo, hi] = self.generated_range();
        (hi - lo).max(self.src.params.cell_size)
    }

    /// Writes one side of an edit into the edit layer (undo or redo),
    /// restoring the exact bits, and drops the meshes it changes.
    ///
    /// # Errors
    ///
    /// A malformed edit (see [`HeightEdit::validate`]); nothing changes then.
    pub fn apply_edit(&mut self, edit: &HeightEdit, dir: EditDirection) -> Result<(), WorldError> {
        edit.validate()?;
        self.write(edit, dir);
        Ok(())
    }

    fn write(&mut self, edit: &HeightEdit, dir: EditDirection) {
        if edit.is_empty() {
            return;
        }
        let values = match dir {
            EditDirection::Forward => &edit.after,
            EditDirection::Backward => &edit.before,
        };
        let n = self.src.params.chunk_cells as usize;
        let mut touched = BTreeSet::new();
        for (g, v) in edit.nodes.iter().zip(values) {
            let (c, idx) = self.src.owner(*g);
            let grid = self
                .src
                .layer
                .entry(c)
                .or_insert_with(|| Arc::new(vec![0.0; n * n]));
            Arc::make_mut(grid)[idx] = *v;
            touched.insert(c);
        }
        for c in touched {
            if self.src.layer[&c].iter().all(|d| d.to_bits() == 0) {
                self.src.layer.remove(&c);
            }
        }
        self.invalidate(&edit.nodes);
    }

    /// Fills `out` with the `(n + 3)²` heights a mesh of `chunk` at `lod`
    /// reads (see [`sample_chunk_heights`]).
    ///
    /// # Errors
    ///
    /// A LOD beyond the world's levels or a chunk too far from the origin.
    pub fn chunk_heights(
        &self,
        chunk: [i32; 2],
        lod: u8,
        out: &mut Vec<f32>,
    ) -> Result<(), WorldError> {
        self.src.chunk_heights(chunk, lod, out)
    }

    /// Builds a chunk mesh without touching the cache.
    ///
    /// # Errors
    ///
    /// A bad key (LOD beyond the world's levels, a neighbour LOD above
    /// `lod + 1`, a chunk too far away) or a mesher error.
    pub fn build_mesh(&self, key: &MeshKey) -> Result<HeightmapMesh, WorldError> {
        self.src.build_new(key)
    }

    /// Builds a chunk mesh into `out` with a caller's mesher and scratch
    /// (allocation-free once they have grown).
    ///
    /// # Errors
    ///
    /// As [`build_mesh`](Self::build_mesh).
    pub fn build_mesh_into(
        &self,
        key: &MeshKey,
        mesher: &mut HeightmapMesher,
        heights: &mut Vec<f32>,
        out: &mut HeightmapMesh,
    ) -> Result<(), WorldError> {
        self.src.build(key, mesher, heights, out)
    }

    /// Builds many meshes (in parallel with the `parallel` feature, one
    /// mesher per worker), in the order of `keys`. The cache is untouched.
    pub fn build_meshes(&self, keys: &[MeshKey]) -> Vec<Result<HeightmapMesh, WorldError>> {
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            let src = &self.src;
            keys.par_iter()
                .map_init(
                    || (HeightmapMesher::new(), Vec::new()),
                    |(mesher, heights), key| {
                        let mut mesh = HeightmapMesh::default();
                        src.build(key, mesher, heights, &mut mesh).map(|()| mesh)
                    },
                )
                .collect()
        }
        #[cfg(not(feature = "parallel"))]
        {
            keys.iter().map(|k| self.src.build_new(k)).collect()
        }
    }

    /// The cached mesh of `key`, building it on this thread if needed.
    ///
    /// # Errors
    ///
    /// As [`build_mesh`](Self::build_mesh).
    pub fn mesh(&mut self, key: &MeshKey) -> Result<Arc<HeightmapMesh>, WorldError> {
        if let Some(m) = self.meshes.get(key) {
            return Ok(Arc::clone(m));
        }
        let mut mesh = HeightmapMesh::default();
        self.src
            .build(key, &mut self.mesher, &mut self.scratch, &mut mesh)?;
        let mesh = Arc::new(mesh);
        self.meshes.insert(*key, Arc::clone(&mesh));
        Ok(mesh)
    }

    /// The cached mesh of `key`, if any.
    pub fn cached_mesh(&self, key: &MeshKey) -> Option<Arc<HeightmapMesh>> {
        self.meshes.get(key).cloned()
    }

    /// Number of cached meshes.
    pub fn cached_count(&self) -> usize {
        self.meshes.len()
    }

    /// Drops every cached mesh of the given chunks (streamed out).
    pub fn unload(&mut self, chunks: &[[i32; 2]]) {
        let set: HashSet<[i32; 2]> = chunks.iter().copied().collect();
        self.meshes.retain(|k, _| !set.contains(&k.chunk));
    }

    /// Uses `pool` for [`request`](Self::request) jobs instead of rayon's
    /// global pool (`None`: back to the global pool).
    #[cfg(feature = "parallel")]
    pub fn set_thread_pool(&mut self, pool: Option<Arc<rayon::ThreadPool>>) {
        self.pool = pool;
    }

    /// Asks for the mesh of `key` to be built on a worker thread. Returns
    /// `Ok(false)` when it is already cached or pending. Results come back
    /// through [`poll`](Self::poll) or [`wait`](Self::wait); a result that an
    /// edit made stale before it came back is dropped (request it again).
    ///
    /// # Errors
    ///
    /// A bad key (checked here, before any work is queued).
    pub fn request(&mut self, key: MeshKey) -> Result<bool, WorldError> {
        self.src.check_key(&key)?;
        if key
            .neighbours
            .iter()
            .any(|&n| n > key.lod.saturating_add(1))
        {
            return Err(WorldError::param(
                "neighbours",
                format!("{:?}", key.neighbours),
                "each neighbour LOD must be at most lod + 1 (the 2:1 rule)",
            ));
        }
        if self.meshes.contains_key(&key) || self.pending.contains(&key) {
            return Ok(false);
        }
        let epoch = self.epochs.get(&key.chunk).copied().unwrap_or(0);
        let src = self.src.around(key.chunk);
        let tx = self.tx.clone();
        let job = move || {
            let r = src.build_new(&key);
            // The receiver lives as long as the world; a send error only
            // means the world is gone and nobody wants the mesh.
            let _ = tx.send((key, epoch, r));
        };
        self.pending.insert(key);
        #[cfg(feature = "parallel")]
        match &self.pool {
            Some(pool) => pool.spawn(job),
            None => rayon::spawn(job),
        }
        #[cfg(not(feature = "parallel"))]
        job();
        Ok(true)
    }

    /// Number of requested meshes not yet handed back.
    pub fn pending_count(&self) -> usize {
        self.pending.len()
    }

    fn accept(&mut self, (key, epoch, r): JobResult, out: &mut Vec<MeshReady>) {
        self.pending.remove(&key);
        if self.epochs.get(&key.chunk).copied().unwrap_or(0) != epoch {
            return;
        }
        let mesh = r.map(|m| {
            let m = Arc::new(m);
            self.meshes.insert(key, Arc::clone(&m));
            m
        });
        out.push(MeshReady { key, mesh });
    }

    /// Hands back the meshes finished so far (cached as well), without
    /// blocking, sorted by key.
    pub fn poll(&mut self) -> Vec<MeshReady> {
        let mut out = Vec::new();
        loop {
            let next = self
                .rx
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner)
                .try_recv();
            match next {
                Ok(r) => self.accept(r, &mut out),
                Err(_) => break,
            }
        }
        out.sort_by_key(|r| r.key);
        out
    }

    /// Blocks until every requested mesh is back and hands them over,
    /// sorted by key. Do not call it from a job of the pool the world uses.
    pub fn wait(&mut self) -> Vec<MeshReady> {
        let mut out = Vec::new();
        while !self.pending.is_empty() {
            let next = self
                .rx
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner)
                .recv();
            match next {
                Ok(r) => self.accept(r, &mut out),
                Err(_) => break,
            }
        }
        out.sort_by_key(|r| r.key);
        out
    }

    /// The heightfield collider of a chunk at a LOD.
    ///
    /// # Errors
    ///
    /// As [`chunk_heights`](Self::chunk_heights).
    pub fn collider(&self, chunk: [i32; 2], lod: u8) -> Result<HeightfieldCollider, WorldError> {
        let mut heights = Vec::new();
        self.src.chunk_heights(chunk, lod, &mut heights)?;
        self.collider_from_heights(chunk, lod, &heights)
    }

    /// [`collider`](Self::collider) from the heights that
    /// [`build_mesh_into`](Self::build_mesh_into) of the same chunk and LOD
    /// left in its `heights` (the same heights: a mesh and its collider are
    /// read once).
    pub(crate) fn collider_from_heights(
        &self,
        chunk: [i32; 2],
        lod: u8,
        heights: &[f32],
    ) -> Result<HeightfieldCollider, WorldError> {
        let input = HeightChunkInput::new(heights)
            .with_cells(self.src.params.chunk_cells)
            .with_lod(lod)
            .with_chunk(chunk)
            .with_cell_size(self.src.params.cell_size);
        Ok(HeightfieldCollider::from_chunk(&input)?)
    }

    /// A box `(min, max)` holding every vertex of the chunk at any LOD: x and
    /// z from the mesher's position formula, y from the generator's analytic
    /// range widened by the smallest and largest deltas of the edit chunks
    /// its vertices read.
    pub fn chunk_aabb(&self, chunk: [i32; 2]) -> ([f32; 3], [f32; 3]) {
        let p = &self.src.params;
        let n = i64::from(p.chunk_cells);
        let x0 = i64::from(chunk[0]) * n;
        let z0 = i64::from(chunk[1]) * n;
        let [mut lo, mut hi] = self.src.generator.range();
        let (mut dlo, mut dhi) = (0.0f32, 0.0f32);
        for dz in 0..=1 {
            for dx in 0..=1 {
                let c = [chunk[0].wrapping_add(dx), chunk[1].wrapping_add(dz)];
                if let Some(d) = self.src.layer.get(&c) {
                    for v in d.iter() {
                        dlo = dlo.min(*v);
                        dhi = dhi.max(*v);
                    }
                }
            }
        }
        if dlo < 0.0 {
            lo += dlo;
        }
        if dhi > 0.0 {
            hi += dhi;
        }
        (
            [p.node_coord(x0), lo, p.node_coord(z0)],
            [p.node_coord(x0 + n), hi, p.node_coord(z0 + n)],
        )
    }

    /// The chunks of `selection` whose [`chunk_aabb`](Self::chunk_aabb)
    /// meets the frustum of `view_projection` (column-major, OpenGL clip
    /// convention; see [`Frustum`]), in the same order.
    ///
    /// # Errors
    ///
    /// A non-finite matrix element.
    pub fn cull(
        &self,
        selection: &[([i32; 2], u8)],
        view_projection: &[f32; 16],
    ) -> Result<Vec<([i32; 2], u8)>, WorldError> {
        let f = Frustum::from_view_projection(view_projection)?;
        Ok(selection
            .iter()
            .filter(|(c, _)| {
                let (min, max) = self.chunk_aabb(*c);
                f.intersects_aabb(min, max)
            })
            .copied()
            .collect())
    }

    /// The edit layer as sorted `(chunk, deltas)` pairs (what a world file
    /// stores).
    pub fn edit_layer(&self) -> BTreeMap<[i32; 2], Vec<f32>> {
        self.src
            .layer
            .iter()
            .map(|(c, d)| (*c, d.as_ref().clone()))
            .collect()
    }
}
