//! Marching cubes benchmarks, side by side with Rust isosurface crates.
//!
//! Workloads (N^3 nodes of f32, x fastest, computed in f64 and rounded once, iso 0):
//!
//! * `sphere_noise_N`: `p` in `linspace(-1, 1, N)^3`,
//!   `f = |p| - 0.6 + 0.05 sin(7x + 1.3) sin(9y + 0.7) sin(8z + 2.1)
//!        + 0.02 sin(23x + 17y + 0.4) cos(19z + 1.1)` — a sparse surface.
//! * `gyroid_K_N`: `p` in `linspace(0, 2 pi K, N)^3`,
//!   `f = sin x cos y + sin y cos z + sin z cos x` — a dense surface.
//!
//! Contenders (single thread, all welded):
//!
//! * `ours_normals` / `ours_plain`: [`MarchingCubes::mesh_slice`] on the raw values,
//!   with and without gradient normals.
//! * `fast_surface_nets`: the `fast-surface-nets` crate (a different algorithm — one
//!   vertex per cell — but the one a Rust user most often picks; it always computes
//!   normals).
//! * `isosurface_mc` and `transvoxel`: the `isosurface` and `transvoxel` crates'
//!   marching cubes, reading the same array through their sampling traits (N = 128
//!   only: they are much slower; `isosurface_mc` takes seconds per dense run, so
//!   on the gyroid it gets one timed run printed to stderr).
//!
//! Throughput is in cells (voxels) per second; triangle counts are printed to
//! stderr so that triangles per second follow from the times.
//!
//! Run: `cargo bench -p isoterra-bench --bench cubes -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use isoterra::mesh::{CellBox, CubesOptions, CubesOutput, MarchingCubes};

/// A workload: name, nodes per axis, values (x fastest).
struct Workload {
    name: String,
    n: u32,
    values: Vec<f32>,
}

fn sphere_noise(n: u32) -> Workload {
    Workload {
        name: format!("sphere_noise_{n}"),
        n,
        values: isoterra_bench::sphere_noise(n),
    }
}

fn gyroid(k: u32, n: u32) -> Workload {
    Workload {
        name: format!("gyroid_{k}_{n}"),
        n,
        values: isoterra_bench::gyroid(k, n),
    }
}

/// The array seen through the `isosurface` crate's sampling trait (it samples
/// `[0, 1]^3`; its convention is negative inside).
struct IsoSource<'a> {
    values: &'a [f32],
    n: usize,
}

impl isosurface::source::ScalarSource for IsoSource<'_> {
    fn sample_scalar(&self, p: isosurface::math::Vec3) -> isosurface::distance::Signed {
        let m = (self.n - 1) as f32;
        let i = |c: f32| ((c * m).round().max(0.0) as usize).min(self.n - 1);
        let idx = (i(p.z) * self.n + i(p.y)) * self.n + i(p.x);
        isosurface::distance::Signed(-self.values[idx])
    }
}

/// Collects the `isosurface` crate's output.
#[derive(Default)]
struct IsoMesh {
    vertices: usize,
    indices: usize,
}

impl isosurface::extractor::Extractor for IsoMesh {
    fn extract_vertex(&mut self, _v: isosurface::math::Vec3) {
        self.vertices += 1;
    }
    fn extract_index(&mut self, _i: usize) {
        self.indices += 1;
    }
}

fn cubes(c: &mut Criterion) {
    let workloads = [
        sphere_noise(128),
        gyroid(8, 128),
        sphere_noise(256),
        gyroid(16, 256),
    ];
    let mut group = c.benchmark_group("cubes");
    for w in &workloads {
        let n = w.n;
        let dims = [n; 3];
        let cells = CellBox::of_dims(dims);
        group.throughput(Throughput::Elements(cells.cell_count()));
        group.sample_size(if n >= 256 { 10 } else { 20 });

        // Ours, with and without normals.
        let mut mesher = MarchingCubes::new();
        let mut out = CubesOutput::default();
        for (label, opts) in [
            ("ours_normals", CubesOptions::DEFAULT),
            ("ours_plain", CubesOptions::DEFAULT.with_normals(false)),
        ] {
            mesher
                .mesh_slice(&w.values, dims, cells, &opts, &mut out)
                .unwrap();
            eprintln!(
                "cubes/{}/{label}: {} vertices, {} triangles",
                w.name,
                out.vertex_count(),
                out.triangle_count()
            );
            group.bench_function(format!("{}/{label}", w.name), |b| {
                b.iter(|| {
                    mesher
                        .mesh_slice(black_box(&w.values), dims, cells, &opts, &mut out)
                        .unwrap();
                    out.indices.len()
                })
            });
        }

        // Peer: fast-surface-nets (surface nets; normals always on).
        {
            use fast_surface_nets::ndshape::RuntimeShape;
            use fast_surface_nets::{SurfaceNetsBuffer, surface_nets};
            let shape = RuntimeShape::<u32, 3>::new([n, n, n]);
            let mut buf = SurfaceNetsBuffer::default();
            surface_nets(&w.values, &shape, [0; 3], [n - 1; 3], &mut buf);
            eprintln!(
                "cubes/{}/fast_surface_nets: {} vertices, {} triangles",
                w.name,
                buf.positions.len(),
                buf.indices.len() / 3
            );
            group.bench_function(format!("{}/fast_surface_nets", w.name), |b| {
                b.iter(|| {
                    surface_nets(black_box(&w.values), &shape, [0; 3], [n - 1; 3], &mut buf);
                    buf.indices.len()
                })
            });
        }

        if n <= 128 {
            // Peer: the `isosurface` crate's marching cubes (hash-welded).
            let source = IsoSource {
                values: &w.values,
                n: n as usize,
            };
            let sampler = isosurface::sampler::Sampler::new(&source);
            let mut mc = isosurface::MarchingCubes::<isosurface::distance::Signed>::new(n as usize);
            let mut m = IsoMesh::default();
            mc.extract(&sampler, &mut m);
            eprintln!(
                "cubes/{}/isosurface_mc: {} vertices, {} triangles",
                w.name,
                m.vertices,
                m.indices / 3
            );
            if w.name.starts_with("sphere") {
                group.bench_function(format!("{}/isosurface_mc", w.name), |b| {
                    b.iter(|| {
                        let mut m = IsoMesh::default();
                        mc.extract(black_box(&sampler), &mut m);
                        m.indices
                    })
                });
            } else {
                // Seconds per run on dense surfaces: one timed run instead of a sample.
                let start = std::time::Instant::now();
                let mut m = IsoMesh::default();
                mc.extract(black_box(&sampler), &mut m);
                eprintln!(
                    "cubes/{}/isosurface_mc: one run {:.0} ms (not sampled)",
                    w.name,
                    start.elapsed().as_secs_f64() * 1e3
                );
            }

            // Peer: the `transvoxel` crate (regular cells only, central block cached).
            use transvoxel::prelude::*;
            let values = &w.values;
            let nn = n as usize;
            let field = move |x: f32, y: f32, z: f32| -> f32 {
                let i = |c: f32| (c as usize).min(nn - 1);
                values[(i(z) * nn + i(y)) * nn + i(x)]
            };
            let run = || {
                let block = Block::new([0.0, 0.0, 0.0], (n - 1) as f32, (n - 1) as usize);
                extract_from_field(
                    &field,
                    FieldCaching::CacheCentralBlockOnly,
                    block,
                    TransitionSide::none(),
                    0.0f32,
                    GenericMeshBuilder::new(),
                )
                .build()
            };
            let mesh = run();
            eprintln!(
                "cubes/{}/transvoxel: {} vertices, {} triangles",
                w.name,
                mesh.positions.len() / 3,
                mesh.num_tris()
            );
            group.bench_function(format!("{}/transvoxel", w.name), |b| {
                b.iter(|| run().num_tris())
            });
        }
    }
    group.finish();
}

criterion_group!(benches, cubes);
criterion_main!(benches);
