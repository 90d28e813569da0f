//! The recipe of a side-view world: its generator parameters, how they
//! are read from and written into a world's parameters, and their fields.

use isoterra_field::Side2dPreset;
use isoterra_world::{Side2dParams, Side2dStorage};
use serde::{Deserialize, Serialize};

use crate::KindError;
use crate::recipe_fields::{RecipeField, bounds, choice, field, number};

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

impl Side2dRecipe {
    /// Checks every value against its range.
    pub(crate) fn validate(&self) -> Result<(), KindError> {
        bounds::FEATURE_CELLS.check("params.feature_cells", self.feature_cells)?;
        bounds::FILL.check("params.fill", self.fill)?;
        bounds::ISO.check("params.iso", self.iso)
    }

    /// The recipe of a world's parameters.
    pub(crate) fn of(p: &Side2dParams) -> Self {
        Side2dRecipe {
            generator: p.generator.preset,
            feature_cells: p.generator.feature_cells,
            fill: p.generator.fill,
            iso: p.iso,
            storage: p.storage,
        }
    }

    /// Writes the generator into `p` (validated first by the caller).
    pub(crate) fn apply_to(&self, p: &mut Side2dParams) -> Result<(), KindError> {
        p.generator = p
            .generator
            .with_preset(self.generator)
            .with_feature_cells(self.feature_cells)
            .with_fill(self.fill);
        p.iso = self.iso;
        p.storage = self.storage;
        Ok(())
    }
}

/// The recipe fields of this kind (see [`recipe_fields`](crate::recipe_fields)),
/// in the order an editor shows them.
pub(crate) fn fields(out: &mut Vec<RecipeField>) {
    use crate::recipe_fields::bounds::*;
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
