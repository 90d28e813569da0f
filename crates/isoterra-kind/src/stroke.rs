//! Strokes of any kind: what a user asks for ([`StrokeSpec`]), checked once
//! against the tool schema into a [`Template`], placed dab by dab as
//! [`Stamp`]s.

use isoterra_field::PathingOverride;
use isoterra_world::{
    HeightTool, MapBrushShape, MapTool, Side2dBrushShape, Side2dTool, VoxelShape, VoxelTool,
};
use serde_json::{Map, Value};

use crate::schema::{self, ParamKind, ToolSpec};
use crate::{KindError, Stamp, WorldKind};

/// A stroke as a user asks for it: a tool of the world's kind, a brush and
/// the tool's parameters (named as the [tool schema](crate::schema::tools)
/// names them; parameters a tool does not have are ignored).
#[derive(Debug, Clone, PartialEq)]
pub struct StrokeSpec {
    /// The tool's name (`dig`, `raise`, `cliff-up`, …).
    pub tool: String,
    /// Brush radius in world units.
    pub radius: f64,
    /// Brush strength in `0..=1`.
    pub strength: f64,
    /// `circle` (default), `square`, or `diamond` (maps).
    pub shape: Option<String>,
    /// The tool's parameters.
    pub params: Map<String, Value>,
}

impl StrokeSpec {
    /// A stroke of `tool` with a brush of `radius` at full strength, round,
    /// with every parameter at its default.
    pub fn new(tool: impl Into<String>, radius: f64) -> Self {
        StrokeSpec {
            tool: tool.into(),
            radius,
            strength: 1.0,
            shape: None,
            params: Map::new(),
        }
    }

    /// Sets the strength.
    pub fn with_strength(mut self, strength: f64) -> Self {
        self.strength = strength;
        self
    }

    /// Sets the shape.
    pub fn with_shape(mut self, shape: impl Into<String>) -> Self {
        self.shape = Some(shape.into());
        self
    }

    /// Sets parameter `name`.
    pub fn with_param(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.params.insert(name.to_string(), value.into());
        self
    }
}

/// A checked stroke: its tool and brush; each dab places it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Template {
    pub(crate) stamp: Stamp,
    /// Voxel flatten: the plane's unit normal (the plane passes through the
    /// first dab).
    pub(crate) normal: Option<[f32; 3]>,
}

impl Template {
    /// The tool's name.
    pub fn tool(&self) -> &'static str {
        self.stamp.tool()
    }
}

/// A stroke request checked so far as every kind checks it: the tool
/// found in the schema, radius and strength in range; what a kind's own
/// template builder starts from.
#[derive(Clone, Copy)]
pub(crate) struct Brief<'a> {
    pub kind: WorldKind,
    pub tool: &'a ToolSpec,
    pub params: &'a Params<'a>,
    pub radius: f32,
    pub strength: f32,
    pub shape: Option<&'a str>,
}

/// The parameters of a stroke, read against its tool's schema.
pub(crate) struct Params<'a> {
    tool: &'a ToolSpec,
    given: &'a Map<String, Value>,
}

impl<'a> Params<'a> {
    pub(crate) fn new(tool: &'a ToolSpec, given: &'a Map<String, Value>) -> Self {
        Params { tool, given }
    }

    fn given(&self, name: &str) -> Option<&'a Value> {
        self.given.get(name).filter(|v| !v.is_null())
    }

    /// A number parameter: the given value checked against its range, or
    /// the default (`None` when the default is "under the first dab").
    pub(crate) fn number(&self, name: &str) -> Result<Option<f64>, KindError> {
        let Some(spec) = self.tool.param(name) else {
            return Ok(None);
        };
        let ParamKind::Number {
            min,
            max,
            default,
            integer,
        } = spec.kind
        else {
            return Ok(None);
        };
        let Some(v) = self.given(name) else {
            return Ok(default);
        };
        let Some(x) = v.as_f64() else {
            return Err(KindError::invalid(format!(
                "params.{name} must be a number, got {v}"
            )));
        };
        let x = ranged(&format!("params.{name}"), x, min, max)?;
        if integer && x.fract() != 0.0 {
            return Err(KindError::invalid(format!(
                "params.{name} must be a whole number"
            )));
        }
        Ok(Some(x))
    }

    /// A vector parameter, checked, or its default.
    pub(crate) fn vector3(&self, name: &str) -> Result<[f64; 3], KindError> {
        let Some(ParamKind::Vector3 { min, max, default }) =
            self.tool.param(name).map(|p| p.kind.clone())
        else {
            return Ok([0.0; 3]);
        };
        let Some(v) = self.given(name) else {
            return Ok(default);
        };
        let n: [f64; 3] = serde_json::from_value(v.clone())
            .map_err(|_| KindError::invalid(format!("params.{name} must be three numbers")))?;
        let mut out = [0.0; 3];
        for (o, x) in out.iter_mut().zip(n) {
            *o = ranged(&format!("params.{name}"), x, min, max)?;
        }
        Ok(out)
    }

    /// A flag-set parameter, checked, or its default.
    pub(crate) fn flags(&self, name: &str) -> Result<Vec<&'static str>, KindError> {
        let Some(ParamKind::Flags { values, default }) =
            self.tool.param(name).map(|p| p.kind.clone())
        else {
            return Ok(Vec::new());
        };
        let Some(v) = self.given(name) else {
            return Ok(default.to_vec());
        };
        let list = v.as_array().ok_or_else(|| {
            KindError::invalid(format!(
                "params.{name} must be a list of {}",
                values.join(", ")
            ))
        })?;
        list.iter()
            .map(|n| {
                n.as_str()
                    .and_then(|s| values.iter().find(|v| **v == s).copied())
                    .ok_or_else(|| {
                        KindError::invalid(format!(
                            "params.{name} holds {}",
                            values
                                .iter()
                                .map(|v| format!("`{v}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                    })
            })
            .collect()
    }

    /// A boolean parameter, checked, or its default.
    pub(crate) fn boolean(&self, name: &str) -> Result<bool, KindError> {
        let Some(ParamKind::Bool { default }) = self.tool.param(name).map(|p| p.kind.clone())
        else {
            return Ok(false);
        };
        match self.given(name) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(KindError::invalid(format!(
                "params.{name} must be true or false"
            ))),
        }
    }
}

/// `v` when it is finite and in `lo..=hi`.
pub(crate) fn ranged(name: &str, v: f64, lo: f64, hi: f64) -> Result<f64, KindError> {
    if !v.is_finite() || v < lo || v > hi {
        return Err(KindError::invalid(format!(
            "{name} must be finite and in {lo}..={hi}, got {v}"
        )));
    }
    Ok(v)
}

/// A point whose coordinates are finite and within the coordinate limit.
pub fn checked_point(name: &str, p: [f64; 3]) -> Result<[f32; 3], KindError> {
    let mut out = [0.0f32; 3];
    for (o, v) in out.iter_mut().zip(p) {
        *o = ranged(name, v, -schema::COORD_LIMIT, schema::COORD_LIMIT)? as f32;
    }
    Ok(out)
}

/// The tool of `kind` named `name` (map's `water` is `water-raise`).
pub(crate) fn find_tool(
    kind: WorldKind,
    tools: &[ToolSpec],
    name: &str,
) -> Result<usize, KindError> {
    let name = if kind == WorldKind::Map && name == "water" {
        "water-raise"
    } else {
        name
    };
    tools
        .iter()
        .position(|t| t.name == name)
        .ok_or_else(|| KindError::UnknownTool {
            tool: name.to_string(),
            kind: kind.name(),
            tools: schema::tool_names(kind),
        })
}

/// The brush shape of a side-view or heightmap stroke.
pub(crate) fn plain_shape(
    kind: WorldKind,
    shape: Option<&str>,
) -> Result<Side2dBrushShape, KindError> {
    match shape {
        None | Some("circle") => Ok(Side2dBrushShape::Circle),
        Some("square") => Ok(Side2dBrushShape::Square),
        Some(other) => Err(KindError::invalid(format!(
            "shape must be `circle` or `square` for {kind} brushes (`diamond` is for maps), got `{other}`"
        ))),
    }
}

/// The solid of a voxel stroke: `sphere` (also `circle`, or none), `box`
/// or `capsule`; a 2D shape is refused.
pub(crate) fn voxel_shape(shape: Option<&str>) -> Result<VoxelShape, KindError> {
    match shape {
        None | Some("circle") => Ok(VoxelShape::Sphere),
        Some(other @ ("square" | "diamond")) => Err(KindError::invalid(format!(
            "voxel brushes are solids: shape must be `sphere`, `box` or `capsule`, got `{other}` (a 2D shape)"
        ))),
        Some(other) => other.parse().map_err(|_| {
            KindError::invalid(format!(
                "voxel brush shape must be `sphere`, `box` or `capsule`, got `{other}`"
            ))
        }),
    }
}

/// Checks the shape of a stroke whose brushes are round (heightmap discs):
/// `circle` or none. Any other shape is refused, never silently drawn round.
pub(crate) fn round_shape(kind: WorldKind, shape: Option<&str>) -> Result<(), KindError> {
    match shape {
        None | Some("circle") => Ok(()),
        Some(other @ ("square" | "diamond")) => Err(KindError::invalid(format!(
            "{kind} brushes are round: shape `{other}` does not apply (it is for {} brushes); use `circle` or leave it out",
            if other == "square" {
                "side2d and map"
            } else {
                "map"
            }
        ))),
        Some(other) => Err(KindError::invalid(format!(
            "{kind} brushes are round: shape must be `circle` or left out, got `{other}`"
        ))),
    }
}

/// The brush shape of a map stroke.
pub(crate) fn map_shape(shape: Option<&str>) -> Result<MapBrushShape, KindError> {
    match shape {
        None | Some("circle") => Ok(MapBrushShape::Circle),
        Some("square") => Ok(MapBrushShape::Square),
        Some("diamond") => Ok(MapBrushShape::Diamond),
        Some(other) => Err(KindError::invalid(format!(
            "shape must be `circle`, `square` or `diamond`, got `{other}`"
        ))),
    }
}

/// Side-view tool names to tools.
pub(crate) fn side2d_tool(name: &str) -> Side2dTool {
    if name == "fill" {
        Side2dTool::Fill
    } else {
        Side2dTool::Dig
    }
}

/// Heightmap tool names to tools.
pub(crate) fn height_tool(name: &str) -> HeightTool {
    match name {
        "lower" => HeightTool::Lower,
        "smooth" => HeightTool::Smooth,
        "flatten" => HeightTool::Flatten,
        "noise" => HeightTool::Noise,
        "erode" => HeightTool::Erode,
        "thermal" => HeightTool::Thermal,
        _ => HeightTool::Raise,
    }
}

/// Voxel tool names to tools.
pub(crate) fn voxel_tool(name: &str) -> VoxelTool {
    match name {
        "add" => VoxelTool::Add,
        "smooth" => VoxelTool::Smooth,
        "flatten" => VoxelTool::Flatten,
        "paint" => VoxelTool::Paint,
        _ => VoxelTool::Dig,
    }
}

/// Map pathing flag names to override bits.
pub(crate) fn pathing_bits(names: &[&str]) -> u8 {
    names.iter().fold(0, |bits, n| {
        bits | match *n {
            "walk" => PathingOverride::NO_WALK,
            "fly" => PathingOverride::NO_FLY,
            _ => PathingOverride::NO_BUILD,
        }
    })
}

/// Map tool names to tools (names come from the schema, so they parse).
pub(crate) fn map_tool(name: &str) -> Result<MapTool, KindError> {
    Ok(name.parse::<MapTool>()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::ParamSpec;
    use serde_json::json;

    fn tool(min: f64, max: f64, default: Option<f64>) -> ToolSpec {
        ToolSpec {
            name: "t",
            description: "a test tool",
            color: "#000000",
            key: 't',
            params: vec![ParamSpec {
                name: "height",
                kind: ParamKind::Number {
                    min,
                    max,
                    default,
                    integer: false,
                },
                description: "a height",
            }],
        }
    }

    #[test]
    fn number_params_take_their_range_and_default() {
        let mut given = Map::new();
        given.insert("height".into(), json!(3.0));
        let t = tool(-10.0, 10.0, Some(1.5));
        assert_eq!(Params::new(&t, &given).number("height").unwrap(), Some(3.0));
        assert_eq!(
            Params::new(&t, &Map::new()).number("height").unwrap(),
            Some(1.5)
        );
        let narrow = tool(-1.0, 1.0, None);
        assert!(Params::new(&narrow, &given).number("height").is_err());
        given.insert("height".into(), json!("x"));
        assert!(Params::new(&t, &given).number("height").is_err());
        // A parameter the tool does not have reads as absent.
        assert_eq!(Params::new(&t, &given).number("level").unwrap(), None);
    }
}
