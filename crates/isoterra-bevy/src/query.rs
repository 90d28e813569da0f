//! Queries on a ready terrain: where a ray meets the ground, whether a
//! point is inside it, the density there. They read the document (after
//! the edits committed so far), in the terrain's space.

use bevy::math::Vec3;
use isoterra::kind::AnyDocument;
use isoterra::world::{
    PathingGrid, PathingRules, cell_height, find_route, line_of_sight, pathing_grid,
};

use crate::terrain::TerrainReady;

/// Where a ray meets a terrain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TerrainHit {
    /// The first point on the surface, in the terrain's space.
    pub point: Vec3,
    /// The surface normal there, out of the solid (unit length, or zero
    /// where it is not known).
    pub normal: Vec3,
    /// Distance from the ray's origin.
    pub distance: f32,
}

/// Longest ray a query walks, in world units.
const MAX_RAY: f32 = 4096.0;

impl TerrainReady {
    /// The first point where the ray from `origin` along `dir` enters the
    /// ground, within `max_distance` (capped at 4,096 world units). The
    /// density field is sampled (trilinear for voxel, linear between nodes
    /// for side2d, bilinear heights for heightmaps), not the collider, so it
    /// finds where a dig would start. `None` for a ray that hits nothing, a
    /// zero or non-finite direction, or a map world (use its pathing
    /// queries instead: [`line_of_sight`](Self::line_of_sight),
    /// [`pathing_at`](Self::pathing_at), [`find_path`](Self::find_path)).
    pub fn raycast(&self, origin: Vec3, dir: Vec3, max_distance: f32) -> Option<TerrainHit> {
        let max = max_distance.min(MAX_RAY);
        let hit = self
            .shared
            .with_doc(|doc| doc.raycast(origin.to_array(), dir.to_array(), max))?;
        Some(TerrainHit {
            point: Vec3::from_array(hit.point),
            normal: Vec3::from_array(hit.normal),
            distance: hit.distance,
        })
    }

    /// Whether `p` is inside the ground (the density there is at least the
    /// iso level; under the surface for heightmaps).
    pub fn is_solid(&self, p: Vec3) -> bool {
        self.shared.with_doc(|doc| doc.is_solid(p.to_array()))
    }

    /// The density at `p`: the field value for voxel and side2d worlds
    /// (solid where it is at least the world's iso), the height above `p`
    /// for heightmaps (positive under the surface). `None` outside a
    /// bounded world, for a non-finite point, or for a map.
    pub fn density(&self, p: Vec3) -> Option<f32> {
        self.shared.with_doc(|doc| doc.density_at(p.to_array()))
    }

    /// The ground height of a heightmap at `(x, z)` (bilinear between
    /// nodes); `None` for other kinds or a non-finite point.
    pub fn height_at(&self, x: f32, z: f32) -> Option<f32> {
        self.shared.with_doc(|doc| match doc.typed() {
            AnyDocument::Heightmap(d) => d.world().height_at(x, z),
            _ => None,
        })
    }
}

/// What a map cell lets units do ([`TerrainReady::pathing_at`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MapPathing {
    /// Ground units walk through it.
    pub walk: bool,
    /// Air units fly over it.
    pub fly: bool,
    /// Buildings stand on it.
    pub build: bool,
    /// It holds water (shallow or deep).
    pub water: bool,
}

/// Who a map route is for ([`TerrainReady::find_path`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathUnit {
    /// Ground units: walkable cells only (no cliffs, steep slopes, chasms or
    /// deep water).
    Ground,
    /// Air units: every cell that is not marked no-fly.
    Air,
}

/// A map world's layers and how its cells sit in the terrain's space.
fn map_frame(doc: &AnyDocument) -> Option<(&isoterra::field::map::MapLayers, f32, PathingRules)> {
    let AnyDocument::Map(d) = doc else {
        return None;
    };
    let mesh = &d.params().mesh;
    let rules = PathingRules::DEFAULT.with_level_height(mesh.level_height);
    Some((d.world().layers(), mesh.cell_size, rules))
}

/// The map cell under terrain-space `p`, if inside the map.
fn cell_of(map: &isoterra::field::map::MapLayers, cell: f32, p: Vec3) -> Option<[u32; 2]> {
    let (x, z) = ((p.x / cell).floor(), (p.z / cell).floor());
    if !(x.is_finite() && z.is_finite()) || x < 0.0 || z < 0.0 {
        return None;
    }
    let (x, z) = (x as u64, z as u64);
    (x < u64::from(map.width_cells()) && z < u64::from(map.depth_cells()))
        .then_some([x as u32, z as u32])
}

impl TerrainReady {
    /// Map worlds: whether a unit at `from` sees `to` (terrain space; the
    /// height is ignored), the Warcraft III way: higher ground sees lower
    /// ground, lower ground does not see onto higher ground. `None` for
    /// other kinds or a point outside the map or not finite.
    pub fn line_of_sight(&self, from: Vec3, to: Vec3) -> Option<bool> {
        self.shared.with_doc(|doc| {
            let (map, cell, rules) = map_frame(doc.typed())?;
            cell_of(map, cell, from)?;
            cell_of(map, cell, to)?;
            let c = |p: Vec3| [p.x / cell, p.z / cell];
            Some(line_of_sight(map, c(from), c(to), &rules))
        })
    }

    /// Map worlds: what the cell under `at` (terrain space) lets units do.
    /// `None` for other kinds or a point outside the map.
    pub fn pathing_at(&self, at: Vec3) -> Option<MapPathing> {
        self.shared.with_doc(|doc| {
            let (map, cell, rules) = map_frame(doc.typed())?;
            let c = cell_of(map, cell, at)?;
            let grid = pathing_grid(map, &rules).ok()?;
            let bits = grid.get(c[0], c[1])?;
            Some(MapPathing {
                walk: bits & PathingGrid::WALK != 0,
                fly: bits & PathingGrid::FLY != 0,
                build: bits & PathingGrid::BUILD != 0,
                water: bits & (PathingGrid::SHALLOW_WATER | PathingGrid::DEEP_WATER) != 0,
            })
        })
    }

    /// Map worlds: a shortest route for `unit` from the cell under `from` to
    /// the cell under `to` (terrain space), as the centres of the cells it
    /// crosses on the ground (eight neighbours per cell, diagonal steps
    /// never cut a blocked corner). `None` when either end is outside the
    /// map or impassable, when no route exists, or for other kinds.
    ///
    /// It reads the map as the committed edits left it; a map of `N` cells
    /// costs about a pathing-grid build (`O(N)`) plus the search.
    pub fn find_path(&self, from: Vec3, to: Vec3, unit: PathUnit) -> Option<Vec<Vec3>> {
        self.shared.with_doc(|doc| {
            let (map, cell, rules) = map_frame(doc.typed())?;
            let (a, b) = (cell_of(map, cell, from)?, cell_of(map, cell, to)?);
            let grid = pathing_grid(map, &rules).ok()?;
            let bits = match unit {
                PathUnit::Ground => PathingGrid::WALK,
                PathUnit::Air => PathingGrid::FLY,
            };
            let route = find_route(&grid, a, b, bits)?;
            Some(
                route
                    .into_iter()
                    .map(|c| {
                        Vec3::new(
                            (c[0] as f32 + 0.5) * cell,
                            cell_height(map, rules.level_height, c),
                            (c[1] as f32 + 0.5) * cell,
                        )
                    })
                    .collect(),
            )
        })
    }
}
