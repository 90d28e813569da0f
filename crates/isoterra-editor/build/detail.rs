//! The editor's tiling detail textures, made from isoterra's own noise when
//! the editor is built: grass, soil, rock, snow and water, `SIDE x SIDE`
//! texels each, RGBA8, layer after layer.
//!
//! RGB is a detail colour around mid grey that the renderer multiplies into
//! the server's vertex colour (`2 * texel`), so the vertex colour keeps the
//! hue (the map's splat colour, the heightmap's height colour) and the
//! texture adds grain. Alpha is a height used to blend the layers (rock
//! shows in the low parts of grass first).
//!
//! Every layer tiles: continuous fields are the isoterra fractal sampled four
//! times, a period apart, and blended bilinearly across the tile (with the
//! variance the blend loses given back); pebbles and cracks come from a
//! Worley pattern on a grid that wraps.

use isoterra_field::{Basis, Fractal, FractalKind, FractalParams, Noise2};

/// Texels per side of every layer.
pub const SIDE: usize = 256;
/// The layers, in array order.
pub const LAYERS: [&str; 5] = ["grass", "soil", "rock", "snow", "water"];

/// A fractal sampled so that it tiles over `[0, 1)^2`: `period` noise units
/// per tile.
struct Tiled {
    noise: Fractal,
    period: f32,
    /// The fractal's mean, taken off before blending (ridged and billow
    /// fractals are not centred on 0, and the blend would brighten the
    /// middle of the tile).
    mean: f32,
}

impl Tiled {
    fn new(params: FractalParams, seed: u64, period: f32) -> Self {
        let noise = Fractal::new(&params, seed).expect("valid texture noise");
        let k = 64;
        let mut sum = 0.0f64;
        for j in 0..k {
            for i in 0..k {
                let (x, y) = (i as f32 * 0.618 * period, j as f32 * 0.707 * period);
                sum += f64::from(noise.sample2(x + 1000.0, y + 1000.0));
            }
        }
        let mean = (sum / f64::from(k * k)) as f32;
        Tiled {
            noise,
            period,
            mean,
        }
    }

    /// The value at tile coordinates `(u, v)` in `[0, 1)`, about `[-1, 1]`.
    fn at(&self, u: f32, v: f32) -> f32 {
        let p = self.period;
        let (x, y) = (u * p, v * p);
        let f = |x: f32, y: f32| self.noise.sample2(x, y) - self.mean;
        let (a, b) = (f(x, y), f(x - p, y));
        let (c, d) = (f(x, y - p), f(x - p, y - p));
        let w = [(1.0 - u) * (1.0 - v), u * (1.0 - v), (1.0 - u) * v, u * v];
        let sum = a * w[0] + b * w[1] + c * w[2] + d * w[3];
        let energy = (w[0] * w[0] + w[1] * w[1] + w[2] * w[2] + w[3] * w[3]).sqrt();
        sum / energy
    }
}

/// An integer hash of a wrapped grid cell, in `[0, 1)`.
fn cell_hash(x: i64, y: i64, cells: i64, seed: u64) -> [f32; 3] {
    let (x, y) = (x.rem_euclid(cells) as u64, y.rem_euclid(cells) as u64);
    let mut h =
        seed ^ x.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ y.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    let mut out = [0.0f32; 3];
    for o in &mut out {
        h ^= h >> 31;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 29;
        h = h.wrapping_mul(0x94D0_49BB_1331_11EB);
        h ^= h >> 32;
        *o = (h >> 40) as f32 / (1u64 << 24) as f32;
    }
    out
}

/// Worley distances at `(u, v)` for `cells x cells` jittered points that
/// wrap with the tile: the nearest (F1), the second (F2), both in cells,
/// and the nearest point's hash.
fn worley(u: f32, v: f32, cells: i64, seed: u64) -> (f32, f32, f32) {
    let (x, y) = (u * cells as f32, v * cells as f32);
    let (cx, cy) = (x.floor() as i64, y.floor() as i64);
    let (mut f1, mut f2, mut id) = (f32::MAX, f32::MAX, 0.0);
    for j in -1..=1 {
        for i in -1..=1 {
            let h = cell_hash(cx + i, cy + j, cells, seed);
            let px = (cx + i) as f32 + 0.1 + 0.8 * h[0];
            let py = (cy + j) as f32 + 0.1 + 0.8 * h[1];
            let d = ((px - x) * (px - x) + (py - y) * (py - y)).sqrt();
            if d < f1 {
                f2 = f1;
                f1 = d;
                id = h[2];
            } else if d < f2 {
                f2 = d;
            }
        }
    }
    (f1, f2, id)
}

fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

fn fractal(basis: Basis, kind: FractalKind, octaves: u32, persistence: f32) -> FractalParams {
    FractalParams::DEFAULT
        .with_basis(basis)
        .with_kind(kind)
        .with_octaves(octaves)
        .with_persistence(persistence)
        .with_frequency(1.0)
}

/// One texel: detail colour (about 0.5 on average) and blend height, each
/// in `[0, 1]`.
type Texel = ([f32; 3], f32);

fn grass(u: f32, v: f32, n: &[Tiled; 3]) -> Texel {
    // Patches of lusher and drier grass, then fine blades: noise stretched
    // along one axis and bent by a second noise.
    let patch = n[0].at(u, v);
    let bend = n[1].at(u, v) * 0.08;
    let blades = n[2].at((u + bend).rem_euclid(1.0), v);
    let l = 0.5 + 0.05 * patch + 0.18 * blades;
    let dry = smoothstep(0.2, 0.7, patch);
    let c = [
        l * (1.0 + 0.10 * dry),
        l * (1.0 - 0.02 * dry),
        l * (0.92 - 0.06 * dry),
    ];
    (c, 0.55 + 0.25 * patch + 0.15 * blades)
}

fn soil(u: f32, v: f32, n: &[Tiled; 3]) -> Texel {
    // Earth with grain, and pebbles that stand out lighter with a dark rim.
    let base = n[0].at(u, v);
    let grain = n[1].at(u, v);
    let (f1, _, id) = worley(u, v, 22, 0x5011);
    let r = 0.22 + 0.18 * id;
    let pebble = 1.0 - smoothstep(r * 0.7, r, f1);
    let rim = smoothstep(r * 0.8, r, f1) * (1.0 - smoothstep(r, r * 1.35, f1));
    let l = 0.5 + 0.09 * base + 0.08 * grain + 0.10 * pebble * (id - 0.3) - 0.08 * rim;
    let c = [l * 1.03, l, l * 0.95];
    (c, 0.35 + 0.2 * base + 0.4 * pebble)
}

fn rock(u: f32, v: f32, n: &[Tiled; 3]) -> Texel {
    // Ridged stone, bands of strata bent by noise, and dark cracks along the
    // edges of a Worley pattern.
    let ridged = n[0].at(u, v);
    let warp = n[1].at(u, v);
    let strata = (std::f32::consts::TAU * (5.0 * v + 0.3 * warp)).sin();
    let fine = n[2].at(u, v);
    // The crack pattern is bent by the noise so that it reads as fractured
    // stone, not as a mosaic; cracks fade in and out along their length.
    let (wu, wv) = (
        (u + 0.05 * warp).rem_euclid(1.0),
        (v + 0.05 * fine).rem_euclid(1.0),
    );
    let (f1, f2, id) = worley(wu, wv, 6, 0x0C4A);
    let crack = (1.0 - smoothstep(0.0, 0.05, f2 - f1)) * smoothstep(-0.3, 0.4, ridged);
    let l = 0.5 + 0.11 * ridged + 0.025 * strata + 0.07 * fine + 0.05 * (id - 0.5) - 0.14 * crack;
    let c = [l, l * 0.98, l * 0.96];
    (c, (0.6 + 0.3 * ridged - 0.5 * crack).clamp(0.0, 1.0))
}

fn snow(u: f32, v: f32, n: &[Tiled; 3]) -> Texel {
    // Soft drifts: little contrast, a cool tint in the hollows.
    let drift = n[0].at(u, v);
    let fine = n[2].at(u, v);
    let l = 0.5 + 0.05 * drift + 0.025 * fine;
    let cool = 0.02 * (1.0 - drift);
    ([l - cool, l, l + cool], 0.7 + 0.2 * drift)
}

fn water(u: f32, v: f32, n: &[Tiled; 3]) -> Texel {
    // Ripples for the water's surface and its foam: rgb is grey ripple
    // light, alpha a foam pattern.
    let ripple = n[1].at(u, v);
    let fine = n[2].at(u, v);
    let l = 0.5 + 0.10 * ripple + 0.05 * fine;
    let (f1, f2, _) = worley(u, v, 12, 0xF0A3);
    let foam = smoothstep(0.02, 0.25, f2 - f1) * (0.6 + 0.4 * fine);
    ([l, l, l], foam.clamp(0.0, 1.0))
}

/// Every layer's texels, RGBA8, layer after layer (`LAYERS` order).
pub fn generate() -> Vec<u8> {
    let mut out = Vec::with_capacity(LAYERS.len() * SIDE * SIDE * 4);
    let perlin = Basis::Perlin;
    let simplex = Basis::OpenSimplex2;
    for (layer, _) in LAYERS.iter().enumerate() {
        let seed = 0x1507_E44A + layer as u64 * 7919;
        let noises: [Tiled; 3] = match layer {
            0 => [
                Tiled::new(fractal(perlin, FractalKind::Fbm, 4, 0.5), seed, 4.0),
                Tiled::new(fractal(perlin, FractalKind::Fbm, 2, 0.5), seed + 1, 6.0),
                Tiled::new(
                    fractal(simplex, FractalKind::Fbm, 3, 0.55).with_lacunarity(2.3),
                    seed + 2,
                    64.0,
                ),
            ],
            1 => [
                Tiled::new(fractal(perlin, FractalKind::Fbm, 4, 0.5), seed, 5.0),
                Tiled::new(fractal(simplex, FractalKind::Fbm, 2, 0.5), seed + 1, 48.0),
                Tiled::new(fractal(perlin, FractalKind::Fbm, 1, 0.5), seed + 2, 8.0),
            ],
            2 => [
                Tiled::new(fractal(perlin, FractalKind::Ridged, 5, 0.5), seed, 4.0),
                Tiled::new(fractal(perlin, FractalKind::Fbm, 3, 0.5), seed + 1, 3.0),
                Tiled::new(fractal(simplex, FractalKind::Fbm, 3, 0.5), seed + 2, 40.0),
            ],
            3 => [
                Tiled::new(fractal(perlin, FractalKind::Fbm, 4, 0.5), seed, 3.0),
                Tiled::new(fractal(perlin, FractalKind::Fbm, 1, 0.5), seed + 1, 4.0),
                Tiled::new(fractal(simplex, FractalKind::Fbm, 2, 0.5), seed + 2, 32.0),
            ],
            _ => [
                Tiled::new(fractal(perlin, FractalKind::Fbm, 1, 0.5), seed, 4.0),
                Tiled::new(fractal(simplex, FractalKind::Billow, 3, 0.5), seed + 1, 6.0),
                Tiled::new(fractal(perlin, FractalKind::Fbm, 3, 0.5), seed + 2, 16.0),
            ],
        };
        let texel: fn(f32, f32, &[Tiled; 3]) -> Texel = match layer {
            0 => grass,
            1 => soil,
            2 => rock,
            3 => snow,
            _ => water,
        };
        for y in 0..SIDE {
            let v = y as f32 / SIDE as f32;
            for x in 0..SIDE {
                let u = x as f32 / SIDE as f32;
                let (rgb, h) = texel(u, v, &noises);
                for c in rgb {
                    out.push((c.clamp(0.0, 1.0) * 255.0).round() as u8);
                }
                out.push((h.clamp(0.0, 1.0) * 255.0).round() as u8);
            }
        }
    }
    out
}
