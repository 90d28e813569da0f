//! What a baked heightmap chunk is: its mesh at the LOD (with morph
//! targets) and its heightfield collider.

use isoterra_store::{BakedChunk, BakedCollider, BakedHeightfield, ChunkKey, StoreError};
use isoterra_world::{HeightmapWorld, MeshKey};

use crate::WorldKind;
use crate::bake::{BakeInputBox, BakeWorld, ChunkBaker, RegionError, endless_axis, unbounded_axis};

impl BakeWorld for HeightmapWorld {
    fn kind(&self) -> WorldKind {
        WorldKind::Heightmap
    }

    fn axis_names(&self) -> &'static [&'static str] {
        &["x", "z"]
    }

    fn max_lod(&self) -> u8 {
        self.params().max_lod()
    }

    fn chunk_box(&self, lo: &[f32], hi: &[f32], _lod: u8) -> Result<[[i64; 3]; 2], RegionError> {
        let size = f64::from(self.params().chunk_cells) * f64::from(self.params().cell_size);
        // Nodes a chunk reads reach one chunk and an apron past it.
        let limit = isoterra_world::MAX_NODE_COORD / i64::from(self.params().chunk_cells) - 2;
        let mut b = [[0; 3]; 2];
        for a in 0..2 {
            (b[0][a], b[1][a]) = endless_axis(a, lo[a], hi[a], size, limit, || {
                format!("lies beyond chunk ±{limit}")
            })?;
        }
        Ok(b)
    }

    /// At LOD `k` (`s = 2^k`) a chunk reads the nodes
    /// `[c*N - s, c*N + N + s]` on each axis (its nodes and a one-sample
    /// apron for normals, the collider the same), so `[c - 1, c + 1]`, and
    /// `c + 2` when `s = N`.
    fn input_box(&self, key: &ChunkKey) -> Result<BakeInputBox, StoreError> {
        let coords = [key.x, key.y];
        let n = i64::from(self.params().chunk_cells);
        let s = 1i64 << key.lod;
        let mut b = BakeInputBox {
            min: [0; 3],
            max: [0; 3],
        };
        for (a, name) in [(0, "x"), (1, "z")] {
            let c = i64::from(coords[a]);
            (b.min[a], b.max[a]) = unbounded_axis(c * n - s, c * n + n + s, n, name)?;
        }
        Ok(b)
    }

    fn bake(&self, _baker: &mut ChunkBaker, key: &ChunkKey) -> Result<BakedChunk, StoreError> {
        if key.z != 0 {
            return Err(StoreError::input(
                "chunk",
                "heightmap chunks have z = 0 (x, z are stored in x, y)",
            ));
        }
        let chunk = [key.x, key.y];
        let mesh = self.build_mesh(&MeshKey::new(chunk, key.lod))?;
        let c = self.collider(chunk, key.lod)?;
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
}
