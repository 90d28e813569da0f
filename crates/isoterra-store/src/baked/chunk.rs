//! Baked chunks and their payload: the data types of a bake's result
//! ([`BakedChunk`], [`BakedCollider`], [`BakedPolyline`], [`BakedHeightfield`]),
//! the baked layers ([`BAKED_TERRAIN`], [`BAKED_WATER`]), the payload codec
//! ([`encode_baked`], [`decode_baked`]) with its content hash, and
//! [`BakedRow::new`], which turns a chunk into the row a store keeps.
//!
//! Plain data and bytes: nothing here knows how a world is meshed or
//! where rows are stored.

use std::path::Path;

use crate::hash::baked_body_hash;
use crate::wire::{Reader, Writer, pack_body, unpack_body};
use crate::{BakedRow, ChunkKey, ChunkLayer, StoreError};

/// The layer of baked terrain (the kinds' one surface mesh).
pub const BAKED_TERRAIN: ChunkLayer = ChunkLayer(0);
/// The layer of baked water surfaces (`map` worlds).
pub const BAKED_WATER: ChunkLayer = ChunkLayer(1);
/// The newest payload version: [`decode_baked`] reads versions 1 and 2;
/// [`encode_baked`] writes version 1 for chunks without vertex attributes
/// (byte for byte what earlier builds wrote) and version 2 for chunks with
/// [`BakedChunk::materials`] or [`BakedChunk::morph`].
pub const BAKED_PAYLOAD_VERSION: u8 = 2;
/// The first four bytes of every baked payload.
pub(crate) const BAKED_MAGIC: &[u8; 4] = b"ITBK";
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
    /// Material id of each vertex, one per position (or none): voxel
    /// chunks.
    pub materials: Vec<u8>,
    /// LOD morph of each vertex, one per position (or none): the morph
    /// factor and the height of the next coarser LOD there (heightmap
    /// chunks).
    pub morph: Vec<[f32; 2]>,
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
        Ok(baked_body_hash(
            self.version(),
            self.collider.code(),
            &raw_body(self)?,
        ))
    }

    /// The payload version this chunk is written in.
    fn version(&self) -> u8 {
        if self.materials.is_empty() && self.morph.is_empty() {
            1
        } else {
            2
        }
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
    for (n, what) in [
        (chunk.materials.len(), "materials"),
        (chunk.morph.len(), "morph values"),
    ] {
        if n != 0 && n != v {
            return Err(StoreError::input(
                "baked chunk",
                format!("{n} {what} for {v} positions"),
            ));
        }
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
    if chunk.version() >= 2 {
        w.u32(len_u32(chunk.materials.len(), "materials")?);
        w.bytes(&chunk.materials);
        w.u32(len_u32(chunk.morph.len(), "morph values")?);
        w.f32_planes(chunk.morph.iter().flatten().copied());
    }
    Ok(w.buf)
}

/// Encodes a baked chunk; returns the payload and its content hash.
///
/// ```text
/// offset size  field
///      0    4  magic  b"ITBK"
///      4    1  payload version (1 or 2)
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
/// none and for a triangle mesh (the render mesh is the collider). Version
/// 2 appends the vertex attributes: a material count (u32, `0` or `V`) and
/// that many material bytes, then a morph count (u32, `0` or `V`) and the
/// `2V` morph values (factor, coarser height) as byte planes. A chunk
/// without attributes is written as version 1.
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
/// not fit in 32 bits; also when materials or morph values are neither
/// absent nor one per position.
pub fn encode_baked(chunk: &BakedChunk) -> Result<(Vec<u8>, String), StoreError> {
    let raw = raw_body(chunk)?;
    let kind = chunk.collider.code();
    let version = chunk.version();
    let hash = baked_body_hash(version, kind, &raw);
    let raw_len = len_u32(raw.len(), "body bytes")?;
    let (body, flags) = pack_body(raw);
    let mut out = Writer::with_capacity(HEADER_LEN + body.len());
    out.bytes(BAKED_MAGIC);
    out.u8(version);
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
    if &header[0..4] != BAKED_MAGIC {
        return Err(bad("bad magic (not a baked chunk)".into()));
    }
    let (version, flags, kind, reserved) = (header[4], header[5], header[6], header[7]);
    if !(1..=BAKED_PAYLOAD_VERSION).contains(&version) {
        return Err(bad(format!(
            "payload version {version}; this build reads versions 1 to {BAKED_PAYLOAD_VERSION}"
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
    let (mut materials, mut morph) = (Vec::new(), Vec::new());
    if version >= 2 {
        let nm = b.u32().ok_or_else(truncated)? as usize;
        if nm != 0 && nm != v {
            return Err(bad(format!("{nm} materials for {v} positions")));
        }
        materials = b.take(nm).ok_or_else(truncated)?.to_vec();
        let nf = b.u32().ok_or_else(truncated)? as usize;
        if nf != 0 && nf != v {
            return Err(bad(format!("{nf} morph values for {v} positions")));
        }
        morph = nf
            .checked_mul(2)
            .and_then(|n| b.f32_planes(n))
            .ok_or_else(truncated)?
            .chunks_exact(2)
            .map(|c| [c[0], c[1]])
            .collect();
        if materials.is_empty() && morph.is_empty() {
            return Err(bad("version 2 without vertex attributes".into()));
        }
    }
    if b.remaining() != 0 {
        return Err(bad(format!("{} bytes after the collider", b.remaining())));
    }
    Ok((
        BakedChunk {
            positions,
            normals,
            indices,
            collider,
            materials,
            morph,
        },
        baked_body_hash(version, kind, &raw),
    ))
}

/// Decodes a stored row's payload and checks it against the content hash
/// the row records; returns the chunk and its hash. A payload that does not
/// decode or does not match is [`StoreError::Corrupt`] at `location`.
pub(crate) fn decode_row(
    location: &Path,
    row: &BakedRow,
) -> Result<(BakedChunk, String), StoreError> {
    let (chunk, hash) = decode_baked(&row.payload)
        .map_err(|e| StoreError::corrupt(location, format!("baked chunk {:?}: {e}", row.key)))?;
    if hash != row.hash {
        return Err(StoreError::corrupt(
            location,
            format!(
                "baked chunk {:?}: content hash {hash}, recorded {}",
                row.key, row.hash
            ),
        ));
    }
    Ok((chunk, hash))
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
    fn a_small_chunk_round_trips() {
        let chunk = BakedChunk {
            positions: vec![[0.0, 1.0, 2.0], [3.0, -4.0, 5.5], [6.0, 7.0, -0.0]],
            normals: vec![[0.0, 0.0, 1.0]; 3],
            indices: vec![0, 1, 2, 2, 1, 0],
            collider: BakedCollider::Polylines(vec![BakedPolyline {
                points: vec![[0.0, 0.0], [1.0, 2.0]],
                closed: false,
            }]),
            ..BakedChunk::default()
        };
        let (bytes, hash) = encode_baked(&chunk).unwrap();
        let (back, hash2) = decode_baked(&bytes).unwrap();
        assert_eq!(hash, hash2);
        assert_eq!(chunk.content_hash().unwrap(), hash);
        assert_eq!(back.positions.len(), 3);
        assert_eq!(back.positions[2][2].to_bits(), (-0.0f32).to_bits());
        assert_eq!(back, chunk);
        assert_eq!(bytes[4], 1, "no attributes: version 1");
    }

    #[test]
    fn vertex_attributes_round_trip_as_version_2() {
        let base = BakedChunk {
            positions: vec![[0.0, 1.0, 2.0], [3.0, -4.0, 5.5], [6.0, 7.0, -0.0]],
            normals: vec![[0.0, 1.0, 0.0]; 3],
            indices: vec![0, 1, 2],
            collider: BakedCollider::TriMesh,
            ..BakedChunk::default()
        };
        let plain = base.content_hash().unwrap();
        for chunk in [
            BakedChunk {
                materials: vec![1, 2, 3],
                ..base.clone()
            },
            BakedChunk {
                morph: vec![[0.0, 1.0], [0.5, -4.0], [1.0, 7.5]],
                ..base.clone()
            },
        ] {
            let (bytes, hash) = encode_baked(&chunk).unwrap();
            assert_eq!(bytes[4], 2);
            assert_ne!(hash, plain);
            let (back, hash2) = decode_baked(&bytes).unwrap();
            assert_eq!((back, hash2), (chunk.clone(), hash));
            // Every truncation is refused, never a panic.
            for n in 0..bytes.len() {
                assert!(decode_baked(&bytes[..n]).is_err());
            }
        }
        let wrong = BakedChunk {
            materials: vec![1, 2],
            ..base.clone()
        };
        assert!(encode_baked(&wrong).is_err());
    }
}
