//! Baked chunks: the meshes and colliders a game loads instead of meshing.
//!
//! Baking turns a region of a world into one [`BakedChunk`] per chunk at one
//! level of detail: the render mesh (positions, normals, a triangle list) and
//! the collider data of the kind — collider polylines for `side2d`, the
//! heightfield for `heightmap`, the mesh itself as a triangle mesh for
//! `voxel`. [`BakeSource::plan`] turns a region in world units into chunk
//! keys, a [`ChunkBaker`] bakes one key (one baker per worker thread; the
//! result is a pure function of the world and the key, so any thread count
//! and any order give the same bytes) and [`WorldFile::put_baked`] stores
//! the results in the file's `baked` table.
//!
//! The key layout is on [`BakePlan`], the payload layout on
//! [`encode_baked`].
//!
//! # Staleness, chunk by chunk
//!
//! Every row records the *input stamp* of its chunk ([`BakeInputs`]): a
//! hash of the world's metadata, the chunk's key and the payloads of the
//! stored chunks its [input box](BakeSource::input_box) covers — the storage
//! chunks its mesh, normals, apron and LOD footprint read. A bake reads the
//! store once ([`BakeInputs::read`]), computes each planned chunk's stamp and
//! skips the chunks whose row records that stamp. An edit changes the stamps
//! of exactly the chunks whose box holds a changed storage chunk, so only
//! those are baked again; an undo that brings the stored chunks back brings
//! the old stamps back too. The whole-world [`WorldFile::world_stamp`] is
//! still there to tell whether two files hold the same world (`isoterra
//! merge` compares it).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::Path;

use isoterra_world::{
    HeightmapWorld, MapWorld, MeshKey, Side2dWorld, VoxelLodChunk, VoxelLodMesher, VoxelLodParams,
    VoxelWorld,
};
use rusqlite::OptionalExtension;

use crate::hash::Fnv1a64;
use crate::wire::{Reader, Writer, pack_body, unpack_body};
use crate::{BakedRow, ChunkKey, ChunkLayer, ChunkStore, StoreError, WorldFile};

/// The layer of baked terrain (the kinds' one surface mesh).
pub const BAKED_TERRAIN: ChunkLayer = ChunkLayer(0);
/// The layer of baked water surfaces (`map` worlds).
pub const BAKED_WATER: ChunkLayer = ChunkLayer(1);
/// The payload version [`encode_baked`] writes and [`decode_baked`] reads.
pub const BAKED_PAYLOAD_VERSION: u8 = 1;
/// The most chunks one bake plan may hold.
pub const MAX_BAKE_CHUNKS: u64 = 1_000_000;

const MAGIC: &[u8; 4] = b"ITBK";
const HEADER_LEN: usize = 12;
const WHAT: &str = "baked chunk payload";

/// A polyline of a 2D collider, in world units.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BakedPolyline {
    /// The points.
    pub points: Vec<[f32; 2]>,
    /// True for a closed loop.
    pub closed: bool,
}

/// A heightfield collider: heights on a regular grid.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BakedHeightfield {
    /// Nodes along z.
    pub rows: u32,
    /// Nodes along x.
    pub cols: u32,
    /// `rows * cols` heights, row-major with x fastest.
    pub heights: Vec<f32>,
    /// Extent along x, height multiplier, extent along z.
    pub scale: [f32; 3],
    /// World position of the collider's centre.
    pub translation: [f32; 3],
}

/// The collider data of a baked chunk.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum BakedCollider {
    /// No collider.
    #[default]
    None,
    /// Collider polylines (side-view worlds), solid on the left.
    Polylines(Vec<BakedPolyline>),
    /// A heightfield (heightmap worlds).
    Heightfield(BakedHeightfield),
    /// The chunk's render mesh is its collider: a triangle mesh of
    /// [`BakedChunk::positions`] and [`BakedChunk::indices`] (voxel worlds).
    TriMesh,
}

impl BakedCollider {
    fn code(&self) -> u8 {
        match self {
            BakedCollider::None => 0,
            BakedCollider::Polylines(_) => 1,
            BakedCollider::Heightfield(_) => 2,
            BakedCollider::TriMesh => 3,
        }
    }
}

/// One baked chunk: a render mesh and collider data.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BakedChunk {
    /// Vertex positions in world units.
    pub positions: Vec<[f32; 3]>,
    /// Unit vertex normals, one per position (or none).
    pub normals: Vec<[f32; 3]>,
    /// Triangle list, counter-clockwise seen from outside.
    pub indices: Vec<u32>,
    /// Collider data.
    pub collider: BakedCollider,
}

impl BakedChunk {
    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// True when the chunk has no triangles and no collider shapes.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
            && match &self.collider {
                BakedCollider::Polylines(lines) => lines.is_empty(),
                BakedCollider::Heightfield(h) => h.heights.is_empty(),
                BakedCollider::None | BakedCollider::TriMesh => true,
            }
    }

    /// The content hash of the chunk: 16 hex digits (see the module
    /// documentation); equal chunks have equal hashes.
    pub fn content_hash(&self) -> Result<String, StoreError> {
        Ok(hash_body(self.collider.code(), &raw_body(self)?))
    }
}

impl BakedRow {
    /// Encodes `chunk` as the row `key` baked from `source`.
    ///
    /// # Errors
    ///
    /// As [`encode_baked`].
    pub fn new(key: ChunkKey, source: &str, chunk: &BakedChunk) -> Result<Self, StoreError> {
        let (payload, hash) = encode_baked(chunk)?;
        Ok(BakedRow {
            key,
            source: source.to_string(),
            hash,
            payload,
        })
    }
}

fn hash_body(kind: u8, raw: &[u8]) -> String {
    let mut h = Fnv1a64::new();
    h.write(MAGIC);
    h.write(&[BAKED_PAYLOAD_VERSION, kind]);
    h.write(raw);
    format!("{:016x}", h.finish())
}

fn len_u32(n: usize, what: &str) -> Result<u32, StoreError> {
    u32::try_from(n).map_err(|_| {
        StoreError::input(
            "baked chunk",
            format!("{n} {what} do not fit a payload (at most 2^32 - 1)"),
        )
    })
}

fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn raw_body(chunk: &BakedChunk) -> Result<Vec<u8>, StoreError> {
    let v = chunk.positions.len();
    if !chunk.normals.is_empty() && chunk.normals.len() != v {
        return Err(StoreError::input(
            "baked chunk",
            format!("{} normals for {v} positions", chunk.normals.len()),
        ));
    }
    if !chunk.indices.len().is_multiple_of(3) {
        return Err(StoreError::input(
            "baked chunk",
            format!(
                "{} indices is not a whole number of triangles",
                chunk.indices.len()
            ),
        ));
    }
    if let Some(i) = chunk.indices.iter().find(|&&i| i as usize >= v) {
        return Err(StoreError::input(
            "baked chunk",
            format!("index {i} is out of range for {v} positions"),
        ));
    }
    let mut w = Writer::with_capacity(12 + v * 24 + chunk.indices.len() * 2);
    w.u32(len_u32(v, "vertices")?);
    w.u32(len_u32(chunk.indices.len(), "indices")?);
    w.u32(len_u32(chunk.normals.len(), "normals")?);
    w.f32_planes(chunk.positions.iter().flatten().copied());
    w.f32_planes(chunk.normals.iter().flatten().copied());
    let mut prev = 0i64;
    for &i in &chunk.indices {
        w.varint(zigzag(i64::from(i) - prev));
        prev = i64::from(i);
    }
    match &chunk.collider {
        BakedCollider::None | BakedCollider::TriMesh => {}
        BakedCollider::Polylines(lines) => {
            w.u32(len_u32(lines.len(), "polylines")?);
            for line in lines {
                w.u8(u8::from(line.closed));
                w.u32(len_u32(line.points.len(), "points")?);
                w.f32_planes(line.points.iter().flatten().copied());
            }
        }
        BakedCollider::Heightfield(h) => {
            if h.rows as u64 * h.cols as u64 != h.heights.len() as u64 {
                return Err(StoreError::input(
                    "baked heightfield",
                    format!(
                        "{} heights for {} x {} nodes",
                        h.heights.len(),
                        h.rows,
                        h.cols
                    ),
                ));
            }
            w.u32(h.rows);
            w.u32(h.cols);
            for v in h.scale.iter().chain(&h.translation) {
                w.u32(v.to_bits());
            }
            w.f32_planes(h.heights.iter().copied());
        }
    }
    Ok(w.buf)
}

/// Encodes a baked chunk; returns the payload and its content hash.
///
/// ```text
/// offset size  field
///      0    4  magic  b"ITBK"
///      4    1  payload version (1)
///      5    1  flags: bit 1 = body is zstd-compressed
///      6    1  collider kind: 0 none, 1 polylines, 2 heightfield, 3 triangle mesh
///      7    1  reserved, 0
///      8    4  raw body length (u32)
///     12    …  body
/// ```
///
/// The body, little-endian: vertex count `V` (u32), index count `I` (u32),
/// normal count (u32, `0` or `V`), the `3V` position coordinates and the
/// normal coordinates as `f32` byte planes (exact bits), the `I` indices as
/// LEB128 varints of the zig-zag difference to the previous index, then the
/// collider: polylines as a count (u32) and per line `closed` (u8), a point
/// count (u32) and the `2n` coordinates as byte planes; a heightfield as
/// rows, cols (u32), scale and translation (3 `f32` each) and the
/// `rows * cols` heights as byte planes (row-major, x fastest); nothing for
/// none and for a triangle mesh (the render mesh is the collider).
///
/// The content hash is 16 hex digits of FNV-1a 64 over the magic, version
/// and collider kind bytes and the raw body: it names the decoded content,
/// whatever the compressor did.
///
/// # Errors
///
/// [`StoreError::InvalidInput`] when normals are neither absent nor one per
/// position, the index count is not a multiple of three, an index is out of
/// range, a heightfield's size disagrees with its heights, or a count does
/// not fit in 32 bits.
pub fn encode_baked(chunk: &BakedChunk) -> Result<(Vec<u8>, String), StoreError> {
    let raw = raw_body(chunk)?;
    let kind = chunk.collider.code();
    let hash = hash_body(kind, &raw);
    let raw_len = len_u32(raw.len(), "body bytes")?;
    let (body, flags) = pack_body(raw);
    let mut out = Writer::with_capacity(HEADER_LEN + body.len());
    out.bytes(MAGIC);
    out.u8(BAKED_PAYLOAD_VERSION);
    out.u8(flags);
    out.u8(kind);
    out.u8(0);
    out.u32(raw_len);
    out.bytes(&body);
    Ok((out.buf, hash))
}

/// Decodes a payload of [`encode_baked`] and returns the chunk and its
/// content hash.
///
/// # Errors
///
/// [`StoreError::CorruptData`] for any payload that is truncated, garbled,
/// of an unknown version or collider kind, or whose indices are out of
/// range. Never panics, and allocates only in proportion to the data.
pub fn decode_baked(payload: &[u8]) -> Result<(BakedChunk, String), StoreError> {
    let bad = |reason: String| StoreError::data(WHAT, reason);
    let mut r = Reader::new(payload);
    let header = r.take(HEADER_LEN).ok_or_else(|| {
        bad(format!(
            "{} bytes is shorter than the {HEADER_LEN}-byte header",
            payload.len()
        ))
    })?;
    if &header[0..4] != MAGIC {
        return Err(bad("bad magic (not a baked chunk)".into()));
    }
    let (version, flags, kind, reserved) = (header[4], header[5], header[6], header[7]);
    if version != BAKED_PAYLOAD_VERSION {
        return Err(bad(format!(
            "payload version {version}; this build reads version {BAKED_PAYLOAD_VERSION}"
        )));
    }
    if reserved != 0 || flags & !crate::wire::FLAG_ZSTD != 0 || kind > 3 {
        return Err(bad(format!(
            "unknown flags {flags:#x}, collider kind {kind} or reserved byte {reserved}"
        )));
    }
    let raw_len = u32::from_le_bytes([header[8], header[9], header[10], header[11]]) as usize;
    let rest = r.take(r.remaining()).unwrap_or_default();
    let raw = unpack_body(rest, flags, raw_len, WHAT)?;
    let truncated = || bad("the body is truncated".into());
    let mut b = Reader::new(&raw);
    let v = b.u32().ok_or_else(truncated)? as usize;
    let ni = b.u32().ok_or_else(truncated)? as usize;
    let nn = b.u32().ok_or_else(truncated)? as usize;
    if nn != 0 && nn != v {
        return Err(bad(format!("{nn} normals for {v} positions")));
    }
    if !ni.is_multiple_of(3) {
        return Err(bad(format!("{ni} indices is not whole triangles")));
    }
    let triples = |flat: Vec<f32>| -> Vec<[f32; 3]> {
        flat.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
    };
    let positions = triples(
        v.checked_mul(3)
            .and_then(|n| b.f32_planes(n))
            .ok_or_else(truncated)?,
    );
    let normals = triples(
        nn.checked_mul(3)
            .and_then(|n| b.f32_planes(n))
            .ok_or_else(truncated)?,
    );
    // Every index takes at least one byte: check before allocating.
    if ni > b.remaining() {
        return Err(truncated());
    }
    let mut indices = Vec::with_capacity(ni);
    let mut prev = 0i64;
    for _ in 0..ni {
        let d = unzigzag(b.varint().ok_or_else(truncated)?);
        let i = prev
            .checked_add(d)
            .filter(|&i| (0..v as i64).contains(&i))
            .ok_or_else(|| bad(format!("an index is out of range for {v} positions")))?;
        indices.push(i as u32);
        prev = i;
    }
    let collider = match kind {
        0 => BakedCollider::None,
        3 => BakedCollider::TriMesh,
        1 => {
            let n = b.u32().ok_or_else(truncated)? as usize;
            // Every line takes at least five bytes.
            if n > b.remaining() / 5 {
                return Err(truncated());
            }
            let mut lines = Vec::with_capacity(n);
            for _ in 0..n {
                let closed = match b.u8().ok_or_else(truncated)? {
                    0 => false,
                    1 => true,
                    other => return Err(bad(format!("polyline flag {other}"))),
                };
                let np = b.u32().ok_or_else(truncated)? as usize;
                let flat = np
                    .checked_mul(2)
                    .and_then(|n| b.f32_planes(n))
                    .ok_or_else(truncated)?;
                lines.push(BakedPolyline {
                    points: flat.chunks_exact(2).map(|c| [c[0], c[1]]).collect(),
                    closed,
                });
            }
            BakedCollider::Polylines(lines)
        }
        _ => {
            let rows = b.u32().ok_or_else(truncated)?;
            let cols = b.u32().ok_or_else(truncated)?;
            let mut f = [0.0f32; 6];
            for x in &mut f {
                *x = f32::from_bits(b.u32().ok_or_else(truncated)?);
            }
            let n = usize::try_from(rows as u64 * cols as u64).map_err(|_| truncated())?;
            let heights = b.f32_planes(n).ok_or_else(truncated)?;
            BakedCollider::Heightfield(BakedHeightfield {
                rows,
                cols,
                heights,
                scale: [f[0], f[1], f[2]],
                translation: [f[3], f[4], f[5]],
            })
        }
    };
    if b.remaining() != 0 {
        return Err(bad(format!("{} bytes after the collider", b.remaining())));
    }
    Ok((
        BakedChunk {
            positions,
            normals,
            indices,
            collider,
        },
        hash_body(kind, &raw),
    ))
}

/// The world a bake reads: a reference to a world of one of the kinds.
///
/// A `side2d` world must be rebuilt (no dirty chunk) before baking: its
/// chunks' cached meshes and colliders are what gets baked.
#[derive(Debug, Clone, Copy)]
pub enum BakeSource<'a> {
    /// A side-view world; regions are `X, Y` in world units.
    Side2d(&'a Side2dWorld),
    /// A heightmap world; regions are `X, Z` in world units.
    Heightmap(&'a HeightmapWorld),
    /// A voxel world; regions are `X, Y, Z` in world units.
    Voxel(&'a VoxelWorld),
    /// A map world; regions are `X, Z` in world units.
    Map(&'a MapWorld),
}

/// The chunks a bake covers: a box of chunk coordinates at one LOD.
///
/// Baked chunks use [`ChunkKey`] with layer [`BAKED_TERRAIN`]:
/// - `side2d`: `(cx, cy, 0)`, LOD 0 only;
/// - `heightmap`: `(cx, cz, 0)` (the same chunk at every LOD; coarser LODs
///   have fewer vertices);
/// - `voxel`: `(x, y, z)` in chunks of the LOD, each covering `2^lod` world
///   chunks per axis;
/// - `map`: `(cx, cz, 0)`, LOD 0 only, in two layers: the terrain
///   ([`BAKED_TERRAIN`]) and the water surface ([`BAKED_WATER`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BakePlan {
    /// The first layer of the baked rows.
    pub layer: ChunkLayer,
    /// How many layers from [`layer`](Self::layer) on each chunk has (1, or
    /// 2 for maps).
    pub layer_count: u16,
    /// Smallest chunk coordinate on each axis (key `x, y, z`).
    pub min: [i32; 3],
    /// Largest chunk coordinate on each axis, inclusive.
    pub max: [i32; 3],
    /// Level of detail.
    pub lod: u8,
}

impl BakePlan {
    /// Number of keys (chunks times layers).
    pub fn count(&self) -> u64 {
        (0..3)
            .map(|a| (i64::from(self.max[a]) - i64::from(self.min[a]) + 1).max(0) as u64)
            .product::<u64>()
            * u64::from(self.layer_count)
    }

    /// Every key of the plan, in ascending [`ChunkKey`] order (the canonical
    /// order: layer, then `x`, `y`, `z`).
    pub fn keys(&self) -> impl Iterator<Item = ChunkKey> + '_ {
        let (min, max, lod) = (self.min, self.max, self.lod);
        let first = self.layer.0;
        let layers = first..first.saturating_add(self.layer_count);
        layers.flat_map(move |l| {
            let layer = ChunkLayer(l);
            (min[0]..=max[0]).flat_map(move |x| {
                (min[1]..=max[1]).flat_map(move |y| {
                    (min[2]..=max[2]).map(move |z| ChunkKey {
                        layer,
                        x,
                        y,
                        z,
                        lod,
                    })
                })
            })
        })
    }

    /// The positions `[start, end)` in [`keys`](Self::keys) of part `part`
    /// (counted from 0) when the plan is cut into `parts` contiguous ranges
    /// of the canonical key order. Part `i` starts at `floor(i * count /
    /// parts)`, so the parts cover the plan exactly once, in order, and their
    /// sizes differ by at most one chunk; with more parts than keys some
    /// parts are empty. This is how a bake is split across processes or
    /// machines (`docs/scaling.md`): the parts depend only on the plan, so
    /// every worker computes its own range without talking to the others.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidInput`] when `parts` is 0 or `part >= parts`.
    pub fn part_range(&self, part: u64, parts: u64) -> Result<Range<u64>, StoreError> {
        if parts == 0 {
            return Err(StoreError::input(
                "part",
                "0 parts: a bake splits into at least 1 part",
            ));
        }
        if part >= parts {
            return Err(StoreError::input(
                "part",
                format!(
                    "part {part} of {parts} does not exist (parts are counted from 0 to {})",
                    parts - 1
                ),
            ));
        }
        let n = u128::from(self.count());
        let at = |i: u64| (n * u128::from(i) / u128::from(parts)) as u64;
        Ok(at(part)..at(part + 1))
    }

    /// The keys of part `part` of `parts` (see
    /// [`part_range`](Self::part_range)), in ascending [`ChunkKey`] order.
    ///
    /// # Errors
    ///
    /// As [`part_range`](Self::part_range).
    pub fn part_keys(
        &self,
        part: u64,
        parts: u64,
    ) -> Result<impl Iterator<Item = ChunkKey> + '_, StoreError> {
        let r = self.part_range(part, parts)?;
        let skip = usize::try_from(r.start).unwrap_or(usize::MAX);
        let take = usize::try_from(r.end - r.start).unwrap_or(usize::MAX);
        Ok(self.keys().skip(skip).take(take))
    }

    /// True when the plan holds `key`.
    pub fn contains(&self, key: &ChunkKey) -> bool {
        (self.layer.0..self.layer.0.saturating_add(self.layer_count)).contains(&key.layer.0)
            && key.lod == self.lod
            && (0..3).all(|a| {
                let c = [key.x, key.y, key.z][a];
                self.min[a] <= c && c <= self.max[a]
            })
    }
}

/// Chunk range `[first, last]` along one axis for the half-open world range
/// `[lo, hi)` and chunks of `size` world units starting at `origin`.
fn axis_chunks(lo: f32, hi: f32, origin: f64, size: f64) -> Result<(i64, i64), String> {
    let a = ((f64::from(lo) - origin) / size).floor();
    let b = ((f64::from(hi) - origin) / size).ceil() - 1.0;
    let limit = f64::from(i32::MAX);
    if !(a.abs() <= limit && b.abs() <= limit) {
        return Err("lies too far out (chunk coordinates beyond ±2^31)".into());
    }
    Ok((a as i64, (b as i64).max(a as i64)))
}

impl BakeSource<'_> {
    /// The world kind (`"side2d"`, `"heightmap"`, `"voxel"`).
    pub fn kind(&self) -> &'static str {
        match self {
            BakeSource::Side2d(_) => crate::SIDE2D_KIND,
            BakeSource::Heightmap(_) => crate::HEIGHTMAP_KIND,
            BakeSource::Voxel(_) => crate::VOXEL_KIND,
            BakeSource::Map(_) => crate::MAP_KIND,
        }
    }

    /// Number of coordinates of a region corner: 2 (`X, Y` side-view,
    /// `X, Z` heightmap) or 3 (`X, Y, Z` voxel).
    pub fn region_axes(&self) -> usize {
        match self {
            BakeSource::Voxel(_) => 3,
            _ => 2,
        }
    }

    /// The coarsest LOD a bake may use: 0 for side-view worlds and maps,
    /// the world's coarsest level for heightmaps, [`VoxelLodParams::MAX_LOD`]
    /// for voxels.
    pub fn max_lod(&self) -> u8 {
        match self {
            BakeSource::Side2d(_) | BakeSource::Map(_) => 0,
            BakeSource::Heightmap(w) => w.params().max_lod(),
            BakeSource::Voxel(_) => VoxelLodParams::MAX_LOD,
        }
    }

    /// The chunks whose cells meet the half-open world box `[lo, hi)` at
    /// `lod`. `lo` and `hi` hold [`region_axes`](Self::region_axes)
    /// coordinates each. A side-view world is bounded: the box is clipped to
    /// it.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidInput`] for a wrong number of coordinates, a
    /// coordinate that is NaN or infinite, `lo >= hi` on an axis (empty or
    /// inverted), a box outside a side-view world, a LOD above
    /// [`max_lod`](Self::max_lod), or more than [`MAX_BAKE_CHUNKS`] chunks.
    pub fn plan(&self, lo: &[f32], hi: &[f32], lod: u8) -> Result<BakePlan, StoreError> {
        let axes = self.region_axes();
        let names: &[&str] = match self {
            BakeSource::Side2d(_) => &["x", "y"],
            BakeSource::Heightmap(_) | BakeSource::Map(_) => &["x", "z"],
            BakeSource::Voxel(_) => &["x", "y", "z"],
        };
        if lo.len() != axes || hi.len() != axes {
            return Err(StoreError::input(
                "region",
                format!(
                    "a {} world takes {axes} coordinates per corner ({})",
                    self.kind(),
                    names.join(", ")
                ),
            ));
        }
        for a in 0..axes {
            if !(lo[a].is_finite() && hi[a].is_finite()) {
                return Err(StoreError::input(
                    "region",
                    format!("{} range {}..{} is not finite", names[a], lo[a], hi[a]),
                ));
            }
            if lo[a] >= hi[a] {
                return Err(StoreError::input(
                    "region",
                    format!(
                        "{} range {}..{} is {}: the minimum must be below the maximum",
                        names[a],
                        lo[a],
                        hi[a],
                        if lo[a] == hi[a] { "empty" } else { "inverted" }
                    ),
                ));
            }
        }
        if lod > self.max_lod() {
            return Err(StoreError::input(
                "lod",
                format!(
                    "{lod} is beyond the coarsest level {} of this {} world",
                    self.max_lod(),
                    self.kind()
                ),
            ));
        }
        let mut min = [0i64; 3];
        let mut max = [0i64; 3];
        let outside = |a: usize| {
            StoreError::input(
                "region",
                format!(
                    "{} range {}..{} lies outside the world",
                    names[a], lo[a], hi[a]
                ),
            )
        };
        let far = |a: usize, e: String| StoreError::input("region", format!("{}: {e}", names[a]));
        match self {
            BakeSource::Side2d(w) => {
                let f = w.field();
                let size = f64::from(w.params().chunk_cells) * f64::from(f.cell_size());
                let chunks = [w.chunks_x(), w.chunks_y()];
                for a in 0..2 {
                    let (c0, c1) = axis_chunks(lo[a], hi[a], f64::from(f.origin()[a]), size)
                        .map_err(|e| far(a, e))?;
                    let (c0, c1) = (c0.max(0), c1.min(i64::from(chunks[a]) - 1));
                    if c0 > c1 {
                        return Err(outside(a));
                    }
                    (min[a], max[a]) = (c0, c1);
                }
            }
            BakeSource::Map(w) => {
                let p = w.params();
                let size = f64::from(p.chunk_cells) * f64::from(p.mesh.cell_size);
                let chunks = w.chunk_count();
                for a in 0..2 {
                    let (c0, c1) = axis_chunks(lo[a], hi[a], 0.0, size).map_err(|e| far(a, e))?;
                    let (c0, c1) = (c0.max(0), c1.min(i64::from(chunks[a]) - 1));
                    if c0 > c1 {
                        return Err(outside(a));
                    }
                    (min[a], max[a]) = (c0, c1);
                }
            }
            BakeSource::Heightmap(w) => {
                let size = f64::from(w.params().chunk_cells) * f64::from(w.params().cell_size);
                // Nodes a chunk reads reach one chunk and an apron past it.
                let limit = isoterra_world::MAX_NODE_COORD / i64::from(w.params().chunk_cells) - 2;
                for a in 0..2 {
                    (min[a], max[a]) =
                        axis_chunks(lo[a], hi[a], 0.0, size).map_err(|e| far(a, e))?;
                    if min[a] < -limit || max[a] > limit {
                        return Err(far(a, format!("lies beyond chunk ±{limit}")));
                    }
                }
            }
            BakeSource::Voxel(w) => {
                let cells = i64::from(w.chunk_cells()) << lod;
                // Base nodes of the LOD's chunks must lie within ±2^24.
                let limit = (1i64 << 24) / cells - 1;
                for a in 0..3 {
                    (min[a], max[a]) =
                        axis_chunks(lo[a], hi[a], 0.0, cells as f64).map_err(|e| far(a, e))?;
                    if min[a] < -limit || max[a] > limit {
                        return Err(far(
                            a,
                            format!("lies beyond chunk ±{limit} at LOD {lod} (±2^24 nodes)"),
                        ));
                    }
                }
            }
        }
        let layers: u64 = if matches!(self, BakeSource::Map(_)) {
            2
        } else {
            1
        };
        let count: u64 = (0..3)
            .map(|a| (max[a] - min[a] + 1) as u64)
            .fold(layers, |acc, n| acc.saturating_mul(n));
        if count > MAX_BAKE_CHUNKS {
            return Err(StoreError::input(
                "region",
                format!(
                    "covers {count} chunks; a bake holds at most {MAX_BAKE_CHUNKS} (bake smaller regions one after another)"
                ),
            ));
        }
        Ok(BakePlan {
            layer: BAKED_TERRAIN,
            layer_count: layers as u16,
            min: min.map(|v| v as i32),
            max: max.map(|v| v as i32),
            lod,
        })
    }
}

/// Bakes chunks; keep one per worker thread (it holds scratch memory).
#[derive(Debug, Default)]
pub struct ChunkBaker {
    voxel: VoxelLodMesher,
}

impl ChunkBaker {
    /// A baker with empty scratch memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bakes the chunk `key` of `source` (keys as [`BakeSource::plan`] gives
    /// them). The result depends only on the world and the key.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidInput`] for a key outside a side-view world, a
    /// side-view chunk that is not rebuilt, or a LOD the kind does not have;
    /// [`StoreError::World`] when the world cannot mesh the chunk.
    pub fn bake(
        &mut self,
        source: &BakeSource<'_>,
        key: &ChunkKey,
    ) -> Result<BakedChunk, StoreError> {
        source.check_lod_and_layer(key)?;
        match source {
            BakeSource::Map(w) => {
                let [cw, cd] = w.chunk_count();
                let chunk = u32::try_from(key.x)
                    .ok()
                    .zip(u32::try_from(key.y).ok())
                    .filter(|&(x, y)| key.z == 0 && x < cw && y < cd)
                    .ok_or_else(|| {
                        StoreError::input(
                            "chunk",
                            format!("({}, {}, {}) is outside the map", key.x, key.y, key.z),
                        )
                    })?;
                let out = w
                    .mesh_chunks(&[[chunk.0, chunk.1]])?
                    .into_iter()
                    .next()
                    .unwrap_or_default();
                Ok(if key.layer == BAKED_WATER {
                    BakedChunk {
                        positions: out.water.positions,
                        normals: out.water.normals,
                        indices: out.water.indices,
                        collider: BakedCollider::None,
                    }
                } else {
                    BakedChunk {
                        positions: out.terrain.positions,
                        normals: out.terrain.normals,
                        indices: out.terrain.indices,
                        collider: BakedCollider::TriMesh,
                    }
                })
            }
            BakeSource::Side2d(w) => {
                let chunk = u32::try_from(key.x)
                    .ok()
                    .zip(u32::try_from(key.y).ok())
                    .filter(|_| key.z == 0)
                    .and_then(|(x, y)| w.chunk(x, y))
                    .ok_or_else(|| {
                        StoreError::input(
                            "chunk",
                            format!("({}, {}, {}) is outside the world", key.x, key.y, key.z),
                        )
                    })?;
                if chunk.is_dirty() {
                    return Err(StoreError::input(
                        "chunk",
                        format!(
                            "({}, {}) is not rebuilt; rebuild the world before baking",
                            key.x, key.y
                        ),
                    ));
                }
                Ok(BakedChunk {
                    positions: chunk.mesh.positions.clone(),
                    normals: chunk.mesh.normals.clone(),
                    indices: chunk.mesh.indices.clone(),
                    collider: BakedCollider::Polylines(
                        chunk
                            .colliders
                            .iter()
                            .map(|p| BakedPolyline {
                                points: p.points.clone(),
                                closed: p.closed,
                            })
                            .collect(),
                    ),
                })
            }
            BakeSource::Heightmap(w) => {
                if key.z != 0 {
                    return Err(StoreError::input(
                        "chunk",
                        "heightmap chunks have z = 0 (x, z are stored in x, y)",
                    ));
                }
                let chunk = [key.x, key.y];
                let mesh = w.build_mesh(&MeshKey::new(chunk, key.lod))?;
                let c = w.collider(chunk, key.lod)?;
                Ok(BakedChunk {
                    positions: mesh.positions,
                    normals: mesh.normals,
                    indices: mesh.indices,
                    collider: BakedCollider::Heightfield(BakedHeightfield {
                        rows: c.rows,
                        cols: c.cols,
                        heights: c.heights,
                        scale: c.scale,
                        translation: c.translation,
                    }),
                })
            }
            BakeSource::Voxel(w) => {
                let ch = VoxelLodChunk::new([key.x, key.y, key.z], key.lod);
                let mut out = Default::default();
                self.voxel.mesh_chunk(w, &ch, 0, 0, &mut out)?;
                Ok(BakedChunk {
                    positions: out.positions,
                    normals: out.normals,
                    indices: out.indices,
                    collider: BakedCollider::TriMesh,
                })
            }
        }
    }
}

/// Bakes `keys` one after the other, in the given order, and returns the
/// results in that order. The result of each key does not depend on the
/// order or on which keys come before it.
///
/// # Errors
///
/// The first error of [`ChunkBaker::bake`].
pub fn bake_chunks(
    source: &BakeSource<'_>,
    keys: &[ChunkKey],
) -> Result<Vec<(ChunkKey, BakedChunk)>, StoreError> {
    let mut baker = ChunkBaker::new();
    keys.iter()
        .map(|k| baker.bake(source, k).map(|c| (*k, c)))
        .collect()
}

/// The stored chunks one baked chunk is made from: the field chunks (layer
/// [`ChunkLayer::FIELD`]) whose `x`, `y`, `z` lie in `[min, max]` on every
/// axis (inclusive; `z` is `0..=0` for the 2D kinds). Stored chunks in the
/// box feed the bake; absent ones are whatever the generator gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BakeInputBox {
    /// Smallest storage chunk coordinate on each axis.
    pub min: [i32; 3],
    /// Largest storage chunk coordinate on each axis, inclusive.
    pub max: [i32; 3],
}

impl BakeInputBox {
    /// True when `key` is a field chunk inside the box.
    pub fn contains(&self, key: &ChunkKey) -> bool {
        key.layer == ChunkLayer::FIELD
            && [key.x, key.y, key.z]
                .iter()
                .enumerate()
                .all(|(a, &c)| self.min[a] <= c && c <= self.max[a])
    }

    /// Number of storage chunk coordinates in the box.
    pub fn count(&self) -> u64 {
        (0..3)
            .map(|a| (i64::from(self.max[a]) - i64::from(self.min[a]) + 1).max(0) as u64)
            .product()
    }
}

/// `[floor(lo / n), floor(hi / n)]` as chunk coordinates, for the node range
/// `[lo, hi]` of an unbounded world with chunks of `n` nodes.
fn unbounded_axis(lo: i64, hi: i64, n: i64, axis: &str) -> Result<(i32, i32), StoreError> {
    let fit = |v: i64| {
        i32::try_from(v.div_euclid(n)).map_err(|_| {
            StoreError::input(
                "chunk",
                format!("its inputs along {axis} lie beyond chunk coordinate ±2^31"),
            )
        })
    };
    Ok((fit(lo)?, fit(hi)?))
}

impl BakeSource<'_> {
    /// Refuses a key whose LOD this kind does not have or whose layer it
    /// does not bake.
    fn check_lod_and_layer(&self, key: &ChunkKey) -> Result<(), StoreError> {
        if key.lod > self.max_lod() {
            return Err(StoreError::input(
                "lod",
                format!(
                    "{} is beyond the coarsest level {}",
                    key.lod,
                    self.max_lod()
                ),
            ));
        }
        let layers = if matches!(self, BakeSource::Map(_)) {
            2
        } else {
            1
        };
        if key.layer.0 >= layers {
            return Err(StoreError::input(
                "layer",
                format!("a {} world bakes layers below {layers}", self.kind()),
            ));
        }
        Ok(())
    }

    /// The storage chunks the bake of `key` reads (its [input
    /// box](BakeInputBox)), from how each kind meshes a chunk:
    ///
    /// - `side2d`: chunk `(cx, cy)` meshes its cells, reading the nodes
    ///   `[c*N, c*N + N]` on each axis: its own storage chunk and the next one
    ///   up on each axis (`[c, c + 1]`, clipped to the world);
    /// - `heightmap` at LOD `k` (`s = 2^k`): the nodes `[c*N - s, c*N + N + s]`
    ///   on each axis (its nodes and a one-sample apron for normals, the
    ///   collider the same), so `[c - 1, c + 1]` and `c + 2` when `s = N`;
    /// - `voxel` at LOD `k`: the base nodes `[c*N*s - s, (c + 1)*N*s + s]` on
    ///   each axis (the chunk's `2^k` world chunks per axis, the nodes one
    ///   sample past its faces for normals, and the first node of the next
    ///   chunk), so `[c*2^k - 1, (c + 1)*2^k]` when `2^k < N`;
    /// - `map` (terrain and water alike): the nodes `[c*N - 1, c*N + N + 1]`,
    ///   clipped to the map (the chunk's cells plus one ring for normals and
    ///   for water spreading from wet neighbours); the last chunk of a row or
    ///   column also owns the final node.
    ///
    /// `N` is the world's `chunk_cells`, storage chunk `c` owns the nodes
    /// `[c*N, c*N + N)` per axis.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidInput`] for a key this world does not bake (as
    /// [`ChunkBaker::bake`]: outside a bounded world, a LOD the kind does not
    /// have, a layer it does not bake, `z != 0` for a 2D kind) or whose inputs
    /// lie beyond chunk coordinate ±2^31.
    pub fn input_box(&self, key: &ChunkKey) -> Result<BakeInputBox, StoreError> {
        self.check_lod_and_layer(key)?;
        if self.region_axes() == 2 && key.z != 0 {
            return Err(StoreError::input(
                "chunk",
                format!("{} chunks have z = 0", self.kind()),
            ));
        }
        let coords = [key.x, key.y, key.z];
        let mut b = BakeInputBox {
            min: [0; 3],
            max: [0; 3],
        };
        let outside = || {
            StoreError::input(
                "chunk",
                format!("({}, {}, {}) is outside the world", key.x, key.y, key.z),
            )
        };
        match self {
            BakeSource::Side2d(w) => {
                let counts = [w.chunks_x(), w.chunks_y()];
                for a in 0..2 {
                    let c = u32::try_from(coords[a])
                        .ok()
                        .filter(|&c| c < counts[a])
                        .ok_or_else(outside)?;
                    b.min[a] = c as i32;
                    b.max[a] = (c + 1).min(counts[a] - 1) as i32;
                }
            }
            BakeSource::Map(w) => {
                let p = w.params();
                let n = i64::from(p.chunk_cells);
                let counts = w.chunk_count();
                let nodes = [i64::from(p.width_cells), i64::from(p.depth_cells)];
                for a in 0..2 {
                    let c = u32::try_from(coords[a])
                        .ok()
                        .filter(|&c| c < counts[a])
                        .ok_or_else(outside)?;
                    let owner = |v: i64| (v / n).min(i64::from(counts[a]) - 1) as i32;
                    let c = i64::from(c);
                    b.min[a] = owner((c * n - 1).max(0));
                    b.max[a] = owner((c * n + n + 1).min(nodes[a]));
                }
            }
            BakeSource::Heightmap(w) => {
                let n = i64::from(w.params().chunk_cells);
                let s = 1i64 << key.lod;
                for (a, name) in [(0, "x"), (1, "z")] {
                    let c = i64::from(coords[a]);
                    (b.min[a], b.max[a]) = unbounded_axis(c * n - s, c * n + n + s, n, name)?;
                }
            }
            BakeSource::Voxel(w) => {
                let n = i64::from(w.chunk_cells());
                let s = 1i64 << key.lod;
                for (a, name) in [(0, "x"), (1, "y"), (2, "z")] {
                    let base = i64::from(coords[a]) * n * s;
                    (b.min[a], b.max[a]) = unbounded_axis(base - s, base + n * s + s, n, name)?;
                }
            }
        }
        Ok(b)
    }
}

/// The metadata entries a bake's result can depend on.
const INPUT_META_KEYS: [&str; 5] = ["kind", "format_version", "seed", "params", "materials"];

/// What baked chunks are made from, read once per bake: a hash of the
/// world's metadata and the payload hash of every stored field chunk. From
/// it, [`stamp`](Self::stamp) gives each baked chunk its input stamp
/// cheaply.
///
/// # Input stamps
///
/// A baked chunk is a pure function of the world's metadata (kind, format
/// version, seed, parameters and, for `side2d`, the material table), its key
/// (position, LOD, layer) and the stored chunks in its [input
/// box](BakeSource::input_box); an absent chunk is generated, so absence is
/// an input too. The input stamp is 16 hex digits of FNV-1a 64 over the
/// bytes `"ITIS"`, the baked payload version, the metadata hash, the key's
/// five columns and, in ascending key order, every stored chunk of the box
/// with the FNV-1a 64 hash of its payload. Baked rows record it as their
/// [`source`](BakedRow::source): a bake skips a chunk whose row records the
/// stamp it has now and rebakes it otherwise, so an edit rebakes only the
/// chunks whose box holds a changed storage chunk, and an undo that brings
/// the stored chunks back makes the earlier rows current again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BakeInputs {
    meta: u64,
    chunks: BTreeMap<ChunkKey, u64>,
}

impl BakeInputs {
    /// Reads the metadata and every stored field chunk of `store` (one
    /// payload at a time).
    ///
    /// # Errors
    ///
    /// Whatever reading the store gives.
    pub fn read<S: ChunkStore + ?Sized>(store: &S) -> Result<Self, StoreError> {
        let mut h = Fnv1a64::new();
        h.write(b"ITBM");
        h.write(&[BAKED_PAYLOAD_VERSION]);
        for key in INPUT_META_KEYS {
            match store.meta_entry(key)? {
                None => h.write(&[0]),
                Some(v) => {
                    h.write(&[1]);
                    h.write(&(v.len() as u64).to_le_bytes());
                    h.write(v.as_bytes());
                }
            }
        }
        let mut chunks = BTreeMap::new();
        store.visit_chunks(ChunkLayer::FIELD, &mut |key, payload| {
            let mut p = Fnv1a64::new();
            p.write(&(payload.len() as u64).to_le_bytes());
            p.write(payload);
            chunks.insert(key, p.finish());
            Ok(())
        })?;
        Ok(BakeInputs {
            meta: h.finish(),
            chunks,
        })
    }

    /// The metadata part of every input stamp, as 16 hex digits: equal for
    /// two stores of the same world whatever their edits.
    pub fn meta_stamp(&self) -> String {
        format!("{:016x}", self.meta)
    }

    /// Number of stored field chunks read.
    pub fn stored_count(&self) -> usize {
        self.chunks.len()
    }

    /// The stored chunks in `b`, in ascending key order, with their payload
    /// hashes.
    pub fn stored_in(&self, b: &BakeInputBox) -> Vec<(ChunkKey, u64)> {
        let span = (i64::from(b.max[0]) - i64::from(b.min[0]) + 1).max(0) as u64;
        if span >= self.chunks.len() as u64 {
            return self
                .chunks
                .iter()
                .filter(|(k, _)| b.contains(k))
                .map(|(k, h)| (*k, *h))
                .collect();
        }
        let mut out = Vec::new();
        for x in b.min[0]..=b.max[0] {
            let lo = ChunkKey {
                layer: ChunkLayer::FIELD,
                x,
                y: b.min[1],
                z: i32::MIN,
                lod: 0,
            };
            let hi = ChunkKey {
                layer: ChunkLayer::FIELD,
                x,
                y: b.max[1],
                z: i32::MAX,
                lod: u8::MAX,
            };
            out.extend(
                self.chunks
                    .range(lo..=hi)
                    .filter(|(k, _)| b.contains(k))
                    .map(|(k, h)| (*k, *h)),
            );
        }
        out
    }

    /// The input stamp of baked chunk `key` of `source` (see the type's
    /// documentation). `source` must be the world the store holds.
    ///
    /// # Errors
    ///
    /// As [`BakeSource::input_box`].
    pub fn stamp(&self, source: &BakeSource<'_>, key: &ChunkKey) -> Result<String, StoreError> {
        let b = source.input_box(key)?;
        let mut h = Fnv1a64::new();
        h.write(b"ITIS");
        h.write(&[BAKED_PAYLOAD_VERSION]);
        h.write(&self.meta.to_le_bytes());
        write_key(&mut h, key);
        for (k, payload) in self.stored_in(&b) {
            write_key(&mut h, &k);
            h.write(&payload.to_le_bytes());
        }
        Ok(format!("{:016x}", h.finish()))
    }
}

fn write_key(h: &mut Fnv1a64, k: &ChunkKey) {
    h.write(&k.layer.0.to_le_bytes());
    for v in [k.x, k.y, k.z] {
        h.write(&v.to_le_bytes());
    }
    h.write(&[k.lod]);
}

impl WorldFile {
    /// The world stamp: 16 hex digits of FNV-1a 64 over the baked payload
    /// version, the world's kind, format version, seed and parameters, and
    /// every stored chunk (key and payload, in key order). Any edit (or
    /// undo) that changes the stored chunks changes it, so two files with the
    /// same stamp hold the same world and their baked rows are
    /// interchangeable. Baked rows record the finer per-chunk input stamp of
    /// [`BakeInputs`] instead, so that an edit makes only the chunks it can
    /// change stale.
    pub fn world_stamp(&self) -> Result<String, StoreError> {
        let sql = |e| StoreError::sqlite(self.path(), e);
        let mut h = StampHasher::new(|key| self.meta_entry(key))?;
        let mut stmt = self
            .connection()
            .prepare("SELECT layer, x, y, z, lod, payload FROM chunks ORDER BY layer, x, y, z, lod")
            .map_err(sql)?;
        let mut rows = stmt.query([]).map_err(sql)?;
        while let Some(row) = rows.next().map_err(sql)? {
            let mut cols = [0i64; 5];
            for (i, c) in cols.iter_mut().enumerate() {
                *c = row.get(i).map_err(sql)?;
            }
            let p = row.get_ref(5).map_err(sql)?;
            let bytes = p
                .as_blob()
                .map_err(|e| StoreError::corrupt(self.path(), format!("a chunk payload: {e}")))?;
            h.chunk_columns(cols, bytes);
        }
        Ok(h.finish())
    }

    /// Stores baked rows (inserting or replacing), in one transaction. Baked
    /// rows are derived data: the write does not count as a change of the
    /// world (other handles' writes are not refused afterwards), and it
    /// leaves the stroke log alone.
    ///
    /// # Errors
    ///
    /// [`StoreError::ReadOnly`] / [`StoreError::Busy`] when the file cannot
    /// be written now; nothing is written then.
    pub fn put_baked(&mut self, rows: &[BakedRow]) -> Result<(), StoreError> {
        self.ensure_baked_table()?;
        let path = self.path().to_path_buf();
        let sql = |e| StoreError::sqlite(&path, e);
        let tx = self
            .connection_mut()
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(sql)?;
        {
            let mut put = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO baked (layer, x, y, z, lod, source, hash, payload)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(sql)?;
            for r in rows {
                let k = &r.key;
                put.execute((
                    k.layer.0, k.x, k.y, k.z, k.lod, &r.source, &r.hash, &r.payload,
                ))
                .map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)
    }

    /// The stored row of `key`, if any.
    pub fn baked_row(&self, key: &ChunkKey) -> Result<Option<BakedRow>, StoreError> {
        if !self.has_baked_table()? {
            return Ok(None);
        }
        let sql = |e| StoreError::sqlite(self.path(), e);
        self.connection()
            .prepare_cached(
                "SELECT source, hash, payload FROM baked
                 WHERE layer = ?1 AND x = ?2 AND y = ?3 AND z = ?4 AND lod = ?5",
            )
            .and_then(|mut s| {
                s.query_row((key.layer.0, key.x, key.y, key.z, key.lod), |r| {
                    Ok(BakedRow {
                        key: *key,
                        source: r.get(0)?,
                        hash: r.get(1)?,
                        payload: r.get(2)?,
                    })
                })
                .optional()
            })
            .map_err(sql)
    }

    /// The decoded baked chunk of `key`, if stored.
    ///
    /// # Errors
    ///
    /// [`StoreError::Corrupt`] when the payload does not decode or its
    /// content hash differs from the recorded one.
    pub fn baked(&self, key: &ChunkKey) -> Result<Option<BakedChunk>, StoreError> {
        let Some(row) = self.baked_row(key)? else {
            return Ok(None);
        };
        let (chunk, hash) = decode_baked(&row.payload)
            .map_err(|e| StoreError::corrupt(self.path(), format!("baked chunk {key:?}: {e}")))?;
        if hash != row.hash {
            return Err(StoreError::corrupt(
                self.path(),
                format!(
                    "baked chunk {key:?}: content hash {hash}, recorded {}",
                    row.hash
                ),
            ));
        }
        Ok(Some(chunk))
    }

    /// The number of baked rows.
    pub fn baked_count(&self) -> Result<u64, StoreError> {
        if !self.has_baked_table()? {
            return Ok(0);
        }
        let n: i64 = self
            .connection()
            .query_row("SELECT COUNT(*) FROM baked", [], |r| r.get(0))
            .map_err(|e| StoreError::sqlite(self.path(), e))?;
        Ok(n as u64)
    }

    /// The keys of the baked rows recorded with stamp `source`, ascending.
    pub fn baked_keys_from(&self, source: &str) -> Result<BTreeSet<ChunkKey>, StoreError> {
        let mut out = BTreeSet::new();
        if !self.has_baked_table()? {
            return Ok(out);
        }
        let sql = |e| StoreError::sqlite(self.path(), e);
        let mut stmt = self
            .connection()
            .prepare("SELECT layer, x, y, z, lod FROM baked WHERE source = ?1")
            .map_err(sql)?;
        let rows = stmt
            .query_map([source], |r| {
                Ok(ChunkKey {
                    layer: ChunkLayer(r.get(0)?),
                    x: r.get(1)?,
                    y: r.get(2)?,
                    z: r.get(3)?,
                    lod: r.get(4)?,
                })
            })
            .map_err(sql)?;
        for k in rows {
            out.insert(k.map_err(sql)?);
        }
        Ok(out)
    }

    /// The key and recorded source of every baked row, in ascending key
    /// order (no payloads are read).
    pub fn baked_sources(&self) -> Result<BTreeMap<ChunkKey, String>, StoreError> {
        let mut out = BTreeMap::new();
        if !self.has_baked_table()? {
            return Ok(out);
        }
        let sql = |e| StoreError::sqlite(self.path(), e);
        let mut stmt = self
            .connection()
            .prepare("SELECT layer, x, y, z, lod, source FROM baked")
            .map_err(sql)?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    ChunkKey {
                        layer: ChunkLayer(r.get(0)?),
                        x: r.get(1)?,
                        y: r.get(2)?,
                        z: r.get(3)?,
                        lod: r.get(4)?,
                    },
                    r.get::<_, String>(5)?,
                ))
            })
            .map_err(sql)?;
        for row in rows {
            let (k, source) = row.map_err(sql)?;
            out.insert(k, source);
        }
        Ok(out)
    }

    /// At most `limit` keys of baked rows that come after `after` (all when
    /// `None`), in ascending [`ChunkKey`] order: a listing in pages, for
    /// walking a large table without holding it in memory.
    pub fn baked_keys_after(
        &self,
        after: Option<&ChunkKey>,
        limit: usize,
    ) -> Result<Vec<ChunkKey>, StoreError> {
        let mut out = Vec::new();
        if limit == 0 || !self.has_baked_table()? {
            return Ok(out);
        }
        let sql = |e| StoreError::sqlite(self.path(), e);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let key = |r: &rusqlite::Row<'_>| {
            Ok(ChunkKey {
                layer: ChunkLayer(r.get(0)?),
                x: r.get(1)?,
                y: r.get(2)?,
                z: r.get(3)?,
                lod: r.get(4)?,
            })
        };
        let conn = self.connection();
        let rows = match after {
            None => {
                let mut stmt = conn
                    .prepare_cached(
                        "SELECT layer, x, y, z, lod FROM baked
                         ORDER BY layer, x, y, z, lod LIMIT ?1",
                    )
                    .map_err(sql)?;
                stmt.query_map([limit], key)
                    .and_then(|r| r.collect::<rusqlite::Result<Vec<_>>>())
            }
            Some(k) => {
                let mut stmt = conn
                    .prepare_cached(
                        "SELECT layer, x, y, z, lod FROM baked
                         WHERE (layer, x, y, z, lod) > (?1, ?2, ?3, ?4, ?5)
                         ORDER BY layer, x, y, z, lod LIMIT ?6",
                    )
                    .map_err(sql)?;
                stmt.query_map((k.layer.0, k.x, k.y, k.z, k.lod, limit), key)
                    .and_then(|r| r.collect::<rusqlite::Result<Vec<_>>>())
            }
        };
        out.extend(rows.map_err(sql)?);
        Ok(out)
    }

    /// `(key, content hash)` of every baked row, in ascending key order.
    pub fn baked_hashes(&self) -> Result<Vec<(ChunkKey, String)>, StoreError> {
        let mut out = Vec::new();
        self.for_each_baked(|row| {
            out.push((row.key, row.hash));
            Ok(())
        })?;
        Ok(out)
    }

    /// Calls `f` with every baked row in ascending key order (one payload
    /// held at a time). Stops at the first error.
    pub fn for_each_baked(
        &self,
        mut f: impl FnMut(BakedRow) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        if !self.has_baked_table()? {
            return Ok(());
        }
        let sql = |e| StoreError::sqlite(self.path(), e);
        let mut stmt = self
            .connection()
            .prepare(
                "SELECT layer, x, y, z, lod, source, hash, payload FROM baked
                 ORDER BY layer, x, y, z, lod",
            )
            .map_err(sql)?;
        let mut rows = stmt.query([]).map_err(sql)?;
        while let Some(r) = rows.next().map_err(sql)? {
            let row = BakedRow {
                key: ChunkKey {
                    layer: ChunkLayer(r.get(0).map_err(sql)?),
                    x: r.get(1).map_err(sql)?,
                    y: r.get(2).map_err(sql)?,
                    z: r.get(3).map_err(sql)?,
                    lod: r.get(4).map_err(sql)?,
                },
                source: r.get(5).map_err(sql)?,
                hash: r.get(6).map_err(sql)?,
                payload: r.get(7).map_err(sql)?,
            };
            f(row)?;
        }
        Ok(())
    }

    /// A content hash of the baked rows: 16 hex digits of FNV-1a 64 over
    /// every row's key and the content hash of its decoded payload, in key
    /// order — so it depends on what is stored, not on the order rows were
    /// written, the thread count of the bake or the compressor. `None` when
    /// nothing is baked.
    ///
    /// Every payload is decoded and checked against its recorded hash.
    ///
    /// # Errors
    ///
    /// [`StoreError::Corrupt`] for a payload that does not decode or does
    /// not match its recorded hash.
    pub fn baked_content_hash(&self) -> Result<Option<String>, StoreError> {
        let mut h = BakedHasher::new();
        let path = self.path().to_path_buf();
        self.for_each_baked(|row| h.row(&path, &row))?;
        Ok(h.finish())
    }

    /// The content hash of the world and its baked chunks: `world_hash` (a
    /// document's `content_hash`, which covers the generator and every
    /// edited chunk) when nothing is baked, otherwise 16 hex digits of
    /// FNV-1a 64 over `world_hash` and [`baked_content_hash`](Self::baked_content_hash).
    ///
    /// # Errors
    ///
    /// As [`baked_content_hash`](Self::baked_content_hash).
    pub fn stored_content_hash(&self, world_hash: &str) -> Result<String, StoreError> {
        Ok(match self.baked_content_hash()? {
            None => world_hash.to_string(),
            Some(baked) => {
                let mut h = Fnv1a64::new();
                h.write(b"ITSH");
                h.write(world_hash.as_bytes());
                h.write(baked.as_bytes());
                format!("{:016x}", h.finish())
            }
        })
    }
}

/// The running world stamp (see [`WorldFile::world_stamp`]), shared by
/// every [`ChunkStore`](crate::ChunkStore) so that the same world gets the
/// same stamp in any of them.
pub(crate) struct StampHasher(Fnv1a64);

impl StampHasher {
    /// Starts a stamp with the world's metadata, read through `meta_entry`.
    pub(crate) fn new(
        meta_entry: impl Fn(&str) -> Result<Option<String>, StoreError>,
    ) -> Result<Self, StoreError> {
        let mut h = Fnv1a64::new();
        h.write(b"ITWS");
        h.write(&[BAKED_PAYLOAD_VERSION]);
        for key in ["kind", "format_version", "seed", "params"] {
            let v = meta_entry(key)?.unwrap_or_default();
            h.write(&(v.len() as u64).to_le_bytes());
            h.write(v.as_bytes());
        }
        Ok(StampHasher(h))
    }

    /// Adds one stored chunk; chunks must come in ascending key order.
    pub(crate) fn chunk(&mut self, key: &ChunkKey, payload: &[u8]) {
        let cols = [
            i64::from(key.layer.0),
            i64::from(key.x),
            i64::from(key.y),
            i64::from(key.z),
            i64::from(key.lod),
        ];
        self.chunk_columns(cols, payload);
    }

    /// As [`chunk`](Self::chunk), with the key as the five stored columns
    /// `(layer, x, y, z, lod)`.
    fn chunk_columns(&mut self, cols: [i64; 5], payload: &[u8]) {
        for v in cols {
            self.0.write(&v.to_le_bytes());
        }
        self.0.write(&(payload.len() as u64).to_le_bytes());
        self.0.write(payload);
    }

    /// The stamp: 16 lowercase hex digits.
    pub(crate) fn finish(&self) -> String {
        format!("{:016x}", self.0.finish())
    }
}

/// The running content hash of baked rows (see
/// [`WorldFile::baked_content_hash`]), shared by every store.
pub(crate) struct BakedHasher {
    h: Fnv1a64,
    any: bool,
}

impl BakedHasher {
    pub(crate) fn new() -> Self {
        let mut h = Fnv1a64::new();
        h.write(b"ITBH");
        BakedHasher { h, any: false }
    }

    /// Adds one row, rows in ascending key order: decodes its payload and
    /// checks it against the recorded hash ([`StoreError::Corrupt`] at
    /// `location` otherwise).
    pub(crate) fn row(&mut self, location: &Path, row: &BakedRow) -> Result<(), StoreError> {
        let (_, hash) = decode_baked(&row.payload).map_err(|e| {
            StoreError::corrupt(location, format!("baked chunk {:?}: {e}", row.key))
        })?;
        if hash != row.hash {
            return Err(StoreError::corrupt(
                location,
                format!(
                    "baked chunk {:?}: content hash {hash}, recorded {}",
                    row.key, row.hash
                ),
            ));
        }
        let k = row.key;
        self.h.write(&k.layer.0.to_le_bytes());
        for v in [k.x, k.y, k.z] {
            self.h.write(&v.to_le_bytes());
        }
        self.h.write(&[k.lod]);
        self.h.write(hash.as_bytes());
        self.any = true;
        Ok(())
    }

    /// The hash, or `None` when no row was added.
    pub(crate) fn finish(&self) -> Option<String> {
        self.any.then(|| format!("{:016x}", self.h.finish()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_round_trips() {
        for d in [
            0i64,
            1,
            -1,
            2,
            -2,
            i64::from(u32::MAX),
            -i64::from(u32::MAX),
        ] {
            assert_eq!(unzigzag(zigzag(d)), d);
        }
    }

    #[test]
    fn axis_chunks_are_half_open() {
        assert_eq!(axis_chunks(0.0, 64.0, 0.0, 32.0), Ok((0, 1)));
        assert_eq!(axis_chunks(0.0, 64.5, 0.0, 32.0), Ok((0, 2)));
        assert_eq!(axis_chunks(-1.0, 1.0, 0.0, 32.0), Ok((-1, 0)));
        assert!(axis_chunks(-1e30, 1.0, 0.0, 1.0).is_err());
    }

    #[test]
    fn a_small_chunk_round_trips() {
        let chunk = BakedChunk {
            positions: vec![[0.0, 1.0, 2.0], [3.0, -4.0, 5.5], [6.0, 7.0, -0.0]],
            normals: vec![[0.0, 0.0, 1.0]; 3],
            indices: vec![0, 1, 2, 2, 1, 0],
            collider: BakedCollider::Polylines(vec![BakedPolyline {
                points: vec![[0.0, 0.0], [1.0, 2.0]],
                closed: false,
            }]),
        };
        let (bytes, hash) = encode_baked(&chunk).unwrap();
        let (back, hash2) = decode_baked(&bytes).unwrap();
        assert_eq!(hash, hash2);
        assert_eq!(chunk.content_hash().unwrap(), hash);
        assert_eq!(back.positions.len(), 3);
        assert_eq!(back.positions[2][2].to_bits(), (-0.0f32).to_bits());
        assert_eq!(back, chunk);
    }
}
