//! Heightmap worlds in the browser: the world description and the frame of
//! a streamed chunk mesh.

use isoterra::store::{HeightmapDocument, WorldFile};
use serde_json::{Value, json};

use crate::color;
use crate::frame::{KIND_HEIGHTMAP, LAYER_TERRAIN, encode_surface_frame, surface_weights};

/// The kind's part of the `world` object.
pub(super) fn world_json(d: &HeightmapDocument<WorldFile>) -> Value {
    let info = d.info();
    let p = d.params();
    json!({
        "seed": info.seed, "preset": Value::Null,
        "size": Value::Null, "bounds": Value::Null,
        "chunk_cells": p.chunk_cells, "cell_size": p.cell_size,
        "height_range": info.height_range, "lod_count": p.lod_count,
        "view_distance": p.view_distance,
    })
}

/// The frame of a heightmap chunk mesh, coloured by height and slope.
pub(crate) fn heightmap_frame(
    range: [f32; 2],
    chunk: [i32; 2],
    lod: u8,
    mesh: &isoterra::mesh::HeightmapMesh,
) -> Vec<u8> {
    let span = (range[1] - range[0]).max(1e-3);
    let (colors, surface): (Vec<[u8; 4]>, Vec<[u8; 4]>) = mesh
        .positions
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let up = mesh.normals.get(i).map(|n| n[1]).unwrap_or(1.0);
            let t = (p[1] - range[0]) / span;
            let c = color::terrain(t, up);
            let c = if i as u32 >= mesh.skirt_vertex_start {
                color::shade(c, 0.7)
            } else {
                c
            };
            (c, surface_weights(color::terrain_surface(t, up)))
        })
        .unzip();
    encode_surface_frame(
        KIND_HEIGHTMAP,
        LAYER_TERRAIN,
        lod,
        [chunk[0], 0, chunk[1]],
        &mesh.positions,
        &mesh.normals,
        &colors,
        &surface,
        &mesh.indices,
    )
}
