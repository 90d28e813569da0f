//! The tool schema: every tool of every kind, its parameters with their
//! ranges and defaults, and the limits every stroke obeys.
//!
//! The schema is the one place these facts live. Stroke validation
//! ([`StrokeSpec`](crate::StrokeSpec)) reads it, the editor sends it to the
//! browser as its tool palette, and the command line takes its defaults
//! from it, so the three cannot disagree.

use serde::Serialize;
use serde_json::{Value, json};

use crate::WorldKind;

/// Smallest and largest brush radius, in world units.
pub const RADIUS: [f64; 2] = [0.5, 100.0];
/// Smallest and largest brush strength.
pub const STRENGTH: [f64; 2] = [0.0, 1.0];
/// Largest absolute coordinate a dab, a camera or a region may name.
pub const COORD_LIMIT: f64 = 1.0e7;
/// Most dabs one stroke may hold.
pub const MAX_DABS_PER_STROKE: usize = 10_000;

/// What a tool parameter takes.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ParamKind {
    /// A number in `min..=max`; `integer` numbers must be whole. `default`
    /// `None` means "taken from the world under the first dab".
    Number {
        /// Smallest value.
        min: f64,
        /// Largest value.
        max: f64,
        /// The value when the parameter is left out.
        default: Option<f64>,
        /// Whether the value must be a whole number.
        integer: bool,
    },
    /// A vector of three numbers, each in `min..=max`.
    Vector3 {
        /// Smallest component.
        min: f64,
        /// Largest component.
        max: f64,
        /// The value when the parameter is left out.
        default: [f64; 3],
    },
    /// A set of names out of `values`.
    Flags {
        /// The names the set may hold.
        values: &'static [&'static str],
        /// The set when the parameter is left out.
        default: &'static [&'static str],
    },
    /// `true` or `false`.
    Bool {
        /// The value when the parameter is left out.
        default: bool,
    },
}

/// One parameter of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    /// The parameter's name, as strokes name it.
    pub name: &'static str,
    /// What it takes.
    pub kind: ParamKind,
    /// What it does, in one line.
    pub description: &'static str,
}

/// One tool of a world kind.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The tool's name, as strokes name it.
    pub name: &'static str,
    /// What the tool does, in one line.
    pub description: &'static str,
    /// The colour of its brush ring, `#rrggbb`.
    pub color: &'static str,
    /// Its one-key shortcut in the editor.
    pub key: char,
    /// Its parameters besides radius, strength and shape.
    pub params: Vec<ParamSpec>,
}

impl ParamSpec {
    pub(crate) const fn number(
        name: &'static str,
        min: f64,
        max: f64,
        default: Option<f64>,
        integer: bool,
        description: &'static str,
    ) -> Self {
        ParamSpec {
            name,
            kind: ParamKind::Number {
                min,
                max,
                default,
                integer,
            },
            description,
        }
    }

    /// The parameter as the editor's `welcome` message lists it.
    pub fn json(&self) -> Value {
        let num = |v: f64, integer: bool| -> Value {
            if integer && v.fract() == 0.0 && v.abs() < 9.0e15 {
                json!(v as i64)
            } else {
                json!(v)
            }
        };
        match &self.kind {
            ParamKind::Number {
                min,
                max,
                default,
                integer,
            } => json!({
                "name": self.name, "description": self.description,
                "min": num(*min, *integer),
                "max": num(*max, *integer),
                "default": default.map(|d| num(d, *integer)),
            }),
            ParamKind::Vector3 { min, max, default } => json!({
                "name": self.name, "description": self.description,
                "min": num(*min, true),
                "max": num(*max, true),
                "default": default.map(|d| num(d, true)),
            }),
            ParamKind::Flags { values, default } => json!({
                "name": self.name, "description": self.description,
                "values": values, "default": default,
            }),
            ParamKind::Bool { default } => json!({
                "name": self.name, "description": self.description,
                "values": [false, true], "default": default,
            }),
        }
    }
}

impl ToolSpec {
    /// The parameter named `name`, if the tool has it.
    pub fn param(&self, name: &str) -> Option<&ParamSpec> {
        self.params.iter().find(|p| p.name == name)
    }

    /// The tool as the editor's `welcome` message lists it.
    pub fn json(&self) -> Value {
        json!({
            "name": self.name,
            "color": self.color,
            "key": self.key.to_string(),
            "description": self.description,
            "params": self.params.iter().map(ParamSpec::json).collect::<Vec<_>>(),
        })
    }
}

/// The limits every stroke obeys, as the editor's `welcome` lists them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Limits {
    /// Brush radius range, world units.
    pub radius: [f64; 2],
    /// Brush strength range.
    pub strength: [f64; 2],
    /// Most dabs per stroke.
    pub dabs_per_stroke: usize,
    /// Largest absolute coordinate.
    pub coordinate: f64,
    /// The most nodes one stroke may change, where the world's store
    /// records strokes of a bounded size (heightmap and voxel); a dab that
    /// would take a stroke past it is refused. `None`: bounded by the
    /// world's size.
    pub stroke_nodes: Option<u64>,
}

impl Limits {
    /// The limits of strokes on `kind` worlds. Voxel brushes reach at most
    /// [`VoxelBrush::MAX_RADIUS`](isoterra_world::VoxelBrush::MAX_RADIUS)
    /// cells, so the schema advertises no more than the engine takes.
    pub fn of(kind: WorldKind) -> Limits {
        kind.spec().limits()
    }

    /// The limits every kind starts from: [`RADIUS`], full strength range,
    /// [`MAX_DABS_PER_STROKE`], no node limit.
    pub(crate) const fn common() -> Limits {
        Limits {
            radius: RADIUS,
            strength: STRENGTH,
            dabs_per_stroke: MAX_DABS_PER_STROKE,
            coordinate: COORD_LIMIT,
            stroke_nodes: None,
        }
    }
}

pub(crate) fn tool(
    name: &'static str,
    color: &'static str,
    key: char,
    description: &'static str,
    params: Vec<ParamSpec>,
) -> ToolSpec {
    ToolSpec {
        name,
        description,
        color,
        key,
        params,
    }
}

/// The tools of `kind`. `materials` is the number of materials the world's
/// table holds (side2d fill picks one of them; other kinds ignore it).
pub fn tools(kind: WorldKind, materials: usize) -> Vec<ToolSpec> {
    kind.spec().tools(materials)
}

/// The brush shapes strokes on `kind` worlds take (the stroke's `shape`),
/// the first being the default: side2d `circle`, `square`; map `circle`,
/// `square`, `diamond`; voxel `sphere`, `box`, `capsule`; heightmap brushes
/// are round and take `circle` only.
pub fn shapes(kind: WorldKind) -> &'static [&'static str] {
    kind.spec().shapes()
}

/// The names of `kind`'s tools, separated by commas.
pub fn tool_names(kind: WorldKind) -> String {
    tools(kind, 1)
        .iter()
        .map(|t| t.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_tools_with_unique_names_and_keys() {
        for kind in WorldKind::ALL {
            let tools = tools(kind, 4);
            assert!(!tools.is_empty(), "{kind}");
            for (i, a) in tools.iter().enumerate() {
                for b in &tools[i + 1..] {
                    assert_ne!(a.name, b.name, "{kind}");
                    assert_ne!(a.key, b.key, "{kind}");
                }
                assert!(!a.description.is_empty());
                for p in &a.params {
                    if let ParamKind::Number {
                        min, max, default, ..
                    } = p.kind
                    {
                        assert!(min <= max, "{kind} {} {}", a.name, p.name);
                        if let Some(d) = default {
                            assert!((min..=max).contains(&d), "{kind} {} {}", a.name, p.name);
                        }
                    }
                }
            }
        }
    }
}
