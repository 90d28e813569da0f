//! Streaming the endless kinds: the shared [`StreamScheduler`] with its
//! builds on Bevy's async compute pool, each build giving the chunk's Bevy
//! mesh and avian collider.

use std::sync::Arc;

use bevy::tasks::AsyncComputeTaskPool;
use isoterra::world::{
    CancelFlag, ChunkRequest, ChunkSource, HeightmapSource, StreamConfig, StreamExecutor,
    StreamViewer, VoxelSource,
};

use isoterra::mesh::{HeightfieldCollider, HeightmapMesh};
use isoterra::store::{BakedChunk, BakedCollider};
use isoterra::world::VoxelChunkMesh;

use crate::baked::BakedChunks;
use crate::build;
use crate::io::{AnyCollider, Built, Layer};

/// Runs the scheduler's builds on Bevy's [`AsyncComputeTaskPool`].
pub(crate) struct BevyExecutor;

impl StreamExecutor for BevyExecutor {
    fn spawn(&self, job: Box<dyn FnOnce() + Send + 'static>) {
        AsyncComputeTaskPool::get()
            .spawn(async move { job() })
            .detach();
    }
}

/// Voxel chunks: the source's marching-cubes mesh (or its current baked
/// row), as a Bevy mesh and a trimesh collider.
pub(crate) struct VoxelBuild {
    pub source: Arc<VoxelSource>,
    pub baked: Option<Arc<BakedChunks>>,
}

impl ChunkSource for VoxelBuild {
    type Output = Built;

    fn build(&self, request: &ChunkRequest, cancel: &CancelFlag) -> Option<Built> {
        let baked = self
            .baked
            .as_ref()
            .filter(|_| request.lod == 0)
            .and_then(|b| b.take(request, request.coord));
        let from_bake = baked.is_some();
        let m = match baked {
            Some(c) => VoxelChunkMesh {
                materials: if c.materials.len() == c.positions.len() {
                    c.materials
                } else {
                    vec![0; c.positions.len()]
                },
                positions: c.positions,
                normals: c.normals,
                indices: c.indices,
            },
            None => self.source.build(request, cancel)?,
        };
        if m.is_empty() {
            return Some(Built {
                parts: Vec::new(),
                collider: AnyCollider::None,
                triangles: 0,
                bounds: None,
                baked: from_bake,
            });
        }
        let collider = build::trimesh_collider(&m.positions, &m.indices)
            .map_or(AnyCollider::None, AnyCollider::D3);
        Some(Built {
            parts: vec![(Layer::Ground, build::voxel_mesh(&m))],
            collider,
            triangles: m.triangle_count(),
            bounds: crate::io::bounds_of(&m.positions),
            baked: from_bake,
        })
    }

    fn seam_request(&self, request: ChunkRequest) -> ChunkRequest {
        self.source.seam_request(request)
    }
}

/// Heightmap chunks: the stitched LOD mesh (with its morph attributes) and
/// the heightfield collider at the same LOD.
pub(crate) struct HeightBuild {
    pub source: Arc<HeightmapSource>,
    pub range: [f32; 2],
    pub baked: Option<Arc<BakedChunks>>,
}

/// A heightmap chunk from its baked row: UVs are world `(x, z)` (the
/// world meshes with a UV scale of 1).
fn heightmap_chunk(c: BakedChunk) -> Option<(HeightmapMesh, Option<HeightfieldCollider>)> {
    let BakedCollider::Heightfield(h) = c.collider else {
        return None;
    };
    let v = c.positions.len();
    if c.morph.len() != v || c.normals.len() != v {
        return None;
    }
    let mesh = HeightmapMesh {
        uvs: c.positions.iter().map(|p| [p[0], p[2]]).collect(),
        morph: c.morph.iter().map(|m| m[0]).collect(),
        morph_targets: c.morph.iter().map(|m| m[1]).collect(),
        skirt_vertex_start: v as u32,
        skirt_index_start: c.indices.len() as u32,
        positions: c.positions,
        normals: c.normals,
        indices: c.indices,
    };
    Some((
        mesh,
        Some(HeightfieldCollider {
            rows: h.rows,
            cols: h.cols,
            heights: h.heights,
            scale: h.scale,
            translation: h.translation,
        }),
    ))
}

impl ChunkSource for HeightBuild {
    type Output = Built;

    fn build(&self, request: &ChunkRequest, cancel: &CancelFlag) -> Option<Built> {
        let baked = self
            .baked
            .as_ref()
            .and_then(|b| b.take(request, [request.coord[0], request.coord[1], 0]))
            .and_then(heightmap_chunk);
        let from_bake = baked.is_some();
        let (mesh, collider) = match baked {
            Some(c) => c,
            None => {
                let c = self.source.build(request, cancel)?;
                (c.mesh, c.collider)
            }
        };
        let collider = collider
            .as_ref()
            .and_then(build::heightfield_collider)
            .map_or(AnyCollider::None, |(c, at)| AnyCollider::D3At(c, at));
        Some(Built {
            triangles: mesh.indices.len() / 3,
            bounds: crate::io::bounds_of(&mesh.positions),
            parts: vec![(Layer::Ground, build::heightmap_mesh(&mesh, self.range))],
            collider,
            baked: from_bake,
        })
    }

    fn seam_request(&self, request: ChunkRequest) -> ChunkRequest {
        self.source.seam_request(request)
    }
}

/// How viewers of one stream become [`StreamViewer`]s.
#[derive(Debug, Clone)]
pub(crate) struct ViewerRules {
    /// LOD ring radii, world units.
    pub rings: Vec<f32>,
    /// Largest view distance the scheduler can hold.
    pub reach: f32,
}

impl ViewerRules {
    /// Voxel worlds: rings at 2, 4 and 6 chunk sizes unless given.
    pub fn voxel(config: &StreamConfig, rings: Option<Vec<f32>>) -> Self {
        let n = config.chunk_size;
        ViewerRules {
            rings: rings.unwrap_or_else(|| vec![2.0 * n, 4.0 * n, 6.0 * n]),
            reach: StreamConfig::MAX_RADIUS_3D * n - config.unload_hysteresis - 1.0,
        }
    }

    /// Heightmaps: the world's `lod_distance * 2^k` rings unless given.
    pub fn heightmap(
        config: &StreamConfig,
        source: &HeightmapSource,
        rings: Option<Vec<f32>>,
    ) -> Self {
        let p = source.params();
        ViewerRules {
            rings: rings.unwrap_or_else(|| p.ring_distances()),
            reach: StreamConfig::MAX_RADIUS_2D * config.chunk_size - config.unload_hysteresis - 1.0,
        }
    }

    pub fn viewer(
        &self,
        id: u64,
        position: [f32; 3],
        forward: [f32; 3],
        velocity: [f32; 3],
        distance: f32,
    ) -> StreamViewer {
        StreamViewer::new(position, distance.min(self.reach).max(1.0))
            .with_id(id)
            .with_forward(forward)
            .with_velocity(velocity)
            .with_lod_distances(self.rings.clone())
    }
}
