//! Side-view worlds in the browser: the world description and the chunk
//! frames (fill mesh coloured by material, contour lines).

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use axum::body::Bytes;
use isoterra::kind::AnyDocument;
use isoterra::store::Side2dDocument;
use isoterra::world::StreamViewer;
use serde_json::{Value, json};

use super::{Doc, Meshing, send_frames};
use crate::state::{Client, Out};

use crate::color;
use crate::frame::{
    KIND_SIDE2D, LAYER_DECAL, LAYER_LINES, LAYER_TERRAIN, encode_frame, encode_surface_frame,
    surface_weights,
};

/// The kind's part of the `world` object.
pub(super) fn world_json(d: &Side2dDocument<super::Store>) -> Value {
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

/// The frames of a side-view chunk: its fill mesh coloured by material, its
/// contour lines, and the grass rim along its upward-facing ground.
fn side2d_frames(
    doc: &Side2dDocument<super::Store>,
    chunk: &isoterra::world::Side2dChunk,
) -> [Vec<u8>; 3] {
    let world = doc.world();
    let mesh = &chunk.mesh;
    let iso = world.params().iso;
    // Each vertex blends the materials of the solid nodes around it, so
    // material borders are soft gradients across a cell instead of
    // cell-sized stairs inside the smooth contour; the detail texture
    // classes blend the same way.
    let classes: Vec<usize> = world
        .table()
        .iter()
        .map(|m| color::side2d_material_class(&m.name))
        .collect();
    let (colors, surface): (Vec<[u8; 4]>, Vec<[u8; 4]>) = mesh
        .positions
        .iter()
        .map(|p| {
            let (c, w) = blended_material(
                world.field(),
                world.materials(),
                world.table(),
                &classes,
                iso,
                [p[0], p[1]],
            );
            (c, surface_weights(w))
        })
        .unzip();
    let coord = [chunk.coord[0] as i32, chunk.coord[1] as i32, 0];
    let normals: Vec<[f32; 3]> = if mesh.normals.len() == mesh.positions.len() {
        mesh.normals.clone()
    } else {
        vec![[0.0, 0.0, 1.0]; mesh.positions.len()]
    };
    let terrain = encode_surface_frame(
        KIND_SIDE2D,
        LAYER_TERRAIN,
        0,
        coord,
        &mesh.positions,
        &normals,
        &colors,
        &surface,
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
    let mut strip = isoterra::mesh::StripMesh::default();
    // A contour that cannot make a strip (never for a rebuilt chunk) shows
    // no grass.
    let _ = world.grass_strip(chunk, &mut strip);
    let grass = grass_frame(coord, &strip, world.table());
    [terrain, lines, grass]
}

/// The grass rim of a chunk as a decal frame: its grass strip
/// ([`Side2dWorld::grass_strip`](isoterra::world::Side2dWorld::grass_strip))
/// in the table's `grass` colour, fading out towards its inner edge. Dug
/// crater rims get it too, as they face up.
fn grass_frame(
    coord: [i32; 3],
    strip: &isoterra::mesh::StripMesh,
    table: &isoterra::field::MaterialTable,
) -> Vec<u8> {
    let grass = table
        .iter()
        .find(|m| m.name == "grass")
        .map_or([86, 150, 62, 255], |m| m.color);
    let colors: Vec<[u8; 4]> = strip
        .uvs
        .iter()
        .map(|uv| {
            let a = isoterra::world::grass_alpha(uv[1]);
            [grass[0], grass[1], grass[2], (255.0 * a).round() as u8]
        })
        .collect();
    let normals = vec![[0.0, 0.0, 1.0]; strip.positions.len()];
    encode_frame(
        KIND_SIDE2D,
        LAYER_DECAL,
        0,
        coord,
        &strip.positions,
        &normals,
        &colors,
        &strip.indices,
    )
}

/// The colour at world point `p`: the bilinear blend of the material colours
/// of the solid nodes (density `>= iso`) of the cell around it, or of all
/// four when none is solid; and the same blend of their detail texture
/// classes (`classes[id]`, soil for an id past it) as class weights.
fn blended_material(
    field: &isoterra::field::Field2,
    materials: &isoterra::field::MaterialGrid,
    table: &isoterra::field::MaterialTable,
    classes: &[usize],
    iso: f32,
    p: [f32; 2],
) -> ([u8; 4], [f32; 4]) {
    const GREY: [u8; 4] = [128, 128, 128, 255];
    const SOIL: [f32; 4] = [0.0, 1.0, 0.0, 0.0];
    let g = field.to_grid(p);
    if !(g[0].is_finite() && g[1].is_finite()) {
        return (GREY, SOIL);
    }
    let max_x = field.width().saturating_sub(1) as f32;
    let max_y = field.height().saturating_sub(1) as f32;
    let (gx, gy) = (g[0].clamp(0.0, max_x), g[1].clamp(0.0, max_y));
    let (x0, y0) = (gx.floor(), gy.floor());
    let (fx, fy) = (gx - x0, gy - y0);
    let (x0, y0) = (x0 as u32, y0 as u32);
    let x1 = (x0 + 1).min(field.width().saturating_sub(1));
    let y1 = (y0 + 1).min(field.height().saturating_sub(1));
    let corners = [
        (x0, y0, (1.0 - fx) * (1.0 - fy)),
        (x1, y0, fx * (1.0 - fy)),
        (x0, y1, (1.0 - fx) * fy),
        (x1, y1, fx * fy),
    ];
    let mut sum = [0f32; 4];
    let mut class = [0f32; 4];
    let mut total = 0f32;
    for solid_only in [true, false] {
        for &(x, y, w) in &corners {
            if solid_only && field.get(x, y) < iso {
                continue;
            }
            // A small floor keeps a node on the far side of the cell in
            // the blend when the point sits exactly on another node.
            let w = w + 1e-3;
            let id = materials.get(x, y);
            let c = table.get(id).map_or(GREY, |m| m.color);
            for k in 0..4 {
                sum[k] += w * f32::from(c[k]);
            }
            let k = classes
                .get(usize::from(id))
                .copied()
                .unwrap_or(crate::frame::SURFACE_SOIL);
            class[k] += w;
            total += w;
        }
        if total > 0.0 {
            break;
        }
    }
    if total <= 0.0 {
        return (GREY, SOIL);
    }
    (
        [0, 1, 2, 3].map(|k| (sum[k] / total).round().clamp(0.0, 255.0) as u8),
        class.map(|v| v / total),
    )
}

/// A side view's meshing: the document's rebuild queue within the frame
/// budget; every chunk whose mesh has a new version goes to every client.
pub(crate) struct Side2dMeshing {
    /// The chunk versions every client holds.
    sent: HashMap<[u32; 2], u64>,
}

impl Side2dMeshing {
    pub(crate) fn start(_doc: &mut Doc) -> Self {
        Side2dMeshing {
            sent: HashMap::new(),
        }
    }
}

impl Meshing for Side2dMeshing {
    fn has_work(&self, doc: &Doc, _viewers_changed: bool) -> bool {
        matches!(doc.typed(), AnyDocument::Side2d(d) if d.world().dirty_count() > 0)
    }

    fn tick(
        &mut self,
        doc: &mut Doc,
        clients: &mut BTreeMap<u64, Client>,
        budget: Duration,
        _viewers: Option<Vec<StreamViewer>>,
    ) {
        let AnyDocument::Side2d(d) = doc.typed_mut() else {
            return;
        };
        if d.world().dirty_count() > 0 {
            d.rebuild_within(budget);
        }
        let d = &**d;
        for chunk in d.world().chunks() {
            if chunk.is_dirty() || chunk.version == 0 {
                continue;
            }
            if self.sent.get(&chunk.coord) == Some(&chunk.version) {
                continue;
            }
            let is_new = self.sent.insert(chunk.coord, chunk.version).is_none();
            let frames = side2d_frames(d, chunk).map(Bytes::from);
            send_frames(clients, &frames, is_new);
        }
    }

    fn send_world(&self, doc: &Doc, client: &mut Client) {
        let AnyDocument::Side2d(d) = doc.typed() else {
            return;
        };
        for chunk in d.world().chunks() {
            if chunk.is_dirty() || chunk.version == 0 {
                continue;
            }
            for f in side2d_frames(d, chunk) {
                client.send(Out::Binary(Bytes::from(f)));
            }
            client.chunks += 1;
        }
    }

    fn wanted(&self, doc: &Doc) -> Option<usize> {
        match doc.typed() {
            AnyDocument::Side2d(d) => Some(d.world().chunks().len()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grass_frame_is_a_decal_of_the_strip() {
        use isoterra::mesh::{Polyline, StripMesh, edge_strip};
        let table = isoterra::field::MaterialTable::side2d_default();
        let top = Polyline::new(vec![[4.0, 2.0], [0.0, 2.0]], false);
        let mut strip = StripMesh::default();
        edge_strip(&[top], 0.9, &mut strip).unwrap();
        let f = grass_frame([0, 0, 0], &strip, &table);
        let h = crate::frame::parse_frame_header(&f).unwrap();
        assert_eq!(h.layer, LAYER_DECAL);
        assert!(h.vertices >= 4 && h.indices >= 6);
        // Nothing faces up: an empty frame, which clears what a client held.
        let empty = grass_frame([0, 0, 0], &StripMesh::default(), &table);
        assert_eq!(
            crate::frame::parse_frame_header(&empty).unwrap().vertices,
            0
        );
    }
    use isoterra::field::{Field2, MaterialGrid, MaterialTable};

    /// The default table's classes: dirt, rock, sand, bedrock, grass.
    fn classes(table: &MaterialTable) -> Vec<usize> {
        table
            .iter()
            .map(|m| color::side2d_material_class(&m.name))
            .collect()
    }

    #[test]
    fn material_colours_and_classes_blend_across_a_cell() {
        use crate::frame::{SURFACE_GRASS, SURFACE_ROCK, SURFACE_SNOW, SURFACE_SOIL};
        let field = Field2::new(3, 2, 1.0).unwrap();
        let mut mats = MaterialGrid::like(&field, 0);
        mats.set(2, 0, 1).unwrap();
        mats.set(2, 1, 1).unwrap();
        let table = MaterialTable::side2d_default();
        let k = classes(&table);
        assert_eq!(
            k,
            [
                SURFACE_SOIL,
                SURFACE_ROCK,
                SURFACE_SOIL,
                SURFACE_ROCK,
                SURFACE_GRASS
            ]
        );
        assert_eq!(color::side2d_material_class("Ice sheet"), SURFACE_SNOW);
        let a = table.get(0).unwrap().color;
        let b = table.get(1).unwrap().color;
        let at = |field: &Field2, p: [f32; 2]| blended_material(field, &mats, &table, &k, 0.0, p);
        // On a node: that node's colour and class.
        let (c, w) = at(&field, [0.0, 0.0]);
        assert_eq!(c, a);
        assert!(w[SURFACE_SOIL] > 0.99, "{w:?}");
        let (c, w) = at(&field, [2.0, 1.0]);
        assert_eq!(c, b);
        assert!(w[SURFACE_ROCK] > 0.99, "{w:?}");
        // Half way between materials: half way between the colours, and
        // half soil, half rock.
        let (mid, w) = at(&field, [1.5, 0.5]);
        for k in 0..3 {
            let want = (f32::from(a[k]) + f32::from(b[k])) / 2.0;
            assert!((f32::from(mid[k]) - want).abs() <= 1.5, "{mid:?}");
        }
        assert!(
            (w[SURFACE_SOIL] - 0.5).abs() < 0.01 && (w[SURFACE_ROCK] - 0.5).abs() < 0.01,
            "{w:?}"
        );
        assert_eq!(
            surface_weights(w)
                .iter()
                .map(|&v| u32::from(v))
                .sum::<u32>(),
            255
        );
        // Air nodes do not tint the ground next to them.
        let mut field = field;
        field.set(2, 0, -1.0).unwrap();
        field.set(2, 1, -1.0).unwrap();
        let (c, w) = at(&field, [1.5, 0.5]);
        assert_eq!(c, a);
        assert!(w[SURFACE_SOIL] > 0.99, "{w:?}");
        // Outside or not finite: clamped or grey soil, never a panic.
        let _ = at(&field, [-5.0, 99.0]);
        assert_eq!(
            at(&field, [f32::NAN, 0.0]),
            ([128, 128, 128, 255], [0.0, 1.0, 0.0, 0.0])
        );
    }
}
