//! Meshers for isoterra, one family per world kind:
//!
//! * marching squares for `side2d` (fill mesh, contour segments, chaining,
//!   simplification, edge strips);
//! * marching cubes for `voxel` ([`MarchingCubes`]: welded, watertight
//!   isosurfaces of 3D grids) with LOD transition cells between chunks of
//!   different levels of detail ([`LodMesher`]);
//! * heightmap chunk meshes with levels of detail, stitched seams, skirts,
//!   morph factors and heightfield colliders for `heightmap`
//!   ([`HeightmapMesher`]);
//! * the one-pass cliff mesher of `map` worlds: terraced ground, cliff walls,
//!   ramps, chasms and water ([`MapMesher`], in [`map`]).
//!
//! Meshers are structs that own scratch buffers and are reused across chunks.
//! Output goes to plain arrays (`Vec<[f32; 3]>`, `Vec<u32>`). This crate does no I/O.
//!
//! # Marching squares at a glance
//!
//! * [`MarchingSquares::mesh`] turns a rectangle of cells of a
//!   [`Field2`](isoterra_field::Field2) into a fill mesh (welded, CCW, normals `+z`,
//!   UVs from world position, optional per-material submeshes) and directed
//!   contour segments (solid on the left, each point with a global [`EdgeKey`]).
//! * [`ContourJoiner::join`] chains segments of one or many chunks into
//!   [`Polyline`]s by key.
//! * [`ContourTracer::contour_lines`] is the fast path when only joined contour
//!   lines are wanted.
//! * [`simplify_rdp`] / [`simplify_greedy`] thin polylines within a tolerance;
//!   [`edge_strip`] builds a rim mesh along them.
//!
//! The conventions (sign, cells, interpolation, saddles, seams) are written down
//! in the documentation of [`MarchingSquares`].

use isoterra_field::huge_pages;
mod cache;
mod cases;
mod cells;
mod contour;
mod cubes;
mod error;
mod heightmap;
mod key;
pub mod map;
mod scan;
mod simplify;
mod squares;
mod strip;
mod tracer;
#[cfg(feature = "parallel")]
mod tracer_bands;

pub use cases::centre_is_solid;
pub use cells::{CellGrid, CellRect};
pub use contour::{ContourJoiner, Polyline, signed_area};
pub use cubes::{
    CellBox, CubesOptions, CubesOutput, LodChunkInput, LodMesher, MAX_LOD, MAX_LOD_CELLS,
    MarchingCubes,
};
pub use error::MeshError;
pub use heightmap::{
    ChunkSide, HeightChunkInput, HeightfieldCollider, HeightmapMesh, HeightmapMesher,
    HeightmapOptions, morph_blend, sample_chunk_heights,
};
pub use key::{EdgeKey, KeyKind};
pub use map::{MapMeshBuffers, MapMeshOptions, MapMeshOutput, MapMesher, WaterBuffers};
pub use simplify::{Simplifier, simplify_greedy, simplify_rdp};
pub use squares::{
    FillMesh, MarchingSquares, Segments, SquaresOptions, SquaresOutput, StripMesh, Submesh,
};
pub use strip::{StripBuilder, edge_strip};
pub use tracer::ContourTracer;
