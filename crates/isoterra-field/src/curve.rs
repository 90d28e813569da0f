//! Height curves: monotone cubic splines through control points.
//!
//! A [`HeightCurve`] reshapes a normalised height (flatten the lowlands into
//! a sea, steepen the peaks) like an engine's animation curve, but with
//! Fritsch–Carlson tangents: the spline passes through every control point,
//! is monotone wherever the points are, and never overshoots them, so it adds
//! no stair-steps or ripples between points.

use crate::FieldError;

/// Control points of a monotone cubic height curve (at most
/// [`HeightCurve::MAX_POINTS`], `x` strictly increasing, all finite).
///
/// Outside `[x_first, x_last]` the curve holds its end values. Build the
/// evaluator once with [`HeightCurve::spline`].
///
/// ```
/// use isoterra_field::HeightCurve;
/// let c = HeightCurve::new(&[[0.0, 0.0], [0.4, 0.05], [1.0, 1.0]])?;
/// let s = c.spline()?;
/// assert_eq!(s.eval(0.4), 0.05);
/// assert!(s.eval(0.2) <= s.eval(0.3));
/// # Ok::<(), isoterra_field::FieldError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "Vec<[f32; 2]>", into = "Vec<[f32; 2]>")
)]
pub struct HeightCurve {
    len: u8,
    points: [[f32; 2]; HeightCurve::MAX_POINTS],
}

impl HeightCurve {
    /// The most control points a curve may have.
    pub const MAX_POINTS: usize = 16;

    /// The identity on `[0, 1]`: `(0, 0)` to `(1, 1)`.
    pub const LINEAR: Self = HeightCurve::from_array([[0.0, 0.0], [1.0, 1.0]]);

    const fn from_array<const N: usize>(p: [[f32; 2]; N]) -> Self {
        let mut points = [[0.0; 2]; Self::MAX_POINTS];
        let mut i = 0;
        while i < N {
            points[i] = p[i];
            i += 1;
        }
        HeightCurve {
            len: N as u8,
            points,
        }
    }

    /// A curve through `points`.
    ///
    /// Errors: fewer than 2 or more than [`MAX_POINTS`](Self::MAX_POINTS)
    /// points, a non-finite coordinate, or `x` not strictly increasing.
    pub fn new(points: &[[f32; 2]]) -> Result<Self, FieldError> {
        if points.len() < 2 || points.len() > Self::MAX_POINTS {
            return Err(FieldError::param(
                "curve",
                format!("{} points", points.len()),
                "a height curve needs 2 to 16 control points",
            ));
        }
        let mut c = HeightCurve {
            len: points.len() as u8,
            points: [[0.0; 2]; Self::MAX_POINTS],
        };
        c.points[..points.len()].copy_from_slice(points);
        c.validate()?;
        Ok(c)
    }

    /// The control points.
    pub fn points(&self) -> &[[f32; 2]] {
        &self.points[..self.len as usize]
    }

    /// Checks the points (see [`HeightCurve::new`]).
    pub fn validate(&self) -> Result<(), FieldError> {
        let p = self.points();
        if p.len() < 2 {
            return Err(FieldError::param(
                "curve",
                format!("{} points", p.len()),
                "a height curve needs 2 to 16 control points",
            ));
        }
        for q in p {
            if !(q[0].is_finite() && q[1].is_finite()) {
                return Err(FieldError::param(
                    "curve",
                    format!("{q:?}"),
                    "control points must be finite",
                ));
            }
        }
        for w in p.windows(2) {
            if w[1][0] <= w[0][0] {
                return Err(FieldError::param(
                    "curve",
                    format!("{:?} then {:?}", w[0], w[1]),
                    "control point x values must be strictly increasing",
                ));
            }
        }
        Ok(())
    }

    /// The smallest and largest control-point `y`: the analytic range of the
    /// curve (a Fritsch–Carlson spline never leaves it).
    pub fn range(&self) -> [f32; 2] {
        self.points()
            .iter()
            .fold([f32::INFINITY, f32::NEG_INFINITY], |[lo, hi], p| {
                [lo.min(p[1]), hi.max(p[1])]
            })
    }

    /// The evaluator: Fritsch–Carlson tangents computed once.
    pub fn spline(&self) -> Result<CurveSpline, FieldError> {
        self.validate()?;
        let p = self.points();
        let n = p.len();
        // Secant slopes, in f64 for the construction only.
        let d: Vec<f64> = p
            .windows(2)
            .map(|w| (w[1][1] as f64 - w[0][1] as f64) / (w[1][0] as f64 - w[0][0] as f64))
            .collect();
        let mut m = vec![0.0f64; n];
        m[0] = d[0];
        m[n - 1] = d[n - 2];
        for k in 1..n - 1 {
            m[k] = if d[k - 1] * d[k] > 0.0 {
                0.5 * (d[k - 1] + d[k])
            } else {
                0.0
            };
        }
        for k in 0..n - 1 {
            if d[k] == 0.0 {
                m[k] = 0.0;
                m[k + 1] = 0.0;
                continue;
            }
            let a = m[k] / d[k];
            let b = m[k + 1] / d[k];
            let s = a * a + b * b;
            if s > 9.0 {
                let t = 3.0 / s.sqrt();
                m[k] = t * a * d[k];
                m[k + 1] = t * b * d[k];
            }
        }
        let range = self.range();
        let mut tangents = [0.0f32; Self::MAX_POINTS];
        for (t, v) in tangents.iter_mut().zip(&m) {
            *t = *v as f32;
        }
        if tangents.iter().any(|t| !t.is_finite()) {
            return Err(FieldError::param(
                "curve",
                format!("{p:?}"),
                "the curve is too steep: spread the control points further apart in x",
            ));
        }
        Ok(CurveSpline {
            curve: *self,
            tangents,
            range,
        })
    }
}

impl Default for HeightCurve {
    fn default() -> Self {
        Self::LINEAR
    }
}

impl TryFrom<Vec<[f32; 2]>> for HeightCurve {
    type Error = FieldError;

    fn try_from(v: Vec<[f32; 2]>) -> Result<Self, FieldError> {
        HeightCurve::new(&v)
    }
}

impl From<HeightCurve> for Vec<[f32; 2]> {
    fn from(c: HeightCurve) -> Self {
        c.points().to_vec()
    }
}

/// A [`HeightCurve`] ready to evaluate (built by [`HeightCurve::spline`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurveSpline {
    curve: HeightCurve,
    tangents: [f32; HeightCurve::MAX_POINTS],
    range: [f32; 2],
}

impl CurveSpline {
    /// The curve at `x`: the end values outside the control points (and for
    /// NaN, the first value), the cubic Hermite spline between them. Exact at
    /// control points; the result always lies in [`HeightCurve::range`].
    #[inline]
    pub fn eval(&self, x: f32) -> f32 {
        let p = self.curve.points();
        let n = p.len();
        if x.is_nan() || x <= p[0][0] {
            return p[0][1];
        }
        if x >= p[n - 1][0] {
            return p[n - 1][1];
        }
        // First k with p[k + 1].x > x: the segment [p[k], p[k + 1]).
        let k = p[1..n].partition_point(|q| q[0] <= x);
        let (x0, y0) = (p[k][0], p[k][1]);
        let (x1, y1) = (p[k + 1][0], p[k + 1][1]);
        let h = x1 - x0;
        let t = (x - x0) / h;
        let u = 1.0 - t;
        // Hermite form `y0 + (y1 - y0) h01 + h (h10 m0 + h11 m1)`: exactly
        // `y0` at t = 0 and on flat segments (where both tangents are 0).
        let h10 = t * u * u;
        let h01 = t * t * (3.0 - 2.0 * t);
        let h11 = t * t * (t - 1.0);
        let y = y0 + (y1 - y0) * h01 + h * (h10 * self.tangents[k] + h11 * self.tangents[k + 1]);
        y.max(self.range[0]).min(self.range[1])
    }

    /// [`eval`](Self::eval) of `N` values at once, bit for bit: the segment
    /// of each lane is chosen with selects instead of a search, so the whole
    /// body runs on vector registers.
    #[inline(always)]
    pub(crate) fn eval_lanes<const N: usize>(&self, x: &[f32; N]) -> [f32; N] {
        let p = self.curve.points();
        let n = p.len();
        let t = &self.tangents;
        // Lane l's segment [p[k], p[k + 1]): the last k with p[k].x <= x.
        let mut x0 = [p[0][0]; N];
        let mut y0 = [p[0][1]; N];
        let mut x1 = [p[1][0]; N];
        let mut y1 = [p[1][1]; N];
        let mut m0 = [t[0]; N];
        let mut m1 = [t[1]; N];
        for k in 1..n - 1 {
            let (q, r) = (p[k], p[k + 1]);
            for l in 0..N {
                let c = q[0] <= x[l];
                x0[l] = if c { q[0] } else { x0[l] };
                y0[l] = if c { q[1] } else { y0[l] };
                x1[l] = if c { r[0] } else { x1[l] };
                y1[l] = if c { r[1] } else { y1[l] };
                m0[l] = if c { t[k] } else { m0[l] };
                m1[l] = if c { t[k + 1] } else { m1[l] };
            }
        }
        let (first, last) = (p[0], p[n - 1]);
        std::array::from_fn(|l| {
            let h = x1[l] - x0[l];
            let t = (x[l] - x0[l]) / h;
            let u = 1.0 - t;
            let h10 = t * u * u;
            let h01 = t * t * (3.0 - 2.0 * t);
            let h11 = t * t * (t - 1.0);
            let y = y0[l] + (y1[l] - y0[l]) * h01 + h * (h10 * m0[l] + h11 * m1[l]);
            let y = y.max(self.range[0]).min(self.range[1]);
            let y = if x[l] >= last[0] { last[1] } else { y };
            // The first value for NaN too, as `eval`.
            if x[l] > first[0] { y } else { first[1] }
        })
    }

    /// The control points.
    pub fn curve(&self) -> &HeightCurve {
        &self.curve
    }

    /// The analytic output range `[min y, max y]`.
    pub fn range(&self) -> [f32; 2] {
        self.range
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_through_control_points_and_holds_ends() {
        let pts = [[0.0, 0.0], [0.3, 0.1], [0.5, 0.1], [0.8, 0.9], [1.0, 1.0]];
        let s = HeightCurve::new(&pts).unwrap().spline().unwrap();
        for p in pts {
            assert_eq!(s.eval(p[0]), p[1]);
        }
        assert_eq!(s.eval(-5.0), 0.0);
        assert_eq!(s.eval(7.0), 1.0);
        assert_eq!(s.eval(f32::NAN), 0.0);
        // Flat between equal values: no ripple.
        for i in 0..=20 {
            let x = 0.3 + 0.2 * i as f32 / 20.0;
            assert_eq!(s.eval(x), 0.1, "{x}");
        }
    }

    #[test]
    fn rejects_bad_points() {
        assert!(HeightCurve::new(&[[0.0, 0.0]]).is_err());
        assert!(HeightCurve::new(&[[0.0, 0.0], [0.0, 1.0]]).is_err());
        assert!(HeightCurve::new(&[[0.5, 0.0], [0.1, 1.0]]).is_err());
        assert!(HeightCurve::new(&[[0.0, f32::NAN], [1.0, 1.0]]).is_err());
        assert!(HeightCurve::new(&[[0.0, 0.0]; 17]).is_err());
        assert!(
            HeightCurve::new(&[[0.0, 0.0], [1e-30, 1e30]])
                .unwrap()
                .spline()
                .is_err()
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// The lane form gives `eval`'s bits for every lane: inside
        /// segments, on control points, past both ends and for NaN and
        /// infinities, on curves of 2 to 16 points.
        #[test]
        fn eval_lanes_is_bit_identical_to_eval(
            gaps in proptest::collection::vec(0.01f32..1.0, 1..16),
            ys in proptest::collection::vec(-10.0f32..10.0, 16),
            x0 in -2.0f32..2.0,
            xs in proptest::array::uniform16(-3.0f32..5.0),
        ) {
            let mut pts = vec![[x0, ys[0]]];
            for (i, g) in gaps.iter().enumerate() {
                let last = pts[pts.len() - 1][0];
                pts.push([last + g, ys[i + 1]]);
            }
            let s = HeightCurve::new(&pts).unwrap().spline().unwrap();
            let mut cases: Vec<f32> = xs.to_vec();
            cases.extend(pts.iter().map(|p| p[0]));
            cases.extend([f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0]);
            for group in cases.chunks(8) {
                let mut x = [group[0]; 8];
                x[..group.len()].copy_from_slice(group);
                let got = s.eval_lanes(&x);
                for l in 0..8 {
                    proptest::prop_assert_eq!(got[l].to_bits(), s.eval(x[l]).to_bits(), "x = {}", x[l]);
                }
                let wide: [f32; 16] = std::array::from_fn(|l| x[l % 8]);
                let got = s.eval_lanes(&wide);
                for l in 0..16 {
                    proptest::prop_assert_eq!(got[l].to_bits(), s.eval(wide[l]).to_bits());
                }
            }
        }
    }
}
