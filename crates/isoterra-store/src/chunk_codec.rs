//! The chunk payload codec: a small header and a zstd-compressed body.
//!
//! ```text
//! offset size  field
//!      0    4  magic  b"ITCK"
//!      4    1  codec version (1)
//!      5    1  value encoding: 0 = f32, 1 = u8, 2 = u16
//!      6    1  flags: bit 0 = material ids follow, bit 1 = body is zstd-compressed
//!      7    1  reserved, 0
//!      8   12  dims: nodes along x, y, z as u32 (z = 1 for 2D chunks)
//!     20    …  body
//! ```
//!
//! The body holds the values in storage order (x fastest, then y, then z),
//! then, when flagged, one material id (`u8`) per node. `f32` values are
//! their IEEE-754 bits and u16 codes their two bytes, both little-endian and
//! split into byte planes (all first bytes, then all second bytes, …), which
//! is exact and compresses better. `u8`/`u16` values are quantized with
//! [`Quantizer8::DEFAULT`] / [`Quantizer16::DEFAULT`] (range `[-1, 1]`):
//! values outside the range saturate, values inside come back within half a
//! quantization step. Use `F32` wherever exact round-trips matter (the
//! document layer always does).
//!
//! Decoding validates every field and never panics: a bad magic, an unknown
//! version, encoding or flag, zero or oversized dims, a body of the wrong
//! length and non-finite `f32` values are all [`StoreError::CorruptData`].

use isoterra_field::{Quantizer8, Quantizer16};

use crate::StoreError;
use crate::wire::{FLAG_MATERIALS, FLAG_ZSTD, Reader, Writer, pack_body, unpack_body};

const MAGIC: &[u8; 4] = b"ITCK";
const VERSION: u8 = 1;
const HEADER_LEN: usize = 20;
const WHAT: &str = "chunk payload";

/// How a chunk's density values are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChunkEncoding {
    /// Exact `f32` (4 bytes per node before compression).
    F32,
    /// 8-bit quantized with [`Quantizer8::DEFAULT`] (1 byte per node).
    U8,
    /// 16-bit quantized with [`Quantizer16::DEFAULT`] (2 bytes per node).
    U16,
}

impl ChunkEncoding {
    pub(crate) fn code(self) -> u8 {
        match self {
            ChunkEncoding::F32 => 0,
            ChunkEncoding::U8 => 1,
            ChunkEncoding::U16 => 2,
        }
    }

    pub(crate) fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(ChunkEncoding::F32),
            1 => Some(ChunkEncoding::U8),
            2 => Some(ChunkEncoding::U16),
            _ => None,
        }
    }

    pub(crate) fn bytes_per_value(self) -> usize {
        match self {
            ChunkEncoding::F32 => 4,
            ChunkEncoding::U8 => 1,
            ChunkEncoding::U16 => 2,
        }
    }
}

/// The nodes of one chunk: densities, optional material ids, and how to store them.
///
/// Built through [`ChunkData::new`], which checks that the lengths match the
/// dims and that every value is finite, so [`encode_chunk`] cannot fail.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkData {
    encoding: ChunkEncoding,
    dims: [u32; 3],
    values: Vec<f32>,
    materials: Option<Vec<u8>>,
}

impl ChunkData {
    /// The most nodes one chunk may hold: 2^24 (64 MiB of `f32`). Chunks are
    /// meant to be small; the cap keeps a damaged header from asking for
    /// gigabytes.
    pub const MAX_NODES: u64 = 1 << 24;

    /// A chunk of `dims` nodes (x, y, z; use `z = 1` for 2D) with row-major
    /// `values` and, optionally, one material id per node.
    pub fn new(
        encoding: ChunkEncoding,
        dims: [u32; 3],
        values: Vec<f32>,
        materials: Option<Vec<u8>>,
    ) -> Result<Self, StoreError> {
        let n = check_dims(dims).map_err(|r| StoreError::input("chunk dims", r))?;
        if values.len() != n {
            return Err(StoreError::input(
                "chunk values",
                format!("{} values for {n} nodes", values.len()),
            ));
        }
        if let Some(i) = isoterra_field::first_non_finite(&values) {
            return Err(StoreError::input(
                "chunk values",
                format!("value {} at index {i} is not finite", values[i]),
            ));
        }
        if let Some(m) = &materials
            && m.len() != n
        {
            return Err(StoreError::input(
                "chunk materials",
                format!("{} material ids for {n} nodes", m.len()),
            ));
        }
        Ok(ChunkData {
            encoding,
            dims,
            values,
            materials,
        })
    }

    /// How the values are stored.
    pub fn encoding(&self) -> ChunkEncoding {
        self.encoding
    }

    /// Nodes along x, y and z.
    pub fn dims(&self) -> [u32; 3] {
        self.dims
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.values.len()
    }

    /// Densities in storage order (x fastest). After decoding a quantized
    /// chunk these are the dequantized values.
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// Material ids, one per node, when the chunk carries them.
    pub fn materials(&self) -> Option<&[u8]> {
        self.materials.as_deref()
    }

    /// Takes the chunk apart: `(values, materials)`.
    pub fn into_parts(self) -> (Vec<f32>, Option<Vec<u8>>) {
        (self.values, self.materials)
    }
}

fn check_dims(dims: [u32; 3]) -> Result<usize, String> {
    if dims.contains(&0) {
        return Err(format!("{dims:?} has a zero side"));
    }
    let n = dims
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d as u64));
    match n {
        Some(n) if n <= ChunkData::MAX_NODES => Ok(n as usize),
        _ => Err(format!(
            "{dims:?} holds more than {} nodes",
            ChunkData::MAX_NODES
        )),
    }
}

/// Encodes a chunk into its stored payload (header + compressed body).
pub fn encode_chunk(chunk: &ChunkData) -> Vec<u8> {
    let n = chunk.values.len();
    let mut body = Writer::with_capacity(n * (chunk.encoding.bytes_per_value() + 1));
    match chunk.encoding {
        ChunkEncoding::F32 => body.f32_planes(chunk.values.iter().copied()),
        ChunkEncoding::U8 => {
            let mut codes = Vec::new();
            Quantizer8::DEFAULT.encode(&chunk.values, &mut codes);
            body.bytes(&codes);
        }
        ChunkEncoding::U16 => {
            let mut codes = Vec::new();
            Quantizer16::DEFAULT.encode(&chunk.values, &mut codes);
            body.u16_planes(&codes);
        }
    }
    let mut flags = 0;
    if let Some(m) = &chunk.materials {
        body.bytes(m);
        flags |= FLAG_MATERIALS;
    }
    let (body, zstd_flag) = pack_body(body.buf);
    flags |= zstd_flag;
    let mut out = Writer::with_capacity(HEADER_LEN + body.len());
    out.bytes(MAGIC);
    out.u8(VERSION);
    out.u8(chunk.encoding.code());
    out.u8(flags);
    out.u8(0);
    for d in chunk.dims {
        out.u32(d);
    }
    out.bytes(&body);
    out.buf
}

/// Decodes a stored payload, validating every field.
pub fn decode_chunk(payload: &[u8]) -> Result<ChunkData, StoreError> {
    let bad = |reason: String| StoreError::data(WHAT, reason);
    let mut r = Reader::new(payload);
    let header = r.take(HEADER_LEN).ok_or_else(|| {
        bad(format!(
            "{} bytes is shorter than the {HEADER_LEN}-byte header",
            payload.len()
        ))
    })?;
    if &header[0..4] != MAGIC {
        return Err(bad("bad magic (not an isoterra chunk)".into()));
    }
    let mut h = Reader::new(&header[4..]);
    let (version, enc, flags, reserved) = (
        h.u8().unwrap_or(0),
        h.u8().unwrap_or(0),
        h.u8().unwrap_or(0),
        h.u8().unwrap_or(0),
    );
    if version != VERSION {
        return Err(bad(format!(
            "codec version {version} is not supported (this build reads {VERSION})"
        )));
    }
    let encoding = ChunkEncoding::from_code(enc)
        .ok_or_else(|| bad(format!("unknown value encoding {enc}")))?;
    if flags & !(FLAG_MATERIALS | FLAG_ZSTD) != 0 || reserved != 0 {
        return Err(bad(format!("unknown flags {flags:#04x}/{reserved:#04x}")));
    }
    let dims = [
        h.u32().unwrap_or(0),
        h.u32().unwrap_or(0),
        h.u32().unwrap_or(0),
    ];
    let n = check_dims(dims).map_err(|r| bad(format!("dims {r}")))?;
    let has_materials = flags & FLAG_MATERIALS != 0;
    let raw_len = n * (encoding.bytes_per_value() + usize::from(has_materials));
    let rest = r.take(r.remaining()).unwrap_or_default();
    let raw = unpack_body(rest, flags, raw_len, WHAT)?;
    let mut b = Reader::new(&raw);
    let short = || bad("body ends early".into());
    let values = match encoding {
        ChunkEncoding::F32 => {
            let v = b.f32_planes(n).ok_or_else(short)?;
            if let Some(i) = v.iter().position(|x| !x.is_finite()) {
                return Err(bad(format!("value at node {i} is not finite ({})", v[i])));
            }
            v
        }
        ChunkEncoding::U8 => {
            let codes = b.take(n).ok_or_else(short)?;
            let mut v = Vec::new();
            Quantizer8::DEFAULT.decode(codes, &mut v);
            v
        }
        ChunkEncoding::U16 => {
            let codes = b.u16_planes(n).ok_or_else(short)?;
            let mut v = Vec::new();
            Quantizer16::DEFAULT.decode(&codes, &mut v);
            v
        }
    };
    let materials = if has_materials {
        Some(b.take(n).ok_or_else(short)?.to_vec())
    } else {
        None
    };
    Ok(ChunkData {
        encoding,
        dims,
        values,
        materials,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(encoding: ChunkEncoding, materials: bool) -> ChunkData {
        let values: Vec<f32> = (0..12).map(|i| (i as f32 - 6.0) / 7.0).collect();
        let mats = materials.then(|| (0..12u8).collect());
        ChunkData::new(encoding, [4, 3, 1], values, mats).unwrap()
    }

    #[test]
    fn f32_round_trip_is_bitwise() {
        let c = sample(ChunkEncoding::F32, true);
        let back = decode_chunk(&encode_chunk(&c)).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn quantized_round_trip_is_within_half_a_step() {
        for (enc, step) in [
            (ChunkEncoding::U8, 2.0 / 255.0),
            (ChunkEncoding::U16, 2.0 / 65535.0),
        ] {
            let c = sample(enc, false);
            let back = decode_chunk(&encode_chunk(&c)).unwrap();
            assert_eq!(back.dims(), c.dims());
            assert_eq!(back.encoding(), enc);
            assert!(back.materials().is_none());
            for (a, b) in c.values().iter().zip(back.values()) {
                assert!((a - b).abs() <= step / 2.0 + 1e-6, "{a} vs {b}");
            }
        }
    }

    #[test]
    fn constructor_rejects_bad_shapes() {
        assert!(ChunkData::new(ChunkEncoding::F32, [0, 3, 1], vec![], None).is_err());
        assert!(ChunkData::new(ChunkEncoding::F32, [2, 2, 1], vec![0.0; 3], None).is_err());
        assert!(ChunkData::new(ChunkEncoding::F32, [2, 1, 1], vec![0.0, f32::NAN], None).is_err());
        assert!(
            ChunkData::new(ChunkEncoding::F32, [2, 1, 1], vec![0.0; 2], Some(vec![1])).is_err()
        );
        assert!(ChunkData::new(ChunkEncoding::F32, [u32::MAX, u32::MAX, 2], vec![], None).is_err());
    }

    #[test]
    fn header_fields_are_validated() {
        let good = encode_chunk(&sample(ChunkEncoding::F32, true));
        for (offset, value) in [(0, b'X'), (4, 9), (5, 7), (6, 0x80), (7, 1), (8, 0)] {
            let mut bad = good.clone();
            bad[offset] = value;
            assert!(
                matches!(decode_chunk(&bad), Err(StoreError::CorruptData { .. })),
                "byte {offset} = {value}"
            );
        }
        // A header claiming more nodes than the body holds.
        let mut bad = good.clone();
        bad[8] = 5;
        assert!(decode_chunk(&bad).is_err());
        assert!(decode_chunk(&good[..good.len() - 1]).is_err());
        assert!(decode_chunk(&[]).is_err());
    }

    #[test]
    fn non_finite_f32_is_rejected() {
        let c = ChunkData::new(ChunkEncoding::F32, [1, 1, 1], vec![1.0], None).unwrap();
        let mut raw = Writer::with_capacity(4);
        raw.f32_planes([f32::INFINITY].into_iter());
        let mut p = encode_chunk(&c)[..HEADER_LEN].to_vec();
        p[6] = 0; // stored uncompressed
        p.extend_from_slice(&raw.buf);
        assert!(matches!(
            decode_chunk(&p),
            Err(StoreError::CorruptData { .. })
        ));
    }
}
