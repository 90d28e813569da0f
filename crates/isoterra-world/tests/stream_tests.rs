//! Streaming: the wanted set (view distances, LOD rings, the 2:1 rule),
//! the scheduler (non-blocking, cancellation, slots, hysteresis, events)
//! and the voxel and heightmap sources.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use isoterra_field::{VoxelGen, VoxelPreset};
use isoterra_mesh::HeightmapOptions;
use isoterra_world::{
    CancelFlag, ChunkCoord, ChunkRequest, ChunkSource, Dim, HeightmapParams, HeightmapSource,
    HeightmapWorld, MeshKey, StreamConfig, StreamEvent, StreamScheduler, StreamViewer, VoxelBrush,
    VoxelChunkMesh, VoxelMesher, VoxelParams, VoxelSource, VoxelTool, VoxelWorld, desired_chunks,
};
use proptest::prelude::*;

// ---------------------------------------------------------------- helpers

/// A gate jobs wait on until it opens.
#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    fn wait(&self) {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.cv.wait(open).unwrap();
        }
    }

    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.cv.notify_all();
    }
}

/// A cheap source: the output names the chunk; optional gate, failures and
/// panics; counts builds.
#[derive(Default)]
struct TestSource {
    gate: Option<Arc<Gate>>,
    fail: HashSet<ChunkCoord>,
    panic: HashSet<ChunkCoord>,
    builds: Arc<AtomicUsize>,
    started: Arc<AtomicUsize>,
}

impl ChunkSource for TestSource {
    type Output = (ChunkCoord, u8);

    fn build(&self, request: &ChunkRequest, cancel: &CancelFlag) -> Option<(ChunkCoord, u8)> {
        let (coord, lod) = (request.coord, request.lod);
        self.started.fetch_add(1, Ordering::SeqCst);
        if let Some(g) = &self.gate {
            g.wait();
        }
        if cancel.is_cancelled() || self.fail.contains(&coord) {
            return None;
        }
        assert!(!self.panic.contains(&coord), "a source that panics");
        self.builds.fetch_add(1, Ordering::SeqCst);
        Some((coord, lod))
    }
}

fn cfg2d() -> StreamConfig {
    StreamConfig::DEFAULT
        .with_dim(Dim::Xz)
        .with_chunk_size(16.0)
        .with_threads(2)
        .with_unload_hysteresis(8.0)
        .with_prefetch_seconds(0.0)
}

/// Polls until settled (bounded by a minute of wall time, not a count of
/// polls: a worker whose source panics may spend seconds writing the panic's
/// backtrace when `RUST_BACKTRACE` is set), returning every event.
fn settle<S: ChunkSource>(s: &mut StreamScheduler<S>) -> Vec<StreamEvent<S::Output>> {
    let mut out = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        out.extend(s.poll(64));
        if s.is_settled() {
            return out;
        }
        std::thread::yield_now();
    }
    panic!("the scheduler did not settle within a minute");
}

/// Checks event balance over a whole history and returns the shown map.
fn replay<T>(events: &[StreamEvent<T>]) -> BTreeMap<ChunkCoord, (u8, u32)> {
    let mut shown: BTreeMap<ChunkCoord, (u8, u32)> = BTreeMap::new();
    let mut slots: HashMap<u32, ChunkCoord> = HashMap::new();
    for e in events {
        match e {
            StreamEvent::ChunkReady {
                coord, lod, slot, ..
            } => {
                match shown.get(coord) {
                    Some(&(_, s)) => assert_eq!(s, *slot, "slot changed while loaded"),
                    None => {
                        assert!(!slots.contains_key(slot), "slot {slot} handed out twice");
                        slots.insert(*slot, *coord);
                    }
                }
                shown.insert(*coord, (*lod, *slot));
            }
            StreamEvent::ChunkUnloaded { coord, slot } => {
                let (_, s) = shown
                    .remove(coord)
                    .expect("an unload without a ready event");
                assert_eq!(s, *slot);
                slots.remove(slot);
            }
            StreamEvent::ChunkFailed { .. } => {}
            _ => {}
        }
    }
    shown
}

fn mesh_hash(m: &VoxelChunkMesh) -> u64 {
    let mut h = DefaultHasher::new();
    for p in &m.positions {
        p.map(f32::to_bits).hash(&mut h);
    }
    for n in &m.normals {
        n.map(f32::to_bits).hash(&mut h);
    }
    m.materials.hash(&mut h);
    m.indices.hash(&mut h);
    h.finish()
}

// ------------------------------------------------------ the wanted set

fn viewer_strategy() -> impl Strategy<Value = StreamViewer> {
    (
        -200.0f32..200.0,
        -60.0f32..60.0,
        -200.0f32..200.0,
        8.0f32..90.0,
        prop::collection::vec(0.0f32..80.0, 0..4),
        -40.0f32..40.0,
    )
        .prop_map(|(x, y, z, vd, mut rings, vx)| {
            rings.sort_by(f32::total_cmp);
            StreamViewer::new([x, y, z], vd)
                .with_lod_distances(rings)
                .with_velocity([vx, 0.0, 0.0])
        })
}

fn check_selection(viewers: &[StreamViewer], cfg: &StreamConfig) {
    let sel = desired_chunks(viewers, cfg).unwrap();
    let map: HashMap<ChunkCoord, u8> = sel.iter().copied().collect();
    assert_eq!(map.len(), sel.len(), "a chunk listed twice");
    // 2:1 across face neighbours.
    for (&c, &lod) in &map {
        assert!(lod <= cfg.max_lod);
        for d in cfg.dim.face_offsets() {
            let n = [c[0] + d[0], c[1] + d[1], c[2] + d[2]];
            if let Some(&nl) = map.get(&n) {
                assert!(lod.abs_diff(nl) <= 1, "{c:?}@{lod} next to {n:?}@{nl}");
            }
        }
    }
    // Every chunk within each viewer's view distance is there.
    let size = f64::from(cfg.chunk_size);
    let axes = cfg.dim.axes();
    for v in viewers {
        let r = f64::from(v.view_distance);
        let p = v.position.map(f64::from);
        let mut lo = [0i32; 3];
        let mut hi = [0i32; 3];
        for (k, &a) in axes.iter().enumerate() {
            lo[k] = ((p[a] - r) / size).floor() as i32;
            hi[k] = ((p[a] + r) / size).floor() as i32;
        }
        for z in lo[2]..=hi[2] {
            for y in lo[1]..=hi[1] {
                for x in lo[0]..=hi[0] {
                    let c = [x, y, z];
                    let mut d2 = 0.0;
                    for (k, &a) in axes.iter().enumerate() {
                        let l = f64::from(c[k]) * size;
                        let d = (l - p[a]).max(p[a] - l - size).max(0.0);
                        d2 += d * d;
                    }
                    if d2.sqrt() <= r {
                        assert!(map.contains_key(&c), "{c:?} missing for {v:?}");
                    }
                }
            }
        }
    }
}

/// The wanted set worked out the slow way: every chunk of the box around
/// all viewer points measured against every point, LODs the finest ring of
/// any point, then the 2:1 rule applied by sweeping until nothing changes.
fn reference_selection(viewers: &[StreamViewer], cfg: &StreamConfig) -> Vec<(ChunkCoord, u8)> {
    let size = f64::from(cfg.chunk_size);
    let axes = cfg.dim.axes();
    let mut points = Vec::new();
    for v in viewers {
        let now = v.position.map(f64::from);
        let ahead: [f64; 3] = std::array::from_fn(|a| {
            now[a] + f64::from(v.velocity[a]) * f64::from(cfg.prefetch_seconds)
        });
        points.push((v, now));
        if ahead != now {
            points.push((v, ahead));
        }
    }
    let dist = |c: ChunkCoord, p: [f64; 3]| {
        let mut d2 = 0.0;
        for (k, &a) in axes.iter().enumerate() {
            let l = f64::from(c[k]) * size;
            let d = (l - p[a]).max(p[a] - (l + size)).max(0.0);
            d2 += d * d;
        }
        f64::sqrt(d2)
    };
    let mut lo = [0i32; 3];
    let mut hi = [0i32; 3];
    for (k, &a) in axes.iter().enumerate() {
        let r = points
            .iter()
            .map(|(v, _)| f64::from(v.view_distance))
            .fold(0.0, f64::max);
        let min = points
            .iter()
            .map(|(_, p)| p[a])
            .fold(f64::INFINITY, f64::min);
        let max = points
            .iter()
            .map(|(_, p)| p[a])
            .fold(f64::NEG_INFINITY, f64::max);
        lo[k] = ((min - r) / size).floor() as i32 - 1;
        hi[k] = ((max + r) / size).floor() as i32 + 1;
    }
    let mut map: BTreeMap<ChunkCoord, u8> = BTreeMap::new();
    for z in lo[2]..=hi[2] {
        for y in lo[1]..=hi[1] {
            for x in lo[0]..=hi[0] {
                let c = [x, y, z];
                if let Some((b0, b1)) = cfg.bounds
                    && (0..3).any(|a| c[a] < b0[a] || c[a] > b1[a])
                {
                    continue;
                }
                if !points
                    .iter()
                    .any(|(v, p)| dist(c, *p) <= f64::from(v.view_distance))
                {
                    continue;
                }
                let lod = points
                    .iter()
                    .map(|(v, p)| {
                        let d = dist(c, *p);
                        let rings = v
                            .lod_distances
                            .iter()
                            .filter(|&&r| f64::from(r) <= d)
                            .count();
                        rings.min(usize::from(cfg.max_lod)) as u8
                    })
                    .min()
                    .unwrap_or(cfg.max_lod);
                map.insert(c, lod);
            }
        }
    }
    let mut offsets = Vec::new();
    if cfg.dim == Dim::Xyz {
        for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    if [dx, dy, dz] != [0, 0, 0] {
                        offsets.push([dx, dy, dz]);
                    }
                }
            }
        }
    } else {
        offsets.extend_from_slice(cfg.dim.face_offsets());
    }
    loop {
        let mut changed = false;
        let coords: Vec<ChunkCoord> = map.keys().copied().collect();
        for c in coords {
            let lod = map[&c];
            for d in &offsets {
                let n = [c[0] + d[0], c[1] + d[1], c[2] + d[2]];
                if let Some(nl) = map.get_mut(&n)
                    && *nl > lod + 1
                {
                    *nl = lod + 1;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    map.into_iter().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn selection_keeps_two_to_one_and_covers_views_2d(
        viewers in prop::collection::vec(viewer_strategy(), 1..4),
        max_lod in 0u8..5,
    ) {
        let cfg = cfg2d().with_max_lod(max_lod).with_prefetch_seconds(0.5);
        check_selection(&viewers, &cfg);
    }

    #[test]
    fn selection_keeps_two_to_one_and_covers_views_3d(
        viewers in prop::collection::vec(viewer_strategy(), 1..3),
        max_lod in 0u8..4,
    ) {
        let cfg = StreamConfig::DEFAULT.with_chunk_size(16.0).with_max_lod(max_lod);
        check_selection(&viewers, &cfg);
    }

    #[test]
    fn selection_equals_the_slow_reference_2d(
        viewers in prop::collection::vec(viewer_strategy(), 1..4),
        max_lod in 0u8..5,
        bounded in any::<bool>(),
    ) {
        let bounds = bounded.then_some(([-6, -3, 0], [4, 5, 0]));
        let cfg = cfg2d().with_max_lod(max_lod).with_prefetch_seconds(0.5).with_bounds(bounds);
        prop_assert_eq!(desired_chunks(&viewers, &cfg).unwrap(), reference_selection(&viewers, &cfg));
    }

    #[test]
    fn selection_equals_the_slow_reference_3d(
        viewers in prop::collection::vec(viewer_strategy(), 1..3),
        max_lod in 0u8..4,
        prefetch in prop_oneof![Just(0.0f32), Just(0.5f32), 0.0f32..2.0],
    ) {
        let cfg = StreamConfig::DEFAULT
            .with_chunk_size(16.0)
            .with_max_lod(max_lod)
            .with_prefetch_seconds(prefetch);
        prop_assert_eq!(desired_chunks(&viewers, &cfg).unwrap(), reference_selection(&viewers, &cfg));
    }

    #[test]
    fn selection_ignores_viewer_order(
        viewers in prop::collection::vec(viewer_strategy(), 2..4),
    ) {
        let cfg = cfg2d();
        let mut rev = viewers.clone();
        rev.reverse();
        prop_assert_eq!(desired_chunks(&viewers, &cfg).unwrap(), desired_chunks(&rev, &cfg).unwrap());
    }

    /// Random walks of two viewers: the event history is balanced, slots are
    /// unique among loaded chunks, and the settled state is the wanted set.
    #[test]
    fn events_stay_balanced_on_random_walks(
        steps in prop::collection::vec((-40.0f32..40.0, -40.0f32..40.0, -40.0f32..40.0), 1..8),
    ) {
        let mut s = StreamScheduler::new(TestSource::default(), cfg2d().with_max_in_flight(3)).unwrap();
        let mut a = [0.0f32, 0.0, 0.0];
        let b = [300.0f32, 0.0, 300.0];
        let mut events = Vec::new();
        for (dx, dz, _) in &steps {
            a[0] += dx;
            a[2] += dz;
            let viewers = [StreamViewer::new(a, 40.0), StreamViewer::new(b, 24.0)];
            s.update(&viewers).unwrap();
            events.extend(s.poll(5));
        }
        events.extend(settle(&mut s));
        let shown = replay(&events);
        let now: BTreeMap<ChunkCoord, (u8, u32)> =
            s.shown().into_iter().map(|(c, l, slot)| (c, (l, slot))).collect();
        prop_assert_eq!(&shown, &now);
        let slots: BTreeSet<u32> = now.values().map(|v| v.1).collect();
        prop_assert_eq!(slots.len(), now.len());
    }
}

/// A source that keeps the whole request as its seams and returns it.
struct SeamSource;

impl ChunkSource for SeamSource {
    type Output = ChunkRequest;

    fn build(&self, request: &ChunkRequest, _cancel: &CancelFlag) -> Option<ChunkRequest> {
        Some(*request)
    }

    fn seam_request(&self, request: ChunkRequest) -> ChunkRequest {
        request
    }
}

/// The offset of edge `e` in [`ChunkRequest::edge_lods`] order.
fn edge_offset(e: usize) -> [i32; 3] {
    let (b0, b1) = match e / 4 {
        0 => (1, 2),
        1 => (0, 2),
        _ => (0, 1),
    };
    let mut d = [0; 3];
    d[b0] = if e & 1 == 1 { 1 } else { -1 };
    d[b1] = if e & 2 == 2 { 1 } else { -1 };
    d
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Requests are worked out again only around the chunks that changed;
    /// after any walk, every shown chunk was built from its neighbours'
    /// current LODs.
    #[test]
    fn shown_chunks_are_built_from_their_neighbours_current_lods(
        steps in prop::collection::vec(
            (prop::array::uniform3(-30.0f32..30.0), prop::array::uniform3(-20.0f32..20.0)),
            1..7,
        ),
    ) {
        let cfg = StreamConfig::DEFAULT
            .with_chunk_size(16.0)
            .with_threads(2)
            .with_unload_hysteresis(6.0)
            .with_max_in_flight(5);
        let mut s = StreamScheduler::new(SeamSource, cfg).unwrap();
        let mut a = [0.0f32; 3];
        let b = [90.0f32, -20.0, 40.0];
        let mut built: BTreeMap<ChunkCoord, ChunkRequest> = BTreeMap::new();
        let mut take = |events: Vec<StreamEvent<ChunkRequest>>| {
            for e in events {
                match e {
                    StreamEvent::ChunkReady { coord, output, .. } => {
                        built.insert(coord, output);
                    }
                    StreamEvent::ChunkUnloaded { coord, .. } => {
                        built.remove(&coord);
                    }
                    _ => {}
                }
            }
        };
        for (step, vel) in &steps {
            for k in 0..3 {
                a[k] += step[k];
            }
            let viewers = [
                StreamViewer::new(a, 56.0)
                    .with_velocity(*vel)
                    .with_lod_distances(vec![16.0, 32.0, 48.0]),
                StreamViewer::new(b, 30.0).with_lod_distances(vec![20.0]),
            ];
            s.update(&viewers).unwrap();
            take(s.poll(7));
        }
        take(settle(&mut s));
        let shown: HashMap<ChunkCoord, u8> = s.shown().into_iter().map(|(c, l, _)| (c, l)).collect();
        prop_assert!(!built.is_empty());
        prop_assert_eq!(shown.len(), built.len());
        let at = |c: ChunkCoord, d: [i32; 3]| shown.get(&[c[0] + d[0], c[1] + d[1], c[2] + d[2]]).copied();
        for (c, r) in &built {
            prop_assert_eq!(Some(r.lod), shown.get(c).copied());
            for (f, d) in Dim::Xyz.face_offsets().iter().enumerate() {
                prop_assert_eq!(r.neighbour_lods[f], at(*c, *d), "{:?} face {}", c, f);
            }
            for e in 0..12 {
                prop_assert_eq!(r.edge_lods[e], at(*c, edge_offset(e)), "{:?} edge {}", c, e);
            }
        }
    }
}

#[test]
fn lod_rings_grow_with_distance() {
    let cfg = cfg2d().with_max_lod(3);
    let v = StreamViewer::new([8.0, 0.0, 8.0], 120.0).with_lod_distances(vec![20.0, 40.0, 80.0]);
    let sel: HashMap<ChunkCoord, u8> = desired_chunks(&[v], &cfg).unwrap().into_iter().collect();
    assert_eq!(sel[&[0, 0, 0]], 0);
    assert_eq!(sel[&[2, 0, 0]], 1);
    assert_eq!(sel[&[6, 0, 0]], 3);
    assert!(!sel.contains_key(&[9, 0, 0]));
}

#[test]
fn prefetch_wants_chunks_ahead_of_a_moving_viewer() {
    let cfg = cfg2d().with_prefetch_seconds(1.0);
    let still = StreamViewer::new([8.0, 0.0, 8.0], 20.0);
    let moving = still.clone().with_velocity([64.0, 0.0, 0.0]);
    let a: HashSet<ChunkCoord> = desired_chunks(&[still], &cfg)
        .unwrap()
        .into_iter()
        .map(|x| x.0)
        .collect();
    let b: HashSet<ChunkCoord> = desired_chunks(&[moving], &cfg)
        .unwrap()
        .into_iter()
        .map(|x| x.0)
        .collect();
    assert!(a.is_subset(&b));
    assert!(b.contains(&[5, 0, 0]) && !a.contains(&[5, 0, 0]));
    assert!(!b.contains(&[-3, 0, 0]));
}

#[test]
fn bounds_limit_the_selection_and_2d_grids_stay_flat() {
    let cfg = cfg2d().with_bounds(Some(([0, 0, 0], [3, 3, 0])));
    let sel = desired_chunks(&[StreamViewer::new([0.0, 50.0, 0.0], 60.0)], &cfg).unwrap();
    assert!(!sel.is_empty());
    assert!(
        sel.iter()
            .all(|(c, _)| (0..=3).contains(&c[0]) && (0..=3).contains(&c[1]) && c[2] == 0)
    );
    // x/y grids ignore z.
    let xy = cfg2d().with_dim(Dim::Xy);
    let far_z = desired_chunks(&[StreamViewer::new([0.0, 0.0, 1.0e4], 20.0)], &xy).unwrap();
    let near = desired_chunks(&[StreamViewer::new([0.0, 0.0, 0.0], 20.0)], &xy).unwrap();
    assert_eq!(far_z, near);
}

#[test]
fn bad_viewers_are_errors_and_change_nothing() {
    let cfg = cfg2d();
    let bad = [
        StreamViewer::new([f32::NAN, 0.0, 0.0], 10.0),
        StreamViewer::new([0.0; 3], 0.0),
        StreamViewer::new([0.0; 3], f32::INFINITY),
        StreamViewer::new([0.0; 3], 1.0e7),
        StreamViewer::new([1.0e30, 0.0, 0.0], 10.0),
        StreamViewer::new([0.0; 3], 10.0).with_lod_distances(vec![5.0, 1.0]),
        StreamViewer::new([0.0; 3], 10.0).with_velocity([f32::NAN, 0.0, 0.0]),
    ];
    let mut s = StreamScheduler::new(TestSource::default(), cfg).unwrap();
    s.update(&[StreamViewer::new([0.0; 3], 20.0)]).unwrap();
    settle(&mut s);
    let before = s.shown();
    for v in bad {
        assert!(
            desired_chunks(std::slice::from_ref(&v), &cfg).is_err(),
            "{v:?}"
        );
        assert!(s.update(&[v]).is_err());
    }
    assert_eq!(s.shown(), before);
    assert!(s.is_settled());
    assert!(StreamScheduler::new(TestSource::default(), cfg.with_max_in_flight(0)).is_err());
}

// ------------------------------------------------------------ scheduler

#[test]
fn the_application_thread_never_waits_for_a_build() {
    let gate = Arc::new(Gate::default());
    let source = TestSource {
        gate: Some(Arc::clone(&gate)),
        ..TestSource::default()
    };
    let started = Arc::clone(&source.started);
    let mut s = StreamScheduler::new(source, cfg2d()).unwrap();
    let v = StreamViewer::new([0.0; 3], 30.0);
    s.update(std::slice::from_ref(&v)).unwrap();
    // Wait until the workers are stuck inside the source.
    while started.load(Ordering::SeqCst) == 0 {
        std::thread::yield_now();
    }
    for i in 0..20 {
        // Returns while every worker is blocked.
        s.update(&[v.clone().with_position([i as f32, 0.0, 0.0])])
            .unwrap();
        assert!(s.poll(16).is_empty());
    }
    assert!(!s.is_settled());
    gate.open();
    let events = settle(&mut s);
    assert!(!events.is_empty());
    assert_eq!(replay(&events).len(), s.stats().shown);
}

#[test]
fn chunks_leaving_before_their_job_runs_never_become_ready() {
    let gate = Arc::new(Gate::default());
    let source = TestSource {
        gate: Some(Arc::clone(&gate)),
        ..TestSource::default()
    };
    let started = Arc::clone(&source.started);
    let builds = Arc::clone(&source.builds);
    let cfg = cfg2d().with_threads(1).with_max_in_flight(64);
    let mut s = StreamScheduler::new(source, cfg).unwrap();
    let here = StreamViewer::new([0.0; 3], 40.0);
    s.update(std::slice::from_ref(&here)).unwrap();
    let first: HashSet<ChunkCoord> = desired_chunks(std::slice::from_ref(&here), &cfg)
        .unwrap()
        .into_iter()
        .map(|x| x.0)
        .collect();
    while started.load(Ordering::SeqCst) == 0 {
        std::thread::yield_now();
    }
    // Far away: every first chunk leaves while its job waits.
    let there = StreamViewer::new([4000.0, 0.0, 0.0], 40.0);
    s.update(std::slice::from_ref(&there)).unwrap();
    assert!(s.stats().cancelled >= first.len() as u64 - 1);
    gate.open();
    let events = settle(&mut s);
    for e in &events {
        if let StreamEvent::ChunkReady { coord, .. } = e {
            assert!(
                !first.contains(coord),
                "{coord:?} left the view but became ready"
            );
        }
        assert!(!matches!(e, StreamEvent::ChunkUnloaded { .. }));
    }
    // No leaked slot: the slots in use are exactly 0..shown.
    let shown = s.shown();
    let slots: BTreeSet<u32> = shown.iter().map(|x| x.2).collect();
    assert_eq!(slots, (0..shown.len() as u32).collect());
    // Cancelled jobs that had not started skipped the source entirely.
    assert_eq!(builds.load(Ordering::SeqCst), shown.len());
}

#[test]
fn slots_stay_while_loaded_and_are_reused_after_unload() {
    let cfg = cfg2d();
    let mut s = StreamScheduler::new(TestSource::default(), cfg).unwrap();
    let v = StreamViewer::new([8.0, 0.0, 8.0], 30.0);
    s.update(std::slice::from_ref(&v)).unwrap();
    let mut events = settle(&mut s);
    let first = s.shown();
    let n = first.len();
    assert!(n > 4);
    // A small move keeps every chunk and its slot.
    s.update(&[v.clone().with_position([10.0, 0.0, 9.0])])
        .unwrap();
    events.extend(settle(&mut s));
    for (c, _, slot) in &first {
        assert_eq!(s.slot(*c), Some(*slot));
    }
    // Far away and back: every slot is reused, none grows past the peak.
    for x in [5000.0, -5000.0, 8.0] {
        s.update(&[v.clone().with_position([x, 0.0, 8.0])]).unwrap();
        events.extend(settle(&mut s));
        let slots: BTreeSet<u32> = s.shown().iter().map(|x| x.2).collect();
        assert_eq!(slots, (0..n as u32).collect());
    }
    let all: BTreeSet<u32> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ChunkReady { slot, .. } => Some(*slot),
            _ => None,
        })
        .collect();
    assert_eq!(all, (0..n as u32).collect());
    replay(&events);
}

#[test]
fn pacing_across_a_chunk_border_does_not_thrash() {
    let cfg = cfg2d().with_unload_hysteresis(8.0);
    let mut s = StreamScheduler::new(TestSource::default(), cfg).unwrap();
    let rings = vec![24.0, 48.0];
    let at = |x: f32| StreamViewer::new([x, 0.0, 8.0], 40.0).with_lod_distances(rings.clone());
    s.update(&[at(15.0)]).unwrap();
    settle(&mut s);
    s.update(&[at(17.0)]).unwrap();
    settle(&mut s);
    let built = s.stats().built;
    for i in 0..40 {
        let x = if i % 2 == 0 { 14.0 } else { 18.0 };
        s.update(&[at(x)]).unwrap();
        let events = settle(&mut s);
        assert!(events.is_empty(), "step {i}: {} events", events.len());
    }
    assert_eq!(s.stats().built, built);
}

#[test]
fn two_viewers_far_apart_both_get_their_chunks() {
    let cfg = cfg2d();
    let mut s = StreamScheduler::new(TestSource::default(), cfg).unwrap();
    let viewers = [
        StreamViewer::new([0.0, 0.0, 0.0], 30.0).with_id(1),
        StreamViewer::new([10_000.0, 0.0, -10_000.0], 30.0).with_id(2),
    ];
    s.update(&viewers).unwrap();
    let events = settle(&mut s);
    let want: BTreeMap<ChunkCoord, u8> = desired_chunks(&viewers, &cfg)
        .unwrap()
        .into_iter()
        .collect();
    let got: BTreeMap<ChunkCoord, u8> = replay(&events)
        .into_iter()
        .map(|(c, (l, _))| (c, l))
        .collect();
    assert_eq!(got, want);
    assert!(got.contains_key(&[0, 0, 0]) && got.contains_key(&[625, -625, 0]));
}

#[test]
fn the_nearest_chunk_in_front_comes_first() {
    let cfg = cfg2d().with_threads(1).with_max_in_flight(1);
    let mut s = StreamScheduler::new(TestSource::default(), cfg).unwrap();
    let v = StreamViewer::new([8.0, 0.0, 8.0], 40.0).with_forward([1.0, 0.0, 0.0]);
    s.update(&[v]).unwrap();
    let events = settle(&mut s);
    let order: Vec<ChunkCoord> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ChunkReady { coord, .. } => Some(*coord),
            _ => None,
        })
        .collect();
    assert_eq!(order[0], [0, 0, 0]);
    let pos = |c: ChunkCoord| order.iter().position(|&x| x == c).unwrap();
    assert!(pos([1, 0, 0]) < pos([-1, 0, 0]));
    assert!(pos([2, 0, 0]) < pos([-2, 0, 0]));
}

#[test]
fn lod_changes_keep_the_slot() {
    let cfg = cfg2d().with_unload_hysteresis(0.0);
    let mut s = StreamScheduler::new(TestSource::default(), cfg).unwrap();
    let rings = vec![20.0];
    let v = StreamViewer::new([8.0, 0.0, 8.0], 60.0).with_lod_distances(rings);
    s.update(std::slice::from_ref(&v)).unwrap();
    let mut events = settle(&mut s);
    let far = [3, 0, 0];
    let (_, lod, slot) = s.shown().into_iter().find(|x| x.0 == far).unwrap();
    assert_eq!(lod, 1);
    s.update(&[v.clone().with_position([56.0, 0.0, 8.0])])
        .unwrap();
    events.extend(settle(&mut s));
    let (_, lod2, slot2) = s.shown().into_iter().find(|x| x.0 == far).unwrap();
    assert_eq!((lod2, slot2), (0, slot));
    replay(&events);
}

#[test]
fn failures_and_panics_are_reported_once() {
    let source = TestSource {
        fail: [[0, 0, 0]].into_iter().collect(),
        panic: [[1, 0, 0]].into_iter().collect(),
        ..TestSource::default()
    };
    let mut s = StreamScheduler::new(source, cfg2d()).unwrap();
    let v = StreamViewer::new([8.0, 0.0, 8.0], 20.0);
    s.update(std::slice::from_ref(&v)).unwrap();
    let mut events = settle(&mut s);
    for _ in 0..3 {
        s.update(std::slice::from_ref(&v)).unwrap();
        events.extend(settle(&mut s));
    }
    let failed: Vec<ChunkCoord> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ChunkFailed { coord, .. } => Some(*coord),
            _ => None,
        })
        .collect();
    assert_eq!(failed.len(), 2);
    assert!(failed.contains(&[0, 0, 0]) && failed.contains(&[1, 0, 0]));
    assert_eq!(s.stats().failed, 2);
    assert!(s.slot([0, 0, 0]).is_none());
    assert!(s.slot([0, 1, 0]).is_some());
}

#[test]
fn an_existing_pool_can_run_the_jobs() {
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap(),
    );
    let mut s = StreamScheduler::with_pool(TestSource::default(), cfg2d(), pool).unwrap();
    s.update(&[StreamViewer::new([0.0; 3], 30.0)]).unwrap();
    let events = s.wait();
    assert!(s.is_settled());
    assert_eq!(replay(&events).len(), s.stats().shown);
}

/// An executor that runs every job on a thread of its own, as an engine's
/// task pool would run it somewhere else than the rayon pool.
struct ThreadPerJob(std::sync::atomic::AtomicUsize);

impl isoterra_world::StreamExecutor for ThreadPerJob {
    fn spawn(&self, job: Box<dyn FnOnce() + Send + 'static>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        std::thread::spawn(job);
    }
}

#[test]
fn another_executor_runs_the_jobs_with_the_same_results() {
    let exec = Arc::new(ThreadPerJob(Default::default()));
    let mut s =
        StreamScheduler::with_executor(TestSource::default(), cfg2d(), exec.clone()).unwrap();
    let viewers = [StreamViewer::new([0.0; 3], 30.0)];
    s.update(&viewers).unwrap();
    let events = s.wait();
    assert!(s.is_settled());
    let shown = replay(&events);
    assert_eq!(shown.len(), s.stats().shown);
    assert!(exec.0.load(std::sync::atomic::Ordering::Relaxed) >= shown.len());
    // The same chunks at the same LODs as on the scheduler's own pool
    // (slots follow the order builds finish in).
    let mut own = StreamScheduler::new(TestSource::default(), cfg2d()).unwrap();
    own.update(&viewers).unwrap();
    let lods = |m: &BTreeMap<ChunkCoord, (u8, u32)>| -> Vec<(ChunkCoord, u8)> {
        m.iter().map(|(c, (l, _))| (*c, *l)).collect()
    };
    assert_eq!(lods(&replay(&own.wait())), lods(&shown));
}

// --------------------------------------------------------------- sources

fn caves(cells: u32) -> VoxelParams {
    VoxelParams::DEFAULT
        .with_chunk_cells(cells)
        .with_generator(VoxelGen::new(VoxelPreset::Caves, 7).with_cave_threshold(0.2))
}

/// Meshes `coord` in a world with its 27 neighbours loaded.
fn world_mesh(world: &mut VoxelWorld, coord: ChunkCoord) -> VoxelChunkMesh {
    let mut around = Vec::new();
    for k in 0..27 {
        let d = [k % 3 - 1, (k / 3) % 3 - 1, k / 9 - 1];
        around.push([coord[0] + d[0], coord[1] + d[1], coord[2] + d[2]]);
    }
    world.load_chunks(&around);
    let mut out = VoxelChunkMesh::default();
    world.mesh_chunk(coord, &mut VoxelMesher::new(), &mut out);
    out
}

#[test]
fn voxel_source_matches_the_world_mesher_at_lod_0() {
    let params = caves(8);
    let source = VoxelSource::new(&params).unwrap();
    let mut world = VoxelWorld::new(&params).unwrap();
    let mut non_empty = 0;
    // Columns of chunks from deep underground to high in the air, where the
    // source skips sampling the air above the ground.
    for (x, z) in [(0, 0), (1, -2), (-3, 2)] {
        for y in -4..=6 {
            let c = [x, y, z];
            let got = source.build_mesh(c, 0, None).unwrap();
            let want = world_mesh(&mut world, c);
            assert_eq!(got, want, "chunk {c:?}");
            non_empty += usize::from(!got.is_empty());
        }
    }
    assert!(non_empty >= 6);
}

#[test]
fn voxel_source_matches_the_world_mesher_for_every_preset() {
    for preset in [VoxelPreset::Overhangs, VoxelPreset::Planet] {
        let params = VoxelParams::DEFAULT
            .with_chunk_cells(16)
            .with_generator(VoxelGen::new(preset, 3));
        let source = VoxelSource::new(&params).unwrap();
        let mut world = VoxelWorld::new(&params).unwrap();
        let mut non_empty = 0;
        for y in -4..=5 {
            let c = [0, y, -1];
            let got = source.build_mesh(c, 0, None).unwrap();
            assert_eq!(got, world_mesh(&mut world, c), "{preset:?} chunk {c:?}");
            non_empty += usize::from(!got.is_empty());
        }
        assert!(non_empty > 0, "{preset:?}");
    }
}

/// Mesas' floating rocks are above every table: the source's quick "air
/// above the ground" bound must still build them, equal to the world's.
#[test]
fn voxel_source_builds_the_floating_rocks_of_mesas() {
    let generator = VoxelGen::new(VoxelPreset::Mesas, 1)
        .with_ground_amplitude(48.0)
        .with_rock_density(0.3)
        .with_rock_size(48.0);
    let params = VoxelParams::DEFAULT
        .with_chunk_cells(16)
        .with_generator(generator);
    let source = VoxelSource::new(&params).unwrap();
    let mut world = VoxelWorld::new(&params).unwrap();
    // A boulder floats at about (-224, 82, 24) for this seed, over tables
    // about 95 units lower.
    let mut rock_chunks = 0;
    for y in -4..=6 {
        let c = [-14, y, 1];
        let got = source.build_mesh(c, 0, None).unwrap();
        assert_eq!(got, world_mesh(&mut world, c), "chunk {c:?}");
        if y >= 4 && !got.is_empty() {
            rock_chunks += 1;
        }
    }
    assert!(rock_chunks > 0, "no floating rock was built");
}

#[test]
fn voxel_source_reads_edited_chunks() {
    let params = caves(8);
    let mut world = VoxelWorld::new(&params).unwrap();
    world.ensure_region([-2; 3], [2; 3]).unwrap();
    let brush = VoxelBrush::new(VoxelTool::Dig, [4.0, -4.0, 4.0], 5.0).with_material(3);
    world.apply_brush(&brush).unwrap();
    let brush = VoxelBrush::new(VoxelTool::Add, [12.0, 6.0, 2.0], 4.0).with_material(5);
    world.apply_brush(&brush).unwrap();
    assert!(world.modified_chunks().count() > 0);
    let source = VoxelSource::from_world(&world).unwrap();
    let plain = VoxelSource::new(&params).unwrap();
    let mut differs = 0;
    for z in -1..=1 {
        for y in -1..=1 {
            for x in -1..=1 {
                let c = [x, y, z];
                let got = source.build_mesh(c, 0, None).unwrap();
                assert_eq!(got, world_mesh(&mut world, c), "chunk {c:?}");
                differs += usize::from(got != plain.build_mesh(c, 0, None).unwrap());
            }
        }
    }
    assert!(differs > 0);
}

#[test]
fn voxel_source_coarse_lods_have_fewer_triangles() {
    let params = caves(16);
    let source = VoxelSource::new(&params).unwrap();
    let c = [0, -1, 0];
    let l0 = source.build_mesh(c, 0, None).unwrap();
    let l2 = source.build_mesh(c, 2, None).unwrap();
    assert!(!l2.is_empty());
    assert!(l2.triangle_count() < l0.triangle_count());
    // Every coarse vertex lies inside the chunk's box (plus one cell).
    for p in &l2.positions {
        for (a, v) in p.iter().enumerate() {
            let lo = c[a] as f32 * 16.0;
            assert!(*v >= lo - 4.0 && *v <= lo + 20.0, "{p:?}");
        }
    }
}

#[test]
fn cancelled_voxel_builds_return_nothing() {
    let source = VoxelSource::new(&caves(8)).unwrap();
    let flag = CancelFlag::new();
    flag.cancel();
    assert!(
        source
            .build(&ChunkRequest::new([0, 0, 0], 0), &flag)
            .is_none()
    );
    assert!(source.build_mesh([0, 1 << 22, 0], 0, None).is_none());
}

/// Streams `path` with `threads` workers (jobs finish in a different order
/// for each thread count); returns the settled chunk hashes.
fn stream_voxels(threads: usize, path: &[[f32; 3]]) -> BTreeMap<ChunkCoord, (u8, u64)> {
    let source = VoxelSource::new(&caves(8)).unwrap();
    let cfg = source
        .stream_config()
        .with_threads(threads)
        .with_max_in_flight(threads * 2);
    let mut s = StreamScheduler::new(source, cfg).unwrap();
    let mut events = Vec::new();
    for &p in path {
        let v = StreamViewer::new(p, 20.0).with_lod_distances(vec![12.0]);
        s.update(&[v]).unwrap();
        // Settle at every step: which chunks the hysteresis band keeps
        // depends on what was shown when the viewer moved.
        events.extend(s.wait());
    }
    let mut out = BTreeMap::new();
    for e in &events {
        match e {
            StreamEvent::ChunkReady {
                coord, lod, output, ..
            } => {
                out.insert(*coord, (*lod, mesh_hash(output)));
            }
            StreamEvent::ChunkUnloaded { coord, .. } => {
                out.remove(coord);
            }
            _ => {}
        }
    }
    out
}

#[test]
fn voxel_streaming_gives_the_same_bytes_at_any_thread_count() {
    let path = [[0.0, 0.0, 0.0], [6.0, -3.0, 2.0], [14.0, -5.0, 4.0]];
    let one = stream_voxels(1, &path);
    let four = stream_voxels(4, &path);
    assert!(!one.is_empty());
    assert_eq!(one, four);
    // And the same as building each chunk directly, in reverse order, from
    // its LOD and its neighbours' LODs.
    let source = VoxelSource::new(&caves(8)).unwrap();
    let lods: BTreeMap<ChunkCoord, u8> = one.iter().map(|(c, (l, _))| (*c, *l)).collect();
    for (c, (lod, h)) in one.iter().rev() {
        let request = request_for(Dim::Xyz, &lods, *c, *lod);
        let built = source.build(&request, &CancelFlag::new()).unwrap();
        assert_eq!(mesh_hash(&built), *h);
    }
}

#[test]
fn heightmap_source_matches_the_world_meshes() {
    let params = HeightmapParams::DEFAULT
        .with_chunk_cells(16)
        .with_lod_count(3)
        .with_mesh(HeightmapOptions::DEFAULT.with_skirt_depth(2.0));
    let mut world = HeightmapWorld::new(&params).unwrap();
    world
        .apply_brush(&isoterra_world::HeightBrush::new(
            isoterra_world::HeightTool::Raise,
            [8.0, 8.0],
            6.0,
        ))
        .unwrap();
    let source = HeightmapSource::from_world(&world).unwrap();
    for (c, lod) in [([0, 0], 0u8), ([1, -1], 1), ([-3, 2], 2), ([0, 0], 7)] {
        let got = source.build_chunk([c[0], c[1], 0], lod).unwrap();
        let key = MeshKey::new(c, lod.min(2));
        assert_eq!(got.mesh, world.build_mesh(&key).unwrap());
        assert_eq!(got.collider.unwrap(), world.collider(c, key.lod).unwrap());
    }
    let no_colliders = HeightmapSource::new(&params).unwrap().with_colliders(false);
    assert!(
        no_colliders
            .build_chunk([0, 0, 0], 0)
            .unwrap()
            .collider
            .is_none()
    );
}

#[test]
fn heightmap_streaming_settles_on_the_wanted_set() {
    let params = HeightmapParams::DEFAULT
        .with_chunk_cells(16)
        .with_lod_count(3);
    let source = HeightmapSource::new(&params).unwrap();
    let cfg = source.stream_config().with_threads(2);
    assert_eq!(cfg.dim, Dim::Xz);
    let mut s = StreamScheduler::new(source, cfg).unwrap();
    let v = StreamViewer::new([5.0, 30.0, 5.0], 70.0).with_lod_distances(vec![20.0, 40.0]);
    s.update(std::slice::from_ref(&v)).unwrap();
    let events = settle(&mut s);
    let got: BTreeMap<ChunkCoord, u8> = replay(&events)
        .into_iter()
        .map(|(c, (l, _))| (c, l))
        .collect();
    let want: BTreeMap<ChunkCoord, u8> = desired_chunks(&[v], &cfg).unwrap().into_iter().collect();
    assert_eq!(got, want);
    assert!(want.values().any(|&l| l == 2));
}

#[test]
fn side2d_streaming_hands_out_the_world_chunks_inside_its_bounds() {
    let params = isoterra_world::Side2dParams::DEFAULT.with_chunk_cells(16);
    let params =
        params.with_generator(params.generator.with_width_cells(128).with_height_cells(64));
    let world = isoterra_world::Side2dWorld::generate(&params).unwrap();
    let source = isoterra_world::Side2dSource::new(world);
    let cfg = source.stream_config().with_threads(2);
    let (cx, cy) = (source.world().chunks_x(), source.world().chunks_y());
    let mut s = StreamScheduler::new(source, cfg).unwrap();
    // A viewer near the left edge sees a few chunks, never outside the world.
    s.update(&[StreamViewer::new([4.0, 20.0, 0.0], 30.0)])
        .unwrap();
    let events = s.wait();
    let shown = replay(&events);
    assert!(!shown.is_empty() && shown.len() < (cx * cy) as usize);
    for e in &events {
        if let StreamEvent::ChunkReady { coord, output, .. } = e {
            assert!(coord[0] >= 0 && coord[1] >= 0 && coord[2] == 0);
            let want = s
                .source()
                .world()
                .chunk(coord[0] as u32, coord[1] as u32)
                .unwrap();
            assert_eq!(output.coord, want.coord);
            assert_eq!(output.polylines, want.polylines);
        }
        assert!(!matches!(e, StreamEvent::ChunkFailed { .. }));
    }
    // Seeing the whole world loads every chunk once.
    s.update(&[StreamViewer::new([64.0, 32.0, 0.0], 200.0)])
        .unwrap();
    s.wait();
    assert_eq!(s.stats().shown, (cx * cy) as usize);
}

// ------------------------------------------------------------- stitching

/// The request the scheduler makes for `c` at `lod` among the shown `lods`.
fn request_for(dim: Dim, lods: &BTreeMap<ChunkCoord, u8>, c: ChunkCoord, lod: u8) -> ChunkRequest {
    let at = |d: [i32; 3]| lods.get(&[c[0] + d[0], c[1] + d[1], c[2] + d[2]]).copied();
    let mut faces = [None; 6];
    for (f, d) in dim.face_offsets().iter().enumerate() {
        faces[f] = at(*d);
    }
    let mut edges = [None; 12];
    if dim == Dim::Xyz {
        for (e, slot) in edges.iter_mut().enumerate() {
            let axis = e / 4;
            let (b0, b1) = [(1, 2), (0, 2), (0, 1)][axis];
            let mut d = [0; 3];
            d[b0] = if e & 1 == 1 { 1 } else { -1 };
            d[b1] = if e & 2 == 2 { 1 } else { -1 };
            *slot = at(d);
        }
    }
    ChunkRequest::new(c, lod)
        .with_neighbour_lods(faces)
        .with_edge_lods(edges)
}

/// The latest output of every shown chunk after `events`.
fn shown_outputs<T>(events: Vec<StreamEvent<T>>) -> BTreeMap<ChunkCoord, (u8, T)> {
    let mut out = BTreeMap::new();
    for e in events {
        match e {
            StreamEvent::ChunkReady {
                coord, lod, output, ..
            } => {
                out.insert(coord, (lod, output));
            }
            StreamEvent::ChunkUnloaded { coord, .. } => {
                out.remove(&coord);
            }
            _ => {}
        }
    }
    out
}

/// Welds the meshes by exact position bits; returns the number of
/// undirected edges used by exactly one triangle, and the triangle count.
fn boundary_edges<'a>(meshes: impl Iterator<Item = &'a VoxelChunkMesh>) -> (usize, usize) {
    let mut ids: HashMap<[u32; 3], u32> = HashMap::new();
    let mut count: HashMap<(u32, u32), u32> = HashMap::new();
    let mut tris = 0;
    for m in meshes {
        let key: Vec<u32> = m
            .positions
            .iter()
            .map(|p| {
                let n = ids.len() as u32;
                *ids.entry(p.map(f32::to_bits)).or_insert(n)
            })
            .collect();
        for t in m.indices.chunks_exact(3) {
            let v = [key[t[0] as usize], key[t[1] as usize], key[t[2] as usize]];
            if v[0] == v[1] || v[1] == v[2] || v[2] == v[0] {
                continue;
            }
            tris += 1;
            for (a, b) in [(v[0], v[1]), (v[1], v[2]), (v[2], v[0])] {
                *count.entry((a.min(b), a.max(b))).or_default() += 1;
            }
        }
    }
    (count.values().filter(|&&c| c == 1).count(), tris)
}

#[test]
fn a_streamed_planet_at_mixed_lod_is_closed() {
    let params = VoxelParams::DEFAULT.with_chunk_cells(8).with_generator(
        VoxelGen::new(VoxelPreset::Planet, 3)
            .with_planet_radius(18.0)
            .with_ground_amplitude(8.0),
    );
    let source = VoxelSource::new(&params).unwrap();
    let cfg = source
        .stream_config()
        .with_threads(2)
        .with_prefetch_seconds(0.0);
    let mut s = StreamScheduler::new(source, cfg).unwrap();
    // The planet lies wholly inside the view, finest on the viewer's side.
    let v = StreamViewer::new([22.0, 3.0, -5.0], 90.0).with_lod_distances(vec![8.0, 20.0, 36.0]);
    s.update(std::slice::from_ref(&v)).unwrap();
    let shown = shown_outputs(s.wait());
    assert!(s.is_settled());
    let lods: BTreeSet<u8> = shown
        .values()
        .filter(|(_, m)| !m.indices.is_empty())
        .map(|(l, _)| *l)
        .collect();
    assert!(lods.len() >= 3, "the surface spans LODs {lods:?}");
    let (open, tris) = boundary_edges(shown.values().map(|(_, m)| m));
    assert!(tris > 100);
    assert_eq!(open, 0, "{open} boundary edges over {tris} triangles");

    // Moving the viewer changes LODs; once settled the planet is closed again.
    s.update(&[v.with_position([-20.0, -6.0, 10.0])]).unwrap();
    let mut later = shown;
    for (c, out) in shown_outputs(s.wait()) {
        later.insert(c, out);
    }
    let now: BTreeSet<ChunkCoord> = s.shown().into_iter().map(|x| x.0).collect();
    later.retain(|c, _| now.contains(c));
    let (open, tris) = boundary_edges(later.values().map(|(_, m)| m));
    assert!(tris > 100);
    assert_eq!(
        open, 0,
        "{open} boundary edges over {tris} triangles after moving"
    );
}

#[test]
fn unstitched_coarse_chunks_would_leave_the_planet_open() {
    // The check above can see cracks: plain coarse meshes leave some.
    let params = VoxelParams::DEFAULT.with_chunk_cells(8).with_generator(
        VoxelGen::new(VoxelPreset::Planet, 3)
            .with_planet_radius(18.0)
            .with_ground_amplitude(8.0),
    );
    let source = VoxelSource::new(&params).unwrap();
    let mut meshes = Vec::new();
    for z in -4..4 {
        for y in -4..4 {
            for x in -4..4 {
                let lod = if x < 0 { 0 } else { 1 };
                meshes.push(source.build_mesh([x, y, z], lod, None).unwrap());
            }
        }
    }
    let (open, tris) = boundary_edges(meshes.iter());
    assert!(tris > 100);
    assert!(open > 0);
}

/// Hands out the request it was asked to build; its seams depend on every
/// neighbour LOD.
struct EchoSource;

impl ChunkSource for EchoSource {
    type Output = ChunkRequest;

    fn build(&self, request: &ChunkRequest, _cancel: &CancelFlag) -> Option<ChunkRequest> {
        Some(*request)
    }

    fn seam_request(&self, request: ChunkRequest) -> ChunkRequest {
        request
    }
}

#[test]
fn a_neighbour_lod_change_rebuilds_the_chunk_in_its_slot() {
    let cfg = cfg2d().with_unload_hysteresis(0.0);
    let mut s = StreamScheduler::new(EchoSource, cfg).unwrap();
    let v = StreamViewer::new([8.0, 0.0, 8.0], 80.0).with_lod_distances(vec![20.0, 40.0]);
    s.update(std::slice::from_ref(&v)).unwrap();
    let mut events = settle(&mut s);
    let before: BTreeMap<ChunkCoord, (u8, u32)> = s
        .shown()
        .into_iter()
        .map(|(c, l, slot)| (c, (l, slot)))
        .collect();
    s.update(&[v.with_position([40.0, 0.0, 8.0])]).unwrap();
    let later = settle(&mut s);
    // Chunks that kept their LOD but saw a neighbour change are sent again,
    // in the same slot, built with the new neighbour LODs.
    let mut rebuilt = 0;
    for e in &later {
        if let StreamEvent::ChunkReady {
            coord, lod, slot, ..
        } = e
            && before.get(coord) == Some(&(*lod, *slot))
        {
            rebuilt += 1;
        }
    }
    assert!(rebuilt > 0, "no chunk was rebuilt for its neighbours");
    events.extend(later);
    replay(&events);
    let shown = shown_outputs(events);
    let lods: BTreeMap<ChunkCoord, u8> = shown.iter().map(|(c, (l, _))| (*c, *l)).collect();
    for (c, (lod, request)) in &shown {
        assert_eq!(*request, request_for(Dim::Xz, &lods, *c, *lod));
    }
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
    let key = |i: u32| m.positions[i as usize].map(f32::to_bits);
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

#[test]
fn streamed_heightmap_chunks_at_mixed_lod_share_their_borders() {
    for skirt in [0.0, 3.0] {
        let params = HeightmapParams::DEFAULT
            .with_chunk_cells(8)
            .with_lod_count(3)
            .with_seed(11)
            .with_mesh(HeightmapOptions::DEFAULT.with_skirt_depth(skirt));
        let source = HeightmapSource::new(&params).unwrap().with_colliders(false);
        let cfg = source
            .stream_config()
            .with_threads(2)
            .with_prefetch_seconds(0.0);
        let mut s = StreamScheduler::new(source, cfg).unwrap();
        let v = StreamViewer::new([3.0, 20.0, 5.0], 60.0).with_lod_distances(vec![10.0, 25.0]);
        s.update(&[v]).unwrap();
        let shown = shown_outputs(s.wait());
        let mut pairs = 0;
        let mut mixed = 0;
        for (c, (l, a)) in &shown {
            for (axis, d) in [(0usize, [1, 0, 0]), (2usize, [0, 1, 0])] {
                let n = [c[0] + d[0], c[1] + d[1], 0];
                let Some((nl, b)) = shown.get(&n) else {
                    continue;
                };
                let border = params.node_coord(i64::from(n[axis / 2]) * 8);
                let sa = border_segments(&a.mesh, axis, border);
                let sb = border_segments(&b.mesh, axis, border);
                assert!(!sa.is_empty());
                assert_eq!(sa, sb, "{c:?} lod {l} vs {n:?} lod {nl}");
                pairs += 1;
                mixed += usize::from(l != nl);
            }
        }
        assert!(pairs > 0);
        assert!(mixed > 0, "no LOD change was checked");
    }
}

// ------------------------------------------------------- following edits

/// The settled `(LOD, mesh hash)` of every shown chunk after `events`.
fn shown_meshes(events: &[StreamEvent<VoxelChunkMesh>]) -> BTreeMap<ChunkCoord, (u8, u64)> {
    let mut out = BTreeMap::new();
    for e in events {
        match e {
            StreamEvent::ChunkReady {
                coord, lod, output, ..
            } => {
                out.insert(*coord, (*lod, mesh_hash(output)));
            }
            StreamEvent::ChunkUnloaded { coord, .. } => {
                out.remove(coord);
            }
            StreamEvent::ChunkFailed { coord, lod } => panic!("chunk {coord:?} failed at {lod}"),
            _ => {}
        }
    }
    out
}

/// A viewer around which LOD 0 and coarser chunks are both streamed.
fn edit_viewer(at: [f32; 3]) -> StreamViewer {
    StreamViewer::new(at, 20.0)
        .with_forward([1.0, 0.0, 0.0])
        .with_lod_distances(vec![6.0, 14.0])
}

/// A fresh stream over `world` as it is now: its settled chunks.
fn fresh_stream(world: &VoxelWorld, at: [f32; 3]) -> BTreeMap<ChunkCoord, (u8, u64)> {
    let source = VoxelSource::from_world(world).unwrap();
    let cfg = source.stream_config().with_threads(2);
    let mut s = StreamScheduler::new(source, cfg).unwrap();
    s.update(&[edit_viewer(at)]).unwrap();
    shown_meshes(&s.wait())
}

fn brush_strategy() -> impl Strategy<Value = VoxelBrush> {
    (
        0usize..5,
        (-14.0f32..14.0, -14.0f32..14.0, -14.0f32..14.0),
        1.0f32..5.0,
        0u8..4,
    )
        .prop_map(|(tool, (x, y, z), r, m)| {
            let tool = [
                VoxelTool::Dig,
                VoxelTool::Add,
                VoxelTool::Smooth,
                VoxelTool::Paint,
                VoxelTool::Dig,
            ][tool];
            VoxelBrush::new(tool, [x, y, z], r).with_material(m)
        })
}

/// Applies `brush`, hands the changed chunks to the stream's source and
/// invalidates what reads them, as an editor does after each dab.
fn edit_and_invalidate(
    world: &mut VoxelWorld,
    s: &mut StreamScheduler<VoxelSource>,
    brush: &VoxelBrush,
) -> usize {
    world.apply_brush(brush).unwrap();
    let dirty: HashSet<ChunkCoord> = world.dirty_chunks().collect();
    s.source()
        .update_from_world(world, dirty.iter().copied())
        .unwrap();
    let n = s.invalidate_where(|src, c, lod| src.reads_dirty(c, lod, &dirty));
    world.rebuild(None);
    n
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// After random edits, each followed by an update of the source and an
    /// invalidation while builds may still run, the settled stream shows
    /// bit for bit what a fresh stream over the edited world shows.
    #[test]
    fn edited_streams_match_a_fresh_stream(
        brushes in proptest::collection::vec(brush_strategy(), 1..6),
        polls in proptest::collection::vec(0usize..40, 6),
        settle_first in any::<bool>(),
    ) {
        let at = [1.0, -2.0, 3.0];
        let mut world = VoxelWorld::new(&caves(8)).unwrap();
        let source = VoxelSource::from_world(&world).unwrap();
        let cfg = source.stream_config().with_threads(2).with_max_in_flight(4);
        let mut s = StreamScheduler::new(source, cfg).unwrap();
        s.update(&[edit_viewer(at)]).unwrap();
        let mut events = if settle_first { s.wait() } else { Vec::new() };
        for (b, &k) in brushes.iter().zip(&polls) {
            edit_and_invalidate(&mut world, &mut s, b);
            events.extend(s.poll(k));
        }
        events.extend(s.wait());
        prop_assert!(s.is_settled());
        let got = shown_meshes(&events);
        let want = fresh_stream(&world, at);
        prop_assert_eq!(got.len(), want.len());
        for (c, w) in &want {
            prop_assert_eq!(got.get(c), Some(w), "chunk {:?}", c);
        }
    }
}

#[test]
fn invalidated_chunks_are_rebuilt_first_with_their_slot() {
    let at = [1.0, -2.0, 3.0];
    let mut world = VoxelWorld::new(&caves(8)).unwrap();
    let source = VoxelSource::from_world(&world).unwrap();
    let cfg = source.stream_config().with_threads(2);
    let mut s = StreamScheduler::new(source, cfg).unwrap();
    s.update(&[edit_viewer(at)]).unwrap();
    let before = shown_meshes(&s.wait());
    let slots: BTreeMap<ChunkCoord, u32> = s.shown().iter().map(|(c, _, k)| (*c, *k)).collect();
    // A dig at the viewer: its chunk at least is rebuilt.
    let brush = VoxelBrush::new(VoxelTool::Dig, [2.0, -3.0, 4.0], 3.0);
    let n = edit_and_invalidate(&mut world, &mut s, &brush);
    assert!(n >= 1);
    assert!(!s.is_settled());
    let events = s.wait();
    assert_eq!(events.len(), n, "one ready event per invalidated chunk");
    let mut changed = 0;
    for e in &events {
        let StreamEvent::ChunkReady {
            coord,
            lod,
            slot,
            output,
        } = e
        else {
            panic!("only ready events: {e:?}");
        };
        assert_eq!(slots[coord], *slot, "chunk {coord:?} keeps its slot");
        assert_eq!(before[coord].0, *lod, "and its LOD");
        changed += usize::from(before[coord].1 != mesh_hash(output));
    }
    assert!(changed >= 1, "the dig shows");
    // Invalidating chunks that are not held does nothing.
    assert_eq!(s.invalidate([[1000, 0, 0]]), 0);
    assert!(s.is_settled());
    // Undoing the edit by hand (the generated chunks again) brings back the
    // original meshes.
    let dirty: Vec<ChunkCoord> = world.modified_chunks().collect();
    s.source()
        .set_chunks(dirty.iter().map(|c| (*c, None)))
        .unwrap();
    s.invalidate(dirty.iter().flat_map(|c| {
        (0..27).map(move |k| [c[0] + k % 3 - 1, c[1] + (k / 3) % 3 - 1, c[2] + k / 9 - 1])
    }));
    let mut after = before.clone();
    for (c, v) in shown_meshes(&s.wait()) {
        after.insert(c, v);
    }
    assert_eq!(after, before);
}

#[test]
fn edited_chunks_of_the_wrong_size_are_refused() {
    let source = VoxelSource::new(&caves(8)).unwrap();
    let other = VoxelWorld::new(&caves(16)).unwrap();
    assert!(source.update_from_world(&other, [[0, 0, 0]]).is_err());
    let bad = isoterra_world::VoxelChunk {
        density: isoterra_world::VoxelChunkData::Dense(vec![0.0; 7]),
        materials: isoterra_world::VoxelChunkMaterials::Uniform(0),
    };
    assert!(
        source
            .set_chunks([([0, 0, 0], Some(Arc::new(bad)))])
            .is_err()
    );
    assert!(source.edits().is_empty());
}

/// The settled `(LOD, mesh and collider hash)` of every shown heightmap chunk.
fn shown_heightmaps(
    events: &[StreamEvent<isoterra_world::HeightmapChunk>],
) -> BTreeMap<ChunkCoord, (u8, u64)> {
    let mut out = BTreeMap::new();
    for e in events {
        match e {
            StreamEvent::ChunkReady {
                coord, lod, output, ..
            } => {
                let mut h = DefaultHasher::new();
                for p in &output.mesh.positions {
                    p.map(f32::to_bits).hash(&mut h);
                }
                for n in &output.mesh.normals {
                    n.map(f32::to_bits).hash(&mut h);
                }
                output.mesh.indices.hash(&mut h);
                format!("{:?}", output.collider).hash(&mut h);
                out.insert(*coord, (*lod, h.finish()));
            }
            StreamEvent::ChunkUnloaded { coord, .. } => {
                out.remove(coord);
            }
            StreamEvent::ChunkFailed { coord, lod } => panic!("chunk {coord:?} failed at {lod}"),
            _ => {}
        }
    }
    out
}

fn heightmap_edit_params() -> HeightmapParams {
    HeightmapParams::DEFAULT
        .with_chunk_cells(8)
        .with_lod_count(3)
}

fn heightmap_edit_viewer() -> StreamViewer {
    StreamViewer::new([3.0, 10.0, -2.0], 40.0).with_lod_distances(vec![10.0, 20.0])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// As for voxels: sculpting, handing the changed chunks to the source
    /// and invalidating the world's dirty chunks while builds run gives,
    /// once settled, what a fresh stream over the sculpted world gives.
    #[test]
    fn edited_heightmap_streams_match_a_fresh_stream(
        brushes in proptest::collection::vec(
            (0usize..3, -30.0f32..30.0, -30.0f32..30.0, 1.0f32..6.0),
            1..6,
        ),
        polls in proptest::collection::vec(0usize..40, 6),
        settle_first in prop::bool::weighted(0.75),
    ) {
        let params = heightmap_edit_params();
        let mut world = HeightmapWorld::new(&params).unwrap();
        let source = HeightmapSource::from_world(&world).unwrap();
        let cfg = source.stream_config().with_threads(2).with_max_in_flight(4);
        let mut s = StreamScheduler::new(source, cfg).unwrap();
        s.update(&[heightmap_edit_viewer()]).unwrap();
        let mut events = if settle_first { s.wait() } else { Vec::new() };
        for (&(tool, x, z, r), &k) in brushes.iter().zip(&polls) {
            let tool = [
                isoterra_world::HeightTool::Raise,
                isoterra_world::HeightTool::Lower,
                isoterra_world::HeightTool::Smooth,
            ][tool];
            world
                .apply_brush(&isoterra_world::HeightBrush::new(tool, [x, z], r))
                .unwrap();
            let dirty = world.take_dirty();
            s.source().update_from_world(&world, dirty.iter().copied()).unwrap();
            s.invalidate(dirty.iter().map(|c| [c[0], c[1], 0]));
            events.extend(s.poll(k));
        }
        events.extend(s.wait());
        let got = shown_heightmaps(&events);
        let fresh = HeightmapSource::from_world(&world).unwrap();
        let cfg = fresh.stream_config().with_threads(2);
        let mut f = StreamScheduler::new(fresh, cfg).unwrap();
        f.update(&[heightmap_edit_viewer()]).unwrap();
        let want = shown_heightmaps(&f.wait());
        prop_assert_eq!(got, want);
    }
}

#[test]
fn heightmap_edits_of_the_wrong_size_are_refused() {
    let source = HeightmapSource::new(&heightmap_edit_params()).unwrap();
    assert!(
        source
            .set_chunks([([0, 0], Some(Arc::new(vec![1.0; 3])))])
            .is_err()
    );
    assert!(
        source
            .set_chunks([([0, 0], Some(Arc::new(vec![f32::NAN; 64])))])
            .is_err()
    );
    assert!(source.edits().is_empty());
    // An all-zero grid is no edit.
    source
        .set_chunks([([0, 0], Some(Arc::new(vec![0.0; 64])))])
        .unwrap();
    assert!(source.edits().is_empty());
    source
        .set_chunks([([0, 0], Some(Arc::new(vec![0.5; 64])))])
        .unwrap();
    assert_eq!(source.edits().len(), 1);
}
