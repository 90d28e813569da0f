//! A heightmap world tied to its file: every acknowledged stroke is on disk.
//!
//! # What the file holds for a `heightmap` world
//!
//! - metadata: kind [`HEIGHTMAP_KIND`], format version
//!   [`HEIGHTMAP_FORMAT_VERSION`], the seed and the [`HeightmapParams`] as
//!   JSON;
//! - chunks (layer [`ChunkLayer::FIELD`], key `(cx, cz)` in `x, y`, `z = 0`,
//!   `lod = 0`): only the chunks of the edit layer, each an exact `f32`
//!   chunk of `chunk_cells x chunk_cells` height deltas over the nodes the
//!   chunk owns (`[c*N, c*N + N)` on each axis, row-major, x fastest).
//!   Generated heights are recomputed on open;
//! - the stroke log: one row per stroke (tool name, the brush as JSON, the
//!   sparse before/after deltas of the changed nodes), with the undo cursor.
//!
//! # Acknowledgement
//!
//! [`HeightmapDocument::stroke`], [`undo`](HeightmapDocument::undo) and
//! [`redo`](HeightmapDocument::redo) change the world in memory, then commit
//! the stroke row (or cursor move) and the touched edit chunks in one
//! transaction before they return `Ok`. If the commit fails, the memory
//! change is reverted and the error returned. The same holds in any
//! [`ChunkStore`] ([`HeightmapDocument::create_in`],
//! [`HeightmapDocument::open_in`]).

use std::collections::BTreeSet;
use std::path::Path;

use isoterra_world::{
    EditDirection, HeightBrush, HeightEdit, HeightmapParams, HeightmapWorld, WorldError,
};
use serde::Serialize;

use crate::document_core::{
    DocumentCore, EditKind, check_params, document_access, in_new_world, new_meta, read_params,
    stamps_tool, to_json,
};
use crate::hash::Fnv1a64;
use crate::{
    ChunkChange, ChunkData, ChunkEncoding, ChunkKey, ChunkLayer, ChunkStore, StoreError, WorldFile,
    WorldMeta, decode_chunk, encode_chunk,
};

/// The `kind` recorded in the metadata of heightmap world files.
pub const HEIGHTMAP_KIND: &str = "heightmap";
/// The newest `heightmap` format version this build writes and reads.
pub const HEIGHTMAP_FORMAT_VERSION: u32 = 1;

/// Magic of an encoded [`HeightEdit`] (before compression).
const DELTA_MAGIC: &[u8; 4] = b"IHE1";
/// Bytes per node of an encoded edit: `gx`, `gz` (i64), before, after (f32 bits).
const DELTA_NODE_BYTES: usize = 24;
/// Largest decoded edit, in bytes.
const MAX_DELTA_BYTES: usize = 256 << 20;
/// The most nodes one heightmap stroke may change (what its delta may hold).
pub const MAX_STROKE_NODES: usize = (MAX_DELTA_BYTES - 8) / DELTA_NODE_BYTES;

/// What [`HeightmapDocument::stroke`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeightStrokeOutcome {
    /// The id of the recorded stroke; `None` when the brush changed nothing
    /// (nothing is recorded then).
    pub id: Option<i64>,
    /// Number of nodes whose delta changed.
    pub changed_nodes: usize,
    /// Chunks whose meshes (at some LOD) changed, sorted.
    pub dirty_chunks: Vec<[i32; 2]>,
}

/// A summary of a heightmap document, for `info` output (serialises to JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeightmapInfo {
    /// The world kind (`"heightmap"`).
    pub kind: String,
    /// The generator seed.
    pub seed: u64,
    /// Cells per chunk side.
    pub chunk_cells: u32,
    /// World units per cell.
    pub cell_size: f32,
    /// Levels of detail.
    pub lod_count: u8,
    /// The default range of 16-bit exports `[min, max]`: an imported
    /// heightmap's recorded range, else the generator's analytic range.
    pub height_range: [f32; 2],
    /// An imported heightmap's extent: first node, nodes per side and what
    /// lies outside (`None` for a generated world).
    pub extent: Option<ExtentInfo>,
    /// Edit chunks stored in the file.
    pub chunks_stored: u64,
    /// Strokes in the log, done and undone.
    pub strokes_total: u64,
    /// The undo position: the number of strokes in effect.
    pub undo_position: u64,
    /// True when an undone stroke can be redone.
    pub redo_available: bool,
}

/// The extent of an imported heightmap, for `info` output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtentInfo {
    /// The first node (smallest x and z).
    pub first: [i64; 2],
    /// Nodes along x and z.
    pub dims: [u32; 2],
    /// What lies outside: `edge` or `generated`.
    pub outside: &'static str,
}

/// A heightmap world and the store that holds it: a [`WorldFile`] unless
/// another [`ChunkStore`] is chosen.
///
/// Create or open one, sculpt it with [`stroke`](Self::stroke), step through
/// history with [`undo`](Self::undo) / [`redo`](Self::redo) (which survive
/// reopening), and read or mesh the world with [`world`](Self::world) /
/// [`world_mut`](Self::world_mut). Every successful call is durable when it
/// returns.
///
/// ```
/// use isoterra_store::HeightmapDocument;
/// use isoterra_world::{HeightBrush, HeightTool, HeightmapParams};
///
/// # fn main() -> Result<(), isoterra_store::StoreError> {
/// # let dir = std::env::temp_dir().join(format!("isoterra-hm-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// # let path = dir.join("hills.isoterra");
/// # let _ = std::fs::remove_file(&path);
/// let mut doc = HeightmapDocument::create(&path, &HeightmapParams::DEFAULT.with_seed(3))?;
/// let generated = doc.content_hash();
/// let outcome = doc.stroke(&HeightBrush::new(HeightTool::Raise, [10.0, 10.0], 8.0))?;
/// assert!(outcome.id.is_some());
/// doc.undo()?;
/// assert_eq!(doc.content_hash(), generated);
/// # drop(doc);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok(())
/// # }
/// ```
pub struct HeightmapDocument<S: ChunkStore = WorldFile> {
    core: DocumentCore<S, HeightmapKind>,
}

/// Refuses parameters with an erosion where no eroded heights are given.
fn refuse_erosion(params: &HeightmapParams) -> Result<(), StoreError> {
    if params.erosion.is_some() {
        return Err(StoreError::World(isoterra_world::WorldError::param(
            "erosion",
            "set",
            "an eroded world starts with its eroded heights: create it with \
             create_from_heights (isoterra_kind::Document::create runs the erosion)",
        )));
    }
    Ok(())
}

/// What the shared document core needs to know about heightmap worlds.
#[derive(Debug)]
struct HeightmapKind {
    world: HeightmapWorld,
}

impl HeightmapDocument<WorldFile> {
    /// Creates a new world file at `path`: validates `params` and records
    /// the metadata (no chunks). Refuses to overwrite an existing file.
    ///
    /// # Errors
    ///
    /// [`StoreError::World`] for invalid parameters, and the errors of
    /// [`WorldFile::create`]; nothing is created then.
    ///
    /// Parameters with an [`erosion`](HeightmapParams::erosion) are refused
    /// here: an eroded world starts with its eroded heights, given to
    /// [`create_from_heights`](Self::create_from_heights) (what
    /// `isoterra_kind::Document::create` does).
    pub fn create(path: impl AsRef<Path>, params: &HeightmapParams) -> Result<Self, StoreError> {
        refuse_erosion(params)?;
        Self::create_with(params, |meta| WorldFile::create(path.as_ref(), meta))
    }

    /// Creates a new world file at `path` whose ground starts as the given
    /// heights (an imported image): node `first + (i, j)` gets
    /// `heights[j * dims[0] + i]`, with no stroke to undo. Give `params` an
    /// [`extent`](HeightmapParams::extent) over the same block to make a
    /// world of just that heightmap. Takes blocks up to
    /// [`MAX_EXTENT_SIDE`](isoterra_world::MAX_EXTENT_SIDE) nodes a side
    /// (the one limit is memory: the heights, and about as much again).
    ///
    /// # Errors
    ///
    /// As [`create`](HeightmapDocument::create), and
    /// [`StoreError::World`] for bad dims, lengths or heights; the new file
    /// is removed again then.
    pub fn create_from_heights(
        path: impl AsRef<Path>,
        params: &HeightmapParams,
        first: [i64; 2],
        dims: [u32; 2],
        heights: &[f32],
    ) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let mut doc = Self::create_with(params, |meta| WorldFile::create(path, meta))?;
        if let Err(e) = doc.lay_start_heights(first, dims, heights) {
            drop(doc);
            let _ = std::fs::remove_file(path);
            return Err(e);
        }
        Ok(doc)
    }

    /// Opens a `heightmap` world file: reads its parameters and lays the
    /// stored edit chunks over the generated heights.
    ///
    /// # Errors
    ///
    /// [`StoreError::WrongKind`] for another kind of world,
    /// [`StoreError::NewerFormat`], [`StoreError::Corrupt`] when the
    /// parameters or chunks are malformed, and the errors of
    /// [`WorldFile::open`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_in(WorldFile::open(path)?)
    }
}

document_access!(HeightmapDocument);

impl<S: ChunkStore> HeightmapDocument<S> {
    /// Creates a new heightmap world in `store`, which must hold no world
    /// yet (see [`ChunkStore::create_world`]); like
    /// [`create`](HeightmapDocument::create) otherwise. On error the store
    /// is dropped.
    ///
    /// # Errors
    ///
    /// [`StoreError::World`] for invalid parameters,
    /// [`StoreError::AlreadyExists`] when the store holds a world.
    pub fn create_in(store: S, params: &HeightmapParams) -> Result<Self, StoreError> {
        refuse_erosion(params)?;
        Self::create_with(params, |meta| in_new_world(store, meta, &[]))
    }

    /// Creates a new heightmap world in `store` whose ground starts as the
    /// given heights, like
    /// [`create_from_heights`](HeightmapDocument::create_from_heights).
    /// On error the store is dropped.
    ///
    /// # Errors
    ///
    /// As [`create_in`](Self::create_in) and
    /// [`create_from_heights`](HeightmapDocument::create_from_heights).
    pub fn create_from_heights_in(
        store: S,
        params: &HeightmapParams,
        first: [i64; 2],
        dims: [u32; 2],
        heights: &[f32],
    ) -> Result<Self, StoreError> {
        let mut doc = Self::create_with(params, |meta| in_new_world(store, meta, &[]))?;
        doc.lay_start_heights(first, dims, heights)?;
        Ok(doc)
    }

    /// Lays `heights` into a new world's edit layer and stores the chunks
    /// (no stroke).
    fn lay_start_heights(
        &mut self,
        first: [i64; 2],
        dims: [u32; 2],
        heights: &[f32],
    ) -> Result<(), StoreError> {
        let kind = &mut self.core.kind;
        let chunks = kind.world.import_heights(first, dims, heights)?;
        kind.world.take_dirty();
        let changes = kind.layer_changes(&chunks)?;
        self.core.put_chunks(&changes)
    }

    /// Opens the heightmap world held in `store`; fails like
    /// [`open`](HeightmapDocument::open).
    ///
    /// # Errors
    ///
    /// As [`open`](HeightmapDocument::open), with the store's errors.
    pub fn open_in(store: S) -> Result<Self, StoreError> {
        let loc = store.location();
        let meta = store.meta()?;
        let params = heightmap_params(loc, &meta)?;
        let mut world = HeightmapWorld::new(&params)
            .map_err(|e| StoreError::corrupt(loc, format!("the stored parameters: {e}")))?;
        let n = params.chunk_cells;
        let mut stored = BTreeSet::new();
        store.visit_chunks(ChunkLayer::FIELD, &mut |key, payload| {
            if key.z != 0 || key.lod != 0 {
                return Err(StoreError::corrupt(
                    loc,
                    format!(
                        "stored chunk ({}, {}, {}, lod {}) is not a heightmap edit chunk",
                        key.x, key.y, key.z, key.lod
                    ),
                ));
            }
            let chunk = decode_chunk(payload).map_err(|e| {
                StoreError::corrupt(loc, format!("chunk ({}, {}): {e}", key.x, key.y))
            })?;
            if chunk.dims() != [n, n, 1] {
                return Err(StoreError::corrupt(
                    loc,
                    format!(
                        "chunk ({}, {}) holds {:?} nodes, the world needs [{n}, {n}, 1]",
                        key.x,
                        key.y,
                        chunk.dims()
                    ),
                ));
            }
            let (values, _) = chunk.into_parts();
            world.set_edit_chunk([key.x, key.y], values).map_err(|e| {
                StoreError::corrupt(loc, format!("chunk ({}, {}): {e}", key.x, key.y))
            })?;
            stored.insert(key);
            Ok(())
        })?;
        world.take_dirty();
        let core = DocumentCore::opened(store, HeightmapKind { world }, stored)?;
        Ok(HeightmapDocument { core })
    }

    /// Builds the world of `params`, then the store holding its metadata.
    fn create_with(
        params: &HeightmapParams,
        store: impl FnOnce(&WorldMeta) -> Result<S, StoreError>,
    ) -> Result<Self, StoreError> {
        let world = HeightmapWorld::new(params)?;
        let meta = new_meta(
            HEIGHTMAP_KIND,
            HEIGHTMAP_FORMAT_VERSION,
            params.seed,
            "heightmap parameters",
            params,
        )?;
        let core = DocumentCore::created(store(&meta)?, HeightmapKind { world });
        Ok(HeightmapDocument { core })
    }

    /// The world in memory.
    pub fn world(&self) -> &HeightmapWorld {
        &self.core.kind.world
    }

    /// The world in memory, for meshing and streaming (mesh caches, worker
    /// requests, dirty sets). Sculpt through [`stroke`](Self::stroke): edits
    /// applied here directly are not recorded in the store.
    pub fn world_mut(&mut self) -> &mut HeightmapWorld {
        &mut self.core.kind.world
    }

    /// Applies a sculpt brush to the world in memory only, without recording it:
    /// a live preview of a stroke still being drawn. Returns the edit that
    /// [`revert_preview`](Self::revert_preview) takes back. The store does
    /// not change; take every preview back before the next stroke, undo or
    /// redo, which record what the world holds.
    ///
    /// # Errors
    ///
    /// [`StoreError::World`] for an invalid brush; nothing changes then.
    pub fn preview(&mut self, brush: &HeightBrush) -> Result<HeightEdit, StoreError> {
        Ok(self.core.kind.world.apply_brush(brush)?)
    }

    /// Takes back an edit returned by [`preview`](Self::preview). Previews
    /// must be taken back in the reverse order of their application.
    ///
    /// # Errors
    ///
    /// [`StoreError::World`] when the edit does not fit this world; nothing
    /// changes then.
    pub fn revert_preview(&mut self, edit: &HeightEdit) -> Result<(), StoreError> {
        Ok(self
            .core
            .kind
            .world
            .apply_edit(edit, isoterra_world::EditDirection::Backward)?)
    }

    /// The world's parameters.
    pub fn params(&self) -> &HeightmapParams {
        self.world().params()
    }

    /// Applies a sculpt brush and records it.
    ///
    /// An invalid brush is a [`StoreError::World`] error and changes
    /// nothing. A brush that changes no node records nothing (`id: None`).
    /// Otherwise the stroke, its sparse delta and every edit chunk owning a
    /// changed node are committed in one transaction before this returns
    /// (chunks whose deltas all came back to zero are deleted). A new stroke
    /// drops the redo tail. If the commit fails, the edit is reverted in
    /// memory and the error returned.
    pub fn stroke(&mut self, brush: &HeightBrush) -> Result<HeightStrokeOutcome, StoreError> {
        self.core.check_current()?;
        let params = to_json("height brush", brush)?;
        let edit = self.world().brush_edit(brush)?;
        self.record(edit, brush.tool.name(), params)
    }

    /// Applies several sculpt stamps (e.g. the stamps of one mouse drag) and
    /// records them as one stroke, undone and redone together.
    ///
    /// The stamps are applied in order, each to the heights the ones before
    /// it left. If one is invalid, nothing changes and its error is
    /// returned. The recorded delta holds each changed node once (its value
    /// before the first stamp and after the last). The stroke's tool is the
    /// stamps' tool, or `"mixed"`; its parameters are the list of brushes.
    /// No stamps, or stamps that change nothing, record nothing.
    pub fn stroke_stamps(
        &mut self,
        stamps: &[HeightBrush],
    ) -> Result<HeightStrokeOutcome, StoreError> {
        self.core.check_current()?;
        let params = to_json("height brush stamps", &stamps)?;
        // Every node once: its delta before the first stamp, folded in as
        // each stamp is applied (the stroke holds each touched node once,
        // however many stamps it has). Keyed by (z, x), the order an edit
        // lists its nodes in.
        let mut first: std::collections::BTreeMap<[i64; 2], f32> = Default::default();
        for brush in stamps {
            let applied = self.world_mut().apply_brush(brush);
            let e = match applied {
                Ok(e) => e,
                Err(err) => {
                    let back = self.folded_edit(&first);
                    let _ = self.world_mut().apply_edit(&back, EditDirection::Backward);
                    return Err(err.into());
                }
            };
            for (k, g) in e.nodes.iter().enumerate() {
                first.entry([g[1], g[0]]).or_insert(e.before[k]);
            }
            if first.len() > MAX_STROKE_NODES {
                let back = self.folded_edit(&first);
                let _ = self.world_mut().apply_edit(&back, EditDirection::Backward);
                return Err(StoreError::input(
                    "height stroke",
                    format!(
                        "it would change more than {MAX_STROKE_NODES} nodes, the most one stroke may record: end it and draw on with a new stroke"
                    ),
                ));
            }
        }
        let merged = self.folded_edit(&first);
        // The stroke is recorded from the heights before it.
        let _ = self
            .world_mut()
            .apply_edit(&merged, EditDirection::Backward);
        let tool = stamps_tool(stamps.iter().map(|b| b.tool), |t| t.name());
        self.record(merged, tool, params)
    }

    /// The edit from the deltas `first` held (keyed by (z, x)) to the
    /// world's deltas now, listing only the nodes that changed.
    fn folded_edit(&self, first: &std::collections::BTreeMap<[i64; 2], f32>) -> HeightEdit {
        let mut merged = HeightEdit::default();
        for (&[gz, gx], &before) in first {
            let g = [gx, gz];
            let after = self.world().delta(g);
            if after.to_bits() != before.to_bits() {
                merged.nodes.push(g);
                merged.before.push(before);
                merged.after.push(after);
            }
        }
        merged
    }

    /// Sets a block of nodes to given heights (an import) and records it as
    /// one stroke with tool `"import"`, undoable like a brush: node
    /// `first + (i, j)` gets `heights[j * dims[0] + i]` (up to one `f32`
    /// rounding; see [`HeightmapWorld::set_heights_edit`]).
    ///
    /// # Errors
    ///
    /// [`StoreError::World`] for bad dims, lengths or heights;
    /// [`StoreError::InvalidInput`] when the change is too large for one
    /// stroke (about 11 million nodes); nothing changes then.
    pub fn set_heights(
        &mut self,
        first: [i64; 2],
        dims: [u32; 2],
        heights: &[f32],
    ) -> Result<HeightStrokeOutcome, StoreError> {
        let params = serde_json::json!({ "first": first, "dims": dims });
        self.set_heights_as(first, dims, heights, "import", params)
    }

    /// As [`set_heights`](Self::set_heights), recorded as a stroke of tool
    /// `tool` with `params` (what computed the heights, for the log: an
    /// erosion of a region, say). Undo and redo use the stored change,
    /// never the parameters.
    ///
    /// # Errors
    ///
    /// As [`set_heights`](Self::set_heights).
    pub fn set_heights_as(
        &mut self,
        first: [i64; 2],
        dims: [u32; 2],
        heights: &[f32],
        tool: &str,
        params: serde_json::Value,
    ) -> Result<HeightStrokeOutcome, StoreError> {
        self.core.check_current()?;
        let edit = self.world().set_heights_edit(first, dims, heights)?;
        self.record(edit, tool, params)
    }

    /// Applies an edit computed from the world, commits it as one stroke,
    /// or reverts it when the commit fails.
    fn record(
        &mut self,
        edit: HeightEdit,
        tool: &str,
        params: serde_json::Value,
    ) -> Result<HeightStrokeOutcome, StoreError> {
        if edit.is_empty() {
            return Ok(HeightStrokeOutcome {
                id: None,
                changed_nodes: 0,
                dirty_chunks: Vec::new(),
            });
        }
        let id = self.core.apply_and_record(&edit, tool, params)?;
        Ok(HeightStrokeOutcome {
            id: Some(id),
            changed_nodes: edit.len(),
            dirty_chunks: dirty_of(self.world(), &edit),
        })
    }

    /// A hash of the current contents: 16 hex digits of FNV-1a 64 over
    /// `"ITHM"`, the seed, the chunk size and every edit chunk (sorted:
    /// `cx`, `cz`, then each delta's `f32` bits, little-endian). Equal
    /// contents give equal hashes whatever the history.
    pub fn content_hash(&self) -> String {
        let world = self.world();
        let mut h = Fnv1a64::new();
        h.write(b"ITHM");
        h.write(&world.params().seed.to_le_bytes());
        h.write(&world.params().chunk_cells.to_le_bytes());
        if let Some(e) = &world.params().extent {
            // Worlds without an extent keep the hashes they had.
            h.write(b"EXTENT");
            for v in e.first {
                h.write(&v.to_le_bytes());
            }
            for v in e.dims {
                h.write(&v.to_le_bytes());
            }
            h.write(e.outside.name().as_bytes());
            for v in e.range.iter().chain(&e.south).chain(&e.north) {
                h.write(&v.to_bits().to_le_bytes());
            }
            for v in e.west.iter().chain(&e.east) {
                h.write(&v.to_bits().to_le_bytes());
            }
        }
        for c in world.edited_chunks() {
            h.write(&c[0].to_le_bytes());
            h.write(&c[1].to_le_bytes());
            for d in world.edit_chunk(c).unwrap_or_default() {
                h.write(&d.to_bits().to_le_bytes());
            }
        }
        h.hex()
    }

    /// A summary, as this handle last wrote or read it (no store access).
    pub fn info(&self) -> HeightmapInfo {
        let world = self.world();
        let p = world.params();
        let counts = self.core.counts();
        HeightmapInfo {
            kind: HEIGHTMAP_KIND.to_string(),
            seed: p.seed,
            chunk_cells: p.chunk_cells,
            cell_size: p.cell_size,
            lod_count: p.lod_count,
            height_range: p
                .extent
                .as_ref()
                .map_or_else(|| world.generated_range(), |e| e.range),
            extent: p.extent.as_ref().map(|e| ExtentInfo {
                first: e.first,
                dims: e.dims,
                outside: e.outside.name(),
            }),
            chunks_stored: self.core.stored().len() as u64,
            strokes_total: counts.total(),
            undo_position: counts.done,
            redo_available: counts.undone > 0,
        }
    }
}

impl EditKind for HeightmapKind {
    type Edit = HeightEdit;

    fn encode(&self, edit: &HeightEdit) -> Result<Vec<u8>, StoreError> {
        encode_height_edit(edit)
    }

    fn decode(&self, delta: &[u8]) -> Result<HeightEdit, StoreError> {
        decode_height_edit(delta)
    }

    fn apply(&mut self, edit: &HeightEdit, dir: EditDirection) -> Result<(), StoreError> {
        Ok(self.world.apply_edit(edit, dir)?)
    }

    fn apply_logged(
        &mut self,
        edit: &HeightEdit,
        dir: EditDirection,
        _location: &Path,
        _id: i64,
    ) -> Result<bool, StoreError> {
        let leaving = match dir {
            EditDirection::Backward => &edit.after,
            EditDirection::Forward => &edit.before,
        };
        let shows = edit
            .nodes
            .iter()
            .zip(leaving)
            .all(|(g, v)| self.world.delta(*g).to_bits() == v.to_bits());
        if !shows {
            return Ok(false);
        }
        self.apply(edit, dir)?;
        Ok(true)
    }

    /// The chunk rows to write for the edit chunks owning the edit's nodes.
    fn chunk_changes(&self, edit: &HeightEdit) -> Result<Vec<ChunkChange>, StoreError> {
        let n = i64::from(self.world.params().chunk_cells);
        let touched: BTreeSet<[i32; 2]> = edit
            .nodes
            .iter()
            .map(|g| [g[0].div_euclid(n) as i32, g[1].div_euclid(n) as i32])
            .collect();
        let touched: Vec<[i32; 2]> = touched.into_iter().collect();
        self.layer_changes(&touched)
    }
}

impl HeightmapKind {
    /// The chunk rows that store edit chunks `touched` as the world holds them.
    fn layer_changes(&self, touched: &[[i32; 2]]) -> Result<Vec<ChunkChange>, StoreError> {
        let n = i64::from(self.world.params().chunk_cells);
        let mut changes = Vec::with_capacity(touched.len());
        for &c in touched {
            let key = ChunkKey::field2(c[0], c[1]);
            match self.world.edit_chunk(c) {
                None => changes.push((key, None)),
                Some(deltas) => {
                    let cells = n as u32;
                    let chunk = ChunkData::new(
                        ChunkEncoding::F32,
                        [cells, cells, 1],
                        deltas.to_vec(),
                        None,
                    )?;
                    changes.push((key, Some(encode_chunk(&chunk))));
                }
            }
        }
        Ok(changes)
    }
}

fn dirty_of(world: &HeightmapWorld, edit: &HeightEdit) -> Vec<[i32; 2]> {
    let set: BTreeSet<[i32; 2]> = world.affected(edit).into_iter().map(|(c, _)| c).collect();
    set.into_iter().collect()
}

/// Reads and checks the heightmap parameters of a world's metadata.
fn heightmap_params(location: &Path, meta: &WorldMeta) -> Result<HeightmapParams, StoreError> {
    let params: HeightmapParams =
        read_params(location, meta, HEIGHTMAP_KIND, HEIGHTMAP_FORMAT_VERSION)?;
    let valid: Result<(), WorldError> = params.validate();
    check_params(location, HEIGHTMAP_KIND, valid, meta.seed, params.seed)?;
    Ok(params)
}

/// Encodes a height edit for the stroke log: zstd over `"IHE1"`, the node
/// count (u32) and per node `gx`, `gz` (i64) and the before / after bits
/// (u32), all little-endian.
///
/// # Errors
///
/// [`StoreError::InvalidInput`] for an edit too large to log.
pub fn encode_height_edit(edit: &HeightEdit) -> Result<Vec<u8>, StoreError> {
    let n = edit.nodes.len();
    let size = 8 + n * DELTA_NODE_BYTES;
    if size > MAX_DELTA_BYTES || edit.before.len() != n || edit.after.len() != n {
        return Err(StoreError::input(
            "height edit",
            format!("{n} nodes (with parallel before/after lists) do not fit a stroke"),
        ));
    }
    let mut raw = Vec::with_capacity(size);
    raw.extend_from_slice(DELTA_MAGIC);
    raw.extend_from_slice(&(n as u32).to_le_bytes());
    for ((g, b), a) in edit.nodes.iter().zip(&edit.before).zip(&edit.after) {
        raw.extend_from_slice(&g[0].to_le_bytes());
        raw.extend_from_slice(&g[1].to_le_bytes());
        raw.extend_from_slice(&b.to_bits().to_le_bytes());
        raw.extend_from_slice(&a.to_bits().to_le_bytes());
    }
    crate::wire::compress_checked(&raw)
        .map_err(|e| StoreError::input("height edit", format!("compression failed: {e}")))
}

/// Decodes what [`encode_height_edit`] wrote, checking it.
///
/// # Errors
///
/// [`StoreError::CorruptData`] when it does not decode or the edit is
/// malformed.
pub fn decode_height_edit(payload: &[u8]) -> Result<HeightEdit, StoreError> {
    let bad = |reason: String| StoreError::CorruptData {
        what: "height stroke delta",
        reason,
    };
    // Streamed with a limit: nothing is allocated for what the frame does
    // not really hold, and decoding stops past the largest delta.
    let raw = crate::wire::decompress_at_most(payload, MAX_DELTA_BYTES)
        .map_err(|e| bad(format!("does not decompress: {e}")))?;
    if raw.len() < 8 || &raw[..4] != DELTA_MAGIC {
        return Err(bad("missing the IHE1 header".to_string()));
    }
    let n = u32::from_le_bytes([raw[4], raw[5], raw[6], raw[7]]) as usize;
    if raw.len() != 8 + n * DELTA_NODE_BYTES {
        return Err(bad(format!(
            "{} bytes for {n} nodes (expected {})",
            raw.len(),
            8 + n * DELTA_NODE_BYTES
        )));
    }
    let mut edit = HeightEdit::default();
    for rec in raw[8..].chunks_exact(DELTA_NODE_BYTES) {
        let i64_at = |o: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&rec[o..o + 8]);
            i64::from_le_bytes(b)
        };
        let f32_at = |o: usize| {
            f32::from_bits(u32::from_le_bytes([
                rec[o],
                rec[o + 1],
                rec[o + 2],
                rec[o + 3],
            ]))
        };
        edit.nodes.push([i64_at(0), i64_at(8)]);
        edit.before.push(f32_at(16));
        edit.after.push(f32_at(20));
    }
    edit.validate().map_err(|e| bad(e.to_string()))?;
    Ok(edit)
}
