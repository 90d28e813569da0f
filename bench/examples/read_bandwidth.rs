//! The read bandwidth of this machine, for judging the memory-bound figures
//! in BENCHMARKS.md: sums buffers of `u64` words with four independent sums
//! (the loop waits on memory, not on additions), best of 7 passes after one
//! pass that faults the pages in, on one thread and on two threads that
//! each read half of the buffer. Prints one JSON line per buffer size and
//! thread count: 64 MiB (a 256³ `f32` field) and 1 GiB.
//!
//! ```sh
//! cargo run --release -p isoterra-bench --example read_bandwidth
//! ```

use std::hint::black_box;
use std::time::Instant;

/// Sums `words` with four independent sums.
fn sum(words: &[u64]) -> u64 {
    let mut s = [0u64; 4];
    for c in black_box(words).chunks_exact(4) {
        s[0] = s[0].wrapping_add(c[0]);
        s[1] = s[1].wrapping_add(c[1]);
        s[2] = s[2].wrapping_add(c[2]);
        s[3] = s[3].wrapping_add(c[3]);
    }
    s.iter().fold(0, |a, &b| a.wrapping_add(b))
}

fn main() {
    for (label, bytes) in [("64MiB", 64usize << 20), ("1GiB", 1usize << 30)] {
        let words: Vec<u64> = (0..(bytes / 8) as u64).collect();
        for threads in [1usize, 2] {
            let mut best = f64::INFINITY;
            let mut checksum = 0u64;
            for pass in 0..8 {
                let t = Instant::now();
                let s: u64 = std::thread::scope(|scope| {
                    let parts: Vec<_> = words
                        .chunks(words.len().div_ceil(threads))
                        .map(|part| scope.spawn(move || sum(part)))
                        .collect();
                    parts
                        .into_iter()
                        .map(|h| h.join().expect("a summing thread panicked"))
                        .fold(0, u64::wrapping_add)
                });
                let seconds = t.elapsed().as_secs_f64();
                checksum = checksum.wrapping_add(s);
                if pass > 0 {
                    best = best.min(seconds);
                }
            }
            println!(
                "{{\"group\":\"machine\",\"name\":\"read_bandwidth_{label}_threads_{threads}\",\"unit\":\"GB/s\",\"value\":{:.2},\"gib_s\":{:.2},\"best_ms\":{:.3},\"checksum\":{checksum}}}",
                bytes as f64 / best / 1e9,
                bytes as f64 / best / (1u64 << 30) as f64,
                best * 1e3
            );
        }
    }
}
