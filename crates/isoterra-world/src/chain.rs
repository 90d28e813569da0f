//! Chaining one chunk's directed contour segments into polylines, reusing the
//! polylines' memory.

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
/// cut by a chunk border comes out whole), then closed loops. Polylines are
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
            out.push(line);
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
}
