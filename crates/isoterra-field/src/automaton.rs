//! Cellular-automaton caves: random fill, then smoothing rules.

use crate::noise::hash::{derive, hash2, unit_f32};
use crate::par::{for_each_band, thread_count};
use crate::{Field2, FieldError};

/// Parameters of [`automaton_caves`].
///
/// Every cell starts solid with probability [`fill`](Self::fill) (decided by
/// a hash of the seed and the cell, not by a random number generator). Then,
/// for [`iterations`](Self::iterations) rounds, each cell counts its solid
/// neighbours among the eight around it: an empty cell becomes solid with at
/// least [`birth`](Self::birth) solid neighbours, a solid cell stays solid
/// with at least [`survive`](Self::survive). The defaults are the classic
/// "4-5 rule" that turns noise into rounded caves.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct CaveAutomaton {
    /// Probability that a cell starts solid, in `[0, 1]`. Default value: `0.47`.
    pub fill: f32,
    /// Number of smoothing rounds, `0..=64`. Default value: `5`.
    pub iterations: u32,
    /// Solid neighbours (of 8) that turn an empty cell solid, `0..=9`
    /// (`9` never). Default value: `5`.
    pub birth: u8,
    /// Solid neighbours (of 8) that keep a solid cell solid, `0..=9`
    /// (`9` never). Default value: `4`.
    pub survive: u8,
    /// Cells outside the grid count as solid, which walls the map in.
    /// Default value: `true`.
    pub solid_outside: bool,
}

impl CaveAutomaton {
    /// The most smoothing rounds allowed.
    pub const MAX_ITERATIONS: u32 = 64;

    /// The defaults (fill 0.47, 5 rounds of the 4-5 rule, solid outside).
    pub const DEFAULT: Self = CaveAutomaton {
        fill: 0.47,
        iterations: 5,
        birth: 5,
        survive: 4,
        solid_outside: true,
    };

    /// Sets [`fill`](Self::fill).
    pub const fn with_fill(mut self, fill: f32) -> Self {
        self.fill = fill;
        self
    }

    /// Sets [`iterations`](Self::iterations).
    pub const fn with_iterations(mut self, iterations: u32) -> Self {
        self.iterations = iterations;
        self
    }

    /// Sets [`birth`](Self::birth).
    pub const fn with_birth(mut self, birth: u8) -> Self {
        self.birth = birth;
        self
    }

    /// Sets [`survive`](Self::survive).
    pub const fn with_survive(mut self, survive: u8) -> Self {
        self.survive = survive;
        self
    }

    /// Sets [`solid_outside`](Self::solid_outside).
    pub const fn with_solid_outside(mut self, solid_outside: bool) -> Self {
        self.solid_outside = solid_outside;
        self
    }

    /// Checks every parameter.
    pub fn validate(&self) -> Result<(), FieldError> {
        if !(self.fill.is_finite() && (0.0..=1.0).contains(&self.fill)) {
            return Err(FieldError::param(
                "fill",
                self.fill,
                "must be between 0 and 1",
            ));
        }
        if self.iterations > Self::MAX_ITERATIONS {
            return Err(FieldError::param(
                "iterations",
                self.iterations,
                "must be at most 64 (the pattern settles after a few rounds)",
            ));
        }
        if self.birth > 9 {
            return Err(FieldError::param(
                "birth",
                self.birth,
                "must be between 0 and 9",
            ));
        }
        if self.survive > 9 {
            return Err(FieldError::param(
                "survive",
                self.survive,
                "must be between 0 and 9",
            ));
        }
        Ok(())
    }
}

impl Default for CaveAutomaton {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Runs the automaton on a grid of `width x height` cells and returns it as
/// a field of the same number of nodes: `1.0` for solid, `-1.0` for empty.
/// Blur the result (see [`blur`](crate::blur)) for a smooth density.
///
/// Deterministic: a pure function of the arguments, whatever the thread count.
pub fn automaton_caves(
    width: u32,
    height: u32,
    seed: u64,
    params: &CaveAutomaton,
) -> Result<Field2, FieldError> {
    params.validate()?;
    Field2::check_size(width as u64, height as u64)?;
    let cells = run(
        width as usize,
        height as usize,
        seed,
        params,
        thread_count(0),
    );
    Field2::from_values(
        width,
        height,
        cells
            .iter()
            .map(|&c| if c != 0 { 1.0 } else { -1.0 })
            .collect(),
    )
}

/// The automaton itself: returns `width * height` cells, 1 = solid.
/// Parameters must be valid and the sizes non-zero.
pub(crate) fn run(
    width: usize,
    height: usize,
    seed: u64,
    params: &CaveAutomaton,
    threads: usize,
) -> Vec<u8> {
    // Padded grids: one ring of "outside" cells around the real ones, so the
    // neighbour count needs no bounds checks.
    let pw = width + 2;
    let ph = height + 2;
    let outside = params.solid_outside as u8;
    let mut cur = vec![outside; pw * ph];
    let key = derive(seed, 0xCA_0001);
    let threshold = params.fill;
    for y in 0..height {
        for x in 0..width {
            let solid = unit_f32(hash2(key, x as i32, y as i32)) < threshold;
            cur[(y + 1) * pw + x + 1] = solid as u8;
        }
    }
    let mut next = cur.clone();
    let (birth, survive) = (params.birth, params.survive);
    for _ in 0..params.iterations {
        {
            let src = &cur;
            // Only the inner rows are rewritten; the outside ring never changes.
            let inner = &mut next[pw..pw * (ph - 1)];
            for_each_band(inner, pw, threads, &|first_row, band| {
                for (dy, row) in band.chunks_exact_mut(pw).enumerate() {
                    let y = first_row + dy + 1;
                    let up = &src[(y + 1) * pw..(y + 2) * pw];
                    let mid = &src[y * pw..(y + 1) * pw];
                    let down = &src[(y - 1) * pw..y * pw];
                    for x in 1..pw - 1 {
                        let n = up[x - 1]
                            + up[x]
                            + up[x + 1]
                            + mid[x - 1]
                            + mid[x + 1]
                            + down[x - 1]
                            + down[x]
                            + down[x + 1];
                        row[x] = if mid[x] != 0 {
                            (n >= survive) as u8
                        } else {
                            (n >= birth) as u8
                        };
                    }
                }
            });
        }
        std::mem::swap(&mut cur, &mut next);
    }
    let mut out = Vec::with_capacity(width * height);
    for y in 0..height {
        out.extend_from_slice(&cur[(y + 1) * pw + 1..(y + 1) * pw + 1 + width]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation() {
        let d = CaveAutomaton::DEFAULT;
        assert!(d.validate().is_ok());
        assert!(d.with_fill(f32::NAN).validate().is_err());
        assert!(d.with_fill(1.5).validate().is_err());
        assert!(d.with_iterations(65).validate().is_err());
        assert!(d.with_birth(10).validate().is_err());
        assert!(d.with_survive(10).validate().is_err());
        assert!(automaton_caves(0, 5, 1, &d).is_err());
        assert!(automaton_caves(u32::MAX, u32::MAX, 1, &d).is_err());
    }

    #[test]
    fn fill_extremes() {
        let full = automaton_caves(10, 8, 1, &CaveAutomaton::DEFAULT.with_fill(1.0)).unwrap();
        assert!(full.values().iter().all(|&v| v == 1.0));
        let empty = automaton_caves(
            10,
            8,
            1,
            &CaveAutomaton::DEFAULT
                .with_fill(0.0)
                .with_solid_outside(false),
        )
        .unwrap();
        assert!(empty.values().iter().all(|&v| v == -1.0));
    }

    #[test]
    fn smoothing_removes_isolated_cells_and_is_thread_independent() {
        let p = CaveAutomaton::DEFAULT;
        let a = run(64, 48, 9, &p, 1);
        for threads in [2, 3, 7] {
            assert_eq!(run(64, 48, 9, &p, threads), a);
        }
        // Smoothing leaves far fewer cells that disagree with most of their
        // neighbours than the random fill had.
        let disagreeing = |g: &[u8]| {
            let mut count = 0;
            for y in 1..47usize {
                for x in 1..63usize {
                    let mut n = 0;
                    for (dx, dy) in [
                        (0, 0),
                        (1, 0),
                        (2, 0),
                        (0, 1),
                        (2, 1),
                        (0, 2),
                        (1, 2),
                        (2, 2),
                    ] {
                        n += g[(y + dy - 1) * 64 + x + dx - 1];
                    }
                    if (g[y * 64 + x] == 1) != (n >= 5) {
                        count += 1;
                    }
                }
            }
            count
        };
        let raw = run(64, 48, 9, &p.with_iterations(0), 1);
        assert!(
            disagreeing(&a) * 3 < disagreeing(&raw),
            "{} vs {}",
            disagreeing(&a),
            disagreeing(&raw)
        );
        assert_ne!(run(64, 48, 10, &p, 1), a);
    }
}
