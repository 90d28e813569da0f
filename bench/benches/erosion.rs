//! Hydraulic erosion benchmark: droplets per second on a 512 x 512 heightmap.
//!
//! Workload: `HeightGen` hills (seed 3, height scale 40) sampled every 4
//! world units on 512 x 512 nodes, eroded with `HydraulicParams::DEFAULT`
//! (4 passes x 0.25 droplets per node = about 262 000 droplets, lifetime 30,
//! brush radius 3), single thread. Throughput is in droplets, so criterion's
//! `Kelem/s` is thousands of droplets per second. Thermal erosion (50
//! iterations) on the same map is measured alongside, in nodes.
//!
//! Run: `cargo bench -p isoterra-bench --bench erosion -- --warm-up-time 1 --measurement-time 5`

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use isoterra::field::erosion::{
    HydraulicParams, ThermalParams, hydraulic_erosion, thermal_erosion,
};
use isoterra::field::{Field2, HeightGen, HeightParams, HeightPreset};

const N: u32 = 512;

fn heightmap() -> Field2 {
    let g = HeightGen::new(
        &HeightParams::preset(HeightPreset::Hills).with_height_scale(40.0),
        3,
    )
    .expect("valid preset");
    let mut v = vec![0.0f32; (N * N) as usize];
    g.fill_heights([0.0, 0.0], [4.0, 4.0], [N, N], &mut v)
        .expect("valid grid");
    Field2::from_values(N, N, v).expect("finite heights")
}

fn erosion(c: &mut Criterion) {
    let map = heightmap();
    let params = HydraulicParams::DEFAULT;
    let droplets = {
        let mut f = map.clone();
        hydraulic_erosion(&mut f, [0, 0], &params, 1)
            .expect("valid params")
            .droplets
    };
    let mut g = c.benchmark_group("hydraulic_512");
    g.sample_size(10);
    g.throughput(Throughput::Elements(droplets));
    g.bench_function("isoterra_droplets", |b| {
        b.iter_batched_ref(
            || map.clone(),
            |f| black_box(hydraulic_erosion(f, [0, 0], &params, 1).expect("valid params")),
            BatchSize::LargeInput,
        )
    });
    g.finish();
    let mut g = c.benchmark_group("thermal_512_50it");
    g.sample_size(10);
    g.throughput(Throughput::Elements((N * N) as u64 * 50));
    g.bench_function("isoterra", |b| {
        b.iter_batched_ref(
            || map.clone(),
            |f| thermal_erosion(f, &ThermalParams::DEFAULT).expect("valid params"),
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, erosion);
criterion_main!(benches);
