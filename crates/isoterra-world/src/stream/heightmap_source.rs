//! A [`ChunkSource`] for heightmap worlds: chunk meshes (and heightfield
//! colliders) at mixed LOD from the generator plus an edit layer snapshot.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use isoterra_mesh::{HeightfieldCollider, HeightmapMesh, HeightmapMesher};

use super::select::{ChunkCoord, Dim, StreamConfig};
use super::source::{CancelFlag, ChunkRequest, ChunkSource};
use crate::{HeightmapParams, HeightmapWorld, MeshKey, WorldError};

/// One streamed heightmap chunk.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct HeightmapChunk {
    /// The render mesh (with skirts when the parameters ask for them).
    pub mesh: HeightmapMesh,
    /// The chunk's heightfield collider at the same LOD, when the source
    /// builds colliders.
    pub collider: Option<HeightfieldCollider>,
}

/// Builds heightmap chunks for a [`StreamScheduler`](crate::StreamScheduler):
/// the generator of a [`HeightmapParams`] plus a snapshot of the edit layer,
/// meshed with the world's chunk mesher.
///
/// Stream chunk `[cx, cz, 0]` is heightmap chunk `[cx, cz]` on the x/z
/// plane ([`Dim::Xz`], `chunk_size = chunk_cells * cell_size`; use
/// [`stream_config`](Self::stream_config)); LODs above the world's
/// `lod_count - 1` are built at that LOD. Streamed chunks are stitched: a
/// chunk whose face neighbour ([`ChunkRequest::neighbour_lods`], in the
/// order −x, +x, −z, +z) is one level coarser snaps its border vertices on
/// that side onto the coarse edge, so neighbours share their border vertices
/// exactly. A skirt ([`HeightmapOptions::skirt_depth`](isoterra_mesh::HeightmapOptions::skirt_depth))
/// is still added when the parameters ask for one. The mesh is the one
/// [`HeightmapWorld::build_mesh`] gives for [`MeshKey::new`]`(chunk, lod)`
/// with those neighbour LODs ([`MeshKey::with_neighbours`]).
///
/// The edit layer can change while jobs run ([`set_chunks`](Self::set_chunks),
/// [`update_from_world`](Self::update_from_world)): each build reads one
/// snapshot of it, so a build that started before the change sees the old
/// deltas; invalidate the chunks whose meshes read a changed node
/// ([`StreamScheduler::invalidate`](crate::StreamScheduler::invalidate) with
/// the world's [`take_dirty`](HeightmapWorld::take_dirty) or
/// [`chunks_reading`](HeightmapWorld::chunks_reading)) to have them built
/// again.
pub struct HeightmapSource {
    world: HeightmapWorld,
    colliders: bool,
    edits: RwLock<HeightmapEdits>,
    scratch: Mutex<Vec<Scratch>>,
}

/// Edited heightmap chunks (delta grids of `chunk_cells²` values) by chunk
/// `[cx, cz]`, shared between the application and the build threads.
pub type HeightmapEdits = Arc<HashMap<[i32; 2], Arc<Vec<f32>>>>;

/// One change of the edit layer: a chunk and its new deltas (`None`: none).
type EditChange = ([i32; 2], Option<Arc<Vec<f32>>>);

/// The buffers of one build, and a world holding the edit chunks that the
/// last build read (the 3 x 3 chunks around it), brought up to date from
/// the snapshot a build reads before each build.
struct Scratch {
    mesher: HeightmapMesher,
    heights: Vec<f32>,
    world: HeightmapWorld,
    held: HashMap<[i32; 2], Arc<Vec<f32>>>,
}

impl std::fmt::Debug for HeightmapSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeightmapSource")
            .field("world", &self.world)
            .field("colliders", &self.colliders)
            .finish_non_exhaustive()
    }
}

impl HeightmapSource {
    /// A source of generated chunks (no edits), building colliders too.
    ///
    /// # Errors
    ///
    /// As [`HeightmapParams::validate`].
    pub fn new(params: &HeightmapParams) -> Result<Self, WorldError> {
        Ok(HeightmapSource {
            world: HeightmapWorld::new(params)?,
            colliders: true,
            edits: RwLock::new(Arc::new(HashMap::new())),
            scratch: Mutex::new(Vec::new()),
        })
    }

    /// A source whose edit layer holds `edits` (delta grids of
    /// `chunk_cells²` values by chunk, as [`HeightmapWorld::edit_layer`]
    /// gives them and a world file stores them).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new) and [`HeightmapWorld::set_edit_chunk`].
    pub fn with_edits(
        params: &HeightmapParams,
        edits: impl IntoIterator<Item = ([i32; 2], Vec<f32>)>,
    ) -> Result<Self, WorldError> {
        let source = Self::new(params)?;
        source.set_chunks(
            edits
                .into_iter()
                .map(|(chunk, deltas)| (chunk, Some(Arc::new(deltas)))),
        )?;
        Ok(source)
    }

    /// A snapshot of the edit layer.
    pub fn edits(&self) -> HeightmapEdits {
        Arc::clone(&self.edits.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Replaces chunks of the edit layer: `Some(deltas)` sets a chunk's delta
    /// grid (`chunk_cells²` values, row-major, x fastest), `None` (or an
    /// all-zero grid) removes it. Only the listed chunks change; the others
    /// are shared with the previous snapshot. Builds already running keep
    /// the snapshot they started with. Returns how many chunks were listed.
    ///
    /// # Errors
    ///
    /// A grid of the wrong length or with a non-finite value, or a chunk too
    /// far from the origin; nothing changes then.
    pub fn set_chunks(
        &self,
        chunks: impl IntoIterator<Item = ([i32; 2], Option<Arc<Vec<f32>>>)>,
    ) -> Result<usize, WorldError> {
        let chunks: Vec<EditChange> = chunks.into_iter().collect();
        let n = self.world.params().chunk_cells as usize;
        for (chunk, deltas) in &chunks {
            check_chunk(self.world.params(), *chunk)?;
            if let Some(d) = deltas {
                if d.len() != n * n {
                    return Err(WorldError::mismatch("edit chunk length", n * n, d.len()));
                }
                if d.iter().any(|v| !v.is_finite()) {
                    return Err(WorldError::param(
                        "deltas",
                        "non-finite value",
                        "every delta must be finite",
                    ));
                }
            }
        }
        let mut guard = self.edits.write().unwrap_or_else(|e| e.into_inner());
        let mut next: HashMap<[i32; 2], Arc<Vec<f32>>> = (**guard).clone();
        for (chunk, deltas) in &chunks {
            match deltas {
                Some(d) if d.iter().any(|v| v.to_bits() != 0) => {
                    next.insert(*chunk, Arc::clone(d));
                }
                _ => {
                    next.remove(chunk);
                }
            }
        }
        *guard = Arc::new(next);
        Ok(chunks.len())
    }

    /// Copies the edit chunks `chunks` of `world` (a world of the same
    /// parameters, usually the one being edited) into the source; chunks
    /// the world has no edits in are removed. Pass the chunks an edit
    /// changed, for example the world's [`take_dirty`](HeightmapWorld::take_dirty).
    /// Returns how many chunks were listed.
    ///
    /// # Errors
    ///
    /// [`WorldError::Mismatch`] when the world's chunk size differs; as
    /// [`set_chunks`](Self::set_chunks).
    pub fn update_from_world(
        &self,
        world: &HeightmapWorld,
        chunks: impl IntoIterator<Item = [i32; 2]>,
    ) -> Result<usize, WorldError> {
        let n = self.world.params().chunk_cells;
        if world.params().chunk_cells != n {
            return Err(WorldError::mismatch(
                "chunk_cells",
                n,
                world.params().chunk_cells,
            ));
        }
        let mut changes: Vec<EditChange> = chunks
            .into_iter()
            .map(|c| (c, world.edit_chunk(c).map(|d| Arc::new(d.to_vec()))))
            .collect();
        changes.sort_unstable_by_key(|(c, _)| *c);
        changes.dedup_by_key(|(c, _)| *c);
        self.set_chunks(changes)
    }

    /// A source over a snapshot of `world`'s parameters and edit layer.
    ///
    /// # Errors
    ///
    /// As [`with_edits`](Self::with_edits).
    pub fn from_world(world: &HeightmapWorld) -> Result<Self, WorldError> {
        Self::with_edits(world.params(), world.edit_layer())
    }

    /// Turns collider building on or off (on by default).
    pub fn with_colliders(mut self, colliders: bool) -> Self {
        self.colliders = colliders;
        self
    }

    /// The parameters.
    pub fn params(&self) -> &HeightmapParams {
        self.world.params()
    }

    /// The streaming configuration matching this source's chunk grid:
    /// [`Dim::Xz`], the chunk's world size, `max_lod = lod_count - 1` and
    /// the parameters' unload hysteresis; other fields default.
    pub fn stream_config(&self) -> StreamConfig {
        let p = self.world.params();
        StreamConfig::DEFAULT
            .with_dim(Dim::Xz)
            .with_chunk_size(p.chunk_world_size())
            .with_max_lod(p.max_lod().min(StreamConfig::MAX_LOD))
            .with_unload_hysteresis(p.unload_hysteresis)
    }

    /// Builds chunk `coord` at `lod` on the calling thread, not stitched to
    /// any neighbour; `None` when the chunk is out of the world's range.
    pub fn build_chunk(&self, coord: ChunkCoord, lod: u8) -> Option<HeightmapChunk> {
        self.build_request(&ChunkRequest::new(coord, lod))
    }

    /// The mesh key of a request: the LOD capped at the world's levels, and
    /// the coarser face neighbours to stitch to.
    fn key(&self, request: &ChunkRequest) -> MeshKey {
        let max = self.world.params().max_lod();
        let lod = request.lod.min(max);
        let mut neighbours = [lod; 4];
        for (k, nb) in neighbours.iter_mut().enumerate() {
            if request.neighbour_lods[k].map(|n| n.min(max)) == Some(lod + 1) {
                *nb = lod + 1;
            }
        }
        MeshKey::new([request.coord[0], request.coord[1]], lod).with_neighbours(neighbours)
    }

    /// Builds the chunk of `request` on the calling thread, stitched toward
    /// its coarser face neighbours; `None` when the chunk is out of the
    /// world's range.
    pub fn build_request(&self, request: &ChunkRequest) -> Option<HeightmapChunk> {
        let key = self.key(request);
        let chunk = key.chunk;
        let popped = self.scratch.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut s = match popped {
            Some(s) => s,
            None => Scratch {
                mesher: HeightmapMesher::new(),
                heights: Vec::new(),
                world: HeightmapWorld::new(self.world.params()).ok()?,
                held: HashMap::new(),
            },
        };
        // The edit chunks a mesh of `chunk` reads, as the snapshot has them.
        let edits = self.edits();
        for dz in -1..=1 {
            for dx in -1..=1 {
                let c = [chunk[0].wrapping_add(dx), chunk[1].wrapping_add(dz)];
                let want = edits.get(&c);
                let have = s.held.get(&c);
                let same = match (want, have) {
                    (Some(w), Some(h)) => Arc::ptr_eq(w, h),
                    (None, None) => true,
                    _ => false,
                };
                if same || check_chunk(self.world.params(), c).is_err() {
                    continue;
                }
                let n = self.world.params().chunk_cells as usize;
                let deltas = want.map_or_else(|| vec![0.0; n * n], |w| w.to_vec());
                if s.world.set_edit_chunk(c, deltas).is_err() {
                    return None;
                }
                match want {
                    Some(w) => s.held.insert(c, Arc::clone(w)),
                    None => s.held.remove(&c),
                };
            }
        }
        if s.world.dirty_count() > 0 {
            s.world.take_dirty();
        }
        let mut mesh = HeightmapMesh::default();
        let built = s
            .world
            .build_mesh_into(&key, &mut s.mesher, &mut s.heights, &mut mesh);
        // The collider reads the heights the mesh just read.
        let collider = match (built.is_ok(), self.colliders) {
            (true, true) => s
                .world
                .collider_from_heights(chunk, key.lod, &s.heights)
                .ok(),
            _ => None,
        };
        self.scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(s);
        built.ok()?;
        if self.colliders && collider.is_none() {
            return None;
        }
        Some(HeightmapChunk { mesh, collider })
    }
}

/// Checks that an edit chunk lies within the world's node range.
fn check_chunk(params: &HeightmapParams, chunk: [i32; 2]) -> Result<(), WorldError> {
    let n = i64::from(params.chunk_cells);
    if chunk
        .iter()
        .any(|&c| (i64::from(c) * n).abs() > crate::MAX_NODE_COORD - 2 * n)
    {
        return Err(WorldError::param(
            "chunk",
            format!("{chunk:?}"),
            "is too far from the origin (nodes must stay within 2^30)",
        ));
    }
    Ok(())
}

impl ChunkSource for HeightmapSource {
    type Output = HeightmapChunk;

    fn build(&self, request: &ChunkRequest, cancel: &CancelFlag) -> Option<HeightmapChunk> {
        if cancel.is_cancelled() {
            return None;
        }
        self.build_request(request)
    }

    /// Keeps the face neighbours one level coarser (the ones stitched to).
    fn seam_request(&self, request: ChunkRequest) -> ChunkRequest {
        let key = self.key(&request);
        let mut faces = [None; 6];
        for (slot, &nb) in faces.iter_mut().zip(&key.neighbours) {
            if nb != key.lod {
                *slot = Some(nb);
            }
        }
        ChunkRequest::new(request.coord, request.lod).with_neighbour_lods(faces)
    }
}
