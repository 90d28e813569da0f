//! Map worlds in the browser: the world description and the frames of a
//! chunk, from the meshes the world keeps.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use axum::body::Bytes;
use isoterra::export::linear_to_srgb8;
use isoterra::kind::AnyDocument;
use isoterra::store::MapDocument;
use isoterra::world::{MapChunkMesh, StreamViewer};
use serde_json::{Value, json};

use super::{Doc, Meshing, send_frames};
use crate::state::{Client, Out};

use crate::color;
use crate::frame::{
    KIND_MAP, LAYER_TERRAIN, LAYER_WATER, SURFACE_ROCK, encode_surface_frame, surface_weights,
};

/// The kind's part of the `world` object.
pub(super) fn world_json(d: &MapDocument<super::Store>) -> Value {
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
/// The terrain is drawn with the tops apart from the walls at the rims
/// ([`MapMeshBuffers::tops_apart`](isoterra::mesh::MapMeshBuffers::tops_apart)),
/// so rims read as clean lines, not as a saw-tooth of wall-coloured wedges.
fn map_frames(chunk: &MapChunkMesh) -> [Vec<u8>; 2] {
    let out = &chunk.mesh;
    let coord = [chunk.coord[0] as i32, 0, chunk.coord[1] as i32];
    let t = out.terrain.tops_apart();
    // Each vertex's colour (splat colours, walls darker so that cliffs read
    // from above) and detail classes (the splat's textures, rock on walls).
    let (colors, surface): (Vec<[u8; 4]>, Vec<[u8; 4]>) = (0..t.positions.len())
        .map(|i| {
            let (splat, blend) = (t.splat[i], t.blend[i]);
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
        &t.positions,
        &t.normals,
        &colors,
        &surface,
        &t.indices,
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

/// The map's pathing grid as the editor's overlay reads it: width and depth
/// in cells (u32, little endian), then one byte of
/// [`PathingGrid`](isoterra::world::PathingGrid) bits per cell, row by row.
/// The rules are the ones the map's exports use.
pub(crate) fn pathing_bytes(
    d: &MapDocument<super::Store>,
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

/// A map's meshing: the world's rebuild queue within the frame budget (only
/// chunks whose meshes changed get a new version), and those are sent.
pub(crate) struct MapMeshing {
    /// The chunk mesh versions every client holds.
    sent: HashMap<[u32; 2], u64>,
}

impl MapMeshing {
    /// Queues every chunk of the map.
    pub(crate) fn start(doc: &mut Doc) -> Self {
        if let AnyDocument::Map(d) = doc.typed_mut() {
            d.world_mut().mark_all_dirty();
        }
        MapMeshing {
            sent: HashMap::new(),
        }
    }
}

impl Meshing for MapMeshing {
    fn has_work(&self, doc: &Doc, _viewers_changed: bool) -> bool {
        matches!(doc.typed(), AnyDocument::Map(d) if d.world().stale_count() > 0)
    }

    fn tick(
        &mut self,
        doc: &mut Doc,
        clients: &mut BTreeMap<u64, Client>,
        budget: Duration,
        _viewers: Option<Vec<StreamViewer>>,
    ) {
        let AnyDocument::Map(d) = doc.typed_mut() else {
            return;
        };
        if d.world().stale_count() > 0
            && let Err(e) = d.world_mut().rebuild(Some(budget))
        {
            eprintln!("error: cannot mesh the map: {e}");
        }
        for m in d.world().chunk_meshes() {
            if self.sent.get(&m.coord) == Some(&m.version) {
                continue;
            }
            let is_new = self.sent.insert(m.coord, m.version).is_none();
            let frames = map_frames(m).map(Bytes::from);
            send_frames(clients, &frames, is_new);
        }
    }

    /// The chunks every client was sent (a chunk meshed since is on its way
    /// to everyone with the next tick).
    fn send_world(&self, doc: &Doc, client: &mut Client) {
        let AnyDocument::Map(d) = doc.typed() else {
            return;
        };
        for m in d.world().chunk_meshes() {
            if self.sent.get(&m.coord) != Some(&m.version) {
                continue;
            }
            for f in map_frames(m) {
                client.send(Out::Binary(Bytes::from(f)));
            }
            client.chunks += 1;
        }
    }

    fn wanted(&self, doc: &Doc) -> Option<usize> {
        match doc.typed() {
            AnyDocument::Map(d) => Some(d.world().chunk_meshes().count()),
            _ => None,
        }
    }
}
