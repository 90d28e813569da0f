//! `isoterra new`

use anyhow::{Context, bail};
use isoterra::field::{HeightParams, HeightPreset, Side2dGen, Side2dPreset, VoxelGen, VoxelPreset};
use isoterra::store::{HeightmapDocument, Side2dDocument, VoxelDocument};
use isoterra::world::{HeightmapParams, Side2dParams, VoxelParams};

use crate::args::{Kind, NewArgs};
use crate::commands::parse;

pub fn run(a: &NewArgs) -> anyhow::Result<()> {
    match a.kind {
        Kind::Map => super::map::new(a)?,
        Kind::Side2d => {
            let (w, h) = parse::size(&a.size)?;
            let preset: Side2dPreset = a.preset.as_deref().unwrap_or("hills").parse()?;
            let params = side2d_params(a.seed, w, h, preset, a.chunk.unwrap_or(32), a.cell_size);
            let doc = Side2dDocument::create(&a.file, &params)
                .with_context(|| format!("cannot create {}", a.file.display()))?;
            let info = doc.info();
            println!(
                "created {} (side2d, {}x{} cells, seed {}, preset {}, {} chunks)",
                a.file.display(),
                w,
                h,
                a.seed,
                preset,
                info.chunks_total
            );
        }
        Kind::Voxel => {
            if a.cell_size != 1.0 {
                bail!("voxel worlds have one world unit per cell; --cell-size does not apply");
            }
            let preset: VoxelPreset = a.preset.as_deref().unwrap_or("caves").parse()?;
            let params = VoxelParams::DEFAULT
                .with_generator(VoxelGen::new(preset, a.seed))
                .with_chunk_cells(a.chunk.unwrap_or(32));
            VoxelDocument::create(&a.file, &params)
                .with_context(|| format!("cannot create {}", a.file.display()))?;
            println!(
                "created {} (voxel, endless, seed {}, preset {}, chunks of {}^3 cells)",
                a.file.display(),
                a.seed,
                preset,
                a.chunk.unwrap_or(32)
            );
        }
        Kind::Heightmap => {
            let name = a.preset.as_deref().unwrap_or("hills");
            let params = heightmap_params(a.seed, name, a.chunk.unwrap_or(32), a.cell_size)?;
            let doc = HeightmapDocument::create(&a.file, &params)
                .with_context(|| format!("cannot create {}", a.file.display()))?;
            let [lo, hi] = doc.info().height_range;
            println!(
                "created {} (heightmap, endless, seed {}, preset {name}, chunks of {} cells, heights {lo}..{hi})",
                a.file.display(),
                a.seed,
                a.chunk.unwrap_or(32)
            );
        }
    }
    Ok(())
}

/// Heightmap parameters for a preset name (`hills`, `mountains`, `islands`).
pub fn heightmap_params(
    seed: u64,
    preset: &str,
    chunk: u32,
    cell_size: f32,
) -> anyhow::Result<HeightmapParams> {
    let preset = HeightPreset::from_name(preset).with_context(|| {
        format!("unknown heightmap preset `{preset}`; valid presets: hills, mountains, islands")
    })?;
    Ok(HeightmapParams::DEFAULT
        .with_generator(HeightParams::preset(preset))
        .with_seed(seed)
        .with_chunk_cells(chunk)
        .with_cell_size(cell_size))
}

pub fn side2d_params(
    seed: u64,
    width: u32,
    height: u32,
    preset: Side2dPreset,
    chunk: u32,
    cell_size: f32,
) -> Side2dParams {
    let generator = Side2dGen::DEFAULT
        .with_preset(preset)
        .with_seed(seed)
        .with_width_cells(width)
        .with_height_cells(height)
        .with_cell_size(cell_size);
    Side2dParams::DEFAULT
        .with_generator(generator)
        .with_chunk_cells(chunk)
}
