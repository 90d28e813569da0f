//! A [`ChunkStore`] that keeps a world in memory.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use crate::StoreError;
use crate::baked::decode_row;
use crate::chunk_store::{
    BakedRow, ChunkChange, ChunkKey, ChunkLayer, ChunkStore, ChunkVisitor, NewStroke, StrokeCounts,
    StrokeRecord, WorldMeta, check_migration, check_redo, check_undo, initial_meta_entries,
    meta_params_json, now_ms, stroke_params_json, validate_entries, validate_meta,
};
use crate::hash::{BakedHasher, StampHasher};

/// A world held in memory: metadata, chunk rows, the stroke log with its
/// undo position, and baked rows, in ordered maps.
///
/// It behaves like a [`WorldFile`](crate::WorldFile) in everything but
/// durability: the same calls succeed and fail in the same ways, stroke ids
/// increase and are never reused (not even after a new stroke drops the
/// redo tail), and the same world has the same
/// [world stamp](ChunkStore::world_stamp) and
/// [baked content hash](ChunkStore::baked_content_hash) in both. Nothing
/// outlives the value; clone it to keep a snapshot.
///
/// Use it for tests, for tools that build a world before deciding where to
/// save it, and for games that keep a generated and edited world only while
/// they run. Every document kind runs over it:
///
/// ```
/// use isoterra_store::{MemoryStore, VoxelDocument};
/// use isoterra_world::{VoxelBrush, VoxelParams, VoxelTool};
///
/// # fn main() -> Result<(), isoterra_store::StoreError> {
/// let params = VoxelParams::DEFAULT.with_chunk_cells(8);
/// let mut doc = VoxelDocument::create_in(MemoryStore::new(), &params)?;
/// doc.stroke(&VoxelBrush::new(VoxelTool::Dig, [4.0, 4.0, 4.0], 3.0))?;
/// let edited = doc.content_hash();
///
/// // The store holds the whole world: a document opened over it again
/// // shows the same content and history.
/// let mut doc = VoxelDocument::open_in(doc.into_store())?;
/// assert_eq!(doc.content_hash(), edited);
/// assert!(doc.undo()?.is_some());
/// # Ok(())
/// # }
/// ```
///
/// A memory store has one handle, so [`StoreError::Conflict`] and
/// [`StoreError::Busy`] never happen.
#[derive(Clone)]
pub struct MemoryStore {
    location: PathBuf,
    meta: BTreeMap<String, String>,
    chunks: BTreeMap<ChunkKey, Vec<u8>>,
    strokes: BTreeMap<i64, LoggedStroke>,
    /// The largest stroke id ever given (ids are never reused).
    last_id: i64,
    baked: BTreeMap<ChunkKey, BakedRow>,
}

/// One entry of the stroke log, stored as a world file stores it.
#[derive(Clone)]
struct LoggedStroke {
    tool: String,
    /// The parameters as JSON text.
    params: String,
    delta: Vec<u8>,
    undone: bool,
    created_ms: i64,
}

impl MemoryStore {
    /// An empty store, named `memory` in errors. Create a world in it with
    /// [`ChunkStore::create_world`] or a document's `create_in`.
    pub fn new() -> Self {
        MemoryStore {
            location: PathBuf::from("memory"),
            meta: BTreeMap::new(),
            chunks: BTreeMap::new(),
            strokes: BTreeMap::new(),
            last_id: 0,
            baked: BTreeMap::new(),
        }
    }

    /// An empty store named `memory:NAME` in errors, to tell several apart.
    pub fn named(name: &str) -> Self {
        MemoryStore {
            location: PathBuf::from(format!("memory:{name}")),
            ..MemoryStore::new()
        }
    }

    /// A store holding a new world with `meta` and no chunks or strokes,
    /// like [`WorldFile::create`](crate::WorldFile::create).
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidInput`] for a kind that is not 1 to 64 ASCII
    /// letters, digits, `_` or `-`.
    pub fn create(meta: &WorldMeta) -> Result<Self, StoreError> {
        Self::create_with_entries(meta, &[])
    }

    /// As [`create`](Self::create), also writing the metadata `entries`
    /// (see [`WorldFile::create_with_entries`](crate::WorldFile::create_with_entries)
    /// for the rules on keys).
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidInput`] for a bad kind or key.
    pub fn create_with_entries(
        meta: &WorldMeta,
        entries: &[(&str, &str)],
    ) -> Result<Self, StoreError> {
        let mut store = MemoryStore::new();
        store.create_world(meta, entries)?;
        Ok(store)
    }

    /// The number of stored chunks.
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// The number of baked rows.
    pub fn baked_count(&self) -> usize {
        self.baked.len()
    }

    fn apply(&mut self, changes: &[ChunkChange]) {
        for (key, payload) in changes {
            match payload {
                Some(p) => {
                    self.chunks.insert(*key, p.clone());
                }
                None => {
                    self.chunks.remove(key);
                }
            }
        }
    }

    /// The id of the newest done stroke, 0 for none (a world file's cursor).
    fn cursor(&self) -> i64 {
        self.strokes
            .iter()
            .rev()
            .find(|(_, s)| !s.undone)
            .map_or(0, |(&id, _)| id)
    }

    fn first_undone(&self) -> Option<i64> {
        self.strokes
            .iter()
            .find(|(_, s)| s.undone)
            .map(|(&id, _)| id)
    }

    fn record(&self, id: i64) -> Result<Option<StrokeRecord>, StoreError> {
        let Some(s) = self.strokes.get(&id) else {
            return Ok(None);
        };
        let params = serde_json::from_str(&s.params).map_err(|e| {
            StoreError::corrupt(&self.location, format!("parameters of stroke {id}: {e}"))
        })?;
        Ok(Some(StrokeRecord {
            id,
            tool: s.tool.clone(),
            params,
            delta: s.delta.clone(),
            undone: s.undone,
            created_ms: s.created_ms,
        }))
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new()
    }
}

impl fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryStore")
            .field("location", &self.location)
            .field("kind", &self.meta.get("kind"))
            .field("chunks", &self.chunks.len())
            .field("strokes", &self.strokes.len())
            .field("baked", &self.baked.len())
            .finish_non_exhaustive()
    }
}

impl ChunkStore for MemoryStore {
    fn backend(&self) -> &'static str {
        "memory"
    }

    fn location(&self) -> &Path {
        &self.location
    }

    fn create_world(
        &mut self,
        meta: &WorldMeta,
        entries: &[(&str, &str)],
    ) -> Result<(), StoreError> {
        validate_meta(meta)?;
        validate_entries(entries)?;
        let params = meta_params_json(meta)?;
        if !self.meta.is_empty() {
            return Err(StoreError::AlreadyExists {
                path: self.location.clone(),
            });
        }
        for (k, v) in initial_meta_entries(meta, &params) {
            self.meta.insert(k.to_string(), v);
        }
        for &(k, v) in entries {
            self.meta.insert(k.to_string(), v.to_string());
        }
        Ok(())
    }

    fn meta_entry(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(self.meta.get(key).cloned())
    }

    fn migrate_format(
        &mut self,
        format_version: u32,
        entries: &[(&str, &str)],
    ) -> Result<(), StoreError> {
        check_migration(self.meta()?.format_version, format_version, entries)?;
        self.meta
            .insert("format_version".to_string(), format_version.to_string());
        for &(k, v) in entries {
            self.meta.insert(k.to_string(), v.to_string());
        }
        Ok(())
    }

    fn chunk(&self, key: &ChunkKey) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.chunks.get(key).cloned())
    }

    fn chunk_keys(&self) -> Result<Vec<ChunkKey>, StoreError> {
        Ok(self.chunks.keys().copied().collect())
    }

    fn visit_chunks(&self, layer: ChunkLayer, f: &mut ChunkVisitor<'_>) -> Result<(), StoreError> {
        for (key, payload) in &self.chunks {
            if key.layer == layer {
                f(*key, payload)?;
            }
        }
        Ok(())
    }

    fn put_chunks(&mut self, changes: &[ChunkChange]) -> Result<(), StoreError> {
        self.apply(changes);
        Ok(())
    }

    fn commit_stroke(
        &mut self,
        stroke: &NewStroke,
        changes: &[ChunkChange],
    ) -> Result<i64, StoreError> {
        let params = stroke_params_json(stroke)?;
        let id = self
            .last_id
            .checked_add(1)
            .ok_or_else(|| StoreError::input("stroke", "the stroke log has run out of ids"))?;
        self.strokes.retain(|_, s| !s.undone);
        self.strokes.insert(
            id,
            LoggedStroke {
                tool: stroke.tool.clone(),
                params,
                delta: stroke.delta.clone(),
                undone: false,
                created_ms: now_ms(),
            },
        );
        self.last_id = id;
        self.apply(changes);
        Ok(id)
    }

    fn mark_undone(&mut self, id: i64, changes: &[ChunkChange]) -> Result<(), StoreError> {
        check_undo(&self.location, id, self.cursor())?;
        if let Some(s) = self.strokes.get_mut(&id) {
            s.undone = true;
        }
        self.apply(changes);
        Ok(())
    }

    fn mark_redone(&mut self, id: i64, changes: &[ChunkChange]) -> Result<(), StoreError> {
        check_redo(&self.location, id, self.first_undone())?;
        if let Some(s) = self.strokes.get_mut(&id) {
            s.undone = false;
        }
        self.apply(changes);
        Ok(())
    }

    fn stroke(&self, id: i64) -> Result<Option<StrokeRecord>, StoreError> {
        self.record(id)
    }

    fn last_done_stroke(&self) -> Result<Option<StrokeRecord>, StoreError> {
        match self.cursor() {
            0 => Ok(None),
            id => self.record(id),
        }
    }

    fn first_undone_stroke(&self) -> Result<Option<StrokeRecord>, StoreError> {
        match self.first_undone() {
            None => Ok(None),
            Some(id) => self.record(id),
        }
    }

    fn done_stroke_ids(&self) -> Result<Vec<i64>, StoreError> {
        Ok(self
            .strokes
            .iter()
            .filter(|(_, s)| !s.undone)
            .map(|(&id, _)| id)
            .collect())
    }

    fn stroke_counts(&self) -> Result<StrokeCounts, StoreError> {
        let undone = self.strokes.values().filter(|s| s.undone).count() as u64;
        Ok(StrokeCounts {
            done: self.strokes.len() as u64 - undone,
            undone,
        })
    }

    fn world_stamp(&self) -> Result<String, StoreError> {
        let mut h = StampHasher::new(|key| self.meta_entry(key))?;
        for (key, payload) in &self.chunks {
            h.chunk(key, payload);
        }
        Ok(h.finish())
    }

    fn put_baked(&mut self, rows: &[BakedRow]) -> Result<(), StoreError> {
        for row in rows {
            self.baked.insert(row.key, row.clone());
        }
        Ok(())
    }

    fn baked_row(&self, key: &ChunkKey) -> Result<Option<BakedRow>, StoreError> {
        Ok(self.baked.get(key).cloned())
    }

    fn baked_keys_from(&self, source: &str) -> Result<BTreeSet<ChunkKey>, StoreError> {
        Ok(self
            .baked
            .values()
            .filter(|r| r.source == source)
            .map(|r| r.key)
            .collect())
    }

    fn baked_sources(&self) -> Result<BTreeMap<ChunkKey, String>, StoreError> {
        Ok(self
            .baked
            .iter()
            .map(|(k, r)| (*k, r.source.clone()))
            .collect())
    }

    fn baked_keys_after(
        &self,
        after: Option<&ChunkKey>,
        limit: usize,
    ) -> Result<Vec<ChunkKey>, StoreError> {
        use std::ops::Bound;
        let lower = after.map_or(Bound::Unbounded, |k| Bound::Excluded(*k));
        Ok(self
            .baked
            .range((lower, Bound::Unbounded))
            .take(limit)
            .map(|(k, _)| *k)
            .collect())
    }

    fn baked_content_hash(&self) -> Result<Option<String>, StoreError> {
        let mut h = BakedHasher::new();
        for row in self.baked.values() {
            let (_, hash) = decode_row(&self.location, row)?;
            h.row(&row.key, &hash);
        }
        Ok(h.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> WorldMeta {
        WorldMeta {
            kind: "test".into(),
            format_version: 1,
            seed: 5,
            params: serde_json::json!({ "n": 1 }),
        }
    }

    fn stroke() -> NewStroke {
        NewStroke {
            tool: "dig".into(),
            params: serde_json::json!({}),
            delta: vec![1],
        }
    }

    #[test]
    fn ids_are_never_reused_after_the_redo_tail_is_dropped() {
        let mut s = MemoryStore::create(&meta()).unwrap();
        let a = s.commit_stroke(&stroke(), &[]).unwrap();
        let b = s.commit_stroke(&stroke(), &[]).unwrap();
        s.mark_undone(b, &[]).unwrap();
        let c = s.commit_stroke(&stroke(), &[]).unwrap();
        assert!(a < b && b < c);
        assert_eq!(s.stroke(b).unwrap(), None);
        assert_eq!(
            s.stroke_counts().unwrap(),
            StrokeCounts { done: 2, undone: 0 }
        );
    }

    #[test]
    fn a_world_is_created_once_and_checked() {
        let mut s = MemoryStore::named("t");
        assert_eq!(s.location(), Path::new("memory:t"));
        let bad = WorldMeta {
            kind: "no spaces".into(),
            ..meta()
        };
        assert!(matches!(
            s.create_world(&bad, &[]),
            Err(StoreError::InvalidInput { .. })
        ));
        assert!(matches!(
            s.create_world(&meta(), &[("kind", "x")]),
            Err(StoreError::InvalidInput { .. })
        ));
        assert_eq!(s.meta_entry("kind").unwrap(), None);
        s.create_world(&meta(), &[("extra", "1")]).unwrap();
        assert_eq!(s.meta().unwrap(), meta());
        assert_eq!(s.meta_entry("extra").unwrap().as_deref(), Some("1"));
        assert!(matches!(
            s.create_world(&meta(), &[]),
            Err(StoreError::AlreadyExists { .. })
        ));
    }
}
