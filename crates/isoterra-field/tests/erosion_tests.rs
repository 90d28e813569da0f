//! Erosion: the tiling rule (tiles agree bit for bit), determinism, mass
//! bookkeeping, peaks lowered, parameter errors.

use isoterra_field::erosion::{
    HydraulicParams, ThermalParams, erode_tile, hydraulic_erosion, thermal_erosion,
};
use isoterra_field::hash::Fnv1a64;
use isoterra_field::{Field2, FieldError, HeightGen, HeightParams, HeightPreset};
use proptest::prelude::*;

/// Small droplets so the margins (and the test) stay small.
fn small() -> HydraulicParams {
    HydraulicParams::DEFAULT
        .with_lifetime(8)
        .with_radius(2)
        .with_passes(2)
        .with_density(0.6)
}

/// World heights: hills with slopes of about one unit per cell.
fn world_height(seed: u64) -> impl Fn(i64, i64) -> f32 {
    let g = HeightGen::new(
        &HeightParams::preset(HeightPreset::Hills).with_height_scale(40.0),
        seed,
    )
    .unwrap();
    move |x, y| g.height_at(x as f32 * 4.0, y as f32 * 4.0)
}

fn region(h: &impl Fn(i64, i64) -> f32, origin: [i64; 2], dims: [u32; 2]) -> Field2 {
    Field2::from_fn(dims[0], dims[1], |x, y| {
        h(origin[0] + x as i64, origin[1] + y as i64)
    })
    .unwrap()
}

#[test]
fn margin_formula() {
    let p = small();
    assert_eq!(p.margin(), 2 * 2 * (8 + 2 + 2));
    assert_eq!(ThermalParams::DEFAULT.with_iterations(7).margin(), 7);
    // Out-of-range parameters saturate rather than overflow.
    assert_eq!(
        HydraulicParams::DEFAULT.with_lifetime(u32::MAX).margin(),
        u32::MAX
    );
}

#[test]
fn adjacent_tiles_agree_bitwise_with_each_other_and_the_whole_world() {
    let p = small();
    let h = world_height(3);
    let m = p.margin() as i64;
    // Tiles A (x 0..24) and B (x 23..47) share the column x = 23; C below A
    // shares the row y = 23.
    let a = erode_tile(&p, 9, [0, 0], [24, 24], &h).unwrap();
    let b = erode_tile(&p, 9, [23, 0], [24, 24], &h).unwrap();
    let c = erode_tile(&p, 9, [0, 23], [24, 24], &h).unwrap();
    let mut changed = 0;
    for j in 0..24usize {
        assert_eq!(a[j * 24 + 23].to_bits(), b[j * 24].to_bits(), "row {j}");
        assert_eq!(a[23 * 24 + j].to_bits(), c[j].to_bits(), "column {j}");
        if a[j * 24 + 23] != h(23, j as i64) {
            changed += 1;
        }
    }
    assert!(changed > 5, "erosion barely touched the border ({changed})");
    // The whole world at once (a region holding every grown tile).
    let origin = [-m - 5, -m - 3];
    let dims = [(47 + 2 * m + 9) as u32, (47 + 2 * m + 6) as u32];
    let mut world = region(&h, origin, dims);
    hydraulic_erosion(&mut world, origin, &p, 9).unwrap();
    let at = |x: i64, y: i64| world.get((x - origin[0]) as u32, (y - origin[1]) as u32);
    for j in 0..24i64 {
        for i in 0..24i64 {
            assert_eq!(
                a[(j * 24 + i) as usize].to_bits(),
                at(i, j).to_bits(),
                "A ({i}, {j})"
            );
            assert_eq!(
                b[(j * 24 + i) as usize].to_bits(),
                at(23 + i, j).to_bits(),
                "B ({i}, {j})"
            );
        }
    }
}

#[test]
fn a_margin_that_is_too_small_changes_the_result() {
    // The control for the test above: it is sensitive to the margin.
    let p = small();
    let h = world_height(3);
    let good = erode_tile(&p, 9, [0, 0], [24, 24], &h).unwrap();
    let mut bare = region(&h, [0, 0], [24, 24]);
    hydraulic_erosion(&mut bare, [0, 0], &p, 9).unwrap();
    let differ = good
        .iter()
        .zip(bare.values())
        .filter(|(a, b)| a.to_bits() != b.to_bits())
        .count();
    assert!(differ > 0);
}

#[test]
fn erosion_is_deterministic_and_seeded() {
    let p = small();
    let h = world_height(5);
    let base = region(&h, [100, -40], [48, 40]);
    let run = |seed| {
        let mut f = base.clone();
        let s = hydraulic_erosion(&mut f, [100, -40], &p, seed).unwrap();
        (f, s)
    };
    let (a, sa) = run(1);
    let (b, sb) = run(1);
    let (c, _) = run(2);
    assert_eq!(a, b);
    assert_eq!(sa, sb);
    assert_ne!(a, c);
    assert!(sa.droplets > 0);
}

#[test]
fn mass_bookkeeping_and_peaks() {
    let p = HydraulicParams::DEFAULT;
    let h = world_height(8);
    let before = region(&h, [0, 0], [96, 96]);
    let mut after = before.clone();
    let s = hydraulic_erosion(&mut after, [0, 0], &p, 4).unwrap();
    let sum = |f: &Field2| f.values().iter().map(|&v| v as f64).sum::<f64>();
    let change = sum(&after) - sum(&before);
    // Every unit taken is added to a droplet; every unit dropped is added to
    // the map; what droplets still carry when they stop leaves the map.
    assert!(
        (change - (s.deposited - s.eroded + s.limited)).abs() < 1e-3 * s.eroded + 1e-3,
        "change {change}, deposited {} eroded {}",
        s.deposited,
        s.eroded
    );
    assert!(s.eroded > 0.0 && s.deposited > 0.5 * s.eroded, "{s:?}");
    // The neighbourhood limit trims only a little.
    assert!(s.limited.abs() < 0.2 * s.eroded, "{s:?}");
    let max = |f: &Field2| f.values().iter().fold(f32::MIN, |a, &v| a.max(v));
    assert!(max(&after) < max(&before));
    assert!(after.values().iter().all(|v| v.is_finite()));
}

#[test]
fn thermal_erosion_conserves_mass_and_flattens_cliffs() {
    let mut f = Field2::from_fn(32, 32, |x, _| if x < 16 { 20.0 } else { 0.0 }).unwrap();
    let total: f64 = f.values().iter().map(|&v| v as f64).sum();
    thermal_erosion(&mut f, &ThermalParams::DEFAULT.with_iterations(200)).unwrap();
    let after: f64 = f.values().iter().map(|&v| v as f64).sum();
    assert!((after - total).abs() < 1e-2, "{total} -> {after}");
    let steepest = (0..31)
        .map(|x| (f.get(x, 10) - f.get(x + 1, 10)).abs())
        .fold(0.0f32, f32::max);
    assert!(steepest < 5.0, "{steepest}");
}

#[test]
fn thermal_tiles_agree_with_the_whole_field() {
    let p = ThermalParams::DEFAULT.with_iterations(6).with_talus(0.3);
    let h = world_height(2);
    let m = p.margin() as i64;
    let mut world = region(&h, [-20, -20], [80, 60]);
    thermal_erosion(&mut world, &p).unwrap();
    let mut tile = region(&h, [10 - m, 5 - m], [16 + 2 * m as u32, 16 + 2 * m as u32]);
    thermal_erosion(&mut tile, &p).unwrap();
    for j in 0..16i64 {
        for i in 0..16i64 {
            let t = tile.get((i + m) as u32, (j + m) as u32);
            let w = world.get((10 + i + 20) as u32, (5 + j + 20) as u32);
            assert_eq!(t.to_bits(), w.to_bits(), "({i}, {j})");
        }
    }
}

#[test]
fn bad_parameters_are_typed_errors_and_change_nothing() {
    let d = HydraulicParams::DEFAULT;
    let bad = [
        d.with_density(0.0),
        d.with_density(f32::NAN),
        d.with_density(1.5),
        d.with_passes(0),
        d.with_passes(65),
        d.with_lifetime(0),
        d.with_lifetime(1000),
        d.with_radius(0),
        d.with_radius(9),
        d.with_inertia(1.0),
        d.with_inertia(f32::NAN),
        d.with_capacity(0.0),
        d.with_capacity(f32::INFINITY),
        d.with_deposition(-0.1),
        d.with_erosion(f32::NAN),
        d.with_evaporation(1.0),
        d.with_gravity(f32::NAN),
    ];
    let before = Field2::from_fn(16, 16, |x, y| (x * y) as f32).unwrap();
    for p in bad {
        let mut f = before.clone();
        assert!(
            matches!(
                hydraulic_erosion(&mut f, [0, 0], &p, 1),
                Err(FieldError::InvalidParameter { .. })
            ),
            "{p:?}"
        );
        assert_eq!(f, before);
        assert!(erode_tile(&p, 1, [0, 0], [4, 4], |_, _| 0.0).is_err());
    }
    let t = ThermalParams::DEFAULT;
    for p in [
        t.with_talus(f32::NAN),
        t.with_talus(-1.0),
        t.with_rate(0.0),
        t.with_rate(1.5),
        t.with_iterations(0),
    ] {
        let mut f = before.clone();
        assert!(thermal_erosion(&mut f, &p).is_err(), "{p:?}");
        assert_eq!(f, before);
    }
    assert!(erode_tile(&d, 1, [0, 0], [0, 4], |_, _| 0.0).is_err());
    // Extreme world coordinates do not overflow.
    let small = small();
    let v = erode_tile(&small, 1, [i64::MIN, i64::MAX - 3], [4, 4], |x, y| {
        ((x ^ y) & 7) as f32
    })
    .unwrap();
    assert_eq!(v.len(), 16);
    assert!(erode_tile(&d, 1, [0, 0], [2, 2], |_, _| f32::NAN).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn any_two_overlapping_tiles_agree_where_they_overlap(
        seed in any::<u64>(),
        ax in -40i64..40, ay in -40i64..40,
        dx in 1i64..12, dy in -11i64..12,
    ) {
        let p = HydraulicParams::DEFAULT.with_lifetime(5).with_radius(1).with_passes(1).with_density(0.8);
        let h = world_height(seed);
        let a = erode_tile(&p, seed, [ax, ay], [12, 12], &h).unwrap();
        let b = erode_tile(&p, seed, [ax + dx, ay + dy], [12, 12], &h).unwrap();
        for j in 0..12i64 {
            for i in 0..12i64 {
                let (x, y) = (ax + i, ay + j);
                let (bi, bj) = (x - ax - dx, y - ay - dy);
                if (0..12).contains(&bi) && (0..12).contains(&bj) {
                    prop_assert_eq!(a[(j * 12 + i) as usize].to_bits(), b[(bj * 12 + bi) as usize].to_bits());
                }
            }
        }
    }
}

#[test]
fn golden_hash_pins_the_droplet_model() {
    // Changes only when the erosion model changes (which changes every
    // eroded world): FNV-1a of the eroded bits.
    let h = world_height(5);
    let mut f = region(&h, [100, -40], [48, 40]);
    hydraulic_erosion(&mut f, [100, -40], &small(), 11).unwrap();
    thermal_erosion(&mut f, &ThermalParams::DEFAULT.with_iterations(5)).unwrap();
    let mut fnv = Fnv1a64::new();
    for v in f.values() {
        fnv.write(&v.to_bits().to_le_bytes());
    }
    let hash = fnv.finish();
    assert_eq!(hash, 0xa1b1_10f6_6a1c_f5a0, "got {hash:#018x}");
}
