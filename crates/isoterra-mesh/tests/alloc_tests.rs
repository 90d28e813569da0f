//! Warmed-up meshers, joiners, tracers, simplifiers and strip builders allocate nothing.

use isoterra_field::{Field2, MaterialGrid};
use isoterra_mesh::{
    CellRect, ContourJoiner, ContourTracer, MarchingSquares, Polyline, Simplifier, SquaresOptions,
    SquaresOutput, StripBuilder, StripMesh,
};

mod common;
#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocs;

#[test]
fn steady_loop_allocates_nothing() {
    let f = Field2::from_fn(97, 83, |x, y| {
        (x as f32 * 0.21).sin() + (y as f32 * 0.17).sin() + 0.3 * ((x + 2 * y) as f32 * 0.05).cos()
    })
    .unwrap();
    let mut mats = MaterialGrid::like(&f, 0);
    for y in 0..83 {
        for x in 0..97 {
            mats.set(x, y, ((x / 20 + y / 30) % 3) as u8).unwrap();
        }
    }
    let mut ms = MarchingSquares::new();
    let mut outs = vec![SquaresOutput::default(); 4];
    let rects = [
        CellRect::new(0, 0, 48, 41),
        CellRect::new(48, 0, 96, 41),
        CellRect::new(0, 41, 48, 82),
        CellRect::new(48, 41, 96, 82),
    ];
    let mut joiner = ContourJoiner::new();
    let mut tracer = ContourTracer::new();
    let mut lines: Vec<Polyline> = Vec::new();
    let mut traced: Vec<Polyline> = Vec::new();
    let mut simplifier = Simplifier::new();
    let mut simple = Polyline::default();
    let mut strips = StripBuilder::new();
    let mut strip = StripMesh::default();

    let mut run = || {
        for (rect, out) in rects.iter().zip(outs.iter_mut()) {
            ms.mesh(&f, Some(&mats), *rect, &SquaresOptions::DEFAULT, out)
                .unwrap();
        }
        let parts: [&_; 4] = [
            &outs[0].segments,
            &outs[1].segments,
            &outs[2].segments,
            &outs[3].segments,
        ];
        joiner.join(&parts, &mut lines);
        tracer.contour_lines(&f, 0.0, &mut traced).unwrap();
        let mut kept = 0;
        for l in &lines {
            simplifier.rdp(l, 0.2, &mut simple).unwrap();
            kept += simple.points.len();
            simplifier.greedy(l, 0.2, &mut simple).unwrap();
            kept += simple.points.len();
        }
        strips.build(&traced, 0.5, &mut strip).unwrap();
        (
            outs[0].fill.indices.len(),
            lines.len(),
            traced.len(),
            kept,
            strip.indices.len(),
        )
    };

    let start = allocs();
    let warm = run();
    assert!(allocs() > start, "the counter counts");
    assert!(warm.0 > 0 && warm.1 > 0 && warm.2 > 0 && warm.4 > 0);
    let before = allocs();
    let again = run();
    let after = allocs();
    assert_eq!(again, warm);
    assert_eq!(after - before, 0, "allocations in a warmed-up loop");
}

#[test]
fn a_warmed_up_tracer_on_a_large_field_allocates_nothing() {
    let f = common::long_chains_field();
    let mut tracer = ContourTracer::new();
    let mut traced: Vec<Polyline> = Vec::new();
    tracer.contour_lines(&f, 0.0, &mut traced).unwrap();
    let first = traced.clone();
    assert!(first.iter().any(|l| l.closed) && first.iter().any(|l| !l.closed));
    let before = allocs();
    tracer.contour_lines(&f, 0.0, &mut traced).unwrap();
    let after = allocs();
    assert!(traced == first);
    assert_eq!(after - before, 0, "allocations in a warmed-up call");
}
