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
use isoterra_field::{HeightCurve, Side2dGen, VoxelGen};
use isoterra_world::HeightErosion;
use serde::Serialize;
use serde_json::{Value, json};

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
    const fn closed(min: f32, max: f32) -> Self {
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

fn field(
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

const fn number(bounds: Bounds, slider: [f32; 2], log: bool) -> FieldControl {
    FieldControl::Number {
        bounds,
        slider,
        log,
    }
}

const fn choice(options: &'static [&'static str]) -> FieldControl {
    FieldControl::Choice { options }
}

/// The fields of one fractal noise of a heightmap recipe.
fn noise_fields(out: &mut Vec<RecipeField>, key: &str, group: &'static str) {
    use bounds::*;
    let p = |name: &str| format!("{key}.{name}");
    out.push(field(
        p("basis.type"),
        group,
        "Noise",
        "The basis noise each octave samples.",
        choice(&["perlin", "open_simplex2", "value", "cellular"]),
    ));
    let cellular = Some([p("basis.type"), "cellular".to_string()]);
    out.push(RecipeField {
        when: cellular.clone(),
        initial: Some(json!("f1")),
        ..field(
            p("basis.ret"),
            group,
            "Cell distance",
            "Which distance cellular noise returns: nearest point (round cells), second nearest, or their difference (cracks).",
            choice(&["f1", "f2", "f2_minus_f1"]),
        )
    });
    out.push(RecipeField {
        when: cellular,
        initial: Some(json!(1.0)),
        ..field(
            p("basis.jitter"),
            group,
            "Cell jitter",
            "How far feature points stray from the cell grid.",
            number(JITTER, [0.0, 1.0], false),
        )
    });
    out.push(field(
        p("fractal"),
        group,
        "Fractal",
        "How octaves are shaped before they are summed: plain (fbm), sharp crests (ridged) or puffy (billow).",
        choice(&["fbm", "ridged", "billow"]),
    ));
    out.push(field(
        p("octaves"),
        group,
        "Octaves",
        "Layers of finer detail.",
        FieldControl::Integer {
            min: 1,
            max: MAX_OCTAVES,
            slider: [1, 10],
        },
    ));
    out.push(field(
        p("frequency"),
        group,
        "Frequency",
        "Cycles per world unit of the first octave; its inverse is the size of the largest features.",
        number(FREQUENCY, [1.0e-4, 0.05], true),
    ));
    out.push(field(
        p("lacunarity"),
        group,
        "Lacunarity",
        "Frequency factor from one octave to the next.",
        number(LACUNARITY, [1.2, 3.5], false),
    ));
    out.push(field(
        p("persistence"),
        group,
        "Persistence",
        "Amplitude factor from one octave to the next: higher is rougher.",
        number(PERSISTENCE, [0.1, 0.9], false),
    ));
}

/// The erosion step of a heightmap recipe: a toggle and, while it is on,
/// the region and the settings of `isoterra erode`.
fn erosion_fields(out: &mut Vec<RecipeField>) {
    use bounds::*;
    const G: &str = "Erosion";
    // Through text, so that an f32 is its shortest decimal (0.8, not the
    // f64 widening 0.800000011920929).
    let initial = serde_json::to_string(&HeightErosion::DEFAULT)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    out.push(field(
        "erosion",
        G,
        "Erode a region",
        "Erode one region of the ground once, when the world is created (the preview sketches it on its own coarser samples).",
        FieldControl::Toggle { initial },
    ));
    let within = |f: RecipeField| RecipeField {
        within: Some("erosion".to_string()),
        ..f
    };
    let integer = |min: u32, max: u32, slider: [u32; 2]| FieldControl::Integer { min, max, slider };
    // The sliders keep the low edges left of the origin and the high ones
    // right of it, so no slider end inverts the default region.
    let (low, high) = ([-1024.0, 0.0], [0.0, 1024.0]);
    let region = [
        (
            "erosion.region.0",
            "Region x0",
            "West edge of the eroded region, in world units.",
            low,
        ),
        (
            "erosion.region.1",
            "Region z0",
            "North edge of the eroded region, in world units.",
            low,
        ),
        (
            "erosion.region.2",
            "Region x1",
            "East edge of the eroded region (greater than x0).",
            high,
        ),
        (
            "erosion.region.3",
            "Region z1",
            "South edge of the eroded region (greater than z0).",
            high,
        ),
    ];
    for (path, label, help, slider) in region {
        out.push(within(field(
            path,
            G,
            label,
            help,
            number(EROSION_REGION, slider, false),
        )));
    }
    let fields = [
        (
            "erosion.passes",
            "Droplet passes",
            "Hydraulic passes; each reads the ground the one before left (0: no hydraulic erosion).",
            integer(0, EROSION_PASSES, [1, 16]),
        ),
        (
            "erosion.density",
            "Droplets per node",
            "Droplets spawned per node and pass.",
            number(EROSION_DENSITY, [0.02, 1.0], true),
        ),
        (
            "erosion.lifetime",
            "Droplet lifetime",
            "Most steps, one cell each, of one droplet.",
            integer(1, EROSION_LIFETIME, [4, 64]),
        ),
        (
            "erosion.radius",
            "Droplet radius",
            "Radius in cells of the ground a droplet wears and fills.",
            integer(1, EROSION_RADIUS, [1, 8]),
        ),
        (
            "erosion.capacity",
            "Sediment capacity",
            "How much sediment a droplet carries: higher cuts deeper channels.",
            number(EROSION_CAPACITY, [0.5, 16.0], true),
        ),
        (
            "erosion.thermal",
            "Thermal iterations",
            "Slumping of slopes steeper than the talus, after the droplets (0: none).",
            integer(0, EROSION_THERMAL, [0, 200]),
        ),
        (
            "erosion.talus",
            "Talus",
            "The steepest slope (rise over run) thermal erosion leaves standing.",
            number(EROSION_TALUS, [0.1, 2.0], false),
        ),
        (
            "erosion.blur",
            "Blur",
            "Radius in nodes of a Gaussian blur run last, softening what the droplets left (0: none).",
            integer(0, EROSION_BLUR, [0, 16]),
        ),
        (
            "erosion.feather",
            "Feather",
            "World units over which the change fades in from the region's edge.",
            number(
                Bounds::closed(0.0, EROSION_FEATHER as f32),
                [0.0, 64.0],
                false,
            ),
        ),
    ];
    for (path, label, help, control) in fields {
        out.push(within(field(path, G, label, help, control)));
    }
}

/// Every generator parameter of `kind`'s recipe, in the order an editor
/// shows them (grouped by [`RecipeField::group`]).
pub fn recipe_fields(kind: WorldKind) -> Vec<RecipeField> {
    use bounds::*;
    let mut out = Vec::new();
    match kind {
        WorldKind::Side2d => {
            out.push(field(
                "generator",
                "Shape",
                "Generator",
                "Rolling hills with caves under them, a cave system, or a cellular automaton's caverns.",
                choice(&["hills", "caves", "cellular"]),
            ));
            out.push(field(
                "feature_cells",
                "Shape",
                "Feature size",
                "Size of the main noise features, in cells.",
                number(FEATURE_CELLS, [4.0, 256.0], true),
            ));
            out.push(field(
                "fill",
                "Shape",
                "Fill",
                "How much of the world is solid.",
                number(FILL, [0.0, 1.0], false),
            ));
            out.push(field(
                "iso",
                "Shape",
                "Iso level",
                "A node is solid where the field is at least this.",
                number(ISO, [-0.5, 0.5], false),
            ));
            out.push(field(
                "storage",
                "Storage",
                "Values stored as",
                "f32 keeps every density exactly; u16 and u8 round them to 65,536 or 256 levels and store a half or a quarter of the bytes per edited node.",
                choice(&["f32", "u16", "u8"]),
            ));
        }
        WorldKind::Heightmap => {
            noise_fields(&mut out, "base", "Base noise");
            noise_fields(&mut out, "mountains", "Mountains");
            out.push(field(
                "mountain_strength",
                "Mountains",
                "Strength",
                "Height of the mountains relative to the base terrain.",
                number(MOUNTAIN_STRENGTH, [0.0, 5.0], false),
            ));
            noise_fields(&mut out, "mask", "Mountain mask");
            out.push(field(
                "mask_threshold",
                "Mountain mask",
                "Threshold",
                "Mask value at the middle of the mountain edge: lower gives more mountains.",
                number(MASK_THRESHOLD, [-1.0, 1.0], false),
            ));
            out.push(field(
                "mask_blend",
                "Mountain mask",
                "Blend",
                "Half-width of the mask's transition (0 is a hard edge).",
                number(MASK_BLEND, [0.0, 1.0], false),
            ));
            out.push(field(
                "warp_amplitude",
                "Domain warp",
                "Amplitude",
                "How far the warp moves sample positions, in world units (0 turns it off).",
                number(WARP_AMPLITUDE, [0.0, 200.0], false),
            ));
            noise_fields(&mut out, "warp", "Domain warp");
            out.push(field(
                "curve",
                "Height",
                "Height curve",
                "Maps the normalised height (0 lowest, 1 highest) to the final height before scaling.",
                FieldControl::Curve {
                    points: [2, HeightCurve::MAX_POINTS],
                    y: CURVE_Y,
                },
            ));
            out.push(field(
                "height_scale",
                "Height",
                "Height scale",
                "World units the curve's 1 stands for.",
                number(HEIGHT_SCALE, [4.0, 1024.0], true),
            ));
            erosion_fields(&mut out);
        }
        WorldKind::Voxel => {
            out.push(field(
                "generator",
                "Shape",
                "Generator",
                "Rolling ground with tunnels, ground pushed into overhangs, a round planet, or terraced mesas with arches and floating rocks.",
                choice(&["caves", "overhangs", "planet", "mesas"]),
            ));
            out.push(field(
                "ground_level",
                "Ground",
                "Ground level",
                "Mean height of the ground.",
                number(GROUND_LEVEL, [-64.0, 64.0], false),
            ));
            out.push(field(
                "ground_amplitude",
                "Ground",
                "Relief",
                "Height range of the ground noise (and of a planet's relief).",
                number(GROUND_AMPLITUDE, [1.0, 128.0], true),
            ));
            out.push(field(
                "falloff",
                "Ground",
                "Falloff",
                "Width of the density ramp around the surface, in world units.",
                number(FALLOFF, [0.5, 16.0], true),
            ));
            out.push(field(
                "iso",
                "Ground",
                "Iso level",
                "A point is solid where the density is at least this.",
                number(ISO, [-0.5, 0.5], false),
            ));
            out.push(field(
                "cave_frequency",
                "Caves and overhangs",
                "3D noise frequency",
                "Cycles per world unit of the cave and overhang noise.",
                number(CAVE_FREQUENCY, [0.005, 0.2], true),
            ));
            out.push(field(
                "cave_threshold",
                "Caves and overhangs",
                "Tunnel width",
                "Half-width of the tunnels in noise units (0: none).",
                number(CAVE_THRESHOLD, [0.0, 0.3], false),
            ));
            out.push(field(
                "overhang_strength",
                "Caves and overhangs",
                "Overhang strength",
                "How far the 3D noise pushes the ground sideways and up.",
                number(OVERHANG_STRENGTH, [0.0, 160.0], false),
            ));
            out.push(field(
                "planet_radius",
                "Planet",
                "Radius",
                "Radius of the planet (the planet generator only).",
                number(PLANET_RADIUS, [8.0, 512.0], true),
            ));
            out.push(field(
                "rock_density",
                "Mesas",
                "Floating rocks",
                "Fraction of the rock grid's cells above the mesas that hold a boulder (the mesas generator only).",
                number(ROCK_DENSITY, [0.0, 1.0], false),
            ));
            out.push(field(
                "rock_size",
                "Mesas",
                "Rock spacing",
                "Side of the rock grid's cells in world units; boulders are at most half of it across.",
                number(ROCK_SIZE, [8.0, 128.0], true),
            ));
        }
        WorldKind::Map => {
            out.push(field(
                "generator",
                "Shape",
                "Generator",
                "An island of cliff levels in water, open plateaus, or flat blank ground.",
                choice(&["island", "plateaus", "blank"]),
            ));
            out.push(field(
                "level_height",
                "Cliffs",
                "Level height",
                "World units from one cliff level to the next.",
                number(LEVEL_HEIGHT, [0.25, 8.0], true),
            ));
            out.push(field(
                "chasm_depth",
                "Cliffs",
                "Chasm depth",
                "How far chasm walls drop below the ground.",
                number(CHASM_DEPTH, [0.5, 16.0], true),
            ));
        }
    }
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
