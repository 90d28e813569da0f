//! Map kind meshing benchmarks (`isoterra::mesh::map`).
//!
//! Workload: a 512 x 512 cell map built here, plateaus-like: a terrace field
//! `2 + 2.2 (sin(0.045 x) cos(0.037 z) + 0.5 sin(0.11 x + 0.07 z))` clamped to
//! `0..=15` (levels 0..4 with rims of one and two levels), ramps (softness 1 in
//! diagonal bands 6 cells wide every 40 cells, softness 0 elsewhere), a small
//! ground height ripple, four round chasms (radius 9.5), two round lakes
//! (level 0 within radius 14, water at height 0.6 within radius 16) and a splat pattern of four textures.
//! Default options (unit cells, unit level height, chasm depth 2).
//!
//! Timed, single thread, one reused `MapMesher` and `MapMeshOutput`
//! (the steady editing case):
//! * `whole_512` — the whole map in one call;
//! * `chunks_64_512` — the same map as 8 x 8 chunks of 64 x 64 cells;
//! * `chunk_64` — one 64 x 64 chunk with cliffs, ramps and a chasm in it;
//! * `chunk_64_flat` — the same chunk of a flat map (two triangles per cell).
//!
//! Run: `cargo bench -p isoterra-bench --bench map_mesh -- --warm-up-time 1 --measurement-time 3`
//!
//! Instruction counts: with `MAP_MESH_PROFILE=<case>:<n>` (case one of the
//! names above) the binary meshes that case `n` times after one warm-up call,
//! without criterion, and exits; run it under
//! `valgrind --tool=callgrind --toggle-collect='*MapMesher*mesh*'` and divide
//! the collected instructions by `n + 1`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group};
use isoterra::field::Splat;
use isoterra::field::map::{MapLayers, NO_WATER};
use isoterra::mesh::CellRect;
use isoterra::mesh::map::{MapMeshOptions, MapMeshOutput, MapMesher};

/// Map side in cells.
const SIDE: u32 = 512;
/// Chunk side in cells.
const CHUNK: u32 = 64;

fn plateaus(side: u32) -> MapLayers {
    let mut m = MapLayers::new(side, side).expect("valid size");
    let s = side as f32;
    let chasms = [[0.7, 0.3], [0.2, 0.2], [0.55, 0.8], [0.9, 0.6]];
    let lakes = [[0.25, 0.7], [0.75, 0.15]];
    for z in 0..=side {
        for x in 0..=side {
            let i = m.index(x, z).expect("inside");
            let (fx, fz) = (x as f32, z as f32);
            let wave =
                (fx * 0.045).sin() * (fz * 0.037).cos() + 0.5 * (fx * 0.11 + fz * 0.07).sin();
            m.level[i] = (2.0 + 2.2 * wave).clamp(0.0, 15.0);
            m.softness[i] = if (fx - 0.3 * fz).rem_euclid(40.0) < 6.0 {
                1.0
            } else {
                0.0
            };
            m.height[i] = 0.1 * (fx * 0.5).sin() * (fz * 0.3).cos();
            let dist = |c: [f32; 2]| ((fx - c[0] * s).powi(2) + (fz - c[1] * s).powi(2)).sqrt();
            m.ground[i] = chasms
                .iter()
                .map(|&c| dist(c) - 9.5)
                .fold(f32::MAX, f32::min);
            if lakes.iter().any(|&c| dist(c) < 14.0) {
                m.level[i] = 0.0;
            }
            m.water[i] = if lakes.iter().any(|&c| dist(c) < 16.0) {
                0.6
            } else {
                NO_WATER
            };
            m.splat[i] = Splat::single(((x / 7 + z / 5) % 4) as u8);
        }
    }
    m
}

fn bench_map(c: &mut Criterion) {
    let layers = plateaus(SIDE);
    let options = MapMeshOptions::DEFAULT;
    let mut mesher = MapMesher::new();
    let mut out = MapMeshOutput::default();
    // Warm the buffers and print the sizes once.
    mesher
        .mesh(&layers, CellRect::whole(&layers), &options, &mut out)
        .expect("mesh");
    eprintln!(
        "map_mesh whole_512: {} terrain vertices, {} terrain triangles, {} water triangles",
        out.terrain.positions.len(),
        out.terrain.triangle_count(),
        out.water.triangle_count()
    );

    let mut group = c.benchmark_group("map_mesh");
    group.bench_function("whole_512", |b| {
        b.iter(|| {
            mesher
                .mesh(
                    black_box(&layers),
                    CellRect::whole(&layers),
                    &options,
                    &mut out,
                )
                .expect("mesh");
            black_box(out.terrain.indices.len())
        })
    });
    group.bench_function("chunks_64_512", |b| {
        b.iter(|| {
            let mut tris = 0;
            for cz in 0..SIDE / CHUNK {
                for cx in 0..SIDE / CHUNK {
                    let rect =
                        CellRect::new(cx * CHUNK, cz * CHUNK, (cx + 1) * CHUNK, (cz + 1) * CHUNK);
                    mesher
                        .mesh(black_box(&layers), rect, &options, &mut out)
                        .expect("mesh");
                    tris += out.terrain.triangle_count();
                }
            }
            black_box(tris)
        })
    });
    // The chunk holding the first chasm (x 358, z 154), cliffs and a ramp band.
    let rect = CellRect::new(5 * CHUNK, 2 * CHUNK, 6 * CHUNK, 3 * CHUNK);
    group.bench_function("chunk_64", |b| {
        b.iter(|| {
            mesher
                .mesh(black_box(&layers), rect, &options, &mut out)
                .expect("mesh");
            black_box(out.terrain.indices.len())
        })
    });
    // The same chunk of a flat map: only the two-triangle path.
    let flat = MapLayers::new(SIDE, SIDE).expect("valid size");
    group.bench_function("chunk_64_flat", |b| {
        b.iter(|| {
            mesher
                .mesh(black_box(&flat), rect, &options, &mut out)
                .expect("mesh");
            black_box(out.terrain.indices.len())
        })
    });
    group.finish();
}

/// The rectangle of a named case (see the module docs).
fn case_rect(name: &str) -> Option<CellRect> {
    match name {
        "whole_512" => Some(CellRect::new(0, 0, SIDE, SIDE)),
        "chunk_64" | "chunk_64_flat" => {
            Some(CellRect::new(5 * CHUNK, 2 * CHUNK, 6 * CHUNK, 3 * CHUNK))
        }
        _ => None,
    }
}

/// `MAP_MESH_PROFILE=<case>:<n>`: mesh one case `n + 1` times and return true.
fn profile_from_env() -> bool {
    let Ok(spec) = std::env::var("MAP_MESH_PROFILE") else {
        return false;
    };
    let (name, n) = spec.split_once(':').unwrap_or((spec.as_str(), "10"));
    let n: u32 = n.parse().expect("MAP_MESH_PROFILE=<case>:<count>");
    let rect = case_rect(name).expect("case: whole_512, chunk_64 or chunk_64_flat");
    let layers = if name == "chunk_64_flat" {
        MapLayers::new(SIDE, SIDE).expect("valid size")
    } else {
        plateaus(SIDE)
    };
    let mut mesher = MapMesher::new();
    let mut out = MapMeshOutput::default();
    for _ in 0..=n {
        mesher
            .mesh(black_box(&layers), rect, &MapMeshOptions::DEFAULT, &mut out)
            .expect("mesh");
    }
    eprintln!(
        "{name}: {} x {} cells, {} terrain triangles, {} calls",
        rect.width(),
        rect.height(),
        out.terrain.triangle_count(),
        n + 1
    );
    true
}

criterion_group!(benches, bench_map);

fn main() {
    if profile_from_env() {
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
