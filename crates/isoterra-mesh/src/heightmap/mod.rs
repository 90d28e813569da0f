//! Heightmap chunk meshes with levels of detail, crack-free seams and morphing.
//!
//! The contract is written down on [`HeightmapMesher`].

mod collider;
mod input;
mod mesher;

pub use collider::HeightfieldCollider;
pub use input::{ChunkSide, HeightChunkInput, HeightmapOptions, sample_chunk_heights};
pub use mesher::{HeightmapMesh, HeightmapMesher, morph_blend};
