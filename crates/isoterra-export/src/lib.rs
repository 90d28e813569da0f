//! Exporters and importers for isoterra: PNG pictures and grayscale images,
//! SVG drawings and collider JSON of contour polylines, and `.npy` arrays as
//! density fields.
//!
//! Coordinates follow the isoterra conventions: world x right and y up, so
//! image formats whose y points down (PNG, SVG) are flipped on the way out.

mod error;
mod gltf;
mod heightmap_exr;
mod heightmap_io;
mod json;
mod map;
mod npy;
mod obj;
mod ply;
mod raster;
mod svg;
mod text;

pub use error::ExportError;
pub use gltf::{
    GlbAttribute, GlbAttributeData, GlbMaterial, GlbMesh, GlbPrimitive, export_glb, write_glb,
};
pub use heightmap_exr::{export_exr, import_exr};
pub use heightmap_io::{
    HeightCodes, HeightImage, RANGE_KEYWORD, check_height_range, code8_to_height, code16_to_height,
    decode_png16_codes, decode_r16_codes, encode_png16_codes, export_png16, export_r16,
    height_to_code16, heights_to_codes16, import_png8, import_png16, import_r16,
};
pub use json::{export_polylines_json, parse_polylines_json, write_polylines_json};
pub use map::{
    CELLS_PER_TILE_PROPERTY, CLIFF_COLOR, MAP_EXPORT_BAND_CELLS, MAP_PALETTE, MAP_TEXTURE_NAMES,
    MAX_TILESET_IMAGE_TILE, PngLayers, PngLayersInfo, PngLayersMesh, TiledEncoding, TiledExport,
    TiledFiles, TiledImport, TiledLayer, TiledTiles, WATER_COLOR, export_map_glb,
    export_map_mesh_glb, export_map_mesh_obj, export_map_obj, export_pathing_png,
    export_png_layers, export_tiled, export_tiled_tmx, import_tiled, import_tiled_with,
    load_png_layers, pathing_color, quantize_for_png, read_png_layers_sidecar, read_tiled_layer,
    splat_color, tiled_cells_per_tile, tiled_tileset_png, write_map_glb, write_map_glb_in_bands,
    write_map_obj, write_map_obj_in_bands,
};
pub use npy::{
    export_npy_f32, read_npy, read_npy_file, read_npy_from, read_npy3, read_npy3_file,
    read_npy3_from,
};
pub use obj::{ObjFiles, export_obj, export_obj_mtl, write_obj, write_obj_mtl};
pub use ply::{export_ply, write_ply};
pub use raster::{
    GRASS_RIM_CELLS, MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE, PngOptions, encode_rgb_png,
    export_field_png_gray, export_side2d_png, linear_to_srgb8,
};
pub use svg::{SvgOptions, export_polylines_svg};
