//! Signed 3D density functions: CSG shapes, height fields, fBm caves and the
//! voxel world generator ([`VoxelGen`]).
//!
//! Every density here follows the crate's sign convention: positive inside
//! the solid, negative in the air, the surface at `0`. The shapes return the
//! negated signed distance (`density = -signed_distance`), in world units, so
//! combining them with [`union`] (max), [`subtract`] and [`intersect`] (min)
//! keeps a distance-like field. The smooth variants blend within a radius `k`
//! with a polynomial smooth minimum.
//!
//! [`VoxelGen`] adds height fields ([`HeightGen`]) and 3D fBm into the
//! presets of the `voxel` world kind; [`fill_density`] evaluates it on a grid
//! in world coordinates.
//!
//! ```
//! use isoterra_field::density::{self, sphere, cuboid, subtract};
//! let p = [0.5, 0.0, 0.0];
//! let ball = sphere(p, [0.0; 3], 2.0);
//! assert_eq!(ball, 1.5);
//! let carved = subtract(ball, cuboid(p, [0.0; 3], [1.0; 3]));
//! assert!(carved < 0.0); // inside the box: carved away
//! # let _ = density::union(1.0, 2.0);
//! ```

use crate::noise::{Fbm, FbmParams, Noise3};
use crate::{FieldError, HeightGen, HeightParams};

/// Length of a 3D vector.
#[inline]
fn len3(v: [f32; 3]) -> f32 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

#[inline]
fn sub3(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[inline]
fn dot3(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Density of a ball: `radius - |p - center|` (positive inside).
#[inline]
pub fn sphere(p: [f32; 3], center: [f32; 3], radius: f32) -> f32 {
    radius - len3(sub3(p, center))
}

/// Density of an axis-aligned box with the given `center` and half extents
/// (the exact negated signed distance to the box).
#[inline]
pub fn cuboid(p: [f32; 3], center: [f32; 3], half: [f32; 3]) -> f32 {
    let d = sub3(p, center);
    let q = [
        d[0].abs() - half[0],
        d[1].abs() - half[1],
        d[2].abs() - half[2],
    ];
    let outside = len3([q[0].max(0.0), q[1].max(0.0), q[2].max(0.0)]);
    let inside = q[0].max(q[1]).max(q[2]).min(0.0);
    -(outside + inside)
}

/// Density of a capsule: the points within `radius` of the segment `a`–`b`.
#[inline]
pub fn capsule(p: [f32; 3], a: [f32; 3], b: [f32; 3], radius: f32) -> f32 {
    let pa = sub3(p, a);
    let ba = sub3(b, a);
    let bb = dot3(ba, ba);
    let h = if bb > 0.0 {
        (dot3(pa, ba) / bb).clamp(0.0, 1.0)
    } else {
        0.0
    };
    radius - len3([pa[0] - ba[0] * h, pa[1] - ba[1] * h, pa[2] - ba[2] * h])
}

/// Density of the half-space below a plane: `offset - dot(normal, p)`, so the
/// solid is where `dot(normal, p) <= offset`. `normal` should have unit
/// length for the value to be a distance.
#[inline]
pub fn half_space(p: [f32; 3], normal: [f32; 3], offset: f32) -> f32 {
    offset - dot3(normal, p)
}

/// Density of the solid below a height field: `height - y`.
#[inline]
pub fn height_field(height: f32, y: f32) -> f32 {
    height - y
}

/// Union of two solids: `max(a, b)`.
#[inline]
pub fn union(a: f32, b: f32) -> f32 {
    a.max(b)
}

/// `a` with `b` carved out: `min(a, -b)`.
#[inline]
pub fn subtract(a: f32, b: f32) -> f32 {
    a.min(-b)
}

/// Intersection of two solids: `min(a, b)`.
#[inline]
pub fn intersect(a: f32, b: f32) -> f32 {
    a.min(b)
}

/// Polynomial smooth minimum with blend radius `k` (`k <= 0` is the plain
/// minimum).
#[inline]
pub fn smooth_min(a: f32, b: f32, k: f32) -> f32 {
    if k > 0.0 {
        let h = (k - (a - b).abs()).max(0.0) / k;
        a.min(b) - h * h * k * 0.25
    } else {
        a.min(b)
    }
}

/// Polynomial smooth maximum with blend radius `k`.
#[inline]
pub fn smooth_max(a: f32, b: f32, k: f32) -> f32 {
    -smooth_min(-a, -b, k)
}

/// Union blended over radius `k`.
#[inline]
pub fn smooth_union(a: f32, b: f32, k: f32) -> f32 {
    smooth_max(a, b, k)
}

/// Subtraction blended over radius `k`.
#[inline]
pub fn smooth_subtract(a: f32, b: f32, k: f32) -> f32 {
    smooth_min(a, -b, k)
}

/// Intersection blended over radius `k`.
#[inline]
pub fn smooth_intersect(a: f32, b: f32, k: f32) -> f32 {
    smooth_min(a, b, k)
}

/// A named starting point for [`VoxelGen`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum VoxelPreset {
    /// Rolling ground riddled with worm-like tunnels.
    Caves,
    /// Ground displaced by 3D noise: cliffs, arches and overhangs.
    Overhangs,
    /// A noisy ball around the origin, with tunnels.
    Planet,
    /// Terraced, flat-topped rock tables with steep sides, arches cut
    /// through them, and floating rocks above them: the CSG formula.
    Mesas,
}

impl VoxelPreset {
    /// Every preset.
    pub const ALL: [VoxelPreset; 4] = [
        VoxelPreset::Caves,
        VoxelPreset::Overhangs,
        VoxelPreset::Planet,
        VoxelPreset::Mesas,
    ];

    /// The lowercase name (`caves`, `overhangs`, `planet`, `mesas`).
    pub const fn name(self) -> &'static str {
        match self {
            VoxelPreset::Caves => "caves",
            VoxelPreset::Overhangs => "overhangs",
            VoxelPreset::Planet => "planet",
            VoxelPreset::Mesas => "mesas",
        }
    }
}

impl std::fmt::Display for VoxelPreset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for VoxelPreset {
    type Err = FieldError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                FieldError::param(
                    "preset",
                    s,
                    "unknown voxel preset; valid names: caves, overhangs, planet, mesas",
                )
            })
    }
}

/// Parameters of the `voxel` world generator.
///
/// For a world position `p = (x, y, z)` (world units; the voxel world uses
/// one unit per cell), the signed distance-like value `d` is
///
/// ```text
/// ground(p)  = ground_level + height(x, z) - mid - y       height: HeightGen, 0..ground_amplitude
/// tunnels(p) = (|cave(p)| - cave_threshold) / cave_frequency / 4   cave: 3D fBm in [-1, 1]
/// Caves:     d = min(ground, tunnels)                      worm-like tunnels where |cave| is small
/// Overhangs: d = ground + overhang_strength * cave(p)      3D displacement of the ground
/// Planet:    d = min(planet_radius + ground_amplitude/4 * cave(p) - |p|, tunnels)
/// Mesas:     d = max(min(terraced(p), max(tunnels, y0 - y)), rocks(p))
/// density   = clamp(d / falloff, -1, 1)
/// ```
///
/// Mesas is built from CSG terms: `terraced` is the ground (its height
/// generator at three times `ground_amplitude`, see
/// [`ground_height_scale`](Self::ground_height_scale)) with its height
/// quantised into steps of `ground_amplitude / 4` (flat tops, risers
/// steep over the last 30 % of each step); the tunnels are subtracted only
/// above `y0 = ground_level - ground_amplitude / 2`, so they open as arches
/// through the tables instead of caves under them; `rocks` is the union of floating
/// boulders (balls displaced by the 3D noise), one in a fraction
/// [`rock_density`](Self::rock_density) of the cells of a grid of
/// [`rock_size`](Self::rock_size) units, in two rows of cells over the
/// tables ([`rock_band`](Self::rock_band)). Each boulder stays inside its cell with a margin of the
/// ramp width, so a point reads one cell and the field stays exact.
///
/// `mid` is the middle of the height generator's analytic range, so the
/// ground wobbles around `ground_level`. The final division by
/// [`falloff`](Self::falloff) (in world units) and the clamp keep values in
/// `[-1, 1]` while leaving a linear ramp a few cells wide around the surface,
/// which gives marching cubes good vertex positions and gradient normals.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(default)
)]
pub struct VoxelGen {
    /// Which formula. Default value: [`VoxelPreset::Caves`].
    pub preset: VoxelPreset,
    /// Seed of every noise. Default value: `0`.
    pub seed: u64,
    /// Mean ground height `y`, finite. Default value: `0.0`.
    pub ground_level: f32,
    /// Height range of the ground noise (and planet relief), finite and
    /// `> 0`. Default value: `32.0`.
    pub ground_amplitude: f32,
    /// Frequency of the 3D cave / overhang noise in cycles per unit, finite
    /// and in `(0, 1]`. Default value: `1/48`.
    pub cave_frequency: f32,
    /// Half-width of the tunnels in noise units, finite, in `[0, 1)`
    /// (`0` disables tunnels). Default value: `0.06`.
    pub cave_threshold: f32,
    /// How far 3D noise pushes the ground in the overhangs preset, in world
    /// units, finite and `>= 0`. Default value: `40.0`.
    pub overhang_strength: f32,
    /// Radius of the planet preset, finite and `> 0`. Default value: `48.0`.
    pub planet_radius: f32,
    /// Width of the linear ramp around the surface before clamping, in world
    /// units, finite and `> 0`. Default value: `2.0`.
    pub falloff: f32,
    /// Fraction of the rock grid's cells that hold a floating rock in the
    /// mesas preset, in `[0, 1]`. Default value: `0.0`.
    pub rock_density: f32,
    /// Side of the rock grid's cells in world units, finite and in
    /// `[4, 1e6]`; rocks are at most half of it across. Default value:
    /// `24.0`.
    pub rock_size: f32,
}

impl VoxelGen {
    /// Largest magnitude accepted for lengths (ground level, radius...).
    pub const MAX_LENGTH: f32 = 1.0e6;

    /// The defaults (see each field).
    pub const DEFAULT: Self = VoxelGen {
        preset: VoxelPreset::Caves,
        seed: 0,
        ground_level: 0.0,
        ground_amplitude: 32.0,
        cave_frequency: 1.0 / 48.0,
        cave_threshold: 0.06,
        overhang_strength: 40.0,
        planet_radius: 48.0,
        falloff: 2.0,
        rock_density: 0.0,
        rock_size: 24.0,
    };

    /// The defaults with `preset` and `seed`.
    pub const fn new(preset: VoxelPreset, seed: u64) -> Self {
        Self::DEFAULT.with_preset(preset).with_seed(seed)
    }

    /// Sets [`preset`](Self::preset).
    pub const fn with_preset(mut self, preset: VoxelPreset) -> Self {
        self.preset = preset;
        self
    }

    /// Sets [`seed`](Self::seed).
    pub const fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets [`ground_level`](Self::ground_level).
    pub const fn with_ground_level(mut self, v: f32) -> Self {
        self.ground_level = v;
        self
    }

    /// Sets [`ground_amplitude`](Self::ground_amplitude).
    pub const fn with_ground_amplitude(mut self, v: f32) -> Self {
        self.ground_amplitude = v;
        self
    }

    /// Sets [`cave_frequency`](Self::cave_frequency).
    pub const fn with_cave_frequency(mut self, v: f32) -> Self {
        self.cave_frequency = v;
        self
    }

    /// Sets [`cave_threshold`](Self::cave_threshold).
    pub const fn with_cave_threshold(mut self, v: f32) -> Self {
        self.cave_threshold = v;
        self
    }

    /// Sets [`overhang_strength`](Self::overhang_strength).
    pub const fn with_overhang_strength(mut self, v: f32) -> Self {
        self.overhang_strength = v;
        self
    }

    /// Sets [`planet_radius`](Self::planet_radius).
    pub const fn with_planet_radius(mut self, v: f32) -> Self {
        self.planet_radius = v;
        self
    }

    /// Sets [`falloff`](Self::falloff).
    pub const fn with_falloff(mut self, v: f32) -> Self {
        self.falloff = v;
        self
    }

    /// Sets [`rock_density`](Self::rock_density).
    pub const fn with_rock_density(mut self, v: f32) -> Self {
        self.rock_density = v;
        self
    }

    /// Sets [`rock_size`](Self::rock_size).
    pub const fn with_rock_size(mut self, v: f32) -> Self {
        self.rock_size = v;
        self
    }

    /// Height of one terrace step of the mesas preset.
    pub fn terrace_step(&self) -> f32 {
        self.ground_amplitude * 0.25
    }

    /// The `height_scale` of the ground's height generator: the ground
    /// amplitude, and three times it for mesas (a heightfield's values
    /// spread over a fraction of its range; mesas need several steps of
    /// relief within a view).
    pub fn ground_height_scale(&self) -> f32 {
        match self.preset {
            VoxelPreset::Mesas => 3.0 * self.ground_amplitude,
            _ => self.ground_amplitude,
        }
    }

    /// The `y` range `[bottom, top)` the mesas preset's floating rocks lie
    /// in: two rows of rock cells, from the row a quarter of the way up
    /// the ground's height range (`height_range`, the height
    /// generator's analytic range).
    pub fn rock_band(&self, height_range: [f32; 2]) -> [f32; 2] {
        // Heights spread over a fraction of the analytic range: the band
        // starts at the row of cells a quarter of the way up it, so
        // boulders float over most tables and rest on the highest.
        let mid = 0.5 * (height_range[0] + height_range[1]);
        let base = self.ground_level + 0.25 * (height_range[1] - mid);
        let c = self.rock_size;
        let row = (base / c).floor();
        [row * c, (row + 2.0) * c]
    }

    /// Checks every field's range.
    ///
    /// # Errors
    ///
    /// [`FieldError::InvalidParameter`] naming the first bad field.
    pub fn validate(&self) -> Result<(), FieldError> {
        let m = Self::MAX_LENGTH;
        let checks: [(&'static str, f32, bool, &'static str); 9] = [
            (
                "ground_level",
                self.ground_level,
                self.ground_level.abs() <= m,
                "must be finite and within ±1e6",
            ),
            (
                "ground_amplitude",
                self.ground_amplitude,
                self.ground_amplitude > 0.0 && self.ground_amplitude <= m,
                "must be finite, > 0 and <= 1e6",
            ),
            (
                "cave_frequency",
                self.cave_frequency,
                self.cave_frequency > 0.0 && self.cave_frequency <= 1.0,
                "must be in (0, 1]",
            ),
            (
                "cave_threshold",
                self.cave_threshold,
                (0.0..1.0).contains(&self.cave_threshold),
                "must be in [0, 1)",
            ),
            (
                "overhang_strength",
                self.overhang_strength,
                (0.0..=m).contains(&self.overhang_strength),
                "must be finite, >= 0 and <= 1e6",
            ),
            (
                "planet_radius",
                self.planet_radius,
                self.planet_radius > 0.0 && self.planet_radius <= m,
                "must be finite, > 0 and <= 1e6",
            ),
            (
                "falloff",
                self.falloff,
                self.falloff > 0.0 && self.falloff <= m,
                "must be finite, > 0 and <= 1e6",
            ),
            (
                "rock_density",
                self.rock_density,
                (0.0..=1.0).contains(&self.rock_density),
                "must be in [0, 1]",
            ),
            (
                "rock_size",
                self.rock_size,
                (4.0..=m).contains(&self.rock_size),
                "must be finite and in [4, 1e6]",
            ),
        ];
        for (name, value, ok, reason) in checks {
            // NaN fails every comparison above, so `ok` is false for it.
            if !ok {
                return Err(FieldError::param(name, value, reason));
            }
        }
        Ok(())
    }

    /// A ready-to-evaluate sampler (validates first).
    ///
    /// # Errors
    ///
    /// As [`validate`](Self::validate).
    pub fn sampler(&self) -> Result<DensitySampler, FieldError> {
        DensitySampler::new(self)
    }
}

impl Default for VoxelGen {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A validated [`VoxelGen`] with its noises built, to evaluate many points.
///
/// [`density`](Self::density) and [`fill`](Self::fill) give the same bits
/// for the same position.
#[derive(Debug, Clone)]
pub struct DensitySampler {
    generator: VoxelGen,
    height: HeightGen,
    mid: f32,
    cave: Fbm,
    tunnel_scale: f32,
    inv_falloff: f32,
    /// Mesas: the rock band `[bottom, top)` and the rocks' hash key.
    rock_band: [f32; 2],
    rock_key: u64,
}

/// The checks of a density grid fill: a finite, positive step, a finite
/// grid and `len` its node count.
fn check_fill(origin: [f32; 3], step: f32, dims: [u32; 3], len: usize) -> Result<(), FieldError> {
    if !(step > 0.0 && step.is_finite()) {
        return Err(FieldError::param("step", step, "must be finite and > 0"));
    }
    crate::noise::check_grid(&origin, &[step; 3], &dims, len)
}

/// One x row of a density grid: node `i` at `(x0 + i * dx, y, z)`, with
/// its ground height and cave noise.
struct GridRow<'a> {
    x0: f32,
    dx: f32,
    y: f32,
    z: f32,
    heights: &'a [f32],
    noise: &'a [f32],
}

/// Scrambles the seed for the 3D noise so it differs from the ground's.
const CAVE_SEED_SALT: u64 = 0x9e37_79b9_7f4a_7c15;
/// The stream of the mesas preset's rock hashes.
const ROCK_STREAM: u64 = 0x524f_434b;

impl DensitySampler {
    /// Builds the noises of `generator` (validated).
    ///
    /// # Errors
    ///
    /// As [`VoxelGen::validate`].
    pub fn new(generator: &VoxelGen) -> Result<Self, FieldError> {
        generator.validate()?;
        let height = HeightGen::new(
            &HeightParams::DEFAULT.with_height_scale(generator.ground_height_scale()),
            generator.seed,
        )?;
        let [lo, hi] = height.range();
        let cave = Fbm::new(
            &FbmParams::DEFAULT
                .with_octaves(3)
                .with_frequency(generator.cave_frequency),
            generator.seed ^ CAVE_SEED_SALT,
        )?;
        Ok(DensitySampler {
            generator: *generator,
            height,
            mid: 0.5 * (lo + hi),
            cave,
            tunnel_scale: 0.25 / generator.cave_frequency,
            inv_falloff: 1.0 / generator.falloff,
            rock_band: generator.rock_band([lo, hi]),
            rock_key: crate::noise::hash::derive(generator.seed, ROCK_STREAM),
        })
    }

    /// The generator parameters.
    pub fn params(&self) -> &VoxelGen {
        &self.generator
    }

    /// Ground density from a precomputed height sample.
    #[inline]
    fn ground(&self, h: f32, y: f32) -> f32 {
        height_field(self.generator.ground_level + (h - self.mid), y)
    }

    #[inline]
    fn tunnels(&self, n: f32) -> f32 {
        (n.abs() - self.generator.cave_threshold) * self.tunnel_scale
    }

    /// Mesas: the ground with its height quantised into steps.
    #[inline]
    fn terraced(&self, h: f32, y: f32) -> f32 {
        let step = self.generator.terrace_step();
        let u = (h - self.mid) / step;
        let f = u.floor();
        // Flat for 70 % of a step, then a steep smooth riser to the next.
        let t = ((u - f - 0.7) / 0.3).clamp(0.0, 1.0);
        let t = t * t * (3.0 - 2.0 * t);
        height_field(self.generator.ground_level + (f + t) * step, y)
    }

    /// Mesas: the floating rock of the cell holding `p`, if any (density,
    /// positive inside; `-inf` where there is none).
    #[inline]
    fn rock(&self, p: [f32; 3], n: f32) -> f32 {
        let g = &self.generator;
        let [bottom, top] = self.rock_band;
        if g.rock_density <= 0.0 || !(p[1] >= bottom && p[1] < top) {
            return f32::NEG_INFINITY;
        }
        let c = g.rock_size;
        let cell = [(p[0] / c).floor(), (p[1] / c).floor(), (p[2] / c).floor()];
        let key = cell.iter().fold(self.rock_key, |k, v| {
            crate::noise::hash::mix64(k ^ (*v as i64 as u64))
        });
        let unit = |i: u64| crate::noise::hash::unit_f32(crate::noise::hash::mix64(key ^ i));
        if unit(0) >= g.rock_density {
            return f32::NEG_INFINITY;
        }
        // Radius up to a quarter of the cell; the centre anywhere that keeps
        // the ball, its 30 % noise push and one ramp width inside the cell.
        let r = c * 0.25 * (0.6 + 0.4 * unit(4));
        let margin = 1.3 * r + g.falloff;
        if 2.0 * margin >= c {
            return f32::NEG_INFINITY;
        }
        let centre = [1, 2, 3].map(|i| margin + (c - 2.0 * margin) * unit(i));
        let centre = [
            cell[0] * c + centre[0],
            cell[1] * c + centre[1],
            cell[2] * c + centre[2],
        ];
        sphere(p, centre, r) + 0.3 * r * n
    }

    /// Combines the per-point pieces; shared by the point and batch paths.
    #[inline]
    fn combine(&self, p: [f32; 3], h: f32, n: f32) -> f32 {
        let g = &self.generator;
        let d = match g.preset {
            VoxelPreset::Caves => {
                let ground = self.ground(h, p[1]);
                if g.cave_threshold > 0.0 {
                    intersect(ground, self.tunnels(n))
                } else {
                    ground
                }
            }
            VoxelPreset::Overhangs => self.ground(h, p[1]) + g.overhang_strength * n,
            VoxelPreset::Planet => {
                let ball = sphere(p, [0.0; 3], g.planet_radius) + 0.25 * g.ground_amplitude * n;
                if g.cave_threshold > 0.0 {
                    intersect(ball, self.tunnels(n))
                } else {
                    ball
                }
            }
            VoxelPreset::Mesas => {
                let ground = self.terraced(h, p[1]);
                let carved = if g.cave_threshold > 0.0 {
                    // Tunnels only above the lowest tables: arches, not caves.
                    let y0 = g.ground_level - 2.0 * g.terrace_step();
                    intersect(ground, self.tunnels(n).max(y0 - p[1]))
                } else {
                    ground
                };
                union(carved, self.rock(p, n))
            }
        };
        (d * self.inv_falloff).clamp(-1.0, 1.0)
    }

    /// `out[i]` is the density of node `i` of `row`, from its height and
    /// cave noise: [`combine`](Self::combine) with NaN as `-1`, bit for bit.
    /// The caves preset, which streaming worlds use, runs as one
    /// branch-free loop.
    #[inline(always)]
    fn combine_row(&self, row: &GridRow, out: &mut [f32]) {
        let g = &self.generator;
        let (y, z) = (row.y, row.z);
        let finish = |d: f32| {
            let v = (d * self.inv_falloff).clamp(-1.0, 1.0);
            if v.is_nan() { -1.0 } else { v }
        };
        let pairs = out.iter_mut().zip(row.heights).zip(row.noise);
        match g.preset {
            VoxelPreset::Caves if g.cave_threshold > 0.0 => {
                for ((o, &h), &n) in pairs {
                    *o = finish(intersect(self.ground(h, y), self.tunnels(n)));
                }
            }
            VoxelPreset::Caves => {
                for ((o, &h), _) in pairs {
                    *o = finish(self.ground(h, y));
                }
            }
            _ => {
                for (i, ((o, &h), &n)) in pairs.enumerate() {
                    let x = row.x0 + i as f32 * row.dx;
                    let v = self.combine([x, y, z], h, n);
                    *o = if v.is_nan() { -1.0 } else { v };
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq")]
    fn combine_row_avx512(&self, row: &GridRow, out: &mut [f32]) {
        self.combine_row(row, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn combine_row_avx2(&self, row: &GridRow, out: &mut [f32]) {
        self.combine_row(row, out)
    }

    /// [`combine_row`](Self::combine_row) on the widest vectors this CPU has.
    fn combine_row_best(&self, row: &GridRow, out: &mut [f32]) {
        crate::noise::kernel::widest!(
            avx512: self.combine_row_avx512(row, out),
            avx2: self.combine_row_avx2(row, out),
            plain: self.combine_row(row, out),
        )
    }

    /// Caves: whether every node of a row at height `y` over the ground
    /// `heights` is air by the ground alone, so that [`combine`](Self::combine)
    /// gives exactly `-1` whatever the cave noise (the tunnels only carve:
    /// `min(ground, tunnels) <= ground`, and the ground is already at or
    /// below `-falloff`). The row's noise is then not computed: most
    /// chunks above the ground cost their heights only. A NaN ground is
    /// never air here (the noise decides it).
    #[inline]
    fn row_is_air(&self, heights: &[f32], y: f32) -> bool {
        self.generator.preset == VoxelPreset::Caves
            && heights
                .iter()
                .all(|&h| self.ground(h, y) * self.inv_falloff <= -1.0)
    }

    #[inline]
    fn needs_height(&self) -> bool {
        self.generator.preset != VoxelPreset::Planet
    }

    /// The density at world position `p`, in `[-1, 1]` (NaN coordinates give
    /// an unspecified value in that range).
    pub fn density(&self, p: [f32; 3]) -> f32 {
        let h = if self.needs_height() {
            self.height.height_at(p[0], p[2])
        } else {
            0.0
        };
        let n = self.cave.sample3(p[0], p[1], p[2]);
        let v = self.combine(p, h, n);
        if v.is_nan() { -1.0 } else { v }
    }

    /// Fills `out` with the densities of a grid of `dims` nodes: node
    /// `(i, j, k)` goes to `out[(k * dims[1] + j) * dims[0] + i]` and is
    /// bit-identical to `self.density([origin[0] + i as f32 * step, ...])`.
    ///
    /// # Errors
    ///
    /// [`FieldError`] for a non-finite origin or step, a non-positive step,
    /// a grid whose far end is not finite or `out.len()` not the node count.
    /// Nothing is written on error.
    pub fn fill(
        &self,
        origin: [f32; 3],
        step: f32,
        dims: [u32; 3],
        out: &mut [f32],
    ) -> Result<(), FieldError> {
        check_fill(origin, step, dims, out.len())?;
        let [w, h, d] = dims.map(|v| v as usize);
        if w == 0 || h == 0 || d == 0 {
            return Ok(());
        }
        // The ground heights of every (x, z) column, bit for bit
        // `height_at` of each node (the grid was checked above).
        let mut heights = vec![0.0f32; w * d];
        self.fill_ground(
            [origin[0], origin[2]],
            step,
            [dims[0], dims[2]],
            &mut heights,
        )?;
        self.fill_rows(origin, step, dims, &heights, out);
        Ok(())
    }

    /// The ground heights of the `dims[0] x dims[1]` columns of a grid
    /// whose first column stands at `origin` (x, z) and whose columns are
    /// `step` apart, x fastest: what [`fill`](Self::fill) computes before
    /// the densities, for [`fill_on_ground`](Self::fill_on_ground) to use
    /// again for every grid over the same columns. Zeros for a preset
    /// without ground.
    ///
    /// # Errors
    ///
    /// As [`HeightGen::fill_heights`]; `out` is unchanged on error.
    pub fn fill_ground(
        &self,
        origin: [f32; 2],
        step: f32,
        dims: [u32; 2],
        out: &mut [f32],
    ) -> Result<(), FieldError> {
        if self.needs_height() {
            self.height.fill_heights(origin, [step, step], dims, out)
        } else {
            crate::noise::check_grid(&origin, &[step; 2], &dims, out.len())?;
            out.fill(0.0);
            Ok(())
        }
    }

    /// [`fill`](Self::fill) with the grid's ground heights given: `ground`
    /// is what [`fill_ground`](Self::fill_ground) gives for the grid's
    /// `(x, z)` columns (`[origin[0], origin[2]]`, `step`, `[dims[0],
    /// dims[2]]`). A stack of grids over the same columns (the chunks of a
    /// streamed column) then computes the heights once. The same bits as
    /// `fill` for the heights `fill_ground` gives.
    ///
    /// # Errors
    ///
    /// As [`fill`](Self::fill), and [`FieldError`] when `ground` is not
    /// one height per column. Nothing is written on error.
    pub fn fill_on_ground(
        &self,
        origin: [f32; 3],
        step: f32,
        dims: [u32; 3],
        ground: &[f32],
        out: &mut [f32],
    ) -> Result<(), FieldError> {
        check_fill(origin, step, dims, out.len())?;
        let columns = dims[0] as usize * dims[2] as usize;
        if ground.len() != columns {
            return Err(FieldError::param(
                "ground",
                ground.len(),
                "must hold one height per (x, z) column of the grid",
            ));
        }
        self.fill_rows(origin, step, dims, ground, out);
        Ok(())
    }

    /// The densities of a checked, non-empty grid over the column heights
    /// `heights`.
    fn fill_rows(
        &self,
        origin: [f32; 3],
        step: f32,
        dims: [u32; 3],
        heights: &[f32],
        out: &mut [f32],
    ) {
        let [w, h, d] = dims.map(|v| v as usize);
        if w == 0 || h == 0 || d == 0 {
            return;
        }
        let mut row = vec![0.0f32; w];
        // Perlin caves: the x part of every row once for the grid.
        let mut plan = self.cave.as_fractal().plan_rows3(origin[0], step, w);
        for k in 0..d {
            let z = origin[2] + k as f32 * step;
            let heights = &heights[k * w..(k + 1) * w];
            for j in 0..h {
                let y = origin[1] + j as f32 * step;
                let base = (k * h + j) * w;
                let out = &mut out[base..base + w];
                if self.row_is_air(heights, y) {
                    out.fill(-1.0);
                    continue;
                }
                match &mut plan {
                    Some(plan) => self
                        .cave
                        .as_fractal()
                        .fill_row3_planned(plan, y, z, &mut row),
                    None => self.cave.fill_row3(origin[0], step, y, z, &mut row),
                }
                let grid_row = GridRow {
                    x0: origin[0],
                    dx: step,
                    y,
                    z,
                    heights,
                    noise: &row,
                };
                self.combine_row_best(&grid_row, out);
            }
        }
    }
}

/// Fills `out` with the densities of `generator` on a grid of `dims` nodes whose
/// node `(i, j, k)` sits at `origin + (i, j, k) * step` (world units), x
/// fastest. Values are in `[-1, 1]` (see [`VoxelGen`]).
///
/// The result is a pure function of `(generator, coordinates)`: the same position
/// gives the same bits whatever grid it belongs to, so chunks filled
/// separately agree exactly with one large fill wherever their node
/// coordinates are computed exactly — for example integer-aligned origins
/// with a power-of-two `step`, as the voxel world uses.
///
/// # Errors
///
/// As [`VoxelGen::validate`] and [`DensitySampler::fill`]. Nothing is written
/// on error.
pub fn fill_density(
    generator: &VoxelGen,
    origin: [f32; 3],
    step: f32,
    dims: [u32; 3],
    out: &mut [f32],
) -> Result<(), FieldError> {
    DensitySampler::new(generator)?.fill(origin, step, dims, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_positive_inside() {
        assert!(sphere([0.0; 3], [0.0; 3], 1.0) > 0.0);
        assert!(cuboid([0.9, 0.0, 0.0], [0.0; 3], [1.0; 3]) > 0.0);
        assert!(cuboid([1.1, 0.0, 0.0], [0.0; 3], [1.0; 3]) < 0.0);
        assert!(capsule([0.5, 0.2, 0.0], [0.0; 3], [1.0, 0.0, 0.0], 0.3) > 0.0);
        assert!(half_space([0.0, -1.0, 0.0], [0.0, 1.0, 0.0], 0.0) > 0.0);
    }

    #[test]
    fn smooth_min_matches_min_far_apart() {
        assert_eq!(smooth_min(0.0, 5.0, 1.0), 0.0);
        assert!(smooth_min(0.0, 0.0, 1.0) < 0.0);
    }
}
