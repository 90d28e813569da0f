//! The recipe of a voxel world: its generator parameters, how they are
//! read from and written into a world's parameters, and their fields.

use isoterra_field::{VoxelGen, VoxelPreset};
use isoterra_world::VoxelParams;
use serde::{Deserialize, Serialize};

use crate::KindError;
use crate::recipe_fields::{RecipeField, bounds, choice, field, number};

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

impl VoxelRecipe {
    /// Checks every value against its range.
    pub(crate) fn validate(&self) -> Result<(), KindError> {
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

    /// The recipe of a world's parameters.
    pub(crate) fn of(p: &VoxelParams) -> Self {
        let g = &p.generator;
        VoxelRecipe {
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
        }
    }

    /// Writes the generator into `p` (validated first by the caller); the
    /// seed stays.
    pub(crate) fn apply_to(&self, p: &mut VoxelParams) -> Result<(), KindError> {
        p.generator = VoxelGen::new(self.generator, p.generator.seed)
            .with_ground_level(self.ground_level)
            .with_ground_amplitude(self.ground_amplitude)
            .with_cave_frequency(self.cave_frequency)
            .with_cave_threshold(self.cave_threshold)
            .with_overhang_strength(self.overhang_strength)
            .with_planet_radius(self.planet_radius)
            .with_falloff(self.falloff)
            .with_rock_density(self.rock_density)
            .with_rock_size(self.rock_size);
        p.iso = self.iso;
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
