//! Tests of [`HeightmapStream`]: meshes for every selected chunk arrive on
//! the caller's thread, unloads only beyond the hysteresis band, re-LOD and
//! edits rebuild the right chunks, and every mesh handed out is bit for bit
//! the mesh a direct build gives.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use isoterra_mesh::HeightmapMesh;
use isoterra_world::{
    HeightBrush, HeightTool, HeightmapEvent, HeightmapParams, HeightmapStream, HeightmapWorld,
    MeshKey, Viewer, neighbour_lods, select_chunks,
};

fn small() -> HeightmapParams {
    HeightmapParams::DEFAULT
        .with_chunk_cells(8)
        .with_lod_count(3)
        .with_lod_distance(16.0)
        .with_view_distance(64.0)
        .with_move_threshold(4.0)
        .with_unload_hysteresis(8.0)
        .with_seed(11)
}

fn viewer(x: f32, z: f32) -> Viewer {
    Viewer::new([x, 3.0, z], 64.0)
}

/// What a renderer keeps: the mesh on screen for each chunk.
#[derive(Default)]
struct Screen {
    meshes: BTreeMap<[i32; 2], (u8, Arc<HeightmapMesh>)>,
    ready: Vec<[i32; 2]>,
    unloaded: Vec<[i32; 2]>,
}

impl Screen {
    fn apply(&mut self, events: Vec<HeightmapEvent>) {
        for e in events {
            match e {
                HeightmapEvent::ChunkReady { chunk, lod, mesh } => {
                    self.ready.push(chunk);
                    self.meshes.insert(chunk, (lod, mesh));
                }
                HeightmapEvent::ChunkUnloaded { chunk } => {
                    assert!(
                        self.meshes.remove(&chunk).is_some(),
                        "unload of {chunk:?}, which was never shown"
                    );
                    self.unloaded.push(chunk);
                }
                HeightmapEvent::ChunkFailed { chunk, lod, error } => {
                    panic!("chunk {chunk:?} at LOD {lod} failed: {error}")
                }
                _ => unreachable!("no other events exist"),
            }
        }
    }
}

/// Updates until every loaded chunk has its mesh (bounded).
fn settle(
    stream: &mut HeightmapStream,
    world: &mut HeightmapWorld,
    viewers: &[Viewer],
    screen: &mut Screen,
) {
    for _ in 0..200_000 {
        screen.apply(stream.update(world, viewers).unwrap());
        if stream.is_settled() {
            return;
        }
        std::thread::yield_now();
    }
    panic!("the stream did not settle");
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
    let uv = |m: &HeightmapMesh| -> Vec<[u32; 2]> {
        m.uvs.iter().map(|p| p.map(f32::to_bits)).collect()
    };
    assert_eq!(uv(a), uv(b), "{what}: uvs");
    let f = |v: &[f32]| -> Vec<u32> { v.iter().map(|x| x.to_bits()).collect() };
    assert_eq!(f(&a.morph), f(&b.morph), "{what}: morph");
    assert_eq!(
        f(&a.morph_targets),
        f(&b.morph_targets),
        "{what}: morph targets"
    );
    assert_eq!(a.indices, b.indices, "{what}: indices");
}

/// The screen shows exactly the loaded chunks, each with the mesh a direct
/// build of its stitched key gives.
fn assert_screen_matches(stream: &HeightmapStream, world: &HeightmapWorld, screen: &Screen) {
    let loaded = stream.loaded();
    let shown: Vec<[i32; 2]> = screen.meshes.keys().copied().collect();
    let want: Vec<[i32; 2]> = loaded.iter().map(|(c, _)| *c).collect();
    assert_eq!(shown, want);
    let neighbours = neighbour_lods(&loaded);
    assert_eq!(
        stream.wanted_keys(),
        loaded
            .iter()
            .zip(&neighbours)
            .map(|(&(c, l), &n)| MeshKey::new(c, l).with_neighbours(n))
            .collect::<Vec<_>>()
    );
    for (&(c, lod), &n) in loaded.iter().zip(&neighbours) {
        let key = MeshKey::new(c, lod).with_neighbours(n);
        assert_eq!(stream.shown_key(c), Some(key));
        let (shown_lod, mesh) = &screen.meshes[&c];
        assert_eq!(*shown_lod, lod, "chunk {c:?}");
        let direct = world.build_mesh(&key).unwrap();
        assert_same_mesh(mesh, &direct, &format!("chunk {c:?}"));
    }
}

#[test]
fn a_viewer_crossing_the_map_gets_every_selected_chunk() {
    let params = small();
    let mut world = HeightmapWorld::new(&params).unwrap();
    let mut stream = HeightmapStream::new();
    let mut screen = Screen::default();
    // Move in steps, updating only a few times per step (meshes lag behind),
    // then let the last position settle.
    let path: Vec<(f32, f32)> = (0..30)
        .map(|i| (i as f32 * 7.5 - 40.0, i as f32 * 3.0 - 20.0))
        .collect();
    settle(
        &mut stream,
        &mut world,
        &[viewer(-40.0, -20.0)],
        &mut screen,
    );
    for &(x, z) in &path {
        for _ in 0..3 {
            screen.apply(stream.update(&mut world, &[viewer(x, z)]).unwrap());
        }
    }
    let (x, z) = *path.last().unwrap();
    let v = [viewer(x, z)];
    settle(&mut stream, &mut world, &v, &mut screen);
    assert_eq!(stream.update(&mut world, &v).unwrap().len(), 0);

    let selected = select_chunks(&params, &v).unwrap();
    assert!(selected.len() > 20, "{}", selected.len());
    for (c, _) in &selected {
        assert!(
            screen.meshes.contains_key(c),
            "selected chunk {c:?} not shown"
        );
    }
    // The streamer's LODs can only be finer or equal where hysteresis chunks
    // take part in the 2:1 rule; every LOD on screen is the streamer's.
    assert_screen_matches(&stream, &world, &screen);
    // The start area was left far behind and unloaded.
    assert!(screen.unloaded.contains(&[-5, -3]), "{:?}", screen.unloaded);
    // Meshes that went stale on the way (re-LOD'd or unloaded chunks) do
    // not pile up in the world's cache once their jobs are back.
    while world.pending_count() > 0 {
        screen.apply(stream.update(&mut world, &v).unwrap());
        std::thread::yield_now();
    }
    assert!(stream.is_settled());
    assert_eq!(world.cached_count(), stream.loaded().len());
}

#[test]
fn chunks_unload_only_beyond_the_hysteresis_band() {
    let params = small();
    let mut world = HeightmapWorld::new(&params).unwrap();
    let mut stream = HeightmapStream::new();
    let mut screen = Screen::default();
    settle(&mut stream, &mut world, &[viewer(0.0, 0.0)], &mut screen);
    let first: BTreeSet<[i32; 2]> = screen.meshes.keys().copied().collect();
    assert_eq!(screen.ready.len(), first.len());

    // Pacing back and forth by more than the move threshold but less than
    // the hysteresis: chunks may load, none unloads.
    for x in [6.0, 0.0, 6.0, 0.0, 5.0, 1.0] {
        settle(&mut stream, &mut world, &[viewer(x, 0.0)], &mut screen);
    }
    assert!(screen.unloaded.is_empty(), "{:?}", screen.unloaded);
    assert!(first.iter().all(|c| screen.meshes.contains_key(c)));

    // Far away: everything near the start goes, each chunk once, and only
    // chunks beyond view distance + hysteresis of the viewer.
    let far = viewer(400.0, 0.0);
    settle(&mut stream, &mut world, &[far], &mut screen);
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
    assert_screen_matches(&stream, &world, &screen);
    // Unloaded chunks leave the world's mesh cache too; only the shown
    // meshes stay there.
    assert_eq!(world.cached_count(), stream.loaded().len());
}

#[test]
fn re_lod_rebuilds_the_chunk_and_the_neighbours_whose_stitching_changed() {
    let params = small();
    let mut world = HeightmapWorld::new(&params).unwrap();
    let mut stream = HeightmapStream::new();
    let mut screen = Screen::default();
    settle(&mut stream, &mut world, &[viewer(4.0, 4.0)], &mut screen);
    let before: BTreeMap<[i32; 2], MeshKey> = stream
        .wanted_keys()
        .into_iter()
        .map(|k| (k.chunk, k))
        .collect();
    screen.ready.clear();
    settle(&mut stream, &mut world, &[viewer(36.0, 4.0)], &mut screen);
    let after: BTreeMap<[i32; 2], MeshKey> = stream
        .wanted_keys()
        .into_iter()
        .map(|k| (k.chunk, k))
        .collect();
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
    assert_screen_matches(&stream, &world, &screen);
}

#[test]
fn an_edit_sends_fresh_meshes_for_the_chunks_it_touched() {
    let params = small();
    let mut world = HeightmapWorld::new(&params).unwrap();
    let mut stream = HeightmapStream::new();
    let mut screen = Screen::default();
    let v = [viewer(4.0, 4.0)];
    settle(&mut stream, &mut world, &v, &mut screen);
    let old = Arc::clone(&screen.meshes[&[0, 0]].1);
    screen.ready.clear();
    let edit = world
        .apply_brush(&HeightBrush::new(HeightTool::Raise, [4.0, 4.0], 2.0).with_strength(1.0))
        .unwrap();
    assert!(!edit.is_empty());
    // The stream notices by itself that the shown meshes went stale.
    assert!(
        world
            .cached_mesh(&stream.shown_key([0, 0]).unwrap())
            .is_none()
    );
    screen.apply(stream.update(&mut world, &v).unwrap());
    assert!(!stream.is_settled());
    for _ in 0..200_000 {
        screen.apply(stream.update(&mut world, &v).unwrap());
        if screen.ready.contains(&[0, 0]) && stream.is_settled() {
            break;
        }
        std::thread::yield_now();
    }
    assert!(screen.ready.contains(&[0, 0]));
    assert!(screen.ready.len() < screen.meshes.len());
    let new = &screen.meshes[&[0, 0]].1;
    assert_ne!(bits3(&old.positions), bits3(&new.positions));
    assert_screen_matches(&stream, &world, &screen);
}

#[test]
fn bad_viewers_are_errors_and_change_nothing() {
    let params = small();
    let mut world = HeightmapWorld::new(&params).unwrap();
    let mut stream = HeightmapStream::new();
    let mut screen = Screen::default();
    let v = [viewer(4.0, 4.0)];
    settle(&mut stream, &mut world, &v, &mut screen);
    let loaded = stream.loaded();
    let keys = stream.wanted_keys();
    for bad in [
        viewer(f32::NAN, 0.0),
        viewer(0.0, f32::INFINITY),
        Viewer::new([0.0; 3], -1.0),
        Viewer::new([0.0; 3], f32::NAN),
    ] {
        assert!(stream.update(&mut world, &[bad]).is_err(), "{bad:?}");
        assert_eq!(stream.loaded(), loaded);
        assert_eq!(stream.wanted_keys(), keys);
        assert!(stream.is_settled());
    }
    assert_eq!(stream.update(&mut world, &v).unwrap().len(), 0);
}

#[test]
fn the_same_walk_gives_the_same_meshes_at_any_thread_count() {
    // Two worlds, one on a single worker thread: the final screens agree bit
    // for bit (the results arrive in a different order, the meshes do not
    // differ).
    let params = small();
    let walk = |threads: Option<usize>| {
        let mut world = HeightmapWorld::new(&params).unwrap();
        #[cfg(feature = "parallel")]
        if let Some(n) = threads {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap();
            world.set_thread_pool(Some(Arc::new(pool)));
        }
        #[cfg(not(feature = "parallel"))]
        let _ = threads;
        let mut stream = HeightmapStream::new();
        let mut screen = Screen::default();
        for i in 0..6 {
            let v = [viewer(i as f32 * 9.0, -(i as f32) * 5.0)];
            screen.apply(stream.update(&mut world, &v).unwrap());
        }
        settle(&mut stream, &mut world, &[viewer(50.0, -25.0)], &mut screen);
        screen
            .meshes
            .into_iter()
            .map(|(c, (l, m))| (c, l, bits3(&m.positions), m.indices.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(walk(Some(1)), walk(None));
}
