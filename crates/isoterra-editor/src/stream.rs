//! Streaming for the endless kinds: one [`StreamScheduler`] per open world,
//! whose viewers are the cameras of every connected client, so two windows
//! share one stream. Chunks are generated, meshed and encoded as frames on
//! the scheduler's worker threads; the world thread only polls the finished
//! frames, hands edited chunks to the source and invalidates the chunks an
//! edit changed.
//!
//! Voxel stream chunk `c` is world chunk `c` (`N` cells per axis); at LOD `k`
//! it is sampled every `2^k` nodes (`N >> k` cells per axis) and stitched to
//! finer neighbours with transition cells, so a frame always covers exactly
//! its own chunk. Heightmap stream chunk `[cx, cz, 0]` is heightmap chunk
//! `[cx, cz]`, stitched toward coarser neighbours.

use std::collections::{BTreeMap, HashSet};

use axum::body::Bytes;
use isoterra::world::{
    CancelFlag, ChunkCoord, ChunkRequest, ChunkSource, HeightmapSource, HeightmapWorld,
    StreamConfig, StreamEvent, StreamScheduler, StreamViewer, VoxelChunkMesh, VoxelSource,
    VoxelWorld, WorldError,
};
use serde_json::json;

/// Most chunks a voxel camera sees in each direction (its view distance is
/// capped at this many chunk sizes). Every chunk within reach is held, so
/// the count grows with the cube of this: at 12 a camera holds about 8,700
/// chunks of 32 cells (about 4,000 with a mesh), and one stream update as
/// the camera moves stays near a millisecond.
pub(crate) const MAX_VIEW_CHUNKS: f32 = 12.0;
/// Voxel LOD ring radii, in chunk sizes: LOD 0 closer than the first, LOD 1
/// up to the second, and so on (the kind layer's, so a `--lod-rings` export
/// gives what the editor shows).
pub(crate) const LOD_RINGS_CHUNKS: [f32; 3] = isoterra::kind::VOXEL_RINGS_CHUNKS;
/// Fastest camera speed used for prefetch, in chunk sizes per second.
pub(crate) const MAX_SPEED_CHUNKS: f32 = 8.0;
/// A camera step faster than this many chunk sizes per second is a jump,
/// not a flight (no prefetch).
pub(crate) const TELEPORT_SPEED_CHUNKS: f32 = 64.0;
use std::time::Duration;

use crate::kinds::{Doc, Meshing};
use crate::state::{Client, Out};

/// Events taken from the scheduler per poll.
const POLL_BATCH: usize = 256;

/// A voxel source whose output is the encoded frame of the chunk's mesh.
pub(crate) struct VoxelFrames {
    voxels: VoxelSource,
}

impl ChunkSource for VoxelFrames {
    type Output = Bytes;

    fn build(&self, request: &ChunkRequest, cancel: &CancelFlag) -> Option<Bytes> {
        let mesh = self.voxels.build(request, cancel)?;
        Some(Bytes::from(voxel_mesh_frame(
            request.coord,
            request.lod,
            &mesh,
        )))
    }

    fn seam_request(&self, request: ChunkRequest) -> ChunkRequest {
        self.voxels.seam_request(request)
    }
}

/// A heightmap source whose output is the encoded frame of the chunk's mesh
/// (coloured over the world's height range).
pub(crate) struct HeightFrames {
    heights: HeightmapSource,
    range: [f32; 2],
}

impl ChunkSource for HeightFrames {
    type Output = Bytes;

    fn build(&self, request: &ChunkRequest, cancel: &CancelFlag) -> Option<Bytes> {
        let chunk = self.heights.build(request, cancel)?;
        let max = self.heights.params().max_lod();
        Some(Bytes::from(crate::kinds::heightmap_frame(
            self.range,
            [request.coord[0], request.coord[1]],
            request.lod.min(max),
            &chunk.mesh,
        )))
    }

    fn seam_request(&self, request: ChunkRequest) -> ChunkRequest {
        self.heights.seam_request(request)
    }
}

/// The frame of a streamed voxel chunk.
pub(crate) fn voxel_mesh_frame(coord: ChunkCoord, lod: u8, mesh: &VoxelChunkMesh) -> Vec<u8> {
    crate::kinds::voxel_frame(
        coord,
        lod,
        &mesh.positions,
        &mesh.normals,
        &mesh.materials,
        &mesh.indices,
    )
}

/// What one poll of a stream gives the clients.
#[derive(Debug, Default)]
pub(crate) struct Polled {
    /// Frames to send, in the order they were built.
    pub frames: Vec<Bytes>,
    /// Chunks to unload (frame coordinates).
    pub unloads: Vec<ChunkCoord>,
}

/// The shared stream of an open endless world.
pub(crate) struct Stream<S: ChunkSource<Output = Bytes>> {
    sched: StreamScheduler<S>,
    /// The latest frame of every shown chunk (for clients that start
    /// watching later).
    frames: BTreeMap<ChunkCoord, Bytes>,
    /// Stream coordinates to frame coordinates (heightmaps send `[cx, 0, cz]`).
    xz: bool,
}

impl<S: ChunkSource<Output = Bytes>> std::fmt::Debug for Stream<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("stats", &self.sched.stats())
            .finish_non_exhaustive()
    }
}

/// The stream of a voxel world.
pub(crate) type VoxelStream = Stream<VoxelFrames>;
/// The stream of a heightmap world.
pub(crate) type HeightStream = Stream<HeightFrames>;

impl<S: ChunkSource<Output = Bytes>> Stream<S> {
    /// New viewers: chunks to build and to drop are worked out now, without
    /// waiting for any build.
    pub fn set_viewers(&mut self, viewers: &[StreamViewer]) -> Result<(), WorldError> {
        self.sched.update(viewers)
    }

    /// Takes the finished frames and the unloads, without blocking.
    pub fn poll(&mut self) -> Polled {
        let mut out = Polled::default();
        for e in self.sched.poll(POLL_BATCH) {
            match e {
                StreamEvent::ChunkReady { coord, output, .. } => {
                    self.frames.insert(coord, output.clone());
                    out.frames.push(output);
                }
                StreamEvent::ChunkUnloaded { coord, .. } => {
                    self.frames.remove(&coord);
                    out.unloads.push(if self.xz {
                        [coord[0], 0, coord[1]]
                    } else {
                        coord
                    });
                }
                // A chunk that cannot be built keeps what was shown.
                _ => {}
            }
        }
        out
    }

    /// True while builds run or finished frames wait to be polled.
    pub fn busy(&self) -> bool {
        !self.sched.is_settled()
    }

    /// Whether finished frames wait to be polled.
    pub fn has_events(&self) -> bool {
        self.sched.stats().queued_events > 0
    }

    /// The latest frame of every shown chunk.
    pub fn frames(&self) -> impl Iterator<Item = &Bytes> {
        self.frames.values()
    }

    /// Number of shown chunks.
    pub fn shown(&self) -> usize {
        self.frames.len()
    }

    /// Number of chunks the stream holds (wanted by a viewer, or kept inside
    /// the hysteresis band): what a client shows once streaming settles.
    pub fn held(&self) -> usize {
        self.sched.stats().held
    }

    /// World size of a stream chunk's side.
    pub fn chunk_size(&self) -> f32 {
        self.sched.config().chunk_size
    }
}

impl Stream<VoxelFrames> {
    /// A stream over `world`'s generator and its modified chunks, with one
    /// worker per core.
    pub fn voxel(world: &VoxelWorld) -> Result<Self, WorldError> {
        let voxels = VoxelSource::from_world(world)?;
        let n = world.chunk_cells();
        let config = voxels
            .stream_config()
            .with_unload_hysteresis(n as f32 * 0.5)
            .with_max_in_flight(32);
        Ok(Stream {
            sched: StreamScheduler::new(VoxelFrames { voxels }, config)?,
            frames: BTreeMap::new(),
            xz: false,
        })
    }

    /// The viewer of a camera moving at `velocity` (view distance capped,
    /// LOD rings).
    pub fn viewer(
        &self,
        id: u64,
        position: [f32; 3],
        forward: Option<[f32; 3]>,
        velocity: [f32; 3],
        distance: f32,
    ) -> StreamViewer {
        let cfg: &StreamConfig = self.sched.config();
        let n = cfg.chunk_size;
        // Within the scheduler's 3D reach, hysteresis included.
        let reach = StreamConfig::MAX_RADIUS_3D * n - cfg.unload_hysteresis - 1.0;
        let distance = distance.min(MAX_VIEW_CHUNKS * n).min(reach).max(1.0);
        StreamViewer::new(position, distance)
            .with_id(id)
            .with_forward(forward.unwrap_or([0.0; 3]))
            .with_velocity(velocity)
            .with_lod_distances(LOD_RINGS_CHUNKS.iter().map(|r| r * n).collect())
    }

    /// After an edit: the chunks of `world` in `dirty` (its dirty chunks,
    /// which hold every chunk owning a changed node) are handed to the
    /// source, and every streamed chunk reading one of them is rebuilt
    /// before anything else. Returns how many streamed chunks are rebuilt.
    pub fn edited(
        &mut self,
        world: &VoxelWorld,
        dirty: &HashSet<ChunkCoord>,
    ) -> Result<usize, WorldError> {
        self.sched
            .source()
            .voxels
            .update_from_world(world, dirty.iter().copied())?;
        Ok(self
            .sched
            .invalidate_where(|src, c, lod| src.voxels.reads_dirty(c, lod, dirty)))
    }
}

impl Stream<HeightFrames> {
    /// A stream over `world`'s generator and its edit layer, with one worker
    /// per core; frames are coloured over `range`.
    pub fn heightmap(world: &HeightmapWorld, range: [f32; 2]) -> Result<Self, WorldError> {
        let heights = HeightmapSource::from_world(world)?.with_colliders(false);
        let config = heights.stream_config().with_max_in_flight(32);
        Ok(Stream {
            sched: StreamScheduler::new(HeightFrames { heights, range }, config)?,
            frames: BTreeMap::new(),
            xz: true,
        })
    }

    /// The viewer of a camera moving at `velocity`: the world's LOD rings (LOD `k` from
    /// `lod_distance * 2^(k-1)`), its view distance capped at the
    /// scheduler's reach.
    pub fn viewer(
        &self,
        id: u64,
        position: [f32; 3],
        forward: Option<[f32; 3]>,
        velocity: [f32; 3],
        distance: f32,
    ) -> StreamViewer {
        let cfg: &StreamConfig = self.sched.config();
        let p = self.sched.source().heights.params();
        let reach = StreamConfig::MAX_RADIUS_2D * cfg.chunk_size - cfg.unload_hysteresis - 1.0;
        let distance = distance.min(reach).max(1.0);
        let rings = p.ring_distances();
        StreamViewer::new(position, distance)
            .with_id(id)
            .with_forward(forward.unwrap_or([0.0; 3]))
            .with_velocity(velocity)
            .with_lod_distances(rings)
    }

    /// After an edit: the chunks `dirty` (the world's dirty chunks) are
    /// handed to the source and rebuilt before anything else. Returns how
    /// many streamed chunks are rebuilt.
    pub fn edited(
        &mut self,
        world: &HeightmapWorld,
        dirty: &[[i32; 2]],
    ) -> Result<usize, WorldError> {
        self.sched
            .source()
            .heights
            .update_from_world(world, dirty.iter().copied())?;
        Ok(self.sched.invalidate(dirty.iter().map(|c| [c[0], c[1], 0])))
    }
}

/// What an endless kind adds to its stream's meshing, written in the
/// kind's file: how the world's edits reach the stream.
pub(crate) trait StreamKind: ChunkSource<Output = Bytes> + Sized {
    /// Starts the stream of the world now open (`None`, with the reason
    /// printed, when it cannot stream).
    fn start(doc: &mut Doc) -> Option<Stream<Self>>;

    /// Whether the world has edits the stream has not seen.
    fn dirty(doc: &Doc) -> bool;

    /// Hands the world's edits to the stream (the chunks they change are
    /// rebuilt first) and trims what the world holds far from `clients`'
    /// cameras.
    fn sync(doc: &mut Doc, stream: &mut Stream<Self>, clients: &BTreeMap<u64, Client>);

    /// The viewer of a camera moving at `velocity`.
    fn viewer(
        stream: &Stream<Self>,
        id: u64,
        position: [f32; 3],
        forward: Option<[f32; 3]>,
        velocity: [f32; 3],
        distance: f32,
    ) -> StreamViewer;

    /// The view distance of a camera that names none.
    fn view_distance(_doc: &Doc) -> f32 {
        128.0
    }
}

/// An endless kind's meshing: the shared stream every client's camera
/// drives. Nothing is meshed on the world thread: edits go to the stream's
/// source and the streamed chunks they change are rebuilt first, on the
/// stream's threads; the frames are polled and sent.
pub(crate) struct StreamMeshing<S: StreamKind> {
    stream: Option<Stream<S>>,
}

impl<S: StreamKind> StreamMeshing<S> {
    pub(crate) fn start(doc: &mut Doc) -> Self {
        StreamMeshing {
            stream: S::start(doc),
        }
    }
}

impl<S: StreamKind + 'static> Meshing for StreamMeshing<S>
where
    Stream<S>: Send,
{
    fn has_work(&self, doc: &Doc, viewers_changed: bool) -> bool {
        S::dirty(doc) || viewers_changed || self.stream.as_ref().is_some_and(Stream::has_events)
    }

    fn busy(&self) -> bool {
        self.stream.as_ref().is_some_and(Stream::busy)
    }

    fn tick(
        &mut self,
        doc: &mut Doc,
        clients: &mut BTreeMap<u64, Client>,
        _budget: Duration,
        viewers: Option<Vec<StreamViewer>>,
    ) {
        let Some(stream) = self.stream.as_mut() else {
            return;
        };
        S::sync(doc, stream, clients);
        if let Some(viewers) = viewers
            && let Err(e) = stream.set_viewers(&viewers)
        {
            eprintln!("error: bad {} viewers: {e}", doc.kind());
        }
        let polled = stream.poll();
        broadcast(clients, stream, polled);
    }

    fn wanted(&self, _doc: &Doc) -> Option<usize> {
        self.stream.as_ref().map(Stream::held)
    }

    fn stream_chunk(&self) -> Option<f32> {
        self.stream.as_ref().map(Stream::chunk_size)
    }

    fn viewer(
        &self,
        id: u64,
        position: [f32; 3],
        forward: Option<[f32; 3]>,
        velocity: [f32; 3],
        distance: f32,
    ) -> Option<StreamViewer> {
        let s = self.stream.as_ref()?;
        Some(S::viewer(s, id, position, forward, velocity, distance))
    }

    fn view_distance(&self, doc: &Doc) -> f32 {
        S::view_distance(doc)
    }
}

/// Sends what a stream poll gave to every client watching it; a client
/// with its first camera gets every chunk shown so far instead.
pub(crate) fn broadcast<S: isoterra::world::ChunkSource<Output = Bytes>>(
    clients: &mut BTreeMap<u64, Client>,
    stream: &Stream<S>,
    polled: Polled,
) {
    let unload = (!polled.unloads.is_empty())
        .then(|| json!({"type": "unload", "chunks": polled.unloads}).to_string());
    for c in clients.values_mut() {
        if c.viewer.is_none() {
            continue;
        }
        if c.watching {
            for f in &polled.frames {
                c.send(Out::Binary(f.clone()));
            }
            if let Some(u) = &unload {
                c.send(Out::Text(u.clone()));
            }
        } else {
            c.watching = true;
            for f in stream.frames() {
                c.send(Out::Binary(f.clone()));
            }
        }
        c.chunks = stream.shown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use isoterra::world::VoxelParams;

    fn settle<S: ChunkSource<Output = Bytes>>(s: &mut Stream<S>) -> Polled {
        let mut all = Polled::default();
        for _ in 0..1_000_000 {
            let p = s.poll();
            all.frames.extend(p.frames);
            all.unloads.extend(p.unloads);
            if !s.busy() {
                return all;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        panic!("the stream did not settle");
    }

    #[test]
    fn viewers_are_capped_and_get_lod_rings() {
        let world = VoxelWorld::new(&VoxelParams::DEFAULT.with_chunk_cells(16)).unwrap();
        let s = VoxelStream::voxel(&world).unwrap();
        let v = s.viewer(3, [1.0, 2.0, 3.0], None, [4.0, 0.0, 0.0], 4000.0);
        assert_eq!(v.id, 3);
        assert_eq!(v.velocity, [4.0, 0.0, 0.0]);
        assert_eq!(v.view_distance, MAX_VIEW_CHUNKS * 16.0);
        assert_eq!(v.lod_distances, vec![24.0, 48.0, 72.0]);
    }

    #[test]
    fn edits_rebuild_the_chunks_that_read_them() {
        let mut world = VoxelWorld::new(&VoxelParams::DEFAULT.with_chunk_cells(16)).unwrap();
        let mut s = VoxelStream::voxel(&world).unwrap();
        let v = s.viewer(1, [8.0, 8.0, 8.0], None, [0.0; 3], 40.0);
        s.set_viewers(&[v]).unwrap();
        let first = settle(&mut s);
        assert_eq!(first.frames.len(), s.shown());
        assert!(first.unloads.is_empty());
        use isoterra::world::{VoxelBrush, VoxelTool};
        let dig = VoxelBrush::new(VoxelTool::Dig, [8.0, 8.0, 8.0], 3.0);
        if world.apply_brush(&dig).unwrap().nodes.is_empty() {
            let add = VoxelBrush::new(VoxelTool::Add, [8.0, 8.0, 8.0], 3.0);
            assert!(!world.apply_brush(&add).unwrap().nodes.is_empty());
        }
        let dirty: HashSet<ChunkCoord> = world.take_dirty().into_iter().collect();
        assert_eq!(world.dirty_count(), 0);
        let n = s.edited(&world, &dirty).unwrap();
        assert!(n >= 1);
        let again = settle(&mut s);
        assert_eq!(again.frames.len(), n);
        // Everyone leaves: every chunk is unloaded.
        s.set_viewers(&[]).unwrap();
        let gone = settle(&mut s);
        assert_eq!(gone.unloads.len(), first.frames.len());
        assert_eq!(s.shown(), 0);
    }
}
