//! The map's preview: the whole map from above, in its splat colours,
//! lighter per cliff level, with cliff edges, water and chasms.

use isoterra_export::splat_color;
use isoterra_field::map::node_surface;
use isoterra_world::MapWorld;

use crate::preview::{Preview, finish, linear_to_srgb, put};
use crate::{KindError, WorldParams};

/// The preview of `params`, `n` pixels on its longest side.
pub(crate) fn preview(params: &WorldParams, n: u32) -> Result<Preview, KindError> {
    let WorldParams::Map(p) = params else {
        return Err(crate::per_kind::misfit());
    };
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
