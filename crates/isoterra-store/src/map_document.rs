//! A map world tied to its file: every acknowledged stroke is on disk.
//!
//! # What the file holds for a `map` world
//!
//! - metadata: kind [`MAP_KIND`], format version [`MAP_FORMAT_VERSION`],
//!   the seed and the [`MapParams`] as JSON;
//! - chunks (layer [`ChunkLayer::FIELD`], key `(cx, cz)` in `x, y`,
//!   `z = 0`, `lod = 0`): only the chunks whose nodes differ from what the
//!   preset generates, each holding every layer of the nodes the chunk owns
//!   (`[c*N, c*N + N)` on each axis, the last chunk of a row or column also
//!   the final node), encoded by [`encode_map_chunk`]. Generated layers are
//!   recomputed on open;
//! - the stroke log: one row per stroke (tool name, the stroke as JSON, the
//!   sparse per-layer [`MapEdit`] encoded by [`encode_map_edit`]), with the
//!   undo cursor.
//!
//! # Acknowledgement
//!
//! [`MapDocument::stroke`], [`undo`](MapDocument::undo) and
//! [`redo`](MapDocument::redo) change the world in memory, then commit the
//! stroke row (or cursor move) and the touched chunks in one transaction
//! before they return `Ok`. If the commit fails, the memory change is
//! reverted and the error returned. The same holds in any [`ChunkStore`]
//! ([`MapDocument::create_in`], [`MapDocument::open_in`]).

use std::collections::BTreeSet;
use std::path::Path;

use isoterra_field::{LayerMask, MapLayers, Splat};
use isoterra_world::{EditDirection, MapEdit, MapParams, MapStroke, MapWorld, WorldError};
use serde::Serialize;

use crate::document_core::{
    DocumentCore, EditKind, check_params, document_access, in_new_world, new_meta, read_params,
    to_json,
};
use crate::wire::{Reader, Writer, pack_body, unpack_body, unpack_body_within};
use crate::{ChunkChange, ChunkKey, ChunkLayer, ChunkStore, StoreError, WorldFile, WorldMeta};

/// The `kind` recorded in the metadata of map world files.
pub const MAP_KIND: &str = "map";
/// The newest `map` format version this build writes and reads.
pub const MAP_FORMAT_VERSION: u32 = 1;

/// Magic of a map chunk payload.
const CHUNK_MAGIC: &[u8; 4] = b"IMC1";
/// Magic of a map stroke delta.
const DELTA_MAGIC: &[u8; 4] = b"IMD1";
/// Bytes per node of a chunk body: five `f32` layers, the splat, pathing.
const CHUNK_NODE_BYTES: usize = 5 * 4 + 8 + 1;
/// Largest raw (decompressed) stroke delta, in bytes.
const MAX_DELTA_BYTES: u64 = 1 << 31;

/// What [`MapDocument::stroke`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapStrokeOutcome {
    /// The id of the recorded stroke; `None` when the stroke changed nothing
    /// (nothing is recorded then).
    pub id: Option<i64>,
    /// Number of distinct nodes changed in any layer.
    pub changed_nodes: usize,
    /// Chunks to remesh, with the layers that changed in each, in row-major
    /// chunk order (z, then x).
    pub dirty: Vec<([u32; 2], LayerMask)>,
}

/// A summary of a map document, for `info` output (serialises to JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MapInfo {
    /// The world kind (`"map"`).
    pub kind: String,
    /// The generator seed.
    pub seed: u64,
    /// The preset the map started from.
    pub preset: String,
    /// Cells along x.
    pub width_cells: u32,
    /// Cells along z.
    pub depth_cells: u32,
    /// Cells per chunk side.
    pub chunk_cells: u32,
    /// Chunks along x and z.
    pub chunks: [u32; 2],
    /// Chunks stored in the file (those that differ from the preset).
    pub chunks_stored: u64,
    /// Strokes in the log, done and undone.
    pub strokes_total: u64,
    /// The undo position: the number of strokes in effect.
    pub undo_position: u64,
    /// True when an undone stroke can be redone.
    pub redo_available: bool,
}

/// A map world and the store that holds it: a [`WorldFile`] unless
/// another [`ChunkStore`] is chosen.
///
/// Create or open one, edit it with [`stroke`](Self::stroke), step through
/// history with [`undo`](Self::undo) / [`redo`](Self::redo) (which survive
/// reopening), and read or mesh the world with [`world`](Self::world).
/// Every successful call is durable when it returns.
///
/// ```
/// use isoterra_store::MapDocument;
/// use isoterra_world::{MapBrush, MapParams, MapStroke, MapTool};
///
/// # fn main() -> Result<(), isoterra_store::StoreError> {
/// # let dir = std::env::temp_dir().join(format!("isoterra-map-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// # let path = dir.join("island.isoterra");
/// # let _ = std::fs::remove_file(&path);
/// let mut doc = MapDocument::create(&path, &MapParams::DEFAULT.with_size(128, 128).with_seed(3))?;
/// let generated = doc.content_hash();
/// let stroke = MapStroke::new(MapBrush::new(MapTool::CliffUp, 6.0), vec![[30.0, 30.0], [40.0, 34.0]]);
/// let outcome = doc.stroke(&stroke)?;
/// assert!(outcome.id.is_some());
/// doc.undo()?;
/// assert_eq!(doc.content_hash(), generated);
/// # drop(doc);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok(())
/// # }
/// ```
pub struct MapDocument<S: ChunkStore = WorldFile> {
    core: DocumentCore<S, MapKind>,
}

/// What the shared document core needs to know about map worlds.
#[derive(Debug)]
struct MapKind {
    world: MapWorld,
    /// What the preset gives, to tell which chunks must be stored.
    generated: MapLayers,
}

impl MapDocument<WorldFile> {
    /// Creates a new world file at `path` from the preset of `params` and
    /// records the metadata (no chunks). Refuses to overwrite an existing
    /// file.
    ///
    /// # Errors
    ///
    /// [`StoreError::World`] for invalid parameters, and the errors of
    /// [`WorldFile::create`]; nothing is created then.
    pub fn create(path: impl AsRef<Path>, params: &MapParams) -> Result<Self, StoreError> {
        Self::create_with(params, None, |meta| WorldFile::create(path.as_ref(), meta))
    }

    /// Creates a new world file at `path` holding `layers` (an imported
    /// map): the chunks that differ from the preset of `params` are stored
    /// right away. The history starts empty.
    ///
    /// # Errors
    ///
    /// [`StoreError::World`] for invalid parameters or layers that do not
    /// fit them, and the errors of [`WorldFile::create`].
    pub fn create_with_layers(
        path: impl AsRef<Path>,
        params: &MapParams,
        layers: MapLayers,
    ) -> Result<Self, StoreError> {
        Self::create_with(params, Some(layers), |meta| {
            WorldFile::create(path.as_ref(), meta)
        })
    }

    /// Opens a `map` world file: regenerates the preset and lays the stored
    /// chunks over it. Every chunk of the world starts dirty.
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

document_access!(MapDocument);

impl<S: ChunkStore> MapDocument<S> {
    /// Creates a new map world from the preset of `params` in `store`,
    /// which must hold no world yet (see [`ChunkStore::create_world`]);
    /// like [`create`](MapDocument::create) otherwise. On error the store
    /// is dropped.
    ///
    /// # Errors
    ///
    /// [`StoreError::World`] for invalid parameters,
    /// [`StoreError::AlreadyExists`] when the store holds a world.
    pub fn create_in(store: S, params: &MapParams) -> Result<Self, StoreError> {
        Self::create_with(params, None, |meta| in_new_world(store, meta, &[]))
    }

    /// As [`create_with_layers`](MapDocument::create_with_layers), in
    /// `store` (see [`create_in`](Self::create_in)).
    ///
    /// # Errors
    ///
    /// As [`create_in`](Self::create_in), and [`StoreError::World`] for
    /// layers that do not fit the parameters.
    pub fn create_with_layers_in(
        store: S,
        params: &MapParams,
        layers: MapLayers,
    ) -> Result<Self, StoreError> {
        Self::create_with(params, Some(layers), |meta| in_new_world(store, meta, &[]))
    }

    /// Opens the map world held in `store`; fails like
    /// [`open`](MapDocument::open).
    ///
    /// # Errors
    ///
    /// As [`open`](MapDocument::open), with the store's errors.
    pub fn open_in(store: S) -> Result<Self, StoreError> {
        let loc = store.location();
        let meta = store.meta()?;
        let params = map_params(loc, &meta)?;
        let generated = MapWorld::generate(&params)
            .map_err(|e| StoreError::corrupt(loc, format!("the stored parameters: {e}")))?;
        let mut layers = generated.clone();
        let layout = Layout::of(&params);
        let mut stored = BTreeSet::new();
        store.visit_chunks(ChunkLayer::FIELD, &mut |key, payload| {
            let chunk = layout.chunk_of_key(&key).ok_or_else(|| {
                StoreError::corrupt(
                    loc,
                    format!(
                        "stored chunk ({}, {}, {}, lod {}) is not a chunk of this map",
                        key.x, key.y, key.z, key.lod
                    ),
                )
            })?;
            let rect = layout.owned(chunk);
            decode_map_chunk(payload, &mut layers, rect).map_err(|e| {
                StoreError::corrupt(loc, format!("chunk ({}, {}): {e}", key.x, key.y))
            })?;
            stored.insert(key);
            Ok(())
        })?;
        let world = MapWorld::from_layers(&params, layers)
            .map_err(|e| StoreError::corrupt(loc, format!("the stored chunks: {e}")))?;
        let core = DocumentCore::opened(store, MapKind { world, generated }, stored)?;
        Ok(MapDocument { core })
    }

    /// Builds the world of `params` (from `layers` when given), then the
    /// store holding its metadata, then stores the chunks that differ from
    /// the preset.
    fn create_with(
        params: &MapParams,
        layers: Option<MapLayers>,
        store: impl FnOnce(&WorldMeta) -> Result<S, StoreError>,
    ) -> Result<Self, StoreError> {
        let (world, generated, imported) = match layers {
            None => {
                let world = MapWorld::new(params)?;
                let generated = world.layers().clone();
                (world, generated, false)
            }
            Some(layers) => (
                MapWorld::from_layers(params, layers)?,
                MapWorld::generate(params)?,
                true,
            ),
        };
        let meta = new_meta(
            MAP_KIND,
            MAP_FORMAT_VERSION,
            params.seed,
            "map parameters",
            params,
        )?;
        let mut core = DocumentCore::created(store(&meta)?, MapKind { world, generated });
        if imported {
            let [cw, cd] = core.kind.world.chunk_count();
            let all: BTreeSet<[u32; 2]> = (0..cd)
                .flat_map(|cz| (0..cw).map(move |cx| [cx, cz]))
                .collect();
            let changes = core.kind.chunk_rows(&all)?;
            core.put_chunks(&changes)?;
        }
        Ok(MapDocument { core })
    }

    /// The world in memory.
    pub fn world(&self) -> &MapWorld {
        &self.core.kind.world
    }

    /// The world in memory, for dirty tracking ([`MapWorld::take_dirty`]).
    /// Edit through [`stroke`](Self::stroke): edits applied here directly
    /// are not recorded in the store.
    pub fn world_mut(&mut self) -> &mut MapWorld {
        &mut self.core.kind.world
    }

    /// Applies a stroke to the world in memory only, without recording it:
    /// a live preview of a stroke still being drawn. Returns the edit that
    /// [`revert_preview`](Self::revert_preview) takes back. The store does
    /// not change; take every preview back before the next stroke, undo or
    /// redo, which record what the world holds.
    ///
    /// # Errors
    ///
    /// [`StoreError::World`] for an invalid stroke; nothing changes then.
    pub fn preview(&mut self, stroke: &MapStroke) -> Result<MapEdit, StoreError> {
        Ok(self.core.kind.world.apply_stroke(stroke)?)
    }

    /// Takes back an edit returned by [`preview`](Self::preview). Previews
    /// must be taken back in the reverse order of their application.
    ///
    /// # Errors
    ///
    /// [`StoreError::World`] when the edit does not fit this world; nothing
    /// changes then.
    pub fn revert_preview(&mut self, edit: &MapEdit) -> Result<(), StoreError> {
        Ok(self
            .core
            .kind
            .world
            .apply_edit(edit, isoterra_world::EditDirection::Backward)?)
    }

    /// The chunks touched since the last call (see [`MapWorld::take_dirty`]).
    pub fn take_dirty(&mut self) -> Vec<([u32; 2], LayerMask)> {
        self.world_mut().take_dirty()
    }

    /// The world's parameters.
    pub fn params(&self) -> &MapParams {
        self.world().params()
    }

    /// Applies a stroke and records it.
    ///
    /// An invalid stroke is a [`StoreError::World`] error and changes
    /// nothing. A stroke that changes no node records nothing (`id: None`).
    /// Otherwise the stroke, its sparse edit and every chunk owning a
    /// changed node are committed in one transaction before this returns
    /// (chunks that came back to the preset's values are deleted). A new
    /// stroke drops the redo tail. If the commit fails, the edit is reverted
    /// in memory and the error returned.
    pub fn stroke(&mut self, stroke: &MapStroke) -> Result<MapStrokeOutcome, StoreError> {
        self.core.check_current()?;
        let edit = self.world().stroke_edit(stroke)?;
        if edit.is_empty() {
            return Ok(MapStrokeOutcome {
                id: None,
                changed_nodes: 0,
                dirty: Vec::new(),
            });
        }
        let params = to_json("map stroke", stroke)?;
        let id = self
            .core
            .apply_and_record(&edit, stroke.brush.tool.name(), params)?;
        Ok(MapStrokeOutcome {
            id: Some(id),
            changed_nodes: edit.changed_nodes(),
            dirty: self.world().affected(&edit),
        })
    }

    /// A hash of the current contents ([`MapWorld::content_hash`]): equal
    /// layers give equal hashes whatever the history.
    pub fn content_hash(&self) -> String {
        self.world().content_hash()
    }

    /// A summary, as this handle last wrote or read it (no store access).
    pub fn info(&self) -> MapInfo {
        let p = self.params();
        let counts = self.core.counts();
        MapInfo {
            kind: MAP_KIND.to_string(),
            seed: p.seed,
            preset: p.preset.name().to_string(),
            width_cells: p.width_cells,
            depth_cells: p.depth_cells,
            chunk_cells: p.chunk_cells,
            chunks: p.chunk_count(),
            chunks_stored: self.core.stored().len() as u64,
            strokes_total: counts.total(),
            undo_position: counts.done,
            redo_available: counts.undone > 0,
        }
    }
}

impl EditKind for MapKind {
    type Edit = MapEdit;

    fn encode(&self, edit: &MapEdit) -> Result<Vec<u8>, StoreError> {
        encode_map_edit(edit)
    }

    fn decode(&self, delta: &[u8]) -> Result<MapEdit, StoreError> {
        // Every layer of every node of the map, before and after, at most
        // eight bytes a value, plus headers.
        let p = self.world.params();
        let nodes = (u64::from(p.width_cells) + 1) * (u64::from(p.depth_cells) + 1);
        let max = nodes
            .saturating_mul(16 * 16)
            .saturating_add(1 << 16)
            .min(MAX_DELTA_BYTES);
        decode_map_edit_within(delta, usize::try_from(max).unwrap_or(usize::MAX))
    }

    fn apply(&mut self, edit: &MapEdit, dir: EditDirection) -> Result<(), StoreError> {
        Ok(self.world.apply_edit(edit, dir)?)
    }

    fn apply_logged(
        &mut self,
        edit: &MapEdit,
        dir: EditDirection,
        location: &Path,
        id: i64,
    ) -> Result<bool, StoreError> {
        match self.world.apply_edit(edit, dir) {
            Ok(()) => Ok(true),
            Err(WorldError::Mismatch { .. }) => Ok(false),
            Err(other) => Err(StoreError::corrupt(
                location,
                format!("stroke {id}: {other}"),
            )),
        }
    }

    /// The chunk rows to write for the chunks owning the edit's nodes.
    fn chunk_changes(&self, edit: &MapEdit) -> Result<Vec<ChunkChange>, StoreError> {
        let layout = Layout::of(self.world.params());
        let stride = self.world.params().width_cells + 1;
        let mut touched = BTreeSet::new();
        for layer in isoterra_field::MapLayer::ALL {
            for &i in edit.nodes(layer) {
                touched.insert(layout.owner(i % stride, i / stride));
            }
        }
        self.chunk_rows(&touched)
    }
}

impl MapKind {
    /// For each chunk: its payload when it differs from the preset, or a
    /// deletion.
    fn chunk_rows(&self, chunks: &BTreeSet<[u32; 2]>) -> Result<Vec<ChunkChange>, StoreError> {
        let layout = Layout::of(self.world.params());
        let layers = self.world.layers();
        let mut out = Vec::with_capacity(chunks.len());
        for &c in chunks {
            let rect = layout.owned(c);
            let key = ChunkKey::field2(c[0] as i32, c[1] as i32);
            if rect_equal(layers, &self.generated, rect) {
                out.push((key, None));
            } else {
                out.push((key, Some(encode_map_chunk(layers, rect)?)));
            }
        }
        Ok(out)
    }
}

/// Which nodes each chunk owns.
struct Layout {
    n: u32,
    nodes: [u32; 2],
    chunks: [u32; 2],
}

impl Layout {
    fn of(p: &MapParams) -> Self {
        Layout {
            n: p.chunk_cells,
            nodes: [p.width_cells + 1, p.depth_cells + 1],
            chunks: p.chunk_count(),
        }
    }

    /// The node rectangle `[x0, z0, x1, z1]` (half-open) chunk `c` owns.
    fn owned(&self, c: [u32; 2]) -> [u32; 4] {
        let end = |k: usize| {
            if c[k] + 1 == self.chunks[k] {
                self.nodes[k]
            } else {
                c[k] * self.n + self.n
            }
        };
        [c[0] * self.n, c[1] * self.n, end(0), end(1)]
    }

    /// The chunk owning node `(x, z)`.
    fn owner(&self, x: u32, z: u32) -> [u32; 2] {
        [
            (x / self.n).min(self.chunks[0] - 1),
            (z / self.n).min(self.chunks[1] - 1),
        ]
    }

    fn chunk_of_key(&self, key: &ChunkKey) -> Option<[u32; 2]> {
        let ok = key.z == 0
            && key.lod == 0
            && (0..self.chunks[0] as i64).contains(&i64::from(key.x))
            && (0..self.chunks[1] as i64).contains(&i64::from(key.y));
        ok.then_some([key.x as u32, key.y as u32])
    }
}

/// Whether two maps hold the same bits in a node rectangle.
fn rect_equal(a: &MapLayers, b: &MapLayers, rect: [u32; 4]) -> bool {
    let stride = a.width_cells() as usize + 1;
    let [x0, z0, x1, z1] = rect.map(|v| v as usize);
    let same_f = |u: &[f32], v: &[f32], s: usize, e: usize| {
        u[s..e]
            .iter()
            .zip(&v[s..e])
            .all(|(p, q)| p.to_bits() == q.to_bits())
    };
    (z0..z1).all(|z| {
        let (s, e) = (z * stride + x0, z * stride + x1);
        same_f(&a.ground, &b.ground, s, e)
            && same_f(&a.level, &b.level, s, e)
            && same_f(&a.softness, &b.softness, s, e)
            && same_f(&a.height, &b.height, s, e)
            && same_f(&a.water, &b.water, s, e)
            && a.splat[s..e] == b.splat[s..e]
            && a.pathing[s..e] == b.pathing[s..e]
    })
}

/// Encodes every layer of the node rectangle `rect` (`[x0, z0, x1, z1]`,
/// half-open) of a map: `"IMC1"`, the rectangle's width and depth in nodes
/// (u32), a flags byte, the raw body length (u32), then the body (zstd when
/// the flag says so). The raw body holds, row-major, the byte planes of the
/// ground, level, softness, height and water `f32` bits, the eight splat
/// bytes as planes, then the pathing bytes.
///
/// # Errors
///
/// [`StoreError::InvalidInput`] for a rectangle outside the map.
pub fn encode_map_chunk(layers: &MapLayers, rect: [u32; 4]) -> Result<Vec<u8>, StoreError> {
    let [x0, z0, x1, z1] = rect;
    let [nx, nz] = layers.nodes();
    if x0 >= x1 || z0 >= z1 || x1 > nx || z1 > nz {
        return Err(StoreError::input(
            "map chunk",
            format!("node rectangle {rect:?} is empty or outside the map of {nx} x {nz} nodes"),
        ));
    }
    let stride = nx as usize;
    let idx: Vec<usize> = (z0..z1)
        .flat_map(|z| (x0..x1).map(move |x| z as usize * stride + x as usize))
        .collect();
    let n = idx.len();
    let mut body = Writer::with_capacity(n * CHUNK_NODE_BYTES);
    for values in [
        &layers.ground,
        &layers.level,
        &layers.softness,
        &layers.height,
        &layers.water,
    ] {
        body.f32_planes(idx.iter().map(|&i| values[i]));
    }
    for plane in 0..8 {
        body.buf
            .extend(idx.iter().map(|&i| layers.splat[i].to_bytes()[plane]));
    }
    body.buf.extend(idx.iter().map(|&i| layers.pathing[i]));
    let raw_len = body.buf.len() as u32;
    let (packed, flags) = pack_body(body.buf);
    let mut out = Writer::with_capacity(17 + packed.len());
    out.bytes(CHUNK_MAGIC);
    out.u32(x1 - x0);
    out.u32(z1 - z0);
    out.u8(flags);
    out.u32(raw_len);
    out.bytes(&packed);
    Ok(out.buf)
}

/// Decodes what [`encode_map_chunk`] wrote into the node rectangle `rect`
/// of `layers`; the payload's size must match the rectangle. Values are not
/// range-checked here (check the layers afterwards); on error `layers` is
/// unchanged.
///
/// # Errors
///
/// [`StoreError::CorruptData`] when the payload does not decode or does
/// not fit the rectangle.
pub fn decode_map_chunk(
    payload: &[u8],
    layers: &mut MapLayers,
    rect: [u32; 4],
) -> Result<(), StoreError> {
    let bad = |reason: String| StoreError::data("map chunk", reason);
    let [x0, z0, x1, z1] = rect;
    let [nx, nz] = layers.nodes();
    if x0 >= x1 || z0 >= z1 || x1 > nx || z1 > nz {
        return Err(bad(format!("node rectangle {rect:?} is outside the map")));
    }
    let mut r = Reader::new(payload);
    if r.take(4) != Some(CHUNK_MAGIC.as_slice()) {
        return Err(bad("missing the IMC1 header".to_string()));
    }
    let short = || bad("the header is truncated".to_string());
    let w = r.u32().ok_or_else(short)?;
    let d = r.u32().ok_or_else(short)?;
    let flags = r.u8().ok_or_else(short)?;
    let raw_len = r.u32().ok_or_else(short)? as usize;
    if [w, d] != [x1 - x0, z1 - z0] {
        return Err(bad(format!(
            "holds {w} x {d} nodes, the chunk owns {} x {}",
            x1 - x0,
            z1 - z0
        )));
    }
    let n = w as usize * d as usize;
    if raw_len != n * CHUNK_NODE_BYTES {
        return Err(bad(format!(
            "body of {raw_len} bytes for {n} nodes (expected {})",
            n * CHUNK_NODE_BYTES
        )));
    }
    let rest = r.take(r.remaining()).unwrap_or_default();
    let raw = unpack_body(rest, flags, raw_len, "map chunk")?;
    let mut body = Reader::new(&raw);
    let mut planes = Vec::with_capacity(5);
    for _ in 0..5 {
        planes.push(body.f32_planes(n).ok_or_else(short)?);
    }
    let splat_bytes = body.take(8 * n).ok_or_else(short)?;
    let pathing = body.take(n).ok_or_else(short)?;
    let stride = nx as usize;
    let mut k = 0;
    for z in z0..z1 {
        for x in x0..x1 {
            let i = z as usize * stride + x as usize;
            layers.ground[i] = planes[0][k];
            layers.level[i] = planes[1][k];
            layers.softness[i] = planes[2][k];
            layers.height[i] = planes[3][k];
            layers.water[i] = planes[4][k];
            layers.splat[i] = Splat::from_bytes(std::array::from_fn(|p| splat_bytes[p * n + k]));
            layers.pathing[i] = pathing[k];
            k += 1;
        }
    }
    Ok(())
}

/// Encodes a map edit for the stroke log: `"IMD1"`, a flags byte, the raw
/// length (u32), then [`MapEdit::to_bytes`] (zstd when the flag says so).
///
/// # Errors
///
/// [`StoreError::InvalidInput`] for an edit too large to log (over 2 GiB).
pub fn encode_map_edit(edit: &MapEdit) -> Result<Vec<u8>, StoreError> {
    let raw = edit.to_bytes();
    if raw.len() as u64 > MAX_DELTA_BYTES {
        return Err(StoreError::input(
            "map edit",
            format!("{} bytes do not fit a stroke", raw.len()),
        ));
    }
    let raw_len = raw.len() as u32;
    let (packed, flags) = pack_body(raw);
    let mut out = Writer::with_capacity(9 + packed.len());
    out.bytes(DELTA_MAGIC);
    out.u8(flags);
    out.u32(raw_len);
    out.bytes(&packed);
    Ok(out.buf)
}

/// Decodes what [`encode_map_edit`] wrote, checking the edit.
///
/// # Errors
///
/// [`StoreError::CorruptData`] when it does not decode or the edit is
/// malformed.
pub fn decode_map_edit(payload: &[u8]) -> Result<MapEdit, StoreError> {
    decode_map_edit_within(payload, MAX_DELTA_BYTES as usize)
}

/// As [`decode_map_edit`], refusing a header that declares more than `max`
/// bytes before decoding anything.
fn decode_map_edit_within(payload: &[u8], max: usize) -> Result<MapEdit, StoreError> {
    let bad = |reason: String| StoreError::data("map stroke delta", reason);
    let mut r = Reader::new(payload);
    if r.take(4) != Some(DELTA_MAGIC.as_slice()) {
        return Err(bad("missing the IMD1 header".to_string()));
    }
    let flags = r.u8().ok_or_else(|| bad("truncated header".to_string()))?;
    let raw_len = r.u32().ok_or_else(|| bad("truncated header".to_string()))? as usize;
    let rest = r.take(r.remaining()).unwrap_or_default();
    let raw = unpack_body_within(rest, flags, raw_len, max, "map stroke delta")?;
    MapEdit::from_bytes(&raw).map_err(|e| bad(e.to_string()))
}

/// Reads and checks the map parameters of a world's metadata.
fn map_params(location: &Path, meta: &WorldMeta) -> Result<MapParams, StoreError> {
    let params: MapParams = read_params(location, meta, MAP_KIND, MAP_FORMAT_VERSION)?;
    let valid = params.validate();
    check_params(location, MAP_KIND, valid, meta.seed, params.seed)?;
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_owns_every_node_once() {
        let p = MapParams::DEFAULT.with_size(40, 33).with_chunk_cells(16);
        let l = Layout::of(&p);
        let mut owned = vec![0u8; 41 * 34];
        for cz in 0..3 {
            for cx in 0..3 {
                let [x0, z0, x1, z1] = l.owned([cx, cz]);
                for z in z0..z1 {
                    for x in x0..x1 {
                        owned[(z * 41 + x) as usize] += 1;
                        assert_eq!(l.owner(x, z), [cx, cz]);
                    }
                }
            }
        }
        assert!(owned.iter().all(|&c| c == 1));
        assert!(l.chunk_of_key(&ChunkKey::field2(3, 0)).is_none());
        assert!(l.chunk_of_key(&ChunkKey::field2(-1, 0)).is_none());
    }

    #[test]
    fn chunks_round_trip_and_reject_damage() {
        let p = MapParams::DEFAULT.with_size(40, 33).with_chunk_cells(16);
        let src = MapWorld::generate(&p.with_preset(isoterra_world::MapPreset::Plateaus)).unwrap();
        let rect = [16, 16, 32, 34];
        let payload = encode_map_chunk(&src, rect).unwrap();
        let mut dst = MapLayers::new(40, 33).unwrap();
        decode_map_chunk(&payload, &mut dst, rect).unwrap();
        assert!(rect_equal(&src, &dst, rect));
        assert!(!rect_equal(&src, &dst, [0, 0, 16, 16]));
        assert!(decode_map_chunk(&payload, &mut dst, [0, 0, 16, 16]).is_err());
        for cut in 0..payload.len() {
            assert!(decode_map_chunk(&payload[..cut], &mut dst, rect).is_err());
        }
        assert!(encode_map_chunk(&src, [0, 0, 42, 1]).is_err());
    }
}
