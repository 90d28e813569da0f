//! The voxel world's preview: a vertical slice through `z = 0` (mesas:
//! `z = rock_size / 2`, through a row of rock cells), `area` units wide:
//! sky, grass, dirt and stone by depth under the top surface, and caves in
//! shadow (a planet: a slice through its centre).

use isoterra_field::VoxelPreset;

use crate::preview::{Preview, finish, linear_to_srgb, mix, put};
use crate::{KindError, WorldParams};

/// The preview of `params`, `n` pixels wide, `area` units across.
pub(crate) fn preview(
    params: &WorldParams,
    n: u32,
    area: Option<f32>,
) -> Result<Preview, KindError> {
    let WorldParams::Voxel(p) = params else {
        return Err(crate::per_kind::misfit());
    };
    let options_area = area;
    let g = &p.generator;
    let sampler = g.sampler()?;
    let planet = g.preset == VoxelPreset::Planet;
    let area = options_area.unwrap_or(if planet {
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
