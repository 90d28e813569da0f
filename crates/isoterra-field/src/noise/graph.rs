//! Composable noise: a tree of fractals, domain warps and combinators with
//! serde-able parameters and an analytic output range.

use super::hash::derive;
use super::{Fractal, FractalParams, LANES, Noise2, Noise3, check_grid};
use crate::{CurveSpline, FieldError, HeightCurve};

/// Parameters of a domain warp: sample positions are moved by
/// `amplitude * (wx, wy[, wz])`, each component an independent [`Fractal`]
/// (one octave: simple warp; several: fractal warp).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct WarpParams {
    /// Displacement scale in coordinate units, finite and `>= 0`.
    /// Default value: `16.0`.
    pub amplitude: f32,
    /// The displacement noise. Default value: Perlin fBm, 3 octaves,
    /// frequency 1/128.
    pub noise: FractalParams,
}

impl WarpParams {
    /// The defaults (see the field docs).
    pub const DEFAULT: Self = WarpParams {
        amplitude: 16.0,
        noise: FractalParams::DEFAULT
            .with_octaves(3)
            .with_frequency(1.0 / 128.0),
    };

    /// Sets [`amplitude`](Self::amplitude).
    pub const fn with_amplitude(mut self, amplitude: f32) -> Self {
        self.amplitude = amplitude;
        self
    }

    /// Sets [`noise`](Self::noise).
    pub const fn with_noise(mut self, noise: FractalParams) -> Self {
        self.noise = noise;
        self
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), FieldError> {
        if !(self.amplitude.is_finite() && self.amplitude >= 0.0) {
            return Err(FieldError::param(
                "amplitude",
                self.amplitude,
                "the warp amplitude must be finite and at least zero",
            ));
        }
        self.noise.validate()
    }
}

impl Default for WarpParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// One node of a noise tree (the stored, serde-able description). Build a
/// [`NoiseGraph`] from the root to evaluate it.
///
/// ```
/// use isoterra_field::noise::{NoiseGraph, NoiseNode, WarpParams};
/// use isoterra_field::{FractalKind, FractalParams};
/// let hills = NoiseNode::fractal(FractalParams::DEFAULT, 1);
/// let ridges = NoiseNode::fractal(FractalParams::DEFAULT.with_kind(FractalKind::Ridged), 2);
/// let mask = NoiseNode::fractal(FractalParams::DEFAULT.with_frequency(1.0 / 512.0), 3);
/// let tree = hills
///     .select(ridges, mask, 0.2, 0.1)
///     .warp(WarpParams::DEFAULT)
///     .remap([-1.0, 1.0], [0.0, 100.0]);
/// let g = NoiseGraph::new(&tree, 42)?;
/// assert_eq!(g.range(), [0.0, 100.0]);
/// let v = g.sample2(3.0, 4.0);
/// assert!((0.0..=100.0).contains(&v));
/// # Ok::<(), isoterra_field::FieldError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(tag = "op", rename_all = "snake_case")
)]
pub enum NoiseNode {
    /// A constant value (finite).
    Constant {
        /// The value.
        value: f32,
    },
    /// A fractal over a basis noise, range `[-1, 1]`. Its seed is derived
    /// from the graph seed and `seed`.
    Fractal {
        /// The fractal parameters.
        params: FractalParams,
        /// A stream number that tells fractals of one graph apart.
        seed: u64,
    },
    /// `source` sampled at warped positions; same range as `source`.
    Warp {
        /// The warped noise.
        source: Box<NoiseNode>,
        /// The warp.
        params: WarpParams,
    },
    /// `a + b`.
    Add {
        /// First operand.
        a: Box<NoiseNode>,
        /// Second operand.
        b: Box<NoiseNode>,
    },
    /// `a * b`.
    Mul {
        /// First operand.
        a: Box<NoiseNode>,
        /// Second operand.
        b: Box<NoiseNode>,
    },
    /// `min(a, b)`.
    Min {
        /// First operand.
        a: Box<NoiseNode>,
        /// Second operand.
        b: Box<NoiseNode>,
    },
    /// `max(a, b)`.
    Max {
        /// First operand.
        a: Box<NoiseNode>,
        /// Second operand.
        b: Box<NoiseNode>,
    },
    /// `a` where `mask < threshold - blend`, `b` where
    /// `mask > threshold + blend`, a smoothstep blend between (a hard switch
    /// at the threshold when `blend` is 0).
    Select {
        /// Chosen below the threshold.
        a: Box<NoiseNode>,
        /// Chosen above the threshold.
        b: Box<NoiseNode>,
        /// The mask.
        mask: Box<NoiseNode>,
        /// Mask value at the middle of the transition (finite).
        threshold: f32,
        /// Half-width of the transition (finite, `>= 0`).
        blend: f32,
    },
    /// `source` clamped to `[min, max]` (finite, `min <= max`).
    Clamp {
        /// The clamped noise.
        source: Box<NoiseNode>,
        /// Lower bound.
        min: f32,
        /// Upper bound.
        max: f32,
    },
    /// The linear map taking `from[0]` to `to[0]` and `from[1]` to `to[1]`.
    Remap {
        /// The remapped noise.
        source: Box<NoiseNode>,
        /// Two distinct finite values.
        from: [f32; 2],
        /// Two finite values.
        to: [f32; 2],
    },
    /// `source` through a monotone cubic curve.
    Curve {
        /// The reshaped noise.
        source: Box<NoiseNode>,
        /// The curve.
        curve: HeightCurve,
    },
}

impl NoiseNode {
    /// A fractal leaf.
    pub fn fractal(params: FractalParams, seed: u64) -> Self {
        NoiseNode::Fractal { params, seed }
    }

    /// A constant leaf.
    pub fn constant(value: f32) -> Self {
        NoiseNode::Constant { value }
    }

    /// `min(self, other)`.
    pub fn min(self, other: NoiseNode) -> Self {
        NoiseNode::Min {
            a: Box::new(self),
            b: Box::new(other),
        }
    }

    /// `max(self, other)`.
    pub fn max(self, other: NoiseNode) -> Self {
        NoiseNode::Max {
            a: Box::new(self),
            b: Box::new(other),
        }
    }

    /// `self` below the mask threshold, `other` above (see [`NoiseNode::Select`]).
    pub fn select(self, other: NoiseNode, mask: NoiseNode, threshold: f32, blend: f32) -> Self {
        NoiseNode::Select {
            a: Box::new(self),
            b: Box::new(other),
            mask: Box::new(mask),
            threshold,
            blend,
        }
    }

    /// `self` clamped to `[min, max]`.
    pub fn clamp(self, min: f32, max: f32) -> Self {
        NoiseNode::Clamp {
            source: Box::new(self),
            min,
            max,
        }
    }

    /// `self` mapped linearly from `from` to `to`.
    pub fn remap(self, from: [f32; 2], to: [f32; 2]) -> Self {
        NoiseNode::Remap {
            source: Box::new(self),
            from,
            to,
        }
    }

    /// `self` through `curve`.
    pub fn curve(self, curve: HeightCurve) -> Self {
        NoiseNode::Curve {
            source: Box::new(self),
            curve,
        }
    }

    /// `self` sampled at warped positions.
    pub fn warp(self, params: WarpParams) -> Self {
        NoiseNode::Warp {
            source: Box::new(self),
            params,
        }
    }
}

impl std::ops::Add for NoiseNode {
    type Output = NoiseNode;

    /// An [`NoiseNode::Add`] node.
    fn add(self, other: NoiseNode) -> NoiseNode {
        NoiseNode::Add {
            a: Box::new(self),
            b: Box::new(other),
        }
    }
}

impl std::ops::Mul for NoiseNode {
    type Output = NoiseNode;

    /// A [`NoiseNode::Mul`] node.
    fn mul(self, other: NoiseNode) -> NoiseNode {
        NoiseNode::Mul {
            a: Box::new(self),
            b: Box::new(other),
        }
    }
}

/// A compiled operation; children are indices into the graph's op list.
#[derive(Debug, Clone, PartialEq)]
enum Op {
    Constant(f32),
    Fractal(Box<Fractal>),
    Warp {
        src: usize,
        amplitude: f32,
        w: Box<[Fractal; 3]>,
    },
    Add(usize, usize),
    Mul(usize, usize),
    Min(usize, usize),
    Max(usize, usize),
    Select {
        a: usize,
        b: usize,
        mask: usize,
        threshold: f32,
        edge0: f32,
        /// `1 / (2 blend)`, 0 for a hard switch.
        inv: f32,
    },
    Clamp(usize, f32, f32),
    Remap {
        src: usize,
        from0: f32,
        scale: f32,
        to0: f32,
    },
    Curve(usize, Box<CurveSpline>),
}

/// A [`NoiseNode`] tree compiled for evaluation, with its analytic range.
///
/// Point evaluation ([`NoiseGraph::sample2`]) and batch fills
/// ([`NoiseGraph::fill2`]) give the same bits: every node runs the same
/// operations per sample, the batch path on eight samples at a time.
#[derive(Debug, Clone, PartialEq)]
pub struct NoiseGraph {
    ops: Vec<Op>,
    root: usize,
    range: [f32; 2],
}

/// Deepest tree [`NoiseGraph::new`] accepts.
const MAX_DEPTH: u32 = 64;
/// Most nodes [`NoiseGraph::new`] accepts.
const MAX_NODES: usize = 4096;

/// The smoothstep weight of a mask value (shared by both paths).
#[inline(always)]
fn select_weight(m: f32, threshold: f32, edge0: f32, inv: f32) -> f32 {
    if inv == 0.0 {
        return if m >= threshold { 1.0 } else { 0.0 };
    }
    let t = ((m - edge0) * inv).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// `va (1 - t) + vb t`: exactly `va` at `t = 0` and `vb` at `t = 1`, and kept
/// between them (rounding may not step outside), so a select never leaves
/// its inputs' range.
#[inline(always)]
fn blend(va: f32, vb: f32, t: f32) -> f32 {
    (va * (1.0 - t) + vb * t).clamp(va.min(vb), va.max(vb))
}

fn finite(name: &'static str, v: f32) -> Result<(), FieldError> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(FieldError::param(name, v, "must be finite"))
    }
}

impl NoiseGraph {
    /// Compiles `root` for `seed`.
    ///
    /// Errors: invalid fractal or warp parameters, a non-finite constant,
    /// clamp bound, threshold or remap value, `min > max`, equal `from`
    /// values, a negative blend, an invalid curve, a tree deeper than 64 or
    /// larger than 4096 nodes, or an analytic range that overflows.
    pub fn new(root: &NoiseNode, seed: u64) -> Result<Self, FieldError> {
        let mut g = NoiseGraph {
            ops: Vec::new(),
            root: 0,
            range: [0.0; 2],
        };
        let (root, range) = g.compile(root, seed, 0)?;
        if !(range[0].is_finite() && range[1].is_finite()) {
            return Err(FieldError::param(
                "graph",
                format!("{range:?}"),
                "the analytic range of the tree overflows; use smaller constants or scales",
            ));
        }
        g.root = root;
        g.range = range;
        Ok(g)
    }

    /// The analytic range `[min, max]`: every value of the graph lies in it.
    pub fn range(&self) -> [f32; 2] {
        self.range
    }

    fn push(&mut self, op: Op) -> Result<usize, FieldError> {
        if self.ops.len() >= MAX_NODES {
            return Err(FieldError::param(
                "graph",
                self.ops.len(),
                "too many nodes (at most 4096)",
            ));
        }
        self.ops.push(op);
        Ok(self.ops.len() - 1)
    }

    fn compile(
        &mut self,
        n: &NoiseNode,
        seed: u64,
        depth: u32,
    ) -> Result<(usize, [f32; 2]), FieldError> {
        if depth > MAX_DEPTH {
            return Err(FieldError::param(
                "graph",
                depth,
                "the tree is too deep (at most 64 levels)",
            ));
        }
        let d = depth + 1;
        let pair = |g: &mut Self, a: &NoiseNode, b: &NoiseNode| {
            let (ia, ra) = g.compile(a, seed, d)?;
            let (ib, rb) = g.compile(b, seed, d)?;
            Ok::<_, FieldError>((ia, ra, ib, rb))
        };
        let (op, range) = match n {
            NoiseNode::Constant { value } => {
                finite("value", *value)?;
                (Op::Constant(*value), [*value, *value])
            }
            NoiseNode::Fractal { params, seed: s } => (
                Op::Fractal(Box::new(Fractal::new(params, derive(seed, *s))?)),
                [-1.0, 1.0],
            ),
            NoiseNode::Warp { source, params } => {
                params.validate()?;
                let (src, r) = self.compile(source, seed, d)?;
                let k = derive(seed, 0x3A3B_0000 ^ self.ops.len() as u64);
                let w = Box::new([
                    Fractal::new(&params.noise, derive(k, 1))?,
                    Fractal::new(&params.noise, derive(k, 2))?,
                    Fractal::new(&params.noise, derive(k, 3))?,
                ]);
                (
                    Op::Warp {
                        src,
                        amplitude: params.amplitude,
                        w,
                    },
                    r,
                )
            }
            NoiseNode::Add { a, b } => {
                let (ia, ra, ib, rb) = pair(self, a, b)?;
                (Op::Add(ia, ib), [ra[0] + rb[0], ra[1] + rb[1]])
            }
            NoiseNode::Mul { a, b } => {
                let (ia, ra, ib, rb) = pair(self, a, b)?;
                let p = [ra[0] * rb[0], ra[0] * rb[1], ra[1] * rb[0], ra[1] * rb[1]];
                let lo = p.iter().fold(f32::INFINITY, |m, &v| m.min(v));
                let hi = p.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
                (Op::Mul(ia, ib), [lo, hi])
            }
            NoiseNode::Min { a, b } => {
                let (ia, ra, ib, rb) = pair(self, a, b)?;
                (Op::Min(ia, ib), [ra[0].min(rb[0]), ra[1].min(rb[1])])
            }
            NoiseNode::Max { a, b } => {
                let (ia, ra, ib, rb) = pair(self, a, b)?;
                (Op::Max(ia, ib), [ra[0].max(rb[0]), ra[1].max(rb[1])])
            }
            NoiseNode::Select {
                a,
                b,
                mask,
                threshold,
                blend,
            } => {
                finite("threshold", *threshold)?;
                if !(blend.is_finite() && *blend >= 0.0) {
                    return Err(FieldError::param(
                        "blend",
                        blend,
                        "must be finite and at least zero",
                    ));
                }
                let (ia, ra, ib, rb) = pair(self, a, b)?;
                let (im, _) = self.compile(mask, seed, d)?;
                let inv = if *blend > 0.0 {
                    1.0 / (2.0 * blend)
                } else {
                    0.0
                };
                (
                    Op::Select {
                        a: ia,
                        b: ib,
                        mask: im,
                        threshold: *threshold,
                        edge0: threshold - blend,
                        inv,
                    },
                    [ra[0].min(rb[0]), ra[1].max(rb[1])],
                )
            }
            NoiseNode::Clamp { source, min, max } => {
                finite("min", *min)?;
                finite("max", *max)?;
                if min > max {
                    return Err(FieldError::param(
                        "min",
                        min,
                        "the clamp's min must not exceed its max",
                    ));
                }
                let (src, r) = self.compile(source, seed, d)?;
                (
                    Op::Clamp(src, *min, *max),
                    [r[0].clamp(*min, *max), r[1].clamp(*min, *max)],
                )
            }
            NoiseNode::Remap { source, from, to } => {
                for v in from.iter().chain(to) {
                    finite("remap", *v)?;
                }
                let scale = (to[1] - to[0]) / (from[1] - from[0]);
                if from[0] == from[1] || !scale.is_finite() {
                    return Err(FieldError::param(
                        "from",
                        format!("{from:?}"),
                        "the two `from` values must differ",
                    ));
                }
                let (src, r) = self.compile(source, seed, d)?;
                let m = |v: f32| (v - from[0]) * scale + to[0];
                let (a, b) = (m(r[0]), m(r[1]));
                (
                    Op::Remap {
                        src,
                        from0: from[0],
                        scale,
                        to0: to[0],
                    },
                    [a.min(b), a.max(b)],
                )
            }
            NoiseNode::Curve { source, curve } => {
                let spline = curve.spline()?;
                let (src, _) = self.compile(source, seed, d)?;
                (Op::Curve(src, Box::new(spline)), spline.range())
            }
        };
        Ok((self.push(op)?, range))
    }

    /// The value at `(x, y)`, within [`NoiseGraph::range`].
    pub fn sample2(&self, x: f32, y: f32) -> f32 {
        self.point2(self.root, x, y)
    }

    /// The value at `(x, y, z)`, within [`NoiseGraph::range`].
    pub fn sample3(&self, x: f32, y: f32, z: f32) -> f32 {
        self.point3(self.root, x, y, z)
    }

    fn point2(&self, i: usize, x: f32, y: f32) -> f32 {
        match &self.ops[i] {
            Op::Constant(v) => *v,
            Op::Fractal(f) => f.sample2(x, y),
            Op::Warp { src, amplitude, w } => {
                let wx = x + amplitude * w[0].sample2(x, y);
                let wy = y + amplitude * w[1].sample2(x, y);
                self.point2(*src, wx, wy)
            }
            Op::Add(a, b) => self.point2(*a, x, y) + self.point2(*b, x, y),
            Op::Mul(a, b) => self.point2(*a, x, y) * self.point2(*b, x, y),
            Op::Min(a, b) => self.point2(*a, x, y).min(self.point2(*b, x, y)),
            Op::Max(a, b) => self.point2(*a, x, y).max(self.point2(*b, x, y)),
            Op::Select {
                a,
                b,
                mask,
                threshold,
                edge0,
                inv,
            } => {
                let (va, vb) = (self.point2(*a, x, y), self.point2(*b, x, y));
                let t = select_weight(self.point2(*mask, x, y), *threshold, *edge0, *inv);
                blend(va, vb, t)
            }
            Op::Clamp(s, lo, hi) => self.point2(*s, x, y).clamp(*lo, *hi),
            Op::Remap {
                src,
                from0,
                scale,
                to0,
            } => (self.point2(*src, x, y) - from0) * scale + to0,
            Op::Curve(s, spline) => spline.eval(self.point2(*s, x, y)),
        }
    }

    fn point3(&self, i: usize, x: f32, y: f32, z: f32) -> f32 {
        match &self.ops[i] {
            Op::Constant(v) => *v,
            Op::Fractal(f) => f.sample3(x, y, z),
            Op::Warp { src, amplitude, w } => {
                let wx = x + amplitude * w[0].sample3(x, y, z);
                let wy = y + amplitude * w[1].sample3(x, y, z);
                let wz = z + amplitude * w[2].sample3(x, y, z);
                self.point3(*src, wx, wy, wz)
            }
            Op::Add(a, b) => self.point3(*a, x, y, z) + self.point3(*b, x, y, z),
            Op::Mul(a, b) => self.point3(*a, x, y, z) * self.point3(*b, x, y, z),
            Op::Min(a, b) => self.point3(*a, x, y, z).min(self.point3(*b, x, y, z)),
            Op::Max(a, b) => self.point3(*a, x, y, z).max(self.point3(*b, x, y, z)),
            Op::Select {
                a,
                b,
                mask,
                threshold,
                edge0,
                inv,
            } => {
                let (va, vb) = (self.point3(*a, x, y, z), self.point3(*b, x, y, z));
                let t = select_weight(self.point3(*mask, x, y, z), *threshold, *edge0, *inv);
                blend(va, vb, t)
            }
            Op::Clamp(s, lo, hi) => self.point3(*s, x, y, z).clamp(*lo, *hi),
            Op::Remap {
                src,
                from0,
                scale,
                to0,
            } => (self.point3(*src, x, y, z) - from0) * scale + to0,
            Op::Curve(s, spline) => spline.eval(self.point3(*s, x, y, z)),
        }
    }

    /// Eight 2D samples (the same operations per lane as [`NoiseGraph::sample2`]).
    fn lanes2(&self, i: usize, x: &[f32; LANES], y: &[f32; LANES]) -> [f32; LANES] {
        let zip = |a: [f32; LANES], b: [f32; LANES], f: fn(f32, f32) -> f32| {
            std::array::from_fn(|l| f(a[l], b[l]))
        };
        match &self.ops[i] {
            Op::Constant(v) => [*v; LANES],
            Op::Fractal(f) => f.sample2_lanes(x, y),
            Op::Warp { src, amplitude, w } => {
                let dx = w[0].sample2_lanes(x, y);
                let dy = w[1].sample2_lanes(x, y);
                let wx = std::array::from_fn(|l| x[l] + amplitude * dx[l]);
                let wy = std::array::from_fn(|l| y[l] + amplitude * dy[l]);
                self.lanes2(*src, &wx, &wy)
            }
            Op::Add(a, b) => zip(self.lanes2(*a, x, y), self.lanes2(*b, x, y), |p, q| p + q),
            Op::Mul(a, b) => zip(self.lanes2(*a, x, y), self.lanes2(*b, x, y), |p, q| p * q),
            Op::Min(a, b) => zip(self.lanes2(*a, x, y), self.lanes2(*b, x, y), f32::min),
            Op::Max(a, b) => zip(self.lanes2(*a, x, y), self.lanes2(*b, x, y), f32::max),
            Op::Select {
                a,
                b,
                mask,
                threshold,
                edge0,
                inv,
            } => {
                let (va, vb) = (self.lanes2(*a, x, y), self.lanes2(*b, x, y));
                let m = self.lanes2(*mask, x, y);
                std::array::from_fn(|l| {
                    let t = select_weight(m[l], *threshold, *edge0, *inv);
                    blend(va[l], vb[l], t)
                })
            }
            Op::Clamp(s, lo, hi) => self.lanes2(*s, x, y).map(|v| v.clamp(*lo, *hi)),
            Op::Remap {
                src,
                from0,
                scale,
                to0,
            } => self.lanes2(*src, x, y).map(|v| (v - from0) * scale + to0),
            Op::Curve(s, spline) => self.lanes2(*s, x, y).map(|v| spline.eval(v)),
        }
    }

    /// Eight 3D samples (the same operations per lane as [`NoiseGraph::sample3`]).
    fn lanes3(
        &self,
        i: usize,
        x: &[f32; LANES],
        y: &[f32; LANES],
        z: &[f32; LANES],
    ) -> [f32; LANES] {
        let zip = |a: [f32; LANES], b: [f32; LANES], f: fn(f32, f32) -> f32| {
            std::array::from_fn(|l| f(a[l], b[l]))
        };
        match &self.ops[i] {
            Op::Constant(v) => [*v; LANES],
            Op::Fractal(f) => f.sample3_lanes(x, y, z),
            Op::Warp { src, amplitude, w } => {
                let dx = w[0].sample3_lanes(x, y, z);
                let dy = w[1].sample3_lanes(x, y, z);
                let dz = w[2].sample3_lanes(x, y, z);
                let wx = std::array::from_fn(|l| x[l] + amplitude * dx[l]);
                let wy = std::array::from_fn(|l| y[l] + amplitude * dy[l]);
                let wz = std::array::from_fn(|l| z[l] + amplitude * dz[l]);
                self.lanes3(*src, &wx, &wy, &wz)
            }
            Op::Add(a, b) => zip(
                self.lanes3(*a, x, y, z),
                self.lanes3(*b, x, y, z),
                |p, q| p + q,
            ),
            Op::Mul(a, b) => zip(
                self.lanes3(*a, x, y, z),
                self.lanes3(*b, x, y, z),
                |p, q| p * q,
            ),
            Op::Min(a, b) => zip(self.lanes3(*a, x, y, z), self.lanes3(*b, x, y, z), f32::min),
            Op::Max(a, b) => zip(self.lanes3(*a, x, y, z), self.lanes3(*b, x, y, z), f32::max),
            Op::Select {
                a,
                b,
                mask,
                threshold,
                edge0,
                inv,
            } => {
                let (va, vb) = (self.lanes3(*a, x, y, z), self.lanes3(*b, x, y, z));
                let m = self.lanes3(*mask, x, y, z);
                std::array::from_fn(|l| {
                    let t = select_weight(m[l], *threshold, *edge0, *inv);
                    blend(va[l], vb[l], t)
                })
            }
            Op::Clamp(s, lo, hi) => self.lanes3(*s, x, y, z).map(|v| v.clamp(*lo, *hi)),
            Op::Remap {
                src,
                from0,
                scale,
                to0,
            } => self
                .lanes3(*src, x, y, z)
                .map(|v| (v - from0) * scale + to0),
            Op::Curve(s, spline) => self.lanes3(*s, x, y, z).map(|v| spline.eval(v)),
        }
    }

    /// Fills `out` with a `dims[0] x dims[1]` grid (row-major, x fastest):
    /// sample `(i, j)` is `sample2(origin[0] + i as f32 * step[0],
    /// origin[1] + j as f32 * step[1])`, bit for bit. Errors as
    /// [`fill2`](crate::fill2); nothing is written on error.
    pub fn fill2(
        &self,
        origin: [f32; 2],
        step: [f32; 2],
        dims: [u32; 2],
        out: &mut [f32],
    ) -> Result<(), FieldError> {
        check_grid(&origin, &step, &dims, out.len())?;
        if out.is_empty() {
            return Ok(());
        }
        for (j, row) in out.chunks_mut(dims[0] as usize).enumerate() {
            let y = [origin[1] + j as f32 * step[1]; LANES];
            for (c, chunk) in row.chunks_mut(LANES).enumerate() {
                let last = chunk.len() - 1;
                let x: [f32; LANES] =
                    std::array::from_fn(|l| origin[0] + (c * LANES + l.min(last)) as f32 * step[0]);
                let v = self.lanes2(self.root, &x, &y);
                chunk.copy_from_slice(&v[..chunk.len()]);
            }
        }
        Ok(())
    }

    /// Fills `out` with a `dims[0] x dims[1] x dims[2]` grid (x fastest, then
    /// y, then z), bit-identical to [`NoiseGraph::sample3`]. Errors as
    /// [`fill3`](crate::fill3).
    pub fn fill3(
        &self,
        origin: [f32; 3],
        step: [f32; 3],
        dims: [u32; 3],
        out: &mut [f32],
    ) -> Result<(), FieldError> {
        check_grid(&origin, &step, &dims, out.len())?;
        if out.is_empty() {
            return Ok(());
        }
        let plane = dims[0] as usize * dims[1] as usize;
        for (k, slab) in out.chunks_mut(plane).enumerate() {
            let z = [origin[2] + k as f32 * step[2]; LANES];
            for (j, row) in slab.chunks_mut(dims[0] as usize).enumerate() {
                let y = [origin[1] + j as f32 * step[1]; LANES];
                for (c, chunk) in row.chunks_mut(LANES).enumerate() {
                    let last = chunk.len() - 1;
                    let x: [f32; LANES] = std::array::from_fn(|l| {
                        origin[0] + (c * LANES + l.min(last)) as f32 * step[0]
                    });
                    let v = self.lanes3(self.root, &x, &y, &z);
                    chunk.copy_from_slice(&v[..chunk.len()]);
                }
            }
        }
        Ok(())
    }
}
