//! The isoterra world file, and the storage seam behind it.
//!
//! A world lives in one SQLite file (`*.isoterra`) that holds the world kind
//! and generator parameters, the chunks that differ from what the generator
//! gives, and a stroke log that drives undo/redo across restarts.
//!
//! Three layers:
//! - [`ChunkStore`]: what a world needs from storage — metadata, chunk rows
//!   by [`ChunkKey`], the stroke log with its undo position, baked rows —
//!   with every write one atomic commit. Two implementations:
//!   [`WorldFile`], the SQLite file (schema, durability, several handles on
//!   one file), and [`MemoryStore`], the same contents in memory (tests,
//!   worlds that never touch a disk). A server database would be a third.
//!   The [chunk codec](encode_chunk) and [delta codec](encode_delta) turn
//!   field data into the blobs a store keeps.
//! - Documents, which tie a store to a world in memory so that every
//!   acknowledged edit is committed: [`Side2dDocument`],
//!   [`HeightmapDocument`], [`VoxelDocument`] and [`MapDocument`]. Each is
//!   generic over its store and defaults to [`WorldFile`]: `create(path, …)`
//!   and `open(path)` work on files, `create_in(store, …)` and
//!   `open_in(store)` on any store, `into_store()` gives the store back.
//!   They share one implementation of the stroke, undo and redo protocol
//!   and differ only in what their kind needs.
//! - [`open_any`] / [`detect_kind`] read a file's metadata without knowing
//!   its kind.
//!
//! ```
//! use isoterra_store::Side2dDocument;
//! use isoterra_world::{Side2dBrush, Side2dTool, Side2dParams};
//!
//! # fn main() -> Result<(), isoterra_store::StoreError> {
//! # let dir = std::env::temp_dir().join(format!("isoterra-store-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let path = dir.join("cave.isoterra");
//! # let _ = std::fs::remove_file(&path);
//! let mut doc = Side2dDocument::create(&path, &Side2dParams::DEFAULT)?;
//! let generated = doc.content_hash();
//! // On disk when it returns.
//! let outcome = doc.stroke(&Side2dBrush::new(Side2dTool::Fill, [40.0, 60.0], 6.0))?;
//! doc.undo()?;
//! assert_eq!(doc.content_hash(), generated);
//! drop(doc);
//!
//! // History survives reopening: the undone stroke can be redone.
//! let doc = Side2dDocument::open(&path)?;
//! assert_eq!(doc.info().redo_available, outcome.id.is_some());
//! # drop(doc);
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok(())
//! # }
//! ```
//!
//! Baked chunks — the meshes and colliders a game loads — are kept as rows
//! of bytes: [`BakedChunk`] and its payload codec ([`encode_baked`],
//! [`decode_baked`]) give a row's format, [`WorldFile::put_baked`] keeps
//! rows in the file's `baked` table (every [`ChunkStore`] has the same
//! rows). Each row records its chunk's input stamp ([`input_stamp`]) as
//! given. What a baked chunk contains, which chunks a bake covers and
//! which stamp each has are computed above the store, by the kind layer
//! (`isoterra-kind`: `BakeSource`, `ChunkBaker`, `BakeInputs`), so that a
//! bake after an edit redoes only the chunks the edit can have changed.
//!
//! The same document over a [`MemoryStore`] keeps its world while the
//! program runs, and a document opened over the store again gets it back:
//!
//! ```
//! use isoterra_store::{MemoryStore, Side2dDocument};
//! use isoterra_world::{Side2dBrush, Side2dTool, Side2dParams};
//!
//! # fn main() -> Result<(), isoterra_store::StoreError> {
//! let mut doc = Side2dDocument::create_in(MemoryStore::new(), &Side2dParams::DEFAULT)?;
//! doc.stroke(&Side2dBrush::new(Side2dTool::Fill, [40.0, 60.0], 6.0))?;
//! let edited = doc.content_hash();
//! let doc = Side2dDocument::open_in(doc.into_store())?;
//! assert_eq!(doc.content_hash(), edited);
//! # Ok(())
//! # }
//! ```
//!
//! Nothing in a file can make this crate panic: damaged, truncated or
//! foreign files give a [`StoreError`] that says what was found.

mod baked;
mod chunk_codec;
mod chunk_store;
mod delta_codec;
mod document;
mod document_core;
mod error;
mod file;
mod hash;
mod heightmap_document;
mod map_document;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
mod voxel_document;
mod wire;
mod write_behind;

pub use baked::{
    BAKED_PAYLOAD_VERSION, BAKED_TERRAIN, BAKED_WATER, BakedChunk, BakedCollider, BakedHeightfield,
    BakedPolyline, decode_baked, encode_baked,
};
pub use chunk_codec::{ChunkData, ChunkEncoding, decode_chunk, encode_chunk};
pub use chunk_store::{
    BakedRow, ChunkChange, ChunkKey, ChunkLayer, ChunkStore, ChunkVisitor, NewStroke, StrokeCounts,
    StrokeRecord, WorldMeta,
};
pub use delta_codec::{EditDelta, decode_delta, encode_delta, encode_delta_as};
pub use document::{
    DocumentInfo, SIDE2D_FORMAT_VERSION, SIDE2D_KIND, SIDE2D_MATERIALS_KEY, Side2dDocument,
    StrokeOutcome, detect_kind, open_any,
};
pub use document_core::Followed;
pub use error::StoreError;
pub use file::WorldFile;
pub use hash::{field2_content_hash, input_meta_hash, input_stamp, payload_hash};
pub use heightmap_document::{
    ExtentInfo, HEIGHTMAP_FORMAT_VERSION, HEIGHTMAP_KIND, HeightStrokeOutcome, HeightmapDocument,
    HeightmapInfo, MAX_STROKE_NODES as MAX_HEIGHT_STROKE_NODES, decode_height_edit,
    encode_height_edit,
};
pub use map_document::{
    MAP_FORMAT_VERSION, MAP_KIND, MapDocument, MapInfo, MapStrokeOutcome, decode_map_chunk,
    decode_map_edit, encode_map_chunk, encode_map_edit,
};
pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
pub use postgres::{
    BakeJob, BakeRun, MAX_BAKE_JOBS, MAX_PG_WORLD_NAME, PG_NOTIFY_CHANNEL, PG_SCHEMA_VERSION,
    PgBakeQueue, PgStore, PgWatcher, QueueProgress, is_postgres_url, redact_url,
};
pub use voxel_document::{
    MAX_STROKE_NODES as MAX_VOXEL_STROKE_NODES, VOXEL_FORMAT_VERSION, VOXEL_KIND, VoxelDocument,
    VoxelDocumentInfo, VoxelStrokeOutcome, decode_delta3, encode_delta3,
};
pub use write_behind::{ChunkWriter, FullPolicy, WriteBehind, WriteBehindConfig};
