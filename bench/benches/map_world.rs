//! Map world editing benchmarks.
//!
//! Workload: a 512 x 512 cell map (island preset, seed 1, 64-cell chunks,
//! so 8 x 8 chunks) and one stroke of a radius-100-cell circle brush at
//! strength 0.5, a single dab at the map's centre (256, 256).
//! Timed per tool group:
//! - `raise_r100_512`: the stroke applied (`apply_stroke`: the sparse edit,
//!   the write and the dirty marks) and the dirty chunk list taken;
//! - `raise_r100_512_remesh`: the same, then every dirty chunk meshed with
//!   one reused `MapMesher` into one reused output (the editor's steady
//!   loop on one thread);
//! - `paint_r100_512_remesh`: a texture stroke, applied and its dirty
//!   chunks fully remeshed (only splat changes);
//! - `paint_r100_512_refresh`: the same stroke applied and the kept meshes
//!   of its dirty chunks updated in place with
//!   `MapWorld::refresh_chunk_attributes` (the texture-only path; chunks
//!   whose mask affects geometry would be remeshed);
//! - `cliff_r100_512`: a cliff-up stroke applied (no remesh);
//! - `raise_r100_512_remesh_rayon`: the raise stroke, then the dirty
//!   chunks meshed with `MapWorld::mesh_chunks` on rayon's global pool;
//! - `mesh_full_512`: every chunk of the map meshed, one thread.
//!
//! Each iteration starts from a clone of the generated world (and, for
//! `paint_r100_512_refresh`, of every chunk's mesh); the clones are not
//! timed.
//!
//! Run: `cargo bench -p isoterra-bench --bench map_world -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use isoterra::mesh::{MapMeshOutput, MapMesher};
use isoterra::world::{MapBrush, MapParams, MapPreset, MapStroke, MapTool, MapWorld};

fn world() -> MapWorld {
    let params = MapParams::DEFAULT
        .with_size(512, 512)
        .with_seed(1)
        .with_preset(MapPreset::Island);
    let mut w = MapWorld::new(&params).expect("valid parameters");
    w.take_dirty();
    w
}

fn stroke(tool: MapTool) -> MapStroke {
    MapStroke::dab(
        MapBrush::new(tool, 100.0)
            .with_strength(0.5)
            .with_texture(3),
        [256.0, 256.0],
    )
}

fn bench_map(c: &mut Criterion) {
    let base = world();
    let mut g = c.benchmark_group("map");
    for (name, tool) in [
        ("raise_r100_512", MapTool::Raise),
        ("cliff_r100_512", MapTool::CliffUp),
    ] {
        let s = stroke(tool);
        g.bench_function(name, |b| {
            b.iter_batched_ref(
                || base.clone(),
                |w| {
                    let edit = w.apply_stroke(&s).expect("valid stroke");
                    black_box((edit.changed_nodes(), w.take_dirty()))
                },
                BatchSize::LargeInput,
            )
        });
    }
    let mut mesher = MapMesher::new();
    let mut out = MapMeshOutput::default();
    for (name, tool) in [
        ("raise_r100_512_remesh", MapTool::Raise),
        ("paint_r100_512_remesh", MapTool::Paint),
    ] {
        let s = stroke(tool);
        g.bench_function(name, |b| {
            b.iter_batched_ref(
                || base.clone(),
                |w| {
                    w.apply_stroke(&s).expect("valid stroke");
                    let mut vertices = 0;
                    for (chunk, _) in w.take_dirty() {
                        w.mesh_chunk(chunk, &mut mesher, &mut out)
                            .expect("meshable chunk");
                        vertices += out.terrain.positions.len() + out.water.positions.len();
                    }
                    black_box(vertices)
                },
                BatchSize::LargeInput,
            )
        });
    }
    let s = stroke(MapTool::Paint);
    let [cw, cd] = base.chunk_count();
    let all: Vec<[u32; 2]> = (0..cd).flat_map(|z| (0..cw).map(move |x| [x, z])).collect();
    let kept = base.mesh_chunks(&all).expect("meshable chunks");
    g.bench_function("paint_r100_512_refresh", |b| {
        b.iter_batched_ref(
            || (base.clone(), kept.clone()),
            |(w, meshes)| {
                w.apply_stroke(&s).expect("valid stroke");
                let mut vertices = 0;
                for (c, mask) in w.take_dirty() {
                    let out = &mut meshes[(c[1] * cw + c[0]) as usize];
                    if mask.affects_geometry() {
                        w.mesh_chunk(c, &mut mesher, out).expect("meshable chunk");
                    } else {
                        w.refresh_chunk_attributes(c, out)
                            .expect("a mesh of the chunk");
                    }
                    vertices += out.terrain.positions.len();
                }
                black_box(vertices)
            },
            BatchSize::LargeInput,
        )
    });
    let s = stroke(MapTool::Raise);
    g.bench_function("raise_r100_512_remesh_rayon", |b| {
        b.iter_batched_ref(
            || base.clone(),
            |w| {
                w.apply_stroke(&s).expect("valid stroke");
                let dirty: Vec<[u32; 2]> = w.take_dirty().into_iter().map(|(c, _)| c).collect();
                black_box(w.mesh_chunks(&dirty).expect("meshable chunks").len())
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("mesh_full_512", |b| {
        b.iter(|| {
            let [cw, cd] = base.chunk_count();
            let mut vertices = 0;
            for cz in 0..cd {
                for cx in 0..cw {
                    base.mesh_chunk([cx, cz], &mut mesher, &mut out)
                        .expect("meshable chunk");
                    vertices += out.terrain.positions.len() + out.water.positions.len();
                }
            }
            black_box(vertices)
        })
    });
    g.finish();
}

criterion_group!(benches, bench_map);
criterion_main!(benches);
