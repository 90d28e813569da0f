//! A heightmap image imported through the real binary becomes a world of
//! just that image: its extent and range come from the file, the ground
//! outside carries its edge, exports default to exactly the image, and the
//! largest image isoterra exports imports again.
//!
//! `tests/data/jacksboro_dem.png` is a real DEM (see `tests/data/README.md`).

use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;
use common::*;

fn dem() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/jacksboro_dem.png")
}

/// The size and the 16-bit codes of a grayscale PNG16.
fn codes(file: &Path) -> ([u32; 2], Vec<u16>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(file).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let info = reader.info();
    assert_eq!(info.bit_depth, png::BitDepth::Sixteen);
    assert_eq!(info.color_type, png::ColorType::Grayscale);
    let dims = [info.width, info.height];
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut buf).unwrap();
    let codes = buf[..frame.buffer_size()]
        .chunks_exact(2)
        .map(|b| u16::from_be_bytes([b[0], b[1]]))
        .collect();
    (dims, codes)
}

fn info(file: &Path) -> Value {
    serde_json::from_str(&ok(&["info", s(file), "--json"])).unwrap()
}

/// The smallest and largest x and z over every POSITION accessor of a glb.
fn glb_extent(file: &Path) -> [f64; 4] {
    let bytes = std::fs::read(file).unwrap();
    assert_eq!(&bytes[..4], b"glTF");
    let n = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let json: Value = serde_json::from_slice(&bytes[20..20 + n]).unwrap();
    let mut e = [f64::MAX, f64::MAX, f64::MIN, f64::MIN];
    for mesh in json["meshes"].as_array().unwrap() {
        for p in mesh["primitives"].as_array().unwrap() {
            let a = &json["accessors"][p["attributes"]["POSITION"].as_u64().unwrap() as usize];
            let (min, max) = (&a["min"], &a["max"]);
            e[0] = e[0].min(min[0].as_f64().unwrap());
            e[1] = e[1].min(min[2].as_f64().unwrap());
            e[2] = e[2].max(max[0].as_f64().unwrap());
            e[3] = e[3].max(max[2].as_f64().unwrap());
        }
    }
    e
}

#[test]
fn a_real_dem_imports_as_its_own_world_and_exports_back_identical() {
    let dir = tempfile::tempdir().unwrap();
    let dem = dem();
    let (dims, input) = codes(&dem);
    assert_eq!(dims, [403, 344]);
    for (range, name) in [(None, "unit"), (Some("0,65535"), "metres")] {
        let world = dir.path().join(format!("{name}.isoterra"));
        let mut args = vec!["import", s(&dem), "-o", s(&world)];
        if let Some(r) = range {
            args.extend(["--range", r]);
        }
        let said = ok(&args);
        assert!(said.contains("403x344 samples"), "{said}");
        let i = info(&world);
        assert_eq!(i["extent"]["dims"], serde_json::json!([403, 344]), "{i}");
        assert_eq!(i["extent"]["outside"], "edge");
        assert_eq!(
            i["strokes_total"], 0,
            "an import is the world, not a stroke"
        );
        let want = if range.is_some() { 65535.0 } else { 1.0 };
        assert_eq!(i["height_range"][1].as_f64().unwrap(), want);

        // No --region, no --range: exactly the image, the same codes.
        let back = dir.path().join(format!("{name}.png"));
        let (_, stderr) = text(&run(&[
            "export",
            s(&world),
            "--format",
            "png16",
            "-o",
            s(&back),
        ]));
        assert!(!stderr.contains("warning"), "{stderr}");
        let (d2, output) = codes(&back);
        assert_eq!(d2, dims);
        assert!(output == input, "{name}: the codes changed on the way back");

        // A mesh export is exactly the image too: nodes 0..=402 by 0..=343.
        let glb = dir.path().join(format!("{name}.glb"));
        ok(&["export", s(&world), "--format", "glb", "-o", s(&glb)]);
        assert_eq!(glb_extent(&glb), [0.0, 0.0, 402.0, 343.0]);
        let glb1 = dir.path().join(format!("{name}1.glb"));
        ok(&[
            "export",
            s(&world),
            "--format",
            "glb",
            "--lod",
            "1",
            "-o",
            s(&glb1),
        ]);
        // At LOD 1 the region grows to whole two-node steps.
        assert_eq!(glb_extent(&glb1), [0.0, 0.0, 402.0, 344.0]);
    }
}

#[test]
fn outside_the_image_the_edge_carries_on_or_the_hills_do() {
    let dir = tempfile::tempdir().unwrap();
    let (dims, input) = codes(&dem());
    let (w, h) = (dims[0] as i64, dims[1] as i64);
    let world = dir.path().join("w.isoterra");
    ok(&["import", s(&dem()), "--range", "0,65535", "-o", s(&world)]);
    let around = dir.path().join("around.png");
    // Eight nodes beyond every side.
    let region = format!("-8,-8,{},{}", w - 1 + 8, h - 1 + 8);
    ok(&[
        "export",
        s(&world),
        "--format",
        "png16",
        "--region",
        &region,
        "-o",
        s(&around),
    ]);
    let (d, out) = codes(&around);
    assert_eq!(d, [dims[0] + 16, dims[1] + 16]);
    for j in 0..d[1] as i64 {
        for i in 0..d[0] as i64 {
            let (x, z) = ((i - 8).clamp(0, w - 1), (j - 8).clamp(0, h - 1));
            let want = input[(z * w + x) as usize];
            let got = out[(j * d[0] as i64 + i) as usize];
            assert_eq!(got, want, "node ({}, {})", i - 8, j - 8);
        }
    }

    // `--outside generated` keeps the image inside and the hills outside.
    let hills = dir.path().join("hills.isoterra");
    ok(&[
        "import",
        s(&dem()),
        "--range",
        "0,65535",
        "--outside",
        "generated",
        "-o",
        s(&hills),
    ]);
    assert_eq!(info(&hills)["extent"]["outside"], "generated");
    let back = dir.path().join("hills.png");
    ok(&["export", s(&hills), "--format", "png16", "-o", s(&back)]);
    assert!(codes(&back).1 == input);
    let hills_around = dir.path().join("hills_around.png");
    ok(&[
        "export",
        s(&hills),
        "--format",
        "png16",
        "--region",
        &region,
        "-o",
        s(&hills_around),
    ]);
    let (_, g) = codes(&hills_around);
    let differs = (0..d[0] as usize).filter(|&i| g[i] != out[i]).count();
    assert!(
        differs > d[0] as usize / 2,
        "the generated hills should differ from the carried edge ({differs} of {})",
        d[0]
    );
    let err = fails(&[
        "import",
        s(&dem()),
        "--outside",
        "sideways",
        "-o",
        s(&dir.path().join("x.isoterra")),
    ]);
    assert!(err.contains("edge") && err.contains("generated"), "{err}");
}

#[test]
fn heights_beyond_the_recorded_range_warn_or_with_strict_fail() {
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("w.isoterra");
    // Range 0..1: the DEM's codes become heights 0.0036..0.0164.
    ok(&["import", s(&dem()), "-o", s(&world)]);
    ok(&[
        "stroke",
        s(&world),
        "--tool",
        "raise",
        "--at",
        "200,170",
        "--radius",
        "20",
    ]);
    let out = dir.path().join("o.png");
    let o = run(&["export", s(&world), "--format", "png16", "-o", s(&out)]);
    let (_, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning:") && stderr.contains("clipped"),
        "{stderr}"
    );
    let strict = dir.path().join("strict.png");
    let err = fails(&[
        "export",
        s(&world),
        "--format",
        "png16",
        "--strict",
        "-o",
        s(&strict),
    ]);
    assert!(err.contains("would clip"), "{err}");
    assert!(!strict.exists(), "a refused export wrote a file");
    // A range that holds them exports without a word.
    let o = run(&[
        "export",
        s(&world),
        "--format",
        "png16",
        "--strict",
        "--range",
        "0,100",
        "-o",
        s(&strict),
    ]);
    assert!(o.status.success() && !text(&o).1.contains("warning"));
    let err = fails(&[
        "export",
        s(&world),
        "--format",
        "glb",
        "--strict",
        "-o",
        s(&dir.path().join("x.glb")),
    ]);
    assert!(err.contains("--strict"), "{err}");
}

/// isoterra imports its own largest exports: a 4097² heightmap (Unity's
/// largest terrain) round-trips through import and export, codes intact,
/// and an image at the documented limit of 64 Mpx imports as well.
#[test]
fn the_largest_heightmaps_import_and_export_again() {
    let dir = tempfile::tempdir().unwrap();
    let n = 4097u32;
    let heights: Vec<f32> = (0..n * n)
        .map(|k| {
            let (x, z) = ((k % n) as f32, (k / n) as f32);
            (x * 0.013).sin() * 40.0 + (z * 0.007).cos() * 25.0 + x * 0.002
        })
        .collect();
    let png = dir.path().join("big.png");
    std::fs::write(
        &png,
        isoterra::export::export_png16(&heights, [n, n], [-80.0, 80.0]).unwrap(),
    )
    .unwrap();
    let (_, input) = codes(&png);
    let world = dir.path().join("big.isoterra");
    ok(&["import", s(&png), "-o", s(&world)]);
    let back = dir.path().join("back.png");
    ok(&["export", s(&world), "--format", "png16", "-o", s(&back)]);
    let (d, output) = codes(&back);
    assert_eq!(d, [n, n]);
    assert!(output == input, "the 4097² codes changed on the way back");
    drop((input, output, heights));
    let again = dir.path().join("again.isoterra");
    ok(&["import", s(&back), "-o", s(&again)]);
    assert_eq!(info(&again)["extent"]["dims"], serde_json::json!([n, n]));

    // At the limit: 8192 x 8192 = 64 Mpx. One more row is refused, naming it.
    let at = |rows: u32| {
        let side = 8192u32;
        let img: Vec<f32> = (0..side * rows).map(|k| (k % 251) as f32).collect();
        isoterra::export::export_png16(&img, [side, rows], [0.0, 255.0])
    };
    let limit = dir.path().join("limit.png");
    std::fs::write(&limit, at(8192).unwrap()).unwrap();
    let limit_world = dir.path().join("limit.isoterra");
    ok(&["import", s(&limit), "-o", s(&limit_world)]);
    assert_eq!(
        info(&limit_world)["extent"]["dims"],
        serde_json::json!([8192, 8192])
    );
    match at(8193) {
        Err(e) => assert!(e.to_string().contains("64"), "{e}"),
        Ok(bytes) => {
            let over = dir.path().join("over.png");
            std::fs::write(&over, bytes).unwrap();
            let out = dir.path().join("over.isoterra");
            let err = fails(&["import", s(&over), "-o", s(&out)]);
            assert!(err.contains("pixels"), "{err}");
            assert!(!out.exists());
        }
    }
}

#[test]
fn exr_heights_go_out_and_in_as_floats() {
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("w.isoterra");
    ok(&["import", s(&dem()), "--range", "0,65535", "-o", s(&world)]);
    ok(&[
        "stroke",
        s(&world),
        "--tool",
        "noise",
        "--at",
        "100,100",
        "--radius",
        "30",
    ]);
    let exr = dir.path().join("w.exr");
    ok(&["export", s(&world), "--format", "exr", "-o", s(&exr)]);
    let img = isoterra::export::import_exr(&std::fs::read(&exr).unwrap()).unwrap();
    assert_eq!(img.dims, [403, 344]);
    // The noise left whole metres: the EXR keeps its fractions.
    assert!(img.heights.iter().any(|h| h.fract() != 0.0));
    // An EXR import is a world of those exact heights; its range is theirs.
    let again = dir.path().join("again.isoterra");
    ok(&["import", s(&exr), "-o", s(&again)]);
    let i = info(&again);
    let lo = img.heights.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = img
        .heights
        .iter()
        .copied()
        .fold(f32::NEG_INFINITY, f32::max);
    assert_eq!(i["height_range"], serde_json::json!([lo, hi]));
    let back = dir.path().join("back.exr");
    ok(&["export", s(&again), "--format", "exr", "-o", s(&back)]);
    let img2 = isoterra::export::import_exr(&std::fs::read(&back).unwrap()).unwrap();
    let bits = |v: &[f32]| v.iter().map(|h| h.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&img2.heights), bits(&img.heights));
    let err = fails(&[
        "export",
        s(&world),
        "--format",
        "exr",
        "--range",
        "0,1",
        "-o",
        s(&back),
    ]);
    assert!(err.contains("do not apply"), "{err}");
    let bad = dir.path().join("bad.exr");
    std::fs::write(&bad, b"v/1\x01\x02\x00\x00\x00garbage").unwrap();
    let out = dir.path().join("bad.isoterra");
    let err = fails(&["import", s(&bad), "-o", s(&out)]);
    assert!(err.contains("EXR"), "{err}");
    assert!(!out.exists());
}

/// A Python with the OpenEXR bindings (PyPI `OpenEXR`, the Academy
/// Software Foundation's library): `ISOTERRA_PYTHON`, else `python3`.
/// Without it the test says so loudly and passes, unless
/// `ISOTERRA_REQUIRE_OPENEXR=1` (CI sets it).
fn openexr_python() -> Option<String> {
    let python = std::env::var("ISOTERRA_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = std::process::Command::new(&python)
        .args(["-c", "import OpenEXR, numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some(python);
    }
    if std::env::var("ISOTERRA_REQUIRE_OPENEXR").as_deref() == Ok("1") {
        panic!("OpenEXR is required but `{python} -c 'import OpenEXR, numpy'` failed");
    }
    eprintln!(
        "\n*** SKIPPED: the OpenEXR Python bindings were not found (pip install OpenEXR, or set ISOTERRA_PYTHON) ***\n"
    );
    None
}

#[test]
fn the_openexr_library_reads_our_exr_and_writes_one_we_read() {
    let Some(python) = openexr_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("w.isoterra");
    ok(&["import", s(&dem()), "--range", "0,65535", "-o", s(&world)]);
    let exr = dir.path().join("w.exr");
    ok(&["export", s(&world), "--format", "exr", "-o", s(&exr)]);
    let (dims, codes) = codes(&dem());
    let raw = dir.path().join("dem.f32");
    let bytes: Vec<u8> = codes
        .iter()
        .flat_map(|&c| (c as f32).to_le_bytes())
        .collect();
    std::fs::write(&raw, bytes).unwrap();
    let theirs = dir.path().join("theirs.exr");
    // Reads ours, compares with the DEM, and writes a half-float `Y` image.
    let script = format!(
        r#"
import OpenEXR, numpy as np
with OpenEXR.File({ours:?}) as f:
    a = f.channels()["R"].pixels
dem = np.fromfile({raw:?}, dtype="<f4").reshape({h}, {w})
assert a.dtype == np.float32 and a.shape == dem.shape, (a.dtype, a.shape)
assert np.array_equal(a, dem), "heights differ"
OpenEXR.File({{"compression": OpenEXR.PIZ_COMPRESSION, "type": OpenEXR.scanlineimage}},
             {{"Y": dem.astype(np.float16)}}).write({theirs:?})
print("ok")
"#,
        ours = s(&exr),
        raw = s(&raw),
        theirs = s(&theirs),
        w = dims[0],
        h = dims[1],
    );
    let o = std::process::Command::new(&python)
        .args(["-c", &script])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success() && out.contains("ok"), "{out}\n{err}");
    let again = dir.path().join("theirs.isoterra");
    ok(&["import", s(&theirs), "-o", s(&again)]);
    let back = dir.path().join("back.exr");
    ok(&["export", s(&again), "--format", "exr", "-o", s(&back)]);
    let img = isoterra::export::import_exr(&std::fs::read(&back).unwrap()).unwrap();
    assert_eq!(img.dims, dims);
    // The DEM's whole metres (236..1076) are exact in half floats up to 2048.
    assert!(
        img.heights.iter().zip(&codes).all(|(h, c)| *h == *c as f32),
        "the half-float heights changed"
    );
}

/// An imported world's R16 export: exactly the image (no region, no range
/// given), refused while it is not square and padded with `--pad`; the
/// padded file imports again and exports byte for byte.
#[test]
fn an_imported_world_exports_r16_exactly_padded_to_a_square() {
    let dir = tempfile::tempdir().unwrap();
    let dem = dem();
    let (dims, input) = codes(&dem);
    let world = dir.path().join("dem.isoterra");
    ok(&["import", s(&dem), "-o", s(&world)]);
    let r16 = dir.path().join("dem.r16");
    let err = fails(&["export", s(&world), "--format", "r16", "-o", s(&r16)]);
    assert!(err.contains("403x344") && err.contains("--pad"), "{err}");
    assert!(!r16.exists());
    ok(&[
        "export",
        s(&world),
        "--format",
        "r16",
        "--pad",
        "-o",
        s(&r16),
    ]);
    let bytes = std::fs::read(&r16).unwrap();
    let side = dims[0] as usize;
    assert_eq!(bytes.len(), side * side * 2);
    let out: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect();
    let w = dims[0] as usize;
    for z in 0..side {
        // Rows past the image repeat its last row.
        let src = z.min(dims[1] as usize - 1);
        assert!(
            out[z * side..z * side + w] == input[src * w..src * w + w],
            "row {z} differs from image row {src}"
        );
    }
    // The square file is a world of its own (an R16 records no range: the
    // world's, 0..1) and comes back identical.
    assert_eq!(info(&world)["height_range"], serde_json::json!([0.0, 1.0]));
    let again = dir.path().join("again.isoterra");
    ok(&["import", s(&r16), "--range", "0,1", "-o", s(&again)]);
    let back = dir.path().join("back.r16");
    ok(&["export", s(&again), "--format", "r16", "-o", s(&back)]);
    assert!(
        std::fs::read(&back).unwrap() == bytes,
        "R16 round trip changed the file"
    );
}
