//! Fractal Brownian motion: a weighted sum of noise octaves.

use super::fractal::{Basis, Fractal, FractalKind, FractalParams};
use super::{LANES, Noise2, Noise3, fill2, fill3};
use crate::FieldError;

/// Parameters of fractal Brownian motion ([`Fbm`]).
///
/// Octave `i` (from 0) samples the basis noise at frequency
/// `frequency * lacunarity^i` with amplitude `persistence^i`; the sum is
/// divided by the sum of the amplitudes, so the result stays in `[-1, 1]`
/// whatever the data.
///
/// ```
/// use isoterra_field::FbmParams;
/// let p = FbmParams::DEFAULT.with_octaves(6).with_frequency(0.01);
/// assert!(p.validate().is_ok());
/// assert!(FbmParams::DEFAULT.with_octaves(0).validate().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct FbmParams {
    /// Number of octaves, `1..=32`. Default value: `4`.
    pub octaves: u32,
    /// Amplitude factor between octaves (gain), finite and `>= 0`.
    /// Default value: `0.5`.
    pub persistence: f32,
    /// Frequency factor between octaves, finite and `> 0`. Default value: `2.0`.
    pub lacunarity: f32,
    /// Frequency of the first octave in cycles per coordinate unit, finite and
    /// `> 0`. Default value: `0.015625` (features about 64 units wide).
    pub frequency: f32,
}

impl FbmParams {
    /// The most octaves allowed.
    pub const MAX_OCTAVES: u32 = 32;

    /// The defaults: 4 octaves, persistence 0.5, lacunarity 2, frequency 1/64.
    pub const DEFAULT: Self = FbmParams {
        octaves: 4,
        persistence: 0.5,
        lacunarity: 2.0,
        frequency: 1.0 / 64.0,
    };

    /// Sets [`octaves`](Self::octaves).
    pub const fn with_octaves(mut self, octaves: u32) -> Self {
        self.octaves = octaves;
        self
    }

    /// Sets [`persistence`](Self::persistence).
    pub const fn with_persistence(mut self, persistence: f32) -> Self {
        self.persistence = persistence;
        self
    }

    /// Sets [`lacunarity`](Self::lacunarity).
    pub const fn with_lacunarity(mut self, lacunarity: f32) -> Self {
        self.lacunarity = lacunarity;
        self
    }

    /// Sets [`frequency`](Self::frequency).
    pub const fn with_frequency(mut self, frequency: f32) -> Self {
        self.frequency = frequency;
        self
    }

    /// Checks every parameter, and that the highest octave's frequency and
    /// the sum of amplitudes stay finite.
    pub fn validate(&self) -> Result<(), FieldError> {
        if self.octaves == 0 || self.octaves > Self::MAX_OCTAVES {
            return Err(FieldError::param(
                "octaves",
                self.octaves,
                "must be between 1 and 32",
            ));
        }
        if !(self.frequency.is_finite() && self.frequency > 0.0) {
            return Err(FieldError::param(
                "frequency",
                self.frequency,
                "must be finite and greater than zero",
            ));
        }
        if !(self.lacunarity.is_finite() && self.lacunarity > 0.0) {
            return Err(FieldError::param(
                "lacunarity",
                self.lacunarity,
                "must be finite and greater than zero (2.0 is usual)",
            ));
        }
        if !(self.persistence.is_finite() && self.persistence >= 0.0) {
            return Err(FieldError::param(
                "persistence",
                self.persistence,
                "must be finite and at least zero (0.5 is usual)",
            ));
        }
        let (mut freq, mut amp, mut total) = (self.frequency, 1.0f32, 0.0f32);
        for _ in 0..self.octaves {
            total += amp;
            if !freq.is_finite() {
                return Err(FieldError::param(
                    "lacunarity",
                    self.lacunarity,
                    "the frequency of the highest octave overflows; use fewer octaves or a smaller lacunarity",
                ));
            }
            freq *= self.lacunarity;
            amp *= self.persistence;
        }
        if !total.is_finite() {
            return Err(FieldError::param(
                "persistence",
                self.persistence,
                "the sum of octave amplitudes overflows; use fewer octaves or a smaller persistence",
            ));
        }
        Ok(())
    }

    /// The sum of the octave amplitudes, `1 + p + p^2 + ...` (the analytic
    /// bound of the raw octave sum).
    pub fn amplitude_sum(&self) -> f32 {
        let (mut amp, mut total) = (1.0f32, 0.0f32);
        for _ in 0..self.octaves.min(Self::MAX_OCTAVES) {
            total += amp;
            amp *= self.persistence;
        }
        total
    }
}

impl Default for FbmParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Seeded fBm over improved Perlin noise, in `[-1, 1]`.
///
/// Each octave has its own hash key and a pseudo-random offset, both derived
/// from the seed, so octaves do not share lattice points (all Perlin octaves
/// would otherwise be zero together at the origin). This is the
/// [`Fractal`] with [`Basis::Perlin`] and [`FractalKind::Fbm`], bit for bit.
///
/// ```
/// use isoterra_field::{Fbm, FbmParams, Noise2};
/// let fbm = Fbm::new(&FbmParams::DEFAULT, 7)?;
/// let v = fbm.sample2(10.0, 20.0);
/// assert!((-1.0..=1.0).contains(&v));
/// # Ok::<(), isoterra_field::FieldError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Fbm {
    params: FbmParams,
    inner: Fractal,
}

impl Fbm {
    /// fBm with `params` (validated) and `seed`.
    pub fn new(params: &FbmParams, seed: u64) -> Result<Self, FieldError> {
        let inner = Fractal::new(
            &FractalParams::from_fbm(params, Basis::Perlin, FractalKind::Fbm),
            seed,
        )?;
        Ok(Fbm {
            params: *params,
            inner,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &FbmParams {
        &self.params
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.inner.seed()
    }

    /// The same noise as a general [`Fractal`].
    pub fn as_fractal(&self) -> &Fractal {
        &self.inner
    }
}

impl Noise2 for Fbm {
    #[inline]
    fn sample2(&self, x: f32, y: f32) -> f32 {
        self.inner.sample2(x, y)
    }

    #[inline]
    fn sample2_lanes(&self, x: &[f32; LANES], y: &[f32; LANES]) -> [f32; LANES] {
        self.inner.sample2_lanes(x, y)
    }

    #[inline]
    fn sample2_row(&self, x: &[f32; LANES], y: f32) -> [f32; LANES] {
        self.inner.sample2_row(x, y)
    }

    #[inline]
    fn fill_row2(&self, x0: f32, dx: f32, y: f32, out: &mut [f32]) {
        self.inner.fill_row2(x0, dx, y, out)
    }
}

impl Noise3 for Fbm {
    #[inline]
    fn sample3(&self, x: f32, y: f32, z: f32) -> f32 {
        self.inner.sample3(x, y, z)
    }

    #[inline]
    fn sample3_lanes(&self, x: &[f32; LANES], y: &[f32; LANES], z: &[f32; LANES]) -> [f32; LANES] {
        self.inner.sample3_lanes(x, y, z)
    }

    #[inline]
    fn sample3_row(&self, x: &[f32; LANES], y: f32, z: f32) -> [f32; LANES] {
        self.inner.sample3_row(x, y, z)
    }

    #[inline]
    fn fill_row3(&self, x0: f32, dx: f32, y: f32, z: f32, out: &mut [f32]) {
        self.inner.fill_row3(x0, dx, y, z, out)
    }

    #[inline]
    fn fill_grid3(&self, origin: [f32; 3], step: [f32; 3], dims: [usize; 2], out: &mut [f32]) {
        self.inner.fill_grid3(origin, step, dims, out)
    }
}

/// Fills `out` with 2D fBm on a grid: sample `(i, j)` goes to
/// `out[j * dims[0] + i]` and is bit-identical to
/// `Fbm::new(params, seed)?.sample2(origin[0] + i as f32 * step[0], origin[1] + j as f32 * step[1])`.
///
/// Errors: invalid `params`, non-finite `origin` / `step` / grid extent, or
/// `out.len() != dims[0] * dims[1]`. Nothing is written on error.
pub fn fill_fbm2(
    params: &FbmParams,
    seed: u64,
    origin: [f32; 2],
    step: [f32; 2],
    dims: [u32; 2],
    out: &mut [f32],
) -> Result<(), FieldError> {
    let fbm = Fbm::new(params, seed)?;
    fill2(&fbm, origin, step, dims, out)
}

/// Fills `out` with 3D fBm on a grid: sample `(i, j, k)` goes to
/// `out[(k * dims[1] + j) * dims[0] + i]`, bit-identical to the point API
/// (see [`fill_fbm2`]).
pub fn fill_fbm3(
    params: &FbmParams,
    seed: u64,
    origin: [f32; 3],
    step: [f32; 3],
    dims: [u32; 3],
    out: &mut [f32],
) -> Result<(), FieldError> {
    let fbm = Fbm::new(params, seed)?;
    fill3(&fbm, origin, step, dims, out)
}

#[cfg(test)]
mod tests {
    use super::super::perlin::{Row2, perlin2_row};
    use super::*;

    #[test]
    fn validation_rejects_bad_values() {
        let d = FbmParams::DEFAULT;
        assert!(d.validate().is_ok());
        for bad in [
            d.with_octaves(0),
            d.with_octaves(33),
            d.with_frequency(0.0),
            d.with_frequency(-1.0),
            d.with_frequency(f32::NAN),
            d.with_frequency(f32::INFINITY),
            d.with_lacunarity(0.0),
            d.with_lacunarity(f32::NAN),
            d.with_persistence(f32::NAN),
            d.with_persistence(-0.5),
            d.with_persistence(f32::INFINITY),
            d.with_octaves(32).with_lacunarity(1e10),
            d.with_octaves(32).with_persistence(1e10),
        ] {
            assert!(
                matches!(bad.validate(), Err(FieldError::InvalidParameter { .. })),
                "{bad:?}"
            );
            assert!(Fbm::new(&bad, 1).is_err());
        }
        assert!(d.with_persistence(0.0).validate().is_ok());
        assert!(d.with_octaves(32).validate().is_ok());
    }

    #[test]
    fn amplitude_sum_is_geometric() {
        assert_eq!(FbmParams::DEFAULT.amplitude_sum(), 1.875);
        assert_eq!(
            FbmParams::DEFAULT.with_persistence(0.0).amplitude_sum(),
            1.0
        );
        assert_eq!(
            FbmParams::DEFAULT
                .with_persistence(1.0)
                .with_octaves(5)
                .amplitude_sum(),
            5.0
        );
    }

    #[test]
    fn one_octave_is_scaled_perlin() {
        let p = FbmParams::DEFAULT.with_octaves(1).with_frequency(1.0);
        let f = Fbm::new(&p, 3).unwrap();
        let o = f.as_fractal().octaves()[0];
        let x = 1.3;
        let y = -4.7;
        assert_eq!(
            f.sample2(x, y),
            perlin2_row(o.key, x + o.offset[0], &Row2::new(y + o.offset[1]))
        );
    }

    #[test]
    fn octaves_are_not_all_zero_at_origin() {
        let f = Fbm::new(&FbmParams::DEFAULT, 11).unwrap();
        assert_ne!(f.sample2(0.0, 0.0), 0.0);
        assert_ne!(f.sample3(0.0, 0.0, 0.0), 0.0);
    }
}
