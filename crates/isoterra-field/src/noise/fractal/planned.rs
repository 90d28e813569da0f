//! Rows of a 3D Perlin fractal over a grid, with the work of a lattice cell
//! done once per cell instead of once per sample.
//!
//! Along one row of a grid, improved Perlin noise at frequency `f` stays in
//! one lattice cell for `1 / (f * dx)` samples (48 at the caves' first
//! octave), and every sample of a cell hashes the same eight lattice
//! corners and picks the same eight gradients. With `y` and `z` fixed by
//! the row, a corner's gradient dot product is either `±dx + K` or a
//! constant `C` (`K` one of `±dy`, `±dz`; `C` their sum). A [`RowPlan3`] keeps what
//! depends on `x` alone (the cell of each sample, `fx`, `fx - 1`, the
//! fade) for every row of the grid; each row then decodes the gradients of
//! the few lattice points it crosses into one table per corner, and each
//! group of samples blends the corner terms of its lanes' cells.
//!
//! The AVX-512 build (and the AVX2 build on rows of at most eight lattice
//! points) picks every lane's terms from the tables with one vector
//! permutation per table, so its groups may span any number of cells. The
//! other builds select between two cells per lane: a group spanning three
//! is split in two, and a half that still does (high frequencies, coarse
//! steps) takes the per-sample path. Rows reaching more than
//! [`MAX_POINTS`] lattice points are not planned at all.
//!
//! The values are those of [`perlin3_row`] bit for bit: the same IEEE
//! operations on the same operands in the same order (the one reordered
//! sum, `dy + (±dx)` written as `(±dx) + dy`, is commutative).

use super::super::hash::{LATTICE_MUL, P32_X, lattice_top_mul};
use super::super::kernel::{fade, flip, floor_i32, sel};
use super::super::perlin::{Row3, blend3, perlin3_row};
use super::super::{LANES, clamp_unit};
use super::{Fractal, Kernel, Octave, kind_id, shape};

/// Samples per group of the wide build; groups of [`LANES`] elsewhere.
const WIDE: usize = 16;

/// Most lattice x points a planned row reaches per octave (rows reaching
/// more take the per-sample path: their cells hold few samples anyway).
const MAX_POINTS: usize = 16;

/// What the samples of a row need from `x` alone, for every octave, and the
/// buffers of one row.
#[derive(Debug, Clone)]
pub(crate) struct RowPlan3 {
    len: usize,
    /// Entries per octave: `len` rounded up to a whole [`WIDE`] group (the
    /// extra entries repeat the last sample).
    stride: usize,
    /// Per octave: `x * f + ox`, its lattice cell, `fx`, `fx - 1` and
    /// `fade(fx)`.
    xs: Vec<f32>,
    ix: Vec<i32>,
    fx: Vec<f32>,
    fx1: Vec<f32>,
    u: Vec<f32>,
    /// Per octave: the lowest cell of the row, the lattice x points the row
    /// reaches (`lo..lo + points`), and the primed `(y, z)` corners whose
    /// lattice hashes `hashes` holds.
    lo: Vec<i32>,
    points: Vec<usize>,
    cached: Vec<Option<[u32; 4]>>,
    /// Per octave, per `(y, z)` corner of the row's cells, the hashes of
    /// the corner at each lattice x point the row reaches.
    hashes: Vec<Terms<u32>>,
    /// Per corner of the current octave and row, per lattice x point: the
    /// sign to give `dx`, all ones where the term uses `dx`, and the bits
    /// of `K` or `C` (a corner's sixteen points side by side, so that a
    /// vector of lanes can pick its points with one permutation).
    sign: Terms<u32>,
    uses: Terms<u32>,
    term: Terms<u32>,
    /// The row's weighted sum.
    acc: Vec<f32>,
}

impl Fractal {
    /// A plan for rows of `len` samples at `x0 + i * dx`, or `None` when this
    /// fractal is not Perlin, `len` is zero, the cells do not grow along the
    /// row or an octave's row reaches more than [`MAX_POINTS`] lattice
    /// points (then [`fill_row3`](super::super::Noise3::fill_row3) is the
    /// way).
    pub(crate) fn plan_rows3(&self, x0: f32, dx: f32, len: usize) -> Option<RowPlan3> {
        if self.kernel != Kernel::Perlin || len == 0 || len > i32::MAX as usize {
            return None;
        }
        let stride = len.div_ceil(WIDE) * WIDE;
        let octaves = self.octaves.len();
        let mut p = RowPlan3 {
            len,
            stride,
            xs: Vec::with_capacity(octaves * stride),
            ix: Vec::with_capacity(octaves * stride),
            fx: Vec::with_capacity(octaves * stride),
            fx1: Vec::with_capacity(octaves * stride),
            u: Vec::with_capacity(octaves * stride),
            lo: Vec::with_capacity(octaves),
            points: Vec::with_capacity(octaves),
            cached: vec![None; octaves],
            hashes: vec![[[0; MAX_POINTS]; 4]; octaves],
            sign: [[0; MAX_POINTS]; 4],
            uses: [[0; MAX_POINTS]; 4],
            term: [[0; MAX_POINTS]; 4],
            acc: vec![0.0; stride],
        };
        for o in &self.octaves {
            let (f, ox) = (o.frequency, o.offset[0]);
            let from = p.ix.len();
            for i in 0..stride {
                // What `row3` computes for sample `i` (the padding repeats
                // the last sample, as its last group does).
                let x = x0 + i.min(len - 1) as i32 as f32 * dx;
                let xx = x * f + ox;
                let ix = floor_i32(xx);
                let fx = xx - ix as f32;
                p.xs.push(xx);
                p.ix.push(ix);
                p.fx.push(fx);
                p.fx1.push(fx - 1.0);
                p.u.push(fade(fx));
            }
            let cells = &p.ix[from..];
            if cells.windows(2).any(|w| w[1] < w[0]) {
                return None;
            }
            let (lo, hi) = (cells[0], cells[stride - 1]);
            let points = i64::from(hi) - i64::from(lo) + 2;
            if points > MAX_POINTS as i64 {
                return None;
            }
            p.lo.push(lo);
            p.points.push(points as usize);
        }
        Some(p)
    }

    /// `out[i]` = the fractal at `(x0 + i * dx, y, z)` for the row `plan`
    /// was made for: [`fill_row3`](super::super::Noise3::fill_row3) bit for
    /// bit. `out` holds the plan's `len` samples.
    pub(crate) fn fill_row3_planned(&self, plan: &mut RowPlan3, y: f32, z: f32, out: &mut [f32]) {
        debug_assert_eq!(out.len(), plan.len);
        macro_rules! go {
            ($k:literal) => {{
                super::super::kernel::widest!(
                    avx512: self.planned_row_avx512::<$k>(plan, y, z, out),
                    avx2: self.planned_row_avx2::<$k>(plan, y, z, out),
                    plain: self.planned_row_plain::<$k>(plan, y, z, out),
                )
            }};
        }
        match kind_id(self.params.kind) {
            0 => go!(0),
            1 => go!(1),
            _ => go!(2),
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq")]
    fn planned_row_avx512<const K: u8>(
        &self,
        plan: &mut RowPlan3,
        y: f32,
        z: f32,
        out: &mut [f32],
    ) {
        self.planned_row::<WIDE>(plan, y, z, out, |plan, oi, o, r| {
            // The closure is part of this AVX-512 build.
            permuted_octave_row::<K, WIDE>(plan, oi, o, r, |q, table| permute16(q, table))
        })
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn planned_row_avx2<const K: u8>(&self, plan: &mut RowPlan3, y: f32, z: f32, out: &mut [f32]) {
        self.planned_row::<LANES>(plan, y, z, out, |plan, oi, o, r| {
            if plan.points[oi] <= LANES {
                permuted_octave_row::<K, LANES>(plan, oi, o, r, |q, table| permute8(q, table))
            } else {
                octave_row::<K, LANES>(plan, oi, o, r)
            }
        })
    }

    /// The plain build: every octave in groups of [`LANES`].
    fn planned_row_plain<const K: u8>(&self, plan: &mut RowPlan3, y: f32, z: f32, out: &mut [f32]) {
        self.planned_row::<LANES>(plan, y, z, out, octave_row::<K, LANES>)
    }

    /// One row: `octave` adds each octave to `plan.acc` after its terms are
    /// decoded; then the sums are clamped, `W` at a time where they can be.
    #[inline(always)]
    fn planned_row<const W: usize>(
        &self,
        plan: &mut RowPlan3,
        y: f32,
        z: f32,
        out: &mut [f32],
        octave: impl Fn(&mut RowPlan3, usize, &Octave, &Row3),
    ) {
        plan.acc.fill(0.0);
        for (oi, o) in self.octaves.iter().enumerate() {
            let (f, [_, oy, oz]) = (o.frequency, o.offset);
            let r = Row3::new(y * f + oy, z * f + oz);
            plan.decode(oi, o, &r);
            octave(plan, oi, o, &r);
        }
        let whole = out.len() / W * W;
        let (head, tail) = out.split_at_mut(whole);
        for (o, a) in head.chunks_exact_mut(W).zip(plan.acc.chunks_exact(W)) {
            for (o, &a) in o.iter_mut().zip(a) {
                *o = clamp_unit(a);
            }
        }
        for (o, &a) in tail.iter_mut().zip(&plan.acc[whole..]) {
            *o = clamp_unit(a);
        }
    }
}

impl RowPlan3 {
    /// Fills `sign`, `uses` and `term` for octave `oi` on row `r`: the
    /// gradient terms of every lattice x point of the row.
    #[inline(always)]
    fn decode(&mut self, oi: usize, o: &Octave, r: &Row3) {
        let (lo, points) = (self.lo[oi], self.points[oi]);
        // The hashes depend on the row through its four primed (y, z)
        // corners only: rows of one (y, z) cell share them.
        let key = [r.p00, r.p10, r.p01, r.p11];
        if self.cached[oi] != Some(key) {
            for (hashes, &p) in self.hashes[oi].iter_mut().zip(&key) {
                for (a, h) in hashes.iter_mut().enumerate().take(points) {
                    let px = (lo.wrapping_add(a as i32) as u32).wrapping_mul(P32_X);
                    *h = lattice_top_mul(o.key, px ^ p, LATTICE_MUL);
                }
            }
            self.cached[oi] = Some(key);
        }
        // Corner `c` of the four: `dy` is `fy1` for c = 1, 3, `dz` is `fz1`
        // for c = 2, 3. The first eight or all sixteen points are decoded
        // (the ones past the row's hold stale hashes and are never read).
        for c in 0..4 {
            let dy = if c & 1 == 1 { r.fy1 } else { r.fy };
            let dz = if c & 2 == 2 { r.fz1 } else { r.fz };
            let (h, sign, uses, term) = (
                &self.hashes[oi][c],
                &mut self.sign[c],
                &mut self.uses[c],
                &mut self.term[c],
            );
            if points <= 8 {
                terms::<8>(h, dy, dz, sign, uses, term);
            } else {
                terms::<MAX_POINTS>(h, dy, dz, sign, uses, term);
            }
        }
    }

    /// The sign, uses and term of corner `c` at lattice x point `q`.
    #[inline(always)]
    fn at(&self, q: usize) -> ([u32; 4], [u32; 4], [f32; 4]) {
        (
            std::array::from_fn(|c| self.sign[c][q]),
            std::array::from_fn(|c| self.uses[c][q]),
            std::array::from_fn(|c| f32::from_bits(self.term[c][q])),
        )
    }
}

/// Per corner `(y, z)` of a row's cells, per lattice x point.
type Terms<T> = [[T; MAX_POINTS]; 4];

/// [`gradient_term`] of one corner at the first `P` lattice points of the
/// table.
#[inline(always)]
fn terms<const P: usize>(
    hashes: &[u32; MAX_POINTS],
    dy: f32,
    dz: f32,
    sign: &mut [u32; MAX_POINTS],
    uses: &mut [u32; MAX_POINTS],
    term: &mut [u32; MAX_POINTS],
) {
    for l in 0..P {
        let t;
        (sign[l], uses[l], t) = gradient_term(hashes[l], dy, dz);
        term[l] = t.to_bits();
    }
}

/// The gradient term of lattice hash `h` with `dy`, `dz` fixed: `(sign,
/// uses, t)` such that [`grad3`](super::super::kernel::grad3)`(h, dx, dy,
/// dz)` is `(dx ^ sign) + t` when `uses` is all ones and `t` when it is
/// zero, bit for bit.
#[inline(always)]
fn gradient_term(h: u32, dy: f32, dz: f32) -> (u32, u32, f32) {
    // Without branches: the bits are random, so branches on them would
    // mispredict half the time. With g = h >> 28 (bits b31 b30 b29 b28),
    // `grad3` adds `u ^ b28` and `v ^ b29` (signs), where u = dx, v = dy
    // (g < 4); u = dx, v = dz (4 <= g < 8); u = dy, v = dz (8 <= g < 12,
    // and g = 13, 15); u = dy, v = dx (g = 12, 14).
    let bit = |b: u32| (h >> b) & 1;
    let (b31, b30, b29, b28) = (bit(31), bit(30), bit(29), bit(28));
    let constant = flip(dy, b28) + flip(dz, b29);
    let with_x = sel(b31 != 0, dy, flip(sel(b30 != 0, dz, dy), b29));
    let uses = (b31 ^ 1) | (b30 & (b28 ^ 1));
    let sign = ((b31 & b29) | ((b31 ^ 1) & b28)) << 31;
    (
        sign,
        0u32.wrapping_sub(uses),
        sel(uses != 0, with_x, constant),
    )
}

/// Adds octave `oi` of the row to `plan.acc`, in groups of `W` samples.
#[inline(always)]
fn octave_row<const K: u8, const W: usize>(plan: &mut RowPlan3, oi: usize, o: &Octave, r: &Row3) {
    let (len, stride) = (plan.len, plan.stride);
    let base = oi * stride;
    let mut first = 0;
    while first < len {
        let n = if len - first <= LANES { LANES } else { W };
        let last = (first + n - 1).min(stride - 1);
        let c0 = plan.ix[base + first];
        if plan.ix[base + last] - c0 <= 1 {
            if n == W {
                group::<K, W>(plan, oi, o, r, first);
            } else {
                group::<K, LANES>(plan, oi, o, r, first);
            }
            first += n;
        } else if n > LANES && plan.ix[base + first + LANES - 1] - c0 <= 1 {
            // Half the group spans fewer cells.
            group::<K, LANES>(plan, oi, o, r, first);
            first += LANES;
        } else {
            let n = n.min(LANES);
            scalar::<K>(plan, oi, o, r, first, n);
            first += n;
        }
    }
}

/// Samples `first..first + n` (within the row) one by one.
fn scalar<const K: u8>(
    plan: &mut RowPlan3,
    oi: usize,
    o: &Octave,
    r: &Row3,
    first: usize,
    n: usize,
) {
    let base = oi * plan.stride;
    for i in first..(first + n).min(plan.len) {
        let v = perlin3_row(o.key, plan.xs[base + i], r);
        plan.acc[i] += o.weight * shape::<K>(v);
    }
}

/// Samples `first..first + N` of octave `oi`, whose cells are `c` or `c + 1`.
#[inline(always)]
fn group<const K: u8, const N: usize>(
    plan: &mut RowPlan3,
    oi: usize,
    o: &Octave,
    r: &Row3,
    first: usize,
) {
    let base = oi * plan.stride + first;
    // Copies, so that the loop below reads arrays of its own (no aliasing
    // for the vectoriser to check).
    let load = |v: &[f32]| -> [f32; N] {
        let mut a = [0.0f32; N];
        a.copy_from_slice(&v[base..base + N]);
        a
    };
    let (fx, fx1, u) = (load(&plan.fx), load(&plan.fx1), load(&plan.u));
    let mut ix = [0i32; N];
    ix.copy_from_slice(&plan.ix[base..base + N]);
    let c = ix[0];
    let p = (c - plan.lo[oi]) as usize;
    // Lattice x points p, p + 1, p + 2: a sample in cell `c` reads p and
    // p + 1, one in `c + 1` reads p + 1 and p + 2.
    let (s0, m0, t0) = plan.at(p);
    let (s1, m1, t1) = plan.at(p + 1);
    let (s2, m2, t2) = if p + 2 < plan.points[oi] {
        plan.at(p + 2)
    } else {
        (s1, m1, t1)
    };
    let mut values = [0.0f32; N];
    for l in 0..N {
        let next = ix[l] != c;
        let mut n = [[0.0f32; 2]; 4];
        for k in 0..4 {
            let (ls, lm, lt) = if next {
                (s1[k], m1[k], t1[k])
            } else {
                (s0[k], m0[k], t0[k])
            };
            let (rs, rm, rt) = if next {
                (s2[k], m2[k], t2[k])
            } else {
                (s1[k], m1[k], t1[k])
            };
            n[k] = [term(fx[l], ls, lm, lt), term(fx1[l], rs, rm, rt)];
        }
        values[l] = blend3(n, u[l], r);
    }
    for (a, &value) in plan.acc[first..first + N].iter_mut().zip(&values) {
        *a += o.weight * shape::<K>(value);
    }
}

/// A corner's gradient dot product at `x` offset `d` from its lattice point:
/// `(d ^ s) + t` where it uses `dx` (`m` all ones), `t` where it does not.
#[inline(always)]
fn term(d: f32, s: u32, m: u32, t: f32) -> f32 {
    let x = f32::from_bits(d.to_bits() ^ s) + t;
    f32::from_bits((x.to_bits() & m) | (t.to_bits() & !m))
}

/// Lane `l` of `table` picked by lane `l` of `q` (below 16) for each of
/// sixteen lanes, in one AVX-512 permutation.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq")]
#[inline]
fn permute16(q: [u32; 16], table: &[u32; MAX_POINTS]) -> [u32; 16] {
    use std::arch::x86_64::{__m512i, _mm512_permutexvar_epi32};
    // SAFETY: `[u32; 16]` and `__m512i` are both 64 plain bytes, any bits
    // valid.
    unsafe {
        let (q, t) = (
            std::mem::transmute::<[u32; 16], __m512i>(q),
            std::mem::transmute::<[u32; 16], __m512i>(*table),
        );
        std::mem::transmute::<__m512i, [u32; 16]>(_mm512_permutexvar_epi32(q, t))
    }
}

/// The first eight lanes of `table` picked by lane `l` of `q` (below 8) for
/// each of eight lanes, in one AVX2 permutation.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn permute8(q: [u32; 8], table: &[u32; MAX_POINTS]) -> [u32; 8] {
    use std::arch::x86_64::{__m256i, _mm256_permutevar8x32_epi32};
    let mut t = [0u32; 8];
    t.copy_from_slice(&table[..8]);
    // SAFETY: `[u32; 8]` and `__m256i` are both 32 plain bytes, any bits
    // valid.
    unsafe {
        let (q, t) = (
            std::mem::transmute::<[u32; 8], __m256i>(q),
            std::mem::transmute::<[u32; 8], __m256i>(t),
        );
        std::mem::transmute::<__m256i, [u32; 8]>(_mm256_permutevar8x32_epi32(t, q))
    }
}

/// Adds octave `oi` of the row to `plan.acc` `N` samples at a time, every
/// padded group of the stride: each lane picks the terms of its own two
/// lattice points from the corner tables with `permute` (lane `l` of the
/// table at index `q[l]`, every `q[l]` below the row's point count, which
/// must be at most `N`), so a group may span any number of cells. The same
/// operations per sample as [`group`], so the same bits.
#[inline(always)]
fn permuted_octave_row<const K: u8, const N: usize>(
    plan: &mut RowPlan3,
    oi: usize,
    o: &Octave,
    r: &Row3,
    permute: impl Fn([u32; N], &[u32; MAX_POINTS]) -> [u32; N],
) {
    debug_assert!(plan.points[oi] <= N && plan.stride.is_multiple_of(N));
    let lo = plan.lo[oi];
    let base = oi * plan.stride;
    let mut first = 0;
    while first < plan.stride {
        let at = base + first;
        let mut fx = [0.0f32; N];
        let mut fx1 = [0.0f32; N];
        let mut u = [0.0f32; N];
        let mut ix = [0i32; N];
        fx.copy_from_slice(&plan.fx[at..at + N]);
        fx1.copy_from_slice(&plan.fx1[at..at + N]);
        u.copy_from_slice(&plan.u[at..at + N]);
        ix.copy_from_slice(&plan.ix[at..at + N]);
        // Lane `l` reads lattice points `q` (left) and `q + 1` (right).
        let mut left = [0u32; N];
        let mut right = [0u32; N];
        for l in 0..N {
            left[l] = ix[l].wrapping_sub(lo) as u32;
            right[l] = left[l].wrapping_add(1);
        }
        // Per corner, the left and right terms of every lane.
        let mut nl = [[0.0f32; N]; 4];
        let mut nr = [[0.0f32; N]; 4];
        for c in 0..4 {
            let (sl, ml, tl) = (
                permute(left, &plan.sign[c]),
                permute(left, &plan.uses[c]),
                permute(left, &plan.term[c]),
            );
            let (sr, mr, tr) = (
                permute(right, &plan.sign[c]),
                permute(right, &plan.uses[c]),
                permute(right, &plan.term[c]),
            );
            for l in 0..N {
                nl[c][l] = term(fx[l], sl[l], ml[l], f32::from_bits(tl[l]));
                nr[c][l] = term(fx1[l], sr[l], mr[l], f32::from_bits(tr[l]));
            }
        }
        let acc = &mut plan.acc[first..first + N];
        for l in 0..N {
            let n = [
                [nl[0][l], nr[0][l]],
                [nl[1][l], nr[1][l]],
                [nl[2][l], nr[2][l]],
                [nl[3][l], nr[3][l]],
            ];
            acc[l] += o.weight * shape::<K>(blend3(n, u[l], r));
        }
        first += N;
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Basis, FractalKind, FractalParams};
    use super::*;
    use crate::Noise3;
    use proptest::prelude::*;

    fn kind(k: u8) -> FractalKind {
        match k {
            0 => FractalKind::Fbm,
            1 => FractalKind::Ridged,
            _ => FractalKind::Billow,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// A planned row gives `fill_row3`'s bits (and so the point API's)
        /// for every shaping, frequencies from the caves' to several cells
        /// per sample, steps that do or do not divide a cell, rows of any
        /// length, and rows on and off the lattice planes.
        #[test]
        fn planned_rows_match_row_fills(
            seed in any::<u64>(),
            octaves in 1u32..6,
            frequency in prop::sample::select(vec![1.0f32 / 48.0, 1.0 / 7.0, 0.5, 3.0]),
            lacunarity in prop::sample::select(vec![2.0f32, 1.7, 3.1]),
            k in 0u8..3,
            x0 in -2000.0f32..2000.0,
            dx in prop::sample::select(vec![1.0f32, 0.5, 2.0, 8.0, 0.37]),
            len in 1usize..90,
            yz in prop::collection::vec(prop_oneof![
                (-500i32..500).prop_map(|v| v as f32),
                -500.0f32..500.0,
            ], 2..8),
        ) {
            let params = FractalParams::DEFAULT
                .with_basis(Basis::Perlin)
                .with_kind(kind(k))
                .with_octaves(octaves)
                .with_frequency(frequency)
                .with_lacunarity(lacunarity);
            let f = Fractal::new(&params, seed).unwrap();
            let Some(mut plan) = f.plan_rows3(x0, dx, len) else {
                // Too many lattice points per row: the caller fills rows.
                return Ok(());
            };
            for pair in yz.windows(2) {
                let (y, z) = (pair[0], pair[1]);
                let mut want = vec![0.0f32; len];
                f.fill_row3(x0, dx, y, z, &mut want);
                let mut got = vec![0.0f32; len];
                f.fill_row3_planned(&mut plan, y, z, &mut got);
                for i in 0..len {
                    prop_assert_eq!(got[i].to_bits(), want[i].to_bits(), "sample {} at y {} z {}", i, y, z);
                }
                // Every build this CPU runs, not only the widest.
                for (build, got) in each_build(&f, &mut plan, y, z, len) {
                    for i in 0..len {
                        prop_assert_eq!(got[i].to_bits(), want[i].to_bits(), "{} build, sample {} at y {} z {}", build, i, y, z);
                    }
                }
            }
        }
    }

    /// The row of `plan` at `(y, z)` from each build of the planned loop
    /// this CPU can run.
    fn each_build(
        f: &Fractal,
        plan: &mut RowPlan3,
        y: f32,
        z: f32,
        len: usize,
    ) -> Vec<(&'static str, Vec<f32>)> {
        let mut rows = Vec::new();
        macro_rules! run {
            ($k:literal) => {{
                let mut row = vec![0.0f32; len];
                f.planned_row_plain::<$k>(plan, y, z, &mut row);
                rows.push(("plain", row));
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("avx2") {
                    let mut row = vec![0.0f32; len];
                    // SAFETY: the CPU has AVX2 (checked just above).
                    unsafe { f.planned_row_avx2::<$k>(plan, y, z, &mut row) };
                    rows.push(("avx2", row));
                }
                #[cfg(target_arch = "x86_64")]
                if crate::noise::kernel::have_avx512() {
                    let mut row = vec![0.0f32; len];
                    // SAFETY: the CPU has AVX-512 (checked just above).
                    unsafe { f.planned_row_avx512::<$k>(plan, y, z, &mut row) };
                    rows.push(("avx512", row));
                }
            }};
        }
        match kind_id(f.params.kind) {
            0 => run!(0),
            1 => run!(1),
            _ => run!(2),
        }
        rows
    }

    #[test]
    fn other_bases_and_crowded_rows_are_not_planned() {
        let p = FractalParams::DEFAULT.with_basis(Basis::Value);
        assert!(
            Fractal::new(&p, 1)
                .unwrap()
                .plan_rows3(0.0, 1.0, 40)
                .is_none()
        );
        let p = FractalParams::DEFAULT.with_frequency(1.0);
        // 40 samples a cell apart reach 41 lattice points.
        assert!(
            Fractal::new(&p, 1)
                .unwrap()
                .plan_rows3(0.0, 1.0, 40)
                .is_none()
        );
        assert!(
            Fractal::new(&FractalParams::DEFAULT, 1)
                .unwrap()
                .plan_rows3(0.0, 1.0, 0)
                .is_none()
        );
        assert!(
            Fractal::new(&FractalParams::DEFAULT, 1)
                .unwrap()
                .plan_rows3(0.0, 1.0, 40)
                .is_some()
        );
    }
}
