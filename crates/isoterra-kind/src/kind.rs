//! The world kinds: [`WorldKind`], and every enum that holds a value of
//! any kind ([`AnyDocument`], [`Stamp`], [`WorldParams`], [`RecipeParams`],
//! [`BakeSource`]) with the one match that hands each to its kind's code.
//! This file is where a new kind is listed; everything else of the kind
//! lives in its own folder (`side2d/`, `heightmap/`, `voxel/`, `map/`),
//! through the traits of `per_kind`.

use std::fmt;
use std::str::FromStr;

use std::path::Path;

use isoterra_store::{
    ChunkStore, HEIGHTMAP_KIND, HeightmapDocument, MAP_KIND, MapDocument, SIDE2D_KIND,
    Side2dDocument, VOXEL_KIND, VoxelDocument, WorldFile,
};
use isoterra_world::{
    HeightBrush, HeightmapParams, HeightmapWorld, MapBrush, MapEdit, MapParams, MapWorld,
    Side2dBrush, Side2dEdit, Side2dParams, Side2dWorld, VoxelBrush, VoxelParams, VoxelWorld,
};
use serde::Serialize;
use serde_json::Value;

use crate::bake::BakeWorld;
use crate::per_kind::{KindSpec, TypedDocument};
use crate::recipe::typed;
use crate::{HeightmapRecipe, KindError, MapRecipe, Side2dRecipe, VoxelRecipe};

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

    /// The axes of this kind's space: 2 for side views (`x, y`), 3 for the
    /// others (`x, y, z`, `y` up).
    pub fn dims(self) -> usize {
        self.spec().dims()
    }

    /// Whether rays and points query the ground of this kind's worlds
    /// ([`Document::raycast`](crate::Document::raycast) and its
    /// neighbours); maps answer line of sight and paths instead.
    pub fn has_ground_queries(self) -> bool {
        self.spec().has_ground_queries()
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

// ----- Every enum with one variant per kind, and the matches that turn
// each into its kind's trait object (see `per_kind`). Adding a kind adds a
// variant to each here; the kind's own code lives in its folder.

/// The typed document of a world, whatever its kind.
#[derive(Debug)]
pub enum AnyDocument<S: ChunkStore = WorldFile> {
    /// A side-view world.
    Side2d(Box<Side2dDocument<S>>),
    /// A heightmap world.
    Heightmap(Box<HeightmapDocument<S>>),
    /// A voxel world.
    Voxel(Box<VoxelDocument<S>>),
    /// A map world.
    Map(Box<MapDocument<S>>),
}

impl<S: ChunkStore> AnyDocument<S> {
    /// The typed document as the kind layer drives it.
    pub(crate) fn ops(&self) -> &dyn TypedDocument<S> {
        match self {
            AnyDocument::Side2d(d) => &**d,
            AnyDocument::Heightmap(d) => &**d,
            AnyDocument::Voxel(d) => &**d,
            AnyDocument::Map(d) => &**d,
        }
    }

    /// The typed document as the kind layer drives it, mutably.
    pub(crate) fn ops_mut(&mut self) -> &mut dyn TypedDocument<S> {
        match self {
            AnyDocument::Side2d(d) => &mut **d,
            AnyDocument::Heightmap(d) => &mut **d,
            AnyDocument::Voxel(d) => &mut **d,
            AnyDocument::Map(d) => &mut **d,
        }
    }

    /// Gives the store back, closing the document.
    pub(crate) fn into_store(self) -> S {
        match self {
            AnyDocument::Side2d(d) => d.into_store(),
            AnyDocument::Heightmap(d) => d.into_store(),
            AnyDocument::Voxel(d) => d.into_store(),
            AnyDocument::Map(d) => d.into_store(),
        }
    }
}

impl AnyDocument<WorldFile> {
    /// Creates a world file at `path` with `params`.
    pub(crate) fn create(path: &Path, params: WorldParams) -> Result<Self, KindError> {
        Ok(match params {
            WorldParams::Side2d(p) => {
                AnyDocument::Side2d(Box::new(Side2dDocument::create(path, &p)?))
            }
            WorldParams::Heightmap(p) => {
                AnyDocument::Heightmap(Box::new(crate::heightmap::create(path, &p)?))
            }
            WorldParams::Voxel(p) => AnyDocument::Voxel(Box::new(VoxelDocument::create(path, &p)?)),
            WorldParams::Map(p) => AnyDocument::Map(Box::new(MapDocument::create(path, &p)?)),
        })
    }
}

impl<S: ChunkStore> AnyDocument<S> {
    /// Opens the world of `kind` held in `store`.
    pub(crate) fn open_in(kind: WorldKind, store: S) -> Result<Self, KindError> {
        Ok(match kind {
            WorldKind::Side2d => AnyDocument::Side2d(Box::new(Side2dDocument::open_in(store)?)),
            WorldKind::Heightmap => {
                AnyDocument::Heightmap(Box::new(HeightmapDocument::open_in(store)?))
            }
            WorldKind::Voxel => AnyDocument::Voxel(Box::new(VoxelDocument::open_in(store)?)),
            WorldKind::Map => AnyDocument::Map(Box::new(MapDocument::open_in(store)?)),
        })
    }

    /// Creates a world with `params` in `store`, which must be empty.
    pub(crate) fn create_in(store: S, params: WorldParams) -> Result<Self, KindError> {
        Ok(match params {
            WorldParams::Side2d(p) => {
                AnyDocument::Side2d(Box::new(Side2dDocument::create_in(store, &p)?))
            }
            WorldParams::Heightmap(p) => {
                AnyDocument::Heightmap(Box::new(crate::heightmap::create_in(store, &p)?))
            }
            WorldParams::Voxel(p) => {
                AnyDocument::Voxel(Box::new(VoxelDocument::create_in(store, &p)?))
            }
            WorldParams::Map(p) => AnyDocument::Map(Box::new(MapDocument::create_in(store, &p)?)),
        })
    }
}

/// One brush stamp of a stroke, ready to apply.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stamp {
    /// A side-view brush.
    Side2d(Side2dBrush),
    /// A heightmap brush.
    Heightmap(HeightBrush),
    /// A voxel brush.
    Voxel(VoxelBrush),
    /// A map brush (its targets fixed under the first dab) and the dab's
    /// centre in cells.
    Map(MapBrush, [f32; 2]),
}

/// A stamp applied in memory only, to take back.
#[derive(Debug, Clone)]
pub(crate) enum Preview {
    Side2d(Side2dEdit),
    /// Consecutive dabs of one stroke, folded.
    Heightmap(crate::run::HeightRun),
    /// Consecutive dabs of one stroke, folded.
    Voxel(crate::run::VoxelRun),
    Map(MapEdit),
}

impl Preview {
    /// Nodes held by a folded preview (`None` for kinds that keep one
    /// preview per dab).
    pub(crate) fn folded_nodes(&self) -> Option<usize> {
        match self {
            Preview::Heightmap(r) => Some(r.len()),
            Preview::Voxel(r) => Some(r.len()),
            _ => None,
        }
    }

    /// Nodes of `later` (a preview of the same kind) that folding it in
    /// would add.
    pub(crate) fn new_nodes(&self, later: &Preview) -> Option<usize> {
        match (self, later) {
            (Preview::Heightmap(a), Preview::Heightmap(b)) => Some(a.new_nodes(b)),
            (Preview::Voxel(a), Preview::Voxel(b)) => Some(a.new_nodes(b)),
            _ => None,
        }
    }

    /// Folds `later` in when both are folded previews of one kind; gives it
    /// back otherwise.
    pub(crate) fn absorb(&mut self, later: Preview) -> Option<Preview> {
        match (self, later) {
            (Preview::Heightmap(a), Preview::Heightmap(b)) => {
                a.absorb(b);
                None
            }
            (Preview::Voxel(a), Preview::Voxel(b)) => {
                a.absorb(b);
                None
            }
            (_, later) => Some(later),
        }
    }
}

impl Stamp {
    /// The name of the stamp's tool.
    pub(crate) fn tool(&self) -> &'static str {
        match self {
            Stamp::Side2d(b) => b.tool.name(),
            Stamp::Heightmap(b) => b.tool.name(),
            Stamp::Voxel(b) => b.tool.name(),
            Stamp::Map(b, _) => b.tool.name(),
        }
    }
}

/// The parameters of a world of any kind.
// Parameters are small plain values copied once per world; boxing the
// larger ones would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum WorldParams {
    /// A side-view world.
    Side2d(Side2dParams),
    /// A heightmap world.
    Heightmap(HeightmapParams),
    /// A voxel world.
    Voxel(VoxelParams),
    /// A map world.
    Map(MapParams),
}

impl WorldParams {
    /// The kind these parameters make.
    pub fn kind(&self) -> WorldKind {
        match self {
            WorldParams::Side2d(_) => WorldKind::Side2d,
            WorldParams::Heightmap(_) => WorldKind::Heightmap,
            WorldParams::Voxel(_) => WorldKind::Voxel,
            WorldParams::Map(_) => WorldKind::Map,
        }
    }
}

/// The generator parameters of a recipe, one variant per world kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum RecipeParams {
    /// A side-view world.
    Side2d(Side2dRecipe),
    /// A heightmap world.
    Heightmap(HeightmapRecipe),
    /// A voxel world.
    Voxel(VoxelRecipe),
    /// A map world.
    Map(MapRecipe),
}

impl RecipeParams {
    /// The generator part of a world's parameters.
    pub fn of(params: &WorldParams) -> RecipeParams {
        match params {
            WorldParams::Side2d(p) => RecipeParams::Side2d(Side2dRecipe::of(p)),
            WorldParams::Heightmap(p) => RecipeParams::Heightmap(HeightmapRecipe::of(p)),
            WorldParams::Voxel(p) => RecipeParams::Voxel(VoxelRecipe::of(p)),
            WorldParams::Map(p) => RecipeParams::Map(MapRecipe::of(p)),
        }
    }

    /// The kind these parameters make.
    pub fn kind(&self) -> WorldKind {
        match self {
            RecipeParams::Side2d(_) => WorldKind::Side2d,
            RecipeParams::Heightmap(_) => WorldKind::Heightmap,
            RecipeParams::Voxel(_) => WorldKind::Voxel,
            RecipeParams::Map(_) => WorldKind::Map,
        }
    }

    /// The `params` of a recipe of `kind`, read from JSON (errors name the
    /// path).
    pub(crate) fn read(kind: WorldKind, params: &Value) -> Result<RecipeParams, KindError> {
        Ok(match kind {
            WorldKind::Side2d => RecipeParams::Side2d(typed(params)?),
            WorldKind::Heightmap => RecipeParams::Heightmap(typed(params)?),
            WorldKind::Voxel => RecipeParams::Voxel(typed(params)?),
            WorldKind::Map => RecipeParams::Map(typed(params)?),
        })
    }

    /// Checks every value against its range.
    pub(crate) fn validate(&self) -> Result<(), KindError> {
        match self {
            RecipeParams::Side2d(p) => p.validate(),
            RecipeParams::Heightmap(p) => p.validate(),
            RecipeParams::Voxel(p) => p.validate(),
            RecipeParams::Map(p) => p.validate(),
        }
    }

    /// Writes the generator into `params`, a world's of the same kind
    /// (checked by the caller; another kind's are left alone).
    pub(crate) fn apply_to(&self, params: &mut WorldParams) -> Result<(), KindError> {
        match (self, params) {
            (RecipeParams::Side2d(r), WorldParams::Side2d(p)) => r.apply_to(p),
            (RecipeParams::Heightmap(r), WorldParams::Heightmap(p)) => r.apply_to(p),
            (RecipeParams::Voxel(r), WorldParams::Voxel(p)) => r.apply_to(p),
            (RecipeParams::Map(r), WorldParams::Map(p)) => r.apply_to(p),
            _ => Ok(()),
        }
    }
}

/// The world a bake reads: a reference to a world of one of the kinds.
///
/// A `side2d` world must be rebuilt (no dirty chunk) before baking: its
/// chunks' cached meshes and colliders are what gets baked.
#[derive(Debug, Clone, Copy)]
pub enum BakeSource<'a> {
    /// A side-view world; regions are `X, Y` in world units.
    Side2d(&'a Side2dWorld),
    /// A heightmap world; regions are `X, Z` in world units.
    Heightmap(&'a HeightmapWorld),
    /// A voxel world; regions are `X, Y, Z` in world units.
    Voxel(&'a VoxelWorld),
    /// A map world; regions are `X, Z` in world units.
    Map(&'a MapWorld),
}

impl BakeSource<'_> {
    /// The world as a bake drives it.
    pub(crate) fn ops(&self) -> &dyn BakeWorld {
        match self {
            BakeSource::Side2d(w) => *w,
            BakeSource::Heightmap(w) => *w,
            BakeSource::Voxel(w) => *w,
            BakeSource::Map(w) => *w,
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
