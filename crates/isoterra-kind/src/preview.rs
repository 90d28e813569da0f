//! Previews: a small picture of what a new world's generator makes,
//! quick enough to redraw while a user drags a recipe's sliders.
//!
//! Each kind is drawn the way its ground reads best:
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

use isoterra_export::{
    PngOptions, encode_rgb_png, export_side2d_png, linear_to_srgb8, splat_color,
};
use isoterra_field::erosion::{hydraulic_erosion, thermal_erosion};
use isoterra_field::map::node_surface;
use isoterra_field::{
    BlurKind, Field2, HeightGen, MaterialTable, VoxelPreset, blur, generate_side2d,
};
use isoterra_world::{HeightErosion, MapWorld};

use crate::WorldParams;
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
        if matches!(params, WorldParams::Side2d(_) | WorldParams::Map(_)) {
            return Err(KindError::invalid(format!(
                "a {} preview shows the whole world; an area does not apply",
                params.kind()
            )));
        }
    }
    match &params {
        WorldParams::Side2d(p) => {
            let g = &p.generator;
            let (field, materials) = generate_side2d(g)?;
            let cells = g.width_cells.max(g.height_cells) as f32;
            let options = PngOptions::DEFAULT
                .with_iso(p.iso)
                .with_draw_contours(false)
                .with_pixels_per_cell(n as f32 / cells);
            let png = export_side2d_png(
                &field,
                Some(&materials),
                &MaterialTable::side2d_default(),
                &[],
                &options,
            )?;
            let (_, width, height) = options.image_size(g.width_cells, g.height_cells)?;
            Ok(Preview {
                png,
                width,
                height,
                area: g.width_cells as f32 * g.cell_size,
            })
        }
        WorldParams::Heightmap(p) => {
            let area = options.area.unwrap_or(1024.0);
            let heights = HeightGen::new(&p.generator, p.seed)?;
            let sketch = p.erosion.as_ref().map(|e| (e, p.cell_size));
            let rgb = relief(&heights, area, n, sketch, p.seed)?;
            finish(rgb, n, n, area)
        }
        WorldParams::Voxel(p) => {
            let g = &p.generator;
            let sampler = g.sampler()?;
            let planet = g.preset == VoxelPreset::Planet;
            let area = options.area.unwrap_or(if planet {
                2.6 * (g.planet_radius + g.ground_amplitude)
            } else {
                256.0
            });
            let (w, h) = if planet { (n, n) } else { (n, (n / 2).max(1)) };
            let step = area / w as f32;
            // Ground: the slice's top is 45 % of its height above the
            // ground level. Planet: centred.
            let top = if planet {
                step * h as f32 / 2.0
            } else {
                g.ground_level + step * h as f32 * 0.45
            };
            // Mesas: through the middle of a row of rock cells (a boulder
            // never crosses its cell's faces, so z = 0 would miss them all).
            let z = if g.preset == VoxelPreset::Mesas {
                0.5 * g.rock_size
            } else {
                0.0
            };
            let rgb = slice(
                w,
                h,
                |i, j| {
                    let x = -area / 2.0 + (i as f32 + 0.5) * step;
                    let y = top - (j as f32 + 0.5) * step;
                    sampler.density([x, y, z]) >= p.iso
                },
                step,
            );
            finish(rgb, w, h, area)
        }
        WorldParams::Map(p) => {
            let layers = MapWorld::generate(p)?;
            let [cw, cd] = [p.width_cells, p.depth_cells];
            let scale = n as f32 / cw.max(cd) as f32;
            let w = ((cw as f32 * scale).round() as u32).max(1);
            let h = ((cd as f32 * scale).round() as u32).max(1);
            let stride = cw as usize + 1;
            let level_height = p.mesh.level_height;
            let mut rgb = vec![0u8; w as usize * h as usize * 3];
            for py in 0..h {
                for px in 0..w {
                    let x = (((px as f32 + 0.5) / scale) as u32).min(cw);
                    let z = (((py as f32 + 0.5) / scale) as u32).min(cd);
                    let i = z as usize * stride + x as usize;
                    let c = if layers.ground[i] < 0.0 {
                        [0.06, 0.05, 0.05]
                    } else {
                        let s = splat_color(layers.splat[i], 0.0);
                        let level = layers.level_of(i);
                        // Higher levels lighter; a cliff edge where a
                        // neighbour sits on another level.
                        let lift = 0.75 + 0.05 * f32::from(level);
                        let edge = [(1, 0), (0, 1)].iter().any(|&(dx, dz)| {
                            let (nx, nz) = ((x + dx).min(cw), (z + dz).min(cd));
                            layers.level_of(nz as usize * stride + nx as usize) != level
                        });
                        let mut c = [s[0] * lift, s[1] * lift, s[2] * lift];
                        if edge {
                            c = isoterra_export::CLIFF_COLOR.map(|v| v * 0.8);
                        }
                        let ground = node_surface(
                            layers.level[i],
                            layers.softness[i],
                            layers.height[i],
                            level_height,
                        );
                        if layers.water[i] > ground {
                            let wc = isoterra_export::WATER_COLOR;
                            let a = wc[3];
                            c = [0, 1, 2].map(|k| c[k] * (1.0 - a) + wc[k] * a);
                        }
                        c
                    };
                    put(&mut rgb, (py * w + px) as usize, linear_to_srgb(c));
                }
            }
            finish(rgb, w, h, cw as f32 * p.mesh.cell_size)
        }
    }
}

fn finish(rgb: Vec<u8>, width: u32, height: u32, area: f32) -> Result<Preview, KindError> {
    let png = encode_rgb_png(width, height, &rgb)?;
    Ok(Preview {
        png,
        width,
        height,
        area,
    })
}

fn put(rgb: &mut [u8], pixel: usize, c: [u8; 3]) {
    rgb[pixel * 3..pixel * 3 + 3].copy_from_slice(&c);
}

fn linear_to_srgb(c: [f32; 3]) -> [u8; 3] {
    let [r, g, b, _] = linear_to_srgb8(c, 1.0);
    [r, g, b]
}

/// Mixes `a` towards `b` by `t`.
fn mix(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    [0, 1, 2].map(|k| a[k] + (b[k] - a[k]) * t)
}

/// Shaded relief of an `n x n` square of `area` units centred on the
/// origin (sRGB colours), with a sketch of `erosion` (see
/// [`sketch_erosion`]).
fn relief(
    heights: &HeightGen,
    area: f32,
    n: u32,
    erosion: Option<(&HeightErosion, f32)>,
    seed: u64,
) -> Result<Vec<u8>, KindError> {
    let step = area / n as f32;
    // One sample more on each axis, for the slope of the last pixels.
    let m = n + 1;
    let mut h = vec![0f32; m as usize * m as usize];
    let origin = -area / 2.0;
    heights.fill_heights([origin, origin], [step, step], [m, m], &mut h)?;
    let [lo, hi] = heights.range();
    let span = (hi - lo).max(f32::MIN_POSITIVE);
    if let Some((e, cell)) = erosion {
        sketch_erosion(&mut h, m, [origin, step, span, cell], e, seed)?;
    }
    // Slopes are exaggerated so that a flat-looking world still shows its
    // relief at this scale; the light comes from the north-west.
    let exaggerate = 1.5;
    let light = {
        let l = [-1.0f32, 1.2, -1.0];
        let len = (l[0] * l[0] + l[1] * l[1] + l[2] * l[2]).sqrt();
        l.map(|v| v / len)
    };
    const RAMP: [(f32, [f32; 3]); 5] = [
        (0.0, [0.16, 0.28, 0.10]),
        (0.3, [0.30, 0.42, 0.16]),
        (0.55, [0.45, 0.40, 0.26]),
        (0.8, [0.45, 0.42, 0.40]),
        (1.0, [0.92, 0.93, 0.95]),
    ];
    let mut rgb = vec![0u8; n as usize * n as usize * 3];
    let at = |i: u32, j: u32| h[(j * m + i) as usize];
    for j in 0..n {
        for i in 0..n {
            let v = at(i, j);
            let dx = (at(i + 1, j) - v) / step * exaggerate;
            let dz = (at(i, j + 1) - v) / step * exaggerate;
            let len = (dx * dx + 1.0 + dz * dz).sqrt();
            let normal = [-dx / len, 1.0 / len, -dz / len];
            let lit = (normal[0] * light[0] + normal[1] * light[1] + normal[2] * light[2])
                .clamp(0.0, 1.0);
            let t = ((v - lo) / span).clamp(0.0, 1.0);
            let k = RAMP.iter().rposition(|(s, _)| *s <= t).unwrap_or(0);
            let c = if k + 1 < RAMP.len() {
                let (s0, c0) = RAMP[k];
                let (s1, c1) = RAMP[k + 1];
                mix(c0, c1, (t - s0) / (s1 - s0))
            } else {
                RAMP[k].1
            };
            let shade = 0.35 + 0.65 * lit;
            put(
                &mut rgb,
                (j * n + i) as usize,
                linear_to_srgb(c.map(|v| v * shade)),
            );
        }
    }
    Ok(rgb)
}

/// Erodes the samples of `h` (`m x m`, sample `(i, j)` at world
/// `origin + (i, j) * step`) that lie in `e`'s region, on the sample grid:
/// a sketch of the erosion a world runs at full resolution when it is
/// created, quick enough to redraw while a slider moves. Droplets and
/// thermal slumping work in samples instead of cells (so a coarse preview
/// carves wider channels than the world will); the blur's radius is scaled
/// to samples; the feather fades the change in from the region's edge as in
/// the world. `frame` is `[origin, step, span of the heights, cell size]`.
fn sketch_erosion(
    h: &mut [f32],
    m: u32,
    frame: [f32; 4],
    e: &HeightErosion,
    seed: u64,
) -> Result<(), KindError> {
    let [origin, step, span, cell] = frame;
    let r = e.region;
    let first = |v: f64| ((v - f64::from(origin)) / f64::from(step)).ceil().max(0.0);
    let last = |v: f64| {
        ((v - f64::from(origin)) / f64::from(step))
            .floor()
            .min(f64::from(m - 1))
    };
    let (i0, j0, i1, j1) = (first(r[0]), first(r[1]), last(r[2]), last(r[3]));
    if i1 < i0 + 1.0 || j1 < j0 + 1.0 {
        return Ok(());
    }
    let (i0, j0) = (i0 as u32, j0 as u32);
    let (w, d) = (i1 as u32 - i0 + 1, j1 as u32 - j0 + 1);
    let idx = |i: u32, j: u32| ((j0 + j) * m + i0 + i) as usize;
    let mut block = Field2::new(w, d, 0.0)?.with_cell_size(step)?;
    for j in 0..d {
        for i in 0..w {
            block.values_mut()[(j * w + i) as usize] = h[idx(i, j)] / span;
        }
    }
    if let Some(hydraulic) = e.hydraulic() {
        hydraulic_erosion(&mut block, [i64::from(i0), i64::from(j0)], &hydraulic, seed)?;
    }
    for v in block.values_mut() {
        *v *= span;
    }
    if let Some(thermal) = e.thermal() {
        thermal_erosion(&mut block, &thermal)?;
    }
    let radius = (e.blur as f32 * cell / step).round() as u32;
    blur(
        &mut block,
        BlurKind::Gaussian,
        radius.min(BlurKind::MAX_RADIUS),
    )?;
    let feather = (e.feather / f64::from(step)) as f32;
    for j in 0..d {
        for i in 0..w {
            let edge = i.min(j).min(w - 1 - i).min(d - 1 - j) as f32;
            let t = if feather > 0.0 {
                (edge / feather).min(1.0)
            } else {
                1.0
            };
            let old = h[idx(i, j)];
            h[idx(i, j)] = old + t * (block.values()[(j * w + i) as usize] - old);
        }
    }
    Ok(())
}

/// A side view of `w x h` pixels, each solid or not (sRGB colours). Air
/// that reaches the top of the picture is sky, other air is cave; ground
/// under sky shows a grass cap and dirt, deeper ground stone that darkens
/// with depth.
fn slice(w: u32, h: u32, solid: impl Fn(u32, u32) -> bool, step: f32) -> Vec<u8> {
    let (wu, hu) = (w as usize, h as usize);
    let solid: Vec<bool> = (0..hu)
        .flat_map(|j| (0..wu).map(move |i| (i, j)))
        .map(|(i, j)| solid(i as u32, j as u32))
        .collect();
    // Sky: air 4-connected to the top row.
    let mut sky = vec![false; wu * hu];
    let mut stack: Vec<usize> = (0..wu).filter(|&i| !solid[i]).collect();
    for &i in &stack {
        sky[i] = true;
    }
    while let Some(k) = stack.pop() {
        let (i, j) = (k % wu, k / wu);
        let mut visit = |n: usize| {
            if !solid[n] && !sky[n] {
                sky[n] = true;
                stack.push(n);
            }
        };
        if i > 0 {
            visit(k - 1);
        }
        if i + 1 < wu {
            visit(k + 1);
        }
        if j > 0 {
            visit(k - wu);
        }
        if j + 1 < hu {
            visit(k + wu);
        }
    }
    let mut rgb = vec![0u8; wu * hu * 3];
    for i in 0..wu {
        // The last sky pixel above (None: none yet).
        let mut under_sky: Option<usize> = None;
        for j in 0..hu {
            let k = j * wu + i;
            let c = if sky[k] {
                under_sky = Some(j);
                mix([0.45, 0.65, 0.90], [0.75, 0.85, 0.95], j as f32 / h as f32)
            } else if !solid[k] {
                [0.03, 0.03, 0.04]
            } else {
                let depth = under_sky.map_or(f32::INFINITY, |s| (j - s) as f32 * step);
                if depth < 1.5 {
                    [0.18, 0.38, 0.10]
                } else if depth < 6.0 {
                    [0.33, 0.22, 0.12]
                } else {
                    mix([0.36, 0.34, 0.33], [0.20, 0.19, 0.19], j as f32 / h as f32)
                }
            };
            put(&mut rgb, k, linear_to_srgb(c));
        }
    }
    rgb
}
