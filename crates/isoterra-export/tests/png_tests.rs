//! PNG pictures and grayscale images: decoded back and checked pixel by pixel.

use std::io::Cursor;

use isoterra_export::{
    ExportError, MAX_IMAGE_SIDE, PngOptions, export_field_png_gray, export_side2d_png,
};
use isoterra_field::{
    Field2, MaterialGrid, MaterialTable, Side2dGen, Side2dPreset, generate_side2d,
};
use isoterra_mesh::Polyline;
use proptest::prelude::*;

struct Image {
    width: u32,
    height: u32,
    color: png::ColorType,
    depth: png::BitDepth,
    data: Vec<u8>,
}

fn decode(bytes: &[u8]) -> Image {
    let decoder = png::Decoder::new(Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut data = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut data).unwrap();
    data.truncate(info.buffer_size());
    Image {
        width: info.width,
        height: info.height,
        color: info.color_type,
        depth: info.bit_depth,
        data,
    }
}

impl Image {
    fn rgb(&self, x: u32, y: u32) -> [u8; 3] {
        let i = ((y * self.width + x) * 3) as usize;
        [self.data[i], self.data[i + 1], self.data[i + 2]]
    }
}

/// True when `c` is a darker or lighter shade of `base` (same hue and
/// saturation family, brightness between 30 % and 130 %).
fn same_family(c: [u8; 3], base: [u8; 4]) -> bool {
    let k: f32 =
        (0..3).map(|i| c[i] as f32).sum::<f32>() / (0..3).map(|i| base[i] as f32).sum::<f32>();
    if !(0.3..=1.3).contains(&k) {
        return false;
    }
    (0..3).all(|i| (c[i] as f32 - base[i] as f32 * k).abs() <= 22.0)
}

fn is_sky(c: [u8; 3]) -> bool {
    c[2] as i32 > c[0] as i32 + 40 && c[2] > 150
}

/// A 33 x 17 node field, solid below y = 8.3.
fn half_solid() -> Field2 {
    Field2::from_fn(33, 17, |_, y| ((8.3 - y as f32) / 2.0).clamp(-1.0, 1.0)).unwrap()
}

#[test]
fn picture_has_sky_above_and_material_below() {
    let field = half_solid();
    let table = MaterialTable::side2d_default();
    let mut mats = MaterialGrid::like(&field, 0);
    for y in 0..4 {
        for x in 0..33 {
            mats.set(x, y, 1).unwrap(); // rock at the bottom
        }
    }
    let bytes = export_side2d_png(&field, Some(&mats), &table, &[], &PngOptions::DEFAULT).unwrap();
    let img = decode(&bytes);
    assert_eq!(
        (img.color, img.depth),
        (png::ColorType::Rgb, png::BitDepth::Eight)
    );
    // Automatic scale: about 1024 pixels wide, aspect kept.
    assert_eq!((img.width, img.height), (1024, 512));
    let dirt = table.get(0).unwrap().color;
    let rock = table.get(1).unwrap().color;
    // The upper part of the image (world y high) is sky.
    for x in (0..1024).step_by(37) {
        for y in [5, 100, 200] {
            assert!(is_sky(img.rgb(x, y)), "({x}, {y}) = {:?}", img.rgb(x, y));
        }
    }
    // Just under the surface (y = 7 cells, image row (16 - 7) * 32) is dirt.
    for x in (40..1000).step_by(41) {
        let c = img.rgb(x, (16 - 6) * 32);
        assert!(same_family(c, dirt), "dirt at {x}: {c:?}");
        assert!(!is_sky(c));
    }
    // Near the bottom (y = 1.5 cells) is rock.
    for x in (40..1000).step_by(41) {
        let c = img.rgb(x, img.height - 48);
        assert!(same_family(c, rock), "rock at {x}: {c:?}");
    }
    // The surface edge is darker than the ground a little below it.
    let edge = img.rgb(500, ((16.0 - 8.3) * 32.0) as u32 + 2);
    let inside = img.rgb(500, ((16.0 - 8.3) * 32.0) as u32 + 40);
    let lum = |c: [u8; 3]| c.iter().map(|&v| v as u32).sum::<u32>();
    assert!(lum(edge) < lum(inside), "{edge:?} vs {inside:?}");
}

/// A 129 x 65 node field, solid below y = 40, with a round crater of
/// radius 12 dug from the surface at x = 64 and a shaft one cell wide at
/// x = 20 down to y = 20.
fn dug_ground() -> Field2 {
    Field2::from_fn(129, 65, |x, y| {
        let ground = (40.0 - y as f32) / 2.0;
        let crater = (((x as f32 - 64.0).powi(2) + (y as f32 - 40.0).powi(2)).sqrt() - 12.0) / 2.0;
        let shaft = if (x as f32 - 20.0).abs() <= 0.5 && y >= 20 {
            -1.0
        } else {
            1.0
        };
        ground.min(crater).min(shaft).clamp(-1.0, 1.0)
    })
    .unwrap()
}

#[test]
fn a_crater_dug_from_the_surface_shows_sky_and_a_shaft_does_not_streak() {
    let field = dug_ground();
    let table = MaterialTable::side2d_default();
    let options = PngOptions::DEFAULT.with_pixels_per_cell(4.0);
    let bytes = export_side2d_png(&field, None, &table, &[], &options).unwrap();
    let img = decode(&bytes);
    assert_eq!((img.width, img.height), (512, 256));
    let row = |y_cells: f32| ((64.0 - y_cells) * 4.0) as u32;
    // Inside the crater, below the old surface: sky, not cave.
    for (x, y) in [(64.0, 30.0), (60.0, 36.0), (70.0, 33.0), (56.0, 38.0)] {
        let c = img.rgb((x * 4.0) as u32, row(y));
        assert!(is_sky(c), "crater air at ({x}, {y}) is {c:?}, not sky");
    }
    // The shaft is too narrow to light: beside the old surface line it stays
    // cave background (dark), and the ground around it is not sky either.
    let shaft = img.rgb(20 * 4 + 1, row(30.0));
    assert!(
        !is_sky(shaft),
        "the narrow shaft is drawn as sky: {shaft:?}"
    );
    let lum = |c: [u8; 3]| c.iter().map(|&v| v as u32).sum::<u32>();
    assert!(
        lum(shaft) < 3 * 90,
        "the shaft is not dark cave air: {shaft:?}"
    );
    // Sky above the surface, everywhere.
    for x in (0..512).step_by(29) {
        assert!(is_sky(img.rgb(x, row(50.0))));
    }
}

fn is_green(c: [u8; 3]) -> bool {
    c[1] as i32 > c[0] as i32 + 25 && c[1] as i32 > c[2] as i32 + 25
}

#[test]
fn grass_grows_on_open_ground_not_on_cave_floors() {
    // Solid below y = 40 with a closed cave (air bubble of radius 8 at
    // (64, 20)) whose floor faces up.
    let field = Field2::from_fn(129, 65, |x, y| {
        let ground = (40.0 - y as f32) / 2.0;
        let cave = (8.0 - ((x as f32 - 64.0).powi(2) + (y as f32 - 20.0).powi(2)).sqrt()) / 2.0;
        ground.min(-cave).clamp(-1.0, 1.0)
    })
    .unwrap();
    let table = MaterialTable::side2d_default();
    let options = PngOptions::DEFAULT
        .with_pixels_per_cell(4.0)
        .with_draw_contours(false);
    let img = decode(&export_side2d_png(&field, None, &table, &[], &options).unwrap());
    let row = |y_cells: f32| ((64.0 - y_cells) * 4.0) as u32;
    // Just under the open surface: grass, all along.
    for x in (8..504).step_by(31) {
        let c = img.rgb(x, row(39.6));
        assert!(is_green(c), "no grass at x {x}: {c:?}");
        // A cell and a half down it is the ground's own colour again.
        assert!(!is_green(img.rgb(x, row(38.3))), "grass too deep at x {x}");
    }
    // The cave's floor faces up too, but no sky reaches it.
    let floor = img.rgb(64 * 4, row(11.6));
    assert!(!is_green(floor), "grass on a cave floor: {floor:?}");
    // Turned off, there is none.
    let plain = decode(
        &export_side2d_png(&field, None, &table, &[], &options.with_grass_rim(false)).unwrap(),
    );
    assert!(!is_green(plain.rgb(200, row(39.6))));
}

#[test]
fn explicit_scale_sets_the_size() {
    let field = half_solid();
    let table = MaterialTable::side2d_default();
    let opts = PngOptions::DEFAULT.with_pixels_per_cell(3.0);
    let img = decode(&export_side2d_png(&field, None, &table, &[], &opts).unwrap());
    assert_eq!((img.width, img.height), (96, 48));
    // Without a material grid the solid is material 0.
    assert!(same_family(img.rgb(48, 40), table.get(0).unwrap().color));
    // Less than a pixel per cell is supersampled, not aliased.
    let opts = PngOptions::DEFAULT.with_pixels_per_cell(0.5);
    let img = decode(&export_side2d_png(&field, None, &table, &[], &opts).unwrap());
    assert_eq!((img.width, img.height), (16, 8));
}

#[test]
fn iso_moves_the_surface() {
    let field = Field2::from_fn(17, 17, |_, y| y as f32 / 16.0).unwrap(); // 0 at the bottom, 1 at the top
    let table = MaterialTable::side2d_default();
    let opts = PngOptions::DEFAULT.with_pixels_per_cell(4.0).with_iso(0.5);
    let img = decode(&export_side2d_png(&field, None, &table, &[], &opts).unwrap());
    // Solid where value >= 0.5: the top half of the world, i.e. the top of the image.
    assert!(!is_sky(img.rgb(30, 10)));
    assert!(same_family(img.rgb(30, 10), table.get(0).unwrap().color));
    assert!(!same_family(img.rgb(30, 60), table.get(0).unwrap().color));
}

#[test]
fn contours_are_drawn_as_dark_lines() {
    let field = Field2::new(17, 17, -1.0).unwrap(); // all empty: sky everywhere
    let table = MaterialTable::side2d_default();
    let line = Polyline::new(vec![[2.0, 8.0], [14.0, 8.0]], false);
    let opts = PngOptions::DEFAULT.with_pixels_per_cell(8.0);
    let with = decode(
        &export_side2d_png(&field, None, &table, std::slice::from_ref(&line), &opts).unwrap(),
    );
    let without = decode(
        &export_side2d_png(
            &field,
            None,
            &table,
            &[line],
            &opts.with_draw_contours(false),
        )
        .unwrap(),
    );
    assert_eq!((with.width, with.height), (128, 128));
    // World y = 8 is image y = 128 - 64 = 64: rows 63 and 64 straddle it.
    for row in [63, 64] {
        let on = with.rgb(64, row);
        assert!(on.iter().all(|&v| v < 110), "line pixel {on:?}");
        assert!(is_sky(without.rgb(64, row)));
    }
    // Away from the line (and past its ends at x = 16 and 112) the two agree.
    assert_eq!(with.rgb(64, 20), without.rgb(64, 20));
    assert_eq!(with.rgb(120, 64), without.rgb(120, 64));
}

#[test]
fn generated_worlds_render() {
    let table = MaterialTable::side2d_default();
    for preset in Side2dPreset::ALL {
        let spec = Side2dGen::DEFAULT.with_preset(preset).with_size(128, 64);
        let (field, mats) = generate_side2d(&spec).unwrap();
        let img = decode(
            &export_side2d_png(&field, Some(&mats), &table, &[], &PngOptions::DEFAULT).unwrap(),
        );
        assert_eq!((img.width, img.height), (1024, 512));
        // Bedrock along the bottom (world rows 1 and 2).
        let c = img.rgb(512, img.height - 12);
        assert!(
            same_family(c, table.get(3).unwrap().color),
            "{preset}: {c:?}"
        );
    }
}

#[test]
fn bad_inputs_are_errors() {
    let field = half_solid();
    let table = MaterialTable::side2d_default();
    let render = |opts: PngOptions| export_side2d_png(&field, None, &table, &[], &opts);
    for ppc in [f32::NAN, -1.0, f32::INFINITY] {
        assert!(matches!(
            render(PngOptions::DEFAULT.with_pixels_per_cell(ppc)),
            Err(ExportError::InvalidParameter {
                name: "pixels_per_cell",
                ..
            })
        ));
    }
    assert!(matches!(
        render(PngOptions::DEFAULT.with_iso(f32::NAN)),
        Err(ExportError::InvalidParameter { name: "iso", .. })
    ));
    match render(PngOptions::DEFAULT.with_pixels_per_cell(1000.0)) {
        Err(e @ ExportError::ImageTooLarge { .. }) => {
            assert!(e.to_string().contains("pixels_per_cell"))
        }
        other => panic!("{other:?}"),
    }
    // Each side fits but the pixel count does not.
    let square = Field2::new(2, 2, 0.0).unwrap();
    assert!(matches!(
        export_side2d_png(
            &square,
            None,
            &table,
            &[],
            &PngOptions::DEFAULT.with_pixels_per_cell(MAX_IMAGE_SIDE as f32)
        ),
        Err(ExportError::ImageTooLarge { .. })
    ));
    let wrong = MaterialGrid::new(5, 5, 0).unwrap();
    assert!(matches!(
        export_side2d_png(&field, Some(&wrong), &table, &[], &PngOptions::DEFAULT),
        Err(ExportError::InvalidParameter {
            name: "materials",
            ..
        })
    ));
    // Material ids missing from the table are drawn, not rejected.
    let odd = MaterialGrid::like(&field, 200);
    assert!(export_side2d_png(&field, Some(&odd), &table, &[], &PngOptions::DEFAULT).is_ok());
    // Contours with non-finite or far-away points are skipped.
    let weird = vec![
        Polyline::new(
            vec![[f32::NAN, 1.0], [3.0, f32::INFINITY], [1e30, -1e30]],
            true,
        ),
        Polyline::new(vec![[5.0, 5.0]], false),
        Polyline::new(vec![], true),
    ];
    assert!(export_side2d_png(&field, None, &table, &weird, &PngOptions::DEFAULT).is_ok());
}

#[test]
fn gray_images_map_the_range_and_flip_y() {
    let field = Field2::from_fn(4, 3, |x, y| x as f32 + 10.0 * y as f32).unwrap(); // 0..=23
    let img = decode(&export_field_png_gray(&field, [0.0, 23.0], 8).unwrap());
    assert_eq!((img.width, img.height), (4, 3));
    assert_eq!(
        (img.color, img.depth),
        (png::ColorType::Grayscale, png::BitDepth::Eight)
    );
    // Row 0 of the image is the top row of the field (y = 2).
    assert_eq!(img.data[0], (20.0f32 / 23.0 * 255.0).round() as u8);
    assert_eq!(img.data[3], 255);
    assert_eq!(img.data[8], 0);

    let img = decode(&export_field_png_gray(&field, [5.0, 15.0], 16).unwrap());
    assert_eq!(img.depth, png::BitDepth::Sixteen);
    let px = |i: usize| u16::from_be_bytes([img.data[2 * i], img.data[2 * i + 1]]);
    assert_eq!(px(0), 65535); // 20 clamps to the top
    assert_eq!(px(8), 0); // 0 clamps to the bottom
    assert_eq!(px(4 + 1), (6.0f32 / 10.0 * 65535.0).round() as u16); // value 11

    for bits in [0, 1, 12, 32] {
        assert!(matches!(
            export_field_png_gray(&field, [0.0, 1.0], bits),
            Err(ExportError::InvalidParameter { name: "bits", .. })
        ));
    }
    for range in [
        [1.0, 1.0],
        [2.0, 1.0],
        [f32::NAN, 1.0],
        [0.0, f32::INFINITY],
        [-f32::MAX, f32::MAX],
    ] {
        assert!(matches!(
            export_field_png_gray(&field, range, 8),
            Err(ExportError::InvalidParameter { name: "range", .. })
        ));
    }
    let wide = Field2::new(20_000, 2, 0.0).unwrap();
    assert!(matches!(
        export_field_png_gray(&wide, [0.0, 1.0], 8),
        Err(ExportError::ImageTooLarge { .. })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn any_small_field_renders_to_a_valid_png(
        w in 2u32..24,
        h in 2u32..24,
        seed in any::<u64>(),
        ppc in prop_oneof![Just(0.0f32), 0.3f32..6.0],
        iso in -0.5f32..0.5,
    ) {
        let field = Field2::from_fn(w, h, |x, y| {
            let k = seed.wrapping_mul(x as u64 * 7919 + y as u64 * 104_729 + 1);
            ((k >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        }).unwrap();
        let mats = MaterialGrid::from_ids(w, h, (0..w * h).map(|i| (i % 7) as u8).collect()).unwrap();
        let table = MaterialTable::side2d_default();
        let contour = Polyline::new(vec![[0.0, 0.0], [w as f32, h as f32 * 0.5], [1.0, h as f32]], true);
        let opts = PngOptions::DEFAULT.with_pixels_per_cell(ppc).with_iso(iso);
        let bytes = export_side2d_png(&field, Some(&mats), &table, &[contour], &opts).unwrap();
        let img = decode(&bytes);
        let (_, iw, ih) = opts.image_size(w - 1, h - 1).unwrap();
        prop_assert_eq!((img.width, img.height), (iw, ih));
        prop_assert_eq!(img.data.len(), (iw * ih * 3) as usize);
    }
}
