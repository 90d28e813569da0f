//! Strip meshes along contours (grass rims, edge decals).

use crate::{MeshError, Polyline, StripMesh};

/// Builds [`StripMesh`]es along contours; owns a scratch buffer so that a
/// steady loop allocates nothing once warmed up.
#[derive(Debug, Default, Clone)]
pub struct StripBuilder {
    pts: Vec<[f64; 2]>,
}

/// Longest inner offset at a sharp turn, in strip widths.
const MITER_LIMIT: f64 = 4.0;

impl StripBuilder {
    /// A builder with an empty scratch buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Same as [`edge_strip`], reusing this builder's scratch buffer.
    ///
    /// # Errors
    ///
    /// As [`edge_strip`].
    pub fn build(
        &mut self,
        polylines: &[Polyline],
        width: f32,
        out: &mut StripMesh,
    ) -> Result<(), MeshError> {
        if !(width.is_finite() && width > 0.0) {
            return Err(MeshError::param(
                "width",
                width,
                "must be finite and greater than zero (world units)",
            ));
        }
        for (l, line) in polylines.iter().enumerate() {
            if let Some(i) = line
                .points
                .iter()
                .position(|p| !(p[0].is_finite() && p[1].is_finite()))
            {
                return Err(MeshError::param(
                    "polylines",
                    format!("polyline {l}, point {i}: {:?}", line.points[i]),
                    "every point must be finite",
                ));
            }
        }
        out.clear();
        let w = width as f64;
        for line in polylines {
            self.pts.clear();
            for p in &line.points {
                let q = [p[0] as f64, p[1] as f64];
                if self.pts.last() != Some(&q) {
                    self.pts.push(q);
                }
            }
            if line.closed {
                while self.pts.len() > 1 && self.pts.last() == self.pts.first() {
                    self.pts.pop();
                }
                if self.pts.len() < 3 {
                    continue;
                }
            } else if self.pts.len() < 2 {
                continue;
            }
            strip_one(&self.pts, line.closed, w, out);
        }
        Ok(())
    }
}

/// Unit left normal of the segment `a -> b` (distinct points).
fn left_normal(a: [f64; 2], b: [f64; 2]) -> [f64; 2] {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let l = (dx * dx + dy * dy).sqrt();
    [-dy / l, dx / l]
}

fn strip_one(p: &[[f64; 2]], closed: bool, w: f64, out: &mut StripMesh) {
    let m = p.len();
    // Vertices: m for an open chain, m + 1 for a loop (the first point again, so u runs on).
    let count = if closed { m + 1 } else { m };
    let base = out.positions.len() as u32;
    let mut s = 0.0f64;
    for k in 0..count {
        let cur = p[k % m];
        if k > 0 {
            let prev = p[(k - 1) % m];
            s += ((cur[0] - prev[0]).powi(2) + (cur[1] - prev[1]).powi(2)).sqrt();
        }
        let n_in = if closed || k > 0 {
            Some(left_normal(p[(k + m - 1) % m], cur))
        } else {
            None
        };
        let n_out = if closed || k + 1 < m {
            Some(left_normal(cur, p[(k + 1) % m]))
        } else {
            None
        };
        let offset = match (n_in, n_out) {
            (Some(a), Some(b)) => {
                let sum = [a[0] + b[0], a[1] + b[1]];
                let l = (sum[0] * sum[0] + sum[1] * sum[1]).sqrt();
                if l < 1e-9 {
                    [b[0] * w, b[1] * w]
                } else {
                    let mdir = [sum[0] / l, sum[1] / l];
                    let cos = mdir[0] * b[0] + mdir[1] * b[1];
                    let scale = (1.0 / cos.max(1e-9)).min(MITER_LIMIT) * w;
                    [mdir[0] * scale, mdir[1] * scale]
                }
            }
            (Some(a), None) | (None, Some(a)) => [a[0] * w, a[1] * w],
            (None, None) => [0.0, 0.0],
        };
        let u = (s / w) as f32;
        out.positions.push([cur[0] as f32, cur[1] as f32, 0.0]);
        out.uvs.push([u, 0.0]);
        out.positions.push([
            (cur[0] + offset[0]) as f32,
            (cur[1] + offset[1]) as f32,
            0.0,
        ]);
        out.uvs.push([u, 1.0]);
    }
    for k in 0..count as u32 - 1 {
        let a0 = base + 2 * k;
        let b0 = a0 + 1;
        let a1 = a0 + 2;
        let b1 = a0 + 3;
        out.indices.extend_from_slice(&[a0, a1, b1, a0, b1, b0]);
    }
}

/// Builds a strip of `width` world units along the polylines, on the solid side
/// (the left of each polyline, as contours are directed with solid on the left).
///
/// Each polyline point gives two vertices: one on the contour (`v = 0`) and one
/// offset `width` into the solid along the mitred normal (`v = 1`; the offset is
/// capped at 4 widths at sharp turns). `u` is the arc length from the polyline's
/// first point divided by `width`, so a square texture tile is not stretched.
/// A closed loop repeats its first point at the end with `u` = perimeter / width.
/// Each side between two points gives two counter-clockwise triangles (where the
/// solid is thinner than the strip, the inner edge may fold over itself).
/// Repeated points are skipped; loops with fewer than three distinct points and
/// chains with fewer than two are skipped. `out` is cleared first.
///
/// # Errors
///
/// [`MeshError::InvalidParameter`] for a width that is not finite and positive, or
/// a non-finite point (`out` is untouched).
pub fn edge_strip(
    polylines: &[Polyline],
    width: f32,
    out: &mut StripMesh,
) -> Result<(), MeshError> {
    StripBuilder::new().build(polylines, width, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn straight_chain_strip() {
        let line = Polyline::new(vec![[0.0, 0.0], [2.0, 0.0], [4.0, 0.0]], false);
        let mut out = StripMesh::default();
        edge_strip(&[line], 0.5, &mut out).unwrap();
        assert_eq!(out.positions.len(), 6);
        assert_eq!(out.positions[1], [0.0, 0.5, 0.0]);
        assert_eq!(out.positions[3], [2.0, 0.5, 0.0]);
        assert_eq!(out.uvs[4], [8.0, 0.0]);
        assert_eq!(out.indices.len(), 12);
    }

    #[test]
    fn invalid_width_is_an_error() {
        let mut out = StripMesh::default();
        for w in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            assert!(edge_strip(&[], w, &mut out).is_err());
        }
    }
}
