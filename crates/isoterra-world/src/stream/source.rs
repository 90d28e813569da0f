//! What the scheduler runs and hands out: the [`ChunkSource`] trait, its
//! cancellation flag, slot ids and stream events.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::select::ChunkCoord;

/// A cooperative cancellation flag shared by the scheduler and one build
/// job. Sources should check [`is_cancelled`](Self::is_cancelled) between
/// expensive steps and return `None` once it is set.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    /// A flag that is not set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the flag (the job's result will be dropped anyway).
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// True once [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// One build asked of a [`ChunkSource`]: the chunk, its level of detail and
/// the LODs of the chunks around it, as the scheduler holds them.
///
/// Faces are numbered `2 * axis + side` over the axes of the chunk
/// coordinate (`side` 1 on the plus side): in 2D entries `0..4` are the
/// `-c[0]`, `+c[0]`, `-c[1]`, `+c[1]` neighbours and entries `4..6` are
/// `None`. Chunk edges (3D only) are numbered `4 * axis + u + 2 * v`, where
/// `axis` is the edge's direction and `u`, `v` its sides along the other two
/// axes in increasing order (as [`isoterra_mesh::LodChunkInput`] numbers
/// them). `None` means no chunk is held there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ChunkRequest {
    /// The chunk.
    pub coord: ChunkCoord,
    /// Its level of detail.
    pub lod: u8,
    /// The LODs of its face neighbours.
    pub neighbour_lods: [Option<u8>; 6],
    /// The LODs of the chunks touching it along one chunk edge only (3D).
    pub edge_lods: [Option<u8>; 12],
}

impl ChunkRequest {
    /// A request with no neighbour held (nothing to stitch to).
    pub const fn new(coord: ChunkCoord, lod: u8) -> Self {
        ChunkRequest {
            coord,
            lod,
            neighbour_lods: [None; 6],
            edge_lods: [None; 12],
        }
    }

    /// Sets [`neighbour_lods`](Self::neighbour_lods).
    pub const fn with_neighbour_lods(mut self, neighbour_lods: [Option<u8>; 6]) -> Self {
        self.neighbour_lods = neighbour_lods;
        self
    }

    /// Sets [`edge_lods`](Self::edge_lods).
    pub const fn with_edge_lods(mut self, edge_lods: [Option<u8>; 12]) -> Self {
        self.edge_lods = edge_lods;
        self
    }
}

/// What builds a chunk: generates its data and meshes it (and its
/// colliders) on a worker thread.
///
/// `build` must be a pure function of the request and the source's own
/// state, so that the same chunk gives the same bytes whatever thread builds
/// it and in whatever order. A source whose data can change while jobs run
/// (edited chunks) should have each build read one snapshot of it; after a
/// change, [`StreamScheduler::invalidate`](crate::StreamScheduler::invalidate)
/// the chunks that read the changed data. Return `None` when `cancel` is
/// set (the result would be dropped) or when the chunk cannot be built (the
/// scheduler reports [`StreamEvent::ChunkFailed`] and does not retry that
/// request while it stays the same). A panic in `build` counts as a failure.
pub trait ChunkSource: Send + Sync + 'static {
    /// What one built chunk is (a mesh, colliders, a GPU-ready buffer…).
    type Output: Send + 'static;

    /// Builds the chunk of `request` (its coordinate at its level of detail,
    /// stitched to its neighbours where the source can).
    fn build(&self, request: &ChunkRequest, cancel: &CancelFlag) -> Option<Self::Output>;

    /// The part of `request` that the output depends on: the scheduler
    /// builds this request and rebuilds a shown chunk only when it changes
    /// (a neighbour's LOD changed in a way that moves the chunk's seams).
    /// The default keeps the coordinate and LOD only (no stitching).
    fn seam_request(&self, request: ChunkRequest) -> ChunkRequest {
        ChunkRequest::new(request.coord, request.lod)
    }
}

/// A slot id: a small integer, unique among the loaded chunks, kept while a
/// chunk stays loaded and reused after it unloads (the smallest free one
/// first), so a renderer can index its buffer pools with it.
pub type SlotId = u32;

/// What the application learns from
/// [`StreamScheduler::poll`](crate::StreamScheduler::poll).
#[derive(Debug)]
#[non_exhaustive]
pub enum StreamEvent<T> {
    /// `output` is the content to show for `coord` from now on. A chunk that
    /// was already shown (its LOD changed) keeps its slot: replace what the
    /// slot holds.
    ChunkReady {
        /// The chunk.
        coord: ChunkCoord,
        /// Its level of detail.
        lod: u8,
        /// Its slot, stable while it stays loaded.
        slot: SlotId,
        /// What the source built.
        output: T,
    },
    /// `coord` left the streamed area: free its slot's content. Sent only for
    /// chunks that had a [`ChunkReady`](Self::ChunkReady).
    ChunkUnloaded {
        /// The chunk.
        coord: ChunkCoord,
        /// The slot it held (free from now on, and reused later).
        slot: SlotId,
    },
    /// The source could not build `coord` at `lod` (it returned `None`
    /// without being cancelled, or panicked). Not retried at that LOD while
    /// the chunk stays wanted; a chunk shown before keeps its old content.
    ChunkFailed {
        /// The chunk.
        coord: ChunkCoord,
        /// The level of detail asked for.
        lod: u8,
    },
}

impl<T> StreamEvent<T> {
    /// The chunk the event is about.
    pub fn coord(&self) -> ChunkCoord {
        match self {
            StreamEvent::ChunkReady { coord, .. }
            | StreamEvent::ChunkUnloaded { coord, .. }
            | StreamEvent::ChunkFailed { coord, .. } => *coord,
        }
    }
}
