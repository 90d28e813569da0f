//! Marching squares benchmarks, side by side with the `contour` crate.
//!
//! Workload: a 2048 x 2048 node field, `x, y` in `linspace(0, S, 2048)`,
//! `value = sin x + sin y + 0.3 sin(0.7 x + 1.3 y + 0.5)` (computed in f64,
//! stored as f32), iso 0. "sparse" is `S = 16 pi`, "dense" is `S = 128 pi`.
//! The same values feed every contender (the `contour` crate gets them as f64).
//!
//! Run: `cargo bench -p isoterra-bench --bench squares -- --warm-up-time 1 --measurement-time 3`

use std::f64::consts::PI;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use isoterra::field::Field2;
use isoterra::mesh::{
    CellRect, ContourJoiner, ContourTracer, MarchingSquares, Polyline, SquaresOptions,
    SquaresOutput,
};

/// Nodes per side.
const N: u32 = 2048;

/// The workload field: `sin x + sin y + 0.3 sin(0.7 x + 1.3 y + 0.5)` on
/// `linspace(0, s, n)` in both axes; cell size `s / (n - 1)` so positions are in
/// the same units as `x, y`.
fn sine_field(n: u32, s: f64) -> Field2 {
    let step = s / (n - 1) as f64;
    Field2::from_fn(n, n, |i, j| {
        let (x, y) = (i as f64 * step, j as f64 * step);
        (x.sin() + y.sin() + 0.3 * (0.7 * x + 1.3 * y + 0.5).sin()) as f32
    })
    .expect("finite values")
    .with_cell_size(step as f32)
    .expect("positive cell size")
}

fn workloads() -> [(&'static str, f64); 2] {
    [("sparse", 16.0 * PI), ("dense", 128.0 * PI)]
}

fn squares(c: &mut Criterion) {
    let mut group = c.benchmark_group("squares");
    group.sample_size(20);
    for (name, s) in workloads() {
        let field = sine_field(N, s);
        let values64: Vec<f64> = field.values().iter().map(|&v| v as f64).collect();
        let step = field.cell_size() as f64;

        // Ours: scan + joining into polylines (the contour-only fast path).
        let mut tracer = ContourTracer::new();
        let mut lines: Vec<Polyline> = Vec::new();
        tracer.contour_lines(&field, 0.0, &mut lines).unwrap();
        let points: usize = lines.iter().map(|l| l.points.len()).sum();
        group.bench_function(format!("contour_lines/{name}_{N}"), |b| {
            b.iter(|| {
                tracer
                    .contour_lines(black_box(&field), 0.0, &mut lines)
                    .unwrap();
                lines.len()
            })
        });

        // Ours: fill mesh + contour segments in one pass (the chunk rebuild path).
        let mut mesher = MarchingSquares::new();
        let mut out = SquaresOutput::default();
        let whole = CellRect::whole(&field);
        let opts = SquaresOptions::DEFAULT;
        group.bench_function(format!("fill_and_segments/{name}_{N}"), |b| {
            b.iter(|| {
                mesher
                    .mesh(black_box(&field), None, whole, &opts, &mut out)
                    .unwrap();
                out.fill.indices.len()
            })
        });
        let (verts, tris) = (out.fill.positions.len(), out.fill.triangle_count());

        // Ours, general path: segments from the mesher, then the key-based joiner.
        let seg_opts = SquaresOptions::DEFAULT.with_fill(false);
        let mut joiner = ContourJoiner::new();
        let mut joined: Vec<Polyline> = Vec::new();
        group.bench_function(format!("segments_then_join/{name}_{N}"), |b| {
            b.iter(|| {
                mesher
                    .mesh(black_box(&field), None, whole, &seg_opts, &mut out)
                    .unwrap();
                joiner.join(&[&out.segments], &mut joined);
                joined.len()
            })
        });

        // Peer: the `contour` crate (d3-contour port), interpolated ("smooth") lines.
        let builder = contour::ContourBuilder::new(N as usize, N as usize, true)
            .x_step(step)
            .y_step(step);
        let peer = builder.lines(&values64, &[0.0]).unwrap();
        let peer_lines = peer[0].geometry().0.len();
        let peer_points: usize = peer[0].geometry().0.iter().map(|l| l.0.len()).sum();
        eprintln!(
            "squares/{name}_{N}: ours {} lines / {points} points, fill {verts} vertices / {tris} triangles; \
             contour crate {peer_lines} lines / {peer_points} points",
            lines.len()
        );
        group.bench_function(format!("contour_crate/{name}_{N}"), |b| {
            b.iter(|| builder.lines(black_box(&values64), &[0.0]).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, squares);
criterion_main!(benches);
