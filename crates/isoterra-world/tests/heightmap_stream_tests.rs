//! Streaming heightmaps with [`StreamScheduler`] and [`HeightmapSource`]:
//! meshes for every wanted chunk arrive on the caller's thread, unloads only
//! beyond the hysteresis band, re-LOD and edits rebuild the right chunks,
//! and every mesh handed out is bit for bit the mesh a direct build of its
//! stitched key gives.

use std::collections::{BTreeMap, BTreeSet};

use isoterra_mesh::HeightmapMesh;
use isoterra_world::{
    ChunkCoord, HeightBrush, HeightTool, HeightmapChunk, HeightmapParams, HeightmapSource,
    HeightmapWorld, MeshKey, StreamEvent, StreamScheduler, StreamViewer, desired_chunks,
};

fn small() -> HeightmapParams {
    HeightmapParams::DEFAULT
        .with_chunk_cells(8)
        .with_lod_count(3)
        .with_lod_distance(16.0)
        .with_view_distance(64.0)
        .with_unload_hysteresis(8.0)
        .with_seed(11)
}

/// A viewer with the world's LOD rings (LOD 1 from 16, LOD 2 from 32).
fn viewer(x: f32, z: f32) -> StreamViewer {
    StreamViewer::new([x, 3.0, z], 64.0).with_lod_distances(vec![16.0, 32.0])
}

fn stream(world: &HeightmapWorld, threads: usize) -> StreamScheduler<HeightmapSource> {
    let source = HeightmapSource::from_world(world)
        .unwrap()
        .with_colliders(false);
    let cfg = source
        .stream_config()
        .with_threads(threads)
        .with_prefetch_seconds(0.0);
    StreamScheduler::new(source, cfg).unwrap()
}

/// What a renderer keeps: the mesh on screen for each chunk.
#[derive(Default)]
struct Screen {
    meshes: BTreeMap<[i32; 2], (u8, HeightmapMesh)>,
    ready: Vec<[i32; 2]>,
    unloaded: Vec<[i32; 2]>,
}

impl Screen {
    fn apply(&mut self, events: Vec<StreamEvent<HeightmapChunk>>) {
        for e in events {
            match e {
                StreamEvent::ChunkReady {
                    coord, lod, output, ..
                } => {
                    let c = [coord[0], coord[1]];
                    self.ready.push(c);
                    self.meshes.insert(c, (lod, output.mesh));
                }
                StreamEvent::ChunkUnloaded { coord, .. } => {
                    let c = [coord[0], coord[1]];
                    assert!(
                        self.meshes.remove(&c).is_some(),
                        "unload of {c:?}, which was never shown"
                    );
                    self.unloaded.push(c);
                }
                StreamEvent::ChunkFailed { coord, lod } => {
                    panic!("chunk {coord:?} at LOD {lod} failed")
                }
                _ => unreachable!("no other events exist"),
            }
        }
    }
}

/// Moves the viewers and waits until every held chunk has its mesh.
fn settle(s: &mut StreamScheduler<HeightmapSource>, viewers: &[StreamViewer], screen: &mut Screen) {
    s.update(viewers).unwrap();
    screen.apply(s.wait());
    assert!(s.is_settled());
}

fn bits3(v: &[[f32; 3]]) -> Vec<[u32; 3]> {
    v.iter().map(|p| p.map(f32::to_bits)).collect()
}

fn assert_same_mesh(a: &HeightmapMesh, b: &HeightmapMesh, what: &str) {
    assert_eq!(
        bits3(&a.positions),
        bits3(&b.positions),
        "{what}: positions"
    );
    assert_eq!(bits3(&a.normals), bits3(&b.normals), "{what}: normals");
    let f = |v: &[f32]| -> Vec<u32> { v.iter().map(|x| x.to_bits()).collect() };
    assert_eq!(f(&a.morph), f(&b.morph), "{what}: morph");
    assert_eq!(a.indices, b.indices, "{what}: indices");
}

/// The stitched mesh key of every shown chunk: its LOD, and the LODs of its
/// coarser face neighbours (−x, +x, −z, +z).
fn keys(s: &StreamScheduler<HeightmapSource>) -> BTreeMap<[i32; 2], MeshKey> {
    let lods: BTreeMap<ChunkCoord, u8> = s.shown().iter().map(|(c, l, _)| (*c, *l)).collect();
    lods.iter()
        .map(|(c, &lod)| {
            let mut n = [lod; 4];
            for (k, d) in [[-1, 0], [1, 0], [0, -1], [0, 1]].iter().enumerate() {
                if lods.get(&[c[0] + d[0], c[1] + d[1], 0]) == Some(&(lod + 1)) {
                    n[k] = lod + 1;
                }
            }
            let chunk = [c[0], c[1]];
            (chunk, MeshKey::new(chunk, lod).with_neighbours(n))
        })
        .collect()
}

/// The screen shows exactly the shown chunks, each with the mesh a direct
/// build of its stitched key gives.
fn assert_screen_matches(
    s: &StreamScheduler<HeightmapSource>,
    world: &HeightmapWorld,
    screen: &Screen,
) {
    let keys = keys(s);
    assert_eq!(
        screen.meshes.keys().collect::<Vec<_>>(),
        keys.keys().collect::<Vec<_>>()
    );
    for (c, key) in &keys {
        let (lod, mesh) = &screen.meshes[c];
        assert_eq!(*lod, key.lod, "chunk {c:?}");
        let direct = world.build_mesh(key).unwrap();
        assert_same_mesh(mesh, &direct, &format!("chunk {c:?}"));
    }
}

#[test]
fn a_viewer_crossing_the_map_gets_every_wanted_chunk() {
    let world = HeightmapWorld::new(&small()).unwrap();
    let mut s = stream(&world, 2);
    let mut screen = Screen::default();
    settle(&mut s, &[viewer(-40.0, -20.0)], &mut screen);
    // Move in steps, polling only a little per step (meshes lag behind),
    // then let the last position settle.
    for i in 0..30 {
        let v = viewer(i as f32 * 7.5 - 40.0, i as f32 * 3.0 - 20.0);
        s.update(&[v]).unwrap();
        for _ in 0..3 {
            screen.apply(s.poll(8));
        }
    }
    let v = [viewer(177.5, 67.0)];
    settle(&mut s, &v, &mut screen);
    let wanted = desired_chunks(&v, s.config()).unwrap();
    assert!(wanted.len() > 20, "{}", wanted.len());
    for (c, _) in &wanted {
        assert!(
            screen.meshes.contains_key(&[c[0], c[1]]),
            "wanted chunk {c:?} not shown"
        );
    }
    assert_screen_matches(&s, &world, &screen);
    // The start area was left far behind and unloaded.
    assert!(screen.unloaded.contains(&[-5, -3]), "{:?}", screen.unloaded);
    // Nothing more happens while the viewer stays.
    s.update(&v).unwrap();
    assert!(s.drain().is_empty());
}

#[test]
fn chunks_unload_only_beyond_the_hysteresis_band() {
    let params = small();
    let world = HeightmapWorld::new(&params).unwrap();
    let mut s = stream(&world, 2);
    let mut screen = Screen::default();
    settle(&mut s, &[viewer(0.0, 0.0)], &mut screen);
    let first: BTreeSet<[i32; 2]> = screen.meshes.keys().copied().collect();
    assert_eq!(screen.ready.len(), first.len());

    // Pacing back and forth by less than the hysteresis: chunks may load,
    // none unloads.
    for x in [6.0, 0.0, 6.0, 0.0, 5.0, 1.0] {
        settle(&mut s, &[viewer(x, 0.0)], &mut screen);
    }
    assert!(screen.unloaded.is_empty(), "{:?}", screen.unloaded);
    assert!(first.iter().all(|c| screen.meshes.contains_key(c)));

    // Far away: everything near the start goes, each chunk once, and only
    // chunks beyond view distance + hysteresis of the viewer.
    settle(&mut s, &[viewer(400.0, 0.0)], &mut screen);
    let size = params.chunk_world_size();
    let axis = |c: i32, p: f32| {
        let (lo, hi) = (c as f32 * size, (c + 1) as f32 * size);
        (lo - p).max(p - hi).max(0.0)
    };
    for c in &screen.unloaded {
        let (dx, dz) = (axis(c[0], 400.0), axis(c[1], 0.0));
        let d = (dx * dx + dz * dz).sqrt();
        assert!(d > 64.0 + 8.0, "chunk {c:?} unloaded at distance {d}");
    }
    let unloaded: BTreeSet<[i32; 2]> = screen.unloaded.iter().copied().collect();
    assert_eq!(unloaded.len(), screen.unloaded.len(), "an unload repeated");
    assert!(first.iter().all(|c| unloaded.contains(c)));
    assert_screen_matches(&s, &world, &screen);
}

#[test]
fn re_lod_rebuilds_the_chunk_and_the_neighbours_whose_stitching_changed() {
    let world = HeightmapWorld::new(&small()).unwrap();
    let mut s = stream(&world, 2);
    let mut screen = Screen::default();
    settle(&mut s, &[viewer(4.0, 4.0)], &mut screen);
    let before = keys(&s);
    screen.ready.clear();
    settle(&mut s, &[viewer(36.0, 4.0)], &mut screen);
    let after = keys(&s);
    // Exactly the chunks whose key changed (LOD or stitching) or that are
    // new get a new mesh.
    let changed: BTreeSet<[i32; 2]> = after
        .iter()
        .filter(|(c, k)| before.get(*c) != Some(*k))
        .map(|(c, _)| *c)
        .collect();
    let rebuilt: BTreeSet<[i32; 2]> = screen.ready.iter().copied().collect();
    assert_eq!(rebuilt.len(), screen.ready.len(), "a chunk was sent twice");
    assert_eq!(rebuilt, changed);
    assert!(
        changed
            .iter()
            .any(|c| before.get(c).is_some_and(|k| k.lod != after[c].lod)),
        "the move should change some LODs"
    );
    assert!(
        changed.iter().any(|c| before
            .get(c)
            .is_some_and(|k| k.lod == after[c].lod && k.neighbours != after[c].neighbours)),
        "the move should change some stitching alone"
    );
    assert_screen_matches(&s, &world, &screen);
}

#[test]
fn an_edit_sends_fresh_meshes_for_the_chunks_it_touched() {
    let mut world = HeightmapWorld::new(&small()).unwrap();
    let mut s = stream(&world, 2);
    let mut screen = Screen::default();
    let v = [viewer(4.0, 4.0)];
    settle(&mut s, &v, &mut screen);
    let old = screen.meshes[&[0, 0]].1.clone();
    screen.ready.clear();
    let edit = world
        .apply_brush(&HeightBrush::new(HeightTool::Raise, [4.0, 4.0], 2.0).with_strength(1.0))
        .unwrap();
    assert!(!edit.is_empty());
    // What an editor does after each dab: the changed edit chunks to the
    // source, the chunks whose meshes read a changed node rebuilt.
    let dirty = world.take_dirty();
    assert!(dirty.contains(&[0, 0]));
    s.source()
        .update_from_world(&world, dirty.iter().copied())
        .unwrap();
    let n = s.invalidate(dirty.iter().map(|c| [c[0], c[1], 0]));
    assert_eq!(n, dirty.len());
    assert!(!s.is_settled());
    screen.apply(s.wait());
    assert!(screen.ready.contains(&[0, 0]));
    assert_eq!(screen.ready.len(), n);
    assert!(screen.ready.len() < screen.meshes.len());
    let new = &screen.meshes[&[0, 0]].1;
    assert_ne!(bits3(&old.positions), bits3(&new.positions));
    assert_screen_matches(&s, &world, &screen);
}

#[test]
fn bad_viewers_are_errors_and_change_nothing() {
    let world = HeightmapWorld::new(&small()).unwrap();
    let mut s = stream(&world, 2);
    let mut screen = Screen::default();
    settle(&mut s, &[viewer(4.0, 4.0)], &mut screen);
    let shown = s.shown();
    for bad in [
        viewer(f32::NAN, 0.0),
        viewer(0.0, f32::INFINITY),
        StreamViewer::new([0.0; 3], -1.0),
        StreamViewer::new([0.0; 3], f32::NAN),
    ] {
        assert!(s.update(std::slice::from_ref(&bad)).is_err(), "{bad:?}");
        assert_eq!(s.shown(), shown);
        assert!(s.is_settled());
    }
    s.update(&[viewer(4.0, 4.0)]).unwrap();
    assert!(s.drain().is_empty());
}

#[test]
fn the_same_walk_gives_the_same_meshes_at_any_thread_count() {
    // One worker or four: the final screens agree bit for bit (the results
    // arrive in a different order, the meshes do not differ). Each step
    // settles: which chunks the hysteresis band keeps depends on what was
    // shown when the viewer moved.
    let walk = |threads: usize| {
        let world = HeightmapWorld::new(&small()).unwrap();
        let mut s = stream(&world, threads);
        let mut screen = Screen::default();
        for i in 0..6 {
            let v = viewer(i as f32 * 9.0, -(i as f32) * 5.0);
            settle(&mut s, &[v], &mut screen);
        }
        settle(&mut s, &[viewer(50.0, -25.0)], &mut screen);
        screen
            .meshes
            .into_iter()
            .map(|(c, (l, m))| (c, l, bits3(&m.positions), m.indices))
            .collect::<Vec<_>>()
    };
    assert_eq!(walk(1), walk(4));
}

/// A streamed chunk's collider is the world's collider of that chunk and
/// LOD, bit for bit, with edits under it: the source builds it from the
/// heights its mesh read, and they are the heights the world reads.
#[test]
fn streamed_colliders_equal_the_worlds() {
    use isoterra_world::ChunkRequest;
    let mut world = HeightmapWorld::new(&small()).unwrap();
    world
        .apply_brush(&HeightBrush::new(HeightTool::Raise, [3.0, -2.0], 7.0).with_strength(1.0))
        .unwrap();
    world
        .apply_brush(&HeightBrush::new(HeightTool::Lower, [-9.0, 6.0], 5.0).with_strength(1.0))
        .unwrap();
    let source = HeightmapSource::from_world(&world).unwrap();
    let mut edited = 0;
    for cz in -2..=1 {
        for cx in -2..=1 {
            for lod in 0..3u8 {
                let request = ChunkRequest::new([cx, cz, 0], lod);
                let built = source.build_request(&request).expect("the chunk builds");
                let got = built.collider.expect("colliders are on by default");
                let want = world.collider([cx, cz], lod).unwrap();
                assert_eq!(got.rows, want.rows);
                assert_eq!(got.cols, want.cols);
                assert_eq!(got.scale.map(f32::to_bits), want.scale.map(f32::to_bits));
                assert_eq!(
                    got.translation.map(f32::to_bits),
                    want.translation.map(f32::to_bits)
                );
                let bits = |v: &[f32]| v.iter().map(|h| h.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&got.heights),
                    bits(&want.heights),
                    "{cx} {cz} lod {lod}"
                );
                let generated = HeightmapWorld::new(&small()).unwrap();
                if bits(&generated.collider([cx, cz], lod).unwrap().heights) != bits(&want.heights)
                {
                    edited += 1;
                }
            }
        }
    }
    assert!(edited >= 3, "the edits reach some colliders ({edited})");
}
