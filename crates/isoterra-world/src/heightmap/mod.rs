//! The `heightmap` world kind: an endless terrain from a height generator,
//! streamed in chunks with levels of detail, sculpted through an edit layer.

mod brush;
mod params;
mod select;
mod world;

pub use brush::{HeightBrush, HeightEdit, HeightTool, MAX_BRUSH_RADIUS_NODES, MAX_SCULPT_HEIGHT};
pub use params::{HeightmapParams, MAX_NODE_COORD};
pub use select::{ChunkStreamer, Frustum, StreamUpdate, Viewer, neighbour_lods, select_chunks};
pub use world::{HeightmapWorld, MeshKey, MeshReady};
