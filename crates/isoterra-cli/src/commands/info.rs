//! `isoterra info`

use isoterra::kind::{AnyDocument, Document};
use isoterra::store::ChunkStore;
use isoterra::world::{PathingGrid, PathingRules, pathing_grid};

use crate::args::InfoArgs;
use crate::commands::edit::{open_world, with_world};
use isoterra::store::{BakeRun, PgBakeQueue, is_postgres_url, redact_url};

pub fn run(a: &InfoArgs) -> anyhow::Result<()> {
    // A world on a server also says how far its shared bakes have come.
    let runs = match a.file.to_str().filter(|l| is_postgres_url(l)) {
        Some(url) if !a.recipe => Some(PgBakeQueue::runs(url)?),
        _ => None,
    };
    with_world!(open_world(&a.file)?, doc => info_of(doc, a, runs.as_deref()))
}

fn info_of<S: ChunkStore>(
    doc: &Document<S>,
    a: &InfoArgs,
    runs: Option<&[BakeRun]>,
) -> anyhow::Result<()> {
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
        if let Some(runs) = runs {
            info["bake_runs"] = runs
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "run": r.run, "plan": r.plan, "chunks": r.chunks,
                        "jobs": r.jobs, "done": r.done, "created_ms": r.created_ms,
                    })
                })
                .collect();
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
    for r in runs.unwrap_or_default() {
        println!(
            "{:<width$} {} of {} jobs done ({} chunks): {} [run {}]",
            "bake run:", r.done, r.jobs, r.chunks, r.plan, r.run
        );
    }
    if let Some(hash) = hash {
        println!("{hash}");
    }
    Ok(())
}
