//! Voxel world benchmarks: the chunk rebuild path (gather a chunk's
//! `(N + 3)^3` nodes from the chunk store, mesh it with normals and
//! materials), the world-level rebuild on rayon, and a dig + rebuild.
//!
//! World: the `caves` preset (seed 7, defaults), 32^3 cells per chunk. The
//! measured block is the 4 x 4 x 4 chunks `[-2, 1]^3` around the ground
//! surface (ground at y in about [-16, 16], tunnels below); its neighbours
//! are generated beforehand so that no generation is timed.
//!
//! Workloads:
//!
//! * `chunk32_gather_mesh`: [`VoxelWorld::mesh_chunk`] on each of the 64
//!   chunks, single thread, one warm [`VoxelMesher`] and one reused output
//!   mesh: gather `(N + 3)^3` nodes from the chunk store, marching cubes
//!   with gradient normals and materials.
//! * `chunk32_gather_mesh_collider`: the same, also taking each chunk's
//!   collider ([`VoxelChunkMesh::trimesh`], a borrow of the same buffers):
//!   the collider costs nothing extra. `to_trimesh_copy` times the owned
//!   copy (`to_trimesh`) a physics engine's constructor may want, alone.
//! * `chunk32_mesh_only`: the marching cubes part alone (`mesh_slice` with
//!   normals on the same 64 gathered grids, prepared beforehand), to show
//!   what the gather adds.
//! * `world_rebuild_64x32/threads_T`: [`VoxelWorld::rebuild`] of the 64
//!   dirty chunks on a rayon pool of `T` threads (includes the chunk cache
//!   bookkeeping), first meshing (new mesh buffers), and
//!   `world_rebuild_warm_216x32/threads_T`: the steady state, 216 chunks
//!   that were meshed before rebuilt again (their buffers reused).
//! * `dig_r8_*`: a dig of radius 8 on the ground surface: the brush alone,
//!   the brush and the rebuild of the dirty chunks, the steady dig / rebuild /
//!   undo / rebuild cycle, and (`dig_r8_brush_undo`) the brush and its undo
//!   without rebuilding.
//!
//! Throughput counts cells: `N^3` per rebuilt chunk.
//!
//! Run: `cargo bench -p isoterra-bench --bench voxel -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use isoterra::field::{VoxelGen, VoxelPreset};
use isoterra::mesh::{CellBox, CubesOptions, CubesOutput, MarchingCubes};
use isoterra::world::{
    EditDirection, VoxelBrush, VoxelChunkMesh, VoxelMesher, VoxelParams, VoxelTool, VoxelWorld,
};

const N: u32 = 32;
const LO: i32 = -2;
const HI: i32 = 1;

fn block() -> Vec<[i32; 3]> {
    let mut v = Vec::new();
    for z in LO..=HI {
        for y in LO..=HI {
            for x in LO..=HI {
                v.push([x, y, z]);
            }
        }
    }
    v
}

/// The world with the block and its neighbours generated and the block's
/// 64 chunks dirty (nothing meshed yet).
fn dirty_world() -> VoxelWorld {
    let params = VoxelParams::DEFAULT
        .with_chunk_cells(N)
        .with_generator(VoxelGen::new(VoxelPreset::Caves, 7));
    let mut w = VoxelWorld::new(&params).unwrap();
    let mut ring = Vec::new();
    for z in LO - 1..=HI + 1 {
        for y in LO - 1..=HI + 1 {
            for x in LO - 1..=HI + 1 {
                ring.push([x, y, z]);
            }
        }
    }
    w.load_chunks(&ring);
    w.ensure_region([LO; 3], [HI; 3]).unwrap();
    assert_eq!(w.dirty_count(), 64);
    w
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

/// A point on the ground surface near the block's centre: the first solid
/// node going down the column x = z = 0.
fn surface_point(w: &VoxelWorld) -> [f32; 3] {
    for y in (-60..60).rev() {
        if w.node([0, y, 0]).is_some_and(|(v, _)| v >= 0.0) {
            return [0.0, y as f32, 0.0];
        }
    }
    panic!("no ground in the column");
}

fn chunk_path(c: &mut Criterion) {
    let world = dirty_world();
    let coords = block();
    let mut mesher = VoxelMesher::new();
    let mut mesh = VoxelChunkMesh::default();
    let mut tris = 0;
    for &k in &coords {
        world.mesh_chunk(k, &mut mesher, &mut mesh);
        tris += mesh.triangle_count();
    }
    eprintln!("voxel/chunk32_gather_mesh: 64 chunks, {tris} triangles");
    let mut group = c.benchmark_group("voxel");
    group.sample_size(20);
    group.throughput(Throughput::Elements(64 * (N as u64).pow(3)));
    group.bench_function("chunk32_gather_mesh", |b| {
        b.iter(|| {
            let mut t = 0;
            for &k in &coords {
                world.mesh_chunk(black_box(k), &mut mesher, &mut mesh);
                t += mesh.indices.len();
            }
            t
        })
    });
    group.bench_function("chunk32_gather_mesh_collider", |b| {
        b.iter(|| {
            let mut t = 0;
            for &k in &coords {
                world.mesh_chunk(black_box(k), &mut mesher, &mut mesh);
                let (positions, indices) = black_box(mesh.trimesh());
                t += positions.len() + indices.len();
            }
            t
        })
    });
    // The marching cubes part alone: the same (N + 3)^3 grids, gathered
    // beforehand node by node, meshed with normals by `mesh_slice`.
    let w = N + 3;
    let grids: Vec<Vec<f32>> = coords
        .iter()
        .map(|&k| {
            let o = k.map(|v| v as i64 * N as i64 - 1);
            let mut g = Vec::with_capacity((w as usize).pow(3));
            for z in 0..w as i64 {
                for y in 0..w as i64 {
                    for x in 0..w as i64 {
                        let v = world.node([o[0] + x, o[1] + y, o[2] + z]);
                        g.push(v.map_or(-1.0, |(v, _)| v));
                    }
                }
            }
            g
        })
        .collect();
    let mut cubes = MarchingCubes::new();
    let mut out = CubesOutput::default();
    let cells = CellBox::new(1, 1, 1, w - 2, w - 2, w - 2);
    group.bench_function("chunk32_mesh_only", |b| {
        b.iter(|| {
            let mut t = 0;
            for g in &grids {
                cubes
                    .mesh_slice(
                        black_box(g),
                        [w; 3],
                        cells,
                        &CubesOptions::DEFAULT,
                        &mut out,
                    )
                    .unwrap();
                t += out.indices.len();
            }
            t
        })
    });
    // The meshes of the block, for the owned collider copy alone.
    let meshes: Vec<VoxelChunkMesh> = coords
        .iter()
        .map(|&k| {
            let mut m = VoxelChunkMesh::default();
            world.mesh_chunk(k, &mut mesher, &mut m);
            m
        })
        .collect();
    group.bench_function("to_trimesh_copy", |b| {
        b.iter(|| {
            meshes
                .iter()
                .map(|m| black_box(m.to_trimesh()).1.len())
                .sum::<usize>()
        })
    });
    group.finish();
}

fn world_rebuild(c: &mut Criterion) {
    let base = dirty_world();
    let cells = 64 * (N as u64).pow(3);
    let mut group = c.benchmark_group("voxel");
    group.sample_size(10);
    group.throughput(Throughput::Elements(cells));
    for threads in [1, 2] {
        let p = pool(threads);
        {
            let mut w = base.clone();
            p.install(|| w.rebuild(None));
            let tris: usize = w
                .meshed_chunks()
                .filter_map(|c| w.chunk_mesh(c))
                .map(|m| m.triangle_count())
                .sum();
            let nonempty = w
                .meshed_chunks()
                .filter_map(|c| w.chunk_mesh(c))
                .filter(|m| !m.is_empty())
                .count();
            eprintln!(
                "voxel/world_rebuild_64x32: {nonempty} of 64 chunks with a surface, {tris} triangles"
            );
        }
        // First meshing of the chunks: new mesh buffers each time.
        group.bench_function(format!("world_rebuild_64x32/threads_{threads}"), |b| {
            b.iter_batched_ref(
                || base.clone(),
                |w| p.install(|| w.rebuild(None)).rebuilt,
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();

    // Steady state: the 6^3 chunks around the block already meshed (8^3
    // loaded), re-dirtied by writing the block's own data back with
    // `insert_chunk` (untimed); each rebuild reuses the previous meshes'
    // buffers and the world's meshers.
    let params = *base.params();
    let mut w = VoxelWorld::new(&params).unwrap();
    let mut outer = Vec::new();
    for z in LO - 2..=HI + 2 {
        for y in LO - 2..=HI + 2 {
            for x in LO - 2..=HI + 2 {
                outer.push([x, y, z]);
            }
        }
    }
    w.load_chunks(&outer);
    w.ensure_region([LO - 1; 3], [HI + 1; 3]).unwrap();
    w.rebuild(None);
    let len = w.chunk_len();
    let data: Vec<([i32; 3], Vec<f32>, Vec<u8>)> = block()
        .into_iter()
        .map(|k| {
            let ch = w.chunk(k).unwrap();
            (k, ch.density.to_dense(len), ch.materials.to_dense(len))
        })
        .collect();
    let mut group = c.benchmark_group("voxel");
    group.sample_size(10);
    group.throughput(Throughput::Elements(216 * (N as u64).pow(3)));
    for threads in [1, 2] {
        let p = pool(threads);
        group.bench_function(
            format!("world_rebuild_warm_216x32/threads_{threads}"),
            |b| {
                b.iter_custom(|iters| {
                    let mut total = std::time::Duration::ZERO;
                    for _ in 0..iters {
                        for (k, d, m) in &data {
                            w.insert_chunk(*k, d.clone(), m.clone()).unwrap();
                        }
                        assert_eq!(w.dirty_count(), 216);
                        let t = std::time::Instant::now();
                        p.install(|| w.rebuild(None));
                        total += t.elapsed();
                    }
                    total
                })
            },
        );
    }
    group.finish();
}

fn dig_rebuild(c: &mut Criterion) {
    let mut meshed = dirty_world();
    meshed.rebuild(None);
    let at = surface_point(&meshed);
    let brush = VoxelBrush::new(VoxelTool::Dig, at, 8.0);
    {
        let mut w = meshed.clone();
        let e = w.apply_brush(&brush).unwrap();
        eprintln!(
            "voxel/dig_r8 at {at:?}: {} nodes changed, {} chunks dirty",
            e.len(),
            w.dirty_count()
        );
    }
    let mut group = c.benchmark_group("voxel");
    group.sample_size(20);
    group.bench_function("dig_r8_brush_only", |b| {
        b.iter_batched_ref(
            || meshed.clone(),
            |w| w.apply_brush(black_box(&brush)).unwrap().len(),
            BatchSize::LargeInput,
        )
    });
    for threads in [1, 2] {
        let p = pool(threads);
        group.bench_function(format!("dig_r8_rebuild/threads_{threads}"), |b| {
            b.iter_batched_ref(
                || meshed.clone(),
                |w| {
                    p.install(|| {
                        let e = w.apply_brush(black_box(&brush)).unwrap();
                        w.rebuild(None);
                        e.len()
                    })
                },
                BatchSize::LargeInput,
            )
        });
    }
    // The steady loop an editor runs: dig, rebuild, undo, rebuild (no clone).
    let p = pool(1);
    let mut w = meshed.clone();
    group.bench_function("dig_r8_brush_undo", |b| {
        b.iter(|| {
            let e = w.apply_brush(black_box(&brush)).unwrap();
            w.apply_edit(&e, EditDirection::Backward).unwrap();
            e.len()
        })
    });
    w.rebuild(None);
    group.bench_function("dig_r8_rebuild_undo_rebuild/threads_1", |b| {
        b.iter(|| {
            p.install(|| {
                let e = w.apply_brush(black_box(&brush)).unwrap();
                w.rebuild(None);
                w.apply_edit(&e, EditDirection::Backward).unwrap();
                w.rebuild(None);
                e.len()
            })
        })
    });
    group.finish();
}

criterion_group!(benches, chunk_path, world_rebuild, dig_rebuild);
criterion_main!(benches);
