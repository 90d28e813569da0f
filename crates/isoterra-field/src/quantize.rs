//! Quantized storage of densities.
//!
//! A quantizer maps the closed range `[min, max]` linearly onto the integers
//! `0..=Q` (`Q = 255` for [`Quantizer8`], `65535` for [`Quantizer16`]):
//!
//! ```text
//! q = round((clamp(v, min, max) - min) / (max - min) * Q)
//! v = min + q / Q * (max - min)
//! ```
//!
//! With the default range `[-1, 1]` one u8 step is `2 / 255 ≈ 0.0078`: 256
//! levels are enough for smooth contours and take a quarter of the memory of
//! `f32`. Round-tripping a quantized value is exact (`quantize(dequantize(q)) == q`),
//! and values outside the range saturate. Neither code maps exactly onto `0.0`
//! for the default range, so quantized data has no node exactly at the default iso.

use crate::FieldError;

/// A linear mapping of `[min, max]` onto the integers `0..=Q`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Quantizer<const Q: u32> {
    min: f32,
    max: f32,
}

/// 8-bit quantization (`0..=255`).
pub type Quantizer8 = Quantizer<255>;
/// 16-bit quantization (`0..=65535`).
pub type Quantizer16 = Quantizer<65535>;

impl<const Q: u32> Quantizer<Q> {
    /// The range `[-1, 1]`, matching signed densities with `iso = 0`.
    pub const DEFAULT: Self = Quantizer {
        min: -1.0,
        max: 1.0,
    };

    /// A quantizer for `[min, max]`; both finite and `min < max`.
    pub fn new(min: f32, max: f32) -> Result<Self, FieldError> {
        if !(min.is_finite() && max.is_finite() && min < max && (max - min).is_finite()) {
            return Err(FieldError::param(
                "quantizer range",
                format!("[{min}, {max}]"),
                "needs finite bounds with min < max",
            ));
        }
        Ok(Quantizer { min, max })
    }

    /// Lower bound of the range.
    pub fn min(&self) -> f32 {
        self.min
    }

    /// Upper bound of the range.
    pub fn max(&self) -> f32 {
        self.max
    }

    /// Quantizes one value (saturating; NaN maps to 0).
    #[inline]
    pub fn quantize(&self, v: f32) -> u32 {
        let t = (v - self.min) / (self.max - self.min);
        let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
        (t * Q as f32).round() as u32
    }

    /// Turns a code back into a value.
    #[inline]
    pub fn dequantize(&self, q: u32) -> f32 {
        let q = q.min(Q);
        if q == Q {
            return self.max;
        }
        self.min + (q as f32 / Q as f32) * (self.max - self.min)
    }
}

impl<const Q: u32> Default for Quantizer<Q> {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl Quantizer8 {
    /// Quantizes a slice into bytes.
    pub fn encode(&self, values: &[f32], out: &mut Vec<u8>) {
        out.clear();
        out.extend(values.iter().map(|&v| self.quantize(v) as u8));
    }

    /// Expands bytes into values.
    pub fn decode(&self, codes: &[u8], out: &mut Vec<f32>) {
        out.clear();
        out.extend(codes.iter().map(|&q| self.dequantize(q as u32)));
    }
}

impl Quantizer16 {
    /// Quantizes a slice into 16-bit codes.
    pub fn encode(&self, values: &[f32], out: &mut Vec<u16>) {
        out.clear();
        out.extend(values.iter().map(|&v| self.quantize(v) as u16));
    }

    /// Expands 16-bit codes into values.
    pub fn decode(&self, codes: &[u16], out: &mut Vec<f32>) {
        out.clear();
        out.extend(codes.iter().map(|&q| self.dequantize(q as u32)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ends_map_to_ends() {
        let q = Quantizer8::DEFAULT;
        assert_eq!(q.quantize(-1.0), 0);
        assert_eq!(q.quantize(1.0), 255);
        assert_eq!(q.quantize(-7.0), 0);
        assert_eq!(q.quantize(7.0), 255);
        assert_eq!(q.dequantize(0), -1.0);
        assert_eq!(q.dequantize(255), 1.0);
        assert!(Quantizer8::new(1.0, 1.0).is_err());
        assert!(Quantizer8::new(f32::NAN, 1.0).is_err());
        assert!(Quantizer16::new(-f32::MAX, f32::MAX).is_err());
    }

    #[test]
    fn codes_round_trip_exactly() {
        let q8 = Quantizer8::new(-3.0, 5.0).unwrap();
        for c in 0..=255 {
            assert_eq!(q8.quantize(q8.dequantize(c)), c);
        }
        let q16 = Quantizer16::DEFAULT;
        for c in (0..=65535).step_by(7) {
            assert_eq!(q16.quantize(q16.dequantize(c)), c);
        }
    }

    proptest! {
        #[test]
        fn error_is_at_most_half_a_step(v in -1.0f32..=1.0) {
            let q8 = Quantizer8::DEFAULT;
            let back = q8.dequantize(q8.quantize(v));
            prop_assert!((back - v).abs() <= 1.0 / 255.0 + 1e-6);
            let q16 = Quantizer16::DEFAULT;
            let back = q16.dequantize(q16.quantize(v));
            prop_assert!((back - v).abs() <= 1.0 / 65535.0 + 1e-6);
        }

        #[test]
        fn sign_is_kept_beyond_one_step(v in -1.0f32..=1.0) {
            let q8 = Quantizer8::DEFAULT;
            let back = q8.dequantize(q8.quantize(v));
            if v.abs() > 2.0 / 255.0 {
                prop_assert_eq!(back >= 0.0, v >= 0.0);
            }
        }
    }
}
