//! Contours: joining, the tracer fast path, orientation, simplification, strips.

mod common;

use common::*;
use isoterra_field::Field2;
use isoterra_mesh::{
    CellRect, ContourJoiner, ContourTracer, MarchingSquares, MeshError, Polyline, Segments,
    Simplifier, SquaresOptions, SquaresOutput, StripMesh, edge_strip, signed_area, simplify_greedy,
    simplify_rdp,
};
use proptest::prelude::*;

fn disc(n: u32, cx: f32, cy: f32, r: f32) -> Field2 {
    Field2::from_fn(n, n, |x, y| {
        let (dx, dy) = (x as f32 - cx, y as f32 - cy);
        r - (dx * dx + dy * dy).sqrt()
    })
    .unwrap()
}

fn ring(n: u32, c: f32, r_out: f32, r_in: f32) -> Field2 {
    Field2::from_fn(n, n, |x, y| {
        let (dx, dy) = (x as f32 - c, y as f32 - c);
        let d = (dx * dx + dy * dy).sqrt();
        (r_out - d).min(d - r_in)
    })
    .unwrap()
}

fn trace(f: &Field2) -> Vec<Polyline> {
    let mut out = Vec::new();
    ContourTracer::new()
        .contour_lines(f, 0.0, &mut out)
        .unwrap();
    out
}

/// The dense benchmark field's shape on an `n x n` grid, 0.35 units a
/// node: diagonal contours that leave the field and loops inside it.
fn dense_sine(n: u32) -> Field2 {
    let s = 0.35f64;
    Field2::from_fn(n, n, |x, y| {
        let (x, y) = (x as f64 * s, y as f64 * s);
        (x.sin() + y.sin() + 0.3 * (0.7 * x + 1.3 * y + 0.5).sin()) as f32
    })
    .unwrap()
}

/// Distance from `p` to the polyline (including the closing side of a loop).
fn dist_to(line: &Polyline, p: [f32; 2]) -> f64 {
    let q = &line.points;
    let seg = |a: [f32; 2], b: [f32; 2]| {
        let (ax, ay, bx, by) = (a[0] as f64, a[1] as f64, b[0] as f64, b[1] as f64);
        let (px, py) = (p[0] as f64, p[1] as f64);
        let (dx, dy) = (bx - ax, by - ay);
        let l2 = dx * dx + dy * dy;
        let t = if l2 > 0.0 {
            (((px - ax) * dx + (py - ay) * dy) / l2).clamp(0.0, 1.0)
        } else {
            0.0
        };
        ((px - ax - t * dx).powi(2) + (py - ay - t * dy).powi(2)).sqrt()
    };
    let mut best = f64::INFINITY;
    if q.len() == 1 {
        return seg(q[0], q[0]);
    }
    for w in q.windows(2) {
        best = best.min(seg(w[0], w[1]));
    }
    if line.closed && q.len() > 2 {
        best = best.min(seg(q[q.len() - 1], q[0]));
    }
    best
}

#[test]
fn disc_is_one_ccw_loop_and_ring_has_a_cw_hole() {
    let lines = trace(&disc(32, 15.3, 15.7, 9.0));
    assert_eq!(lines.len(), 1);
    assert!(lines[0].closed);
    let a = signed_area(&lines[0].points);
    assert!((a - std::f64::consts::PI * 81.0).abs() < 2.0, "{a}");

    let lines = trace(&ring(40, 19.5, 15.0, 7.0));
    assert_eq!(lines.len(), 2);
    let mut areas: Vec<f64> = lines.iter().map(|l| signed_area(&l.points)).collect();
    areas.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert!(areas[0] < 0.0 && areas[1] > 0.0, "{areas:?}");
    let expect = std::f64::consts::PI * (225.0 - 49.0);
    assert!((areas[0] + areas[1] - expect).abs() < 3.0);
}

#[test]
fn open_chains_come_first_and_leave_the_field() {
    // Solid left half plus a separate disc: one chain crossing the field, one loop.
    let f = Field2::from_fn(30, 20, |x, y| {
        let (dx, dy) = (x as f32 - 22.0, y as f32 - 10.0);
        (6.5 - x as f32).max(4.0 - (dx * dx + dy * dy).sqrt())
    })
    .unwrap();
    let lines = trace(&f);
    assert_eq!(lines.len(), 2);
    assert!(!lines[0].closed && lines[1].closed);
    // Solid on the left of a vertical boundary with solid to the west: it runs up.
    let chain = &lines[0].points;
    assert_eq!(chain.first().unwrap()[1], 0.0);
    assert_eq!(chain.last().unwrap()[1], 19.0);
    assert!(chain.iter().all(|p| (p[0] - 6.5).abs() < 1e-6));
}

#[test]
fn tracer_validates_and_reuses() {
    let f = disc(20, 9.5, 9.5, 6.0);
    let mut t = ContourTracer::new();
    let mut out = vec![Polyline::default(); 3];
    assert!(matches!(
        t.contour_lines(&f, f32::NAN, &mut out),
        Err(MeshError::InvalidParameter { .. })
    ));
    assert_eq!(out.len(), 3);
    assert!(
        t.contour_lines_in(&f, CellRect::new(0, 0, 20, 5), 0.0, &mut out)
            .is_err()
    );
    t.contour_lines(&f, 0.0, &mut out).unwrap();
    let first = out.clone();
    let ptr = out[0].points.as_ptr();
    t.contour_lines(&f, 0.0, &mut out).unwrap();
    assert_eq!(out, first);
    assert_eq!(out[0].points.as_ptr(), ptr);
    // Another iso level moves the loop inwards.
    t.contour_lines(&f, 2.0, &mut out).unwrap();
    assert!(signed_area(&out[0].points) < signed_area(&first[0].points));
    // A fresh tracer sizes its lists before the scan and a reused one grows
    // them: on a field larger than the last, both give the same lines.
    let big = ring(120, 60.0, 50.0, 20.0);
    t.contour_lines(&big, 0.0, &mut out).unwrap();
    let mut fresh = Vec::new();
    ContourTracer::new()
        .contour_lines(&big, 0.0, &mut fresh)
        .unwrap();
    assert_eq!(out, fresh);
    assert_eq!(fresh.len(), 2);
}

#[test]
fn joiner_reuse_and_empty_input() {
    let mut j = ContourJoiner::new();
    let mut out = vec![Polyline::default()];
    j.join(&[], &mut out);
    assert!(out.is_empty());
    let f = disc(20, 9.5, 9.5, 6.0);
    let m = mesh_whole(&f);
    j.join(&[&m.segments], &mut out);
    let first = out.clone();
    j.join(&[&m.segments, &Segments::default()], &mut out);
    assert_eq!(out, first);
    // Passing the same chunk twice welds every key to itself.
    j.join(&[&m.segments, &m.segments], &mut out);
    assert_eq!(out, first);
}

#[test]
fn simplify_keeps_a_circle_within_tolerance() {
    let lines = trace(&disc(64, 31.5, 31.5, 25.0));
    let line = &lines[0];
    for tol in [0.0f32, 0.05, 0.5, 3.0] {
        let r = simplify_rdp(line, tol).unwrap();
        let g = simplify_greedy(line, tol).unwrap();
        for s in [&r, &g] {
            assert!(s.closed && s.points.len() >= 3);
            assert!(s.points.len() <= line.points.len());
            for &p in &line.points {
                assert!(dist_to(s, p) <= tol as f64 * (1.0 + 1e-6) + 1e-6);
            }
        }
        if tol >= 0.5 {
            assert!(
                r.points.len() * 4 < line.points.len(),
                "{tol}: {}",
                r.points.len()
            );
            assert!(
                g.points.len() * 3 < line.points.len(),
                "{tol}: {}",
                g.points.len()
            );
        }
    }
    // The reusable simplifier gives the same answer.
    let mut s = Simplifier::new();
    let mut out = Polyline::default();
    s.rdp(line, 0.5, &mut out).unwrap();
    assert_eq!(out, simplify_rdp(line, 0.5).unwrap());
    s.greedy(line, 0.5, &mut out).unwrap();
    assert_eq!(out, simplify_greedy(line, 0.5).unwrap());
}

#[test]
fn edge_strip_along_a_loop() {
    let lines = trace(&disc(48, 23.5, 23.5, 18.0));
    let line = simplify_rdp(&lines[0], 0.1).unwrap();
    let mut strip = StripMesh::default();
    edge_strip(std::slice::from_ref(&line), 1.5, &mut strip).unwrap();
    let n = line.points.len();
    assert_eq!(strip.positions.len(), 2 * (n + 1));
    assert_eq!(strip.indices.len(), 6 * n);
    let mut area = 0.0;
    for t in strip.indices.chunks(3) {
        let a = tri_area(&strip.positions, t);
        assert!(a > 0.0, "clockwise strip triangle");
        area += a;
    }
    // About perimeter * width, a bit less since the strip lies inside.
    let perim = line.length();
    assert!(
        area < perim * 1.5 && area > perim * 1.5 * 0.85,
        "{area} vs {}",
        perim * 1.5
    );
    // u grows with arc length, v is 0 on the contour and 1 inside.
    for k in 0..=n {
        assert_eq!(strip.uvs[2 * k][1], 0.0);
        assert_eq!(strip.uvs[2 * k + 1][1], 1.0);
        if k > 0 {
            assert!(strip.uvs[2 * k][0] > strip.uvs[2 * k - 2][0]);
        }
    }
    assert!((strip.uvs[2 * n][0] as f64 - perim / 1.5).abs() < 1e-3);
    // Inner vertices lie inside the disc (closer to the centre).
    for k in 0..n {
        let o = strip.positions[2 * k];
        let i = strip.positions[2 * k + 1];
        let r = |p: [f32; 3]| ((p[0] - 23.5).powi(2) + (p[1] - 23.5).powi(2)).sqrt();
        assert!(r(i) < r(o));
    }
    // Bad input.
    let bad = Polyline::new(vec![[0.0, 0.0], [f32::INFINITY, 0.0]], false);
    assert!(edge_strip(&[bad], 1.0, &mut strip).is_err());
    assert!(!strip.positions.is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// The tracer gives exactly what mesh + join gives, over any cell rectangle.
    #[test]
    fn tracer_equals_mesh_and_join(f in field(40), r in (0u32..40, 0u32..40, 0u32..40, 0u32..40)) {
        let (cw, ch) = (f.width() - 1, f.height() - 1);
        let (a, b) = ((r.0 % (cw + 1)).min(r.2 % (cw + 1)), (r.0 % (cw + 1)).max(r.2 % (cw + 1)));
        let (c, d) = ((r.1 % (ch + 1)).min(r.3 % (ch + 1)), (r.1 % (ch + 1)).max(r.3 % (ch + 1)));
        for rect in [CellRect::whole(&f), CellRect::new(a, c, b, d)] {
            let m = mesh_rect(&f, rect, &SquaresOptions::DEFAULT.with_fill(false));
            let joined = join(&[&m.segments]);
            let mut traced = Vec::new();
            ContourTracer::new().contour_lines_in(&f, rect, 0.0, &mut traced).unwrap();
            prop_assert_eq!(traced, joined);
        }
    }

    /// Joining the segments of every chunk gives the polylines of the whole field.
    #[test]
    fn chunked_join_equals_whole_join(f in field(40), nx in 1u32..10, ny in 1u32..10) {
        let whole = join(&[&mesh_whole(&f).segments]);
        let mut ms = MarchingSquares::new();
        let parts: Vec<SquaresOutput> = tiles(&f, nx, ny)
            .into_iter()
            .map(|rect| {
                let mut out = SquaresOutput::default();
                ms.mesh(&f, None, rect, &SquaresOptions::DEFAULT.with_fill(false), &mut out).unwrap();
                out
            })
            .collect();
        let refs: Vec<&Segments> = parts.iter().map(|p| &p.segments).collect();
        let chunked = join(&refs);
        prop_assert_eq!(canonical_set(&chunked), canonical_set(&whole));
        // Open chains first.
        let first_closed = chunked.iter().position(|l| l.closed).unwrap_or(chunked.len());
        prop_assert!(chunked[first_closed..].iter().all(|l| l.closed));
    }

    /// Simplified contours stay within tolerance of the originals; loops keep >= 3
    /// points, chains keep their ends.
    #[test]
    fn simplified_contours_stay_within_tolerance(f in field(40), tol in prop_oneof![Just(0.0f32), 0.0f32..2.0]) {
        let tol = tol * f.cell_size();
        for line in trace(&f) {
            for s in [simplify_rdp(&line, tol).unwrap(), simplify_greedy(&line, tol).unwrap()] {
                prop_assert_eq!(s.closed, line.closed);
                prop_assert!(s.points.len() <= line.points.len());
                if line.closed {
                    prop_assert!(s.points.len() >= 3);
                } else {
                    prop_assert_eq!(s.points.first(), line.points.first());
                    prop_assert_eq!(s.points.last(), line.points.last());
                }
                // Kept points are original points, in order.
                let mut it = line.points.iter();
                for p in &s.points {
                    prop_assert!(it.any(|q| q == p));
                }
                for &p in &line.points {
                    let d = dist_to(&s, p);
                    prop_assert!(d <= tol as f64 * (1.0 + 1e-6) + 1e-6, "{} > {}", d, tol);
                }
            }
        }
    }

    /// Every polyline point is finite, loops have >= 3 points and no repeated
    /// neighbours, and with an empty border the loops' areas add up to the fill.
    #[test]
    fn traced_loops_are_clean(f in field(40).prop_map(with_empty_border)) {
        let lines = trace(&f);
        let mut total = 0.0;
        for l in &lines {
            prop_assert!(l.closed);
            prop_assert!(l.points.len() >= 3);
            prop_assert!(l.points.iter().flatten().all(|v| v.is_finite()));
            for w in l.points.windows(2) {
                prop_assert!(w[0] != w[1]);
            }
            prop_assert!(l.points[0] != l.points[l.points.len() - 1]);
            total += signed_area(&l.points);
        }
        let fill = fill_area(&mesh_whole(&f));
        let scale = (f.cell_size() as f64).powi(2);
        prop_assert!(rel_close(total, fill, 1e-4, 1e-6 * scale));
    }
}

/// A field large enough for the tracer to follow its open chains several at
/// a time (2^19 crossings or more; this one has over 2^21): 1,100 columns
/// of alternating sign give open chains from the bottom row to the top, and
/// bumps on the right give closed loops. The tracer still gives exactly
/// what mesh + join gives (which follows one chain at a time).
#[test]
fn a_large_field_traces_as_mesh_and_join() {
    let f = long_chains_field();
    // Reused output: polylines already there (more of them, with points in
    // them) have their buffers written over, as a warmed-up caller's would.
    let mut traced = vec![Polyline::new(vec![[9.0, 9.0]; 5], true); 5000];
    let mut tracer = ContourTracer::new();
    tracer.contour_lines(&f, 0.0, &mut traced).unwrap();
    let first = traced.clone();
    tracer.contour_lines(&f, 0.0, &mut traced).unwrap();
    assert!(traced == first, "a second call differs from the first");
    let points: usize = traced.iter().map(|l| l.points.len()).sum();
    assert!(points > 1 << 21, "{points} points");
    let open = traced.iter().filter(|l| !l.closed).count();
    assert!(
        open >= 1099 && traced.len() > open,
        "{open} open of {}",
        traced.len()
    );
    let joined = join(&[&mesh_whole(&f).segments]);
    assert!(traced == joined, "the tracer and mesh + join differ");
}

/// A dense field with more crossings than fit a core's own cache and fewer
/// than the tracer walks several at a time (2^15 to 2^19): its points and
/// links are asked for in order before the one-at-a-time walk, which must
/// not change a point. Diagonal contours that leave the field and loops
/// inside it, as on the dense benchmark field.
#[test]
fn a_mid_sized_dense_field_traces_as_mesh_and_join() {
    let f = dense_sine(700);
    let mut traced = Vec::new();
    ContourTracer::new()
        .contour_lines(&f, 0.0, &mut traced)
        .unwrap();
    let points: usize = traced.iter().map(|l| l.points.len()).sum();
    assert!((1 << 15..1 << 19).contains(&points), "{points} points");
    assert!(traced.iter().any(|l| l.closed) && traced.iter().any(|l| !l.closed));
    let joined = join(&[&mesh_whole(&f).segments]);
    assert!(traced == joined, "the tracer and mesh + join differ");
}

/// A one-shot call (fresh tracer or joiner, empty output) gives every
/// polyline a buffer of exactly its size instead of one grown by doubling;
/// an output reused with fewer, smaller buffers than it needs still ends
/// with the same polylines.
#[test]
fn one_shot_polylines_are_sized_to_fit() {
    let f = dense_sine(300);
    let traced = trace(&f);
    assert!(traced.iter().any(|l| l.closed) && traced.iter().any(|l| !l.closed));
    assert!(traced.iter().any(|l| l.points.len() > 100));
    for l in &traced {
        assert_eq!(l.points.capacity(), l.points.len());
    }
    let out = mesh_whole(&f);
    let joined = join(&[&out.segments]);
    assert!(joined == traced);
    for l in &joined {
        assert_eq!(l.points.capacity(), l.points.len());
    }
    // Reused: small buffers in some slots, none in the others.
    let mut reused = vec![Polyline::new(vec![[1.0, 2.0]; 3], false); 7];
    reused.extend(std::iter::repeat_with(Polyline::default).take(5));
    ContourTracer::new()
        .contour_lines(&f, 0.0, &mut reused)
        .unwrap();
    assert!(reused == traced);
    let mut reused = vec![Polyline::new(vec![[1.0, 2.0]; 3], false); 7];
    ContourJoiner::new().join(&[&out.segments], &mut reused);
    assert!(reused == traced);
}
