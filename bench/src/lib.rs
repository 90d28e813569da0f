//! Benchmarks live in benches/; this library holds what they and the
//! examples share: the standard marching cubes volumes (the same as
//! `isoterra bench cubes` builds) and the process's page-fault count.

/// The process's minor page faults so far (`/proc/self/stat`, field 10;
/// 0 where it cannot be read).
pub fn minor_faults() -> u64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(") ")?.1;
            rest.split(' ').nth(7)?.parse().ok()
        })
        .unwrap_or(0)
}

/// `n^3` samples, x fastest, of `f` over `linspace(lo, hi, n)` on every
/// axis, computed in `f64` and rounded once.
pub fn grid(n: u32, lo: f64, hi: f64, f: impl Fn(f64, f64, f64) -> f64) -> Vec<f32> {
    let step = (hi - lo) / f64::from(n - 1);
    let coords: Vec<f64> = (0..n).map(|i| lo + f64::from(i) * step).collect();
    // Huge pages where the system allows, as a field read from a .npy file
    // (and numpy's own arrays, which the peers mesh) has them.
    let mut v = isoterra::field::huge_pages::with_capacity((n as usize).pow(3));
    for &z in &coords {
        for &y in &coords {
            for &x in &coords {
                v.push(f(x, y, z) as f32);
            }
        }
    }
    v
}

/// The sparse volume `sphere_noise_N`: a ball of radius 0.6 in
/// `linspace(-1, 1, n)^3` with a little noise.
pub fn sphere_noise(n: u32) -> Vec<f32> {
    grid(n, -1.0, 1.0, |x, y, z| {
        (x * x + y * y + z * z).sqrt() - 0.6
            + 0.05 * (7.0 * x + 1.3).sin() * (9.0 * y + 0.7).sin() * (8.0 * z + 2.1).sin()
            + 0.02 * (23.0 * x + 17.0 * y + 0.4).sin() * (19.0 * z + 1.1).cos()
    })
}

/// The dense volume `gyroid_K_N`: a gyroid with `k` periods per axis over
/// `linspace(0, 2 pi k, n)^3`.
pub fn gyroid(k: u32, n: u32) -> Vec<f32> {
    grid(
        n,
        0.0,
        2.0 * std::f64::consts::PI * f64::from(k),
        |x, y, z| x.sin() * y.cos() + y.sin() * z.cos() + z.sin() * x.cos(),
    )
}

/// CPU seconds of the calling thread (`CLOCK_THREAD_CPUTIME_ID`): what a
/// figure costs the thread that ran it, whatever else the machine runs.
pub fn thread_cpu_s() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to write.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}
