//! Baking itself: [`ChunkBaker`] turns one key of a [`BakeSource`] into a
//! [`BakedChunk`] (what a baked chunk of each kind contains), and
//! [`bake_chunks`] bakes a list of keys in order.

use isoterra_store::{
    BAKED_WATER, BakedChunk, BakedCollider, BakedHeightfield, BakedPolyline, ChunkKey, StoreError,
};
use isoterra_world::{MeshKey, VoxelLodChunk, VoxelLodMesher};

use super::plan::BakeSource;

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
                        ..BakedChunk::default()
                    }
                } else {
                    BakedChunk {
                        positions: out.terrain.positions,
                        normals: out.terrain.normals,
                        indices: out.terrain.indices,
                        collider: BakedCollider::TriMesh,
                        ..BakedChunk::default()
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
                    ..BakedChunk::default()
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
                let morph = mesh
                    .morph
                    .iter()
                    .zip(&mesh.morph_targets)
                    .map(|(&f, &h)| [f, h])
                    .collect();
                Ok(BakedChunk {
                    morph,
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
                    ..BakedChunk::default()
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
                    materials: out.materials,
                    ..BakedChunk::default()
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
