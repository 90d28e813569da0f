//! A [`ChunkSource`] for voxel worlds: generate a chunk's nodes (edited
//! chunks from a snapshot) and mesh it with marching cubes.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};

use isoterra_field::{DensitySampler, HeightGen, HeightParams, VoxelPreset};
use isoterra_mesh::{CellBox, CubesOptions, CubesOutput, LodChunkInput, LodMesher, MarchingCubes};

use super::select::{ChunkCoord, Dim, StreamConfig};
use super::source::{CancelFlag, ChunkRequest, ChunkSource};
use crate::voxel::{VoxelChunk, VoxelChunkData, VoxelChunkMaterials, VoxelChunkMesh};
use crate::{VoxelParams, VoxelWorld, WorldError};

/// Largest node coordinate a streamed voxel chunk may reach (exact in `f32`).
const NODE_LIMIT: i64 = 1 << 24;

/// Edited voxel chunks by coordinate, shared between the application and
/// the build threads. Each chunk is shared too, so replacing a few chunks
/// ([`VoxelSource::set_chunks`]) copies pointers, not nodes.
pub type VoxelEdits = Arc<HashMap<ChunkCoord, Arc<VoxelChunk>>>;

/// The buffers of one build.
#[derive(Default)]
struct Scratch {
    cubes: MarchingCubes,
    out: CubesOutput,
    values: Vec<f32>,
    /// The sampled rows when the top of the grid is surely air.
    part: Vec<f32>,
    mats: Vec<u8>,
    /// The mesher with transition cells, for stitched builds.
    lod: LodMesher,
    /// The chunk's own `(cells + 1)^3` samples and material ids.
    inner: Vec<f32>,
    inner_mats: Vec<u8>,
    /// Fine samples of the faces toward finer neighbours, and around them.
    faces: [Vec<f32>; 6],
    fine_aprons: [Vec<f32>; 6],
}

/// The faces and edges of a chunk whose neighbour is one level finer.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Finer {
    faces: u8,
    edges: u16,
    /// The faces and edges whose neighbour is one level coarser.
    coarser_faces: u8,
    coarser_edges: u16,
}

impl Finer {
    fn refines(&self) -> bool {
        self.faces != 0 || self.edges != 0
    }
}

/// Builds voxel chunks for a [`StreamScheduler`](crate::StreamScheduler):
/// the generator of a [`VoxelParams`] plus a snapshot of edited chunks
/// (the ones a world file stores), meshed by marching cubes. The output is
/// the chunk's [`VoxelChunkMesh`], which is also its collider
/// ([`VoxelChunkMesh::trimesh`]).
///
/// Stream chunk `c` is the world chunk `c` (`chunk_cells` cells per axis,
/// one world unit per cell; use [`stream_config`](Self::stream_config)). At
/// LOD `k` it samples every `2^k`-th node, so it has `chunk_cells >> k`
/// cells per axis (LODs above `log2` of the largest power of two dividing
/// `chunk_cells` are built at that LOD). At LOD 0 the mesh is bit for bit
/// what [`VoxelWorld::mesh_chunk`] gives once the 27 chunks around `c` are
/// loaded ([`build_mesh`](Self::build_mesh)).
///
/// Streamed chunks ([`ChunkSource::build`], [`build_request`](Self::build_request))
/// are meshed with transition cells ([`LodMesher`], as
/// [`VoxelLodMesher`](crate::VoxelLodMesher) does): a chunk at LOD `k > 0`
/// refines its faces and edges whose neighbour in the request is at LOD
/// `k - 1`, and positions are measured on the global node grid, so chunks of
/// one settled stream share their seam vertices exactly and a closed surface
/// stays closed across LOD changes.
///
/// Chunks that lie wholly above the highest ground the generator can make
/// (and touch no edited chunk) are empty at once, without sampling.
///
/// The edited chunks can change while jobs run
/// ([`set_chunks`](Self::set_chunks), [`update_from_world`](Self::update_from_world)):
/// each build reads one snapshot of them from start to end, so a build that
/// started before the change sees the old data; invalidate the chunks that
/// read a changed node ([`StreamScheduler::invalidate_where`](crate::StreamScheduler::invalidate_where)
/// with [`reads_dirty`](Self::reads_dirty)) to have them built again.
pub struct VoxelSource {
    params: VoxelParams,
    sampler: DensitySampler,
    edits: RwLock<VoxelEdits>,
    /// Nodes with `y` above this are air for the generator.
    air_above: Option<f64>,
    /// The generator's ground, to find air above each chunk's columns.
    ground: Option<Ground>,
    /// The highest ground under each `(cx, cz, lod)` column of grids.
    columns: Mutex<HashMap<[i32; 3], f32>>,
    /// The ground heights under recent `(cx, cz, lod)` columns of grids.
    grounds: Mutex<HashMap<[i32; 3], Arc<[f32]>>>,
    scratch: Mutex<Vec<Scratch>>,
}

/// The ground of the caves and overhangs presets: a node is air (exactly
/// `-1`) when its `y` exceeds `offset + height(x, z)`.
struct Ground {
    height: HeightGen,
    offset: f64,
}

/// Most column entries kept before the cache starts over.
const COLUMN_CACHE: usize = 1 << 14;

/// Most columns whose ground heights are kept before that cache starts
/// over: about 5 MB at 32-cell chunks (4.9 KB a column).
const GROUND_CACHE: usize = 1 << 10;

impl std::fmt::Debug for VoxelSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VoxelSource")
            .field("params", &self.params)
            .field("edited_chunks", &self.edits().len())
            .finish_non_exhaustive()
    }
}

impl VoxelSource {
    /// A source of generated chunks (no edits).
    ///
    /// # Errors
    ///
    /// As [`VoxelParams::validate`].
    pub fn new(params: &VoxelParams) -> Result<Self, WorldError> {
        Self::with_edits(params, Arc::new(HashMap::new()))
    }

    /// A source whose chunks listed in `edits` come from there (densities
    /// and materials of the chunk's `N³` owned nodes) and the rest from the
    /// generator.
    ///
    /// # Errors
    ///
    /// As [`VoxelParams::validate`]; [`WorldError::Mismatch`] when an edited
    /// chunk does not hold `N³` nodes.
    pub fn with_edits(params: &VoxelParams, edits: VoxelEdits) -> Result<Self, WorldError> {
        params.validate()?;
        for chunk in edits.values() {
            check_chunk(params, chunk)?;
        }
        let g = &params.generator;
        // The generator's ground is `ground_level + (h - mid) - y` for the
        // height `h` of the same height generator the sampler builds, and
        // bounds the density from above (plus the overhang push); two ramp
        // widths past it the clamp gives exactly -1.
        let ground = match g.preset {
            VoxelPreset::Caves | VoxelPreset::Overhangs | VoxelPreset::Mesas => {
                let height = HeightGen::new(
                    &HeightParams::DEFAULT.with_height_scale(g.ground_height_scale()),
                    g.seed,
                )?;
                let [lo, hi] = height.range();
                let mid = 0.5 * (f64::from(lo) + f64::from(hi));
                let margin = 2.0 * f64::from(g.falloff) + 1.0;
                let mut offset = f64::from(g.ground_level) - mid + margin;
                if g.preset == VoxelPreset::Overhangs {
                    offset += 1.25 * f64::from(g.overhang_strength);
                }
                if g.preset == VoxelPreset::Mesas {
                    // A terrace rises up to one step above the height;
                    // floating rocks reach the top of their band, over
                    // every column (the lowest height included).
                    offset += f64::from(g.terrace_step());
                    if g.rock_density > 0.0 {
                        let top = f64::from(g.rock_band([lo, hi])[1]);
                        offset = offset.max(top + margin - f64::from(lo));
                    }
                }
                Some(Ground { height, offset })
            }
            VoxelPreset::Planet => None,
        };
        let air_above = ground
            .as_ref()
            .map(|gr| gr.offset + f64::from(gr.height.range()[1]) + 1.0);
        Ok(VoxelSource {
            params: *params,
            sampler: g.sampler()?,
            edits: RwLock::new(edits),
            air_above,
            ground,
            columns: Mutex::new(HashMap::new()),
            grounds: Mutex::new(HashMap::new()),
            scratch: Mutex::new(Vec::new()),
        })
    }

    /// A source over a snapshot of `world`: its parameters and its modified
    /// chunks (copied once; later edits to the world are not seen).
    ///
    /// # Errors
    ///
    /// As [`with_edits`](Self::with_edits).
    pub fn from_world(world: &VoxelWorld) -> Result<Self, WorldError> {
        let edits: HashMap<ChunkCoord, Arc<VoxelChunk>> = world
            .modified_chunks()
            .filter_map(|c| world.chunk(c).map(|ch| (c, Arc::new(ch.clone()))))
            .collect();
        Self::with_edits(world.params(), Arc::new(edits))
    }

    /// The parameters.
    pub fn params(&self) -> &VoxelParams {
        &self.params
    }

    /// A snapshot of the edited chunks.
    pub fn edits(&self) -> VoxelEdits {
        Arc::clone(&self.edits.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Replaces edited chunks: `Some(chunk)` sets the chunk's data, `None`
    /// makes it a generated chunk again. Only the listed chunks change; the
    /// others are shared with the previous snapshot (no node is copied).
    /// Builds already running keep the snapshot they started with. Returns
    /// how many chunks were listed.
    ///
    /// # Errors
    ///
    /// [`WorldError::Mismatch`] when a chunk does not hold `N³` nodes;
    /// nothing changes then.
    pub fn set_chunks(
        &self,
        chunks: impl IntoIterator<Item = (ChunkCoord, Option<Arc<VoxelChunk>>)>,
    ) -> Result<usize, WorldError> {
        let chunks: Vec<(ChunkCoord, Option<Arc<VoxelChunk>>)> = chunks.into_iter().collect();
        for (_, chunk) in &chunks {
            if let Some(chunk) = chunk {
                check_chunk(&self.params, chunk)?;
            }
        }
        let mut guard = self.edits.write().unwrap_or_else(|e| e.into_inner());
        let mut next: HashMap<ChunkCoord, Arc<VoxelChunk>> = (**guard).clone();
        for (c, chunk) in &chunks {
            match chunk {
                Some(ch) => {
                    next.insert(*c, Arc::clone(ch));
                }
                None => {
                    next.remove(c);
                }
            }
        }
        *guard = Arc::new(next);
        Ok(chunks.len())
    }

    /// Copies the chunks `coords` from `world` (a world of the same
    /// parameters, usually the one being edited): its modified chunks among
    /// them become edited chunks of the source, the others generated ones.
    /// Pass the chunks an edit changed, for example what the world's
    /// [`take_dirty`](VoxelWorld::take_dirty) returns. Returns
    /// how many chunks were listed.
    ///
    /// # Errors
    ///
    /// [`WorldError::Mismatch`] when the world's chunk size differs; nothing
    /// changes then.
    pub fn update_from_world(
        &self,
        world: &VoxelWorld,
        coords: impl IntoIterator<Item = ChunkCoord>,
    ) -> Result<usize, WorldError> {
        if world.chunk_cells() != self.params.chunk_cells {
            return Err(WorldError::mismatch(
                "chunk_cells",
                self.params.chunk_cells,
                world.chunk_cells(),
            ));
        }
        let coords: HashSet<ChunkCoord> = coords.into_iter().collect();
        let modified: HashSet<ChunkCoord> = world
            .modified_chunks()
            .filter(|c| coords.contains(c))
            .collect();
        let mut changes: Vec<(ChunkCoord, Option<Arc<VoxelChunk>>)> = coords
            .into_iter()
            .map(|c| {
                let chunk = modified
                    .contains(&c)
                    .then(|| world.chunk(c))
                    .flatten()
                    .map(|ch| Arc::new(ch.clone()));
                (c, chunk)
            })
            .collect();
        changes.sort_unstable_by_key(|(c, _)| *c);
        self.set_chunks(changes)
    }

    /// Whether the build of stream chunk `coord` at `lod` reads a node owned
    /// by one of the world chunks `dirty` (the chunks an edit changed, or the
    /// world's [`take_dirty`](VoxelWorld::take_dirty), which holds every
    /// chunk owning a changed node). At LOD 0 a chunk reads what the world's
    /// mesher reads for it (its nodes, its apron and normal stencil), so it
    /// is stale exactly when it is dirty itself; at LOD `k > 0` it also reads
    /// `2^k` nodes beyond its faces, and the fine samples of its faces toward
    /// finer neighbours, all within the neighbouring chunks (two chunks on
    /// the plus side when `2^k` equals the chunk size). Use with
    /// [`StreamScheduler::invalidate_where`](crate::StreamScheduler::invalidate_where).
    pub fn reads_dirty(&self, coord: ChunkCoord, lod: u8, dirty: &HashSet<ChunkCoord>) -> bool {
        let lod = lod.min(self.max_lod());
        if lod == 0 {
            return dirty.contains(&coord);
        }
        let step = 1i64 << lod;
        let n = i64::from(self.params.chunk_cells);
        let below = (step + n - 1) / n;
        let above = 1 + step / n;
        let near = |d: &ChunkCoord| {
            (0..3).all(|a| {
                let k = i64::from(coord[a]);
                let v = i64::from(d[a]);
                k - below <= v && v <= k + above
            })
        };
        let span = (below + above + 1).pow(3) as usize;
        if dirty.len() <= span {
            return dirty.iter().any(near);
        }
        for z in -below..=above {
            for y in -below..=above {
                for x in -below..=above {
                    let c = [
                        i64::from(coord[0]) + x,
                        i64::from(coord[1]) + y,
                        i64::from(coord[2]) + z,
                    ];
                    if c.iter().all(|v| i32::try_from(*v).is_ok())
                        && dirty.contains(&c.map(|v| v as i32))
                    {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// The streaming configuration matching this source's chunk grid: 3D,
    /// `chunk_size = chunk_cells`, and `max_lod` the largest LOD that still
    /// divides a chunk into whole cells (at most 3); other fields default.
    pub fn stream_config(&self) -> StreamConfig {
        StreamConfig::DEFAULT
            .with_dim(Dim::Xyz)
            .with_chunk_size(self.params.chunk_cells as f32)
            .with_max_lod(self.max_lod().min(3))
    }

    /// The highest ground height over the grid columns of chunk column
    /// `(coord.x, coord.z)` at `lod` (cached).
    fn column_max(
        &self,
        ground: &Ground,
        coord: ChunkCoord,
        lod: u8,
        g0: [i64; 3],
        step: i64,
        w: usize,
    ) -> f32 {
        let key = [coord[0], coord[2], i32::from(lod)];
        if let Some(&h) = self
            .columns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return h;
        }
        let h = match self.column_ground(coord, lod, g0, step, w) {
            Some(heights) => heights.iter().copied().fold(f32::NEG_INFINITY, f32::max),
            // Cannot happen for grids within the node limit; assume the
            // highest ground then.
            None => ground.height.range()[1],
        };
        let mut cache = self.columns.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= COLUMN_CACHE {
            cache.clear();
        }
        cache.insert(key, h);
        h
    }

    /// The ground heights under the `w x w` grid columns of chunk column
    /// `(coord.x, coord.z)` at `lod`, as [`DensitySampler::fill_ground`]
    /// gives them (cached for the most recent columns): every chunk of the
    /// column samples its densities over them instead of computing them
    /// again. `None` where the generator cannot address the grid.
    fn column_ground(
        &self,
        coord: ChunkCoord,
        lod: u8,
        g0: [i64; 3],
        step: i64,
        w: usize,
    ) -> Option<Arc<[f32]>> {
        let key = [coord[0], coord[2], i32::from(lod)];
        if let Some(h) = self
            .grounds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return Some(Arc::clone(h));
        }
        let mut heights = vec![0.0f32; w * w];
        let origin = [g0[0] as f32, g0[2] as f32];
        self.sampler
            .fill_ground(origin, step as f32, [w as u32, w as u32], &mut heights)
            .ok()?;
        let heights: Arc<[f32]> = heights.into();
        let mut cache = self.grounds.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= GROUND_CACHE {
            cache.clear();
        }
        cache.insert(key, Arc::clone(&heights));
        Some(heights)
    }

    /// Largest LOD whose step divides the chunk into whole cells.
    fn max_lod(&self) -> u8 {
        let n = self.params.chunk_cells;
        // At least one cell per axis.
        n.trailing_zeros().min(n.ilog2()) as u8
    }

    /// Builds the mesh of chunk `coord` at `lod` on the calling thread.
    /// `None` when the chunk lies beyond ±2^24 nodes or `cancel` was set.
    pub fn build_mesh(
        &self,
        coord: ChunkCoord,
        lod: u8,
        cancel: Option<&CancelFlag>,
    ) -> Option<VoxelChunkMesh> {
        let mut scratch = self
            .scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_default();
        let out = self.build_into(coord, lod, None, cancel, &mut scratch);
        self.scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(scratch);
        out
    }

    /// Builds the mesh of `request` on the calling thread with transition
    /// cells toward its finer neighbours (see the type's docs). `None` when
    /// the chunk lies beyond ±2^24 nodes, `cancel` was set or the samples
    /// cannot be meshed.
    pub fn build_request(
        &self,
        request: &ChunkRequest,
        cancel: Option<&CancelFlag>,
    ) -> Option<VoxelChunkMesh> {
        let finer = self.finer(request);
        let mut scratch = self
            .scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_default();
        let out = self.build_into(
            request.coord,
            request.lod,
            Some(finer),
            cancel,
            &mut scratch,
        );
        self.scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(scratch);
        out
    }

    /// The faces and edges of `request` whose neighbour is one level finer
    /// (LODs capped as the build caps them).
    fn finer(&self, request: &ChunkRequest) -> Finer {
        let max = self.max_lod();
        let lod = request.lod.min(max);
        let mut finer = Finer::default();
        let at = |nb: Option<u8>| nb.map(|l| l.min(max));
        for (f, nb) in request.neighbour_lods.iter().enumerate() {
            if lod > 0 && at(*nb) == Some(lod - 1) {
                finer.faces |= 1 << f;
            }
            if at(*nb) == Some(lod + 1) {
                finer.coarser_faces |= 1 << f;
            }
        }
        for (e, nb) in request.edge_lods.iter().enumerate() {
            if lod > 0 && at(*nb) == Some(lod - 1) {
                finer.edges |= 1 << e;
            }
            if at(*nb) == Some(lod + 1) {
                finer.coarser_edges |= 1 << e;
            }
        }
        finer
    }

    /// Fills `out` with the values of the global nodes `origin + i * step`
    /// of a `dims` grid (x fastest): the generator's, overwritten by the
    /// edited chunks in `touched`; air where the generator cannot be
    /// evaluated.
    fn sample(
        &self,
        touched: &[(ChunkCoord, &VoxelChunk)],
        origin: [i64; 3],
        step: i64,
        dims: [usize; 3],
        out: &mut Vec<f32>,
    ) {
        out.clear();
        out.resize(dims[0] * dims[1] * dims[2], -1.0);
        let d = dims.map(|v| v as u32);
        if self
            .sampler
            .fill(origin.map(|g| g as f32), step as f32, d, out)
            .is_err()
        {
            out.fill(-1.0);
        }
        let n = i64::from(self.params.chunk_cells);
        for (c, ch) in touched {
            overlay_values(out, *c, ch, n, origin, step, dims);
        }
    }

    fn build_into(
        &self,
        coord: ChunkCoord,
        lod: u8,
        finer: Option<Finer>,
        cancel: Option<&CancelFlag>,
        s: &mut Scratch,
    ) -> Option<VoxelChunkMesh> {
        let n = i64::from(self.params.chunk_cells);
        let lod = lod.min(self.max_lod());
        let refined = finer.is_some_and(|f| f.refines());
        let step = 1i64 << lod;
        let cells = n >> lod;
        let w = (cells + 3) as usize;
        let g0 = coord.map(|c| i64::from(c) * n - step);
        if g0
            .iter()
            .any(|&g| g < -NODE_LIMIT || g + (w as i64) * step > NODE_LIMIT)
        {
            return None;
        }
        // The edited chunks the grid reads, and the material ids of the 27
        // chunks around (as the world's mesher decides uniform materials),
        // from one snapshot of the edits.
        let edits = self.edits();
        let mut touched: Vec<(ChunkCoord, &VoxelChunk)> = Vec::new();
        let mut uniform_id: Option<Option<u8>> = None;
        for k in 0..27 {
            let d = [k % 3 - 1, (k / 3) % 3 - 1, k / 9 - 1];
            let c = [coord[0] + d[0], coord[1] + d[1], coord[2] + d[2]];
            let id = match edits.get(&c).map(|ch| &**ch) {
                None => Some(0),
                Some(ch) => {
                    touched.push((c, ch));
                    match ch.materials {
                        VoxelChunkMaterials::Uniform(id) => Some(id),
                        VoxelChunkMaterials::Dense(_) => None,
                    }
                }
            };
            uniform_id = Some(match uniform_id {
                None => id,
                Some(prev) if prev == id => prev,
                Some(_) => None,
            });
        }
        let uniform_id = uniform_id.flatten();
        if touched.is_empty()
            && let Some(top) = self.air_above
            && g0[1] as f64 > top
        {
            return Some(VoxelChunkMesh::default());
        }
        if cancel.is_some_and(CancelFlag::is_cancelled) {
            return None;
        }
        let origin = g0.map(|g| g as f32);
        let dims = [w as u32; 3];
        // Rows of the grid that can hold anything but air.
        let rows = match (&self.ground, touched.is_empty()) {
            (Some(ground), true) => {
                let top =
                    ground.offset + f64::from(self.column_max(ground, coord, lod, g0, step, w));
                let rows = ((top - g0[1] as f64) / step as f64).floor() + 1.0;
                // Fine face nodes lie between the sampled columns: only an
                // unrefined chunk may stop here.
                if rows < 1.0 && !refined {
                    return Some(VoxelChunkMesh::default());
                }
                (rows.max(1.0) as usize).min(w)
            }
            _ => w,
        };
        // The column's ground heights, shared by its chunks.
        let ground = match (&self.ground, touched.is_empty()) {
            (Some(_), true) => self.column_ground(coord, lod, g0, step, w),
            _ => None,
        };
        let fill = |dims: [u32; 3], out: &mut [f32]| match &ground {
            Some(ground) => self
                .sampler
                .fill_on_ground(origin, step as f32, dims, ground, out),
            None => self.sampler.fill(origin, step as f32, dims, out),
        };
        s.values.clear();
        s.values.resize(w * w * w, -1.0);
        let filled = if rows == w {
            fill(dims, &mut s.values)
        } else {
            // Sample the rows below the air only, then spread them out.
            s.part.clear();
            s.part.resize(w * rows * w, -1.0);
            let part_dims = [w as u32, rows as u32, w as u32];
            let r = fill(part_dims, &mut s.part);
            for k in 0..w {
                let src = &s.part[k * rows * w..(k + 1) * rows * w];
                s.values[k * w * w..k * w * w + rows * w].copy_from_slice(src);
            }
            r
        };
        if filled.is_err() {
            // Only for grids the generator cannot address: read as air, as
            // the world does.
            s.values.fill(-1.0);
        }
        if uniform_id.is_none() {
            s.mats.clear();
            s.mats.resize(w * w * w, 0);
        }
        for (c, ch) in &touched {
            overlay(s, *c, ch, n, g0, step, w, uniform_id.is_none());
        }
        if cancel.is_some_and(CancelFlag::is_cancelled) {
            return None;
        }
        let iso = self.params.iso;
        let first = s.values[0] >= iso;
        if !refined && s.values.iter().all(|&v| (v >= iso) == first) {
            return Some(VoxelChunkMesh::default());
        }
        if let Some(finer) = finer {
            return self.mesh_stitched(s, &touched, finer, uniform_id, lod, g0);
        }
        let wu = w as u32;
        let cells_box = CellBox::new(1, 1, 1, wu - 2, wu - 2, wu - 2);
        let options = CubesOptions::DEFAULT.with_iso(iso);
        let done = match uniform_id {
            None => s.cubes.mesh_slice_with_materials(
                &s.values, &s.mats, dims, cells_box, &options, &mut s.out,
            ),
            Some(_) => s
                .cubes
                .mesh_slice(&s.values, dims, cells_box, &options, &mut s.out),
        };
        if done.is_err() {
            return None;
        }
        if let Some(id) = uniform_id {
            s.out.materials.clear();
            s.out.materials.resize(s.out.positions.len(), id);
        }
        // Node-index units to world units: grid node `i` is global node
        // `g0 + i * step`. Exact-size copies leave the scratch warm.
        let st = step as f32;
        let positions = s
            .out
            .positions
            .iter()
            .map(|p| std::array::from_fn(|a| p[a] * st + origin[a]))
            .collect();
        Some(VoxelChunkMesh {
            positions,
            normals: hand_over(&mut s.out.normals),
            materials: hand_over(&mut s.out.materials),
            indices: hand_over(&mut s.out.indices),
        })
    }
}

impl VoxelSource {
    /// Meshes the sampled grid in `s.values` (nodes `-1..=cells + 1` at
    /// the chunk's LOD from `g0`) with transition cells on the `finer`
    /// faces and edges.
    fn mesh_stitched(
        &self,
        s: &mut Scratch,
        touched: &[(ChunkCoord, &VoxelChunk)],
        finer: Finer,
        uniform_id: Option<u8>,
        lod: u8,
        g0: [i64; 3],
    ) -> Option<VoxelChunkMesh> {
        let n = i64::from(self.params.chunk_cells);
        let step = 1i64 << lod;
        let cells = (n >> lod) as usize;
        let w = cells + 3;
        let base = g0.map(|g| g + step);
        // The chunk's own nodes, bit for bit those of the apron.
        let side = cells + 1;
        s.inner.clear();
        s.inner_mats.clear();
        for k in 0..side {
            for j in 0..side {
                let at = ((k + 1) * w + j + 1) * w + 1;
                s.inner.extend_from_slice(&s.values[at..at + side]);
                if uniform_id.is_none() {
                    s.inner_mats.extend_from_slice(&s.mats[at..at + side]);
                }
            }
        }
        // Faces whose fine samples are needed: the refined faces, and one
        // face of every refined edge not already covered.
        let mut need = finer.faces & 0x3f;
        for e in 0..12u8 {
            if finer.edges & (1 << e) == 0 {
                continue;
            }
            let axis = e / 4;
            let (b0, b1) = match axis {
                0 => (1, 2),
                1 => (0, 2),
                _ => (0, 1),
            };
            let fa = 2 * b0 + (e & 1);
            let fb = 2 * b1 + ((e >> 1) & 1);
            if need & (1 << fa | 1 << fb) == 0 {
                need |= 1 << fa;
            }
        }
        let half = step / 2;
        for f in 0..6usize {
            if need & (1 << f) == 0 {
                continue;
            }
            let axis = f / 2;
            let mut origin = base;
            if f % 2 == 1 {
                origin[axis] += n;
            }
            let mut dims = [2 * cells + 1; 3];
            dims[axis] = 1;
            let mut face = std::mem::take(&mut s.faces[f]);
            self.sample(touched, origin, half, dims, &mut face);
            let mut dims = [2 * cells + 3; 3];
            dims[axis] = 3;
            let mut ring = std::mem::take(&mut s.fine_aprons[f]);
            self.sample(touched, origin.map(|c| c - half), half, dims, &mut ring);
            // Its middle layer is the face itself, bit for bit.
            let (u, v) = match axis {
                0 => (1, 2),
                1 => (0, 2),
                _ => (0, 1),
            };
            let stride = [1, dims[0], dims[0] * dims[1]];
            for (r, row) in face.chunks_exact(2 * cells + 1).enumerate() {
                for (c, &value) in row.iter().enumerate() {
                    ring[stride[axis] + (c + 1) * stride[u] + (r + 1) * stride[v]] = value;
                }
            }
            s.faces[f] = face;
            s.fine_aprons[f] = ring;
        }
        let iso = self.params.iso;
        let first = s.values[0] >= iso;
        // Without fine samples this is the grid `build_into` found mixed.
        let uniform = need != 0
            && s.values.iter().all(|&v| (v >= iso) == first)
            && (0..6)
                .all(|f| need & (1 << f) == 0 || s.faces[f].iter().all(|&v| (v >= iso) == first));
        if uniform {
            return Some(VoxelChunkMesh::default());
        }
        let mut input = LodChunkInput::new(&s.inner, cells as u32, lod)
            .with_base_node(base)
            .with_base_cell_size(1.0)
            .with_apron(&s.values);
        if uniform_id.is_none() {
            input = input.with_materials(&s.inner_mats);
        }
        for f in 0..6u8 {
            if need & (1 << f) == 0 {
                continue;
            }
            let fine = &s.faces[f as usize];
            input = if finer.faces & (1 << f) != 0 {
                input.with_finer_face(f, fine)
            } else {
                input.with_fine_face_samples(f, fine)
            };
            input = input.with_fine_apron(f, &s.fine_aprons[f as usize]);
        }
        input.finer_edges = finer.edges;
        let options = CubesOptions::DEFAULT.with_iso(iso);
        s.lod.mesh(&input, &options, &mut s.out).ok()?;
        if finer.coarser_faces != 0 || finer.coarser_edges != 0 {
            measure_as_coarser(s, finer, base, step, cells, iso);
        }
        let materials = match uniform_id {
            Some(id) => vec![id; s.out.positions.len()],
            None => hand_over(&mut s.out.materials),
        };
        Some(VoxelChunkMesh {
            positions: hand_over(&mut s.out.positions),
            normals: hand_over(&mut s.out.normals),
            materials,
            indices: hand_over(&mut s.out.indices),
        })
    }
}

/// The contents of a scratch vector as a vector of their own, without
/// copying them: the buffer itself is handed over, trimmed to its length,
/// and the scratch gets new room of the same size for its next build (a
/// copy would allocate as much and also move every byte).
fn hand_over<T>(v: &mut Vec<T>) -> Vec<T> {
    let room = v.capacity();
    let mut out = std::mem::replace(v, Vec::with_capacity(room));
    out.shrink_to_fit();
    out
}

/// Re-measures the seam vertices a coarser neighbour shares: a coarser
/// chunk measures a vertex on half of one of its edges from the start of
/// the half of its face (or chunk edge) that holds it, so the vertices of
/// `s.out` on faces and chunk edges toward a coarser neighbour are measured
/// the same way, from the same samples, and get the same bits.
fn measure_as_coarser(
    s: &mut Scratch,
    finer: Finer,
    base: [i64; 3],
    step: i64,
    cells: usize,
    iso: f32,
) {
    let n = cells as i64 * step;
    let half_cells = cells / 2;
    let side = cells + 1;
    for p in &mut s.out.positions {
        let frac: Vec<usize> = (0..3).filter(|&a| p[a].fract() != 0.0).collect();
        let [a] = frac[..] else { continue };
        let on = |q: usize, side_bit: u16| p[q] == (base[q] + i64::from(side_bit) * n) as f32;
        let mut shared = false;
        for f in 0..6u16 {
            let q = (f / 2) as usize;
            if finer.coarser_faces & (1 << f) != 0 && q != a && on(q, f % 2) {
                shared = true;
            }
        }
        for e in 0..12u16 {
            let axis = (e / 4) as usize;
            let (b0, b1) = match axis {
                0 => (1, 2),
                1 => (0, 2),
                _ => (0, 1),
            };
            if finer.coarser_edges & (1 << e) != 0
                && axis == a
                && on(b0, e & 1)
                && on(b1, (e >> 1) & 1)
            {
                shared = true;
            }
        }
        if !shared {
            continue;
        }
        // The node indices of the vertex's edge in the chunk's samples.
        let mut node = [0usize; 3];
        for q in 0..3 {
            let local = (f64::from(p[q]) - base[q] as f64) / step as f64;
            node[q] = local
                .floor()
                .clamp(0.0, cells as f64 - if q == a { 1.0 } else { 0.0 })
                as usize;
        }
        let at = |g: [usize; 3]| s.inner[(g[2] * side + g[1]) * side + g[0]];
        let va = at(node);
        let mut up = node;
        up[a] += 1;
        let vb = at(up);
        #[allow(clippy::manual_clamp)]
        let t = ((iso - va) / (vb - va)).max(0.0).min(1.0);
        let i = node[a];
        let j = i / half_cells;
        let frame = base[a] + (j * half_cells) as i64 * step;
        let local = (i - j * half_cells) as f32 + t;
        p[a] = if local.fract() == 0.0 {
            (frame + local as i64 * step) as f32
        } else {
            frame as f32 + local * step as f32
        };
    }
}

/// Checks that an edited chunk holds the `N³` nodes of `params`' chunks.
fn check_chunk(params: &VoxelParams, chunk: &VoxelChunk) -> Result<(), WorldError> {
    let n = params.chunk_cells as usize;
    let len = n * n * n;
    let dense_len = match &chunk.density {
        VoxelChunkData::Dense(v) => v.len(),
        VoxelChunkData::Uniform(_) => len,
    };
    let mats_len = match &chunk.materials {
        VoxelChunkMaterials::Dense(v) => v.len(),
        VoxelChunkMaterials::Uniform(_) => len,
    };
    if dense_len != len || mats_len != len {
        return Err(WorldError::mismatch(
            "edited chunk length",
            len,
            "another length",
        ));
    }
    Ok(())
}

/// Calls `f(src, dst)` for every node of edited chunk `c` that a `dims`
/// grid of global nodes `origin + i * step` holds: `src` indexes the chunk's
/// `n³` owned nodes, `dst` the grid (x fastest).
fn for_each_owned_node(
    c: ChunkCoord,
    n: i64,
    origin: [i64; 3],
    step: i64,
    dims: [usize; 3],
    mut f: impl FnMut(usize, usize),
) {
    // Per axis, the grid indices whose node the chunk owns.
    let mut range = [(0usize, 0usize); 3];
    for a in 0..3 {
        let lo = i64::from(c[a]) * n;
        let hi = lo + n - 1;
        let first = (lo - origin[a] + step - 1).div_euclid(step).max(0);
        let last = (hi - origin[a]).div_euclid(step).min(dims[a] as i64 - 1);
        if first > last {
            return;
        }
        range[a] = (first as usize, last as usize);
    }
    let base = c.map(|v| i64::from(v) * n);
    let nu = n as usize;
    for k in range[2].0..=range[2].1 {
        let lz = (origin[2] + k as i64 * step - base[2]) as usize;
        for j in range[1].0..=range[1].1 {
            let ly = (origin[1] + j as i64 * step - base[1]) as usize;
            for i in range[0].0..=range[0].1 {
                let lx = (origin[0] + i as i64 * step - base[0]) as usize;
                f((lz * nu + ly) * nu + lx, (k * dims[1] + j) * dims[0] + i);
            }
        }
    }
}

/// Copies the nodes of edited chunk `c` that a `dims` grid of global nodes
/// `origin + i * step` holds into `out`.
fn overlay_values(
    out: &mut [f32],
    c: ChunkCoord,
    ch: &VoxelChunk,
    n: i64,
    origin: [i64; 3],
    step: i64,
    dims: [usize; 3],
) {
    for_each_owned_node(c, n, origin, step, dims, |src, dst| {
        out[dst] = ch.density.get(src);
    });
}

/// Copies the nodes of edited chunk `c` that the grid samples into it.
#[allow(clippy::too_many_arguments)]
fn overlay(
    s: &mut Scratch,
    c: ChunkCoord,
    ch: &VoxelChunk,
    n: i64,
    g0: [i64; 3],
    step: i64,
    w: usize,
    mats: bool,
) {
    for_each_owned_node(c, n, g0, step, [w; 3], |src, dst| {
        s.values[dst] = ch.density.get(src);
        if mats {
            s.mats[dst] = ch.materials.get(src);
        }
    });
}

impl ChunkSource for VoxelSource {
    type Output = VoxelChunkMesh;

    fn build(&self, request: &ChunkRequest, cancel: &CancelFlag) -> Option<VoxelChunkMesh> {
        self.build_request(request, Some(cancel))
    }

    /// Keeps the face and edge neighbours one level finer (the ones the
    /// chunk makes transition cells toward) or one level coarser (the ones
    /// whose frames its seam vertices are measured in).
    fn seam_request(&self, request: ChunkRequest) -> ChunkRequest {
        let finer = self.finer(&request);
        let lod = request.lod.min(self.max_lod());
        let mut faces = [None; 6];
        for (f, slot) in faces.iter_mut().enumerate() {
            if finer.faces & (1 << f) != 0 {
                *slot = Some(lod - 1);
            } else if finer.coarser_faces & (1 << f) != 0 {
                *slot = Some(lod + 1);
            }
        }
        let mut edges = [None; 12];
        for (e, slot) in edges.iter_mut().enumerate() {
            if finer.edges & (1 << e) != 0 {
                *slot = Some(lod - 1);
            } else if finer.coarser_edges & (1 << e) != 0 {
                *slot = Some(lod + 1);
            }
        }
        ChunkRequest::new(request.coord, request.lod)
            .with_neighbour_lods(faces)
            .with_edge_lods(edges)
    }
}
