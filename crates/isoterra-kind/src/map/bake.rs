//! What a baked map chunk is: two layers, the terrain (a triangle-mesh
//! collider) and the water surface (no collider), LOD 0 only.

use isoterra_store::{BAKED_WATER, BakedChunk, BakedCollider, ChunkKey, StoreError};
use isoterra_world::MapWorld;

use crate::WorldKind;
use crate::bake::{BakeInputBox, BakeWorld, ChunkBaker, RegionError, bounded_axis, outside_world};

impl BakeWorld for MapWorld {
    fn kind(&self) -> WorldKind {
        WorldKind::Map
    }

    fn axis_names(&self) -> &'static [&'static str] {
        &["x", "z"]
    }

    fn layers(&self) -> u16 {
        2
    }

    fn chunk_box(&self, lo: &[f32], hi: &[f32], _lod: u8) -> Result<[[i64; 3]; 2], RegionError> {
        let p = self.params();
        let size = f64::from(p.chunk_cells) * f64::from(p.mesh.cell_size);
        let chunks = self.chunk_count();
        let mut b = [[0; 3]; 2];
        for a in 0..2 {
            (b[0][a], b[1][a]) = bounded_axis(a, lo[a], hi[a], 0.0, size, chunks[a])?;
        }
        Ok(b)
    }

    /// Terrain and water alike read the nodes `[c*N - 1, c*N + N + 1]`,
    /// clipped to the map (the chunk's cells plus one ring for normals and
    /// for water spreading from wet neighbours); the last chunk of a row or
    /// column also owns the final node.
    fn input_box(&self, key: &ChunkKey) -> Result<BakeInputBox, StoreError> {
        let coords = [key.x, key.y];
        let p = self.params();
        let n = i64::from(p.chunk_cells);
        let counts = self.chunk_count();
        let nodes = [i64::from(p.width_cells), i64::from(p.depth_cells)];
        let mut b = BakeInputBox {
            min: [0; 3],
            max: [0; 3],
        };
        for a in 0..2 {
            let c = u32::try_from(coords[a])
                .ok()
                .filter(|&c| c < counts[a])
                .ok_or_else(|| outside_world(key))?;
            let owner = |v: i64| (v / n).min(i64::from(counts[a]) - 1) as i32;
            let c = i64::from(c);
            b.min[a] = owner((c * n - 1).max(0));
            b.max[a] = owner((c * n + n + 1).min(nodes[a]));
        }
        Ok(b)
    }

    fn bake(&self, _baker: &mut ChunkBaker, key: &ChunkKey) -> Result<BakedChunk, StoreError> {
        let [cw, cd] = self.chunk_count();
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
        let out = self
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
}
