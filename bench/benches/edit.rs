//! Editing benchmarks for the side-view world.
//!
//! Workload `edit/dig_r8_rebuild_4096x1024`: a 4096 x 1024-cell hills world
//! (seed 7, cell size 1, 32-cell chunks), every chunk built once. One
//! iteration digs a circle of radius 8 cells at the surface and rebuilds the
//! dirty chunks (fill mesh with material submeshes, contour segments,
//! polylines, simplified colliders). Only that is timed; the dig is then
//! undone and the chunks rebuilt again, untimed, so every iteration starts
//! from the same terrain. Five dig sites give 2, 3 and 4 dirty chunks.
//!
//! `edit/dig_r8_apply_only` times the brush alone (no rebuild), and
//! `edit/first_build_4096x1024` the first build of all 4096 chunks.
//!
//! Run single-threaded (the figure in BENCHMARKS.md):
//! `RAYON_NUM_THREADS=1 cargo bench -p isoterra-bench --bench edit -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use isoterra::field::{Side2dGen, Side2dPreset};
use isoterra::world::{EditDirection, Side2dBrush, Side2dParams, Side2dTool, Side2dWorld};

fn world() -> Side2dWorld {
    let spec = Side2dGen::DEFAULT
        .with_preset(Side2dPreset::Hills)
        .with_seed(7)
        .with_size(4096, 1024);
    Side2dWorld::generate(&Side2dParams::DEFAULT.with_generator(spec)).expect("valid parameters")
}

/// Brushes of radius 8 centred on the surface at a few columns.
fn brushes(world: &Side2dWorld) -> Vec<Side2dBrush> {
    [2048.0f32, 2040.0, 2032.0, 1000.3, 3000.7]
        .into_iter()
        .map(|x| {
            let y = world
                .raycast([x, 1023.0], [x, 0.0])
                .map_or(700.0, |h| h.point[1]);
            Side2dBrush::new(Side2dTool::Dig, [x, y], 8.0)
        })
        .collect()
}

fn bench_edit(c: &mut Criterion) {
    let mut world = world();
    world.rebuild_all();
    let brushes = brushes(&world);
    let mut g = c.benchmark_group("edit");
    g.bench_function("dig_r8_rebuild_4096x1024", |b| {
        let mut k = 0;
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let brush = &brushes[k % brushes.len()];
                k += 1;
                let start = Instant::now();
                let edit = world.apply_brush(brush).expect("valid brush");
                black_box(world.rebuild(None));
                total += start.elapsed();
                world
                    .apply_edit(&edit, EditDirection::Backward)
                    .expect("own edit");
                world.rebuild(None);
            }
            total
        })
    });
    g.bench_function("dig_r8_apply_only", |b| {
        let brush = brushes[0];
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                let edit = world.apply_brush(&brush).expect("valid brush");
                total += start.elapsed();
                world
                    .apply_edit(&edit, EditDirection::Backward)
                    .expect("own edit");
            }
            world.rebuild(None);
            total
        })
    });
    g.sample_size(10);
    g.bench_function("first_build_4096x1024", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                world.mark_all_dirty();
                let start = Instant::now();
                world.rebuild_all();
                total += start.elapsed();
            }
            total
        })
    });
    g.finish();
}

criterion_group!(benches, bench_edit);
criterion_main!(benches);
