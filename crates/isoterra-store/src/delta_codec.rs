//! The stroke delta codec: the sparse before/after values of one edit.
//!
//! ```text
//! offset size  field
//!      0    4  magic b"ITDL"
//!      4    1  codec version (1)
//!      5    1  flags: bit 0 = material ids follow, bit 1 = body is zstd-compressed
//!      6    1  value encoding: 0 = f32, 1 = u8, 2 = u16 (as in the chunk codec)
//!      7    1  reserved, 0
//!      8    4  body length before compression (u32, little-endian)
//!     12    …  body
//! body:
//!   varint x0, y0, x1, y1        the edit's node rectangle
//!   varint count                 number of changed nodes
//!   varint first index, then varint (index - previous - 1) for each next one
//!   before values, after values  f32: bits, little-endian, as byte planes;
//!                                u8: one code each; u16: codes as byte planes
//!   material ids before, after   count bytes each (when flagged)
//! ```
//!
//! Varints are unsigned LEB128. Node indices are storage indices and must be
//! strictly ascending, which the gap coding makes impossible to break on
//! decode. The round-trip is exact (bit for bit): a quantized encoding
//! ([`encode_delta_as`], for worlds that keep their values on the `u8` or
//! `u16` grid over `[-1, 1]`) refuses a value off its grid. Byte 6 was
//! reserved (0) before quantized deltas existed, so every older delta reads
//! as `f32`.

use isoterra_field::NodeRect;
use isoterra_world::Side2dEdit;

use isoterra_field::{Quantizer8, Quantizer16};

use crate::wire::{FLAG_MATERIALS, FLAG_ZSTD, Reader, Writer, pack_body, unpack_body_within};
use crate::{ChunkEncoding, StoreError};

const MAGIC: &[u8; 4] = b"ITDL";
const VERSION: u8 = 1;
const HEADER_LEN: usize = 12;
const WHAT: &str = "stroke delta";

/// The sparse change one stroke made: which nodes, and their values and
/// material ids before and after.
///
/// This is the world crate's [`Side2dEdit`] under the name the codec uses: the
/// document layer stores edits as they are. `mat_before` / `mat_after` are
/// either both empty (no materials) or one per node; [`Side2dEdit::validate`]
/// states every invariant the codec relies on.
pub type EditDelta = Side2dEdit;

/// Encodes a delta with exact `f32` values. Fails only when the delta breaks
/// its invariants (see [`Side2dEdit::validate`]).
pub fn encode_delta(delta: &EditDelta) -> Result<Vec<u8>, StoreError> {
    encode_delta_as(delta, ChunkEncoding::F32)
}

/// The values of a quantized encoding as codes, or an error naming the first
/// value that is not exactly on the grid (it would not come back bit for bit).
fn codes_of(values: &[f32], encoding: ChunkEncoding) -> Result<Vec<u16>, StoreError> {
    let mut codes = Vec::with_capacity(values.len());
    for (k, &v) in values.iter().enumerate() {
        let (q, back) = match encoding {
            ChunkEncoding::U8 => {
                let q = Quantizer8::DEFAULT.quantize(v);
                (q, Quantizer8::DEFAULT.dequantize(q))
            }
            ChunkEncoding::U16 | ChunkEncoding::F32 => {
                let q = Quantizer16::DEFAULT.quantize(v);
                (q, Quantizer16::DEFAULT.dequantize(q))
            }
        };
        if back.to_bits() != v.to_bits() {
            return Err(StoreError::input(
                "edit delta",
                format!(
                    "value {v} (entry {k}) is not on the {} grid; a quantized world snaps its values before storing them",
                    encoding_name(encoding)
                ),
            ));
        }
        codes.push(q as u16);
    }
    Ok(codes)
}

fn encoding_name(encoding: ChunkEncoding) -> &'static str {
    match encoding {
        ChunkEncoding::F32 => "f32",
        ChunkEncoding::U8 => "u8",
        ChunkEncoding::U16 => "u16",
    }
}

/// Writes values in `encoding` (checked on its grid by [`codes_of`]).
fn write_values(
    body: &mut Writer,
    values: &[f32],
    encoding: ChunkEncoding,
) -> Result<(), StoreError> {
    match encoding {
        ChunkEncoding::F32 => body.f32_planes(values.iter().copied()),
        ChunkEncoding::U8 => {
            let codes = codes_of(values, encoding)?;
            body.bytes(&codes.iter().map(|&c| c as u8).collect::<Vec<u8>>());
        }
        ChunkEncoding::U16 => body.u16_planes(&codes_of(values, encoding)?),
    }
    Ok(())
}

/// Reads `n` values written by [`write_values`].
fn read_values(b: &mut Reader<'_>, n: usize, encoding: ChunkEncoding) -> Option<Vec<f32>> {
    let mut out = Vec::new();
    match encoding {
        ChunkEncoding::F32 => return b.f32_planes(n),
        ChunkEncoding::U8 => Quantizer8::DEFAULT.decode(b.take(n)?, &mut out),
        ChunkEncoding::U16 => Quantizer16::DEFAULT.decode(&b.u16_planes(n)?, &mut out),
    }
    Some(out)
}

/// Encodes a delta with its values in `encoding`: [`ChunkEncoding::F32`]
/// writes exactly what [`encode_delta`] writes; `U8` and `U16` write one
/// code per value and refuse a value that is not exactly on their grid over
/// `[-1, 1]` (see [`Quantizer8`]), so the round trip stays exact.
pub fn encode_delta_as(delta: &EditDelta, encoding: ChunkEncoding) -> Result<Vec<u8>, StoreError> {
    delta
        .validate()
        .map_err(|e| StoreError::input("edit delta", e.to_string()))?;
    let n = delta.nodes.len();
    let mut body = Writer::with_capacity(16 + n * 12);
    for v in [delta.rect.x0, delta.rect.y0, delta.rect.x1, delta.rect.y1] {
        body.varint(v as u64);
    }
    body.varint(n as u64);
    let mut prev: Option<u32> = None;
    for &i in &delta.nodes {
        match prev {
            None => body.varint(i as u64),
            Some(p) => body.varint((i - p - 1) as u64),
        }
        prev = Some(i);
    }
    write_values(&mut body, &delta.before, encoding)?;
    write_values(&mut body, &delta.after, encoding)?;
    let mut flags = 0;
    if !delta.mat_before.is_empty() {
        body.bytes(&delta.mat_before);
        body.bytes(&delta.mat_after);
        flags |= FLAG_MATERIALS;
    }
    let raw_len = u32::try_from(body.buf.len()).map_err(|_| {
        StoreError::input(
            "edit delta",
            "larger than 4 GiB; split the stroke".to_string(),
        )
    })?;
    let (body, zstd_flag) = pack_body(body.buf);
    flags |= zstd_flag;
    let mut out = Writer::with_capacity(HEADER_LEN + body.len());
    out.bytes(MAGIC);
    out.u8(VERSION);
    out.u8(flags);
    out.u8(encoding.code());
    out.u8(0);
    out.u32(raw_len);
    out.bytes(&body);
    Ok(out.buf)
}

/// Decodes a delta written by [`encode_delta`], validating everything.
pub fn decode_delta(payload: &[u8]) -> Result<EditDelta, StoreError> {
    decode_delta_within(payload, usize::MAX)
}

/// The most body bytes a delta of a world of `nodes` nodes can hold: four
/// rectangle varints and a count, then per node an index varint, two values
/// and two material ids.
pub(crate) fn max_delta_body(nodes: u64) -> usize {
    usize::try_from(nodes.saturating_mul(5 + 8 + 2).saturating_add(5 * 10)).unwrap_or(usize::MAX)
}

/// As [`decode_delta`], refusing a header that declares a body larger than
/// `max` bytes before decoding anything.
pub(crate) fn decode_delta_within(payload: &[u8], max: usize) -> Result<EditDelta, StoreError> {
    let bad = |reason: &str| StoreError::data(WHAT, reason.to_string());
    let mut r = Reader::new(payload);
    let header = r
        .take(HEADER_LEN)
        .ok_or_else(|| bad("shorter than its header"))?;
    if &header[0..4] != MAGIC {
        return Err(bad("bad magic (not an isoterra stroke delta)"));
    }
    let (version, flags) = (header[4], header[5]);
    if version != VERSION {
        return Err(StoreError::data(
            WHAT,
            format!("codec version {version} is not supported (this build reads {VERSION})"),
        ));
    }
    if flags & !(FLAG_MATERIALS | FLAG_ZSTD) != 0 || header[7] != 0 {
        return Err(bad("unknown flags"));
    }
    let encoding =
        ChunkEncoding::from_code(header[6]).ok_or_else(|| bad("unknown value encoding"))?;
    let raw_len = u32::from_le_bytes([header[8], header[9], header[10], header[11]]) as usize;
    let rest = r.take(r.remaining()).unwrap_or_default();
    let raw = unpack_body_within(rest, flags, raw_len, max, WHAT)?;
    let mut b = Reader::new(&raw);
    let short = || bad("body ends early");
    let mut coord = || -> Result<u32, StoreError> {
        let v = b.varint().ok_or_else(short)?;
        u32::try_from(v).map_err(|_| bad("rectangle coordinate exceeds u32"))
    };
    let rect = NodeRect::new(coord()?, coord()?, coord()?, coord()?);
    let count = b.varint().ok_or_else(short)?;
    let has_materials = flags & FLAG_MATERIALS != 0;
    // Each node needs at least one varint byte and two values, plus two
    // material bytes when flagged: a count the body cannot hold is rejected
    // before anything is allocated for it.
    let per_node = 1 + 2 * encoding.bytes_per_value() + if has_materials { 2 } else { 0 };
    if count > (b.remaining() / per_node) as u64 {
        return Err(bad("node count exceeds the body"));
    }
    let n = count as usize;
    let mut nodes = Vec::with_capacity(n);
    let mut next: u64 = 0;
    for k in 0..n {
        let v = b.varint().ok_or_else(short)?;
        let idx = if k == 0 {
            v
        } else {
            next.checked_add(v)
                .ok_or_else(|| bad("node index overflows"))?
        };
        let idx = u32::try_from(idx).map_err(|_| bad("node index exceeds u32"))?;
        nodes.push(idx);
        next = idx as u64 + 1;
    }
    let before = read_values(&mut b, n, encoding).ok_or_else(short)?;
    let after = read_values(&mut b, n, encoding).ok_or_else(short)?;
    let (mat_before, mat_after) = if has_materials {
        (
            b.take(n).ok_or_else(short)?.to_vec(),
            b.take(n).ok_or_else(short)?.to_vec(),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    if b.remaining() != 0 {
        return Err(bad("trailing bytes after the body"));
    }
    let delta = EditDelta {
        rect,
        nodes,
        before,
        after,
        mat_before,
        mat_after,
    };
    delta
        .validate()
        .map_err(|e| StoreError::data(WHAT, e.to_string()))?;
    Ok(delta)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> EditDelta {
        EditDelta {
            rect: NodeRect::new(1, 2, 9, 7),
            nodes: vec![3, 4, 5, 90, 1000, 1001],
            before: vec![0.5, -0.0, 1.0, -1.0, 0.25, 3.0],
            after: vec![-0.5, 0.0, 0.125, -1.0, 7.0, -3.0],
            mat_before: vec![0, 1, 2, 3, 4, 5],
            mat_after: vec![5, 4, 3, 2, 1, 0],
        }
    }

    #[test]
    fn round_trip_is_exact() {
        let d = sample();
        let back = decode_delta(&encode_delta(&d).unwrap()).unwrap();
        assert_eq!(back, d);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&back.before), bits(&d.before));
        let mut no_mats = d.clone();
        no_mats.mat_before.clear();
        no_mats.mat_after.clear();
        assert_eq!(
            decode_delta(&encode_delta(&no_mats).unwrap()).unwrap(),
            no_mats
        );
        let empty = EditDelta::default();
        assert_eq!(decode_delta(&encode_delta(&empty).unwrap()).unwrap(), empty);
    }

    #[test]
    fn invalid_deltas_are_refused() {
        let mut d = sample();
        d.nodes.swap(0, 1);
        assert!(encode_delta(&d).is_err());
        let mut d = sample();
        d.after.pop();
        assert!(encode_delta(&d).is_err());
        let mut d = sample();
        d.mat_after.pop();
        assert!(encode_delta(&d).is_err());
        let mut d = sample();
        d.before[2] = f32::NAN;
        assert!(encode_delta(&d).is_err());
    }

    /// `sample()` with every value moved onto `encoding`'s grid.
    fn on_grid(encoding: ChunkEncoding) -> EditDelta {
        let mut d = sample();
        let snap = |v: f32| match encoding {
            ChunkEncoding::U8 => Quantizer8::DEFAULT.dequantize(Quantizer8::DEFAULT.quantize(v)),
            _ => Quantizer16::DEFAULT.dequantize(Quantizer16::DEFAULT.quantize(v)),
        };
        for v in d.before.iter_mut().chain(d.after.iter_mut()) {
            *v = snap(*v);
        }
        d
    }

    #[test]
    fn quantized_deltas_round_trip_exactly_and_are_smaller() {
        let f32_len = encode_delta(&sample()).unwrap().len();
        assert_eq!(
            encode_delta(&sample()).unwrap(),
            encode_delta_as(&sample(), ChunkEncoding::F32).unwrap()
        );
        for encoding in [ChunkEncoding::U8, ChunkEncoding::U16] {
            let d = on_grid(encoding);
            let bytes = encode_delta_as(&d, encoding).unwrap();
            assert_eq!(bytes[6], encoding.code());
            let back = decode_delta(&bytes).unwrap();
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&back.before), bits(&d.before), "{encoding:?}");
            assert_eq!(bits(&back.after), bits(&d.after), "{encoding:?}");
            assert_eq!(back, d);
            assert!(
                bytes.len() < f32_len,
                "{encoding:?}: {} >= {f32_len}",
                bytes.len()
            );
            // Every cut of a quantized payload is an error too.
            for cut in 0..bytes.len() {
                assert!(
                    decode_delta(&bytes[..cut]).is_err(),
                    "{encoding:?} cut at {cut}"
                );
            }
        }
    }

    #[test]
    fn a_value_off_the_grid_is_refused_not_rounded() {
        let mut d = on_grid(ChunkEncoding::U8);
        d.after[1] = 0.001;
        let err = encode_delta_as(&d, ChunkEncoding::U8).unwrap_err();
        assert!(err.to_string().contains("u8 grid"), "{err}");
        // The u16 grid is finer, but 0.001 is on neither.
        assert!(encode_delta_as(&d, ChunkEncoding::U16).is_err());
    }

    #[test]
    fn an_unknown_value_encoding_is_an_error() {
        let mut bytes = encode_delta(&sample()).unwrap();
        bytes[6] = 3;
        let err = decode_delta(&bytes).unwrap_err();
        assert!(err.to_string().contains("value encoding"), "{err}");
    }

    #[test]
    fn damaged_payloads_are_errors() {
        let good = encode_delta(&sample()).unwrap();
        for cut in 0..good.len() {
            assert!(decode_delta(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut bad = good.clone();
        bad[0] ^= 1;
        assert!(decode_delta(&bad).is_err());
        let mut bad = good.clone();
        bad[8] ^= 1;
        assert!(decode_delta(&bad).is_err());
    }
}
