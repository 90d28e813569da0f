//! The storage seam between worlds and where their chunks live.
//!
//! [`ChunkStore`] is what a world needs from storage: metadata, chunk rows by
//! [`ChunkKey`], the stroke log with its undo cursor, and the baked chunks
//! (meshes and colliders) a bake stores. Every mutating
//! call is one unit of commit: it either happens completely and durably
//! before it returns, or not at all. Two implementations exist:
//! [`WorldFile`] (one SQLite file) and [`MemoryStore`](crate::MemoryStore)
//! (maps in memory, for tests and worlds that never touch a disk). The
//! documents ([`Side2dDocument`](crate::Side2dDocument) and the other kinds)
//! work over any of them; a shared server database is meant to be a third
//! implementation of the same trait (see `docs/scaling.md`).
//!
//! The trait owns the data it speaks in (`types`: [`ChunkKey`],
//! [`WorldMeta`], [`StrokeRecord`], [`BakedRow`], …) and the rules every
//! backend applies alike (`rules`: metadata keys, stroke checks, reading
//! metadata back), so the backends depend on this module and not on each
//! other. Each backend implements the trait beside its own code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

mod rules;
mod types;

pub(crate) use rules::{
    RESERVED_META_KEYS, check_migration, check_redo, check_undo, initial_meta_entries,
    meta_params_json, now_ms, parse_meta, stroke_params_json, validate_entries, validate_meta,
};
pub use types::{
    BakedRow, ChunkChange, ChunkKey, ChunkLayer, NewStroke, StrokeCounts, StrokeRecord, WorldMeta,
};

#[cfg(doc)]
use crate::WorldFile;
use crate::error::StoreError;

/// What [`ChunkStore::visit_chunks`] calls with each stored chunk: its
/// key and payload. An error stops the walk and is returned.
pub type ChunkVisitor<'a> = dyn FnMut(ChunkKey, &[u8]) -> Result<(), StoreError> + 'a;

/// Storage for one world: metadata, chunk payloads and the stroke log.
///
/// Object safe, so callers can hold a `&mut dyn ChunkStore` (or a
/// `Box<dyn ChunkStore>`) chosen at run time; `Box<S>` and `&mut S` of a
/// store are stores too, so a document can run over either.
///
/// # Commit units
///
/// [`create_world`](Self::create_world), [`migrate_format`](Self::migrate_format),
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
///
/// # Errors name a location
///
/// Errors about the store carry [`location`](Self::location) in their
/// `path` field: the file's path for [`WorldFile`], a name such as
/// `memory` for [`MemoryStore`](crate::MemoryStore), a URL for a server.
pub trait ChunkStore {
    /// A short name of the backend (`"sqlite"` for [`WorldFile`],
    /// `"memory"` for [`MemoryStore`](crate::MemoryStore)).
    fn backend(&self) -> &'static str;

    /// Where the world is stored, as errors name it: the path of a file, a
    /// name or a URL.
    fn location(&self) -> &Path;

    /// Fails with [`StoreError::Conflict`] when another handle has written
    /// to the store since this one last read or wrote it, so that this
    /// handle's next write would be refused. Stores with a single handle
    /// (the default) always pass.
    fn check_current(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Writes the metadata of a new world into a store that holds none yet,
    /// as one commit: `meta`, when and by what it was created, and the
    /// extra `entries` (`(key, value)`, read back with
    /// [`meta_entry`](Self::meta_entry)); the rules for keys are those of
    /// [`WorldFile::create_with_entries`] ([`StoreError::InvalidInput`]
    /// otherwise).
    ///
    /// Fails with [`StoreError::AlreadyExists`] when the store already holds
    /// a world. A [`WorldFile`] always does (a file is created with its
    /// world by [`WorldFile::create`]), so for it this always fails.
    fn create_world(
        &mut self,
        meta: &WorldMeta,
        entries: &[(&str, &str)],
    ) -> Result<(), StoreError>;

    /// One raw metadata entry, or `None` when absent.
    fn meta_entry(&self, key: &str) -> Result<Option<String>, StoreError>;

    /// The world metadata, read from the entries `kind`, `format_version`,
    /// `seed` and `params`; [`StoreError::Corrupt`] when one is missing or
    /// malformed.
    fn meta(&self) -> Result<WorldMeta, StoreError> {
        parse_meta(self.location(), |key| self.meta_entry(key))
    }

    /// Moves the world to a newer format version of its kind: sets
    /// `format_version` and writes `entries` (inserted or replaced), as one
    /// commit (see [`WorldFile::migrate_format`]).
    fn migrate_format(
        &mut self,
        format_version: u32,
        entries: &[(&str, &str)],
    ) -> Result<(), StoreError>;

    /// Brings the store's own layout up to date, once a document has read
    /// and checked everything the store holds: nothing is migrated before
    /// the world is known to be whole, so a read of a damaged old file
    /// reports the damage and leaves the file as it was. Best effort: a
    /// store that cannot be written now stays readable as it is and is
    /// upgraded on a later open or when a write needs it. The default does
    /// nothing.
    fn upgrade(&mut self) {}

    /// The payload stored for `key`, or `None` when the chunk is not stored
    /// (the generator gives it).
    fn chunk(&self, key: &ChunkKey) -> Result<Option<Vec<u8>>, StoreError>;

    /// The keys of all stored chunks, in ascending [`ChunkKey`] order.
    fn chunk_keys(&self) -> Result<Vec<ChunkKey>, StoreError>;

    /// Calls `f` with every stored chunk of `layer`, in ascending key order;
    /// stops at the first error and returns it. The default reads
    /// [`chunk_keys`](Self::chunk_keys) and then each [`chunk`](Self::chunk);
    /// a backend that can stream rows does better (the world file and the
    /// PostgreSQL store hand each row to `f` as it is read, so `f` must not
    /// use the store itself).
    fn visit_chunks(&self, layer: ChunkLayer, f: &mut ChunkVisitor<'_>) -> Result<(), StoreError> {
        for key in self.chunk_keys()? {
            if key.layer != layer {
                continue;
            }
            if let Some(payload) = self.chunk(&key)? {
                f(key, &payload)?;
            }
        }
        Ok(())
    }

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

    /// The ids of the strokes in effect (not undone), oldest first.
    fn done_stroke_ids(&self) -> Result<Vec<i64>, StoreError>;

    /// The store's write counter as it is now: what
    /// [`check_current`](Self::check_current) compares with the one this
    /// handle last saw. Stores with a single handle have none (0).
    fn current_revision(&self) -> Result<u64, StoreError> {
        Ok(0)
    }

    /// Takes `revision` (a value of [`current_revision`](Self::current_revision))
    /// as the last one this handle saw, after the handle's user has caught
    /// up with everything written up to it; later writes of this handle are
    /// then accepted. Stores with a single handle ignore it.
    fn adopt_revision(&mut self, revision: u64) {
        let _ = revision;
    }

    /// The world stamp: a hash of the world's metadata and all stored
    /// chunks (see [`WorldFile::world_stamp`]). Two stores with the same
    /// stamp hold the same world, so rows baked in one are valid in the
    /// other. (Rows themselves record a per-chunk
    /// [input stamp](crate::input_stamp), which the kind layer computes.)
    fn world_stamp(&self) -> Result<String, StoreError>;

    /// Stores baked rows (inserting or replacing by key), as one commit.
    fn put_baked(&mut self, rows: &[BakedRow]) -> Result<(), StoreError>;

    /// The baked row of `key`, if stored.
    fn baked_row(&self, key: &ChunkKey) -> Result<Option<BakedRow>, StoreError>;

    /// The keys of the baked rows recorded with stamp `source`.
    fn baked_keys_from(&self, source: &str) -> Result<BTreeSet<ChunkKey>, StoreError>;

    /// The key and recorded [`source`](BakedRow::source) of every baked
    /// row, without the payloads: what a bake compares with the chunks'
    /// current [input stamps](crate::input_stamp) to tell current rows from
    /// stale ones. The default walks [`baked_keys_after`](Self::baked_keys_after)
    /// and reads each row; backends that can list the two columns do better.
    fn baked_sources(&self) -> Result<BTreeMap<ChunkKey, String>, StoreError> {
        let mut out = BTreeMap::new();
        let mut after: Option<ChunkKey> = None;
        loop {
            let keys = self.baked_keys_after(after.as_ref(), 512)?;
            let Some(last) = keys.last().copied() else {
                return Ok(out);
            };
            for k in keys {
                if let Some(row) = self.baked_row(&k)? {
                    out.insert(k, row.source);
                }
            }
            after = Some(last);
        }
    }

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

    /// The hash of everything the store holds for a world whose content
    /// hash is `world_hash`: that hash alone when nothing is baked, else
    /// combined with [`baked_content_hash`](Self::baked_content_hash).
    /// Equal for equal worlds and bakes in any backend.
    ///
    /// # Errors
    ///
    /// As [`baked_content_hash`](Self::baked_content_hash).
    fn stored_content_hash(&self, world_hash: &str) -> Result<String, StoreError> {
        Ok(match self.baked_content_hash()? {
            None => world_hash.to_string(),
            Some(baked) => crate::hash::stored_content_hash(world_hash, &baked),
        })
    }
}

/// A store behind a pointer (`Box<dyn ChunkStore>`, `&mut MemoryStore`, …)
/// is a store: every call goes to the store pointed to.
macro_rules! forward_chunk_store {
    ($($ptr:ty),*) => {$(
        impl<T: ChunkStore + ?Sized> ChunkStore for $ptr {
            fn backend(&self) -> &'static str {
                (**self).backend()
            }

            fn location(&self) -> &Path {
                (**self).location()
            }

            fn check_current(&self) -> Result<(), StoreError> {
                (**self).check_current()
            }

            fn create_world(
                &mut self,
                meta: &WorldMeta,
                entries: &[(&str, &str)],
            ) -> Result<(), StoreError> {
                (**self).create_world(meta, entries)
            }

            fn meta_entry(&self, key: &str) -> Result<Option<String>, StoreError> {
                (**self).meta_entry(key)
            }

            fn meta(&self) -> Result<WorldMeta, StoreError> {
                (**self).meta()
            }

            fn migrate_format(
                &mut self,
                format_version: u32,
                entries: &[(&str, &str)],
            ) -> Result<(), StoreError> {
                (**self).migrate_format(format_version, entries)
            }

            fn upgrade(&mut self) {
                (**self).upgrade()
            }

            fn chunk(&self, key: &ChunkKey) -> Result<Option<Vec<u8>>, StoreError> {
                (**self).chunk(key)
            }

            fn chunk_keys(&self) -> Result<Vec<ChunkKey>, StoreError> {
                (**self).chunk_keys()
            }

            fn visit_chunks(
                &self,
                layer: ChunkLayer,
                f: &mut ChunkVisitor<'_>,
            ) -> Result<(), StoreError> {
                (**self).visit_chunks(layer, f)
            }

            fn put_chunks(&mut self, changes: &[ChunkChange]) -> Result<(), StoreError> {
                (**self).put_chunks(changes)
            }

            fn commit_stroke(
                &mut self,
                stroke: &NewStroke,
                changes: &[ChunkChange],
            ) -> Result<i64, StoreError> {
                (**self).commit_stroke(stroke, changes)
            }

            fn mark_undone(&mut self, id: i64, changes: &[ChunkChange]) -> Result<(), StoreError> {
                (**self).mark_undone(id, changes)
            }

            fn mark_redone(&mut self, id: i64, changes: &[ChunkChange]) -> Result<(), StoreError> {
                (**self).mark_redone(id, changes)
            }

            fn stroke(&self, id: i64) -> Result<Option<StrokeRecord>, StoreError> {
                (**self).stroke(id)
            }

            fn last_done_stroke(&self) -> Result<Option<StrokeRecord>, StoreError> {
                (**self).last_done_stroke()
            }

            fn first_undone_stroke(&self) -> Result<Option<StrokeRecord>, StoreError> {
                (**self).first_undone_stroke()
            }

            fn stroke_counts(&self) -> Result<StrokeCounts, StoreError> {
                (**self).stroke_counts()
            }

            fn done_stroke_ids(&self) -> Result<Vec<i64>, StoreError> {
                (**self).done_stroke_ids()
            }

            fn current_revision(&self) -> Result<u64, StoreError> {
                (**self).current_revision()
            }

            fn adopt_revision(&mut self, revision: u64) {
                (**self).adopt_revision(revision)
            }

            fn world_stamp(&self) -> Result<String, StoreError> {
                (**self).world_stamp()
            }

            fn put_baked(&mut self, rows: &[BakedRow]) -> Result<(), StoreError> {
                (**self).put_baked(rows)
            }

            fn baked_row(&self, key: &ChunkKey) -> Result<Option<BakedRow>, StoreError> {
                (**self).baked_row(key)
            }

            fn baked_keys_from(&self, source: &str) -> Result<BTreeSet<ChunkKey>, StoreError> {
                (**self).baked_keys_from(source)
            }

            fn baked_sources(&self) -> Result<BTreeMap<ChunkKey, String>, StoreError> {
                (**self).baked_sources()
            }

            fn baked_keys_after(
                &self,
                after: Option<&ChunkKey>,
                limit: usize,
            ) -> Result<Vec<ChunkKey>, StoreError> {
                (**self).baked_keys_after(after, limit)
            }

            fn baked_content_hash(&self) -> Result<Option<String>, StoreError> {
                (**self).baked_content_hash()
            }
        }
    )*};
}

forward_chunk_store!(Box<T>, &mut T);
