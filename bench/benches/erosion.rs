//! Hydraulic erosion benchmark: droplets per second on a 512 x 512 heightmap.
//!
//! Workload: `HeightGen` hills (seed 3, height scale 40) sampled every 4
//! world units on 512 x 512 nodes, eroded with `HydraulicParams::DEFAULT`
//! (4 passes x 0.25 droplets per node = about 262 000 droplets, lifetime 30,
//! brush radius 3), single thread. Throughput is in droplets, so criterion's
//! `Kelem/s` is thousands of droplets per second. Thermal erosion (50
//! iterations) on the same map is measured alongside, in nodes.
//!
//! Beside each, a straightforward reference implementation of the same
//! workload (module `reference`): the textbook one-droplet-at-a-time loop
//! with the same parameters and droplet count, and an in-place eight-
//! neighbour thermal pass. They are the code a user would write first; the
//! results differ in detail (spawn order, neighbourhood), the work does not.
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
    g.bench_function("reference_droplets", |b| {
        b.iter_batched_ref(
            || map.values().to_vec(),
            |v| reference::hydraulic(v, N as usize, &params, droplets),
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
    g.bench_function("reference", |b| {
        b.iter_batched_ref(
            || map.values().to_vec(),
            |v| reference::thermal(v, N as usize, &ThermalParams::DEFAULT, map.cell_size()),
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

/// The erosion a user would write first, for comparison.
mod reference {
    use isoterra::field::erosion::{HydraulicParams, ThermalParams};

    /// A small xorshift generator for droplet positions.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> f32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 40) as f32 / (1u64 << 24) as f32
        }
    }

    /// Height and gradient at `(x, y)` by bilinear interpolation.
    fn sample(h: &[f32], n: usize, x: f32, y: f32) -> (f32, f32, f32) {
        let (ix, iy) = (x as usize, y as usize);
        let (u, v) = (x - ix as f32, y - iy as f32);
        let i = iy * n + ix;
        let (a, b, c, d) = (h[i], h[i + 1], h[i + n], h[i + n + 1]);
        let gx = (b - a) * (1.0 - v) + (d - c) * v;
        let gy = (c - a) * (1.0 - u) + (d - b) * u;
        let height = a * (1.0 - u) * (1.0 - v) + b * u * (1.0 - v) + c * (1.0 - u) * v + d * u * v;
        (height, gx, gy)
    }

    /// `droplets` droplets, one after the other, each moving one cell a
    /// step for at most `lifetime` steps, eroding through a round brush and
    /// depositing at its bilinear corners.
    pub fn hydraulic(h: &mut [f32], n: usize, p: &HydraulicParams, droplets: u64) {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        // The brush: offsets within the radius and their normalised weights.
        let r = p.radius as i32;
        let mut brush = Vec::new();
        for dy in -r..=r {
            for dx in -r..=r {
                let d = ((dx * dx + dy * dy) as f32).sqrt();
                if d <= r as f32 {
                    brush.push((dx, dy, 1.0 - d / r as f32));
                }
            }
        }
        let total: f32 = brush.iter().map(|b| b.2).sum();
        for b in &mut brush {
            b.2 /= total;
        }
        let edge = (n - 2) as f32;
        for _ in 0..droplets {
            let (mut x, mut y) = (rng.next() * edge, rng.next() * edge);
            let (mut dx, mut dy) = (0.0f32, 0.0f32);
            let (mut speed, mut water, mut sediment) = (p.initial_speed, p.initial_water, 0.0f32);
            for _ in 0..p.lifetime {
                let (ix, iy) = (x as usize, y as usize);
                let (u, v) = (x - ix as f32, y - iy as f32);
                let (height, gx, gy) = sample(h, n, x, y);
                dx = dx * p.inertia - gx * (1.0 - p.inertia);
                dy = dy * p.inertia - gy * (1.0 - p.inertia);
                let len = (dx * dx + dy * dy).sqrt();
                if len < 1e-12 {
                    break;
                }
                dx /= len;
                dy /= len;
                x += dx;
                y += dy;
                if !(x >= 0.0 && x < edge && y >= 0.0 && y < edge) {
                    break;
                }
                let dh = sample(h, n, x, y).0 - height;
                let capacity = (-dh * speed * water * p.capacity).max(p.min_capacity);
                if sediment > capacity || dh > 0.0 {
                    // Deposit at the four corners of the old position.
                    let amount = if dh > 0.0 {
                        dh.min(sediment)
                    } else {
                        (sediment - capacity) * p.deposition
                    };
                    sediment -= amount;
                    let i = iy * n + ix;
                    h[i] += amount * (1.0 - u) * (1.0 - v);
                    h[i + 1] += amount * u * (1.0 - v);
                    h[i + n] += amount * (1.0 - u) * v;
                    h[i + n + 1] += amount * u * v;
                } else {
                    // Erode through the brush around the old position.
                    let amount = ((capacity - sediment) * p.erosion).min(-dh);
                    for &(bx, by, w) in &brush {
                        let (px, py) = (ix as i32 + bx, iy as i32 + by);
                        if px < 0 || py < 0 || px >= n as i32 || py >= n as i32 {
                            continue;
                        }
                        let take = amount * w;
                        h[py as usize * n + px as usize] -= take;
                        sediment += take;
                    }
                }
                speed = (speed * speed + dh.abs() * p.gravity).sqrt();
                water *= 1.0 - p.evaporation;
            }
        }
    }

    /// `iterations` in-place passes: each node sheds half the excess of its
    /// steepest drops past the talus to its lower eight neighbours, in
    /// proportion to each drop.
    pub fn thermal(h: &mut [f32], n: usize, p: &ThermalParams, cell: f32) {
        let talus = p.talus * cell;
        let diag = talus * std::f32::consts::SQRT_2;
        for _ in 0..p.iterations {
            for y in 0..n {
                for x in 0..n {
                    let i = y * n + x;
                    let mut drops = [(0usize, 0.0f32); 8];
                    let mut count = 0;
                    let mut total = 0.0f32;
                    let mut most = 0.0f32;
                    for (ox, oy) in [
                        (-1, -1),
                        (0, -1),
                        (1, -1),
                        (-1, 0),
                        (1, 0),
                        (-1, 1),
                        (0, 1),
                        (1, 1),
                    ] {
                        let (nx, ny) = (x as i32 + ox, y as i32 + oy);
                        if nx < 0 || ny < 0 || nx >= n as i32 || ny >= n as i32 {
                            continue;
                        }
                        let j = ny as usize * n + nx as usize;
                        let limit = if ox != 0 && oy != 0 { diag } else { talus };
                        let d = h[i] - h[j] - limit;
                        if d > 0.0 {
                            drops[count] = (j, d);
                            count += 1;
                            total += d;
                            most = most.max(d);
                        }
                    }
                    if count == 0 {
                        continue;
                    }
                    let moved = 0.5 * p.rate * most;
                    for &(j, d) in &drops[..count] {
                        let share = moved * d / total;
                        h[j] += share;
                        h[i] -= share;
                    }
                }
            }
        }
    }
}

criterion_group!(benches, erosion);
criterion_main!(benches);
