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
//! World workload `world_5x5_64`: a fresh `HeightmapWorld` (hills preset,
//! seed 1, 64-cell chunks, unit cells, default LOD rings) and a viewer in the
//! middle of chunk `[0, 0]` whose view distance (140) selects exactly the
//! 5 x 5 chunks around it; the rings give LOD 0 to 21 of them and LOD 1 to
//! the four corners, stitched to their neighbours as the streaming scheduler
//! would ask (the selection is `desired_chunks` on the grid of the world's
//! `HeightmapSource::stream_config`).
//! Timed: `generate` (the heights every mesh reads, apron included, on one
//! thread), `generate_mesh_1t` (selection, heights and meshes on one thread
//! with one reused mesher) and `generate_mesh_rayon` (`build_meshes` on
//! rayon's global pool, one mesher per worker). Each iteration starts from a
//! new world, so nothing is cached.
//!
//! Run: `cargo bench -p isoterra-bench --bench heightmap -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use isoterra::field::{HeightParams, HeightPreset};
use isoterra::mesh::{
    HeightChunkInput, HeightfieldCollider, HeightmapMesh, HeightmapMesher, HeightmapOptions,
    sample_chunk_heights,
};
use isoterra::world::{
    HeightmapParams, HeightmapSource, HeightmapWorld, MeshKey, StreamConfig, StreamViewer,
    desired_chunks, neighbour_lods,
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

fn world_params() -> HeightmapParams {
    HeightmapParams::DEFAULT
        .with_generator(HeightParams::preset(HeightPreset::Hills))
        .with_seed(1)
        .with_chunk_cells(CELLS)
}

/// The streaming configuration of the world's chunk grid.
fn stream_config(params: &HeightmapParams) -> StreamConfig {
    HeightmapSource::new(params).unwrap().stream_config()
}

/// The stitched mesh keys of the 5 x 5 chunks around a viewer in the middle
/// of chunk `[0, 0]`, with the world's LOD rings.
fn neighbourhood(params: &HeightmapParams, config: &StreamConfig) -> Vec<MeshKey> {
    let half = CELLS as f32 / 2.0;
    let rings = (0..params.max_lod())
        .map(|k| params.lod_distance * (1u32 << k) as f32)
        .collect();
    let viewer = StreamViewer::new([half, 0.0, half], 140.0).with_lod_distances(rings);
    let selection: Vec<([i32; 2], u8)> = desired_chunks(&[viewer], config)
        .unwrap()
        .into_iter()
        .map(|(c, lod)| ([c[0], c[1]], lod))
        .collect();
    let neighbours = neighbour_lods(&selection);
    selection
        .iter()
        .zip(&neighbours)
        .map(|(&(c, lod), &n)| MeshKey::new(c, lod).with_neighbours(n))
        .collect()
}

fn world_neighbourhood(c: &mut Criterion) {
    let params = world_params();
    let config = stream_config(&params);
    let keys = neighbourhood(&params, &config);
    assert_eq!(keys.len(), 25);
    assert!(
        keys.iter()
            .all(|k| k.chunk[0].abs() <= 2 && k.chunk[1].abs() <= 2)
    );
    assert_eq!(keys.iter().filter(|k| k.lod == 1).count(), 4);

    let mut group = c.benchmark_group("heightmap_world");
    group.sample_size(10);
    group.bench_function(format!("world_5x5_{CELLS}/generate"), |b| {
        let mut heights = Vec::new();
        b.iter(|| {
            let world = HeightmapWorld::new(black_box(&params)).unwrap();
            let mut n = 0;
            for k in neighbourhood(&params, &config) {
                world.chunk_heights(k.chunk, k.lod, &mut heights).unwrap();
                n += heights.len();
            }
            n
        })
    });
    group.bench_function(format!("world_5x5_{CELLS}/generate_mesh_1t"), |b| {
        let mut mesher = HeightmapMesher::new();
        let mut heights = Vec::new();
        let mut mesh = HeightmapMesh::default();
        b.iter(|| {
            let world = HeightmapWorld::new(black_box(&params)).unwrap();
            let mut n = 0;
            for k in neighbourhood(&params, &config) {
                world
                    .build_mesh_into(&k, &mut mesher, &mut heights, &mut mesh)
                    .unwrap();
                n += mesh.indices.len();
            }
            n
        })
    });
    group.bench_function(format!("world_5x5_{CELLS}/generate_mesh_rayon"), |b| {
        b.iter(|| {
            let world = HeightmapWorld::new(black_box(&params)).unwrap();
            world
                .build_meshes(&neighbourhood(&params, &config))
                .into_iter()
                .map(|m| m.unwrap().indices.len())
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, heightmap, world_neighbourhood);
criterion_main!(benches);
