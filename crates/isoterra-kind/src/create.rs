//! New worlds: what a user picks (kind, seed, size, preset, chunk and cell
//! size), the defaults and limits of each kind, and the parameters that
//! make the world.

use crate::per_kind::Settings;
use crate::{KindError, Recipe, WorldKind, WorldParams};

/// Side-view sizes a new world may have, in cells per axis.
pub const SIDE2D_SIZE: [u32; 2] = [16, 4096];
/// Map sizes a new world may have, in cells per axis.
pub const MAP_SIZE: [u32; 2] = [16, isoterra_field::map::MAX_MAP_CELLS];
/// Largest seed a new world takes (seeds are 32-bit everywhere a user
/// types one).
pub const MAX_SEED: u64 = u32::MAX as u64;

/// A new world as a user asks for it. Every field left `None` takes the
/// kind's default ([`NewWorld::defaults`]).
///
/// The generator comes from the [`recipe`](Self::recipe) when there is one,
/// else from the [`preset`](Self::preset); giving both is an error. A
/// recipe carries no seed, size, chunk or cell size: those always come
/// from these fields.
#[derive(Debug, Clone, PartialEq)]
pub struct NewWorld {
    /// The kind of world.
    pub kind: WorldKind,
    /// The generator seed, `0..=`[`MAX_SEED`]. Default value: `1`.
    pub seed: u64,
    /// Size in cells, `[width, height]` (side2d) or `[width, depth]` (map);
    /// endless kinds take none.
    pub size: Option<[u32; 2]>,
    /// The generator preset's name.
    pub preset: Option<String>,
    /// The generator, in full (see [`Recipe`]); it replaces the preset.
    /// Default value: `None`.
    pub recipe: Option<Recipe>,
    /// Cells per chunk side.
    pub chunk: Option<u32>,
    /// World units per cell.
    pub cell_size: Option<f32>,
}

/// The defaults of one kind, as [`NewWorld::defaults`] gives them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KindDefaults {
    /// The default size, for bounded kinds.
    pub size: Option<[u32; 2]>,
    /// The smallest and largest size per axis, for bounded kinds.
    pub size_range: Option<[u32; 2]>,
    /// The default preset.
    pub preset: &'static str,
    /// Every preset's name.
    pub presets: &'static [&'static str],
    /// The default cells per chunk side.
    pub chunk: u32,
}

impl NewWorld {
    /// A world of `kind` with every default.
    pub fn new(kind: WorldKind) -> Self {
        NewWorld {
            kind,
            seed: 1,
            size: None,
            preset: None,
            recipe: None,
            chunk: None,
            cell_size: None,
        }
    }

    /// Sets the seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets the size.
    pub fn with_size(mut self, size: [u32; 2]) -> Self {
        self.size = Some(size);
        self
    }

    /// Sets the preset.
    pub fn with_preset(mut self, preset: impl Into<String>) -> Self {
        self.preset = Some(preset.into());
        self
    }

    /// Sets the recipe: the world is generated from exactly its
    /// parameters (with this world's seed, size, chunk and cell size).
    pub fn with_recipe(mut self, recipe: Recipe) -> Self {
        self.recipe = Some(recipe);
        self
    }

    /// The defaults of `kind`.
    pub fn defaults(kind: WorldKind) -> KindDefaults {
        kind.spec().defaults()
    }

    /// The world's parameters, checked: the seed, the size against the
    /// kind's range, the preset against its presets, the cell size, and the
    /// recipe (its kind and every value) when there is one.
    ///
    /// # Errors
    ///
    /// [`KindError::Invalid`] naming the first bad value, or
    /// [`KindError::Recipe`] naming the recipe's bad field.
    pub fn params(&self) -> Result<WorldParams, KindError> {
        let Some(recipe) = &self.recipe else {
            return self.preset_params();
        };
        if let Some(preset) = &self.preset {
            return Err(KindError::invalid(format!(
                "give a recipe or a preset, not both (preset `{preset}`)"
            )));
        }
        if recipe.kind() != self.kind {
            return Err(KindError::Recipe {
                path: "kind".into(),
                reason: format!(
                    "the recipe makes {} worlds, not {} worlds",
                    recipe.kind(),
                    self.kind
                ),
            });
        }
        let mut params = self.preset_params()?;
        recipe.apply(&mut params)?;
        Ok(params)
    }

    /// The parameters of the preset (or the kind's default preset).
    fn preset_params(&self) -> Result<WorldParams, KindError> {
        let d = NewWorld::defaults(self.kind);
        if self.seed > MAX_SEED {
            return Err(KindError::invalid(format!(
                "seed must be in 0..={MAX_SEED}, got {}",
                self.seed
            )));
        }
        let size = match (self.size, d.size_range) {
            (None, _) => d.size,
            (Some(_), None) => {
                return Err(KindError::invalid(format!(
                    "{} worlds are endless; a size does not apply",
                    self.kind
                )));
            }
            (Some([w, h]), Some([lo, hi])) => {
                if ![w, h].iter().all(|v| (lo..=hi).contains(v)) {
                    return Err(KindError::invalid(format!(
                        "size must be in {lo}..={hi} cells on each axis, got {w}x{h}"
                    )));
                }
                Some([w, h])
            }
        };
        let cell = self.cell_size.unwrap_or(1.0);
        if !(cell.is_finite() && cell > 0.0 && cell <= 1.0e4) {
            return Err(KindError::invalid(format!(
                "cell size must be a finite number in (0, 10000], got {cell}"
            )));
        }
        self.kind.spec().params(&Settings {
            seed: self.seed,
            size,
            preset: self.preset.as_deref().unwrap_or(d.preset),
            cell,
            chunk: self.chunk.unwrap_or(d.chunk),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_bad_values_are_named() {
        for kind in WorldKind::ALL {
            let p = NewWorld::new(kind).params().unwrap();
            assert_eq!(p.kind(), kind);
            for preset in NewWorld::defaults(kind).presets {
                NewWorld::new(kind).with_preset(*preset).params().unwrap();
            }
            let e = NewWorld::new(kind).with_preset("volcano").params();
            assert!(e.unwrap_err().to_string().contains("volcano"));
        }
        assert!(
            NewWorld::new(WorldKind::Side2d)
                .with_size([8, 32])
                .params()
                .is_err()
        );
        assert!(
            NewWorld::new(WorldKind::Map)
                .with_size([32, 100_000])
                .params()
                .is_err()
        );
        assert!(
            NewWorld::new(WorldKind::Voxel)
                .with_size([32, 32])
                .params()
                .is_err()
        );
        assert!(
            NewWorld::new(WorldKind::Map)
                .with_seed(1 << 40)
                .params()
                .is_err()
        );
    }
}
