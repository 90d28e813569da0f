//! Marching cubes case tables, generated once from the geometry of the cube.
//!
//! Nothing here is typed in by hand: the corners, edges and faces of the unit
//! cube are derived from bit patterns, and every case's triangles are built by
//! walking the iso-crossings around the six faces.
//!
//! ```text
//!         6 -------- 7          corner k = x | y << 1 | z << 2
//!        /|         /|          edge  0..4  along x at (y, z) = (e & 1, e >> 1)
//!       / |        / |          edge  4..8  along y at (x, z) = (e & 1, (e >> 1) & 1)
//!      4 -------- 5  |          edge  8..12 along z at (x, y) = (e & 1, (e >> 1) & 1)
//!      |  2 ------|- 3
//!      | /        | /           y up, x right, z toward the viewer
//!      |/         |/
//!      0 -------- 1
//! ```
//!
//! # Construction
//!
//! For each of the 256 sign patterns (bit `k` set when corner `k` is solid) and
//! each choice of the ambiguous faces:
//!
//! 1. On every face, seen from outside the cube with its corners counter-clockwise,
//!    the crossed face edges are joined by directed segments that keep the solid on
//!    their *right*: a segment starts on an edge walked air-to-solid and ends on an
//!    edge walked solid-to-air. A face with two crossings has one segment. A face
//!    whose diagonal corners agree (an *ambiguous* face, four crossings) has two:
//!    when the face is *joined* they cut off the two air corners, otherwise the two
//!    solid corners. The decision comes from the asymptotic decider in the mesher and
//!    depends only on the four face values, so both cells sharing a face agree.
//! 2. Every crossed cube edge lies on two faces and starts one segment on one of them
//!    and ends one on the other, so the segments form disjoint closed loops.
//! 3. Each loop is one polygon; its loop order is counter-clockwise seen from the air
//!    side, so its triangles face out of the solid. Its diagonals never join two
//!    points on a common cube face, except on the cell's minus faces (`x`, `y` or
//!    `z` = 0): the neighbour across such a face sees it as a plus face and never
//!    draws that chord. So every diagonal bounds exactly two triangles of one cell,
//!    and every face segment is shared with exactly one polygon of the neighbouring
//!    cell. That makes the union of all cells an edge-manifold surface without
//!    holes, whatever the decisions are.

use std::sync::OnceLock;

/// Corner `k` of the unit cube as `[x, y, z]` bits.
pub(crate) const fn corner(k: u8) -> [u8; 3] {
    [k & 1, (k >> 1) & 1, (k >> 2) & 1]
}

/// The axis of edge `e` (0 = x, 1 = y, 2 = z).
#[cfg(test)]
pub(crate) const fn edge_axis(e: u8) -> u8 {
    e / 4
}

/// The lower and upper corner of edge `e` (the upper one is one step along the axis).
pub(crate) const fn edge_corners(e: u8) -> (u8, u8) {
    let axis = e / 4;
    let r = e % 4;
    let (u, v) = (r & 1, r >> 1);
    let lo = match axis {
        0 => (u << 1) | (v << 2),
        1 => u | (v << 2),
        _ => u | (v << 1),
    };
    (lo, lo | (1 << axis))
}

/// The edge joining corners `a` and `b` (which must differ in exactly one bit).
const fn edge_between(a: u8, b: u8) -> u8 {
    let d = a ^ b;
    let axis = d.trailing_zeros() as u8;
    let lo = if a < b { a } else { b };
    let c = corner(lo);
    let r = match axis {
        0 => c[1] | (c[2] << 1),
        1 => c[0] | (c[2] << 1),
        _ => c[0] | (c[1] << 1),
    };
    axis * 4 + r
}

/// The four corners of face `f` (`f = 2 * axis + side`), counter-clockwise seen
/// from outside the cube (along the outward normal).
pub(crate) const fn face_corners(f: u8) -> [u8; 4] {
    let axis = f / 2;
    let side = f % 2;
    // (u, v) are the other two axes in cyclic order, so u x v = +axis.
    let u = (axis + 1) % 3;
    let v = (axis + 2) % 3;
    let base = side << axis;
    let (pu, pv) = (1 << u, 1 << v);
    if side == 1 {
        [base, base | pu, base | pu | pv, base | pv]
    } else {
        [base, base | pv, base | pu | pv, base | pu]
    }
}

/// Bit `f` is set when edge `e` lies on face `f`.
const fn edge_faces(e: u8) -> u8 {
    let (a, b) = edge_corners(e);
    let mut mask = 0;
    let mut f = 0;
    while f < 6 {
        let q = face_corners(f);
        let mut hits = 0;
        let mut i = 0;
        while i < 4 {
            if q[i] == a || q[i] == b {
                hits += 1;
            }
            i += 1;
        }
        if hits == 2 {
            mask |= 1 << f;
        }
        f += 1;
    }
    mask
}

/// Bit `e` is set when edge `e` is crossed (its corners differ) in `case`.
pub(crate) const fn crossed_edges(case: u8) -> u16 {
    let mut mask = 0u16;
    let mut e = 0;
    while e < 12 {
        let (a, b) = edge_corners(e);
        if ((case >> a) & 1) != ((case >> b) & 1) {
            mask |= 1 << e;
        }
        e += 1;
    }
    mask
}

/// An ambiguous face of a case: its two solid corners and its two air corners.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AmbiguousFace {
    /// The face (`2 * axis + side`).
    pub face: u8,
    /// The two diagonal corners that are solid.
    pub solid: [u8; 2],
    /// The two diagonal corners that are air.
    pub air: [u8; 2],
}

/// Where the triangles of one case live.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CaseEntry {
    /// The sub-entry for decisions `0` (the only one when `amb_count == 0`).
    pub first: SubEntry,
    /// Number of ambiguous faces (0..=6).
    pub amb_count: u8,
    /// First ambiguous face of this case in [`Tables::ambiguous`].
    pub amb_start: u16,
    /// First sub-entry in [`Tables::subs`]; the case owns `1 << amb_count` of them,
    /// indexed by the decisions (bit `i` set when ambiguous face `i` is joined).
    pub sub_start: u32,
}

/// The slot of a cell's centre vertex in triangle lists (edges are `0..12`).
pub(crate) const CENTRE: u8 = 12;

/// The triangles of one case under one choice of face decisions.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SubEntry {
    /// First edge in [`Tables::tri_edges`] (three per triangle).
    pub start: u32,
    /// Number of triangles.
    pub count: u16,
    /// Length of the loop fanned around a centre vertex (0 when none).
    pub centre_len: u8,
    /// First edge of that loop in [`Tables::centre_loops`].
    pub centre_start: u16,
}

/// All generated tables.
#[derive(Debug)]
pub(crate) struct Tables {
    /// One entry per sign pattern.
    pub cases: [CaseEntry; 256],
    /// Ambiguous faces of every case, grouped by case.
    pub ambiguous: Vec<AmbiguousFace>,
    /// Triangle lists per (case, decisions).
    pub subs: Vec<SubEntry>,
    /// Edge ids (or [`CENTRE`]), three per triangle, counter-clockwise seen from
    /// the air side.
    pub tri_edges: Vec<u8>,
    /// Loops that are fanned around a centre vertex, as edge ids.
    pub centre_loops: Vec<u8>,
    /// What a cell of each case adds to a count, as one word that sums
    /// without carries over 64 cells: its triangles (bits 0..16) and centre
    /// vertices (bits 16..32) when the case is unambiguous; 1 at bit 32, and
    /// nothing else, when its list depends on the decider.
    pub tally: [u64; 256],
}

/// Bit of [`Tables::tally`] that counts ambiguous cells.
pub(crate) const TALLY_AMBIGUOUS: u64 = 1 << 32;

/// A [`Tables::tally`] word for a cell whose list is `s`.
pub(crate) const fn tally_of(s: SubEntry) -> u64 {
    s.count as u64 | ((s.centre_len != 0) as u64) << 16
}

impl Tables {
    /// The ambiguous faces of `case`, in decision-bit order.
    pub(crate) fn ambiguous_faces(&self, case: u8) -> &[AmbiguousFace] {
        let c = &self.cases[case as usize];
        &self.ambiguous[c.amb_start as usize..c.amb_start as usize + c.amb_count as usize]
    }
}

#[cfg(test)]
impl Tables {
    /// The entry of `case` under `decisions`.
    #[inline]
    pub(crate) fn sub(&self, case: u8, decisions: u8) -> SubEntry {
        let c = &self.cases[case as usize];
        debug_assert!(decisions < (1 << c.amb_count));
        self.subs[c.sub_start as usize + decisions as usize]
    }

    /// The triangles (as edge triples, [`CENTRE`] for a centre vertex) of `case`
    /// under `decisions`.
    pub(crate) fn triangles(&self, case: u8, decisions: u8) -> &[u8] {
        let s = self.sub(case, decisions);
        &self.tri_edges[s.start as usize..s.start as usize + 3 * s.count as usize]
    }
}

/// The tables, built on first use.
pub(crate) fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(build)
}

/// The directed face segments of `case`: `next[e]` is the edge that the segment
/// starting on crossed edge `e` ends on (or `u8::MAX`). `decisions` has bit `i`
/// set when the `i`-th ambiguous face (in face order) is joined.
pub(crate) fn face_segments(case: u8, decisions: u8) -> [u8; 12] {
    let mut next = [u8::MAX; 12];
    let mut amb_index = 0;
    for f in 0..6 {
        let q = face_corners(f);
        let solid = q.map(|k| (case >> k) & 1 == 1);
        let fe = [0, 1, 2, 3].map(|j| edge_between(q[j], q[(j + 1) % 4]));
        let crossings = (0..4).filter(|&j| solid[j] != solid[(j + 1) % 4]).count();
        if crossings == 4 {
            let joined = (decisions >> amb_index) & 1 == 1;
            amb_index += 1;
            for j in 0..4 {
                if !solid[j] && solid[(j + 1) % 4] {
                    let k = if joined { (j + 3) % 4 } else { (j + 1) % 4 };
                    next[fe[j] as usize] = fe[k];
                }
            }
        } else if crossings == 2 {
            let from = (0..4).find(|&j| !solid[j] && solid[(j + 1) % 4]);
            let to = (0..4).find(|&j| solid[j] && !solid[(j + 1) % 4]);
            if let (Some(j), Some(k)) = (from, to) {
                next[fe[j] as usize] = fe[k];
            }
        }
    }
    next
}

/// The loops of `case` under `decisions`, each in polygon order.
pub(crate) fn loops(case: u8, decisions: u8) -> Vec<Vec<u8>> {
    let next = face_segments(case, decisions);
    let crossed = crossed_edges(case);
    let mut seen = 0u16;
    let mut out = Vec::new();
    for e in 0..12u8 {
        if crossed & (1 << e) == 0 || seen & (1 << e) != 0 {
            continue;
        }
        let mut poly = Vec::new();
        let mut cur = e;
        while seen & (1 << cur) == 0 {
            seen |= 1 << cur;
            poly.push(cur);
            cur = next[cur as usize];
            assert!(cur < 12, "a crossed edge without an outgoing segment");
        }
        assert_eq!(cur, e, "segments must close into loops");
        out.push(poly);
    }
    out
}

/// Faces on the minus side of the cube (`side == 0`): bits 0, 2 and 4.
const MINUS_FACES: u8 = 0b01_0101;

/// True when the diagonal between edge points `a` and `b` shares no cube face:
/// no other cell can produce it.
fn diagonal_private(a: u8, b: u8) -> bool {
    edge_faces(a) & edge_faces(b) == 0
}

/// True when the diagonal between edge points `a` and `b` may be used. Besides
/// private diagonals, a diagonal lying on one of the cell's *minus* faces is
/// allowed: the neighbour across that face sees it as its *plus* face and never
/// uses it, so the chord still bounds exactly two triangles of this cell.
pub(crate) fn diagonal_allowed(a: u8, b: u8) -> bool {
    let shared = edge_faces(a) & edge_faces(b);
    shared & !MINUS_FACES == 0
}

/// Triangulates a loop. A fan whose diagonals are all private is preferred (tried
/// from each start); otherwise an interval search finds a triangulation whose
/// diagonals are all [allowed](diagonal_allowed). Triangles keep the loop
/// orientation. `None` when no such triangulation exists.
pub(crate) fn triangulate(poly: &[u8]) -> Option<Vec<[u8; 3]>> {
    let n = poly.len();
    assert!(n >= 3, "a loop has at least three points");
    for s in 0..n {
        let p = |i: usize| poly[(s + i) % n];
        if (2..n - 1).all(|i| diagonal_private(p(0), p(i))) {
            return Some((1..n - 1).map(|i| [p(0), p(i), p(i + 1)]).collect());
        }
    }
    // split[i][j]: an apex k that triangulates the sub-polygon i..=j (closed by
    // the chord i-j), or usize::MAX when there is none.
    let chord = |i: usize, j: usize| {
        j == i + 1 || (i == 0 && j == n - 1) || diagonal_allowed(poly[i], poly[j])
    };
    let mut split = vec![vec![usize::MAX; n]; n];
    for len in 2..n {
        for i in 0..n - len {
            let j = i + len;
            if !chord(i, j) {
                continue;
            }
            for k in i + 1..j {
                let left = k == i + 1 || split[i][k] != usize::MAX;
                let right = j == k + 1 || split[k][j] != usize::MAX;
                if left && right {
                    split[i][j] = k;
                    break;
                }
            }
        }
    }
    if split[0][n - 1] == usize::MAX {
        return None;
    }
    let mut tris = Vec::new();
    let mut stack = vec![(0, n - 1)];
    while let Some((i, j)) = stack.pop() {
        if j <= i + 1 {
            continue;
        }
        let k = split[i][j];
        tris.push([poly[i], poly[k], poly[j]]);
        stack.push((i, k));
        stack.push((k, j));
    }
    Some(tris)
}

fn build() -> Tables {
    let mut cases = [CaseEntry::default(); 256];
    let mut ambiguous = Vec::new();
    let mut subs = Vec::new();
    let mut tri_edges = Vec::new();
    let mut centre_loops = Vec::new();
    for case in 0..=255u8 {
        let amb_start = ambiguous.len() as u16;
        for f in 0..6u8 {
            let q = face_corners(f);
            let s = q.map(|k| (case >> k) & 1 == 1);
            if s[0] == s[2] && s[1] == s[3] && s[0] != s[1] {
                let (solid, air) = if s[0] {
                    ([q[0], q[2]], [q[1], q[3]])
                } else {
                    ([q[1], q[3]], [q[0], q[2]])
                };
                ambiguous.push(AmbiguousFace {
                    face: f,
                    solid,
                    air,
                });
            }
        }
        let amb_count = (ambiguous.len() - amb_start as usize) as u8;
        cases[case as usize] = CaseEntry {
            first: SubEntry::default(),
            amb_count,
            amb_start,
            sub_start: subs.len() as u32,
        };
        for decisions in 0..(1u8 << amb_count) {
            let start = tri_edges.len() as u32;
            let mut count = 0;
            let centre_start = centre_loops.len() as u16;
            let mut centre_len = 0;
            for poly in loops(case, decisions) {
                match triangulate(&poly) {
                    Some(tris) => {
                        for t in tris {
                            tri_edges.extend_from_slice(&t);
                            count += 1;
                        }
                    }
                    None => {
                        // At most one such loop fits in a cell: it has at least
                        // eight points and the others at least three.
                        assert_eq!(centre_len, 0, "two centre loops in case {case}");
                        centre_len = poly.len() as u8;
                        centre_loops.extend_from_slice(&poly);
                        for i in 0..poly.len() {
                            tri_edges.extend_from_slice(&[
                                CENTRE,
                                poly[i],
                                poly[(i + 1) % poly.len()],
                            ]);
                            count += 1;
                        }
                    }
                }
            }
            subs.push(SubEntry {
                start,
                count,
                centre_len,
                centre_start,
            });
        }
    }
    for entry in cases.iter_mut() {
        entry.first = subs[entry.sub_start as usize];
    }
    debug_assert!(tri_edges.iter().all(|&e| e <= CENTRE));
    let tally = std::array::from_fn(|case| {
        let entry = &cases[case];
        if entry.amb_count == 0 {
            tally_of(entry.first)
        } else {
            TALLY_AMBIGUOUS
        }
    });
    Tables {
        tally,
        cases,
        ambiguous,
        subs,
        tri_edges,
        centre_loops,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The facts behind `kernel::Bounds`, which sizes a fresh output before
    /// the scan: no cell has more triangles than crossed edges, and a cell
    /// with a centre vertex has at least `MIN_CENTRE_LOOP` crossed edges.
    #[test]
    fn cells_have_no_more_triangles_than_crossed_edges() {
        let t = tables();
        for case in 0..=255u8 {
            let crossed = crossed_edges(case).count_ones();
            for d in 0..1u16 << t.cases[case as usize].amb_count {
                let s = t.sub(case, d as u8);
                assert!(
                    u32::from(s.count) <= crossed,
                    "case {case:#010b}, decisions {d}"
                );
                if s.centre_len != 0 {
                    assert!(
                        u64::from(crossed) >= crate::cubes::kernel::MIN_CENTRE_LOOP,
                        "case {case:#010b}"
                    );
                }
            }
        }
    }

    #[test]
    fn geometry_is_consistent() {
        for e in 0..12u8 {
            let (a, b) = edge_corners(e);
            assert_eq!(a ^ b, 1 << edge_axis(e), "edge {e}");
            assert!(a < b);
            assert_eq!(edge_between(a, b), e);
            assert_eq!(edge_between(b, a), e);
            assert_eq!(edge_faces(e).count_ones(), 2, "edge {e}");
        }
        // Each face is a square whose corners, walked in order, turn
        // counter-clockwise around the outward normal.
        for f in 0..6u8 {
            let q = face_corners(f).map(|k| corner(k).map(|c| c as i32));
            let axis = (f / 2) as usize;
            let normal = if f % 2 == 1 { 1 } else { -1 };
            for j in 0..4 {
                let (a, b, c) = (q[j], q[(j + 1) % 4], q[(j + 2) % 4]);
                let d1 = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
                let d2 = [c[0] - b[0], c[1] - b[1], c[2] - b[2]];
                let cross = [
                    d1[1] * d2[2] - d1[2] * d2[1],
                    d1[2] * d2[0] - d1[0] * d2[2],
                    d1[0] * d2[1] - d1[1] * d2[0],
                ];
                let mut expect = [0; 3];
                expect[axis] = normal;
                assert_eq!(cross, expect, "face {f} corner {j}");
                assert_eq!(a[axis], (f % 2) as i32);
            }
        }
    }

    #[test]
    fn known_case_shapes() {
        let t = tables();
        assert_eq!(t.triangles(0, 0).len(), 0);
        assert_eq!(t.triangles(255, 0).len(), 0);
        // One solid corner: one triangle on edges 0 (x), 4 (y), 8 (z).
        let tri = t.triangles(1, 0);
        assert_eq!(tri.len(), 3);
        let mut sorted = tri.to_vec();
        sorted.sort();
        assert_eq!(sorted, vec![0, 4, 8]);
        // A half space (bottom face solid) is one quad.
        assert_eq!(t.triangles(0b0000_1111, 0).len(), 6);
        // The checkerboard has six ambiguous faces.
        assert_eq!(t.cases[0b0110_1001].amb_count, 6);
        // Two corners diagonal on the bottom face: one ambiguous face; joined
        // gives one hexagon (4 triangles), separated two triangles.
        let case = 0b0000_1001;
        assert_eq!(t.cases[case].amb_count, 1);
        assert_eq!(t.triangles(case as u8, 1).len(), 12);
        assert_eq!(t.triangles(case as u8, 0).len(), 6);
        let max_tris = t.subs.iter().map(|s| s.count).max().unwrap();
        assert!(max_tris <= 12, "{max_tris}");
        // A count adds up the tally words of 64 cells: each field holds the
        // sum without a carry into the next.
        for (case, &tally) in t.tally.iter().enumerate() {
            let entry = &t.cases[case];
            if entry.amb_count == 0 {
                let s = entry.first;
                assert_eq!(tally & 0xffff, u64::from(s.count), "case {case}");
                assert_eq!(tally >> 16, u64::from(s.centre_len != 0), "case {case}");
            } else {
                assert_eq!(tally, TALLY_AMBIGUOUS, "case {case}");
            }
        }
        assert!(64 * u32::from(max_tris) < 1 << 16);
        assert_eq!((t.tally[0], t.tally[255]), (0, 0));
        // Exactly the twelve known configurations need a centre vertex: a nine-point
        // loop around three ambiguous faces of one corner.
        let centres: Vec<_> = t.subs.iter().filter(|s| s.centre_len != 0).collect();
        assert_eq!(centres.len(), 12);
        // Nine spokes, plus one triangle for the checkerboards' remaining corner.
        assert!(
            centres
                .iter()
                .all(|s| s.centre_len == 9 && (s.count == 9 || s.count == 10))
        );
    }

    #[test]
    fn every_loop_uses_each_crossed_edge_once() {
        let t = tables();
        for case in 0..=255u8 {
            let n = t.cases[case as usize].amb_count;
            for d in 0..(1u8 << n) {
                let mut used = 0u16;
                for poly in loops(case, d) {
                    for &e in &poly {
                        assert_eq!(used & (1 << e), 0, "case {case} edge {e} twice");
                        used |= 1 << e;
                    }
                }
                assert_eq!(used, crossed_edges(case), "case {case}");
            }
        }
    }

    #[test]
    fn diagonals_never_join_points_of_one_face() {
        let t = tables();
        for case in 0..=255u8 {
            let n = t.cases[case as usize].amb_count;
            for d in 0..(1u8 << n) {
                let next = face_segments(case, d);
                let is_side = |a: u8, b: u8| next[a as usize] == b || next[b as usize] == a;
                let tris = t.triangles(case, d);
                for tri in tris.chunks(3) {
                    for k in 0..3 {
                        let (a, b) = (tri[k], tri[(k + 1) % 3]);
                        assert!(a != b);
                        if a == CENTRE || b == CENTRE {
                            continue;
                        }
                        assert!(
                            is_side(a, b) || diagonal_allowed(a, b),
                            "case {case} decisions {d}: diagonal {a}-{b}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn cell_triangles_form_oriented_disks() {
        // Inside one cell: each face segment bounds one triangle, run in its own
        // direction; every other chord (diagonal or centre spoke) bounds two
        // triangles, run once each way.
        let t = tables();
        for case in 0..=255u8 {
            let n = t.cases[case as usize].amb_count;
            for d in 0..(1u8 << n) {
                let next = face_segments(case, d);
                let mut directed = std::collections::HashMap::new();
                for tri in t.triangles(case, d).chunks(3) {
                    for k in 0..3 {
                        *directed.entry((tri[k], tri[(k + 1) % 3])).or_insert(0) += 1;
                    }
                }
                for (&(a, b), &count) in &directed {
                    assert_eq!(count, 1, "case {case} decisions {d}: {a}->{b} twice");
                    let back = directed.contains_key(&(b, a));
                    if a != CENTRE && b != CENTRE && next[a as usize] == b {
                        assert!(!back, "case {case} decisions {d}: segment {a}->{b} reused");
                    } else {
                        assert!(back, "case {case} decisions {d}: chord {a}-{b} open");
                    }
                }
                let segments = next.iter().filter(|&&e| e != u8::MAX).count();
                let on_segments = directed
                    .keys()
                    .filter(|&&(a, b)| a != CENTRE && next[a as usize] == b)
                    .count();
                assert_eq!(on_segments, segments, "case {case} decisions {d}");
            }
        }
    }

    #[test]
    fn complement_cases_flip_orientation() {
        // The complement of a pattern has the same loops run backwards when every
        // ambiguous decision is flipped too.
        let t = tables();
        for case in 0..=255u8 {
            let n = t.cases[case as usize].amb_count;
            for d in 0..(1u8 << n) {
                let a = face_segments(case, d);
                let b = face_segments(!case, !d & ((1 << n) - 1) as u8);
                for e in 0..12 {
                    if a[e] != u8::MAX {
                        assert_eq!(b[a[e] as usize] as usize, e, "case {case} edge {e}");
                    }
                }
            }
        }
    }
}
