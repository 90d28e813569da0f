//! The kind layer: one API over the four world kinds.
//!
//! The algorithm crates know one kind at a time (a `Side2dWorld`, a
//! `MapMesher`, a `VoxelDocument`); everything a program does with "a world
//! file, whatever it holds" is written here once, so that the command line,
//! the editor and the engine plugin cannot disagree:
//!
//! - [`WorldKind`]: the kinds and their names.
//! - [`NewWorld`]: a new world's kind, seed, size and preset, with each
//!   kind's defaults and limits ([`NewWorld::defaults`]).
//! - [`Recipe`]: the whole generator description of a kind as a JSON
//!   document (every parameter, checked with errors that name the field);
//!   presets are named recipes ([`Recipe::preset`]), and a [`NewWorld`]
//!   made with [`NewWorld::with_recipe`] is generated from one.
//! - [`Document`]: a world of any kind over a store (the world file by
//!   default): open or create, strokes drawn live dab by dab and committed
//!   whole ([`Document::begin_stroke`], [`Document::dab`],
//!   [`Document::end_stroke`]) or in one call ([`Document::stroke`]), undo,
//!   redo, history, info and content hash, and exports to every format the
//!   kind offers ([`Document::export`], [`ExportFormat::of`]).
//! - Baking ([`BakeSource`], [`ChunkBaker`], [`BakeInputs`]): what a baked
//!   chunk of each kind contains, the same bytes whatever the thread count
//!   or order. [`BakeSource::plan`] turns a region into chunk keys
//!   ([`BakePlan`], split into parts across processes or machines), a
//!   [`ChunkBaker`] meshes one key into a
//!   [`BakedChunk`](isoterra_store::BakedChunk), and [`BakeInputs`] gives
//!   each chunk the input stamp its row records, so a bake after an edit
//!   redoes only the chunks the edit can have changed. The store keeps the
//!   rows as bytes; [`Document::bake_source`] is a document's world as a
//!   bake reads it.
//! - [`schema`]: the tools of every kind with their parameters, ranges,
//!   defaults and colours, and the stroke limits. Validation reads it, the
//!   editor sends it to the browser, the command line takes its defaults.
//!
//! The layer sits above `isoterra-store` and `isoterra-export` and below the
//! apps. It does no I/O of its own beyond what the store does.

mod bake;
mod create;
mod document;
mod erode;
mod error;
mod export;
mod heightmap;
mod kind;
mod map;
mod per_kind;
mod preview;
mod recipe;
mod recipe_fields;
mod run;
pub mod schema;
mod side2d;
mod stroke;
mod voxel;

pub use bake::{BakeInputBox, BakeInputs, BakePlan, ChunkBaker, MAX_BAKE_CHUNKS, bake_chunks};
pub use create::{KindDefaults, MAP_SIZE, MAX_SEED, NewWorld, SIDE2D_SIZE};
pub use document::{Committed, Document, GroundHit, History, OPEN_TRIES, StrokeId};
pub use erode::{ErodeSpec, ErodedRegion, MAX_ERODE_NODES, erode_region};
pub use error::KindError;
pub use export::{
    ExportFile, ExportFormat, ExportRequest, Exported, FileRole, LodRings, MAX_EXPORT_CHUNKS,
    MAX_EXPORT_NODES, StreamedExport,
};
pub use heightmap::{HeightmapRecipe, NoiseRecipe};
pub use isoterra_store::Followed;
pub use kind::{AnyDocument, BakeSource, RecipeParams, Stamp, WorldKind, WorldParams};
pub use map::MapRecipe;
pub use preview::{MAX_PREVIEW_PIXELS, Preview, PreviewOptions, preview};
pub use recipe::{MAX_RECIPE_BYTES, MAX_RECIPE_NAME, RECIPE_VERSION, Recipe};
pub use recipe_fields::{Bounds, FieldControl, RecipeField, recipe_fields};
pub use side2d::Side2dRecipe;
pub use stroke::{StrokeSpec, Template, checked_point};
pub use voxel::{VOXEL_RINGS_CHUNKS, VoxelRecipe};
