//! Chaining one chunk's directed contour segments into polylines, reusing the
//! polylines' memory.
//!
//! `isoterra_mesh::ContourJoiner` does the same for segments of many chunks,
//! welding points by key through a hash map and truncating its output. Within
//! one chunk the mesher has already welded the points, so local indices are
//! enough, and a chunk must keep the point buffers of polylines it no longer
//! needs (`spare`): a dig that opens a cave loop and the undo that closes it
//! again then reuse the same memory instead of freeing and reallocating it.

use isoterra_mesh::{Polyline, Segments};

const NONE: u32 = u32::MAX;

/// Scratch memory for [`chain_into`]; reused across calls.
#[derive(Debug, Default, Clone)]
pub(crate) struct ChainScratch {
    next: Vec<u32>,
    has_prev: Vec<bool>,
    visited: Vec<bool>,
}

/// Chains `seg` into `out`: open chains first (each from its start, so a chain
/// cut by a chunk border comes out whole), then closed loops (the first point
/// not repeated at the end). Consecutive points at the same position merge;
/// loops left with fewer than three points and chains with fewer than two are
/// dropped, as `ContourJoiner` does. Polylines are
/// taken from `spare`, and the previous content of `out` goes back to `spare`,
/// so a steady loop reuses the same point buffers.
///
/// Segments are directed with solid on the left; every point has at most one
/// outgoing and one incoming segment, so following `next` links is enough.
pub(crate) fn chain_into(
    seg: &Segments,
    scratch: &mut ChainScratch,
    spare: &mut Vec<Polyline>,
    out: &mut Vec<Polyline>,
) {
    spare.append(out);
    let n = seg.points.len();
    let ChainScratch {
        next,
        has_prev,
        visited,
    } = scratch;
    next.clear();
    next.resize(n, NONE);
    has_prev.clear();
    has_prev.resize(n, false);
    visited.clear();
    visited.resize(n, false);
    for &[a, b] in &seg.segments {
        let (a, b) = (a as usize, b as usize);
        if a >= n || b >= n || a == b {
            continue;
        }
        next[a] = b as u32;
        has_prev[b] = true;
    }
    for pass in 0..2 {
        for start in 0..n {
            if visited[start] || next[start] == NONE || (pass == 0 && has_prev[start]) {
                continue;
            }
            let mut line = spare.pop().unwrap_or_default();
            line.points.clear();
            line.closed = false;
            let mut cur = start;
            loop {
                visited[cur] = true;
                let p = seg.points[cur];
                // Points at the same position (a node exactly at iso) merge.
                if line.points.last() != Some(&p) {
                    line.points.push(p);
                }
                let nx = next[cur];
                if nx == NONE {
                    break;
                }
                if nx as usize == start {
                    line.closed = true;
                    break;
                }
                if visited[nx as usize] {
                    break;
                }
                cur = nx as usize;
            }
            let p = &mut line.points;
            if line.closed && p.len() > 1 && p.last() == p.first() {
                p.pop();
            }
            let min = if line.closed { 3 } else { 2 };
            if p.len() >= min {
                out.push(line);
            } else {
                spare.push(line);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use isoterra_mesh::EdgeKey;

    fn segs(points: &[[f32; 2]], pairs: &[[u32; 2]]) -> Segments {
        let mut s = Segments::default();
        s.points.extend_from_slice(points);
        s.keys.extend((0..points.len() as u64).map(EdgeKey));
        s.segments.extend_from_slice(pairs);
        s
    }

    #[test]
    fn open_chain_from_its_start_and_a_loop() {
        let pts = [
            [0.0, 0.0],
            [1.0, 0.0],
            [2.0, 0.0],
            [5.0, 5.0],
            [6.0, 5.0],
            [6.0, 6.0],
        ];
        // Chain 1 -> 2, 0 -> 1 listed out of order; loop 3 -> 4 -> 5 -> 3.
        let s = segs(&pts, &[[1, 2], [3, 4], [0, 1], [4, 5], [5, 3]]);
        let mut scratch = ChainScratch::default();
        let mut spare = Vec::new();
        let mut out = Vec::new();
        chain_into(&s, &mut scratch, &mut spare, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].points, vec![[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]);
        assert!(!out[0].closed);
        assert_eq!(out[1].points.len(), 3);
        assert!(out[1].closed);
        // Reuse: the second call recycles the polylines.
        chain_into(&s, &mut scratch, &mut spare, &mut out);
        assert_eq!(out.len(), 2);
        assert!(spare.is_empty());
    }

    #[test]
    fn degenerate_loops_go_back_to_spare() {
        // Loop 0 -> 1 -> 2 -> 0 where 1 and 2 sit at the same position (a node
        // exactly at iso): two distinct points, so it encloses nothing.
        let pts = [[0.0, 0.0], [1.0, 0.0], [1.0, 0.0], [3.0, 3.0], [4.0, 3.0]];
        let s = segs(&pts, &[[0, 1], [1, 2], [2, 0], [3, 4]]);
        let mut scratch = ChainScratch::default();
        let mut spare = Vec::new();
        let mut out = Vec::new();
        chain_into(&s, &mut scratch, &mut spare, &mut out);
        assert_eq!(
            out,
            vec![Polyline::new(vec![[3.0, 3.0], [4.0, 3.0]], false)]
        );
        assert_eq!(spare.len(), 1);
    }

    #[test]
    fn same_polylines_as_the_joiner() {
        let pts = [
            [0.0, 0.0],
            [1.0, 0.0],
            [1.0, 1.0],
            [5.0, 5.0],
            [6.0, 5.0],
            [7.0, 5.0],
        ];
        let s = segs(&pts, &[[1, 2], [4, 5], [2, 0], [0, 1], [3, 4]]);
        let mut out = Vec::new();
        chain_into(&s, &mut ChainScratch::default(), &mut Vec::new(), &mut out);
        let mut joined = Vec::new();
        isoterra_mesh::ContourJoiner::new().join(&[&s], &mut joined);
        assert_eq!(out, joined);
    }
}
