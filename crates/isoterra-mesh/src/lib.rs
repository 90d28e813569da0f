//! Meshers for isoterra: marching squares today (fill mesh, contour segments,
//! chaining, simplification, edge strips), marching cubes and heightmap meshes later.
//!
//! Meshers are structs that own scratch buffers and are reused across chunks.
//! Output goes to plain arrays (`Vec<[f32; 3]>`, `Vec<u32>`). This crate does no I/O.

mod contour;
mod error;
mod squares;

pub use contour::{
    ContourJoiner, Polyline, signed_area, simplify_greedy, simplify_rdp,
};
pub use error::MeshError;
pub use squares::{
    CellRect, EdgeKey, FillMesh, MarchingSquares, Segments, SquaresOptions, SquaresOutput,
    StripMesh, Submesh, edge_strip,
};
