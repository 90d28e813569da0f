//! The side view's preview: the whole world, as the PNG export draws it
//! (materials, sky, cave background, grass rim), scaled to fit.

use isoterra_export::{PngOptions, export_side2d_png};
use isoterra_field::{MaterialTable, generate_side2d};

use crate::preview::Preview;
use crate::{KindError, WorldParams};

/// The preview of `params`, `n` pixels on its longest side.
pub(crate) fn preview(params: &WorldParams, n: u32) -> Result<Preview, KindError> {
    let WorldParams::Side2d(p) = params else {
        return Err(crate::per_kind::misfit());
    };
    let g = &p.generator;
    let (field, materials) = generate_side2d(g)?;
    let cells = g.width_cells.max(g.height_cells) as f32;
    let options = PngOptions::DEFAULT
        .with_iso(p.iso)
        .with_draw_contours(false)
        .with_pixels_per_cell(n as f32 / cells);
    let png = export_side2d_png(
        &field,
        Some(&materials),
        &MaterialTable::side2d_default(),
        &[],
        &options,
    )?;
    let (_, width, height) = options.image_size(g.width_cells, g.height_cells)?;
    Ok(Preview {
        png,
        width,
        height,
        area: g.width_cells as f32 * g.cell_size,
    })
}
