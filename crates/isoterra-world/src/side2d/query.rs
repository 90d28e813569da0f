//! Point and ray queries on the density field.

use crate::Side2dWorld;

/// Where a segment first enters solid (see [`Side2dWorld::raycast`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RayHit {
    /// The first solid point along the segment, in world units;
    /// `is_solid(point)` holds.
    pub point: [f32; 2],
    /// Its parameter along the segment: `point = from + t * (to - from)`, in `[0, 1]`.
    pub t: f32,
    /// Unit normal of the surface at `point`, pointing out of the solid (the
    /// negative gradient of the bilinear density); the reverse ray direction
    /// where the gradient vanishes.
    pub normal: [f32; 2],
}

/// Bisection steps when settling a crossing onto `f32` points.
const REFINE_STEPS: u32 = 30;

impl Side2dWorld {
    /// Bilinear density at a world position, or `None` outside the world or
    /// for a non-finite position.
    pub fn density_at(&self, p: [f32; 2]) -> Option<f32> {
        self.field.sample(p)
    }

    /// True when the bilinear density at `p` is at least the iso level; false
    /// outside the world. Use it to check spawn points.
    pub fn is_solid(&self, p: [f32; 2]) -> bool {
        self.density_at(p).is_some_and(|v| v >= self.params.iso)
    }

    /// Unit surface normal at `p` (pointing out of the solid, toward lower
    /// density), from the gradient of the bilinear density; `None` outside
    /// the world or where the gradient vanishes.
    pub fn normal_at(&self, p: [f32; 2]) -> Option<[f32; 2]> {
        let f = &self.field;
        let [gx, gy] = f.to_grid(p);
        if !(gx.is_finite() && gy.is_finite()) {
            return None;
        }
        let (maxx, maxy) = ((f.width() - 1) as f32, (f.height() - 1) as f32);
        if gx < 0.0 || gy < 0.0 || gx > maxx || gy > maxy {
            return None;
        }
        let x0 = (gx.floor() as u32).min(f.width() - 2);
        let y0 = (gy.floor() as u32).min(f.height() - 2);
        let (tx, ty) = (gx - x0 as f32, gy - y0 as f32);
        let v00 = f.get(x0, y0);
        let v10 = f.get(x0 + 1, y0);
        let v01 = f.get(x0, y0 + 1);
        let v11 = f.get(x0 + 1, y0 + 1);
        let dx = (v10 - v00) * (1.0 - ty) + (v11 - v01) * ty;
        let dy = (v01 - v00) * (1.0 - tx) + (v11 - v10) * tx;
        let len = (dx * dx + dy * dy).sqrt();
        if !(len > 0.0 && len.is_finite()) {
            return None;
        }
        Some([-dx / len, -dy / len])
    }

    /// The first point where the segment `from`–`to` enters solid, or `None`.
    ///
    /// The segment is clipped to the world (outside counts as empty) and
    /// walked cell by cell. Inside a cell the bilinear density along a line is
    /// a quadratic in the line parameter, so the first crossing of the iso
    /// level is found exactly (no thin feature is stepped over), then nudged
    /// by bisection so that `is_solid(hit.point)` holds in `f32`. If `from` is
    /// already solid the hit is `from` itself with `t = 0`. Non-finite input
    /// gives `None`.
    pub fn raycast(&self, from: [f32; 2], to: [f32; 2]) -> Option<RayHit> {
        if !(from.iter().chain(&to).all(|v| v.is_finite())) {
            return None;
        }
        let f = &self.field;
        let iso = self.params.iso as f64;
        let cs = f.cell_size() as f64;
        let o = f.origin();
        let (nx, ny) = (f.width() - 1, f.height() - 1);
        // Everything below runs in grid units (cells), in f64.
        let g0 = [
            (from[0] as f64 - o[0] as f64) / cs,
            (from[1] as f64 - o[1] as f64) / cs,
        ];
        let dg = [
            (to[0] as f64 - from[0] as f64) / cs,
            (to[1] as f64 - from[1] as f64) / cs,
        ];
        let hi_g = [nx as f64, ny as f64];
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for k in 0..2 {
            if dg[k] == 0.0 {
                if g0[k] < 0.0 || g0[k] > hi_g[k] {
                    return None;
                }
            } else {
                let a = (0.0 - g0[k]) / dg[k];
                let b = (hi_g[k] - g0[k]) / dg[k];
                let (a, b) = if a < b { (a, b) } else { (b, a) };
                t0 = t0.max(a);
                t1 = t1.min(b);
            }
        }
        if t0 > t1 {
            return None;
        }
        let at = |t: f64| -> [f32; 2] {
            let t = t as f32;
            [
                from[0] + (to[0] - from[0]) * t,
                from[1] + (to[1] - from[1]) * t,
            ]
        };
        let solid = |t: f64| self.is_solid(at(t));
        let hit = |t: f64| {
            let point = at(t);
            let normal = self.normal_at(point).unwrap_or_else(|| {
                let len = (dg[0] * dg[0] + dg[1] * dg[1]).sqrt();
                if len > 0.0 {
                    [(-dg[0] / len) as f32, (-dg[1] / len) as f32]
                } else {
                    [0.0, 1.0]
                }
            });
            RayHit {
                point,
                t: t as f32,
                normal,
            }
        };
        if solid(t0) {
            return Some(hit(t0));
        }
        // The cell containing the ray just after parameter `t`, along one axis.
        let cell = |k: usize, t: f64, n: u32| -> u32 {
            let g = g0[k] + dg[k] * t;
            let mut c = g.floor();
            if dg[k] < 0.0 && c == g {
                c -= 1.0;
            }
            c.clamp(0.0, (n - 1) as f64) as u32
        };
        let mut t = t0;
        // Each step enters a new cell; the bound only guards against rounding.
        let max_steps = 4 + 2 * (dg[0].abs() + dg[1].abs()).min(1e9) as u64;
        for _ in 0..max_steps {
            if t >= t1 {
                break;
            }
            let (ix, iy) = (cell(0, t, nx), cell(1, t, ny));
            let exit = |k: usize, c: u32| -> f64 {
                if dg[k] > 0.0 {
                    (c as f64 + 1.0 - g0[k]) / dg[k]
                } else if dg[k] < 0.0 {
                    (c as f64 - g0[k]) / dg[k]
                } else {
                    f64::INFINITY
                }
            };
            let mut tn = exit(0, ix).min(exit(1, iy)).min(t1);
            if tn <= t {
                // Rounding at a cell corner: move on by a hair.
                tn = (t + 1e-12_f64.max(t.abs() * 1e-15)).min(t1);
            }
            if let Some(tc) = self.first_crossing_in_cell(ix, iy, g0, dg, t, tn, iso)
                && let Some(th) = nudge_into_solid(t, tc, tn.max(tc), &solid)
            {
                return Some(hit(th));
            }
            t = tn;
        }
        None
    }

    /// The first parameter in `[ta, tb]` where the bilinear density of cell
    /// `(ix, iy)` along the ray reaches `iso`, solving the quadratic exactly.
    #[allow(clippy::too_many_arguments)]
    fn first_crossing_in_cell(
        &self,
        ix: u32,
        iy: u32,
        g0: [f64; 2],
        dg: [f64; 2],
        ta: f64,
        tb: f64,
        iso: f64,
    ) -> Option<f64> {
        let f = &self.field;
        let v00 = f.get(ix, iy) as f64;
        let v10 = f.get(ix + 1, iy) as f64;
        let v01 = f.get(ix, iy + 1) as f64;
        let v11 = f.get(ix + 1, iy + 1) as f64;
        if v00.max(v10).max(v01).max(v11) < iso {
            return None;
        }
        let (a, b, c) = (v10 - v00, v01 - v00, v00 - v10 - v01 + v11);
        // Local coordinates at the cell entry, as functions of s = t - ta.
        let u = g0[0] + dg[0] * ta - ix as f64;
        let w = g0[1] + dg[1] * ta - iy as f64;
        let (du, dw) = (dg[0], dg[1]);
        let qa = v00 - iso + a * u + b * w + c * u * w;
        let qb = a * du + b * dw + c * (u * dw + w * du);
        let qc = c * du * dw;
        let len = tb - ta;
        if qa >= 0.0 {
            return Some(ta);
        }
        let root = if qc.abs() <= 1e-12 * (qb.abs() + qa.abs()) {
            if qb > 0.0 { Some(-qa / qb) } else { None }
        } else {
            let disc = qb * qb - 4.0 * qc * qa;
            if disc < 0.0 {
                None
            } else {
                let q = -0.5 * (qb + qb.signum() * disc.sqrt());
                let (r1, r2) = (q / qc, if q != 0.0 { qa / q } else { f64::INFINITY });
                let (lo, hi) = if r1 < r2 { (r1, r2) } else { (r2, r1) };
                [lo, hi].into_iter().find(|&r| r >= 0.0)
            }
        };
        match root {
            Some(s) if s <= len => Some(ta + s),
            // The end of the interval may reach iso by rounding only.
            _ if qa + qb * len + qc * len * len >= 0.0 => Some(tb),
            _ => None,
        }
    }
}

/// Given an analytic crossing `tc` inside the cell interval `[ta, tn]`,
/// returns a parameter next to it whose `f32` point is solid and whose
/// predecessor (at bisection precision) is not: `f32` rounding can put the
/// sampled crossing a hair before or after the analytic one. `None` when the
/// solid part is too thin to hold an `f32` point (the walk then continues).
fn nudge_into_solid(ta: f64, tc: f64, tn: f64, solid: &impl Fn(f64) -> bool) -> Option<f64> {
    let tiny = 1e-9_f64.max(tc.abs() * 1e-12);
    let (mut a, mut b);
    if solid(tc) {
        // Look back for an empty point, not before the cell entry.
        b = tc;
        let mut step = tiny;
        loop {
            let lo = (tc - step).max(ta);
            if !solid(lo) {
                a = lo;
                break;
            }
            if lo <= ta {
                return Some(tc);
            }
            step *= 4.0;
        }
    } else {
        // Look ahead for a solid point, not past the cell exit.
        a = tc;
        let mut step = tiny;
        loop {
            let hi = (tc + step).min(tn);
            if solid(hi) {
                b = hi;
                break;
            }
            if hi >= tn {
                return None;
            }
            a = hi;
            step *= 4.0;
        }
    }
    for _ in 0..REFINE_STEPS {
        let m = 0.5 * (a + b);
        if solid(m) {
            b = m;
        } else {
            a = m;
        }
    }
    Some(b)
}
