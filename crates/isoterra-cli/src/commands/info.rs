//! `isoterra info`

use anyhow::Context;
use isoterra::store::Side2dDocument;

use crate::args::InfoArgs;

pub fn run(a: &InfoArgs) -> anyhow::Result<()> {
    let doc = Side2dDocument::open(&a.file)
        .with_context(|| format!("cannot open {}", a.file.display()))?;
    let info = doc.info();
    if a.json {
        let mut value = serde_json::to_value(&info)?;
        if a.hash {
            value["hash"] = serde_json::Value::String(doc.content_hash());
        }
        println!("{}", serde_json::to_string(&value)?);
        return Ok(());
    }
    println!("file:          {}", a.file.display());
    println!("kind:          {}", info.kind);
    println!(
        "size:          {}x{} cells",
        info.width_cells, info.height_cells
    );
    println!("seed:          {}", info.seed);
    println!("preset:        {}", info.preset);
    println!(
        "chunks:        {} ({}x{} cells each), {} stored",
        info.chunks_total, info.chunk_cells, info.chunk_cells, info.chunks_stored
    );
    println!("strokes:       {}", info.strokes_total);
    println!(
        "undo position: {} of {}{}",
        info.undo_position,
        info.strokes_total,
        if info.redo_available {
            " (redo available)"
        } else {
            ""
        }
    );
    if a.hash {
        println!("{}", doc.content_hash());
    }
    Ok(())
}
