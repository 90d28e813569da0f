//! Splitting row-major work over scoped threads.
//!
//! Work is cut into bands of whole rows, and every row is computed by the
//! same code whichever thread runs it, so results never depend on the
//! number of threads. If the platform cannot spawn threads the calling
//! thread does all the work.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The number of threads to use for `requested` (0 means "as many as the
/// machine has", capped at 8).
pub(crate) fn thread_count(requested: usize) -> usize {
    if requested > 0 {
        return requested.min(64);
    }
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8)
}

/// Calls `f(first_row, band)` for bands of whole rows of `data` (rows of
/// `row_len` items), using up to `threads` threads.
pub(crate) fn for_each_band<T: Send>(
    data: &mut [T],
    row_len: usize,
    threads: usize,
    f: &(dyn Fn(usize, &mut [T]) + Sync),
) {
    if data.is_empty() || row_len == 0 {
        return;
    }
    let rows = data.len() / row_len;
    let per_band = rows_per_band(rows, threads);
    let jobs: Vec<_> = data
        .chunks_mut(row_len * per_band)
        .enumerate()
        .map(|(i, band)| (i * per_band, band))
        .collect();
    run_jobs(jobs, threads, &|(first_row, band)| f(first_row, band));
}

/// The work function of [`for_each_band_pair`].
type PairFn<'a, A, B> = dyn Fn(usize, &mut [A], &mut [B]) + Sync + 'a;

/// Like [`for_each_band`] over two row-aligned slices at once (for example
/// densities and material ids): `f(first_row, band_a, band_b)`.
pub(crate) fn for_each_band_pair<A: Send, B: Send>(
    a: &mut [A],
    b: &mut [B],
    row_len: usize,
    threads: usize,
    f: &PairFn<'_, A, B>,
) {
    debug_assert_eq!(a.len(), b.len());
    if a.is_empty() || row_len == 0 {
        return;
    }
    let rows = a.len() / row_len;
    let per_band = rows_per_band(rows, threads);
    let jobs: Vec<_> = a
        .chunks_mut(row_len * per_band)
        .zip(b.chunks_mut(row_len * per_band))
        .enumerate()
        .map(|(i, (x, y))| (i * per_band, x, y))
        .collect();
    run_jobs(jobs, threads, &|(first_row, x, y)| f(first_row, x, y));
}

/// A few bands per thread balance uneven rows without much overhead.
fn rows_per_band(rows: usize, threads: usize) -> usize {
    if threads <= 1 {
        rows.max(1)
    } else {
        rows.div_ceil(threads * 4).max(1)
    }
}

/// Runs every job once, on up to `threads` threads (the caller included).
fn run_jobs<J: Send>(jobs: Vec<J>, threads: usize, f: &(dyn Fn(J) + Sync)) {
    let threads = threads.clamp(1, jobs.len().max(1));
    if threads == 1 {
        jobs.into_iter().for_each(f);
        return;
    }
    let slots: Vec<Mutex<Option<J>>> = jobs.into_iter().map(|j| Mutex::new(Some(j))).collect();
    let next = AtomicUsize::new(0);
    let work = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(slot) = slots.get(i) else { break };
            let taken = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(job) = taken {
                f(job);
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            // A failed spawn only means this thread does more of the work.
            let _ = std::thread::Builder::new().spawn_scoped(s, work);
        }
        work();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_visited_once_with_its_index() {
        for threads in [1, 2, 3, 8] {
            let mut data = vec![0u32; 7 * 13];
            for_each_band(&mut data, 7, threads, &|y0, band| {
                for (r, row) in band.chunks_mut(7).enumerate() {
                    for v in row {
                        *v += (y0 + r) as u32 + 1;
                    }
                }
            });
            for (y, row) in data.chunks(7).enumerate() {
                assert!(row.iter().all(|&v| v == y as u32 + 1), "threads {threads}");
            }
        }
    }

    #[test]
    fn pairs_stay_aligned() {
        for threads in [1, 2, 5] {
            let mut a = vec![0u32; 4 * 9];
            let mut b = vec![0u8; 4 * 9];
            for_each_band_pair(&mut a, &mut b, 4, threads, &|y0, x, y| {
                assert_eq!(x.len(), y.len());
                for (r, (rx, ry)) in x.chunks_mut(4).zip(y.chunks_mut(4)).enumerate() {
                    rx.fill((y0 + r) as u32);
                    ry.fill((y0 + r) as u8);
                }
            });
            for (i, (&x, &y)) in a.iter().zip(&b).enumerate() {
                assert_eq!(x, (i / 4) as u32);
                assert_eq!(y, (i / 4) as u8);
            }
        }
    }
}
