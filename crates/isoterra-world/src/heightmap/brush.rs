//! Sculpt brushes for heightmaps and the sparse edits they produce.

use std::fmt;
use std::str::FromStr;

use super::params::MAX_NODE_COORD;
use crate::WorldError;

/// Largest `|height|` a sculpt may produce, and largest `|target_height|`.
pub const MAX_SCULPT_HEIGHT: f32 = 1.0e9;

/// Largest brush radius, in nodes (`radius / cell_size`).
pub const MAX_BRUSH_RADIUS_NODES: f32 = 1024.0;

/// What a sculpt brush does. Every tool blends by the falloff weight
/// `w = smoothstep(1 - d / radius)` (1 at the centre, 0 at the rim and
/// beyond), where `d` is a node's horizontal distance to the centre.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum HeightTool {
    /// `h += strength * w * radius / 4`.
    #[default]
    Raise,
    /// `h -= strength * w * radius / 4`.
    Lower,
    /// `h += strength * w * (mean of the 3 x 3 nodes around it - h)`, on the
    /// heights before the stamp.
    Smooth,
    /// `h += strength * w * (target - h)`; the target is
    /// [`HeightBrush::target_height`], or the height of the node nearest the
    /// centre when it is `None`.
    Flatten,
    /// `h += strength * w * radius / 4 * n(x, z)` with `n` a seeded fBm in
    /// `[-1, 1]` (world seed mixed with [`HeightBrush::seed`]).
    Noise,
    /// `h += strength * w * (e - h)` with `e` the height after a light
    /// hydraulic erosion of the brush's square ([`HeightTool::ERODE_PARAMS`]: two
    /// passes of droplets, world seed mixed with [`HeightBrush::seed`]),
    /// by the tiling rule of `isoterra_field::erosion`: `e` does not depend
    /// on where the brush is or how large it is. Heights are eroded in
    /// units of the generator's height range.
    Erode,
    /// `h += strength * w * (t - h)` with `t` the height after
    /// [`HeightTool::THERMAL_PARAMS`] iterations of thermal erosion (slopes
    /// steeper than 0.6, rise over run, slump), by the same tiling rule.
    Thermal,
}

impl HeightTool {
    /// Every tool, in declaration order.
    pub const ALL: [HeightTool; 7] = [
        HeightTool::Raise,
        HeightTool::Lower,
        HeightTool::Smooth,
        HeightTool::Flatten,
        HeightTool::Noise,
        HeightTool::Erode,
        HeightTool::Thermal,
    ];

    /// The hydraulic erosion of [`HeightTool::Erode`]: light enough for a
    /// dab to preview while the mouse drags (margin 64 nodes).
    pub const ERODE_PARAMS: isoterra_field::erosion::HydraulicParams =
        isoterra_field::erosion::HydraulicParams::DEFAULT
            .with_passes(2)
            .with_lifetime(12)
            .with_radius(2)
            .with_density(0.5);

    /// The thermal erosion of [`HeightTool::Thermal`] (margin 8 nodes).
    pub const THERMAL_PARAMS: isoterra_field::erosion::ThermalParams =
        isoterra_field::erosion::ThermalParams::DEFAULT
            .with_talus(0.6)
            .with_iterations(8);

    /// The lowercase name (`raise`, `lower`, `smooth`, `flatten`, `noise`,
    /// `erode`, `thermal`).
    pub const fn name(self) -> &'static str {
        match self {
            HeightTool::Raise => "raise",
            HeightTool::Lower => "lower",
            HeightTool::Smooth => "smooth",
            HeightTool::Flatten => "flatten",
            HeightTool::Noise => "noise",
            HeightTool::Erode => "erode",
            HeightTool::Thermal => "thermal",
        }
    }
}

impl fmt::Display for HeightTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for HeightTool {
    type Err = WorldError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        HeightTool::ALL
            .into_iter()
            .find(|v| v.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| {
                WorldError::param(
                    "tool",
                    format!("{s:?}"),
                    "expected one of: raise, lower, smooth, flatten, noise, erode, thermal",
                )
            })
    }
}

/// One sculpt stamp on a heightmap.
///
/// Apply it with [`HeightmapWorld::apply_brush`](crate::HeightmapWorld::apply_brush),
/// which validates it first and changes nothing when it is invalid.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct HeightBrush {
    /// What the brush does. Default value: `HeightTool::Raise`.
    pub tool: HeightTool,
    /// Centre `[x, z]` in world units (finite). Default value: `[0.0, 0.0]`.
    pub center: [f32; 2],
    /// Radius in world units: finite, > 0, at most 1024 cells. Default
    /// value: `8.0`.
    pub radius: f32,
    /// Strength in `(0, 1]`. Default value: `0.5`.
    pub strength: f32,
    /// Target of [`HeightTool::Flatten`] (finite when given); ignored by the
    /// other tools. Default value: `None`.
    pub target_height: Option<f32>,
    /// Extra seed of [`HeightTool::Noise`]. Default value: `0`.
    pub seed: u64,
}

impl HeightBrush {
    /// The defaults.
    pub const DEFAULT: Self = HeightBrush {
        tool: HeightTool::Raise,
        center: [0.0, 0.0],
        radius: 8.0,
        strength: 0.5,
        target_height: None,
        seed: 0,
    };

    /// A brush with default strength.
    pub const fn new(tool: HeightTool, center: [f32; 2], radius: f32) -> Self {
        HeightBrush {
            tool,
            center,
            radius,
            ..Self::DEFAULT
        }
    }

    /// Sets [`tool`](Self::tool).
    pub const fn with_tool(mut self, tool: HeightTool) -> Self {
        self.tool = tool;
        self
    }

    /// Sets [`center`](Self::center).
    pub const fn with_center(mut self, center: [f32; 2]) -> Self {
        self.center = center;
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

    /// Sets [`target_height`](Self::target_height).
    pub const fn with_target_height(mut self, target_height: Option<f32>) -> Self {
        self.target_height = target_height;
        self
    }

    /// Sets [`seed`](Self::seed).
    pub const fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Checks the brush against a cell size.
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`]: a non-finite centre or one farther
    /// than `2^29` nodes from the origin, a radius that is not finite and
    /// positive or spans more than 1024 cells, a strength outside `(0, 1]`,
    /// or a target height that is not finite or beyond `±1e9`.
    pub fn validate(&self, cell_size: f32) -> Result<(), WorldError> {
        if !(self.center[0].is_finite() && self.center[1].is_finite()) {
            return Err(WorldError::param(
                "center",
                format!("{:?}", self.center),
                "must be finite (world units)",
            ));
        }
        let far = f64::from(self.center[0].abs().max(self.center[1].abs())) / f64::from(cell_size);
        if far > (MAX_NODE_COORD / 2) as f64 {
            return Err(WorldError::param(
                "center",
                format!("{:?}", self.center),
                "is too far from the origin (at most 2^29 cells)",
            ));
        }
        if !(self.radius.is_finite()
            && self.radius > 0.0
            && self.radius / cell_size <= MAX_BRUSH_RADIUS_NODES)
        {
            return Err(WorldError::param(
                "radius",
                self.radius,
                "must be finite, greater than zero and at most 1024 cells",
            ));
        }
        if !(self.strength > 0.0 && self.strength <= 1.0) {
            return Err(WorldError::param(
                "strength",
                self.strength,
                "must be in (0, 1]",
            ));
        }
        if let Some(t) = self.target_height
            && !(t.is_finite() && t.abs() <= MAX_SCULPT_HEIGHT)
        {
            return Err(WorldError::param(
                "target_height",
                t,
                "must be finite and at most 1e9 in magnitude",
            ));
        }
        Ok(())
    }
}

impl Default for HeightBrush {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What one sculpt operation changed in the edit layer: the height deltas
/// (edited height minus generated height) of the changed nodes, before and
/// after.
///
/// `nodes` are global node indices `[gx, gz]`, strictly ascending by `gz`,
/// then `gx`; `before` and `after` run parallel. Applying it
/// [`Backward`](crate::EditDirection::Backward) writes `before` (undo),
/// [`Forward`](crate::EditDirection::Forward) writes `after` (redo); both
/// restore the exact bits of the edit layer.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct HeightEdit {
    /// Changed nodes `[gx, gz]`, ascending by `(gz, gx)`.
    pub nodes: Vec<[i64; 2]>,
    /// Edit-layer deltas before.
    pub before: Vec<f32>,
    /// Edit-layer deltas after.
    pub after: Vec<f32>,
}

impl HeightEdit {
    /// True when nothing changed.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Number of changed nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The edit that undoes this one.
    pub fn inverse(&self) -> HeightEdit {
        HeightEdit {
            nodes: self.nodes.clone(),
            before: self.after.clone(),
            after: self.before.clone(),
        }
    }

    /// Checks that the edit is well formed: parallel lists, strictly
    /// ascending nodes within `±2^30`, finite values.
    ///
    /// # Errors
    ///
    /// [`WorldError::MalformedEdit`] saying what is wrong.
    pub fn validate(&self) -> Result<(), WorldError> {
        let n = self.nodes.len();
        if self.before.len() != n || self.after.len() != n {
            return Err(WorldError::MalformedEdit {
                reason: format!(
                    "`before` / `after` have {} / {} entries but `nodes` has {n}",
                    self.before.len(),
                    self.after.len()
                ),
            });
        }
        if let Some(w) = self
            .nodes
            .windows(2)
            .find(|w| [w[0][1], w[0][0]] >= [w[1][1], w[1][0]])
        {
            return Err(WorldError::MalformedEdit {
                reason: format!(
                    "`nodes` must be strictly ascending by (z, x), found {:?} then {:?}",
                    w[0], w[1]
                ),
            });
        }
        if let Some(node) = self
            .nodes
            .iter()
            .find(|g| g[0].abs() > MAX_NODE_COORD || g[1].abs() > MAX_NODE_COORD)
        {
            return Err(WorldError::MalformedEdit {
                reason: format!("node {node:?} is outside +-2^30"),
            });
        }
        for (name, values) in [("before", &self.before), ("after", &self.after)] {
            if let Some(k) = values.iter().position(|v| !v.is_finite()) {
                return Err(WorldError::MalformedEdit {
                    reason: format!(
                        "`{name}` value {} for node {:?} is not finite",
                        values[k], self.nodes[k]
                    ),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_parse_by_name() {
        for t in HeightTool::ALL {
            assert_eq!(t.name().parse::<HeightTool>().unwrap(), t);
        }
        assert!("dig".parse::<HeightTool>().is_err());
    }

    #[test]
    fn brush_validation() {
        let b = HeightBrush::DEFAULT;
        b.validate(1.0).unwrap();
        assert!(b.with_radius(0.0).validate(1.0).is_err());
        assert!(b.with_radius(f32::NAN).validate(1.0).is_err());
        assert!(b.with_radius(5000.0).validate(1.0).is_err());
        assert!(b.with_radius(5000.0).validate(8.0).is_ok());
        assert!(b.with_strength(0.0).validate(1.0).is_err());
        assert!(b.with_strength(1.5).validate(1.0).is_err());
        assert!(b.with_center([f32::INFINITY, 0.0]).validate(1.0).is_err());
        assert!(b.with_center([1.0e30, 0.0]).validate(1.0).is_err());
        assert!(b.with_target_height(Some(f32::NAN)).validate(1.0).is_err());
    }

    #[test]
    fn edit_validation() {
        let e = HeightEdit {
            nodes: vec![[5, 0], [0, 1]],
            before: vec![0.0, 0.0],
            after: vec![1.0, 2.0],
        };
        e.validate().unwrap();
        assert_eq!(e.inverse().inverse(), e);
        let mut bad = e.clone();
        bad.nodes.swap(0, 1);
        assert!(bad.validate().is_err());
        let mut bad = e.clone();
        bad.after[1] = f32::NAN;
        assert!(bad.validate().is_err());
        let mut bad = e;
        bad.before.pop();
        assert!(bad.validate().is_err());
    }
}
