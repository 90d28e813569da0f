//! Per-case fill triangles and contour segments, derived (at compile time) from
//! one rule instead of hand-written tables.
//!
//! A cell has eight *slots* walked counter-clockwise:
//!
//! ```text
//!   c3 ---- e2 ---- c2        slot 0 c0 (x, y)        slot 1 e0 bottom edge
//!   |                |        slot 2 c1 (x+1, y)      slot 3 e1 right edge
//!   e3              e1        slot 4 c2 (x+1, y+1)    slot 5 e2 top edge
//!   |                |        slot 6 c3 (x, y+1)      slot 7 e3 left edge
//!   c0 ---- e0 ---- c1
//! ```
//!
//! Corner `ck` sets bit `k` of the case index when solid. Edge slot `2k+1`
//! joins corners `k` and `k+1 (mod 4)` and is crossed when they differ.
//! The solid part of a cell is the convex polygon of its solid corners and
//! crossed edges in slot order, so it is filled by a fan from its first point.
//! Contour segments are the polygon sides that join two edge points, taken in
//! the same counter-clockwise order, which leaves the solid on their left.
//! Saddles (5 and 10) whose centre is empty are two corner triangles instead.

/// Triangles (slot triples) and directed segments (slot pairs) of one case.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CaseInfo {
    pub tris: [[u8; 3]; 4],
    pub ntri: u8,
    pub segs: [[u8; 2]; 2],
    pub nseg: u8,
}

/// Table index of case 5 with a solid centre (corners c0 and c2 connected).
pub(crate) const CONNECTED_5: usize = 16;
/// Table index of case 10 with a solid centre (corners c1 and c3 connected).
pub(crate) const CONNECTED_10: usize = 17;

const fn build(case: u8, connected: bool) -> CaseInfo {
    let mut info = CaseInfo {
        tris: [[0; 3]; 4],
        ntri: 0,
        segs: [[0; 2]; 2],
        nseg: 0,
    };
    let saddle = case == 5 || case == 10;
    if saddle && !connected {
        // Two separate corner triangles: (corner, next edge, previous edge).
        let mut k = 0;
        while k < 4 {
            if case & (1 << k) != 0 {
                let c = 2 * k as u8;
                let next = c + 1;
                let prev = (c + 7) % 8;
                info.tris[info.ntri as usize] = [c, next, prev];
                info.ntri += 1;
                info.segs[info.nseg as usize] = [next, prev];
                info.nseg += 1;
            }
            k += 1;
        }
        return info;
    }
    let mut poly = [0u8; 8];
    let mut n = 0;
    let mut k = 0;
    while k < 4 {
        let here = case & (1 << k) != 0;
        let there = case & (1 << ((k + 1) % 4)) != 0;
        if here {
            poly[n] = 2 * k as u8;
            n += 1;
        }
        if here != there {
            poly[n] = 2 * k as u8 + 1;
            n += 1;
        }
        k += 1;
    }
    let mut i = 1;
    while i + 1 < n {
        info.tris[info.ntri as usize] = [poly[0], poly[i], poly[i + 1]];
        info.ntri += 1;
        i += 1;
    }
    let mut i = 0;
    while i < n {
        let a = poly[i];
        let b = poly[(i + 1) % n];
        if a % 2 == 1 && b % 2 == 1 {
            info.segs[info.nseg as usize] = [a, b];
            info.nseg += 1;
        }
        i += 1;
    }
    info
}

const fn build_all() -> [CaseInfo; 18] {
    let mut out = [build(0, false); 18];
    let mut c = 0;
    while c < 16 {
        out[c] = build(c as u8, false);
        c += 1;
    }
    out[CONNECTED_5] = build(5, true);
    out[CONNECTED_10] = build(10, true);
    out
}

/// Cases 0..=15 (saddles separated), then the two connected saddles.
pub(crate) static CASES: [CaseInfo; 18] = build_all();

/// The table index for a case, given the saddle decision.
#[inline]
pub(crate) fn table_index(case: u8, connected: bool) -> usize {
    match (case, connected) {
        (5, true) => CONNECTED_5,
        (10, true) => CONNECTED_10,
        _ => case as usize,
    }
}

/// The saddle rule every contour of this crate follows: a cell whose
/// diagonal corners lie on the same side of `iso` joins its solid corners
/// when its centre (the average of the four corner values) is at or above
/// `iso`. Exact: the sum is taken in `f64`.
#[inline]
pub fn centre_is_solid(v0: f32, v1: f32, v2: f32, v3: f32, iso: f32) -> bool {
    // f64 cannot overflow for four f32 values; `sum / 4 >= iso` is exact as `sum >= 4 iso`.
    (v0 as f64 + v1 as f64 + v2 as f64 + v3 as f64) >= 4.0 * iso as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(i: usize) -> Vec<[u8; 2]> {
        CASES[i].segs[..CASES[i].nseg as usize].to_vec()
    }

    fn tris(i: usize) -> Vec<[u8; 3]> {
        CASES[i].tris[..CASES[i].ntri as usize].to_vec()
    }

    #[test]
    fn hand_checked_segments() {
        // Slots: e0 = 1, e1 = 3, e2 = 5, e3 = 7.
        let expect: [&[[u8; 2]]; 16] = [
            &[],
            &[[1, 7]],
            &[[3, 1]],
            &[[3, 7]],
            &[[5, 3]],
            &[[1, 7], [5, 3]],
            &[[5, 1]],
            &[[5, 7]],
            &[[7, 5]],
            &[[1, 5]],
            &[[3, 1], [7, 5]],
            &[[3, 5]],
            &[[7, 3]],
            &[[1, 3]],
            &[[7, 1]],
            &[],
        ];
        for (c, e) in expect.iter().enumerate() {
            assert_eq!(segs(c), e.to_vec(), "case {c}");
        }
        assert_eq!(segs(CONNECTED_5), vec![[1, 3], [5, 7]]);
        assert_eq!(segs(CONNECTED_10), vec![[3, 5], [7, 1]]);
    }

    #[test]
    fn hand_checked_triangles() {
        assert!(tris(0).is_empty());
        assert_eq!(tris(1), vec![[0, 1, 7]]);
        assert_eq!(tris(3), vec![[0, 2, 3], [0, 3, 7]]);
        assert_eq!(tris(7), vec![[0, 2, 4], [0, 4, 5], [0, 5, 7]]);
        assert_eq!(tris(15), vec![[0, 2, 4], [0, 4, 6]]);
        assert_eq!(tris(5), vec![[0, 1, 7], [4, 5, 3]]);
        assert_eq!(tris(10), vec![[2, 3, 1], [6, 7, 5]]);
        assert_eq!(tris(CONNECTED_5).len(), 4);
        assert_eq!(tris(CONNECTED_10).len(), 4);
    }

    #[test]
    fn table_index_and_centre_rule() {
        assert_eq!(table_index(5, true), CONNECTED_5);
        assert_eq!(table_index(5, false), 5);
        assert_eq!(table_index(10, true), CONNECTED_10);
        assert_eq!(table_index(3, true), 3);
        assert!(centre_is_solid(1.0, -1.0, 1.0, -1.0, 0.0));
        assert!(!centre_is_solid(1.0, -1.1, 1.0, -1.0, 0.0));
        assert!(centre_is_solid(
            f32::MAX,
            f32::MAX,
            f32::MAX,
            f32::MAX,
            f32::MAX
        ));
    }
}
