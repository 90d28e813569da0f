//! A side-view world tied to its file: every acknowledged stroke is on disk.
//!
//! # What the file holds for a `side2d` world
//!
//! - metadata: kind `"side2d"`, format version [`SIDE2D_FORMAT_VERSION`], the
//!   seed and the [`Side2dParams`] as JSON, and (from format version 2) the
//!   world's material table as JSON under [`SIDE2D_MATERIALS_KEY`]
//!   (`{"materials": [{"name": "dirt", "color": [134, 96, 67, 255],
//!   "indestructible": false}, …]}`, ids in list order). Files of format
//!   version 1 carry no table and open with
//!   [`MaterialTable::side2d_default`];
//! - chunks (layer [`ChunkLayer::FIELD`], `z = 0`, `lod = 0`): only the chunks
//!   whose nodes differ from what the generator gives, each as a chunk with
//!   material ids whose values are exact `f32`, or `u8`/`u16` codes when
//!   the parameters' `storage` says so (the world then keeps every value on
//!   that grid, so the codes are exact too). Generated chunks are
//!   recomputed on open.
//!   Storage chunk `(cx, cy)` of `N = chunk_cells` cells owns nodes
//!   `[cx*N, cx*N + N)` on each axis; the last chunk on an axis also owns the
//!   final node row/column:
//!
//! ```text
//!   nodes:  0 .. N-1 | N .. 2N-1 | 2N .. W-1 (last chunk: up to the last node)
//!   chunk:      0    |     1     |     2
//! ```
//! - the stroke log: one row per stroke (tool name, the brush as JSON, the
//!   sparse before/after delta, its values in the same encoding as the
//!   chunks), with the undo cursor.
//!
//! # Acknowledgement
//!
//! [`Side2dDocument::stroke`], [`stroke_stamps`](Side2dDocument::stroke_stamps),
//! [`undo`](Side2dDocument::undo) and [`redo`](Side2dDocument::redo) change
//! the world in memory, then commit the
//! stroke row (or cursor move) and the touched chunks in one transaction
//! before they return `Ok`. If the commit fails, the memory change is
//! reverted and the error returned: world and file stay as they were.
//!
//! # Other stores
//!
//! The document works over any [`ChunkStore`]: [`Side2dDocument::create_in`]
//! and [`Side2dDocument::open_in`] take the store (a
//! [`MemoryStore`](crate::MemoryStore), say) and
//! [`Side2dDocument::into_store`] gives it back. The store holds exactly
//! what a file would, so the same strokes give the same chunk rows.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use isoterra_field::{Field2, MaterialGrid, MaterialTable, NodeRect, generate_side2d};
use isoterra_world::{
    EditDirection, Island, RebuildReport, Side2dBrush, Side2dEdit, Side2dParams, Side2dStorage,
    Side2dWorld, WorldError,
};
use serde::Serialize;

use crate::document_core::{
    DocumentCore, EditKind, check_params, document_access, in_new_world, new_meta, read_params,
    stamps_tool, to_json,
};
use crate::{
    ChunkChange, ChunkData, ChunkEncoding, ChunkKey, ChunkLayer, ChunkStore, StoreError, WorldFile,
    WorldMeta, decode_chunk, encode_chunk, encode_delta_as, field2_content_hash,
};

/// The `kind` recorded in the metadata of side-view world files.
pub const SIDE2D_KIND: &str = "side2d";
/// The newest `side2d` format version this build writes and reads: 2, which
/// adds the material table ([`SIDE2D_MATERIALS_KEY`]) to version 1.
pub const SIDE2D_FORMAT_VERSION: u32 = 2;
/// The metadata entry holding a `side2d` world's material table as JSON.
pub const SIDE2D_MATERIALS_KEY: &str = "materials";

/// What [`Side2dDocument::stroke`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StrokeOutcome {
    /// The id of the recorded stroke; `None` when the brush changed nothing
    /// (nothing is recorded then).
    pub id: Option<i64>,
    /// The node rectangle the edit touched (empty when nothing changed).
    pub rect: NodeRect,
    /// Number of nodes whose value or material changed.
    pub changed_nodes: usize,
}

/// A summary of a document, for `info` output (serialises to JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DocumentInfo {
    /// The world kind (`"side2d"`).
    pub kind: String,
    /// The generator seed.
    pub seed: u64,
    /// The generator preset name (`"caves"`, `"hills"`, …).
    pub preset: String,
    /// World width in cells.
    pub width_cells: u32,
    /// World height in cells.
    pub height_cells: u32,
    /// Cells per chunk along each axis.
    pub chunk_cells: u32,
    /// Number of chunks of the world.
    pub chunks_total: u64,
    /// Number of chunks stored in the file (those that differ from the generator).
    pub chunks_stored: u64,
    /// Strokes in the log, done and undone.
    pub strokes_total: u64,
    /// The undo position: the number of strokes in effect.
    pub undo_position: u64,
    /// True when an undone stroke can be redone
    /// (`strokes_total - undo_position` of them).
    pub redo_available: bool,
}

/// A side-view world and the store that holds it: a [`WorldFile`] unless
/// another [`ChunkStore`] is chosen.
///
/// Open or create one, edit it with [`stroke`](Self::stroke), step through
/// history with [`undo`](Self::undo) / [`redo`](Self::redo) (which survive
/// reopening), and read the world with [`world`](Self::world). Every
/// successful call is committed to the store when it returns.
///
/// Keep one document per file: a second handle on the same file can read it,
/// but once one handle has written, the other's writes fail with
/// [`StoreError::Conflict`] (it must reopen) instead of mixing histories.
pub struct Side2dDocument<S: ChunkStore = WorldFile> {
    core: DocumentCore<S, Side2dKind>,
}

/// What the shared document core needs to know about side-view worlds.
#[derive(Debug)]
struct Side2dKind {
    world: Side2dWorld,
    /// What the generator gives, to tell which chunks must be stored.
    base_field: Field2,
    base_materials: MaterialGrid,
}

impl Side2dDocument<WorldFile> {
    /// Creates a new world file at `path` with the default material table
    /// ([`MaterialTable::side2d_default`]): validates `params`, generates the
    /// world and records its metadata (no chunks: generated chunks are
    /// recomputed on open). Refuses to overwrite an existing file.
    pub fn create(path: impl AsRef<Path>, params: &Side2dParams) -> Result<Self, StoreError> {
        Self::create_with_table(path, params, MaterialTable::side2d_default())
    }

    /// As [`create`](Self::create), with the material table `table`, which
    /// the file keeps: reopening gives the same names, colours and
    /// indestructible flags, and brushes keep honouring them.
    ///
    /// The table must hold 1 to 256 materials with non-empty names
    /// ([`StoreError::InvalidInput`] otherwise) and every material id the
    /// generator uses (ids `0..=4` for the side-view presets;
    /// [`StoreError::World`] otherwise). On error nothing is created.
    pub fn create_with_table(
        path: impl AsRef<Path>,
        params: &Side2dParams,
        table: MaterialTable,
    ) -> Result<Self, StoreError> {
        Self::create_with(params, table, |meta, entries| {
            WorldFile::create_with_entries(path.as_ref(), meta, entries)
        })
    }

    /// Opens a `side2d` world file: reads its parameters and material table
    /// (the default table for files without one), regenerates the base world
    /// and lays the stored chunks over it.
    ///
    /// Chunk rows of other layers are left alone: this version reads only
    /// [`ChunkLayer::FIELD`].
    ///
    /// A file of an older format version is migrated on open: a version-1
    /// file (no material table) gets the default table written and its
    /// format version set to [`SIDE2D_FORMAT_VERSION`] in one transaction,
    /// so older builds reading it later see a newer format and refuse it
    /// rather than misread it. If the file cannot be written, it still opens
    /// in the old format and is migrated by a later open.
    ///
    /// Fails with [`StoreError::WrongKind`] for another kind of world, and
    /// with [`StoreError::Corrupt`] when the parameters, material table or
    /// chunks stored are malformed or do not fit together, besides the
    /// errors of [`WorldFile::open`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_in(WorldFile::open(path)?)
    }
}

document_access!(Side2dDocument);

impl<S: ChunkStore> Side2dDocument<S> {
    /// Creates a new side-view world with the default material table in
    /// `store`, which must hold no world yet (see
    /// [`ChunkStore::create_world`]); like [`create`](Side2dDocument::create)
    /// otherwise. On error the store is dropped.
    ///
    /// # Errors
    ///
    /// As [`create_with_table_in`](Self::create_with_table_in).
    pub fn create_in(store: S, params: &Side2dParams) -> Result<Self, StoreError> {
        Self::create_with_table_in(store, params, MaterialTable::side2d_default())
    }

    /// As [`create_in`](Self::create_in), with the material table `table`
    /// (see [`create_with_table`](Side2dDocument::create_with_table)).
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidInput`] / [`StoreError::World`] for a bad table
    /// or parameters, [`StoreError::AlreadyExists`] when the store holds a
    /// world.
    pub fn create_with_table_in(
        store: S,
        params: &Side2dParams,
        table: MaterialTable,
    ) -> Result<Self, StoreError> {
        Self::create_with(params, table, |meta, entries| {
            in_new_world(store, meta, entries)
        })
    }

    /// Opens the side-view world held in `store`, migrating an older format
    /// like [`open`](Side2dDocument::open) does.
    ///
    /// # Errors
    ///
    /// As [`open`](Side2dDocument::open), with the store's errors.
    pub fn open_in(mut store: S) -> Result<Self, StoreError> {
        let meta = store.meta()?;
        let params = side2d_params(store.location(), &meta)?;
        let table = side2d_table(store.location(), store.meta_entry(SIDE2D_MATERIALS_KEY)?)?;
        let loc = store.location();
        let (base_field, base_materials) = generate_side2d(&params.generator)
            .map_err(|e| StoreError::corrupt(loc, format!("the stored parameters: {e}")))?;
        let mut field = base_field.clone();
        let mut materials = base_materials.clone();
        let layout = Layout::new(&params);
        let mut stored = BTreeSet::new();
        store.visit_chunks(ChunkLayer::FIELD, &mut |key, payload| {
            let rect = layout.owned_rect_of_key(&key).ok_or_else(|| {
                StoreError::corrupt(
                    loc,
                    format!(
                        "stored chunk ({}, {}, {}, lod {}) lies outside the {}x{}-chunk world",
                        key.x, key.y, key.z, key.lod, layout.chunks[0], layout.chunks[1]
                    ),
                )
            })?;
            let chunk = decode_chunk(payload).map_err(|e| {
                StoreError::corrupt(loc, format!("chunk ({}, {}): {e}", key.x, key.y))
            })?;
            let want = [rect.width(), rect.height(), 1];
            let Some(ids) = chunk.materials().filter(|_| chunk.dims() == want) else {
                return Err(StoreError::corrupt(
                    loc,
                    format!(
                        "chunk ({}, {}) holds {:?} nodes{}, the world needs {want:?} with materials",
                        key.x,
                        key.y,
                        chunk.dims(),
                        if chunk.materials().is_none() {
                            " without materials"
                        } else {
                            ""
                        }
                    ),
                ));
            };
            write_rect(&mut field, &mut materials, rect, chunk.values(), ids);
            stored.insert(key);
            Ok(())
        })?;
        let world = Side2dWorld::from_parts_with_table(&params, field, materials, table.clone())
            .map_err(|e| {
                StoreError::corrupt(loc, format!("the stored chunks do not fit the world: {e}"))
            })?;
        // Every chunk decoded and fits: only now is an older format
        // migrated (a read of a damaged old file leaves it as it was).
        if meta.format_version < SIDE2D_FORMAT_VERSION {
            migrate_side2d(&mut store, &table);
        }
        let kind = Side2dKind {
            world,
            base_field,
            base_materials,
        };
        let core = DocumentCore::opened(store, kind, stored)?;
        Ok(Side2dDocument { core })
    }

    /// Checks the table and parameters, generates the world, then makes the
    /// store holding its metadata and table.
    fn create_with(
        params: &Side2dParams,
        table: MaterialTable,
        store: impl FnOnce(&WorldMeta, &[(&str, &str)]) -> Result<S, StoreError>,
    ) -> Result<Self, StoreError> {
        check_table(&table).map_err(|reason| StoreError::input("material table", reason))?;
        params.validate()?;
        let (field, materials) = generate_side2d(&params.generator)?;
        let table_json = serde_json::to_string(&table).map_err(|source| StoreError::Json {
            what: "material table",
            source,
        })?;
        let world =
            Side2dWorld::from_parts_with_table(params, field.clone(), materials.clone(), table)?;
        let meta = new_meta(
            SIDE2D_KIND,
            SIDE2D_FORMAT_VERSION,
            params.generator.seed,
            "side2d parameters",
            params,
        )?;
        let store = store(&meta, &[(SIDE2D_MATERIALS_KEY, &table_json)])?;
        let kind = Side2dKind {
            world,
            base_field: field,
            base_materials: materials,
        };
        Ok(Side2dDocument {
            core: DocumentCore::created(store, kind),
        })
    }

    /// The world in memory. Mesh it with [`rebuild`](Self::rebuild).
    pub fn world(&self) -> &Side2dWorld {
        &self.core.kind.world
    }

    /// The world's parameters.
    pub fn params(&self) -> &Side2dParams {
        self.world().params()
    }

    /// Rebuilds the meshes and colliders of every dirty chunk (see
    /// [`Side2dWorld::rebuild`]).
    pub fn rebuild(&mut self) -> RebuildReport {
        self.core.kind.world.rebuild(None)
    }

    /// Rebuilds dirty chunks until `budget` is spent (at least one chunk),
    /// oldest first, and reports how many remain.
    pub fn rebuild_within(&mut self, budget: Duration) -> RebuildReport {
        self.core.kind.world.rebuild(Some(budget))
    }

    /// Applies a brush and records it.
    ///
    /// An invalid brush is a [`StoreError::World`] error and changes nothing.
    /// A brush that changes no node records nothing (`id: None`). Otherwise
    /// the stroke, its sparse delta and every storage chunk owning a changed
    /// node are committed in one transaction before this returns — chunks
    /// that came back to their generated state are deleted rather than
    /// stored. A new stroke drops the redo tail. If the commit fails, the
    /// edit is reverted in memory and the error returned.
    pub fn stroke(&mut self, brush: &Side2dBrush) -> Result<StrokeOutcome, StoreError> {
        self.core.check_current()?;
        let params = to_json("brush", brush)?;
        let edit = self.core.kind.world.apply_brush(brush)?;
        self.record(edit, brush.tool.name(), params)
    }

    /// Applies several brush stamps (e.g. the stamps of one mouse drag) and
    /// records them as one stroke, undone and redone together.
    ///
    /// The stamps are applied in order. If one is invalid, the ones before
    /// it are reverted and its error returned: nothing changes. The recorded
    /// delta holds each changed node once (its value before the first stamp
    /// and after the last), so the result equals applying the stamps as
    /// separate strokes. The stroke's tool is the stamps' tool, or `"mixed"`;
    /// its parameters are the list of brushes. No stamps, or stamps that
    /// change nothing, record nothing.
    pub fn stroke_stamps(&mut self, stamps: &[Side2dBrush]) -> Result<StrokeOutcome, StoreError> {
        self.core.check_current()?;
        let params = to_json("brush stamps", &stamps)?;
        let edits = self
            .core
            .apply_stamps(stamps, |k, brush| Ok(k.world.apply_brush(brush)?))?;
        let tool = stamps_tool(stamps.iter().map(|b| b.tool), |t| t.name());
        let merged = self.merge(&edits);
        self.record(merged, tool, params)
    }

    /// Removes the floating islands (see [`Side2dWorld::islands`]) for which
    /// `pick` is true and records the removal as one stroke (tool
    /// `"detach"`), so undo puts them back. Returns those islands as they
    /// were, for a game to turn into falling debris. No island records
    /// nothing.
    ///
    /// On error (the commit fails) nothing changes.
    pub fn detach_islands(
        &mut self,
        mut pick: impl FnMut(&Island) -> bool,
    ) -> Result<(Vec<Island>, StrokeOutcome), StoreError> {
        self.core.check_current()?;
        let mut islands = self.core.kind.world.islands();
        islands.retain(|i| pick(i));
        let mut edits = Vec::with_capacity(islands.len());
        for island in &islands {
            match self.core.kind.world.remove_island(island) {
                Ok(e) => edits.push(e),
                Err(e) => {
                    for done in edits.iter().rev() {
                        let _ = self
                            .core
                            .kind
                            .world
                            .apply_edit(done, EditDirection::Backward);
                    }
                    return Err(e.into());
                }
            }
        }
        let merged = self.merge(&edits);
        let params = serde_json::json!({ "islands": islands.len() });
        let out = self.record(merged, "detach", params)?;
        Ok((islands, out))
    }

    /// Applies a brush to the world in memory only, without recording it:
    /// a live preview of a stroke still being drawn. Returns the edit that
    /// [`revert_preview`](Self::revert_preview) takes back. The store does
    /// not change; take every preview back before the next
    /// [`stroke`](Self::stroke), [`stroke_stamps`](Self::stroke_stamps),
    /// [`undo`](Self::undo) or [`redo`](Self::redo), which record what the
    /// world holds.
    ///
    /// An invalid brush is a [`StoreError::World`] error and changes nothing.
    pub fn preview(&mut self, brush: &Side2dBrush) -> Result<Side2dEdit, StoreError> {
        Ok(self.core.kind.world.apply_brush(brush)?)
    }

    /// Takes back an edit returned by [`preview`](Self::preview). Previews
    /// must be taken back in the reverse order of their application.
    ///
    /// # Errors
    ///
    /// [`StoreError::World`] when the edit does not fit this world; nothing
    /// changes then.
    pub fn revert_preview(&mut self, edit: &Side2dEdit) -> Result<(), StoreError> {
        Ok(self
            .core
            .kind
            .world
            .apply_edit(edit, EditDirection::Backward)?)
    }

    /// One edit from edits applied in order: every node once, its value
    /// before the first edit and its current value; nodes that ended where
    /// they started are left out.
    fn merge(&self, edits: &[Side2dEdit]) -> Side2dEdit {
        let mut first: std::collections::BTreeMap<u32, (f32, u8)> = Default::default();
        for e in edits {
            for (k, &i) in e.nodes.iter().enumerate() {
                first.entry(i).or_insert((e.before[k], e.mat_before[k]));
            }
        }
        let world = self.world();
        let values = world.field().values();
        let ids = world.materials().ids();
        let w = world.field().width();
        let mut out = Side2dEdit::default();
        for (i, (before, mat_before)) in first {
            let (after, mat_after) = (values[i as usize], ids[i as usize]);
            if after.to_bits() == before.to_bits() && mat_after == mat_before {
                continue;
            }
            let (x, y) = (i % w, i / w);
            out.rect = out.rect.union(&NodeRect::new(x, y, x + 1, y + 1));
            out.nodes.push(i);
            out.before.push(before);
            out.after.push(after);
            out.mat_before.push(mat_before);
            out.mat_after.push(mat_after);
        }
        out
    }

    /// Commits an edit already applied to the world as one stroke, or
    /// reverts it when the commit fails.
    fn record(
        &mut self,
        edit: Side2dEdit,
        tool: &str,
        params: serde_json::Value,
    ) -> Result<StrokeOutcome, StoreError> {
        if edit.is_empty() {
            return Ok(StrokeOutcome {
                id: None,
                rect: edit.rect,
                changed_nodes: 0,
            });
        }
        let id = self.core.record_applied(&edit, tool, params)?;
        Ok(StrokeOutcome {
            id: Some(id),
            rect: edit.rect,
            changed_nodes: edit.len(),
        })
    }

    /// A hash of the current contents: 16 hex digits of FNV-1a 64 over the
    /// node counts, every value's `f32` bits and every material id (see
    /// [`field2_content_hash`]). Equal contents give equal hashes whatever
    /// the history: a stroke and its undo give the original hash back.
    pub fn content_hash(&self) -> String {
        let world = self.world();
        let f = world.field();
        field2_content_hash(f.width(), f.height(), f.values(), world.materials().ids())
    }

    /// A summary: size, chunks, strokes and undo position, as this handle
    /// last wrote or read them (no store access).
    pub fn info(&self) -> DocumentInfo {
        let world = self.world();
        let p = world.params();
        let counts = self.core.counts();
        DocumentInfo {
            kind: SIDE2D_KIND.to_string(),
            seed: p.generator.seed,
            preset: p.generator.preset.name().to_string(),
            width_cells: p.generator.width_cells,
            height_cells: p.generator.height_cells,
            chunk_cells: p.chunk_cells,
            chunks_total: world.chunks_x() as u64 * world.chunks_y() as u64,
            chunks_stored: self.core.stored().len() as u64,
            strokes_total: counts.total(),
            undo_position: counts.done,
            redo_available: counts.undone > 0,
        }
    }
}

impl EditKind for Side2dKind {
    type Edit = Side2dEdit;

    fn encode(&self, edit: &Side2dEdit) -> Result<Vec<u8>, StoreError> {
        encode_delta_as(edit, value_encoding(self.world.params()))
    }

    fn decode(&self, delta: &[u8]) -> Result<Side2dEdit, StoreError> {
        // A delta changes each node of the world at most once.
        let f = self.world.field();
        let nodes = u64::from(f.width()) * u64::from(f.height());
        let edit = crate::delta_codec::decode_delta_within(
            delta,
            crate::delta_codec::max_delta_body(nodes),
        )?;
        // A quantized world keeps every value on its grid; a stored stroke
        // with values off it was not written by this world.
        let storage = self.world.params().storage;
        let off = edit
            .before
            .iter()
            .chain(&edit.after)
            .find(|v| storage.snap(**v).to_bits() != v.to_bits());
        if let Some(v) = off {
            return Err(StoreError::data(
                "stroke delta",
                format!(
                    "value {v} is not on the world's {} storage grid",
                    storage.name()
                ),
            ));
        }
        Ok(edit)
    }

    fn apply(&mut self, edit: &Side2dEdit, dir: EditDirection) -> Result<(), StoreError> {
        Ok(self.world.apply_edit(edit, dir)?)
    }

    fn apply_logged(
        &mut self,
        edit: &Side2dEdit,
        dir: EditDirection,
        _location: &Path,
        _id: i64,
    ) -> Result<bool, StoreError> {
        // The world must currently show the side we leave; otherwise the log
        // and the world disagree and applying it would not be reversible.
        let (values, mats) = match dir {
            EditDirection::Backward => (&edit.after, &edit.mat_after),
            EditDirection::Forward => (&edit.before, &edit.mat_before),
        };
        if !self.world_shows(&edit.nodes, values, mats) {
            return Ok(false);
        }
        self.apply(edit, dir)?;
        Ok(true)
    }

    /// The chunk rows to write for the storage chunks owning the edit's
    /// nodes: the encoded chunk, or a delete when it equals the generated
    /// base.
    fn chunk_changes(&self, edit: &Side2dEdit) -> Result<Vec<ChunkChange>, StoreError> {
        let layout = Layout::new(self.world.params());
        let w = self.world.field().width();
        let touched: BTreeSet<(u32, u32)> = edit
            .nodes
            .iter()
            .map(|&i| layout.owner(i % w, i / w))
            .collect();
        let mut changes = Vec::with_capacity(touched.len());
        for (cx, cy) in touched {
            let rect = layout.owned_rect(cx, cy);
            let key = ChunkKey::field2(cx as i32, cy as i32);
            let values = self.world.field().read_rect(rect);
            let ids = read_ids(self.world.materials(), rect);
            let same = values
                .iter()
                .zip(self.base_field.read_rect(rect))
                .all(|(a, b)| a.to_bits() == b.to_bits())
                && ids == read_ids(&self.base_materials, rect);
            if same {
                changes.push((key, None));
            } else {
                let chunk = ChunkData::new(
                    value_encoding(self.world.params()),
                    [rect.width(), rect.height(), 1],
                    values,
                    Some(ids),
                )?;
                changes.push((key, Some(encode_chunk(&chunk))));
            }
        }
        Ok(changes)
    }
}

/// How a world of `params` stores its values in chunk rows and stroke
/// deltas: exact `f32`, or the codes of its quantized storage.
fn value_encoding(params: &Side2dParams) -> ChunkEncoding {
    match params.storage {
        Side2dStorage::U8 => ChunkEncoding::U8,
        Side2dStorage::U16 => ChunkEncoding::U16,
        Side2dStorage::F32 => ChunkEncoding::F32,
    }
}

impl Side2dKind {
    fn world_shows(&self, nodes: &[u32], values: &[f32], mats: &[u8]) -> bool {
        let field = self.world.field().values();
        let ids = self.world.materials().ids();
        nodes.len() == values.len()
            && nodes.len() == mats.len()
            && nodes.iter().zip(values).zip(mats).all(|((&i, v), m)| {
                let i = i as usize;
                field.get(i).map(|f| f.to_bits()) == Some(v.to_bits()) && ids.get(i) == Some(m)
            })
    }
}

/// Brings a world of an older `side2d` format version up to
/// [`SIDE2D_FORMAT_VERSION`]: version 1 had no material table, so the table
/// it was read with (the default) is written and the version bumped, in one
/// commit. The stored chunks and the stroke log are the same in both
/// versions and stay untouched.
///
/// The upgrade is best effort: when the store cannot be written (read-only
/// file or directory, or another process holds the write lock), the document
/// still opens, reading the old format, and a later open upgrades it.
fn migrate_side2d<S: ChunkStore>(store: &mut S, table: &MaterialTable) {
    let Ok(json) = serde_json::to_string(table) else {
        return;
    };
    // Ignoring the error is deliberate: see above. On failure nothing changed.
    let _ = store.migrate_format(SIDE2D_FORMAT_VERSION, &[(SIDE2D_MATERIALS_KEY, &json)]);
}

/// Reads and checks the `side2d` parameters of a world's metadata.
fn side2d_params(location: &Path, meta: &WorldMeta) -> Result<Side2dParams, StoreError> {
    let params: Side2dParams = read_params(location, meta, SIDE2D_KIND, SIDE2D_FORMAT_VERSION)?;
    let valid: Result<(), WorldError> = params.validate();
    check_params(
        location,
        SIDE2D_KIND,
        valid,
        meta.seed,
        params.generator.seed,
    )?;
    Ok(params)
}

/// Reads and checks the material table stored in a file's metadata; the
/// default table when the file has none (format version 1).
fn side2d_table(location: &Path, json: Option<String>) -> Result<MaterialTable, StoreError> {
    let Some(json) = json else {
        return Ok(MaterialTable::side2d_default());
    };
    let table: MaterialTable = serde_json::from_str(&json).map_err(|e| {
        StoreError::corrupt(location, format!("metadata `{SIDE2D_MATERIALS_KEY}`: {e}"))
    })?;
    check_table(&table).map_err(|reason| {
        StoreError::corrupt(
            location,
            format!("metadata `{SIDE2D_MATERIALS_KEY}`: {reason}"),
        )
    })?;
    Ok(table)
}

/// Checks what deserialising a table does not: 1 to 256 materials, each
/// with a non-empty name.
fn check_table(table: &MaterialTable) -> Result<(), String> {
    if !(1..=MaterialTable::MAX).contains(&table.len()) {
        return Err(format!(
            "holds {} materials; a table holds 1 to {}",
            table.len(),
            MaterialTable::MAX
        ));
    }
    if let Some(id) = table.iter().position(|m| m.name.trim().is_empty()) {
        return Err(format!("material {id} has an empty name"));
    }
    Ok(())
}

/// Which nodes each storage chunk owns.
struct Layout {
    n: u32,
    nodes: [u32; 2],
    chunks: [u32; 2],
}

impl Layout {
    fn new(params: &Side2dParams) -> Self {
        let [w, h] = params.cells();
        Layout {
            n: params.chunk_cells,
            nodes: [w + 1, h + 1],
            chunks: params.chunks(),
        }
    }

    /// The storage chunk owning node `(x, y)`.
    fn owner(&self, x: u32, y: u32) -> (u32, u32) {
        (
            (x / self.n).min(self.chunks[0] - 1),
            (y / self.n).min(self.chunks[1] - 1),
        )
    }

    /// The nodes chunk `(cx, cy)` owns; the last chunk on an axis runs to the
    /// last node.
    fn owned_rect(&self, cx: u32, cy: u32) -> NodeRect {
        let end = |c: u32, axis: usize| {
            if c + 1 == self.chunks[axis] {
                self.nodes[axis]
            } else {
                (c + 1) * self.n
            }
        };
        NodeRect::new(cx * self.n, cy * self.n, end(cx, 0), end(cy, 1))
    }

    fn owned_rect_of_key(&self, key: &ChunkKey) -> Option<NodeRect> {
        let cx = u32::try_from(key.x).ok()?;
        let cy = u32::try_from(key.y).ok()?;
        if key.z != 0 || key.lod != 0 || cx >= self.chunks[0] || cy >= self.chunks[1] {
            return None;
        }
        Some(self.owned_rect(cx, cy))
    }
}

fn read_ids(grid: &MaterialGrid, rect: NodeRect) -> Vec<u8> {
    let w = grid.width() as usize;
    let ids = grid.ids();
    let mut out = Vec::with_capacity(rect.width() as usize * rect.height() as usize);
    for y in rect.y0..rect.y1 {
        let row = y as usize * w;
        out.extend_from_slice(&ids[row + rect.x0 as usize..row + rect.x1 as usize]);
    }
    out
}

/// Writes a row-major block of values and ids into `rect` (sizes checked by
/// the caller).
fn write_rect(
    field: &mut Field2,
    materials: &mut MaterialGrid,
    rect: NodeRect,
    values: &[f32],
    ids: &[u8],
) {
    let w = field.width() as usize;
    let rw = rect.width() as usize;
    for (row, y) in (rect.y0..rect.y1).enumerate() {
        let start = y as usize * w + rect.x0 as usize;
        field.values_mut()[start..start + rw].copy_from_slice(&values[row * rw..(row + 1) * rw]);
        materials.ids_mut()[start..start + rw].copy_from_slice(&ids[row * rw..(row + 1) * rw]);
    }
}

/// Reads a world file's metadata without knowing its kind (e.g. to choose
/// the document type that opens it). Fails like [`WorldFile::open`].
pub fn open_any(path: impl AsRef<Path>) -> Result<WorldMeta, StoreError> {
    WorldFile::open(path)?.meta()
}

/// The kind of world a file holds (`"side2d"`, …).
pub fn detect_kind(path: impl AsRef<Path>) -> Result<String, StoreError> {
    Ok(open_any(path)?.kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_gives_the_last_chunk_the_final_node() {
        let mut p = Side2dParams::DEFAULT.with_chunk_cells(16);
        p.generator = p.generator.with_size(40, 32);
        let l = Layout::new(&p);
        assert_eq!(l.chunks, [3, 2]);
        assert_eq!(l.owned_rect(0, 0), NodeRect::new(0, 0, 16, 16));
        assert_eq!(l.owned_rect(2, 1), NodeRect::new(32, 16, 41, 33));
        assert_eq!(l.owner(40, 32), (2, 1));
        assert_eq!(l.owner(15, 16), (0, 1));
        // Every node has exactly one owner, and owners own it.
        let mut owned = vec![0u8; 41 * 33];
        for cy in 0..2 {
            for cx in 0..3 {
                let r = l.owned_rect(cx, cy);
                for y in r.y0..r.y1 {
                    for x in r.x0..r.x1 {
                        owned[(y * 41 + x) as usize] += 1;
                        assert_eq!(l.owner(x, y), (cx, cy));
                    }
                }
            }
        }
        assert!(owned.iter().all(|&c| c == 1));
        assert!(
            l.owned_rect_of_key(&ChunkKey::field2(3, 0)).is_none()
                && l.owned_rect_of_key(&ChunkKey::field2(-1, 0)).is_none()
        );
    }
}
