//! Allocation-free Ramer–Douglas–Peucker simplification into reusable buffers.

/// Scratch memory for [`rdp_into`]; reused across calls.
#[derive(Debug, Default, Clone)]
pub(crate) struct RdpScratch {
    keep: Vec<bool>,
    stack: Vec<(u32, u32)>,
}

/// Distance from `p` to the segment `a`–`b` (to `a` when the segment is a point).
#[inline]
fn dist_to_segment(p: [f32; 2], a: [f32; 2], b: [f32; 2]) -> f32 {
    let (abx, aby) = (b[0] - a[0], b[1] - a[1]);
    let (apx, apy) = (p[0] - a[0], p[1] - a[1]);
    let len2 = abx * abx + aby * aby;
    let t = if len2 > 0.0 {
        ((apx * abx + apy * aby) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (dx, dy) = (apx - t * abx, apy - t * aby);
    (dx * dx + dy * dy).sqrt()
}

/// Simplifies `points` with Ramer–Douglas–Peucker into `out` (cleared first),
/// keeping every point farther than `tolerance` from the simplified line.
///
/// An open chain keeps both ends (so chains cut at chunk borders still meet).
/// A closed loop (first point not repeated) is split at point 0 and the point
/// farthest from it, and both halves are simplified.
pub(crate) fn rdp_into(
    points: &[[f32; 2]],
    closed: bool,
    tolerance: f32,
    scratch: &mut RdpScratch,
    out: &mut Vec<[f32; 2]>,
) {
    out.clear();
    let n = points.len();
    if n < 3 {
        out.extend_from_slice(points);
        return;
    }
    // A virtual array of `m` points; for a closed loop point `n` is point 0 again.
    let m = if closed { n + 1 } else { n };
    let at = |i: u32| points[i as usize % n];
    let keep = &mut scratch.keep;
    keep.clear();
    keep.resize(m, false);
    keep[0] = true;
    keep[m - 1] = true;
    let stack = &mut scratch.stack;
    stack.clear();
    if closed {
        let p0 = points[0];
        let mut far = 0usize;
        let mut best = -1.0f32;
        for (i, p) in points.iter().enumerate().skip(1) {
            let d = (p[0] - p0[0]).powi(2) + (p[1] - p0[1]).powi(2);
            if d > best {
                best = d;
                far = i;
            }
        }
        keep[far] = true;
        stack.push((0, far as u32));
        stack.push((far as u32, n as u32));
    } else {
        stack.push((0, (n - 1) as u32));
    }
    while let Some((a, b)) = stack.pop() {
        if b <= a + 1 {
            continue;
        }
        let (pa, pb) = (at(a), at(b));
        let mut worst = a;
        let mut worst_d = tolerance;
        for i in a + 1..b {
            let d = dist_to_segment(at(i), pa, pb);
            if d > worst_d {
                worst_d = d;
                worst = i;
            }
        }
        if worst != a {
            keep[worst as usize] = true;
            stack.push((a, worst));
            stack.push((worst, b));
        }
    }
    let limit = if closed { n } else { m };
    for i in 0..limit {
        if keep[i] {
            out.push(points[i]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(points: &[[f32; 2]], closed: bool, tol: f32) -> Vec<[f32; 2]> {
        let mut s = RdpScratch::default();
        let mut out = Vec::new();
        rdp_into(points, closed, tol, &mut s, &mut out);
        out
    }

    #[test]
    fn straight_line_keeps_its_ends() {
        let pts: Vec<[f32; 2]> = (0..10).map(|i| [i as f32, 0.0]).collect();
        assert_eq!(run(&pts, false, 0.01), vec![[0.0, 0.0], [9.0, 0.0]]);
    }

    #[test]
    fn corner_is_kept_and_small_bumps_dropped() {
        let pts = [[0.0, 0.0], [1.0, 0.01], [2.0, 0.0], [2.0, 1.0], [2.0, 2.0]];
        assert_eq!(
            run(&pts, false, 0.05),
            vec![[0.0, 0.0], [2.0, 0.0], [2.0, 2.0]]
        );
        assert_eq!(run(&pts, false, 0.0).len(), 4);
    }

    #[test]
    fn closed_square_keeps_its_corners() {
        let mut pts = Vec::new();
        for i in 0..4 {
            pts.push([i as f32, 0.0]);
        }
        for i in 0..4 {
            pts.push([4.0, i as f32]);
        }
        for i in 0..4 {
            pts.push([4.0 - i as f32, 4.0]);
        }
        for i in 0..4 {
            pts.push([0.0, 4.0 - i as f32]);
        }
        let out = run(&pts, true, 0.1);
        assert_eq!(out, vec![[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0]]);
    }

    #[test]
    fn every_dropped_point_is_within_tolerance() {
        let pts: Vec<[f32; 2]> = (0..200)
            .map(|i| {
                let a = i as f32 * 0.05;
                [a * 3.0, (a * 1.7).sin() * 2.0]
            })
            .collect();
        let tol = 0.05;
        let out = run(&pts, false, tol);
        assert!(out.len() < pts.len());
        for p in &pts {
            let d = out
                .windows(2)
                .map(|w| dist_to_segment(*p, w[0], w[1]))
                .fold(f32::INFINITY, f32::min);
            assert!(d <= tol + 1e-5, "{p:?} is {d} away");
        }
    }
}
