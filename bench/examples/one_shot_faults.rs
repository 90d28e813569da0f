//! One-shot marching cubes calls in a process of their own: what a cold
//! call costs next to a warm one, how many page faults it takes, and how
//! far each output buffer's start lies from the next 2 MiB boundary (the
//! "head", which stays in 4 KiB pages: the allocator writes its header on
//! the buffer's first page before the huge-page advice is given).
//!
//! The volumes are those of `isoterra bench cubes`. Prints one JSON line
//! per volume:
//!
//! ```sh
//! cargo run --release -p isoterra-bench --example one_shot_faults -- 300
//! ```

use std::time::Instant;

use isoterra::mesh::{CellBox, CubesOptions, CubesOutput, MarchingCubes};
use isoterra_bench::{gyroid, minor_faults, sphere_noise};

/// Bytes from `p` to the next 2 MiB boundary.
fn head<T>(v: &[T]) -> usize {
    const HUGE: usize = 2 << 20;
    let p = v.as_ptr() as usize;
    (HUGE - p % HUGE) % HUGE
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let cases: [(&str, u32, Vec<f32>); 3] = [
        ("sphere_noise_128", 128, sphere_noise(128)),
        ("sphere_noise_256", 256, sphere_noise(256)),
        ("gyroid8_128", 128, gyroid(8, 128)),
    ];
    let opts = CubesOptions::DEFAULT;
    for (name, n, values) in cases {
        let dims = [n; 3];
        let cells = CellBox::new(0, 0, 0, n - 1, n - 1, n - 1);
        let mut mesher = MarchingCubes::new();
        let mut out = CubesOutput::default();
        let warm: Vec<f64> = (0..reps)
            .map(|_| {
                let t = Instant::now();
                mesher
                    .mesh_slice(&values, dims, cells, &opts, &mut out)
                    .expect("a bench volume meshes");
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        let mut heads = [0usize; 3];
        let f0 = minor_faults();
        let cold: Vec<f64> = (0..reps)
            .map(|_| {
                let t = Instant::now();
                let mut fresh = CubesOutput::default();
                MarchingCubes::new()
                    .mesh_slice(&values, dims, cells, &opts, &mut fresh)
                    .expect("a bench volume meshes");
                let ms = t.elapsed().as_secs_f64() * 1e3;
                heads = [
                    head(&fresh.positions),
                    head(&fresh.normals),
                    head(&fresh.indices),
                ];
                ms
            })
            .collect();
        let faults = (minor_faults() - f0) as f64 / reps as f64;
        assert!(out.triangle_count() > 0, "{name} made no triangles");
        println!(
            "{{\"volume\": \"{name}\", \"reps\": {reps}, \"warm_ms\": {:.3}, \"cold_ms\": {:.3}, \
             \"faults_per_cold_call\": {faults:.0}, \"head_kib\": [{}, {}, {}]}}",
            median(warm),
            median(cold),
            heads[0] >> 10,
            heads[1] >> 10,
            heads[2] >> 10,
        );
    }
}
