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

/// What builds a chunk: generates its data and meshes it (and its
/// colliders) on a worker thread.
///
/// `build` must be a pure function of `(coord, lod)` and the source's own
/// immutable state, so that the same chunk gives the same bytes whatever
/// thread builds it and in whatever order. Return `None` when `cancel` is
/// set (the result would be dropped) or when the chunk cannot be built (the
/// scheduler reports [`StreamEvent::ChunkFailed`] and does not retry that
/// LOD while the chunk stays wanted). A panic in `build` counts as a failure.
pub trait ChunkSource: Send + Sync + 'static {
    /// What one built chunk is (a mesh, colliders, a GPU-ready buffer…).
    type Output: Send + 'static;

    /// Builds chunk `coord` at level of detail `lod`.
    fn build(&self, coord: ChunkCoord, lod: u8, cancel: &CancelFlag) -> Option<Self::Output>;
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
