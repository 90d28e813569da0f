//! FNV-1a, 64-bit: the content hash of world contents.
//!
//! FNV-1a is small, well known and has no dependency. It is not a
//! cryptographic hash: it tells equal contents from different ones, it does
//! not resist someone crafting collisions.

/// The content hash of a 2D field with material ids: 16 lowercase hex digits
/// of FNV-1a 64 over the bytes `"ITH2"`, `width` and `height` (u32,
/// little-endian), every value's `f32` bits (little-endian, storage order)
/// and every material id.
///
/// Equal contents give equal hashes whatever edits led to them; it is not a
/// cryptographic hash (it detects differences, it does not resist crafted
/// collisions). `-0.0` and `0.0` hash differently: the hash is over bits.
pub fn field2_content_hash(width: u32, height: u32, values: &[f32], materials: &[u8]) -> String {
    let mut h = Fnv1a64::new();
    h.write(b"ITH2");
    h.write(&width.to_le_bytes());
    h.write(&height.to_le_bytes());
    for v in values {
        h.write(&v.to_bits().to_le_bytes());
    }
    h.write(materials);
    format!("{:016x}", h.finish())
}

/// A running 64-bit FNV-1a hash.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fnv1a64(u64);

impl Fnv1a64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    pub(crate) fn new() -> Self {
        Fnv1a64(Self::OFFSET)
    }

    pub(crate) fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0;
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(Self::PRIME);
        }
        self.0 = h;
    }

    pub(crate) fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_published_vectors() {
        let hash = |s: &[u8]| {
            let mut h = Fnv1a64::new();
            h.write(s);
            h.finish()
        };
        assert_eq!(hash(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(hash(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(hash(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn content_hash_sees_every_part() {
        let base = field2_content_hash(2, 2, &[0.0, 1.0, 2.0, 3.0], &[0, 0, 0, 0]);
        assert_eq!(base.len(), 16);
        assert_eq!(
            base,
            field2_content_hash(2, 2, &[0.0, 1.0, 2.0, 3.0], &[0, 0, 0, 0])
        );
        assert_ne!(
            base,
            field2_content_hash(2, 2, &[-0.0, 1.0, 2.0, 3.0], &[0, 0, 0, 0])
        );
        assert_ne!(
            base,
            field2_content_hash(2, 2, &[0.0, 1.0, 2.0, 3.0], &[0, 0, 1, 0])
        );
        assert_ne!(
            base,
            field2_content_hash(4, 1, &[0.0, 1.0, 2.0, 3.0], &[0, 0, 0, 0])
        );
    }
}
