//! `isoterra info`

use isoterra::kind::{AnyDocument, Document};
use isoterra::store::ChunkStore;
use isoterra::world::{PathingGrid, PathingRules, pathing_grid};

use crate::args::InfoArgs;
use crate::commands::edit::{open_world, with_world};
use isoterra::store::redact_url;

pub fn run(a: &InfoArgs) -> anyhow::Result<()> {
    with_world!(open_world(&a.file)?, doc => info_of(doc, a))
}

fn info_of<S: ChunkStore>(doc: &Document<S>, a: &InfoArgs) -> anyhow::Result<()> {
    if a.recipe {
        print!("{}", doc.recipe().to_json_pretty());
        return Ok(());
    }
    let hash = if a.hash {
        Some(super::bake::stored_hash(doc)?)
    } else {
        None
    };
    let mut info = doc.info_json();
    // A map also says how much of it can be walked on and built on.
    if let AnyDocument::Map(d) = doc.typed() {
        let rules = PathingRules::DEFAULT.with_level_height(d.params().mesh.level_height);
        let grid = pathing_grid(d.world().layers(), &rules)?;
        info["walkable_cells"] = grid.count(PathingGrid::WALK).into();
        info["buildable_cells"] = grid.count(PathingGrid::BUILD).into();
    }
    if a.json {
        if let Some(hash) = hash {
            info["hash"] = serde_json::Value::String(hash);
        }
        println!("{}", serde_json::to_string(&info)?);
        return Ok(());
    }
    // Labels are padded to the longest of the kind's fields.
    let width = if matches!(doc.typed(), AnyDocument::Map(_)) {
        16
    } else {
        14
    };
    println!(
        "{:<width$} {}",
        "file:",
        redact_url(&a.file.display().to_string())
    );
    if let serde_json::Value::Object(map) = &info {
        for (k, v) in map {
            let v = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            println!("{:<width$} {v}", format!("{}:", k.replace('_', " ")));
        }
    }
    if let Some(hash) = hash {
        println!("{hash}");
    }
    Ok(())
}
