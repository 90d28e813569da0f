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

/// The solid a [`VoxelBrush`] stamps, centred on its `center` and sized by
/// its `radius` `r`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum VoxelShape {
    /// A ball of radius `r`.
    #[default]
    Sphere,
    /// An axis-aligned cube of half side `r`.
    Box,
    /// An upright capsule: radius `r / 2` around the vertical segment from
    /// `r / 2` below the centre to `r / 2` above it (`2r` tall, `r` wide),
    /// for shafts and pillars.
    Capsule,
}

impl VoxelShape {
    /// Every shape.
    pub const ALL: [VoxelShape; 3] = [VoxelShape::Sphere, VoxelShape::Box, VoxelShape::Capsule];

    /// The lowercase name (`sphere`, `box`, `capsule`).
    pub const fn name(self) -> &'static str {
        match self {
            VoxelShape::Sphere => "sphere",
            VoxelShape::Box => "box",
            VoxelShape::Capsule => "capsule",
        }
    }
}

impl std::str::FromStr for VoxelShape {
    type Err = WorldError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        VoxelShape::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                WorldError::param(
                    "shape",
                    s,
                    "unknown voxel brush shape; valid names: sphere, box, capsule",
                )
            })
    }
}

/// A 3D brush.
///
/// For a node at `p` (world units = cells), the shape gives a signed
/// distance-like density `s(p)`, positive inside ([`isoterra_field::density`]'s
/// `sphere`, `cuboid` and `capsule`). [`Dig`](VoxelTool::Dig) targets
/// `min(old, -s)`, [`Add`](VoxelTool::Add) `max(old, s)`, each clamped to
/// `[-1, 1]`; with a [`blend`](Self::blend) `k > 0` they take the smooth
/// minimum and maximum over `k` instead, which rounds the crease where the
/// shape meets the ground into a fillet about `k` wide.
/// [`Smooth`](VoxelTool::Smooth) targets the 3x3x3 mean (read from the field
/// before the stroke, so node order does not matter),
/// [`Flatten`](VoxelTool::Flatten) targets `clamp(offset - dot(normal, p), -1, 1)`
/// for the nodes inside the shape (the plane defaults to the horizontal plane
/// through `center`). Every node then moves `strength` of the way to its
/// target: `old + strength * (target - old)`; with `strength = 1` it takes
/// the target exactly. [`Paint`](VoxelTool::Paint) sets the material of the
/// solid nodes inside the shape.
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
    /// The solid stamped. Default value: [`VoxelShape::Sphere`].
    #[cfg_attr(feature = "serde", serde(default))]
    pub shape: VoxelShape,
    /// Smooth-blend width of [`Dig`](VoxelTool::Dig) and
    /// [`Add`](VoxelTool::Add) in cells, `0..=`[`MAX_BLEND`](Self::MAX_BLEND)
    /// (`0`: the plain minimum or maximum). Default value: `0.0`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub blend: f32,
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
    /// Largest [`blend`](Self::blend), in cells.
    pub const MAX_BLEND: f32 = 8.0;

    /// A sphere with strength 1, material 0, no plane and no blend.
    pub const fn new(tool: VoxelTool, center: [f32; 3], radius: f32) -> Self {
        VoxelBrush {
            tool,
            center,
            radius,
            strength: 1.0,
            material: 0,
            plane: None,
            shape: VoxelShape::Sphere,
            blend: 0.0,
        }
    }

    /// Sets [`shape`](Self::shape).
    pub const fn with_shape(mut self, shape: VoxelShape) -> Self {
        self.shape = shape;
        self
    }

    /// Sets [`blend`](Self::blend).
    pub const fn with_blend(mut self, blend: f32) -> Self {
        self.blend = blend;
        self
    }

    /// The shape's density at `p`: positive inside, about the distance to
    /// its surface (exact for the sphere, the box and the capsule).
    #[inline]
    pub fn density(&self, p: [f32; 3]) -> f32 {
        let c = self.center;
        let r = self.radius;
        match self.shape {
            VoxelShape::Sphere => isoterra_field::density::sphere(p, c, r),
            VoxelShape::Box => isoterra_field::density::cuboid(p, c, [r; 3]),
            VoxelShape::Capsule => {
                let h = r * 0.5;
                isoterra_field::density::capsule(
                    p,
                    [c[0], c[1] - h, c[2]],
                    [c[0], c[1] + h, c[2]],
                    h,
                )
            }
        }
    }

    /// How far from `center` the brush can change a node, per axis: the
    /// shape's half extent, the blend width and a cell.
    pub fn reach(&self) -> f32 {
        // The box's corners are sqrt(3) r away, but per axis it reaches r.
        self.radius + self.blend + 1.0
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
    /// a blend outside `0..=`[`MAX_BLEND`](Self::MAX_BLEND), a strength outside `(0, 1]`, or a plane whose normal is not finite and
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
        if !(self.blend >= 0.0 && self.blend <= Self::MAX_BLEND) {
            return Err(WorldError::param(
                "blend",
                self.blend,
                "must be finite and in 0..=8 cells",
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
