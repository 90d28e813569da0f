//! A map world end to end: create a world file, raise a cliff, undo and
//! redo it, and export the map as glb and as a Tiled JSON map with a
//! pathing layer.
//!
//! ```text
//! cargo run -p isoterra --example map
//! ```
//!
//! Everything goes to a new folder in the temporary directory, whose path
//! is printed.

use std::path::PathBuf;

use isoterra::export::{TiledExport, export_map_glb, export_tiled};
use isoterra::prelude::*;
use isoterra::world::{PathingGrid, PathingRules, pathing_grid};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = example_dir("map")?;
    let file = dir.join("island.isoterra");

    // A 64 x 64 cell island in chunks of 32 x 32 cells.
    let params = MapParams::DEFAULT
        .with_size(64, 64)
        .with_seed(4)
        .with_chunk_cells(32);
    let mut doc = MapDocument::create(&file, &params)?;
    let info = doc.info();
    println!(
        "created {} ({}x{} chunks)",
        file.display(),
        info.chunks[0],
        info.chunks[1]
    );
    let fresh = doc.content_hash();

    // Raise the ground in the middle of the island one cliff level; the
    // stroke is in the file when `stroke` returns. Map brushes work in cells.
    let brush = MapBrush::new(MapTool::CliffUp, 6.0);
    let outcome = doc.stroke(&MapStroke::dab(brush, [32.0, 32.0]))?;
    let id = outcome.id.ok_or("the cliff changed nothing")?;
    println!(
        "stroke {id}: {} nodes changed, {} chunks to remesh",
        outcome.changed_nodes,
        outcome.dirty.len()
    );
    let raised = doc.content_hash();

    // Undo gives the generated map back exactly; redo raises it again.
    doc.undo()?.ok_or("nothing to undo")?;
    assert_eq!(doc.content_hash(), fresh);
    doc.redo()?.ok_or("nothing to redo")?;
    assert_eq!(doc.content_hash(), raised);
    println!("undid and redid stroke {id} (content hash {raised})");

    // The whole map as one glb, meshed with the map's own options.
    let layers = doc.world().layers();
    let glb = export_map_glb(layers, &doc.params().mesh)?;
    let glb_path = dir.join("island.glb");
    std::fs::write(&glb_path, &glb)?;
    println!("wrote {} ({} bytes)", glb_path.display(), glb.len());

    // A Tiled map with the cliff levels and where units can walk.
    let rules = PathingRules::DEFAULT.with_level_height(doc.params().mesh.level_height);
    let grid = pathing_grid(layers, &rules)?;
    let tiled = export_tiled(layers, Some(&grid), &TiledExport::DEFAULT)?;
    let tiled_path = dir.join("island.tiled.json");
    std::fs::write(&tiled_path, &tiled)?;
    println!(
        "wrote {} ({} bytes, {} of {} cells walkable)",
        tiled_path.display(),
        tiled.len(),
        grid.count(PathingGrid::WALK),
        params.width_cells * params.depth_cells
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
