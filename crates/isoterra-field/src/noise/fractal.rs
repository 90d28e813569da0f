//! Fractal sums of octaves over any basis noise: fBm, ridged, billow.

use super::cellular::{CellShape, CellularReturn, cellular2, cellular3};
use super::hash::{derive, opaque_lattice_mul, unit_f32};
#[cfg(all(test, target_arch = "x86_64"))]
use super::kernel::have_avx512;
use super::kernel::{groups, have_avx2, widest};
use super::perlin::{Row2, Row3, perlin2_row, perlin3_row};
use super::simplex::{simplex2, simplex3};
use super::value::{value2_row, value3_row};
use super::{FbmParams, LANES, Noise2, Noise3, clamp_unit};
use crate::FieldError;

mod planned;

/// The basis noise of a [`Fractal`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case", tag = "type")
)]
pub enum Basis {
    /// Improved Perlin gradient noise ([`Perlin`](crate::Perlin)).
    #[default]
    Perlin,
    /// OpenSimplex2-style noise ([`OpenSimplex2`](crate::OpenSimplex2)).
    OpenSimplex2,
    /// Value noise ([`ValueNoise`](crate::ValueNoise)).
    Value,
    /// Cellular noise ([`Cellular`](crate::Cellular)).
    Cellular {
        /// Which distance to return.
        ret: CellularReturn,
        /// Feature-point jitter in `[0, 1]`.
        jitter: f32,
    },
}

/// How a [`Fractal`] shapes each octave before summing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum FractalKind {
    /// Fractal Brownian motion: octaves summed as they are.
    #[default]
    Fbm,
    /// Ridged: each octave becomes `1 - 2|n|` (sharp crests where the basis
    /// crosses zero), for mountain ranges.
    Ridged,
    /// Billow: each octave becomes `2|n| - 1` (round puffs, sharp valleys).
    Billow,
}

/// Parameters of a [`Fractal`]: a basis, a shaping kind and the octave
/// parameters (the same meaning and limits as [`FbmParams`]).
///
/// ```
/// use isoterra_field::{Basis, FractalKind, FractalParams};
/// let p = FractalParams::DEFAULT
///     .with_basis(Basis::OpenSimplex2)
///     .with_kind(FractalKind::Ridged)
///     .with_octaves(5);
/// assert!(p.validate().is_ok());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct FractalParams {
    /// The basis noise. Default value: [`Basis::Perlin`].
    pub basis: Basis,
    /// The octave shaping. Default value: [`FractalKind::Fbm`].
    pub kind: FractalKind,
    /// Number of octaves, `1..=32`. Default value: `4`.
    pub octaves: u32,
    /// Amplitude factor between octaves, finite and `>= 0`. Default value: `0.5`.
    pub persistence: f32,
    /// Frequency factor between octaves, finite and `> 0`. Default value: `2.0`.
    pub lacunarity: f32,
    /// Frequency of the first octave, finite and `> 0`. Default value: `1/64`.
    pub frequency: f32,
}

impl FractalParams {
    /// Perlin fBm with the [`FbmParams::DEFAULT`] octave parameters.
    pub const DEFAULT: Self = FractalParams {
        basis: Basis::Perlin,
        kind: FractalKind::Fbm,
        octaves: FbmParams::DEFAULT.octaves,
        persistence: FbmParams::DEFAULT.persistence,
        lacunarity: FbmParams::DEFAULT.lacunarity,
        frequency: FbmParams::DEFAULT.frequency,
    };

    /// Fractal parameters with the octave parameters of `p`.
    pub const fn from_fbm(p: &FbmParams, basis: Basis, kind: FractalKind) -> Self {
        FractalParams {
            basis,
            kind,
            octaves: p.octaves,
            persistence: p.persistence,
            lacunarity: p.lacunarity,
            frequency: p.frequency,
        }
    }

    /// The octave parameters alone.
    pub const fn octave_params(&self) -> FbmParams {
        FbmParams::DEFAULT
            .with_octaves(self.octaves)
            .with_persistence(self.persistence)
            .with_lacunarity(self.lacunarity)
            .with_frequency(self.frequency)
    }

    /// Sets [`basis`](Self::basis).
    pub const fn with_basis(mut self, basis: Basis) -> Self {
        self.basis = basis;
        self
    }

    /// Sets [`kind`](Self::kind).
    pub const fn with_kind(mut self, kind: FractalKind) -> Self {
        self.kind = kind;
        self
    }

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

    /// Checks the octave parameters (see [`FbmParams::validate`]) and the
    /// cellular jitter.
    pub fn validate(&self) -> Result<(), FieldError> {
        self.octave_params().validate()?;
        if let Basis::Cellular { ret, jitter } = self.basis {
            CellShape::new(ret, jitter, 2)?;
        }
        Ok(())
    }
}

impl Default for FractalParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// One octave: its lattice key, frequency, normalised weight and offset.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Octave {
    pub(crate) key: u32,
    pub(crate) frequency: f32,
    /// Amplitude divided by the sum of amplitudes.
    pub(crate) weight: f32,
    pub(crate) offset: [f32; 3],
}

/// The evaluation form of a basis.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kernel {
    Perlin,
    Simplex,
    Value,
    Cellular(CellShape, CellShape),
}

/// A seeded fractal sum of octaves, in `[-1, 1]`.
///
/// Octave `i` samples the basis at frequency `frequency * lacunarity^i`, with
/// its own lattice key and a pseudo-random offset (both from the seed), and
/// is shaped by the [`FractalKind`]: every shaped octave lies in `[-1, 1]`, and
/// the weighted sum is divided by the sum of the amplitudes — the analytic
/// bound — so the result lies in `[-1, 1]` whatever the data. Batch fills
/// ([`fill2`](crate::fill2), [`fill3`](crate::fill3)) are bit-identical to
/// the point API.
///
/// ```
/// use isoterra_field::{Fractal, FractalKind, FractalParams, Noise2};
/// let ridges = Fractal::new(&FractalParams::DEFAULT.with_kind(FractalKind::Ridged), 7)?;
/// assert!((-1.0..=1.0).contains(&ridges.sample2(10.0, -4.0)));
/// # Ok::<(), isoterra_field::FieldError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Fractal {
    params: FractalParams,
    seed: u64,
    kernel: Kernel,
    octaves: Vec<Octave>,
}

impl Fractal {
    /// A fractal with `params` (validated) and `seed`.
    pub fn new(params: &FractalParams, seed: u64) -> Result<Self, FieldError> {
        params.validate()?;
        let op = params.octave_params();
        let total = op.amplitude_sum();
        let mut octaves = Vec::with_capacity(params.octaves as usize);
        let (mut frequency, mut amp) = (params.frequency, 1.0f32);
        for i in 0..params.octaves {
            let key = derive(seed, 0xF0B0_0000 + i as u64);
            octaves.push(Octave {
                key: (key >> 32) as u32,
                frequency,
                weight: amp / total,
                offset: [
                    unit_f32(derive(key, 1)) * 256.0,
                    unit_f32(derive(key, 2)) * 256.0,
                    unit_f32(derive(key, 3)) * 256.0,
                ],
            });
            frequency *= params.lacunarity;
            amp *= params.persistence;
        }
        let kernel = match params.basis {
            Basis::Perlin => Kernel::Perlin,
            Basis::OpenSimplex2 => Kernel::Simplex,
            Basis::Value => Kernel::Value,
            Basis::Cellular { ret, jitter } => Kernel::Cellular(
                CellShape::new(ret, jitter, 2)?,
                CellShape::new(ret, jitter, 3)?,
            ),
        };
        Ok(Fractal {
            params: *params,
            seed,
            kernel,
            octaves,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &FractalParams {
        &self.params
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    #[cfg(test)]
    pub(crate) fn octaves(&self) -> &[Octave] {
        &self.octaves
    }
}

/// Shapes one octave value (identically in the point and lane paths).
#[inline(always)]
fn shape<const K: u8>(n: f32) -> f32 {
    match K {
        0 => n,
        1 => 1.0 - 2.0 * n.abs(),
        _ => 2.0 * n.abs() - 1.0,
    }
}

const fn kind_id(k: FractalKind) -> u8 {
    match k {
        FractalKind::Fbm => 0,
        FractalKind::Ridged => 1,
        FractalKind::Billow => 2,
    }
}

const fn kernel_id(k: &Kernel) -> u8 {
    match k {
        Kernel::Perlin => 0,
        Kernel::Simplex => 1,
        Kernel::Value => 2,
        Kernel::Cellular(..) => 3,
    }
}

/// The shapes of a cellular kernel (unused defaults for the others).
#[inline(always)]
fn cell_shapes(k: &Kernel) -> (CellShape, CellShape) {
    match k {
        Kernel::Cellular(a, b) => (*a, *b),
        _ => {
            let s = CELL_UNUSED;
            (s, s)
        }
    }
}

/// A placeholder shape for kernels that are not cellular.
const CELL_UNUSED: CellShape = CellShape::PLACEHOLDER;

/// One 2D basis value (kernel `B`) at `(x, y)` given its row data.
#[inline(always)]
fn basis2<const B: u8>(key: u32, s2: &CellShape, x: f32, y: f32, r: &Row2) -> f32 {
    match B {
        0 => perlin2_row(key, x, r),
        1 => simplex2(key, x, y),
        2 => value2_row(key, x, r),
        _ => cellular2(key, s2, x, y),
    }
}

/// One 3D basis value (kernel `B`) at `(x, y, z)` given its row data.
#[inline(always)]
fn basis3<const B: u8>(key: u32, s3: &CellShape, x: f32, y: f32, z: f32, r: &Row3) -> f32 {
    match B {
        0 => perlin3_row(key, x, r),
        1 => simplex3(key, x, y, z),
        2 => value3_row(key, x, r),
        _ => cellular3(key, s3, x, y, z),
    }
}

/// Whether kernel `B` uses the hoisted row data.
const fn uses_rows(b: u8) -> bool {
    b == 0 || b == 2
}

impl Fractal {
    /// `N` 2D samples; `ROW` means every `y[l]` is `y[0]`, so the row data
    /// is computed once (the same operations as once per lane).
    #[inline(always)]
    fn lanes2<const K: u8, const B: u8, const ROW: bool, const N: usize>(
        &self,
        x: &[f32; N],
        y: &[f32; N],
    ) -> [f32; N] {
        let (s2, _) = cell_shapes(&self.kernel);
        let mut sum = [0.0f32; N];
        for o in &self.octaves {
            let (f, [ox, oy, _]) = (o.frequency, o.offset);
            if ROW && uses_rows(B) {
                let r = Row2::new(y[0] * f + oy);
                for l in 0..N {
                    let n = basis2::<B>(o.key, &s2, x[l] * f + ox, 0.0, &r);
                    sum[l] += o.weight * shape::<K>(n);
                }
            } else {
                for l in 0..N {
                    let yy = y[l] * f + oy;
                    let r = if uses_rows(B) {
                        Row2::new(yy)
                    } else {
                        ROW2_UNUSED
                    };
                    let n = basis2::<B>(o.key, &s2, x[l] * f + ox, yy, &r);
                    sum[l] += o.weight * shape::<K>(n);
                }
            }
        }
        sum.map(clamp_unit)
    }

    /// Eight 3D samples (see [`Fractal::lanes2`]).
    #[inline(always)]
    fn lanes3<const K: u8, const B: u8, const ROW: bool>(
        &self,
        x: &[f32; LANES],
        y: &[f32; LANES],
        z: &[f32; LANES],
        mul: u32,
    ) -> [f32; LANES] {
        let (_, s3) = cell_shapes(&self.kernel);
        let mut sum = [0.0f32; LANES];
        for o in &self.octaves {
            let (f, [ox, oy, oz]) = (o.frequency, o.offset);
            if ROW && uses_rows(B) {
                let r = Row3::new(y[0] * f + oy, z[0] * f + oz).with_opaque_mul(mul);
                for l in 0..LANES {
                    let n = basis3::<B>(o.key, &s3, x[l] * f + ox, 0.0, 0.0, &r);
                    sum[l] += o.weight * shape::<K>(n);
                }
            } else {
                for l in 0..LANES {
                    let (yy, zz) = (y[l] * f + oy, z[l] * f + oz);
                    let r = if uses_rows(B) {
                        Row3::new(yy, zz).with_opaque_mul(mul)
                    } else {
                        ROW3_UNUSED
                    };
                    let n = basis3::<B>(o.key, &s3, x[l] * f + ox, yy, zz, &r);
                    sum[l] += o.weight * shape::<K>(n);
                }
            }
        }
        sum.map(clamp_unit)
    }

    /// `N` 2D samples on one row `(x[l], y)`, with the row data of every
    /// octave computed beforehand by [`Fractal::rows2`] (the same operations
    /// as [`Fractal::lanes2`] and the point API).
    #[inline(always)]
    fn lanes2_row<const K: u8, const B: u8, const N: usize>(
        &self,
        x: &[f32; N],
        y: f32,
        rows: &[Row2; MAX_OCTAVES],
    ) -> [f32; N] {
        let (s2, _) = cell_shapes(&self.kernel);
        let mut sum = [0.0f32; N];
        for (o, r) in self.octaves.iter().zip(rows) {
            let (f, [ox, oy, _]) = (o.frequency, o.offset);
            for l in 0..N {
                let n = if uses_rows(B) {
                    basis2::<B>(o.key, &s2, x[l] * f + ox, 0.0, r)
                } else {
                    basis2::<B>(o.key, &s2, x[l] * f + ox, y * f + oy, r)
                };
                sum[l] += o.weight * shape::<K>(n);
            }
        }
        sum.map(clamp_unit)
    }

    /// The row data of every octave at `y` (placeholders for kernels that
    /// do not use it).
    #[inline(always)]
    fn rows2<const B: u8>(&self, y: f32) -> [Row2; MAX_OCTAVES] {
        let mut rows = [ROW2_UNUSED; MAX_OCTAVES];
        if uses_rows(B) {
            for (r, o) in rows.iter_mut().zip(&self.octaves) {
                *r = Row2::new(y * o.frequency + o.offset[1]);
            }
        }
        rows
    }

    /// `N` 3D samples on one row `(x[l], y, z)`, with the row data of
    /// every octave computed beforehand by [`Fractal::rows3`] (the same
    /// operations as [`Fractal::lanes3`] and the point API).
    #[inline(always)]
    fn lanes3_row<const K: u8, const B: u8, const N: usize>(
        &self,
        x: &[f32; N],
        y: f32,
        z: f32,
        rows: &[Row3; MAX_OCTAVES],
    ) -> [f32; N] {
        let (_, s3) = cell_shapes(&self.kernel);
        let mut sum = [0.0f32; N];
        for (o, r) in self.octaves.iter().zip(rows) {
            let (f, [ox, oy, oz]) = (o.frequency, o.offset);
            for l in 0..N {
                let n = if uses_rows(B) {
                    basis3::<B>(o.key, &s3, x[l] * f + ox, 0.0, 0.0, r)
                } else {
                    basis3::<B>(o.key, &s3, x[l] * f + ox, y * f + oy, z * f + oz, r)
                };
                sum[l] += o.weight * shape::<K>(n);
            }
        }
        sum.map(clamp_unit)
    }

    /// The row data of every octave at `(y, z)` (placeholders for kernels
    /// that do not use it).
    #[inline(always)]
    fn rows3<const B: u8>(&self, y: f32, z: f32) -> [Row3; MAX_OCTAVES] {
        let mul = opaque_lattice_mul();
        let mut rows = [ROW3_UNUSED; MAX_OCTAVES];
        if uses_rows(B) {
            for (r, o) in rows.iter_mut().zip(&self.octaves) {
                let (f, [_, oy, oz]) = (o.frequency, o.offset);
                *r = Row3::new(y * f + oy, z * f + oz).with_opaque_mul(mul);
            }
        }
        rows
    }

    /// One 2D point: the same operations as one lane of [`Fractal::lanes2`].
    #[inline(always)]
    fn point2<const K: u8, const B: u8>(&self, x: f32, y: f32) -> f32 {
        let (s2, _) = cell_shapes(&self.kernel);
        let mut sum = 0.0f32;
        for o in &self.octaves {
            let (f, [ox, oy, _]) = (o.frequency, o.offset);
            let yy = y * f + oy;
            let r = if uses_rows(B) {
                Row2::new(yy)
            } else {
                ROW2_UNUSED
            };
            sum += o.weight * shape::<K>(basis2::<B>(o.key, &s2, x * f + ox, yy, &r));
        }
        clamp_unit(sum)
    }

    /// One 3D point.
    #[inline(always)]
    fn point3<const K: u8, const B: u8>(&self, x: f32, y: f32, z: f32) -> f32 {
        let (_, s3) = cell_shapes(&self.kernel);
        let mut sum = 0.0f32;
        for o in &self.octaves {
            let (f, [ox, oy, oz]) = (o.frequency, o.offset);
            let (yy, zz) = (y * f + oy, z * f + oz);
            let r = if uses_rows(B) {
                Row3::new(yy, zz)
            } else {
                ROW3_UNUSED
            };
            sum += o.weight * shape::<K>(basis3::<B>(o.key, &s3, x * f + ox, yy, zz, &r));
        }
        clamp_unit(sum)
    }

    /// A whole 2D row `x = x0 + i * dx` at `y`, `N` samples at a time (8, or 16 in
    /// the AVX-512 build; a short last group takes 8 lanes).
    #[inline(always)]
    fn row2<const K: u8, const B: u8, const N: usize>(
        &self,
        x0: f32,
        dx: f32,
        y: f32,
        out: &mut [f32],
    ) {
        let small = out_len_fits_i32(out.len());
        let rows = self.rows2::<B>(y);
        let mut chunks = out.chunks_exact_mut(N);
        let mut i = 0usize;
        for c in &mut chunks {
            // See `row3` for the i32 conversion.
            let x: [f32; N] = if small {
                std::array::from_fn(|l| x0 + (i + l) as i32 as f32 * dx)
            } else {
                std::array::from_fn(|l| x0 + (i + l) as f32 * dx)
            };
            c.copy_from_slice(&self.lanes2_row::<K, B, N>(&x, y, &rows));
            i += N;
        }
        let rest = chunks.into_remainder();
        if N > LANES && rest.len() <= LANES {
            self.rest2::<K, B, LANES>(x0, dx, i, y, rest, &rows);
        } else {
            self.rest2::<K, B, N>(x0, dx, i, y, rest, &rows);
        }
    }

    /// The last, partial group of a 2D row (samples `first..`), computed
    /// as `M` lanes with the last sample repeated.
    #[inline(always)]
    fn rest2<const K: u8, const B: u8, const M: usize>(
        &self,
        x0: f32,
        dx: f32,
        first: usize,
        y: f32,
        rest: &mut [f32],
        rows: &[Row2; MAX_OCTAVES],
    ) {
        if let Some(last) = rest.len().checked_sub(1) {
            let x: [f32; M] = std::array::from_fn(|l| x0 + (first + l.min(last)) as f32 * dx);
            let v = self.lanes2_row::<K, B, M>(&x, y, rows);
            rest.copy_from_slice(&v[..rest.len()]);
        }
    }

    /// `out[i]` is the sample at `(x[i], y[i])`, `N` points at a time (the
    /// last group padded with its last point).
    #[inline(always)]
    fn points2<const K: u8, const B: u8, const N: usize>(
        &self,
        x: &[f32],
        y: &[f32],
        out: &mut [f32],
    ) {
        let len = out.len().min(x.len()).min(y.len());
        groups::<N>(len, |i, last| {
            let xs: [f32; N] = std::array::from_fn(|l| x[i + l.min(last)]);
            let ys: [f32; N] = std::array::from_fn(|l| y[i + l.min(last)]);
            let v = self.lanes2::<K, B, false, N>(&xs, &ys);
            out[i..=i + last].copy_from_slice(&v[..=last]);
        });
    }

    /// A whole 3D row `x = x0 + i * dx` at `(y, z)`.
    #[inline(always)]
    fn row3<const K: u8, const B: u8, const N: usize>(
        &self,
        x0: f32,
        dx: f32,
        y: f32,
        z: f32,
        out: &mut [f32],
    ) {
        let out_len = out.len();
        let rows = self.rows3::<B>(y, z);
        let mut chunks = out.chunks_exact_mut(N);
        let mut i = 0usize;
        // Sample indices below 2^31 convert through i32 (one vector
        // instruction), which gives the same f32 as converting the usize.
        let small = out_len_fits_i32(out_len);
        for c in &mut chunks {
            let x: [f32; N] = if small {
                std::array::from_fn(|l| x0 + (i + l) as i32 as f32 * dx)
            } else {
                std::array::from_fn(|l| x0 + (i + l) as f32 * dx)
            };
            c.copy_from_slice(&self.lanes3_row::<K, B, N>(&x, y, z, &rows));
            i += N;
        }
        let rest = chunks.into_remainder();
        if N > LANES && rest.len() <= LANES {
            self.rest3::<K, B, LANES>(x0, dx, i, [y, z], rest, &rows);
        } else {
            self.rest3::<K, B, N>(x0, dx, i, [y, z], rest, &rows);
        }
    }

    /// The last, partial group of a 3D row (see [`Fractal::rest2`]).
    #[inline(always)]
    fn rest3<const K: u8, const B: u8, const M: usize>(
        &self,
        x0: f32,
        dx: f32,
        first: usize,
        [y, z]: [f32; 2],
        rest: &mut [f32],
        rows: &[Row3; MAX_OCTAVES],
    ) {
        if let Some(last) = rest.len().checked_sub(1) {
            let x: [f32; M] = std::array::from_fn(|l| x0 + (first + l.min(last)) as f32 * dx);
            let v = self.lanes3_row::<K, B, M>(&x, y, z, rows);
            rest.copy_from_slice(&v[..rest.len()]);
        }
    }
}

/// The most octaves a fractal has (room for per-octave row data).
const MAX_OCTAVES: usize = FbmParams::MAX_OCTAVES as usize;

/// Whether every sample index of a row of `len` samples fits in an `i32`.
#[inline(always)]
fn out_len_fits_i32(len: usize) -> bool {
    len <= i32::MAX as usize
}

const ROW2_UNUSED: Row2 = Row2::PLACEHOLDER;
const ROW3_UNUSED: Row3 = Row3::PLACEHOLDER;

/// Expands `$go!(K, B)` for the (kind, kernel) pair of a fractal, so every
/// pair runs a fully specialised body.
macro_rules! by_pair {
    ($fr:expr, $go:ident) => {
        match (kind_id($fr.params.kind), kernel_id(&$fr.kernel)) {
            (0, 0) => $go!(0, 0),
            (0, 1) => $go!(0, 1),
            (0, 2) => $go!(0, 2),
            (0, _) => $go!(0, 3),
            (1, 0) => $go!(1, 0),
            (1, 1) => $go!(1, 1),
            (1, 2) => $go!(1, 2),
            (1, _) => $go!(1, 3),
            (_, 0) => $go!(2, 0),
            (_, 1) => $go!(2, 1),
            (_, 2) => $go!(2, 2),
            (_, _) => $go!(2, 3),
        }
    };
}

/// The batch bodies compiled for AVX2. AVX2 changes how many lanes one
/// instruction handles, not the arithmetic: the same IEEE operations run in
/// the same order (Rust never fuses a multiply and an add), so the values
/// are bit-identical to the baseline build and to the point API.
#[cfg(target_arch = "x86_64")]
impl Fractal {
    #[target_feature(enable = "avx2")]
    fn row2_avx2<const K: u8, const B: u8>(&self, x0: f32, dx: f32, y: f32, out: &mut [f32]) {
        self.row2::<K, B, LANES>(x0, dx, y, out)
    }

    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq")]
    fn row2_avx512<const K: u8, const B: u8>(&self, x0: f32, dx: f32, y: f32, out: &mut [f32]) {
        self.row2::<K, B, 16>(x0, dx, y, out)
    }

    #[target_feature(enable = "avx2")]
    fn row3_avx2<const K: u8, const B: u8>(
        &self,
        x0: f32,
        dx: f32,
        y: f32,
        z: f32,
        out: &mut [f32],
    ) {
        self.row3::<K, B, LANES>(x0, dx, y, z, out)
    }

    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq")]
    fn row3_avx512<const K: u8, const B: u8>(
        &self,
        x0: f32,
        dx: f32,
        y: f32,
        z: f32,
        out: &mut [f32],
    ) {
        self.row3::<K, B, 16>(x0, dx, y, z, out)
    }

    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq")]
    fn points2_avx512<const K: u8, const B: u8>(&self, x: &[f32], y: &[f32], out: &mut [f32]) {
        self.points2::<K, B, 16>(x, y, out)
    }

    #[target_feature(enable = "avx2")]
    fn points2_avx2<const K: u8, const B: u8>(&self, x: &[f32], y: &[f32], out: &mut [f32]) {
        self.points2::<K, B, LANES>(x, y, out)
    }

    #[target_feature(enable = "avx2")]
    fn lanes2_avx2<const K: u8, const B: u8>(
        &self,
        x: &[f32; LANES],
        y: &[f32; LANES],
    ) -> [f32; LANES] {
        self.lanes2::<K, B, false, LANES>(x, y)
    }

    #[target_feature(enable = "avx2")]
    fn row8_avx2<const K: u8, const B: u8>(&self, x: &[f32; LANES], y: f32) -> [f32; LANES] {
        self.lanes2::<K, B, true, LANES>(x, &[y; LANES])
    }

    #[target_feature(enable = "avx2")]
    fn lanes3_avx2<const K: u8, const B: u8>(
        &self,
        x: &[f32; LANES],
        y: &[f32; LANES],
        z: &[f32; LANES],
    ) -> [f32; LANES] {
        self.lanes3::<K, B, false>(x, y, z, opaque_lattice_mul())
    }
}

impl Fractal {
    /// `out[i] = self.sample2(x[i], y[i])` bit for bit, over the shortest of
    /// the three slices: the batch form of scattered points (a warped grid).
    pub(crate) fn fill_points2(&self, x: &[f32], y: &[f32], out: &mut [f32]) {
        macro_rules! go {
            ($k:literal, $b:literal) => {{
                widest!(
                    avx512: self.points2_avx512::<$k, $b>(x, y, out),
                    avx2: self.points2_avx2::<$k, $b>(x, y, out),
                    plain: self.points2::<$k, $b, LANES>(x, y, out),
                )
            }};
        }
        by_pair!(self, go)
    }
}

impl Noise2 for Fractal {
    #[inline]
    fn sample2(&self, x: f32, y: f32) -> f32 {
        macro_rules! go {
            ($k:literal, $b:literal) => {
                self.point2::<$k, $b>(x, y)
            };
        }
        by_pair!(self, go)
    }

    fn sample2_lanes(&self, x: &[f32; LANES], y: &[f32; LANES]) -> [f32; LANES] {
        macro_rules! go {
            ($k:literal, $b:literal) => {{
                #[cfg(target_arch = "x86_64")]
                if have_avx2() {
                    // SAFETY: the CPU supports AVX2 (checked just above).
                    return unsafe { self.lanes2_avx2::<$k, $b>(x, y) };
                }
                self.lanes2::<$k, $b, false, LANES>(x, y)
            }};
        }
        by_pair!(self, go)
    }

    fn sample2_row(&self, x: &[f32; LANES], y: f32) -> [f32; LANES] {
        macro_rules! go {
            ($k:literal, $b:literal) => {{
                #[cfg(target_arch = "x86_64")]
                if have_avx2() {
                    // SAFETY: the CPU supports AVX2 (checked just above).
                    return unsafe { self.row8_avx2::<$k, $b>(x, y) };
                }
                self.lanes2::<$k, $b, true, LANES>(x, &[y; LANES])
            }};
        }
        by_pair!(self, go)
    }

    fn fill_row2(&self, x0: f32, dx: f32, y: f32, out: &mut [f32]) {
        macro_rules! go {
            ($k:literal, $b:literal) => {{
                widest!(
                    avx512: self.row2_avx512::<$k, $b>(x0, dx, y, out),
                    avx2: self.row2_avx2::<$k, $b>(x0, dx, y, out),
                    plain: self.row2::<$k, $b, LANES>(x0, dx, y, out),
                )
            }};
        }
        by_pair!(self, go)
    }
}

impl Noise3 for Fractal {
    #[inline]
    fn sample3(&self, x: f32, y: f32, z: f32) -> f32 {
        macro_rules! go {
            ($k:literal, $b:literal) => {
                self.point3::<$k, $b>(x, y, z)
            };
        }
        by_pair!(self, go)
    }

    fn sample3_lanes(&self, x: &[f32; LANES], y: &[f32; LANES], z: &[f32; LANES]) -> [f32; LANES] {
        macro_rules! go {
            ($k:literal, $b:literal) => {{
                #[cfg(target_arch = "x86_64")]
                if have_avx2() {
                    // SAFETY: the CPU supports AVX2 (checked just above).
                    return unsafe { self.lanes3_avx2::<$k, $b>(x, y, z) };
                }
                self.lanes3::<$k, $b, false>(x, y, z, opaque_lattice_mul())
            }};
        }
        by_pair!(self, go)
    }

    fn sample3_row(&self, x: &[f32; LANES], y: f32, z: f32) -> [f32; LANES] {
        macro_rules! go {
            ($k:literal, $b:literal) => {
                self.lanes3::<$k, $b, true>(x, &[y; LANES], &[z; LANES], opaque_lattice_mul())
            };
        }
        by_pair!(self, go)
    }

    fn fill_row3(&self, x0: f32, dx: f32, y: f32, z: f32, out: &mut [f32]) {
        macro_rules! go {
            ($k:literal, $b:literal) => {{
                widest!(
                    avx512: self.row3_avx512::<$k, $b>(x0, dx, y, z, out),
                    avx2: self.row3_avx2::<$k, $b>(x0, dx, y, z, out),
                    plain: self.row3::<$k, $b, LANES>(x0, dx, y, z, out),
                )
            }};
        }
        by_pair!(self, go)
    }

    /// Perlin fractals plan the x part of the rows once for the grid (see
    /// `planned`); other bases, and rows a plan cannot hold, fill row by row.
    fn fill_grid3(&self, origin: [f32; 3], step: [f32; 3], dims: [usize; 2], out: &mut [f32]) {
        // No whole slab: nothing to fill (and no plan sized for rows that
        // `out` cannot hold).
        if dims[0].saturating_mul(dims[1]) > out.len() {
            return;
        }
        match self.plan_rows3(origin[0], step[0], dims[0]) {
            Some(mut plan) => super::for_each_row3(origin, step, dims, out, |y, z, row| {
                self.fill_row3_planned(&mut plan, y, z, row)
            }),
            None => super::for_each_row3(origin, step, dims, out, |y, z, row| {
                self.fill_row3(origin[0], step[0], y, z, row)
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::{CellularReturn, fill2, fill3};

    /// Row fills keep per-octave row data for up to 32 octaves; the full
    /// table, odd row lengths (a partial last group of eight) and every
    /// basis give the point API's bits.
    #[test]
    fn row_fills_with_every_octave_slot_match_points() {
        let bases = [
            Basis::Perlin,
            Basis::OpenSimplex2,
            Basis::Value,
            Basis::Cellular {
                ret: CellularReturn::F1,
                jitter: 0.8,
            },
        ];
        for basis in bases {
            for octaves in [1, 31, 32] {
                let p = FractalParams::DEFAULT
                    .with_basis(basis)
                    .with_kind(FractalKind::Ridged)
                    .with_octaves(octaves)
                    .with_lacunarity(1.5)
                    .with_frequency(0.03);
                let f = Fractal::new(&p, 99).unwrap();
                let (o, s) = ([-7.25f32, 3.5, 11.0], [0.75f32, 1.25, 0.5]);
                let mut out2 = vec![0.0; 13 * 3];
                fill2(&f, [o[0], o[1]], [s[0], s[1]], [13, 3], &mut out2).unwrap();
                let mut out3 = vec![0.0; 11 * 2 * 2];
                fill3(&f, o, s, [11, 2, 2], &mut out3).unwrap();
                for j in 0..3 {
                    for i in 0..13 {
                        let x = o[0] + i as f32 * s[0];
                        let y = o[1] + j as f32 * s[1];
                        let want = f.sample2(x, y);
                        assert_eq!(out2[j * 13 + i].to_bits(), want.to_bits(), "{p:?}");
                    }
                }
                for k in 0..2 {
                    for j in 0..2 {
                        for i in 0..11 {
                            let x = o[0] + i as f32 * s[0];
                            let y = o[1] + j as f32 * s[1];
                            let z = o[2] + k as f32 * s[2];
                            let got = out3[(k * 2 + j) * 11 + i];
                            assert_eq!(got.to_bits(), f.sample3(x, y, z).to_bits(), "{p:?}");
                        }
                    }
                }
            }
        }
    }

    /// A row2, a row3 and a points2 result.
    type Rows = (Vec<f32>, Vec<f32>, Vec<f32>);
    /// Writes a row2, a row3 and a points2 result.
    type Fills<'a> = dyn Fn(&mut [f32], &mut [f32], &mut [f32]) + 'a;

    /// The 8- and 16-lane bodies, plain and compiled for AVX2 and AVX-512
    /// where this CPU has them, give the point API's bits for every
    /// (kind, basis) pair and every row length around the group sizes
    /// (whichever width a process picks at run time).
    #[test]
    fn every_vector_width_gives_the_point_bits() {
        let bases = [
            Basis::Perlin,
            Basis::OpenSimplex2,
            Basis::Value,
            Basis::Cellular {
                ret: CellularReturn::F2MinusF1,
                jitter: 0.9,
            },
        ];
        let kinds = [FractalKind::Fbm, FractalKind::Ridged, FractalKind::Billow];
        let (x0, dx, y, z) = (-40.3f32, 0.77f32, 12.9f32, -3.1f32);
        for basis in bases {
            for kind in kinds {
                let p = FractalParams::DEFAULT
                    .with_basis(basis)
                    .with_kind(kind)
                    .with_octaves(3)
                    .with_frequency(0.07);
                let f = Fractal::new(&p, 4242).unwrap();
                for len in [1usize, 5, 8, 9, 15, 16, 17, 24, 35, 67] {
                    let xs: Vec<f32> = (0..len).map(|i| x0 + i as f32 * dx).collect();
                    let ys: Vec<f32> = (0..len).map(|i| y - i as f32 * 0.31).collect();
                    let want2: Vec<u32> = xs.iter().map(|&x| f.sample2(x, y).to_bits()).collect();
                    let want3: Vec<u32> =
                        xs.iter().map(|&x| f.sample3(x, y, z).to_bits()).collect();
                    let want_pts: Vec<u32> = xs
                        .iter()
                        .zip(&ys)
                        .map(|(&x, &y)| f.sample2(x, y).to_bits())
                        .collect();
                    let mut got: Vec<(&str, Rows)> = Vec::new();
                    let mut run = |name, body: &Fills<'_>| {
                        let (mut r2, mut r3, mut pt) =
                            (vec![0.0; len], vec![0.0; len], vec![0.0; len]);
                        body(&mut r2, &mut r3, &mut pt);
                        got.push((name, (r2, r3, pt)));
                    };
                    macro_rules! go {
                        ($k:literal, $b:literal) => {{
                            run("8 lanes", &|r2, r3, pt| {
                                f.row2::<$k, $b, 8>(x0, dx, y, r2);
                                f.row3::<$k, $b, 8>(x0, dx, y, z, r3);
                                f.points2::<$k, $b, 8>(&xs, &ys, pt);
                            });
                            run("16 lanes", &|r2, r3, pt| {
                                f.row2::<$k, $b, 16>(x0, dx, y, r2);
                                f.row3::<$k, $b, 16>(x0, dx, y, z, r3);
                                f.points2::<$k, $b, 16>(&xs, &ys, pt);
                            });
                            #[cfg(target_arch = "x86_64")]
                            if have_avx2() {
                                // SAFETY: the CPU supports AVX2 (checked just above).
                                run("avx2", &|r2, r3, pt| unsafe {
                                    f.row2_avx2::<$k, $b>(x0, dx, y, r2);
                                    f.row3_avx2::<$k, $b>(x0, dx, y, z, r3);
                                    f.points2_avx2::<$k, $b>(&xs, &ys, pt);
                                });
                            }
                            #[cfg(target_arch = "x86_64")]
                            if have_avx512() {
                                // SAFETY: the CPU supports AVX-512 (checked just above).
                                run("avx512", &|r2, r3, pt| unsafe {
                                    f.row2_avx512::<$k, $b>(x0, dx, y, r2);
                                    f.row3_avx512::<$k, $b>(x0, dx, y, z, r3);
                                    f.points2_avx512::<$k, $b>(&xs, &ys, pt);
                                });
                            }
                        }};
                    }
                    by_pair!(f, go);
                    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
                    for (name, (r2, r3, pt)) in &got {
                        assert_eq!(bits(r2), want2, "{name} row2 {p:?} len {len}");
                        assert_eq!(bits(r3), want3, "{name} row3 {p:?} len {len}");
                        assert_eq!(bits(pt), want_pts, "{name} points2 {p:?} len {len}");
                    }
                }
            }
        }
    }
}
