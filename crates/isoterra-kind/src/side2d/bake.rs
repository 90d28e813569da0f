//! What a baked side-view chunk is: its cached fill mesh and its collider
//! polylines, LOD 0 only.

use isoterra_store::{BakedChunk, BakedCollider, BakedPolyline, ChunkKey, StoreError};
use isoterra_world::Side2dWorld;

use crate::WorldKind;
use crate::bake::{BakeInputBox, BakeWorld, ChunkBaker, RegionError, bounded_axis, outside_world};

impl BakeWorld for Side2dWorld {
    fn kind(&self) -> WorldKind {
        WorldKind::Side2d
    }

    fn axis_names(&self) -> &'static [&'static str] {
        &["x", "y"]
    }

    fn chunk_box(&self, lo: &[f32], hi: &[f32], _lod: u8) -> Result<[[i64; 3]; 2], RegionError> {
        let f = self.field();
        let size = f64::from(self.params().chunk_cells) * f64::from(f.cell_size());
        let chunks = [self.chunks_x(), self.chunks_y()];
        let mut b = [[0; 3]; 2];
        for a in 0..2 {
            (b[0][a], b[1][a]) =
                bounded_axis(a, lo[a], hi[a], f64::from(f.origin()[a]), size, chunks[a])?;
        }
        Ok(b)
    }

    /// Chunk `(cx, cy)` meshes its cells, reading the nodes `[c*N, c*N + N]`
    /// on each axis: its own storage chunk and the next one up on each axis
    /// (`[c, c + 1]`, clipped to the world).
    fn input_box(&self, key: &ChunkKey) -> Result<BakeInputBox, StoreError> {
        let coords = [key.x, key.y];
        let counts = [self.chunks_x(), self.chunks_y()];
        let mut b = BakeInputBox {
            min: [0; 3],
            max: [0; 3],
        };
        for a in 0..2 {
            let c = u32::try_from(coords[a])
                .ok()
                .filter(|&c| c < counts[a])
                .ok_or_else(|| outside_world(key))?;
            b.min[a] = c as i32;
            b.max[a] = (c + 1).min(counts[a] - 1) as i32;
        }
        Ok(b)
    }

    fn bake(&self, _baker: &mut ChunkBaker, key: &ChunkKey) -> Result<BakedChunk, StoreError> {
        let chunk = u32::try_from(key.x)
            .ok()
            .zip(u32::try_from(key.y).ok())
            .filter(|_| key.z == 0)
            .and_then(|(x, y)| self.chunk(x, y))
            .ok_or_else(|| outside_world(key))?;
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
}
