//! Map worlds in the browser: the world description and the frames of a
//! chunk, from the meshes the world keeps.

use isoterra::export::linear_to_srgb8;
use isoterra::store::{MapDocument, WorldFile};
use isoterra::world::MapChunkMesh;
use serde_json::{Value, json};

use crate::color;
use crate::frame::{
    KIND_MAP, LAYER_TERRAIN, LAYER_WATER, SURFACE_ROCK, encode_surface_frame, surface_weights,
};

/// The kind's part of the `world` object.
pub(super) fn world_json(d: &MapDocument<WorldFile>) -> Value {
    let info = d.info();
    let p = d.params();
    let cs = p.mesh.cell_size;
    let lh = p.mesh.level_height;
    json!({
        "seed": info.seed, "preset": info.preset,
        "size": [p.width_cells, p.depth_cells],
        "bounds": {
            "min": [0.0, -p.mesh.chasm_depth - 64.0, 0.0],
            "max": [p.width_cells as f32 * cs, f32::from(isoterra::field::map::MAX_LEVEL + 1) * lh + 64.0, p.depth_cells as f32 * cs],
        },
        "chunk_cells": p.chunk_cells, "cell_size": cs, "level_height": lh,
        "textures": isoterra::export::MAP_PALETTE.iter().map(|c| linear_to_srgb8(*c, 1.0)).collect::<Vec<_>>(),
        "texture_names": isoterra::export::MAP_TEXTURE_NAMES,
    })
}

/// The frames of a map chunk: terrain coloured by splat (cliff walls darker)
/// and water coloured and faded by depth. A chunk without water gets an
/// empty water frame, which removes what a client held.
///
/// The mesher shares each rim vertex between a cliff wall and the top it
/// bounds (no cracks), with the wall's blend and a normal tilted out of the
/// cliff. Drawn as they are, the tops' triangles that reach a rim pick up
/// the wall's dark rock colour and tilted light as a saw-tooth of wedges of
/// irregular size. So the frame gives the tops their own copy of every
/// such vertex, at the same position, with the top's colour and the mean
/// normal of the tops around it; the walls keep the shared ones.
pub(crate) fn map_frames(chunk: &MapChunkMesh) -> [Vec<u8>; 2] {
    let out = &chunk.mesh;
    let coord = [chunk.coord[0] as i32, 0, chunk.coord[1] as i32];
    let TopsApart {
        positions,
        normals,
        blend,
        splats,
        indices,
    } = tops_apart(&out.terrain);
    // Each vertex's colour (splat colours, walls darker so that cliffs read
    // from above) and detail classes (the splat's textures, rock on walls).
    let (colors, surface): (Vec<[u8; 4]>, Vec<[u8; 4]>) = (0..positions.len())
        .map(|i| {
            let splat = splats[i];
            let blend = blend[i];
            let c = isoterra::export::splat_color(splat, blend);
            let wall = blend.clamp(0.0, 1.0);
            let dark = 1.0 - 0.3 * wall;
            let color = linear_to_srgb8([c[0] * dark, c[1] * dark, c[2] * dark], 1.0);
            let mut w = [0.0f32; 4];
            for (id, weight) in splat.ids.iter().zip(splat.weights) {
                w[color::map_texture_class(*id)] += f32::from(weight) / 255.0 * (1.0 - wall);
            }
            w[SURFACE_ROCK] += wall;
            (color, surface_weights(w))
        })
        .unzip();
    let terrain = encode_surface_frame(
        KIND_MAP,
        LAYER_TERRAIN,
        0,
        coord,
        &positions,
        &normals,
        &colors,
        &surface,
        &indices,
    );
    let w = &out.water;
    let shallow = [0.16f32, 0.55, 0.62];
    let deep = isoterra::export::WATER_COLOR;
    let water_colors: Vec<[u8; 4]> = (0..w.positions.len())
        .map(|i| {
            let depth = w.depth.get(i).copied().unwrap_or(0.0);
            let k = if depth.is_finite() {
                (depth / 3.0).clamp(0.0, 1.0)
            } else {
                1.0
            };
            let c = [
                shallow[0] + (deep[0] - shallow[0]) * k,
                shallow[1] + (deep[1] - shallow[1]) * k,
                shallow[2] + (deep[2] - shallow[2]) * k,
            ];
            linear_to_srgb8(c, 0.35 + 0.5 * k)
        })
        .collect();
    // The depth for the shoreline foam, in 1/64 units; byte 1 marks it as
    // given, so that a depth of 0 (the shoreline) does not read as "no
    // depth" (deep water) on the page.
    let water_depth: Vec<[u8; 4]> = (0..w.positions.len())
        .map(|i| {
            let depth = w.depth.get(i).copied().unwrap_or(0.0);
            let d = if depth.is_finite() {
                (depth * 64.0).round().clamp(0.0, 255.0) as u8
            } else {
                255
            };
            [d, 255, 0, 0]
        })
        .collect();
    let water = encode_surface_frame(
        KIND_MAP,
        LAYER_WATER,
        0,
        coord,
        &w.positions,
        &w.normals,
        &water_colors,
        &water_depth,
        &w.indices,
    );
    [terrain, water]
}

/// A map terrain mesh whose tops have their own copies of the rim
/// vertices (see [`map_frames`]).
struct TopsApart {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    blend: Vec<f32>,
    splats: Vec<isoterra::field::Splat>,
    indices: Vec<u32>,
}

/// Gives every top triangle that uses a vertex with a wall blend its own
/// copy of it: same position, blend 0, the mean normal of the tops that
/// use it. Walls (vertical triangles) keep the shared vertices.
fn tops_apart(t: &isoterra::mesh::MapMeshBuffers) -> TopsApart {
    let n = t.positions.len();
    let mut positions = t.positions.clone();
    let mut normals = t.normals.clone();
    let mut blend: Vec<f32> = (0..n)
        .map(|i| t.blend.get(i).copied().unwrap_or(0.0))
        .collect();
    let mut splats: Vec<isoterra::field::Splat> = (0..n)
        .map(|i| {
            t.splat
                .get(i)
                .copied()
                .unwrap_or(isoterra::field::Splat::single(0))
        })
        .collect();
    let mut top_copy: Vec<u32> = vec![u32::MAX; n];
    let mut indices = t.indices.clone();
    for tri in indices.chunks_exact_mut(3) {
        let p = [0, 1, 2].map(|k| t.positions[tri[k] as usize]);
        let e1 = [p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]];
        let e2 = [p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]];
        let f = [
            e1[1] * e2[2] - e1[2] * e2[1],
            e1[2] * e2[0] - e1[0] * e2[2],
            e1[0] * e2[1] - e1[1] * e2[0],
        ];
        let len = (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt();
        // Walls stand between two vertices at one (x, z): vertical. Tops
        // are height fields, so their normal points up (either winding).
        if !(len > 0.0 && (f[1] / len).abs() > 1.0e-3) {
            continue;
        }
        let up = if f[1] < 0.0 { -1.0 } else { 1.0 };
        for v in tri.iter_mut() {
            let i = *v as usize;
            if blend[i] <= 0.0 {
                continue;
            }
            if top_copy[i] == u32::MAX {
                top_copy[i] = positions.len() as u32;
                positions.push(t.positions[i]);
                normals.push([0.0; 3]);
                blend.push(0.0);
                splats.push(splats[i]);
            }
            let c = top_copy[i] as usize;
            for k in 0..3 {
                normals[c][k] += f[k] * up;
            }
            *v = top_copy[i];
        }
    }
    for &c in top_copy.iter().filter(|&&c| c != u32::MAX) {
        let v = &mut normals[c as usize];
        let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        *v = if len > 0.0 {
            [v[0] / len, v[1] / len, v[2] / len]
        } else {
            [0.0, 1.0, 0.0]
        };
    }
    TopsApart {
        positions,
        normals,
        blend,
        splats,
        indices,
    }
}

/// The map's pathing grid as the editor's overlay reads it: width and depth
/// in cells (u32, little endian), then one byte of
/// [`PathingGrid`](isoterra::world::PathingGrid) bits per cell, row by row.
/// The rules are the ones the map's exports use.
pub(crate) fn pathing_bytes(
    d: &MapDocument<WorldFile>,
) -> Result<Vec<u8>, isoterra::world::WorldError> {
    let p = d.params();
    let rules = isoterra::world::PathingRules::DEFAULT.with_level_height(p.mesh.level_height);
    let grid = isoterra::world::pathing_grid(d.world().layers(), &rules)?;
    let mut out = Vec::with_capacity(8 + grid.cells().len());
    out.extend_from_slice(&grid.width_cells().to_le_bytes());
    out.extend_from_slice(&grid.depth_cells().to_le_bytes());
    out.extend_from_slice(grid.cells());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use isoterra::world::{MapBrush, MapParams, MapPreset, MapStroke, MapTool, MapWorld};

    #[test]
    fn tops_get_their_own_rim_vertices_and_the_shape_stays() {
        let params = MapParams::DEFAULT
            .with_size(32, 32)
            .with_chunk_cells(32)
            .with_preset(MapPreset::Blank);
        let mut world = MapWorld::new(&params).unwrap();
        let cliff = MapBrush::new(MapTool::CliffUp, 9.0).with_level(Some(2));
        world
            .apply_stroke(&MapStroke::dab(cliff, [16.0, 16.0]))
            .unwrap();
        let soft = MapBrush::new(MapTool::Ramp, 4.0).with_strength(0.5);
        world
            .apply_stroke(&MapStroke::dab(soft, [25.0, 16.0]))
            .unwrap();
        let mut mesher = isoterra::mesh::MapMesher::new();
        let mut out = isoterra::mesh::MapMeshOutput::default();
        world.mesh_chunk([0, 0], &mut mesher, &mut out).unwrap();
        let t = &out.terrain;
        let a = tops_apart(t);
        assert!(
            a.positions.len() > t.positions.len(),
            "no rim vertex was copied"
        );
        assert_eq!(a.indices.len(), t.indices.len());
        let (mut tops, mut walls) = (0, 0);
        for (new, old) in a.indices.chunks_exact(3).zip(t.indices.chunks_exact(3)) {
            // The same triangle, bit for bit.
            for k in 0..3 {
                assert_eq!(a.positions[new[k] as usize], t.positions[old[k] as usize]);
            }
            let p = [0, 1, 2].map(|k| t.positions[old[k] as usize]);
            let flat_xz = (p[0][0] - p[1][0]) * (p[0][2] - p[2][2])
                - (p[0][2] - p[1][2]) * (p[0][0] - p[2][0]);
            if flat_xz.abs() > 1.0e-6 {
                // A top: no wall blend, normals up.
                tops += 1;
                for &v in new {
                    assert_eq!(a.blend[v as usize], 0.0);
                    assert!(a.normals[v as usize][1] > 0.0);
                }
            } else {
                walls += 1;
                assert_eq!(new, old);
            }
        }
        assert!(tops > 0 && walls > 0, "{tops} tops, {walls} walls");
        for v in &a.normals {
            let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
            assert!((len - 1.0).abs() < 1.0e-4, "{v:?}");
        }
    }
}
