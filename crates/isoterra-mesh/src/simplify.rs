//! Polyline simplification with a guaranteed tolerance.
//!
//! Both methods keep every original point within `tolerance` (world units) of
//! the simplified polyline, keep the end points of open chains, and keep at
//! least three points of a closed loop. Callers who think in cells pass
//! `cells * cell_size`. Fill meshes are never simplified; this is for colliders,
//! outlines and exports.

use crate::{MeshError, Polyline};

/// Reusable scratch for [`simplify_rdp`] and [`simplify_greedy`], for loops that
/// must not allocate once warmed up.
#[derive(Debug, Default, Clone)]
pub struct Simplifier {
    keep: Vec<bool>,
    stack: Vec<(usize, usize)>,
}

fn check(line: &Polyline, tolerance: f32) -> Result<(), MeshError> {
    if !(tolerance.is_finite() && tolerance >= 0.0) {
        return Err(MeshError::param(
            "tolerance",
            tolerance,
            "must be finite and at least zero (world units; pass cells * cell_size)",
        ));
    }
    if let Some(i) = line
        .points
        .iter()
        .position(|p| !(p[0].is_finite() && p[1].is_finite()))
    {
        return Err(MeshError::param(
            "points",
            format!("index {i}: {:?}", line.points[i]),
            "every point must be finite",
        ));
    }
    Ok(())
}

#[inline]
fn sub(a: [f32; 2], b: [f32; 2]) -> [f64; 2] {
    [a[0] as f64 - b[0] as f64, a[1] as f64 - b[1] as f64]
}

/// Squared distance from `p` to the segment `a`-`b`.
pub(crate) fn seg_dist2(p: [f32; 2], a: [f32; 2], b: [f32; 2]) -> f64 {
    let ab = sub(b, a);
    let ap = sub(p, a);
    let l2 = ab[0] * ab[0] + ab[1] * ab[1];
    let t = if l2 > 0.0 {
        ((ap[0] * ab[0] + ap[1] * ab[1]) / l2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let dx = ap[0] - t * ab[0];
    let dy = ap[1] - t * ab[1];
    dx * dx + dy * dy
}

impl Simplifier {
    /// A simplifier with empty scratch buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Ramer–Douglas–Peucker into `out` (its buffer is reused). A closed loop is
    /// split at its first point and the point farthest from it, and both halves
    /// are simplified.
    ///
    /// # Errors
    ///
    /// [`MeshError::InvalidParameter`] for a negative or non-finite tolerance or a
    /// non-finite point (`out` is untouched).
    pub fn rdp(
        &mut self,
        line: &Polyline,
        tolerance: f32,
        out: &mut Polyline,
    ) -> Result<(), MeshError> {
        check(line, tolerance)?;
        let p = &line.points;
        let n = p.len();
        let small = if line.closed { n <= 3 } else { n <= 2 };
        if small {
            copy_into(line, out);
            return Ok(());
        }
        let tol2 = tolerance as f64 * tolerance as f64;
        self.keep.clear();
        self.keep.resize(n, false);
        self.keep[0] = true;
        if line.closed {
            let k = farthest_from(p, 0);
            self.keep[k] = true;
            self.rdp_range(p, 0, k, tol2);
            self.rdp_range(p, k, n, tol2);
            self.ensure_three(p, k);
        } else {
            self.keep[n - 1] = true;
            self.rdp_range(p, 0, n - 1, tol2);
        }
        self.emit(line, out);
        Ok(())
    }

    /// Greedy sleeve fitting into `out` (its buffer is reused): from each kept
    /// point, the next kept point is the farthest one such that every point in
    /// between stays within `tolerance` of the segment. One pass, `O(n)`.
    ///
    /// # Errors
    ///
    /// As [`Simplifier::rdp`].
    pub fn greedy(
        &mut self,
        line: &Polyline,
        tolerance: f32,
        out: &mut Polyline,
    ) -> Result<(), MeshError> {
        check(line, tolerance)?;
        let p = &line.points;
        let n = p.len();
        let small = if line.closed { n <= 3 } else { n <= 2 };
        if small {
            copy_into(line, out);
            return Ok(());
        }
        self.keep.clear();
        self.keep.resize(n, false);
        // A closed loop is walked 0, 1, ..., n-1, 0.
        let len = if line.closed { n + 1 } else { n };
        let at = |s: usize| p[s % n];
        let tol = tolerance as f64;
        self.keep[0] = true;
        let mut sleeve = Sleeve::new(at(0), tol);
        let mut j = 1;
        while j < len {
            if sleeve.accepts(at(j)) {
                sleeve.add(at(j));
                j += 1;
            } else {
                // The previous point is the farthest acceptable one.
                self.keep[(j - 1) % n] = true;
                sleeve = Sleeve::new(at(j - 1), tol);
            }
        }
        self.keep[(len - 1) % n] = true;
        if line.closed {
            let k = farthest_from(p, 0);
            self.ensure_three(p, k);
        }
        self.emit(line, out);
        Ok(())
    }

    /// RDP over sequence positions `a..=b`, where position `n` means point 0.
    fn rdp_range(&mut self, p: &[[f32; 2]], a: usize, b: usize, tol2: f64) {
        let n = p.len();
        self.stack.clear();
        self.stack.push((a, b));
        while let Some((a, b)) = self.stack.pop() {
            if b <= a + 1 {
                continue;
            }
            let (pa, pb) = (p[a % n], p[b % n]);
            let mut best = a;
            let mut best_d = -1.0;
            for (m, &pm) in p.iter().enumerate().take(b).skip(a + 1) {
                let d = seg_dist2(pm, pa, pb);
                if d > best_d {
                    best_d = d;
                    best = m;
                }
            }
            if best_d > tol2 {
                self.keep[best] = true;
                self.stack.push((a, best));
                self.stack.push((best, b));
            }
        }
    }

    /// Keeps at least three points of a loop: point 0, point `k` (farthest from
    /// 0) and the point farthest from the segment between them.
    fn ensure_three(&mut self, p: &[[f32; 2]], k: usize) {
        let kept = self.keep.iter().filter(|&&b| b).count();
        if kept >= 3 {
            return;
        }
        self.keep[k] = true;
        let mut best = None;
        let mut best_d = -1.0;
        for (m, &pm) in p.iter().enumerate() {
            if self.keep[m] {
                continue;
            }
            let d = seg_dist2(pm, p[0], p[k]);
            if d > best_d {
                best_d = d;
                best = Some(m);
            }
        }
        if let Some(m) = best {
            self.keep[m] = true;
        }
    }

    fn emit(&self, line: &Polyline, out: &mut Polyline) {
        out.points.clear();
        out.closed = line.closed;
        out.points.extend(
            line.points
                .iter()
                .zip(&self.keep)
                .filter(|(_, k)| **k)
                .map(|(p, _)| *p),
        );
    }
}

fn copy_into(line: &Polyline, out: &mut Polyline) {
    out.points.clear();
    out.points.extend_from_slice(&line.points);
    out.closed = line.closed;
}

/// Index of the point farthest from point `i` (a different index when `n > 1`).
fn farthest_from(p: &[[f32; 2]], i: usize) -> usize {
    let mut best = if i == 0 { 1 } else { 0 };
    let mut best_d = -1.0;
    for (m, &pm) in p.iter().enumerate() {
        if m == i {
            continue;
        }
        let d = sub(pm, p[i]);
        let d = d[0] * d[0] + d[1] * d[1];
        if d > best_d {
            best_d = d;
            best = m;
        }
    }
    best
}

/// The set of directions from an anchor along which a segment passes within
/// `tol` of every point added so far.
struct Sleeve {
    anchor: [f32; 2],
    tol: f64,
    /// Largest distance of an added point from the anchor.
    rmax: f64,
    /// Reference direction (unit) once a point farther than `tol` was added.
    reference: Option<[f64; 2]>,
    /// Allowed angles relative to `reference`.
    lo: f64,
    hi: f64,
}

impl Sleeve {
    fn new(anchor: [f32; 2], tol: f64) -> Self {
        Sleeve {
            anchor,
            tol,
            rmax: 0.0,
            reference: None,
            lo: f64::NEG_INFINITY,
            hi: f64::INFINITY,
        }
    }

    fn angle(&self, v: [f64; 2]) -> f64 {
        match self.reference {
            Some(r) => (r[0] * v[1] - r[1] * v[0]).atan2(r[0] * v[0] + r[1] * v[1]),
            None => 0.0,
        }
    }

    /// True when the segment anchor -> `q` stays within `tol` of every added point.
    ///
    /// An added point at distance `d > tol` constrains the direction to within
    /// `asin(tol / d)` of its own; requiring `|q - anchor| >= rmax` keeps the
    /// foot of every added point inside the segment.
    fn accepts(&self, q: [f32; 2]) -> bool {
        let v = sub(q, self.anchor);
        let d = (v[0] * v[0] + v[1] * v[1]).sqrt();
        if d < self.rmax {
            return false;
        }
        if self.reference.is_none() {
            return true;
        }
        let a = self.angle(v);
        a >= self.lo && a <= self.hi
    }

    fn add(&mut self, q: [f32; 2]) {
        let v = sub(q, self.anchor);
        let d = (v[0] * v[0] + v[1] * v[1]).sqrt();
        self.rmax = self.rmax.max(d);
        if d <= self.tol {
            return;
        }
        if self.reference.is_none() {
            self.reference = Some([v[0] / d, v[1] / d]);
        }
        // Slightly narrower than exact, so rounding never lets a point slip out.
        let half = (self.tol / d).asin() * (1.0 - 1e-9);
        let a = self.angle(v);
        self.lo = self.lo.max(a - half);
        self.hi = self.hi.min(a + half);
    }
}

/// Ramer–Douglas–Peucker simplification with `tolerance` in world units (a
/// tolerance in cells is `cells * cell_size`).
///
/// Keeps the end points of an open chain; a closed loop is split at its first
/// point and the point farthest from it and keeps at least three points. Every
/// original point stays within `tolerance` of the result.
///
/// # Errors
///
/// [`MeshError::InvalidParameter`] for a NaN, infinite or negative tolerance, or a
/// non-finite point.
pub fn simplify_rdp(line: &Polyline, tolerance: f32) -> Result<Polyline, MeshError> {
    let mut out = Polyline::default();
    Simplifier::new().rdp(line, tolerance, &mut out)?;
    Ok(out)
}

/// Greedy simplification with `tolerance` in world units (a tolerance in cells is
/// `cells * cell_size`): from each kept point,
/// the next kept point is the farthest one such that every point in between
/// stays within `tolerance` of the segment (a one-pass sleeve fit, `O(n)`).
///
/// Faster than [`simplify_rdp`] and with the same guarantee (every original point
/// stays within `tolerance` of the result), usually keeping a few more points.
///
/// # Errors
///
/// As [`simplify_rdp`].
pub fn simplify_greedy(line: &Polyline, tolerance: f32) -> Result<Polyline, MeshError> {
    let mut out = Polyline::default();
    Simplifier::new().greedy(line, tolerance, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn straight_line_collapses_to_ends() {
        let pts: Vec<[f32; 2]> = (0..100).map(|i| [i as f32, 0.0]).collect();
        let line = Polyline::new(pts, false);
        let r = simplify_rdp(&line, 0.01).unwrap();
        assert_eq!(r.points, vec![[0.0, 0.0], [99.0, 0.0]]);
        let g = simplify_greedy(&line, 0.01).unwrap();
        assert_eq!(g.points, vec![[0.0, 0.0], [99.0, 0.0]]);
    }

    #[test]
    fn bad_tolerance_is_an_error() {
        let line = Polyline::new(vec![[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]], false);
        for t in [f32::NAN, -1.0, f32::INFINITY] {
            assert!(simplify_rdp(&line, t).is_err());
            assert!(simplify_greedy(&line, t).is_err());
        }
        let bad = Polyline::new(vec![[0.0, 0.0], [f32::NAN, 1.0], [2.0, 0.0]], false);
        assert!(simplify_rdp(&bad, 0.1).is_err());
    }

    #[test]
    fn closed_square_keeps_corners() {
        let mut pts = Vec::new();
        for i in 0..10 {
            pts.push([i as f32, 0.0]);
        }
        for i in 0..10 {
            pts.push([10.0, i as f32]);
        }
        for i in 0..10 {
            pts.push([10.0 - i as f32, 10.0]);
        }
        for i in 0..10 {
            pts.push([0.0, 10.0 - i as f32]);
        }
        let line = Polyline::new(pts, true);
        for s in [
            simplify_rdp(&line, 0.1).unwrap(),
            simplify_greedy(&line, 0.1).unwrap(),
        ] {
            assert!(s.closed);
            assert_eq!(s.points.len(), 4, "{:?}", s.points);
        }
    }

    #[test]
    fn flat_loop_keeps_three_points() {
        let line = Polyline::new(vec![[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [1.0, 0.001]], true);
        assert_eq!(simplify_rdp(&line, 1.0).unwrap().points.len(), 3);
        assert_eq!(simplify_greedy(&line, 1.0).unwrap().points.len(), 3);
    }
}
