//! Side-view worlds in the browser: the world description and the chunk
//! frames (fill mesh coloured by material, contour lines).

use isoterra::store::{Side2dDocument, WorldFile};
use serde_json::{Value, json};

use crate::color;
use crate::frame::{KIND_SIDE2D, LAYER_LINES, LAYER_TERRAIN, encode_frame};

/// The kind's part of the `world` object.
pub(super) fn world_json(d: &Side2dDocument<WorldFile>) -> Value {
    let info = d.info();
    let p = d.params();
    let cell = p.generator.cell_size;
    let [w, h] = p.cells();
    json!({
        "seed": info.seed, "preset": info.preset,
        "size": [w, h],
        "bounds": {"min": [0.0, 0.0, 0.0], "max": [w as f32 * cell, h as f32 * cell, 0.0]},
        "chunk_cells": p.chunk_cells, "cell_size": cell,
        "materials": d.world().table().iter().map(|m| json!({
            "name": m.name, "color": m.color, "indestructible": m.indestructible
        })).collect::<Vec<_>>(),
    })
}

/// The frames of a side-view chunk: its fill mesh coloured by material, and
/// its contour lines.
pub(crate) fn side2d_frames(
    doc: &Side2dDocument<WorldFile>,
    chunk: &isoterra::world::Side2dChunk,
) -> [Vec<u8>; 2] {
    let table = doc.world().table();
    let mesh = &chunk.mesh;
    let mut colors = vec![[128, 128, 128, 255]; mesh.positions.len()];
    for sub in &mesh.submeshes {
        let c = table
            .get(sub.material)
            .map(|m| m.color)
            .unwrap_or([128, 128, 128, 255]);
        let start = sub.start as usize;
        let end = (start + sub.count as usize).min(mesh.indices.len());
        for &i in &mesh.indices[start.min(end)..end] {
            if let Some(slot) = colors.get_mut(i as usize) {
                *slot = c;
            }
        }
    }
    let coord = [chunk.coord[0] as i32, chunk.coord[1] as i32, 0];
    let normals: Vec<[f32; 3]> = if mesh.normals.len() == mesh.positions.len() {
        mesh.normals.clone()
    } else {
        vec![[0.0, 0.0, 1.0]; mesh.positions.len()]
    };
    let terrain = encode_frame(
        KIND_SIDE2D,
        LAYER_TERRAIN,
        0,
        coord,
        &mesh.positions,
        &normals,
        &colors,
        &mesh.indices,
    );
    let mut positions = Vec::new();
    let mut indices = Vec::new();
    for line in &chunk.polylines {
        let base = positions.len() as u32;
        let n = line.points.len() as u32;
        positions.extend(line.points.iter().map(|p| [p[0], p[1], 0.0]));
        for k in 0..n.saturating_sub(1) {
            indices.extend([base + k, base + k + 1]);
        }
        if line.closed && n > 2 {
            indices.extend([base + n - 1, base]);
        }
    }
    let line_normals = vec![[0.0, 0.0, 1.0]; positions.len()];
    let line_colors = vec![color::OUTLINE; positions.len()];
    let lines = encode_frame(
        KIND_SIDE2D,
        LAYER_LINES,
        0,
        coord,
        &positions,
        &line_normals,
        &line_colors,
        &indices,
    );
    [terrain, lines]
}
