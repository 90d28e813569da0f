//! Chaining contour segments into polylines.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::Segments;
use crate::scan::NONE;

/// A contour polyline. Closed loops do not repeat the first point at the end.
/// Outer boundaries run counter-clockwise, holes clockwise (solid on the left).
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Polyline {
    /// Points in world units.
    pub points: Vec<[f32; 2]>,
    /// True for a closed loop.
    pub closed: bool,
}

impl Polyline {
    /// A polyline from points.
    pub fn new(points: Vec<[f32; 2]>, closed: bool) -> Self {
        Polyline { points, closed }
    }

    /// Signed area of the loop (positive when counter-clockwise); 0 for an open chain.
    pub fn signed_area(&self) -> f64 {
        if self.closed {
            signed_area(&self.points)
        } else {
            0.0
        }
    }

    /// Length in world units, including the closing side of a loop.
    pub fn length(&self) -> f64 {
        let p = &self.points;
        let mut sum: f64 = p.windows(2).map(|w| dist(w[0], w[1])).sum();
        if self.closed && p.len() > 2 {
            sum += dist(p[p.len() - 1], p[0]);
        }
        sum
    }
}

fn dist(a: [f32; 2], b: [f32; 2]) -> f64 {
    let dx = b[0] as f64 - a[0] as f64;
    let dy = b[1] as f64 - a[1] as f64;
    (dx * dx + dy * dy).sqrt()
}

/// "Visited" marker in a `next` array.
pub(crate) const DONE: u32 = u32::MAX - 1;

/// Writes polylines into a caller's vector, reusing the point buffers of the
/// polylines already there.
pub(crate) struct PolyWriter<'a> {
    out: &'a mut Vec<Polyline>,
    n: usize,
}

impl<'a> PolyWriter<'a> {
    pub(crate) fn new(out: &'a mut Vec<Polyline>) -> Self {
        PolyWriter { out, n: 0 }
    }

    /// Starts a new, empty polyline.
    fn begin(&mut self) -> &mut Polyline {
        if self.n == self.out.len() {
            self.out.push(Polyline::default());
        }
        let line = &mut self.out[self.n];
        line.points.clear();
        line.closed = false;
        self.n += 1;
        line
    }

    /// Keeps the last polyline unless it is degenerate: a loop with fewer than
    /// three distinct points, or a chain with fewer than two.
    fn end(&mut self) {
        let line = &mut self.out[self.n - 1];
        let p = &mut line.points;
        if line.closed && p.len() > 1 && p[p.len() - 1] == p[0] {
            p.pop();
        }
        let min = if line.closed { 3 } else { 2 };
        if p.len() < min {
            self.n -= 1;
        }
    }

    /// Drops the polylines past the ones written.
    pub(crate) fn finish(self) {
        self.out.truncate(self.n);
    }
}

#[inline(always)]
fn push_point(points: &mut Vec<[f32; 2]>, p: [f32; 2]) {
    if points.last() != Some(&p) {
        points.push(p);
    }
}

/// Follows `next` links into polylines: first open chains from their start
/// points (points with no predecessor), in id order, then closed loops from
/// their lowest id. Marks visited points `DONE`.
pub(crate) fn walk_chains(
    points: &[[f32; 2]],
    next: &mut [u32],
    has_prev: &[bool],
    w: &mut PolyWriter<'_>,
) {
    for start in 0..next.len() {
        if !has_prev[start] && next[start] < DONE {
            walk(start as u32, points, next, w);
        }
    }
    for start in 0..next.len() {
        if next[start] < DONE {
            walk(start as u32, points, next, w);
        }
    }
}

fn walk(start: u32, points: &[[f32; 2]], next: &mut [u32], w: &mut PolyWriter<'_>) {
    let line = w.begin();
    let pts = &mut line.points;
    let mut cur = start;
    loop {
        push_point(pts, points[cur as usize]);
        let nx = next[cur as usize];
        next[cur as usize] = DONE;
        if nx == NONE {
            break;
        }
        if nx == start {
            line.closed = true;
            break;
        }
        if next[nx as usize] == DONE {
            // Runs into a chain already walked (only with inconsistent input).
            push_point(pts, points[nx as usize]);
            break;
        }
        cur = nx;
    }
    w.end();
}

/// A small, well-mixing hasher for `u64` keys (splitmix64 finaliser).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0 ^ b as u64);
        }
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        let mut x = v ^ self.0.rotate_left(29);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        self.0 = x ^ (x >> 31);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Joins segments (from one or several chunks) into polylines by their global keys.
///
/// Points of different parts with the same [`EdgeKey`](crate::EdgeKey) are the same
/// point (its position is taken from the first part that holds it). Each point
/// is then followed along its outgoing segment. The result:
///
/// * open chains first, each started at a point without an incoming segment (the
///   contour leaves the meshed area there), in order of first appearance;
/// * then closed loops (the first point is not repeated at the end), each
///   started at its earliest point;
/// * consecutive points at exactly the same position (a contour passing through
///   a node whose value equals `iso`) are merged, and loops left with fewer than
///   three points or chains with fewer than two (they enclose nothing) are dropped.
///
/// Joining the segments of every chunk of a field gives the same polylines as
/// joining the segments of the whole field, up to their order and the point a
/// loop starts at.
///
/// Input that [`MarchingSquares`](crate::MarchingSquares) cannot produce is handled
/// without panicking: segments with out-of-range indices or joining a point to
/// itself are skipped, identical duplicates are ignored, and a second, different
/// segment leaving the same point becomes its own two-point chain.
#[derive(Debug, Default, Clone)]
pub struct ContourJoiner {
    map: HashMap<u64, u32, BuildHasherDefault<KeyHasher>>,
    points: Vec<[f32; 2]>,
    next: Vec<u32>,
    has_prev: Vec<bool>,
    local: Vec<u32>,
    extra: Vec<[u32; 2]>,
}

impl ContourJoiner {
    /// A joiner with empty scratch buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Chains all segments of `parts` into `out` (cleared first): open chains
    /// from their ends first, then closed loops.
    ///
    /// The polylines already in `out` lend their point buffers, so a steady
    /// loop that reuses `out` allocates nothing once warmed up.
    pub fn join(&mut self, parts: &[&Segments], out: &mut Vec<Polyline>) {
        self.map.clear();
        self.points.clear();
        self.next.clear();
        self.has_prev.clear();
        self.extra.clear();
        for part in parts {
            let n = part.points.len().min(part.keys.len());
            self.local.clear();
            for i in 0..n {
                let key = part.keys[i].0;
                let points = &mut self.points;
                let next = &mut self.next;
                let has_prev = &mut self.has_prev;
                let id = *self.map.entry(key).or_insert_with(|| {
                    points.push(part.points[i]);
                    next.push(NONE);
                    has_prev.push(false);
                    (points.len() - 1) as u32
                });
                self.local.push(id);
            }
            for &[a, b] in &part.segments {
                let (a, b) = (a as usize, b as usize);
                if a >= n || b >= n {
                    continue;
                }
                let (ga, gb) = (self.local[a], self.local[b]);
                if ga == gb {
                    continue;
                }
                let slot = &mut self.next[ga as usize];
                if *slot == NONE {
                    *slot = gb;
                    self.has_prev[gb as usize] = true;
                } else if *slot != gb {
                    self.extra.push([ga, gb]);
                }
            }
        }
        let mut w = PolyWriter::new(out);
        walk_chains(&self.points, &mut self.next, &self.has_prev, &mut w);
        for &[a, b] in &self.extra {
            let line = w.begin();
            push_point(&mut line.points, self.points[a as usize]);
            push_point(&mut line.points, self.points[b as usize]);
            w.end();
        }
        w.finish();
    }
}

/// Signed area of a closed polygon (positive when counter-clockwise).
///
/// The polygon is closed implicitly (the last point joins the first). Computed
/// in `f64` relative to the first point.
pub fn signed_area(points: &[[f32; 2]]) -> f64 {
    if points.len() < 3 {
        return 0.0;
    }
    let (x0, y0) = (points[0][0] as f64, points[0][1] as f64);
    let mut sum = 0.0;
    for w in points[1..].windows(2) {
        let (ax, ay) = (w[0][0] as f64 - x0, w[0][1] as f64 - y0);
        let (bx, by) = (w[1][0] as f64 - x0, w[1][1] as f64 - y0);
        sum += ax * by - ay * bx;
    }
    0.5 * sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EdgeKey;

    fn seg(points: &[[f32; 2]], segments: &[[u32; 2]]) -> Segments {
        Segments {
            points: points.to_vec(),
            keys: (0..points.len() as u32)
                .map(|i| EdgeKey::node(i, 0))
                .collect(),
            segments: segments.to_vec(),
        }
    }

    #[test]
    fn area_of_unit_square_both_ways() {
        let sq = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
        assert_eq!(signed_area(&sq), 1.0);
        let mut rev = sq;
        rev.reverse();
        assert_eq!(signed_area(&rev), -1.0);
        assert_eq!(signed_area(&sq[..2]), 0.0);
    }

    #[test]
    fn joins_loop_and_chain() {
        let s = seg(
            &[
                [0.0, 0.0],
                [1.0, 0.0],
                [1.0, 1.0],
                [5.0, 5.0],
                [6.0, 5.0],
                [7.0, 5.0],
            ],
            &[[1, 2], [4, 5], [2, 0], [0, 1], [3, 4]],
        );
        let mut out = vec![Polyline::default(); 5];
        ContourJoiner::new().join(&[&s], &mut out);
        assert_eq!(out.len(), 2);
        assert!(!out[0].closed);
        assert_eq!(out[0].points, vec![[5.0, 5.0], [6.0, 5.0], [7.0, 5.0]]);
        assert!(out[1].closed);
        assert_eq!(out[1].points, vec![[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]]);
    }

    #[test]
    fn malformed_input_does_not_panic() {
        let s = seg(
            &[[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]],
            &[[0, 1], [0, 1], [0, 2], [1, 1], [9, 0], [2, 1]],
        );
        let mut out = Vec::new();
        ContourJoiner::new().join(&[&s], &mut out);
        let total: usize = out.iter().map(|l| l.points.len()).sum();
        assert!(total >= 3);
    }
}
