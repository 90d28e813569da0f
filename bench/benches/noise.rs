//! Noise benchmarks, side by side with `fastnoise-lite`, `noise` and
//! `simdnoise` (a SIMD peer: it fills a whole grid at once, with AVX2 picked
//! at run time, as isoterra's batch fills do).
//!
//! Workloads (single thread, every contender on the same grid in the same run):
//!
//! * `fbm2d_4oct_1024`: 4-octave fBm (persistence 0.5, lacunarity 2,
//!   frequency 1/64) on a 1024 x 1024 grid with unit spacing;
//! * `fbm3d_4oct_64`: the same fBm on a 64 x 64 x 64 grid.
//!
//! isoterra runs its batch fills (`fill_fbm2` / `fill_fbm3` for Perlin,
//! `fill2` / `fill3` with a `Fractal` for OpenSimplex2); the peers run their
//! point APIs in the same loop order, except `simdnoise`, whose grid call
//! allocates and returns a new buffer each time (its only API; simplex
//! noise, which is what it has). Throughput is reported in elements, so
//! criterion's `Kelem/s` converts to ns/sample as `1e6 / (Kelem/s)`.
//!
//! Run: `cargo bench -p isoterra-bench --bench noise -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fastnoise_lite::{FastNoiseLite, FractalType, NoiseType};
use isoterra::field::noise::{
    Basis, FbmParams, Fractal, FractalKind, FractalParams, fill_fbm2, fill_fbm3, fill2, fill3,
};
use noise::{Fbm, MultiFractal, NoiseFn, Perlin};

const N2: u32 = 1024;
const N3: u32 = 64;
const FREQ: f32 = 1.0 / 64.0;

fn params() -> FbmParams {
    FbmParams::DEFAULT.with_octaves(4).with_frequency(FREQ)
}

fn fastnoise(kind: NoiseType) -> FastNoiseLite {
    let mut f = FastNoiseLite::with_seed(7);
    f.set_noise_type(Some(kind));
    f.set_fractal_type(Some(FractalType::FBm));
    f.set_fractal_octaves(Some(4));
    f.set_fractal_gain(Some(0.5));
    f.set_fractal_lacunarity(Some(2.0));
    f.set_frequency(Some(FREQ));
    f
}

fn noise_rs() -> Fbm<Perlin> {
    Fbm::<Perlin>::new(7)
        .set_octaves(4)
        .set_frequency(FREQ as f64)
        .set_persistence(0.5)
        .set_lacunarity(2.0)
}

fn fbm2d(c: &mut Criterion) {
    let n = N2 as usize;
    let mut out = vec![0.0f32; n * n];
    let mut g = c.benchmark_group("fbm2d_4oct_1024");
    g.throughput(Throughput::Elements((n * n) as u64));
    g.sample_size(10);
    g.bench_function("isoterra_perlin", |b| {
        b.iter(|| fill_fbm2(&params(), 7, [0.0; 2], [1.0; 2], [N2, N2], &mut out).unwrap())
    });
    let simplex = Fractal::new(
        &FractalParams::from_fbm(&params(), Basis::OpenSimplex2, FractalKind::Fbm),
        7,
    )
    .unwrap();
    g.bench_function("isoterra_opensimplex2", |b| {
        b.iter(|| fill2(&simplex, [0.0; 2], [1.0; 2], [N2, N2], &mut out).unwrap())
    });
    for (name, kind) in [
        ("fastnoise_lite_perlin", NoiseType::Perlin),
        ("fastnoise_lite_opensimplex2", NoiseType::OpenSimplex2),
    ] {
        let f = fastnoise(kind);
        g.bench_function(name, |b| {
            b.iter(|| {
                for j in 0..n {
                    for i in 0..n {
                        out[j * n + i] = f.get_noise_2d(i as f32, j as f32);
                    }
                }
                black_box(&out);
            })
        });
    }
    g.bench_function("simdnoise_simplex", |b| {
        b.iter(|| {
            black_box(
                simdnoise::NoiseBuilder::fbm_2d(n, n)
                    .with_seed(7)
                    .with_freq(FREQ)
                    .with_octaves(4)
                    .with_gain(0.5)
                    .with_lacunarity(2.0)
                    .generate(),
            )
        })
    });
    let peer = noise_rs();
    g.bench_function("noise_rs_perlin", |b| {
        b.iter(|| {
            for j in 0..n {
                for i in 0..n {
                    out[j * n + i] = peer.get([i as f64, j as f64]) as f32;
                }
            }
            black_box(&out);
        })
    });
    g.finish();
}

fn fbm3d(c: &mut Criterion) {
    let n = N3 as usize;
    let mut out = vec![0.0f32; n * n * n];
    let mut g = c.benchmark_group("fbm3d_4oct_64");
    g.throughput(Throughput::Elements((n * n * n) as u64));
    g.sample_size(10);
    g.bench_function("isoterra_perlin", |b| {
        b.iter(|| fill_fbm3(&params(), 7, [0.0; 3], [1.0; 3], [N3, N3, N3], &mut out).unwrap())
    });
    let simplex = Fractal::new(
        &FractalParams::from_fbm(&params(), Basis::OpenSimplex2, FractalKind::Fbm),
        7,
    )
    .unwrap();
    g.bench_function("isoterra_opensimplex2", |b| {
        b.iter(|| fill3(&simplex, [0.0; 3], [1.0; 3], [N3, N3, N3], &mut out).unwrap())
    });
    for (name, kind) in [
        ("fastnoise_lite_perlin", NoiseType::Perlin),
        ("fastnoise_lite_opensimplex2", NoiseType::OpenSimplex2),
    ] {
        let f = fastnoise(kind);
        g.bench_function(name, |b| {
            b.iter(|| {
                for k in 0..n {
                    for j in 0..n {
                        for i in 0..n {
                            out[(k * n + j) * n + i] = f.get_noise_3d(i as f32, j as f32, k as f32);
                        }
                    }
                }
                black_box(&out);
            })
        });
    }
    g.bench_function("simdnoise_simplex", |b| {
        b.iter(|| {
            black_box(
                simdnoise::NoiseBuilder::fbm_3d(n, n, n)
                    .with_seed(7)
                    .with_freq(FREQ)
                    .with_octaves(4)
                    .with_gain(0.5)
                    .with_lacunarity(2.0)
                    .generate(),
            )
        })
    });
    let peer = noise_rs();
    g.bench_function("noise_rs_perlin", |b| {
        b.iter(|| {
            for k in 0..n {
                for j in 0..n {
                    for i in 0..n {
                        out[(k * n + j) * n + i] = peer.get([i as f64, j as f64, k as f64]) as f32;
                    }
                }
            }
            black_box(&out);
        })
    });
    g.finish();
}

criterion_group!(benches, fbm2d, fbm3d);
criterion_main!(benches);
