//! LOD transition meshing benchmarks.
//!
//! Workload `sphere_noise_257`: the sphere+noise field of the `cubes` bench,
//! `p` in `linspace(-1, 1, 257)^3` (computed in f64, rounded once, iso 0), seen
//! as base nodes. It is cut into 4x4x4 chunks of 32 cells at LOD 1 (each covers 64
//! base cells and samples every second node), and every chunk is meshed with
//! [`LodMesher::mesh`]:
//!
//! * `all_faces_finer`: every chunk is told that all six faces border a finer
//!   chunk (the worst case: 5,768 of its 32,768 cells are transition cells);
//! * `no_transition`: the same chunks with no finer neighbour;
//! * `transition_layer`: the transition layer alone. Each iteration meshes the
//!   64 chunks with all six faces finer, then without finer faces, and is
//!   charged the difference of the two measured times (the outer layer of
//!   transition cells, the fine-face checks and sign packing, the extra
//!   vertices and their normals, less the regular scan of the same outer
//!   cells). Its throughput counts transition cells (369,152 per iteration).
//!
//! * `transvoxel_all_faces`: the `transvoxel` crate on the same 64 chunks with
//!   all six sides as transition faces (a timing peer; see the comment in
//!   [`bench`] for how its output differs).
//!
//! The other cases' throughput is in chunk cells per second.
//!
//! Run: `cargo bench -p isoterra-bench --bench cubes_lod -- --warm-up-time 1 --measurement-time 4`
//!
//! Instruction counts (repeatable on a loaded machine): the bench binary with
//! `ISOTERRA_LOD_ITERS=K` meshes each case `K` times without criterion
//! (`ISOTERRA_LOD_CASE=all_faces_finer` or `no_transition` for one case) and
//! prints a digest of the meshes, e.g.
//! `ISOTERRA_LOD_CASE=all_faces_finer ISOTERRA_LOD_ITERS=3 valgrind --tool=callgrind
//! --toggle-collect='isoterra_mesh::cubes::transition::LodMesher::mesh' target/release/deps/cubes_lod-*`.
//! The first pass of a fresh mesher also fills its caches of transition-cell
//! triangulations (and the marching cubes tables are built once); for the
//! steady state the criterion runs see, add `ISOTERRA_LOD_WARM=1` (one pass
//! before the counted ones) and collect `--toggle-collect='cubes_lod::counted'`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use isoterra::field::hash::Fnv1a64;
use isoterra::mesh::{CubesOptions, CubesOutput, LodChunkInput, LodMesher};

const NODES: usize = 257;
const CELLS: u32 = 32;
const CHUNKS: usize = 4;

fn field() -> Vec<f32> {
    let step = 2.0 / (NODES - 1) as f64;
    let c: Vec<f64> = (0..NODES).map(|i| -1.0 + i as f64 * step).collect();
    let mut v = Vec::with_capacity(NODES * NODES * NODES);
    for &z in &c {
        for &y in &c {
            for &x in &c {
                let f = (x * x + y * y + z * z).sqrt() - 0.6
                    + 0.05 * (7.0 * x + 1.3).sin() * (9.0 * y + 0.7).sin() * (8.0 * z + 2.1).sin()
                    + 0.02 * (23.0 * x + 17.0 * y + 0.4).sin() * (19.0 * z + 1.1).cos();
                v.push(f as f32);
            }
        }
    }
    v
}

/// One chunk's inputs: its LOD-1 samples and its six fine faces.
struct ChunkData {
    base: [i64; 3],
    samples: Vec<f32>,
    faces: Vec<Vec<f32>>,
}

fn chunks(values: &[f32]) -> Vec<ChunkData> {
    let at = |g: [usize; 3]| values[(g[2] * NODES + g[1]) * NODES + g[0]];
    let span = 2 * CELLS as usize;
    let mut out = Vec::new();
    for cz in 0..CHUNKS {
        for cy in 0..CHUNKS {
            for cx in 0..CHUNKS {
                let o = [cx * span, cy * span, cz * span];
                let s = CELLS as usize + 1;
                let mut samples = Vec::with_capacity(s * s * s);
                for k in 0..s {
                    for j in 0..s {
                        for i in 0..s {
                            samples.push(at([o[0] + 2 * i, o[1] + 2 * j, o[2] + 2 * k]));
                        }
                    }
                }
                let side = 2 * CELLS as usize + 1;
                let faces = (0..6)
                    .map(|f| {
                        let axis = f / 2;
                        let (a, b) = match axis {
                            0 => (1, 2),
                            1 => (0, 2),
                            _ => (0, 1),
                        };
                        let mut face = Vec::with_capacity(side * side);
                        for v in 0..side {
                            for u in 0..side {
                                let mut g = o;
                                g[axis] += if f % 2 == 0 { 0 } else { span };
                                g[a] += u;
                                g[b] += v;
                                face.push(at(g));
                            }
                        }
                        face
                    })
                    .collect();
                out.push(ChunkData {
                    base: o.map(|c| c as i64),
                    samples,
                    faces,
                });
            }
        }
    }
    out
}

/// The chunk inputs of one case: with all six faces finer, or none.
fn inputs(data: &[ChunkData], finer: bool) -> Vec<LodChunkInput<'_>> {
    data.iter()
        .map(|d| {
            let mut input = LodChunkInput::new(&d.samples, CELLS, 1).with_base_node(d.base);
            if finer {
                for (f, face) in d.faces.iter().enumerate() {
                    input = input.with_finer_face(f as u8, face);
                }
            }
            input
        })
        .collect()
}

/// Meshes every chunk once.
fn mesh_all(mesher: &mut LodMesher, inputs: &[LodChunkInput<'_>], outs: &mut [CubesOutput]) {
    let opts = CubesOptions::DEFAULT;
    for (input, out) in inputs.iter().zip(outs.iter_mut()) {
        mesher.mesh(black_box(input), &opts, out).unwrap();
    }
    black_box(&outs);
}

/// An FNV-1a digest of the meshes (positions, normals and indices, bit for
/// bit), to compare two builds' outputs.
fn digest(outs: &[CubesOutput]) -> u64 {
    let mut h = Fnv1a64::new();
    let mut eat = |v: u32| h.write(&v.to_le_bytes());
    for o in outs {
        o.positions.iter().flatten().for_each(|c| eat(c.to_bits()));
        o.normals.iter().flatten().for_each(|c| eat(c.to_bits()));
        o.indices.iter().for_each(|&i| eat(i));
    }
    h.finish()
}

fn bench(c: &mut Criterion) {
    let values = field();
    let data = chunks(&values);
    let cells = (CHUNKS.pow(3) as u64) * (CELLS as u64).pow(3);
    let mut group = c.benchmark_group("cubes_lod/sphere_noise_257");
    group.throughput(Throughput::Elements(cells));
    for (name, finer) in [("all_faces_finer", true), ("no_transition", false)] {
        let inputs = inputs(&data, finer);
        let transition: u64 = inputs.iter().map(|i| i.transition_cell_count()).sum();
        let mut mesher = LodMesher::new();
        let mut outs: Vec<CubesOutput> = vec![CubesOutput::default(); inputs.len()];
        mesh_all(&mut mesher, &inputs, &mut outs);
        let tris: usize = outs.iter().map(|o| o.triangle_count()).sum();
        eprintln!(
            "{name}: {transition} transition cells of {cells}, {tris} triangles, digest {:016x}",
            digest(&outs)
        );
        group.bench_function(name, |b| {
            b.iter(|| mesh_all(&mut mesher, &inputs, &mut outs))
        });
    }
    // Peer: the `transvoxel` crate meshing the same 64 chunks (32 cells over 64
    // base cells each) with all six sides as transition faces, reading the
    // same base nodes through a density closure (its transition faces sample
    // the base nodes at full resolution). It is a timing peer, not a
    // reference: it uses Lengyel's transition cells with their regular
    // neighbours shrunk (vertices moved inwards), treats values above the
    // threshold as inside (the opposite sign of ours here), caches only the
    // block's own samples (`CacheCentralBlockOnly`), computes no normals, and
    // does not weld across its transition cells; each block's mesh is a fresh
    // `GenericMeshBuilder` (its allocation is part of the time).
    {
        use transvoxel::prelude::*;
        let density = |x: f32, y: f32, z: f32| -> f32 {
            let i = |c: f32| (c.round() as usize).min(NODES - 1);
            values[(i(z) * NODES + i(y)) * NODES + i(x)]
        };
        let span = (2 * CELLS) as f32;
        let run = || {
            let mut tris = 0;
            for d in &data {
                let block = Block::new(d.base.map(|c| c as f32), span, CELLS as usize);
                let mesh = extract_from_field(
                    &density,
                    FieldCaching::CacheCentralBlockOnly,
                    block,
                    TransitionSide::all(),
                    0.0f32,
                    GenericMeshBuilder::new(),
                )
                .build();
                tris += mesh.num_tris();
            }
            tris
        };
        eprintln!("transvoxel_all_faces: {} triangles", run());
        group.bench_function("transvoxel_all_faces", |b| b.iter(|| black_box(run())));
    }
    // The transition layer alone: each iteration meshes the 64 chunks with all
    // six faces finer and then without finer faces, and is charged the
    // difference (the outer layer of transition cells, the fine-face checks and
    // summaries and the extra vertices' normals, less the regular scan of the
    // same outer cells). Throughput counts transition cells.
    let with = inputs(&data, true);
    let without = inputs(&data, false);
    let transition: u64 = with.iter().map(|i| i.transition_cell_count()).sum();
    group.throughput(Throughput::Elements(transition));
    let mut mesher = LodMesher::new();
    let mut outs: Vec<CubesOutput> = vec![CubesOutput::default(); with.len()];
    group.bench_function("transition_layer", |b| {
        b.iter_custom(|iters| {
            let mut charged = Duration::ZERO;
            for _ in 0..iters {
                let t0 = Instant::now();
                mesh_all(&mut mesher, &with, &mut outs);
                let t1 = Instant::now();
                mesh_all(&mut mesher, &without, &mut outs);
                let t2 = Instant::now();
                charged += (t1 - t0).saturating_sub(t2 - t1);
            }
            charged
        })
    });
    group.finish();
}

/// The measured passes of the digest mode, apart from the warm-up pass (for
/// `--toggle-collect=cubes_lod::counted`).
#[inline(never)]
fn counted(
    iters: u32,
    mesher: &mut LodMesher,
    inputs: &[LodChunkInput<'_>],
    outs: &mut [CubesOutput],
) {
    for _ in 0..iters {
        mesh_all(mesher, inputs, outs);
    }
}

/// `ISOTERRA_LOD_ITERS=K` meshes each case (or only the one named by
/// `ISOTERRA_LOD_CASE`) `K` times and prints the digests, without criterion (for instruction counts under callgrind, whose
/// `--toggle-collect` can select `LodMesher::mesh`); otherwise the criterion
/// benches run.
fn main() {
    if let Some(iters) = std::env::var("ISOTERRA_LOD_ITERS")
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
    {
        let values = field();
        let data = chunks(&values);
        let only = std::env::var("ISOTERRA_LOD_CASE").ok();
        let warm = std::env::var("ISOTERRA_LOD_WARM").is_ok_and(|v| v == "1");
        let mut mesher = LodMesher::new();
        for (name, finer) in [("all_faces_finer", true), ("no_transition", false)] {
            if only.as_deref().is_some_and(|o| o != name) {
                continue;
            }
            let inputs = inputs(&data, finer);
            let mut outs: Vec<CubesOutput> = vec![CubesOutput::default(); inputs.len()];
            if warm {
                mesh_all(&mut mesher, &inputs, &mut outs);
            }
            counted(iters, &mut mesher, &inputs, &mut outs);
            eprintln!("{name}: digest {:016x}", digest(&outs));
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

criterion_group!(benches, bench);
