//! Levels of detail for the voxel world: an octree selection of chunks around
//! viewers with the 2:1 rule, and crack-free meshing of a selection with
//! transition cells.
//!
//! A chunk at LOD `k` ([`VoxelLodChunk`]) has the world's `N` cells per axis,
//! each `2^k` base cells wide: chunk `c` covers the base nodes
//! `[c * N * 2^k, (c + 1) * N * 2^k]` on each axis and samples every `2^k`-th of
//! them. Its LOD-0 footprint is the world chunks `[c * 2^k, (c + 1) * 2^k)`.

use std::collections::HashSet;

use isoterra_field::{DensitySampler, VoxelGen};
use isoterra_mesh::{CubesOptions, CubesOutput, LodChunkInput, LodMesher};

use super::chunk::{VoxelChunk, VoxelChunkData, VoxelChunkMaterials};
use super::world::VoxelWorld;
use crate::WorldError;

/// Parameters of [`select_voxel_lods`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct VoxelLodParams {
    /// Cells per chunk along each axis (the world's
    /// [`VoxelParams::chunk_cells`](crate::VoxelParams::chunk_cells)), `2..=128`.
    /// Default value: `32`.
    pub chunk_cells: u32,
    /// Coarsest LOD, `0..=`[`MAX_LOD`](Self::MAX_LOD): the selection starts
    /// from chunks of `2^max_lod` world chunks per axis. Default value: `4`.
    pub max_lod: u8,
    /// Split distance in world units: a chunk at LOD `k` is split into its
    /// eight children when a viewer is closer than `lod_distance * 2^k` to its
    /// box. Finite, `0..=1e9`. Default value: `64.0`.
    pub lod_distance: f32,
}

impl VoxelLodParams {
    /// Largest [`max_lod`](Self::max_lod).
    pub const MAX_LOD: u8 = 16;

    /// Most chunks one selection may hold.
    pub const MAX_SELECTION_CHUNKS: usize = 1 << 18;

    /// The defaults.
    pub const DEFAULT: Self = VoxelLodParams {
        chunk_cells: 32,
        max_lod: 4,
        lod_distance: 64.0,
    };

    /// Sets [`chunk_cells`](Self::chunk_cells).
    pub const fn with_chunk_cells(mut self, chunk_cells: u32) -> Self {
        self.chunk_cells = chunk_cells;
        self
    }

    /// Sets [`max_lod`](Self::max_lod).
    pub const fn with_max_lod(mut self, max_lod: u8) -> Self {
        self.max_lod = max_lod;
        self
    }

    /// Sets [`lod_distance`](Self::lod_distance).
    pub const fn with_lod_distance(mut self, lod_distance: f32) -> Self {
        self.lod_distance = lod_distance;
        self
    }

    /// Checks every field.
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`] naming the first bad field.
    pub fn validate(&self) -> Result<(), WorldError> {
        if !(2..=crate::VoxelParams::MAX_CHUNK_CELLS).contains(&self.chunk_cells) {
            return Err(WorldError::param(
                "chunk_cells",
                self.chunk_cells,
                "must be in 2..=128",
            ));
        }
        if self.max_lod > Self::MAX_LOD {
            return Err(WorldError::param(
                "max_lod",
                self.max_lod,
                "must be at most 16",
            ));
        }
        if !(0.0..=1.0e9).contains(&self.lod_distance) {
            return Err(WorldError::param(
                "lod_distance",
                self.lod_distance,
                "must be finite and in 0..=1e9",
            ));
        }
        Ok(())
    }
}

impl Default for VoxelLodParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// One chunk of a LOD selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct VoxelLodChunk {
    /// Coordinate in chunks of this LOD: it covers the world chunks
    /// `[coord * 2^lod, (coord + 1) * 2^lod)` on each axis.
    pub coord: [i32; 3],
    /// The LOD: the chunk samples every `2^lod`-th base node.
    pub lod: u8,
}

impl VoxelLodChunk {
    /// A chunk.
    pub const fn new(coord: [i32; 3], lod: u8) -> Self {
        VoxelLodChunk { coord, lod }
    }

    /// The first world chunk (LOD 0 coordinate) it covers on each axis.
    pub fn first_world_chunk(&self) -> [i64; 3] {
        self.coord.map(|c| (c as i64) << self.lod)
    }

    /// Global index of its first base node, for chunks of `chunk_cells` cells.
    pub fn base_node(&self, chunk_cells: u32) -> [i64; 3] {
        self.first_world_chunk().map(|c| c * chunk_cells as i64)
    }
}

/// The leaves of a selection by `(lod, coord)`, with the coarsest LOD present.
struct Leaves {
    set: HashSet<(u8, [i64; 3])>,
    max_lod: u8,
}

impl Leaves {
    /// The LOD of the leaf covering world chunk `p`, if any.
    fn lod_at(&self, p: [i64; 3]) -> Option<u8> {
        (0..=self.max_lod).find(|&m| self.set.contains(&(m, p.map(|v| v >> m))))
    }
}

/// Distance from `p` to the box `lo..=hi`.
fn box_distance(p: [f64; 3], lo: [f64; 3], hi: [f64; 3]) -> f64 {
    let mut d2 = 0.0;
    for a in 0..3 {
        let d = (lo[a] - p[a]).max(p[a] - hi[a]).max(0.0);
        d2 += d * d;
    }
    d2.sqrt()
}

fn too_many() -> WorldError {
    WorldError::param(
        "selection",
        "more than 262144 chunks",
        "too many chunks: use a smaller region, a larger max_lod or a smaller lod_distance",
    )
}

/// The 26 neighbour directions.
fn directions() -> impl Iterator<Item = [i64; 3]> {
    (0..27)
        .map(|i| [i % 3 - 1, (i / 3) % 3 - 1, i / 9 - 1])
        .filter(|d| *d != [0, 0, 0])
}

/// The world chunk just outside leaf `(lod, c)` in direction `d` (the first
/// chunk of the leaf's span on axes where `d` is 0).
fn probe(lod: u8, c: [i64; 3], d: [i64; 3]) -> [i64; 3] {
    let mut p = [0; 3];
    for a in 0..3 {
        p[a] = match d[a] {
            -1 => (c[a] << lod) - 1,
            1 => (c[a] + 1) << lod,
            _ => c[a] << lod,
        };
    }
    p
}

/// Selects the chunks that cover the world chunks `region_min..=region_max`
/// (inclusive, LOD 0 chunk coordinates) exactly once, finer near the viewers.
///
/// The region is covered by chunks at [`VoxelLodParams::max_lod`] (those
/// reaching outside the region are split until every chunk lies inside it);
/// a chunk at LOD `k > 0` is split into its eight children when a viewer
/// (world position) is closer than `lod_distance * 2^k` to its box. Then the
/// 2:1 rule is enforced: any chunk that touches (by a face, an edge or a
/// corner) a chunk more than one level finer is split, until none does. The
/// result is sorted by LOD, then `z`, `y`, `x`, and depends only on the inputs.
///
/// # Errors
///
/// [`WorldError::InvalidParameter`] for bad parameters, a non-finite viewer,
/// `region_min > region_max` on an axis, or a selection of more than
/// [`VoxelLodParams::MAX_SELECTION_CHUNKS`] chunks.
pub fn select_voxel_lods(
    params: &VoxelLodParams,
    viewers: &[[f32; 3]],
    region_min: [i32; 3],
    region_max: [i32; 3],
) -> Result<Vec<VoxelLodChunk>, WorldError> {
    params.validate()?;
    if let Some(v) = viewers.iter().find(|v| v.iter().any(|c| !c.is_finite())) {
        return Err(WorldError::param(
            "viewer",
            format!("{v:?}"),
            "viewer positions must be finite",
        ));
    }
    if (0..3).any(|a| region_min[a] > region_max[a]) {
        return Err(WorldError::param(
            "region",
            format!("{region_min:?}..={region_max:?}"),
            "min must not exceed max on any axis",
        ));
    }
    let k = params.max_lod;
    let lo = region_min.map(i64::from);
    let hi = region_max.map(i64::from);
    let top_lo = lo.map(|v| v >> k);
    let top_hi = hi.map(|v| v >> k);
    let mut top_count = 1u64;
    for a in 0..3 {
        top_count = top_count.saturating_mul((top_hi[a] - top_lo[a] + 1) as u64);
    }
    if top_count > VoxelLodParams::MAX_SELECTION_CHUNKS as u64 {
        return Err(too_many());
    }
    let n = params.chunk_cells as f64;
    let viewers: Vec<[f64; 3]> = viewers.iter().map(|v| v.map(f64::from)).collect();
    let dist = params.lod_distance as f64;
    let mut stack: Vec<(u8, [i64; 3])> = Vec::new();
    for z in top_lo[2]..=top_hi[2] {
        for y in top_lo[1]..=top_hi[1] {
            for x in top_lo[0]..=top_hi[0] {
                stack.push((k, [x, y, z]));
            }
        }
    }
    let mut leaves = Leaves {
        set: HashSet::new(),
        max_lod: k,
    };
    while let Some((l, c)) = stack.pop() {
        let first = c.map(|v| v << l);
        let last = c.map(|v| ((v + 1) << l) - 1);
        if (0..3).any(|a| last[a] < lo[a] || first[a] > hi[a]) {
            continue;
        }
        let inside = (0..3).all(|a| lo[a] <= first[a] && last[a] <= hi[a]);
        let split = l > 0
            && (!inside || {
                let bl = first.map(|v| v as f64 * n);
                let bh = last.map(|v| (v + 1) as f64 * n);
                let reach = dist * (1u64 << l) as f64;
                viewers.iter().any(|&p| box_distance(p, bl, bh) < reach)
            });
        if split {
            push_children(&mut stack, l, c);
        } else {
            leaves.set.insert((l, c));
            if leaves.set.len() > VoxelLodParams::MAX_SELECTION_CHUNKS {
                return Err(too_many());
            }
        }
    }
    // 2:1 rule: split every leaf that touches a leaf two or more levels finer.
    loop {
        let mut to_split: Vec<(u8, [i64; 3])> = Vec::new();
        for &(l, c) in &leaves.set {
            if l + 2 > k {
                continue;
            }
            for d in directions() {
                let p = probe(l, c, d);
                if let Some(m) = leaves.lod_at(p)
                    && m >= l + 2
                {
                    to_split.push((m, p.map(|v| v >> m)));
                }
            }
        }
        if to_split.is_empty() {
            break;
        }
        to_split.sort_unstable();
        to_split.dedup();
        for (m, q) in to_split {
            leaves.set.remove(&(m, q));
            let mut kids = Vec::with_capacity(8);
            push_children(&mut kids, m, q);
            leaves.set.extend(kids);
        }
        if leaves.set.len() > VoxelLodParams::MAX_SELECTION_CHUNKS {
            return Err(too_many());
        }
    }
    let mut out: Vec<VoxelLodChunk> = leaves
        .set
        .into_iter()
        .map(|(l, c)| VoxelLodChunk::new(c.map(|v| v as i32), l))
        .collect();
    out.sort_unstable_by_key(|c| (c.lod, c.coord[2], c.coord[1], c.coord[0]));
    Ok(out)
}

fn push_children(stack: &mut Vec<(u8, [i64; 3])>, l: u8, c: [i64; 3]) {
    for o in 0..8i64 {
        let off = [o & 1, (o >> 1) & 1, o >> 2];
        stack.push((l - 1, [0, 1, 2].map(|a| 2 * c[a] + off[a])));
    }
}

/// Reusable state for meshing LOD chunks of a [`VoxelWorld`] with
/// transition cells ([`LodMesher`]): the sample buffers, the mesher's scratch
/// and the generator's sampler.
///
/// The value of a base node is the world's when its chunk is loaded (edited
/// chunks always are) and the generator's otherwise, so a selection can span
/// chunks the world never generated. Positions are in world units (one unit
/// per base cell) and bit-identical on faces shared by two chunks of the same
/// selection, whatever their LODs, as long as the selection keeps the 2:1
/// rule. Normals are the field's gradient normals (see [`LodMesher`]), read
/// over one extra node at the chunk's LOD outside each face, so chunks of the
/// same LOD give bit-identical normals on the faces they share; on the faces
/// and chunk edges it shares with a finer chunk, a coarse chunk reads the fine
/// nodes one fine step around them and computes the finer chunk's normals, bit
/// for bit, for the vertices the two have there. Every vertex
/// carries the material id of the solid node of its edge (id 0 for nodes of
/// chunks the world has not loaded).
///
/// With the `parallel` feature, [`mesh_selection`](Self::mesh_selection) and
/// [`mesh_region`](Self::mesh_region) mesh their chunks over rayon's threads
/// (one scratch per worker); the result does not depend on the thread count.
///
/// # Example
///
/// ```
/// use isoterra_world::{VoxelLodMesher, VoxelLodParams, VoxelParams, VoxelWorld, select_voxel_lods};
///
/// # fn main() -> Result<(), isoterra_world::WorldError> {
/// let world = VoxelWorld::new(&VoxelParams::DEFAULT.with_chunk_cells(8))?;
/// // World chunks -4..=3 on each axis, finest around a viewer at the origin.
/// let params = VoxelLodParams::DEFAULT
///     .with_chunk_cells(8)
///     .with_max_lod(2)
///     .with_lod_distance(8.0);
/// let selection = select_voxel_lods(&params, &[[0.0, 0.0, 0.0]], [-4; 3], [3; 3])?;
/// let mut mesher = VoxelLodMesher::new();
/// let meshes = mesher.mesh_selection(&world, &selection)?;
/// assert_eq!(meshes.len(), selection.len());
///
/// // Or everything at one LOD (an export at LOD 1).
/// let coarse = mesher.mesh_region(&world, [-4; 3], [3; 3], 1)?;
/// assert_eq!(coarse.len(), 4 * 4 * 4);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Default, Clone)]
pub struct VoxelLodMesher {
    scratch: Scratch,
    sampler: Option<(VoxelGen, DensitySampler)>,
}

/// The buffers of one meshing thread.
#[derive(Debug, Default, Clone)]
struct Scratch {
    mesher: LodMesher,
    samples: Vec<f32>,
    faces: [Vec<f32>; 6],
    /// Per face in `faces`: the fine nodes one fine step around it (see
    /// [`LodChunkInput::fine_aprons`]).
    fine_aprons: [Vec<f32>; 6],
    /// The samples of the nodes `-1..=cells + 1` at the chunk's LOD.
    apron: Vec<f32>,
    /// The material ids of the chunk's nodes.
    materials: Vec<u8>,
}

/// Where one gather reads its values.
struct Source<'w> {
    world: &'w VoxelWorld,
    sampler: &'w DensitySampler,
    modified: HashSet<[i32; 3]>,
    n: i64,
}

/// One chunk to mesh, with its finer faces and edges.
type Job = (VoxelLodChunk, u8, u16);

/// Meshes `jobs` in order (over rayon's threads with the `parallel` feature).
fn mesh_jobs(
    scratch: &mut Scratch,
    source: &Source<'_>,
    jobs: &[Job],
) -> Result<Vec<CubesOutput>, WorldError> {
    #[cfg(feature = "parallel")]
    if jobs.len() >= 2 {
        use rayon::prelude::*;
        return jobs
            .par_iter()
            .map_init(Scratch::default, |s, &(ch, faces, edges)| {
                let mut out = CubesOutput::default();
                s.mesh(source, &ch, faces, edges, &mut out).map(|()| out)
            })
            .collect();
    }
    jobs.iter()
        .map(|&(ch, faces, edges)| {
            let mut out = CubesOutput::default();
            scratch
                .mesh(source, &ch, faces, edges, &mut out)
                .map(|()| out)
        })
        .collect()
}

/// The sampler of `generator`, built once and kept in `cache`.
fn sampler_for(
    cache: &mut Option<(VoxelGen, DensitySampler)>,
    generator: VoxelGen,
) -> Result<&DensitySampler, WorldError> {
    let fresh = match cache.take() {
        Some((g, s)) if g == generator => (g, s),
        _ => (generator, generator.sampler()?),
    };
    Ok(&cache.insert(fresh).1)
}

/// The axes of a face of `axis`, increasing.
const fn other_axes(axis: usize) -> (usize, usize) {
    match axis {
        0 => (1, 2),
        1 => (0, 2),
        _ => (0, 1),
    }
}

/// Largest base node coordinate a LOD chunk may reach (exact in `f32`).
const NODE_LIMIT: i64 = 1 << 24;

impl VoxelLodMesher {
    /// A mesher with empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Meshes `jobs` of `world` in order.
    fn run(&mut self, world: &VoxelWorld, jobs: &[Job]) -> Result<Vec<CubesOutput>, WorldError> {
        let source = Source {
            world,
            sampler: sampler_for(&mut self.sampler, world.params().generator)?,
            modified: world.modified_chunks().collect(),
            n: world.chunk_cells() as i64,
        };
        mesh_jobs(&mut self.scratch, &source, jobs)
    }

    /// Meshes every chunk of `selection` (which must keep the 2:1 rule, as
    /// [`select_voxel_lods`] guarantees) with transition cells toward finer
    /// neighbours. Returns one mesh per chunk, in the order of `selection`
    /// (empty meshes included).
    ///
    /// A chunk at LOD `k > 0` refines its faces and edges whose neighbour in
    /// the selection (the chunk covering the world chunk just outside them) is
    /// at LOD `k - 1`.
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`] for a LOD above
    /// [`VoxelLodParams::MAX_LOD`], more than
    /// [`VoxelLodParams::MAX_SELECTION_CHUNKS`] chunks, a chunk listed twice,
    /// a chunk beyond ±2^24 base nodes, or a neighbour two or more levels
    /// finer (the 2:1 rule broken); [`WorldError::Field`] when the generator
    /// cannot be evaluated there.
    pub fn mesh_selection(
        &mut self,
        world: &VoxelWorld,
        selection: &[VoxelLodChunk],
    ) -> Result<Vec<(VoxelLodChunk, CubesOutput)>, WorldError> {
        let leaves = leaves_of(selection)?;
        let mut jobs = Vec::with_capacity(selection.len());
        for ch in selection {
            check_chunk(world, ch)?;
            let (faces, edges) = transitions(&leaves, ch)?;
            jobs.push((*ch, faces, edges));
        }
        let meshes = self.run(world, &jobs)?;
        Ok(selection.iter().copied().zip(meshes).collect())
    }

    /// Meshes the world chunks `region_min..=region_max` (inclusive, LOD 0
    /// chunk coordinates) at one LOD: the chunks at `lod` that cover the
    /// region (they may reach past it when the region is not aligned to
    /// `2^lod` world chunks). Returns `(coord at that LOD, mesh)` for every
    /// covering chunk, ascending `z`, `y`, `x`, empty meshes included.
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`] for `region_min > region_max`, a LOD
    /// above [`VoxelLodParams::MAX_LOD`] or more than
    /// [`VoxelWorld::MAX_REGION_CHUNKS`] chunks; as
    /// [`mesh_selection`](Self::mesh_selection) otherwise.
    pub fn mesh_region(
        &mut self,
        world: &VoxelWorld,
        region_min: [i32; 3],
        region_max: [i32; 3],
        lod: u8,
    ) -> Result<Vec<([i32; 3], CubesOutput)>, WorldError> {
        if (0..3).any(|a| region_min[a] > region_max[a]) {
            return Err(WorldError::param(
                "region",
                format!("{region_min:?}..={region_max:?}"),
                "min must not exceed max on any axis",
            ));
        }
        if lod > VoxelLodParams::MAX_LOD {
            return Err(WorldError::param("lod", lod, "must be at most 16"));
        }
        let lo = region_min.map(|v| v >> lod);
        let hi = region_max.map(|v| v >> lod);
        let mut count = 1u64;
        for a in 0..3 {
            count = count.saturating_mul((hi[a] as i64 - lo[a] as i64 + 1) as u64);
        }
        if count > VoxelWorld::MAX_REGION_CHUNKS {
            return Err(WorldError::param(
                "region",
                format!("{region_min:?}..={region_max:?} at LOD {lod}"),
                "too many chunks in one call (at most 16384): use a smaller region or a higher LOD",
            ));
        }
        let mut jobs = Vec::with_capacity(count as usize);
        for z in lo[2]..=hi[2] {
            for y in lo[1]..=hi[1] {
                for x in lo[0]..=hi[0] {
                    let ch = VoxelLodChunk::new([x, y, z], lod);
                    check_chunk(world, &ch)?;
                    jobs.push((ch, 0, 0));
                }
            }
        }
        let meshes = self.run(world, &jobs)?;
        Ok(jobs.iter().map(|j| j.0.coord).zip(meshes).collect())
    }

    /// Meshes one chunk into `out` (reset first): `finer_faces` bit `f` and
    /// `finer_edges` bit `e` mark the faces and chunk edges whose neighbour is
    /// at LOD `chunk.lod - 1`, numbered as in [`LodChunkInput`] (faces
    /// `2 * axis + side`, edges `4 * axis + u + 2 * v`). For streaming, where
    /// the caller tracks the neighbours itself.
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`] for a LOD above
    /// [`VoxelLodParams::MAX_LOD`], a chunk beyond ±2^24 base nodes or finer
    /// flags on a LOD 0 chunk; [`WorldError::Mesh`] for out-of-range flag bits;
    /// [`WorldError::Field`] when the generator cannot be evaluated there.
    /// `out` is unchanged on error.
    pub fn mesh_chunk(
        &mut self,
        world: &VoxelWorld,
        chunk: &VoxelLodChunk,
        finer_faces: u8,
        finer_edges: u16,
        out: &mut CubesOutput,
    ) -> Result<(), WorldError> {
        check_chunk(world, chunk)?;
        if chunk.lod == 0 && (finer_faces != 0 || finer_edges != 0) {
            return Err(WorldError::param(
                "finer_faces / finer_edges",
                format!("{finer_faces:#b} / {finer_edges:#b}"),
                "a chunk at LOD 0 has no finer neighbour",
            ));
        }
        let source = Source {
            world,
            sampler: sampler_for(&mut self.sampler, world.params().generator)?,
            modified: world.modified_chunks().collect(),
            n: world.chunk_cells() as i64,
        };
        self.scratch
            .mesh(&source, chunk, finer_faces, finer_edges, out)
    }
}

/// Checks a chunk's LOD and extent.
fn check_chunk(world: &VoxelWorld, ch: &VoxelLodChunk) -> Result<(), WorldError> {
    if ch.lod > VoxelLodParams::MAX_LOD {
        return Err(WorldError::param("lod", ch.lod, "must be at most 16"));
    }
    let n = world.chunk_cells() as i64;
    let base = ch.base_node(world.chunk_cells());
    let span = n << ch.lod;
    if base
        .iter()
        .any(|&b| b < -NODE_LIMIT || b + span > NODE_LIMIT)
    {
        return Err(WorldError::param(
            "chunk",
            format!("{ch:?}"),
            "its base nodes must lie within ±2^24",
        ));
    }
    Ok(())
}

impl Scratch {
    /// Gathers the samples of `ch` (and the fine samples of the faces it
    /// needs) and meshes it into `out`.
    fn mesh(
        &mut self,
        source: &Source<'_>,
        ch: &VoxelLodChunk,
        finer_faces: u8,
        finer_edges: u16,
        out: &mut CubesOutput,
    ) -> Result<(), WorldError> {
        let sampler = source.sampler;
        let n = source.n;
        let cells = n as u32;
        let step = 1i64 << ch.lod;
        let base = ch.base_node(cells);
        gather(
            source,
            sampler,
            base,
            step,
            [cells + 1; 3],
            &mut self.samples,
        )?;
        // Faces whose fine samples are needed: the refined faces, and one face
        // of every refined edge not already covered.
        let mut need = finer_faces & 0x3f;
        for e in 0..12u8 {
            if finer_edges & (1 << e) == 0 {
                continue;
            }
            let axis = (e / 4) as usize;
            let (b0, b1) = other_axes(axis);
            let fa = 2 * b0 as u8 + (e & 1);
            let fb = 2 * b1 as u8 + ((e >> 1) & 1);
            if need & (1 << fa | 1 << fb) == 0 {
                need |= 1 << fa;
            }
        }
        if ch.lod > 0 {
            for f in 0..6usize {
                if need & (1 << f) == 0 {
                    continue;
                }
                let axis = f / 2;
                let mut origin = base;
                if f % 2 == 1 {
                    origin[axis] += n * step;
                }
                let mut dims = [2 * cells + 1; 3];
                dims[axis] = 1;
                gather(source, sampler, origin, step / 2, dims, &mut self.faces[f])?;
                // One fine step around the face, for the normals of the
                // vertices shared with the finer neighbours; its middle layer
                // is the face itself, bit for bit.
                let half = step / 2;
                let mut dims = [2 * cells + 3; 3];
                dims[axis] = 3;
                let ring = &mut self.fine_aprons[f];
                gather(source, sampler, origin.map(|c| c - half), half, dims, ring)?;
                let (u, v) = other_axes(axis);
                let stride = [1, dims[0] as usize, (dims[0] * dims[1]) as usize];
                let side = 2 * cells as usize + 1;
                for (r, row) in self.faces[f].chunks_exact(side).enumerate() {
                    for (c, &value) in row.iter().enumerate() {
                        let at = stride[axis] + (c + 1) * stride[u] + (r + 1) * stride[v];
                        ring[at] = value;
                    }
                }
            }
        }
        gather(
            source,
            sampler,
            base.map(|c| c - step),
            step,
            [cells + 3; 3],
            &mut self.apron,
        )?;
        // The inner nodes are the chunk's own samples, bit for bit.
        let (s, a) = (cells as usize + 1, cells as usize + 3);
        for (r, row) in self.samples.chunks_exact(s).enumerate() {
            let at = ((r / s + 1) * a + r % s + 1) * a + 1;
            self.apron[at..at + s].copy_from_slice(row);
        }
        gather_materials(source, base, step, cells + 1, &mut self.materials);
        let mut input = LodChunkInput::new(&self.samples, cells, ch.lod)
            .with_base_node(base)
            .with_base_cell_size(1.0)
            .with_apron(&self.apron)
            .with_materials(&self.materials);
        if ch.lod > 0 {
            for f in 0..6u8 {
                if need & (1 << f) == 0 {
                    continue;
                }
                let fine = &self.faces[f as usize];
                input = if finer_faces & (1 << f) != 0 {
                    input.with_finer_face(f, fine)
                } else {
                    input.with_fine_face_samples(f, fine)
                };
                input = input.with_fine_apron(f, &self.fine_aprons[f as usize]);
            }
        }
        input.finer_faces = finer_faces;
        input.finer_edges = finer_edges;
        let options = CubesOptions::DEFAULT.with_iso(source.world.params().iso);
        self.mesher.mesh(&input, &options, out)?;
        Ok(())
    }
}

/// For each chunk of `selection`, in order, its `(finer_faces, finer_edges)`
/// flags for [`VoxelLodMesher::mesh_chunk`]: bit `f` / bit `e` set when the
/// chunk of the selection just outside face `f` / chunk edge `e` is one level
/// finer. [`VoxelLodMesher::mesh_selection`] uses the same flags.
///
/// # Errors
///
/// As [`VoxelLodMesher::mesh_selection`] for the selection itself (LOD above
/// [`VoxelLodParams::MAX_LOD`], too many chunks, a chunk listed twice, the 2:1
/// rule broken).
pub fn voxel_lod_transitions(selection: &[VoxelLodChunk]) -> Result<Vec<(u8, u16)>, WorldError> {
    let leaves = leaves_of(selection)?;
    selection.iter().map(|c| transitions(&leaves, c)).collect()
}

/// The leaf set of a selection, checked.
fn leaves_of(selection: &[VoxelLodChunk]) -> Result<Leaves, WorldError> {
    if selection.len() > VoxelLodParams::MAX_SELECTION_CHUNKS {
        return Err(too_many());
    }
    let mut leaves = Leaves {
        set: HashSet::with_capacity(selection.len()),
        max_lod: 0,
    };
    for ch in selection {
        if ch.lod > VoxelLodParams::MAX_LOD {
            return Err(WorldError::param("lod", ch.lod, "must be at most 16"));
        }
        leaves.max_lod = leaves.max_lod.max(ch.lod);
        if !leaves.set.insert((ch.lod, ch.coord.map(i64::from))) {
            return Err(WorldError::param(
                "selection",
                format!("{ch:?}"),
                "a chunk is listed twice",
            ));
        }
    }
    Ok(leaves)
}

/// The finer faces and edges of `ch` in the selection.
fn transitions(leaves: &Leaves, ch: &VoxelLodChunk) -> Result<(u8, u16), WorldError> {
    let l = ch.lod;
    let c = ch.coord.map(i64::from);
    let broken = || {
        WorldError::param(
            "selection",
            format!("{ch:?}"),
            "breaks the 2:1 rule: a touching chunk is two or more levels finer",
        )
    };
    let mut faces = 0u8;
    let mut edges = 0u16;
    for d in directions() {
        let Some(m) = leaves.lod_at(probe(l, c, d)) else {
            continue;
        };
        if m + 2 <= l {
            return Err(broken());
        }
        if m + 1 != l {
            continue;
        }
        let moved: Vec<usize> = (0..3).filter(|&a| d[a] != 0).collect();
        match moved.as_slice() {
            [a] => faces |= 1 << (2 * a + (d[*a] > 0) as usize),
            [b0, b1] => {
                let axis = 3 - b0 - b1;
                let u = (d[*b0] > 0) as u16;
                let v = (d[*b1] > 0) as u16;
                edges |= 1 << (4 * axis as u16 + u + 2 * v);
            }
            _ => {}
        }
    }
    Ok((faces, edges))
}

/// A world chunk read by [`gather`]: its coordinate, the index runs of the
/// grid it holds on each axis, and its storage when loaded.
type Part<'a> = ([i32; 3], [(usize, usize); 3], Option<&'a VoxelChunk>);

/// Fills `out` with the material ids of the base nodes `origin + (i, j, k) *
/// step` for a grid of `side^3` nodes (x fastest): the world's id where the
/// node's chunk is loaded, 0 elsewhere.
fn gather_materials(
    source: &Source<'_>,
    origin: [i64; 3],
    step: i64,
    side: u32,
    out: &mut Vec<u8>,
) {
    let n = source.n;
    let d = side as usize;
    out.clear();
    out.resize(d * d * d, 0);
    let nn = n as usize;
    let mut last: Option<([i32; 3], Option<&VoxelChunk>)> = None;
    for k in 0..d {
        for j in 0..d {
            for i in 0..d {
                let g = [i, j, k].map(|l| l as i64);
                let g = [0, 1, 2].map(|q| origin[q] + g[q] * step);
                let c = g.map(|v| v.div_euclid(n) as i32);
                let chunk = match last {
                    Some((lc, ch)) if lc == c => ch,
                    _ => {
                        let ch = source.world.chunk(c);
                        last = Some((c, ch));
                        ch
                    }
                };
                let Some(chunk) = chunk else { continue };
                let l = g.map(|v| v.rem_euclid(n) as usize);
                out[(k * d + j) * d + i] = match &chunk.materials {
                    VoxelChunkMaterials::Uniform(m) => *m,
                    VoxelChunkMaterials::Dense(m) => m[(l[2] * nn + l[1]) * nn + l[0]],
                };
            }
        }
    }
}

/// Fills `out` with the values of the base nodes `origin + (i, j, k) * step`
/// for a grid of `dims` nodes (x fastest): the world's value where the node's
/// chunk is loaded, the generator's elsewhere.
fn gather(
    source: &Source<'_>,
    sampler: &DensitySampler,
    origin: [i64; 3],
    step: i64,
    dims: [u32; 3],
    out: &mut Vec<f32>,
) -> Result<(), WorldError> {
    let n = source.n;
    let d = dims.map(|v| v as usize);
    out.clear();
    out.resize(d[0] * d[1] * d[2], 0.0);
    // Per axis: (world chunk, first index, end index) of the runs of nodes in
    // one chunk.
    let runs: [Vec<(i32, usize, usize)>; 3] = std::array::from_fn(|a| {
        let mut v: Vec<(i32, usize, usize)> = Vec::new();
        for i in 0..d[a] {
            let g = origin[a] + i as i64 * step;
            let c = g.div_euclid(n) as i32;
            match v.last_mut() {
                Some(last) if last.0 == c => last.2 = i + 1,
                _ => v.push((c, i, i + 1)),
            }
        }
        v
    });
    let mut parts: Vec<Part<'_>> = Vec::new();
    let mut all_loaded = true;
    for rz in &runs[2] {
        for ry in &runs[1] {
            for rx in &runs[0] {
                let c = [rx.0, ry.0, rz.0];
                let chunk = source.world.chunk(c);
                all_loaded &= chunk.is_some();
                parts.push((c, [(rx.1, rx.2), (ry.1, ry.2), (rz.1, rz.2)], chunk));
            }
        }
    }
    if !all_loaded {
        let o = origin.map(|v| v as f32);
        sampler.fill(o, step as f32, dims, out)?;
    }
    for (c, r, chunk) in parts {
        let Some(chunk) = chunk else { continue };
        if !all_loaded && !source.modified.contains(&c) {
            continue;
        }
        let local = |a: usize, i: usize| (origin[a] + i as i64 * step - c[a] as i64 * n) as usize;
        let nn = n as usize;
        for k in r[2].0..r[2].1 {
            let lz = local(2, k);
            for j in r[1].0..r[1].1 {
                let ly = local(1, j);
                let row = (k * d[1] + j) * d[0];
                match &chunk.density {
                    VoxelChunkData::Uniform(v) => out[row + r[0].0..row + r[0].1].fill(*v),
                    VoxelChunkData::Dense(vals) => {
                        let src = (lz * nn + ly) * nn;
                        for i in r[0].0..r[0].1 {
                            out[row + i] = vals[src + local(0, i)];
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_touch_the_leaf() {
        assert_eq!(probe(1, [0, 0, 0], [-1, 0, 1]), [-1, 0, 2]);
        assert_eq!(probe(0, [3, 3, 3], [1, 1, 1]), [4, 4, 4]);
        assert_eq!(directions().count(), 26);
    }

    #[test]
    fn far_viewer_keeps_coarse_chunks() {
        let p = VoxelLodParams::DEFAULT
            .with_max_lod(2)
            .with_lod_distance(1.0);
        let sel = select_voxel_lods(&p, &[[1.0e6; 3]], [0; 3], [7; 3]).unwrap();
        assert_eq!(sel.len(), 8);
        assert!(sel.iter().all(|c| c.lod == 2));
    }

    #[test]
    fn transitions_name_finer_faces_and_edges() {
        let mut sel = vec![
            VoxelLodChunk::new([0, 0, 0], 1),
            VoxelLodChunk::new([0, 1, 0], 1),
        ];
        for z in 0..2 {
            for y in 0..4 {
                for x in 2..4 {
                    sel.push(VoxelLodChunk::new([x, y, z], 0));
                }
            }
        }
        let flags = voxel_lod_transitions(&sel).unwrap();
        // +x face (face 1) and the z edge at +x, +y (edge 8 + 1 + 2) are finer.
        assert_eq!(flags[0], (1 << 1, 1 << 11));
        // The chunk above sees its +x face finer, and its z edge at +x, -y.
        assert_eq!(flags[1], (1 << 1, 1 << 9));
        assert!(flags[2..].iter().all(|&f| f == (0, 0)));
    }

    #[test]
    fn bad_params_are_rejected() {
        let p = VoxelLodParams::DEFAULT;
        assert!(p.with_max_lod(17).validate().is_err());
        assert!(p.with_lod_distance(f32::NAN).validate().is_err());
        assert!(p.with_chunk_cells(1).validate().is_err());
        assert!(select_voxel_lods(&p, &[[f32::NAN; 3]], [0; 3], [1; 3]).is_err());
        assert!(select_voxel_lods(&p, &[], [1; 3], [0; 3]).is_err());
    }
}
