//! Joined contour lines of the dense 2048² benchmark field, one-shot
//! (`ContourTracer::new()` and an empty output each call, what `isoterra
//! contour` runs) and warm (tracer and output reused), in thread CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`), with the page faults each one-shot call
//! takes. `bench/peers/contour_alternate.py` runs it in turn with
//! contourpy. Prints one JSON line:
//!
//! ```sh
//! cargo run --release -p isoterra-bench --example contour_one_shot -- 15 [n]
//! ```

use isoterra::field::Field2;
use isoterra::mesh::ContourTracer;
use isoterra_bench::{minor_faults, thread_cpu_s as thread_cpu};

/// Minimum and median of `v`, in milliseconds.
fn min_median(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[0] * 1e3, v[v.len() / 2] * 1e3)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let reps: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(15);
    let n: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(2048);
    // The dense field of `isoterra bench squares` and `contourpy_bench.py`.
    let s = 128.0 * std::f64::consts::PI * n as f64 / 2048.0;
    let step = s / (n - 1) as f64;
    let field = Field2::from_fn(n, n, |x, y| {
        let (x, y) = (x as f64 * step, y as f64 * step);
        (x.sin() + y.sin() + 0.3 * (0.7 * x + 1.3 * y + 0.5).sin()) as f32
    })
    .expect("a valid field");

    let mut tracer = ContourTracer::new();
    let mut lines = Vec::new();
    tracer.contour_lines(&field, 0.0, &mut lines).unwrap();
    let mut warm = Vec::new();
    let mut cold = Vec::new();
    let mut faults = Vec::new();
    // Alternated, so that a drift of the host moves both.
    for _ in 0..reps {
        let t = thread_cpu();
        tracer.contour_lines(&field, 0.0, &mut lines).unwrap();
        warm.push(thread_cpu() - t);

        let f0 = minor_faults();
        let t = thread_cpu();
        let mut fresh = Vec::new();
        ContourTracer::new()
            .contour_lines(&field, 0.0, &mut fresh)
            .unwrap();
        cold.push(thread_cpu() - t);
        faults.push((minor_faults() - f0) as f64);
        assert_eq!(fresh.len(), lines.len());
        drop(fresh);
    }
    let (warm_min, warm_med) = min_median(warm);
    let (cold_min, cold_med) = min_median(cold);
    faults.sort_by(f64::total_cmp);
    println!(
        "{{\"n\": {n}, \"polylines\": {}, \"reps\": {reps}, \"warm_cpu_ms_min\": {warm_min:.3}, \
         \"warm_cpu_ms\": {warm_med:.3}, \"one_shot_cpu_ms_min\": {cold_min:.3}, \
         \"one_shot_cpu_ms\": {cold_med:.3}, \"one_shot_faults\": {}}}",
        lines.len(),
        faults[faults.len() / 2]
    );
}
