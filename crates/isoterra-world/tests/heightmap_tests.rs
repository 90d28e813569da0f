//! Tests of the heightmap world kind: selection with the world's LOD rings,
//! 2:1, streaming with hysteresis, sculpting with exact undo, dirty
//! tracking, seams, culling and thread determinism.

use std::collections::{BTreeMap, BTreeSet};
#[cfg(feature = "parallel")]
use std::sync::Arc;

use isoterra_mesh::HeightChunkInput;
use isoterra_world::{
    EditDirection, Frustum, HeightBrush, HeightTool, HeightmapParams, HeightmapSource,
    HeightmapWorld, MeshKey, StreamViewer, WorldError, desired_chunks, neighbour_lods,
};
use proptest::prelude::*;

fn small() -> HeightmapParams {
    HeightmapParams::DEFAULT
        .with_chunk_cells(8)
        .with_lod_count(3)
        .with_lod_distance(16.0)
        .with_view_distance(64.0)
        .with_move_threshold(4.0)
        .with_unload_hysteresis(8.0)
        .with_seed(7)
}

fn world() -> HeightmapWorld {
    HeightmapWorld::new(&small()).unwrap()
}

/// A viewer at `at` seeing `distance` far, with the world's LOD rings (LOD
/// `k` from `lod_distance * 2^(k-1)`).
fn viewer(p: &HeightmapParams, at: [f32; 3], distance: f32) -> StreamViewer {
    let rings = (0..p.max_lod())
        .map(|k| p.lod_distance * (1u32 << k) as f32)
        .collect();
    StreamViewer::new(at, distance).with_lod_distances(rings)
}

/// The chunks and LODs that viewers at `(position, view distance)` want on
/// the world's grid ([`HeightmapSource::stream_config`]), as heightmap chunk
/// coordinates, sorted.
fn select(
    p: &HeightmapParams,
    viewers: &[([f32; 3], f32)],
) -> Result<Vec<([i32; 2], u8)>, WorldError> {
    let config = HeightmapSource::new(p)?.stream_config();
    let viewers: Vec<StreamViewer> = viewers.iter().map(|&(at, d)| viewer(p, at, d)).collect();
    Ok(desired_chunks(&viewers, &config)?
        .into_iter()
        .map(|(c, lod)| {
            assert_eq!(c[2], 0, "a heightmap grid is flat");
            ([c[0], c[1]], lod)
        })
        .collect())
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn bits3(v: &[[f32; 3]]) -> Vec<[u32; 3]> {
    v.iter()
        .map(|p| [p[0].to_bits(), p[1].to_bits(), p[2].to_bits()])
        .collect()
}

fn layer_bits(w: &HeightmapWorld) -> BTreeMap<[i32; 2], Vec<u32>> {
    w.edit_layer()
        .into_iter()
        .map(|(c, d)| (c, bits(&d)))
        .collect()
}

fn brush_strategy() -> impl Strategy<Value = HeightBrush> {
    (
        0usize..5,
        -24.0f32..24.0,
        -24.0f32..24.0,
        0.5f32..10.0,
        0.05f32..1.0,
        proptest::option::of(-20.0f32..80.0),
        any::<u64>(),
    )
        .prop_map(|(t, x, z, r, s, target, seed)| {
            HeightBrush::new(HeightTool::ALL[t], [x, z], r)
                .with_strength(s)
                .with_target_height(target)
                .with_seed(seed)
        })
}

#[test]
fn unedited_heights_are_the_generator() {
    let w = world();
    let p = small();
    for g in [[0i64, 0], [5, -3], [-100, 77]] {
        let h = w
            .generator()
            .height_at(p.node_coord(g[0]), p.node_coord(g[1]));
        assert_eq!(w.height(g).to_bits(), h.to_bits());
        assert_eq!(w.delta(g), 0.0);
    }
    assert!(w.edited_chunks().is_empty());
}

#[test]
fn shared_borders_have_identical_heights_and_normals() {
    let mut w = world();
    // Sculpt across the border between chunks (0,0), (1,0), (0,1), (1,1).
    w.apply_brush(&HeightBrush::new(HeightTool::Raise, [8.0, 8.0], 5.0))
        .unwrap();
    w.apply_brush(&HeightBrush::new(HeightTool::Noise, [7.0, 9.5], 4.0).with_strength(1.0))
        .unwrap();
    for lod in 0..3u8 {
        let a = w.build_mesh(&MeshKey::new([0, 0], lod)).unwrap();
        let b = w.build_mesh(&MeshKey::new([1, 0], lod)).unwrap();
        let c = w.build_mesh(&MeshKey::new([0, 1], lod)).unwrap();
        let n = (8usize >> lod) + 1;
        for j in 0..n {
            // +x border of a == -x border of b.
            let ia = j * n + (n - 1);
            let ib = j * n;
            assert_eq!(bits3(&[a.positions[ia]]), bits3(&[b.positions[ib]]));
            assert_eq!(bits3(&[a.normals[ia]]), bits3(&[b.normals[ib]]));
        }
        for i in 0..n {
            // +z border of a == -z border of c.
            let ia = (n - 1) * n + i;
            let ic = i;
            assert_eq!(bits3(&[a.positions[ia]]), bits3(&[c.positions[ic]]));
            assert_eq!(bits3(&[a.normals[ia]]), bits3(&[c.normals[ic]]));
        }
    }
}

#[test]
fn selection_covers_view_distance_and_takes_finest_lod() {
    let p = small();
    let v = ([4.0, 0.0, 4.0], 64.0);
    let sel = select(&p, &[v]).unwrap();
    let map: BTreeMap<[i32; 2], u8> = sel.iter().copied().collect();
    assert_eq!(map[&[0, 0]], 0);
    assert!(map.values().any(|&l| l == 2));
    // Exactly the chunks whose square is within the view distance.
    for cz in -12..12 {
        for cx in -12..12 {
            let dx = (cx as f32 * 8.0 - 4.0)
                .max(4.0 - (cx as f32 * 8.0 + 8.0))
                .max(0.0);
            let dz = (cz as f32 * 8.0 - 4.0)
                .max(4.0 - (cz as f32 * 8.0 + 8.0))
                .max(0.0);
            let inside = (dx * dx + dz * dz).sqrt() <= 64.0;
            assert_eq!(map.contains_key(&[cx, cz]), inside, "{cx},{cz}");
        }
    }
    // A second viewer makes its own neighbourhood fine.
    let far = ([100.0, 0.0, 4.0], 64.0);
    let both: BTreeMap<[i32; 2], u8> = select(&p, &[v, far]).unwrap().into_iter().collect();
    assert_eq!(both[&[12, 0]], 0);
    assert_eq!(both[&[0, 0]], 0);
}

#[test]
fn bad_viewers_are_errors() {
    let p = small();
    assert!(select(&p, &[([f32::NAN, 0.0, 0.0], 64.0)]).is_err());
    assert!(select(&p, &[([0.0; 3], -1.0)]).is_err());
    assert!(select(&p, &[([0.0; 3], 1.0e7)]).is_err());
    assert!(select(&p, &[]).unwrap().is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn two_to_one_holds_for_random_viewers(
        viewers in proptest::collection::vec((-80.0f32..80.0, -80.0f32..80.0, 8.0f32..60.0), 1..4)
    ) {
        let p = small();
        let vs: Vec<([f32; 3], f32)> = viewers.iter().map(|&(x, z, d)| ([x, 0.0, z], d)).collect();
        let sel = select(&p, &vs).unwrap();
        let map: BTreeMap<[i32; 2], u8> = sel.iter().copied().collect();
        for (&c, &lod) in &map {
            prop_assert!(lod <= p.max_lod());
            // Never coarser than the finest ring any viewer gives it (the
            // rings of `ring_lod`, at the distance in f64 as the selection
            // measures it).
            let ring = vs.iter().map(|(at, _)| {
                let size = 8.0f64;
                let ax = |ci: i32, q: f32| {
                    let lo = f64::from(ci) * size;
                    (lo - f64::from(q)).max(f64::from(q) - (lo + size)).max(0.0)
                };
                let (dx, dz) = (ax(c[0], at[0]), ax(c[1], at[2]));
                let d = (dx * dx + dz * dz).sqrt();
                let rings = (0..p.max_lod()).filter(|&k| f64::from(p.lod_distance * (1u32 << k) as f32) <= d);
                rings.count() as u8
            }).min().unwrap();
            prop_assert!(lod <= ring);
            for d in [[1, 0], [0, 1]] {
                if let Some(&nl) = map.get(&[c[0] + d[0], c[1] + d[1]]) {
                    prop_assert!(lod.abs_diff(nl) <= 1, "{c:?} {lod} vs {nl}");
                }
            }
        }
        // Every stitched mesh of the selection builds (the mesher checks 2:1).
        let w = HeightmapWorld::new(&p).unwrap();
        let nbs = neighbour_lods(&sel);
        for ((c, lod), nb) in sel.iter().zip(&nbs).take(12) {
            prop_assert!(w.build_mesh(&MeshKey::new(*c, *lod).with_neighbours(*nb)).is_ok());
        }
    }

    #[test]
    fn undo_and_redo_restore_exact_bits(brushes in proptest::collection::vec(brush_strategy(), 1..6)) {
        let mut w = world();
        let probe: Vec<[i64; 2]> = (-30..30).step_by(3).flat_map(|z| (-30..30).step_by(3).map(move |x| [x, z])).collect();
        let h0: Vec<u32> = probe.iter().map(|g| w.height(*g).to_bits()).collect();
        let mut edits = Vec::new();
        let mut states = vec![layer_bits(&w)];
        for b in &brushes {
            edits.push(w.apply_brush(b).unwrap());
            states.push(layer_bits(&w));
        }
        for (k, e) in edits.iter().enumerate().rev() {
            w.apply_edit(e, EditDirection::Backward).unwrap();
            prop_assert_eq!(&layer_bits(&w), &states[k]);
        }
        prop_assert!(w.edited_chunks().is_empty());
        let h1: Vec<u32> = probe.iter().map(|g| w.height(*g).to_bits()).collect();
        prop_assert_eq!(h0, h1);
        for (k, e) in edits.iter().enumerate() {
            w.apply_edit(e, EditDirection::Forward).unwrap();
            prop_assert_eq!(&layer_bits(&w), &states[k + 1]);
        }
    }

    #[test]
    fn dirty_sets_are_exact(b in brush_strategy()) {
        let mut w = world();
        let edit = w.brush_edit(&b).unwrap();
        let changed: BTreeSet<[i64; 2]> = edit.nodes.iter().copied().collect();
        // Brute force: every (chunk, lod) near the brush whose sampled nodes
        // include a changed node.
        let mut expected = BTreeSet::new();
        for lod in 0..3u8 {
            for cz in -6..6 {
                for cx in -6..6 {
                    let input = HeightChunkInput::new(&[]).with_cells(8).with_lod(lod).with_chunk([cx, cz]);
                    let side = (8u32 >> lod) + 3;
                    let hit = (0..side).any(|j| (0..side).any(|i| changed.contains(&input.sample_node(i, j))));
                    if hit {
                        expected.insert(([cx, cz], lod));
                    }
                }
            }
        }
        let got: BTreeSet<([i32; 2], u8)> = w.affected(&edit).into_iter().collect();
        prop_assert_eq!(&got, &expected);
        w.take_dirty();
        w.apply_edit(&edit, EditDirection::Forward).unwrap();
        let dirty: BTreeSet<[i32; 2]> = w.dirty_chunks().into_iter().collect();
        let want: BTreeSet<[i32; 2]> = expected.iter().map(|(c, _)| *c).collect();
        prop_assert_eq!(dirty, want);
    }
}

#[test]
fn cached_meshes_follow_edits() {
    let mut w = world();
    let keys: Vec<MeshKey> = (-2..2)
        .flat_map(|z| (-2..2).map(move |x| MeshKey::new([x, z], 1)))
        .collect();
    for k in &keys {
        w.mesh(k).unwrap();
    }
    assert_eq!(w.cached_count(), keys.len());
    let edit = w
        .apply_brush(&HeightBrush::new(HeightTool::Lower, [3.0, 3.0], 2.0).with_strength(1.0))
        .unwrap();
    assert!(!edit.is_empty());
    let affected: BTreeSet<([i32; 2], u8)> = w.affected(&edit).into_iter().collect();
    for k in &keys {
        let cached = w.cached_mesh(k);
        assert_eq!(
            cached.is_none(),
            affected.contains(&(k.chunk, k.lod)),
            "{k:?}"
        );
        let fresh = w.build_mesh(k).unwrap();
        assert_eq!(*w.mesh(k).unwrap(), fresh);
    }
}

#[test]
fn bad_brushes_change_nothing() {
    let mut w = world();
    w.apply_brush(&HeightBrush::new(HeightTool::Raise, [0.0, 0.0], 4.0))
        .unwrap();
    let before = layer_bits(&w);
    w.take_dirty();
    let bad = [
        HeightBrush::new(HeightTool::Raise, [f32::NAN, 0.0], 4.0),
        HeightBrush::new(HeightTool::Raise, [0.0, 0.0], 0.0),
        HeightBrush::new(HeightTool::Raise, [0.0, 0.0], f32::INFINITY),
        HeightBrush::new(HeightTool::Raise, [0.0, 0.0], 1.0e6),
        HeightBrush::new(HeightTool::Raise, [0.0, 0.0], 4.0).with_strength(0.0),
        HeightBrush::new(HeightTool::Raise, [0.0, 0.0], 4.0).with_strength(1.01),
        HeightBrush::new(HeightTool::Flatten, [0.0, 0.0], 4.0).with_target_height(Some(f32::NAN)),
        HeightBrush::new(HeightTool::Flatten, [0.0, 0.0], 4.0).with_target_height(Some(3.0e38)),
    ];
    for b in bad {
        assert!(w.apply_brush(&b).is_err(), "{b:?}");
    }
    assert_eq!(layer_bits(&w), before);
    assert_eq!(w.dirty_count(), 0);
}

#[test]
fn tools_move_heights_the_right_way() {
    let g = [0i64, 0];
    let mut w = world();
    let h = w.height(g);
    w.apply_brush(&HeightBrush::new(HeightTool::Raise, [0.0, 0.0], 4.0))
        .unwrap();
    assert!(w.height(g) > h);
    let mut w = world();
    w.apply_brush(&HeightBrush::new(HeightTool::Lower, [0.0, 0.0], 4.0))
        .unwrap();
    assert!(w.height(g) < h);
    let mut w = world();
    w.apply_brush(
        &HeightBrush::new(HeightTool::Flatten, [0.0, 0.0], 6.0)
            .with_strength(1.0)
            .with_target_height(Some(10.0)),
    )
    .unwrap();
    assert!((w.height(g) - 10.0).abs() < 1e-3);
    // Smoothing a spike lowers it.
    let mut w = world();
    w.apply_brush(&HeightBrush::new(HeightTool::Raise, [0.0, 0.0], 1.5).with_strength(1.0))
        .unwrap();
    let spike = w.height(g);
    w.apply_brush(&HeightBrush::new(HeightTool::Smooth, [0.0, 0.0], 4.0).with_strength(1.0))
        .unwrap();
    assert!(w.height(g) < spike);
    // Noise is deterministic.
    let b = HeightBrush::new(HeightTool::Noise, [2.0, 3.0], 6.0).with_seed(3);
    let mut a = world();
    let mut c = world();
    assert_eq!(a.apply_brush(&b).unwrap(), c.apply_brush(&b).unwrap());
}

#[test]
fn edit_layer_round_trips_through_set_edit_chunk() {
    let mut w = world();
    w.apply_brush(&HeightBrush::new(HeightTool::Raise, [4.0, -4.0], 6.0))
        .unwrap();
    let layer = w.edit_layer();
    assert!(!layer.is_empty());
    let mut v = world();
    for (c, d) in &layer {
        v.set_edit_chunk(*c, d.clone()).unwrap();
    }
    assert_eq!(layer_bits(&v), layer_bits(&w));
    assert!(v.set_edit_chunk([0, 0], vec![0.0; 3]).is_err());
    assert!(v.set_edit_chunk([0, 0], vec![f32::NAN; 64]).is_err());
    v.set_edit_chunk([0, -1], vec![0.0; 64]).unwrap();
    assert!(v.edit_chunk([0, -1]).is_none());
}

/// Column-major `a * b`.
fn mul(a: &[f32; 16], b: &[f32; 16]) -> [f32; 16] {
    let mut m = [0.0; 16];
    for c in 0..4 {
        for r in 0..4 {
            m[c * 4 + r] = (0..4).map(|k| a[k * 4 + r] * b[c * 4 + k]).sum();
        }
    }
    m
}

/// OpenGL perspective (camera looking down -z) times a translation moving
/// the camera to `eye`.
fn view_projection(eye: [f32; 3]) -> [f32; 16] {
    let (near, far) = (0.5f32, 200.0f32);
    let f = 1.0 / (30.0f32.to_radians()).tan();
    let mut p = [0.0; 16];
    p[0] = f;
    p[5] = f;
    p[10] = (far + near) / (near - far);
    p[11] = -1.0;
    p[14] = 2.0 * far * near / (near - far);
    let mut t = [0.0; 16];
    t[0] = 1.0;
    t[5] = 1.0;
    t[10] = 1.0;
    t[15] = 1.0;
    t[12] = -eye[0];
    t[13] = -eye[1];
    t[14] = -eye[2];
    mul(&p, &t)
}

#[test]
fn frustum_culls_boxes_outside() {
    let vp = view_projection([0.0, 10.0, 0.0]);
    let f = Frustum::from_view_projection(&vp).unwrap();
    assert!(f.contains_point([0.0, 10.0, -5.0]));
    assert!(!f.contains_point([0.0, 10.0, 5.0]));
    assert!(!f.contains_point([0.0, 10.0, -300.0]));
    assert!(!f.contains_point([100.0, 10.0, -5.0]));
    assert!(f.intersects_aabb([-1.0, 0.0, -10.0], [1.0, 20.0, -8.0]));
    assert!(!f.intersects_aabb([-1.0, 0.0, 8.0], [1.0, 20.0, 10.0]));
    // A box around the camera is kept.
    assert!(f.intersects_aabb([-1.0, 9.0, -1.0], [1.0, 11.0, 1.0]));
    let mut bad = vp;
    bad[3] = f32::NAN;
    assert!(Frustum::from_view_projection(&bad).is_err());

    let w = world();
    let sel = select(&small(), &[([0.0, 10.0, 0.0], 64.0)]).unwrap();
    let kept = w.cull(&sel, &vp).unwrap();
    assert!(!kept.is_empty() && kept.len() < sel.len());
    let kept: BTreeSet<[i32; 2]> = kept.iter().map(|(c, _)| *c).collect();
    assert!(kept.contains(&[0, -3]), "in front");
    assert!(!kept.contains(&[0, 4]), "behind");
    // Every kept chunk has a vertex or box corner in view; every culled box
    // has all 8 corners outside one plane (conservative test), so a culled
    // chunk's mesh vertices are all outside.
    for (c, lod) in &sel {
        if !kept.contains(c) {
            let m = w.build_mesh(&MeshKey::new(*c, *lod)).unwrap();
            assert!(m.positions.iter().all(|p| !f.contains_point(*p)), "{c:?}");
        }
    }
}

#[test]
fn chunk_boxes_hold_every_vertex() {
    let mut w = world();
    w.apply_brush(&HeightBrush::new(HeightTool::Raise, [8.0, 8.0], 40.0).with_strength(1.0))
        .unwrap();
    for c in [[0, 0], [1, 1], [-1, 0]] {
        let (min, max) = w.chunk_aabb(c);
        let m = w.build_mesh(&MeshKey::new(c, 0)).unwrap();
        for p in &m.positions {
            for a in 0..3 {
                assert!(min[a] <= p[a] && p[a] <= max[a], "{c:?} {p:?}");
            }
        }
    }
}

/// The scheduler over a heightmap source keeps a chunk that leaves the view
/// distance until it is `unload_hysteresis` farther, and the chunks it holds
/// keep the 2:1 rule.
#[cfg(feature = "parallel")]
#[test]
fn streamed_chunks_unload_with_hysteresis() {
    use isoterra_world::{StreamEvent, StreamScheduler};

    let p = small();
    let source = HeightmapSource::new(&p).unwrap().with_colliders(false);
    let config = source.stream_config().with_threads(2);
    assert_eq!(config.unload_hysteresis, p.unload_hysteresis);
    let mut s = StreamScheduler::new(source, config).unwrap();
    let held = |s: &StreamScheduler<HeightmapSource>| -> BTreeMap<[i32; 2], u8> {
        s.shown()
            .into_iter()
            .map(|(c, lod, _)| ([c[0], c[1]], lod))
            .collect()
    };
    let at = |x: f32| viewer(&p, [x, 0.0, 4.0], 32.0);

    s.update(&[at(4.0)]).unwrap();
    let first = s.wait();
    assert!(
        first
            .iter()
            .all(|e| matches!(e, StreamEvent::ChunkReady { .. }))
    );
    let want: BTreeMap<[i32; 2], u8> = select(&p, &[([4.0, 0.0, 4.0], 32.0)])
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(held(&s), want);
    // Move +x by 6 units: chunk [-4, 0] (square x in [-32, -24]) is now 34
    // away: beyond the view distance but inside the hysteresis band.
    s.update(&[at(10.0)]).unwrap();
    let moved = s.wait();
    assert!(
        !moved
            .iter()
            .any(|e| matches!(e, StreamEvent::ChunkUnloaded { .. })),
        "{} events",
        moved.len()
    );
    assert!(held(&s).contains_key(&[-4, 0]));
    // Far enough: it unloads.
    s.update(&[at(20.0)]).unwrap();
    let gone = s.wait();
    assert!(
        gone.iter()
            .any(|e| matches!(e, StreamEvent::ChunkUnloaded { coord, .. } if *coord == [-4, 0, 0]))
    );
    let map = held(&s);
    assert!(!map.contains_key(&[-4, 0]));
    // The held set still obeys 2:1.
    for (c, l) in &map {
        for n in [[c[0] + 1, c[1]], [c[0], c[1] + 1]] {
            if let Some(nl) = map.get(&n) {
                assert!(l.abs_diff(*nl) <= 1, "{c:?} {l} vs {n:?} {nl}");
            }
        }
    }
}

fn mesh_keys() -> Vec<MeshKey> {
    let sel = select(&small(), &[([3.0, 0.0, -2.0], 40.0)]).unwrap();
    let nb = neighbour_lods(&sel);
    sel.iter()
        .zip(nb)
        .map(|((c, l), n)| MeshKey::new(*c, *l).with_neighbours(n))
        .collect()
}

#[cfg(feature = "parallel")]
#[test]
fn meshes_are_identical_with_one_and_four_threads() {
    let mut w = world();
    w.apply_brush(&HeightBrush::new(HeightTool::Noise, [1.0, 1.0], 9.0).with_strength(1.0))
        .unwrap();
    let keys = mesh_keys();
    let serial: Vec<_> = keys.iter().map(|k| w.build_mesh(k).unwrap()).collect();
    for threads in [1, 4] {
        let pool = Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap(),
        );
        let batch = pool.install(|| w.build_meshes(&keys));
        for (b, s) in batch.into_iter().zip(&serial) {
            assert_eq!(&b.unwrap(), s);
        }
        // Worker-thread requests handed back on this thread.
        let mut v = world();
        v.apply_brush(&HeightBrush::new(HeightTool::Noise, [1.0, 1.0], 9.0).with_strength(1.0))
            .unwrap();
        v.set_thread_pool(Some(Arc::clone(&pool)));
        for k in &keys {
            assert!(v.request(*k).unwrap());
            assert!(!v.request(*k).unwrap());
        }
        let ready = v.wait();
        assert_eq!(ready.len(), keys.len());
        assert_eq!(v.pending_count(), 0);
        for r in ready {
            let i = keys.iter().position(|k| *k == r.key).unwrap();
            assert_eq!(*r.mesh.unwrap(), serial[i]);
            assert!(v.cached_mesh(&r.key).is_some());
        }
        assert!(v.poll().is_empty());
    }
}

#[cfg(feature = "parallel")]
#[test]
fn stale_results_are_dropped_after_an_edit() {
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap(),
    );
    let mut w = world();
    w.set_thread_pool(Some(pool));
    let key = MeshKey::new([0, 0], 0);
    w.request(key).unwrap();
    w.apply_brush(&HeightBrush::new(HeightTool::Raise, [4.0, 4.0], 3.0))
        .unwrap();
    let ready = w.wait();
    assert!(ready.is_empty());
    assert!(w.cached_mesh(&key).is_none());
    w.request(key).unwrap();
    let ready = w.wait();
    assert_eq!(
        *ready[0].mesh.as_ref().unwrap().as_ref(),
        w.build_mesh(&key).unwrap()
    );
}

#[test]
fn bad_keys_are_errors() {
    let mut w = world();
    assert!(w.request(MeshKey::new([0, 0], 3)).is_err());
    assert!(
        w.request(MeshKey::new([0, 0], 0).with_neighbours([2, 0, 0, 0]))
            .is_err()
    );
    assert!(w.request(MeshKey::new([i32::MAX, 0], 0)).is_err());
    assert!(w.build_mesh(&MeshKey::new([0, 0], 9)).is_err());
    assert_eq!(w.pending_count(), 0);
}

#[test]
fn requests_come_back_on_the_callers_thread() {
    let mut w = world();
    let keys = mesh_keys();
    for k in &keys {
        w.request(*k).unwrap();
    }
    let mut got = w.poll();
    got.extend(w.wait());
    assert_eq!(got.len(), keys.len());
    assert_eq!(w.pending_count(), 0);
    for r in got {
        assert_eq!(*r.mesh.unwrap(), w.build_mesh(&r.key).unwrap());
    }
    // Cached now: a second request is a no-op.
    assert!(!w.request(keys[0]).unwrap());
    assert_eq!(w.cached_count(), keys.len());
    w.unload(&[keys[0].chunk]);
    assert!(w.cached_mesh(&keys[0]).is_none());
}

type Seg = [[u32; 3]; 2];

/// Boundary edges (used by one surface triangle) of a mesh lying on the
/// plane `axis == value`, as sorted position-bit pairs.
fn border_segments(m: &isoterra_mesh::HeightmapMesh, axis: usize, value: f32) -> BTreeSet<Seg> {
    let mut count: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    for t in m.surface_indices().chunks_exact(3) {
        for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
            *count.entry((a.min(b), a.max(b))).or_default() += 1;
        }
    }
    let key = |i: u32| {
        let p = m.positions[i as usize];
        [p[0].to_bits(), p[1].to_bits(), p[2].to_bits()]
    };
    count
        .into_iter()
        .filter(|&(_, c)| c == 1)
        .map(|((a, b), _)| (a, b))
        .filter(|&(a, b)| {
            m.positions[a as usize][axis] == value && m.positions[b as usize][axis] == value
        })
        .map(|(a, b)| {
            let (ka, kb) = (key(a), key(b));
            if ka <= kb { [ka, kb] } else { [kb, ka] }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn stitched_neighbours_share_every_border_segment(
        x in -40.0f32..40.0,
        z in -40.0f32..40.0,
    ) {
        let p = small();
        let mut w = world();
        w.apply_brush(&HeightBrush::new(HeightTool::Noise, [x, z], 10.0).with_strength(1.0))
            .unwrap();
        let sel = select(&p, &[([x, 0.0, z], 40.0)]).unwrap();
        let nbs = neighbour_lods(&sel);
        let map: BTreeMap<[i32; 2], (u8, [u8; 4])> = sel
            .iter()
            .zip(&nbs)
            .map(|((c, l), n)| (*c, (*l, *n)))
            .collect();
        let mesh = |c: [i32; 2]| {
            let (l, n) = map[&c];
            w.build_mesh(&MeshKey::new(c, l).with_neighbours(n)).unwrap()
        };
        let mut pairs = 0;
        let mut mixed = 0usize;
        for (&c, &(l, _)) in &map {
            for (axis, d) in [(0usize, [1, 0]), (2usize, [0, 1])] {
                let n = [c[0] + d[0], c[1] + d[1]];
                let Some(&(nl, _)) = map.get(&n) else { continue };
                if l == nl && pairs > 6 {
                    continue;
                }
                let border = p.node_coord(i64::from(if axis == 0 { n[0] } else { n[1] }) * 8);
                let a = border_segments(&mesh(c), axis, border);
                let b = border_segments(&mesh(n), axis, border);
                prop_assert!(!a.is_empty());
                prop_assert_eq!(&a, &b, "{:?} lod {} vs {:?} lod {}", c, l, n, nl);
                pairs += 1;
                mixed += usize::from(l != nl);
            }
        }
        prop_assert!(pairs > 0);
        prop_assert!(mixed > 0, "no LOD transition was checked");
    }
}
