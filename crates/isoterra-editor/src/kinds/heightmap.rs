//! Heightmap worlds in the browser: the world description and the frame of
//! a streamed chunk mesh.

use std::collections::BTreeMap;

use isoterra::kind::AnyDocument;
use isoterra::store::HeightmapDocument;
use isoterra::world::StreamViewer;
use serde_json::{Value, json};

use super::Doc;
use crate::state::Client;
use crate::stream::{HeightFrames, HeightStream, StreamKind};

use crate::color;
use crate::frame::{KIND_HEIGHTMAP, LAYER_TERRAIN, encode_surface_frame, surface_weights};

/// The kind's part of the `world` object.
pub(super) fn world_json(d: &HeightmapDocument<super::Store>) -> Value {
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

/// A heightmap's stream: edit chunks go to the stream's source, and every
/// streamed chunk whose mesh reads a changed node is rebuilt first.
impl StreamKind for HeightFrames {
    fn start(doc: &mut Doc) -> Option<HeightStream> {
        let AnyDocument::Heightmap(d) = doc.typed_mut() else {
            return None;
        };
        // Everything the stream needs is in its own source.
        let _ = d.world_mut().take_dirty();
        HeightStream::heightmap(d.world(), d.info().height_range)
            .map_err(|e| eprintln!("error: cannot stream the heightmap world: {e}"))
            .ok()
    }

    fn dirty(doc: &Doc) -> bool {
        matches!(doc.typed(), AnyDocument::Heightmap(d) if d.world().dirty_count() > 0)
    }

    fn sync(doc: &mut Doc, stream: &mut HeightStream, _clients: &BTreeMap<u64, Client>) {
        let AnyDocument::Heightmap(d) = doc.typed_mut() else {
            return;
        };
        if d.world().dirty_count() > 0 {
            let dirty = d.world_mut().take_dirty();
            if let Err(e) = stream.edited(d.world(), &dirty) {
                eprintln!("error: cannot stream the edited chunks: {e}");
            }
        }
    }

    fn viewer(
        stream: &HeightStream,
        id: u64,
        position: [f32; 3],
        forward: Option<[f32; 3]>,
        velocity: [f32; 3],
        distance: f32,
    ) -> StreamViewer {
        stream.viewer(id, position, forward, velocity, distance)
    }

    /// The world's own view distance.
    fn view_distance(doc: &Doc) -> f32 {
        match doc.typed() {
            AnyDocument::Heightmap(d) => d.params().view_distance,
            _ => 128.0,
        }
    }
}
