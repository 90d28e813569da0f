//! What the plugin costs a game's frame: a headless app (no rendering)
//! paced at 60 fps, a viewer flying over a voxel cave world and back, and
//! digs under it.
//!
//! Prints, as JSON: the main loop's time per frame while chunks stream
//! (wall time of `App::update` and the calling thread's CPU time; median,
//! 95th percentile, max), how many frames a dig takes to show its new mesh
//! and collider, and how many mesh assets were created after the first
//! pass (the mesh pool reuses the ones of unloaded chunks).
//!
//! ```text
//! cargo run -p isoterra-bevy --release --example bench_stream [-- --frames 1200]
//! ```

use std::time::{Duration, Instant};

use bevy::asset::{AssetEvent, AssetPlugin};
use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use bevy::transform::TransformPlugin;
use isoterra_bevy::prelude::*;

const FRAME: Duration = Duration::from_nanos(16_666_667);

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

fn stats(mut v: Vec<f64>) -> serde_json::Value {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    serde_json::json!({
        "median": at(0.5), "p95": at(0.95), "max": v[v.len() - 1],
        "mean": v.iter().sum::<f64>() / v.len() as f64,
    })
}

fn main() {
    let mut frames = 1200usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--frames" {
            frames = args.next().and_then(|v| v.parse().ok()).unwrap_or(frames);
        }
    }
    let dir = tempfile::tempdir().expect("a temporary folder");
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

    // Fly out along +x at 24 units/s and back, paced at 60 fps.
    let speed = 24.0 / 60.0;
    let mut wall = Vec::new();
    let mut cpu = Vec::new();
    let mut created_after_first_pass = 0usize;
    let mut created = 0usize;
    for f in 0..frames {
        let out = f < frames / 2;
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
        if !out {
            created_after_first_pass += added;
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
        "mesh_assets_created": created,
        "mesh_assets_created_on_the_way_back": created_after_first_pass,
        "dig_to_new_mesh_frames": stats(dig_frames),
        "dig_to_new_mesh_ms": stats(dig_ms),
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
    });
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
}
