//! Density fields for isoterra.
//!
//! A field is a corner-sampled grid of `f32` densities: `W x H` nodes make
//! `(W-1) x (H-1)` cells. Storage is row-major, x fastest. Node `(x, y)` sits at
//! `origin + (x, y) * cell_size`. A node is *solid* when `value >= iso`
//! (default `iso = 0.0`, positive inside).
//!
//! This crate does no I/O.

mod error;
mod field2;
mod material;
mod quantize;

pub use error::FieldError;
pub use field2::{Field2, NodeRect};
pub use material::{Material, MaterialGrid, MaterialTable};
pub use quantize::{Quantizer, Quantizer16, Quantizer8};
