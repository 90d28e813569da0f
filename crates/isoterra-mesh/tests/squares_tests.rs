//! Marching squares: cases, welding, seams, areas, winding, materials, validation.

mod common;

use std::collections::HashMap;

use common::*;
use isoterra_field::{Field2, MaterialGrid};
use isoterra_mesh::{
    CellRect, EdgeKey, KeyKind, MarchingSquares, MeshError, SquaresOptions, SquaresOutput,
    signed_area,
};
use proptest::prelude::*;

/// A 2x2 field (one cell) whose corners c0..c3 are `s` when solid, `e` when empty.
fn one_cell(case: u8, s: f32, e: f32) -> Field2 {
    let v = |k: u8| if case & (1 << k) != 0 { s } else { e };
    // Storage: (0,0)=c0, (1,0)=c1, (0,1)=c3, (1,1)=c2.
    Field2::from_values(2, 2, vec![v(0), v(1), v(3), v(2)]).unwrap()
}

fn seg_points(out: &SquaresOutput) -> Vec<Seg> {
    let s = &out.segments;
    let mut v: Vec<_> = s
        .segments
        .iter()
        .map(|&[a, b]| [s.points[a as usize], s.points[b as usize]])
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v
}

/// A directed segment as its two end points.
type Seg = [[f32; 2]; 2];

// Edge midpoints of the unit cell.
const E0: [f32; 2] = [0.5, 0.0];
const E1: [f32; 2] = [1.0, 0.5];
const E2: [f32; 2] = [0.5, 1.0];
const E3: [f32; 2] = [0.0, 0.5];

#[test]
fn all_16_cases_hand_checked() {
    // (case, triangles, area, directed segments) with corners +1 / -1: every crossing
    // is an edge midpoint, and saddle centres average exactly 0 = iso (connected).
    let expect: [(u8, usize, f64, Vec<Seg>); 16] = [
        (0, 0, 0.0, vec![]),
        (1, 1, 0.125, vec![[E0, E3]]),
        (2, 1, 0.125, vec![[E1, E0]]),
        (3, 2, 0.5, vec![[E1, E3]]),
        (4, 1, 0.125, vec![[E2, E1]]),
        (5, 4, 0.75, vec![[E0, E1], [E2, E3]]),
        (6, 2, 0.5, vec![[E2, E0]]),
        (7, 3, 0.875, vec![[E2, E3]]),
        (8, 1, 0.125, vec![[E3, E2]]),
        (9, 2, 0.5, vec![[E0, E2]]),
        (10, 4, 0.75, vec![[E1, E2], [E3, E0]]),
        (11, 3, 0.875, vec![[E1, E2]]),
        (12, 2, 0.5, vec![[E3, E1]]),
        (13, 3, 0.875, vec![[E0, E1]]),
        (14, 3, 0.875, vec![[E3, E0]]),
        (15, 2, 1.0, vec![]),
    ];
    for (case, ntri, area, segs) in expect {
        let f = one_cell(case, 1.0, -1.0);
        let out = mesh_whole(&f);
        assert_eq!(out.fill.triangle_count(), ntri, "case {case}");
        assert_eq!(fill_area(&out), area, "case {case}");
        let mut segs = segs;
        segs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(seg_points(&out), segs, "case {case}");
        // Vertices: solid corners + crossed edges, each once.
        let solid = case.count_ones() as usize;
        let crossed = (0..4)
            .filter(|k| ((case >> k) & 1) != ((case >> ((k + 1) % 4)) & 1))
            .count();
        assert_eq!(out.fill.positions.len(), solid + crossed, "case {case}");
        assert_eq!(out.segments.points.len(), crossed, "case {case}");
        for t in out.fill.indices.chunks(3) {
            assert!(tri_area(&out.fill.positions, t) > 0.0, "case {case}");
        }
    }
}

#[test]
fn separated_saddles_are_two_corner_triangles() {
    // Corners +1 / -1.5: centre average < 0, so the solid corners stay apart.
    // t = 1 / 2.5 = 0.4 from the solid corner on every edge.
    for (case, segs) in [
        (
            5u8,
            vec![[[0.4f32, 0.0], [0.0, 0.4]], [[0.6, 1.0], [1.0, 0.6]]],
        ),
        (
            10u8,
            vec![[[0.0, 0.6], [0.4, 1.0]], [[1.0, 0.4], [0.6, 0.0]]],
        ),
    ] {
        let f = one_cell(case, 1.0, -1.5);
        let out = mesh_whole(&f);
        assert_eq!(out.fill.triangle_count(), 2);
        let area = fill_area(&out);
        assert!((area - 0.16).abs() < 1e-6, "case {case}: {area}");
        let got = seg_points(&out);
        let mut segs = segs;
        segs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(got.len(), 2);
        for (g, e) in got.iter().zip(&segs) {
            for k in 0..2 {
                assert!((g[k][0] - e[k][0]).abs() < 1e-6 && (g[k][1] - e[k][1]).abs() < 1e-6);
            }
        }
    }
}

#[test]
fn saddle_decision_is_shared_by_fill_and_contour() {
    // A saddle in the middle of an empty-bordered 4x4 field: whichever way the
    // centre goes, fill area and contour area agree and the loop count matches.
    for (hi, lo, loops) in [
        (1.0f32, -1.0f32, 1usize),
        (1.0, -1.5, 2),
        (2.0, -1.9, 1),
        (1.0, -1.01, 2),
    ] {
        for case in [5u8, 10] {
            let mut f = Field2::new(4, 4, -1.0).unwrap();
            let v = |k: u8| if case & (1 << k) != 0 { hi } else { lo };
            f.set(1, 1, v(0)).unwrap();
            f.set(2, 1, v(1)).unwrap();
            f.set(2, 2, v(2)).unwrap();
            f.set(1, 2, v(3)).unwrap();
            let out = mesh_whole(&f);
            let lines = join(&[&out.segments]);
            assert_eq!(lines.len(), loops, "case {case} {hi} {lo}");
            let contour: f64 = lines.iter().map(|l| signed_area(&l.points)).sum();
            let fill = fill_area(&out);
            assert!(rel_close(fill, contour, 1e-5, 1e-9), "{fill} vs {contour}");
        }
    }
}

#[test]
fn values_exactly_at_iso_are_solid_and_never_nan() {
    // All at iso: one full quad per cell.
    let f = Field2::new(4, 3, 0.0).unwrap();
    let out = mesh_whole(&f);
    assert_eq!(out.fill.triangle_count(), 2 * 3 * 2);
    assert_eq!(fill_area(&out), 6.0);
    assert!(out.segments.segments.is_empty());

    // One node at iso among empty ones: zero-area pieces, no NaN, no loop left.
    let mut f = Field2::new(3, 3, -1.0).unwrap();
    f.set(1, 1, 0.0).unwrap();
    let out = mesh_whole(&f);
    assert!(out.fill.positions.iter().flatten().all(|v| v.is_finite()));
    assert_eq!(fill_area(&out), 0.0);
    for t in out.fill.indices.chunks(3) {
        assert!(tri_area(&out.fill.positions, t) >= 0.0);
    }
    assert!(join(&[&out.segments]).is_empty());
}

#[test]
fn positions_normals_uvs_follow_the_world() {
    let f = Field2::from_fn(5, 4, |x, y| {
        2.0 - (x as f32 - 2.0).abs() - (y as f32 - 1.5).abs()
    })
    .unwrap()
    .with_cell_size(0.5)
    .unwrap()
    .with_origin([10.0, -3.0])
    .unwrap();
    let opts = SquaresOptions::DEFAULT.with_uv_scale(4.0);
    let out = mesh_rect(&f, CellRect::whole(&f), &opts);
    let m = &out.fill;
    assert!(!m.positions.is_empty());
    assert_eq!(m.normals.len(), m.positions.len());
    assert_eq!(m.uvs.len(), m.positions.len());
    for ((p, n), uv) in m.positions.iter().zip(&m.normals).zip(&m.uvs) {
        assert_eq!(p[2], 0.0);
        assert_eq!(*n, [0.0, 0.0, 1.0]);
        assert_eq!(*uv, [p[0] / 4.0, p[1] / 4.0]);
        assert!(p[0] >= 10.0 && p[0] <= 12.0 && p[1] >= -3.0 && p[1] <= -1.5);
    }
    // A solid node sits exactly where the field says.
    assert!(m.positions.contains(&[11.0, -2.5, 0.0]));
}

#[test]
fn keys_are_global_and_name_the_edge() {
    let f = Field2::from_fn(6, 5, |x, y| {
        (x as f32 - 2.6).abs() + (y as f32 - 2.2).abs() - 1.5
    })
    .unwrap();
    let rect = CellRect::new(1, 1, 4, 4);
    let out = mesh_rect(&f, rect, &SquaresOptions::DEFAULT);
    assert!(!out.segments.points.is_empty());
    for (p, k) in out.segments.points.iter().zip(&out.segments.keys) {
        let (x, y) = (k.x() as f32, k.y() as f32);
        match k.kind() {
            Some(KeyKind::Horizontal) => assert!(p[1] == y && p[0] >= x && p[0] <= x + 1.0),
            Some(KeyKind::Vertical) => assert!(p[0] == x && p[1] >= y && p[1] <= y + 1.0),
            other => panic!("unexpected key kind {other:?}"),
        }
    }
    // The offset shifts keys, not positions.
    let shifted = mesh_rect(&f, rect, &SquaresOptions::DEFAULT.with_key_offset([100, 7]));
    assert_eq!(shifted.segments.points, out.segments.points);
    for (a, b) in out.segments.keys.iter().zip(&shifted.segments.keys) {
        assert_eq!((a.x() + 100, a.y() + 7, a.kind()), (b.x(), b.y(), b.kind()));
    }
}

#[test]
fn empty_rect_and_disabled_outputs() {
    let f = Field2::from_fn(4, 4, |x, _| x as f32 - 1.5).unwrap();
    let out = mesh_rect(&f, CellRect::new(2, 1, 2, 3), &SquaresOptions::DEFAULT);
    assert!(out.fill.positions.is_empty() && out.segments.points.is_empty());
    let only_fill = mesh_rect(
        &f,
        CellRect::whole(&f),
        &SquaresOptions::DEFAULT.with_segments(false),
    );
    assert!(only_fill.segments.points.is_empty() && !only_fill.fill.indices.is_empty());
    let only_segs = mesh_rect(
        &f,
        CellRect::whole(&f),
        &SquaresOptions::DEFAULT.with_fill(false),
    );
    assert!(only_segs.fill.positions.is_empty() && only_segs.fill.uvs.is_empty());
    let both = mesh_whole(&f);
    assert_eq!(both.segments, only_segs.segments);
    assert_eq!(both.fill, only_fill.fill);
}

#[test]
fn invalid_input_is_a_typed_error_and_changes_nothing() {
    let f = Field2::from_fn(4, 4, |x, _| x as f32 - 1.5).unwrap();
    let mut ms = MarchingSquares::new();
    let mut out = mesh_whole(&f);
    let before = out.clone();
    let whole = CellRect::whole(&f);
    let d = SquaresOptions::DEFAULT;
    let cases: Vec<(CellRect, SquaresOptions)> = vec![
        (CellRect::new(0, 0, 4, 3), d),
        (CellRect::new(0, 0, 3, 4), d),
        (CellRect::new(2, 0, 1, 3), d),
        (whole, d.with_iso(f32::NAN)),
        (whole, d.with_iso(f32::INFINITY)),
        (whole, d.with_uv_scale(0.0)),
        (whole, d.with_uv_scale(-1.0)),
        (whole, d.with_uv_scale(f32::NAN)),
        (whole, d.with_key_offset([u32::MAX, 0])),
        (whole, d.with_key_offset([0, EdgeKey::MAX_Y])),
    ];
    for (rect, opts) in cases {
        let e = ms.mesh(&f, None, rect, &opts, &mut out);
        assert!(e.is_err(), "{rect:?} {opts:?}");
        assert_eq!(out, before);
    }
    assert!(matches!(
        ms.mesh(&f, None, CellRect::new(0, 0, 9, 1), &d, &mut out),
        Err(MeshError::RegionOutOfBounds { .. })
    ));
    let wrong = MaterialGrid::new(3, 4, 0).unwrap();
    assert!(matches!(
        ms.mesh(&f, Some(&wrong), whole, &d, &mut out),
        Err(MeshError::MaterialSizeMismatch { .. })
    ));
    assert_eq!(out, before);
}

#[test]
fn materials_group_indices_into_sorted_submeshes() {
    // Left half material 7, right half material 2; a solid disc across both.
    let f = Field2::from_fn(12, 9, |x, y| {
        let (dx, dy) = (x as f32 - 5.5, y as f32 - 4.0);
        3.5 - (dx * dx + dy * dy).sqrt()
    })
    .unwrap();
    let mut mats = MaterialGrid::like(&f, 7);
    for y in 0..9 {
        for x in 6..12 {
            mats.set(x, y, 2).unwrap();
        }
    }
    let mut ms = MarchingSquares::new();
    let mut with = SquaresOutput::default();
    ms.mesh(
        &f,
        Some(&mats),
        CellRect::whole(&f),
        &SquaresOptions::DEFAULT,
        &mut with,
    )
    .unwrap();
    let without = mesh_whole(&f);
    assert_eq!(with.fill.positions, without.fill.positions);
    assert_eq!(with.segments, without.segments);
    assert!(without.fill.submeshes.is_empty());
    let subs = &with.fill.submeshes;
    assert_eq!(
        subs.iter().map(|s| s.material).collect::<Vec<_>>(),
        vec![2, 7]
    );
    assert_eq!(subs[0].start, 0);
    assert_eq!(subs[1].start, subs[0].count);
    assert_eq!(
        (subs[1].start + subs[1].count) as usize,
        with.fill.indices.len()
    );
    // Same triangles overall.
    let mut a: Vec<_> = with.fill.indices.chunks(3).map(|t| t.to_vec()).collect();
    let mut b: Vec<_> = without.fill.indices.chunks(3).map(|t| t.to_vec()).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
    // Cells of column 5 have corners in both halves (x = 5 and x = 6): 2 solid
    // corners each side make a tie, which the smaller id (2) wins; all triangles
    // left of x = 5 are material 7.
    let pos = &with.fill.positions;
    let (s7, s2) = (subs[1], subs[0]);
    for t in with.fill.indices[s7.start as usize..(s7.start + s7.count) as usize].chunks(3) {
        assert!(t.iter().all(|&i| pos[i as usize][0] <= 6.0));
    }
    for t in with.fill.indices[s2.start as usize..(s2.start + s2.count) as usize].chunks(3) {
        assert!(t.iter().all(|&i| pos[i as usize][0] >= 5.0));
    }
}

#[test]
fn reuse_gives_identical_output_and_keeps_buffers() {
    let f = Field2::from_fn(40, 30, |x, y| {
        ((x as f32) * 0.4).sin() + ((y as f32) * 0.3).cos()
    })
    .unwrap();
    let mut ms = MarchingSquares::new();
    let mut out = SquaresOutput::default();
    let opts = SquaresOptions::DEFAULT;
    ms.mesh(&f, None, CellRect::whole(&f), &opts, &mut out)
        .unwrap();
    let first = out.clone();
    let ptr = out.fill.positions.as_ptr();
    let cap = out.fill.indices.capacity();
    ms.mesh(&f, None, CellRect::new(3, 3, 20, 20), &opts, &mut out)
        .unwrap();
    ms.mesh(&f, None, CellRect::whole(&f), &opts, &mut out)
        .unwrap();
    assert_eq!(out, first);
    assert_eq!(out.fill.positions.as_ptr(), ptr);
    assert_eq!(out.fill.indices.capacity(), cap);
}

/// Canonical triangle: its three positions (bits), rotated to start at the smallest.
fn canon_tris(out: &SquaresOutput) -> Vec<[[u32; 2]; 3]> {
    let p = &out.fill.positions;
    let mut v: Vec<[[u32; 2]; 3]> = out
        .fill
        .indices
        .chunks(3)
        .map(|t| {
            let mut c = [0usize, 1, 2].map(|k| bits2([p[t[k] as usize][0], p[t[k] as usize][1]]));
            let i = (0..3).min_by_key(|&i| c[i]).unwrap();
            c.rotate_left(i);
            c
        })
        .collect();
    v.sort();
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Meshing in chunks equals meshing the whole field: same triangles (bitwise),
    /// same contour point for every key, same area.
    #[test]
    fn chunked_equals_whole(f in field(40), nx in 1u32..12, ny in 1u32..12) {
        let whole = mesh_whole(&f);
        let mut keyed: HashMap<EdgeKey, [u32; 2]> = HashMap::new();
        for (p, k) in whole.segments.points.iter().zip(&whole.segments.keys) {
            prop_assert!(keyed.insert(*k, bits2(*p)).is_none(), "key welded twice");
        }
        let mut tris = Vec::new();
        let mut ntri = 0;
        let mut area = 0.0;
        let mut nseg = 0;
        let mut ms = MarchingSquares::new();
        let mut out = SquaresOutput::default();
        for rect in tiles(&f, nx, ny) {
            ms.mesh(&f, None, rect, &SquaresOptions::DEFAULT, &mut out).unwrap();
            ntri += out.fill.triangle_count();
            area += fill_area(&out);
            nseg += out.segments.segments.len();
            tris.extend(canon_tris(&out));
            for (p, k) in out.segments.points.iter().zip(&out.segments.keys) {
                prop_assert_eq!(keyed.get(k), Some(&bits2(*p)), "key {:?}", k);
            }
        }
        tris.sort();
        prop_assert_eq!(ntri, whole.fill.triangle_count());
        prop_assert_eq!(nseg, whole.segments.segments.len());
        prop_assert_eq!(tris, canon_tris(&whole));
        let wa = fill_area(&whole);
        prop_assert!(rel_close(area, wa, 1e-5, 1e-9), "{} vs {}", area, wa);
    }

    /// Every triangle is counter-clockwise (never negative) and every value finite.
    #[test]
    fn triangles_are_ccw_and_finite(f in field(40)) {
        let out = mesh_whole(&f);
        for p in &out.fill.positions {
            prop_assert!(p.iter().all(|v| v.is_finite()));
        }
        for t in out.fill.indices.chunks(3) {
            prop_assert!(tri_area(&out.fill.positions, t) >= 0.0);
        }
        prop_assert!(out.fill.indices.iter().all(|&i| (i as usize) < out.fill.positions.len()));
    }

    /// With an empty border, every contour closes, and the fill area equals the
    /// area the contours enclose (outer loops CCW positive, holes CW negative).
    #[test]
    fn contours_close_and_enclose_the_fill(f in field(40).prop_map(with_empty_border)) {
        let out = mesh_whole(&f);
        let lines = join(&[&out.segments]);
        let mut contour = 0.0;
        for l in &lines {
            prop_assert!(l.closed, "open chain with an empty border");
            prop_assert!(l.points.len() >= 3);
            prop_assert!(l.points.iter().flatten().all(|v| v.is_finite()));
            contour += signed_area(&l.points);
        }
        let fill = fill_area(&out);
        let scale = (f.cell_size() as f64).powi(2);
        prop_assert!(rel_close(fill, contour, 1e-4, 1e-6 * scale), "fill {} contour {}", fill, contour);
    }

    /// The segment graph is consistent: each point has at most one segment out and one in.
    #[test]
    fn each_point_has_one_way_in_and_out(f in field(30)) {
        let out = mesh_whole(&f);
        let n = out.segments.points.len();
        let mut ins = vec![0u8; n];
        let mut outs = vec![0u8; n];
        for &[a, b] in &out.segments.segments {
            outs[a as usize] += 1;
            ins[b as usize] += 1;
        }
        prop_assert!(ins.iter().chain(&outs).all(|&c| c <= 1));
        // Interior points have both.
        for (i, k) in out.segments.keys.iter().enumerate() {
            let interior = match k.kind() {
                Some(KeyKind::Horizontal) => k.y() > 0 && k.y() + 1 < f.height(),
                Some(KeyKind::Vertical) => k.x() > 0 && k.x() + 1 < f.width(),
                _ => false,
            };
            if interior {
                prop_assert_eq!((ins[i], outs[i]), (1, 1));
            }
        }
    }
}
