//! Baking: what a baked chunk of each kind contains, which chunks a bake
//! covers, and which stored chunks each one is made from.
//!
//! Baking turns a region of a world into one
//! [`BakedChunk`](isoterra_store::BakedChunk) per chunk at one level of
//! detail: the render mesh (positions, normals, a triangle list) and the
//! collider data of the kind — collider polylines for `side2d`, the
//! heightfield for `heightmap`, the mesh itself as a triangle mesh for
//! `voxel` and a map's terrain (a map's water layer has no collider). [`BakeSource::plan`] turns a region in world units
//! into chunk keys, a [`ChunkBaker`] bakes one key (one baker per worker
//! thread; the result is a pure function of the world and the key, so any
//! thread count and any order give the same bytes) and the store keeps the
//! results as rows of bytes
//! ([`ChunkStore::put_baked`](isoterra_store::ChunkStore::put_baked)).
//!
//! The key layout is on [`BakePlan`]; the payload layout, the row types and
//! the SQL of the `baked` table belong to the store
//! ([`encode_baked`](isoterra_store::encode_baked)).
//!
//! # Files
//!
//! - `plan`: [`BakeSource`], [`BakePlan`] and the input boxes
//!   ([`BakeInputBox`]);
//! - `inputs`: the per-chunk input stamps ([`BakeInputs`]);
//! - `baker`: [`ChunkBaker`] and [`bake_chunks`].
//!
//! What a baked chunk of each kind contains, which chunks a region covers
//! and which stored chunks a baked chunk reads are written in the kind's
//! own module (`side2d/bake.rs`, …), as its `BakeWorld`.
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
//! the old stamps back too. The whole-world
//! [`WorldFile::world_stamp`](isoterra_store::WorldFile::world_stamp) is
//! still there to tell whether two files hold the same world (`isoterra
//! merge` compares it).

mod baker;
mod inputs;
mod plan;

pub use baker::{ChunkBaker, bake_chunks};
pub use inputs::BakeInputs;
pub use plan::{BakeInputBox, BakePlan, MAX_BAKE_CHUNKS};
pub(crate) use plan::{
    BakeWorld, RegionError, bounded_axis, endless_axis, outside_world, unbounded_axis,
};
