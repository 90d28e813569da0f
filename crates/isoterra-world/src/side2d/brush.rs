//! Dig and fill brushes, evaluated as distance fields.
//!
//! A brush of radius `R` at distance `d` from its centre has the value
//!
//! ```text
//! s(d) = clamp((R - d) / cell_size, -1, 1)
//! ```
//!
//! which is `0` on the brush outline, `+1` one cell inside and `-1` one cell
//! outside: a linear ramp two cells wide. Digging lowers a node to at most
//! `iso - s`, filling raises it to at least `iso + s` (with the default iso of 0:
//! `min(old, -s)` and `max(old, s)`). Because the ramp is linear in the distance,
//! the marching squares interpolation puts the new contour almost exactly on the
//! brush outline, so holes come out round even on a coarse grid, and composing
//! with `min` / `max` never disturbs terrain outside the brush.

use std::fmt;
use std::str::FromStr;

use isoterra_field::{Field2, MaterialGrid, MaterialTable, NodeRect};

use crate::{Side2dEdit, WorldError};

/// Gives a field-less enum `ALL`, a lowercase `name()`, `Display` (the name)
/// and a case-insensitive `FromStr` whose error lists the valid names.
macro_rules! named_enum {
    ($ty:ident, $param:literal, [$v0:ident => $n0:literal $(, $variant:ident => $name:literal)*]) => {
        impl $ty {
            #[doc = concat!("Every ", $param, ", in declaration order.")]
            pub const ALL: [$ty; [$n0 $(, $name)*].len()] = [$ty::$v0 $(, $ty::$variant)*];

            #[doc = concat!("The lowercase name (`\"", $n0, "\"`" $(, ", `\"", $name, "\"`")*, ").")]
            pub const fn name(self) -> &'static str {
                match self {
                    $ty::$v0 => $n0,
                    $($ty::$variant => $name,)*
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl FromStr for $ty {
            type Err = WorldError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                let t = s.trim();
                $ty::ALL
                    .into_iter()
                    .find(|v| v.name().eq_ignore_ascii_case(t))
                    .ok_or_else(|| {
                        WorldError::param(
                            $param,
                            format!("{s:?}"),
                            concat!("expected one of: ", $n0 $(, ", ", $name)*),
                        )
                    })
            }
        }
    };
}

/// What a brush does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum Side2dTool {
    /// Removes solid: `new = min(old, iso - s)`.
    #[default]
    Dig,
    /// Adds solid: `new = max(old, iso + s)`, and nodes that become solid take
    /// the brush's material.
    Fill,
}

named_enum!(Side2dTool, "tool", [Dig => "dig", Fill => "fill"]);

/// The outline of a brush.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum Side2dBrushShape {
    /// A disc: Euclidean distance.
    #[default]
    Circle,
    /// An axis-aligned square of half-side `radius`: Chebyshev distance.
    Square,
}

named_enum!(Side2dBrushShape, "shape", [Circle => "circle", Square => "square"]);

/// One brush stamp: tool, shape, centre and radius in world units, strength
/// and material.
///
/// Apply it with [`Side2dWorld::apply_brush`](crate::Side2dWorld::apply_brush),
/// which validates it first and changes nothing when it is invalid.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct Side2dBrush {
    /// Dig or fill. Default value: `Side2dTool::Dig`.
    pub tool: Side2dTool,
    /// Circle or square. Default value: `Side2dBrushShape::Circle`.
    pub shape: Side2dBrushShape,
    /// Centre in world units (finite). Default value: `[0.0, 0.0]`.
    pub center: [f32; 2],
    /// Radius (half-side for a square) in world units: finite, greater than
    /// zero, at most four world diagonals. Default value: `1.0`.
    pub radius: f32,
    /// Blend toward the brush's target, in `(0, 1]`:
    /// `new = old + strength * (target - old)`. Default value: `1.0`.
    pub strength: f32,
    /// Material given to nodes that a fill makes solid; must be in the
    /// world's material table (checked by dig too). Default value: `0`.
    pub material: u8,
}

impl Side2dBrush {
    /// The defaults.
    pub const DEFAULT: Self = Side2dBrush {
        tool: Side2dTool::Dig,
        shape: Side2dBrushShape::Circle,
        center: [0.0, 0.0],
        radius: 1.0,
        strength: 1.0,
        material: 0,
    };

    /// A full-strength circular brush of material 0.
    pub const fn new(tool: Side2dTool, center: [f32; 2], radius: f32) -> Self {
        Side2dBrush {
            tool,
            center,
            radius,
            ..Self::DEFAULT
        }
    }

    /// Sets [`Side2dBrush::tool`].
    pub fn with_tool(mut self, tool: Side2dTool) -> Self {
        self.tool = tool;
        self
    }

    /// Sets [`Side2dBrush::shape`].
    pub fn with_shape(mut self, shape: Side2dBrushShape) -> Self {
        self.shape = shape;
        self
    }

    /// Sets [`Side2dBrush::center`].
    pub fn with_center(mut self, center: [f32; 2]) -> Self {
        self.center = center;
        self
    }

    /// Sets [`Side2dBrush::radius`].
    pub fn with_radius(mut self, radius: f32) -> Self {
        self.radius = radius;
        self
    }

    /// Sets [`Side2dBrush::strength`].
    pub fn with_strength(mut self, strength: f32) -> Self {
        self.strength = strength;
        self
    }

    /// Sets [`Side2dBrush::material`].
    pub fn with_material(mut self, material: u8) -> Self {
        self.material = material;
        self
    }

    /// Checks what can be checked without a world: a finite centre, a finite
    /// positive radius and a strength in `(0, 1]`. The world also checks the
    /// radius against its size and the material against its table.
    pub fn validate(&self) -> Result<(), WorldError> {
        if !(self.center[0].is_finite() && self.center[1].is_finite()) {
            return Err(WorldError::param(
                "center",
                format!("{:?}", self.center),
                "must be finite (world units)",
            ));
        }
        if !(self.radius.is_finite() && self.radius > 0.0) {
            return Err(WorldError::param(
                "radius",
                self.radius,
                "must be finite and greater than zero (world units)",
            ));
        }
        if !(self.strength.is_finite() && self.strength > 0.0 && self.strength <= 1.0) {
            return Err(WorldError::param(
                "strength",
                self.strength,
                "must be in (0, 1]; 1 applies the brush fully",
            ));
        }
        Ok(())
    }

    /// Full validation against a world's field and material table.
    pub(crate) fn validate_for(
        &self,
        field: &Field2,
        table: &MaterialTable,
    ) -> Result<(), WorldError> {
        self.validate()?;
        let cs = field.cell_size() as f64;
        let w = (field.width() - 1) as f64 * cs;
        let h = (field.height() - 1) as f64 * cs;
        let max = 4.0 * (w * w + h * h).sqrt();
        if self.radius as f64 > max {
            return Err(WorldError::param(
                "radius",
                self.radius,
                "is larger than four world diagonals; use a smaller brush",
            ));
        }
        if table.get(self.material).is_none() {
            return Err(WorldError::param(
                "material",
                self.material,
                "is not in the world's material table",
            ));
        }
        Ok(())
    }
}

impl Default for Side2dBrush {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The node range `lo..=hi` along one axis that a brush can reach, clamped to
/// the interior (border nodes are never touched). `None` when empty.
fn axis_range(center: f32, reach: f64, origin: f32, cs: f64, nodes: u32) -> Option<(u32, u32)> {
    let lo = ((center as f64 - reach - origin as f64) / cs).ceil();
    let hi = ((center as f64 + reach - origin as f64) / cs).floor();
    let first = 1.0;
    let last = nodes as f64 - 2.0;
    let lo = lo.max(first);
    let hi = hi.min(last);
    if lo > hi {
        return None;
    }
    Some((lo as u32, hi as u32))
}

/// Computes the edit a (validated) brush makes, without writing it.
pub(crate) fn brush_edit(
    brush: &Side2dBrush,
    field: &Field2,
    materials: &MaterialGrid,
    table: &MaterialTable,
    iso: f32,
) -> Side2dEdit {
    let mut edit = Side2dEdit::default();
    let cs = field.cell_size();
    let reach = brush.radius as f64 + cs as f64;
    let origin = field.origin();
    let Some((x0, x1)) = axis_range(brush.center[0], reach, origin[0], cs as f64, field.width())
    else {
        return edit;
    };
    let Some((y0, y1)) = axis_range(brush.center[1], reach, origin[1], cs as f64, field.height())
    else {
        return edit;
    };
    // Precompute which material ids brushes must skip.
    let mut locked = [false; 256];
    for (id, m) in table.iter().enumerate() {
        locked[id] = m.indestructible;
    }
    let values = field.values();
    let ids = materials.ids();
    let width = field.width() as usize;
    let inv_cs = 1.0 / cs;
    let [bx, by] = brush.center;
    let (r, strength) = (brush.radius, brush.strength);
    let cap = ((x1 - x0 + 1) as usize * (y1 - y0 + 1) as usize).min(1 << 16);
    edit.nodes.reserve(cap);
    edit.before.reserve(cap);
    edit.after.reserve(cap);
    edit.mat_before.reserve(cap);
    edit.mat_after.reserve(cap);
    let (mut rx0, mut ry0, mut rx1, mut ry1) = (u32::MAX, u32::MAX, 0u32, 0u32);
    for y in y0..=y1 {
        let dy = field.node_position(0, y)[1] - by;
        let row = y as usize * width;
        for x in x0..=x1 {
            let i = row + x as usize;
            let mat = ids[i];
            if locked[mat as usize] {
                continue;
            }
            let dx = field.node_position(x, 0)[0] - bx;
            let d = match brush.shape {
                Side2dBrushShape::Circle => (dx * dx + dy * dy).sqrt(),
                Side2dBrushShape::Square => dx.abs().max(dy.abs()),
            };
            let s = ((r - d) * inv_cs).clamp(-1.0, 1.0);
            let old = values[i];
            let target = match brush.tool {
                Side2dTool::Dig => old.min(iso - s),
                Side2dTool::Fill => old.max(iso + s),
            };
            let new = if strength == 1.0 {
                target
            } else {
                old + strength * (target - old)
            };
            let new_mat = if brush.tool == Side2dTool::Fill && old < iso && new >= iso {
                brush.material
            } else {
                mat
            };
            if new.to_bits() == old.to_bits() && new_mat == mat {
                continue;
            }
            edit.nodes.push(i as u32);
            edit.before.push(old);
            edit.after.push(new);
            edit.mat_before.push(mat);
            edit.mat_after.push(new_mat);
            rx0 = rx0.min(x);
            rx1 = rx1.max(x);
            ry0 = ry0.min(y);
            ry1 = ry1.max(y);
        }
    }
    if !edit.nodes.is_empty() {
        edit.rect = NodeRect::new(rx0, ry0, rx1 + 1, ry1 + 1);
    }
    edit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_errors_list_valid_names() {
        for t in Side2dTool::ALL {
            assert_eq!(t.to_string().parse::<Side2dTool>().unwrap(), t);
        }
        for s in Side2dBrushShape::ALL {
            assert_eq!(s.to_string().parse::<Side2dBrushShape>().unwrap(), s);
        }
        assert_eq!("  FILL ".parse::<Side2dTool>().unwrap(), Side2dTool::Fill);
        let e = "spray".parse::<Side2dTool>().unwrap_err().to_string();
        assert!(e.contains("dig") && e.contains("fill"), "{e}");
        let e = "blob".parse::<Side2dBrushShape>().unwrap_err().to_string();
        assert!(e.contains("circle") && e.contains("square"), "{e}");
    }

    #[test]
    fn validate_rejects_bad_numbers() {
        let b = Side2dBrush::new(Side2dTool::Dig, [1.0, 1.0], 2.0);
        b.validate().unwrap();
        for bad in [
            b.with_radius(0.0),
            b.with_radius(-1.0),
            b.with_radius(f32::NAN),
            b.with_radius(f32::INFINITY),
            b.with_strength(0.0),
            b.with_strength(1.5),
            b.with_strength(f32::NAN),
            b.with_center([f32::NAN, 0.0]),
            b.with_center([0.0, f32::NEG_INFINITY]),
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn axis_range_clamps_to_interior() {
        assert_eq!(axis_range(5.0, 2.0, 0.0, 1.0, 20), Some((3, 7)));
        assert_eq!(axis_range(0.0, 2.0, 0.0, 1.0, 20), Some((1, 2)));
        assert_eq!(axis_range(-10.0, 2.0, 0.0, 1.0, 20), None);
        assert_eq!(axis_range(1e30, 2.0, 0.0, 1.0, 20), None);
        assert_eq!(axis_range(5.0, 1e30, 0.0, 1.0, 20), Some((1, 18)));
    }

    #[test]
    fn dig_ramp_is_zero_on_the_outline() {
        let field = Field2::new(21, 21, 1.0).unwrap();
        let mats = MaterialGrid::like(&field, 0);
        let table = MaterialTable::side2d_default();
        let b = Side2dBrush::new(Side2dTool::Dig, [10.0, 10.0], 4.0);
        let e = brush_edit(&b, &field, &mats, &table, 0.0);
        let get = |x: usize, y: usize| {
            let i = (y * 21 + x) as u32;
            e.nodes
                .iter()
                .position(|&n| n == i)
                .map(|k| e.after[k])
                .unwrap_or(1.0)
        };
        assert_eq!(get(10, 10), -1.0);
        assert_eq!(get(14, 10), 0.0);
        assert_eq!(get(13, 10), -1.0);
        assert_eq!(get(15, 10), 1.0);
        assert_eq!(e.rect, NodeRect::new(6, 6, 15, 15));
    }
}
