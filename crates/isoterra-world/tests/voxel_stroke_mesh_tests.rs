//! Strokes leave no degenerate geometry: no zero-area triangles, and a
//! weld by position keeps the mesh edge-manifold.
//!
//! A node exactly at the iso level puts the marching-cubes vertices of all
//! its edges on the node itself; brushes centred on whole coordinates with
//! whole radii (and flatten planes through whole coordinates) hit that for
//! many nodes. The world keeps stroke values off the iso level.

use std::collections::HashMap;

use isoterra_field::VoxelGen;
use isoterra_world::{VoxelBrush, VoxelChunkMesh, VoxelParams, VoxelTool, VoxelWorld};
use proptest::prelude::*;

const N: u32 = 8;

fn world() -> VoxelWorld {
    let params = VoxelParams::DEFAULT
        .with_chunk_cells(N)
        .with_generator(VoxelGen::DEFAULT.with_seed(11));
    let mut w = VoxelWorld::new(&params).unwrap();
    w.ensure_region([-3, -3, -3], [2, 2, 2]).unwrap();
    w
}

/// What is wrong with a mesh: its zero-area triangles, and after welding
/// vertices by position, the triangles that collapse and the edges used by
/// more than two triangles.
#[derive(Debug, Default, PartialEq, Eq)]
struct Defects {
    zero_area: usize,
    collapsed: usize,
    non_manifold_edges: usize,
}

fn defects(m: &VoxelChunkMesh) -> Defects {
    let mut d = Defects::default();
    let mut ids: HashMap<[u32; 3], u32> = HashMap::new();
    let welded: Vec<u32> = m
        .positions
        .iter()
        .map(|p| {
            let next = ids.len() as u32;
            *ids.entry(p.map(f32::to_bits)).or_insert(next)
        })
        .collect();
    let mut edges: HashMap<(u32, u32), u32> = HashMap::new();
    for t in m.indices.chunks_exact(3) {
        let [a, b, c] = [0, 1, 2].map(|k| m.positions[t[k] as usize].map(f64::from));
        let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
        let cross = [
            u[1] * v[2] - u[2] * v[1],
            u[2] * v[0] - u[0] * v[2],
            u[0] * v[1] - u[1] * v[0],
        ];
        if cross == [0.0; 3] {
            d.zero_area += 1;
        }
        let w = [0, 1, 2].map(|k| welded[t[k] as usize]);
        if w[0] == w[1] || w[1] == w[2] || w[0] == w[2] {
            d.collapsed += 1;
            continue;
        }
        for e in 0..3 {
            let (p, q) = (w[e], w[(e + 1) % 3]);
            *edges.entry((p.min(q), p.max(q))).or_default() += 1;
        }
    }
    d.non_manifold_edges = edges.values().filter(|&&n| n > 2).count();
    d
}

fn meshed(w: &mut VoxelWorld) -> VoxelChunkMesh {
    w.rebuild_all();
    w.merged_mesh([-3; 3], [2; 3])
}

/// Every value the edit wrote is off the iso level by the margin.
fn assert_off_iso(w: &VoxelWorld, edit: &isoterra_world::VoxelEdit) {
    let iso = w.params().iso;
    for (k, v) in edit.after.iter().enumerate() {
        if v.to_bits() != edit.before[k].to_bits() {
            assert!(
                (v - iso).abs() >= VoxelWorld::ISO_MARGIN,
                "node {:?} written at {v}",
                edit.nodes[k]
            );
        }
    }
}

#[test]
fn the_generated_world_has_no_degenerate_triangles() {
    let mut w = world();
    let m = meshed(&mut w);
    assert!(
        m.triangle_count() > 1000,
        "{} triangles",
        m.triangle_count()
    );
    assert_eq!(defects(&m), Defects::default());
}

#[test]
fn whole_number_add_and_flatten_strokes_leave_no_zero_area_triangles() {
    // Centres on whole coordinates and whole radii: `radius - distance` is
    // exactly 0 at many nodes, and a flatten plane through a whole y is
    // exactly 0 on a whole layer of nodes.
    for tool in [VoxelTool::Add, VoxelTool::Flatten, VoxelTool::Dig] {
        let mut w = world();
        let before = meshed(&mut w).triangle_count();
        let mut edits = Vec::new();
        for c in [[0.0, 0.0, 0.0], [5.0, -4.0, 3.0], [-7.0, 2.0, -6.0]] {
            let b = VoxelBrush::new(tool, c, 5.0);
            edits.push(w.apply_brush(&b).unwrap());
        }
        let m = meshed(&mut w);
        assert_ne!(m.triangle_count(), before, "{tool:?} changed the surface");
        assert_eq!(defects(&m), Defects::default(), "{tool:?}");
        for e in &edits {
            assert_off_iso(&w, e);
        }
    }
}

fn tool() -> impl Strategy<Value = VoxelTool> {
    prop::sample::select(VoxelTool::ALL.to_vec())
}

/// Brushes on whole (or half) coordinates with whole radii, where exact
/// iso values come from, and arbitrary ones.
fn brush() -> impl Strategy<Value = VoxelBrush> {
    let snapped = (
        tool(),
        prop::array::uniform3(-16i32..16),
        1u8..7,
        prop_oneof![Just(1.0f32), Just(0.5f32), 0.05f32..1.0],
        prop::option::of(prop::sample::select(vec![
            [0.0f32, 1.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 1.0, 0.0],
        ])),
    )
        .prop_map(|(tool, c, r, strength, normal)| {
            let center = c.map(|v| v as f32 * 0.5);
            let mut b = VoxelBrush::new(tool, center, f32::from(r))
                .with_strength(strength)
                .with_material(r % 4);
            if let Some(n) = normal {
                let off = n[0] * center[0] + n[1] * center[1] + n[2] * center[2];
                b = b.with_plane(n, off.round());
            }
            b
        });
    let free = (
        tool(),
        prop::array::uniform3(-8.0f32..8.0),
        0.5f32..6.0,
        0.05f32..=1.0,
    )
        .prop_map(|(tool, c, r, s)| VoxelBrush::new(tool, c, r).with_strength(s));
    prop_oneof![3 => snapped, 1 => free]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn random_strokes_of_every_tool_leave_no_degenerate_geometry(
        brushes in prop::collection::vec(brush(), 1..5)
    ) {
        let mut w = world();
        for b in &brushes {
            let edit = w.apply_brush(b).unwrap();
            assert_off_iso(&w, &edit);
        }
        let m = meshed(&mut w);
        prop_assert_eq!(defects(&m), Defects::default());
    }
}
