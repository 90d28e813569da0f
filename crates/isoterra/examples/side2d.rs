//! A side-view world end to end: create a world file, dig a hole, undo and
//! redo it, and export the result as a PNG.
//!
//! ```text
//! cargo run -p isoterra --example side2d
//! ```
//!
//! Everything goes to a new folder in the temporary directory, whose path
//! is printed.

use std::path::PathBuf;

use isoterra::export::{PngOptions, export_side2d_png};
use isoterra::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = example_dir("side2d")?;
    let file = dir.join("cave.isoterra");

    // A 256 x 128 cell world of hills, in chunks of 32 x 32 cells.
    let generator = Side2dGen::DEFAULT
        .with_preset(Side2dPreset::Hills)
        .with_seed(42)
        .with_width_cells(256)
        .with_height_cells(128);
    let params = Side2dParams::DEFAULT.with_generator(generator);
    let mut doc = Side2dDocument::create(&file, &params)?;
    let info = doc.info();
    println!(
        "created {} ({}x{} cells, {} chunks)",
        file.display(),
        info.width_cells,
        info.height_cells,
        info.chunks_total
    );
    let fresh = doc.content_hash();

    // Dig a round hole into the ground; the stroke is in the file when
    // `stroke` returns.
    let dig = Side2dBrush::new(Side2dTool::Dig, [128.0, 70.0], 16.0);
    let outcome = doc.stroke(&dig)?;
    let id = outcome.id.ok_or("the dig changed nothing")?;
    println!("stroke {id}: dug {} nodes", outcome.changed_nodes);
    let dug = doc.content_hash();

    // Undo gives the generated world back exactly; redo digs again.
    doc.undo()?.ok_or("nothing to undo")?;
    assert_eq!(doc.content_hash(), fresh);
    doc.redo()?.ok_or("nothing to redo")?;
    assert_eq!(doc.content_hash(), dug);
    println!("undid and redid stroke {id} (content hash {dug})");

    // Mesh the chunks the stroke touched, then draw the world with its
    // contour lines.
    let report = doc.rebuild();
    let world = doc.world();
    let contours = world.contours();
    let png = export_side2d_png(
        world.field(),
        Some(world.materials()),
        world.table(),
        &contours,
        &PngOptions::DEFAULT.with_pixels_per_cell(2.0),
    )?;
    let png_path = dir.join("cave.png");
    std::fs::write(&png_path, &png)?;
    println!(
        "rebuilt {} chunks; wrote {} ({} bytes, {} contours)",
        report.rebuilt,
        png_path.display(),
        png.len(),
        contours.len()
    );
    Ok(())
}

/// A new folder in the temporary directory for this run.
fn example_dir(kind: &str) -> std::io::Result<PathBuf> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!(
        "isoterra-example-{kind}-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
