//! The recipe's fields as controls: every generator parameter of a kind
//! with its group, label, hard range, a practical slider range and, for
//! names, the values it takes.
//!
//! The hard ranges here are the ones [`Recipe::validate`](crate::Recipe::validate)
//! checks (it reads them from this module), so an editor built from
//! [`recipe_fields`] cannot offer a value the recipe refuses. The slider
//! range is only where a slider starts and ends; a number typed in may go
//! anywhere in the hard range.

use isoterra_field::erosion::{HydraulicParams, ThermalParams};
use isoterra_field::{Side2dGen, VoxelGen};
use serde::Serialize;
use serde_json::Value;

use crate::{KindError, WorldKind};

/// A closed, half-open or open interval of accepted values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Bounds {
    /// Smallest value (excluded when `open[0]`).
    pub min: f32,
    /// Largest value (excluded when `open[1]`).
    pub max: f32,
    /// Whether `min` and `max` themselves are refused.
    pub open: [bool; 2],
}

impl Bounds {
    pub(crate) const fn closed(min: f32, max: f32) -> Self {
        Bounds {
            min,
            max,
            open: [false, false],
        }
    }

    const fn open_min(min: f32, max: f32) -> Self {
        Bounds {
            min,
            max,
            open: [true, false],
        }
    }

    const fn open_max(min: f32, max: f32) -> Self {
        Bounds {
            min,
            max,
            open: [false, true],
        }
    }

    const fn open(min: f32, max: f32) -> Self {
        Bounds {
            min,
            max,
            open: [true, true],
        }
    }

    /// Whether `v` is finite and inside.
    pub fn contains(&self, v: f32) -> bool {
        let above = if self.open[0] {
            v > self.min
        } else {
            v >= self.min
        };
        let below = if self.open[1] {
            v < self.max
        } else {
            v <= self.max
        };
        v.is_finite() && above && below
    }

    /// `Ok` when `v` is inside, else a recipe error naming `path`.
    pub(crate) fn check(&self, path: &str, v: f32) -> Result<(), KindError> {
        if self.contains(v) {
            return Ok(());
        }
        let left = if self.open[0] { "(" } else { "[" };
        let right = if self.open[1] { ")" } else { "]" };
        Err(KindError::Recipe {
            path: path.into(),
            reason: format!(
                "must be finite and in {left}{}, {}{right}, got {v}",
                self.min, self.max
            ),
        })
    }
}

/// Hard ranges of the recipe's numbers (checked by `Recipe::validate`).
pub(crate) mod bounds {
    use super::*;

    pub const FEATURE_CELLS: Bounds =
        Bounds::closed(Side2dGen::MIN_FEATURE_CELLS, Side2dGen::MAX_FEATURE_CELLS);
    pub const FILL: Bounds = Bounds::closed(0.0, 1.0);
    pub const ISO: Bounds = Bounds::open(-1.0, 1.0);

    pub const FREQUENCY: Bounds = Bounds::open_min(0.0, 1000.0);
    pub const LACUNARITY: Bounds = Bounds::open_min(0.0, 16.0);
    pub const PERSISTENCE: Bounds = Bounds::closed(0.0, 4.0);
    pub const JITTER: Bounds = Bounds::closed(0.0, 1.0);
    pub const MASK_THRESHOLD: Bounds = Bounds::closed(-1.0, 1.0);
    pub const MASK_BLEND: Bounds = Bounds::closed(0.0, 2.0);
    pub const MOUNTAIN_STRENGTH: Bounds = Bounds::closed(0.0, 1000.0);
    pub const WARP_AMPLITUDE: Bounds = Bounds::closed(0.0, 1.0e6);
    pub const CURVE_Y: Bounds = Bounds::closed(-1000.0, 1000.0);
    pub const HEIGHT_SCALE: Bounds = Bounds::open_min(0.0, 1.0e6);

    const M: f32 = VoxelGen::MAX_LENGTH;
    pub const GROUND_LEVEL: Bounds = Bounds::closed(-M, M);
    pub const GROUND_AMPLITUDE: Bounds = Bounds::open_min(0.0, M);
    pub const CAVE_FREQUENCY: Bounds = Bounds::open_min(0.0, 1.0);
    pub const CAVE_THRESHOLD: Bounds = Bounds::open_max(0.0, 1.0);
    pub const OVERHANG_STRENGTH: Bounds = Bounds::closed(0.0, M);
    pub const PLANET_RADIUS: Bounds = Bounds::open_min(0.0, M);
    pub const FALLOFF: Bounds = Bounds::open_min(0.0, M);
    pub const ROCK_DENSITY: Bounds = Bounds::closed(0.0, 1.0);
    pub const ROCK_SIZE: Bounds = Bounds::closed(4.0, M);

    pub const EROSION_REGION: Bounds = Bounds::closed(-1.0e9, 1.0e9);
    pub const EROSION_PASSES: u32 = HydraulicParams::MAX_PASSES;
    pub const EROSION_LIFETIME: u32 = HydraulicParams::MAX_LIFETIME;
    pub const EROSION_RADIUS: u32 = HydraulicParams::MAX_RADIUS;
    pub const EROSION_THERMAL: u32 = ThermalParams::MAX_ITERATIONS;
    pub const EROSION_BLUR: u32 = isoterra_field::BlurKind::MAX_RADIUS;
    pub const EROSION_DENSITY: Bounds = Bounds::open_min(0.0, 1.0);
    pub const EROSION_CAPACITY: Bounds = Bounds::open_min(0.0, 1.0e6);
    pub const EROSION_TALUS: Bounds = Bounds::closed(0.0, 1.0e6);
    pub const EROSION_FEATHER: f64 = 1.0e6;

    pub const LEVEL_HEIGHT: Bounds = Bounds::open_min(0.0, 1.0e6);
    pub const CHASM_DEPTH: Bounds = Bounds::open_min(0.0, 1.0e6);
}

/// Largest number of octaves of one noise.
pub(crate) const MAX_OCTAVES: u32 = 32;

/// How a field is edited.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum FieldControl {
    /// A number in `bounds`, with a slider over `slider` (logarithmic when
    /// `log`).
    Number {
        /// The accepted values.
        bounds: Bounds,
        /// Where the slider starts and ends (inside `bounds`).
        slider: [f32; 2],
        /// Whether the slider moves on a logarithmic scale.
        log: bool,
    },
    /// A whole number in `min..=max`.
    Integer {
        /// Smallest value.
        min: u32,
        /// Largest value.
        max: u32,
        /// Where the slider starts and ends.
        slider: [u32; 2],
    },
    /// One name out of `options`.
    Choice {
        /// The names, in the order to offer them.
        options: &'static [&'static str],
    },
    /// An optional part of the recipe, on or off: on, the value at the
    /// field's path is `initial` (then edited through the fields
    /// [`within`](RecipeField::within) it); off, it is left out.
    Toggle {
        /// The value the part takes when it is turned on.
        initial: Value,
    },
    /// A curve of `[x, y]` points, `x` strictly increasing.
    Curve {
        /// Fewest and most points.
        points: [usize; 2],
        /// The accepted `y` values.
        y: Bounds,
    },
}

/// One generator parameter as an editor shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RecipeField {
    /// Where the value sits in the recipe's `params`, dot-separated
    /// (`base.octaves`, `base.basis.type`).
    pub path: String,
    /// The group it is shown in (`Base noise`, `Mountains`, `Shape`).
    pub group: &'static str,
    /// A short label.
    pub label: &'static str,
    /// One sentence on what it does.
    pub help: &'static str,
    /// How it is edited.
    pub control: FieldControl,
    /// The field exists only while the field at this path has this value
    /// (`["base.basis.type", "cellular"]`); `None`: always.
    pub when: Option<[String; 2]>,
    /// The value it takes when it appears (for a field with a `when`).
    pub initial: Option<Value>,
    /// The field exists only while the optional part at this path (a
    /// [`FieldControl::Toggle`]) is on; `None`: always.
    pub within: Option<String>,
}

pub(crate) fn field(
    path: impl Into<String>,
    group: &'static str,
    label: &'static str,
    help: &'static str,
    control: FieldControl,
) -> RecipeField {
    RecipeField {
        path: path.into(),
        group,
        label,
        help,
        control,
        when: None,
        initial: None,
        within: None,
    }
}

pub(crate) const fn number(bounds: Bounds, slider: [f32; 2], log: bool) -> FieldControl {
    FieldControl::Number {
        bounds,
        slider,
        log,
    }
}

pub(crate) const fn choice(options: &'static [&'static str]) -> FieldControl {
    FieldControl::Choice { options }
}

/// Every generator parameter of `kind`'s recipe, in the order an editor
/// shows them (grouped by [`RecipeField::group`]).
pub fn recipe_fields(kind: WorldKind) -> Vec<RecipeField> {
    let mut out = Vec::new();
    kind.spec().recipe_fields(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sliders_lie_inside_the_hard_ranges() {
        for kind in WorldKind::ALL {
            for f in recipe_fields(kind) {
                match f.control {
                    FieldControl::Number {
                        bounds,
                        slider,
                        log,
                    } => {
                        assert!(slider[0] < slider[1], "{}", f.path);
                        assert!(bounds.contains(slider[0]), "{}", f.path);
                        assert!(bounds.contains(slider[1]), "{}", f.path);
                        assert!(!log || slider[0] > 0.0, "{}", f.path);
                    }
                    FieldControl::Integer { min, max, slider } => {
                        assert!(min <= slider[0] && slider[0] < slider[1] && slider[1] <= max);
                    }
                    _ => {}
                }
            }
        }
    }
}
