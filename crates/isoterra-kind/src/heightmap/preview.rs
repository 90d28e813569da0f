//! The heightmap's preview: a square of `area` world units around the
//! origin, shaded relief (a light from the north-west) over an elevation
//! ramp, with a recipe's erosion sketched on the preview's own samples (the
//! world erodes at full resolution when it is created).

use isoterra_field::erosion::{hydraulic_erosion, thermal_erosion};
use isoterra_field::{BlurKind, Field2, HeightGen, blur};
use isoterra_world::HeightErosion;

use crate::preview::{Preview, finish, linear_to_srgb, mix, put};
use crate::{KindError, WorldParams};

/// The preview of `params`, `n` pixels square, `area` units across.
pub(crate) fn preview(
    params: &WorldParams,
    n: u32,
    area: Option<f32>,
) -> Result<Preview, KindError> {
    let WorldParams::Heightmap(p) = params else {
        return Err(crate::per_kind::misfit());
    };
    let options_area = area;
    let area = options_area.unwrap_or(1024.0);
    let heights = HeightGen::new(&p.generator, p.seed)?;
    let sketch = p.erosion.as_ref().map(|e| (e, p.cell_size));
    let rgb = relief(&heights, area, n, sketch, p.seed)?;
    finish(rgb, n, n, area)
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
