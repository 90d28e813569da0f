//! `isoterra new`

use anyhow::Context;
use isoterra::field::{Side2dGen, Side2dPreset};
use isoterra::store::Side2dDocument;
use isoterra::world::Side2dParams;

use crate::args::{Kind, NewArgs, Preset};
use crate::commands::parse;

pub fn run(a: &NewArgs) -> anyhow::Result<()> {
    let (w, h) = parse::size(&a.size)?;
    match a.kind {
        Kind::Side2d => {
            let params = side2d_params(a.seed, w, h, a.preset, a.chunk, a.cell_size);
            let doc = Side2dDocument::create(&a.file, &params)
                .with_context(|| format!("cannot create {}", a.file.display()))?;
            let info = doc.info();
            println!(
                "created {} (side2d, {}x{} cells, seed {}, preset {}, {} chunks)",
                a.file.display(),
                w,
                h,
                a.seed,
                preset(a.preset),
                info.chunks_total
            );
        }
    }
    Ok(())
}

pub fn preset(p: Preset) -> Side2dPreset {
    match p {
        Preset::Caves => Side2dPreset::Caves,
        Preset::Hills => Side2dPreset::Hills,
        Preset::Cellular => Side2dPreset::Cellular,
    }
}

pub fn side2d_params(
    seed: u64,
    width: u32,
    height: u32,
    p: Preset,
    chunk: u32,
    cell_size: f32,
) -> Side2dParams {
    let generator = Side2dGen::DEFAULT
        .with_preset(preset(p))
        .with_seed(seed)
        .with_width_cells(width)
        .with_height_cells(height)
        .with_cell_size(cell_size);
    Side2dParams::DEFAULT
        .with_generator(generator)
        .with_chunk_cells(chunk)
}
