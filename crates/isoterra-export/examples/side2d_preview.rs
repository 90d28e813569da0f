//! Renders a generated side-view world to a PNG.
//!
//! ```text
//! cargo run --release -p isoterra-export --example side2d_preview -- [PRESET] [SEED] [WIDTH] [HEIGHT] [OUT.png]
//! ```
//!
//! Defaults: hills, seed 1, 256 x 128 cells, `side2d_preview.png` in the
//! temporary directory. Prints the time each phase took.

use std::time::Instant;

use isoterra_export::{PngOptions, export_side2d_png};
use isoterra_field::{MaterialTable, Side2dGen, Side2dPreset, generate_side2d};
use isoterra_mesh::ContourTracer;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let preset: Side2dPreset = args
        .first()
        .map_or(Ok(Side2dPreset::Hills), |s| s.parse())?;
    let seed: u64 = args.get(1).map_or(Ok(1), |s| s.parse())?;
    let width: u32 = args.get(2).map_or(Ok(256), |s| s.parse())?;
    let height: u32 = args.get(3).map_or(Ok(128), |s| s.parse())?;
    let out = args.get(4).map_or_else(
        || std::env::temp_dir().join("side2d_preview.png"),
        std::path::PathBuf::from,
    );

    let spec = Side2dGen::DEFAULT
        .with_preset(preset)
        .with_seed(seed)
        .with_size(width, height);
    let t = Instant::now();
    let (field, materials) = generate_side2d(&spec)?;
    let gen_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let mut contours = Vec::new();
    ContourTracer::new().contour_lines(&field, 0.0, &mut contours)?;
    let contour_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let png = export_side2d_png(
        &field,
        Some(&materials),
        &MaterialTable::side2d_default(),
        &contours,
        &PngOptions::DEFAULT,
    )?;
    let png_ms = t.elapsed().as_secs_f64() * 1e3;
    std::fs::write(&out, png)?;
    eprintln!(
        "{preset} seed {seed} {width}x{height}: generate {gen_ms:.1} ms, contours {contour_ms:.1} ms ({} lines), png {png_ms:.1} ms -> {}",
        contours.len(),
        out.display()
    );
    Ok(())
}
