//! Separable blurs over a [`Field2`].

use crate::par::{for_each_band, thread_count};
use crate::{Field2, FieldError};

/// The kernel of [`blur`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum BlurKind {
    /// Equal weights over `2 * radius + 1` nodes per axis.
    Box,
    /// Gaussian weights with `sigma = radius / 2`, cut off at `radius`
    /// and normalised to sum to one.
    Gaussian,
}

impl BlurKind {
    /// The largest radius [`blur`] accepts, in nodes.
    pub const MAX_RADIUS: u32 = 64;

    /// The normalised 1D kernel (`2 * radius + 1` weights).
    fn weights(self, radius: u32) -> Vec<f32> {
        let n = 2 * radius as usize + 1;
        match self {
            BlurKind::Box => vec![1.0 / n as f32; n],
            BlurKind::Gaussian => {
                let sigma = radius as f64 / 2.0;
                let raw: Vec<f64> = (0..n)
                    .map(|i| {
                        let k = i as f64 - radius as f64;
                        exp_series(-(k * k) / (2.0 * sigma * sigma))
                    })
                    .collect();
                let total: f64 = raw.iter().sum();
                raw.iter().map(|w| (w / total) as f32).collect()
            }
        }
    }
}

/// `e^x` for `|x| <= 2` from its Taylor series. Only `+`, `*` and `/` are
/// used, which IEEE 754 rounds the same way everywhere, so the kernel (and
/// every generated world that blurs) has the same bits on every platform;
/// the platform's `exp` does not promise that.
fn exp_series(x: f64) -> f64 {
    let mut term = 1.0f64;
    let mut sum = 1.0f64;
    for n in 1..=30 {
        term *= x / n as f64;
        sum += term;
    }
    sum
}

/// Blurs `field` in place with a separable kernel of `radius` nodes: first
/// along x, then along y.
///
/// Edges are clamped: a tap that falls outside the field reads the nearest
/// edge node, so a constant field stays constant and nothing leaks in from
/// outside. Radius `0` leaves the field unchanged. Each node is a weighted
/// sum in a fixed order, so the result does not depend on thread count.
///
/// Errors: `radius > BlurKind::MAX_RADIUS` (the field is not changed).
pub fn blur(field: &mut Field2, kind: BlurKind, radius: u32) -> Result<(), FieldError> {
    let (w, h) = (field.width() as usize, field.height() as usize);
    blur_values(field.values_mut(), w, h, kind, radius, thread_count(0))
}

/// [`blur`] over raw row-major values (crate-internal: the generators call it
/// with their own thread count).
pub(crate) fn blur_values(
    values: &mut [f32],
    width: usize,
    height: usize,
    kind: BlurKind,
    radius: u32,
    threads: usize,
) -> Result<(), FieldError> {
    if radius > BlurKind::MAX_RADIUS {
        return Err(FieldError::param(
            "radius",
            radius,
            "blur radius must be at most 64 nodes; blur several times for more",
        ));
    }
    if radius == 0 || values.is_empty() {
        return Ok(());
    }
    debug_assert_eq!(values.len(), width * height);
    let weights = kind.weights(radius);
    let r = radius as usize;

    // Along x: each row reads a clamp-padded copy of itself.
    for_each_band(values, width, threads, &|_, band| {
        let mut padded = vec![0.0f32; width + 2 * r];
        for row in band.chunks_exact_mut(width) {
            for (i, p) in padded.iter_mut().enumerate() {
                *p = row[i.saturating_sub(r).min(width - 1)];
            }
            row.fill(0.0);
            for (k, &wk) in weights.iter().enumerate() {
                for (o, &p) in row.iter_mut().zip(&padded[k..k + width]) {
                    *o += wk * p;
                }
            }
        }
    });

    // Along y: each output row is a weighted sum of clamped source rows.
    let src = values.to_vec();
    for_each_band(values, width, threads, &|first_row, band| {
        for (dy, row) in band.chunks_exact_mut(width).enumerate() {
            let y = first_row + dy;
            row.fill(0.0);
            for (k, &wk) in weights.iter().enumerate() {
                let sy = (y + k).saturating_sub(r).min(height - 1);
                let s = &src[sy * width..sy * width + width];
                for (o, &p) in row.iter_mut().zip(s) {
                    *o += wk * p;
                }
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_sum_to_one_and_are_symmetric() {
        for kind in [BlurKind::Box, BlurKind::Gaussian] {
            for r in [1, 2, 5, 64] {
                let w = kind.weights(r);
                assert_eq!(w.len(), 2 * r as usize + 1);
                let s: f32 = w.iter().sum();
                assert!((s - 1.0).abs() < 1e-5, "{kind:?} {r}: {s}");
                for i in 0..w.len() {
                    assert_eq!(w[i], w[w.len() - 1 - i]);
                }
            }
        }
    }

    #[test]
    fn exp_series_matches_exp() {
        for i in 0..=200 {
            let x = -2.0 + i as f64 * 0.02;
            assert!((exp_series(x) - x.exp()).abs() < 1e-14, "{x}");
        }
    }

    #[test]
    fn constant_field_stays_constant_and_radius_is_checked() {
        let mut f = Field2::new(9, 5, 0.25).unwrap();
        blur(&mut f, BlurKind::Gaussian, 3).unwrap();
        assert!(f.values().iter().all(|v| (v - 0.25).abs() < 1e-6));
        let before = f.clone();
        assert!(blur(&mut f, BlurKind::Box, 65).is_err());
        assert_eq!(f, before);
        blur(&mut f, BlurKind::Box, 0).unwrap();
        assert_eq!(f, before);
    }

    #[test]
    fn box_blur_of_an_impulse_spreads_evenly() {
        let mut f = Field2::new(7, 7, 0.0).unwrap();
        f.set(3, 3, 9.0).unwrap();
        blur(&mut f, BlurKind::Box, 1).unwrap();
        for y in 0..7 {
            for x in 0..7 {
                let inside = (2..=4).contains(&x) && (2..=4).contains(&y);
                let v = f.get(x, y);
                if inside {
                    assert!((v - 1.0).abs() < 1e-5, "({x},{y}) = {v}");
                } else {
                    assert_eq!(v, 0.0);
                }
            }
        }
    }

    #[test]
    fn edges_are_clamped() {
        // A ramp along x keeps its end values' neighbourhood mean at the edge.
        let mut f = Field2::from_fn(5, 3, |x, _| x as f32).unwrap();
        blur(&mut f, BlurKind::Box, 1).unwrap();
        // Node 0 averages (0, 0, 1) because the left tap repeats node 0.
        assert!((f.get(0, 1) - 1.0 / 3.0).abs() < 1e-6);
        assert!((f.get(2, 1) - 2.0).abs() < 1e-6);
        assert!((f.get(4, 1) - 11.0 / 3.0).abs() < 1e-5);
    }

    #[test]
    fn thread_count_does_not_change_bits() {
        let base = Field2::from_fn(37, 23, |x, y| ((x * 7 + y * 13) % 11) as f32 - 5.0).unwrap();
        let mut reference = base.values().to_vec();
        blur_values(&mut reference, 37, 23, BlurKind::Gaussian, 4, 1).unwrap();
        for threads in [2, 3, 5] {
            let mut v = base.values().to_vec();
            blur_values(&mut v, 37, 23, BlurKind::Gaussian, 4, threads).unwrap();
            assert_eq!(
                v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                reference.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
        }
    }
}
