//! The storage seam between worlds and where their chunks live.
//!
//! [`ChunkStore`] is what a world needs from storage: metadata, chunk rows by
//! [`ChunkKey`], the stroke log with its undo cursor, and the baked chunks
//! (meshes and colliders) a bake stores. Every mutating
//! call is one unit of commit: it either happens completely and durably
//! before it returns, or not at all. [`WorldFile`] (one SQLite file) is the
//! implementation today; a shared server database is meant to be a second
//! implementation of the same trait (see `docs/scaling.md`).

use std::collections::BTreeSet;

use crate::baked::BakedRow;
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
///
/// [`put_baked`](Self::put_baked) is a commit unit too: a batch of baked
/// rows is stored completely or not at all. Baked rows are derived data:
/// storing them is not a change of the world (it does not move the world
/// stamp, the stroke log or the revision other writers check).
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

    /// The world stamp: a hash of the world's metadata and stored chunks
    /// that baked rows record (see [`WorldFile::world_stamp`]). Two stores
    /// with the same stamp hold the same world, so rows baked in one are
    /// valid in the other.
    fn world_stamp(&self) -> Result<String, StoreError>;

    /// Stores baked rows (inserting or replacing by key), as one commit.
    fn put_baked(&mut self, rows: &[BakedRow]) -> Result<(), StoreError>;

    /// The baked row of `key`, if stored.
    fn baked_row(&self, key: &ChunkKey) -> Result<Option<BakedRow>, StoreError>;

    /// The keys of the baked rows recorded with world stamp `source` (the
    /// chunks a bake of that world can skip).
    fn baked_keys_from(&self, source: &str) -> Result<BTreeSet<ChunkKey>, StoreError>;

    /// At most `limit` keys of baked rows after `after` (from the start
    /// when `None`), in ascending [`ChunkKey`] order: pass the last key of
    /// one page to get the next.
    fn baked_keys_after(
        &self,
        after: Option<&ChunkKey>,
        limit: usize,
    ) -> Result<Vec<ChunkKey>, StoreError>;

    /// The content hash of the baked rows (keys and decoded payloads, in key
    /// order; see [`WorldFile::baked_content_hash`]), or `None` when nothing
    /// is baked. It does not depend on how or in which order the rows were
    /// written.
    fn baked_content_hash(&self) -> Result<Option<String>, StoreError>;
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

    fn world_stamp(&self) -> Result<String, StoreError> {
        WorldFile::world_stamp(self)
    }

    fn put_baked(&mut self, rows: &[BakedRow]) -> Result<(), StoreError> {
        WorldFile::put_baked(self, rows)
    }

    fn baked_row(&self, key: &ChunkKey) -> Result<Option<BakedRow>, StoreError> {
        WorldFile::baked_row(self, key)
    }

    fn baked_keys_from(&self, source: &str) -> Result<BTreeSet<ChunkKey>, StoreError> {
        WorldFile::baked_keys_from(self, source)
    }

    fn baked_keys_after(
        &self,
        after: Option<&ChunkKey>,
        limit: usize,
    ) -> Result<Vec<ChunkKey>, StoreError> {
        WorldFile::baked_keys_after(self, after, limit)
    }

    fn baked_content_hash(&self) -> Result<Option<String>, StoreError> {
        WorldFile::baked_content_hash(self)
    }
}
