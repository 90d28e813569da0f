//! Recipes: the whole generator description of one world kind, as a JSON
//! document a user can print, edit and hand back.
//!
//! A recipe holds what decides the generated ground and nothing else: the
//! kind, the generator parameters and, for information, the preset it came
//! from. The seed, the size, the chunk size and the cell size are not part
//! of it; they come from [`NewWorld`](crate::NewWorld) (the `--seed`,
//! `--size`, `--chunk` and `--cell-size` flags), so one recipe makes any
//! number of worlds.
//!
//! ```json
//! {
//!   "version": 1,
//!   "kind": "map",
//!   "name": "island",
//!   "params": { "generator": "island", "level_height": 1.0, "chasm_depth": 2.0 }
//! }
//! ```
//!
//! Every field of `params` is required (printed recipes have them all), an
//! unknown field is an error, and every number is checked against its
//! range; an error names the field by its path (`params.base.octaves`).
//! `docs/recipes.md` lists every field with its range and default.
//!
//! Presets are named recipes: [`Recipe::preset`] gives exactly the
//! parameters the preset gives, so a world made from a preset's recipe is
//! the world the preset makes, bit for bit.

use isoterra_field::{Basis, FractalKind, FractalParams, HeightCurve};
use isoterra_field::{HeightParams, Side2dPreset, VoxelGen, VoxelPreset};
use isoterra_world::{HeightErosion, MapPreset, Side2dStorage};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::create::WorldParams;
use crate::recipe_fields::{MAX_OCTAVES, bounds};
use crate::{KindError, NewWorld, WorldKind};

/// The recipe format version this build reads and writes.
pub const RECIPE_VERSION: u32 = 1;

/// The largest recipe document [`Recipe::from_slice`] reads, in bytes
/// (1 MiB; a printed recipe is about 2 KiB).
pub const MAX_RECIPE_BYTES: usize = 1 << 20;

/// The longest [`Recipe::name`], in characters.
pub const MAX_RECIPE_NAME: usize = 64;

/// The generator description of one world kind (see the module docs).
///
/// It serialises (serde) to the recipe JSON; read one back with
/// [`Recipe::from_json`], which checks every field. To change a preset,
/// start from [`Recipe::preset`] and set the fields of its
/// [`params`](Self::params).
#[derive(Debug, Clone, PartialEq)]
pub struct Recipe {
    /// The preset this recipe came from, if any. Information only: it
    /// never changes the world (the parameters do).
    pub name: Option<String>,
    /// The kind and its generator parameters.
    pub params: RecipeParams,
}

/// The generator parameters of a recipe, one variant per world kind.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RecipeParams {
    /// A side-view world.
    Side2d(Side2dRecipe),
    /// A heightmap world.
    Heightmap(HeightmapRecipe),
    /// A voxel world.
    Voxel(VoxelRecipe),
    /// A map world.
    Map(MapRecipe),
}

/// The generator of a side-view world.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
#[serde(deny_unknown_fields)]
pub struct Side2dRecipe {
    /// The generator: `caves`, `hills` or `cellular`.
    pub generator: Side2dPreset,
    /// Size of the main noise features in cells, `2..=65536`.
    pub feature_cells: f32,
    /// How much of the world is solid, `0..=1`.
    pub fill: f32,
    /// Iso level: a node is solid when its value is at least this,
    /// inside `(-1, 1)`.
    pub iso: f32,
    /// How the world stores its densities: `f32` (exact, the default),
    /// `u16` or `u8` (quantized over `[-1, 1]`: a quarter of the bytes per
    /// stored node, see [`Side2dStorage`]). Recipes written before this
    /// field read as `f32`.
    #[serde(default)]
    pub storage: Side2dStorage,
}

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

/// The generator of a voxel world (see [`VoxelGen`] for the formula).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
#[serde(deny_unknown_fields)]
pub struct VoxelRecipe {
    /// The formula: `caves`, `overhangs`, `planet` or `mesas`.
    pub generator: VoxelPreset,
    /// Mean ground height `y`, within `±1e6`.
    pub ground_level: f32,
    /// Height range of the ground noise (and planet relief), `(0, 1e6]`.
    pub ground_amplitude: f32,
    /// Frequency of the 3D cave / overhang noise, cycles per unit, `(0, 1]`.
    pub cave_frequency: f32,
    /// Half-width of the tunnels in noise units, `[0, 1)` (`0`: none).
    pub cave_threshold: f32,
    /// How far the 3D noise pushes the ground (overhangs), `0..=1e6`.
    pub overhang_strength: f32,
    /// Radius of the planet, `(0, 1e6]`.
    pub planet_radius: f32,
    /// Width of the ramp around the surface in world units, `(0, 1e6]`.
    pub falloff: f32,
    /// Iso level: a node is solid when its value is at least this,
    /// inside `(-1, 1)`.
    pub iso: f32,
    /// Mesas: fraction of the rock grid's cells holding a floating rock,
    /// `0..=1`. Optional in a recipe (added after version 1 was
    /// published): `0` when left out.
    #[serde(default)]
    pub rock_density: f32,
    /// Mesas: side of the rock grid's cells in world units, `4..=1e6`.
    /// Optional in a recipe: `24` when left out.
    #[serde(default = "default_rock_size")]
    pub rock_size: f32,
}

fn default_rock_size() -> f32 {
    VoxelGen::DEFAULT.rock_size
}

/// The generator of a map world.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
#[serde(deny_unknown_fields)]
pub struct MapRecipe {
    /// What the map starts as: `island`, `plateaus` or `blank`.
    pub generator: MapPreset,
    /// World units per cliff level, `(0, 1e6]`.
    pub level_height: f32,
    /// How far chasm walls drop below the ground, `(0, 1e6]`.
    pub chasm_depth: f32,
}

/// A recipe as it is written: the version first, then the kind, the name
/// and the parameters.
#[derive(Serialize)]
struct Written<'a> {
    version: u32,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    params: WrittenParams<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum WrittenParams<'a> {
    Side2d(&'a Side2dRecipe),
    Heightmap(&'a HeightmapRecipe),
    Voxel(&'a VoxelRecipe),
    Map(&'a MapRecipe),
}

impl Serialize for Recipe {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Written {
            version: RECIPE_VERSION,
            kind: self.kind().name(),
            name: self.name.as_deref(),
            params: match &self.params {
                RecipeParams::Side2d(p) => WrittenParams::Side2d(p),
                RecipeParams::Heightmap(p) => WrittenParams::Heightmap(p),
                RecipeParams::Voxel(p) => WrittenParams::Voxel(p),
                RecipeParams::Map(p) => WrittenParams::Map(p),
            },
        }
        .serialize(serializer)
    }
}

/// The top-level keys a recipe may have.
const TOP_KEYS: [&str; 4] = ["version", "kind", "name", "params"];

fn bad(path: impl Into<String>, reason: impl Into<String>) -> KindError {
    KindError::Recipe {
        path: path.into(),
        reason: reason.into(),
    }
}

impl Recipe {
    /// The recipe of `kind`'s preset `name`: exactly the parameters the
    /// preset gives (`NewWorld::new(kind).with_preset(name)`).
    ///
    /// # Errors
    ///
    /// [`KindError::Invalid`] for a name that is not one of the kind's
    /// presets ([`KindDefaults::presets`](crate::KindDefaults::presets)).
    pub fn preset(kind: WorldKind, name: &str) -> Result<Recipe, KindError> {
        let params = NewWorld::new(kind).with_preset(name).params()?;
        Ok(Recipe {
            name: Some(name.to_string()),
            params: RecipeParams::of(&params),
        })
    }

    /// Every named recipe: each kind's presets, in the order
    /// [`WorldKind::ALL`] and [`KindDefaults::presets`](crate::KindDefaults::presets) list them.
    pub fn presets() -> Vec<Recipe> {
        WorldKind::ALL
            .into_iter()
            .flat_map(|kind| {
                NewWorld::defaults(kind)
                    .presets
                    .iter()
                    .filter_map(move |name| Recipe::preset(kind, name).ok())
            })
            .collect()
    }

    /// The recipe of a world's parameters (what `isoterra info --recipe`
    /// prints). It is named after a preset when the parameters are exactly
    /// that preset's.
    pub fn of_params(params: &WorldParams) -> Recipe {
        let params = RecipeParams::of(params);
        let kind = params.kind();
        let name = NewWorld::defaults(kind)
            .presets
            .iter()
            .find(|name| Recipe::preset(kind, name).is_ok_and(|r| r.params == params))
            .map(|name| name.to_string());
        Recipe { name, params }
    }

    /// This heightmap recipe with the default erosion step
    /// ([`HeightErosion::DEFAULT`]) added, unnamed (it is no preset's any
    /// more); a recipe that already erodes keeps its step.
    ///
    /// # Errors
    ///
    /// [`KindError::Invalid`] for a recipe of another kind: only
    /// heightmaps erode.
    pub fn with_default_erosion(mut self) -> Result<Recipe, KindError> {
        let RecipeParams::Heightmap(h) = &mut self.params else {
            return Err(KindError::invalid(format!(
                "only heightmap recipes have an erosion step; this one makes {} worlds",
                self.kind()
            )));
        };
        if h.erosion.is_none() {
            h.erosion = Some(HeightErosion::DEFAULT);
            self.name = None;
        }
        Ok(self)
    }

    /// The kind of world this recipe makes.
    pub fn kind(&self) -> WorldKind {
        self.params.kind()
    }

    /// Reads a recipe from JSON text (see [`Recipe::from_slice`]).
    ///
    /// # Errors
    ///
    /// As [`Recipe::from_slice`].
    pub fn from_json(text: &str) -> Result<Recipe, KindError> {
        Recipe::from_slice(text.as_bytes())
    }

    /// Reads and validates a recipe from JSON bytes.
    ///
    /// # Errors
    ///
    /// [`KindError::TooLarge`] past [`MAX_RECIPE_BYTES`];
    /// [`KindError::Recipe`] naming the field for text that is not JSON, a
    /// version other than [`RECIPE_VERSION`], an unknown kind, a missing or
    /// unknown field, a value of the wrong type, or a value out of range.
    pub fn from_slice(bytes: &[u8]) -> Result<Recipe, KindError> {
        if bytes.len() > MAX_RECIPE_BYTES {
            return Err(KindError::TooLarge(format!(
                "a recipe is at most {MAX_RECIPE_BYTES} bytes, this one has {}",
                bytes.len()
            )));
        }
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| bad("", format!("not valid JSON: {e}")))?;
        let Value::Object(top) = value else {
            return Err(bad("", "a recipe is a JSON object"));
        };
        let version = top.get("version").ok_or_else(|| {
            bad(
                "version",
                format!("missing; this isoterra reads recipe version {RECIPE_VERSION}"),
            )
        })?;
        if version.as_u64() != Some(u64::from(RECIPE_VERSION)) {
            return Err(bad(
                "version",
                format!(
                    "unsupported recipe version {version}; this isoterra reads version {RECIPE_VERSION}"
                ),
            ));
        }
        if let Some(key) = top.keys().find(|k| !TOP_KEYS.contains(&k.as_str())) {
            return Err(bad(
                key.as_str(),
                "unknown field (a recipe has version, kind, name and params)",
            ));
        }
        let kind = match top.get("kind") {
            None => return Err(bad("kind", "missing (side2d, heightmap, voxel or map)")),
            Some(Value::String(s)) => WorldKind::from_name(s).ok_or_else(|| {
                bad(
                    "kind",
                    format!("unknown world kind `{s}` (side2d, heightmap, voxel or map)"),
                )
            })?,
            Some(other) => {
                return Err(bad(
                    "kind",
                    format!("must be a string (side2d, heightmap, voxel or map), got {other}"),
                ));
            }
        };
        let name = match top.get("name") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => return Err(bad("name", format!("must be a string, got {other}"))),
        };
        let params = top
            .get("params")
            .ok_or_else(|| bad("params", "missing (the generator parameters)"))?;
        let params = match kind {
            WorldKind::Side2d => RecipeParams::Side2d(typed(params)?),
            WorldKind::Heightmap => RecipeParams::Heightmap(typed(params)?),
            WorldKind::Voxel => RecipeParams::Voxel(typed(params)?),
            WorldKind::Map => RecipeParams::Map(typed(params)?),
        };
        let recipe = Recipe { name, params };
        recipe.validate()?;
        Ok(recipe)
    }

    /// The recipe as a JSON value: `version`, `kind`, `name` (when there
    /// is one) and every parameter.
    ///
    /// Numbers are the shortest decimals that read back to the same `f32`
    /// (`0.2`, not the `f64` widening `0.20000000298023224`), as in
    /// [`to_json_pretty`](Self::to_json_pretty).
    pub fn to_json_value(&self) -> Value {
        // Through text: serde_json writes an f32 as its shortest decimal,
        // while `to_value` would widen it to f64 first. Plain structs of
        // numbers and names always serialise.
        serde_json::to_string(self)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or(Value::Null)
    }

    /// The recipe as indented JSON, ending in a newline. Numbers are
    /// written as the shortest text that reads back to the same value.
    pub fn to_json_pretty(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Checks every value against its range.
    ///
    /// # Errors
    ///
    /// [`KindError::Recipe`] naming the first bad field by its path
    /// (`params.base.octaves`).
    pub fn validate(&self) -> Result<(), KindError> {
        if let Some(name) = &self.name
            && (name.chars().count() > MAX_RECIPE_NAME || name.chars().any(char::is_control))
        {
            return Err(bad(
                "name",
                format!("must be at most {MAX_RECIPE_NAME} characters with no control characters"),
            ));
        }
        match &self.params {
            RecipeParams::Side2d(p) => p.validate(),
            RecipeParams::Heightmap(p) => p.validate(),
            RecipeParams::Voxel(p) => p.validate(),
            RecipeParams::Map(p) => p.validate(),
        }
    }

    /// Writes the recipe's generator into `params` (a world of the same
    /// kind); the seed, size, chunk and cell size stay as they are.
    ///
    /// # Errors
    ///
    /// [`KindError::Recipe`] for a bad value or a recipe of another kind.
    pub fn apply(&self, params: &mut WorldParams) -> Result<(), KindError> {
        self.validate()?;
        match (&self.params, params) {
            (RecipeParams::Side2d(r), WorldParams::Side2d(p)) => {
                p.generator = p
                    .generator
                    .with_preset(r.generator)
                    .with_feature_cells(r.feature_cells)
                    .with_fill(r.fill);
                p.iso = r.iso;
                p.storage = r.storage;
            }
            (RecipeParams::Heightmap(r), WorldParams::Heightmap(p)) => {
                p.generator = r.height_params()?;
                p.erosion = r.erosion;
            }
            (RecipeParams::Voxel(r), WorldParams::Voxel(p)) => {
                p.generator = VoxelGen::new(r.generator, p.generator.seed)
                    .with_ground_level(r.ground_level)
                    .with_ground_amplitude(r.ground_amplitude)
                    .with_cave_frequency(r.cave_frequency)
                    .with_cave_threshold(r.cave_threshold)
                    .with_overhang_strength(r.overhang_strength)
                    .with_planet_radius(r.planet_radius)
                    .with_falloff(r.falloff)
                    .with_rock_density(r.rock_density)
                    .with_rock_size(r.rock_size);
                p.iso = r.iso;
            }
            (RecipeParams::Map(r), WorldParams::Map(p)) => {
                p.preset = r.generator;
                p.mesh.level_height = r.level_height;
                p.mesh.chasm_depth = r.chasm_depth;
            }
            (_, p) => {
                return Err(bad(
                    "kind",
                    format!(
                        "the recipe makes {} worlds, not {} worlds",
                        self.kind(),
                        p.kind()
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// `params` as the kind's recipe struct, errors naming the path.
fn typed<T: DeserializeOwned>(params: &Value) -> Result<T, KindError> {
    serde_path_to_error::deserialize(params).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." {
            "params".to_string()
        } else {
            format!("params.{path}")
        };
        bad(path, e.into_inner().to_string())
    })
}

impl RecipeParams {
    /// The generator part of a world's parameters.
    pub fn of(params: &WorldParams) -> RecipeParams {
        match params {
            WorldParams::Side2d(p) => RecipeParams::Side2d(Side2dRecipe {
                generator: p.generator.preset,
                feature_cells: p.generator.feature_cells,
                fill: p.generator.fill,
                iso: p.iso,
                storage: p.storage,
            }),
            WorldParams::Heightmap(p) => {
                let g = &p.generator;
                RecipeParams::Heightmap(HeightmapRecipe {
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
                })
            }
            WorldParams::Voxel(p) => {
                let g = &p.generator;
                RecipeParams::Voxel(VoxelRecipe {
                    generator: g.preset,
                    ground_level: g.ground_level,
                    ground_amplitude: g.ground_amplitude,
                    cave_frequency: g.cave_frequency,
                    cave_threshold: g.cave_threshold,
                    overhang_strength: g.overhang_strength,
                    planet_radius: g.planet_radius,
                    falloff: g.falloff,
                    iso: p.iso,
                    rock_density: g.rock_density,
                    rock_size: g.rock_size,
                })
            }
            WorldParams::Map(p) => RecipeParams::Map(MapRecipe {
                generator: p.preset,
                level_height: p.mesh.level_height,
                chasm_depth: p.mesh.chasm_depth,
            }),
        }
    }

    /// The kind these parameters make.
    pub fn kind(&self) -> WorldKind {
        match self {
            RecipeParams::Side2d(_) => WorldKind::Side2d,
            RecipeParams::Heightmap(_) => WorldKind::Heightmap,
            RecipeParams::Voxel(_) => WorldKind::Voxel,
            RecipeParams::Map(_) => WorldKind::Map,
        }
    }
}

impl Side2dRecipe {
    fn validate(&self) -> Result<(), KindError> {
        bounds::FEATURE_CELLS.check("params.feature_cells", self.feature_cells)?;
        bounds::FILL.check("params.fill", self.fill)?;
        bounds::ISO.check("params.iso", self.iso)
    }
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

    fn validate(&self) -> Result<(), KindError> {
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
}

impl VoxelRecipe {
    fn validate(&self) -> Result<(), KindError> {
        bounds::GROUND_LEVEL.check("params.ground_level", self.ground_level)?;
        bounds::GROUND_AMPLITUDE.check("params.ground_amplitude", self.ground_amplitude)?;
        bounds::CAVE_FREQUENCY.check("params.cave_frequency", self.cave_frequency)?;
        bounds::CAVE_THRESHOLD.check("params.cave_threshold", self.cave_threshold)?;
        bounds::OVERHANG_STRENGTH.check("params.overhang_strength", self.overhang_strength)?;
        bounds::PLANET_RADIUS.check("params.planet_radius", self.planet_radius)?;
        bounds::FALLOFF.check("params.falloff", self.falloff)?;
        bounds::ISO.check("params.iso", self.iso)?;
        bounds::ROCK_DENSITY.check("params.rock_density", self.rock_density)?;
        bounds::ROCK_SIZE.check("params.rock_size", self.rock_size)
    }
}

impl MapRecipe {
    fn validate(&self) -> Result<(), KindError> {
        bounds::LEVEL_HEIGHT.check("params.level_height", self.level_height)?;
        bounds::CHASM_DEPTH.check("params.chasm_depth", self.chasm_depth)
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
