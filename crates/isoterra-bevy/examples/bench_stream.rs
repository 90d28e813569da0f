//! What the plugin costs a game's frame: a headless app (no rendering)
//! paced at 60 fps, a viewer flying over a voxel cave world and back, and
//! digs under it.
//!
//! Prints, as JSON: the main loop's time per frame while chunks stream
//! (wall time of `App::update` and the calling thread's CPU time; median,
//! 95th percentile, max), how many frames a dig takes to show its new mesh
//! and collider, how many mesh assets each pass out and back created (the
//! mesh pool reuses the ones of unloaded chunks), and how long the first
//! view takes on a fresh world and on the same world baked.
//!
//! ```text
//! cargo run -p isoterra-bevy --release --example bench_stream [-- --frames 1200 --trips 2]
//! ```

use std::time::{Duration, Instant};

use bevy::asset::{AssetEvent, AssetPlugin};
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy::transform::TransformPlugin;
use isoterra::kind::Document;
use isoterra_bevy::prelude::*;

const FRAME: Duration = Duration::from_nanos(16_666_667);

/// CPU time of `clock` (`CLOCK_THREAD_CPUTIME_ID`: the calling thread;
/// `CLOCK_PROCESS_CPUTIME_ID`: every thread, the workers too).
fn cpu_time(clock: libc::clockid_t) -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(clock, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

fn thread_cpu() -> Duration {
    cpu_time(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn process_cpu_s() -> f64 {
    cpu_time(libc::CLOCK_PROCESS_CPUTIME_ID).as_secs_f64()
}

fn stats(mut v: Vec<f64>) -> serde_json::Value {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    serde_json::json!({
        "median": at(0.5), "p95": at(0.95), "max": v[v.len() - 1],
        "mean": v.iter().sum::<f64>() / v.len() as f64,
    })
}

fn headless_app() -> App {
    let mut app = App::new();
    app.add_plugins((
        MinimalPlugins,
        AssetPlugin::default(),
        TransformPlugin,
        IsoterraPlugin,
    ))
    .insert_resource(TimeUpdateStrategy::ManualDuration(FRAME));
    app.finish();
    app.cleanup();
    app
}

/// Seconds, frames, process CPU seconds until a first view is in, and the
/// status then.
type FirstView = (f64, usize, f64, TerrainStatus);

/// A fresh app on the world at `path` with one viewer at `at`.
fn first_view_from(path: &std::path::Path, baked: bool, at: Vec3, distance: f32) -> FirstView {
    let mut app = headless_app();
    let start = Instant::now();
    let cpu0 = process_cpu_s();
    let terrain = app
        .world_mut()
        .spawn(Terrain::open(path).with_baked(baked))
        .id();
    app.world_mut().spawn((
        Transform::from_translation(at).looking_to(Vec3::X, Vec3::Y),
        TerrainViewer::new(distance),
    ));
    let mut frames = 0;
    loop {
        let t = Instant::now();
        app.update();
        frames += 1;
        if let Some(s) = app
            .world()
            .get::<TerrainStatus>(terrain)
            .filter(|s| s.settled && s.shown > 0)
        {
            return (
                start.elapsed().as_secs_f64(),
                frames,
                process_cpu_s() - cpu0,
                *s,
            );
        }
        std::thread::sleep(FRAME.saturating_sub(t.elapsed()));
    }
}

/// Bakes `lods` of the box `lo..hi` into the world file at `path`;
/// returns the rows and the seconds it took (one thread).
fn bake(path: &std::path::Path, lo: &[f32], hi: &[f32], lods: &[u8]) -> (usize, f64) {
    let t = Instant::now();
    let doc = Document::open(path).expect("the world");
    let mut rows = Vec::new();
    for &lod in lods {
        rows.extend(doc.bake_rows(lo, hi, lod).expect("a bake"));
    }
    doc.close().expect("closed");
    isoterra::store::WorldFile::open(path)
        .and_then(|mut f| isoterra::store::ChunkStore::put_baked(&mut f, &rows))
        .expect("rows stored");
    (rows.len(), t.elapsed().as_secs_f64())
}

fn view_json(v: FirstView) -> serde_json::Value {
    serde_json::json!({
        "seconds": v.0, "frames": v.1, "process_cpu_s": v.2,
        "shown": v.3.shown, "from_baked": v.3.from_baked,
    })
}

/// First views of a fresh world, live (the process's first), from its
/// rows after a bake of `lo..hi` at `lods`, and live again, side by side.
fn baked_first_views(
    path: &std::path::Path,
    new: &NewWorld,
    (lo, hi, lods): (&[f32], &[f32], &[u8]),
    (at, distance): (Vec3, f32),
) -> serde_json::Value {
    Document::create(path, new)
        .and_then(Document::close)
        .expect("a new world");
    let live_cold = first_view_from(path, false, at, distance);
    let (rows, bake_s) = bake(path, lo, hi, lods);
    let baked = first_view_from(path, true, at, distance);
    let live_warm = first_view_from(path, false, at, distance);
    serde_json::json!({
        "baked_rows": rows,
        "bake_one_thread_s": bake_s,
        "live_first_in_process": view_json(live_cold),
        "baked": view_json(baked),
        "live_after": view_json(live_warm),
    })
}

fn main() {
    let mut frames = 1200usize;
    let mut trips = 2usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--frames" {
            frames = args.next().and_then(|v| v.parse().ok()).unwrap_or(frames);
        } else if a == "--trips" {
            trips = args.next().and_then(|v| v.parse().ok()).unwrap_or(trips);
        }
    }
    let trips = trips.max(1);
    let dir = tempfile::tempdir().expect("a temporary folder");
    // Voxel: the LOD 0 ring baked; heightmap: LOD 0..3 over 2048 x 2048
    // around a viewer that sees 1000 units.
    let first_views = serde_json::json!({
        "voxel": baked_first_views(
            &dir.path().join("baked.isoterra"),
            &NewWorld::new(WorldKind::Voxel).with_preset("caves"),
            (&[-96.0; 3], &[96.0; 3], &[0]),
            (Vec3::new(0.0, 10.0, 0.0), 160.0),
        ),
        "heightmap": baked_first_views(
            &dir.path().join("baked-land.isoterra"),
            &NewWorld::new(WorldKind::Heightmap),
            (&[-1024.0; 2], &[1024.0; 2], &[0, 1, 2, 3]),
            (Vec3::new(0.0, 80.0, 0.0), 1000.0),
        ),
    });
    let mut app = headless_app();
    let terrain = app
        .world_mut()
        .spawn(Terrain::open_or_create(
            dir.path().join("bench.isoterra"),
            NewWorld::new(WorldKind::Voxel).with_preset("caves"),
        ))
        .id();
    let viewer = app
        .world_mut()
        .spawn((
            Transform::from_xyz(0.0, 10.0, 0.0).looking_to(Vec3::X, Vec3::Y),
            TerrainViewer::new(160.0),
        ))
        .id();

    // First load, not timed per frame: how long until the first view is in.
    let start = Instant::now();
    let mut first = 0;
    loop {
        let t = Instant::now();
        app.update();
        first += 1;
        if app
            .world()
            .get::<TerrainStatus>(terrain)
            .is_some_and(|s| s.settled && s.shown > 0)
        {
            break;
        }
        std::thread::sleep(FRAME.saturating_sub(t.elapsed()));
    }
    let first_view_s = start.elapsed().as_secs_f64();
    let shown_at_start = app.world().get::<TerrainStatus>(terrain).unwrap().shown;

    // Fly out along +x at 24 units/s and back, `trips` times, paced at 60
    // fps.
    let speed = 24.0 / 60.0;
    let mut wall = Vec::new();
    let mut cpu = Vec::new();
    let mut created_per_pass = vec![0usize; 2 * trips];
    let mut created = 0usize;
    for f in 0..frames * trips {
        let pass = f / (frames / 2).max(1);
        let out = pass.is_multiple_of(2);
        app.world_mut()
            .get_mut::<Transform>(viewer)
            .unwrap()
            .translation
            .x += if out { speed } else { -speed };
        let (t, c) = (Instant::now(), thread_cpu());
        app.update();
        wall.push(t.elapsed().as_secs_f64() * 1e3);
        cpu.push((thread_cpu() - c).as_secs_f64() * 1e3);
        let added = app
            .world_mut()
            .resource_mut::<Messages<AssetEvent<Mesh>>>()
            .drain()
            .filter(|e| matches!(e, AssetEvent::Added { .. }))
            .count();
        created += added;
        if let Some(n) = created_per_pass.get_mut(pass) {
            *n += added;
        }
        std::thread::sleep(FRAME.saturating_sub(t.elapsed()));
    }

    // Digs: frames from the edit message to the new chunk version.
    let mut dig_frames = Vec::new();
    let mut dig_ms = Vec::new();
    let ready = app.world().get::<TerrainReady>(terrain).unwrap().clone();
    for k in 0..20 {
        while !app
            .world()
            .get::<TerrainStatus>(terrain)
            .is_some_and(|s| s.settled)
        {
            app.update();
            std::thread::sleep(FRAME);
        }
        let from = Vec3::new(k as f32 * 3.0 - 30.0, 60.0, 4.0);
        let Some(hit) = ready.raycast(from, Vec3::NEG_Y, 200.0) else {
            continue;
        };
        let versions = |app: &mut App| -> Vec<([i32; 3], u64)> {
            let w = app.world_mut();
            let mut q = w.query::<&TerrainChunk>();
            let mut v: Vec<_> = q.iter(w).map(|c| (c.coord, c.version)).collect();
            v.sort();
            v
        };
        let before = versions(&mut app);
        app.world_mut()
            .write_message(TerrainEdit::dab(terrain, "dig", 3.0, hit.point));
        let t0 = Instant::now();
        let mut n = 0;
        loop {
            let t = Instant::now();
            app.update();
            n += 1;
            if versions(&mut app) != before || n > 600 {
                break;
            }
            std::thread::sleep(FRAME.saturating_sub(t.elapsed()));
        }
        dig_frames.push(n as f64);
        dig_ms.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    let report = serde_json::json!({
        "world": "voxel caves, chunks of 32, viewer distance 160, LOD rings 64/128/192",
        "first_view_s": first_view_s,
        "first_view_frames": first,
        "chunks_shown_at_start": shown_at_start,
        "frames_timed": frames,
        "main_loop_wall_ms": stats(wall),
        "main_thread_cpu_ms": stats(cpu),
        "round_trips": trips,
        "mesh_assets_created": created,
        "mesh_assets_created_per_pass_out_and_back": created_per_pass,
        "first_view_live_and_baked": first_views,
        "dig_to_new_mesh_frames": stats(dig_frames),
        "dig_to_new_mesh_ms": stats(dig_ms),
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
    });
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
}
