//! Map worlds from Tiled maps: `isoterra import MAP.tmj --layer NAME -o FILE`.

use std::path::Path;

use anyhow::{Context, bail};
use isoterra::export::{TiledImport, import_tiled_with, tiled_cells_per_tile};
use isoterra::store::MapDocument;
use isoterra::world::{MapParams, MapPreset};

use crate::args::ImportArgs;
use crate::commands::parse;

/// Whether an import input is a Tiled JSON map.
pub fn is_tiled(input: &Path) -> bool {
    input
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .is_some_and(|e| e == "json" || e == "tmj" || e == "tmx")
}

/// `isoterra import MAP.tiled.json --layer NAME -o FILE`.
pub fn import(a: &ImportArgs) -> anyhow::Result<()> {
    if a.range.is_some() || a.outside.is_some() {
        bail!("--range and --outside apply to heightmap images, not to Tiled maps");
    }
    let bytes = super::read_input(&a.input, super::MAX_DOCUMENT_INPUT)?;
    let cells_per_tile = a
        .cells_per_tile
        .or_else(|| tiled_cells_per_tile(&bytes))
        .unwrap_or(TiledImport::DEFAULT.cells_per_tile);
    let mut options = TiledImport::DEFAULT
        .with_layer(a.layer.clone())
        .with_cells_per_tile(cells_per_tile);
    if let Some(p) = &a.solid_property {
        options = options.with_solid_property(p.clone());
    }
    if let Some(p) = &a.level_property {
        options = options.with_level_property(p.clone());
    }
    if let Some(list) = &a.solid_gids {
        options = options.with_solid_gids(parse::gid_list(list).context("--solid-gids")?);
    }
    if let Some(list) = &a.level_gids {
        options = options.with_level_gids(parse::gid_levels(list).context("--level-gids")?);
    }
    // External tilesets are read beside the map, as Tiled resolves them.
    let dir = a.input.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut files = |source: &str| -> Result<Vec<u8>, String> {
        let path = dir.join(source);
        super::read_input(&path, super::MAX_DOCUMENT_INPUT).map_err(|e| format!("{e:#}"))
    };
    let layers = import_tiled_with(&bytes, &options, &mut files)
        .with_context(|| format!("cannot import {}", a.input.display()))?;
    let (w, d) = (layers.width_cells(), layers.depth_cells());
    let mut params = MapParams::DEFAULT
        .with_size(w, d)
        .with_preset(MapPreset::Blank);
    params.mesh.cell_size = a.cell_size;
    super::create_in_place(&a.out, |path| {
        let doc = MapDocument::create_with_layers(path, &params, layers)
            .with_context(|| format!("cannot create {}", a.out.display()))?;
        doc.close()
            .with_context(|| format!("cannot write {}", a.out.display()))
    })?;
    println!(
        "imported {} ({}x{} cells) into {}",
        a.input.display(),
        w,
        d,
        a.out.display()
    );
    Ok(())
}
