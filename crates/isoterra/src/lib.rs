//! # isoterra
//!
//! Terrain described by a density field: generate it from noise, edit it with
//! brushes and undo, mesh it (marching squares, marching cubes, heightmap LOD
//! chunks, cliff maps), build colliders, stream chunks around viewers, save it
//! to one SQLite file and export it (PNG, SVG, collider JSON, glb, OBJ, PLY,
//! 16-bit heightmaps, Tiled maps).
//!
//! Four world kinds share the field, brushes, store and exporters:
//! `side2d` (side-view destructible ground), `map` (a top-down map with cliff
//! levels, ramps, water, texture paint and pathing), `heightmap` (endless
//! ground with LOD chunks and sculpting) and `voxel` (endless 3D density with
//! caves and overhangs).
//!
//! This crate only re-exports the workspace's crates so that one dependency
//! gives all of them:
//!
//! | module | crate | what it holds |
//! |---|---|---|
//! | [`field`]  | `isoterra-field`  | `Field2`/`Field3`, quantization, materials, noise, height and density generators, erosion |
//! | [`mesh`]   | `isoterra-mesh`   | marching squares, marching cubes with LOD transition cells, heightmap LOD chunks, the map (cliff) mesher, contour joining, simplification |
//! | [`world`]  | `isoterra-world`  | the side2d, map, heightmap and voxel worlds: chunks, brushes, edits, queries, colliders, streaming |
//! | [`store`]  | `isoterra-store`  | the world file (SQLite), an in-memory store, chunk codec, stroke log, baked rows, one document per kind over either |
//! | [`export`] | `isoterra-export` | PNG, SVG, collider JSON, glb, OBJ, PLY, PNG16/R16, Tiled JSON/TMX, map layer PNGs, `.npy` input |
//! | [`kind`]   | `isoterra-kind`   | one document API over every world kind: create, open, stroke, undo, export, bake, tool schema |
//!
//! Conventions shared by every crate: a node is solid when `value >= iso`
//! (default `iso = 0`, positive inside); fields are corner-sampled, row-major,
//! x fastest; 2D axes are x right, y up; contours run counter-clockwise around
//! solid and clockwise around holes.
//!
//! # Any kind, one API
//!
//! [`kind::Document`] opens a world file of any kind and does what every
//! program needs with it, written once: strokes drawn live or in one call,
//! undo and redo, history, content hashes, exports to every format of the
//! kind, the bake source, and the tool schema (tools, parameters, ranges,
//! defaults) that validates strokes. The command line and the editor are
//! thin layers over it.
//!
//! ```no_run
//! use isoterra::kind::{Document, ExportFormat, ExportRequest, NewWorld, StrokeSpec, WorldKind};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut doc = Document::create("island.isoterra", &NewWorld::new(WorldKind::Map).with_seed(4))?;
//! // A cliff one level up, dragged from (40, 40) to (80, 40) in world units.
//! let spec = StrokeSpec::new("cliff-up", 6.0);
//! doc.stroke(&spec, &[[40.0, 0.0, 40.0], [80.0, 0.0, 40.0]])?;
//! doc.undo()?;
//! let glb = doc.export(&ExportRequest::new(ExportFormat::Glb))?;
//! std::fs::write("island.glb", &glb.main().bytes)?;
//! # Ok(())
//! # }
//! ```
//!
//! # Adding a kind
//!
//! A kind is one folder or file per layer, each beside the four that exist,
//! and one line or one variant in a registry per layer:
//!
//! 1. **World** (`isoterra-world/src/<kind>/`): parameters, brush and tool
//!    types, the edit (a sparse before/after delta), the world with
//!    `apply_brush`/`apply_edit`, dirty tracking and meshing calls; re-export
//!    them from the crate root (`lib.rs`). Algorithms it needs and the
//!    others lack go in `isoterra-field` or `isoterra-mesh`.
//! 2. **Store** (`isoterra-store/src/<kind>_document.rs`): an `EditKind`
//!    (encode, decode, apply, chunk rows of an edit) and a document over the
//!    shared `DocumentCore`, which gives it strokes, undo, redo and
//!    durability; a `*_KIND` name and format version, re-exported from
//!    `lib.rs`.
//! 3. **Kind layer** (`isoterra-kind/src/<kind>/`): the kind's facts
//!    (`KindSpec`: defaults, presets, new-world parameters, tools, shapes,
//!    limits, export formats and file names), its document operations
//!    (`TypedDocument`: templates, stamps, previews, commits, history,
//!    exports, ground queries), its recipe and recipe fields (`recipe.rs`)
//!    and what a baked chunk is (`bake.rs`, `BakeWorld`). Then one variant
//!    in each enum of `kind.rs`, the file that lists the kinds (`WorldKind`,
//!    `AnyDocument`, `Stamp`, `Preview`, `WorldParams`, `RecipeParams`,
//!    `BakeSource`), and its `mod` line in `lib.rs`. The generic code
//!    (`Document`, exports, the schema, recipes, bakes) calls the traits and
//!    does not change.
//! 4. **Editor** (`isoterra-editor/src/kinds/<kind>.rs`): what the browser
//!    needs — the world description, the chunk frames and their colours —
//!    and how its chunks are meshed and sent (`Meshing`: the world's
//!    rebuild queue for a bounded kind, the shared stream for an endless
//!    one); one arm in `kinds/mod.rs` (`meshing`, `world_json`), a frame
//!    kind id in `frame.rs`, and drawing in `web/`.
//! 5. **Command line**: the `new` summary line (`commands/new.rs`).
//!    `--kind`, typed points, tools, parameters, exports, recipes and their
//!    checks come from the kind layer.
//! 6. **Engine plugin** (`isoterra-bevy`), to show the kind in a game: how
//!    its chunks become meshes and colliders (`plugin.rs`, `io.rs`).
//!
//! # Features
//!
//! * `parallel` (default): multi-threaded chunk building and the
//!   `StreamScheduler`, on rayon, in every crate that has them. Without it
//!   the work runs on the calling thread, `StreamScheduler` is absent and
//!   rayon is not a dependency.
//! * `parry2d`: parry2d shapes from collider polylines
//!   (`world::parry_polylines`).
//!
//! ```no_run
//! use isoterra::prelude::*;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A 256 x 128 cell side-view world with hills and caves.
//! let generator = Side2dGen::DEFAULT.with_preset(Side2dPreset::Hills).with_seed(7);
//! let params = Side2dParams::DEFAULT.with_generator(generator);
//! let mut world = Side2dWorld::generate(&params)?;
//!
//! // Dig a round hole and rebuild the meshes of the chunks it touched.
//! let edit = world.apply_brush(&Side2dBrush::new(Side2dTool::Dig, [128.0, 90.0], 8.0))?;
//! world.rebuild(None);
//! println!("changed {} nodes", edit.nodes.len());
//!
//! // Undo restores the exact bytes.
//! world.apply_edit(&edit, EditDirection::Backward)?;
//! # Ok(())
//! # }
//! ```

pub use isoterra_export as export;
pub use isoterra_field as field;
pub use isoterra_kind as kind;
pub use isoterra_mesh as mesh;
pub use isoterra_store as store;
pub use isoterra_world as world;

/// The names most programs need.
pub mod prelude {
    pub use isoterra_field::{
        Field2, Field3, HeightGen, HeightParams, HeightPreset, MapLayers, Material, MaterialGrid,
        MaterialTable, NodeRect, Side2dGen, Side2dPreset, VoxelGen, VoxelPreset,
    };
    pub use isoterra_mesh::{
        CellBox, CellRect, ContourJoiner, CubesOptions, CubesOutput, FillMesh, HeightmapMesh,
        HeightmapMesher, MapMeshOptions, MapMeshOutput, MapMesher, MarchingCubes, MarchingSquares,
        Polyline, Segments, SquaresOptions, SquaresOutput,
    };
    pub use isoterra_store::{
        HeightmapDocument, MapDocument, MemoryStore, Side2dDocument, VoxelDocument, WorldFile,
    };
    #[cfg(feature = "parallel")]
    pub use isoterra_world::StreamScheduler;
    pub use isoterra_world::{
        EditDirection, HeightBrush, HeightTool, HeightmapParams, HeightmapWorld, MapBrush,
        MapParams, MapStroke, MapTool, MapWorld, Side2dBrush, Side2dBrushShape, Side2dEdit,
        Side2dParams, Side2dStorage, Side2dTool, Side2dWorld, StreamViewer, VoxelBrush,
        VoxelParams, VoxelTool, VoxelWorld,
    };
}

/// The README's library example, compiled as a doctest so it cannot rot.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
