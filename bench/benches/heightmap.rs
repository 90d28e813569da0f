//! Heightmap chunk meshing benchmarks.
//!
//! Workload: one chunk of 64 x 64 cells (the default chunk size) meshed at LOD
//! 0..3 (65², 33², 17² and 9² vertices) from heights
//! `h = 8 sin(0.05 x) cos(0.07 z) + 2 sin(0.31 x + 0.17 z)` of the global node
//! index, into a reused `HeightmapMesh` with a reused `HeightmapMesher`
//! (the steady streaming case). Variants: all four edges stitched to a coarser
//! neighbour plus a skirt (LOD 0), and the plain-data heightfield collider.
//! Height sampling is not timed (it belongs to the noise benchmarks).
//!
//! Run: `cargo bench -p isoterra-bench --bench heightmap -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use isoterra::mesh::{
    HeightChunkInput, HeightfieldCollider, HeightmapMesh, HeightmapMesher, HeightmapOptions,
    sample_chunk_heights,
};

/// Cells per chunk side at LOD 0.
const CELLS: u32 = 64;

fn height([x, z]: [i64; 2]) -> f32 {
    let (x, z) = (x as f64, z as f64);
    (8.0 * (0.05 * x).sin() * (0.07 * z).cos() + 2.0 * (0.31 * x + 0.17 * z).sin()) as f32
}

fn heightmap(c: &mut Criterion) {
    let mut group = c.benchmark_group("heightmap");
    let mut mesher = HeightmapMesher::new();
    let mut mesh = HeightmapMesh::default();
    for lod in 0..=3u8 {
        let mut heights = Vec::new();
        sample_chunk_heights(CELLS, lod, [3, -2], &mut heights, height).unwrap();
        let input = HeightChunkInput::new(&heights)
            .with_cells(CELLS)
            .with_lod(lod)
            .with_chunk([3, -2])
            .with_cell_size(0.5)
            .with_neighbours([lod; 4]);
        let opts = HeightmapOptions::DEFAULT;
        mesher.mesh(&input, &opts, &mut mesh).unwrap();
        let side = (CELLS >> lod) + 1;
        group.bench_function(
            format!("mesh_{CELLS}_lod{lod}/verts={}", side * side),
            |b| {
                b.iter(|| {
                    mesher.mesh(black_box(&input), &opts, &mut mesh).unwrap();
                    mesh.indices.len()
                })
            },
        );
    }

    let mut heights = Vec::new();
    sample_chunk_heights(CELLS, 0, [3, -2], &mut heights, height).unwrap();
    let input = HeightChunkInput::new(&heights)
        .with_cells(CELLS)
        .with_chunk([3, -2])
        .with_cell_size(0.5)
        .with_neighbours([1; 4]);
    let opts = HeightmapOptions::DEFAULT.with_skirt_depth(4.0);
    mesher.mesh(&input, &opts, &mut mesh).unwrap();
    group.bench_function(format!("mesh_{CELLS}_lod0_stitched4_skirt"), |b| {
        b.iter(|| {
            mesher.mesh(black_box(&input), &opts, &mut mesh).unwrap();
            mesh.indices.len()
        })
    });

    group.bench_function(format!("collider_{CELLS}_lod0"), |b| {
        b.iter(|| {
            HeightfieldCollider::from_chunk(black_box(&input))
                .unwrap()
                .heights
                .len()
        })
    });
    group.finish();
}

criterion_group!(benches, heightmap);
criterion_main!(benches);
