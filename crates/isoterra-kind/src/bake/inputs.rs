//! Input stamps: [`BakeInputs`] reads what a store's baked chunks are made
//! from once per bake and gives each planned chunk the stamp its row
//! records, so a bake after an edit redoes only the chunks the edit can
//! have changed.

use std::collections::BTreeMap;

#[cfg(doc)]
use isoterra_store::BakedRow;
use isoterra_store::{
    ChunkKey, ChunkLayer, ChunkStore, StoreError, input_meta_hash, input_stamp, payload_hash,
};

use super::plan::BakeInputBox;
use crate::BakeSource;

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
/// bytes `"ITIS"`, the input stamp version (2), the metadata hash, the key's
/// five columns and, in ascending key order, every stored chunk of the box
/// with the FNV-1a 64 hash of its payload (the store's
/// [`input_stamp`], with its other hashes). Baked rows record it as their
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
        let meta = input_meta_hash(&INPUT_META_KEYS, |key| store.meta_entry(key))?;
        let mut chunks = BTreeMap::new();
        store.visit_chunks(ChunkLayer::FIELD, &mut |key, payload| {
            chunks.insert(key, payload_hash(payload));
            Ok(())
        })?;
        Ok(BakeInputs { meta, chunks })
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
        Ok(input_stamp(self.meta, key, self.stored_in(&b)))
    }
}
