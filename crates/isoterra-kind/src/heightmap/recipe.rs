//! The recipe of a heightmap world: its generator parameters (noises,
//! mask, warp, curve and an optional erosion step), how they are read from
//! and written into a world's parameters, and their fields.

use isoterra_field::{Basis, FractalKind, FractalParams, HeightCurve, HeightParams};
use isoterra_world::{HeightErosion, HeightmapParams};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::KindError;
use crate::recipe::bad;
use crate::recipe_fields::{
    Bounds, FieldControl, MAX_OCTAVES, RecipeField, bounds, choice, field, number,
};

/// One fractal noise of a heightmap recipe.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
#[serde(deny_unknown_fields)]
pub struct NoiseRecipe {
    /// The basis noise: `{"type": "perlin"}`, `{"type": "open_simplex2"}`,
    /// `{"type": "value"}` or `{"type": "cellular", "ret": "f1" | "f2" |
    /// "f2_minus_f1", "jitter": 0..=1}`.
    pub basis: Basis,
    /// How each octave is shaped: `fbm`, `ridged` or `billow`.
    pub fractal: FractalKind,
    /// Number of octaves, `1..=32`.
    pub octaves: u32,
    /// Frequency of the first octave in cycles per world unit,
    /// `(0, 1000]` (its inverse is the size of the largest features).
    pub frequency: f32,
    /// Frequency factor between octaves, `(0, 16]`.
    pub lacunarity: f32,
    /// Amplitude factor between octaves, `0..=4`.
    pub persistence: f32,
}

/// The generator of a heightmap world (see
/// [`HeightParams`] for the formula).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
#[serde(deny_unknown_fields)]
pub struct HeightmapRecipe {
    /// The base terrain noise.
    pub base: NoiseRecipe,
    /// The mountain noise (usually ridged).
    pub mountains: NoiseRecipe,
    /// Where mountains rise (a low frequency).
    pub mask: NoiseRecipe,
    /// Mask value at the middle of the mountain edge, `-1..=1`.
    pub mask_threshold: f32,
    /// Half-width of the mask transition, `0..=2` (`0` is a hard edge).
    pub mask_blend: f32,
    /// Height of the mountains relative to the base, `0..=1000`.
    pub mountain_strength: f32,
    /// How far the domain warp moves sample positions, in world units,
    /// `0..=1e6` (`0` turns the warp off).
    pub warp_amplitude: f32,
    /// The warp noise.
    pub warp: NoiseRecipe,
    /// The height curve: 2 to 16 points `[x, y]` with `x` strictly
    /// increasing, mapping the normalised height in `[0, 1]`; `y` within
    /// `±1000`.
    pub curve: Vec<[f32; 2]>,
    /// Multiplier applied last, in world units, `(0, 1e6]`.
    pub height_scale: f32,
    /// An erosion of one region of the generated ground, run once when the
    /// world is created (see [`HeightErosion`]: the region, the hydraulic
    /// passes and droplet settings, thermal iterations and talus, and the
    /// feather; the same settings as `isoterra erode`). Optional: recipes
    /// without it (all written before it existed) make uneroded worlds,
    /// and a recipe prints it only when it is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erosion: Option<HeightErosion>,
}

impl NoiseRecipe {
    /// Largest [`octaves`](Self::octaves).
    pub const MAX_OCTAVES: u32 = MAX_OCTAVES;

    fn of(p: &FractalParams) -> Self {
        NoiseRecipe {
            basis: p.basis,
            fractal: p.kind,
            octaves: p.octaves,
            frequency: p.frequency,
            lacunarity: p.lacunarity,
            persistence: p.persistence,
        }
    }

    fn fractal_params(&self) -> FractalParams {
        FractalParams::DEFAULT
            .with_basis(self.basis)
            .with_kind(self.fractal)
            .with_octaves(self.octaves)
            .with_frequency(self.frequency)
            .with_lacunarity(self.lacunarity)
            .with_persistence(self.persistence)
    }

    fn validate(&self, at: &str) -> Result<(), KindError> {
        if !(1..=Self::MAX_OCTAVES).contains(&self.octaves) {
            return Err(bad(
                format!("{at}.octaves"),
                format!("must be 1..={}, got {}", Self::MAX_OCTAVES, self.octaves),
            ));
        }
        bounds::FREQUENCY.check(&format!("{at}.frequency"), self.frequency)?;
        bounds::LACUNARITY.check(&format!("{at}.lacunarity"), self.lacunarity)?;
        bounds::PERSISTENCE.check(&format!("{at}.persistence"), self.persistence)?;
        if let Basis::Cellular { jitter, .. } = self.basis {
            bounds::JITTER.check(&format!("{at}.basis.jitter"), jitter)?;
        }
        // What is left is a combination the noise refuses (the highest
        // octave's frequency overflowing); name the noise.
        self.fractal_params()
            .validate()
            .map_err(|e| bad(at, e.to_string()))
    }
}

impl HeightmapRecipe {
    /// The height generator's parameters (validated).
    fn height_params(&self) -> Result<HeightParams, KindError> {
        let curve =
            HeightCurve::new(&self.curve).map_err(|e| bad("params.curve", e.to_string()))?;
        let p = HeightParams::DEFAULT
            .with_base(self.base.fractal_params())
            .with_mountains(self.mountains.fractal_params())
            .with_mask(self.mask.fractal_params())
            .with_mask_edge(self.mask_threshold, self.mask_blend)
            .with_mountain_strength(self.mountain_strength)
            .with_warp_amplitude(self.warp_amplitude)
            .with_warp(self.warp.fractal_params())
            .with_curve(curve)
            .with_height_scale(self.height_scale);
        p.validate().map_err(|e| bad("params", e.to_string()))?;
        Ok(p)
    }

    /// Checks every value against its range.
    pub(crate) fn validate(&self) -> Result<(), KindError> {
        self.base.validate("params.base")?;
        self.mountains.validate("params.mountains")?;
        self.mask.validate("params.mask")?;
        bounds::MASK_THRESHOLD.check("params.mask_threshold", self.mask_threshold)?;
        bounds::MASK_BLEND.check("params.mask_blend", self.mask_blend)?;
        bounds::MOUNTAIN_STRENGTH.check("params.mountain_strength", self.mountain_strength)?;
        bounds::WARP_AMPLITUDE.check("params.warp_amplitude", self.warp_amplitude)?;
        self.warp.validate("params.warp")?;
        let n = self.curve.len();
        if !(2..=HeightCurve::MAX_POINTS).contains(&n) {
            return Err(bad(
                "params.curve",
                format!("must have 2 to {} points, got {n}", HeightCurve::MAX_POINTS),
            ));
        }
        for (i, [x, y]) in self.curve.iter().enumerate() {
            if !x.is_finite() {
                return Err(bad(
                    format!("params.curve[{i}][0]"),
                    format!("must be finite, got {x}"),
                ));
            }
            bounds::CURVE_Y.check(&format!("params.curve[{i}][1]"), *y)?;
            if i > 0 && *x <= self.curve[i - 1][0] {
                return Err(bad(
                    format!("params.curve[{i}][0]"),
                    format!(
                        "x values must increase strictly, got {x} after {}",
                        self.curve[i - 1][0]
                    ),
                ));
            }
        }
        bounds::HEIGHT_SCALE.check("params.height_scale", self.height_scale)?;
        if let Some(e) = &self.erosion {
            validate_erosion(e)?;
        }
        self.height_params().map(|_| ())
    }

    /// The recipe of a world's parameters.
    pub(crate) fn of(p: &HeightmapParams) -> Self {
        let g = &p.generator;
        HeightmapRecipe {
            base: NoiseRecipe::of(&g.base),
            mountains: NoiseRecipe::of(&g.mountains),
            mask: NoiseRecipe::of(&g.mask),
            mask_threshold: g.mask_threshold,
            mask_blend: g.mask_blend,
            mountain_strength: g.mountain_strength,
            warp_amplitude: g.warp_amplitude,
            warp: NoiseRecipe::of(&g.warp),
            curve: g.curve.points().to_vec(),
            height_scale: g.height_scale,
            erosion: p.erosion,
        }
    }

    /// Writes the generator and the erosion step into `p` (validated first
    /// by the caller).
    pub(crate) fn apply_to(&self, p: &mut HeightmapParams) -> Result<(), KindError> {
        p.generator = self.height_params()?;
        p.erosion = self.erosion;
        Ok(())
    }
}

/// Checks a heightmap recipe's erosion, naming the bad field
/// (`params.erosion.passes`).
fn validate_erosion(e: &HeightErosion) -> Result<(), KindError> {
    let at = |name: &str| format!("params.erosion.{name}");
    let r = e.region;
    let reach = f64::from(bounds::EROSION_REGION.max);
    for (i, v) in r.iter().enumerate() {
        if !(v.is_finite() && v.abs() <= reach) {
            return Err(bad(
                format!("params.erosion.region.{i}"),
                format!("must be a finite number of world units within ±{reach:e}, got {v}"),
            ));
        }
    }
    if r[0] >= r[2] || r[1] >= r[3] {
        return Err(bad(
            at("region"),
            format!("must be [x0, z0, x1, z1] with x0 < x1 and z0 < z1, got {r:?}"),
        ));
    }
    let whole = |name: &str, v: u32, lo: u32, hi: u32| {
        if (lo..=hi).contains(&v) {
            Ok(())
        } else {
            Err(bad(at(name), format!("must be {lo}..={hi}, got {v}")))
        }
    };
    whole("passes", e.passes, 0, bounds::EROSION_PASSES)?;
    whole("lifetime", e.lifetime, 1, bounds::EROSION_LIFETIME)?;
    whole("radius", e.radius, 1, bounds::EROSION_RADIUS)?;
    whole("thermal", e.thermal, 0, bounds::EROSION_THERMAL)?;
    whole("blur", e.blur, 0, bounds::EROSION_BLUR)?;
    bounds::EROSION_DENSITY.check(&at("density"), e.density)?;
    bounds::EROSION_CAPACITY.check(&at("capacity"), e.capacity)?;
    bounds::EROSION_TALUS.check(&at("talus"), e.talus)?;
    if !(e.feather.is_finite() && (0.0..=bounds::EROSION_FEATHER).contains(&e.feather)) {
        return Err(bad(
            at("feather"),
            format!(
                "must be a finite number in [0, {}], got {}",
                bounds::EROSION_FEATHER,
                e.feather
            ),
        ));
    }
    if e.passes == 0 && e.thermal == 0 && e.blur == 0 {
        return Err(bad(
            "params.erosion",
            "does nothing: give hydraulic passes, thermal iterations or a blur, \
             or leave the erosion out",
        ));
    }
    // Whatever is left is a combination the erosion itself refuses.
    e.validate()
        .map_err(|err| bad("params.erosion", err.to_string()))
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

/// The recipe fields of this kind (see [`recipe_fields`](crate::recipe_fields)),
/// in the order an editor shows them.
pub(crate) fn fields(out: &mut Vec<RecipeField>) {
    use crate::recipe_fields::bounds::*;
    noise_fields(out, "base", "Base noise");
    noise_fields(out, "mountains", "Mountains");
    out.push(field(
        "mountain_strength",
        "Mountains",
        "Strength",
        "Height of the mountains relative to the base terrain.",
        number(MOUNTAIN_STRENGTH, [0.0, 5.0], false),
    ));
    noise_fields(out, "mask", "Mountain mask");
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
    noise_fields(out, "warp", "Domain warp");
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
    erosion_fields(out);
}
