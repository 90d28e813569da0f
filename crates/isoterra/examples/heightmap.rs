//! A heightmap world end to end: create a world file, raise a hill, undo
//! and redo it, and export a region as a 16-bit PNG heightmap.
//!
//! ```text
//! cargo run -p isoterra --example heightmap
//! ```
//!
//! Everything goes to a new folder in the temporary directory, whose path
//! is printed.

use std::path::PathBuf;

use isoterra::export::export_png16;
use isoterra::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = example_dir("heightmap")?;
    let file = dir.join("land.isoterra");

    // Endless rolling hills in chunks of 32 x 32 cells of one world unit.
    let params = HeightmapParams::DEFAULT
        .with_generator(HeightParams::preset(HeightPreset::Hills))
        .with_seed(3)
        .with_chunk_cells(32);
    let mut doc = HeightmapDocument::create(&file, &params)?;
    let [lo, hi] = doc.info().height_range;
    println!("created {} (heights {lo}..{hi})", file.display());
    let fresh = doc.content_hash();

    // Raise a hill across four chunks; the stroke is in the file when
    // `stroke` returns.
    let raise = HeightBrush::new(HeightTool::Raise, [32.0, 32.0], 12.0);
    let outcome = doc.stroke(&raise)?;
    let id = outcome.id.ok_or("the brush changed nothing")?;
    println!(
        "stroke {id}: raised {} nodes, {} chunks to remesh",
        outcome.changed_nodes,
        outcome.dirty_chunks.len()
    );
    let raised = doc.content_hash();

    // Undo gives the generated ground back exactly; redo raises it again.
    doc.undo()?.ok_or("nothing to undo")?;
    assert_eq!(doc.content_hash(), fresh);
    doc.redo()?.ok_or("nothing to redo")?;
    assert_eq!(doc.content_hash(), raised);
    println!("undid and redid stroke {id} (content hash {raised})");

    // Export the 65 x 65 nodes of [0, 64] x [0, 64] (both end rows
    // included, so neighbouring tiles share a border) through the world's
    // fixed height range, so every tile uses the same codes.
    let (first, dims) = ([0i64, 0], [65u32, 65]);
    let mut heights = Vec::new();
    doc.world().region_heights(first, dims, &mut heights)?;
    let png = export_png16(&heights, dims, [lo, hi])?;
    let png_path = dir.join("tile.png");
    std::fs::write(&png_path, &png)?;
    let top = heights.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    println!(
        "wrote {} ({}x{} nodes, highest {top:.2}, {} bytes)",
        png_path.display(),
        dims[0],
        dims[1],
        png.len()
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
