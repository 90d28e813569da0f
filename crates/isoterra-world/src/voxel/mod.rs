//! The `voxel` world kind: an endless 3D density field in chunks, meshed by
//! marching cubes, with 3D brushes, exact undo and colliders.

mod brush;
mod chunk;
mod edit;
mod lod;
mod mesher;
mod params;
mod run;
mod world;

pub use brush::{VoxelBrush, VoxelShape, VoxelTool};
pub use chunk::{VoxelChunk, VoxelChunkData, VoxelChunkMaterials, VoxelChunkMesh};
pub use edit::VoxelEdit;
pub use lod::{
    VoxelLodChunk, VoxelLodMesher, VoxelLodParams, select_voxel_lods, voxel_lod_transitions,
};
pub use mesher::VoxelMesher;
pub use params::VoxelParams;
pub use run::VoxelRun;
pub use world::{VoxelHit, VoxelWorld};
