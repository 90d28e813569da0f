//! Content hashing: FNV-1a, 64-bit, the hash isoterra's content hashes and
//! stamps are built from (the world file's stamps and baked hashes, the
//! documents' and worlds' `content_hash`).
//!
//! FNV-1a is small, well known and has no dependency. It is not a
//! cryptographic hash: it tells equal contents from different ones, it does
//! not resist someone crafting collisions. Its output is part of the
//! formats built on it (hashes are compared between runs and against
//! recorded values), so it never changes.
//!
//! (The coordinate hashing of the noise generators is a different thing and
//! lives with them.)
//!
//! ```
//! use isoterra_field::hash::Fnv1a64;
//!
//! let mut h = Fnv1a64::new();
//! h.write(b"foo");
//! h.write(b"bar");
//! assert_eq!(h.finish(), 0x8594_4171_f739_67e8);
//! assert_eq!(h.hex(), "85944171f73967e8");
//! ```

/// A running 64-bit FNV-1a hash over bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fnv1a64(u64);

impl Fnv1a64 {
    /// The FNV-1a 64 offset basis: the hash of no bytes.
    pub const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    /// The FNV-1a 64 prime.
    pub const PRIME: u64 = 0x0000_0100_0000_01b3;

    /// A hash of no bytes yet.
    pub const fn new() -> Self {
        Fnv1a64(Self::OFFSET)
    }

    /// Adds `bytes`, one after the other.
    #[inline]
    pub fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0;
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(Self::PRIME);
        }
        self.0 = h;
    }

    /// The hash of the bytes written so far.
    pub const fn finish(&self) -> u64 {
        self.0
    }

    /// The hash of the bytes written so far as 16 lowercase hex digits, the
    /// form content hashes are shown and stored in.
    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

impl Default for Fnv1a64 {
    fn default() -> Self {
        Fnv1a64::new()
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
    fn writes_in_pieces_equal_one_write() {
        let mut a = Fnv1a64::new();
        a.write(b"foo");
        a.write(b"");
        a.write(b"bar");
        let mut b = Fnv1a64::default();
        b.write(b"foobar");
        assert_eq!(a, b);
        assert_eq!(a.hex(), format!("{:016x}", b.finish()));
    }
}
