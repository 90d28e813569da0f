//! The store's hashes: every content hash and stamp a store computes, in
//! one place, all FNV-1a 64 ([`Fnv1a64`], from `isoterra_field::hash`)
//! shown as 16 lowercase hex digits:
//!
//! - [`field2_content_hash`]: the content of a 2D field with materials;
//! - [`baked_body_hash`]: a baked chunk's content hash (over its decoded
//!   body, see [`encode_baked`](crate::encode_baked));
//! - [`StampHasher`]: the world stamp of a store
//!   ([`ChunkStore::world_stamp`](crate::ChunkStore::world_stamp));
//! - [`input_meta_hash`], [`payload_hash`] and [`input_stamp`]: the
//!   per-chunk input stamps that baked rows record (public: the kind
//!   layer's `BakeInputs` computes them with these, so that every stamp
//!   and hash of the formats is written in this one module);
//! - [`BakedHasher`]: the content hash of a store's baked rows
//!   ([`ChunkStore::baked_content_hash`](crate::ChunkStore::baked_content_hash));
//! - [`stored_content_hash`]: a world's hash combined with its baked rows'.
//!
//! What each writes is part of the formats: rows record stamps and hashes,
//! files are compared by them, and tests pin them to recorded values. The
//! bytes they hash never change; a new layout gets a new tag.
//!
//! FNV-1a is not a cryptographic hash: it tells equal contents from
//! different ones, it does not resist someone crafting collisions.

pub(crate) use isoterra_field::hash::Fnv1a64;

use crate::baked::BAKED_MAGIC;

/// The version byte of world stamps and input metadata hashes (fixed).
const STAMP_VERSION: u8 = 1;
/// The version byte of input stamps: 2 since baked voxel and heightmap
/// chunks carry vertex attributes, so that rows baked before are stale and
/// baked again.
const INPUT_STAMP_VERSION: u8 = 2;
use crate::{ChunkKey, StoreError};

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
    h.hex()
}

/// The content hash of a baked chunk: FNV-1a 64 over the payload magic,
/// the payload version, the collider kind `kind` and the raw (uncompressed)
/// body `raw`.
pub(crate) fn baked_body_hash(version: u8, kind: u8, raw: &[u8]) -> String {
    let mut h = Fnv1a64::new();
    h.write(BAKED_MAGIC);
    h.write(&[version, kind]);
    h.write(raw);
    h.hex()
}

/// Adds a key as its layer (u16), `x`, `y`, `z` (i32) little-endian and
/// its LOD byte.
fn write_key(h: &mut Fnv1a64, k: &ChunkKey) {
    h.write(&k.layer.0.to_le_bytes());
    for v in [k.x, k.y, k.z] {
        h.write(&v.to_le_bytes());
    }
    h.write(&[k.lod]);
}

/// The metadata part of the input stamps: FNV-1a 64 over `"ITBM"`, the
/// version byte 1 and, for each of `keys`, a 0 byte when the entry
/// is absent or a 1 byte, its length (u64) and its bytes. Entries are read
/// through `meta_entry` (typically [`ChunkStore::meta_entry`](crate::ChunkStore::meta_entry)).
///
/// # Errors
///
/// The first error `meta_entry` returns.
pub fn input_meta_hash(
    keys: &[&str],
    meta_entry: impl Fn(&str) -> Result<Option<String>, StoreError>,
) -> Result<u64, StoreError> {
    let mut h = Fnv1a64::new();
    h.write(b"ITBM");
    h.write(&[STAMP_VERSION]);
    for &key in keys {
        match meta_entry(key)? {
            None => h.write(&[0]),
            Some(v) => {
                h.write(&[1]);
                h.write(&(v.len() as u64).to_le_bytes());
                h.write(v.as_bytes());
            }
        }
    }
    Ok(h.finish())
}

/// The hash of one stored chunk's payload in an input stamp: FNV-1a 64 over
/// its length (u64) and its bytes.
pub fn payload_hash(payload: &[u8]) -> u64 {
    let mut p = Fnv1a64::new();
    p.write(&(payload.len() as u64).to_le_bytes());
    p.write(payload);
    p.finish()
}

/// The input stamp of baked chunk `key`, as 16 lowercase hex digits: FNV-1a
/// 64 over `"ITIS"`, the input stamp version (2), the metadata hash `meta`
/// ([`input_meta_hash`]), the key (layer as u16, `x`, `y`, `z` as i32, all
/// little-endian, then the LOD byte) and, in the order given (ascending
/// keys), each stored input chunk's key and [`payload_hash`]. Baked rows
/// record it as their [`source`](crate::BakedRow::source).
pub fn input_stamp(
    meta: u64,
    key: &ChunkKey,
    stored: impl IntoIterator<Item = (ChunkKey, u64)>,
) -> String {
    let mut h = Fnv1a64::new();
    h.write(b"ITIS");
    h.write(&[INPUT_STAMP_VERSION]);
    h.write(&meta.to_le_bytes());
    write_key(&mut h, key);
    for (k, payload) in stored {
        write_key(&mut h, &k);
        h.write(&payload.to_le_bytes());
    }
    h.hex()
}

/// The content hash of a world and its baked rows: FNV-1a 64 over `"ITSH"`,
/// `world_hash` and `baked` (the [`BakedHasher`] hash).
pub(crate) fn stored_content_hash(world_hash: &str, baked: &str) -> String {
    let mut h = Fnv1a64::new();
    h.write(b"ITSH");
    h.write(world_hash.as_bytes());
    h.write(baked.as_bytes());
    h.hex()
}

/// The running world stamp (see
/// [`WorldFile::world_stamp`](crate::WorldFile::world_stamp)), shared by
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
        h.write(&[STAMP_VERSION]);
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
    pub(crate) fn chunk_columns(&mut self, cols: [i64; 5], payload: &[u8]) {
        for v in cols {
            self.0.write(&v.to_le_bytes());
        }
        self.0.write(&(payload.len() as u64).to_le_bytes());
        self.0.write(payload);
    }

    /// The stamp: 16 lowercase hex digits.
    pub(crate) fn finish(&self) -> String {
        self.0.hex()
    }
}

/// The running content hash of baked rows (see
/// [`WorldFile::baked_content_hash`](crate::WorldFile::baked_content_hash)),
/// shared by every store: FNV-1a 64 over `"ITBH"` and, per row in ascending
/// key order, its key and the content hash of its decoded payload.
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

    /// Adds one row, rows in ascending key order: its key and the content
    /// hash of its payload, checked by the caller (see
    /// [`decode_row`](crate::baked::decode_row)).
    pub(crate) fn row(&mut self, key: &ChunkKey, hash: &str) {
        write_key(&mut self.h, key);
        self.h.write(hash.as_bytes());
        self.any = true;
    }

    /// The hash, or `None` when no row was added.
    pub(crate) fn finish(&self) -> Option<String> {
        self.any.then(|| self.h.hex())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
