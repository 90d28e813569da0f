//! `isoterra new`

use anyhow::Context;
use isoterra::field::Side2dPreset;
use isoterra::kind::{AnyDocument, Document, NewWorld, WorldKind};
use isoterra::store::{ChunkStore, PgStore, is_postgres_url, redact_url};
use isoterra::world::Side2dParams;

use crate::args::{GeneratorArgs, NewArgs};
use crate::commands::parse;

/// The new world the generator flags describe (the recipe file read and
/// checked).
pub fn new_world(g: &GeneratorArgs, chunk: Option<u32>) -> anyhow::Result<NewWorld> {
    let size = match &g.size {
        Some(text) => {
            let (w, h) = parse::size(text)?;
            Some([w, h])
        }
        None => None,
    };
    let recipe = match &g.recipe {
        Some(path) => Some(super::recipe::read(path)?),
        None => None,
    };
    Ok(NewWorld {
        kind: g.kind.0,
        seed: g.seed,
        size,
        preset: g.preset.clone(),
        recipe,
        chunk,
        cell_size: Some(g.cell_size),
    })
}

pub fn run(a: &NewArgs) -> anyhow::Result<()> {
    let new = new_world(&a.generator, a.chunk)?;
    let file = redact_url(&a.file.display().to_string());
    let cannot = || format!("cannot create {file}");
    match a.file.to_str().filter(|l| is_postgres_url(l)) {
        Some(url) => {
            let store = PgStore::open(url).with_context(cannot)?;
            let doc = Document::create_in(store, &new).with_context(cannot)?;
            created(&doc, &new, &file);
        }
        None => {
            let doc = Document::create(&a.file, &new).with_context(cannot)?;
            created(&doc, &new, &file);
        }
    }
    Ok(())
}

/// The line `new` prints about the world it made.
fn created<S: ChunkStore>(doc: &Document<S>, new: &NewWorld, file: &str) {
    let kind = new.kind;
    let seed = new.seed;
    match doc.typed() {
        AnyDocument::Side2d(d) => {
            let info = d.info();
            println!(
                "created {file} (side2d, {}x{} cells, seed {seed}, preset {}, {} chunks)",
                info.width_cells, info.height_cells, info.preset, info.chunks_total
            );
        }
        AnyDocument::Voxel(d) => {
            let info = d.info();
            println!(
                "created {file} (voxel, endless, seed {seed}, preset {}, chunks of {}^3 cells)",
                info.preset,
                d.params().chunk_cells
            );
        }
        AnyDocument::Heightmap(d) => {
            let [lo, hi] = d.info().height_range;
            let preset = match &new.recipe {
                Some(r) => format!("recipe {}", r.name.as_deref().unwrap_or("(unnamed)")),
                None => format!(
                    "preset {}",
                    new.preset
                        .as_deref()
                        .unwrap_or(NewWorld::defaults(kind).preset)
                ),
            };
            println!(
                "created {file} (heightmap, endless, seed {seed}, {preset}, chunks of {} cells, heights {lo}..{hi})",
                d.params().chunk_cells
            );
        }
        AnyDocument::Map(d) => {
            let info = d.info();
            let p = d.params();
            println!(
                "created {file} (map, {}x{} cells, seed {seed}, preset {}, {}x{} chunks)",
                p.width_cells,
                p.depth_cells,
                p.preset.name(),
                info.chunks[0],
                info.chunks[1]
            );
        }
    }
}

/// Side-view parameters of a seed, size and preset (the bench and demo
/// worlds), through the kind layer's checks and defaults.
pub fn side2d_params(
    seed: u64,
    width: u32,
    height: u32,
    preset: Side2dPreset,
    chunk: u32,
    cell_size: f32,
) -> anyhow::Result<Side2dParams> {
    let new = NewWorld {
        kind: WorldKind::Side2d,
        seed,
        size: Some([width, height]),
        preset: Some(preset.to_string()),
        recipe: None,
        chunk: Some(chunk),
        cell_size: Some(cell_size),
    };
    match new.params()? {
        isoterra::kind::WorldParams::Side2d(p) => Ok(p),
        other => anyhow::bail!("expected side2d parameters, got {:?}", other.kind()),
    }
}
