//! Interchange for the `map` world kind: Tiled JSON import and export, layer
//! textures with a JSON sidecar and their runtime loader, `.glb` and OBJ of the map
//! meshes and the pathing grid as an image.

mod glb;
mod pathing_png;
mod png_layers;
mod tiled;
mod tmx;

pub use glb::{
    CLIFF_COLOR, MAP_EXPORT_BAND_CELLS, MAP_PALETTE, MAP_TEXTURE_NAMES, WATER_COLOR,
    export_map_glb, export_map_mesh_glb, export_map_mesh_obj, export_map_obj, splat_color,
    write_map_glb, write_map_glb_in_bands, write_map_obj, write_map_obj_in_bands,
};
pub use pathing_png::{export_pathing_png, pathing_color};
pub use png_layers::{
    PngLayers, PngLayersInfo, PngLayersMesh, export_png_layers, load_png_layers, quantize_for_png,
    read_png_layers_sidecar,
};
pub use tiled::{
    CELLS_PER_TILE_PROPERTY, MAX_TILESET_IMAGE_TILE, TiledEncoding, TiledExport, TiledFiles,
    TiledImport, TiledLayer, TiledTiles, export_tiled, export_tiled_tmx, import_tiled,
    import_tiled_with, read_tiled_layer, tiled_cells_per_tile, tiled_tileset_png,
};
