//! A composable heightmap generator: warped fBm hills, ridged mountains under
//! a mask, a monotone height curve and a height multiplier.

use crate::noise::{Basis, Fractal, FractalKind, FractalParams};
use crate::noise::{LANES, Noise2};
use crate::{CurveSpline, FieldError, HeightCurve};

/// A named starting point for [`HeightParams`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum HeightPreset {
    /// Rolling hills with a few low ridges.
    #[default]
    Hills,
    /// Ridged mountain ranges between valleys, strongly warped.
    Mountains,
    /// Islands: the curve flattens the lower half into a sea floor at 0.
    Islands,
}

impl HeightPreset {
    /// Every preset.
    pub const ALL: [HeightPreset; 3] = [
        HeightPreset::Hills,
        HeightPreset::Mountains,
        HeightPreset::Islands,
    ];

    /// The preset's name (`hills`, `mountains`, `islands`).
    pub const fn name(self) -> &'static str {
        match self {
            HeightPreset::Hills => "hills",
            HeightPreset::Mountains => "mountains",
            HeightPreset::Islands => "islands",
        }
    }

    /// The preset with this name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

impl std::fmt::Display for HeightPreset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Parameters of [`HeightGen`].
///
/// For a world position `(x, z)`:
///
/// ```text
/// (wx, wz) = (x, z) + warp_amplitude * (warp_x(x, z), warp_z(x, z))    domain warp
/// b = base(wx, wz)                                 fBm, in [-1, 1]
/// r = mountains(wx, wz) * 0.5 + 0.5                ridged, in [0, 1]
/// w = smoothstep(mask_threshold - mask_blend,
///                mask_threshold + mask_blend, mask(wx, wz))   in [0, 1]
/// h = b + mountain_strength * w * r                in [-1, 1 + mountain_strength]
/// n = (h + 1) / (2 + mountain_strength)            in [0, 1], by the analytic range
/// height = curve(n) * height_scale
/// ```
///
/// Normalisation uses the analytic range of `h`, never the data, so tiles
/// generated separately agree exactly.
///
/// ```
/// use isoterra_field::{HeightGen, HeightParams, HeightPreset};
/// let p = HeightParams::preset(HeightPreset::Mountains).with_height_scale(300.0);
/// let g = HeightGen::new(&p, 42)?;
/// let [lo, hi] = g.range();
/// let h = g.height_at(10.0, -20.0);
/// assert!(lo <= h && h <= hi);
/// # Ok::<(), isoterra_field::FieldError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct HeightParams {
    /// The base terrain. Default value: Perlin fBm, 5 octaves, frequency 1/256.
    pub base: FractalParams,
    /// The mountain noise (usually ridged). Default value: ridged Perlin,
    /// 5 octaves, frequency 1/192.
    pub mountains: FractalParams,
    /// Where mountains rise (low frequency). Default value: Perlin fBm,
    /// 2 octaves, frequency 1/512.
    pub mask: FractalParams,
    /// Mask value at the middle of the mountain edge, in `[-1, 1]`.
    /// Default value: `0.2`.
    pub mask_threshold: f32,
    /// Half-width of the mask transition, finite and `>= 0` (`0` is a hard
    /// edge). Default value: `0.2`.
    pub mask_blend: f32,
    /// Height of the mountains relative to the base, finite and `>= 0`.
    /// Default value: `0.4`.
    pub mountain_strength: f32,
    /// How far the domain warp moves sample positions, in world units,
    /// finite and `>= 0` (`0` disables it). Default value: `0`.
    pub warp_amplitude: f32,
    /// The warp noise (1 octave: simple warp; more: fractal warp).
    /// Default value: Perlin fBm, 3 octaves, frequency 1/256.
    pub warp: FractalParams,
    /// Maps the normalised height `n` in `[0, 1]` (see above). Default value:
    /// [`HeightCurve::LINEAR`].
    pub curve: HeightCurve,
    /// Multiplier applied last, finite and `> 0`. Default value: `64.0`.
    pub height_scale: f32,
}

impl HeightParams {
    /// Gentle hills (the [`HeightPreset::Hills`] preset).
    pub const DEFAULT: Self = HeightParams {
        base: FractalParams::DEFAULT
            .with_octaves(5)
            .with_frequency(1.0 / 256.0),
        mountains: FractalParams::DEFAULT
            .with_kind(FractalKind::Ridged)
            .with_octaves(5)
            .with_frequency(1.0 / 192.0),
        mask: FractalParams::DEFAULT
            .with_octaves(2)
            .with_frequency(1.0 / 512.0),
        mask_threshold: 0.2,
        mask_blend: 0.2,
        mountain_strength: 0.4,
        warp_amplitude: 0.0,
        warp: FractalParams::DEFAULT
            .with_octaves(3)
            .with_frequency(1.0 / 256.0),
        curve: HeightCurve::LINEAR,
        height_scale: 64.0,
    };

    /// The parameters of a preset.
    pub fn preset(preset: HeightPreset) -> Self {
        match preset {
            HeightPreset::Hills => Self::DEFAULT,
            HeightPreset::Mountains => Self {
                base: Self::DEFAULT.base.with_basis(Basis::OpenSimplex2),
                mountain_strength: 1.6,
                mask_threshold: -0.1,
                mask_blend: 0.3,
                warp_amplitude: 40.0,
                curve: HeightCurve::new(&[[0.0, 0.0], [0.35, 0.12], [0.7, 0.5], [1.0, 1.0]])
                    .unwrap_or(HeightCurve::LINEAR),
                height_scale: 256.0,
                ..Self::DEFAULT
            },
            HeightPreset::Islands => Self {
                base: Self::DEFAULT
                    .base
                    .with_octaves(6)
                    .with_frequency(1.0 / 384.0),
                mountain_strength: 0.3,
                mask_threshold: 0.4,
                warp_amplitude: 24.0,
                curve: HeightCurve::new(&[
                    [0.0, 0.0],
                    [0.42, 0.0],
                    [0.5, 0.08],
                    [0.6, 0.2],
                    [1.0, 1.0],
                ])
                .unwrap_or(HeightCurve::LINEAR),
                height_scale: 128.0,
                ..Self::DEFAULT
            },
        }
    }

    /// Sets [`base`](Self::base).
    pub const fn with_base(mut self, base: FractalParams) -> Self {
        self.base = base;
        self
    }

    /// Sets [`mountains`](Self::mountains).
    pub const fn with_mountains(mut self, mountains: FractalParams) -> Self {
        self.mountains = mountains;
        self
    }

    /// Sets [`mask`](Self::mask).
    pub const fn with_mask(mut self, mask: FractalParams) -> Self {
        self.mask = mask;
        self
    }

    /// Sets [`mask_threshold`](Self::mask_threshold) and [`mask_blend`](Self::mask_blend).
    pub const fn with_mask_edge(mut self, threshold: f32, blend: f32) -> Self {
        self.mask_threshold = threshold;
        self.mask_blend = blend;
        self
    }

    /// Sets [`mountain_strength`](Self::mountain_strength).
    pub const fn with_mountain_strength(mut self, strength: f32) -> Self {
        self.mountain_strength = strength;
        self
    }

    /// Sets [`warp_amplitude`](Self::warp_amplitude).
    pub const fn with_warp_amplitude(mut self, amplitude: f32) -> Self {
        self.warp_amplitude = amplitude;
        self
    }

    /// Sets [`warp`](Self::warp).
    pub const fn with_warp(mut self, warp: FractalParams) -> Self {
        self.warp = warp;
        self
    }

    /// Sets [`curve`](Self::curve).
    pub const fn with_curve(mut self, curve: HeightCurve) -> Self {
        self.curve = curve;
        self
    }

    /// Sets [`height_scale`](Self::height_scale).
    pub const fn with_height_scale(mut self, scale: f32) -> Self {
        self.height_scale = scale;
        self
    }

    /// Checks every parameter.
    pub fn validate(&self) -> Result<(), FieldError> {
        self.base.validate()?;
        self.mountains.validate()?;
        self.mask.validate()?;
        self.warp.validate()?;
        self.curve.validate()?;
        if !(-1.0..=1.0).contains(&self.mask_threshold) {
            return Err(FieldError::param(
                "mask_threshold",
                self.mask_threshold,
                "must be between -1 and 1 (the range of the mask noise)",
            ));
        }
        let finite_non_negative = [
            ("mask_blend", self.mask_blend),
            ("mountain_strength", self.mountain_strength),
            ("warp_amplitude", self.warp_amplitude),
        ];
        for (name, v) in finite_non_negative {
            if !(v.is_finite() && v >= 0.0) {
                return Err(FieldError::param(
                    name,
                    v,
                    "must be finite and at least zero",
                ));
            }
        }
        if self.mountain_strength > 1.0e6 || self.warp_amplitude > 1.0e9 {
            return Err(FieldError::param(
                "mountain_strength",
                self.mountain_strength,
                "mountain strength must be at most 1e6 and warp amplitude at most 1e9",
            ));
        }
        if !(self.height_scale.is_finite() && self.height_scale > 0.0) {
            return Err(FieldError::param(
                "height_scale",
                self.height_scale,
                "must be finite and greater than zero",
            ));
        }
        let [lo, hi] = self.curve.range();
        if !((lo * self.height_scale).is_finite() && (hi * self.height_scale).is_finite()) {
            return Err(FieldError::param(
                "height_scale",
                self.height_scale,
                "the curve's range times the height scale overflows",
            ));
        }
        Ok(())
    }
}

impl Default for HeightParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A seeded heightmap generator (see [`HeightParams`] for the formula).
///
/// [`HeightGen::height_at`] and [`HeightGen::fill_heights`] give the same
/// bits for the same position; every height lies in [`HeightGen::range`],
/// the analytic range exporters use to map heights to 16-bit values.
#[derive(Debug, Clone, PartialEq)]
pub struct HeightGen {
    params: HeightParams,
    seed: u64,
    base: Fractal,
    mountains: Fractal,
    mask: Fractal,
    warp_x: Fractal,
    warp_z: Fractal,
    spline: CurveSpline,
    /// `1 / (2 + mountain_strength)`.
    inv_span: f32,
    /// `mask_threshold - mask_blend` and `1 / (2 * mask_blend)` (0 when hard).
    edge0: f32,
    inv_edge: f32,
    range: [f32; 2],
}

impl HeightGen {
    /// A generator for `params` (validated) and `seed`.
    pub fn new(params: &HeightParams, seed: u64) -> Result<Self, FieldError> {
        params.validate()?;
        let sub = |i: u64| crate::noise::hash::derive(seed, 0x4E16_0000 + i);
        let spline = params.curve.spline()?;
        let [lo, hi] = spline.range();
        let inv_edge = if params.mask_blend > 0.0 {
            1.0 / (2.0 * params.mask_blend)
        } else {
            0.0
        };
        Ok(HeightGen {
            params: *params,
            seed,
            base: Fractal::new(&params.base, sub(0))?,
            mountains: Fractal::new(&params.mountains, sub(1))?,
            mask: Fractal::new(&params.mask, sub(2))?,
            warp_x: Fractal::new(&params.warp, sub(3))?,
            warp_z: Fractal::new(&params.warp, sub(4))?,
            spline,
            inv_span: 1.0 / (2.0 + params.mountain_strength),
            edge0: params.mask_threshold - params.mask_blend,
            inv_edge,
            range: [lo * params.height_scale, hi * params.height_scale],
        })
    }

    /// A generator for a preset.
    pub fn preset(preset: HeightPreset, seed: u64) -> Result<Self, FieldError> {
        Self::new(&HeightParams::preset(preset), seed)
    }

    /// The parameters.
    pub fn params(&self) -> &HeightParams {
        &self.params
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The analytic range `[min, max]` of every height this generator can
    /// return: `curve.range() * height_scale`. It depends on the parameters
    /// only, never on a region, so exporters can map heights to integers
    /// the same way for every tile.
    pub fn range(&self) -> [f32; 2] {
        self.range
    }

    /// The mountain weight of a mask value: a smoothstep over the edge
    /// (a step at the threshold when the blend is 0).
    #[inline(always)]
    fn mask_weight(&self, m: f32) -> f32 {
        if self.inv_edge == 0.0 {
            return if m >= self.params.mask_threshold {
                1.0
            } else {
                0.0
            };
        }
        let t = (m - self.edge0) * self.inv_edge;
        let t = t.clamp(0.0, 1.0);
        t * t * (3.0 - 2.0 * t)
    }

    /// Everything after the noise lookups; shared by both paths.
    #[inline(always)]
    fn finish(&self, b: f32, r: f32, m: f32) -> f32 {
        let w = self.mask_weight(m);
        let h = b + self.params.mountain_strength * w * (r * 0.5 + 0.5);
        let n = ((h + 1.0) * self.inv_span).clamp(0.0, 1.0);
        self.spline.eval(n) * self.params.height_scale
    }

    /// The height at world position `(x, z)`.
    pub fn height_at(&self, x: f32, z: f32) -> f32 {
        let a = self.params.warp_amplitude;
        let (wx, wz) = if a > 0.0 {
            (
                x + a * self.warp_x.sample2(x, z),
                z + a * self.warp_z.sample2(x, z),
            )
        } else {
            (x, z)
        };
        let b = self.base.sample2(wx, wz);
        let r = self.mountains.sample2(wx, wz);
        let m = self.mask.sample2(wx, wz);
        self.finish(b, r, m)
    }

    /// [`finish`](Self::finish) of `N` lanes, bit for bit.
    #[inline(always)]
    fn finish_lanes<const N: usize>(&self, b: &[f32; N], r: &[f32; N], m: &[f32; N]) -> [f32; N] {
        let n: [f32; N] = std::array::from_fn(|l| {
            let w = self.mask_weight(m[l]);
            let h = b[l] + self.params.mountain_strength * w * (r[l] * 0.5 + 0.5);
            ((h + 1.0) * self.inv_span).clamp(0.0, 1.0)
        });
        self.spline
            .eval_lanes(&n)
            .map(|y| y * self.params.height_scale)
    }

    /// `out[i] = finish(b[i], r[i], m[i])`, `N` lanes at a time.
    #[inline(always)]
    fn finish_row<const N: usize>(&self, b: &[f32], r: &[f32], m: &[f32], out: &mut [f32]) {
        let len = out.len().min(b.len()).min(r.len()).min(m.len());
        crate::noise::kernel::groups::<N>(len, |i, last| {
            let lane = |s: &[f32]| -> [f32; N] { std::array::from_fn(|l| s[i + l.min(last)]) };
            let v = self.finish_lanes::<N>(&lane(b), &lane(r), &lane(m));
            out[i..=i + last].copy_from_slice(&v[..=last]);
        });
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq")]
    fn finish_row_avx512(&self, b: &[f32], r: &[f32], m: &[f32], out: &mut [f32]) {
        self.finish_row::<16>(b, r, m, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn finish_row_avx2(&self, b: &[f32], r: &[f32], m: &[f32], out: &mut [f32]) {
        self.finish_row::<LANES>(b, r, m, out)
    }

    /// [`finish_row`](Self::finish_row) on the widest vectors this CPU has.
    fn finish_row_best(&self, b: &[f32], r: &[f32], m: &[f32], out: &mut [f32]) {
        crate::noise::kernel::widest!(
            avx512: self.finish_row_avx512(b, r, m, out),
            avx2: self.finish_row_avx2(b, r, m, out),
            plain: self.finish_row::<LANES>(b, r, m, out),
        )
    }

    /// Fills `out` with the heights of a `dims[0] x dims[1]` grid (row-major,
    /// x fastest): sample `(i, j)` is
    /// `height_at(origin[0] + i as f32 * step[0], origin[1] + j as f32 * step[1])`,
    /// bit for bit.
    ///
    /// Errors (nothing written): non-finite origin, step or grid end, or
    /// `out.len() != dims[0] * dims[1]`.
    pub fn fill_heights(
        &self,
        origin: [f32; 2],
        step: [f32; 2],
        dims: [u32; 2],
        out: &mut [f32],
    ) -> Result<(), FieldError> {
        crate::noise::check_grid(&origin, &step, &dims, out.len())?;
        if out.is_empty() {
            return Ok(());
        }
        let w = dims[0] as usize;
        let a = self.params.warp_amplitude;
        // Base, mountain and mask rows, then (warped) the warped x and z.
        let mut buf = vec![0.0f32; w * if a > 0.0 { 5 } else { 3 }];
        let (b, rest) = buf.split_at_mut(w);
        let (r, rest) = rest.split_at_mut(w);
        let (m, warped) = rest.split_at_mut(w);
        for (j, row) in out.chunks_exact_mut(w).enumerate() {
            let z = origin[1] + j as f32 * step[1];
            if a > 0.0 {
                let (wx, wz) = warped.split_at_mut(w);
                self.warp_x.fill_row2(origin[0], step[0], z, wx);
                self.warp_z.fill_row2(origin[0], step[0], z, wz);
                for (i, (wx, wz)) in wx.iter_mut().zip(wz.iter_mut()).enumerate() {
                    let x = origin[0] + i as f32 * step[0];
                    *wx = x + a * *wx;
                    *wz = z + a * *wz;
                }
                self.base.fill_points2(wx, wz, b);
                self.mountains.fill_points2(wx, wz, r);
                self.mask.fill_points2(wx, wz, m);
            } else {
                self.base.fill_row2(origin[0], step[0], z, b);
                self.mountains.fill_row2(origin[0], step[0], z, r);
                self.mask.fill_row2(origin[0], step[0], z, m);
            }
            self.finish_row_best(b, r, m, row);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `finish_row` at 8 and 16 lanes, plain and compiled for the vector
    /// extensions this CPU has, gives `finish`'s bits on every preset's
    /// curve, with inputs past the clamps and NaN.
    #[test]
    fn finish_row_gives_finish_bits_at_every_width() {
        for preset in HeightPreset::ALL {
            let g = HeightGen::preset(preset, 3).unwrap();
            let len = 37;
            let v = |i: usize, k: f32| ((i as f32 * k).sin() * 1.3).clamp(-1.5, 1.5);
            let mut b: Vec<f32> = (0..len).map(|i| v(i, 0.7)).collect();
            let r: Vec<f32> = (0..len).map(|i| v(i, 1.9)).collect();
            let m: Vec<f32> = (0..len).map(|i| v(i, 0.23)).collect();
            b[5] = f32::NAN;
            b[6] = f32::INFINITY;
            let want: Vec<u32> = (0..len)
                .map(|i| g.finish(b[i], r[i], m[i]).to_bits())
                .collect();
            let mut outs = Vec::new();
            let mut out = vec![0.0f32; len];
            g.finish_row::<8>(&b, &r, &m, &mut out);
            outs.push(out.clone());
            g.finish_row::<16>(&b, &r, &m, &mut out);
            outs.push(out.clone());
            #[cfg(target_arch = "x86_64")]
            if crate::noise::kernel::have_avx2() {
                // SAFETY: the CPU supports AVX2 (checked just above).
                unsafe { g.finish_row_avx2(&b, &r, &m, &mut out) };
                outs.push(out.clone());
            }
            #[cfg(target_arch = "x86_64")]
            if crate::noise::kernel::have_avx512() {
                // SAFETY: the CPU supports AVX-512 (checked just above).
                unsafe { g.finish_row_avx512(&b, &r, &m, &mut out) };
                outs.push(out.clone());
            }
            for o in outs {
                let got: Vec<u32> = o.iter().map(|x| x.to_bits()).collect();
                assert_eq!(got, want, "{preset}");
            }
        }
    }

    #[test]
    fn presets_validate_and_have_names() {
        for p in HeightPreset::ALL {
            assert!(HeightParams::preset(p).validate().is_ok(), "{p}");
            assert_eq!(HeightPreset::from_name(p.name()), Some(p));
        }
        assert_eq!(HeightPreset::from_name("plains"), None);
    }

    #[test]
    fn mask_weight_is_a_smoothstep() {
        let g = HeightGen::new(&HeightParams::DEFAULT.with_mask_edge(0.0, 0.5), 1).unwrap();
        assert_eq!(g.mask_weight(-1.0), 0.0);
        assert_eq!(g.mask_weight(0.0), 0.5);
        assert_eq!(g.mask_weight(1.0), 1.0);
        let hard = HeightGen::new(&HeightParams::DEFAULT.with_mask_edge(0.0, 0.0), 1).unwrap();
        assert_eq!(hard.mask_weight(-0.01), 0.0);
        assert_eq!(hard.mask_weight(0.0), 1.0);
    }
}
