//! Voxel worlds in the browser: the world description and the frame of a
//! streamed chunk mesh.

use std::collections::{BTreeMap, HashSet};

use isoterra::kind::AnyDocument;
use isoterra::store::VoxelDocument;
use isoterra::world::StreamViewer;
use serde_json::{Value, json};

use super::Doc;
use crate::state::Client;
use crate::stream::{self, StreamKind, VoxelFrames, VoxelStream};

use crate::color;
use crate::frame::{KIND_VOXEL, LAYER_TERRAIN, encode_surface_frame};

/// The kind's part of the `world` object.
pub(super) fn world_json(d: &VoxelDocument<super::Store>) -> Value {
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

/// Loaded chunks above which those far from every camera are dropped.
const KEEP_CHUNKS: usize = 4096;

/// A voxel world's stream: edited chunks go to the stream's source and
/// every streamed chunk that reads one is rebuilt first (the world's dirty
/// set is only taken: exports mesh their region themselves).
impl StreamKind for VoxelFrames {
    fn start(doc: &mut Doc) -> Option<VoxelStream> {
        let AnyDocument::Voxel(d) = doc.typed() else {
            return None;
        };
        VoxelStream::voxel(d.world())
            .map_err(|e| eprintln!("error: cannot stream the voxel world: {e}"))
            .ok()
    }

    fn dirty(doc: &Doc) -> bool {
        matches!(doc.typed(), AnyDocument::Voxel(d) if d.world().dirty_count() > 0)
    }

    /// Also forgets generated chunks far from every camera once many are
    /// loaded (edited chunks keep their data).
    fn sync(doc: &mut Doc, stream: &mut VoxelStream, clients: &BTreeMap<u64, Client>) {
        let AnyDocument::Voxel(d) = doc.typed_mut() else {
            return;
        };
        if d.world().dirty_count() > 0 {
            let dirty: HashSet<[i32; 3]> = d.world_mut().take_dirty().into_iter().collect();
            if let Err(e) = stream.edited(d.world(), &dirty) {
                eprintln!("error: cannot stream the edited chunks: {e}");
            }
        }
        if d.world().loaded_chunks().count() > KEEP_CHUNKS {
            let n = d.params().chunk_cells as f32;
            let r = stream::MAX_VIEW_CHUNKS as i32 + 2;
            let mut lo = [i32::MAX; 3];
            let mut hi = [i32::MIN; 3];
            for v in clients.values().filter_map(|c| c.viewer.as_ref()) {
                for k in 0..3 {
                    let at = (v.position[k] / n).floor() as i32;
                    lo[k] = lo[k].min(at.saturating_sub(r));
                    hi[k] = hi[k].max(at.saturating_add(r));
                }
            }
            if lo[0] <= hi[0] {
                d.world_mut().retain_region(lo, hi);
            }
        }
    }

    fn viewer(
        stream: &VoxelStream,
        id: u64,
        position: [f32; 3],
        forward: Option<[f32; 3]>,
        velocity: [f32; 3],
        distance: f32,
    ) -> StreamViewer {
        stream.viewer(id, position, forward, velocity, distance)
    }
}
