//! The `map` world kind: a top-down map on the x/z plane with cliff levels,
//! ramps, a ground height offset, water, texture splats and pathing
//! overrides (Warcraft III World Editor style), edited by strokes that undo
//! as a whole.

mod brush;
mod edit;
mod params;
mod world;

pub use brush::{
    CLIFF_SLOPE_RANGE, DEFAULT_RAMP_LENGTH, MAX_MAP_BRUSH_RADIUS, MAX_MAP_HEIGHT, MAX_STROKE_DABS,
    MapBrush, MapBrushShape, MapStroke, MapTool, RAMP_LENGTH_RANGE,
};
pub use edit::MapEdit;
pub use params::{MapParams, MapPreset};
pub use world::{MapChunkMesh, MapWorld};
