//! Data derived from the layers of a `map` world: the pathing grid, the
//! high-ground map, line of sight, routes and per-level colliders.
//!
//! Everything here is a pure function of [`MapLayers`](isoterra_field::map::MapLayers)
//! and a few options, so it works on a live world, a loaded file or layers
//! rebuilt from textures alike.
//!
//! Coordinates are in *cell units* on the map plane: node `(x, z)` lies at
//! `[x as f32, z as f32]` and cell `(x, z)` spans `[x, x + 1] x [z, z + 1]`.
//! Multiply by the mesh cell size to get world units. Heights (level height,
//! ground offset, water) are in world units.

mod colliders;
mod pathing;
mod route;
mod sight;

pub use colliders::{DEFAULT_COLLIDER_TOLERANCE, LevelContour, level_colliders};
pub use pathing::{PathingGrid, PathingRules, high_ground, pathing_grid};
pub use route::{cell_height, find_route, route_cost};
pub use sight::{level_at, line_of_sight};

use isoterra_field::map::MapLayers;

use crate::WorldError;

/// Checks that the layers are consistent (lengths, finite values, ranges).
pub(crate) fn check_layers(map: &MapLayers) -> Result<(), WorldError> {
    map.validate().map_err(WorldError::from)
}
