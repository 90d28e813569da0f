//! The recipe of a map world: its generator parameters, how they are read
//! from and written into a world's parameters, and their fields.

use isoterra_world::{MapParams, MapPreset};
use serde::{Deserialize, Serialize};

use crate::KindError;
use crate::recipe_fields::{RecipeField, bounds, choice, field, number};

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

impl MapRecipe {
    /// Checks every value against its range.
    pub(crate) fn validate(&self) -> Result<(), KindError> {
        bounds::LEVEL_HEIGHT.check("params.level_height", self.level_height)?;
        bounds::CHASM_DEPTH.check("params.chasm_depth", self.chasm_depth)
    }

    /// The recipe of a world's parameters.
    pub(crate) fn of(p: &MapParams) -> Self {
        MapRecipe {
            generator: p.preset,
            level_height: p.mesh.level_height,
            chasm_depth: p.mesh.chasm_depth,
        }
    }

    /// Writes the generator into `p` (validated first by the caller).
    pub(crate) fn apply_to(&self, p: &mut MapParams) -> Result<(), KindError> {
        p.preset = self.generator;
        p.mesh.level_height = self.level_height;
        p.mesh.chasm_depth = self.chasm_depth;
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
