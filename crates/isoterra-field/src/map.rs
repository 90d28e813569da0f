//! The layers of a top-down `map` world (Warcraft III World Editor style).
//!
//! A map lies on the x/z plane with height on y. It is corner-sampled like
//! every isoterra field: `W x H` cells have `(W + 1) x (H + 1)` nodes, stored
//! row-major with x fastest, then z. Every layer holds one value per node:
//!
//! | layer      | type      | meaning |
//! |------------|-----------|---------|
//! | `ground`   | `f32`     | density, land where `>= 0`, chasm (no ground) below |
//! | `level`    | `f32`     | terrace field: node level `k` is `round(level)` in `0..=15`; cliff rims are the iso lines at `k + 0.5` |
//! | `softness` | `f32`     | `0` a vertical cliff wall, `1` a walkable slope (ramps are softness 1 across one level) |
//! | `height`   | `f32`     | continuous ground height offset added to the level height, in world units |
//! | `water`    | `f32`     | water surface height in world units; water is present where it lies above the ground |
//! | `splat`    | [`Splat`] | four texture ids from a palette of [`MAX_TEXTURES`] with a weight each |
//! | `pathing`  | `u8`      | pathing overrides ([`PathingOverride`] bits) |
//!
//! This module only holds and checks the data; meshing lives in
//! `isoterra-mesh`, tools and derived data (pathing, line of sight) in
//! `isoterra-world`.

use crate::FieldError;

/// The highest cliff level (War3 has levels 0..=15).
pub const MAX_LEVEL: u8 = 15;

/// Textures in a map's splat palette; a splat id is below this.
pub const MAX_TEXTURES: u8 = 16;

/// The largest map side in cells.
pub const MAX_MAP_CELLS: u32 = 4096;

/// Water surface height that means "no water" for every reasonable ground.
pub const NO_WATER: f32 = -1000.0;

/// Texture blend at one node: up to four textures of the palette, each with a weight.
///
/// Weights need not sum to 255; renderers normalise. A weight of 0 ignores its id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct Splat {
    /// Palette indices, each below [`MAX_TEXTURES`].
    pub ids: [u8; 4],
    /// Weight of each id.
    pub weights: [u8; 4],
}

impl Splat {
    /// A node fully covered by texture `id`.
    pub const fn single(id: u8) -> Self {
        Splat {
            ids: [id, 0, 0, 0],
            weights: [255, 0, 0, 0],
        }
    }

    /// The splat as 8 bytes: ids then weights.
    pub const fn to_bytes(self) -> [u8; 8] {
        let [a, b, c, d] = self.ids;
        let [e, f, g, h] = self.weights;
        [a, b, c, d, e, f, g, h]
    }

    /// The inverse of [`Splat::to_bytes`].
    pub const fn from_bytes(bytes: [u8; 8]) -> Self {
        let [a, b, c, d, e, f, g, h] = bytes;
        Splat {
            ids: [a, b, c, d],
            weights: [e, f, g, h],
        }
    }
}

/// Pathing override bits stored per node; set bits take a capability away.
pub struct PathingOverride;

impl PathingOverride {
    /// Ground units may not walk here.
    pub const NO_WALK: u8 = 1;
    /// Air units may not fly here.
    pub const NO_FLY: u8 = 2;
    /// Nothing may be built here.
    pub const NO_BUILD: u8 = 4;
    /// All override bits.
    pub const ALL: u8 = Self::NO_WALK | Self::NO_FLY | Self::NO_BUILD;
}

/// One of the layers of a map, for dirty tracking and per-layer operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum MapLayer {
    /// Ground density (land vs chasm).
    Ground = 0,
    /// Terrace (cliff level) field.
    Level = 1,
    /// Cliff softness.
    Softness = 2,
    /// Ground height offset.
    Height = 3,
    /// Water surface height.
    Water = 4,
    /// Texture splat.
    Splat = 5,
    /// Pathing overrides.
    Pathing = 6,
}

impl MapLayer {
    /// Every layer, in storage order.
    pub const ALL: [MapLayer; 7] = [
        MapLayer::Ground,
        MapLayer::Level,
        MapLayer::Softness,
        MapLayer::Height,
        MapLayer::Water,
        MapLayer::Splat,
        MapLayer::Pathing,
    ];

    /// The layer's bit in a [`LayerMask`].
    pub const fn bit(self) -> u8 {
        1 << self as u8
    }

    /// Lower-case name (`"ground"`, `"level"`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            MapLayer::Ground => "ground",
            MapLayer::Level => "level",
            MapLayer::Softness => "softness",
            MapLayer::Height => "height",
            MapLayer::Water => "water",
            MapLayer::Splat => "splat",
            MapLayer::Pathing => "pathing",
        }
    }

    /// Whether a change to this layer changes the shape of the map mesh
    /// (as opposed to only its vertex attributes or derived data).
    pub const fn affects_geometry(self) -> bool {
        matches!(
            self,
            MapLayer::Ground
                | MapLayer::Level
                | MapLayer::Softness
                | MapLayer::Height
                | MapLayer::Water
        )
    }
}

/// A set of [`MapLayer`]s as bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LayerMask(pub u8);

impl LayerMask {
    /// No layer.
    pub const NONE: LayerMask = LayerMask(0);
    /// Every layer.
    pub const ALL: LayerMask = LayerMask(0x7f);

    /// The mask with only `layer`.
    pub const fn of(layer: MapLayer) -> Self {
        LayerMask(layer.bit())
    }

    /// This mask plus `layer`.
    pub const fn with(self, layer: MapLayer) -> Self {
        LayerMask(self.0 | layer.bit())
    }

    /// Whether `layer` is in the mask.
    pub const fn contains(self, layer: MapLayer) -> bool {
        self.0 & layer.bit() != 0
    }

    /// Union of two masks.
    pub const fn union(self, other: LayerMask) -> Self {
        LayerMask(self.0 | other.0)
    }

    /// Whether the mask is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether any layer in the mask changes mesh geometry.
    pub const fn affects_geometry(self) -> bool {
        self.0 & 0b1_1111 != 0
    }
}

/// All layers of a map, one value per node, row-major with x fastest then z.
///
/// Fields are public so tools and loaders can work on plain slices; call
/// [`MapLayers::validate`] after filling them from untrusted data.
#[derive(Clone, Debug, PartialEq)]
pub struct MapLayers {
    width_cells: u32,
    depth_cells: u32,
    /// Ground density: land where `>= 0`, chasm below. Default 1.
    pub ground: Vec<f32>,
    /// Terrace field in `0..=15`; the node's level is `round(level)`. Default 0.
    pub level: Vec<f32>,
    /// Cliff softness in `0..=1`. Default 0 (vertical walls).
    pub softness: Vec<f32>,
    /// Ground height offset in world units. Default 0.
    pub height: Vec<f32>,
    /// Water surface height in world units. Default [`NO_WATER`].
    pub water: Vec<f32>,
    /// Texture splat per node. Default texture 0 at full weight.
    pub splat: Vec<Splat>,
    /// [`PathingOverride`] bits per node. Default 0.
    pub pathing: Vec<u8>,
}

impl MapLayers {
    /// A flat map of `width_cells x depth_cells` cells at level 0, solid
    /// ground, no water, texture 0 everywhere.
    ///
    /// Errors when a side is 0 or larger than [`MAX_MAP_CELLS`].
    pub fn new(width_cells: u32, depth_cells: u32) -> Result<Self, FieldError> {
        Self::check_size(width_cells, depth_cells)?;
        let n = (width_cells as usize + 1) * (depth_cells as usize + 1);
        Ok(MapLayers {
            width_cells,
            depth_cells,
            ground: vec![1.0; n],
            level: vec![0.0; n],
            softness: vec![0.0; n],
            height: vec![0.0; n],
            water: vec![NO_WATER; n],
            splat: vec![Splat::single(0); n],
            pathing: vec![0; n],
        })
    }

    fn check_size(width_cells: u32, depth_cells: u32) -> Result<(), FieldError> {
        if width_cells == 0 || depth_cells == 0 {
            return Err(FieldError::InvalidSize {
                width: width_cells as u64,
                height: depth_cells as u64,
                reason: "a map needs at least one cell along each axis",
            });
        }
        if width_cells > MAX_MAP_CELLS || depth_cells > MAX_MAP_CELLS {
            return Err(FieldError::InvalidSize {
                width: width_cells as u64,
                height: depth_cells as u64,
                reason: "a map side is at most 4096 cells",
            });
        }
        Ok(())
    }

    /// Cells along x.
    pub fn width_cells(&self) -> u32 {
        self.width_cells
    }

    /// Cells along z.
    pub fn depth_cells(&self) -> u32 {
        self.depth_cells
    }

    /// Nodes along x and z: `[width_cells + 1, depth_cells + 1]`.
    pub fn nodes(&self) -> [u32; 2] {
        [self.width_cells + 1, self.depth_cells + 1]
    }

    /// Total node count.
    pub fn node_count(&self) -> usize {
        (self.width_cells as usize + 1) * (self.depth_cells as usize + 1)
    }

    /// Storage index of node `(x, z)`, or `None` outside the map.
    #[inline]
    pub fn index(&self, x: u32, z: u32) -> Option<usize> {
        if x > self.width_cells || z > self.depth_cells {
            return None;
        }
        Some(z as usize * (self.width_cells as usize + 1) + x as usize)
    }

    /// The cliff level of the node at storage index `i`: `round(level)` clamped to `0..=15`.
    #[inline]
    pub fn level_of(&self, i: usize) -> u8 {
        level_index(self.level[i])
    }

    /// Checks lengths, finiteness and ranges of every layer. The first bad
    /// value is named by its node index.
    pub fn validate(&self) -> Result<(), FieldError> {
        Self::check_size(self.width_cells, self.depth_cells)?;
        let n = self.node_count();
        for len in [
            self.ground.len(),
            self.level.len(),
            self.softness.len(),
            self.height.len(),
            self.water.len(),
            self.splat.len(),
            self.pathing.len(),
        ] {
            if len != n {
                return Err(FieldError::LengthMismatch {
                    expected: n,
                    got: len,
                });
            }
        }
        for values in [
            &self.ground,
            &self.level,
            &self.softness,
            &self.height,
            &self.water,
        ] {
            if let Some(index) = crate::first_non_finite(values) {
                return Err(FieldError::NonFinite {
                    index,
                    value: values[index],
                });
            }
        }
        if let Some(&v) = self
            .level
            .iter()
            .find(|v| !(-0.5..=MAX_LEVEL as f32 + 0.5).contains(*v))
        {
            return Err(FieldError::param(
                "level",
                v,
                "cliff levels lie in 0..=15 (terrace values -0.5..=15.5)",
            ));
        }
        if let Some(&v) = self.softness.iter().find(|v| !(0.0..=1.0).contains(*v)) {
            return Err(FieldError::param("softness", v, "softness lies in 0..=1"));
        }
        if let Some(s) = self
            .splat
            .iter()
            .find(|s| s.ids.iter().any(|&id| id >= MAX_TEXTURES))
        {
            return Err(FieldError::param(
                "splat id",
                format!("{:?}", s.ids),
                "texture ids lie in 0..16",
            ));
        }
        if let Some(&p) = self
            .pathing
            .iter()
            .find(|&&p| p & !PathingOverride::ALL != 0)
        {
            return Err(FieldError::param(
                "pathing",
                p,
                "pathing overrides use bits 0..=2 only",
            ));
        }
        Ok(())
    }
}

/// The cliff level of a terrace value: `round(v)` clamped to `0..=15`
/// (halves round up, so the rim between `k` and `k + 1` is the iso line at `k + 0.5`).
#[inline]
pub fn level_index(v: f32) -> u8 {
    let r = (v + 0.5).floor();
    r.clamp(0.0, MAX_LEVEL as f32) as u8
}

/// Height (y) of a node's ground surface, in world units.
///
/// `level_height` is the height of one cliff level. Softness blends the
/// terraced height `round(level)` (softness 0: flat terraces with vertical
/// walls at the rims) with the continuous terrace value (softness 1: a smooth
/// slope, which is what a ramp is); the ground height offset is added on top.
/// Every crate that needs a node's height (meshing, pathing, line of sight)
/// uses this one definition.
#[inline]
pub fn node_surface(level: f32, softness: f32, height: f32, level_height: f32) -> f32 {
    let terraced = level_index(level) as f32;
    let continuous = level.clamp(0.0, MAX_LEVEL as f32);
    (terraced + (continuous - terraced) * softness) * level_height + height
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_map_is_valid_and_sized() {
        let m = MapLayers::new(4, 3).unwrap();
        assert_eq!(m.nodes(), [5, 4]);
        assert_eq!(m.node_count(), 20);
        assert_eq!(m.index(4, 3), Some(19));
        assert_eq!(m.index(5, 0), None);
        m.validate().unwrap();
    }

    #[test]
    fn bad_sizes_and_values_are_errors() {
        assert!(MapLayers::new(0, 3).is_err());
        assert!(MapLayers::new(MAX_MAP_CELLS + 1, 3).is_err());
        let mut m = MapLayers::new(2, 2).unwrap();
        m.height[3] = f32::NAN;
        assert!(matches!(
            m.validate(),
            Err(FieldError::NonFinite { index: 3, .. })
        ));
        m.height[3] = 0.0;
        m.level[0] = 16.0;
        assert!(m.validate().is_err());
        m.level[0] = 15.0;
        m.softness[1] = 1.5;
        assert!(m.validate().is_err());
        m.softness[1] = 1.0;
        m.splat[2] = Splat::single(16);
        assert!(m.validate().is_err());
        m.splat[2] = Splat::single(15);
        m.pathing.pop();
        assert!(matches!(
            m.validate(),
            Err(FieldError::LengthMismatch { .. })
        ));
    }

    #[test]
    fn level_rounding_puts_rims_at_halves() {
        assert_eq!(level_index(0.49), 0);
        assert_eq!(level_index(0.5), 1);
        assert_eq!(level_index(-3.0), 0);
        assert_eq!(level_index(20.0), 15);
        assert_eq!(level_index(14.5), 15);
    }

    #[test]
    fn surface_blends_terrace_and_slope() {
        assert_eq!(node_surface(2.3, 0.0, 0.5, 2.0), 4.5);
        assert!((node_surface(2.3, 1.0, 0.0, 2.0) - 4.6).abs() < 1e-6);
        assert!((node_surface(2.3, 0.5, 0.0, 1.0) - 2.15).abs() < 1e-6);
    }

    #[test]
    fn masks_and_splat_bytes() {
        let m = LayerMask::of(MapLayer::Splat).with(MapLayer::Pathing);
        assert!(m.contains(MapLayer::Splat) && !m.contains(MapLayer::Level));
        assert!(!m.affects_geometry());
        assert!(LayerMask::of(MapLayer::Water).affects_geometry());
        let s = Splat {
            ids: [1, 2, 3, 4],
            weights: [5, 6, 7, 8],
        };
        assert_eq!(Splat::from_bytes(s.to_bytes()), s);
    }
}
