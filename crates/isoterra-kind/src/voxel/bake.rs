//! What a baked voxel chunk is: its marching-cubes mesh at the LOD with
//! transition cells left out, its materials, and the mesh as a
//! triangle-mesh collider.

use isoterra_store::{BakedChunk, BakedCollider, ChunkKey, StoreError};
use isoterra_world::{VoxelLodChunk, VoxelLodParams, VoxelWorld};

use crate::WorldKind;
use crate::bake::{BakeInputBox, BakeWorld, ChunkBaker, RegionError, endless_axis, unbounded_axis};

impl BakeWorld for VoxelWorld {
    fn kind(&self) -> WorldKind {
        WorldKind::Voxel
    }

    fn axis_names(&self) -> &'static [&'static str] {
        &["x", "y", "z"]
    }

    fn max_lod(&self) -> u8 {
        VoxelLodParams::MAX_LOD
    }

    fn chunk_box(&self, lo: &[f32], hi: &[f32], lod: u8) -> Result<[[i64; 3]; 2], RegionError> {
        let cells = i64::from(self.chunk_cells()) << lod;
        // Base nodes of the LOD's chunks must lie within ±2^24.
        let limit = (1i64 << 24) / cells - 1;
        let mut b = [[0; 3]; 2];
        for a in 0..3 {
            (b[0][a], b[1][a]) = endless_axis(a, lo[a], hi[a], cells as f64, limit, || {
                format!("lies beyond chunk ±{limit} at LOD {lod} (±2^24 nodes)")
            })?;
        }
        Ok(b)
    }

    /// At LOD `k` a chunk reads the base nodes
    /// `[c*N*s - s, (c + 1)*N*s + s]` on each axis (the chunk's `2^k` world
    /// chunks per axis, the nodes one sample past its faces for normals,
    /// and the first node of the next chunk), so `[c*2^k - 1, (c + 1)*2^k]`
    /// when `2^k < N`.
    fn input_box(&self, key: &ChunkKey) -> Result<BakeInputBox, StoreError> {
        let coords = [key.x, key.y, key.z];
        let n = i64::from(self.chunk_cells());
        let s = 1i64 << key.lod;
        let mut b = BakeInputBox {
            min: [0; 3],
            max: [0; 3],
        };
        for (a, name) in [(0, "x"), (1, "y"), (2, "z")] {
            let base = i64::from(coords[a]) * n * s;
            (b.min[a], b.max[a]) = unbounded_axis(base - s, base + n * s + s, n, name)?;
        }
        Ok(b)
    }

    fn bake(&self, baker: &mut ChunkBaker, key: &ChunkKey) -> Result<BakedChunk, StoreError> {
        let ch = VoxelLodChunk::new([key.x, key.y, key.z], key.lod);
        let mut out = Default::default();
        baker.voxel.mesh_chunk(self, &ch, 0, 0, &mut out)?;
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
