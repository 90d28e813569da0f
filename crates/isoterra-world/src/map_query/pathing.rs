//! The pathing grid and the high-ground map of a map's cells.

use isoterra_field::map::{MAX_LEVEL, MapLayers, PathingOverride, node_surface};

use super::check_layers;
use crate::WorldError;

/// Rules that turn map layers into pathing bits (and the sight rule of
/// [`line_of_sight`](super::line_of_sight)).
///
/// ```
/// use isoterra_world::PathingRules;
/// let rules = PathingRules::DEFAULT.with_max_walk_slope(0.5).with_deep_water_depth(1.0);
/// assert_eq!(rules.level_height, 1.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
#[non_exhaustive]
pub struct PathingRules {
    /// Height of one cliff level in world units, as in the map mesher (node
    /// heights come from [`node_surface`]). Finite and greater than zero.
    /// Default value: `1.0`.
    pub level_height: f32,
    /// Largest rise, in world units per cell edge, that ground units walk. A
    /// cell whose corner heights differ by more than this along one of its four
    /// edges is neither walkable nor buildable. Finite and at least zero.
    /// Default value: `1.0`.
    pub max_walk_slope: f32,
    /// Water deeper than this (world units) at a corner makes the corner wet.
    /// Finite, at least zero and at most `deep_water_depth`. Default value: `0.0`.
    pub min_water_depth: f32,
    /// A cell whose mean corner water depth is above this is deep water (not
    /// walkable); shallower water is walkable but not buildable. Finite and at
    /// least `min_water_depth`. Default value: `0.5`.
    pub deep_water_depth: f32,
    /// A level change along a cell edge is a walkable slope only when both
    /// nodes of the edge have at least this softness; otherwise it is a cliff
    /// wall. In `0..=1`. Default value: `1.0` (only full softness, a ramp, is a slope).
    pub slope_softness: f32,
    /// Levels above its own that a viewer still sees over (see
    /// [`line_of_sight`](super::line_of_sight)). At most 15. Default value: `0`.
    pub sight_levels_above: u8,
}

impl PathingRules {
    /// The default rules (see each field).
    pub const DEFAULT: PathingRules = PathingRules {
        level_height: 1.0,
        max_walk_slope: 1.0,
        min_water_depth: 0.0,
        deep_water_depth: 0.5,
        slope_softness: 1.0,
        sight_levels_above: 0,
    };

    /// Sets [`level_height`](Self::level_height).
    pub const fn with_level_height(mut self, v: f32) -> Self {
        self.level_height = v;
        self
    }

    /// Sets [`max_walk_slope`](Self::max_walk_slope).
    pub const fn with_max_walk_slope(mut self, v: f32) -> Self {
        self.max_walk_slope = v;
        self
    }

    /// Sets [`min_water_depth`](Self::min_water_depth).
    pub const fn with_min_water_depth(mut self, v: f32) -> Self {
        self.min_water_depth = v;
        self
    }

    /// Sets [`deep_water_depth`](Self::deep_water_depth).
    pub const fn with_deep_water_depth(mut self, v: f32) -> Self {
        self.deep_water_depth = v;
        self
    }

    /// Sets [`slope_softness`](Self::slope_softness).
    pub const fn with_slope_softness(mut self, v: f32) -> Self {
        self.slope_softness = v;
        self
    }

    /// Sets [`sight_levels_above`](Self::sight_levels_above).
    pub const fn with_sight_levels_above(mut self, v: u8) -> Self {
        self.sight_levels_above = v;
        self
    }

    /// Checks every field against its documented range.
    pub fn validate(&self) -> Result<(), WorldError> {
        if !(self.level_height.is_finite() && self.level_height > 0.0) {
            return Err(WorldError::param(
                "level_height",
                self.level_height,
                "must be finite and greater than zero",
            ));
        }
        if !(self.max_walk_slope.is_finite() && self.max_walk_slope >= 0.0) {
            return Err(WorldError::param(
                "max_walk_slope",
                self.max_walk_slope,
                "must be finite and at least zero",
            ));
        }
        if !(self.min_water_depth.is_finite() && self.min_water_depth >= 0.0) {
            return Err(WorldError::param(
                "min_water_depth",
                self.min_water_depth,
                "must be finite and at least zero",
            ));
        }
        if !(self.deep_water_depth.is_finite() && self.deep_water_depth >= self.min_water_depth) {
            return Err(WorldError::param(
                "deep_water_depth",
                self.deep_water_depth,
                "must be finite and at least min_water_depth",
            ));
        }
        if !(0.0..=1.0).contains(&self.slope_softness) {
            return Err(WorldError::param(
                "slope_softness",
                self.slope_softness,
                "must lie in 0..=1",
            ));
        }
        if self.sight_levels_above > MAX_LEVEL {
            return Err(WorldError::param(
                "sight_levels_above",
                self.sight_levels_above,
                "must lie in 0..=15",
            ));
        }
        Ok(())
    }
}

impl Default for PathingRules {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Pathing bits of every cell of a map, row-major with x fastest.
///
/// Bits: [`WALK`](Self::WALK), [`FLY`](Self::FLY), [`BUILD`](Self::BUILD),
/// [`SHALLOW_WATER`](Self::SHALLOW_WATER), [`DEEP_WATER`](Self::DEEP_WATER).
/// Built by [`pathing_grid`]; see there for the rules.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PathingGrid {
    width: u32,
    depth: u32,
    cells: Vec<u8>,
}

impl PathingGrid {
    /// Ground units may walk through the cell.
    pub const WALK: u8 = 1;
    /// Air units may fly over the cell.
    pub const FLY: u8 = 2;
    /// Buildings may stand on the cell.
    pub const BUILD: u8 = 4;
    /// The cell holds shallow water.
    pub const SHALLOW_WATER: u8 = 8;
    /// The cell holds deep water.
    pub const DEEP_WATER: u8 = 16;
    /// Every bit.
    pub const ALL: u8 = 31;

    /// A grid from raw cell bits (row-major, x fastest).
    ///
    /// Errors when a side is zero, the length is not `width * depth` or a
    /// value uses bits outside [`ALL`](Self::ALL).
    pub fn from_cells(width: u32, depth: u32, cells: Vec<u8>) -> Result<Self, WorldError> {
        if width == 0 || depth == 0 {
            return Err(WorldError::param(
                "pathing grid size",
                format!("{width}x{depth}"),
                "needs at least one cell along each axis",
            ));
        }
        let n = width as u64 * depth as u64;
        if cells.len() as u64 != n {
            return Err(WorldError::mismatch("pathing cell count", n, cells.len()));
        }
        if let Some(&b) = cells.iter().find(|&&b| b & !Self::ALL != 0) {
            return Err(WorldError::param(
                "pathing bits",
                b,
                "cells use bits 0..=4 only",
            ));
        }
        Ok(PathingGrid {
            width,
            depth,
            cells,
        })
    }

    /// Cells along x.
    pub fn width_cells(&self) -> u32 {
        self.width
    }

    /// Cells along z.
    pub fn depth_cells(&self) -> u32 {
        self.depth
    }

    /// The bits of cell `(x, z)`, or `None` outside the grid.
    pub fn get(&self, x: u32, z: u32) -> Option<u8> {
        if x >= self.width || z >= self.depth {
            return None;
        }
        Some(self.cells[z as usize * self.width as usize + x as usize])
    }

    /// Whether cell `(x, z)` has every bit of `bits` (false outside the grid).
    pub fn has(&self, x: u32, z: u32, bits: u8) -> bool {
        self.get(x, z).is_some_and(|b| b & bits == bits)
    }

    /// All cells, row-major with x fastest.
    pub fn cells(&self) -> &[u8] {
        &self.cells
    }

    /// Number of cells that have every bit of `bits`.
    pub fn count(&self, bits: u8) -> usize {
        self.cells.iter().filter(|&&b| b & bits == bits).count()
    }
}

/// The pathing grid of a map.
///
/// Per cell, from its four corner nodes (heights from [`node_surface`] with
/// `rules.level_height`; water depth of a node is `water - surface`):
///
/// * **cliff wall**: along one of the cell's four edges the two nodes are on
///   different levels and one of them has softness below
///   `rules.slope_softness`. Not walkable, not buildable.
/// * **steep**: the height difference along one of the four edges exceeds
///   `rules.max_walk_slope`. Not walkable, not buildable.
/// * **chasm**: a corner has ground density below 0. Not walkable, not buildable.
/// * **water**: a corner is deeper than `rules.min_water_depth`. The cell is
///   [`DEEP_WATER`](PathingGrid::DEEP_WATER) when the mean of its corners'
///   depths (negative depths count as 0) exceeds `rules.deep_water_depth`, else
///   [`SHALLOW_WATER`](PathingGrid::SHALLOW_WATER). Deep water is not walkable;
///   any water is not buildable.
/// * **overrides**: the [`PathingOverride`] bits of the four corners are
///   OR-ed; `NO_WALK`, `NO_BUILD` and `NO_FLY` remove the capability.
/// * [`FLY`](PathingGrid::FLY) is set everywhere except under `NO_FLY`.
///
/// Errors when the layers or the rules are invalid.
pub fn pathing_grid(map: &MapLayers, rules: &PathingRules) -> Result<PathingGrid, WorldError> {
    check_layers(map)?;
    rules.validate()?;
    let [nx, nz] = map.nodes();
    let (nx, nz) = (nx as usize, nz as usize);
    let n = map.node_count();
    let mut surface = Vec::with_capacity(n);
    let mut level = Vec::with_capacity(n);
    for i in 0..n {
        surface.push(node_surface(
            map.level[i],
            map.softness[i],
            map.height[i],
            rules.level_height,
        ));
        level.push(map.level_of(i));
    }
    let depth_of = |i: usize| (map.water[i] - surface[i]).max(0.0);
    let (w, d) = (map.width_cells() as usize, map.depth_cells() as usize);
    let mut cells = Vec::with_capacity(w * d);
    for z in 0..d {
        for x in 0..w {
            let c = [
                z * nx + x,
                z * nx + x + 1,
                (z + 1) * nx + x + 1,
                (z + 1) * nx + x,
            ];
            let mut wall = false;
            let mut steep = false;
            for k in 0..4 {
                let (a, b) = (c[k], c[(k + 1) % 4]);
                if level[a] != level[b]
                    && map.softness[a].min(map.softness[b]) < rules.slope_softness
                {
                    wall = true;
                }
                if (surface[a] - surface[b]).abs() > rules.max_walk_slope {
                    steep = true;
                }
            }
            let chasm = c.iter().any(|&i| map.ground[i] < 0.0);
            let wet = c.iter().any(|&i| depth_of(i) > rules.min_water_depth);
            let mean_depth = c.iter().map(|&i| depth_of(i)).sum::<f32>() / 4.0;
            let deep = wet && mean_depth > rules.deep_water_depth;
            let over = c.iter().fold(0u8, |acc, &i| acc | map.pathing[i]);
            let ground_ok = !(wall || steep || chasm);
            let mut bits = 0u8;
            if ground_ok && !deep && over & PathingOverride::NO_WALK == 0 {
                bits |= PathingGrid::WALK;
            }
            if over & PathingOverride::NO_FLY == 0 {
                bits |= PathingGrid::FLY;
            }
            if ground_ok && !wet && over & PathingOverride::NO_BUILD == 0 {
                bits |= PathingGrid::BUILD;
            }
            if wet {
                bits |= if deep {
                    PathingGrid::DEEP_WATER
                } else {
                    PathingGrid::SHALLOW_WATER
                };
            }
            cells.push(bits);
        }
    }
    debug_assert_eq!(nz, d + 1);
    Ok(PathingGrid {
        width: map.width_cells(),
        depth: map.depth_cells(),
        cells,
    })
}

/// The high-ground map: the cliff level of every cell, row-major with x
/// fastest.
///
/// A cell's level is the **lowest** level among its four corner nodes, so a
/// cell crossed by a cliff rim counts as the lower ground and only cells wholly
/// on a plateau count as that plateau. Layers with inconsistent lengths give
/// an empty vector.
pub fn high_ground(map: &MapLayers) -> Vec<u8> {
    if map.level.len() != map.node_count() {
        return Vec::new();
    }
    let nx = map.nodes()[0] as usize;
    let (w, d) = (map.width_cells() as usize, map.depth_cells() as usize);
    let mut out = Vec::with_capacity(w * d);
    for z in 0..d {
        for x in 0..w {
            let i = z * nx + x;
            let l = map
                .level_of(i)
                .min(map.level_of(i + 1))
                .min(map.level_of(i + nx))
                .min(map.level_of(i + nx + 1));
            out.push(l);
        }
    }
    out
}
