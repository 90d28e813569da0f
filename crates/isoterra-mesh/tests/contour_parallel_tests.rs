//! Parallel contour lines: the single-thread polylines at any thread count.
#![cfg(feature = "parallel")]

mod common;

use common::{field, with_empty_border};
use isoterra_field::Field2;
use isoterra_mesh::{CellRect, ContourTracer, Polyline};
use proptest::prelude::*;

fn serial(f: &Field2, cells: CellRect, iso: f32) -> Vec<Polyline> {
    let mut out = Vec::new();
    ContourTracer::new()
        .contour_lines_in(f, cells, iso, &mut out)
        .unwrap();
    out
}

fn on_threads(threads: usize, f: &Field2, cells: CellRect, iso: f32) -> Vec<Polyline> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    // A reused output with stale lines, as a caller's loop would have.
    let mut out = vec![Polyline::new(vec![[7.0, 7.0]; 5], true); 3];
    pool.install(|| {
        ContourTracer::new()
            .with_parallel(true)
            .contour_lines_in(f, cells, iso, &mut out)
            .unwrap()
    });
    out
}

/// Point bits and flags, so that `-0.0` and `0.0` are told apart.
fn bits(lines: &[Polyline]) -> Vec<(bool, Vec<[u32; 2]>)> {
    lines
        .iter()
        .map(|l| {
            (
                l.closed,
                l.points.iter().map(|p| p.map(f32::to_bits)).collect(),
            )
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn any_thread_count_gives_the_single_thread_polylines(
        f in field(40),
        iso in prop_oneof![Just(0.0f32), -0.5f32..0.5],
        border in any::<bool>(),
    ) {
        let f = if border { with_empty_border(f) } else { f };
        let whole = CellRect::whole(&f);
        let want = serial(&f, whole, iso);
        for threads in [1, 2, 3, 7] {
            let got = on_threads(threads, &f, whole, iso);
            prop_assert_eq!(bits(&got), bits(&want), "{} threads", threads);
        }
        if border {
            prop_assert!(want.iter().all(|l| l.closed));
        }
    }

    #[test]
    fn rectangles_inside_the_field_trace_alike_on_threads(
        f in field(30),
        a in (0.0f32..1.0, 0.0f32..1.0),
        b in (0.0f32..1.0, 0.0f32..1.0),
    ) {
        let pick = |fa: f32, fb: f32, n: u32| {
            let (p, q) = ((fa * (n - 1) as f32) as u32, (fb * (n - 1) as f32) as u32);
            (p.min(q), p.max(q))
        };
        let (x0, x1) = pick(a.0, b.0, f.width());
        let (y0, y1) = pick(a.1, b.1, f.height());
        let cells = CellRect::new(x0, y0, x1, y1);
        let want = serial(&f, cells, 0.0);
        for threads in [2, 5] {
            prop_assert_eq!(bits(&on_threads(threads, &f, cells, 0.0)), bits(&want));
        }
    }
}

#[test]
fn a_large_field_traces_alike_on_two_threads() {
    let f = Field2::from_fn(700, 500, |x, y| {
        let (x, y) = (x as f32 * 0.21, y as f32 * 0.17);
        x.sin() + y.sin() + 0.3 * (0.7 * x + 1.3 * y + 0.5).sin()
    })
    .unwrap();
    let whole = CellRect::whole(&f);
    let want = serial(&f, whole, 0.0);
    assert!(want.len() > 50);
    assert_eq!(bits(&on_threads(2, &f, whole, 0.0)), bits(&want));
}

/// More than 2^21 crossings (the several-at-a-time walk starts at 2^19):
/// the open chains are followed on the pool's threads (and the loops
/// several at a time), with the same polylines.
#[test]
fn long_chains_are_followed_alike_on_threads() {
    let f = common::long_chains_field();
    let whole = CellRect::whole(&f);
    let want = serial(&f, whole, 0.0);
    let points: usize = want.iter().map(|l| l.points.len()).sum();
    assert!(points > 1 << 21, "{points} points");
    assert!(want.iter().any(|l| l.closed) && want.iter().filter(|l| !l.closed).count() > 1000);
    for threads in [2, 3] {
        assert!(
            bits(&on_threads(threads, &f, whole, 0.0)) == bits(&want),
            "{threads} threads"
        );
    }
    // One-shot calls size every polyline to fit, on one thread and on two.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let mut fresh = Vec::new();
    pool.install(|| {
        ContourTracer::new()
            .with_parallel(true)
            .contour_lines(&f, 0.0, &mut fresh)
            .unwrap()
    });
    assert!(bits(&fresh) == bits(&want));
    for l in want.iter().chain(&fresh) {
        assert_eq!(l.points.capacity(), l.points.len());
    }
}
