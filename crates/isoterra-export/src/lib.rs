//! Exporters and importers for isoterra: PNG pictures and grayscale images,
//! SVG drawings and collider JSON of contour polylines, and `.npy` arrays as
//! density fields.
//!
//! Coordinates follow the isoterra conventions: world x right and y up, so
//! image formats whose y points down (PNG, SVG) are flipped on the way out.

mod error;
mod gltf;
mod json;
mod npy;
mod obj;
mod ply;
mod raster;
mod svg;

pub use error::ExportError;
pub use gltf::{GlbMesh, write_glb};
pub use json::{parse_polylines_json, polylines_json};
pub use npy::{read_npy, read_npy_file, read_npy3, read_npy3_file, write_npy_f32};
pub use obj::write_obj;
pub use ply::write_ply;
pub use raster::{MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE, PngOptions, field_png_gray, render_side2d_png};
pub use svg::{SvgOptions, polylines_svg};
