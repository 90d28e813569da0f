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
//! change is reverted and the error returned.

use std::collections::BTreeSet;
use std::path::Path;

use isoterra_world::{
    EditDirection, HeightBrush, HeightEdit, HeightmapParams, HeightmapWorld, WorldError,
};
use serde::Serialize;

use crate::{
    ChunkChange, ChunkData, ChunkEncoding, ChunkKey, ChunkLayer, NewStroke, StoreError,
    StrokeCounts, StrokeRecord, WorldFile, WorldMeta, decode_chunk, encode_chunk,
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
    /// The generator's analytic height range `[min, max]` (the fixed range
    /// of 16-bit exports).
    pub height_range: [f32; 2],
    /// Edit chunks stored in the file.
    pub chunks_stored: u64,
    /// Strokes in the log, done and undone.
    pub strokes_total: u64,
    /// The undo position: the number of strokes in effect.
    pub undo_position: u64,
    /// True when an undone stroke can be redone.
    pub redo_available: bool,
}

/// A heightmap world and the file that holds it.
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
#[derive(Debug)]
pub struct HeightmapDocument {
    file: WorldFile,
    world: HeightmapWorld,
    stored: BTreeSet<[i32; 2]>,
    counts: StrokeCounts,
}

impl HeightmapDocument {
    /// Creates a new world file at `path`: validates `params` and records
    /// the metadata (no chunks). Refuses to overwrite an existing file.
    ///
    /// # Errors
    ///
    /// [`StoreError::World`] for invalid parameters, and the errors of
    /// [`WorldFile::create`]; nothing is created then.
    pub fn create(path: impl AsRef<Path>, params: &HeightmapParams) -> Result<Self, StoreError> {
        let world = HeightmapWorld::new(params)?;
        let meta = WorldMeta {
            kind: HEIGHTMAP_KIND.to_string(),
            format_version: HEIGHTMAP_FORMAT_VERSION,
            seed: params.seed,
            params: serde_json::to_value(params).map_err(|source| StoreError::Json {
                what: "heightmap parameters",
                source,
            })?,
        };
        let file = WorldFile::create(path.as_ref(), &meta)?;
        Ok(HeightmapDocument {
            file,
            world,
            stored: BTreeSet::new(),
            counts: StrokeCounts::default(),
        })
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
        let path = path.as_ref();
        let file = WorldFile::open(path)?;
        let meta = file.meta()?;
        let params = heightmap_params(path, &meta)?;
        let mut world = HeightmapWorld::new(&params)
            .map_err(|e| StoreError::corrupt(path, format!("the stored parameters: {e}")))?;
        let n = params.chunk_cells;
        let mut stored = BTreeSet::new();
        file.for_each_chunk(ChunkLayer::FIELD, |key, payload| {
            if key.z != 0 || key.lod != 0 {
                return Err(StoreError::corrupt(
                    path,
                    format!(
                        "stored chunk ({}, {}, {}, lod {}) is not a heightmap edit chunk",
                        key.x, key.y, key.z, key.lod
                    ),
                ));
            }
            let chunk = decode_chunk(payload).map_err(|e| {
                StoreError::corrupt(path, format!("chunk ({}, {}): {e}", key.x, key.y))
            })?;
            if chunk.dims() != [n, n, 1] {
                return Err(StoreError::corrupt(
                    path,
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
                StoreError::corrupt(path, format!("chunk ({}, {}): {e}", key.x, key.y))
            })?;
            stored.insert([key.x, key.y]);
            Ok(())
        })?;
        world.take_dirty();
        let counts = file.stroke_counts()?;
        Ok(HeightmapDocument {
            file,
            world,
            stored,
            counts,
        })
    }

    /// The world in memory.
    pub fn world(&self) -> &HeightmapWorld {
        &self.world
    }

    /// The world in memory, for meshing and streaming (mesh caches, worker
    /// requests, dirty sets). Sculpt through [`stroke`](Self::stroke): edits
    /// applied here directly are not recorded in the file.
    pub fn world_mut(&mut self) -> &mut HeightmapWorld {
        &mut self.world
    }

    /// The underlying file, for queries.
    pub fn file(&self) -> &WorldFile {
        &self.file
    }

    /// The path of the file.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The world's parameters.
    pub fn params(&self) -> &HeightmapParams {
        self.world.params()
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
        self.file.check_current()?;
        let params = serde_json::to_value(brush).map_err(|source| StoreError::Json {
            what: "height brush",
            source,
        })?;
        let edit = self.world.brush_edit(brush)?;
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
        self.file.check_current()?;
        let params = serde_json::to_value(stamps).map_err(|source| StoreError::Json {
            what: "height brush stamps",
            source,
        })?;
        let mut edits: Vec<HeightEdit> = Vec::with_capacity(stamps.len());
        let mut failed = None;
        for brush in stamps {
            match self.world.apply_brush(brush) {
                Ok(e) => edits.push(e),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        // Every node once: its delta before the first stamp, and now.
        let mut first: std::collections::BTreeMap<[i64; 2], f32> = Default::default();
        for e in &edits {
            for (k, g) in e.nodes.iter().enumerate() {
                first.entry([g[1], g[0]]).or_insert(e.before[k]);
            }
        }
        // Keyed by (z, x), the order an edit lists its nodes in.
        let mut merged = HeightEdit::default();
        for ([gz, gx], before) in first {
            let g = [gx, gz];
            let after = self.world.delta(g);
            if after.to_bits() != before.to_bits() {
                merged.nodes.push(g);
                merged.before.push(before);
                merged.after.push(after);
            }
        }
        for done in edits.iter().rev() {
            self.revert(done, EditDirection::Backward);
        }
        if let Some(e) = failed {
            return Err(e.into());
        }
        let tool = match stamps.first() {
            Some(first) if stamps.iter().all(|b| b.tool == first.tool) => first.tool.name(),
            _ => "mixed",
        };
        self.record(merged, tool, params)
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
        self.file.check_current()?;
        let edit = self.world.set_heights_edit(first, dims, heights)?;
        let params = serde_json::json!({ "first": first, "dims": dims });
        self.record(edit, "import", params)
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
        let delta = encode_height_edit(&edit)?;
        self.world.apply_edit(&edit, EditDirection::Forward)?;
        let committed = self.chunk_changes(&edit).and_then(|changes| {
            let stroke = NewStroke {
                tool: tool.to_string(),
                params,
                delta,
            };
            let id = self.file.commit_stroke(&stroke, &changes)?;
            Ok((id, changes))
        });
        match committed {
            Ok((id, changes)) => {
                self.note_stored(&changes);
                self.counts = StrokeCounts {
                    done: self.counts.done + 1,
                    undone: 0,
                };
                Ok(HeightStrokeOutcome {
                    id: Some(id),
                    changed_nodes: edit.len(),
                    dirty_chunks: dirty_of(&self.world, &edit),
                })
            }
            Err(e) => {
                self.revert(&edit, EditDirection::Backward);
                Err(e)
            }
        }
    }

    /// Undoes the last done stroke; returns its id, or `None` when there is
    /// nothing to undo. The world and the file change together, or not at all.
    pub fn undo(&mut self) -> Result<Option<i64>, StoreError> {
        self.file.check_current()?;
        let Some(rec) = self.file.last_done_stroke()? else {
            return Ok(None);
        };
        self.step(&rec, EditDirection::Backward)?;
        Ok(Some(rec.id))
    }

    /// Redoes the first undone stroke; returns its id, or `None` when there
    /// is nothing to redo.
    pub fn redo(&mut self) -> Result<Option<i64>, StoreError> {
        self.file.check_current()?;
        let Some(rec) = self.file.first_undone_stroke()? else {
            return Ok(None);
        };
        self.step(&rec, EditDirection::Forward)?;
        Ok(Some(rec.id))
    }

    fn step(&mut self, rec: &StrokeRecord, dir: EditDirection) -> Result<(), StoreError> {
        let edit = decode_height_edit(&rec.delta).map_err(|e| {
            StoreError::corrupt(self.file.path(), format!("stroke {}: {e}", rec.id))
        })?;
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
            return Err(StoreError::history_mismatch(self.file.path(), rec.id));
        }
        self.world.apply_edit(&edit, dir)?;
        let committed = self.chunk_changes(&edit).and_then(|changes| {
            self.file.mark_step(rec.id, dir, &changes)?;
            Ok(changes)
        });
        match committed {
            Ok(changes) => {
                self.note_stored(&changes);
                self.counts.record_step(dir);
                Ok(())
            }
            Err(e) => {
                self.revert(&edit, dir.reversed());
                Err(e)
            }
        }
    }

    fn revert(&mut self, edit: &HeightEdit, dir: EditDirection) {
        let reverted = self.world.apply_edit(edit, dir);
        debug_assert!(
            reverted.is_ok(),
            "reverting an applied edit failed: {reverted:?}"
        );
    }

    fn note_stored(&mut self, changes: &[ChunkChange]) {
        for (key, payload) in changes {
            let c = [key.x, key.y];
            if payload.is_some() {
                self.stored.insert(c);
            } else {
                self.stored.remove(&c);
            }
        }
    }

    /// The chunk rows to write for the edit chunks owning the edit's nodes.
    fn chunk_changes(&self, edit: &HeightEdit) -> Result<Vec<ChunkChange>, StoreError> {
        let n = i64::from(self.world.params().chunk_cells);
        let touched: BTreeSet<[i32; 2]> = edit
            .nodes
            .iter()
            .map(|g| [g[0].div_euclid(n) as i32, g[1].div_euclid(n) as i32])
            .collect();
        let mut changes = Vec::with_capacity(touched.len());
        for c in touched {
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

    /// A hash of the current contents: 16 hex digits of FNV-1a 64 over
    /// `"ITHM"`, the seed, the chunk size and every edit chunk (sorted:
    /// `cx`, `cz`, then each delta's `f32` bits, little-endian). Equal
    /// contents give equal hashes whatever the history.
    pub fn content_hash(&self) -> String {
        let mut h = Fnv(0xcbf2_9ce4_8422_2325);
        h.write(b"ITHM");
        h.write(&self.world.params().seed.to_le_bytes());
        h.write(&self.world.params().chunk_cells.to_le_bytes());
        for c in self.world.edited_chunks() {
            h.write(&c[0].to_le_bytes());
            h.write(&c[1].to_le_bytes());
            for d in self.world.edit_chunk(c).unwrap_or_default() {
                h.write(&d.to_bits().to_le_bytes());
            }
        }
        format!("{:016x}", h.0)
    }

    /// A summary, as this handle last wrote or read it (no file access).
    pub fn info(&self) -> HeightmapInfo {
        let p = self.world.params();
        HeightmapInfo {
            kind: HEIGHTMAP_KIND.to_string(),
            seed: p.seed,
            chunk_cells: p.chunk_cells,
            cell_size: p.cell_size,
            lod_count: p.lod_count,
            height_range: self.world.generated_range(),
            chunks_stored: self.stored.len() as u64,
            strokes_total: self.counts.total(),
            undo_position: self.counts.done,
            redo_available: self.counts.undone > 0,
        }
    }

    /// Closes the file, reporting any error met while doing so.
    pub fn close(self) -> Result<(), StoreError> {
        self.file.close()
    }
}

fn dirty_of(world: &HeightmapWorld, edit: &HeightEdit) -> Vec<[i32; 2]> {
    let set: BTreeSet<[i32; 2]> = world.affected(edit).into_iter().map(|(c, _)| c).collect();
    set.into_iter().collect()
}

struct Fnv(u64);

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// Reads and checks the heightmap parameters of a file's metadata.
fn heightmap_params(path: &Path, meta: &WorldMeta) -> Result<HeightmapParams, StoreError> {
    if meta.kind != HEIGHTMAP_KIND {
        return Err(StoreError::WrongKind {
            path: path.to_path_buf(),
            expected: HEIGHTMAP_KIND.to_string(),
            found: meta.kind.clone(),
        });
    }
    if meta.format_version > HEIGHTMAP_FORMAT_VERSION {
        return Err(StoreError::NewerFormat {
            path: path.to_path_buf(),
            kind: meta.kind.clone(),
            found: meta.format_version,
            supported: HEIGHTMAP_FORMAT_VERSION,
        });
    }
    let params: HeightmapParams = serde_json::from_value(meta.params.clone())
        .map_err(|e| StoreError::corrupt(path, format!("the heightmap parameters: {e}")))?;
    params.validate().map_err(|e: WorldError| {
        StoreError::corrupt(
            path,
            format!("the stored heightmap parameters are invalid: {e}"),
        )
    })?;
    if params.seed != meta.seed {
        return Err(StoreError::corrupt(
            path,
            format!(
                "the seed in the metadata ({}) differs from the parameters' seed ({})",
                meta.seed, params.seed
            ),
        ));
    }
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
    zstd::bulk::compress(&raw, 3)
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
    let raw = zstd::bulk::decompress(payload, MAX_DELTA_BYTES)
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
