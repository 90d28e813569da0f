//! Map tools, brush shapes, brushes and strokes.

use std::fmt;
use std::str::FromStr;

use isoterra_field::{MAX_LEVEL, MAX_TEXTURES, PathingOverride};

use crate::WorldError;

/// Largest map brush radius, in cells.
pub const MAX_MAP_BRUSH_RADIUS: f32 = 1024.0;

/// Most dabs in one stroke.
pub const MAX_STROKE_DABS: usize = 1 << 16;

/// Largest `|coordinate|` of a dab, in cells.
const MAX_DAB_COORD: f32 = 1.0e6;

/// Largest `|height|` a plateau or water target may ask for, in world units;
/// the height and water layers are also clamped to it.
pub const MAX_MAP_HEIGHT: f32 = 1.0e4;

/// Cells of slope per cliff level of a ramp when the brush names none.
pub const DEFAULT_RAMP_LENGTH: f32 = 4.0;

/// The ramp lengths a brush accepts, in cells per cliff level.
pub const RAMP_LENGTH_RANGE: std::ops::RangeInclusive<f32> = 2.0..=64.0;

/// The cliff slope widths a brush accepts, in cells (0: a vertical wall).
pub const CLIFF_SLOPE_RANGE: std::ops::RangeInclusive<f32> = 0.0..=32.0;

/// What a map brush does. See [`MapWorld::apply_stroke`](crate::MapWorld::apply_stroke)
/// for the exact rule of each tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "kebab-case")
)]
pub enum MapTool {
    /// Raise the ground height offset (quadratic falloff).
    #[default]
    Raise,
    /// Lower the ground height offset (quadratic falloff).
    Lower,
    /// Flatten the ground height offset toward a target.
    Plateau,
    /// Smooth the ground height offset (3 x 3 mean).
    Smooth,
    /// Add seeded noise to the ground height offset where softness is low.
    Noise,
    /// Raise the cliff level of the brushed area by one.
    CliffUp,
    /// Lower the cliff level of the brushed area by one.
    CliffDown,
    /// Make cliffs walkable slopes (softness toward 1).
    Ramp,
    /// Raise the water surface.
    WaterRaise,
    /// Lower the water surface.
    WaterLower,
    /// Paint a texture into the splat weights.
    Paint,
    /// Set or clear pathing override bits.
    Pathing,
}

impl MapTool {
    /// Every tool, in declaration order.
    pub const ALL: [MapTool; 12] = [
        MapTool::Raise,
        MapTool::Lower,
        MapTool::Plateau,
        MapTool::Smooth,
        MapTool::Noise,
        MapTool::CliffUp,
        MapTool::CliffDown,
        MapTool::Ramp,
        MapTool::WaterRaise,
        MapTool::WaterLower,
        MapTool::Paint,
        MapTool::Pathing,
    ];

    /// Every tool, in declaration order.
    pub const fn all() -> &'static [MapTool] {
        &Self::ALL
    }

    /// The command-line name (`raise`, `cliff-up`, `water-raise`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            MapTool::Raise => "raise",
            MapTool::Lower => "lower",
            MapTool::Plateau => "plateau",
            MapTool::Smooth => "smooth",
            MapTool::Noise => "noise",
            MapTool::CliffUp => "cliff-up",
            MapTool::CliffDown => "cliff-down",
            MapTool::Ramp => "ramp",
            MapTool::WaterRaise => "water-raise",
            MapTool::WaterLower => "water-lower",
            MapTool::Paint => "paint",
            MapTool::Pathing => "pathing",
        }
    }
}

impl fmt::Display for MapTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MapTool {
    type Err = WorldError;

    /// Parses a tool name, ignoring ASCII case; `water` means
    /// [`MapTool::WaterRaise`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("water") {
            return Ok(MapTool::WaterRaise);
        }
        MapTool::ALL
            .into_iter()
            .find(|v| v.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| {
                WorldError::param(
                    "tool",
                    format!("{s:?}"),
                    "expected one of: raise, lower, plateau, smooth, noise, cliff-up, cliff-down, ramp, water, water-raise, water-lower, paint, pathing",
                )
            })
    }
}

/// The footprint of a map brush. Distances to the dab are normalised by the
/// radius with the shape's norm: Euclidean (circle), Chebyshev (square) or
/// Manhattan (diamond); a node is inside when the normalised distance is at
/// most 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum MapBrushShape {
    /// A disc.
    #[default]
    Circle,
    /// An axis-aligned square.
    Square,
    /// A square turned by 45 degrees.
    Diamond,
}

impl MapBrushShape {
    /// Every shape, in declaration order.
    pub const ALL: [MapBrushShape; 3] = [
        MapBrushShape::Circle,
        MapBrushShape::Square,
        MapBrushShape::Diamond,
    ];

    /// The lower-case name (`circle`, `square`, `diamond`).
    pub const fn name(self) -> &'static str {
        match self {
            MapBrushShape::Circle => "circle",
            MapBrushShape::Square => "square",
            MapBrushShape::Diamond => "diamond",
        }
    }

    /// Normalised distance of offset `(dx, dz)` for a brush of `radius`.
    #[inline]
    pub fn distance(self, dx: f32, dz: f32, radius: f32) -> f32 {
        let d = match self {
            MapBrushShape::Circle => (dx * dx + dz * dz).sqrt(),
            MapBrushShape::Square => dx.abs().max(dz.abs()),
            MapBrushShape::Diamond => dx.abs() + dz.abs(),
        };
        d / radius
    }
}

impl fmt::Display for MapBrushShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MapBrushShape {
    type Err = WorldError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        MapBrushShape::ALL
            .into_iter()
            .find(|v| v.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| {
                WorldError::param(
                    "shape",
                    format!("{s:?}"),
                    "expected one of: circle, square, diamond",
                )
            })
    }
}

/// A map brush: the tool, its footprint and its settings.
///
/// Fields a tool does not use are ignored by it but still validated.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct MapBrush {
    /// What the brush does. Default value: `MapTool::Raise`.
    pub tool: MapTool,
    /// The footprint. Default value: `MapBrushShape::Circle`.
    pub shape: MapBrushShape,
    /// Radius in cells: finite, greater than zero, at most 1024.
    /// Default value: `8.0`.
    pub radius: f32,
    /// Strength in `0..=1`. Default value: `0.5`.
    pub strength: f32,
    /// Target height in world units (finite, at most `1e4` in magnitude) of
    /// [`MapTool::Plateau`] and of the water tools; `None` takes the value
    /// under the first dab (plateau) or moves the water by steps (water).
    /// Default value: `None`.
    pub height: Option<f32>,
    /// Texture id painted by [`MapTool::Paint`], below 16. Default value: `0`.
    pub texture: u8,
    /// [`PathingOverride`] bits set or cleared by [`MapTool::Pathing`].
    /// Default value: `PathingOverride::NO_BUILD`.
    pub pathing: u8,
    /// Whether [`MapTool::Pathing`] sets (`true`) or clears (`false`) the
    /// bits. Default value: `true`.
    pub pathing_set: bool,
    /// Target cliff level (`0..=15`) of [`MapTool::CliffUp`] /
    /// [`MapTool::CliffDown`]; `None` means one above / below the level
    /// under the first dab. Default value: `None`.
    pub level: Option<u8>,
    /// Run of a [`MapTool::Ramp`] slope: cells of ground per cliff level
    /// it climbs, in [`RAMP_LENGTH_RANGE`] (`2..=64`); `None` means
    /// [`DEFAULT_RAMP_LENGTH`]. Default value: `None`.
    pub length: Option<f32>,
    /// Width in cells of the slope that [`MapTool::CliffUp`] /
    /// [`MapTool::CliffDown`] leave at the rim, inside the brush, in
    /// [`CLIFF_SLOPE_RANGE`]; `None` or `0` is a vertical wall.
    /// Default value: `None`.
    pub slope: Option<f32>,
}

impl MapBrush {
    /// The defaults.
    pub const DEFAULT: Self = MapBrush {
        tool: MapTool::Raise,
        shape: MapBrushShape::Circle,
        radius: 8.0,
        strength: 0.5,
        height: None,
        texture: 0,
        pathing: PathingOverride::NO_BUILD,
        pathing_set: true,
        level: None,
        length: None,
        slope: None,
    };

    /// A brush with `tool` and `radius` (cells) and default settings.
    pub const fn new(tool: MapTool, radius: f32) -> Self {
        MapBrush {
            tool,
            radius,
            ..Self::DEFAULT
        }
    }

    /// Sets [`tool`](Self::tool).
    pub const fn with_tool(mut self, tool: MapTool) -> Self {
        self.tool = tool;
        self
    }

    /// Sets [`shape`](Self::shape).
    pub const fn with_shape(mut self, shape: MapBrushShape) -> Self {
        self.shape = shape;
        self
    }

    /// Sets [`radius`](Self::radius).
    pub const fn with_radius(mut self, radius: f32) -> Self {
        self.radius = radius;
        self
    }

    /// Sets [`strength`](Self::strength).
    pub const fn with_strength(mut self, strength: f32) -> Self {
        self.strength = strength;
        self
    }

    /// Sets [`height`](Self::height).
    pub const fn with_height(mut self, height: Option<f32>) -> Self {
        self.height = height;
        self
    }

    /// Sets [`texture`](Self::texture).
    pub const fn with_texture(mut self, texture: u8) -> Self {
        self.texture = texture;
        self
    }

    /// Sets [`pathing`](Self::pathing).
    pub const fn with_pathing(mut self, pathing: u8) -> Self {
        self.pathing = pathing;
        self
    }

    /// Sets [`pathing_set`](Self::pathing_set).
    pub const fn with_pathing_set(mut self, pathing_set: bool) -> Self {
        self.pathing_set = pathing_set;
        self
    }

    /// Sets [`level`](Self::level).
    pub const fn with_level(mut self, level: Option<u8>) -> Self {
        self.level = level;
        self
    }

    /// Sets [`length`](Self::length).
    pub const fn with_length(mut self, length: Option<f32>) -> Self {
        self.length = length;
        self
    }

    /// Sets [`slope`](Self::slope).
    pub const fn with_slope(mut self, slope: Option<f32>) -> Self {
        self.slope = slope;
        self
    }

    /// The ramp run in cells per level: [`length`](Self::length) or
    /// [`DEFAULT_RAMP_LENGTH`].
    pub fn ramp_length(&self) -> f32 {
        self.length.unwrap_or(DEFAULT_RAMP_LENGTH)
    }

    /// Checks every setting.
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`] naming the first bad setting: a
    /// radius that is not finite, not positive or above 1024 cells, a
    /// strength outside `0..=1` (or NaN), a height that is not finite or
    /// beyond `±1e4`, a texture of 16 or more, pathing bits other than
    /// [`PathingOverride::ALL`]'s, a level above 15, a ramp length
    /// outside [`RAMP_LENGTH_RANGE`] or a cliff slope outside
    /// [`CLIFF_SLOPE_RANGE`] (or NaN).
    pub fn validate(&self) -> Result<(), WorldError> {
        if !(self.radius.is_finite() && self.radius > 0.0 && self.radius <= MAX_MAP_BRUSH_RADIUS) {
            return Err(WorldError::param(
                "radius",
                self.radius,
                "must be finite, greater than zero and at most 1024 cells",
            ));
        }
        if !(0.0..=1.0).contains(&self.strength) {
            return Err(WorldError::param(
                "strength",
                self.strength,
                "must be in 0..=1",
            ));
        }
        if let Some(h) = self.height
            && !(h.is_finite() && h.abs() <= MAX_MAP_HEIGHT)
        {
            return Err(WorldError::param(
                "height",
                h,
                "must be finite and at most 1e4 in magnitude",
            ));
        }
        if self.texture >= MAX_TEXTURES {
            return Err(WorldError::param(
                "texture",
                self.texture,
                "texture ids lie in 0..16",
            ));
        }
        if self.pathing & !PathingOverride::ALL != 0 {
            return Err(WorldError::param(
                "pathing",
                self.pathing,
                "pathing overrides use bits 0..=2 only (1 no-walk, 2 no-fly, 4 no-build)",
            ));
        }
        if let Some(l) = self.level
            && l > MAX_LEVEL
        {
            return Err(WorldError::param("level", l, "cliff levels lie in 0..=15"));
        }
        if let Some(l) = self.length
            && !RAMP_LENGTH_RANGE.contains(&l)
        {
            return Err(WorldError::param(
                "length",
                l,
                "a ramp takes 2..=64 cells per cliff level",
            ));
        }
        if let Some(w) = self.slope
            && !CLIFF_SLOPE_RANGE.contains(&w)
        {
            return Err(WorldError::param(
                "slope",
                w,
                "a cliff's slope is 0..=32 cells wide",
            ));
        }
        Ok(())
    }
}

impl Default for MapBrush {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// One stroke: a brush dragged along a path of dabs. Undo reverts a whole
/// stroke.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MapStroke {
    /// The brush.
    pub brush: MapBrush,
    /// Dab centres `[x, z]` in cells (node `(i, j)` sits at `[i, j]`), in
    /// order: 1 to 65536 of them, each finite and within `±1e6`.
    pub dabs: Vec<[f32; 2]>,
}

impl MapStroke {
    /// A stroke of `brush` along `dabs`.
    pub fn new(brush: MapBrush, dabs: Vec<[f32; 2]>) -> Self {
        MapStroke { brush, dabs }
    }

    /// A single dab of `brush` at `at`.
    pub fn dab(brush: MapBrush, at: [f32; 2]) -> Self {
        MapStroke {
            brush,
            dabs: vec![at],
        }
    }

    /// A stroke of `brush` dragged along the polyline `path`: a dab at the
    /// first point, then one every `spacing` cells along the path, and one
    /// at the last point. Dabs are applied as given by
    /// [`MapStroke::new`]; use this to turn a few path points into evenly
    /// spaced dabs (a quarter of the radius is a good spacing).
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`] for an empty path, a point that is
    /// not finite, a spacing that is not finite and positive, or more than
    /// 65536 dabs.
    pub fn along(brush: MapBrush, path: &[[f32; 2]], spacing: f32) -> Result<Self, WorldError> {
        if !(spacing.is_finite() && spacing > 0.0) {
            return Err(WorldError::param(
                "spacing",
                spacing,
                "must be finite and greater than zero",
            ));
        }
        let Some(&first) = path.first() else {
            return Err(WorldError::param(
                "path",
                0,
                "a path needs at least one point",
            ));
        };
        if let Some(p) = path
            .iter()
            .find(|p| !p.iter().all(|v| v.is_finite() && v.abs() <= MAX_DAB_COORD))
        {
            return Err(WorldError::param(
                "path",
                format!("{p:?}"),
                "path points must be finite and within 1e6 cells",
            ));
        }
        let mut dabs = vec![first];
        let mut carry = 0.0f64;
        for seg in path.windows(2) {
            let [a, b] = [seg[0], seg[1]].map(|p| [f64::from(p[0]), f64::from(p[1])]);
            let len = ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt();
            let mut t = f64::from(spacing) - carry;
            while t <= len {
                if dabs.len() >= MAX_STROKE_DABS {
                    return Err(WorldError::param(
                        "spacing",
                        spacing,
                        "the path would need more than 65536 dabs; use a larger spacing",
                    ));
                }
                let f = t / len;
                dabs.push([
                    (a[0] + (b[0] - a[0]) * f) as f32,
                    (a[1] + (b[1] - a[1]) * f) as f32,
                ]);
                t += f64::from(spacing);
            }
            carry = len - (t - f64::from(spacing));
        }
        let last = path[path.len() - 1];
        if dabs.last() != Some(&last) {
            if dabs.len() >= MAX_STROKE_DABS {
                return Err(WorldError::param(
                    "spacing",
                    spacing,
                    "the path would need more than 65536 dabs; use a larger spacing",
                ));
            }
            dabs.push(last);
        }
        Ok(MapStroke { brush, dabs })
    }

    /// Checks the brush and the dabs.
    ///
    /// # Errors
    ///
    /// The errors of [`MapBrush::validate`], and
    /// [`WorldError::InvalidParameter`] for no dabs, too many dabs, or a dab
    /// that is not finite or lies beyond `±1e6`.
    pub fn validate(&self) -> Result<(), WorldError> {
        self.brush.validate()?;
        if self.dabs.is_empty() || self.dabs.len() > MAX_STROKE_DABS {
            return Err(WorldError::param(
                "dabs",
                self.dabs.len(),
                "a stroke holds 1 to 65536 dabs",
            ));
        }
        if let Some(d) = self
            .dabs
            .iter()
            .find(|d| !d.iter().all(|v| v.is_finite() && v.abs() <= MAX_DAB_COORD))
        {
            return Err(WorldError::param(
                "dab",
                format!("{d:?}"),
                "dab coordinates must be finite and within 1e6 cells",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_parse_by_cli_name() {
        for t in MapTool::ALL {
            assert_eq!(t.name().parse::<MapTool>().unwrap(), t);
        }
        assert_eq!("water".parse::<MapTool>().unwrap(), MapTool::WaterRaise);
        assert_eq!("Cliff-Up".parse::<MapTool>().unwrap(), MapTool::CliffUp);
        assert!(matches!(
            "dig".parse::<MapTool>(),
            Err(WorldError::InvalidParameter { name: "tool", .. })
        ));
        for s in MapBrushShape::ALL {
            assert_eq!(s.name().parse::<MapBrushShape>().unwrap(), s);
        }
        assert!("hexagon".parse::<MapBrushShape>().is_err());
    }

    #[test]
    fn shapes_measure_their_norm() {
        assert_eq!(MapBrushShape::Circle.distance(3.0, 4.0, 5.0), 1.0);
        assert_eq!(MapBrushShape::Square.distance(3.0, -4.0, 8.0), 0.5);
        assert_eq!(MapBrushShape::Diamond.distance(-3.0, 4.0, 7.0), 1.0);
    }

    #[test]
    fn brush_validation() {
        let b = MapBrush::DEFAULT;
        b.validate().unwrap();
        for bad in [
            b.with_radius(0.0),
            b.with_radius(f32::NAN),
            b.with_radius(f32::INFINITY),
            b.with_radius(5000.0),
            b.with_strength(-0.1),
            b.with_strength(1.5),
            b.with_strength(f32::NAN),
            b.with_height(Some(f32::NAN)),
            b.with_height(Some(1.0e9)),
            b.with_texture(16),
            b.with_pathing(8),
            b.with_level(Some(16)),
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
        let s = MapStroke::dab(b, [1.0, 2.0]);
        s.validate().unwrap();
        assert!(MapStroke::new(b, vec![]).validate().is_err());
        assert!(MapStroke::dab(b, [f32::NAN, 0.0]).validate().is_err());
        assert!(MapStroke::dab(b, [0.0, 1.0e9]).validate().is_err());
    }

    #[test]
    fn along_spaces_dabs_on_the_path() {
        let b = MapBrush::DEFAULT;
        let s = MapStroke::along(b, &[[0.0, 0.0], [10.0, 0.0], [10.0, 5.0]], 4.0).unwrap();
        assert_eq!(
            s.dabs,
            vec![[0.0, 0.0], [4.0, 0.0], [8.0, 0.0], [10.0, 2.0], [10.0, 5.0]]
        );
        assert_eq!(
            MapStroke::along(b, &[[3.0, 3.0]], 1.0).unwrap().dabs,
            vec![[3.0, 3.0]]
        );
        assert!(MapStroke::along(b, &[], 1.0).is_err());
        assert!(MapStroke::along(b, &[[0.0, 0.0]], 0.0).is_err());
        assert!(MapStroke::along(b, &[[0.0, 0.0], [f32::NAN, 0.0]], 1.0).is_err());
        assert!(MapStroke::along(b, &[[0.0, 0.0], [1.0e6, 0.0]], 1.0).is_err());
    }
}
