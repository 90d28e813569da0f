//! `isoterra recipe`, and reading a recipe file for `new --recipe`.

use std::path::Path;

use anyhow::Context;
use isoterra::kind::{MAX_RECIPE_BYTES, NewWorld, Recipe};

use crate::args::RecipeArgs;

pub fn run(a: &RecipeArgs) -> anyhow::Result<()> {
    let kind = a.kind.0;
    let preset = a
        .preset
        .as_deref()
        .unwrap_or(NewWorld::defaults(kind).preset);
    let mut recipe = Recipe::preset(kind, preset)?;
    if a.erosion {
        recipe = recipe.with_default_erosion()?;
    }
    let text = recipe.to_json_pretty();
    match &a.out {
        Some(out) => super::write_atomic(out, text.as_bytes())?,
        None => print!("{text}"),
    }
    Ok(())
}

/// The recipe in the file at `path` (at most [`MAX_RECIPE_BYTES`]),
/// checked.
pub fn read(path: &Path) -> anyhow::Result<Recipe> {
    let bytes = super::read_input(path, MAX_RECIPE_BYTES as u64)?;
    Recipe::from_slice(&bytes).with_context(|| format!("cannot use the recipe {}", path.display()))
}
