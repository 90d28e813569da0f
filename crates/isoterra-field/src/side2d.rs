//! Side-view (2D) terrain generators: caves, hills and cellular caves.
//!
//! The output follows the crate conventions: a corner-sampled field of
//! `(width_cells + 1) x (height_cells + 1)` nodes, x right and y up, values in
//! `[-1, 1]` with `iso = 0` (solid when `value >= 0`), plus a material id per
//! node from [`MaterialTable::side2d_default`](crate::MaterialTable::side2d_default).
//!
//! Densities are smooth signed values, roughly the signed distance to the
//! terrain surface divided by two cells and clamped to `[-1, 1]`, so marching
//! squares interpolates round walls and slopes rather than staircases, and
//! brushes blend in naturally. Border nodes are always `-1` (empty) so every
//! contour closes, and for every preset the rows just above the bottom border
//! are solid bedrock so the ground is anchored.

use std::fmt;
use std::str::FromStr;

use crate::automaton::{self, CaveAutomaton};
use crate::blur::{BlurKind, blur_values};
use crate::noise::hash::derive;
use crate::noise::{Fbm, FbmParams, Noise2};
use crate::par::{for_each_band, for_each_band_pair, thread_count};
use crate::{Field2, FieldError, MaterialGrid};

/// Material ids of [`MaterialTable::side2d_default`](crate::MaterialTable::side2d_default)
/// written by the side-view generators.
pub mod side2d_ids {
    /// Dirt.
    pub const DIRT: u8 = 0;
    /// Rock.
    pub const ROCK: u8 = 1;
    /// Sand.
    pub const SAND: u8 = 2;
    /// Bedrock (indestructible).
    pub const BEDROCK: u8 = 3;
    /// Grass.
    pub const GRASS: u8 = 4;
}

use side2d_ids::{BEDROCK, DIRT, GRASS, ROCK, SAND};

/// The kinds of side-view world [`generate_side2d`] can make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum Side2dPreset {
    /// Solid ground riddled with noise caves (Noita- or Worms-like).
    #[default]
    Caves,
    /// Rolling hills under an open sky, grass on top, caves and tunnels below
    /// (Terraria-like).
    Hills,
    /// Rounded cellular-automaton caves walled in on every side.
    Cellular,
}

impl Side2dPreset {
    /// Every preset, in declaration order.
    pub const ALL: [Side2dPreset; 3] = [
        Side2dPreset::Caves,
        Side2dPreset::Hills,
        Side2dPreset::Cellular,
    ];

    /// The lowercase name used by `Display`, `FromStr` and serde.
    pub const fn name(self) -> &'static str {
        match self {
            Side2dPreset::Caves => "caves",
            Side2dPreset::Hills => "hills",
            Side2dPreset::Cellular => "cellular",
        }
    }
}

impl fmt::Display for Side2dPreset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Side2dPreset {
    type Err = FieldError;

    /// Parses a preset name, ignoring ASCII case and surrounding spaces.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        Side2dPreset::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| {
                FieldError::param(
                    "preset",
                    format!("{s:?}"),
                    "expected one of: caves, hills, cellular",
                )
            })
    }
}

/// Parameters of a generated side-view world ([`generate_side2d`]).
///
/// ```
/// use isoterra_field::{Side2dGen, Side2dPreset, generate_side2d};
/// let spec = Side2dGen::DEFAULT
///     .with_preset(Side2dPreset::Hills)
///     .with_seed(7)
///     .with_size(128, 64);
/// let (field, materials) = generate_side2d(&spec)?;
/// assert_eq!((field.width(), field.height()), (129, 65));
/// assert_eq!(materials.width(), 129);
/// # Ok::<(), isoterra_field::FieldError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct Side2dGen {
    /// What kind of world. Default value: [`Side2dPreset::Caves`].
    pub preset: Side2dPreset,
    /// Seed of every random choice. Default value: `1`.
    pub seed: u64,
    /// World width in cells (the field has one more node). Default value: `256`.
    pub width_cells: u32,
    /// World height in cells (the field has one more node). Default value: `128`.
    pub height_cells: u32,
    /// Distance between nodes in world units, finite and `> 0`.
    /// Default value: `1.0`.
    pub cell_size: f32,
    /// Size of the main noise features in cells, finite, in `[2, 65536]`:
    /// roughly the diameter of a typical cave (caves, cellular) or the width
    /// of a hill (hills, where a hill spans about four features).
    /// Default value: `32.0`.
    pub feature_cells: f32,
    /// How much of the world is solid, in `[0, 1]`. Default value: `0.6`.
    ///
    /// * caves: the approximate fraction of the world that is solid.
    /// * hills: the mean height of the surface as a fraction of the world
    ///   height (caves are then carved below it).
    /// * cellular: the approximate fraction of the world that is solid
    ///   (it sets the automaton's starting fill; the result settles near it
    ///   between about 0.35 and 0.75).
    pub fill: f32,
}

impl Side2dGen {
    /// The defaults: caves, seed 1, 256 x 128 cells of size 1, features of
    /// 32 cells, fill 0.6.
    pub const DEFAULT: Self = Side2dGen {
        preset: Side2dPreset::Caves,
        seed: 1,
        width_cells: 256,
        height_cells: 128,
        cell_size: 1.0,
        feature_cells: 32.0,
        fill: 0.6,
    };

    /// Smallest accepted [`feature_cells`](Self::feature_cells).
    pub const MIN_FEATURE_CELLS: f32 = 2.0;
    /// Largest accepted [`feature_cells`](Self::feature_cells).
    pub const MAX_FEATURE_CELLS: f32 = 65536.0;

    /// Sets [`preset`](Self::preset).
    pub const fn with_preset(mut self, preset: Side2dPreset) -> Self {
        self.preset = preset;
        self
    }

    /// Sets [`seed`](Self::seed).
    pub const fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets [`width_cells`](Self::width_cells) and [`height_cells`](Self::height_cells).
    pub const fn with_size(mut self, width_cells: u32, height_cells: u32) -> Self {
        self.width_cells = width_cells;
        self.height_cells = height_cells;
        self
    }

    /// Sets [`width_cells`](Self::width_cells).
    pub const fn with_width_cells(mut self, width_cells: u32) -> Self {
        self.width_cells = width_cells;
        self
    }

    /// Sets [`height_cells`](Self::height_cells).
    pub const fn with_height_cells(mut self, height_cells: u32) -> Self {
        self.height_cells = height_cells;
        self
    }

    /// Sets [`cell_size`](Self::cell_size).
    pub const fn with_cell_size(mut self, cell_size: f32) -> Self {
        self.cell_size = cell_size;
        self
    }

    /// Sets [`feature_cells`](Self::feature_cells).
    pub const fn with_feature_cells(mut self, feature_cells: f32) -> Self {
        self.feature_cells = feature_cells;
        self
    }

    /// Sets [`fill`](Self::fill).
    pub const fn with_fill(mut self, fill: f32) -> Self {
        self.fill = fill;
        self
    }

    /// The field size in nodes, `(width_cells + 1, height_cells + 1)`, checked
    /// against [`Field2::check_size`].
    pub fn node_size(&self) -> Result<(u32, u32), FieldError> {
        let w = self.width_cells as u64 + 1;
        let h = self.height_cells as u64 + 1;
        if self.width_cells == 0 || self.height_cells == 0 {
            return Err(FieldError::InvalidSize {
                width: self.width_cells as u64,
                height: self.height_cells as u64,
                reason: "a world needs at least one cell along each axis",
            });
        }
        Field2::check_size(w, h)?;
        Ok((w as u32, h as u32))
    }

    /// Checks every parameter.
    pub fn validate(&self) -> Result<(), FieldError> {
        self.node_size()?;
        if !(self.cell_size.is_finite() && self.cell_size > 0.0) {
            return Err(FieldError::param(
                "cell_size",
                self.cell_size,
                "must be finite and greater than zero",
            ));
        }
        let extent = self.cell_size * self.width_cells.max(self.height_cells) as f32;
        if !extent.is_finite() {
            return Err(FieldError::param(
                "cell_size",
                self.cell_size,
                "the world extent overflows f32; use a smaller cell size",
            ));
        }
        if !(self.feature_cells.is_finite()
            && (Self::MIN_FEATURE_CELLS..=Self::MAX_FEATURE_CELLS).contains(&self.feature_cells))
        {
            return Err(FieldError::param(
                "feature_cells",
                self.feature_cells,
                "must be finite and between 2 and 65536 cells",
            ));
        }
        if !(self.fill.is_finite() && (0.0..=1.0).contains(&self.fill)) {
            return Err(FieldError::param(
                "fill",
                self.fill,
                "must be between 0 and 1",
            ));
        }
        Ok(())
    }
}

impl Default for Side2dGen {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Generates a side-view world: a field of `(width_cells + 1) x
/// (height_cells + 1)` nodes with the generator's cell size and origin
/// `[0, 0]`, and a material id per node.
///
/// Values lie in `[-1, 1]`, solid when `>= 0`; border nodes are `-1`; the
/// rows just above the bottom border are solid bedrock. The result is a pure
/// function of `spec` (byte-identical on every run and thread count); work is
/// spread over the machine's cores.
///
/// Errors: zero sizes, a node count above [`Field2::MAX_NODES`], a bad
/// cell size, feature size or fill (see [`Side2dGen::validate`]).
pub fn generate_side2d(spec: &Side2dGen) -> Result<(Field2, MaterialGrid), FieldError> {
    generate_side2d_with_threads(spec, 0)
}

/// [`generate_side2d`] on at most `threads` threads (`0` means one per core,
/// up to 8). The output does not depend on `threads`.
pub fn generate_side2d_with_threads(
    spec: &Side2dGen,
    threads: usize,
) -> Result<(Field2, MaterialGrid), FieldError> {
    spec.validate()?;
    let (w, h) = spec.node_size()?;
    let threads = thread_count(threads);
    let n = w as usize * h as usize;
    let mut values = vec![0.0f32; n];
    let mut ids = vec![0u8; n];
    let ctx = Ctx::new(spec, w, h)?;
    match spec.preset {
        Side2dPreset::Caves => ctx.caves(&mut values, &mut ids, threads),
        Side2dPreset::Hills => ctx.hills(&mut values, &mut ids, threads)?,
        Side2dPreset::Cellular => ctx.cellular(&mut values, &mut ids, threads)?,
    }
    ctx.finish(&mut values, &mut ids);
    let field = Field2::from_values(w, h, values)?.with_cell_size(spec.cell_size)?;
    let materials = MaterialGrid::from_ids(w, h, ids)?;
    Ok((field, materials))
}

/// The highest row bedrock can reach.
const BEDROCK_MAX_ROW: usize = 5;

/// The density ramp: values reach `±1` this many cells from the surface.
const RAMP_CELLS: f32 = 2.0;

/// Quantiles of the cave fBm (4 octaves, persistence 0.5, lacunarity 2):
/// entry `i` is the value below which a fraction `i / 20` of samples fall.
/// Measured once over 4 million samples; they depend only on the octave
/// settings, never on the data being generated.
const CAVE_QUANTILES: [f32; 21] = [
    -1.0, -0.308, -0.243, -0.198, -0.161, -0.130, -0.101, -0.075, -0.050, -0.025, 0.0, 0.025,
    0.050, 0.075, 0.101, 0.130, 0.161, 0.198, 0.243, 0.308, 1.0,
];

/// Starting fill of the 4-5 automaton (walled in) that settles at a solid
/// fraction of `i / 20`, measured once on large grids. The rule pulls
/// fractions toward full or empty, hence the flat middle.
const CELLULAR_FILL: [f32; 21] = [
    0.2, 0.343, 0.376, 0.403, 0.421, 0.437, 0.45, 0.463, 0.475, 0.486, 0.498, 0.509, 0.521, 0.533,
    0.546, 0.559, 0.574, 0.591, 0.613, 0.644, 0.8,
];

/// The cave fBm threshold above which a fraction `solid` of space is solid.
fn cave_threshold(solid: f32) -> f32 {
    quantile(&CAVE_QUANTILES, 1.0 - solid)
}

fn quantile(table: &[f32; 21], p: f32) -> f32 {
    let t = p.clamp(0.0, 1.0) * 20.0;
    let i = (t as usize).min(19);
    let f = t - i as f32;
    table[i] + (table[i + 1] - table[i]) * f
}

#[inline(always)]
#[allow(clippy::manual_clamp)] // `clamp` would keep NaN; this maps it into range.
fn clamp1(v: f32) -> f32 {
    v.max(-1.0).min(1.0)
}

#[inline(always)]
fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Closes a cave system in: the density leans toward solid within a margin
/// of the left, right and top edges (the bottom has bedrock). The bias is
/// added before scaling and reaches 2, more than the noise can cancel.
struct Walls {
    right: f32,
    top: f32,
    margin: f32,
}

impl Walls {
    fn new(w: usize, h: usize, feature: f32) -> Self {
        let right = (w - 1) as f32;
        let top = (h - 1) as f32;
        let margin = (feature * 0.3).min(top * 0.15).min(right * 0.15).max(1.0);
        Walls { right, top, margin }
    }

    #[inline]
    fn bias(&self, x: f32, y: f32) -> f32 {
        let edge = x.min(self.right - x).min(self.top - y);
        (1.0 - smoothstep(0.0, self.margin, edge)) * 2.0
    }
}

/// Everything derived from the generator before the per-node passes.
struct Ctx {
    spec: Side2dGen,
    w: usize,
    h: usize,
    /// Main shape noise (caves, cave blobs under hills).
    shape: Fbm,
    /// Low-frequency noise that moves material layer boundaries.
    layer: Fbm,
    /// Sand pockets.
    sand: Fbm,
    /// Bedrock top.
    bedrock: Fbm,
}

impl Ctx {
    fn new(spec: &Side2dGen, w: u32, h: u32) -> Result<Self, FieldError> {
        let f = spec.feature_cells;
        let s = spec.seed;
        Ok(Ctx {
            spec: *spec,
            w: w as usize,
            h: h as usize,
            shape: Fbm::new(
                &FbmParams::DEFAULT.with_octaves(4).with_frequency(1.0 / f),
                derive(s, 1),
            )?,
            layer: Fbm::new(
                &FbmParams::DEFAULT.with_octaves(2).with_frequency(1.0 / f),
                derive(s, 2),
            )?,
            sand: Fbm::new(
                &FbmParams::DEFAULT.with_octaves(2).with_frequency(1.5 / f),
                derive(s, 3),
            )?,
            bedrock: Fbm::new(
                &FbmParams::DEFAULT
                    .with_octaves(2)
                    .with_frequency(1.0 / 12.0),
                derive(s, 4),
            )?,
        })
    }

    /// Material of a node `depth` cells below the top of the ground.
    #[inline]
    fn layered_material(&self, x: f32, y: f32, depth: f32) -> u8 {
        let f = self.spec.feature_cells;
        let wobble = self.layer.sample2(x, y);
        // Dirt near the top, rock deeper; the boundary wanders with noise,
        // and the same noise leaves rock outcrops in the dirt and dirt
        // pockets in the rock.
        let dirt_depth = f * (0.7 + 1.2 * wobble);
        if self.sand.sample2(x, y) > 0.33 {
            return SAND;
        }
        let in_dirt = depth < dirt_depth;
        let pocket = self.layer.sample2(y * 1.7 + 97.0, x * 1.7);
        if in_dirt != (pocket > 0.3) {
            DIRT
        } else {
            ROCK
        }
    }

    /// Solid noise caves.
    fn caves(&self, values: &mut [f32], ids: &mut [u8], threads: usize) {
        let (w, h) = (self.w, self.h);
        let f = self.spec.feature_cells;
        let t = cave_threshold(self.spec.fill);
        let slope = f * 0.5;
        let top = (h - 1) as f32;
        let walls = Walls::new(w, h, f);
        for_each_band_pair(values, ids, w, threads, &|y0, vals, mats| {
            let rows = vals.chunks_exact_mut(w).zip(mats.chunks_exact_mut(w));
            for (dy, (vrow, mrow)) in rows.enumerate() {
                let y = (y0 + dy) as f32;
                for (xi, (v, m)) in vrow.iter_mut().zip(mrow.iter_mut()).enumerate() {
                    let x = xi as f32;
                    // Caves are stretched sideways a little, like strata.
                    let n = self.shape.sample2(x * 0.7, y);
                    *v = clamp1((n - t + walls.bias(x, y)) * slope);
                    *m = self.layered_material(x, y, top - y);
                }
            }
        });
    }

    /// Hills with grass, caves and tunnels.
    fn hills(&self, values: &mut [f32], ids: &mut [u8], threads: usize) -> Result<(), FieldError> {
        let (w, h) = (self.w, self.h);
        let f = self.spec.feature_cells;
        let top = (h - 1) as f32;
        let s = self.spec.seed;
        // Surface line: a base level plus hills plus a slower mountain swell.
        let hills = Fbm::new(
            &FbmParams::DEFAULT
                .with_octaves(5)
                .with_frequency(1.0 / (f * 4.0)),
            derive(s, 10),
        )?;
        let swell = Fbm::new(
            &FbmParams::DEFAULT
                .with_octaves(2)
                .with_frequency(1.0 / (f * 16.0)),
            derive(s, 11),
        )?;
        let base = self.spec.fill * top;
        let hill_amp = f * 1.6;
        let swell_amp = (top * 0.1).min(f * 3.0);
        let lo = 6.0f32.min(top);
        let hi = (top - 3.0).max(lo);
        let surface = |x: f32| -> f32 {
            let v = base + hill_amp * hills.sample2(x, 0.5) + swell_amp * swell.sample2(x, 0.5);
            v.clamp(lo, hi)
        };
        // Per column: surface height and the cosine of its slope, so that
        // (surface - y) * cos approximates the distance to the surface line.
        let grass = Fbm::new(
            &FbmParams::DEFAULT.with_octaves(2).with_frequency(1.0 / 8.0),
            derive(s, 13),
        )?;
        let cols: Vec<(f32, f32, f32)> = (0..w)
            .map(|x| {
                let x = x as f32;
                let s0 = surface(x);
                let slope = surface(x + 0.5) - surface(x - 0.5);
                let grass_depth = 2.0 + 0.8 * grass.sample2(x, 0.0);
                (s0, 1.0 / (1.0 + slope * slope).sqrt(), grass_depth)
            })
            .collect();
        let cave_t = cave_threshold(0.8);
        let cave_slope = f * 0.5;
        let tunnels = Fbm::new(
            &FbmParams::DEFAULT
                .with_octaves(3)
                .with_frequency(1.0 / (f * 1.5)),
            derive(s, 12),
        )?;
        // Tunnels come and go: a slow mask widens them in some regions and
        // closes them in others.
        let tunnel_mask = Fbm::new(
            &FbmParams::DEFAULT
                .with_octaves(2)
                .with_frequency(1.0 / (f * 4.0)),
            derive(s, 15),
        )?;
        let tunnel_width = 0.05;
        let tunnel_slope = f * 0.6;
        let warp = Fbm::new(
            &FbmParams::DEFAULT
                .with_octaves(2)
                .with_frequency(1.0 / (f * 0.5)),
            derive(s, 14),
        )?;
        let warp_amp = f * 0.15;
        for_each_band_pair(values, ids, w, threads, &|y0, vals, mats| {
            let rows = vals.chunks_exact_mut(w).zip(mats.chunks_exact_mut(w));
            for (dy, (vrow, mrow)) in rows.enumerate() {
                let y = (y0 + dy) as f32;
                for (xi, (v, m)) in vrow.iter_mut().zip(mrow.iter_mut()).enumerate() {
                    let x = xi as f32;
                    let (sy, cos, grass_depth) = cols[xi];
                    if (sy - y + warp_amp) * cos < -RAMP_CELLS {
                        // Open sky, whatever the warp: nothing else to evaluate.
                        (*v, *m) = (-1.0, GRASS);
                        continue;
                    }
                    // A small 2D warp of y roughens the surface with bumps
                    // and the odd overhang.
                    let yw = y + warp_amp * warp.sample2(x, y);
                    let depth = (sy - yw) * cos;
                    let ground = clamp1(depth / RAMP_CELLS);
                    if depth < -RAMP_CELLS {
                        (*v, *m) = (ground, GRASS);
                        continue;
                    }
                    // Caves fade out just under the surface so that only the
                    // strongest ones break through it.
                    let cover = 1.0 - smoothstep(0.0, f * 0.5, depth);
                    let blob = (self.shape.sample2(x * 0.8, y) - cave_t) * cave_slope + cover * 2.5;
                    let carved = ground.min(blob);
                    // Where the mask closes, a bias pinches the tunnel off over
                    // a short stretch (scaling its width instead would leave
                    // long hairline slivers). Inside a cave nothing more is
                    // needed.
                    let tunnel = if carved > -1.0 {
                        let closed = 1.0 - smoothstep(-0.05, 0.2, tunnel_mask.sample2(x, y));
                        if closed < 0.6 {
                            let tn = tunnels.sample2(x * 0.6, y);
                            (tn.abs() - tunnel_width) * tunnel_slope + (closed + cover) * 3.0
                        } else {
                            1.0
                        }
                    } else {
                        1.0
                    };
                    *v = clamp1(carved.min(tunnel));
                    *m = if depth < grass_depth {
                        GRASS
                    } else if *v < -0.5 {
                        // Open cave: the material is never drawn, so a plain
                        // depth rule saves the material noise.
                        if depth < f * 0.7 { DIRT } else { ROCK }
                    } else {
                        self.layered_material(x, y, depth)
                    };
                }
            }
        });
        Ok(())
    }

    /// Cellular-automaton caves, upsampled and blurred into a smooth density.
    fn cellular(
        &self,
        values: &mut [f32],
        ids: &mut [u8],
        threads: usize,
    ) -> Result<(), FieldError> {
        let (w, h) = (self.w, self.h);
        let f = self.spec.feature_cells;
        // One automaton cell spans `scale` field cells; the 4-5 rule makes
        // caves several automaton cells wide.
        let scale = (f / 12.0).round().max(1.0);
        let cw = ((w - 1) as f32 / scale).ceil() as usize + 1;
        let ch = ((h - 1) as f32 / scale).ceil() as usize + 1;
        let params = CaveAutomaton::DEFAULT.with_fill(cellular_fill(self.spec.fill));
        let cells = automaton::run(cw, ch, derive(self.spec.seed, 20), &params, threads);
        let inv = 1.0 / scale;
        for_each_band(values, w, threads, &|y0, band| {
            for (dy, row) in band.chunks_exact_mut(w).enumerate() {
                let gy = (y0 + dy) as f32 * inv;
                let cy = (gy as usize).min(ch - 2);
                let ty = gy - cy as f32;
                for (x, v) in row.iter_mut().enumerate() {
                    let gx = x as f32 * inv;
                    let cx = (gx as usize).min(cw - 2);
                    let tx = gx - cx as f32;
                    let c = |i: usize, j: usize| if cells[j * cw + i] != 0 { 1.0f32 } else { -1.0 };
                    let a = c(cx, cy) + (c(cx + 1, cy) - c(cx, cy)) * tx;
                    let b = c(cx, cy + 1) + (c(cx + 1, cy + 1) - c(cx, cy + 1)) * tx;
                    *v = a + (b - a) * ty;
                }
            }
        });
        let radius = (scale as u32).clamp(1, BlurKind::MAX_RADIUS);
        blur_values(values, w, h, BlurKind::Gaussian, radius, threads)?;
        // Re-sharpen so the ramp spans about two cells, as for the other
        // presets, and wall the map in like the automaton's outside.
        let gain = (scale * 0.75).max(1.0);
        let top = (h - 1) as f32;
        let walls = Walls::new(w, h, f);
        for_each_band_pair(values, ids, w, threads, &|y0, vals, mats| {
            let rows = vals.chunks_exact_mut(w).zip(mats.chunks_exact_mut(w));
            for (dy, (vrow, mrow)) in rows.enumerate() {
                let y = (y0 + dy) as f32;
                for (xi, (v, m)) in vrow.iter_mut().zip(mrow.iter_mut()).enumerate() {
                    let x = xi as f32;
                    *v = clamp1((*v + walls.bias(x, y)) * gain);
                    *m = self.layered_material(x, y, top - y);
                }
            }
        });
        Ok(())
    }

    /// Bedrock along the bottom, empty border.
    fn finish(&self, values: &mut [f32], ids: &mut [u8]) {
        let (w, h) = (self.w, self.h);
        // Rows 1 and 2 are always bedrock; it rises to row 5 where its noise
        // does. Only the bottom rows are touched, so this runs on one thread.
        let rows = h.min(BEDROCK_MAX_ROW + 1);
        for x in 0..w {
            let top = 2.5 + 2.5 * (self.bedrock.sample2(x as f32, 0.0) * 1.5).max(0.0);
            for y in 0..rows {
                let yf = y as f32;
                if yf <= top {
                    let i = y * w + x;
                    ids[i] = BEDROCK;
                    values[i] = values[i].max(clamp1((top - yf) / RAMP_CELLS + 0.5));
                }
            }
        }
        for x in 0..w {
            values[x] = -1.0;
            values[(h - 1) * w + x] = -1.0;
        }
        for y in 0..h {
            values[y * w] = -1.0;
            values[y * w + w - 1] = -1.0;
        }
    }
}

/// The automaton's starting fill for a wanted solid fraction.
fn cellular_fill(solid: f32) -> f32 {
    quantile(&CELLULAR_FILL, solid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preset_names_round_trip() {
        for p in Side2dPreset::ALL {
            assert_eq!(p.to_string().parse::<Side2dPreset>().unwrap(), p);
        }
        assert_eq!(
            " Hills ".parse::<Side2dPreset>().unwrap(),
            Side2dPreset::Hills
        );
        let err = "mountains".parse::<Side2dPreset>().unwrap_err().to_string();
        assert!(err.contains("caves, hills, cellular"), "{err}");
    }

    #[test]
    fn quantile_table_is_monotonic() {
        for table in [&CAVE_QUANTILES, &CELLULAR_FILL] {
            for pair in table.windows(2) {
                assert!(pair[0] < pair[1]);
            }
        }
        assert_eq!(cave_threshold(1.0), -1.0);
        assert_eq!(cave_threshold(0.0), 1.0);
        assert_eq!(cave_threshold(0.5), 0.0);
    }
}
