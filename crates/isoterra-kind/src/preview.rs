//! Previews: a small picture of what a new world's generator makes,
//! quick enough to redraw while a user drags a recipe's sliders.
//!
//! Each kind is drawn the way its ground reads best (its folder's
//! `preview.rs` draws it):
//! - side2d: the whole world, as the PNG export draws it (materials, sky,
//!   cave background, grass rim), scaled to fit;
//! - heightmap: a square of `area` world units around the origin, shaded
//!   relief (a light from the north-west) over an elevation ramp, with a
//!   recipe's erosion sketched on the preview's own samples (the world
//!   erodes at full resolution when it is created);
//! - voxel: a vertical slice through `z = 0` (mesas: `z = rock_size / 2`,
//!   through a row of rock cells), `area` units wide: sky, grass,
//!   dirt and stone by depth under the top surface, and caves in shadow
//!   (a planet: a slice through its centre);
//! - map: the whole map from above, in its splat colours, lighter per cliff
//!   level, with cliff edges, water and chasms.
//!
//! Nothing is written and no world is opened: the generator runs on the
//! preview's samples only (side2d and map generate their whole, bounded,
//! world).

use isoterra_export::{encode_rgb_png, linear_to_srgb8};

use crate::{KindError, NewWorld};

/// Longest side of a preview, in pixels.
pub const MAX_PREVIEW_PIXELS: u32 = 1024;
/// Smallest longest side of a preview, in pixels.
const MIN_PREVIEW_PIXELS: u32 = 16;
/// Largest `area`, in world units.
const MAX_AREA: f32 = 1.0e6;

/// What a preview shows.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct PreviewOptions {
    /// Longest side of the picture in pixels,
    /// `16..=`[`MAX_PREVIEW_PIXELS`]. Default value: `256`.
    pub pixels: u32,
    /// World units across the picture for the endless kinds (heightmap:
    /// the square's side; voxel: the slice's width), `(0, 1e6]`; `None`
    /// picks one from the generator (1024 for a heightmap, 256 for voxel
    /// ground, the planet's diameter and a margin). Bounded kinds show the
    /// whole world and refuse an area. Default value: `None`.
    pub area: Option<f32>,
}

impl PreviewOptions {
    /// 256 pixels, the area picked from the generator.
    pub const DEFAULT: Self = PreviewOptions {
        pixels: 256,
        area: None,
    };

    /// Sets [`pixels`](Self::pixels).
    pub const fn with_pixels(mut self, pixels: u32) -> Self {
        self.pixels = pixels;
        self
    }

    /// Sets [`area`](Self::area).
    pub const fn with_area(mut self, area: Option<f32>) -> Self {
        self.area = area;
        self
    }
}

impl Default for PreviewOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A preview picture.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    /// The picture as an RGB PNG.
    pub png: Vec<u8>,
    /// Its width in pixels.
    pub width: u32,
    /// Its height in pixels.
    pub height: u32,
    /// World units across its width.
    pub area: f32,
}

/// Draws a preview of the world `new` would make (its recipe or preset,
/// seed and size).
///
/// # Errors
///
/// What [`NewWorld::params`] refuses (seed, size, preset, every recipe
/// field), [`KindError::Invalid`] for `pixels` outside
/// `16..=`[`MAX_PREVIEW_PIXELS`] or an `area` that is not finite in
/// `(0, 1e6]` or is given for a bounded kind; generator errors.
pub fn preview(new: &NewWorld, options: &PreviewOptions) -> Result<Preview, KindError> {
    let params = new.params()?;
    let n = options.pixels;
    if !(MIN_PREVIEW_PIXELS..=MAX_PREVIEW_PIXELS).contains(&n) {
        return Err(KindError::invalid(format!(
            "a preview is {MIN_PREVIEW_PIXELS}..={MAX_PREVIEW_PIXELS} pixels on its longest side, got {n}"
        )));
    }
    if let Some(a) = options.area {
        if !(a.is_finite() && a > 0.0 && a <= MAX_AREA) {
            return Err(KindError::invalid(format!(
                "a preview's area must be a finite number of world units in (0, {MAX_AREA}], got {a}"
            )));
        }
        if params.kind().is_bounded() {
            return Err(KindError::invalid(format!(
                "a {} preview shows the whole world; an area does not apply",
                params.kind()
            )));
        }
    }
    new.kind.spec().preview(&params, n, options.area)
}

pub(crate) fn finish(
    rgb: Vec<u8>,
    width: u32,
    height: u32,
    area: f32,
) -> Result<Preview, KindError> {
    let png = encode_rgb_png(width, height, &rgb)?;
    Ok(Preview {
        png,
        width,
        height,
        area,
    })
}

pub(crate) fn put(rgb: &mut [u8], pixel: usize, c: [u8; 3]) {
    rgb[pixel * 3..pixel * 3 + 3].copy_from_slice(&c);
}

pub(crate) fn linear_to_srgb(c: [f32; 3]) -> [u8; 3] {
    let [r, g, b, _] = linear_to_srgb8(c, 1.0);
    [r, g, b]
}

/// Mixes `a` towards `b` by `t`.
pub(crate) fn mix(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    [0, 1, 2].map(|k| a[k] + (b[k] - a[k]) * t)
}
