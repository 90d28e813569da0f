//! Thermal erosion: material slides down slopes steeper than the talus angle.

use crate::{Field2, FieldError};

/// Parameters of [`thermal_erosion`].
///
/// ```
/// use isoterra_field::erosion::ThermalParams;
/// let p = ThermalParams::DEFAULT.with_talus(0.6).with_iterations(20);
/// assert!(p.validate().is_ok());
/// assert_eq!(p.margin(), 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct ThermalParams {
    /// The steepest stable slope (height per unit of horizontal distance,
    /// the tangent of the talus angle), finite and `>= 0`. Default value: `0.8`.
    pub talus: f32,
    /// Fraction of the excess height moved per iteration, in `(0, 1]`.
    /// Default value: `0.5`.
    pub rate: f32,
    /// Number of iterations, `1..=10000`. Default value: `50`.
    pub iterations: u32,
}

impl ThermalParams {
    /// Most [`iterations`](Self::iterations).
    pub const MAX_ITERATIONS: u32 = 10_000;

    /// The defaults (see the field docs).
    pub const DEFAULT: Self = ThermalParams {
        talus: 0.8,
        rate: 0.5,
        iterations: 50,
    };

    /// Sets [`talus`](Self::talus).
    pub const fn with_talus(mut self, talus: f32) -> Self {
        self.talus = talus;
        self
    }

    /// Sets [`rate`](Self::rate).
    pub const fn with_rate(mut self, rate: f32) -> Self {
        self.rate = rate;
        self
    }

    /// Sets [`iterations`](Self::iterations).
    pub const fn with_iterations(mut self, iterations: u32) -> Self {
        self.iterations = iterations;
        self
    }

    /// Checks every parameter.
    pub fn validate(&self) -> Result<(), FieldError> {
        if !(self.talus.is_finite() && self.talus >= 0.0) {
            return Err(FieldError::param(
                "talus",
                self.talus,
                "must be finite and at least zero (tan of the talus angle, e.g. 0.8 for about 39 degrees)",
            ));
        }
        if !(self.rate > 0.0 && self.rate <= 1.0) {
            return Err(FieldError::param(
                "rate",
                self.rate,
                "must be greater than zero and at most one",
            ));
        }
        if self.iterations == 0 || self.iterations > Self::MAX_ITERATIONS {
            return Err(FieldError::param(
                "iterations",
                self.iterations,
                "must be between 1 and 10000",
            ));
        }
        Ok(())
    }

    /// How many nodes beyond a tile the result of one node depends on: one
    /// per iteration (see the [tiling rule](crate::erosion)).
    pub const fn margin(&self) -> u32 {
        self.iterations
    }
}

impl Default for ThermalParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Thermal erosion of `field` in place.
///
/// Each iteration looks at every node's four neighbours in a snapshot of the
/// heights: where the height difference exceeds `talus * cell_size`, a
/// quarter of `rate` times the excess moves from the higher node to the lower
/// one. The flow between two nodes is computed from the same difference on
/// both sides (with opposite signs), so every iteration conserves the total
/// height up to rounding, and the result does not depend on traversal order.
/// Nodes on the field border have no neighbours outside it.
///
/// Errors: invalid parameters (the field is not changed).
pub fn thermal_erosion(field: &mut Field2, params: &ThermalParams) -> Result<(), FieldError> {
    params.validate()?;
    let (w, h) = (field.width() as usize, field.height() as usize);
    let talus = params.talus * field.cell_size();
    if !talus.is_finite() {
        return Err(FieldError::param(
            "talus",
            params.talus,
            "talus times the cell size overflows",
        ));
    }
    let k = 0.25 * params.rate;
    let values = field.values_mut();
    let mut snap = values.to_vec();
    for _ in 0..params.iterations {
        snap.copy_from_slice(values);
        for y in 0..h {
            for x in 0..w {
                let i = y * w + x;
                let c = snap[i];
                let mut sum = 0.0f32;
                // Fixed neighbour order: -x, +x, -y, +y.
                let mut flow = |j: usize| {
                    let d = snap[j] - c;
                    let e = d.abs() - talus;
                    if e > 0.0 {
                        sum += k * if d > 0.0 { e } else { -e };
                    }
                };
                if x > 0 {
                    flow(i - 1);
                }
                if x + 1 < w {
                    flow(i + 1);
                }
                if y > 0 {
                    flow(i - w);
                }
                if y + 1 < h {
                    flow(i + w);
                }
                values[i] = c + sum;
            }
        }
    }
    Ok(())
}

/// Thermal erosion of the tile of `dims` nodes whose first node is `origin`,
/// following the [tiling rule](crate::erosion): it reads `height(x, y)` for
/// the tile grown by [`ThermalParams::margin`] on every side (node
/// coordinates, cell size 1), erodes that region, and returns the tile's
/// nodes (row-major). Two tiles eroded this way agree bit for bit on every
/// node they share, and with [`thermal_erosion`] of any region that contains
/// the grown tile.
///
/// Errors: invalid parameters, an empty tile or a grown region that is too
/// large for a [`Field2`].
pub fn thermal_tile(
    params: &ThermalParams,
    origin: [i64; 2],
    dims: [u32; 2],
    height: impl FnMut(i64, i64) -> f32,
) -> Result<Vec<f32>, FieldError> {
    params.validate()?;
    super::grown_tile(origin, dims, params.margin(), height, |region, _| {
        thermal_erosion(region, params)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spike_spreads_and_keeps_its_mass() {
        let mut f = Field2::new(9, 9, 0.0).unwrap();
        f.set(4, 4, 10.0).unwrap();
        thermal_erosion(&mut f, &ThermalParams::DEFAULT.with_iterations(30)).unwrap();
        let total: f32 = f.values().iter().sum();
        assert!((total - 10.0).abs() < 1e-4, "{total}");
        assert!(f.get(4, 4) < 5.0);
        assert!(f.get(3, 4) > 0.0);
    }

    #[test]
    fn tiles_agree_with_the_whole_region() {
        let h = |x: i64, y: i64| ((x * 7 + y * 13) % 11) as f32 * 0.9 + (x as f32 * 0.3).sin();
        let p = ThermalParams::DEFAULT.with_iterations(6).with_talus(0.4);
        let whole = thermal_tile(&p, [-5, 3], [20, 12], h).unwrap();
        for (origin, dims) in [([-5, 3], [9, 12]), ([4, 3], [11, 5]), ([4, 8], [11, 7])] {
            let tile = thermal_tile(&p, origin, dims, h).unwrap();
            for y in 0..dims[1] as i64 {
                for x in 0..dims[0] as i64 {
                    let (wx, wy) = (origin[0] - -5 + x, origin[1] - 3 + y);
                    assert_eq!(
                        tile[(y * i64::from(dims[0]) + x) as usize].to_bits(),
                        whole[(wy * 20 + wx) as usize].to_bits()
                    );
                }
            }
        }
        assert!(thermal_tile(&p, [0, 0], [0, 4], h).is_err());
    }

    #[test]
    fn gentle_slopes_do_not_move() {
        let mut f = Field2::from_fn(8, 8, |x, y| 0.5 * x as f32 + 0.25 * y as f32).unwrap();
        let before = f.clone();
        thermal_erosion(&mut f, &ThermalParams::DEFAULT.with_talus(0.6)).unwrap();
        assert_eq!(f, before);
    }
}
