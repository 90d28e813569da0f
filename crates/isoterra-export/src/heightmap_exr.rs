//! Heightmaps as OpenEXR: one 32-bit float channel of heights, no range and
//! no quantization (what Godot's Terrain3D recommends for import).
//!
//! Export writes a single scanline layer named `height` with one `f32`
//! channel `R` (Terrain3D and Godot read heights from red), ZIP-compressed
//! (lossless), row-major with x fastest and row 0 at the top, the layout of
//! the PNG16 export. Import reads the first layer of a file: its `R`, `Y`
//! or `Z` channel, or its only channel, as `f32` (half floats widen exactly,
//! `u32` samples convert). The heights must be finite.

use std::io::Cursor;
use std::panic::{AssertUnwindSafe, catch_unwind};

use exr::prelude::{
    AnyChannel, AnyChannels, Encoding, FlatSamples, Image, Layer, LayerAttributes, ReadChannels,
    ReadLayers, WritableImage,
};

use crate::ExportError;
use crate::heightmap_io::HeightImage;
use crate::raster::{MAX_IMAGE_PIXELS, MAX_IMAGE_SIDE};

/// The channel names read as heights, in order of preference.
const HEIGHT_CHANNELS: [&str; 3] = ["R", "Y", "Z"];

fn too_large(w: u64, h: u64) -> ExportError {
    ExportError::ImageTooLarge {
        width: w,
        height: h,
        max_side: u64::from(MAX_IMAGE_SIDE),
        max_pixels: MAX_IMAGE_PIXELS,
    }
}

fn exr_err(e: impl std::fmt::Display) -> ExportError {
    ExportError::HeightFormat(format!("cannot decode EXR: {e}"))
}

/// Writes `heights` (a `dims` grid, x fastest) as a float EXR.
///
/// # Errors
///
/// [`ExportError::InvalidParameter`] for zero dims or a wrong length,
/// [`ExportError::ImageTooLarge`] beyond the image limits,
/// [`ExportError::NonFiniteHeight`] for NaN or infinite heights.
pub fn export_exr(heights: &[f32], dims: [u32; 2]) -> Result<Vec<u8>, ExportError> {
    let (w, h) = (u64::from(dims[0]), u64::from(dims[1]));
    if w == 0 || h == 0 || heights.len() as u64 != w * h {
        return Err(ExportError::InvalidParameter {
            name: "dims",
            value: format!("{dims:?} for {} heights", heights.len()),
            reason: "must be non-zero and hold exactly the heights",
        });
    }
    if dims[0] > MAX_IMAGE_SIDE || dims[1] > MAX_IMAGE_SIDE || w * h > MAX_IMAGE_PIXELS {
        return Err(too_large(w, h));
    }
    if let Some((index, &value)) = heights.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(ExportError::NonFiniteHeight {
            index: index as u64,
            value,
        });
    }
    let channel = AnyChannel::new("R", FlatSamples::F32(heights.to_vec()));
    let layer = Layer::new(
        (dims[0] as usize, dims[1] as usize),
        LayerAttributes::named("height"),
        Encoding::SMALL_LOSSLESS,
        AnyChannels::sort(smallvec_of(channel)),
    );
    let mut out = Cursor::new(Vec::new());
    Image::from_layer(layer)
        .write()
        .non_parallel()
        .to_buffered(&mut out)
        .map_err(|e| ExportError::HeightFormat(format!("cannot encode EXR: {e}")))?;
    Ok(out.into_inner())
}

fn smallvec_of(c: AnyChannel<FlatSamples>) -> exr::prelude::SmallVec<[AnyChannel<FlatSamples>; 4]> {
    let mut v = exr::prelude::SmallVec::new();
    v.push(c);
    v
}

/// Reads a float EXR heightmap. The returned range is the heights' own
/// minimum and maximum (widened by one when they are all equal): an EXR
/// holds heights, not codes, so the range only tells later 16-bit exports
/// what to use.
///
/// # Errors
///
/// [`ExportError::ImageTooLarge`] when the header declares an image beyond
/// the limits (checked before any pixel is decoded),
/// [`ExportError::HeightFormat`] for a corrupt file, no usable channel or a
/// deep image, [`ExportError::NonFiniteHeight`] for NaN or infinite heights.
pub fn import_exr(bytes: &[u8]) -> Result<HeightImage, ExportError> {
    // The header first: refuse huge images before allocating for them.
    let meta =
        exr::meta::MetaData::read_from_buffered(Cursor::new(bytes), false).map_err(exr_err)?;
    let header = meta
        .headers
        .first()
        .ok_or_else(|| exr_err("the file holds no layer"))?;
    for header in meta.headers.iter() {
        let size = header.layer_size;
        let (w, h) = (size.width() as u64, size.height() as u64);
        if w > u64::from(MAX_IMAGE_SIDE)
            || h > u64::from(MAX_IMAGE_SIDE)
            || w * h > MAX_IMAGE_PIXELS
        {
            return Err(too_large(w, h));
        }
    }
    if header.deep {
        return Err(exr_err("deep images are not heightmaps"));
    }
    // The decoder is third-party code: a panic on a hostile file becomes an
    // error, never a crash.
    let image = catch_unwind(AssertUnwindSafe(|| {
        exr::prelude::read()
            .no_deep_data()
            .largest_resolution_level()
            .all_channels()
            .first_valid_layer()
            .all_attributes()
            .non_parallel()
            .from_buffered(Cursor::new(bytes))
    }))
    .map_err(|_| exr_err("the decoder failed on this file"))?
    .map_err(exr_err)?;
    let layer = image.layer_data;
    let (w, h) = (layer.size.width(), layer.size.height());
    if w == 0 || h == 0 {
        return Err(exr_err("the image is empty"));
    }
    let channels = &layer.channel_data.list;
    let pick = HEIGHT_CHANNELS
        .iter()
        .find_map(|want| channels.iter().find(|c| c.name.eq(want)))
        .or(if channels.len() == 1 {
            channels.first()
        } else {
            None
        })
        .ok_or_else(|| {
            let names: Vec<String> = channels.iter().map(|c| c.name.to_string()).collect();
            exr_err(format!(
                "no height channel: give one named R, Y or Z, or a single channel (found {})",
                names.join(", ")
            ))
        })?;
    let heights: Vec<f32> = match &pick.sample_data {
        FlatSamples::F32(v) => v.clone(),
        FlatSamples::F16(v) => v.iter().map(|x| x.to_f32()).collect(),
        FlatSamples::U32(v) => v.iter().map(|&x| x as f32).collect(),
    };
    if heights.len() != w * h {
        return Err(exr_err("the channel does not cover the image"));
    }
    if let Some((index, &value)) = heights.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(ExportError::NonFiniteHeight {
            index: index as u64,
            value,
        });
    }
    let lo = heights.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = heights.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let range = if hi > lo { [lo, hi] } else { [lo, lo + 1.0] };
    Ok(HeightImage {
        heights,
        dims: [w as u32, h as u32],
        range,
        range_from_file: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heights_come_back_bit_for_bit() {
        let dims = [37u32, 11];
        let heights: Vec<f32> = (0..37 * 11)
            .map(|k| (k as f32 * 0.37).sin() * 1234.567 - 80.0)
            .collect();
        let bytes = export_exr(&heights, dims).unwrap();
        let back = import_exr(&bytes).unwrap();
        assert_eq!(back.dims, dims);
        let a: Vec<u32> = heights.iter().map(|h| h.to_bits()).collect();
        let b: Vec<u32> = back.heights.iter().map(|h| h.to_bits()).collect();
        assert_eq!(a, b);
        assert!(back.range[0] <= back.range[1]);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(export_exr(&[0.0; 3], [2, 2]).is_err());
        assert!(export_exr(&[], [0, 0]).is_err());
        assert!(export_exr(&[f32::NAN; 4], [2, 2]).is_err());
        assert!(import_exr(b"").is_err());
        assert!(import_exr(b"v/1\x01 not an exr at all").is_err());
        let good = export_exr(&[1.0; 16], [4, 4]).unwrap();
        for cut in [8, good.len() / 2, good.len() - 1] {
            assert!(import_exr(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut flipped = good.clone();
        for b in flipped.iter_mut().skip(good.len() - 20) {
            *b ^= 0x5a;
        }
        let _ = import_exr(&flipped);
        let flat = import_exr(&good).unwrap();
        assert_eq!(flat.range, [1.0, 2.0]);
    }
}
