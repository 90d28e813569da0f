//! A [`ChunkSource`] for heightmap worlds: chunk meshes (and heightfield
//! colliders) at mixed LOD from the generator plus an edit layer snapshot.

use std::sync::Mutex;

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
pub struct HeightmapSource {
    world: HeightmapWorld,
    colliders: bool,
    scratch: Mutex<Vec<(HeightmapMesher, Vec<f32>)>>,
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
        let mut source = Self::new(params)?;
        for (chunk, deltas) in edits {
            source.world.set_edit_chunk(chunk, deltas)?;
        }
        Ok(source)
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
        let (mut mesher, mut heights) = self
            .scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_default();
        let mut mesh = HeightmapMesh::default();
        let built = self
            .world
            .build_mesh_into(&key, &mut mesher, &mut heights, &mut mesh);
        self.scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((mesher, heights));
        built.ok()?;
        let collider = if self.colliders {
            Some(self.world.collider(chunk, key.lod).ok()?)
        } else {
            None
        };
        Some(HeightmapChunk { mesh, collider })
    }
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
