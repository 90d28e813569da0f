//! PNG pictures of side-view fields, and grayscale field images.

use isoterra_field::{Field2, MaterialGrid, MaterialTable, Noise2, Perlin};
use isoterra_mesh::Polyline;

use crate::ExportError;

/// Largest image side in pixels.
pub const MAX_IMAGE_SIDE: u32 = 16384;
/// Largest image size in pixels (64 Mpx).
pub const MAX_IMAGE_PIXELS: u64 = 64 * 1024 * 1024;

/// Options of [`export_side2d_png`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct PngOptions {
    /// Pixels per cell, finite and `>= 0`; `0` picks a scale that makes the
    /// image about 1024 pixels wide (and at most 4096 pixels tall).
    /// Default value: `0.0` (automatic).
    pub pixels_per_cell: f32,
    /// Iso level: a point is solid when its bilinear density is `>= iso`.
    /// Default value: `0.0`.
    pub iso: f32,
    /// Draw the given contours as dark anti-aliased lines. Default value: `true`.
    pub draw_contours: bool,
    /// Draw a grass rim, [`GRASS_RIM_CELLS`] wide, just inside ground that
    /// faces up and is open to the sky (crater floors too, not cave floors),
    /// solid for its outer half and fading out towards its inner edge,
    /// in the colour of the table's material named `grass` (a default green
    /// when there is none). Default value: `true`.
    pub grass_rim: bool,
}

/// Width of the grass rim of side2d pictures, in cells (the world's, as
/// the editor and the glb export draw it).
pub const GRASS_RIM_CELLS: f32 = isoterra_world::GRASS_RIM_CELLS;
/// Ground carries grass when its outward normal points up at least this
/// much (slopes up to about 70 degrees).
const GRASS_MIN_UP: f32 = 0.35;
const GRASS_DEFAULT: [u8; 4] = [86, 150, 62, 255];

impl PngOptions {
    /// The defaults: automatic scale, iso 0, contours and grass rim drawn.
    pub const DEFAULT: Self = PngOptions {
        pixels_per_cell: 0.0,
        iso: 0.0,
        draw_contours: true,
        grass_rim: true,
    };

    /// Sets [`grass_rim`](Self::grass_rim).
    pub const fn with_grass_rim(mut self, grass_rim: bool) -> Self {
        self.grass_rim = grass_rim;
        self
    }

    /// Sets [`pixels_per_cell`](Self::pixels_per_cell).
    pub const fn with_pixels_per_cell(mut self, pixels_per_cell: f32) -> Self {
        self.pixels_per_cell = pixels_per_cell;
        self
    }

    /// Sets [`iso`](Self::iso).
    pub const fn with_iso(mut self, iso: f32) -> Self {
        self.iso = iso;
        self
    }

    /// Sets [`draw_contours`](Self::draw_contours).
    pub const fn with_draw_contours(mut self, draw_contours: bool) -> Self {
        self.draw_contours = draw_contours;
        self
    }

    /// The scale and image size used for a field of `cells_w x cells_h` cells.
    pub fn image_size(&self, cells_w: u32, cells_h: u32) -> Result<(f32, u32, u32), ExportError> {
        let ppc = self.pixels_per_cell;
        if !(ppc.is_finite() && ppc >= 0.0) {
            return Err(ExportError::param(
                "pixels_per_cell",
                ppc,
                "must be finite and >= 0 (0 picks a scale automatically)",
            ));
        }
        let ppc = if ppc == 0.0 {
            (1024.0 / cells_w.max(1) as f32).min(4096.0 / cells_h.max(1) as f32)
        } else {
            ppc
        };
        let w = (cells_w as f64 * ppc as f64).round().max(1.0);
        let h = (cells_h as f64 * ppc as f64).round().max(1.0);
        check_image(w, h)?;
        Ok((ppc, w as u32, h as u32))
    }
}

impl Default for PngOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

fn check_image(w: f64, h: f64) -> Result<(), ExportError> {
    if w > MAX_IMAGE_SIDE as f64 || h > MAX_IMAGE_SIDE as f64 || w * h > MAX_IMAGE_PIXELS as f64 {
        return Err(ExportError::ImageTooLarge {
            width: w as u64,
            height: h as u64,
            max_side: MAX_IMAGE_SIDE as u64,
            max_pixels: MAX_IMAGE_PIXELS,
        });
    }
    Ok(())
}

fn encode(
    width: u32,
    height: u32,
    color: png::ColorType,
    depth: png::BitDepth,
    data: &[u8],
) -> Result<Vec<u8>, ExportError> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(color);
        enc.set_depth(depth);
        enc.set_compression(png::Compression::Fast);
        let mut writer = enc
            .write_header()
            .map_err(|e| ExportError::Png(e.to_string()))?;
        writer
            .write_image_data(data)
            .map_err(|e| ExportError::Png(e.to_string()))?;
        writer
            .finish()
            .map_err(|e| ExportError::Png(e.to_string()))?;
    }
    Ok(out)
}

/// A linear colour (components clamped to `[0, 1]`) as 8-bit sRGB, with an
/// alpha `a` in `[0, 1]` (clamped) stored as it is.
pub fn linear_to_srgb8(c: [f32; 3], a: f32) -> [u8; 4] {
    let g = |v: f32| {
        let v = v.clamp(0.0, 1.0);
        let s = if v <= 0.003_130_8 {
            12.92 * v
        } else {
            1.055 * v.powf(1.0 / 2.4) - 0.055
        };
        (s * 255.0).round() as u8
    };
    [
        g(c[0]),
        g(c[1]),
        g(c[2]),
        (a.clamp(0.0, 1.0) * 255.0).round() as u8,
    ]
}

/// Encodes 8-bit RGB pixels (row-major, 3 bytes a pixel, row 0 on top) as
/// a PNG.
///
/// Errors: a zero size, `rgb` of another length than `width * height * 3`,
/// or an image above the size limits.
pub fn encode_rgb_png(width: u32, height: u32, rgb: &[u8]) -> Result<Vec<u8>, ExportError> {
    if width == 0 || height == 0 {
        return Err(ExportError::param(
            "size",
            format!("{width}x{height}"),
            "an image has at least one pixel",
        ));
    }
    check_image(f64::from(width), f64::from(height))?;
    let want = width as u64 * height as u64 * 3;
    if rgb.len() as u64 != want {
        return Err(ExportError::param(
            "rgb",
            format!("{} bytes for {width}x{height} pixels", rgb.len()),
            "RGB pixels take 3 bytes each",
        ));
    }
    encode(
        width,
        height,
        png::ColorType::Rgb,
        png::BitDepth::Eight,
        rgb,
    )
}

/// A grayscale image of a field, one pixel per node: values are mapped
/// linearly from `range = [lo, hi]` to black..white (clamped), as 8-bit or
/// 16-bit samples. Image row 0 is the field's top row (largest y), so +y
/// points up in the picture.
///
/// Errors: `bits` other than 8 or 16, a range that is not finite with
/// `lo < hi`, or an image above the size limits.
pub fn export_field_png_gray(
    field: &Field2,
    range: [f32; 2],
    bits: u8,
) -> Result<Vec<u8>, ExportError> {
    let [lo, hi] = range;
    if !(lo.is_finite() && hi.is_finite() && lo < hi && (hi - lo).is_finite()) {
        return Err(ExportError::param(
            "range",
            format!("{range:?}"),
            "needs finite bounds with lo < hi",
        ));
    }
    let depth = match bits {
        8 => png::BitDepth::Eight,
        16 => png::BitDepth::Sixteen,
        _ => return Err(ExportError::param("bits", bits, "must be 8 or 16")),
    };
    let (w, h) = (field.width() as usize, field.height() as usize);
    check_image(w as f64, h as f64)?;
    let scale = 1.0 / (hi - lo);
    let mut data = Vec::with_capacity(w * h * bits as usize / 8);
    for row in field.values().chunks_exact(w).rev() {
        for &v in row {
            let t = ((v - lo) * scale).clamp(0.0, 1.0);
            if bits == 8 {
                data.push((t * 255.0).round() as u8);
            } else {
                data.extend_from_slice(&((t * 65535.0).round() as u16).to_be_bytes());
            }
        }
    }
    encode(w as u32, h as u32, png::ColorType::Grayscale, depth, &data)
}

#[inline]
fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

#[inline]
fn mix(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    [
        a[0] + (b[0] - a[0]) * t,
        a[1] + (b[1] - a[1]) * t,
        a[2] + (b[2] - a[2]) * t,
    ]
}

#[inline]
fn grain(x: u32, y: u32) -> f32 {
    let mut h = (x as u64) << 32 | y as u64;
    h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^= h >> 31;
    (h >> 40) as f32 / (1u64 << 24) as f32 - 0.5
}

const SKY_TOP: [f32; 3] = [78.0, 136.0, 206.0];
const SKY_HORIZON: [f32; 3] = [184.0, 214.0, 240.0];
const CAVE_AIR: [f32; 3] = [34.0, 40.0, 56.0];
const CAVE_AIR_DEEP: [f32; 3] = [20.0, 22.0, 34.0];
const OUTLINE: [f32; 3] = [26.0, 20.0, 18.0];
const UNKNOWN_MATERIAL: [u8; 4] = [255, 0, 255, 255];

/// Density, gradient and material colour at a point given in fractional
/// node coordinates.
struct Sampler<'a> {
    /// The grass rim's colour, when it is drawn.
    grass: Option<[f32; 3]>,
    values: &'a [f32],
    ids: Option<&'a [u8]>,
    colors: &'a [[f32; 3]],
    w: usize,
    h: usize,
    iso: f32,
}

impl Sampler<'_> {
    /// Cell index and fractions of a point, clamped into the field.
    #[inline]
    fn locate(&self, gx: f32, gy: f32) -> (usize, f32, f32) {
        let gx = gx.clamp(0.0, (self.w - 1) as f32);
        let gy = gy.clamp(0.0, (self.h - 1) as f32);
        let x0 = (gx as usize).min(self.w - 2);
        let y0 = (gy as usize).min(self.h - 2);
        (y0 * self.w + x0, gx - x0 as f32, gy - y0 as f32)
    }

    /// Bilinear density and the length of its gradient (per cell).
    #[inline]
    fn density(&self, gx: f32, gy: f32) -> (f32, f32) {
        let (i, tx, ty) = self.locate(gx, gy);
        let (v00, v10) = (self.values[i], self.values[i + 1]);
        let (v01, v11) = (self.values[i + self.w], self.values[i + self.w + 1]);
        let a = v00 + (v10 - v00) * tx;
        let b = v01 + (v11 - v01) * tx;
        let d = a + (b - a) * ty;
        let dx = (v10 - v00) * (1.0 - ty) + (v11 - v01) * ty;
        let dy = (v01 - v00) * (1.0 - tx) + (v11 - v10) * tx;
        (d, (dx * dx + dy * dy).sqrt())
    }

    /// The bilinear density's gradient (per cell; +y is up).
    #[inline]
    fn gradient(&self, gx: f32, gy: f32) -> (f32, f32) {
        let (i, tx, ty) = self.locate(gx, gy);
        let (v00, v10) = (self.values[i], self.values[i + 1]);
        let (v01, v11) = (self.values[i + self.w], self.values[i + self.w + 1]);
        let dx = (v10 - v00) * (1.0 - ty) + (v11 - v01) * ty;
        let dy = (v01 - v00) * (1.0 - tx) + (v11 - v10) * tx;
        (dx, dy)
    }

    /// Material colour: the bilinear blend of the colours of the cell's solid
    /// corners (all corners when none is solid), so material borders are soft.
    #[inline]
    fn color(&self, gx: f32, gy: f32) -> [f32; 3] {
        let Some(ids) = self.ids else {
            return self.colors[0];
        };
        let (i, tx, ty) = self.locate(gx, gy);
        let corners = [
            (i, (1.0 - tx) * (1.0 - ty)),
            (i + 1, tx * (1.0 - ty)),
            (i + self.w, (1.0 - tx) * ty),
            (i + self.w + 1, tx * ty),
        ];
        let mut sum = [0.0f32; 3];
        let mut total = 0.0f32;
        for solid_only in [true, false] {
            for &(j, wt) in &corners {
                if solid_only && self.values[j] < self.iso {
                    continue;
                }
                // A small floor keeps a corner that sits exactly on the pixel counted.
                let wt = wt + 1e-4;
                let c = self.colors[ids[j] as usize];
                for k in 0..3 {
                    sum[k] += c[k] * wt;
                }
                total += wt;
            }
            if total > 0.0 {
                break;
            }
        }
        [sum[0] / total, sum[1] / total, sum[2] / total]
    }
}

/// Renders a side view of `field` as an RGB PNG.
///
/// The picture shows a sky gradient behind the terrain, a darker cave
/// background below the ground line of each column, and the solid area
/// (bilinear density `>= iso`) coloured by material: each pixel takes the
/// colour of the nearest solid node's material (material 0 when `materials`
/// is `None`; ids missing from `table` show magenta), with a little texture,
/// darker shading with depth below the ground line and a darker rim along
/// the surface. Terrain edges are anti-aliased from a distance estimate, and
/// with [`PngOptions::draw_contours`] the `contours` (world units) are drawn
/// as dark 1.5 px anti-aliased lines. Up is up: image row 0 is the top of
/// the field.
///
/// Errors: a bad option, a material grid of another size than the field,
/// or an image above [`MAX_IMAGE_SIDE`] / [`MAX_IMAGE_PIXELS`].
pub fn export_side2d_png(
    field: &Field2,
    materials: Option<&MaterialGrid>,
    table: &MaterialTable,
    contours: &[Polyline],
    options: &PngOptions,
) -> Result<Vec<u8>, ExportError> {
    let (w, h) = (field.width() as usize, field.height() as usize);
    if let Some(m) = materials
        && (m.width() as usize != w || m.height() as usize != h)
    {
        return Err(ExportError::param(
            "materials",
            format!("{}x{}", m.width(), m.height()),
            "the material grid must have the same size as the field",
        ));
    }
    if !options.iso.is_finite() {
        return Err(ExportError::param("iso", options.iso, "must be finite"));
    }
    let (ppc, iw, ih) = options.image_size((w - 1) as u32, (h - 1) as u32)?;
    let (iw, ih) = (iw as usize, ih as usize);
    let colors: Vec<[f32; 3]> = (0..=255u8)
        .map(|id| {
            let c = table.get(id).map_or(UNKNOWN_MATERIAL, |m| m.color);
            [c[0] as f32, c[1] as f32, c[2] as f32]
        })
        .collect();
    let grass = options.grass_rim.then(|| {
        let c = table
            .iter()
            .find(|m| m.name == "grass")
            .map_or(GRASS_DEFAULT, |m| m.color);
        [c[0] as f32, c[1] as f32, c[2] as f32]
    });
    let sampler = Sampler {
        grass,
        values: field.values(),
        ids: materials.map(|m| m.ids()),
        colors: &colors,
        w,
        h,
        iso: options.iso,
    };
    // Below one pixel per cell, paint at a finer scale and average, so
    // small features blend instead of aliasing.
    let mut ss = if ppc < 1.0 {
        (1.0 / ppc).ceil().min(4.0) as usize
    } else {
        1
    };
    while ss > 1 && (iw * ss) as u64 * (ih * ss) as u64 > MAX_IMAGE_PIXELS {
        ss -= 1;
    }
    let rgb = paint(
        &sampler,
        field,
        contours,
        options,
        ppc * ss as f32,
        iw * ss,
        ih * ss,
        1.5 * ss as f32,
    );
    let rgb = if ss > 1 {
        downsample(&rgb, iw * ss, ih * ss, ss)
    } else {
        rgb
    };
    encode(
        iw as u32,
        ih as u32,
        png::ColorType::Rgb,
        png::BitDepth::Eight,
        &rgb,
    )
}

/// Paints the picture at `ppc` pixels per cell into an `iw x ih` RGB buffer.
#[allow(clippy::too_many_arguments)]
fn paint(
    sampler: &Sampler<'_>,
    field: &Field2,
    contours: &[Polyline],
    options: &PngOptions,
    ppc: f32,
    iw: usize,
    ih: usize,
    line_px: f32,
) -> Vec<u8> {
    let h = sampler.h;
    let inv = 1.0 / ppc;
    let cells_h = (h - 1) as f32;
    // Edge softness and rim width in pixels.
    let rim_px = (0.7 * ppc).clamp(2.0, 6.0);
    let texture = Perlin::new(0x1507_354A);

    // Pass 1: coverage of the solid per pixel (anti-aliased).
    let mut cover = vec![0u8; iw * ih];
    for (py, row) in cover.chunks_exact_mut(iw).enumerate() {
        let gy = (ih as f32 - py as f32 - 0.5) * inv;
        for (px, c) in row.iter_mut().enumerate() {
            let gx = (px as f32 + 0.5) * inv;
            let (d, g) = sampler.density(gx, gy);
            let dist_px = signed_px(d - options.iso, g, ppc);
            *c = ((0.5 + dist_px).clamp(0.0, 1.0) * 255.0).round() as u8;
        }
    }
    // Pass 2: the ground line: per column the first mostly-solid pixel from
    // the top, then a running median over nearby columns. Empty pixels below
    // the line are cave background, above it sky. The median ignores thin
    // spikes, small floating islands and narrow shafts, so none of them
    // casts a streak of the wrong background. Where the raw line dips below
    // the median over a stretch wider than a shaft (a crater dug from the
    // surface), the dip is open to the sky and the line follows it down.
    let mut raw_ground = vec![ih as u32; iw];
    for (py, row) in cover.chunks_exact(iw).enumerate() {
        for (px, &c) in row.iter().enumerate() {
            if c >= 128 && raw_ground[px] == ih as u32 {
                raw_ground[px] = py as u32;
            }
        }
    }
    let reach = (ppc * 8.0).clamp(8.0, 96.0) as usize;
    let mut window = Vec::with_capacity(2 * reach + 1);
    let ground: Vec<f32> = (0..iw)
        .map(|px| {
            window.clear();
            window
                .extend_from_slice(&raw_ground[px.saturating_sub(reach)..(px + reach + 1).min(iw)]);
            let mid = window.len() / 2;
            *window.select_nth_unstable(mid).1 as f32
        })
        .collect();
    let ground = open_to_sky(&raw_ground, ground, (ppc * 2.5).clamp(3.0, 24.0) as usize);
    // Depth shading follows a smoothed copy of the line, so it never steps.
    let shade_line: Vec<f32> = (0..iw)
        .map(|px| {
            let part = &ground[px.saturating_sub(reach)..(px + reach + 1).min(iw)];
            part.iter().sum::<f32>() / part.len() as f32
        })
        .collect();
    // Pass 3: colour.
    let mut rgb = vec![0u8; iw * ih * 3];
    for py in 0..ih {
        let gy = (ih as f32 - py as f32 - 0.5) * inv;
        let sky = mix(SKY_TOP, SKY_HORIZON, py as f32 / ih as f32);
        for px in 0..iw {
            let gx = (px as f32 + 0.5) * inv;
            let c = cover[py * iw + px] as f32 / 255.0;
            let below_ground = py as f32 > ground[px];
            let depth_cells = (py as f32 - shade_line[px]).max(0.0) * inv;
            let depth_t = smoothstep(0.0, cells_h * 0.6, depth_cells);
            let back = if below_ground {
                let n = texture.sample2(gx * 0.15, gy * 0.15) * 0.12;
                let air = mix(CAVE_AIR, CAVE_AIR_DEEP, depth_t);
                [air[0] * (1.0 + n), air[1] * (1.0 + n), air[2] * (1.0 + n)]
            } else {
                sky
            };
            let out = if c > 0.0 {
                let (d, g) = sampler.density(gx, gy);
                let base = sampler.color(gx, gy);
                let dist_px = signed_px(d - options.iso, g, ppc);
                let tex = texture.sample2(gx * 0.45, gy * 0.45) * 0.09
                    + texture.sample2(gx * 1.7 + 31.0, gy * 1.7) * 0.05
                    + grain(px as u32, py as u32) * 0.05;
                let shade = (1.0 + tex)
                    * (1.0 - 0.38 * depth_t)
                    * (0.62 + 0.38 * smoothstep(0.0, rim_px, dist_px));
                let mut solid = [base[0] * shade, base[1] * shade, base[2] * shade];
                // The grass rim: just inside ground that faces up, near the
                // ground line (open to the sky), fading towards its inner edge.
                let grass_px = (GRASS_RIM_CELLS * ppc).max(1.5);
                if let Some(grass) = sampler.grass
                    && dist_px < grass_px
                    && (py as f32) <= ground[px] + grass_px + 1.0
                {
                    let (dx, dy) = sampler.gradient(gx, gy);
                    let len = (dx * dx + dy * dy).sqrt();
                    // Density grows into the solid: ground facing up has
                    // its solid below, so the gradient points down.
                    if len > 0.0 && -dy >= GRASS_MIN_UP * len {
                        // solid for the outer half, then fading out
                        let t = 1.0 - smoothstep(0.55 * grass_px, grass_px, dist_px);
                        let g = [grass[0] * shade, grass[1] * shade, grass[2] * shade];
                        solid = mix(solid, g, 0.92 * t);
                    }
                }
                mix(back, solid, c)
            } else {
                back
            };
            let o = (py * iw + px) * 3;
            rgb[o] = out[0].clamp(0.0, 255.0) as u8;
            rgb[o + 1] = out[1].clamp(0.0, 255.0) as u8;
            rgb[o + 2] = out[2].clamp(0.0, 255.0) as u8;
        }
    }
    if options.draw_contours && !contours.is_empty() {
        let mut ink = vec![0u8; iw * ih];
        let origin = field.origin();
        let cs = field.cell_size();
        let to_px = |p: [f32; 2]| {
            [
                (p[0] - origin[0]) / cs * ppc,
                ih as f32 - (p[1] - origin[1]) / cs * ppc,
            ]
        };
        for line in contours {
            let n = line.points.len();
            let segs = if line.closed { n } else { n.saturating_sub(1) };
            for i in 0..segs {
                let a = to_px(line.points[i]);
                let b = to_px(line.points[(i + 1) % n]);
                stroke_segment(&mut ink, iw, ih, a, b, line_px);
            }
        }
        for (i, &k) in ink.iter().enumerate() {
            if k > 0 {
                let t = k as f32 / 255.0 * 0.92;
                for ch in 0..3 {
                    let v = rgb[i * 3 + ch] as f32;
                    rgb[i * 3 + ch] = (v + (OUTLINE[ch] - v) * t).round() as u8;
                }
            }
        }
    }
    rgb
}

/// Averages `ss x ss` blocks of an RGB image.
/// The ground line lowered into dips of the raw line that are at least
/// `2 * half + 1` columns wide: a morphological opening of the raw depths
/// (the shallowest within `half` columns, then the deepest of those within
/// `half`), which keeps craters and drops shafts narrower than the window.
fn open_to_sky(raw: &[u32], median: Vec<f32>, half: usize) -> Vec<f32> {
    let n = raw.len();
    let window = |i: usize| i.saturating_sub(half)..(i + half + 1).min(n);
    let eroded: Vec<u32> = (0..n)
        .map(|i| raw[window(i)].iter().copied().min().unwrap_or(0))
        .collect();
    median
        .into_iter()
        .enumerate()
        .map(|(i, m)| {
            let opened = eroded[window(i)].iter().copied().max().unwrap_or(0) as f32;
            m.max(opened)
        })
        .collect()
}

fn downsample(src: &[u8], iw: usize, ih: usize, ss: usize) -> Vec<u8> {
    let (ow, oh) = (iw / ss, ih / ss);
    let mut out = vec![0u8; ow * oh * 3];
    let area = (ss * ss) as u32;
    for oy in 0..oh {
        for ox in 0..ow {
            let mut acc = [0u32; 3];
            for sy in 0..ss {
                let row = (oy * ss + sy) * iw;
                for sx in 0..ss {
                    let i = (row + ox * ss + sx) * 3;
                    for c in 0..3 {
                        acc[c] += src[i + c] as u32;
                    }
                }
            }
            let o = (oy * ow + ox) * 3;
            for c in 0..3 {
                out[o + c] = ((acc[c] + area / 2) / area) as u8;
            }
        }
    }
    out
}

/// Signed distance to the iso line in pixels, estimated from the density
/// offset and the gradient (per cell). Flat regions count as far away.
#[inline]
fn signed_px(offset: f32, grad: f32, ppc: f32) -> f32 {
    if grad > 1e-6 {
        offset / grad * ppc
    } else if offset >= 0.0 {
        1e6
    } else {
        -1e6
    }
}

/// Adds an anti-aliased line of `width` pixels from `a` to `b` (pixel
/// coordinates, y down) into `ink`, keeping the larger coverage per pixel.
fn stroke_segment(ink: &mut [u8], iw: usize, ih: usize, a: [f32; 2], b: [f32; 2], width: f32) {
    if !(a.iter().chain(&b).all(|v| v.is_finite())) {
        return;
    }
    let r = width * 0.5 + 1.0;
    let x0 = (a[0].min(b[0]) - r).floor().max(0.0);
    let x1 = (a[0].max(b[0]) + r).ceil().min(iw as f32);
    let y0 = (a[1].min(b[1]) - r).floor().max(0.0);
    let y1 = (a[1].max(b[1]) + r).ceil().min(ih as f32);
    if x0 >= x1 || y0 >= y1 {
        return;
    }
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let len2 = dx * dx + dy * dy;
    for y in y0 as usize..y1 as usize {
        for x in x0 as usize..x1 as usize {
            let (cx, cy) = (x as f32 + 0.5, y as f32 + 0.5);
            let t = if len2 > 0.0 {
                (((cx - a[0]) * dx + (cy - a[1]) * dy) / len2).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let (qx, qy) = (a[0] + dx * t - cx, a[1] + dy * t - cy);
            let dist = (qx * qx + qy * qy).sqrt();
            let cov = (width * 0.5 + 0.5 - dist).clamp(0.0, 1.0);
            let k = (cov * 255.0).round() as u8;
            let p = &mut ink[y * iw + x];
            *p = (*p).max(k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn downsample_averages_blocks() {
        // 2 x 2 pixels of (0, 10, 20, 30) in every channel -> one pixel of 15.
        let src: Vec<u8> = [0u8, 10, 20, 30].iter().flat_map(|&v| [v, v, v]).collect();
        assert_eq!(downsample(&src, 2, 2, 2), vec![15, 15, 15]);
    }

    #[test]
    fn strokes_cover_their_pixels_and_stay_inside() {
        let (iw, ih) = (20, 10);
        let mut ink = vec![0u8; iw * ih];
        stroke_segment(&mut ink, iw, ih, [2.0, 5.0], [18.0, 5.0], 1.5);
        assert_eq!(ink[4 * iw + 10], ink[5 * iw + 10]);
        assert!(ink[5 * iw + 10] > 150);
        assert_eq!(ink[iw + 10], 0);
        assert_eq!(ink[5 * iw], 0);
        // Far outside, degenerate or non-finite segments change nothing and do not panic.
        let before = ink.clone();
        stroke_segment(&mut ink, iw, ih, [-1e9, -1e9], [-1e9 + 1.0, -1e9], 1.5);
        stroke_segment(&mut ink, iw, ih, [f32::NAN, 0.0], [1.0, 1.0], 1.5);
        assert_eq!(ink, before);
        stroke_segment(&mut ink, iw, ih, [7.5, 2.5], [7.5, 2.5], 1.5);
        assert!(ink[2 * iw + 7] > 0);
    }

    #[test]
    fn distance_estimate_is_signed() {
        assert_eq!(signed_px(0.5, 0.5, 4.0), 4.0);
        assert_eq!(signed_px(-0.5, 0.25, 2.0), -4.0);
        assert!(signed_px(0.1, 0.0, 1.0) > 1e5);
        assert!(signed_px(-0.1, 0.0, 1.0) < -1e5);
    }

    #[test]
    fn automatic_scale_targets_1024_pixels() {
        let o = PngOptions::DEFAULT;
        assert_eq!(o.image_size(256, 128).unwrap(), (4.0, 1024, 512));
        assert_eq!(o.image_size(4096, 1024).unwrap(), (0.25, 1024, 256));
        // Very tall fields are capped at 4096 pixels high.
        let (_, w, h) = o.image_size(16, 8192).unwrap();
        assert_eq!((w, h), (8, 4096));
    }
}
