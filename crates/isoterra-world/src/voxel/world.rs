//! The voxel world: one endless 3D density field in chunks.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use isoterra_field::{DensitySampler, density};

use super::brush::{VoxelBrush, VoxelTool};
use super::chunk::{VoxelChunk, VoxelChunkData, VoxelChunkMaterials, VoxelChunkMesh};
use super::edit::VoxelEdit;
use super::mesher::{MesherPool, VoxelMesher, mesh_chunk_into};
use super::params::VoxelParams;
use crate::{EditDirection, RebuildReport, WorldError};

/// An endless 3D density world (caves, overhangs, planets) meshed by marching
/// cubes, chunk by chunk.
///
/// * **Units and nodes.** One world unit per cell: node `(x, y, z)` (global
///   `i64` coordinates) sits at world position `(x, y, z)`. A node is solid
///   when `value >= iso`; values lie in `[-1, 1]`.
/// * **Chunks.** Chunk `c` (`[i32; 3]`) of `N` cells per axis
///   ([`VoxelParams::chunk_cells`]) *owns* the nodes `[c*N, c*N + N)` on each
///   axis and meshes the cells `[c*N, c*N + N)`: it reads its + neighbours'
///   nodes up to `c*N + N` for positions, and nodes `[c*N - 1, c*N + N + 1]`
///   for gradient normals, so two chunks that share a face produce
///   bit-identical vertices and normals on it.
/// * **Storage.** Chunks are generated lazily from [`VoxelParams::generator`]
///   ([`ensure_region`](Self::ensure_region), or on demand by edits and
///   rebuilds); a chunk whose nodes are all equal is stored as one value.
///   Chunks changed by edits are listed by
///   [`modified_chunks`](Self::modified_chunks) (the ones a world file stores).
/// * **Dirty tracking.** An edit dirties exactly the chunks whose meshing
///   reads a changed node: for a changed density, the chunks whose normal
///   stencil `[c*N - 1, c*N + N + 1]` holds it on every axis; for a changed
///   material only, the chunks whose cells touch it (`[c*N, c*N + N]`).
///   [`rebuild`](Self::rebuild) re-meshes them.
#[derive(Debug, Clone)]
pub struct VoxelWorld {
    params: VoxelParams,
    sampler: DensitySampler,
    n: i64,
    chunks: BTreeMap<[i32; 3], VoxelChunk>,
    meshes: BTreeMap<[i32; 3], VoxelChunkMesh>,
    dirty: BTreeSet<[i32; 3]>,
    modified: BTreeSet<[i32; 3]>,
    /// Meshers reused by rebuilds (one per worker once warm).
    meshers: MesherPool,
    /// Rebuild work list, reused.
    work: Vec<([i32; 3], VoxelChunkMesh)>,
    /// Rebuild queue, reused.
    queue: Vec<[i32; 3]>,
    /// Chunks a rebuild batch reads, reused.
    need: Vec<[i32; 3]>,
}

/// A hit of [`VoxelWorld::raycast`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VoxelHit {
    /// The first solid point along the segment (world units); `is_solid(point)`
    /// holds.
    pub point: [f32; 3],
    /// Unit normal at `point`, out of the solid (negative gradient of the
    /// trilinear density; the reverse ray direction where it vanishes).
    pub normal: [f32; 3],
    /// Parameter along the segment: `point = from + t * (to - from)`, in `[0, 1]`.
    pub t: f32,
}

/// Largest coordinate magnitude a node may have (keeps `f32` positions and
/// `i64` arithmetic safe).
const NODE_LIMIT: f64 = (1u64 << 40) as f64;

/// Bisection steps that settle a ray crossing.
const REFINE_STEPS: u32 = 30;
/// Samples per cell the ray takes between cell boundaries.
const RAY_SAMPLES_PER_CELL: u32 = 4;
/// Most cells one raycast walks.
const RAY_MAX_CELLS: u32 = 1 << 20;

/// Floor division and remainder by the chunk size, with shifts when it is
/// a power of two (the usual case).
#[derive(Clone, Copy)]
struct ChunkDiv {
    n: i64,
    shift: Option<u32>,
}

impl ChunkDiv {
    fn new(n: i64) -> Self {
        let shift = (n.count_ones() == 1).then(|| n.trailing_zeros());
        ChunkDiv { n, shift }
    }

    /// `floor(g / n)`.
    #[inline]
    fn chunk(self, g: i64) -> i64 {
        match self.shift {
            Some(s) => g >> s,
            None => g.div_euclid(self.n),
        }
    }

    /// `g mod n`, in `[0, n)`.
    #[inline]
    fn local(self, g: i64) -> i64 {
        match self.shift {
            Some(_) => g & (self.n - 1),
            None => g.rem_euclid(self.n),
        }
    }
}

#[inline]
fn chunk_of(g: i64, n: i64) -> i32 {
    g.div_euclid(n) as i32
}

impl VoxelWorld {
    /// Most chunks one [`ensure_region`](Self::ensure_region) call may cover.
    pub const MAX_REGION_CHUNKS: u64 = 1 << 14;

    /// An empty world (no chunk generated yet).
    ///
    /// # Errors
    ///
    /// As [`VoxelParams::validate`].
    pub fn new(params: &VoxelParams) -> Result<Self, WorldError> {
        params.validate()?;
        Ok(VoxelWorld {
            params: *params,
            sampler: params.generator.sampler()?,
            n: params.chunk_cells as i64,
            chunks: BTreeMap::new(),
            meshes: BTreeMap::new(),
            dirty: BTreeSet::new(),
            modified: BTreeSet::new(),
            meshers: MesherPool::default(),
            work: Vec::new(),
            queue: Vec::new(),
            need: Vec::new(),
        })
    }

    /// The parameters.
    pub fn params(&self) -> &VoxelParams {
        &self.params
    }

    /// Cells per chunk along each axis.
    pub fn chunk_cells(&self) -> u32 {
        self.params.chunk_cells
    }

    /// Nodes a chunk owns (`N^3`).
    pub fn chunk_len(&self) -> usize {
        (self.n * self.n * self.n) as usize
    }

    /// The chunk that owns global node `node`.
    pub fn chunk_of_node(&self, node: [i64; 3]) -> [i32; 3] {
        node.map(|g| chunk_of(g, self.n))
    }

    /// A loaded chunk.
    pub fn chunk(&self, coord: [i32; 3]) -> Option<&VoxelChunk> {
        self.chunks.get(&coord)
    }

    /// Coordinates of the loaded chunks, ascending.
    pub fn loaded_chunks(&self) -> impl Iterator<Item = [i32; 3]> + '_ {
        self.chunks.keys().copied()
    }

    /// Chunks changed by edits (or inserted by
    /// [`insert_chunk`](Self::insert_chunk)), ascending.
    pub fn modified_chunks(&self) -> impl Iterator<Item = [i32; 3]> + '_ {
        self.modified.iter().copied()
    }

    /// Chunks waiting for [`rebuild`](Self::rebuild), ascending.
    pub fn dirty_chunks(&self) -> impl Iterator<Item = [i32; 3]> + '_ {
        self.dirty.iter().copied()
    }

    /// Number of dirty chunks.
    pub fn dirty_count(&self) -> usize {
        self.dirty.len()
    }

    /// Returns the dirty chunks, ascending, and clears the set, for callers
    /// that mesh elsewhere (a [`VoxelSource`](crate::VoxelSource) fed with
    /// [`update_from_world`](crate::VoxelSource::update_from_world), for
    /// example) and only need to know what an edit changed: after an edit
    /// these are exactly the chunks whose meshing reads a changed node (see
    /// the type's docs), gathered since the last `take_dirty` or
    /// [`rebuild`](Self::rebuild).
    ///
    /// Nothing is meshed. The cached meshes of the returned chunks are out
    /// of date and are dropped: [`chunk_mesh`](Self::chunk_mesh) gives
    /// `None` for them until they are rebuilt (which
    /// [`ensure_region`](Self::ensure_region) queues again).
    pub fn take_dirty(&mut self) -> Vec<[i32; 3]> {
        let dirty = std::mem::take(&mut self.dirty);
        if !self.meshes.is_empty() {
            for c in &dirty {
                self.meshes.remove(c);
            }
        }
        dirty.into_iter().collect()
    }

    /// The cached mesh (and collider) of a chunk, once it has been rebuilt.
    pub fn chunk_mesh(&self, coord: [i32; 3]) -> Option<&VoxelChunkMesh> {
        self.meshes.get(&coord)
    }

    /// The chunk range `min..=max` whose cells cover the world-space box
    /// `lo..=hi` (a position `p` lies in the cells of chunk `floor(p / N)`).
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`] for non-finite or far-away corners or
    /// `lo > hi` on an axis.
    pub fn chunks_covering(
        &self,
        lo: [f32; 3],
        hi: [f32; 3],
    ) -> Result<([i32; 3], [i32; 3]), WorldError> {
        let limit = VoxelBrush::MAX_COORD * 64.0;
        for a in 0..3 {
            if !(lo[a].is_finite() && hi[a].is_finite() && lo[a] <= hi[a])
                || lo[a].abs() > limit
                || hi[a].abs() > limit
            {
                return Err(WorldError::param(
                    "region",
                    format!("{lo:?}..={hi:?}"),
                    "corners must be finite, within ±2^28 and ordered (lo <= hi on every axis)",
                ));
            }
        }
        let n = self.n as f64;
        let c = |v: f32| (v as f64 / n).floor() as i32;
        Ok((lo.map(c), hi.map(c)))
    }

    /// The cached meshes of the chunks `min..=max` appended into one mesh
    /// (ascending chunk order; chunks without a mesh are skipped). Vertices
    /// on faces shared by two chunks appear once per chunk, with identical
    /// positions and normals.
    pub fn merged_mesh(&self, min: [i32; 3], max: [i32; 3]) -> VoxelChunkMesh {
        let mut out = VoxelChunkMesh::default();
        for (c, m) in &self.meshes {
            if !(0..3).all(|a| min[a] <= c[a] && c[a] <= max[a]) {
                continue;
            }
            let base = out.positions.len() as u32;
            out.positions.extend_from_slice(&m.positions);
            out.normals.extend_from_slice(&m.normals);
            out.materials.extend_from_slice(&m.materials);
            out.indices.extend(m.indices.iter().map(|i| i + base));
        }
        out
    }

    /// Coordinates of the chunks with a cached mesh, ascending.
    pub fn meshed_chunks(&self) -> impl Iterator<Item = [i32; 3]> + '_ {
        self.meshes.keys().copied()
    }

    /// The generated (unedited) content of a chunk: a pure function of the
    /// generator and the coordinate.
    pub fn generated_chunk(&self, coord: [i32; 3]) -> VoxelChunk {
        generate(&self.sampler, coord, self.n)
    }

    fn check_region(min: [i32; 3], max: [i32; 3]) -> Result<u64, WorldError> {
        let mut count = 1u64;
        for a in 0..3 {
            if min[a] > max[a] {
                return Err(WorldError::param(
                    "region",
                    format!("{min:?}..={max:?}"),
                    "min must not exceed max on any axis",
                ));
            }
            count = count.saturating_mul((max[a] as i64 - min[a] as i64 + 1) as u64);
        }
        if count > Self::MAX_REGION_CHUNKS {
            return Err(WorldError::param(
                "region",
                format!("{min:?}..={max:?}"),
                "too many chunks in one call (at most 16384): ask for smaller regions",
            ));
        }
        Ok(count)
    }

    /// Generates the chunks `min..=max` (inclusive on every axis) that are not
    /// loaded yet and marks the ones without a mesh dirty. Returns how many
    /// chunks were generated.
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`] when `min > max` on an axis or the
    /// region holds more than [`MAX_REGION_CHUNKS`](Self::MAX_REGION_CHUNKS).
    pub fn ensure_region(&mut self, min: [i32; 3], max: [i32; 3]) -> Result<usize, WorldError> {
        Self::check_region(min, max)?;
        let mut coords = Vec::new();
        for z in min[2]..=max[2] {
            for y in min[1]..=max[1] {
                for x in min[0]..=max[0] {
                    coords.push([x, y, z]);
                }
            }
        }
        let generated = self.load_chunks(&coords);
        for c in coords {
            if !self.meshes.contains_key(&c) {
                self.dirty.insert(c);
            }
        }
        Ok(generated)
    }

    /// Generates the missing chunks of `coords` (in parallel with the
    /// `parallel` feature) without marking anything dirty, so that node
    /// queries see them. Returns how many were generated.
    pub fn load_chunks(&mut self, coords: &[[i32; 3]]) -> usize {
        let mut missing: Vec<[i32; 3]> = coords
            .iter()
            .copied()
            .filter(|c| !self.chunks.contains_key(c))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        let sampler = &self.sampler;
        let n = self.n;
        #[cfg(feature = "parallel")]
        let made: Vec<VoxelChunk> = {
            use rayon::prelude::*;
            missing
                .par_iter()
                .map(|&c| generate(sampler, c, n))
                .collect()
        };
        #[cfg(not(feature = "parallel"))]
        let made: Vec<VoxelChunk> = missing.iter().map(|&c| generate(sampler, c, n)).collect();
        let count = made.len();
        for (c, chunk) in missing.into_iter().zip(made) {
            self.chunks.insert(c, chunk);
        }
        count
    }

    /// Replaces a chunk's content (a world file loading its stored chunks):
    /// `density` and `materials` hold `N^3` entries, x fastest. The chunk
    /// becomes modified, and it and every neighbour whose meshing reads its
    /// nodes become dirty.
    ///
    /// # Errors
    ///
    /// [`WorldError::Mismatch`] for wrong lengths,
    /// [`WorldError::InvalidParameter`] for a value that is not finite in
    /// `[-1, 1]`. Nothing changes on error.
    pub fn insert_chunk(
        &mut self,
        coord: [i32; 3],
        density: Vec<f32>,
        materials: Vec<u8>,
    ) -> Result<(), WorldError> {
        let len = self.chunk_len();
        if density.len() != len || materials.len() != len {
            return Err(WorldError::mismatch(
                "chunk length",
                len,
                format!("{} values and {} materials", density.len(), materials.len()),
            ));
        }
        if let Some(v) = density.iter().find(|v| !(v.is_finite() && v.abs() <= 1.0)) {
            return Err(WorldError::param(
                "density",
                v,
                "chunk values must be finite and in [-1, 1]",
            ));
        }
        let mats = match materials.first() {
            Some(&m) if materials.iter().all(|&x| x == m) => VoxelChunkMaterials::Uniform(m),
            _ => VoxelChunkMaterials::Dense(materials),
        };
        self.chunks.insert(
            coord,
            VoxelChunk {
                density: VoxelChunkData::from_values(density),
                materials: mats,
            },
        );
        self.modified.insert(coord);
        for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    self.dirty
                        .insert([coord[0] + dx, coord[1] + dy, coord[2] + dz]);
                }
            }
        }
        Ok(())
    }

    /// Marks every loaded chunk dirty.
    pub fn mark_all_dirty(&mut self) {
        self.dirty.extend(self.chunks.keys().copied());
    }

    /// Local storage index of global node `g` inside its chunk.
    #[inline]
    fn local_index(&self, g: [i64; 3]) -> usize {
        let n = self.n;
        let l = g.map(|v| v.rem_euclid(n));
        ((l[2] * n + l[1]) * n + l[0]) as usize
    }

    /// Density and material of a global node, when its chunk is loaded.
    pub fn node(&self, g: [i64; 3]) -> Option<(f32, u8)> {
        let chunk = self.chunks.get(&self.chunk_of_node(g))?;
        let i = self.local_index(g);
        Some((chunk.density.get(i), chunk.materials.get(i)))
    }

    /// The trilinear density at world position `p`; `None` when `p` is not
    /// finite or one of the eight nodes around it is not loaded.
    pub fn density_at(&self, p: [f32; 3]) -> Option<f32> {
        if p.iter()
            .any(|v| !(v.is_finite() && (*v as f64).abs() < NODE_LIMIT))
        {
            return None;
        }
        let base = p.map(|v| v.floor() as i64);
        let f = [
            p[0] - base[0] as f32,
            p[1] - base[1] as f32,
            p[2] - base[2] as f32,
        ];
        let mut c = [0.0f32; 8];
        for (k, slot) in c.iter_mut().enumerate() {
            let g = [
                base[0] + (k & 1) as i64,
                base[1] + ((k >> 1) & 1) as i64,
                base[2] + ((k >> 2) & 1) as i64,
            ];
            *slot = self.node(g)?.0;
        }
        let lx = |a: f32, b: f32| a + (b - a) * f[0];
        let x00 = lx(c[0], c[1]);
        let x10 = lx(c[2], c[3]);
        let x01 = lx(c[4], c[5]);
        let x11 = lx(c[6], c[7]);
        let y0 = x00 + (x10 - x00) * f[1];
        let y1 = x01 + (x11 - x01) * f[1];
        Some(y0 + (y1 - y0) * f[2])
    }

    /// True when the trilinear density at `p` is at least iso (false where
    /// nothing is loaded).
    pub fn is_solid(&self, p: [f32; 3]) -> bool {
        self.density_at(p).is_some_and(|v| v >= self.params.iso)
    }

    /// Chunks whose meshing reads node `g`, as inclusive ranges per axis:
    /// the normal stencil `[c*N - 1, c*N + N + 1]` when `density` is true,
    /// else the cell range `[c*N, c*N + N]` (materials are read there only).
    pub fn chunks_reading_node(&self, g: [i64; 3], density: bool) -> [[i32; 2]; 3] {
        let n = self.n;
        g.map(|v| {
            if density {
                [chunk_of(v - 2, n), chunk_of(v + 1, n)]
            } else {
                [chunk_of(v - 1, n), chunk_of(v, n)]
            }
        })
    }

    /// Writes nodes of loaded chunks (`nodes` in any order, usually
    /// ascending by `(z, y, x)`), marking modified and dirty chunks for the
    /// nodes whose value bits or material actually change.
    ///
    /// When the nodes span a small box of chunks (always, for a brush), the
    /// chunks of that box are moved out of the map into a table indexed by
    /// position for the duration of the write, so each node is one index
    /// computation away from its storage; otherwise consecutive nodes of one
    /// chunk share a map lookup. Consecutive nodes read by the same chunks
    /// share one dirty-range expansion.
    fn write_nodes(&mut self, nodes: &[[i64; 3]], values: &[f32], mats: &[u8]) {
        /// Most chunks the table may hold.
        const TABLE_MAX: u64 = 4096;
        let Some(first) = nodes.first() else {
            return;
        };
        let n = self.n;
        let len = self.chunk_len();
        let div = ChunkDiv::new(n);
        let chunk_of3 = |g: [i64; 3]| {
            [
                div.chunk(g[0]) as i32,
                div.chunk(g[1]) as i32,
                div.chunk(g[2]) as i32,
            ]
        };
        let (mut blo, mut bhi) = (chunk_of3(*first), chunk_of3(*first));
        for &g in nodes {
            let c = chunk_of3(g);
            for a in 0..3 {
                blo[a] = blo[a].min(c[a]);
                bhi[a] = bhi[a].max(c[a]);
            }
        }
        let bdims = [0, 1, 2].map(|a| (bhi[a] as i64 - blo[a] as i64 + 1) as u64);
        let use_table = bdims[0].saturating_mul(bdims[1]).saturating_mul(bdims[2]) <= TABLE_MAX;
        let bidx = |c: [i32; 3]| -> usize {
            let o = [0, 1, 2].map(|a| (c[a] - blo[a]) as usize);
            (o[2] * bdims[1] as usize + o[1]) * bdims[0] as usize + o[0]
        };
        let mut table: Vec<Option<VoxelChunk>> = Vec::new();
        if use_table {
            table.resize_with((bdims[0] * bdims[1] * bdims[2]) as usize, || None);
            for cz in blo[2]..=bhi[2] {
                for cy in blo[1]..=bhi[1] {
                    for cx in blo[0]..=bhi[0] {
                        let c = [cx, cy, cz];
                        if let Some(slot) = self.chunks.get_mut(&c) {
                            table[bidx(c)] = Some(std::mem::replace(slot, placeholder_chunk()));
                        }
                    }
                }
            }
        }

        let mut marks: Vec<[i32; 3]> = Vec::new();
        let mut touched: Vec<[i32; 3]> = Vec::new();
        let mut last_range: Option<[[i32; 2]; 3]> = None;
        let mut last_touched: Option<[i32; 3]> = None;
        let mut cur_coord: Option<[i32; 3]> = None;
        let mut cur: Option<&mut VoxelChunk> = None;
        for ((&g, &value), &material) in nodes.iter().zip(values).zip(mats) {
            let coord = chunk_of3(g);
            if cur_coord != Some(coord) {
                cur = if use_table {
                    table[bidx(coord)].as_mut()
                } else {
                    self.chunks.get_mut(&coord)
                };
                cur_coord = Some(coord);
            }
            let Some(chunk) = cur.as_deref_mut() else {
                continue;
            };
            let i = ((div.local(g[2]) * n + div.local(g[1])) * n + div.local(g[0])) as usize;
            let dv = chunk.density.get(i).to_bits() != value.to_bits();
            let dm = chunk.materials.get(i) != material;
            if !dv && !dm {
                continue;
            }
            chunk.set(i, len, value, material);
            if last_touched != Some(coord) {
                touched.push(coord);
                last_touched = Some(coord);
            }
            let (before, after) = if dv { (2, 1) } else { (1, 0) };
            let range = |a: usize| {
                [
                    div.chunk(g[a] - before) as i32,
                    div.chunk(g[a] + after) as i32,
                ]
            };
            let r = [range(0), range(1), range(2)];
            if last_range == Some(r) {
                continue;
            }
            last_range = Some(r);
            for z in r[2][0]..=r[2][1] {
                for y in r[1][0]..=r[1][1] {
                    for x in r[0][0]..=r[0][1] {
                        marks.push([x, y, z]);
                    }
                }
            }
        }
        if use_table {
            for cz in blo[2]..=bhi[2] {
                for cy in blo[1]..=bhi[1] {
                    for cx in blo[0]..=bhi[0] {
                        let c = [cx, cy, cz];
                        if let Some(chunk) = table[bidx(c)].take()
                            && let Some(slot) = self.chunks.get_mut(&c)
                        {
                            *slot = chunk;
                        }
                    }
                }
            }
        }
        touched.sort_unstable();
        touched.dedup();
        self.modified.extend(touched);
        marks.sort_unstable();
        marks.dedup();
        self.dirty.extend(marks);
    }

    /// Copies the nodes of the box `lo..=hi` into `values` and `mats`
    /// (cleared first; x fastest), chunk by chunk; nodes of chunks that are
    /// not loaded read as air with material 0.
    fn read_box(&self, lo: [i64; 3], hi: [i64; 3], values: &mut Vec<f32>, mats: &mut Vec<u8>) {
        let n = self.n;
        let nu = n as usize;
        let dims = [0, 1, 2].map(|a| (hi[a] - lo[a] + 1) as usize);
        let total = dims[0] * dims[1] * dims[2];
        values.clear();
        values.resize(total, -1.0);
        mats.clear();
        mats.resize(total, 0);
        let cl = self.chunk_of_node(lo);
        let ch = self.chunk_of_node(hi);
        for cz in cl[2]..=ch[2] {
            for cy in cl[1]..=ch[1] {
                for cx in cl[0]..=ch[0] {
                    let Some(chunk) = self.chunks.get(&[cx, cy, cz]) else {
                        continue;
                    };
                    let c = [cx, cy, cz];
                    // The part of the box inside this chunk, in global nodes.
                    let a = [0, 1, 2].map(|k| lo[k].max(c[k] as i64 * n));
                    let b = [0, 1, 2].map(|k| hi[k].min(c[k] as i64 * n + n - 1));
                    let run = (b[0] - a[0] + 1) as usize;
                    for z in a[2]..=b[2] {
                        for y in a[1]..=b[1] {
                            let dst = (((z - lo[2]) as usize * dims[1]) + (y - lo[1]) as usize)
                                * dims[0]
                                + (a[0] - lo[0]) as usize;
                            let src = ((z.rem_euclid(n) as usize * nu) + y.rem_euclid(n) as usize)
                                * nu
                                + a[0].rem_euclid(n) as usize;
                            let dv = &mut values[dst..dst + run];
                            match &chunk.density {
                                VoxelChunkData::Uniform(v) => dv.fill(*v),
                                VoxelChunkData::Dense(v) => dv.copy_from_slice(&v[src..src + run]),
                            }
                            let dm = &mut mats[dst..dst + run];
                            match &chunk.materials {
                                VoxelChunkMaterials::Uniform(m) => dm.fill(*m),
                                VoxelChunkMaterials::Dense(m) => {
                                    dm.copy_from_slice(&m[src..src + run])
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Loads every chunk owning a node of the box `lo..=hi`.
    fn load_box(&mut self, lo: [i64; 3], hi: [i64; 3]) {
        let cl = self.chunk_of_node(lo);
        let ch = self.chunk_of_node(hi);
        let mut coords = Vec::new();
        for z in cl[2]..=ch[2] {
            for y in cl[1]..=ch[1] {
                for x in cl[0]..=ch[0] {
                    coords.push([x, y, z]);
                }
            }
        }
        self.load_chunks(&coords);
    }

    /// How far from the iso level a stroke's values stay: `1/1024` of the
    /// distance-field unit (a cell). It moves the surface by at most that
    /// much and keeps marching-cubes vertices apart (so there are no
    /// zero-area triangles) for coordinates up to about ±4096.
    pub const ISO_MARGIN: f32 = 1.0 / 1024.0;

    /// Applies a brush and returns what it changed.
    ///
    /// A value the brush writes is never within [`ISO_MARGIN`](Self::ISO_MARGIN) of the iso
    /// level: it is moved to `iso ± ISO_MARGIN` on the side it is on (solid
    /// stays solid). A node exactly at iso would put marching-cubes
    /// vertices on the node itself, several of them at one point, and
    /// zero-area triangles there.
    ///
    /// # Errors
    ///
    /// As [`VoxelBrush::validate`]; the world is unchanged on error.
    pub fn apply_brush(&mut self, brush: &VoxelBrush) -> Result<VoxelEdit, WorldError> {
        brush.validate()?;
        let r = brush.reach() - 1.0;
        let lo = brush.center.map(|c| (c - r).floor() as i64 - 1);
        let hi = brush.center.map(|c| (c + r).ceil() as i64 + 1);
        // The snapshot box has one more node on each side for smoothing.
        let slo = lo.map(|v| v - 1);
        let shi = hi.map(|v| v + 1);
        self.load_box(slo, shi);
        let dims = [0, 1, 2].map(|a| (shi[a] - slo[a] + 1) as usize);
        let mut snap = Vec::new();
        let mut snap_m = Vec::new();
        self.read_box(slo, shi, &mut snap, &mut snap_m);
        let sidx = |g: [i64; 3]| -> usize {
            (((g[2] - slo[2]) as usize * dims[1]) + (g[1] - slo[1]) as usize) * dims[0]
                + (g[0] - slo[0]) as usize
        };
        let iso = self.params.iso;
        let (pn, po) = brush.unit_plane();
        let mut edit = VoxelEdit::default();
        for z in lo[2]..=hi[2] {
            for y in lo[1]..=hi[1] {
                for x in lo[0]..=hi[0] {
                    let g = [x, y, z];
                    let i = sidx(g);
                    let (old, old_m) = (snap[i], snap_m[i]);
                    let p = [x as f32, y as f32, z as f32];
                    // The shape's density: positive inside.
                    let raw = brush.density(p);
                    let inside = raw >= 0.0;
                    let s = raw.clamp(-1.0, 1.0);
                    let k = brush.blend;
                    let blend = |target: f32| -> f32 {
                        if brush.strength >= 1.0 {
                            target
                        } else {
                            (old + (target - old) * brush.strength).clamp(-1.0, 1.0)
                        }
                    };
                    let (new, new_m) = match brush.tool {
                        VoxelTool::Dig if k > 0.0 => (
                            blend(density::smooth_min(old, -raw, k).clamp(-1.0, 1.0)),
                            old_m,
                        ),
                        VoxelTool::Dig => (blend(old.min(-s)), old_m),
                        VoxelTool::Add => {
                            let v = if k > 0.0 {
                                blend(density::smooth_max(old, raw, k).clamp(-1.0, 1.0))
                            } else {
                                blend(old.max(s))
                            };
                            let m = if v >= iso && old < iso {
                                brush.material
                            } else {
                                old_m
                            };
                            (v, m)
                        }
                        VoxelTool::Smooth => {
                            if !inside {
                                (old, old_m)
                            } else {
                                let mut sum = 0.0f32;
                                for dz in -1..=1 {
                                    for dy in -1..=1 {
                                        for dx in -1..=1 {
                                            sum += snap[sidx([x + dx, y + dy, z + dz])];
                                        }
                                    }
                                }
                                (blend(sum / 27.0), old_m)
                            }
                        }
                        VoxelTool::Flatten => {
                            if !inside {
                                (old, old_m)
                            } else {
                                let t = po - (pn[0] * p[0] + pn[1] * p[1] + pn[2] * p[2]);
                                (blend(t.clamp(-1.0, 1.0)), old_m)
                            }
                        }
                        VoxelTool::Paint => {
                            if inside && old >= iso {
                                (old, brush.material)
                            } else {
                                (old, old_m)
                            }
                        }
                    };
                    // A value the stroke writes keeps off the iso level
                    // (see ISO_MARGIN), on the side it is on.
                    let new = if new.to_bits() != old.to_bits() {
                        off_iso(new, iso)
                    } else {
                        new
                    };
                    if new.to_bits() != old.to_bits() || new_m != old_m {
                        edit.nodes.push(g);
                        edit.before.push(old);
                        edit.after.push(new);
                        edit.mat_before.push(old_m);
                        edit.mat_after.push(new_m);
                    }
                }
            }
        }
        self.write_nodes(&edit.nodes, &edit.after, &edit.mat_after);
        Ok(edit)
    }

    /// Writes one side of an edit: [`Backward`](EditDirection::Backward)
    /// restores `before` (undo), [`Forward`](EditDirection::Forward) writes
    /// `after` (redo), both bit for bit. Chunks it needs are generated first.
    ///
    /// # Errors
    ///
    /// [`WorldError::MalformedEdit`] as [`VoxelEdit::validate`]; the world is
    /// unchanged on error.
    pub fn apply_edit(&mut self, edit: &VoxelEdit, dir: EditDirection) -> Result<(), WorldError> {
        edit.validate()?;
        let (values, mats) = match dir {
            EditDirection::Forward => (&edit.after, &edit.mat_after),
            EditDirection::Backward => (&edit.before, &edit.mat_before),
        };
        let coords: Vec<[i32; 3]> = edit.nodes.iter().map(|&g| self.chunk_of_node(g)).collect();
        self.load_chunks(&coords);
        self.write_nodes(&edit.nodes, values, mats);
        Ok(())
    }

    /// Re-meshes dirty chunks (ascending coordinates), generating the
    /// neighbours they read. With `Some(budget)` it stops once the budget is
    /// spent, after at least one batch, and reports what remains. With the
    /// `parallel` feature batches are meshed on rayon's threads (one mesher
    /// per worker); the result does not depend on the thread count.
    pub fn rebuild(&mut self, budget: Option<Duration>) -> RebuildReport {
        let start = Instant::now();
        let mut queue = std::mem::take(&mut self.queue);
        queue.clear();
        queue.extend(self.dirty.iter().copied());
        let step = match budget {
            None => queue.len().max(1),
            Some(_) => batch_size(),
        };
        let mut need = std::mem::take(&mut self.need);
        let mut work = std::mem::take(&mut self.work);
        let mut done = 0;
        while done < queue.len() {
            let end = (done + step).min(queue.len());
            let batch = &queue[done..end];
            need.clear();
            for c in batch {
                for dz in -1..=1 {
                    for dy in -1..=1 {
                        for dx in -1..=1 {
                            let nc = [c[0] + dx, c[1] + dy, c[2] + dz];
                            if !self.chunks.contains_key(&nc) {
                                need.push(nc);
                            }
                        }
                    }
                }
            }
            if !need.is_empty() {
                self.load_chunks(&need);
            }
            // Each chunk's previous mesh lends its buffers to the new one.
            work.clear();
            work.extend(batch.iter().map(|c| {
                let old = self.meshes.get_mut(c).map(std::mem::take);
                (*c, old.unwrap_or_default())
            }));
            mesh_batch(
                &self.chunks,
                &mut work,
                self.n,
                self.params.iso,
                &self.meshers,
            );
            for (c, mesh) in work.drain(..) {
                match self.meshes.get_mut(&c) {
                    Some(slot) => *slot = mesh,
                    None => {
                        self.meshes.insert(c, mesh);
                    }
                }
                self.dirty.remove(&c);
            }
            done = end;
            if budget.is_some_and(|b| start.elapsed() >= b) {
                break;
            }
        }
        self.queue = queue;
        self.need = need;
        self.work = work;
        RebuildReport {
            rebuilt: done,
            remaining: self.dirty.len(),
        }
    }

    /// Meshes chunk `coord` from the loaded chunks into `out` (cleared
    /// first), exactly as [`rebuild`](Self::rebuild) does, without touching
    /// the world's cache or dirty set. The chunk's nodes and its apron (one
    /// node before and two after on each axis) are gathered from the chunk
    /// and its neighbours; neighbours that are not loaded read as air. Call
    /// [`load_chunks`](Self::load_chunks) for the 27 chunks around `coord`
    /// first to mesh the generated terrain.
    ///
    /// The positions, normals, materials and indices are the chunk's visual
    /// mesh and, as [`VoxelChunkMesh::trimesh`], its collider. With a warm
    /// `mesher` and an `out` with enough capacity it allocates nothing.
    pub fn mesh_chunk(&self, coord: [i32; 3], mesher: &mut VoxelMesher, out: &mut VoxelChunkMesh) {
        mesh_chunk_into(&self.chunks, coord, self.n, self.params.iso, mesher, out);
    }

    /// Re-meshes every dirty chunk.
    pub fn rebuild_all(&mut self) {
        self.rebuild(None);
    }

    /// Drops the chunks (and meshes) outside `min..=max`, except modified
    /// ones, which keep their data (their mesh is dropped). Returns how many
    /// chunks were dropped.
    pub fn retain_region(&mut self, min: [i32; 3], max: [i32; 3]) -> usize {
        let inside = |c: &[i32; 3]| (0..3).all(|a| min[a] <= c[a] && c[a] <= max[a]);
        let before = self.chunks.len();
        let modified = &self.modified;
        self.chunks.retain(|c, _| inside(c) || modified.contains(c));
        self.meshes.retain(|c, _| inside(c));
        self.dirty.retain(|c| inside(c));
        before - self.chunks.len()
    }

    /// Loads the chunks holding the nodes around the segment `from -> to`
    /// (generated ones, cheap to drop later with
    /// [`retain_region`](Self::retain_region)), so that
    /// [`raycast`](Self::raycast), [`is_solid`](Self::is_solid) and
    /// [`density_at`](Self::density_at) see the ground there. Returns how
    /// many chunks were loaded; nothing for non-finite input or a segment
    /// longer than 65,536 world units.
    pub fn load_along(&mut self, from: [f32; 3], to: [f32; 3]) -> usize {
        let d = [0, 1, 2].map(|a| to[a] - from[a]);
        let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        if !(len.is_finite() && from.iter().all(|v| v.is_finite())) || len > 65_536.0 {
            return 0;
        }
        if from.iter().chain(&to).any(|v| v.abs() >= 1e9) {
            return 0;
        }
        let n = self.chunk_cells() as f32;
        let steps = (len / (0.5 * n)).ceil().max(1.0) as usize;
        let mut coords: Vec<[i32; 3]> = Vec::new();
        for k in 0..=steps {
            let f = k as f32 / steps as f32;
            let p = [0, 1, 2].map(|a| from[a] + d[a] * f);
            let base = p.map(|v| v.floor() as i64);
            for corner in 0..8 {
                let g = [
                    base[0] + (corner & 1) as i64,
                    base[1] + ((corner >> 1) & 1) as i64,
                    base[2] + ((corner >> 2) & 1) as i64,
                ];
                let c = self.chunk_of_node(g);
                if !coords.contains(&c) {
                    coords.push(c);
                }
            }
        }
        self.load_chunks(&coords)
    }

    /// The first point where the segment `from -> to` enters solid, found by
    /// walking the cells it crosses (3D DDA), sampling the trilinear density
    /// a few times per cell and bisecting the first air-to-solid step. A
    /// segment that starts in solid hits at `t = 0`. Unloaded chunks count as
    /// air. `None` for non-finite input or no hit.
    pub fn raycast(&self, from: [f32; 3], to: [f32; 3]) -> Option<VoxelHit> {
        if from
            .iter()
            .chain(to.iter())
            .any(|v| !(v.is_finite() && (*v as f64).abs() < NODE_LIMIT))
        {
            return None;
        }
        let iso = self.params.iso;
        let d = [to[0] - from[0], to[1] - from[1], to[2] - from[2]];
        let at = |t: f32| [from[0] + d[0] * t, from[1] + d[1] * t, from[2] + d[2] * t];
        let solid = |t: f32| self.density_at(at(t)).is_some_and(|v| v >= iso);
        if solid(0.0) {
            return Some(self.hit(at(0.0), 0.0, d));
        }
        // DDA state per axis: the next boundary's t and the t between boundaries.
        let mut t_next = [f32::INFINITY; 3];
        let mut t_delta = [f32::INFINITY; 3];
        for a in 0..3 {
            if d[a] != 0.0 {
                let cell = from[a].floor();
                let boundary = if d[a] > 0.0 {
                    cell + 1.0
                } else if from[a] > cell {
                    cell
                } else {
                    cell - 1.0
                };
                t_next[a] = (boundary - from[a]) / d[a];
                t_delta[a] = 1.0 / d[a].abs();
            }
        }
        let mut t_prev = 0.0f32;
        for _ in 0..RAY_MAX_CELLS {
            let a = if t_next[0] <= t_next[1] && t_next[0] <= t_next[2] {
                0
            } else if t_next[1] <= t_next[2] {
                1
            } else {
                2
            };
            let t_end = t_next[a].min(1.0);
            let t_start = t_prev;
            for k in 1..=RAY_SAMPLES_PER_CELL {
                let t = if k == RAY_SAMPLES_PER_CELL {
                    t_end
                } else {
                    t_start + (t_end - t_start) * (k as f32 / RAY_SAMPLES_PER_CELL as f32)
                };
                if t <= t_prev {
                    continue;
                }
                if solid(t) {
                    let (mut lo, mut hi) = (t_prev, t);
                    for _ in 0..REFINE_STEPS {
                        let mid = 0.5 * (lo + hi);
                        if mid <= lo || mid >= hi {
                            break;
                        }
                        if solid(mid) {
                            hi = mid;
                        } else {
                            lo = mid;
                        }
                    }
                    return Some(self.hit(at(hi), hi, d));
                }
                t_prev = t;
            }
            if t_end >= 1.0 {
                return None;
            }
            t_next[a] += t_delta[a];
        }
        None
    }

    fn hit(&self, point: [f32; 3], t: f32, dir: [f32; 3]) -> VoxelHit {
        let h = 0.5f32;
        let mut g = [0.0f32; 3];
        let mut ok = true;
        for a in 0..3 {
            let mut p1 = point;
            let mut p0 = point;
            p1[a] += h;
            p0[a] -= h;
            match (self.density_at(p1), self.density_at(p0)) {
                (Some(v1), Some(v0)) => g[a] = v1 - v0,
                _ => ok = false,
            }
        }
        let len = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
        let normal = if ok && len > 1e-12 {
            [-g[0] / len, -g[1] / len, -g[2] / len]
        } else {
            let l = (dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]).sqrt();
            if l > 0.0 {
                [-dir[0] / l, -dir[1] / l, -dir[2] / l]
            } else {
                [0.0, 1.0, 0.0]
            }
        };
        VoxelHit { point, normal, t }
    }
}

/// A chunk that holds a slot while its content is moved out (no memory).
fn placeholder_chunk() -> VoxelChunk {
    VoxelChunk {
        density: VoxelChunkData::Uniform(0.0),
        materials: VoxelChunkMaterials::Uniform(0),
    }
}

/// Generates one chunk from the sampler.
fn generate(sampler: &DensitySampler, coord: [i32; 3], n: i64) -> VoxelChunk {
    let len = (n * n * n) as usize;
    let mut values = vec![0.0f32; len];
    let origin = coord.map(|c| (c as i64 * n) as f32);
    let dims = [n as u32; 3];
    let density = match sampler.fill(origin, 1.0, dims, &mut values) {
        Ok(()) => VoxelChunkData::from_values(values),
        Err(_) => VoxelChunkData::Uniform(-1.0),
    };
    VoxelChunk {
        density,
        materials: VoxelChunkMaterials::Uniform(0),
    }
}

/// Chunks per batch under a time budget: one per worker thread.
fn batch_size() -> usize {
    #[cfg(feature = "parallel")]
    {
        rayon::current_num_threads().max(1)
    }
    #[cfg(not(feature = "parallel"))]
    {
        1
    }
}

/// Fewest chunks in one batch for which a rebuild fans out over threads;
/// smaller batches run on the calling thread (waking workers costs more).
#[cfg(feature = "parallel")]
const PARALLEL_MIN_CHUNKS: usize = 2;

/// Meshes every `(coord, mesh)` of `work` into its mesh, reusing meshers
/// from `pool`.
fn mesh_batch(
    chunks: &BTreeMap<[i32; 3], VoxelChunk>,
    work: &mut [([i32; 3], VoxelChunkMesh)],
    n: i64,
    iso: f32,
    pool: &MesherPool,
) {
    #[cfg(feature = "parallel")]
    if work.len() >= PARALLEL_MIN_CHUNKS && rayon::current_num_threads() > 1 {
        use rayon::prelude::*;
        work.par_iter_mut().for_each_init(
            || pool.take(),
            |m, (c, mesh)| mesh_chunk_into(chunks, *c, n, iso, m.get(), mesh),
        );
        return;
    }
    let mut m = pool.take();
    for (c, mesh) in work.iter_mut() {
        mesh_chunk_into(chunks, *c, n, iso, m.get(), mesh);
    }
}

/// `v` moved off the iso level by at least [`VoxelWorld::ISO_MARGIN`], on
/// its side.
fn off_iso(v: f32, iso: f32) -> f32 {
    let m = VoxelWorld::ISO_MARGIN;
    if (v - iso).abs() >= m {
        v
    } else if v >= iso {
        iso + m
    } else {
        iso - m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stencil_ranges_match_the_contract() {
        let w = VoxelWorld::new(&VoxelParams::DEFAULT.with_chunk_cells(8)).unwrap();
        assert_eq!(
            w.chunks_reading_node([8, 6, 9], true),
            [[0, 1], [0, 0], [0, 1]]
        );
        assert_eq!(
            w.chunks_reading_node([7, 10, -1], true),
            [[0, 1], [1, 1], [-1, 0]]
        );
        assert_eq!(
            w.chunks_reading_node([8, 7, 0], false),
            [[0, 1], [0, 0], [-1, 0]]
        );
    }

    #[test]
    fn world_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<VoxelWorld>();
    }
}
