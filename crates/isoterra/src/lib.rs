//! # isoterra
//!
//! Terrain described by a density field: generate it from noise, edit it with
//! brushes and undo, mesh it with marching squares, build colliders, save it to
//! one SQLite file and export it to PNG, SVG and collider JSON.
//!
//! This crate only re-exports the workspace's crates so that one dependency
//! gives all of them:
//!
//! | module | crate | what it holds |
//! |---|---|---|
//! | [`field`]  | `isoterra-field`  | `Field2`, quantization, materials, noise, generators |
//! | [`mesh`]   | `isoterra-mesh`   | marching squares, contour joining, simplification |
//! | [`world`]  | `isoterra-world`  | the chunked side-view world, brushes, edits, queries |
//! | [`store`]  | `isoterra-store`  | the world file (SQLite), chunk codec, stroke log |
//! | [`export`] | `isoterra-export` | PNG, SVG, collider JSON, `.npy` input |
//!
//! Conventions shared by every crate: a node is solid when `value >= iso`
//! (default `iso = 0`, positive inside); fields are corner-sampled, row-major,
//! x fastest; 2D axes are x right, y up; contours run counter-clockwise around
//! solid and clockwise around holes.
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
//! let edit = world.apply_brush(&Brush::new(BrushTool::Dig, [128.0, 90.0], 8.0))?;
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
pub use isoterra_mesh as mesh;
pub use isoterra_store as store;
pub use isoterra_world as world;

/// The names most programs need.
pub mod prelude {
    pub use isoterra_field::{
        Field2, Material, MaterialGrid, MaterialTable, NodeRect, Side2dGen, Side2dPreset,
    };
    pub use isoterra_mesh::{
        CellRect, ContourJoiner, FillMesh, MarchingSquares, Polyline, Segments, SquaresOptions,
        SquaresOutput,
    };
    pub use isoterra_store::{Side2dDocument, WorldFile};
    pub use isoterra_world::{
        Brush, BrushShape, BrushTool, Edit, EditDirection, Side2dParams, Side2dWorld,
    };
}

/// The README's library example, compiled as a doctest so it cannot rot.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
