//! PNG16 / R16 / PNG8 heightmap import and export: exact round trips, the
//! fixed range rule, shared tile borders and typed errors.

use isoterra_export::{
    ExportError, RANGE_KEYWORD, check_height_range, code16_to_height, decode_png16_codes,
    decode_r16_codes, encode_png16_codes, export_png16, export_r16, height_to_code16, import_png8,
    import_png16, import_r16,
};
use isoterra_field::HeightGen;
use proptest::prelude::*;

fn ramp(dims: [u32; 2]) -> Vec<f32> {
    (0..dims[0] * dims[1])
        .map(|k| (k % dims[0]) as f32 * 0.5 - (k / dims[0]) as f32 * 0.25)
        .collect()
}

fn png8(dims: [u32; 2], data: &[u8], text: Option<String>) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, dims[0], dims[1]);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(png::BitDepth::Eight);
        if let Some(t) = text {
            enc.add_text_chunk(RANGE_KEYWORD.to_string(), t).unwrap();
        }
        let mut w = enc.write_header().unwrap();
        w.write_image_data(data).unwrap();
    }
    out
}

/// A valid range: a width at least the magnitude / 64.
fn range_strategy() -> impl Strategy<Value = [f32; 2]> {
    (-1.0e6f32..1.0e6, 0.0f32..1.0).prop_map(|(lo, t)| {
        let min_w = lo.abs().max(1.0e-3) / 32.0;
        let hi = lo + min_w + t * 1.0e4;
        [lo, hi]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn png16_codes_survive_f32_exactly(
        range in range_strategy(),
        w in 1u32..20,
        h in 1u32..20,
        seed in any::<u64>(),
    ) {
        prop_assume!(check_height_range(range).is_ok());
        let codes: Vec<u16> = (0..w * h)
            .map(|k| {
                let x = (u64::from(k) + 1).wrapping_mul(seed | 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                (x >> 48) as u16
            })
            .chain([0u16, 65535])
            .take((w * h) as usize)
            .collect();
        // codes -> heights -> codes.
        let heights: Vec<f32> = codes.iter().map(|&c| code16_to_height(c, range)).collect();
        let png = export_png16(&heights, [w, h], range).unwrap();
        let back = decode_png16_codes(&png).unwrap();
        prop_assert_eq!(back.dims, [w, h]);
        prop_assert_eq!(back.range, Some(range));
        prop_assert_eq!(&back.codes, &codes);
        // heights -> png -> heights is bit exact too.
        let img = import_png16(&png, None).unwrap();
        prop_assert!(img.range_from_file);
        let hb: Vec<u32> = heights.iter().map(|v| v.to_bits()).collect();
        let ib: Vec<u32> = img.heights.iter().map(|v| v.to_bits()).collect();
        prop_assert_eq!(hb, ib);
        // Same for R16.
        let raw = export_r16(&heights, [w, h], range).unwrap();
        prop_assert_eq!(raw.len(), (w * h * 2) as usize);
        let rc = decode_r16_codes(&raw, Some([w, h])).unwrap();
        prop_assert_eq!(rc.dims, [w, h]);
        prop_assert_eq!(&rc.codes, &codes);
        let ri = import_r16(&raw, Some([w, h]), range).unwrap();
        prop_assert_eq!(ri.heights, img.heights);
    }

    #[test]
    fn every_code_round_trips_for_random_ranges(range in range_strategy()) {
        prop_assume!(check_height_range(range).is_ok());
        for c in (0..=65535u16).step_by(7).chain([65535]) {
            prop_assert_eq!(height_to_code16(code16_to_height(c, range), range), c);
        }
    }
}

#[test]
fn all_codes_round_trip_on_a_generator_range() {
    let g = HeightGen::preset(isoterra_field::HeightPreset::Mountains, 1).unwrap();
    let r = g.range();
    for c in 0..=65535u16 {
        assert_eq!(height_to_code16(code16_to_height(c, r), r), c);
    }
    // The narrowest ranges the rule accepts, at several magnitudes and signs.
    for lo in [1.0f32, 777.0, 1.0e5, 3.0e7, -2.0e6] {
        let mut hi = if lo > 0.0 {
            lo + lo / 63.0
        } else {
            lo + lo.abs() / 64.0
        };
        while check_height_range([lo, hi]).is_err() {
            hi = f32::from_bits(
                hi.to_bits()
                    .wrapping_add(if hi > 0.0 { 1 } else { u32::MAX }),
            );
        }
        let r = [lo, hi];
        for c in 0..=65535u16 {
            assert_eq!(height_to_code16(code16_to_height(c, r), r), c, "{r:?}");
        }
    }
}

#[test]
fn adjacent_tiles_share_border_codes() {
    // Tiles of nodes 0..=64 and 64..=128 on x, 0..=32 on z, from one
    // generator and its fixed analytic range.
    let g = HeightGen::preset(isoterra_field::HeightPreset::Hills, 9).unwrap();
    let range = g.range();
    let tile = |x0: i64| -> Vec<f32> {
        let mut v = Vec::new();
        for z in 0..=32i64 {
            for x in x0..=x0 + 64 {
                v.push(g.height_at(x as f32, z as f32));
            }
        }
        v
    };
    let a = export_png16(&tile(0), [65, 33], range).unwrap();
    let b = export_png16(&tile(64), [65, 33], range).unwrap();
    let ca = decode_png16_codes(&a).unwrap().codes;
    let cb = decode_png16_codes(&b).unwrap().codes;
    for z in 0..33 {
        assert_eq!(ca[z * 65 + 64], cb[z * 65], "row {z}");
    }
    // A tile's own min/max is not used: a flat tile keeps its true level.
    let flat = vec![range[0] + 0.25 * (range[1] - range[0]); 9];
    let codes = decode_png16_codes(&export_png16(&flat, [3, 3], range).unwrap())
        .unwrap()
        .codes;
    assert!(codes.iter().all(|&c| c == height_to_code16(flat[0], range)));
    assert!(codes[0] > 16000 && codes[0] < 17000);
}

#[test]
fn heights_outside_the_range_clamp() {
    let png = export_png16(&[-5.0, 0.5, 5.0], [3, 1], [0.0, 1.0]).unwrap();
    let codes = decode_png16_codes(&png).unwrap().codes;
    assert_eq!(codes, vec![0, 32768, 65535]);
}

#[test]
fn png_without_range_uses_the_given_one() {
    let codes = vec![0u16, 65535, 32768, 1];
    let png = encode_png16_codes(&codes, [2, 2], None).unwrap();
    let img = import_png16(&png, Some([10.0, 20.0])).unwrap();
    assert!(!img.range_from_file);
    assert_eq!(img.heights[0], 10.0);
    assert_eq!(img.heights[1], 20.0);
    let img = import_png16(&png, None).unwrap();
    assert_eq!(img.range, [0.0, 1.0]);
    // A recorded range wins over the given one.
    let png = encode_png16_codes(&codes, [2, 2], Some([-1.0, 1.0])).unwrap();
    let img = import_png16(&png, Some([10.0, 20.0])).unwrap();
    assert_eq!(img.range, [-1.0, 1.0]);
    assert!(img.range_from_file);
}

#[test]
fn png8_import_is_explicit() {
    let p8 = png8([2, 2], &[0, 255, 51, 102], Some("0,100".to_string()));
    let img = import_png8(&p8, None).unwrap();
    assert_eq!(img.dims, [2, 2]);
    assert_eq!(img.heights, vec![0.0, 100.0, 20.0, 40.0]);
    // The 16-bit importer refuses 8-bit data and says so.
    match import_png16(&p8, None) {
        Err(ExportError::HeightFormat(m)) => assert!(m.contains("8-bit importer"), "{m}"),
        other => panic!("{other:?}"),
    }
    let p16 = export_png16(&[0.0; 4], [2, 2], [0.0, 1.0]).unwrap();
    assert!(matches!(
        import_png8(&p16, None),
        Err(ExportError::HeightFormat(_))
    ));
    // A malformed recorded range is an error.
    let bad = png8([1, 1], &[0], Some("zero,one".to_string()));
    assert!(matches!(
        import_png8(&bad, None),
        Err(ExportError::PngDecode(_))
    ));
    let inverted = png8([1, 1], &[0], Some("5,1".to_string()));
    assert!(matches!(
        import_png8(&inverted, None),
        Err(ExportError::HeightRange { .. })
    ));
}

#[test]
fn corrupt_png_is_an_error() {
    let png = export_png16(&ramp([8, 8]), [8, 8], [-10.0, 10.0]).unwrap();
    assert!(matches!(
        import_png16(b"not a png", None),
        Err(ExportError::PngDecode(_))
    ));
    assert!(matches!(
        import_png16(&[], None),
        Err(ExportError::PngDecode(_))
    ));
    let truncated = &png[..png.len() / 2];
    assert!(import_png16(truncated, None).is_err());
    let mut flipped = png.clone();
    let k = flipped.len() - 20;
    flipped[k] ^= 0xFF;
    assert!(import_png16(&flipped, None).is_err());
}

#[test]
fn r16_sizes_are_checked() {
    let raw = export_r16(&ramp([4, 4]), [4, 4], [-10.0, 10.0]).unwrap();
    let sq = import_r16(&raw, None, [-10.0, 10.0]).unwrap();
    assert_eq!(sq.dims, [4, 4]);
    let rect = import_r16(&raw, Some([8, 2]), [-10.0, 10.0]).unwrap();
    assert_eq!(rect.dims, [8, 2]);
    for bad in [&raw[..31], &raw[..30], &[][..]] {
        assert!(matches!(
            import_r16(bad, None, [0.0, 1.0]),
            Err(ExportError::R16Size { .. })
        ));
    }
    assert!(matches!(
        import_r16(&raw, Some([5, 4]), [0.0, 1.0]),
        Err(ExportError::R16Size { .. })
    ));
    assert!(matches!(
        import_r16(&raw, Some([0, 0]), [0.0, 1.0]),
        Err(ExportError::R16Size { .. })
    ));
    assert!(matches!(
        import_r16(&raw, None, [1.0, 0.0]),
        Err(ExportError::HeightRange { .. })
    ));
    // Little-endian, row-major.
    let raw = export_r16(&[0.0, 1.0], [2, 1], [0.0, 1.0]).unwrap();
    assert_eq!(raw, vec![0, 0, 0xFF, 0xFF]);
}

#[test]
fn bad_exports_are_typed_errors() {
    let h = ramp([4, 4]);
    let r = [-10.0, 10.0];
    let nan = {
        let mut v = h.clone();
        v[5] = f32::NAN;
        v
    };
    assert!(matches!(
        export_png16(&nan, [4, 4], r),
        Err(ExportError::NonFiniteHeight { index: 5, .. })
    ));
    assert!(matches!(
        export_r16(&nan, [4, 4], r),
        Err(ExportError::NonFiniteHeight { .. })
    ));
    for bad in [
        [1.0, 1.0],
        [2.0, 1.0],
        [f32::NAN, 1.0],
        [0.0, f32::INFINITY],
    ] {
        assert!(matches!(
            export_png16(&h, [4, 4], bad),
            Err(ExportError::HeightRange { .. })
        ));
    }
    assert!(export_png16(&h, [4, 3], r).is_err());
    assert!(export_png16(&[], [0, 0], r).is_err());
    assert!(matches!(
        export_png16(&[], [20000, 20000], r),
        Err(ExportError::ImageTooLarge { .. })
    ));
}
