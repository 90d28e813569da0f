//! The `heightmap` world kind: an endless terrain from a height generator,
//! meshed in chunks with levels of detail (streamed by a
//! [`HeightmapSource`](crate::HeightmapSource)), sculpted through an edit layer.

mod brush;
mod erosion;
mod extent;
mod params;
mod select;
mod world;

pub use brush::{HeightBrush, HeightEdit, HeightTool, MAX_BRUSH_RADIUS_NODES, MAX_SCULPT_HEIGHT};
pub use erosion::HeightErosion;
pub use extent::{HeightExtent, HeightOutside, MAX_EXTENT_SIDE};
pub use params::{HeightmapParams, MAX_NODE_COORD};
pub use select::{Frustum, neighbour_lods};
pub use world::{HeightHit, HeightmapWorld, MeshKey, MeshReady};
