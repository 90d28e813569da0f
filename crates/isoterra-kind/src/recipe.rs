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

use isoterra_world::HeightErosion;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{KindError, NewWorld, RecipeParams, WorldKind, WorldParams};

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

/// A recipe as it is written: the version first, then the kind, the name
/// and the parameters.
#[derive(Serialize)]
struct Written<'a> {
    version: u32,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    params: &'a RecipeParams,
}

impl Serialize for Recipe {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Written {
            version: RECIPE_VERSION,
            kind: self.kind().name(),
            name: self.name.as_deref(),
            params: &self.params,
        }
        .serialize(serializer)
    }
}

/// The top-level keys a recipe may have.
const TOP_KEYS: [&str; 4] = ["version", "kind", "name", "params"];

pub(crate) fn bad(path: impl Into<String>, reason: impl Into<String>) -> KindError {
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
            None => return Err(bad("kind", format!("missing ({})", kind_names()))),
            Some(Value::String(s)) => WorldKind::from_name(s).ok_or_else(|| {
                bad(
                    "kind",
                    format!("unknown world kind `{s}` ({})", kind_names()),
                )
            })?,
            Some(other) => {
                return Err(bad(
                    "kind",
                    format!("must be a string ({}), got {other}", kind_names()),
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
        let params = RecipeParams::read(kind, params)?;
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
        self.params.validate()
    }

    /// Writes the recipe's generator into `params` (a world of the same
    /// kind); the seed, size, chunk and cell size stay as they are.
    ///
    /// # Errors
    ///
    /// [`KindError::Recipe`] for a bad value or a recipe of another kind.
    pub fn apply(&self, params: &mut WorldParams) -> Result<(), KindError> {
        self.validate()?;
        if self.kind() != params.kind() {
            return Err(bad(
                "kind",
                format!(
                    "the recipe makes {} worlds, not {} worlds",
                    self.kind(),
                    params.kind()
                ),
            ));
        }
        self.params.apply_to(params)
    }
}

/// `params` as the kind's recipe struct, errors naming the path.
pub(crate) fn typed<T: DeserializeOwned>(params: &Value) -> Result<T, KindError> {
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

/// Every kind's name, as an error lists them: `side2d, heightmap, voxel or
/// map`.
fn kind_names() -> String {
    let names: Vec<&str> = WorldKind::ALL.iter().map(|k| k.name()).collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}
