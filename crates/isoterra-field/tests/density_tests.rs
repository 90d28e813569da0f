//! Tests of the density functions and the voxel generator.

use isoterra_field::density::{
    capsule, cuboid, half_space, height_field, intersect, smooth_intersect, smooth_max, smooth_min,
    smooth_subtract, smooth_union, sphere, subtract, union,
};
use isoterra_field::{DensitySampler, FieldError, VoxelGen, VoxelPreset, fill_density};
use proptest::prelude::*;

fn presets() -> impl Iterator<Item = VoxelGen> {
    VoxelPreset::ALL.into_iter().map(|p| {
        VoxelGen::new(p, 1234)
            .with_ground_amplitude(16.0)
            .with_planet_radius(10.0)
    })
}

#[test]
fn chunks_filled_separately_equal_one_big_fill_bitwise() {
    let n = 8u32;
    for g in presets() {
        let big_dims = [2 * n + 1; 3];
        let origin = [-8.0, -8.0, -8.0];
        let mut big = vec![0.0; (big_dims[0] * big_dims[1] * big_dims[2]) as usize];
        fill_density(&g, origin, 1.0, big_dims, &mut big).unwrap();
        let mut solid = 0;
        for cz in 0..2u32 {
            for cy in 0..2u32 {
                for cx in 0..2u32 {
                    // Each chunk reads its nodes plus one shared row on each + side.
                    let dims = [n + 1; 3];
                    let o = [
                        origin[0] + (cx * n) as f32,
                        origin[1] + (cy * n) as f32,
                        origin[2] + (cz * n) as f32,
                    ];
                    let mut part = vec![0.0; ((n + 1) * (n + 1) * (n + 1)) as usize];
                    fill_density(&g, o, 1.0, dims, &mut part).unwrap();
                    for k in 0..=n {
                        for j in 0..=n {
                            for i in 0..=n {
                                let a = part[((k * (n + 1) + j) * (n + 1) + i) as usize];
                                let (bi, bj, bk) = (cx * n + i, cy * n + j, cz * n + k);
                                let b = big[((bk * big_dims[1] + bj) * big_dims[0] + bi) as usize];
                                assert_eq!(
                                    a.to_bits(),
                                    b.to_bits(),
                                    "{:?} chunk {cx},{cy},{cz}",
                                    g.preset
                                );
                                solid += (a >= 0.0) as u32;
                            }
                        }
                    }
                }
            }
        }
        assert!(solid > 0, "{:?} has no solid near the origin", g.preset);
    }
}

#[test]
fn point_api_matches_the_batch_fill_bitwise() {
    for g in presets() {
        let s = DensitySampler::new(&g).unwrap();
        let dims = [13, 5, 7];
        let origin = [3.5, -4.0, 100.25];
        let step = 0.5;
        let mut out = vec![0.0; 13 * 5 * 7];
        s.fill(origin, step, dims, &mut out).unwrap();
        for k in 0..7 {
            for j in 0..5 {
                for i in 0..13 {
                    let p = [
                        origin[0] + i as f32 * step,
                        origin[1] + j as f32 * step,
                        origin[2] + k as f32 * step,
                    ];
                    assert_eq!(
                        s.density(p).to_bits(),
                        out[(k * 5 + j) * 13 + i].to_bits(),
                        "{:?} at {p:?}",
                        g.preset
                    );
                }
            }
        }
    }
}

#[test]
fn fill_rejects_bad_grids_and_writes_nothing() {
    let g = VoxelGen::DEFAULT;
    let mut out = vec![7.0; 8];
    assert!(fill_density(&g, [0.0; 3], 1.0, [2, 2, 3], &mut out).is_err());
    assert!(fill_density(&g, [f32::NAN, 0.0, 0.0], 1.0, [2, 2, 2], &mut out).is_err());
    assert!(fill_density(&g, [0.0; 3], 0.0, [2, 2, 2], &mut out).is_err());
    assert!(fill_density(&g, [0.0; 3], f32::INFINITY, [2, 2, 2], &mut out).is_err());
    assert!(fill_density(&g, [3.0e38, 0.0, 0.0], 1.0e38, [2, 2, 2], &mut out).is_err());
    assert!(out.iter().all(|&v| v == 7.0));
    assert!(
        fill_density(
            &g.with_falloff(f32::NAN),
            [0.0; 3],
            1.0,
            [2, 2, 2],
            &mut out
        )
        .is_err()
    );
}

#[test]
fn validation_names_bad_fields() {
    let d = VoxelGen::DEFAULT;
    assert!(d.validate().is_ok());
    for (bad, name) in [
        (d.with_ground_level(f32::NAN), "ground_level"),
        (d.with_ground_amplitude(0.0), "ground_amplitude"),
        (d.with_cave_frequency(0.0), "cave_frequency"),
        (d.with_cave_frequency(2.0), "cave_frequency"),
        (d.with_cave_threshold(1.0), "cave_threshold"),
        (d.with_cave_threshold(-0.1), "cave_threshold"),
        (d.with_overhang_strength(f32::INFINITY), "overhang_strength"),
        (d.with_planet_radius(-1.0), "planet_radius"),
        (d.with_falloff(0.0), "falloff"),
    ] {
        match bad.validate() {
            Err(FieldError::InvalidParameter { name: got, .. }) => assert_eq!(got, name),
            other => panic!("{name}: {other:?}"),
        }
        assert!(bad.sampler().is_err());
    }
}

#[test]
fn presets_parse_and_print() {
    for p in VoxelPreset::ALL {
        assert_eq!(p.name().parse::<VoxelPreset>().unwrap(), p);
        assert_eq!(p.to_string(), p.name());
    }
    assert_eq!(
        "  Planet ".parse::<VoxelPreset>().unwrap(),
        VoxelPreset::Planet
    );
    let e = "lava".parse::<VoxelPreset>().unwrap_err().to_string();
    assert!(e.contains("caves, overhangs, planet"), "{e}");
}

#[test]
fn presets_have_their_shape() {
    // Caves: solid deep down, air high up.
    let s = VoxelGen::new(VoxelPreset::Caves, 3)
        .with_cave_threshold(0.0)
        .sampler()
        .unwrap();
    assert_eq!(s.density([0.0, -200.0, 0.0]), 1.0);
    assert_eq!(s.density([0.0, 200.0, 0.0]), -1.0);
    // Planet: solid at the centre, air far away.
    let s = VoxelGen::new(VoxelPreset::Planet, 3)
        .with_cave_threshold(0.0)
        .sampler()
        .unwrap();
    assert_eq!(s.density([0.0; 3]), 1.0);
    assert_eq!(s.density([0.0, 500.0, 0.0]), -1.0);
    // Overhangs: solid somewhere above air in one column (an overhang) for
    // some column near the origin.
    let s = VoxelGen::new(VoxelPreset::Overhangs, 9).sampler().unwrap();
    let mut found = false;
    'outer: for x in -40..40 {
        for z in (-40..40).step_by(4) {
            let mut seen_air = false;
            for y in -60..60 {
                let v = s.density([x as f32, y as f32, z as f32]);
                if v < 0.0 {
                    seen_air = true;
                } else if seen_air {
                    found = true;
                    break 'outer;
                }
            }
        }
    }
    assert!(found, "no overhang found");
    // Tunnels carve air below ground in the caves preset.
    let s = VoxelGen::new(VoxelPreset::Caves, 3)
        .with_cave_threshold(0.15)
        .sampler()
        .unwrap();
    let deep_air = (-30..30)
        .flat_map(|x| (-30..30).map(move |z| [x as f32 * 2.0, -80.0, z as f32 * 2.0]))
        .filter(|&p| s.density(p) < 0.0)
        .count();
    assert!(deep_air > 0);
}

#[test]
fn csg_shapes_have_the_documented_values() {
    assert_eq!(sphere([3.0, 0.0, 0.0], [0.0; 3], 2.0), -1.0);
    assert_eq!(cuboid([0.0; 3], [0.0; 3], [1.0, 2.0, 3.0]), 1.0);
    assert_eq!(cuboid([3.0, 0.0, 0.0], [0.0; 3], [1.0, 2.0, 3.0]), -2.0);
    assert_eq!(cuboid([4.0, 6.0, 0.0], [0.0; 3], [1.0, 2.0, 3.0]), -5.0);
    assert_eq!(
        capsule([5.0, 3.0, 0.0], [0.0; 3], [10.0, 0.0, 0.0], 1.0),
        -2.0
    );
    assert_eq!(
        capsule([-3.0, 0.0, 0.0], [0.0; 3], [10.0, 0.0, 0.0], 1.0),
        -2.0
    );
    assert_eq!(capsule([1.0, 0.0, 0.0], [0.0; 3], [0.0; 3], 2.0), 1.0);
    assert_eq!(half_space([0.0, 2.0, 0.0], [0.0, 1.0, 0.0], 5.0), 3.0);
    assert_eq!(height_field(10.0, 4.0), 6.0);
    assert_eq!(union(-1.0, 2.0), 2.0);
    assert_eq!(intersect(-1.0, 2.0), -1.0);
    assert_eq!(subtract(1.0, 0.5), -0.5);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn densities_stay_in_range(
        p in prop::array::uniform3(-500.0f32..500.0),
        seed in any::<u64>(),
        preset in prop::sample::select(VoxelPreset::ALL.to_vec()),
    ) {
        let s = VoxelGen::new(preset, seed).sampler().unwrap();
        let v = s.density(p);
        prop_assert!((-1.0..=1.0).contains(&v));
        prop_assert_eq!(s.density(p).to_bits(), v.to_bits());
    }

    #[test]
    fn smooth_operators_bound_the_sharp_ones(
        a in -10.0f32..10.0,
        b in -10.0f32..10.0,
        k in 0.0f32..4.0,
    ) {
        prop_assert!(smooth_min(a, b, k) <= a.min(b));
        prop_assert!(smooth_min(a, b, k) >= a.min(b) - k * 0.25 - 1e-5);
        prop_assert!(smooth_max(a, b, k) >= a.max(b));
        prop_assert!(smooth_union(a, b, k) >= union(a, b));
        prop_assert!(smooth_intersect(a, b, k) <= intersect(a, b));
        prop_assert!(smooth_subtract(a, b, k) <= subtract(a, b));
        if (a - b).abs() >= k {
            prop_assert_eq!(smooth_min(a, b, k), a.min(b));
        }
    }

    #[test]
    fn sphere_is_a_distance(p in prop::array::uniform3(-5.0f32..5.0), r in 0.1f32..4.0) {
        let d = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
        prop_assert!((sphere(p, [0.0; 3], r) - (r - d)).abs() < 1e-5);
        // A cube that fits inside the ball is inside it.
        let h = r / 2.0;
        if cuboid(p, [0.0; 3], [h; 3]) > 0.0 {
            prop_assert!(sphere(p, [0.0; 3], r) > 0.0);
        }
    }
}

#[cfg(feature = "serde")]
#[test]
fn generator_round_trips_through_json() {
    let g = VoxelGen::new(VoxelPreset::Overhangs, 99).with_falloff(3.0);
    let s = serde_json::to_string(&g).unwrap();
    assert!(s.contains("\"overhangs\""), "{s}");
    let back: VoxelGen = serde_json::from_str(&s).unwrap();
    assert_eq!(back, g);
    let partial: VoxelGen = serde_json::from_str("{\"preset\":\"planet\"}").unwrap();
    assert_eq!(partial, VoxelGen::DEFAULT.with_preset(VoxelPreset::Planet));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The batch fill skips the cave noise of rows that the ground alone
    /// makes air; it still gives the point API's bits everywhere, on grids
    /// above, across and below the ground, with and without tunnels.
    #[test]
    fn caves_rows_of_air_skip_the_noise_with_the_same_bits(
        seed in any::<u64>(),
        x in -300.0f32..300.0,
        y in -120.0f32..160.0,
        z in -300.0f32..300.0,
        step in prop::sample::select(vec![0.5f32, 1.0, 2.0, 4.0]),
        threshold in prop::sample::select(vec![0.0f32, 0.05, 0.2]),
        falloff in 0.5f32..8.0,
    ) {
        let g = VoxelGen::new(VoxelPreset::Caves, seed)
            .with_cave_threshold(threshold)
            .with_falloff(falloff);
        let s = g.sampler().unwrap();
        let dims = [9u32, 11, 6];
        let origin = [x.floor(), y.floor(), z.floor()];
        let mut out = vec![0.0; 9 * 11 * 6];
        s.fill(origin, step, dims, &mut out).unwrap();
        for k in 0..6 {
            for j in 0..11 {
                for i in 0..9 {
                    let p = [
                        origin[0] + i as f32 * step,
                        origin[1] + j as f32 * step,
                        origin[2] + k as f32 * step,
                    ];
                    let v = out[(k * 11 + j) * 9 + i];
                    prop_assert_eq!(s.density(p).to_bits(), v.to_bits(), "at {:?}", p);
                }
            }
        }
    }
}

#[test]
fn a_grid_high_above_the_caves_ground_is_air() {
    let s = VoxelGen::new(VoxelPreset::Caves, 3).sampler().unwrap();
    let mut out = vec![0.0; 16 * 16 * 16];
    s.fill([0.0, 400.0, 0.0], 1.0, [16, 16, 16], &mut out)
        .unwrap();
    assert!(out.iter().all(|v| v.to_bits() == (-1.0f32).to_bits()));
    assert_eq!(s.density([5.0, 405.0, 5.0]), -1.0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Grids stacked over one set of columns sampled over the columns'
    /// heights computed once (what a streamed chunk column does) give the
    /// bits of separate fills, for every preset, step and stack height.
    #[test]
    fn grids_over_shared_ground_heights_equal_separate_fills(
        seed in any::<u64>(),
        preset in prop::sample::select(VoxelPreset::ALL.to_vec()),
        x in -300i32..300,
        y in -60i32..60,
        z in -300i32..300,
        step in prop::sample::select(vec![0.5f32, 1.0, 2.0, 4.0]),
        rows in 1u32..8,
    ) {
        let s = VoxelGen::new(preset, seed).with_ground_amplitude(16.0).sampler().unwrap();
        let (w, d) = (7u32, 5u32);
        let mut ground = vec![f32::NAN; (w * d) as usize];
        s.fill_ground([x as f32, z as f32], step, [w, d], &mut ground).unwrap();
        for layer in 0..3 {
            let origin = [x as f32, (y + layer * 6) as f32 * step, z as f32];
            let dims = [w, rows, d];
            let n = (w * rows * d) as usize;
            let (mut want, mut got) = (vec![0.0f32; n], vec![1.0f32; n]);
            s.fill(origin, step, dims, &mut want).unwrap();
            s.fill_on_ground(origin, step, dims, &ground, &mut got).unwrap();
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&got), bits(&want), "layer {}", layer);
        }
    }
}

#[test]
fn ground_heights_of_the_wrong_size_are_refused() {
    let s = VoxelGen::new(VoxelPreset::Caves, 3).sampler().unwrap();
    let mut out = vec![7.0f32; 4 * 3 * 5];
    let short = vec![0.0f32; 4 * 5 - 1];
    let err = s.fill_on_ground([0.0; 3], 1.0, [4, 3, 5], &short, &mut out);
    assert!(matches!(
        err,
        Err(FieldError::InvalidParameter { name: "ground", .. })
    ));
    assert!(out.iter().all(|&v| v == 7.0));
    let mut heights = vec![0.0f32; 3];
    assert!(
        s.fill_ground([0.0, f32::NAN], 1.0, [3, 1], &mut heights)
            .is_err()
    );
    assert!(
        s.fill_ground([0.0, 0.0], 1.0, [3, 2], &mut heights)
            .is_err()
    );
    assert!(
        s.fill_on_ground([0.0; 3], 0.0, [4, 3, 5], &short, &mut out)
            .is_err()
    );
}
