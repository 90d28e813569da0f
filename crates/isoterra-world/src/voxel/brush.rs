//! 3D brushes of the voxel world.

use crate::WorldError;

/// What a [`VoxelBrush`] does to the nodes within its radius.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum VoxelTool {
    /// Carves a ball: `min(old, -s)`.
    #[default]
    Dig,
    /// Adds a ball: `max(old, s)`; nodes that become solid take the brush
    /// material.
    Add,
    /// Blends each node toward the mean of its 3x3x3 neighbourhood.
    Smooth,
    /// Pulls densities toward a plane's signed distance.
    Flatten,
    /// Sets the material of the solid nodes.
    Paint,
}

impl VoxelTool {
    /// Every tool.
    pub const ALL: [VoxelTool; 5] = [
        VoxelTool::Dig,
        VoxelTool::Add,
        VoxelTool::Smooth,
        VoxelTool::Flatten,
        VoxelTool::Paint,
    ];

    /// The lowercase name (`dig`, `add`, `smooth`, `flatten`, `paint`).
    pub const fn name(self) -> &'static str {
        match self {
            VoxelTool::Dig => "dig",
            VoxelTool::Add => "add",
            VoxelTool::Smooth => "smooth",
            VoxelTool::Flatten => "flatten",
            VoxelTool::Paint => "paint",
        }
    }
}

impl std::fmt::Display for VoxelTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for VoxelTool {
    type Err = WorldError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                WorldError::param(
                    "tool",
                    s,
                    "unknown voxel tool; valid names: dig, add, smooth, flatten, paint",
                )
            })
    }
}

/// A spherical 3D brush.
///
/// For a node at distance `d` from `center` (world units = cells), the ball
/// tools use the distance-field value `s = clamp(radius - d, -1, 1)`:
/// [`Dig`](VoxelTool::Dig) targets `min(old, -s)`, [`Add`](VoxelTool::Add)
/// `max(old, s)`. [`Smooth`](VoxelTool::Smooth) targets the 3x3x3 mean (read
/// from the field before the stroke, so node order does not matter),
/// [`Flatten`](VoxelTool::Flatten) targets `clamp(offset - dot(normal, p), -1, 1)`
/// for the nodes within `radius` (the plane defaults to the horizontal plane
/// through `center`). Every node then moves `strength` of the way to its
/// target: `old + strength * (target - old)`; with `strength = 1` it takes
/// the target exactly. [`Paint`](VoxelTool::Paint) sets the material of the
/// solid nodes within `radius`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct VoxelBrush {
    /// What the brush does.
    pub tool: VoxelTool,
    /// Centre in world units; finite, each coordinate within ±2^22.
    pub center: [f32; 3],
    /// Radius in cells, finite, `> 0` and `<= 64` ([`MAX_RADIUS`](Self::MAX_RADIUS)).
    pub radius: f32,
    /// Blend toward the target, in `(0, 1]`. Default value: `1.0`.
    #[cfg_attr(feature = "serde", serde(default = "one"))]
    pub strength: f32,
    /// Material id for [`Add`](VoxelTool::Add) and [`Paint`](VoxelTool::Paint).
    /// Default value: `0`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub material: u8,
    /// Plane `(normal, offset)` for [`Flatten`](VoxelTool::Flatten): solid
    /// where `dot(normal, p) <= offset`; the normal is normalised. Default
    /// value: `None` (the horizontal plane through `center`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub plane: Option<([f32; 3], f32)>,
}

#[cfg(feature = "serde")]
fn one() -> f32 {
    1.0
}

impl VoxelBrush {
    /// Largest radius, in cells.
    pub const MAX_RADIUS: f32 = 64.0;
    /// Largest magnitude of a centre coordinate.
    pub const MAX_COORD: f32 = 4_194_304.0;

    /// A brush with strength 1, material 0 and no plane.
    pub const fn new(tool: VoxelTool, center: [f32; 3], radius: f32) -> Self {
        VoxelBrush {
            tool,
            center,
            radius,
            strength: 1.0,
            material: 0,
            plane: None,
        }
    }

    /// Sets [`strength`](Self::strength).
    pub const fn with_strength(mut self, strength: f32) -> Self {
        self.strength = strength;
        self
    }

    /// Sets [`material`](Self::material).
    pub const fn with_material(mut self, material: u8) -> Self {
        self.material = material;
        self
    }

    /// Sets [`plane`](Self::plane).
    pub const fn with_plane(mut self, normal: [f32; 3], offset: f32) -> Self {
        self.plane = Some((normal, offset));
        self
    }

    /// Checks the brush.
    ///
    /// # Errors
    ///
    /// [`WorldError::InvalidParameter`] for a non-finite or far-away centre,
    /// a radius that is not finite, `<= 0` or above [`MAX_RADIUS`](Self::MAX_RADIUS),
    /// a strength outside `(0, 1]`, or a plane whose normal is not finite and
    /// non-zero or whose offset is not finite.
    pub fn validate(&self) -> Result<(), WorldError> {
        for c in self.center {
            if !(c.is_finite() && c.abs() <= Self::MAX_COORD) {
                return Err(WorldError::param(
                    "center",
                    format!("{:?}", self.center),
                    "every coordinate must be finite and within ±4194304",
                ));
            }
        }
        if !(self.radius > 0.0 && self.radius <= Self::MAX_RADIUS) {
            return Err(WorldError::param(
                "radius",
                self.radius,
                "must be finite, > 0 and <= 64 cells",
            ));
        }
        if !(self.strength > 0.0 && self.strength <= 1.0) {
            return Err(WorldError::param(
                "strength",
                self.strength,
                "must be in (0, 1]",
            ));
        }
        if let Some((n, o)) = self.plane {
            let len2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
            if !(len2.is_finite() && len2 > 1e-12 && o.is_finite()) {
                return Err(WorldError::param(
                    "plane",
                    format!("{:?}", self.plane),
                    "the normal must be finite and non-zero and the offset finite",
                ));
            }
        }
        Ok(())
    }

    /// The unit plane normal and offset the flatten tool uses.
    pub(crate) fn unit_plane(&self) -> ([f32; 3], f32) {
        match self.plane {
            Some((n, o)) => {
                let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
                ([n[0] / len, n[1] / len, n[2] / len], o / len)
            }
            None => ([0.0, 1.0, 0.0], self.center[1]),
        }
    }
}
