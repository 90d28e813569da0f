//! Height generator and height curve: batch == point bitwise, analytic range,
//! tiles agree, presets, curve properties, parameter errors.

use isoterra_field::{
    Basis, FieldError, FractalParams, HeightCurve, HeightGen, HeightParams, HeightPreset,
};
use proptest::prelude::*;

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn every_preset_stays_in_its_analytic_range() {
    for preset in HeightPreset::ALL {
        let g = HeightGen::preset(preset, 5).unwrap();
        let [lo, hi] = g.range();
        assert!(lo < hi, "{preset}");
        let mut out = vec![0.0f32; 256 * 256];
        g.fill_heights([-3000.0, 1700.0], [7.3, 6.1], [256, 256], &mut out)
            .unwrap();
        let (mn, mx) = out
            .iter()
            .fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        assert!(
            mn >= lo && mx <= hi,
            "{preset}: [{mn}, {mx}] not in [{lo}, {hi}]"
        );
        // The terrain has relief.
        assert!(mx - mn > 0.1 * (hi - lo), "{preset}: flat [{mn}, {mx}]");
    }
}

#[test]
fn islands_have_a_flat_sea_floor() {
    let g = HeightGen::preset(HeightPreset::Islands, 9).unwrap();
    let mut out = vec![0.0f32; 128 * 128];
    g.fill_heights([0.0, 0.0], [8.0, 8.0], [128, 128], &mut out)
        .unwrap();
    let sea = out.iter().filter(|&&h| h == 0.0).count();
    let land = out.iter().filter(|&&h| h > 10.0).count();
    assert!(sea > 1000 && land > 100, "sea {sea} land {land}");
}

#[test]
fn range_is_curve_range_times_scale() {
    let curve = HeightCurve::new(&[[0.0, -0.5], [0.5, 0.0], [1.0, 2.0]]).unwrap();
    let p = HeightParams::DEFAULT
        .with_curve(curve)
        .with_height_scale(10.0);
    let g = HeightGen::new(&p, 1).unwrap();
    assert_eq!(g.range(), [-5.0, 20.0]);
    assert_eq!(g.params(), &p);
    assert_eq!(g.seed(), 1);
}

#[test]
fn adjacent_tiles_share_their_border_exactly() {
    // Tile A covers nodes x 0..=32, tile B x 32..=64: node 32 is shared.
    let g = HeightGen::preset(HeightPreset::Mountains, 77).unwrap();
    let step = 2.5f32;
    let mut a = vec![0.0f32; 33 * 33];
    let mut b = vec![0.0f32; 33 * 33];
    g.fill_heights([0.0, 0.0], [step, step], [33, 33], &mut a)
        .unwrap();
    g.fill_heights([32.0 * step, 0.0], [step, step], [33, 33], &mut b)
        .unwrap();
    for j in 0..33 {
        assert_eq!(a[j * 33 + 32].to_bits(), b[j * 33].to_bits(), "row {j}");
    }
}

#[test]
fn bad_parameters_are_typed_errors_and_write_nothing() {
    let d = HeightParams::DEFAULT;
    let bad = [
        d.with_height_scale(0.0),
        d.with_height_scale(f32::NAN),
        d.with_height_scale(f32::INFINITY),
        d.with_warp_amplitude(f32::NAN),
        d.with_warp_amplitude(-1.0),
        d.with_mountain_strength(f32::NAN),
        d.with_mountain_strength(-0.5),
        d.with_mask_edge(f32::NAN, 0.1),
        d.with_mask_edge(2.0, 0.1),
        d.with_mask_edge(0.0, f32::NAN),
        d.with_base(FractalParams::DEFAULT.with_octaves(0)),
        d.with_mountains(FractalParams::DEFAULT.with_lacunarity(f32::NAN)),
        d.with_mask(FractalParams::DEFAULT.with_frequency(-1.0)),
        d.with_warp(FractalParams::DEFAULT.with_persistence(f32::NAN)),
        d.with_height_scale(1e38)
            .with_curve(HeightCurve::new(&[[0.0, 0.0], [1.0, 100.0]]).unwrap()),
    ];
    for p in bad {
        assert!(
            matches!(
                HeightGen::new(&p, 1),
                Err(FieldError::InvalidParameter { .. })
            ),
            "{p:?}"
        );
    }
    let g = HeightGen::new(&d, 1).unwrap();
    let mut out = vec![7.0f32; 12];
    assert!(
        g.fill_heights([f32::NAN, 0.0], [1.0; 2], [4, 3], &mut out)
            .is_err()
    );
    assert!(
        g.fill_heights([0.0; 2], [1.0; 2], [5, 3], &mut out)
            .is_err()
    );
    assert!(out.iter().all(|&v| v == 7.0));
}

#[test]
fn curve_is_monotone_and_passes_through_its_points() {
    let pts = [
        [0.0, 0.0],
        [0.2, 0.05],
        [0.25, 0.6],
        [0.5, 0.62],
        [0.9, 0.99],
        [1.0, 1.0],
    ];
    let s = HeightCurve::new(&pts).unwrap().spline().unwrap();
    for p in pts {
        assert_eq!(s.eval(p[0]), p[1]);
    }
    let mut prev = s.eval(-1.0);
    for i in 0..=10_000 {
        let v = s.eval(-0.1 + 1.2 * i as f32 / 10_000.0);
        assert!(v >= prev, "not monotone at {i}: {prev} -> {v}");
        prev = v;
    }
}

#[test]
fn curve_does_not_overshoot_non_monotone_data() {
    let pts = [[0.0, 0.0], [0.3, 1.0], [0.6, 0.2], [1.0, 0.8]];
    let c = HeightCurve::new(&pts).unwrap();
    let s = c.spline().unwrap();
    assert_eq!(c.range(), [0.0, 1.0]);
    for i in 0..=1000 {
        let x = i as f32 / 1000.0;
        let v = s.eval(x);
        // Between two points the value stays between their values.
        let k = pts.windows(2).position(|w| x <= w[1][0]).unwrap();
        let (a, b) = (pts[k][1], pts[k + 1][1]);
        assert!(
            v >= a.min(b) && v <= a.max(b),
            "{x}: {v} outside [{a}, {b}]"
        );
    }
}

#[cfg(feature = "serde")]
#[test]
fn parameters_round_trip_through_json() {
    let p = HeightParams::preset(HeightPreset::Islands).with_base(
        FractalParams::DEFAULT.with_basis(Basis::Cellular {
            ret: isoterra_field::CellularReturn::F2MinusF1,
            jitter: 0.7,
        }),
    );
    let json = serde_json::to_string(&p).unwrap();
    let back: HeightParams = serde_json::from_str(&json).unwrap();
    assert_eq!(back, p);
    // A curve with bad points is rejected while parsing.
    let bad = json.replace("[0.42,0.0]", "[0.0,0.0]");
    assert!(serde_json::from_str::<HeightParams>(&bad).is_err());
    // Missing fields take their defaults.
    let d: HeightParams = serde_json::from_str("{}").unwrap();
    assert_eq!(d, HeightParams::DEFAULT);
}

fn params() -> impl Strategy<Value = HeightParams> {
    (0u8..3, 0.0f32..60.0, 0.0f32..2.0, any::<bool>()).prop_map(|(p, warp, strength, simplex)| {
        let preset = HeightPreset::ALL[p as usize];
        let mut hp = HeightParams::preset(preset)
            .with_warp_amplitude(warp)
            .with_mountain_strength(strength);
        if simplex {
            hp = hp.with_base(hp.base.with_basis(Basis::OpenSimplex2));
        }
        hp
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn fill_heights_is_bit_identical_to_height_at(
        p in params(),
        seed in any::<u64>(),
        origin in prop::array::uniform2(-1.0e4f32..1.0e4),
        step in prop::array::uniform2(-8.0f32..8.0),
        dims in prop::array::uniform2(0u32..20),
    ) {
        let g = HeightGen::new(&p, seed).unwrap();
        let n = (dims[0] * dims[1]) as usize;
        let mut out = vec![0.0f32; n];
        g.fill_heights(origin, step, dims, &mut out).unwrap();
        let mut expect = Vec::with_capacity(n);
        for j in 0..dims[1] {
            for i in 0..dims[0] {
                expect.push(g.height_at(origin[0] + i as f32 * step[0], origin[1] + j as f32 * step[1]));
            }
        }
        prop_assert_eq!(bits(&out), bits(&expect));
        let [lo, hi] = g.range();
        prop_assert!(out.iter().all(|&h| h >= lo && h <= hi));
    }

    #[test]
    fn curve_spline_stays_in_range_and_hits_points(
        ys in prop::collection::vec(-10.0f32..10.0, 2..16),
        x in -1.0f32..2.0,
    ) {
        let n = ys.len();
        let pts: Vec<[f32; 2]> = ys.iter().enumerate().map(|(i, &y)| [i as f32 / (n - 1) as f32, y]).collect();
        let c = HeightCurve::new(&pts).unwrap();
        let s = c.spline().unwrap();
        let [lo, hi] = c.range();
        let v = s.eval(x);
        prop_assert!(v >= lo && v <= hi);
        for p in &pts {
            prop_assert_eq!(s.eval(p[0]), p[1]);
        }
    }
}
