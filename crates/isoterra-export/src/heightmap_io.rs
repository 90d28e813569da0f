//! Heightmap images: 16-bit grayscale PNG and R16 raw, import and export,
//! and 8-bit grayscale PNG import.
//!
//! # The fixed range rule
//!
//! Heights map to integer codes through a *fixed* range `[min, max]`: the
//! generator's analytic range, or one the user gives, never the exported
//! region's own minimum and maximum. Two tiles exported separately with the
//! same range give the same code for the same height, so they line up
//! exactly in an engine.
//!
//! ```text
//! code   = round((h - min) / (max - min) * 65535), clamped to 0..=65535
//! height = (min + code / 65535 * (max - min)) as f32     (in f64, rounded once)
//! ```
//!
//! A height outside the range is clamped to the nearest end. The range must
//! be finite, `min < max`, and at least `max(|min|, |max|) / 64` wide, so
//! that every code survives the trip through `f32`: `code -> height -> code`
//! gives the same code back (the round trip is exact).
//!
//! # Regions share their borders
//!
//! A region of nodes `X0..=X1` by `Z0..=Z1` includes both end rows and both
//! end columns: it is `(X1 - X0 + 1) x (Z1 - Z0 + 1)` samples. Two
//! neighbouring regions `0..=64` and `64..=128` therefore both hold node
//! column 64 with identical codes, as tiled terrain in engines expects.
//!
//! # Layout
//!
//! Samples are row-major with x fastest: image column `i` is node
//! `X0 + i`, image row `j` (counted from the top) is node `Z0 + j`. Looking
//! down on the x/z plane (y up, right-handed) with x to the right, +z points
//! down the image, so no flip is needed.
//!
//! A PNG records its range in a `tEXt` chunk with the keyword
//! [`RANGE_KEYWORD`] and the text `"min,max"` (shortest round-trip decimal
//! floats); the importers use it when present. R16 files hold nothing but
//! the little-endian codes, so their range must be known.

use std::io::Cursor;

use crate::ExportError;
use crate::raster::{MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE};

/// Keyword of the PNG `tEXt` chunk that records the height range.
pub const RANGE_KEYWORD: &str = "isoterra:range";

/// A heightmap read from an image.
#[derive(Debug, Clone, PartialEq)]
pub struct HeightImage {
    /// Heights, row-major with x fastest (`dims[0] * dims[1]` values).
    pub heights: Vec<f32>,
    /// `[width, height]` in samples (x, z).
    pub dims: [u32; 2],
    /// The range the codes were mapped through.
    pub range: [f32; 2],
    /// True when the range came from the file's [`RANGE_KEYWORD`] chunk.
    pub range_from_file: bool,
}

/// Checks a height range (see the module docs).
///
/// # Errors
///
/// [`ExportError::HeightRange`] when it is not finite, empty, inverted, or
/// too narrow for its magnitude.
pub fn check_height_range(range: [f32; 2]) -> Result<(), ExportError> {
    let [lo, hi] = range;
    let bad = |reason: &'static str| Err(ExportError::HeightRange { range, reason });
    if !(lo.is_finite() && hi.is_finite()) {
        return bad("both ends must be finite");
    }
    if lo >= hi {
        return bad("min must be below max");
    }
    let width = f64::from(hi) - f64::from(lo);
    let mag = f64::from(lo.abs().max(hi.abs()));
    if width < mag / 64.0 {
        return bad(
            "the range must be at least max(|min|, |max|) / 64 wide, or 16-bit codes do not survive f32",
        );
    }
    Ok(())
}

/// The 16-bit code of height `h` in `range` (clamped; see the module docs).
/// `range` must pass [`check_height_range`] and `h` must not be NaN.
pub fn height_to_code16(h: f32, range: [f32; 2]) -> u16 {
    let [lo, hi] = [f64::from(range[0]), f64::from(range[1])];
    let t = (f64::from(h) - lo) / (hi - lo) * 65535.0;
    t.round().clamp(0.0, 65535.0) as u16
}

/// The height of 16-bit code `c` in `range` (see the module docs).
pub fn code16_to_height(c: u16, range: [f32; 2]) -> f32 {
    let [lo, hi] = [f64::from(range[0]), f64::from(range[1])];
    (lo + f64::from(c) / 65535.0 * (hi - lo)) as f32
}

/// The height of 8-bit code `c` in `range`: `min + c / 255 * (max - min)`.
pub fn code8_to_height(c: u8, range: [f32; 2]) -> f32 {
    let [lo, hi] = [f64::from(range[0]), f64::from(range[1])];
    (lo + f64::from(c) / 255.0 * (hi - lo)) as f32
}

fn check_dims(dims: [u32; 2], len: usize) -> Result<usize, ExportError> {
    let [w, h] = dims;
    if w == 0 || h == 0 {
        return Err(ExportError::param(
            "dims",
            format!("{dims:?}"),
            "both sides must be at least 1",
        ));
    }
    let count = u64::from(w) * u64::from(h);
    if w > MAX_IMAGE_SIDE || h > MAX_IMAGE_SIDE || count > MAX_IMAGE_PIXELS {
        return Err(ExportError::ImageTooLarge {
            width: u64::from(w),
            height: u64::from(h),
            max_side: u64::from(MAX_IMAGE_SIDE),
            max_pixels: MAX_IMAGE_PIXELS,
        });
    }
    if count != len as u64 {
        return Err(ExportError::param(
            "heights",
            len,
            "must hold dims[0] * dims[1] values",
        ));
    }
    Ok(count as usize)
}

/// The 16-bit codes of `heights` through `range`, after checking sizes,
/// the range and every height.
///
/// # Errors
///
/// Zero or too large dims, a length that does not match them, a bad range,
/// or a NaN / infinite height ([`ExportError::NonFiniteHeight`]).
pub fn heights_to_codes16(
    heights: &[f32],
    dims: [u32; 2],
    range: [f32; 2],
) -> Result<Vec<u16>, ExportError> {
    check_dims(dims, heights.len())?;
    check_height_range(range)?;
    if let Some(index) = heights.iter().position(|h| !h.is_finite()) {
        return Err(ExportError::NonFiniteHeight {
            index: index as u64,
            value: heights[index],
        });
    }
    Ok(heights
        .iter()
        .map(|&h| height_to_code16(h, range))
        .collect())
}

/// Encodes heights as a 16-bit grayscale PNG with the range recorded.
///
/// # Errors
///
/// As [`heights_to_codes16`], or [`ExportError::Png`] from the encoder.
pub fn export_png16(
    heights: &[f32],
    dims: [u32; 2],
    range: [f32; 2],
) -> Result<Vec<u8>, ExportError> {
    let codes = heights_to_codes16(heights, dims, range)?;
    encode_png16_codes(&codes, dims, Some(range))
}

/// Encodes raw 16-bit codes as a grayscale PNG, recording `range` when
/// given.
///
/// # Errors
///
/// Bad dims or length, a bad range, or an encoder error.
pub fn encode_png16_codes(
    codes: &[u16],
    dims: [u32; 2],
    range: Option<[f32; 2]>,
) -> Result<Vec<u8>, ExportError> {
    check_dims(dims, codes.len())?;
    if let Some(r) = range {
        check_height_range(r)?;
    }
    let png_err = |e: png::EncodingError| ExportError::Png(e.to_string());
    let mut data = Vec::with_capacity(codes.len() * 2);
    for c in codes {
        data.extend_from_slice(&c.to_be_bytes());
    }
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, dims[0], dims[1]);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(png::BitDepth::Sixteen);
        enc.set_compression(png::Compression::Fast);
        if let Some([lo, hi]) = range {
            enc.add_text_chunk(RANGE_KEYWORD.to_string(), format!("{lo},{hi}"))
                .map_err(png_err)?;
        }
        let mut writer = enc.write_header().map_err(png_err)?;
        writer.write_image_data(&data).map_err(png_err)?;
        writer.finish().map_err(png_err)?;
    }
    Ok(out)
}

/// Raw 16-bit codes of a heightmap image.
#[derive(Debug, Clone, PartialEq)]
pub struct HeightCodes {
    /// Codes, row-major with x fastest.
    pub codes: Vec<u16>,
    /// `[width, height]` in samples.
    pub dims: [u32; 2],
    /// The range recorded in the file, if any (never for R16).
    pub range: Option<[f32; 2]>,
}

/// A decoded grayscale PNG: samples, dims and recorded range.
struct DecodedGray {
    samples: Vec<u16>,
    dims: [u32; 2],
    range: Option<[f32; 2]>,
}

fn parse_range(text: &str) -> Result<[f32; 2], ExportError> {
    let bad = || ExportError::PngDecode(format!("malformed {RANGE_KEYWORD} text {text:?}"));
    let (a, b) = text.split_once(',').ok_or_else(bad)?;
    let lo: f32 = a.trim().parse().map_err(|_| bad())?;
    let hi: f32 = b.trim().parse().map_err(|_| bad())?;
    check_height_range([lo, hi])?;
    Ok([lo, hi])
}

fn decode_gray(bytes: &[u8], depth: png::BitDepth) -> Result<DecodedGray, ExportError> {
    let dec_err = |e: png::DecodingError| ExportError::PngDecode(e.to_string());
    let limits = png::Limits {
        bytes: (MAX_IMAGE_PIXELS as usize) * 2 + (1 << 20),
    };
    let mut decoder = png::Decoder::new_with_limits(Cursor::new(bytes), limits);
    decoder.set_transformations(png::Transformations::IDENTITY);
    let mut reader = decoder.read_info().map_err(dec_err)?;
    let info = reader.info();
    let dims = [info.width, info.height];
    if info.color_type != png::ColorType::Grayscale || info.bit_depth != depth {
        return Err(ExportError::HeightFormat(format!(
            "expected a {}-bit grayscale PNG, found {:?} at {} bits{}",
            depth as u8,
            info.color_type,
            info.bit_depth as u8,
            match (depth, info.bit_depth) {
                (png::BitDepth::Sixteen, png::BitDepth::Eight) => " (use the 8-bit importer)",
                (png::BitDepth::Eight, png::BitDepth::Sixteen) => " (use the 16-bit importer)",
                _ => "",
            }
        )));
    }
    let count = u64::from(dims[0]) * u64::from(dims[1]);
    if dims[0] > MAX_IMAGE_SIDE || dims[1] > MAX_IMAGE_SIDE || count > MAX_IMAGE_PIXELS {
        return Err(ExportError::ImageTooLarge {
            width: u64::from(dims[0]),
            height: u64::from(dims[1]),
            max_side: u64::from(MAX_IMAGE_SIDE),
            max_pixels: MAX_IMAGE_PIXELS,
        });
    }
    let mut range = None;
    for t in &info.uncompressed_latin1_text {
        if t.keyword == RANGE_KEYWORD {
            range = Some(parse_range(&t.text)?);
        }
    }
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| ExportError::PngDecode("image too large".to_string()))?;
    let mut buf = vec![0u8; size];
    let frame = reader.next_frame(&mut buf).map_err(dec_err)?;
    let line = frame.line_size;
    let bps = if depth == png::BitDepth::Sixteen {
        2
    } else {
        1
    };
    let w = dims[0] as usize;
    let mut samples = Vec::with_capacity(count as usize);
    for j in 0..dims[1] as usize {
        let row = buf
            .get(j * line..j * line + w * bps)
            .ok_or_else(|| ExportError::PngDecode("short image data".to_string()))?;
        if bps == 2 {
            samples.extend(
                row.chunks_exact(2)
                    .map(|b| u16::from_be_bytes([b[0], b[1]])),
            );
        } else {
            samples.extend(row.iter().map(|&b| u16::from(b)));
        }
    }
    // Text chunks after the image data are only known once it is read.
    if range.is_none() {
        let _ = reader.finish();
        for t in &reader.info().uncompressed_latin1_text {
            if t.keyword == RANGE_KEYWORD {
                range = Some(parse_range(&t.text)?);
            }
        }
    }
    Ok(DecodedGray {
        samples,
        dims,
        range,
    })
}

/// Decodes a 16-bit grayscale PNG into its raw codes, dims and recorded
/// range (if any).
///
/// # Errors
///
/// [`ExportError::PngDecode`] for a corrupt file or a malformed range text,
/// [`ExportError::HeightFormat`] for anything but 16-bit grayscale,
/// [`ExportError::ImageTooLarge`].
pub fn decode_png16_codes(bytes: &[u8]) -> Result<HeightCodes, ExportError> {
    let d = decode_gray(bytes, png::BitDepth::Sixteen)?;
    Ok(HeightCodes {
        codes: d.samples,
        dims: d.dims,
        range: d.range,
    })
}

fn pick_range(
    recorded: Option<[f32; 2]>,
    given: Option<[f32; 2]>,
) -> Result<([f32; 2], bool), ExportError> {
    match (recorded, given) {
        (Some(r), _) => Ok((r, true)),
        (None, Some(r)) => {
            check_height_range(r)?;
            Ok((r, false))
        }
        (None, None) => Ok(([0.0, 1.0], false)),
    }
}

/// Reads a 16-bit grayscale PNG heightmap.
///
/// The range is the one recorded in the file ([`RANGE_KEYWORD`]) when
/// present, else `range`, else `[0, 1]`.
///
/// # Errors
///
/// As [`decode_png16_codes`], or a bad `range`.
pub fn import_png16(bytes: &[u8], range: Option<[f32; 2]>) -> Result<HeightImage, ExportError> {
    let d = decode_gray(bytes, png::BitDepth::Sixteen)?;
    let (range, range_from_file) = pick_range(d.range, range)?;
    Ok(HeightImage {
        heights: d
            .samples
            .iter()
            .map(|&c| code16_to_height(c, range))
            .collect(),
        dims: d.dims,
        range,
        range_from_file,
    })
}

/// Reads an 8-bit grayscale PNG heightmap (`height = min + c / 255 *
/// (max - min)`), with the range chosen as by [`import_png16`].
///
/// # Errors
///
/// As [`import_png16`], for 8-bit grayscale.
pub fn import_png8(bytes: &[u8], range: Option<[f32; 2]>) -> Result<HeightImage, ExportError> {
    let d = decode_gray(bytes, png::BitDepth::Eight)?;
    let (range, range_from_file) = pick_range(d.range, range)?;
    Ok(HeightImage {
        heights: d
            .samples
            .iter()
            .map(|&c| code8_to_height(c as u8, range))
            .collect(),
        dims: d.dims,
        range,
        range_from_file,
    })
}

/// Encodes heights as R16 raw: little-endian `u16` codes, row-major with x
/// fastest, no header.
///
/// # Errors
///
/// As [`heights_to_codes16`].
pub fn export_r16(
    heights: &[f32],
    dims: [u32; 2],
    range: [f32; 2],
) -> Result<Vec<u8>, ExportError> {
    let codes = heights_to_codes16(heights, dims, range)?;
    let mut out = Vec::with_capacity(codes.len() * 2);
    for c in codes {
        out.extend_from_slice(&c.to_le_bytes());
    }
    Ok(out)
}

/// Splits R16 bytes into codes. `dims` gives the size; `None` means a
/// square image whose side follows from the length.
///
/// # Errors
///
/// [`ExportError::R16Size`] when the length is odd, zero, not a square
/// without dims, or not `2 * dims[0] * dims[1]`; too large dims.
pub fn decode_r16_codes(bytes: &[u8], dims: Option<[u32; 2]>) -> Result<HeightCodes, ExportError> {
    let size_err = |expected: String| ExportError::R16Size {
        bytes: bytes.len() as u64,
        expected,
    };
    if bytes.is_empty() || !bytes.len().is_multiple_of(2) {
        return Err(size_err("an even, non-zero number of bytes".to_string()));
    }
    let count = (bytes.len() / 2) as u64;
    let dims = match dims {
        Some(d) => {
            let want = u64::from(d[0]) * u64::from(d[1]);
            if want != count {
                return Err(size_err(format!(
                    "{} bytes for {}x{} samples",
                    want.saturating_mul(2),
                    d[0],
                    d[1]
                )));
            }
            d
        }
        None => {
            let side = (count as f64).sqrt().round() as u64;
            if side * side != count {
                return Err(size_err(
                    "a square image (2 * side^2 bytes), or give the dimensions".to_string(),
                ));
            }
            let s = u32::try_from(side).map_err(|_| size_err("a smaller image".to_string()))?;
            [s, s]
        }
    };
    check_dims(dims, count as usize)?;
    let codes = bytes
        .chunks_exact(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect();
    Ok(HeightCodes {
        codes,
        dims,
        range: None,
    })
}

/// Reads an R16 raw heightmap through `range` (R16 files do not record it).
///
/// # Errors
///
/// As [`decode_r16_codes`], or a bad range.
pub fn import_r16(
    bytes: &[u8],
    dims: Option<[u32; 2]>,
    range: [f32; 2],
) -> Result<HeightImage, ExportError> {
    check_height_range(range)?;
    let HeightCodes { codes, dims, .. } = decode_r16_codes(bytes, dims)?;
    Ok(HeightImage {
        heights: codes.iter().map(|&c| code16_to_height(c, range)).collect(),
        dims,
        range,
        range_from_file: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_cover_the_range_ends() {
        let r = [-10.0, 30.0];
        assert_eq!(height_to_code16(-10.0, r), 0);
        assert_eq!(height_to_code16(30.0, r), 65535);
        assert_eq!(height_to_code16(-50.0, r), 0);
        assert_eq!(height_to_code16(99.0, r), 65535);
        assert_eq!(code16_to_height(0, r), -10.0);
        assert_eq!(code16_to_height(65535, r), 30.0);
    }

    #[test]
    fn ranges_are_checked() {
        check_height_range([0.0, 1.0]).unwrap();
        check_height_range([-64.0, 64.0]).unwrap();
        assert!(check_height_range([1.0, 1.0]).is_err());
        assert!(check_height_range([2.0, 1.0]).is_err());
        assert!(check_height_range([f32::NAN, 1.0]).is_err());
        assert!(check_height_range([0.0, f32::INFINITY]).is_err());
        assert!(check_height_range([1000.0, 1001.0]).is_err());
    }
}
