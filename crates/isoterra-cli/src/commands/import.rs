//! `isoterra import`: a heightmap image becomes a heightmap world.

use anyhow::{Context, bail};
use isoterra::export::{HeightImage, import_exr, import_png8, import_png16, import_r16};
use isoterra::store::HeightmapDocument;
use isoterra::world::{HeightExtent, HeightOutside};

use crate::args::{ImportArgs, Outside};
use crate::commands::parse;

pub fn run(a: &ImportArgs) -> anyhow::Result<()> {
    if super::map::is_tiled(&a.input) {
        return super::map::import(a);
    }
    let tiled_only = [
        ("--layer", a.layer.is_some()),
        ("--cells-per-tile", a.cells_per_tile.is_some()),
        ("--solid-property", a.solid_property.is_some()),
        ("--solid-gids", a.solid_gids.is_some()),
        ("--level-property", a.level_property.is_some()),
        ("--level-gids", a.level_gids.is_some()),
    ];
    if let Some((flag, _)) = tiled_only.iter().find(|(_, given)| *given) {
        bail!("{flag} applies to Tiled maps (.tmj, .json, .tmx), not to heightmap images");
    }
    let range = a.range.as_deref().map(parse::range).transpose()?;
    let ext = a
        .input
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if !matches!(ext.as_str(), "r16" | "raw" | "png" | "exr") {
        bail!(
            "cannot import `.{ext}` files; give a .png (16- or 8-bit grayscale), .r16 or .exr (float)"
        );
    }
    let bytes = super::read_input(&a.input, super::MAX_IMAGE_INPUT)?;
    let image: HeightImage = match ext.as_str() {
        "r16" | "raw" => {
            let range = range.context("an R16 file records no range: give --range MIN,MAX")?;
            import_r16(&bytes, None, range)?
        }
        "exr" => {
            let mut img = import_exr(&bytes)?;
            if let Some(r) = range {
                img.range = r;
                img.range_from_file = false;
            }
            img
        }
        "png" => match import_png16(&bytes, range) {
            Ok(img) => img,
            Err(e16) => import_png8(&bytes, range)
                .map_err(|_| e16)
                .context("the PNG is neither 16-bit nor 8-bit grayscale")?,
        },
        other => {
            bail!("cannot import `.{other}` files; give a .png, .r16 or .exr")
        }
    };
    let new = isoterra::kind::NewWorld {
        chunk: Some(64),
        cell_size: Some(a.cell_size),
        ..isoterra::kind::NewWorld::new(isoterra::kind::WorldKind::Heightmap)
    };
    let isoterra::kind::WorldParams::Heightmap(params) = new.params()? else {
        bail!("expected heightmap parameters");
    };
    let outside = match a.outside.unwrap_or(Outside::Edge) {
        Outside::Edge => HeightOutside::Edge,
        Outside::Generated => HeightOutside::Generated,
    };
    let extent = HeightExtent::of_heights([0, 0], image.dims, image.range, outside, &image.heights)
        .context("cannot record the image's extent")?;
    let params = params.with_extent(Some(extent));
    super::create_in_place(&a.out, |path| {
        let doc = HeightmapDocument::create_from_heights(
            path,
            &params,
            [0, 0],
            image.dims,
            &image.heights,
        )
        .with_context(|| format!("cannot create {}", a.out.display()))?;
        doc.close()
            .with_context(|| format!("cannot write {}", a.out.display()))
    })?;
    println!(
        "imported {} ({}x{} samples, heights {}..{}{}, outside: {}) into {}",
        a.input.display(),
        image.dims[0],
        image.dims[1],
        image.range[0],
        image.range[1],
        if image.range_from_file {
            ", range from the file"
        } else {
            ""
        },
        outside.name(),
        a.out.display()
    );
    Ok(())
}
