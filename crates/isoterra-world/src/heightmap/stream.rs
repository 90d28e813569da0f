//! Streaming a heightmap world around viewers: chunk selection, mesh jobs on
//! worker threads, and finished meshes handed back on the caller's thread.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use isoterra_mesh::HeightmapMesh;

use super::select::{ChunkStreamer, Viewer, neighbour_lods};
use super::world::{HeightmapWorld, MeshKey};
use crate::WorldError;

/// What changed for the caller of [`HeightmapStream::update`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum HeightmapEvent {
    /// The mesh to show for `chunk` from now on (replacing any mesh it had:
    /// a new chunk, a new LOD, new stitching to its neighbours, or an edit).
    ChunkReady {
        /// Chunk coordinates `[cx, cz]`.
        chunk: [i32; 2],
        /// Level of detail of the mesh.
        lod: u8,
        /// The finished mesh (shared with the world's mesh cache).
        mesh: Arc<HeightmapMesh>,
    },
    /// `chunk` left the streamed area: stop drawing it. Sent only for chunks
    /// that had been handed out with [`ChunkReady`](Self::ChunkReady).
    ChunkUnloaded {
        /// Chunk coordinates `[cx, cz]`.
        chunk: [i32; 2],
    },
    /// The mesh of `chunk` could not be built. It is not requested again
    /// until its key changes (a new LOD or new neighbour LODs).
    ChunkFailed {
        /// Chunk coordinates `[cx, cz]`.
        chunk: [i32; 2],
        /// Level of detail that was asked for.
        lod: u8,
        /// Why the build failed.
        error: WorldError,
    },
}

impl HeightmapEvent {
    /// The chunk the event is about.
    pub fn chunk(&self) -> [i32; 2] {
        match self {
            HeightmapEvent::ChunkReady { chunk, .. }
            | HeightmapEvent::ChunkUnloaded { chunk }
            | HeightmapEvent::ChunkFailed { chunk, .. } => *chunk,
        }
    }
}

/// Streams the chunks of a [`HeightmapWorld`] around moving viewers.
///
/// Call [`update`](Self::update) once per frame on the thread that owns the
/// world. Each call
///
/// 1. selects chunks again when a viewer moved far enough (through its
///    [`ChunkStreamer`]: LOD rings, the 2:1 rule, unload hysteresis);
/// 2. works out the mesh every loaded chunk needs — its LOD and the LODs of
///    its coarser edge neighbours for seam stitching ([`neighbour_lods`]) —
///    and asks the world for the ones that changed
///    ([`HeightmapWorld::request`]; a neighbour whose stitching changed gets
///    a new mesh too);
/// 3. collects the meshes finished on worker threads
///    ([`HeightmapWorld::poll`]) and hands them back as events.
///
/// It never waits for a mesh: a chunk keeps its previous mesh (the caller
/// keeps drawing it) until the new one arrives. Meshes whose heights an edit
/// changed are rebuilt the same way, and results that went stale on the way
/// (the chunk moved to another LOD, or was edited) are dropped. Events come
/// in a fixed order: unloads first, then ready meshes and failures sorted by
/// chunk.
///
/// ```
/// use isoterra_world::{HeightmapEvent, HeightmapParams, HeightmapStream, HeightmapWorld, Viewer};
/// let params = HeightmapParams::DEFAULT.with_chunk_cells(8).with_view_distance(12.0);
/// let mut world = HeightmapWorld::new(&params)?;
/// let mut stream = HeightmapStream::new();
/// let viewer = Viewer::new([4.0, 0.0, 4.0], 12.0);
/// let mut shown = 0;
/// // Poll once a frame until every wanted chunk is shown (a minute at most).
/// for _ in 0..60_000 {
///     for e in stream.update(&mut world, &[viewer])? {
///         if let HeightmapEvent::ChunkReady { .. } = e {
///             shown += 1;
///         }
///     }
///     if stream.is_settled() {
///         break;
///     }
///     std::thread::sleep(std::time::Duration::from_millis(1));
/// }
/// assert!(stream.is_settled());
/// assert_eq!(shown, stream.loaded().len());
/// # Ok::<(), isoterra_world::WorldError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct HeightmapStream {
    streamer: ChunkStreamer,
    /// The mesh every loaded chunk needs now.
    wanted: BTreeMap<[i32; 2], MeshKey>,
    /// The mesh last handed out for each chunk.
    shown: BTreeMap<[i32; 2], MeshKey>,
    /// Keys whose build failed (not requested again).
    failed: BTreeSet<MeshKey>,
    /// Whether the last update found every wanted mesh built.
    settled: bool,
}

impl HeightmapStream {
    /// A stream with nothing loaded.
    pub fn new() -> Self {
        Self::default()
    }

    /// The loaded chunks and their LODs, sorted.
    pub fn loaded(&self) -> Vec<([i32; 2], u8)> {
        self.streamer.loaded()
    }

    /// The mesh key every loaded chunk needs now, sorted by chunk.
    pub fn wanted_keys(&self) -> Vec<MeshKey> {
        self.wanted.values().copied().collect()
    }

    /// The key of the mesh last handed out for `chunk`.
    pub fn shown_key(&self, chunk: [i32; 2]) -> Option<MeshKey> {
        self.shown.get(&chunk).copied()
    }

    /// True when, at the last [`update`](Self::update), every loaded chunk
    /// had been handed the mesh it needs (or its build had failed): nothing
    /// more arrives until a viewer moves or the world is edited.
    pub fn is_settled(&self) -> bool {
        self.settled
    }

    /// Selects, requests and collects (see the type docs); never blocks on
    /// mesh generation.
    ///
    /// # Errors
    ///
    /// Bad viewers (as [`select_chunks`](crate::select_chunks)); nothing
    /// changes then.
    pub fn update(
        &mut self,
        world: &mut HeightmapWorld,
        viewers: &[Viewer],
    ) -> Result<Vec<HeightmapEvent>, WorldError> {
        let params = *world.params();
        let change = self.streamer.update(&params, viewers)?;
        let mut events = Vec::new();
        if !change.is_empty() {
            for &chunk in &change.unload {
                self.wanted.remove(&chunk);
                if self.shown.remove(&chunk).is_some() {
                    events.push(HeightmapEvent::ChunkUnloaded { chunk });
                }
            }
            world.unload(&change.unload);
            let loaded = self.streamer.loaded();
            let neighbours = neighbour_lods(&loaded);
            for (&(chunk, lod), &n) in loaded.iter().zip(&neighbours) {
                let key = MeshKey::new(chunk, lod).with_neighbours(n);
                self.wanted.insert(chunk, key);
            }
            self.failed.retain(|k| self.wanted.get(&k.chunk) == Some(k));
        }

        let mut ready = Vec::new();
        for r in world.poll() {
            if self.wanted.get(&r.key.chunk) != Some(&r.key) {
                // Stale on arrival (the chunk changed LOD or left): keep the
                // world's cache to the meshes on screen.
                if self.shown.get(&r.key.chunk) != Some(&r.key) {
                    world.forget_mesh(&r.key);
                }
                continue;
            }
            match r.mesh {
                Ok(mesh) => ready.push((r.key, mesh)),
                Err(error) => {
                    self.failed.insert(r.key);
                    events.push(HeightmapEvent::ChunkFailed {
                        chunk: r.key.chunk,
                        lod: r.key.lod,
                        error,
                    });
                }
            }
        }

        // Everything wanted that is not on screen (or whose mesh an edit
        // dropped from the cache) is taken from the cache or requested; a
        // key already pending is not queued twice.
        let mut settled = true;
        for (&chunk, &key) in &self.wanted {
            if self.failed.contains(&key) {
                continue;
            }
            let current = self.shown.get(&chunk) == Some(&key);
            if current && world.has_mesh(&key) {
                continue;
            }
            if let Some(mesh) = world.cached_mesh(&key) {
                if !current && !ready.iter().any(|(k, _)| *k == key) {
                    ready.push((key, mesh));
                }
                continue;
            }
            if let Err(error) = world.request(key) {
                self.failed.insert(key);
                events.push(HeightmapEvent::ChunkFailed {
                    chunk,
                    lod: key.lod,
                    error,
                });
            } else {
                settled = false;
            }
        }
        self.settled = settled;

        for (key, mesh) in ready {
            if let Some(old) = self.shown.insert(key.chunk, key)
                && old != key
            {
                world.forget_mesh(&old);
            }
            events.push(HeightmapEvent::ChunkReady {
                chunk: key.chunk,
                lod: key.lod,
                mesh,
            });
        }
        let first_ready = events
            .iter()
            .position(|e| !matches!(e, HeightmapEvent::ChunkUnloaded { .. }))
            .unwrap_or(events.len());
        events[first_ready..].sort_by_key(|e| e.chunk());
        Ok(events)
    }
}
