//! Density fields for isoterra.
//!
//! A field is a corner-sampled grid of `f32` densities: `W x H` nodes make
//! `(W-1) x (H-1)` cells. Storage is row-major, x fastest. Node `(x, y)` sits at
//! `origin + (x, y) * cell_size`. A node is *solid* when `value >= iso`
//! (default `iso = 0.0`, positive inside).
//!
//! Besides the grid types it provides:
//!
//! * seeded noise ([`Perlin`], [`OpenSimplex2`], [`ValueNoise`], [`Cellular`]),
//!   fractals ([`Fractal`], [`Fbm`]), domain warp and combinators
//!   ([`noise::NoiseGraph`]), all with analytic output ranges and vectorised
//!   batch fills that are bit-identical to the point API ([`noise`]);
//! * heightmaps ([`HeightGen`], [`HeightCurve`]) and erosion ([`erosion`]);
//! * separable [`blur`] and cellular-automaton caves ([`automaton_caves`]);
//! * side-view world generators ([`generate_side2d`] with [`Side2dGen`]);
//! * the content hash the other crates build their hashes and stamps from
//!   ([`hash::Fnv1a64`]).
//!
//! Generation is a pure function of its parameters: no global random number
//! generator, and the same bytes on every run and thread count.
//!
//! This crate does no I/O.

mod automaton;
mod blur;
mod curve;
pub mod density;
pub mod erosion;
mod error;
mod field2;
mod field3;
mod finite;
pub mod hash;
mod height;
pub mod huge_pages;
pub mod map;
mod material;
pub mod noise;
mod par;
mod quantize;
mod side2d;

pub use automaton::{CaveAutomaton, automaton_caves};
pub use blur::{BlurKind, blur};
pub use curve::{CurveSpline, HeightCurve};
pub use density::{DensitySampler, VoxelGen, VoxelPreset, fill_density};
pub use erosion::{
    ErosionStats, HydraulicParams, ThermalParams, erode_tile, hydraulic_erosion, thermal_erosion,
};
pub use error::FieldError;
pub use field2::{Field2, NodeRect};
pub use field3::Field3;
pub use finite::first_non_finite;
pub use height::{HeightGen, HeightParams, HeightPreset};
pub use map::{
    LayerMask, MAX_LEVEL, MAX_MAP_CELLS, MAX_TEXTURES, MapLayer, MapLayers, NO_WATER,
    PathingOverride, Splat, level_index,
};
pub use material::{Material, MaterialGrid, MaterialTable};
pub use noise::{
    Basis, Cellular, CellularReturn, Fbm, FbmParams, Fractal, FractalKind, FractalParams, Noise2,
    Noise3, OpenSimplex2, Perlin, ValueNoise, fill_fbm2, fill_fbm3, fill2, fill3,
};
pub use quantize::{Quantizer, Quantizer8, Quantizer16};
pub use side2d::{
    Side2dGen, Side2dPreset, generate_side2d, generate_side2d_with_threads, side2d_ids,
};
