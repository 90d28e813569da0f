//! Baked chunks as the store keeps them: the meshes and colliders a game
//! loads instead of meshing, as rows of bytes.
//!
//! A [`BakedChunk`] is one chunk at one level of detail: the render mesh
//! (positions, normals, a triangle list) and the collider data of its kind
//! (polylines, a heightfield, the mesh as a triangle mesh, or none).
//! [`encode_baked`] turns it into the payload of a row ([`BakedRow`](crate::BakedRow))
//! and [`decode_baked`] back; [`WorldFile::put_baked`](crate::WorldFile::put_baked)
//! and the other stores keep the rows.
//!
//! What a baked chunk of each kind contains, which chunks a bake covers
//! and the input stamp each row records are computed above the store, in
//! the kind layer (`isoterra-kind`: `BakeSource`, `ChunkBaker`,
//! `BakeInputs`); the store keeps the rows and their stamps as given. The
//! stamp's byte layout is [`input_stamp`](crate::input_stamp), with the
//! store's other hashes.
//!
//! # Files
//!
//! - `chunk`: the baked chunk types, the baked layers and the payload codec
//!   (plain data and bytes).
//!
//! The SQL of the file's `baked` table is with the file backend
//! (`file/baked_table.rs`); it depends on the row and payload types only.

mod chunk;

pub(crate) use chunk::{BAKED_MAGIC, decode_row};
pub use chunk::{
    BAKED_PAYLOAD_VERSION, BAKED_TERRAIN, BAKED_WATER, BakedChunk, BakedCollider, BakedHeightfield,
    BakedPolyline, decode_baked, encode_baked,
};
