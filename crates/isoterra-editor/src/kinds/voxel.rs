//! Voxel worlds in the browser: the world description and the frame of a
//! streamed chunk mesh.

use isoterra::store::{VoxelDocument, WorldFile};
use serde_json::{Value, json};

use crate::color;
use crate::frame::{KIND_VOXEL, LAYER_TERRAIN, encode_surface_frame};

/// The kind's part of the `world` object.
pub(super) fn world_json(d: &VoxelDocument<WorldFile>) -> Value {
    let info = d.info();
    let p = d.params();
    json!({
        "seed": info.seed, "preset": info.preset,
        "size": Value::Null, "bounds": Value::Null,
        "chunk_cells": p.chunk_cells, "cell_size": 1.0,
        // Ids past the table's end are drawn as `id % len` (see
        // `color::voxel_material`).
        "materials": isoterra::field::MaterialTable::voxel_default().iter().map(|m| json!({
            "name": m.name, "color": m.color,
        })).collect::<Vec<_>>(),
    })
}

/// The frame of voxel chunk `chunk`'s mesh at `lod`, coloured by material.
pub(crate) fn voxel_frame(
    chunk: [i32; 3],
    lod: u8,
    positions: &[[f32; 3]],
    normals: &[[f32; 3]],
    materials: &[u8],
    indices: &[u32],
) -> Vec<u8> {
    let colors: Vec<[u8; 4]> = (0..positions.len())
        .map(|i| {
            let c = color::voxel_material(materials.get(i).copied().unwrap_or(0));
            // Faces pointing down are a little darker (cave ceilings).
            let down = normals.get(i).map(|n| n[1]).unwrap_or(0.0);
            if down < -0.5 { color::shade(c, 0.8) } else { c }
        })
        .collect();
    let surface: Vec<[u8; 4]> = (0..positions.len())
        .map(|i| {
            let mut w = [0u8; 4];
            w[color::voxel_material_class(materials.get(i).copied().unwrap_or(0))] = 255;
            w
        })
        .collect();
    encode_surface_frame(
        KIND_VOXEL,
        LAYER_TERRAIN,
        lod,
        chunk,
        positions,
        normals,
        &colors,
        &surface,
        indices,
    )
}
