//! Baking itself: [`ChunkBaker`] turns one key of a [`BakeSource`] into a
//! [`BakedChunk`] (what a baked chunk of each kind contains), and
//! [`bake_chunks`] bakes a list of keys in order.

use isoterra_store::{BakedChunk, ChunkKey, StoreError};
use isoterra_world::VoxelLodMesher;

use crate::BakeSource;

/// Bakes chunks; keep one per worker thread (it holds scratch memory).
#[derive(Debug, Default)]
pub struct ChunkBaker {
    /// Voxel chunks' mesher scratch.
    pub(crate) voxel: VoxelLodMesher,
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
        source.ops().bake(self, key)
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
