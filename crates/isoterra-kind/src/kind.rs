//! The world kinds.

use std::fmt;
use std::str::FromStr;

use isoterra_store::{HEIGHTMAP_KIND, MAP_KIND, SIDE2D_KIND, VOXEL_KIND};

use crate::KindError;
use crate::per_kind::KindSpec;

/// A kind of world. The name is what a world file records in its metadata
/// and what every user-facing surface (`--kind`, the editor's `new_world`)
/// takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WorldKind {
    /// A 2D side-view density grid: dig and fill, materials, edge colliders.
    Side2d,
    /// An endless heightmap with LOD chunks and sculpting.
    Heightmap,
    /// An endless 3D density field meshed by marching cubes.
    Voxel,
    /// A top-down map with cliff levels, ramps, water, textures and pathing.
    Map,
}

impl WorldKind {
    /// Every kind, in the order the docs list them.
    pub const ALL: [WorldKind; 4] = [
        WorldKind::Side2d,
        WorldKind::Heightmap,
        WorldKind::Voxel,
        WorldKind::Map,
    ];

    /// The name recorded in world files.
    pub const fn name(self) -> &'static str {
        match self {
            WorldKind::Side2d => SIDE2D_KIND,
            WorldKind::Heightmap => HEIGHTMAP_KIND,
            WorldKind::Voxel => VOXEL_KIND,
            WorldKind::Map => MAP_KIND,
        }
    }

    /// What worlds of this kind are, in one line.
    pub fn summary(self) -> &'static str {
        self.spec().summary()
    }

    /// The kind named `name`, if any.
    pub fn from_name(name: &str) -> Option<WorldKind> {
        WorldKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether the world has a fixed extent (side2d, map) rather than being
    /// endless (heightmap, voxel).
    pub fn is_bounded(self) -> bool {
        self.spec().defaults().size_range.is_some()
    }

    /// A point a user typed as numbers (`x,y` in a side view, `x,z` on a
    /// heightmap or a map, `x,y,z` in a voxel world), in world units as
    /// strokes take them (`[x, y, z]`, the axes not typed 0).
    ///
    /// # Errors
    ///
    /// [`KindError::Invalid`] for the wrong count of numbers.
    pub fn point(self, numbers: &[f32]) -> Result<[f64; 3], KindError> {
        let axes = self.point_axes();
        if numbers.len() != axes.len() {
            return Err(KindError::invalid(format!(
                "a point in a {self} world has {} numbers, got {}",
                axes.len(),
                numbers.len()
            )));
        }
        let mut p = [0.0; 3];
        for (&axis, &v) in axes.iter().zip(numbers) {
            p[axis] = f64::from(v);
        }
        Ok(p)
    }

    /// The world axes (0 x, 1 y, 2 z) of the numbers of a point a user
    /// types for this kind (see [`point`](Self::point)).
    pub fn point_axes(self) -> &'static [usize] {
        self.spec().point_axes()
    }

    /// The kind's facts, written in its own module.
    pub(crate) fn spec(self) -> &'static dyn KindSpec {
        match self {
            WorldKind::Side2d => &crate::side2d::Side2dKind,
            WorldKind::Heightmap => &crate::heightmap::HeightmapKind,
            WorldKind::Voxel => &crate::voxel::VoxelKind,
            WorldKind::Map => &crate::map::MapKind,
        }
    }
}

impl fmt::Display for WorldKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for WorldKind {
    type Err = KindError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        WorldKind::from_name(s).ok_or_else(|| KindError::UnknownKind(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in WorldKind::ALL {
            assert_eq!(k.name().parse::<WorldKind>().unwrap(), k);
        }
        assert!("teapot".parse::<WorldKind>().is_err());
    }
}
