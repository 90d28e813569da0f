//! The pathing grid as an 8-bit RGB PNG.

use isoterra_world::PathingGrid;

use crate::ExportError;

/// The colour of a combination of [`PathingGrid`] bits: each channel holds
/// two of them, so every one of the 32 combinations has its own colour.
///
/// * red: `160` when **not** walkable, `+ 80` for deep water;
/// * green: `160` when buildable, `+ 80` for shallow water;
/// * blue: `255` when **not** flyable.
///
/// Open land (walk, fly, build) is `(0, 160, 0)`, a cliff wall (fly only)
/// `(160, 0, 0)`, shallow water `(0, 80, 0)`, deep water `(240, 0, 0)`.
pub const fn pathing_color(bits: u8) -> [u8; 3] {
    let r = if bits & PathingGrid::WALK == 0 {
        160
    } else {
        0
    } + if bits & PathingGrid::DEEP_WATER != 0 {
        80
    } else {
        0
    };
    let g = if bits & PathingGrid::BUILD != 0 {
        160
    } else {
        0
    } + if bits & PathingGrid::SHALLOW_WATER != 0 {
        80
    } else {
        0
    };
    let b = if bits & PathingGrid::FLY == 0 { 255 } else { 0 };
    [r, g, b]
}

/// The pathing grid as an RGB PNG with one pixel per cell, pixel `(x, row)`
/// being cell `(x, z = row)`, coloured by [`pathing_color`].
///
/// Errors when the PNG encoder fails.
pub fn export_pathing_png(grid: &PathingGrid) -> Result<Vec<u8>, ExportError> {
    let data: Vec<u8> = grid
        .cells()
        .iter()
        .flat_map(|&b| pathing_color(b))
        .collect();
    rgb_png(grid.width_cells(), grid.depth_cells(), &data)
}

/// An 8-bit RGB PNG of `width x height` pixels, rows top down.
pub(crate) fn rgb_png(width: u32, height: u32, rgb: &[u8]) -> Result<Vec<u8>, ExportError> {
    let png_err = |e: png::EncodingError| ExportError::Png(e.to_string());
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Fast);
        let mut w = enc.write_header().map_err(png_err)?;
        w.write_image_data(rgb).map_err(png_err)?;
        w.finish().map_err(png_err)?;
    }
    Ok(out)
}
