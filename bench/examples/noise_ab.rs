//! The 3D fBm grid fill two ways in one process: `fill3` on an `Fbm`
//! (Perlin rows planned once for the grid) and `fill3` on a wrapper that
//! only forwards the row fill (every row on its own), 64³, 4 octaves,
//! frequency 1/64; thread CPU time, best of 30 alternating runs. Checks that
//! both give the same bits.
//!
//! ```text
//! cargo run --release -p isoterra-bench --example noise_ab
//! ```
use isoterra::field::noise::{Fbm, FbmParams, Noise3, fill3};
/// Forwards points and rows only, so `fill3` fills it row by row.
struct Rows<'a>(&'a Fbm);
impl Noise3 for Rows<'_> {
    fn sample3(&self, x: f32, y: f32, z: f32) -> f32 {
        self.0.sample3(x, y, z)
    }
    fn fill_row3(&self, x0: f32, dx: f32, y: f32, z: f32, out: &mut [f32]) {
        self.0.fill_row3(x0, dx, y, z, out)
    }
}
fn main() {
    let p = FbmParams::DEFAULT
        .with_octaves(4)
        .with_frequency(1.0 / 64.0);
    let f = Fbm::new(&p, 7).unwrap();
    let n = 64u32;
    let mut a = vec![0.0f32; (n * n * n) as usize];
    let mut b = a.clone();
    let (mut ta, mut tb) = (f64::MAX, f64::MAX);
    for _ in 0..30 {
        let t = isoterra_bench::thread_cpu_s();
        fill3(&f, [0.0; 3], [1.0; 3], [n; 3], &mut a).unwrap();
        ta = ta.min(isoterra_bench::thread_cpu_s() - t);
        let t = isoterra_bench::thread_cpu_s();
        fill3(&Rows(&f), [0.0; 3], [1.0; 3], [n; 3], &mut b).unwrap();
        tb = tb.min(isoterra_bench::thread_cpu_s() - t);
    }
    assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
    let s = (n * n * n) as f64;
    println!(
        "planned grid {:.2} ns/sample, row by row {:.2} ns/sample (thread CPU, best of 30)",
        ta * 1e9 / s,
        tb * 1e9 / s
    );
}
