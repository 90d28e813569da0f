//! What every document kind shares: a world in memory tied to a
//! [`ChunkStore`], strokes committed before they are acknowledged, undo and
//! redo through the store's stroke log, and the bookkeeping of which chunks
//! are stored.
//!
//! A kind supplies its edits through [`EditKind`] (how an edit is encoded
//! for the log, applied to the world, checked against the world and turned
//! into chunk rows); [`DocumentCore`] runs the protocol around them:
//!
//! - a stroke: the edit is applied in memory, then the stroke row and the
//!   touched chunks are committed in one call; if anything fails the edit
//!   is reverted in memory and the error returned;
//! - undo / redo: the logged edit is checked against the world (it must show
//!   the side being left, otherwise the log belongs to another history),
//!   applied, and the cursor move is committed with the touched chunks,
//!   reverting on failure.

use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;

use isoterra_world::EditDirection;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::{
    ChunkChange, ChunkKey, ChunkStore, NewStroke, StoreError, StrokeCounts, StrokeRecord, WorldMeta,
};

/// The part of a document that knows its world kind.
pub(crate) trait EditKind {
    /// A reversible edit of the world, as the stroke log keeps it.
    type Edit;

    /// Encodes an edit as a stroke delta.
    fn encode(&self, edit: &Self::Edit) -> Result<Vec<u8>, StoreError>;

    /// Decodes a stroke delta.
    fn decode(&self, delta: &[u8]) -> Result<Self::Edit, StoreError>;

    /// Applies an edit in `dir`. Edits that came from this world always fit.
    fn apply(&mut self, edit: &Self::Edit, dir: EditDirection) -> Result<(), StoreError>;

    /// Applies a logged edit in `dir` when the world shows the side it
    /// leaves; `Ok(false)`, changing nothing, when it does not.
    /// `location` and `id` name the store and the stroke in errors.
    fn apply_logged(
        &mut self,
        edit: &Self::Edit,
        dir: EditDirection,
        location: &Path,
        id: i64,
    ) -> Result<bool, StoreError>;

    /// The chunk rows to write after `edit`: each chunk owning a changed
    /// node, as its payload or as a deletion when it equals what the
    /// generator gives.
    fn chunk_changes(&self, edit: &Self::Edit) -> Result<Vec<ChunkChange>, StoreError>;
}

/// A world of kind `K` and the store `S` that holds it.
pub(crate) struct DocumentCore<S, K> {
    store: S,
    /// The world and whatever its kind needs besides.
    pub(crate) kind: K,
    /// The chunks stored, as this handle last wrote or read them.
    stored: BTreeSet<ChunkKey>,
    /// The stroke counts, likewise.
    counts: StrokeCounts,
    /// The ids of the strokes the world in memory shows, oldest first.
    done: Vec<i64>,
    /// Deltas of strokes this handle took from the store while following
    /// it or wrote since it first followed, newest last, so that it can
    /// take them back even after another handle dropped them from the log.
    followed: FollowedDeltas,
    /// Whether [`follow`](Self::follow) was called: only then are deltas
    /// kept.
    following: bool,
}

/// What a document's `follow` (for example [`Side2dDocument::follow`](crate::Side2dDocument::follow))
/// did to catch up with the store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Followed {
    /// Strokes taken back (undone by another handle, or dropped from its
    /// log), newest first.
    pub undone: usize,
    /// Strokes applied (new ones, or redone by another handle).
    pub applied: usize,
}

impl Followed {
    /// True when the world in memory changed.
    pub fn changed(&self) -> bool {
        self.undone + self.applied > 0
    }
}

/// The most bytes of stroke deltas a following handle keeps.
const FOLLOWED_BYTES: usize = 64 << 20;

/// Encoded deltas by stroke id, bounded in bytes (oldest dropped first).
#[derive(Default)]
struct FollowedDeltas {
    deltas: std::collections::VecDeque<(i64, Vec<u8>)>,
    bytes: usize,
}

impl FollowedDeltas {
    fn get(&self, id: i64) -> Option<&[u8]> {
        self.deltas
            .iter()
            .rev()
            .find(|(i, _)| *i == id)
            .map(|(_, d)| d.as_slice())
    }

    fn keep(&mut self, id: i64, delta: Vec<u8>) {
        if self.get(id).is_some() {
            return;
        }
        self.bytes += delta.len();
        self.deltas.push_back((id, delta));
        while self.bytes > FOLLOWED_BYTES {
            match self.deltas.pop_front() {
                Some((_, d)) => self.bytes -= d.len(),
                None => break,
            }
        }
    }
}

impl<S: ChunkStore, K: EditKind> DocumentCore<S, K> {
    /// A document over a store that has just been given a new world.
    pub(crate) fn created(store: S, kind: K) -> Self {
        DocumentCore {
            store,
            kind,
            stored: BTreeSet::new(),
            counts: StrokeCounts::default(),
            done: Vec::new(),
            followed: FollowedDeltas::default(),
            following: false,
        }
    }

    /// A document over an existing world whose stored chunks were read.
    pub(crate) fn opened(
        mut store: S,
        kind: K,
        stored: BTreeSet<ChunkKey>,
    ) -> Result<Self, StoreError> {
        let counts = store.stroke_counts()?;
        let done = store.done_stroke_ids()?;
        // The world is read and checked: only now may the store migrate.
        store.upgrade();
        Ok(DocumentCore {
            store,
            kind,
            stored,
            counts,
            done,
            followed: FollowedDeltas::default(),
            following: false,
        })
    }

    pub(crate) fn store(&self) -> &S {
        &self.store
    }

    pub(crate) fn into_store(self) -> S {
        self.store
    }

    pub(crate) fn location(&self) -> &Path {
        self.store.location()
    }

    pub(crate) fn counts(&self) -> StrokeCounts {
        self.counts
    }

    /// The chunks stored, in key order.
    pub(crate) fn stored(&self) -> &BTreeSet<ChunkKey> {
        &self.stored
    }

    /// Refuses to go on when another handle wrote since this one.
    pub(crate) fn check_current(&self) -> Result<(), StoreError> {
        self.store.check_current()
    }

    /// Writes chunk rows outside the stroke log.
    pub(crate) fn put_chunks(&mut self, changes: &[ChunkChange]) -> Result<(), StoreError> {
        self.store.put_chunks(changes)?;
        self.note_stored(changes);
        Ok(())
    }

    /// Applies `edit` to the world and records it as one stroke (see
    /// [`record_applied`](Self::record_applied)).
    pub(crate) fn apply_and_record(
        &mut self,
        edit: &K::Edit,
        tool: &str,
        params: serde_json::Value,
    ) -> Result<i64, StoreError> {
        self.kind.apply(edit, EditDirection::Forward)?;
        self.record_applied(edit, tool, params)
    }

    /// Commits an edit already applied to the world as one stroke (its
    /// delta and every touched chunk, dropping the redo tail) and returns
    /// the stroke's id; when encoding or the commit fails, the edit is
    /// reverted in memory and the error returned.
    pub(crate) fn record_applied(
        &mut self,
        edit: &K::Edit,
        tool: &str,
        params: serde_json::Value,
    ) -> Result<i64, StoreError> {
        let committed = self.kind.encode(edit).and_then(|delta| {
            let changes = self.kind.chunk_changes(edit)?;
            let stroke = NewStroke {
                tool: tool.to_string(),
                params,
                delta,
            };
            let id = self.store.commit_stroke(&stroke, &changes)?;
            Ok((id, changes, stroke.delta))
        });
        match committed {
            Ok((id, changes, delta)) => {
                if self.following {
                    self.followed.keep(id, delta);
                }
                self.note_stored(&changes);
                self.counts = StrokeCounts {
                    done: self.counts.done + 1,
                    undone: 0,
                };
                self.done.push(id);
                Ok(id)
            }
            Err(e) => {
                revert(&mut self.kind, edit, EditDirection::Backward);
                Err(e)
            }
        }
    }

    /// Applies several stamps in order with `apply`; when one fails, the
    /// ones before it are reverted and its error returned (nothing changes).
    pub(crate) fn apply_stamps<B>(
        &mut self,
        stamps: &[B],
        mut apply: impl FnMut(&mut K, &B) -> Result<K::Edit, StoreError>,
    ) -> Result<Vec<K::Edit>, StoreError> {
        let mut edits = Vec::with_capacity(stamps.len());
        for stamp in stamps {
            match apply(&mut self.kind, stamp) {
                Ok(e) => edits.push(e),
                Err(e) => {
                    self.revert_all(&edits);
                    return Err(e);
                }
            }
        }
        Ok(edits)
    }

    /// Takes back edits applied in order, newest first.
    pub(crate) fn revert_all(&mut self, edits: &[K::Edit]) {
        for done in edits.iter().rev() {
            revert(&mut self.kind, done, EditDirection::Backward);
        }
    }

    /// Undoes the last done stroke; its id, or `None` when there is none.
    /// The world and the store change together, or not at all.
    pub(crate) fn undo(&mut self) -> Result<Option<i64>, StoreError> {
        self.check_current()?;
        let Some(rec) = self.store.last_done_stroke()? else {
            return Ok(None);
        };
        self.step(&rec, EditDirection::Backward)?;
        Ok(Some(rec.id))
    }

    /// Redoes the first undone stroke; its id, or `None` when there is none.
    pub(crate) fn redo(&mut self) -> Result<Option<i64>, StoreError> {
        self.check_current()?;
        let Some(rec) = self.store.first_undone_stroke()? else {
            return Ok(None);
        };
        self.step(&rec, EditDirection::Forward)?;
        Ok(Some(rec.id))
    }

    /// Applies a logged stroke in `dir` and commits the cursor move with
    /// the touched chunks.
    fn step(&mut self, rec: &StrokeRecord, dir: EditDirection) -> Result<(), StoreError> {
        let edit = self
            .kind
            .decode(&rec.delta)
            .map_err(|e| StoreError::corrupt(self.location(), format!("stroke {}: {e}", rec.id)))?;
        if !self
            .kind
            .apply_logged(&edit, dir, self.store.location(), rec.id)?
        {
            // Another handle may have committed since `check_current`; that
            // is a conflict (reopen and go on), not a broken history.
            self.check_current()?;
            return Err(StoreError::history_mismatch(self.location(), rec.id));
        }
        let committed = self.kind.chunk_changes(&edit).and_then(|changes| {
            match dir {
                EditDirection::Backward => self.store.mark_undone(rec.id, &changes)?,
                EditDirection::Forward => self.store.mark_redone(rec.id, &changes)?,
            }
            Ok(changes)
        });
        match committed {
            Ok(changes) => {
                self.note_stored(&changes);
                self.counts.record_step(dir);
                match dir {
                    EditDirection::Backward => {
                        self.done.pop();
                    }
                    EditDirection::Forward => self.done.push(rec.id),
                }
                if self.following {
                    self.followed.keep(rec.id, rec.delta.clone());
                }
                Ok(())
            }
            Err(e) => {
                revert(&mut self.kind, &edit, dir.reversed());
                Err(e)
            }
        }
    }

    /// Catches the world in memory up with what other handles wrote to the
    /// store since this one last read or wrote it: strokes they undid (or
    /// dropped from the log) are taken back, newest first, and strokes they
    /// made or redid are applied, oldest first, from the deltas in the log.
    /// Nothing is written; afterwards this handle is current again, so its
    /// own strokes are accepted. A game following an editor that owns the
    /// file calls this whenever the editor says the history moved.
    ///
    /// # Errors
    ///
    /// Store errors; [`StoreError::History`] when a stroke to take back is
    /// no longer in the log and was not seen by this handle, or a logged
    /// stroke does not match the world (reopen the store then);
    /// [`StoreError::Busy`] when the store kept changing while it was read.
    /// The world in memory is unchanged on error.
    pub(crate) fn follow(&mut self) -> Result<Followed, StoreError> {
        self.following = true;
        for _ in 0..16 {
            let revision = self.store.current_revision()?;
            let theirs = self.store.done_stroke_ids()?;
            let counts = self.store.stroke_counts()?;
            let common = self
                .done
                .iter()
                .zip(&theirs)
                .take_while(|(a, b)| a == b)
                .count();
            let mut back = Vec::new();
            for &id in self.done[common..].iter().rev() {
                let delta = match self.followed.get(id) {
                    Some(d) => d.to_vec(),
                    None => match self.store.stroke(id)? {
                        Some(rec) => rec.delta,
                        None => return Err(StoreError::history_mismatch(self.location(), id)),
                    },
                };
                back.push((id, delta));
            }
            let mut ahead = Vec::new();
            for &id in &theirs[common..] {
                match self.store.stroke(id)? {
                    Some(rec) => ahead.push((id, rec.delta)),
                    // Dropped while being read: read again.
                    None => break,
                }
            }
            if ahead.len() != theirs.len() - common || self.store.current_revision()? != revision {
                continue;
            }
            // Decode everything before changing anything.
            let decode = |kind: &K, id: i64, delta: &[u8]| {
                kind.decode(delta)
                    .map_err(|e| StoreError::corrupt(self.location(), format!("stroke {id}: {e}")))
            };
            let mut steps = Vec::with_capacity(back.len() + ahead.len());
            for (id, delta) in &back {
                steps.push((
                    *id,
                    decode(&self.kind, *id, delta)?,
                    EditDirection::Backward,
                ));
            }
            for (id, delta) in &ahead {
                steps.push((*id, decode(&self.kind, *id, delta)?, EditDirection::Forward));
            }
            let location = self.store.location().to_path_buf();
            for (k, (id, edit, dir)) in steps.iter().enumerate() {
                let applied = self.kind.apply_logged(edit, *dir, &location, *id);
                if !matches!(applied, Ok(true)) {
                    for (_, done, d) in steps[..k].iter().rev() {
                        revert(&mut self.kind, done, d.reversed());
                    }
                    return Err(match applied {
                        Err(e) => e,
                        _ => StoreError::history_mismatch(&location, *id),
                    });
                }
            }
            for (_, edit, _) in &steps {
                let changes = self.kind.chunk_changes(edit)?;
                self.note_stored(&changes);
            }
            for (id, delta) in ahead.iter().cloned() {
                self.followed.keep(id, delta);
            }
            let out = Followed {
                undone: back.len(),
                applied: ahead.len(),
            };
            self.done = theirs;
            self.counts = counts;
            self.store.adopt_revision(revision);
            return Ok(out);
        }
        Err(StoreError::Busy {
            path: self.location().to_path_buf(),
        })
    }

    /// Keeps the set of stored chunks in step with committed chunk changes.
    fn note_stored(&mut self, changes: &[ChunkChange]) {
        for (key, payload) in changes {
            if payload.is_some() {
                self.stored.insert(*key);
            } else {
                self.stored.remove(key);
            }
        }
    }
}

/// Writes one side of an edit that was just applied the other way; it came
/// from this world, so it always fits.
fn revert<K: EditKind>(kind: &mut K, edit: &K::Edit, dir: EditDirection) {
    let reverted = kind.apply(edit, dir);
    debug_assert!(
        reverted.is_ok(),
        "reverting an applied edit failed: {:?}",
        reverted.err()
    );
}

impl<S: ChunkStore, K: fmt::Debug> fmt::Debug for DocumentCore<S, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DocumentCore")
            .field("backend", &self.store.backend())
            .field("location", &self.store.location())
            .field("kind", &self.kind)
            .field("stored", &self.stored.len())
            .field("counts", &self.counts)
            .finish()
    }
}

/// `store` after writing the metadata of a new world into it (see
/// [`ChunkStore::create_world`]).
pub(crate) fn in_new_world<S: ChunkStore>(
    mut store: S,
    meta: &WorldMeta,
    entries: &[(&str, &str)],
) -> Result<S, StoreError> {
    store.create_world(meta, entries)?;
    Ok(store)
}

/// A value as JSON, for metadata and stroke parameters.
pub(crate) fn to_json(
    what: &'static str,
    value: &impl Serialize,
) -> Result<serde_json::Value, StoreError> {
    serde_json::to_value(value).map_err(|source| StoreError::Json { what, source })
}

/// The metadata of a new world of `kind`.
pub(crate) fn new_meta(
    kind: &str,
    format_version: u32,
    seed: u64,
    what: &'static str,
    params: &impl Serialize,
) -> Result<WorldMeta, StoreError> {
    Ok(WorldMeta {
        kind: kind.to_string(),
        format_version,
        seed,
        params: to_json(what, params)?,
    })
}

/// Reads a kind's parameters from a world's metadata:
/// [`StoreError::WrongKind`] for another kind, [`StoreError::NewerFormat`]
/// for a newer format, [`StoreError::Corrupt`] when they do not parse.
pub(crate) fn read_params<P: DeserializeOwned>(
    location: &Path,
    meta: &WorldMeta,
    kind: &str,
    supported: u32,
) -> Result<P, StoreError> {
    if meta.kind != kind {
        return Err(StoreError::WrongKind {
            path: location.to_path_buf(),
            expected: kind.to_string(),
            found: meta.kind.clone(),
        });
    }
    if meta.format_version > supported {
        return Err(StoreError::NewerFormat {
            path: location.to_path_buf(),
            kind: meta.kind.clone(),
            found: meta.format_version,
            supported,
        });
    }
    serde_json::from_value(meta.params.clone())
        .map_err(|e| StoreError::corrupt(location, format!("the {kind} parameters: {e}")))
}

/// Checks stored parameters: `valid` is their validation, and the seed in
/// the metadata must equal the parameters' seed.
pub(crate) fn check_params<E: fmt::Display>(
    location: &Path,
    kind: &str,
    valid: Result<(), E>,
    meta_seed: u64,
    params_seed: u64,
) -> Result<(), StoreError> {
    valid.map_err(|e| {
        StoreError::corrupt(
            location,
            format!("the stored {kind} parameters are invalid: {e}"),
        )
    })?;
    if params_seed != meta_seed {
        return Err(StoreError::corrupt(
            location,
            format!(
                "the seed in the metadata ({meta_seed}) differs from the parameters' seed ({params_seed})"
            ),
        ));
    }
    Ok(())
}

/// The tool name of a stroke made of stamps: the stamps' tool when they all
/// use one, otherwise `"mixed"`.
pub(crate) fn stamps_tool<T: PartialEq>(
    mut tools: impl Iterator<Item = T>,
    name: impl Fn(&T) -> &'static str,
) -> &'static str {
    match tools.next() {
        Some(first) if tools.all(|t| t == first) => name(&first),
        _ => "mixed",
    }
}

/// The accessors and history calls every document type has, written once:
/// `file`, `path` and `close` for documents over a [`WorldFile`](crate::WorldFile),
/// and `store`, `into_store`, `undo`, `redo` and `Debug` over any store.
/// The document type must hold its [`DocumentCore`] in a field `core`.
macro_rules! document_access {
    ($doc:ident) => {
        impl $doc<$crate::WorldFile> {
            /// The underlying file, for queries (its writing methods need
            /// `&mut`, which this does not give).
            pub fn file(&self) -> &$crate::WorldFile {
                self.core.store()
            }

            /// The path of the file.
            pub fn path(&self) -> &::std::path::Path {
                self.file().path()
            }

            /// Closes the file, reporting any error met while doing so.
            pub fn close(self) -> Result<(), $crate::StoreError> {
                self.core.into_store().close()
            }
        }

        impl<S: $crate::ChunkStore> $doc<S> {
            /// The store holding the world, for queries (its writing
            /// methods need `&mut`, which this does not give).
            pub fn store(&self) -> &S {
                self.core.store()
            }

            /// Gives the store back, closing the document. Everything
            /// acknowledged is in it, so opening a document over it again
            /// (`open_in`) restores the world and its history.
            pub fn into_store(self) -> S {
                self.core.into_store()
            }

            /// Undoes the last done stroke; returns its id, or `None` when
            /// there is nothing to undo. The world and the store's chunks
            /// and cursor change together, or not at all.
            ///
            /// # Errors
            ///
            /// Store errors ([`StoreError::Conflict`](crate::StoreError::Conflict)
            /// when another handle wrote since this one),
            /// [`StoreError::Corrupt`](crate::StoreError::Corrupt) for a
            /// damaged delta, [`StoreError::History`](crate::StoreError::History)
            /// when the log does not match the world.
            pub fn undo(&mut self) -> Result<Option<i64>, $crate::StoreError> {
                self.core.undo()
            }

            /// Redoes the first undone stroke; returns its id, or `None`
            /// when there is nothing to redo.
            ///
            /// # Errors
            ///
            /// As [`undo`](Self::undo).
            pub fn redo(&mut self) -> Result<Option<i64>, $crate::StoreError> {
                self.core.redo()
            }

            /// Catches the world in memory up with what another handle (an
            /// editor, another process) wrote to the store since this one
            /// last read or wrote it, without writing anything: its strokes,
            /// undos and redos, applied from the store's log. Afterwards this
            /// handle may write again.
            ///
            /// # Errors
            ///
            /// Store errors; [`StoreError::History`](crate::StoreError::History)
            /// when the log no longer holds a stroke this handle would have to
            /// take back (reopen the store then). Nothing changes on error.
            pub fn follow(&mut self) -> Result<$crate::Followed, $crate::StoreError> {
                self.core.follow()
            }
        }

        impl<S: $crate::ChunkStore> ::std::fmt::Debug for $doc<S> {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_tuple(stringify!($doc)).field(&self.core).finish()
            }
        }
    };
}

pub(crate) use document_access;
