//! Derived data of the map kind: pathing bits on hand-built maps, the
//! high-ground map, line of sight over cliff levels and level colliders.

use isoterra_field::map::{MapLayers, PathingOverride};
use isoterra_world::{
    DEFAULT_COLLIDER_TOLERANCE, PathingGrid, PathingRules, WorldError, high_ground, level_at,
    level_colliders, line_of_sight, pathing_grid,
};
use proptest::prelude::*;

const WALK: u8 = PathingGrid::WALK;
const FLY: u8 = PathingGrid::FLY;
const BUILD: u8 = PathingGrid::BUILD;
const SHALLOW: u8 = PathingGrid::SHALLOW_WATER;
const DEEP: u8 = PathingGrid::DEEP_WATER;
const LAND: u8 = WALK | FLY | BUILD;

fn set(m: &mut MapLayers, x: u32, z: u32, f: impl FnOnce(&mut MapLayers, usize)) {
    let i = m.index(x, z).unwrap();
    f(m, i);
}

/// 12 x 6 cells with level 1 on the nodes x in 6..=12.
fn plateau() -> MapLayers {
    let mut m = MapLayers::new(12, 6).unwrap();
    for z in 0..=6 {
        for x in 6..=12 {
            set(&mut m, x, z, |m, i| m.level[i] = 1.0);
        }
    }
    m
}

fn grid(m: &MapLayers) -> PathingGrid {
    pathing_grid(m, &PathingRules::DEFAULT).unwrap()
}

#[test]
fn flat_land_is_walkable_flyable_buildable() {
    let m = MapLayers::new(5, 4).unwrap();
    let g = grid(&m);
    assert_eq!((g.width_cells(), g.depth_cells()), (5, 4));
    assert!(g.cells().iter().all(|&b| b == LAND));
    assert_eq!(g.count(LAND), 20);
    assert_eq!(g.get(5, 0), None);
    assert!(!g.has(0, 4, WALK));
}

#[test]
fn plateau_rim_cells_are_cliff_walls() {
    let m = plateau();
    let g = grid(&m);
    for z in 0..6 {
        for x in 0..12 {
            let b = g.get(x, z).unwrap();
            if x == 5 {
                // Corners at x = 5 (level 0) and x = 6 (level 1), softness 0.
                assert_eq!(b, FLY, "rim cell ({x}, {z})");
            } else {
                assert_eq!(b, LAND, "cell ({x}, {z})");
            }
        }
    }
    let hg = high_ground(&m);
    assert_eq!(hg.len(), 72);
    assert_eq!(hg[5], 0, "a rim cell counts as the lower level");
    assert_eq!(hg[6], 1);
    assert_eq!(hg[0], 0);
}

#[test]
fn a_ramp_is_walkable_and_its_sides_are_walls() {
    // Level rises from 0 at x = 3 to 1 at x = 6 across z in 2..=4, softness 1
    // on the ramp nodes; the rest of x >= 6 is a plateau with vertical walls.
    let mut m = MapLayers::new(10, 6).unwrap();
    for z in 0..=6u32 {
        for x in 0..=10u32 {
            let level = if x >= 6 {
                1.0
            } else if (2..=4).contains(&z) && x > 3 {
                (x as f32 - 3.0) / 3.0
            } else {
                0.0
            };
            let soft = if (2..=4).contains(&z) && (3..=6).contains(&x) {
                1.0
            } else {
                0.0
            };
            set(&mut m, x, z, |m, i| {
                m.level[i] = level;
                m.softness[i] = soft;
            });
        }
    }
    let g = grid(&m);
    // The ramp cells (z in 2..4) are walkable all the way up.
    for z in 2..4 {
        for x in 0..10 {
            assert!(g.has(x, z, WALK), "ramp cell ({x}, {z})");
        }
    }
    // Beside the ramp, the rim (cells x = 4, 5 where the level changes) is a wall.
    assert_eq!(g.get(5, 0), Some(FLY));
    assert_eq!(g.get(5, 5), Some(FLY));
    // The ramp's side cells mix soft and hard nodes across a level change.
    assert!(!g.has(5, 1, WALK));
    assert!(!g.has(5, 4, WALK));
    // A steeper rule makes the ramp unwalkable.
    let strict = PathingRules::DEFAULT.with_max_walk_slope(0.2);
    let g = pathing_grid(&m, &strict).unwrap();
    assert!(!g.has(4, 3, WALK));
    assert!(g.has(1, 3, WALK));
}

#[test]
fn steep_height_offsets_block_walking_and_building() {
    let mut m = MapLayers::new(6, 6).unwrap();
    set(&mut m, 3, 3, |m, i| m.height[i] = 1.5);
    let g = grid(&m);
    for (x, z) in [(2, 2), (3, 2), (2, 3), (3, 3)] {
        assert_eq!(g.get(x, z), Some(FLY), "cell ({x}, {z})");
    }
    assert_eq!(g.get(1, 1), Some(LAND));
    // A gentle bump is fine.
    set(&mut m, 3, 3, |m, i| m.height[i] = 0.8);
    assert_eq!(grid(&m).get(2, 2), Some(LAND));
}

#[test]
fn shallow_water_is_walkable_deep_water_is_not() {
    let mut m = MapLayers::new(8, 4).unwrap();
    for z in 0..=4 {
        for x in 0..=2 {
            set(&mut m, x, z, |m, i| m.water[i] = 0.3);
        }
        for x in 5..=8 {
            set(&mut m, x, z, |m, i| m.water[i] = 2.0);
        }
    }
    let g = grid(&m);
    for z in 0..4 {
        assert_eq!(g.get(0, z), Some(WALK | FLY | SHALLOW));
        assert_eq!(g.get(1, z), Some(WALK | FLY | SHALLOW));
        // Shore cell: one side wet, mean depth 0.15.
        assert_eq!(g.get(2, z), Some(WALK | FLY | SHALLOW));
        assert_eq!(g.get(3, z), Some(LAND));
        // Shore of the deep water: mean depth 1.0 > 0.5.
        assert_eq!(g.get(4, z), Some(FLY | DEEP));
        assert_eq!(g.get(6, z), Some(FLY | DEEP));
    }
    assert_eq!(g.count(SHALLOW), 12);
    assert_eq!(g.count(DEEP), 16);
    // Water below the ground is no water.
    let mut dry = MapLayers::new(2, 2).unwrap();
    dry.water.iter_mut().for_each(|w| *w = -0.5);
    assert!(grid(&dry).cells().iter().all(|&b| b == LAND));
}

#[test]
fn chasms_are_neither_walkable_nor_buildable_but_flyable() {
    let mut m = MapLayers::new(5, 5).unwrap();
    set(&mut m, 2, 2, |m, i| m.ground[i] = -1.0);
    let g = grid(&m);
    for (x, z) in [(1, 1), (2, 1), (1, 2), (2, 2)] {
        assert_eq!(g.get(x, z), Some(FLY));
    }
    assert_eq!(g.get(3, 3), Some(LAND));
    assert_eq!(g.count(LAND), 21);
}

#[test]
fn overrides_remove_capabilities() {
    let mut m = MapLayers::new(6, 6).unwrap();
    set(&mut m, 1, 1, |m, i| {
        m.pathing[i] = PathingOverride::NO_BUILD
    });
    set(&mut m, 4, 4, |m, i| {
        m.pathing[i] = PathingOverride::NO_WALK | PathingOverride::NO_FLY
    });
    let g = grid(&m);
    assert_eq!(g.get(0, 0), Some(WALK | FLY));
    assert_eq!(g.get(1, 1), Some(WALK | FLY));
    assert_eq!(g.get(2, 2), Some(LAND));
    assert_eq!(g.get(3, 3), Some(BUILD));
    assert_eq!(g.get(4, 4), Some(BUILD));
    assert_eq!(g.get(5, 5), Some(LAND));
    m.pathing.iter_mut().for_each(|p| *p = PathingOverride::ALL);
    assert!(grid(&m).cells().iter().all(|&b| b == 0));
}

#[test]
fn bad_rules_and_layers_are_errors() {
    let m = MapLayers::new(3, 3).unwrap();
    for rules in [
        PathingRules::DEFAULT.with_level_height(0.0),
        PathingRules::DEFAULT.with_level_height(f32::NAN),
        PathingRules::DEFAULT.with_max_walk_slope(-1.0),
        PathingRules::DEFAULT.with_deep_water_depth(-0.1),
        PathingRules::DEFAULT.with_slope_softness(2.0),
        PathingRules::DEFAULT.with_sight_levels_above(16),
    ] {
        assert!(matches!(
            pathing_grid(&m, &rules),
            Err(WorldError::InvalidParameter { .. })
        ));
        assert!(!line_of_sight(&m, [0.0, 0.0], [1.0, 1.0], &rules));
    }
    let mut bad = m.clone();
    bad.level.pop();
    assert!(pathing_grid(&bad, &PathingRules::DEFAULT).is_err());
    assert!(high_ground(&bad).is_empty());
    assert!(!line_of_sight(
        &bad,
        [0.0, 0.0],
        [1.0, 1.0],
        &PathingRules::DEFAULT
    ));
    assert!(level_colliders(&bad, 0.05).is_err());
    assert!(level_colliders(&m, -1.0).is_err());
    assert!(level_colliders(&m, f32::NAN).is_err());
    assert!(PathingGrid::from_cells(2, 2, vec![0; 3]).is_err());
    assert!(PathingGrid::from_cells(2, 2, vec![32; 4]).is_err());
    assert!(PathingGrid::from_cells(0, 2, vec![]).is_err());
    assert_eq!(
        PathingGrid::from_cells(2, 1, vec![1, 31])
            .unwrap()
            .get(1, 0),
        Some(31)
    );
}

// ---------------------------------------------------------------------------
// Line of sight
// ---------------------------------------------------------------------------

#[test]
fn high_ground_sees_low_ground_and_not_the_reverse() {
    let m = plateau();
    let r = PathingRules::DEFAULT;
    let low = [2.0, 3.0];
    let high = [9.0, 3.0];
    assert_eq!(level_at(&m, low), Some(0));
    assert_eq!(level_at(&m, high), Some(1));
    assert!(line_of_sight(&m, high, low, &r));
    assert!(!line_of_sight(&m, low, high, &r));
    // Along the low ground, parallel to the rim.
    assert!(line_of_sight(&m, [1.0, 0.5], [5.0, 5.5], &r));
    // On the plateau.
    assert!(line_of_sight(&m, [7.0, 0.5], [11.5, 5.5], &r));
    // Just below the rim (terrace value 0.5 is level 1 at x = 5.5).
    assert!(line_of_sight(&m, [1.0, 2.0], [5.4, 2.0], &r));
    assert!(!line_of_sight(&m, [1.0, 2.0], [5.6, 2.0], &r));
}

#[test]
fn a_ridge_blocks_sight_between_two_low_points() {
    let mut m = MapLayers::new(10, 10).unwrap();
    for z in 0..=10 {
        set(&mut m, 5, z, |m, i| m.level[i] = 2.0);
    }
    let r = PathingRules::DEFAULT;
    assert!(!line_of_sight(&m, [1.0, 1.0], [9.0, 8.0], &r));
    assert!(!line_of_sight(&m, [9.0, 8.0], [1.0, 1.0], &r));
    // Diagonal through nodes exactly.
    assert!(!line_of_sight(&m, [0.0, 0.0], [10.0, 10.0], &r));
    assert!(line_of_sight(&m, [1.0, 1.0], [3.0, 9.0], &r));
    // Seeing one level up is not enough for a two-level ridge.
    assert!(!line_of_sight(
        &m,
        [1.0, 1.0],
        [9.0, 8.0],
        &r.with_sight_levels_above(1)
    ));
    assert!(line_of_sight(
        &m,
        [1.0, 1.0],
        [9.0, 8.0],
        &r.with_sight_levels_above(2)
    ));
    // Points outside the map are clamped onto it.
    assert!(line_of_sight(&m, [-3.0, 1.0], [2.0, 20.0], &r));
}

/// The test's own bilinear terrace value (independent of the library).
fn terrace(m: &MapLayers, p: [f64; 2]) -> f64 {
    let (w, d) = (m.width_cells() as f64, m.depth_cells() as f64);
    let x = p[0].clamp(0.0, w);
    let z = p[1].clamp(0.0, d);
    let ix = (x.floor() as u32).min(m.width_cells() - 1);
    let iz = (z.floor() as u32).min(m.depth_cells() - 1);
    let (u, v) = (x - ix as f64, z - iz as f64);
    let g = |dx: u32, dz: u32| m.level[m.index(ix + dx, iz + dz).unwrap()] as f64;
    let a = g(0, 0) * (1.0 - u) + g(1, 0) * u;
    let b = g(0, 1) * (1.0 - u) + g(1, 1) * u;
    a * (1.0 - v) + b * v
}

fn level_map(w: u32, d: u32, levels: &[u8]) -> MapLayers {
    let mut m = MapLayers::new(w, d).unwrap();
    for (i, l) in m.level.iter_mut().enumerate() {
        *l = levels[i % levels.len()] as f32;
    }
    m
}

fn point() -> impl Strategy<Value = [f32; 2]> {
    (0.0f32..12.0, 0.0f32..9.0).prop_map(|(x, z)| [x, z])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn sight_is_symmetric_on_equal_levels(
        levels in prop::collection::vec(0u8..3, 130),
        a in point(),
        b in point(),
    ) {
        let m = level_map(12, 9, &levels);
        let r = PathingRules::DEFAULT;
        if level_at(&m, a) == level_at(&m, b) {
            prop_assert_eq!(line_of_sight(&m, a, b, &r), line_of_sight(&m, b, a, &r));
        }
    }

    #[test]
    fn sight_never_passes_a_higher_rim(
        levels in prop::collection::vec(0u8..4, 130),
        a in point(),
        b in point(),
    ) {
        let m = level_map(12, 9, &levels);
        let r = PathingRules::DEFAULT;
        let viewer = level_at(&m, a).unwrap() as f64;
        let (a64, b64) = ([a[0] as f64, a[1] as f64], [b[0] as f64, b[1] as f64]);
        let blocked = (0..=512).any(|k| {
            let t = k as f64 / 512.0;
            let p = [a64[0] + (b64[0] - a64[0]) * t, a64[1] + (b64[1] - a64[1]) * t];
            terrace(&m, p) >= viewer + 0.5 + 1e-6
        });
        if blocked {
            prop_assert!(!line_of_sight(&m, a, b, &r));
        }
        // And when every sample stays well below the rim, the library agrees
        // unless the true maximum lies between samples (checked loosely).
        let clear = (0..=512).all(|k| {
            let t = k as f64 / 512.0;
            let p = [a64[0] + (b64[0] - a64[0]) * t, a64[1] + (b64[1] - a64[1]) * t];
            terrace(&m, p) < viewer + 0.4
        });
        if clear {
            prop_assert!(line_of_sight(&m, a, b, &r));
        }
    }

    #[test]
    fn a_full_wall_between_two_points_always_blocks(
        x in 2u32..10,
        low in 0u8..3,
        az in 0.0f32..9.0,
        bz in 0.0f32..9.0,
        ax in 0.0f32..1.5,
        bx in 10.5f32..12.0,
    ) {
        let mut m = level_map(12, 9, &[low]);
        for z in 0..=9 {
            let i = m.index(x, z).unwrap();
            m.level[i] = (low + 1) as f32;
        }
        let r = PathingRules::DEFAULT;
        prop_assert!(!line_of_sight(&m, [ax, az], [bx, bz], &r));
        prop_assert!(!line_of_sight(&m, [bx, bz], [ax, az], &r));
    }
}

// ---------------------------------------------------------------------------
// Colliders
// ---------------------------------------------------------------------------

fn area(p: &[[f32; 2]]) -> f64 {
    let n = p.len();
    (0..n)
        .map(|i| {
            let (a, b) = (p[i], p[(i + 1) % n]);
            a[0] as f64 * b[1] as f64 - b[0] as f64 * a[1] as f64
        })
        .sum::<f64>()
        / 2.0
}

fn disc_map(n: u32, r: f32) -> MapLayers {
    let mut m = MapLayers::new(n, n).unwrap();
    let c = n as f32 / 2.0;
    for z in 0..=n {
        for x in 0..=n {
            let d = ((x as f32 - c).powi(2) + (z as f32 - c).powi(2)).sqrt();
            set(&mut m, x, z, |m, i| {
                m.level[i] = (r - d + 0.5).clamp(0.0, 1.0)
            });
        }
    }
    m
}

#[test]
fn a_round_plateau_has_one_round_counter_clockwise_collider() {
    let m = disc_map(32, 9.0);
    let c = level_colliders(&m, DEFAULT_COLLIDER_TOLERANCE).unwrap();
    assert_eq!(c.len(), 2);
    assert_eq!(c[0].level, 0);
    assert_eq!(c[0].polylines.len(), 1);
    assert!((area(&c[0].polylines[0]) - 32.0 * 32.0).abs() < 1e-3);
    assert_eq!(
        c[0].polylines[0].len(),
        4,
        "the map border simplifies to its corners"
    );
    assert_eq!(c[1].level, 1);
    assert_eq!(c[1].polylines.len(), 1);
    let a = area(&c[1].polylines[0]);
    assert!((a - std::f64::consts::PI * 81.0).abs() < 4.0, "area {a}");
    let raw = level_colliders(&m, 0.0).unwrap();
    assert!(raw[1].polylines[0].len() > c[1].polylines[0].len());
}

#[test]
fn chasms_are_holes_in_the_ground_contour() {
    let mut m = MapLayers::new(10, 10).unwrap();
    for (x, z) in [(4, 4), (5, 4), (4, 5), (5, 5)] {
        set(&mut m, x, z, |m, i| m.ground[i] = -1.0);
    }
    let c = level_colliders(&m, 0.05).unwrap();
    assert_eq!(c.len(), 1);
    let mut areas: Vec<f64> = c[0].polylines.iter().map(|p| area(p)).collect();
    areas.sort_by(f64::total_cmp);
    assert_eq!(areas.len(), 2);
    assert!(areas[0] < 0.0, "hole runs clockwise");
    assert!(areas[1] > 99.0);
}

#[test]
fn a_plateau_on_the_border_is_closed_along_the_border() {
    let m = plateau();
    let c = level_colliders(&m, 0.05).unwrap();
    let l1 = &c[1];
    assert_eq!(l1.polylines.len(), 1);
    // Rim at x = 5.5, border at x = 12: 6.5 x 6 cells.
    assert!((area(&l1.polylines[0]) - 39.0).abs() < 1e-4);
    // No land at all: no level 0 contour.
    let mut none = MapLayers::new(3, 3).unwrap();
    none.ground.iter_mut().for_each(|g| *g = -1.0);
    assert!(level_colliders(&none, 0.05).unwrap().is_empty());
}

fn seg_dist(p: [f32; 2], a: [f32; 2], b: [f32; 2]) -> f64 {
    let (px, pz) = (p[0] as f64 - a[0] as f64, p[1] as f64 - a[1] as f64);
    let (bx, bz) = (b[0] as f64 - a[0] as f64, b[1] as f64 - a[1] as f64);
    let l2 = bx * bx + bz * bz;
    let t = if l2 > 0.0 {
        ((px * bx + pz * bz) / l2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    ((px - t * bx).powi(2) + (pz - t * bz).powi(2)).sqrt()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn colliders_are_closed_and_within_tolerance(
        levels in prop::collection::vec(0.0f32..3.0, 100),
        ground in prop::collection::vec(-0.5f32..1.0, 100),
        tol in 0.01f32..0.3,
    ) {
        let mut m = MapLayers::new(9, 9).unwrap();
        m.level.copy_from_slice(&levels);
        m.ground.copy_from_slice(&ground);
        let raw = level_colliders(&m, 0.0).unwrap();
        let simple = level_colliders(&m, tol).unwrap();
        prop_assert_eq!(raw.len(), simple.len());
        for (r, s) in raw.iter().zip(&simple) {
            prop_assert_eq!(r.level, s.level);
            for line in &s.polylines {
                prop_assert!(line.len() >= 3);
                for p in line {
                    prop_assert!((0.0..=9.0).contains(&p[0]) && (0.0..=9.0).contains(&p[1]));
                }
            }
            for line in &r.polylines {
                for &p in line {
                    let d = s
                        .polylines
                        .iter()
                        .flat_map(|l| (0..l.len()).map(move |i| (l[i], l[(i + 1) % l.len()])))
                        .map(|(a, b)| seg_dist(p, a, b))
                        .fold(f64::INFINITY, f64::min);
                    prop_assert!(d <= tol as f64 + 1e-4, "point {:?} is {} from the collider", p, d);
                }
            }
        }
    }
}
