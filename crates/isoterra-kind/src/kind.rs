//! The world kinds.

use std::fmt;
use std::str::FromStr;

use isoterra_store::{HEIGHTMAP_KIND, MAP_KIND, SIDE2D_KIND, VOXEL_KIND};

use crate::KindError;

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

    /// The kind named `name`, if any.
    pub fn from_name(name: &str) -> Option<WorldKind> {
        WorldKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether the world has a fixed extent (side2d, map) rather than being
    /// endless (heightmap, voxel).
    pub const fn is_bounded(self) -> bool {
        matches!(self, WorldKind::Side2d | WorldKind::Map)
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
