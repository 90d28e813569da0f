//! Baked chunks: the meshes and colliders a game loads instead of meshing.
//!
//! Baking turns a region of a world into one [`BakedChunk`] per chunk at one
//! level of detail: the render mesh (positions, normals, a triangle list) and
//! the collider data of the kind — collider polylines for `side2d`, the
//! heightfield for `heightmap`, the mesh itself as a triangle mesh for
//! `voxel`. [`BakeSource::plan`] turns a region in world units into chunk
//! keys, a [`ChunkBaker`] bakes one key (one baker per worker thread; the
//! result is a pure function of the world and the key, so any thread count
//! and any order give the same bytes) and [`WorldFile::put_baked`](crate::WorldFile::put_baked) stores
//! the results in the file's `baked` table.
//!
//! The key layout is on [`BakePlan`], the payload layout on
//! [`encode_baked`].
//!
//! # Files
//!
//! - `chunk`: the baked chunk types, the baked layers and the payload codec
//!   (plain data and bytes);
//! - `plan`: [`BakeSource`], [`BakePlan`] and the input boxes
//!   ([`BakeInputBox`]);
//! - `inputs`: the per-chunk input stamps ([`BakeInputs`]);
//! - `baker`: [`ChunkBaker`] and [`bake_chunks`], what a baked chunk of
//!   each kind contains.
//!
//! The SQL of the file's `baked` table is with the file backend
//! (`file/baked_table.rs`); it depends on the row and payload types only.
//!
//! # Staleness, chunk by chunk
//!
//! Every row records the *input stamp* of its chunk ([`BakeInputs`]): a
//! hash of the world's metadata, the chunk's key and the payloads of the
//! stored chunks its [input box](BakeSource::input_box) covers — the storage
//! chunks its mesh, normals, apron and LOD footprint read. A bake reads the
//! store once ([`BakeInputs::read`]), computes each planned chunk's stamp and
//! skips the chunks whose row records that stamp. An edit changes the stamps
//! of exactly the chunks whose box holds a changed storage chunk, so only
//! those are baked again; an undo that brings the stored chunks back brings
//! the old stamps back too. The whole-world [`WorldFile::world_stamp`](crate::WorldFile::world_stamp) is
//! still there to tell whether two files hold the same world (`isoterra
//! merge` compares it).

mod baker;
mod chunk;
mod inputs;
mod plan;

pub use baker::{ChunkBaker, bake_chunks};
pub(crate) use chunk::{BAKED_MAGIC, decode_row};
pub use chunk::{
    BAKED_PAYLOAD_VERSION, BAKED_TERRAIN, BAKED_WATER, BakedChunk, BakedCollider, BakedHeightfield,
    BakedPolyline, decode_baked, encode_baked,
};
pub use inputs::BakeInputs;
pub use plan::{BakeInputBox, BakePlan, BakeSource, MAX_BAKE_CHUNKS};
