//! Little-endian byte writing and bounds-checked reading shared by the codecs.
//!
//! Every read returns `None` instead of panicking when the input runs out, so
//! a codec turns any truncated or garbled payload into an error.

use std::io::Read;

/// Appends little-endian values to a byte vector.
pub(crate) struct Writer {
    pub(crate) buf: Vec<u8>,
}

impl Writer {
    pub(crate) fn with_capacity(n: usize) -> Self {
        Writer {
            buf: Vec::with_capacity(n),
        }
    }

    pub(crate) fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }

    pub(crate) fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// Unsigned LEB128: seven bits per byte, low bits first, high bit = more.
    pub(crate) fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    /// Writes the four little-endian bytes of every value as four byte planes
    /// (all first bytes, then all second bytes, …). Exact, and it lets zstd
    /// find the repetition in sign/exponent bytes of neighbouring values.
    pub(crate) fn f32_planes(&mut self, values: impl Iterator<Item = f32> + Clone) {
        for plane in 0..4 {
            self.buf.extend(
                values
                    .clone()
                    .map(move |v| v.to_bits().to_le_bytes()[plane]),
            );
        }
    }

    /// Like [`Writer::f32_planes`] for 16-bit codes (two planes).
    pub(crate) fn u16_planes(&mut self, values: &[u16]) {
        for plane in 0..2 {
            self.buf
                .extend(values.iter().map(|v| v.to_le_bytes()[plane]));
        }
    }
}

/// Reads little-endian values from a byte slice without ever panicking.
pub(crate) struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0 }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.data.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    pub(crate) fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|s| s[0])
    }

    pub(crate) fn u32(&mut self) -> Option<u32> {
        let s = self.take(4)?;
        Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    /// Unsigned LEB128 of at most ten bytes; `None` on overflow or truncation.
    pub(crate) fn varint(&mut self) -> Option<u64> {
        let mut v: u64 = 0;
        for i in 0..10 {
            let b = self.u8()?;
            let bits = (b & 0x7f) as u64;
            if i == 9 && bits > 1 {
                return None;
            }
            v |= bits << (7 * i);
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    /// Reads `n` values written by [`Writer::f32_planes`].
    pub(crate) fn f32_planes(&mut self, n: usize) -> Option<Vec<f32>> {
        let bytes = self.take(n.checked_mul(4)?)?;
        Some(
            (0..n)
                .map(|i| {
                    f32::from_bits(u32::from_le_bytes([
                        bytes[i],
                        bytes[n + i],
                        bytes[2 * n + i],
                        bytes[3 * n + i],
                    ]))
                })
                .collect(),
        )
    }

    /// Reads `n` codes written by [`Writer::u16_planes`].
    pub(crate) fn u16_planes(&mut self, n: usize) -> Option<Vec<u16>> {
        let bytes = self.take(n.checked_mul(2)?)?;
        Some(
            (0..n)
                .map(|i| u16::from_le_bytes([bytes[i], bytes[n + i]]))
                .collect(),
        )
    }
}

/// Header flag of both payload codecs: material ids follow the values.
pub(crate) const FLAG_MATERIALS: u8 = 1;
/// Header flag of both payload codecs: the body is zstd-compressed.
pub(crate) const FLAG_ZSTD: u8 = 2;
/// zstd level of payload bodies: fast enough for the editing loop.
const ZSTD_LEVEL: i32 = 3;

/// Compresses `raw` into one zstd frame that carries a checksum of its
/// content (zstd's frame checksum, 32 bits of XXH64). Decoding such a frame
/// checks it, so a flipped bit anywhere in a stored payload is reported as
/// corrupt data instead of decoding to different values. Frames written
/// before the checksum was added have none and still decode.
///
/// A body of 4 MiB or more is written into room for half its size first
/// (terrain compresses to well under that), and only when it does not fit
/// into room for zstd's worst case: a large body then takes half its size
/// again while it is compressed, not its whole size. The bytes are the
/// same either way. Smaller bodies (every chunk) go straight to the worst
/// case's room, so none is compressed twice.
pub(crate) fn compress_checked(raw: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut c = zstd::bulk::Compressor::new(ZSTD_LEVEL)?;
    c.include_checksum(true)?;
    if raw.len() >= 4 << 20 {
        let mut out = Vec::with_capacity(raw.len() / 2);
        if c.compress_to_buffer(raw, &mut out).is_ok() {
            out.shrink_to_fit();
            return Ok(out);
        }
    }
    c.compress(raw)
}

/// A body written into one zstd frame (with the checksum of
/// [`compress_checked`] and the content size) a block at a time, after bytes
/// already in the output (a header): a large body is never held whole.
/// Write through [`body`](Self::body), call [`flush_if_full`](Self::flush_if_full)
/// now and then, and [`finish`](Self::finish).
pub(crate) struct FrameWriter {
    enc: zstd::stream::write::Encoder<'static, Vec<u8>>,
    block: Writer,
}

/// Bytes gathered before they are handed to the compressor.
const FRAME_BLOCK: usize = 1 << 20;

impl FrameWriter {
    /// A frame of exactly `raw_len` body bytes, written after `head`.
    pub(crate) fn new(head: Vec<u8>, raw_len: u64) -> std::io::Result<Self> {
        let mut enc = zstd::stream::write::Encoder::new(head, ZSTD_LEVEL)?;
        enc.include_checksum(true)?;
        enc.include_contentsize(true)?;
        enc.set_pledged_src_size(Some(raw_len))?;
        Ok(FrameWriter {
            enc,
            block: Writer::with_capacity(FRAME_BLOCK + 4096),
        })
    }

    /// Where the next body bytes go.
    pub(crate) fn body(&mut self) -> &mut Writer {
        &mut self.block
    }

    /// Compresses what was written once a block has gathered.
    pub(crate) fn flush_if_full(&mut self) -> std::io::Result<()> {
        if self.block.buf.len() >= FRAME_BLOCK {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        use std::io::Write;
        self.enc.write_all(&self.block.buf)?;
        self.block.buf.clear();
        Ok(())
    }

    /// The head and the whole frame (an error when the body was not
    /// exactly `raw_len` bytes).
    pub(crate) fn finish(mut self) -> std::io::Result<Vec<u8>> {
        self.flush()?;
        self.enc.finish()
    }
}

/// Compresses a payload body: the zstd frame (with its checksum, see
/// [`compress_checked`]) and [`FLAG_ZSTD`], or the body as it is and no
/// flag if zstd itself fails (out of memory).
pub(crate) fn pack_body(raw: Vec<u8>) -> (Vec<u8>, u8) {
    match compress_checked(&raw) {
        Ok(packed) => (packed, FLAG_ZSTD),
        Err(_) => (raw, 0),
    }
}

/// The raw body of a payload whose header gave `flags` and `raw_len`:
/// decompressed when [`FLAG_ZSTD`] is set, as stored otherwise; either way
/// exactly `raw_len` bytes, or a [`StoreError::CorruptData`](crate::StoreError::CorruptData) naming `what`.
pub(crate) fn unpack_body(
    stored: &[u8],
    flags: u8,
    raw_len: usize,
    what: &'static str,
) -> Result<Vec<u8>, crate::StoreError> {
    if flags & FLAG_ZSTD != 0 {
        decompress_exact(stored, raw_len, what)
    } else if stored.len() == raw_len {
        Ok(stored.to_vec())
    } else {
        Err(crate::StoreError::data(
            what,
            format!(
                "stored body is {} bytes, the header needs {raw_len}",
                stored.len()
            ),
        ))
    }
}

/// As [`unpack_body`], refusing before any decoding a header that declares
/// more than `max` bytes (what the world the payload belongs to can hold):
/// a small payload may claim, and honestly decompress to, gigabytes.
pub(crate) fn unpack_body_within(
    stored: &[u8],
    flags: u8,
    raw_len: usize,
    max: usize,
    what: &'static str,
) -> Result<Vec<u8>, crate::StoreError> {
    if raw_len > max {
        return Err(crate::StoreError::data(
            what,
            format!(
                "the header declares {raw_len} bytes, more than a stroke of this world can hold ({max})"
            ),
        ));
    }
    unpack_body(stored, flags, raw_len, what)
}

/// Decompresses a zstd frame of at most `max` bytes, growing the output only
/// as data is decoded; a frame holding more is an error.
pub(crate) fn decompress_at_most(compressed: &[u8], max: usize) -> std::io::Result<Vec<u8>> {
    let mut decoder = zstd::stream::read::Decoder::with_buffer(compressed)?;
    let mut out = Vec::new();
    (&mut decoder).take(max as u64 + 1).read_to_end(&mut out)?;
    if out.len() > max {
        return Err(std::io::Error::other(format!(
            "it holds more than {max} bytes"
        )));
    }
    Ok(out)
}

/// Decompresses a zstd frame whose content must be exactly `expected` bytes.
///
/// The output grows only as real data is decoded (no allocation sized by an
/// untrusted header), and decoding stops one byte past `expected`.
fn decompress_exact(
    compressed: &[u8],
    expected: usize,
    what: &'static str,
) -> Result<Vec<u8>, crate::StoreError> {
    let mut decoder = zstd::stream::read::Decoder::with_buffer(compressed)
        .map_err(|e| crate::StoreError::data(what, format!("zstd: {e}")))?;
    let mut out = Vec::new();
    (&mut decoder)
        .take(expected as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| crate::StoreError::data(what, format!("zstd: {e}")))?;
    if out.len() != expected {
        return Err(crate::StoreError::data(
            what,
            format!(
                "body decompresses to {} bytes, the header needs {expected}",
                if out.len() > expected {
                    format!("more than {expected}")
                } else {
                    out.len().to_string()
                }
            ),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flipped_bit_in_a_packed_body_is_corrupt_data() {
        // Incompressible bytes: zstd stores them as a raw block, where a
        // flipped bit would otherwise decode to a different value silently.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let raw: Vec<u8> = (0..4096)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        let (packed, flag) = pack_body(raw.clone());
        assert_eq!(flag, FLAG_ZSTD);
        assert_eq!(unpack_body(&packed, flag, raw.len(), "x").unwrap(), raw);
        // Every bit of the frame past its header, one at a time.
        for byte in 6..packed.len() {
            for bit in 0..8 {
                let mut bad = packed.clone();
                bad[byte] ^= 1 << bit;
                assert!(
                    unpack_body(&bad, flag, raw.len(), "x").is_err(),
                    "bit {bit} of byte {byte} went unnoticed"
                );
            }
        }
        // A frame without a checksum (as older files hold) still decodes.
        let old = zstd::bulk::compress(&raw, ZSTD_LEVEL).unwrap();
        assert_eq!(unpack_body(&old, flag, raw.len(), "x").unwrap(), raw);
    }

    #[test]
    fn varint_round_trips_edges() {
        for v in [
            0u64,
            1,
            127,
            128,
            300,
            u32::MAX as u64,
            u64::MAX - 1,
            u64::MAX,
        ] {
            let mut w = Writer::with_capacity(10);
            w.varint(v);
            let mut r = Reader::new(&w.buf);
            assert_eq!(r.varint(), Some(v));
            assert_eq!(r.remaining(), 0);
        }
    }

    #[test]
    fn varint_rejects_overflow_and_truncation() {
        let mut r = Reader::new(&[0xff; 11]);
        assert_eq!(r.varint(), None);
        let mut r = Reader::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]);
        assert_eq!(r.varint(), None);
        let mut r = Reader::new(&[0x80]);
        assert_eq!(r.varint(), None);
    }

    #[test]
    fn planes_round_trip_bits() {
        let v = [0.0f32, -0.0, 1.5, f32::MIN_POSITIVE, -3.25e7];
        let mut w = Writer::with_capacity(20);
        w.f32_planes(v.iter().copied());
        let back = Reader::new(&w.buf).f32_planes(v.len()).unwrap();
        assert_eq!(
            back.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
        assert!(Reader::new(&w.buf[..19]).f32_planes(5).is_none());
    }

    #[test]
    fn unpacking_checks_the_length() {
        let (c, flag) = pack_body(vec![7u8; 100]);
        assert_eq!(flag, FLAG_ZSTD);
        assert_eq!(decompress_exact(&c, 100, "x").unwrap(), vec![7u8; 100]);
        assert!(decompress_exact(&c, 99, "x").is_err());
        assert!(decompress_exact(&c, 101, "x").is_err());
        assert!(decompress_exact(&[1, 2, 3], 3, "x").is_err());
        assert_eq!(unpack_body(&c, flag, 100, "x").unwrap(), vec![7u8; 100]);
        assert!(unpack_body(&c, flag, 98, "x").is_err());
        // Stored as it is: only the length is checked.
        assert_eq!(unpack_body(&[1, 2, 3], 0, 3, "x").unwrap(), vec![1, 2, 3]);
        assert!(unpack_body(&[1, 2, 3], 0, 4, "x").is_err());
    }
}
