//! A [`ChunkSource`] for voxel worlds: generate a chunk's nodes (edited
//! chunks from a snapshot) and mesh it with marching cubes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use isoterra_field::{DensitySampler, HeightGen, HeightParams, VoxelPreset};
use isoterra_mesh::{CellBox, CubesOptions, CubesOutput, MarchingCubes};

use super::select::{ChunkCoord, Dim, StreamConfig};
use super::source::{CancelFlag, ChunkSource};
use crate::voxel::{VoxelChunk, VoxelChunkData, VoxelChunkMaterials, VoxelChunkMesh};
use crate::{VoxelParams, VoxelWorld, WorldError};

/// Largest node coordinate a streamed voxel chunk may reach (exact in `f32`).
const NODE_LIMIT: i64 = 1 << 24;

/// Edited voxel chunks by coordinate, shared between the application and
/// the build threads.
pub type VoxelEdits = Arc<HashMap<ChunkCoord, VoxelChunk>>;

/// The buffers of one build.
#[derive(Default)]
struct Scratch {
    cubes: MarchingCubes,
    out: CubesOutput,
    values: Vec<f32>,
    /// The sampled rows when the top of the grid is surely air.
    part: Vec<f32>,
    mats: Vec<u8>,
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
/// loaded. Chunks of different LODs are not stitched: small cracks can show
/// where the LOD changes.
///
/// Chunks that lie wholly above the highest ground the generator can make
/// (and touch no edited chunk) are empty at once, without sampling.
pub struct VoxelSource {
    params: VoxelParams,
    sampler: DensitySampler,
    edits: VoxelEdits,
    /// Nodes with `y` above this are air for the generator.
    air_above: Option<f64>,
    /// The generator's ground, to find air above each chunk's columns.
    ground: Option<Ground>,
    /// The highest ground under each `(cx, cz, lod)` column of grids.
    columns: Mutex<HashMap<[i32; 3], f32>>,
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

impl std::fmt::Debug for VoxelSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VoxelSource")
            .field("params", &self.params)
            .field("edited_chunks", &self.edits.len())
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
        let n = params.chunk_cells as usize;
        let len = n * n * n;
        for chunk in edits.values() {
            let dense_len = |d: &VoxelChunkData| match d {
                VoxelChunkData::Dense(v) => v.len(),
                VoxelChunkData::Uniform(_) => len,
            };
            let mats_len = match &chunk.materials {
                VoxelChunkMaterials::Dense(v) => v.len(),
                VoxelChunkMaterials::Uniform(_) => len,
            };
            if dense_len(&chunk.density) != len || mats_len != len {
                return Err(WorldError::mismatch(
                    "edited chunk length",
                    len,
                    "another length",
                ));
            }
        }
        let g = &params.generator;
        // The generator's ground is `ground_level + (h - mid) - y` for the
        // height `h` of the same height generator the sampler builds, and
        // bounds the density from above (plus the overhang push); two ramp
        // widths past it the clamp gives exactly -1.
        let ground = match g.preset {
            VoxelPreset::Caves | VoxelPreset::Overhangs => {
                let height = HeightGen::new(
                    &HeightParams::DEFAULT.with_height_scale(g.ground_amplitude),
                    g.seed,
                )?;
                let [lo, hi] = height.range();
                let mid = 0.5 * (f64::from(lo) + f64::from(hi));
                let mut offset = f64::from(g.ground_level) - mid + 2.0 * f64::from(g.falloff) + 1.0;
                if g.preset == VoxelPreset::Overhangs {
                    offset += 1.25 * f64::from(g.overhang_strength);
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
            edits,
            air_above,
            ground,
            columns: Mutex::new(HashMap::new()),
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
        let edits: HashMap<ChunkCoord, VoxelChunk> = world
            .modified_chunks()
            .filter_map(|c| world.chunk(c).map(|ch| (c, ch.clone())))
            .collect();
        Self::with_edits(world.params(), Arc::new(edits))
    }

    /// The parameters.
    pub fn params(&self) -> &VoxelParams {
        &self.params
    }

    /// The edited chunks.
    pub fn edits(&self) -> &VoxelEdits {
        &self.edits
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
        let mut heights = vec![0.0f32; w * w];
        let st = step as f32;
        let origin = [g0[0] as f32, g0[2] as f32];
        let h =
            match ground
                .height
                .fill_heights(origin, [st, st], [w as u32, w as u32], &mut heights)
            {
                Ok(()) => heights.iter().copied().fold(f32::NEG_INFINITY, f32::max),
                // Cannot happen for grids within the node limit; assume the
                // highest ground then.
                Err(_) => ground.height.range()[1],
            };
        let mut cache = self.columns.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= COLUMN_CACHE {
            cache.clear();
        }
        cache.insert(key, h);
        h
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
        let out = self.build_into(coord, lod, cancel, &mut scratch);
        self.scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(scratch);
        out
    }

    fn build_into(
        &self,
        coord: ChunkCoord,
        lod: u8,
        cancel: Option<&CancelFlag>,
        s: &mut Scratch,
    ) -> Option<VoxelChunkMesh> {
        let n = i64::from(self.params.chunk_cells);
        let lod = lod.min(self.max_lod());
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
        // chunks around (as the world's mesher decides uniform materials).
        let mut touched: Vec<(ChunkCoord, &VoxelChunk)> = Vec::new();
        let mut uniform_id: Option<Option<u8>> = None;
        for k in 0..27 {
            let d = [k % 3 - 1, (k / 3) % 3 - 1, k / 9 - 1];
            let c = [coord[0] + d[0], coord[1] + d[1], coord[2] + d[2]];
            let id = match self.edits.get(&c) {
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
                if rows < 1.0 {
                    return Some(VoxelChunkMesh::default());
                }
                (rows as usize).min(w)
            }
            _ => w,
        };
        s.values.clear();
        s.values.resize(w * w * w, -1.0);
        let filled = if rows == w {
            self.sampler.fill(origin, step as f32, dims, &mut s.values)
        } else {
            // Sample the rows below the air only, then spread them out.
            s.part.clear();
            s.part.resize(w * rows * w, -1.0);
            let part_dims = [w as u32, rows as u32, w as u32];
            let r = self
                .sampler
                .fill(origin, step as f32, part_dims, &mut s.part);
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
        if s.values.iter().all(|&v| (v >= iso) == first) {
            return Some(VoxelChunkMesh::default());
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
            normals: s.out.normals.clone(),
            materials: s.out.materials.clone(),
            indices: s.out.indices.clone(),
        })
    }
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
    // Per axis, the grid indices whose node the chunk owns.
    let mut range = [(0usize, 0usize); 3];
    for a in 0..3 {
        let lo = i64::from(c[a]) * n;
        let hi = lo + n - 1;
        let first = (lo - g0[a] + step - 1).div_euclid(step).max(0);
        let last = (hi - g0[a]).div_euclid(step).min(w as i64 - 1);
        if first > last {
            return;
        }
        range[a] = (first as usize, last as usize);
    }
    let base = c.map(|v| i64::from(v) * n);
    let nu = n as usize;
    for k in range[2].0..=range[2].1 {
        let lz = (g0[2] + k as i64 * step - base[2]) as usize;
        for j in range[1].0..=range[1].1 {
            let ly = (g0[1] + j as i64 * step - base[1]) as usize;
            for i in range[0].0..=range[0].1 {
                let lx = (g0[0] + i as i64 * step - base[0]) as usize;
                let src = (lz * nu + ly) * nu + lx;
                let dst = (k * w + j) * w + i;
                s.values[dst] = ch.density.get(src);
                if mats {
                    s.mats[dst] = ch.materials.get(src);
                }
            }
        }
    }
}

impl ChunkSource for VoxelSource {
    type Output = VoxelChunkMesh;

    fn build(&self, coord: ChunkCoord, lod: u8, cancel: &CancelFlag) -> Option<VoxelChunkMesh> {
        self.build_mesh(coord, lod, Some(cancel))
    }
}
