//! The storage seam between worlds and where their chunks live.
//!
//! [`ChunkStore`] is what a world needs from storage: metadata, chunk rows by
//! [`ChunkKey`], and the stroke log with its undo cursor. Every mutating
//! call is one unit of commit: it either happens completely and durably
//! before it returns, or not at all. [`WorldFile`] (one SQLite file) is the
//! implementation today; a shared server database is meant to be a second
//! implementation of the same trait (see `docs/scaling.md`).

use crate::error::StoreError;
use crate::file::{ChunkChange, ChunkKey, NewStroke, StrokeCounts, StrokeRecord, WorldFile};

/// Storage for one world: metadata, chunk payloads and the stroke log.
///
/// Object safe, so callers can hold a `&mut dyn ChunkStore` (or a
/// `Box<dyn ChunkStore>`) chosen at run time.
///
/// # Commit units
///
/// [`put_chunks`](Self::put_chunks), [`commit_stroke`](Self::commit_stroke),
/// [`mark_undone`](Self::mark_undone) and [`mark_redone`](Self::mark_redone)
/// are each one atomic, durable transaction covering the log change and all
/// its chunk changes: after a crash a reader sees all of it or none of it.
/// A store shared by several writers reports a write based on a stale view
/// as [`StoreError::Conflict`] and a write lock held too long by another as
/// [`StoreError::Busy`]; neither changes anything.
pub trait ChunkStore {
    /// A short name of the backend (`"sqlite"` for [`WorldFile`]).
    fn backend(&self) -> &'static str;

    /// One raw metadata entry, or `None` when absent.
    fn meta_entry(&self, key: &str) -> Result<Option<String>, StoreError>;

    /// The payload stored for `key`, or `None` when the chunk is not stored
    /// (the generator gives it).
    fn chunk(&self, key: &ChunkKey) -> Result<Option<Vec<u8>>, StoreError>;

    /// The keys of all stored chunks, in ascending [`ChunkKey`] order.
    fn chunk_keys(&self) -> Result<Vec<ChunkKey>, StoreError>;

    /// Puts (`Some(payload)`) or deletes (`None`) chunk rows outside the
    /// stroke log, as one commit.
    fn put_chunks(&mut self, changes: &[ChunkChange]) -> Result<(), StoreError>;

    /// Appends a stroke, drops the redo tail and applies `changes`, as one
    /// commit; returns the new stroke's id (increasing, never reused).
    fn commit_stroke(
        &mut self,
        stroke: &NewStroke,
        changes: &[ChunkChange],
    ) -> Result<i64, StoreError>;

    /// Marks the last done stroke `id` undone and applies `changes`, as one
    /// commit.
    fn mark_undone(&mut self, id: i64, changes: &[ChunkChange]) -> Result<(), StoreError>;

    /// Marks the first undone stroke `id` done again and applies `changes`,
    /// as one commit.
    fn mark_redone(&mut self, id: i64, changes: &[ChunkChange]) -> Result<(), StoreError>;

    /// The stroke with `id`, if the log holds it.
    fn stroke(&self, id: i64) -> Result<Option<StrokeRecord>, StoreError>;

    /// The newest stroke in effect (the one an undo reverts).
    fn last_done_stroke(&self) -> Result<Option<StrokeRecord>, StoreError>;

    /// The oldest undone stroke (the one a redo brings back).
    fn first_undone_stroke(&self) -> Result<Option<StrokeRecord>, StoreError>;

    /// How many strokes are done (the undo position) and undone.
    fn stroke_counts(&self) -> Result<StrokeCounts, StoreError>;
}

impl ChunkStore for WorldFile {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    fn meta_entry(&self, key: &str) -> Result<Option<String>, StoreError> {
        WorldFile::meta_entry(self, key)
    }

    fn chunk(&self, key: &ChunkKey) -> Result<Option<Vec<u8>>, StoreError> {
        WorldFile::chunk(self, key)
    }

    fn chunk_keys(&self) -> Result<Vec<ChunkKey>, StoreError> {
        // Read in (layer, x, y, z, lod) order, which is `ChunkKey`'s order.
        WorldFile::chunk_keys(self)
    }

    fn put_chunks(&mut self, changes: &[ChunkChange]) -> Result<(), StoreError> {
        WorldFile::put_chunks(self, changes)
    }

    fn commit_stroke(
        &mut self,
        stroke: &NewStroke,
        changes: &[ChunkChange],
    ) -> Result<i64, StoreError> {
        WorldFile::commit_stroke(self, stroke, changes)
    }

    fn mark_undone(&mut self, id: i64, changes: &[ChunkChange]) -> Result<(), StoreError> {
        WorldFile::mark_undone(self, id, changes)
    }

    fn mark_redone(&mut self, id: i64, changes: &[ChunkChange]) -> Result<(), StoreError> {
        WorldFile::mark_redone(self, id, changes)
    }

    fn stroke(&self, id: i64) -> Result<Option<StrokeRecord>, StoreError> {
        WorldFile::stroke(self, id)
    }

    fn last_done_stroke(&self) -> Result<Option<StrokeRecord>, StoreError> {
        WorldFile::last_done_stroke(self)
    }

    fn first_undone_stroke(&self) -> Result<Option<StrokeRecord>, StoreError> {
        WorldFile::first_undone_stroke(self)
    }

    fn stroke_counts(&self) -> Result<StrokeCounts, StoreError> {
        WorldFile::stroke_counts(self)
    }
}
