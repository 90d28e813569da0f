//! The `side2d` world kind: a bounded 2D side-view density grid with a
//! material per node, split into chunks that cache their marching squares
//! fill meshes, contours and colliders; dig and fill brushes, point and ray
//! queries, and floating islands.

mod brush;
mod chain;
mod chunk;
mod contours;
mod grass;
mod islands;
mod params;
mod query;
mod world;

pub use brush::{Side2dBrush, Side2dBrushShape, Side2dTool};
pub use chunk::Side2dChunk;
pub use grass::{GRASS_RIM_CELLS, grass_alpha};
pub use islands::Island;
pub use params::{Side2dParams, Side2dStorage};
pub use query::RayHit;
pub use world::{RebuildReport, Side2dWorld};
