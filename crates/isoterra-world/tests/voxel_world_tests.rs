//! Tests of the voxel world: seams, watertightness, undo, dirty sets, bad
//! brushes, raycasts and determinism.

use std::collections::{BTreeSet, HashMap};

use isoterra_field::VoxelGen;
use isoterra_world::{
    EditDirection, VoxelBrush, VoxelChunkMesh, VoxelParams, VoxelShape, VoxelTool, VoxelWorld,
    WorldError,
};
use proptest::prelude::*;

const N: i32 = 8;

/// A generator that is all air around the origin.
fn air_gen() -> VoxelGen {
    VoxelGen::DEFAULT.with_ground_level(-10_000.0)
}

fn params() -> VoxelParams {
    VoxelParams::DEFAULT.with_chunk_cells(N as u32)
}

/// A world whose chunks `-2..=1` on every axis hold `f(x, y, z)` at their
/// nodes, air beyond.
fn world_from_fn(f: impl Fn(f32, f32, f32) -> f32) -> VoxelWorld {
    let mut w = VoxelWorld::new(&params().with_generator(air_gen())).unwrap();
    let n = N as i64;
    for cz in -2..=1 {
        for cy in -2..=1 {
            for cx in -2..=1 {
                let mut vals = Vec::new();
                for k in 0..n {
                    for j in 0..n {
                        for i in 0..n {
                            let p = [
                                (cx as i64 * n + i) as f32,
                                (cy as i64 * n + j) as f32,
                                (cz as i64 * n + k) as f32,
                            ];
                            vals.push(f(p[0], p[1], p[2]).clamp(-1.0, 1.0));
                        }
                    }
                }
                let len = vals.len();
                w.insert_chunk([cx, cy, cz], vals, vec![3; len]).unwrap();
            }
        }
    }
    w.rebuild_all();
    w
}

fn bumpy_ball(x: f32, y: f32, z: f32) -> f32 {
    let r = (x * x + y * y + z * z).sqrt();
    (5.5 - r + 0.7 * (0.9 * x).sin() * (1.3 * y + 0.4).sin() * (0.7 * z + 1.1).cos()) * 0.5
}

/// Counts edges of the welded union of meshes that are not used by exactly
/// two triangles.
fn open_edges(meshes: &[&VoxelChunkMesh]) -> (usize, usize) {
    let mut ids: HashMap<[u32; 3], u32> = HashMap::new();
    let mut edges: HashMap<(u32, u32), u32> = HashMap::new();
    let mut tris = 0;
    for m in meshes {
        let map: Vec<u32> = m
            .positions
            .iter()
            .map(|p| {
                let key = p.map(f32::to_bits);
                let next = ids.len() as u32;
                *ids.entry(key).or_insert(next)
            })
            .collect();
        for t in m.indices.chunks_exact(3) {
            tris += 1;
            let v = [map[t[0] as usize], map[t[1] as usize], map[t[2] as usize]];
            assert!(
                v[0] != v[1] && v[1] != v[2] && v[0] != v[2],
                "degenerate triangle"
            );
            for e in 0..3 {
                let (a, b) = (v[e], v[(e + 1) % 3]);
                *edges.entry((a.min(b), a.max(b))).or_default() += 1;
            }
        }
    }
    (edges.values().filter(|&&c| c != 2).count(), tris)
}

fn all_meshes(w: &VoxelWorld) -> Vec<&VoxelChunkMesh> {
    w.meshed_chunks().filter_map(|c| w.chunk_mesh(c)).collect()
}

#[test]
fn closed_shape_across_eight_chunks_is_watertight() {
    let w = world_from_fn(bumpy_ball);
    let meshes = all_meshes(&w);
    let (open, tris) = open_edges(&meshes);
    assert!(tris > 200, "{tris} triangles");
    assert_eq!(open, 0);
    let (lo, hi) = w.chunks_covering([-6.0; 3], [6.0; 3]).unwrap();
    assert_eq!((lo, hi), ([-1; 3], [0; 3]));
    let merged = w.merged_mesh(lo, hi);
    assert_eq!(merged.triangle_count(), tris);
    assert_eq!(open_edges(&[&merged]), (0, tris));
    assert!(w.chunks_covering([f32::NAN; 3], [0.0; 3]).is_err());
    assert!(w.chunks_covering([1.0; 3], [0.0; 3]).is_err());
    // The ball spans all eight chunks around the origin.
    for c in [[-1, -1, -1], [0, 0, 0], [-1, 0, -1], [0, -1, 0]] {
        assert!(!w.chunk_mesh(c).unwrap().is_empty(), "chunk {c:?}");
    }
}

/// Edges of one index-welded mesh not used by exactly two triangles, and
/// the number of triangles that repeat an index.
fn open_edges_indexed(m: &VoxelChunkMesh) -> (usize, usize) {
    let mut edges: HashMap<(u32, u32), u32> = HashMap::new();
    let mut degenerate = 0;
    for t in m.indices.chunks_exact(3) {
        if t[0] == t[1] || t[1] == t[2] || t[0] == t[2] {
            degenerate += 1;
        }
        for e in 0..3 {
            let (a, b) = (t[e], t[(e + 1) % 3]);
            *edges.entry((a.min(b), a.max(b))).or_default() += 1;
        }
    }
    (edges.values().filter(|&&c| c != 2).count(), degenerate)
}

#[test]
fn samples_exactly_at_iso_make_no_holes() {
    // Values exactly 0 on many nodes. Several edges may then share a vertex
    // position (t = 0 at an iso node), so the mesh is checked by its own
    // indices, on one chunk that holds the whole shape.
    let c = 4.0;
    let shapes: [&dyn Fn(f32, f32, f32) -> f32; 3] = [
        &|x, y, z| 3.0 - (x - c).abs().max((y - c).abs()).max((z - c).abs()),
        &|x, y, z| {
            let r = ((x - c).powi(2) + (y - c).powi(2) + (z - c).powi(2)).sqrt();
            ((3.0 - r) * 2.0).round() * 0.5
        },
        &|x, y, _| {
            if (x - c).abs() <= 2.0 && (y - c).abs() <= 2.0 {
                0.0
            } else {
                -1.0
            }
        },
    ];
    for (k, f) in shapes.iter().enumerate() {
        let w = world_from_fn(|x, y, z| if z > 0.0 && z < 8.0 { f(x, y, z) } else { -1.0 });
        let m = w.chunk_mesh([0, 0, 0]).unwrap();
        assert!(m.triangle_count() > 0, "shape {k}");
        assert_eq!(open_edges_indexed(m), (0, 0), "shape {k}");
        for other in w.meshed_chunks().filter(|&o| o != [0, 0, 0]) {
            assert!(
                w.chunk_mesh(other).unwrap().is_empty(),
                "shape {k} chunk {other:?}"
            );
        }
    }
}

type VertexKey = ([u32; 3], [u32; 3]);

fn face_vertices(m: &VoxelChunkMesh, axis: usize, at: f32) -> BTreeSet<VertexKey> {
    m.positions
        .iter()
        .zip(&m.normals)
        .filter(|(p, _)| p[axis] == at)
        .map(|(p, n)| (p.map(f32::to_bits), n.map(f32::to_bits)))
        .collect()
}

#[test]
fn shared_faces_have_bitwise_identical_positions_and_normals() {
    let w = world_from_fn(bumpy_ball);
    for axis in 0..3 {
        for a in [-1, 0] {
            for b in [-1, 0] {
                let mut lo = [a, b, 0];
                lo.rotate_right(2 - axis);
                let mut lo3 = [0; 3];
                // Put -1 on `axis`, the other two from (a, b).
                let others: Vec<usize> = (0..3).filter(|&k| k != axis).collect();
                lo3[axis] = -1;
                lo3[others[0]] = a;
                lo3[others[1]] = b;
                let mut hi3 = lo3;
                hi3[axis] = 0;
                let ma = w.chunk_mesh(lo3).unwrap();
                let mb = w.chunk_mesh(hi3).unwrap();
                let fa = face_vertices(ma, axis, 0.0);
                let fb = face_vertices(mb, axis, 0.0);
                assert!(!fa.is_empty(), "axis {axis} chunk {lo3:?}");
                assert_eq!(fa, fb, "axis {axis} chunks {lo3:?} / {hi3:?}");
            }
        }
    }
}

fn snapshot(w: &VoxelWorld) -> Vec<([i32; 3], Vec<u32>, Vec<u8>)> {
    let len = w.chunk_len();
    w.loaded_chunks()
        .map(|c| {
            let ch = w.chunk(c).unwrap();
            (
                c,
                ch.density
                    .to_dense(len)
                    .into_iter()
                    .map(f32::to_bits)
                    .collect(),
                ch.materials.to_dense(len),
            )
        })
        .collect()
}

/// `now` holds the same world as `then`: the same bytes in every chunk
/// `then` held, and generated bytes in the chunks loaded since (a blended
/// brush reaches past the region the test loaded first, and loading
/// generates).
fn same_world(
    now: &[([i32; 3], Vec<u32>, Vec<u8>)],
    then: &[([i32; 3], Vec<u32>, Vec<u8>)],
) -> Result<(), TestCaseError> {
    for (c, values, mats) in now {
        match then.iter().find(|t| t.0 == *c) {
            Some(t) => {
                prop_assert!(t.1 == *values && t.2 == *mats, "chunk {:?} differs", c);
            }
            None => {
                let mut fresh = generated_world();
                fresh.ensure_region(*c, *c).unwrap();
                let g = snapshot(&fresh);
                let g = g.iter().find(|t| t.0 == *c).unwrap();
                prop_assert!(
                    g.1 == *values && g.2 == *mats,
                    "loaded chunk {:?} is not as generated",
                    c
                );
            }
        }
    }
    for t in then {
        prop_assert!(
            now.iter().any(|n| n.0 == t.0),
            "chunk {:?} was dropped",
            t.0
        );
    }
    Ok(())
}

fn generated_world() -> VoxelWorld {
    let mut w = VoxelWorld::new(&params().with_generator(VoxelGen::DEFAULT.with_seed(11))).unwrap();
    w.ensure_region([-3, -3, -3], [2, 2, 2]).unwrap();
    w
}

/// Reference for the dirty set of an edit: every chunk whose meshing reads
/// a node the edit changed (its normal stencil `[c*N - 1, c*N + N + 1]` for
/// a density change, its cells `[c*N, c*N + N]` for a material change),
/// searched over chunks `-6..=6`.
fn chunks_reading_changes(edit: &isoterra_world::VoxelEdit) -> BTreeSet<[i32; 3]> {
    let n = N as i64;
    let mut want = BTreeSet::new();
    for cz in -6..=6 {
        for cy in -6..=6 {
            for cx in -6..=6 {
                let c = [cx as i64, cy as i64, cz as i64];
                let reads = edit.nodes.iter().enumerate().any(|(k, g)| {
                    let dv = edit.before[k].to_bits() != edit.after[k].to_bits();
                    let dm = edit.mat_before[k] != edit.mat_after[k];
                    let in_range = |lo: i64, hi: i64| {
                        (0..3).all(|a| c[a] * n + lo <= g[a] && g[a] <= c[a] * n + n + hi)
                    };
                    (dv && in_range(-1, 1)) || (dm && in_range(0, 0))
                });
                if reads {
                    want.insert([cx, cy, cz]);
                }
            }
        }
    }
    want
}

fn tool_strategy() -> impl Strategy<Value = VoxelTool> {
    prop::sample::select(VoxelTool::ALL.to_vec())
}

fn brush_strategy() -> impl Strategy<Value = VoxelBrush> {
    (
        tool_strategy(),
        prop::array::uniform3(-10.0f32..10.0),
        0.5f32..6.0,
        prop_oneof![Just(1.0f32), 0.05f32..1.0],
        0u8..4,
        prop::option::of((prop::array::uniform3(-1.0f32..1.0), -3.0f32..3.0)),
        prop::sample::select(VoxelShape::ALL.to_vec()),
        prop_oneof![Just(0.0f32), 0.0f32..VoxelBrush::MAX_BLEND],
    )
        .prop_map(
            |(tool, center, radius, strength, material, plane, shape, blend)| {
                let mut b = VoxelBrush::new(tool, center, radius)
                    .with_strength(strength)
                    .with_material(material)
                    .with_shape(shape)
                    .with_blend(blend);
                if let Some((n, o)) = plane
                    && n.iter().map(|v| v * v).sum::<f32>() > 0.01
                {
                    b = b.with_plane(n, o);
                }
                b
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn undo_and_redo_restore_exact_bytes(brushes in prop::collection::vec(brush_strategy(), 1..4)) {
        let mut w = generated_world();
        let start = snapshot(&w);
        let mut edits = Vec::new();
        for b in &brushes {
            edits.push(w.apply_brush(b).unwrap());
        }
        let end = snapshot(&w);
        for e in edits.iter().rev() {
            w.apply_edit(e, EditDirection::Backward).unwrap();
        }
        same_world(&snapshot(&w), &start)?;
        for e in &edits {
            w.apply_edit(e, EditDirection::Forward).unwrap();
        }
        same_world(&snapshot(&w), &end)?;
    }

    #[test]
    fn edits_dirty_exactly_the_chunks_that_read_a_changed_node(b in brush_strategy()) {
        let mut w = generated_world();
        w.rebuild_all();
        prop_assert_eq!(w.dirty_count(), 0);
        let edit = w.apply_brush(&b).unwrap();
        let got: BTreeSet<[i32; 3]> = w.dirty_chunks().collect();
        let want = chunks_reading_changes(&edit);
        prop_assert_eq!(got, want);
    }

    #[test]
    fn take_dirty_returns_exactly_the_chunks_each_edit_dirties(
        first in brush_strategy(),
        second in brush_strategy(),
    ) {
        let mut w = generated_world();
        // Mesh some chunks so that taking the dirty set has cached meshes to drop.
        w.rebuild_all();
        let meshed: BTreeSet<[i32; 3]> = w.meshed_chunks().collect();
        prop_assert!(w.take_dirty().is_empty());
        let mut stale = BTreeSet::new();
        for b in [&first, &second] {
            let edit = w.apply_brush(b).unwrap();
            let taken = w.take_dirty();
            // Ascending, without repeats, and exactly the reference set.
            prop_assert!(taken.windows(2).all(|p| p[0] < p[1]));
            let taken: BTreeSet<[i32; 3]> = taken.into_iter().collect();
            prop_assert_eq!(&taken, &chunks_reading_changes(&edit));
            prop_assert_eq!(w.dirty_count(), 0);
            prop_assert!(w.take_dirty().is_empty());
            stale.extend(taken);
        }
        // Nothing was meshed; the out-of-date meshes are gone, the others kept.
        for c in &meshed {
            prop_assert_eq!(w.chunk_mesh(*c).is_some(), !stale.contains(c), "{:?}", c);
        }
        prop_assert!(w.meshed_chunks().all(|c| meshed.contains(&c)));
    }

    /// Every node a brush changes lies within its reach of the centre on
    /// each axis, and inside (dig, add without blend: on the solid's side
    /// of) the shape's surface plus a cell.
    #[test]
    fn brushes_change_only_nodes_within_their_reach(b in brush_strategy()) {
        let mut w = generated_world();
        let edit = w.apply_brush(&b).unwrap();
        for g in &edit.nodes {
            let p = g.map(|v| v as f32);
            for (v, c) in p.iter().zip(b.center) {
                prop_assert!((v - c).abs() <= b.reach() + 1.0, "{:?} {:?}", g, b);
            }
            if b.blend == 0.0 {
                prop_assert!(b.density(p) > -1.0 - 1e-4, "{:?} changed outside {:?}", g, b);
            }
        }
    }

    #[test]
    fn raycast_agrees_with_is_solid(
        dir in prop::array::uniform3(-1.0f32..1.0),
        start in prop::array::uniform3(-14.0f32..14.0),
    ) {
        let w = world_from_fn(bumpy_ball);
        let to = [start[0] + dir[0] * 20.0, start[1] + dir[1] * 20.0, start[2] + dir[2] * 20.0];
        let hit = w.raycast(start, to);
        // Reference: fine stepping.
        let steps = 4000;
        let first = (0..=steps).map(|i| i as f32 / steps as f32).find(|&t| {
            w.is_solid([
                start[0] + (to[0] - start[0]) * t,
                start[1] + (to[1] - start[1]) * t,
                start[2] + (to[2] - start[2]) * t,
            ])
        });
        match (hit, first) {
            (Some(h), Some(t)) => {
                prop_assert!(w.is_solid(h.point));
                prop_assert!(h.t <= t + 1e-6, "hit {} after first solid sample {}", h.t, t);
                prop_assert!(h.t >= t - 1.0 / steps as f32 - 1e-4, "hit {} before reference {}", h.t, t);
                let len = h.normal.iter().map(|v| v * v).sum::<f32>().sqrt();
                prop_assert!((len - 1.0).abs() < 1e-3);
            }
            (None, None) => {}
            (h, f) => prop_assert!(false, "raycast {:?} but reference {:?}", h, f),
        }
    }
}

#[test]
fn raycast_hits_a_ball_from_outside_with_an_outward_normal() {
    let w = world_from_fn(|x, y, z| (5.0 - (x * x + y * y + z * z).sqrt()) * 0.5);
    let hit = w.raycast([12.0, 0.3, 0.2], [-12.0, 0.3, 0.2]).unwrap();
    assert!((hit.point[0] - 5.0).abs() < 0.2, "{hit:?}");
    assert!(hit.normal[0] > 0.9, "{hit:?}");
    assert!(w.is_solid(hit.point));
    assert!(w.raycast([12.0, 9.0, 0.0], [-12.0, 9.0, 0.0]).is_none());
    assert!(w.raycast([f32::NAN, 0.0, 0.0], [0.0; 3]).is_none());
    // Starting inside hits at once.
    assert_eq!(w.raycast([0.0; 3], [1.0, 0.0, 0.0]).unwrap().t, 0.0);
}

#[test]
fn bad_brushes_are_rejected_and_change_nothing() {
    let mut w = generated_world();
    w.rebuild_all();
    let before = snapshot(&w);
    let ok = VoxelBrush::new(VoxelTool::Dig, [0.0; 3], 3.0);
    let bad = [
        VoxelBrush::new(VoxelTool::Dig, [f32::NAN, 0.0, 0.0], 3.0),
        VoxelBrush::new(VoxelTool::Add, [0.0, f32::INFINITY, 0.0], 3.0),
        VoxelBrush::new(VoxelTool::Dig, [0.0, 0.0, 1.0e9], 3.0),
        VoxelBrush::new(VoxelTool::Dig, [0.0; 3], 0.0),
        VoxelBrush::new(VoxelTool::Dig, [0.0; 3], -1.0),
        VoxelBrush::new(VoxelTool::Dig, [0.0; 3], f32::NAN),
        VoxelBrush::new(VoxelTool::Dig, [0.0; 3], f32::INFINITY),
        VoxelBrush::new(VoxelTool::Dig, [0.0; 3], 1.0e6),
        ok.with_strength(0.0),
        ok.with_strength(1.5),
        ok.with_strength(f32::NAN),
        ok.with_blend(-0.5),
        ok.with_blend(9.0),
        ok.with_blend(f32::NAN),
        VoxelBrush::new(VoxelTool::Flatten, [0.0; 3], 3.0).with_plane([0.0; 3], 0.0),
        VoxelBrush::new(VoxelTool::Flatten, [0.0; 3], 3.0).with_plane([0.0, 1.0, 0.0], f32::NAN),
    ];
    for b in bad {
        let e = w.apply_brush(&b);
        assert!(
            matches!(e, Err(WorldError::InvalidParameter { .. })),
            "{b:?}: {e:?}"
        );
    }
    assert_eq!(snapshot(&w), before);
    assert_eq!(w.dirty_count(), 0);
    assert_eq!(w.modified_chunks().count(), 0);
    assert!(w.apply_brush(&ok).is_ok());
}

#[test]
fn malformed_edits_are_rejected() {
    let mut w = generated_world();
    let mut e = w
        .apply_brush(&VoxelBrush::new(VoxelTool::Add, [0.0, 20.0, 0.0], 3.0))
        .unwrap();
    assert!(!e.is_empty());
    let before = snapshot(&w);
    let mut short = e.clone();
    short.after.pop();
    assert!(w.apply_edit(&short, EditDirection::Forward).is_err());
    let mut nan = e.clone();
    nan.before[0] = f32::NAN;
    assert!(w.apply_edit(&nan, EditDirection::Backward).is_err());
    e.nodes.reverse();
    if e.len() > 1 {
        assert!(w.apply_edit(&e, EditDirection::Backward).is_err());
    }
    assert_eq!(snapshot(&w), before);
}

#[test]
fn tools_do_what_they_say() {
    let mut w = generated_world();
    // Ground is around y = 0 (within ±16); dig well below and add well above.
    w.apply_brush(&VoxelBrush::new(VoxelTool::Add, [0.0, 30.0, 0.0], 3.0).with_material(2))
        .unwrap();
    assert!(w.is_solid([0.0, 30.0, 0.0]));
    assert_eq!(w.node([0, 30, 0]).unwrap().1, 2);
    w.apply_brush(&VoxelBrush::new(VoxelTool::Dig, [0.0, 30.0, 0.0], 4.0))
        .unwrap();
    assert!(!w.is_solid([0.0, 30.0, 0.0]));
    w.apply_brush(&VoxelBrush::new(VoxelTool::Flatten, [0.0, 20.0, 0.0], 3.0))
        .unwrap();
    assert!(w.is_solid([0.0, 19.0, 0.0]));
    assert!(!w.is_solid([0.0, 21.0, 0.0]));
    let e = w
        .apply_brush(&VoxelBrush::new(VoxelTool::Paint, [0.0, 19.0, 0.0], 2.0).with_material(7))
        .unwrap();
    assert!(!e.is_empty());
    assert_eq!(w.node([0, 19, 0]).unwrap().1, 7);
    assert_eq!(w.node([0, 21, 0]).unwrap().1, 0);
    let e = w
        .apply_brush(&VoxelBrush::new(VoxelTool::Smooth, [0.0, 20.0, 0.0], 3.0))
        .unwrap();
    assert!(e.before.iter().zip(&e.after).all(|(a, b)| a != b));
    assert!(w.modified_chunks().count() > 0);
}

#[test]
fn rebuild_is_the_same_at_any_thread_count() {
    let build = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut w = VoxelWorld::new(
                &params()
                    .with_generator(VoxelGen::DEFAULT.with_seed(5).with_ground_amplitude(12.0)),
            )
            .unwrap();
            w.ensure_region([-1, -2, -1], [1, 1, 1]).unwrap();
            w.apply_brush(&VoxelBrush::new(VoxelTool::Dig, [3.0, 1.0, -2.0], 5.0))
                .unwrap();
            w.rebuild_all();
            let meshes: Vec<_> = w
                .meshed_chunks()
                .map(|c| {
                    let m = w.chunk_mesh(c).unwrap();
                    (
                        c,
                        m.positions
                            .iter()
                            .map(|p| p.map(f32::to_bits))
                            .collect::<Vec<_>>(),
                        m.normals
                            .iter()
                            .map(|p| p.map(f32::to_bits))
                            .collect::<Vec<_>>(),
                        m.materials.clone(),
                        m.indices.clone(),
                    )
                })
                .collect();
            (snapshot(&w), meshes)
        })
    };
    let one = build(1);
    let four = build(4);
    assert!(one.1.iter().any(|m| !m.4.is_empty()));
    assert_eq!(one, four);
}

#[test]
fn budgeted_rebuild_makes_progress_and_finishes() {
    let mut w = generated_world();
    let total = w.dirty_count();
    assert_eq!(total, 216);
    let r = w.rebuild(Some(std::time::Duration::ZERO));
    assert!(r.rebuilt >= 1);
    assert_eq!(r.rebuilt + r.remaining, total);
    w.rebuild_all();
    assert_eq!(w.dirty_count(), 0);
    let m = w.chunk_mesh([0, 0, 0]).unwrap();
    let (pos, tris) = m.to_trimesh();
    assert_eq!(pos.len(), m.positions.len());
    assert_eq!(tris.len(), m.triangle_count());
}

#[test]
fn uniform_chunks_are_stored_as_one_value() {
    let mut w = VoxelWorld::new(&params().with_generator(air_gen())).unwrap();
    w.ensure_region([0, 0, 0], [0, 0, 0]).unwrap();
    assert!(matches!(
        w.chunk([0, 0, 0]).unwrap().density,
        isoterra_world::VoxelChunkData::Uniform(v) if v == -1.0
    ));
    assert!(w.ensure_region([1, 0, 0], [0, 0, 0]).is_err());
    assert!(w.ensure_region([0, 0, 0], [100, 100, 100]).is_err());
}

#[test]
fn bad_params_are_rejected() {
    for p in [
        params().with_chunk_cells(1),
        params().with_chunk_cells(1000),
        params().with_iso(f32::NAN),
        params().with_iso(1.0),
        params().with_generator(VoxelGen::DEFAULT.with_falloff(0.0)),
    ] {
        assert!(VoxelWorld::new(&p).is_err(), "{p:?}");
    }
}

#[test]
fn generated_nodes_are_the_generator_values_bit_for_bit() {
    for preset in isoterra_field::VoxelPreset::ALL {
        let g = VoxelGen::new(preset, 77).with_planet_radius(12.0);
        let mut w = VoxelWorld::new(&params().with_generator(g)).unwrap();
        w.ensure_region([-2, -1, -2], [1, 0, 1]).unwrap();
        let s = g.sampler().unwrap();
        // Nodes whose + neighbours are loaded too (trilinear reads them).
        for z in (-16..15).step_by(3) {
            for y in -8..7 {
                for x in (-16..16).step_by(5) {
                    let p = [x as f32, y as f32, z as f32];
                    assert_eq!(
                        w.density_at(p).unwrap().to_bits(),
                        s.density(p).to_bits(),
                        "{preset:?} at {p:?}"
                    );
                }
            }
        }
        // Pick from above: a downward ray through the generated terrain
        // hits where the column turns solid.
        let hit = w.raycast([0.5, 7.5, 0.5], [0.5, -8.0, 0.5]);
        if let Some(h) = hit {
            assert!(w.is_solid(h.point));
        } else {
            assert!(!w.is_solid([0.5, -8.0, 0.5]));
        }
    }
}

/// Meshes chunk `c` the slow way: every node of its `(N + 3)^3` grid read
/// one at a time with `node`, then marching cubes in node-index units moved
/// by the chunk's origin.
fn reference_chunk_mesh(w: &VoxelWorld, c: [i32; 3]) -> VoxelChunkMesh {
    use isoterra_mesh::{CellBox, CubesOptions, CubesOutput, MarchingCubes};
    let n = w.chunk_cells() as i64;
    let s = (n + 3) as u32;
    let o = c.map(|v| v as i64 * n - 1);
    let mut values = Vec::new();
    let mut mats = Vec::new();
    for z in 0..s as i64 {
        for y in 0..s as i64 {
            for x in 0..s as i64 {
                let (v, m) = w.node([o[0] + x, o[1] + y, o[2] + z]).unwrap_or((-1.0, 0));
                values.push(v);
                mats.push(m);
            }
        }
    }
    let mut out = CubesOutput::default();
    MarchingCubes::new()
        .mesh_slice_with_materials(
            &values,
            &mats,
            [s; 3],
            CellBox::new(1, 1, 1, s - 2, s - 2, s - 2),
            &CubesOptions::DEFAULT.with_iso(w.params().iso),
            &mut out,
        )
        .unwrap();
    let origin = o.map(|v| v as f32);
    VoxelChunkMesh {
        positions: out
            .positions
            .iter()
            .map(|p| [origin[0] + p[0], origin[1] + p[1], origin[2] + p[2]])
            .collect(),
        normals: out.normals,
        materials: out.materials,
        indices: out.indices,
    }
}

/// A mesh as bits: positions, normals, materials, indices.
type MeshBits = (Vec<[u32; 3]>, Vec<[u32; 3]>, Vec<u8>, Vec<u32>);

fn mesh_bits(m: &VoxelChunkMesh) -> MeshBits {
    (
        m.positions.iter().map(|p| p.map(f32::to_bits)).collect(),
        m.normals.iter().map(|p| p.map(f32::to_bits)).collect(),
        m.materials.clone(),
        m.indices.clone(),
    )
}

#[test]
fn mesh_chunk_matches_a_node_by_node_gather_and_the_rebuild_cache() {
    for cells in [8u32, 6] {
        let g = VoxelGen::DEFAULT.with_seed(9).with_ground_amplitude(10.0);
        let mut w = VoxelWorld::new(&params().with_chunk_cells(cells).with_generator(g)).unwrap();
        w.ensure_region([-2, -2, -2], [1, 1, 1]).unwrap();
        // Mixed materials in some chunks, uniform in others.
        w.apply_brush(&VoxelBrush::new(VoxelTool::Add, [2.0, 3.0, -1.0], 4.0).with_material(5))
            .unwrap();
        w.apply_brush(&VoxelBrush::new(VoxelTool::Paint, [-3.0, -2.0, 2.0], 5.0).with_material(1))
            .unwrap();
        w.apply_brush(&VoxelBrush::new(VoxelTool::Dig, [-4.0, -6.0, -3.0], 3.5))
            .unwrap();
        w.rebuild_all();
        let mut mesher = isoterra_world::VoxelMesher::new();
        let mut out = VoxelChunkMesh::default();
        let mut surfaces = 0;
        for c in w.meshed_chunks().collect::<Vec<_>>() {
            w.mesh_chunk(c, &mut mesher, &mut out);
            let want = reference_chunk_mesh(&w, c);
            assert_eq!(
                mesh_bits(&out),
                mesh_bits(&want),
                "N = {cells}, chunk {c:?}"
            );
            assert_eq!(
                mesh_bits(&out),
                mesh_bits(w.chunk_mesh(c).unwrap()),
                "N = {cells}, chunk {c:?}"
            );
            surfaces += usize::from(!out.is_empty());
        }
        assert!(
            surfaces > 8,
            "N = {cells}: {surfaces} chunks with a surface"
        );
        // A chunk far from anything loaded reads as air.
        w.mesh_chunk([40, 40, 40], &mut mesher, &mut out);
        assert!(out.is_empty() && out.positions.is_empty());
    }
}

#[test]
fn edits_do_not_depend_on_the_chunk_size() {
    let g = VoxelGen::DEFAULT.with_seed(4).with_ground_amplitude(10.0);
    let brushes = [
        VoxelBrush::new(VoxelTool::Dig, [1.5, -2.0, 0.5], 6.0),
        VoxelBrush::new(VoxelTool::Add, [-5.0, 4.0, 3.0], 4.5).with_material(3),
        VoxelBrush::new(VoxelTool::Smooth, [0.0, 0.0, 0.0], 5.0).with_strength(0.5),
        VoxelBrush::new(VoxelTool::Flatten, [3.0, 1.0, -2.0], 4.0),
        VoxelBrush::new(VoxelTool::Paint, [-1.0, -3.0, 1.0], 7.0).with_material(6),
    ];
    let run = |cells: u32| {
        let mut w = VoxelWorld::new(&params().with_chunk_cells(cells).with_generator(g)).unwrap();
        let edits: Vec<_> = brushes.iter().map(|b| w.apply_brush(b).unwrap()).collect();
        let nodes: Vec<_> = (-12..12)
            .flat_map(|z| (-12..12).flat_map(move |y| (-12..12).map(move |x| [x, y, z])))
            .map(|g| w.node(g).map(|(v, m)| (v.to_bits(), m)))
            .collect();
        (edits, nodes)
    };
    let (e8, n8) = run(8);
    assert!(e8.iter().all(|e| !e.is_empty()));
    for cells in [6, 5, 16] {
        let (e, n) = run(cells);
        assert_eq!(e, e8, "N = {cells}");
        // Different chunk sizes load different regions: compare the nodes
        // both worlds hold.
        let both = n
            .iter()
            .zip(&n8)
            .filter(|(a, b)| a.is_some() && b.is_some());
        let (same, differ) = both.fold(
            (0, 0),
            |(s, d), (a, b)| {
                if a == b { (s + 1, d) } else { (s, d + 1) }
            },
        );
        assert_eq!(differ, 0, "N = {cells}");
        assert!(same > 10_000, "N = {cells}: {same}");
    }
}

#[test]
fn an_edit_spread_over_far_apart_chunks_applies_and_undoes_exactly() {
    let mut w = VoxelWorld::new(&params().with_generator(air_gen())).unwrap();
    let nodes = vec![[3, 2, 1], [-5, 7, 1], [1 << 20, 7, 1], [6, 1, 1 << 20]];
    // Ascending by (z, y, x).
    let nodes = {
        let mut v = nodes;
        v.sort_by_key(|g| [g[2], g[1], g[0]]);
        v
    };
    let k = nodes.len();
    let edit = isoterra_world::VoxelEdit {
        nodes: nodes.clone(),
        before: vec![-1.0; k],
        after: vec![0.5, 0.25, -0.5, 1.0],
        mat_before: vec![0; k],
        mat_after: vec![1, 2, 3, 4],
    };
    w.apply_edit(&edit, EditDirection::Forward).unwrap();
    for (i, g) in nodes.iter().enumerate() {
        assert_eq!(
            w.node(*g),
            Some((edit.after[i], edit.mat_after[i])),
            "{g:?}"
        );
    }
    // Each changed density dirties the chunks whose stencil holds it.
    let n = N as i64;
    let mut want = BTreeSet::new();
    for g in &nodes {
        let r = g.map(|v| [(v - 2).div_euclid(n) as i32, (v + 1).div_euclid(n) as i32]);
        for z in r[2][0]..=r[2][1] {
            for y in r[1][0]..=r[1][1] {
                for x in r[0][0]..=r[0][1] {
                    want.insert([x, y, z]);
                }
            }
        }
    }
    assert_eq!(w.dirty_chunks().collect::<BTreeSet<_>>(), want);
    w.apply_edit(&edit, EditDirection::Backward).unwrap();
    for g in &nodes {
        assert_eq!(w.node(*g), Some((-1.0, 0)), "{g:?}");
    }
}

/// A solid world below `y = 0`: density `-y`, clamped.
fn flat_ground() -> VoxelWorld {
    world_from_fn(|_, y, _| -y)
}

/// Digging a box or a capsule carves that solid, not a ball: a box takes
/// the corners a ball leaves, a capsule is twice as tall as it is wide.
#[test]
fn box_and_capsule_brushes_carve_their_solid() {
    let c = [0.0, -6.0, 0.0];
    let mut ball = flat_ground();
    ball.apply_brush(&VoxelBrush::new(VoxelTool::Dig, c, 4.0))
        .unwrap();
    let mut cube = flat_ground();
    cube.apply_brush(&VoxelBrush::new(VoxelTool::Dig, c, 4.0).with_shape(VoxelShape::Box))
        .unwrap();
    let corner = [3.0, -9.0, 3.0];
    assert!(ball.is_solid(corner));
    assert!(!cube.is_solid(corner));
    assert!(cube.is_solid([5.0, -6.0, 0.0]));
    let mut pill = flat_ground();
    pill.apply_brush(&VoxelBrush::new(VoxelTool::Dig, c, 4.0).with_shape(VoxelShape::Capsule))
        .unwrap();
    // Radius 2 around the segment y = -8..=-4: 3 cells up is air, 3 cells
    // sideways is rock.
    assert!(!pill.is_solid([0.0, -9.5, 0.0]));
    assert!(!pill.is_solid([0.0, -2.5, 0.0]));
    assert!(pill.is_solid([3.0, -6.0, 0.0]));
    assert!(!ball.is_solid([3.0, -6.0, 0.0]));
}

/// A blended dig rounds the pit's rim: nodes at the ground just outside
/// the ball are lowered (a fillet), where a plain dig leaves them; far
/// ground is untouched, and undo gives the exact bytes back.
#[test]
fn a_blended_dig_rounds_the_rim() {
    let c = [0.0, 0.0, 0.0];
    let mut plain = flat_ground();
    plain
        .apply_brush(&VoxelBrush::new(VoxelTool::Dig, c, 4.0))
        .unwrap();
    let mut soft = flat_ground();
    let start = snapshot(&soft);
    let edit = soft
        .apply_brush(&VoxelBrush::new(VoxelTool::Dig, c, 4.0).with_blend(3.0))
        .unwrap();
    // Just outside the ball, on the surface: solid after a plain dig, air
    // (the fillet) after a blended one.
    let rim = [4.6, -0.4, 0.0];
    assert!(plain.is_solid(rim));
    assert!(!soft.is_solid(rim));
    // Far away the ground is as it was.
    assert!(soft.is_solid([9.0, -0.5, 0.0]));
    assert!(edit.nodes.iter().all(|g| g.iter().all(|v| v.abs() <= 9)));
    soft.apply_edit(&edit, EditDirection::Backward).unwrap();
    assert_eq!(snapshot(&soft), start);
}
