//! Chunked worlds over one density field, brushes, undoable edits, queries
//! and colliders for isoterra.
//!
//! Today this crate holds the `side2d` world kind, [`Side2dWorld`]: a 2D
//! side-view density grid (Worms, Terraria-like diggers, Noita-like caves)
//! with a material per node, split into chunks that cache their marching
//! squares fill meshes, contours and colliders.
//!
//! Conventions (shared by every isoterra crate): a node is solid when
//! `value >= iso` (default 0, positive inside, values in `[-1, 1]`); fields
//! are corner-sampled, row-major, x fastest; x right, y up; contours run
//! counter-clockwise around solid and clockwise around holes.
//!
//! ```
//! use isoterra_world::{Brush, BrushTool, EditDirection, Side2dParams, Side2dWorld};
//! use isoterra_field::{Field2, MaterialGrid};
//!
//! # fn main() -> Result<(), isoterra_world::WorldError> {
//! // Any field works; here a flat ground 20 cells high in a 64 x 48 cell world.
//! let params = Side2dParams::DEFAULT.with_chunk_cells(16);
//! # let params = params.with_generator(params.generator.with_width_cells(64).with_height_cells(48));
//! let [w, h] = params.cells();
//! let mut field = Field2::from_fn(w + 1, h + 1, |_, y| ((20.0 - y as f32) / 2.0).clamp(-1.0, 1.0))?;
//! field.clear_border(-1.0)?;
//! let materials = MaterialGrid::like(&field, 0);
//! let mut world = Side2dWorld::from_parts(&params, field, materials)?;
//!
//! // Dig a round hole and undo it.
//! let edit = world.apply_brush(&Brush::new(BrushTool::Dig, [32.0, 20.0], 6.0))?;
//! assert!(!world.is_solid([32.0, 18.0]));
//! world.apply_edit(&edit, EditDirection::Backward)?;
//! assert!(world.is_solid([32.0, 18.0]));
//! # Ok(())
//! # }
//! ```
//!
//! # Features
//!
//! * `parallel` (default): chunk rebuilds and on-the-fly contour meshing fan
//!   out over rayon's threads; results do not depend on the thread count.
//! * `serde`: `Serialize` / `Deserialize` for [`Side2dParams`], [`Brush`],
//!   [`Edit`] and the small enums (the world file stores them as JSON).
//! * `parry2d`: `parry_polylines` / `parry_oriented_polylines`, turning
//!   collider polylines into parry2d shapes.
//!
//! This crate does no I/O.

mod brush;
mod chain;
mod chunk;
mod contours;
mod edit;
mod error;
mod heightmap;
mod islands;
mod map;
mod map_query;
mod params;
#[cfg(feature = "parry2d")]
mod parry;
mod query;
mod side2d;
mod stream;
mod voxel;

pub use brush::{Brush, BrushShape, BrushTool};
pub use chunk::Side2dChunk;
pub use edit::{Edit, EditDirection};
pub use error::WorldError;
pub use heightmap::{
    ChunkStreamer, Frustum, HeightBrush, HeightEdit, HeightTool, HeightmapParams, HeightmapWorld,
    MAX_BRUSH_RADIUS_NODES, MAX_NODE_COORD, MAX_SCULPT_HEIGHT, MeshKey, MeshReady, StreamUpdate,
    Viewer, neighbour_lods, select_chunks,
};
pub use islands::Island;
pub use map::{
    MAX_MAP_BRUSH_RADIUS, MAX_MAP_HEIGHT, MAX_STROKE_DABS, MapBrush, MapBrushShape, MapChunkMesh,
    MapEdit, MapParams, MapPreset, MapStroke, MapTool, MapWorld,
};
pub use map_query::{
    DEFAULT_COLLIDER_TOLERANCE, LevelContour, PathingGrid, PathingRules, high_ground, level_at,
    level_colliders, line_of_sight, pathing_grid,
};
pub use params::Side2dParams;
#[cfg(feature = "parry2d")]
pub use parry::{parry_oriented_polylines, parry_polylines};
pub use query::RayHit;
pub use side2d::{RebuildReport, Side2dWorld};
pub use stream::{
    CancelFlag, ChunkCoord, ChunkRequest, ChunkSource, Dim, HeightmapChunk, HeightmapEdits,
    HeightmapSource, Side2dSource, SlotId, StreamConfig, StreamEvent, StreamViewer, VoxelEdits,
    VoxelSource, desired_chunks,
};
#[cfg(feature = "parallel")]
pub use stream::{StreamScheduler, StreamStats};
pub use voxel::{
    Edit3, VoxelBrush, VoxelChunk, VoxelChunkData, VoxelChunkMaterials, VoxelChunkMesh, VoxelHit,
    VoxelLodChunk, VoxelLodMesher, VoxelLodParams, VoxelMesher, VoxelParams, VoxelTool, VoxelWorld,
    select_voxel_lods, voxel_lod_transitions,
};
