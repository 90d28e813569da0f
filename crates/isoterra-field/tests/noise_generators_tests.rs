//! Every basis noise and fractal: analytic ranges over a million samples,
//! batch == lanes == point bit for bit, golden values, continuity and
//! parameter errors.

use isoterra_field::hash::Fnv1a64;
use isoterra_field::noise::LANES;
use isoterra_field::{
    Basis, Cellular, CellularReturn, FbmParams, FieldError, Fractal, FractalKind, FractalParams,
    Noise2, Noise3, OpenSimplex2, Perlin, ValueNoise, fill2, fill3,
};
use proptest::prelude::*;

/// Every 2D/3D generator of the crate, by name.
fn generators() -> Vec<(&'static str, Box<dyn Both>)> {
    let mut v: Vec<(&'static str, Box<dyn Both>)> = vec![
        ("perlin", Box::new(Perlin::new(11))),
        ("opensimplex2", Box::new(OpenSimplex2::new(11))),
        ("value", Box::new(ValueNoise::new(11))),
        (
            "cellular_f1",
            Box::new(Cellular::new(11, CellularReturn::F1, 0.5).unwrap()),
        ),
        (
            "cellular_f2",
            Box::new(Cellular::new(11, CellularReturn::F2, 1.0).unwrap()),
        ),
        (
            "cellular_f2_minus_f1",
            Box::new(Cellular::new(11, CellularReturn::F2MinusF1, 0.8).unwrap()),
        ),
    ];
    for (name, kind) in [
        ("fbm", FractalKind::Fbm),
        ("ridged", FractalKind::Ridged),
        ("billow", FractalKind::Billow),
    ] {
        let p = FractalParams::DEFAULT
            .with_kind(kind)
            .with_basis(Basis::OpenSimplex2)
            .with_frequency(0.3);
        v.push((name, Box::new(Fractal::new(&p, 5).unwrap())));
    }
    v
}

trait Both: Noise2 + Noise3 {}
impl<T: Noise2 + Noise3> Both for T {}

fn fnv(values: &[f32]) -> u64 {
    let mut h = Fnv1a64::new();
    for v in values {
        h.write(&v.to_bits().to_le_bytes());
    }
    h.finish()
}

#[test]
fn every_generator_stays_in_range_over_a_million_samples() {
    for (name, g) in generators() {
        let g2: &dyn Noise2 = &*g;
        let mut out = vec![0.0f32; 1024 * 1024];
        fill2(g2, [-50.3, 20.7], [0.173, 0.191], [1024, 1024], &mut out).unwrap();
        let (lo, hi) = out
            .iter()
            .fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        assert!(lo >= -1.0 && hi <= 1.0, "{name} 2D: [{lo}, {hi}]");
        assert!(
            hi - lo > 0.9,
            "{name} 2D uses little of its range: [{lo}, {hi}]"
        );

        let g3: &dyn Noise3 = &*g;
        let mut out = vec![0.0f32; 102 * 102 * 102];
        fill3(
            g3,
            [3.1, -7.7, 0.4],
            [0.21, 0.17, 0.23],
            [102, 102, 102],
            &mut out,
        )
        .unwrap();
        let (lo, hi) = out
            .iter()
            .fold((f32::MAX, f32::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        assert!(lo >= -1.0 && hi <= 1.0, "{name} 3D: [{lo}, {hi}]");
        assert!(
            hi - lo > 0.7,
            "{name} 3D uses little of its range: [{lo}, {hi}]"
        );
    }
}

#[test]
fn gradient_noises_use_most_of_their_range() {
    // The analytic bounds are tight: dense sampling gets near them.
    for (name, g) in [
        ("perlin", Box::new(Perlin::new(3)) as Box<dyn Both>),
        ("opensimplex2", Box::new(OpenSimplex2::new(3))),
        ("value", Box::new(ValueNoise::new(3))),
    ] {
        let mut out = vec![0.0f32; 512 * 512];
        fill2(
            &*g as &dyn Noise2,
            [0.0; 2],
            [0.137, 0.119],
            [512, 512],
            &mut out,
        )
        .unwrap();
        let m = out.iter().fold(0.0f32, |a, v| a.max(v.abs()));
        assert!(m > 0.6, "{name}: max |v| = {m}");
    }
}

#[test]
fn golden_values_pin_every_generator() {
    // FNV-1a of a 16 x 16 (2D) and 8 x 8 x 8 (3D) fill. These move only when
    // the noise changes, which would change every generated world.
    let expected: [(&str, u64, u64); 9] = [
        ("perlin", 0x352f_7f6b_b4bc_9b16, 0xa23d_ba76_67ae_be24),
        ("opensimplex2", 0x3ba1_6c57_22ef_6502, 0xcffb_e0fc_5dc1_71fa),
        ("value", 0x6cf8_2f32_a7bc_0ad4, 0xada2_12d7_7322_8328),
        ("cellular_f1", 0xf110_bdba_7545_3133, 0x1871_d111_8aa2_192c),
        ("cellular_f2", 0x6901_be7c_630d_31d0, 0x55c1_7e9f_254d_8905),
        (
            "cellular_f2_minus_f1",
            0x84b8_1779_fb13_c240,
            0xf2d0_5878_d6f2_02bd,
        ),
        ("fbm", 0x449f_f549_2d92_17a7, 0x80dc_437f_dbb1_0260),
        ("ridged", 0xf8a9_d037_a03c_043d, 0x88fc_734e_81e4_4f3f),
        ("billow", 0x85c5_bd45_4343_613d, 0x9759_ff38_c5f0_a63f),
    ];
    let mut report = String::new();
    let mut ok = true;
    for ((name, g), (ename, e2, e3)) in generators().into_iter().zip(expected) {
        assert_eq!(name, ename);
        let mut a = vec![0.0f32; 256];
        fill2(
            &*g as &dyn Noise2,
            [100.5, -37.25],
            [0.37, 0.41],
            [16, 16],
            &mut a,
        )
        .unwrap();
        let mut b = vec![0.0f32; 512];
        fill3(
            &*g as &dyn Noise3,
            [-3.5, 12.25, 7.0],
            [0.37, 0.41, 0.29],
            [8, 8, 8],
            &mut b,
        )
        .unwrap();
        let (h2, h3) = (fnv(&a), fnv(&b));
        report.push_str(&format!("(\"{name}\", {h2:#018x}, {h3:#018x}),\n"));
        ok &= h2 == e2 && h3 == e3;
    }
    assert!(ok, "golden values moved:\n{report}");
}

#[test]
fn continuous_generators_change_little_over_a_small_step() {
    let h = 1e-3f32;
    let list: Vec<(&str, Box<dyn Both>, f32)> = vec![
        ("perlin", Box::new(Perlin::new(8)), 4.0),
        ("opensimplex2", Box::new(OpenSimplex2::new(8)), 40.0),
        ("value", Box::new(ValueNoise::new(8)), 8.0),
        (
            "cellular_f1",
            Box::new(Cellular::new(8, CellularReturn::F1, 0.5).unwrap()),
            4.0,
        ),
    ];
    for (name, g, slope) in list {
        for i in 0..20_000 {
            let x = i as f32 * 0.0371 - 300.0;
            let y = i as f32 * 0.0193 + 3.0;
            let z = i as f32 * 0.0117 - 5.0;
            let d2 = (g.sample2(x + h, y) - g.sample2(x, y)).abs();
            let d3 = (g.sample3(x, y, z + h) - g.sample3(x, y, z)).abs();
            assert!(d2 <= slope * h + 1e-5, "{name} 2D jump {d2} at ({x}, {y})");
            assert!(
                d3 <= slope * h + 1e-5,
                "{name} 3D jump {d3} at ({x}, {y}, {z})"
            );
        }
    }
}

#[test]
fn fractal_kinds_shape_octaves() {
    // One octave: ridged is 1 - 2|n| and billow 2|n| - 1 of the basis fBm.
    let base = FractalParams::DEFAULT.with_octaves(1).with_frequency(0.1);
    let f = Fractal::new(&base, 1).unwrap();
    let r = Fractal::new(&base.with_kind(FractalKind::Ridged), 1).unwrap();
    let b = Fractal::new(&base.with_kind(FractalKind::Billow), 1).unwrap();
    for i in 0..200 {
        let (x, y) = (i as f32 * 1.37, i as f32 * -0.71);
        let n = f.sample2(x, y);
        assert_eq!(r.sample2(x, y), 1.0 - 2.0 * n.abs());
        assert_eq!(b.sample2(x, y), 2.0 * n.abs() - 1.0);
    }
}

#[test]
fn fractal_perlin_fbm_equals_fbm() {
    let p = FbmParams::DEFAULT.with_octaves(5).with_frequency(0.05);
    let a = isoterra_field::Fbm::new(&p, 77).unwrap();
    let b = Fractal::new(
        &FractalParams::from_fbm(&p, Basis::Perlin, FractalKind::Fbm),
        77,
    )
    .unwrap();
    for i in 0..500 {
        let (x, y, z) = (i as f32 * 0.9, i as f32 * -1.3, i as f32 * 0.2);
        assert_eq!(a.sample2(x, y).to_bits(), b.sample2(x, y).to_bits());
        assert_eq!(a.sample3(x, y, z).to_bits(), b.sample3(x, y, z).to_bits());
    }
    assert_eq!(a.as_fractal(), &b);
}

#[test]
fn bad_fractal_parameters_are_typed_errors() {
    let d = FractalParams::DEFAULT;
    for bad in [
        d.with_octaves(0),
        d.with_octaves(33),
        d.with_frequency(f32::NAN),
        d.with_frequency(0.0),
        d.with_frequency(-1.0),
        d.with_lacunarity(f32::NAN),
        d.with_lacunarity(0.0),
        d.with_persistence(f32::NAN),
        d.with_basis(Basis::Cellular {
            ret: CellularReturn::F1,
            jitter: f32::NAN,
        }),
        d.with_basis(Basis::Cellular {
            ret: CellularReturn::F1,
            jitter: 2.0,
        }),
    ] {
        assert!(
            matches!(
                Fractal::new(&bad, 1),
                Err(FieldError::InvalidParameter { .. })
            ),
            "{bad:?}"
        );
    }
    assert!(matches!(
        Cellular::new(1, CellularReturn::F2, -1.0),
        Err(FieldError::InvalidParameter { name: "jitter", .. })
    ));
}

fn basis() -> impl Strategy<Value = Basis> {
    prop_oneof![
        Just(Basis::Perlin),
        Just(Basis::OpenSimplex2),
        Just(Basis::Value),
        (0u8..3, 0.0f32..=1.0).prop_map(|(r, jitter)| Basis::Cellular {
            ret: [
                CellularReturn::F1,
                CellularReturn::F2,
                CellularReturn::F2MinusF1
            ][r as usize],
            jitter
        }),
    ]
}

fn fractal_params() -> impl Strategy<Value = FractalParams> {
    (
        basis(),
        0u8..3,
        1u32..=5,
        0.0f32..1.5,
        0.5f32..3.0,
        0.01f32..2.0,
    )
        .prop_map(|(b, k, o, p, l, f)| {
            FractalParams::DEFAULT
                .with_basis(b)
                .with_kind([FractalKind::Fbm, FractalKind::Ridged, FractalKind::Billow][k as usize])
                .with_octaves(o)
                .with_persistence(p)
                .with_lacunarity(l)
                .with_frequency(f)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn batch_lanes_and_points_agree_bitwise_2d(
        p in fractal_params(),
        seed in any::<u64>(),
        origin in prop::array::uniform2(-5000.0f32..5000.0),
        step in prop::array::uniform2(-4.0f32..4.0),
        dims in prop::array::uniform2(0u32..21),
    ) {
        let f = Fractal::new(&p, seed).unwrap();
        let n = (dims[0] * dims[1]) as usize;
        let mut out = vec![0.0f32; n];
        fill2(&f, origin, step, dims, &mut out).unwrap();
        for j in 0..dims[1] {
            let y = origin[1] + j as f32 * step[1];
            for i in 0..dims[0] {
                let x = origin[0] + i as f32 * step[0];
                prop_assert_eq!(out[(j * dims[0] + i) as usize].to_bits(), f.sample2(x, y).to_bits());
            }
        }
        // The eight-lane entry points (the portable build for rows, the
        // AVX2 build for scattered lanes where the CPU has it).
        let xs: [f32; LANES] = std::array::from_fn(|l| origin[0] + l as f32 * step[0]);
        let ys: [f32; LANES] = std::array::from_fn(|l| origin[1] - l as f32 * step[1]);
        let row = f.sample2_row(&xs, ys[0]);
        let lanes = f.sample2_lanes(&xs, &ys);
        for l in 0..LANES {
            prop_assert_eq!(row[l].to_bits(), f.sample2(xs[l], ys[0]).to_bits());
            prop_assert_eq!(lanes[l].to_bits(), f.sample2(xs[l], ys[l]).to_bits());
        }
    }

    #[test]
    fn batch_lanes_and_points_agree_bitwise_3d(
        p in fractal_params(),
        seed in any::<u64>(),
        origin in prop::array::uniform3(-500.0f32..500.0),
        step in prop::array::uniform3(-3.0f32..3.0),
        dims in prop::array::uniform3(0u32..11),
    ) {
        let f = Fractal::new(&p, seed).unwrap();
        let n = (dims[0] * dims[1] * dims[2]) as usize;
        let mut out = vec![0.0f32; n];
        fill3(&f, origin, step, dims, &mut out).unwrap();
        let mut idx = 0;
        for k in 0..dims[2] {
            for j in 0..dims[1] {
                for i in 0..dims[0] {
                    let (x, y, z) = (
                        origin[0] + i as f32 * step[0],
                        origin[1] + j as f32 * step[1],
                        origin[2] + k as f32 * step[2],
                    );
                    prop_assert_eq!(out[idx].to_bits(), f.sample3(x, y, z).to_bits());
                    idx += 1;
                }
            }
        }
        let xs: [f32; LANES] = std::array::from_fn(|l| origin[0] + l as f32 * step[0]);
        let ys: [f32; LANES] = std::array::from_fn(|l| origin[1] - l as f32 * step[1]);
        let zs: [f32; LANES] = std::array::from_fn(|l| origin[2] + l as f32 * 0.5);
        let row = f.sample3_row(&xs, ys[0], zs[0]);
        let lanes = f.sample3_lanes(&xs, &ys, &zs);
        for l in 0..LANES {
            prop_assert_eq!(row[l].to_bits(), f.sample3(xs[l], ys[0], zs[0]).to_bits());
            prop_assert_eq!(lanes[l].to_bits(), f.sample3(xs[l], ys[l], zs[l]).to_bits());
        }
    }

    #[test]
    fn basis_generators_agree_bitwise(
        seed in any::<u64>(),
        origin in prop::array::uniform2(-1.0e4f32..1.0e4),
        step in prop::array::uniform2(-2.0f32..2.0),
        dims in prop::array::uniform2(0u32..19),
    ) {
        let gens: Vec<Box<dyn Both>> = vec![
            Box::new(Perlin::new(seed)),
            Box::new(OpenSimplex2::new(seed)),
            Box::new(ValueNoise::new(seed)),
            Box::new(Cellular::new(seed, CellularReturn::F2MinusF1, 0.9).unwrap()),
        ];
        for g in &gens {
            let n = (dims[0] * dims[1]) as usize;
            let mut out = vec![0.0f32; n];
            fill2(&**g as &dyn Noise2, origin, step, dims, &mut out).unwrap();
            for j in 0..dims[1] {
                for i in 0..dims[0] {
                    let (x, y) = (origin[0] + i as f32 * step[0], origin[1] + j as f32 * step[1]);
                    prop_assert_eq!(out[(j * dims[0] + i) as usize].to_bits(), g.sample2(x, y).to_bits());
                }
            }
            let z = origin[0] * 0.5;
            let mut out3 = vec![0.0f32; n];
            fill3(&**g as &dyn Noise3, [origin[0], origin[1], z], [step[0], step[1], 1.0], [dims[0], dims[1], 1], &mut out3).unwrap();
            for j in 0..dims[1] {
                for i in 0..dims[0] {
                    let (x, y) = (origin[0] + i as f32 * step[0], origin[1] + j as f32 * step[1]);
                    prop_assert_eq!(out3[(j * dims[0] + i) as usize].to_bits(), g.sample3(x, y, z).to_bits());
                }
            }
        }
    }

    #[test]
    fn any_coordinate_stays_in_range(p in fractal_params(), x in any::<f32>(), y in any::<f32>(), z in any::<f32>()) {
        // NaN, infinities and huge values included.
        let f = Fractal::new(&p, 3).unwrap();
        prop_assert!((-1.0..=1.0).contains(&f.sample2(x, y)));
        prop_assert!((-1.0..=1.0).contains(&f.sample3(x, y, z)));
    }
}

#[test]
fn grid_fills_fill_whole_slabs_only_whatever_their_shape() {
    // Every generator, and a Perlin fractal (whose grid rows are planned).
    let mut gens: Vec<(&'static str, Box<dyn Noise3>)> = generators()
        .into_iter()
        .map(|(name, g)| (name, Box::new(BoxedBoth(g)) as Box<dyn Noise3>))
        .collect();
    let p = FractalParams::DEFAULT
        .with_basis(Basis::Perlin)
        .with_frequency(0.2);
    gens.push(("perlin_fbm", Box::new(Fractal::new(&p, 9).unwrap())));
    for (name, g) in &gens {
        // Slabs larger than the buffer, overflowing or empty: nothing
        // written, no panic, no allocation sized by the shape.
        for dims in [
            [usize::MAX, 2],
            [2, usize::MAX],
            [1 << 40, 1],
            [1 << 30, 1],
            [65, 1],
            [8, 9],
            [0, 3],
            [3, 0],
        ] {
            let mut out = vec![7.0f32; 64];
            g.fill_grid3([0.5, 1.0, -2.0], [0.3, 0.7, 1.1], dims, &mut out);
            assert!(out.iter().all(|&v| v == 7.0), "{name} {dims:?}");
        }
        // Two whole 4 x 3 slabs and part of a third: the slabs are fill3's
        // grid bit for bit, the part is left as it was.
        let (origin, step) = ([3.25, -1.5, 0.75], [0.37, 0.41, 0.29]);
        let mut want = vec![0.0f32; 24];
        fill3(&**g, origin, step, [4, 3, 2], &mut want).unwrap();
        let mut out = vec![7.0f32; 24 + 5];
        g.fill_grid3(origin, step, [4, 3], &mut out);
        assert_eq!(fnv(&out[..24]), fnv(&want), "{name}");
        assert!(out[24..].iter().all(|&v| v == 7.0), "{name}");
    }
}

/// A generator of [`generators`] as a plain [`Noise3`] that forwards every
/// method (so the grid fill is the generator's own).
struct BoxedBoth(Box<dyn Both>);

impl Noise3 for BoxedBoth {
    fn sample3(&self, x: f32, y: f32, z: f32) -> f32 {
        self.0.sample3(x, y, z)
    }

    fn sample3_lanes(&self, x: &[f32; LANES], y: &[f32; LANES], z: &[f32; LANES]) -> [f32; LANES] {
        self.0.sample3_lanes(x, y, z)
    }

    fn sample3_row(&self, x: &[f32; LANES], y: f32, z: f32) -> [f32; LANES] {
        self.0.sample3_row(x, y, z)
    }

    fn fill_row3(&self, x0: f32, dx: f32, y: f32, z: f32, out: &mut [f32]) {
        self.0.fill_row3(x0, dx, y, z, out)
    }

    fn fill_grid3(&self, origin: [f32; 3], step: [f32; 3], dims: [usize; 2], out: &mut [f32]) {
        self.0.fill_grid3(origin, step, dims, out)
    }
}
