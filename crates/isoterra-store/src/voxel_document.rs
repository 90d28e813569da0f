//! A voxel world tied to its file: every acknowledged stroke is on disk.
//!
//! # What the file holds for a `voxel` world
//!
//! - metadata: kind `"voxel"`, format version [`VOXEL_FORMAT_VERSION`], the
//!   generator seed and the [`VoxelParams`] as JSON;
//! - chunks (layer [`ChunkLayer::FIELD`], key `(x, y, z)` = chunk coordinate,
//!   `lod = 0`): only the chunks whose nodes differ from what the generator
//!   gives, each an exact `f32` chunk of `N x N x N` owned nodes with material
//!   ids (chunk `c` owns nodes `[c*N, c*N + N)` per axis). Generated chunks
//!   are recomputed on demand.
//! - the stroke log: one row per stroke (tool name, the [`VoxelBrush`] as
//!   JSON, the sparse 3D delta, see [`encode_delta3`]), with the undo cursor.
//!
//! [`VoxelDocument::stroke`], [`undo`](VoxelDocument::undo) and
//! [`redo`](VoxelDocument::redo) change the world in memory, then commit the
//! stroke row (or cursor move) and the touched chunks in one transaction
//! before they return `Ok`; when the commit fails the memory change is
//! reverted.
//!
//! The same holds for any [`ChunkStore`]: [`VoxelDocument::create_in`] and
//! [`VoxelDocument::open_in`] put the world in a store of the caller's
//! choice (a [`MemoryStore`](crate::MemoryStore), say) instead of a file.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use isoterra_world::{
    EditDirection, RebuildReport, VoxelBrush, VoxelEdit, VoxelParams, VoxelWorld, WorldError,
};
use serde::Serialize;

use crate::document_core::{
    DocumentCore, EditKind, document_access, in_new_world, new_meta, read_params, stamps_tool,
    to_json,
};
use crate::hash::Fnv1a64;
use crate::wire::{Reader, Writer, pack_body, unpack_body_within};
use crate::{
    ChunkChange, ChunkData, ChunkEncoding, ChunkKey, ChunkLayer, ChunkStore, StoreError, WorldFile,
    decode_chunk, encode_chunk,
};

/// The `kind` recorded in the metadata of voxel world files.
pub const VOXEL_KIND: &str = "voxel";
/// The newest `voxel` format version this build writes and reads.
pub const VOXEL_FORMAT_VERSION: u32 = 1;

const DELTA_MAGIC: &[u8; 4] = b"ITD3";
const DELTA_VERSION: u8 = 1;
const DELTA_HEADER_LEN: usize = 12;
const DELTA_WHAT: &str = "voxel stroke delta";
/// Bytes per node in a delta body: three i64 coordinates, two f32, two ids.
const DELTA_NODE_BYTES: usize = 34;
/// The most nodes one voxel stroke may change (its delta then decodes to
/// at most about 570 MB).
pub const MAX_STROKE_NODES: usize = 1 << 24;

fn too_many_nodes() -> StoreError {
    StoreError::input(
        "voxel stroke",
        format!(
            "it would change more than {MAX_STROKE_NODES} nodes, the most one stroke may record: end it and draw on with a new stroke"
        ),
    )
}

/// Encodes a 3D edit as a stroke delta:
///
/// ```text
/// offset size  field
///      0    4  magic b"ITD3"
///      4    1  codec version (1)
///      5    1  flags: bit 1 = body is zstd-compressed
///      6    2  reserved, 0
///      8    4  body length before compression (u32, little-endian)
///     12    …  body
/// body:
///   varint count
///   count x (x, y, z)             i64 little-endian each
///   before values, after values   f32 bits, little-endian, as byte planes
///   material ids before, after    count bytes each
/// ```
///
/// The round trip is exact (bit for bit).
///
/// # Errors
///
/// [`StoreError::InvalidInput`] when the edit is malformed
/// ([`VoxelEdit::validate`]) or too large for one delta.
pub fn encode_delta3(edit: &VoxelEdit) -> Result<Vec<u8>, StoreError> {
    edit.validate()
        .map_err(|e| StoreError::input("voxel edit", e.to_string()))?;
    let n = edit.nodes.len();
    if n > MAX_STROKE_NODES {
        return Err(too_many_nodes());
    }
    // The body's length: the count, then 34 bytes a node.
    let mut count = Writer::with_capacity(10);
    count.varint(n as u64);
    let raw_len = count.buf.len() as u64 + (n as u64) * DELTA_NODE_BYTES as u64;
    let raw_len = u32::try_from(raw_len)
        .map_err(|_| StoreError::input("voxel edit", "too many nodes for one stroke"))?;
    // A large body is compressed as it is written, never held whole (a
    // stroke of millions of nodes has a body of a hundred MB and more).
    if raw_len as usize >= STREAM_BODY_BYTES {
        match encode_delta3_streamed(edit, &count.buf, raw_len) {
            Ok(out) => return Ok(out),
            // Only a compressor that cannot start (out of memory) gets
            // here; the body is then written whole, as a small one is.
            Err(e) => debug_assert!(
                e.kind() == std::io::ErrorKind::OutOfMemory,
                "the streamed delta failed: {e}"
            ),
        }
    }
    let mut body = Writer::with_capacity(8 + n * DELTA_NODE_BYTES);
    body.varint(n as u64);
    for p in &edit.nodes {
        for c in p {
            body.bytes(&c.to_le_bytes());
        }
    }
    body.f32_planes(edit.before.iter().copied());
    body.f32_planes(edit.after.iter().copied());
    body.bytes(&edit.mat_before);
    body.bytes(&edit.mat_after);
    debug_assert_eq!(body.buf.len(), raw_len as usize);
    let (stored, flags) = pack_body(body.buf);
    let mut out = delta_head(flags, raw_len, stored.len());
    out.bytes(&stored);
    Ok(out.buf)
}

/// Bodies from this size on are compressed as they are written.
const STREAM_BODY_BYTES: usize = 4 << 20;

/// The header of a voxel stroke delta, with room for `body` more bytes.
fn delta_head(flags: u8, raw_len: u32, body: usize) -> Writer {
    let mut out = Writer::with_capacity(DELTA_HEADER_LEN + body);
    out.bytes(DELTA_MAGIC);
    out.u8(DELTA_VERSION);
    out.u8(flags);
    out.bytes(&[0, 0]);
    out.u32(raw_len);
    out
}

/// [`encode_delta3`]'s bytes with the body compressed block by block as it
/// is written (the same body, in one zstd frame with its checksum).
fn encode_delta3_streamed(
    edit: &VoxelEdit,
    count: &[u8],
    raw_len: u32,
) -> std::io::Result<Vec<u8>> {
    /// Values written between flushes.
    const STEP: usize = 1 << 16;
    let head = delta_head(crate::wire::FLAG_ZSTD, raw_len, raw_len as usize / 4).buf;
    let mut w = crate::wire::FrameWriter::new(head, u64::from(raw_len))?;
    w.body().bytes(count);
    for nodes in edit.nodes.chunks(STEP) {
        for p in nodes {
            for c in p {
                w.body().bytes(&c.to_le_bytes());
            }
        }
        w.flush_if_full()?;
    }
    for values in [&edit.before, &edit.after] {
        for plane in 0..4 {
            for part in values.chunks(STEP) {
                w.body()
                    .buf
                    .extend(part.iter().map(|v| v.to_bits().to_le_bytes()[plane]));
                w.flush_if_full()?;
            }
        }
    }
    for mats in [&edit.mat_before, &edit.mat_after] {
        for part in mats.chunks(STEP) {
            w.body().bytes(part);
            w.flush_if_full()?;
        }
    }
    w.finish()
}

/// Decodes a delta written by [`encode_delta3`].
///
/// # Errors
///
/// [`StoreError::CorruptData`] for anything that is not a well-formed delta.
pub fn decode_delta3(payload: &[u8]) -> Result<VoxelEdit, StoreError> {
    let bad = |reason: &str| StoreError::data(DELTA_WHAT, reason.to_string());
    if payload.len() < DELTA_HEADER_LEN || &payload[..4] != DELTA_MAGIC {
        return Err(bad("missing header or wrong magic"));
    }
    if payload[4] != DELTA_VERSION {
        return Err(bad("unknown codec version"));
    }
    let flags = payload[5];
    let raw_len = u32::from_le_bytes([payload[8], payload[9], payload[10], payload[11]]) as usize;
    // A stroke changes at most MAX_STROKE_NODES nodes: its body is bounded.
    let max = 10 + MAX_STROKE_NODES * DELTA_NODE_BYTES;
    let body = unpack_body_within(
        &payload[DELTA_HEADER_LEN..],
        flags,
        raw_len,
        max,
        DELTA_WHAT,
    )?;
    let mut r = Reader::new(&body);
    let n = r.varint().ok_or_else(|| bad("truncated node count"))?;
    if n > MAX_STROKE_NODES as u64
        || n.saturating_mul(DELTA_NODE_BYTES as u64) > r.remaining() as u64
    {
        return Err(bad("node count larger than the body"));
    }
    let n = n as usize;
    let mut edit = VoxelEdit::default();
    for _ in 0..n {
        let mut p = [0i64; 3];
        for c in &mut p {
            let b = r.take(8).ok_or_else(|| bad("truncated node"))?;
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            *c = i64::from_le_bytes(a);
        }
        edit.nodes.push(p);
    }
    edit.before = r.f32_planes(n).ok_or_else(|| bad("truncated values"))?;
    edit.after = r.f32_planes(n).ok_or_else(|| bad("truncated values"))?;
    edit.mat_before = r
        .take(n)
        .ok_or_else(|| bad("truncated materials"))?
        .to_vec();
    edit.mat_after = r
        .take(n)
        .ok_or_else(|| bad("truncated materials"))?
        .to_vec();
    if r.remaining() != 0 {
        return Err(bad("trailing bytes after the body"));
    }
    edit.validate()
        .map_err(|e| StoreError::data(DELTA_WHAT, e.to_string()))?;
    Ok(edit)
}

/// What [`VoxelDocument::stroke`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct VoxelStrokeOutcome {
    /// The id of the recorded stroke; `None` when the brush changed nothing.
    pub id: Option<i64>,
    /// Number of nodes whose value or material changed.
    pub changed_nodes: usize,
}

/// A summary of a voxel document, for `info` output (serialises to JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VoxelDocumentInfo {
    /// The world kind (`"voxel"`).
    pub kind: String,
    /// The generator seed.
    pub seed: u64,
    /// The generator preset name (`"caves"`, `"overhangs"`, `"planet"`).
    pub preset: String,
    /// Cells per chunk along each axis.
    pub chunk_cells: u32,
    /// Chunks stored in the file (those that differ from the generator).
    pub chunks_stored: u64,
    /// Strokes in the log, done and undone.
    pub strokes_total: u64,
    /// The undo position: the number of strokes in effect.
    pub undo_position: u64,
    /// True when an undone stroke can be redone.
    pub redo_available: bool,
}

/// A voxel world and the store that holds it: a [`WorldFile`] unless
/// another [`ChunkStore`] is chosen.
///
/// Create or open one, load and mesh regions with
/// [`ensure_region`](Self::ensure_region) and [`rebuild`](Self::rebuild),
/// edit with [`stroke`](Self::stroke), step through history with
/// [`undo`](Self::undo) / [`redo`](Self::redo) (which survive reopening).
/// Every successful edit call is committed to the store when it returns.
pub struct VoxelDocument<S: ChunkStore = WorldFile> {
    core: DocumentCore<S, VoxelKind>,
}

/// What the shared document core needs to know about voxel worlds.
#[derive(Debug)]
struct VoxelKind {
    world: VoxelWorld,
}

fn key3(c: [i32; 3]) -> ChunkKey {
    ChunkKey {
        layer: ChunkLayer::FIELD,
        x: c[0],
        y: c[1],
        z: c[2],
        lod: 0,
    }
}

impl VoxelDocument<WorldFile> {
    /// Creates a new voxel world file at `path` (refuses to overwrite): it
    /// records the parameters only; chunks are generated on demand.
    ///
    /// # Errors
    ///
    /// [`StoreError::World`] for invalid parameters, besides the errors of
    /// [`WorldFile::create`]. On error nothing is created.
    pub fn create(path: impl AsRef<Path>, params: &VoxelParams) -> Result<Self, StoreError> {
        Self::create_with(params, |meta| WorldFile::create(path.as_ref(), meta))
    }

    /// Opens a voxel world file and loads its stored chunks.
    ///
    /// # Errors
    ///
    /// [`StoreError::WrongKind`] for another kind of world,
    /// [`StoreError::NewerFormat`] for a newer layout, [`StoreError::Corrupt`]
    /// when the parameters or a stored chunk are malformed, besides the
    /// errors of [`WorldFile::open`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_in(WorldFile::open(path)?)
    }
}

document_access!(VoxelDocument);

impl<S: ChunkStore> VoxelDocument<S> {
    /// Creates a new voxel world in `store`, which must hold no world yet
    /// (see [`ChunkStore::create_world`]); like [`create`](VoxelDocument::create)
    /// otherwise. On error the store is dropped.
    ///
    /// # Errors
    ///
    /// [`StoreError::World`] for invalid parameters,
    /// [`StoreError::AlreadyExists`] when the store holds a world.
    pub fn create_in(store: S, params: &VoxelParams) -> Result<Self, StoreError> {
        Self::create_with(params, |meta| in_new_world(store, meta, &[]))
    }

    /// Opens the voxel world held in `store` and loads its stored chunks;
    /// fails like [`open`](VoxelDocument::open).
    ///
    /// # Errors
    ///
    /// As [`open`](VoxelDocument::open), with the store's errors.
    pub fn open_in(store: S) -> Result<Self, StoreError> {
        let loc = store.location();
        let meta = store.meta()?;
        let params: VoxelParams = read_params(loc, &meta, VOXEL_KIND, VOXEL_FORMAT_VERSION)?;
        let mut world = VoxelWorld::new(&params)
            .map_err(|e| StoreError::corrupt(loc, format!("the voxel parameters: {e}")))?;
        let n = params.chunk_cells;
        let mut stored = BTreeSet::new();
        store.visit_chunks(ChunkLayer::FIELD, &mut |key, payload| {
            let c = [key.x, key.y, key.z];
            let name = format!("chunk ({}, {}, {}, lod {})", key.x, key.y, key.z, key.lod);
            if key.lod != 0 {
                return Err(StoreError::corrupt(
                    loc,
                    format!("{name}: voxel worlds store lod 0 only"),
                ));
            }
            let chunk = decode_chunk(payload)
                .map_err(|e| StoreError::corrupt(loc, format!("{name}: {e}")))?;
            if chunk.dims() != [n; 3] || chunk.materials().is_none() {
                return Err(StoreError::corrupt(
                    loc,
                    format!(
                        "{name} holds {:?} nodes, the world needs [{n}, {n}, {n}] with materials",
                        chunk.dims()
                    ),
                ));
            }
            let (values, mats) = chunk.into_parts();
            world
                .insert_chunk(c, values, mats.unwrap_or_default())
                .map_err(|e| StoreError::corrupt(loc, format!("{name}: {e}")))?;
            stored.insert(key);
            Ok(())
        })?;
        let core = DocumentCore::opened(store, VoxelKind { world }, stored)?;
        Ok(VoxelDocument { core })
    }

    /// Builds the world of `params`, then the store holding its metadata.
    fn create_with(
        params: &VoxelParams,
        store: impl FnOnce(&crate::WorldMeta) -> Result<S, StoreError>,
    ) -> Result<Self, StoreError> {
        let world = VoxelWorld::new(params)?;
        let meta = new_meta(
            VOXEL_KIND,
            VOXEL_FORMAT_VERSION,
            params.generator.seed,
            "voxel parameters",
            params,
        )?;
        let core = DocumentCore::created(store(&meta)?, VoxelKind { world });
        Ok(VoxelDocument { core })
    }

    /// The world in memory.
    pub fn world(&self) -> &VoxelWorld {
        &self.core.kind.world
    }

    /// The world, mutably: for loading, meshing and queries. Edits made
    /// through it bypass the store; use [`stroke`](Self::stroke) for edits.
    pub fn world_mut(&mut self) -> &mut VoxelWorld {
        &mut self.core.kind.world
    }

    /// Applies a brush to the world in memory only, without recording it:
    /// a live preview of a stroke still being drawn. Returns the edit that
    /// [`revert_preview`](Self::revert_preview) takes back. The store does
    /// not change; take every preview back before the next stroke, undo or
    /// redo, which record what the world holds.
    ///
    /// # Errors
    ///
    /// [`StoreError::World`] for an invalid brush; nothing changes then.
    pub fn preview(&mut self, brush: &VoxelBrush) -> Result<VoxelEdit, StoreError> {
        Ok(self.core.kind.world.apply_brush(brush)?)
    }

    /// Takes back an edit returned by [`preview`](Self::preview). Previews
    /// must be taken back in the reverse order of their application.
    ///
    /// # Errors
    ///
    /// [`StoreError::World`] when the edit does not fit this world; nothing
    /// changes then.
    pub fn revert_preview(&mut self, edit: &VoxelEdit) -> Result<(), StoreError> {
        Ok(self
            .core
            .kind
            .world
            .apply_edit(edit, isoterra_world::EditDirection::Backward)?)
    }

    /// The world's parameters.
    pub fn params(&self) -> &VoxelParams {
        self.world().params()
    }

    /// Generates the chunks `min..=max` (see [`VoxelWorld::ensure_region`]).
    ///
    /// # Errors
    ///
    /// [`StoreError::World`] for a bad region.
    pub fn ensure_region(&mut self, min: [i32; 3], max: [i32; 3]) -> Result<usize, StoreError> {
        Ok(self.world_mut().ensure_region(min, max)?)
    }

    /// Re-meshes dirty chunks (see [`VoxelWorld::rebuild`]).
    pub fn rebuild(&mut self, budget: Option<Duration>) -> RebuildReport {
        self.world_mut().rebuild(budget)
    }

    /// Applies a brush and records it; the stroke, its delta and every chunk
    /// owning a changed node are committed in one transaction before this
    /// returns (chunks back to their generated state are deleted). A brush
    /// that changes nothing records nothing.
    ///
    /// # Errors
    ///
    /// [`StoreError::World`] for an invalid brush (nothing changes), or a
    /// store error (the edit is reverted in memory).
    pub fn stroke(&mut self, brush: &VoxelBrush) -> Result<VoxelStrokeOutcome, StoreError> {
        self.core.check_current()?;
        let params = to_json("voxel brush", brush)?;
        let edit = self.world_mut().apply_brush(brush)?;
        self.record(edit, brush.tool.name(), params)
    }

    /// Applies several brush stamps (e.g. the stamps of one mouse drag) and
    /// records them as one stroke, undone and redone together; committed
    /// like [`stroke`](Self::stroke).
    ///
    /// The stamps are applied in order. If one is invalid, the ones before
    /// it are reverted and its error returned: nothing changes. The recorded
    /// delta holds each changed node once (its value before the first stamp
    /// and after the last). The stroke's tool is the stamps' tool, or
    /// `"mixed"`; its parameters are the list of brushes. No stamps, or
    /// stamps that change nothing, record nothing.
    ///
    /// # Errors
    ///
    /// As [`stroke`](Self::stroke).
    pub fn stroke_stamps(
        &mut self,
        stamps: &[VoxelBrush],
    ) -> Result<VoxelStrokeOutcome, StoreError> {
        self.core.check_current()?;
        let params = to_json("voxel brush stamps", &stamps)?;
        // Each stamp's edit is folded in as soon as it is applied, so the
        // stroke holds each touched node once, however many stamps it has
        // (`VoxelRun`: eight bytes a node, in 16³ blocks).
        let mut first = isoterra_world::VoxelRun::default();
        for brush in stamps {
            let applied = self.world_mut().apply_brush(brush);
            let e = match applied {
                Ok(e) => e,
                Err(err) => {
                    self.revert_folded(&first);
                    return Err(err.into());
                }
            };
            first.fold(&e);
            drop(e);
            if first.len() > MAX_STROKE_NODES {
                self.revert_folded(&first);
                return Err(too_many_nodes());
            }
        }
        let edit = self.folded_edit(&first);
        // The fold is not needed to record the edit.
        drop(first);
        let tool = stamps_tool(stamps.iter().map(|b| b.tool), |t| t.name());
        self.record(edit, tool, params)
    }

    /// The edit from the values `first` held to the world's values now,
    /// in `(z, y, x)` order, listing only the nodes that changed.
    fn folded_edit(&self, first: &isoterra_world::VoxelRun) -> VoxelEdit {
        let mut e = first.edit(self.world());
        // Keep the changed nodes, in place.
        let mut kept = 0;
        for k in 0..e.nodes.len() {
            if e.after[k].to_bits() == e.before[k].to_bits() && e.mat_after[k] == e.mat_before[k] {
                continue;
            }
            e.nodes[kept] = e.nodes[k];
            e.before[kept] = e.before[k];
            e.after[kept] = e.after[k];
            e.mat_before[kept] = e.mat_before[k];
            e.mat_after[kept] = e.mat_after[k];
            kept += 1;
        }
        e.nodes.truncate(kept);
        e.before.truncate(kept);
        e.after.truncate(kept);
        e.mat_before.truncate(kept);
        e.mat_after.truncate(kept);
        e
    }

    /// Puts back the values `first` held.
    fn revert_folded(&mut self, first: &isoterra_world::VoxelRun) {
        let edit = first.edit(self.world());
        let _ = self
            .world_mut()
            .apply_edit(&edit, isoterra_world::EditDirection::Backward);
    }

    /// Commits an edit already applied to the world as one stroke, or
    /// reverts it when the commit fails.
    fn record(
        &mut self,
        edit: VoxelEdit,
        tool: &str,
        params: serde_json::Value,
    ) -> Result<VoxelStrokeOutcome, StoreError> {
        if edit.is_empty() {
            return Ok(VoxelStrokeOutcome {
                id: None,
                changed_nodes: 0,
            });
        }
        let id = self.core.record_applied(&edit, tool, params)?;
        Ok(VoxelStrokeOutcome {
            id: Some(id),
            changed_nodes: edit.len(),
        })
    }

    /// A summary for `info` output.
    pub fn info(&self) -> VoxelDocumentInfo {
        let p = self.params();
        let counts = self.core.counts();
        VoxelDocumentInfo {
            kind: VOXEL_KIND.to_string(),
            seed: p.generator.seed,
            preset: p.generator.preset.name().to_string(),
            chunk_cells: p.chunk_cells,
            chunks_stored: self.core.stored().len() as u64,
            strokes_total: counts.total(),
            undo_position: counts.done,
            redo_available: counts.undone > 0,
        }
    }

    /// The content hash of the world's edits: 16 lowercase hex digits of
    /// FNV-1a 64 over `"ITV3"`, `chunk_cells` (u32 LE) and, for every chunk
    /// that differs from the generator (the stored chunks) in ascending
    /// `(x, y, z)` order, its coordinate (three i32 LE), its `N^3` value bits
    /// (u32 LE) and its material ids. Equal contents give equal hashes: a
    /// world whose strokes were all undone hashes like a new one with the
    /// same parameters (which the hash does not cover).
    pub fn content_hash(&self) -> String {
        let world = self.world();
        let mut h = Fnv1a64::new();
        h.write(b"ITV3");
        h.write(&world.chunk_cells().to_le_bytes());
        let len = world.chunk_len();
        for key in self.core.stored() {
            let c = [key.x, key.y, key.z];
            for v in c {
                h.write(&v.to_le_bytes());
            }
            if let Some(chunk) = world.chunk(c) {
                for v in chunk.density.to_dense(len) {
                    h.write(&v.to_bits().to_le_bytes());
                }
                h.write(&chunk.materials.to_dense(len));
            }
        }
        h.hex()
    }
}

impl EditKind for VoxelKind {
    type Edit = VoxelEdit;

    fn encode(&self, edit: &VoxelEdit) -> Result<Vec<u8>, StoreError> {
        encode_delta3(edit)
    }

    fn decode(&self, delta: &[u8]) -> Result<VoxelEdit, StoreError> {
        decode_delta3(delta)
    }

    fn apply(&mut self, edit: &VoxelEdit, dir: EditDirection) -> Result<(), StoreError> {
        let applied: Result<(), WorldError> = self.world.apply_edit(edit, dir);
        Ok(applied?)
    }

    fn apply_logged(
        &mut self,
        edit: &VoxelEdit,
        dir: EditDirection,
        _location: &Path,
        _id: i64,
    ) -> Result<bool, StoreError> {
        let (values, mats) = match dir {
            EditDirection::Backward => (&edit.after, &edit.mat_after),
            EditDirection::Forward => (&edit.before, &edit.mat_before),
        };
        let coords: Vec<[i32; 3]> = edit
            .nodes
            .iter()
            .map(|&g| self.world.chunk_of_node(g))
            .collect();
        self.world.load_chunks(&coords);
        let shows = edit.nodes.iter().enumerate().all(|(k, &g)| {
            self.world
                .node(g)
                .is_some_and(|(v, m)| v.to_bits() == values[k].to_bits() && m == mats[k])
        });
        if !shows {
            return Ok(false);
        }
        self.apply(edit, dir)?;
        Ok(true)
    }

    /// The chunk rows for every chunk owning a node of `edit`: its payload,
    /// or a deletion when it equals the generated chunk.
    fn chunk_changes(&self, edit: &VoxelEdit) -> Result<Vec<ChunkChange>, StoreError> {
        let coords: BTreeSet<[i32; 3]> = edit
            .nodes
            .iter()
            .map(|&g| self.world.chunk_of_node(g))
            .collect();
        let len = self.world.chunk_len();
        let n = self.world.chunk_cells();
        Ok(coords
            .into_iter()
            .filter_map(|c| {
                let chunk = self.world.chunk(c)?;
                let values = chunk.density.to_dense(len);
                let mats = chunk.materials.to_dense(len);
                let base = self.world.generated_chunk(c);
                let same = base.materials.to_dense(len) == mats
                    && base
                        .density
                        .to_dense(len)
                        .iter()
                        .zip(&values)
                        .all(|(a, b)| a.to_bits() == b.to_bits());
                if same {
                    return Some((key3(c), None));
                }
                let data = ChunkData::new(ChunkEncoding::F32, [n; 3], values, Some(mats)).ok()?;
                Some((key3(c), Some(encode_chunk(&data))))
            })
            .collect())
    }
}
