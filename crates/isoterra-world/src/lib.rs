//! Chunked worlds, brushes, undoable edits, queries, colliders and
//! streaming for isoterra.
//!
//! Four world kinds, each split into chunks:
//!
//! * `side2d`, [`Side2dWorld`]: a bounded 2D side-view density grid (Worms,
//!   Terraria-like diggers, Noita-like caves) with a material per node; its
//!   chunks cache marching squares fill meshes, contours and colliders, and
//!   it finds floating islands. [`Side2dBrush`] digs and fills.
//! * `map`, [`MapWorld`]: a bounded top-down map (War3 World Editor style)
//!   with cliff levels 0–15, ramps, ground height, water, texture paint and
//!   pathing flags, meshed in one pass per chunk; pathing grids, line of
//!   sight and level colliders. A [`MapStroke`] is one [`MapBrush`] applied
//!   at a row of dabs.
//! * `heightmap`, [`HeightmapWorld`]: endless ground from a height generator
//!   plus an edit layer; LOD chunk meshes stitched across levels,
//!   heightfield colliders and frustum culling. [`HeightBrush`] sculpts.
//! * `voxel`, [`VoxelWorld`]: endless 3D density with caves and overhangs,
//!   meshed by marching cubes, and at coarser LODs with transition cells
//!   where levels meet ([`VoxelLodMesher`]). [`VoxelBrush`] digs, adds,
//!   smooths, flattens and paints.
//!
//! Every edit returns a delta ([`Side2dEdit`], [`MapEdit`], [`HeightEdit`],
//! [`VoxelEdit`]) that `apply_edit` plays backward or forward, giving back the
//! exact bytes.
//!
//! Streaming is shared by the kinds: [`StreamViewer`]s (a player, a camera)
//! want the chunks within their view distance, at LODs from distance rings,
//! with prefetch along their velocity, unload hysteresis and the 2:1 rule
//! between neighbours ([`desired_chunks`]). With the `parallel` feature a
//! [`StreamScheduler`] builds them through a [`ChunkSource`]
//! ([`Side2dSource`], [`HeightmapSource`], [`VoxelSource`]) on a thread
//! pool without blocking the calling thread, hands them out as
//! [`StreamEvent`]s and rebuilds first the chunks an edit invalidated.
//!
//! Conventions (shared by every isoterra crate): a node is solid when
//! `value >= iso` (default 0, positive inside, values in `[-1, 1]`); fields
//! are corner-sampled, row-major, x fastest; x right, y up; contours run
//! counter-clockwise around solid and clockwise around holes.
//!
//! ```
//! use isoterra_world::{Side2dBrush, Side2dTool, EditDirection, Side2dParams, Side2dWorld};
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
//! let edit = world.apply_brush(&Side2dBrush::new(Side2dTool::Dig, [32.0, 20.0], 6.0))?;
//! assert!(!world.is_solid([32.0, 18.0]));
//! world.apply_edit(&edit, EditDirection::Backward)?;
//! assert!(world.is_solid([32.0, 18.0]));
//! # Ok(())
//! # }
//! ```
//!
//! # Features
//!
//! * `parallel` (default): the [`StreamScheduler`] and its thread pool;
//!   chunk rebuilds and meshing of every kind fan out over rayon's threads.
//!   Results do not depend on the thread count.
//! * `serde`: `Serialize` / `Deserialize` for the parameters and brushes of
//!   every kind, [`MapStroke`], the side2d, heightmap and voxel edits
//!   ([`Side2dEdit`], [`HeightEdit`], [`VoxelEdit`]), the streaming settings and the
//!   small enums (the world file stores parameters and strokes as JSON).
//! * `parry2d`: `parry_polylines` / `parry_oriented_polylines`, turning
//!   collider polylines into parry2d shapes.
//!
//! This crate does no I/O.

mod edit;
mod error;
mod heightmap;
mod map;
mod map_query;
#[cfg(feature = "parry2d")]
mod parry;
mod side2d;
mod stream;
mod voxel;

pub use edit::{EditDirection, Side2dEdit};
pub use error::WorldError;
pub use heightmap::{
    Frustum, HeightBrush, HeightEdit, HeightErosion, HeightExtent, HeightHit, HeightOutside,
    HeightTool, HeightmapParams, HeightmapWorld, MAX_BRUSH_RADIUS_NODES, MAX_EXTENT_SIDE,
    MAX_NODE_COORD, MAX_SCULPT_HEIGHT, MeshKey, MeshReady, neighbour_lods,
};
pub use map::{
    CLIFF_SLOPE_RANGE, DEFAULT_RAMP_LENGTH, MAX_MAP_BRUSH_RADIUS, MAX_MAP_HEIGHT, MAX_STROKE_DABS,
    MapBrush, MapBrushShape, MapChunkMesh, MapEdit, MapParams, MapPreset, MapStroke, MapTool,
    MapWorld, RAMP_LENGTH_RANGE,
};
pub use map_query::{
    DEFAULT_COLLIDER_TOLERANCE, LevelContour, PathingGrid, PathingRules, cell_height, find_route,
    high_ground, level_at, level_colliders, line_of_sight, pathing_grid, route_cost,
};
#[cfg(feature = "parry2d")]
pub use parry::{parry_oriented_polylines, parry_polylines};
pub use side2d::{
    GRASS_RIM_CELLS, Island, RayHit, RebuildReport, Side2dBrush, Side2dBrushShape, Side2dChunk,
    Side2dParams, Side2dStorage, Side2dTool, Side2dWorld, grass_alpha,
};
pub use stream::{
    CancelFlag, ChunkCoord, ChunkRequest, ChunkSource, Dim, HeightmapChunk, HeightmapEdits,
    HeightmapSource, Side2dSource, SlotId, StreamConfig, StreamEvent, StreamViewer, VoxelEdits,
    VoxelSource, chunk_requests, desired_chunks,
};
#[cfg(feature = "parallel")]
pub use stream::{StreamExecutor, StreamScheduler, StreamStats};
pub use voxel::{
    VoxelBrush, VoxelChunk, VoxelChunkData, VoxelChunkMaterials, VoxelChunkMesh, VoxelEdit,
    VoxelHit, VoxelLodChunk, VoxelLodMesher, VoxelLodParams, VoxelMesher, VoxelParams, VoxelRun,
    VoxelShape, VoxelTool, VoxelWorld, select_voxel_lods, voxel_lod_transitions,
};
