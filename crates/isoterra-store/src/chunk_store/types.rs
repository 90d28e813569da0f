//! The data a [`ChunkStore`](super::ChunkStore) keeps and hands out: world
//! metadata ([`WorldMeta`]), chunk keys and layers ([`ChunkKey`],
//! [`ChunkLayer`]), chunk changes ([`ChunkChange`]), strokes of the log
//! ([`NewStroke`], [`StrokeRecord`], [`StrokeCounts`]) and baked rows
//! ([`BakedRow`]). Plain data, the same for every backend.

use serde::{Deserialize, Serialize};

use isoterra_world::EditDirection;

/// Metadata every world file carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorldMeta {
    /// The world kind, e.g. `"side2d"`; decides which document type reads the file.
    pub kind: String,
    /// Version of the kind's own data layout (chunk layers, parameter shape).
    pub format_version: u32,
    /// The generator seed.
    pub seed: u64,
    /// The generator parameters as JSON.
    pub params: serde_json::Value,
}

/// A chunk layer: which kind of data a chunk row holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ChunkLayer(pub u16);

impl ChunkLayer {
    /// Densities (and material ids) of the world's field.
    pub const FIELD: ChunkLayer = ChunkLayer(0);
}

/// The coordinates of a stored chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ChunkKey {
    /// Which data the chunk holds.
    pub layer: ChunkLayer,
    /// Chunk column.
    pub x: i32,
    /// Chunk row.
    pub y: i32,
    /// Chunk slice (0 for 2D worlds).
    pub z: i32,
    /// Level of detail (0 = full resolution).
    pub lod: u8,
}

impl ChunkKey {
    /// The field chunk `(x, y)` of a 2D world (`z = 0`, `lod = 0`).
    pub const fn field2(x: i32, y: i32) -> Self {
        ChunkKey {
            layer: ChunkLayer::FIELD,
            x,
            y,
            z: 0,
            lod: 0,
        }
    }
}

/// One change to the chunks table: a new payload, or `None` to delete the row.
pub type ChunkChange = (ChunkKey, Option<Vec<u8>>);

/// A stroke to append to the log.
#[derive(Debug, Clone, PartialEq)]
pub struct NewStroke {
    /// The tool that made it (e.g. `"dig"`).
    pub tool: String,
    /// The tool's parameters as JSON.
    pub params: serde_json::Value,
    /// The encoded sparse delta (see [`encode_delta`](crate::encode_delta)).
    pub delta: Vec<u8>,
}

/// A stroke read back from the log.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StrokeRecord {
    /// Its id: increasing with time, never reused.
    pub id: i64,
    /// The tool that made it.
    pub tool: String,
    /// The tool's parameters as JSON.
    pub params: serde_json::Value,
    /// The encoded sparse delta.
    pub delta: Vec<u8>,
    /// True when the stroke has been undone (it is in the redo tail).
    pub undone: bool,
    /// When it was recorded, in milliseconds since the Unix epoch.
    pub created_ms: i64,
}

/// How many strokes the log holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StrokeCounts {
    /// Strokes in effect (the undo position).
    pub done: u64,
    /// Undone strokes that can be redone.
    pub undone: u64,
}

impl StrokeCounts {
    /// All strokes in the log.
    pub fn total(&self) -> u64 {
        self.done + self.undone
    }

    /// Moves one stroke across the undo position: undone by `Backward`,
    /// redone by `Forward`.
    pub(crate) fn record_step(&mut self, dir: EditDirection) {
        match dir {
            EditDirection::Backward => {
                self.done = self.done.saturating_sub(1);
                self.undone += 1;
            }
            EditDirection::Forward => {
                self.done += 1;
                self.undone = self.undone.saturating_sub(1);
            }
        }
    }
}

/// A row of baked data: a baked chunk's encoded payload with its key, the
/// input stamp it was baked from and its content hash, as every store keeps
/// it (the `baked` table of a [`WorldFile`](crate::WorldFile)). Made from a
/// [`BakedChunk`](crate::BakedChunk) by [`BakedRow::new`].
#[derive(Debug, Clone, PartialEq)]
pub struct BakedRow {
    /// Which chunk (layer [`BAKED_TERRAIN`](crate::BAKED_TERRAIN) for terrain).
    pub key: ChunkKey,
    /// The [input stamp](crate::input_stamp) the chunk was baked from; the
    /// row is current while the chunk's stamp is still this. The store keeps
    /// it as given: the kind layer computes it (`BakeInputs`).
    pub source: String,
    /// The content hash of the decoded payload.
    pub hash: String,
    /// The encoded payload ([`encode_baked`](crate::encode_baked)).
    pub payload: Vec<u8>,
}
