//! Line of sight over cliff levels.

use isoterra_field::map::{MAX_LEVEL, MapLayers};

use super::PathingRules;

/// Bilinear interpolation of the terrace (`level`) layer at `p` (cell units),
/// with `p` clamped into the map. `None` for a non-finite point or a level
/// layer whose length does not match the map.
fn terrace_at(map: &MapLayers, p: [f32; 2]) -> Option<f64> {
    if !(p[0].is_finite() && p[1].is_finite()) || map.level.len() != map.node_count() {
        return None;
    }
    let (w, d) = (map.width_cells(), map.depth_cells());
    let x = (p[0] as f64).clamp(0.0, w as f64);
    let z = (p[1] as f64).clamp(0.0, d as f64);
    let ix = cell_of(x, w);
    let iz = cell_of(z, d);
    Some(bilinear(map, ix, iz, x - ix as f64, z - iz as f64))
}

/// The cell holding coordinate `v` in `0..=cells` (the last cell for `v == cells`).
#[inline]
fn cell_of(v: f64, cells: u32) -> u32 {
    (v.floor() as i64).clamp(0, cells as i64 - 1) as u32
}

/// Terrace value of cell `(ix, iz)` at local coordinates `u, w` (clamped to 0..=1).
#[inline]
fn bilinear(map: &MapLayers, ix: u32, iz: u32, u: f64, w: f64) -> f64 {
    let [v00, v10, v01, v11] = corners(map, ix, iz);
    let (u, w) = (u.clamp(0.0, 1.0), w.clamp(0.0, 1.0));
    let a = v00 + (v10 - v00) * u;
    let b = v01 + (v11 - v01) * u;
    a + (b - a) * w
}

#[inline]
fn corners(map: &MapLayers, ix: u32, iz: u32) -> [f64; 4] {
    let nx = map.width_cells() as usize + 1;
    let i = iz as usize * nx + ix as usize;
    [
        map.level[i] as f64,
        map.level[i + 1] as f64,
        map.level[i + nx] as f64,
        map.level[i + nx + 1] as f64,
    ]
}

/// The cliff level at point `p` (cell units, clamped into the map): the
/// rounded bilinear interpolation of the terrace layer, so it changes exactly
/// on the rims that the mesh draws. `None` for a non-finite point or
/// inconsistent layers.
pub fn level_at(map: &MapLayers, p: [f32; 2]) -> Option<u8> {
    terrace_at(map, p).map(round_level)
}

#[inline]
fn round_level(v: f64) -> u8 {
    (v + 0.5).floor().clamp(0.0, MAX_LEVEL as f64) as u8
}

/// Whether a viewer at `from` sees the point `to` (both in cell units, clamped
/// into the map), the Warcraft III way: higher ground sees lower ground, lower
/// ground does not see onto higher ground.
///
/// The exact rule: let `L` be the viewer's level, [`level_at`]`(from)`, plus
/// `rules.sight_levels_above`. The terrace layer is interpolated bilinearly
/// inside every cell the segment `from`–`to` crosses (an exact grid traversal;
/// in each cell the maximum of the interpolated value along the piece of the
/// segment in it is found in closed form). The point is visible when that
/// value stays below `L + 0.5` everywhere on the segment, i.e. the segment
/// never crosses the rim of a level above `L` — including the target's own
/// level. Ground density, height offset and water do not block sight.
///
/// The cells are always walked from the lexicographically smaller end point,
/// so for two points on the same level the answer is the same in both
/// directions, bit for bit.
///
/// Returns `false` for a non-finite point, invalid rules or inconsistent layers.
pub fn line_of_sight(map: &MapLayers, from: [f32; 2], to: [f32; 2], rules: &PathingRules) -> bool {
    if rules.validate().is_err() {
        return false;
    }
    let (Some(viewer), Some(_)) = (level_at(map, from), terrace_at(map, to)) else {
        return false;
    };
    let limit = viewer as u32 + rules.sight_levels_above as u32;
    if limit >= MAX_LEVEL as u32 {
        return true;
    }
    let threshold = limit as f64 + 0.5;
    max_terrace_along(map, from, to, threshold) < threshold
}

/// The maximum of the bilinear terrace value along the segment, or any value
/// at least `stop` as soon as one is found.
fn max_terrace_along(map: &MapLayers, p: [f32; 2], q: [f32; 2], stop: f64) -> f64 {
    let (w, d) = (map.width_cells(), map.depth_cells());
    let clamp = |p: [f32; 2]| {
        [
            (p[0] as f64).clamp(0.0, w as f64),
            (p[1] as f64).clamp(0.0, d as f64),
        ]
    };
    let (mut a, mut b) = (clamp(p), clamp(q));
    if (b[0], b[1]) < (a[0], a[1]) {
        std::mem::swap(&mut a, &mut b);
    }
    let dx = b[0] - a[0];
    let dz = b[1] - a[1];
    let (mut ix, mut iz) = (cell_of(a[0], w), cell_of(a[1], d));
    let (jx, jz) = (cell_of(b[0], w), cell_of(b[1], d));
    // dx >= 0 after ordering.
    let step_z: i64 = if dz > 0.0 { 1 } else { -1 };
    let mut t_max_x = if dx > 0.0 {
        ((ix + 1) as f64 - a[0]) / dx
    } else {
        f64::INFINITY
    };
    let t_delta_x = if dx > 0.0 { 1.0 / dx } else { f64::INFINITY };
    let mut t_max_z = if dz > 0.0 {
        ((iz + 1) as f64 - a[1]) / dz
    } else if dz < 0.0 {
        (iz as f64 - a[1]) / dz
    } else {
        f64::INFINITY
    };
    let t_delta_z = if dz != 0.0 {
        1.0 / dz.abs()
    } else {
        f64::INFINITY
    };
    let mut t = 0.0f64;
    let mut best = f64::NEG_INFINITY;
    let max_steps = w as usize + d as usize + 4;
    for _ in 0..max_steps {
        let t_next = t_max_x.min(t_max_z).min(1.0);
        best = best.max(cell_max(map, ix, iz, a, [dx, dz], t, t_next));
        if best >= stop || (ix == jx && iz == jz) || t_next >= 1.0 {
            break;
        }
        if t_max_x < t_max_z {
            ix += 1;
            t = t_max_x;
            t_max_x += t_delta_x;
        } else if t_max_z < t_max_x {
            iz = (iz as i64 + step_z) as u32;
            t = t_max_z;
            t_max_z += t_delta_z;
        } else {
            // Through a node: both steps at once (the node value is shared).
            ix += 1;
            iz = (iz as i64 + step_z) as u32;
            t = t_max_x;
            t_max_x += t_delta_x;
            t_max_z += t_delta_z;
        }
        if ix >= w || iz >= d {
            break;
        }
    }
    best
}

/// Maximum of the bilinear terrace value of cell `(ix, iz)` along
/// `a + t * dir` for `t` in `t0..=t1`.
fn cell_max(
    map: &MapLayers,
    ix: u32,
    iz: u32,
    a: [f64; 2],
    dir: [f64; 2],
    t0: f64,
    t1: f64,
) -> f64 {
    let [v00, v10, v01, v11] = corners(map, ix, iz);
    let pu = a[0] - ix as f64;
    let pw = a[1] - iz as f64;
    let at = |t: f64| bilinear(map, ix, iz, pu + dir[0] * t, pw + dir[1] * t);
    let mut m = at(t0).max(at(t1));
    let k = v00 - v10 - v01 + v11;
    let c = k * dir[0] * dir[1];
    if c != 0.0 {
        let lin = (v10 - v00) * dir[0] + (v01 - v00) * dir[1] + k * (pu * dir[1] + pw * dir[0]);
        let tv = -lin / (2.0 * c);
        if tv > t0 && tv < t1 {
            m = m.max(at(tv));
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plateau() -> MapLayers {
        // 8x8 cells, level 1 on nodes x in 3..=4.
        let mut m = MapLayers::new(8, 8).unwrap();
        for z in 0..=8u32 {
            for x in 3..=4u32 {
                let i = m.index(x, z).unwrap();
                m.level[i] = 1.0;
            }
        }
        m
    }

    #[test]
    fn low_ground_does_not_see_across_a_wall() {
        let m = plateau();
        let r = PathingRules::DEFAULT;
        assert!(!line_of_sight(&m, [0.5, 4.0], [7.5, 4.0], &r));
        assert!(!line_of_sight(&m, [7.5, 4.0], [0.5, 4.0], &r));
        assert!(line_of_sight(&m, [0.5, 1.0], [2.0, 7.0], &r));
        // From the top, both sides are visible.
        assert!(line_of_sight(&m, [3.5, 4.0], [0.5, 4.0], &r));
        assert!(line_of_sight(&m, [3.5, 4.0], [7.5, 0.5], &r));
        // Looking up onto the plateau is blocked.
        assert!(!line_of_sight(&m, [0.5, 4.0], [3.5, 4.0], &r));
        // Unless the viewer may look one level up.
        let up = r.with_sight_levels_above(1);
        assert!(line_of_sight(&m, [0.5, 4.0], [7.5, 4.0], &up));
    }

    #[test]
    fn bad_points_are_not_visible() {
        let m = plateau();
        let r = PathingRules::DEFAULT;
        assert!(!line_of_sight(&m, [f32::NAN, 0.0], [1.0, 1.0], &r));
        assert!(!line_of_sight(&m, [0.0, 0.0], [1.0, f32::INFINITY], &r));
        assert_eq!(level_at(&m, [3.5, 0.0]), Some(1));
        assert_eq!(level_at(&m, [-5.0, 0.0]), Some(0));
    }
}
