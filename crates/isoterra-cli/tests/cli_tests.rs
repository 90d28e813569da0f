//! Runs the real `isoterra` binary in temporary folders.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::*;

fn new_world(dir: &Path, name: &str) -> PathBuf {
    let file = dir.join(name);
    ok(&[
        "new",
        s(&file),
        "--kind",
        "side2d",
        "--seed",
        "3",
        "--size",
        "96x48",
        "--preset",
        "hills",
    ]);
    file
}

fn hash(file: &Path) -> String {
    let out = ok(&["info", s(file), "--hash"]);
    out.lines().last().unwrap().trim().to_string()
}

fn info_json(file: &Path) -> serde_json::Value {
    serde_json::from_str(&ok(&["info", s(file), "--json"])).unwrap()
}

#[test]
fn new_stroke_undo_redo_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let file = new_world(dir.path(), "w.isoterra");
    let info = info_json(&file);
    assert_eq!(info["kind"], "side2d");
    assert_eq!(info["width_cells"], 96);
    assert_eq!(info["height_cells"], 48);
    assert_eq!(info["seed"], 3);
    assert_eq!(info["strokes_total"], 0);

    let h0 = hash(&file);
    assert_eq!(h0.len(), hash(&file).len());
    ok(&[
        "stroke",
        s(&file),
        "--tool",
        "dig",
        "--at",
        "48,30",
        "--radius",
        "6",
    ]);
    let h1 = hash(&file);
    assert_ne!(h0, h1, "a dig into the ground changes the content");
    assert_eq!(info_json(&file)["strokes_total"], 1);

    ok(&["undo", s(&file)]);
    assert_eq!(hash(&file), h0, "undo restores the exact content");
    ok(&["redo", s(&file)]);
    assert_eq!(hash(&file), h1, "redo restores the edited content");
    let out = ok(&["redo", s(&file)]);
    assert!(out.contains("nothing to redo"), "{out}");

    ok(&[
        "stroke",
        s(&file),
        "--tool",
        "fill",
        "--at",
        "20,40",
        "--radius",
        "3",
        "--shape",
        "square",
    ]);
    let info = info_json(&file);
    assert_eq!(info["strokes_total"], 2);
    assert_eq!(info["undo_position"], 2);
}

#[test]
fn equal_content_gives_equal_hash_whatever_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let a = new_world(dir.path(), "a.isoterra");
    let b = new_world(dir.path(), "b.isoterra");
    assert_eq!(hash(&a), hash(&b));
    ok(&[
        "stroke",
        s(&a),
        "--tool",
        "dig",
        "--at",
        "30,30",
        "--radius",
        "5",
    ]);
    ok(&[
        "stroke",
        s(&a),
        "--tool",
        "dig",
        "--at",
        "60,30",
        "--radius",
        "5",
    ]);
    ok(&[
        "stroke",
        s(&b),
        "--tool",
        "dig",
        "--at",
        "70,20",
        "--radius",
        "4",
    ]);
    ok(&["undo", s(&b)]);
    ok(&[
        "stroke",
        s(&b),
        "--tool",
        "dig",
        "--at",
        "30,30",
        "--radius",
        "5",
    ]);
    ok(&[
        "stroke",
        s(&b),
        "--tool",
        "dig",
        "--at",
        "60,30",
        "--radius",
        "5",
    ]);
    assert_eq!(hash(&a), hash(&b));
}

#[test]
fn exports_png_svg_and_colliders() {
    let dir = tempfile::tempdir().unwrap();
    let file = new_world(dir.path(), "w.isoterra");
    ok(&[
        "stroke",
        s(&file),
        "--tool",
        "dig",
        "--at",
        "48,30",
        "--radius",
        "6",
    ]);

    let png = dir.path().join("w.png");
    ok(&["export", s(&file), "--format", "png", "-o", s(&png)]);
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");

    let svg = dir.path().join("w.svg");
    ok(&["export", s(&file), "--format", "svg", "-o", s(&svg)]);
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(
        svg.starts_with("<svg") || svg.starts_with("<?xml"),
        "{svg:.80}"
    );
    assert!(svg.contains("<path"));

    let json = dir.path().join("c.json");
    ok(&["export", s(&file), "--format", "colliders", "-o", s(&json)]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let lines = v["polylines"].as_array().unwrap();
    assert!(!lines.is_empty());
    for l in lines {
        assert_eq!(
            l["closed"], true,
            "the border is empty, so every collider closes"
        );
        assert!(l["points"].as_array().unwrap().len() >= 3);
    }
}

#[test]
fn unknown_format_lists_the_valid_ones() {
    let dir = tempfile::tempdir().unwrap();
    let file = new_world(dir.path(), "w.isoterra");
    let err = fails(&["export", s(&file), "--format", "gif", "-o", "x.gif"]);
    assert!(
        err.contains("png") && err.contains("svg") && err.contains("colliders"),
        "{err}"
    );
    let err = fails(&["new", "x.isoterra", "--kind", "marsh"]);
    assert!(err.contains("side2d"), "{err}");
    let err = fails(&[
        "stroke",
        s(&file),
        "--tool",
        "explode",
        "--at",
        "1,1",
        "--radius",
        "2",
    ]);
    assert!(err.contains("dig") && err.contains("fill"), "{err}");
}

#[test]
fn bad_sizes_are_refused_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for size in ["0x0", "12", "100000x100000", "axb"] {
        let file = dir
            .path()
            .join(format!("bad-{}.isoterra", size.replace('x', "_")));
        let err = fails(&["new", s(&file), "--size", size]);
        assert!(err.contains("error"), "{err}");
        assert!(
            !file.exists(),
            "a refused `new` leaves no file for size {size}"
        );
    }
}

#[test]
fn bad_brushes_are_refused_and_leave_the_file_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let file = new_world(dir.path(), "w.isoterra");
    ok(&[
        "stroke",
        s(&file),
        "--tool",
        "dig",
        "--at",
        "48,30",
        "--radius",
        "6",
    ]);
    let h = hash(&file);
    let before = info_json(&file);
    for (at, radius) in [
        ("48,30", "NaN"),
        ("48,30", "1e12"),
        ("48,30", "-3"),
        ("nan,3", "4"),
        ("48", "4"),
    ] {
        let err = fails(&[
            "stroke",
            s(&file),
            "--tool",
            "dig",
            "--at",
            at,
            "--radius",
            radius,
        ]);
        assert!(err.contains("error"), "{err}");
    }
    let err = fails(&[
        "stroke",
        s(&file),
        "--tool",
        "dig",
        "--at",
        "4,4",
        "--radius",
        "2",
        "--strength",
        "2",
    ]);
    assert!(err.contains("strength"), "{err}");
    assert_eq!(hash(&file), h);
    assert_eq!(info_json(&file), before);
}

#[test]
fn corrupt_and_foreign_files_give_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = new_world(dir.path(), "w.isoterra");
    let bytes = std::fs::read(&file).unwrap();

    let truncated = dir.path().join("t.isoterra");
    std::fs::write(&truncated, &bytes[..bytes.len() / 3]).unwrap();
    let err = fails(&["info", s(&truncated)]);
    assert!(err.contains("error"), "{err}");
    assert_eq!(
        std::fs::read(&truncated).unwrap(),
        &bytes[..bytes.len() / 3]
    );

    let garbage = dir.path().join("g.isoterra");
    std::fs::write(&garbage, b"this is not a world file at all, just text").unwrap();
    let err = fails(&[
        "stroke",
        s(&garbage),
        "--tool",
        "dig",
        "--at",
        "1,1",
        "--radius",
        "2",
    ]);
    assert!(err.contains("error"), "{err}");
    assert_eq!(
        std::fs::read(&garbage).unwrap(),
        b"this is not a world file at all, just text"
    );

    let missing = dir.path().join("missing.isoterra");
    fails(&["info", s(&missing)]);
    assert!(
        !missing.exists(),
        "opening a missing file does not create it"
    );

    let err = fails(&["new", s(&file)]);
    assert!(err.contains("exist"), "refuses to overwrite: {err}");
}

fn write_npy(path: &Path, w: u32, h: u32, f: impl Fn(u32, u32) -> f32) {
    let field = isoterra::field::Field2::from_fn(w, h, f).unwrap();
    std::fs::write(path, isoterra::export::export_npy_f32(&field)).unwrap();
}

#[test]
fn contour_npy_to_json_and_svg() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("disc.npy");
    // A disc of radius 10 around (20, 15): value 1 at the centre, 0 far away.
    write_npy(&npy, 41, 31, |x, y| {
        let d = ((x as f32 - 20.0).powi(2) + (y as f32 - 15.0).powi(2)).sqrt();
        (1.0 - d / 20.0).max(0.0)
    });
    let json = dir.path().join("lines.json");
    let o = run(&[
        "contour",
        "--npy",
        s(&npy),
        "--iso",
        "0.5",
        "--format",
        "json",
        "-o",
        s(&json),
        "--timings",
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}{stderr}");
    let timings: serde_json::Value = serde_json::from_str(stderr.lines().last().unwrap()).unwrap();
    for k in ["load_ms", "contour_ms", "write_ms"] {
        assert!(timings[k].as_f64().unwrap() >= 0.0, "{timings}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let lines = v["polylines"].as_array().unwrap();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["closed"], true);
    for p in lines[0]["points"].as_array().unwrap() {
        let (x, y) = (p[0].as_f64().unwrap(), p[1].as_f64().unwrap());
        let r = ((x - 20.0).powi(2) + (y - 15.0).powi(2)).sqrt();
        assert!(
            (r - 10.0).abs() < 0.3,
            "point ({x}, {y}) is {r} from the centre"
        );
    }

    let simplified = dir.path().join("simple.json");
    ok(&[
        "contour",
        "--npy",
        s(&npy),
        "--iso",
        "0.5",
        "--simplify",
        "0.5",
        "-o",
        s(&simplified),
    ]);
    let v2: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&simplified).unwrap()).unwrap();
    let n_full = lines[0]["points"].as_array().unwrap().len();
    let n_simple = v2["polylines"][0]["points"].as_array().unwrap().len();
    assert!(n_simple < n_full && n_simple >= 3, "{n_simple} vs {n_full}");

    let svg = dir.path().join("lines.svg");
    ok(&[
        "contour",
        "--npy",
        s(&npy),
        "--iso",
        "0.5",
        "--format",
        "svg",
        "-o",
        s(&svg),
    ]);
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<path"));
}

#[test]
fn contour_names_the_first_nan() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("nan.npy");
    // Build a float32 .npy by hand with a NaN at row 2, column 3.
    let (h, w) = (4usize, 5usize);
    let mut data = vec![0.5f32; h * w];
    data[2 * w + 3] = f32::NAN;
    data[3 * w + 4] = f32::NAN;
    let header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({h}, {w}), }}");
    let mut header = header.into_bytes();
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(&header);
    for v in data {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(&npy, bytes).unwrap();
    let out = dir.path().join("o.json");
    let err = fails(&["contour", "--npy", s(&npy), "--iso", "0", "-o", s(&out)]);
    assert!(
        err.contains("2") && err.contains("3"),
        "names row 2, column 3: {err}"
    );
    assert!(!out.exists());

    let err = fails(&["contour", "--npy", s(&npy), "--iso", "nan", "-o", s(&out)]);
    assert!(err.contains("iso"), "{err}");
    let trunc = dir.path().join("trunc.npy");
    std::fs::write(&trunc, b"\x93NUMPY\x01\x00\x20").unwrap();
    fails(&["contour", "--npy", s(&trunc), "--iso", "0", "-o", s(&out)]);
}

#[test]
fn demo_writes_a_world_and_a_png() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo");
    ok(&["demo", "--out", s(&out)]);
    assert!(out.join("demo.isoterra").exists());
    let png = std::fs::read(out.join("demo.png")).unwrap();
    assert_eq!(&png[..4], b"\x89PNG");
    let info = info_json(&out.join("demo.isoterra"));
    assert!(info["strokes_total"].as_u64().unwrap() >= 5);
    // The demo replaces its own earlier output rather than failing.
    ok(&["demo", "--out", s(&out)]);
}

#[test]
fn bench_json_lines_have_the_documented_fields() {
    let out = ok(&["bench", "noise", "--json", "--reps", "1"]);
    let line = out.lines().next().unwrap();
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(v["group"], "noise");
    assert_eq!(v["name"], "fbm2d_4oct_1024");
    assert_eq!(v["unit"], "ns/sample");
    assert!(v["value"].as_f64().unwrap() > 0.0);
    // The machine's load around the run and its core count come with every line.
    if std::path::Path::new("/proc/loadavg").exists() {
        assert_eq!(v["load_start"].as_array().map(Vec::len), Some(3));
        assert_eq!(v["load_end"].as_array().map(Vec::len), Some(3));
    }
    assert!(v["cpus"].as_u64().unwrap() >= 1);
    // And which build of the batch loops ran (their speed depends on it).
    let build = v["vector_build"].as_str().unwrap();
    assert!(["avx512", "avx2", "portable"].contains(&build), "{build}");
    // And the core's speed on a fixed chain of integer steps.
    assert!(v["core_yardstick"].as_f64().unwrap() > 0.0);
    // And how fast one thread reads a 64 MiB buffer.
    let gbs = v["read_yardstick_gbs"].as_f64().unwrap();
    assert!(gbs.is_finite() && gbs > 0.0, "{gbs}");
}

/// `bench squares` reports each contour and fill workload warm and cold
/// (one-shot), the contours on one and two threads, with CPU time and page
/// faults beside the wall time.
#[test]
fn bench_squares_reports_cold_and_warm() {
    let out = ok(&["bench", "squares", "--json", "--reps", "1"]);
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v["group"] == "squares")
        .collect();
    for base in [
        "contour_lines_sparse_2048",
        "contour_lines_dense_2048",
        "contour_lines_dense_8192",
        "fill_and_segments_dense_2048",
    ] {
        for (name, cold) in [(base.to_string(), 0.0), (format!("{base}_cold"), 1.0)] {
            let v = lines
                .iter()
                .find(|v| v["name"] == name.as_str())
                .unwrap_or_else(|| panic!("no {name} line in {out}"));
            assert_eq!(v["unit"], "ms");
            assert!(v["value"].as_f64().unwrap() > 0.0, "{v}");
            assert!(v["cpu_ms"].as_f64().unwrap() >= 0.0, "{v}");
            assert!(v["minor_faults"].as_f64().unwrap() >= 0.0, "{v}");
            assert_eq!(v["cold"].as_f64(), Some(cold), "{v}");
        }
    }
    // Contours on two threads too, warm and cold.
    for base in ["contour_lines_dense_2048", "contour_lines_dense_8192"] {
        for (name, cold) in [
            (format!("{base}_threads_2"), 0.0),
            (format!("{base}_cold_threads_2"), 1.0),
        ] {
            let v = lines
                .iter()
                .find(|v| v["name"] == name.as_str())
                .unwrap_or_else(|| panic!("no {name} line in {out}"));
            assert!(v["value"].as_f64().unwrap() > 0.0, "{v}");
            assert_eq!(v["threads"].as_f64(), Some(2.0), "{v}");
            assert_eq!(v["cold"].as_f64(), Some(cold), "{v}");
        }
    }
    // The machine's rate of fresh memory, and the floor it puts under a cold
    // fill: the warm time plus zeroing the output's pages.
    if cfg!(target_os = "linux") {
        let all: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let fresh = all
            .iter()
            .find(|v| v["name"] == "fresh_pages")
            .unwrap_or_else(|| panic!("no fresh_pages line in {out}"));
        assert_eq!(
            (&fresh["group"], &fresh["unit"]),
            (&"memory".into(), &"GB/s".into())
        );
        assert!(fresh["value"].as_f64().unwrap() > 0.0, "{fresh}");
        let value = |name: &str, field: &str| {
            let v = lines.iter().find(|v| v["name"] == name).unwrap();
            v[field]
                .as_f64()
                .unwrap_or_else(|| panic!("no {field} in {v}"))
        };
        let warm = value("fill_and_segments_dense_2048", "wall_ms");
        let zeroing = value("fill_and_segments_dense_2048_cold", "fresh_pages_ms");
        let floor = value("fill_and_segments_dense_2048_cold", "cold_floor_ms");
        // (The figures are printed to three decimals.)
        assert!(
            zeroing > 0.0 && (floor - warm - zeroing).abs() < 0.01,
            "{out}"
        );
    }
}

/// A ball of radius 6 around (10, 9, 8) in a (Z, Y, X) = (16, 18, 20) volume,
/// as `1 - distance / 6` (inside where >= 0).
fn ball_npy(path: &Path) {
    let mut data = Vec::new();
    for z in 0..16 {
        for y in 0..18 {
            for x in 0..20 {
                let d = ((x as f32 - 10.0).powi(2)
                    + (y as f32 - 9.0).powi(2)
                    + (z as f32 - 8.0).powi(2))
                .sqrt();
                data.extend_from_slice(&(1.0 - d / 6.0).to_le_bytes());
            }
        }
    }
    std::fs::write(path, npy_bytes("<f4", "(16, 18, 20)", &data)).unwrap();
}

/// Parses the vertex and face blocks of a binary PLY written by `mesh3d`.
fn parse_ply(bytes: &[u8]) -> (Vec<[f32; 6]>, Vec<[u32; 3]>) {
    let end = bytes
        .windows(11)
        .position(|w| w == b"end_header\n")
        .unwrap()
        + 11;
    let header = std::str::from_utf8(&bytes[..end]).unwrap();
    let count = |key: &str| -> usize {
        header
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let (nv, nf) = (count("element vertex "), count("element face "));
    assert!(header.contains("property float nx"));
    let f = |o: usize| f32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
    let verts = (0..nv)
        .map(|i| {
            let o = end + i * 24;
            [f(o), f(o + 4), f(o + 8), f(o + 12), f(o + 16), f(o + 20)]
        })
        .collect();
    let base = end + nv * 24;
    let faces = (0..nf)
        .map(|i| {
            let o = base + i * 13;
            assert_eq!(bytes[o], 3);
            let g = |k: usize| {
                i32::from_le_bytes(bytes[o + 1 + 4 * k..o + 5 + 4 * k].try_into().unwrap()) as u32
            };
            [g(0), g(1), g(2)]
        })
        .collect();
    assert_eq!(base + nf * 13, bytes.len());
    (verts, faces)
}

#[test]
fn mesh3d_writes_a_closed_ball_in_sample_index_units() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("ball.npy");
    ball_npy(&npy);
    let ply = dir.path().join("ball.ply");
    let o = run(&[
        "mesh3d",
        "--npy",
        s(&npy),
        "--iso",
        "0",
        "--format",
        "ply",
        "-o",
        s(&ply),
        "--timings",
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}{stderr}");
    let t: serde_json::Value = serde_json::from_str(stderr.lines().last().unwrap()).unwrap();
    for k in ["load_ms", "mesh_ms", "write_ms"] {
        assert!(t[k].as_f64().unwrap() >= 0.0, "{t}");
    }
    let (verts, faces) = parse_ply(&std::fs::read(&ply).unwrap());
    assert_eq!(t["vertices"].as_u64().unwrap() as usize, verts.len());
    assert_eq!(t["triangles"].as_u64().unwrap() as usize, faces.len());
    // Every vertex lies near the sphere (sample units, x along the last axis)
    // and its normal points away from the centre.
    for v in &verts {
        let c = [v[0] - 10.0, v[1] - 9.0, v[2] - 8.0];
        let r = (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt();
        assert!((r - 6.0).abs() < 0.3, "vertex {v:?} at radius {r}");
        let dot = (c[0] * v[3] + c[1] * v[4] + c[2] * v[5]) / r;
        assert!(dot > 0.8, "normal {v:?} does not point outwards");
    }
    // Closed and edge-manifold: each undirected edge is used by exactly two
    // triangles, once in each direction.
    let mut edges = std::collections::HashMap::new();
    for f in &faces {
        for k in 0..3 {
            *edges.entry((f[k], f[(k + 1) % 3])).or_insert(0) += 1;
        }
    }
    for (&(a, b), &n) in &edges {
        assert_eq!(n, 1, "directed edge {a}->{b} used {n} times");
        assert!(edges.contains_key(&(b, a)), "edge {a}->{b} has no twin");
    }

    let obj = dir.path().join("ball.obj");
    ok(&[
        "mesh3d",
        "--npy",
        s(&npy),
        "--iso",
        "0",
        "--format",
        "obj",
        "-o",
        s(&obj),
    ]);
    let text = std::fs::read_to_string(&obj).unwrap();
    assert_eq!(
        text.lines().filter(|l| l.starts_with("v ")).count(),
        verts.len()
    );
    assert_eq!(
        text.lines().filter(|l| l.starts_with("vn ")).count(),
        verts.len()
    );
    assert_eq!(
        text.lines().filter(|l| l.starts_with("f ")).count(),
        faces.len()
    );

    let glb = dir.path().join("ball.glb");
    ok(&[
        "mesh3d",
        "--npy",
        s(&npy),
        "--iso",
        "0",
        "--format",
        "glb",
        "-o",
        s(&glb),
        "--no-normals",
    ]);
    assert_eq!(&std::fs::read(&glb).unwrap()[..4], b"glTF");
}

#[test]
fn mesh3d_bad_input_gets_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.ply");
    let mut data: Vec<u8> = (0..24).flat_map(|_| 1.0f32.to_le_bytes()).collect();
    let bad = (12 + 2 * 4 + 1) * 4; // [z=1, y=2, x=1] of shape (2, 3, 4)
    data[bad..bad + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    let nan = dir.path().join("nan.npy");
    std::fs::write(&nan, npy_bytes("<f4", "(2, 3, 4)", &data)).unwrap();
    let err = fails(&[
        "mesh3d",
        "--npy",
        s(&nan),
        "--iso",
        "0",
        "--format",
        "ply",
        "-o",
        s(&out),
    ]);
    assert!(err.contains("[1, 2, 1]"), "names [z, y, x]: {err}");

    let flat = dir.path().join("flat.npy");
    std::fs::write(&flat, npy_bytes("<f4", "(6, 4)", &data)).unwrap();
    let err = fails(&[
        "mesh3d",
        "--npy",
        s(&flat),
        "--iso",
        "0",
        "--format",
        "ply",
        "-o",
        s(&out),
    ]);
    assert!(err.contains("3D"), "{err}");

    let ints = dir.path().join("i4.npy");
    std::fs::write(&ints, npy_bytes("<i4", "(2, 3, 4)", &data)).unwrap();
    let err = fails(&[
        "mesh3d",
        "--npy",
        s(&ints),
        "--iso",
        "0",
        "--format",
        "ply",
        "-o",
        s(&out),
    ]);
    assert!(err.contains("dtype"), "{err}");

    // 700^3 nodes (above the old 2^28 cap) pass the size check, so a header
    // without its data is reported as truncated; 2^31 nodes do not.
    let big = dir.path().join("big.npy");
    std::fs::write(&big, npy_bytes("<f4", "(700, 700, 700)", &[])).unwrap();
    fn args<'a>(npy: &'a std::path::Path, out: &'a std::path::Path) -> Vec<&'a str> {
        let mut a = vec!["mesh3d", "--npy", s(npy)];
        a.extend(["--iso", "0", "--format", "ply", "-o", s(out)]);
        a
    }
    let err = fails(&args(&big, &out));
    assert!(
        err.contains("truncated") && err.contains("1372000000 bytes"),
        "{err}"
    );
    let huge = dir.path().join("huge.npy");
    std::fs::write(&huge, npy_bytes("<f4", "(2048, 1024, 1024)", &[])).unwrap();
    let err = fails(&args(&huge, &out));
    assert!(err.contains("1024x1024x2048 nodes"), "{err}");
    let err = fails(&args(dir.path(), &out));
    assert!(err.contains("folder"), "{err}");
    assert!(!out.exists(), "a failed mesh3d wrote its output");

    let bytes = dir.path().join("u1.npy");
    std::fs::write(&bytes, npy_bytes("|u1", "(2, 3, 4)", &[200; 24])).unwrap();
    ok(&[
        "mesh3d",
        "--npy",
        s(&bytes),
        "--iso",
        "100",
        "--format",
        "ply",
        "-o",
        s(&out),
    ]);

    let err = fails(&[
        "mesh3d",
        "--npy",
        s(&bytes),
        "--iso",
        "inf",
        "--format",
        "ply",
        "-o",
        s(&out),
    ]);
    assert!(err.contains("iso"), "{err}");
    let err = fails(&[
        "mesh3d",
        "--npy",
        s(&bytes),
        "--iso",
        "0",
        "--format",
        "stl",
        "-o",
        s(&out),
    ]);
    assert!(err.contains("ply") && err.contains("glb"), "{err}");
    assert!(!dir.path().join("missing").exists());
}

/// `mesh3d` reads a volume from a pipe, whose length nobody knows up front,
/// and meshes what it would mesh from the file.
#[cfg(unix)]
#[test]
fn mesh3d_reads_a_volume_from_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let n = 12usize;
    let data: Vec<u8> = (0..n * n * n)
        .flat_map(|i| {
            let (x, y, z) = (i % n, i / n % n, i / (n * n));
            let d = |a: usize| a as f32 - 5.5;
            ((d(x).powi(2) + d(y).powi(2) + d(z).powi(2)).sqrt() - 4.0).to_le_bytes()
        })
        .collect();
    let bytes = npy_bytes("<f4", &format!("({n}, {n}, {n})"), &data);
    let file = dir.path().join("ball.npy");
    std::fs::write(&file, &bytes).unwrap();
    let pipe = dir.path().join("ball.pipe");
    let made = std::process::Command::new("mkfifo").arg(&pipe).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED: mkfifo is not available");
        return;
    }
    let feed = |pipe: PathBuf, bytes: Vec<u8>| {
        // A reader that gives up early breaks the pipe: not an error here.
        std::thread::spawn(move || {
            let _ = std::fs::write(&pipe, &bytes);
        })
    };
    // Lets a writer still waiting for a reader finish (if the command
    // failed before it opened the pipe), so that joining it cannot hang.
    let release = |pipe: &Path| {
        use std::os::unix::fs::OpenOptionsExt;
        let _ = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(pipe);
    };
    let (from_file, from_pipe) = (dir.path().join("f.ply"), dir.path().join("p.ply"));
    let writer = feed(pipe.clone(), bytes);
    ok(&[
        "mesh3d",
        "--npy",
        s(&pipe),
        "--iso",
        "0",
        "--format",
        "ply",
        "-o",
        s(&from_pipe),
    ]);
    release(&pipe);
    writer.join().unwrap();
    ok(&[
        "mesh3d",
        "--npy",
        s(&file),
        "--iso",
        "0",
        "--format",
        "ply",
        "-o",
        s(&from_file),
    ]);
    let (a, b) = (
        std::fs::read(&from_file).unwrap(),
        std::fs::read(&from_pipe).unwrap(),
    );
    assert!(a.len() > 1000);
    assert_eq!(a, b);

    // A pipe that announces 700^3 values (1.37 GB of f32) to a process that
    // may map only about 1 GB: the allocation fails and is reported, with no
    // abort and no output.
    let writer = feed(pipe.clone(), npy_bytes("<f4", "(700, 700, 700)", &[]));
    let out = dir.path().join("o.ply");
    let run = Command::new("sh")
        .arg("-c")
        // One thread: on a machine with many cores, the address space each
        // worker's allocator arena reserves would count against the limit.
        .arg("ulimit -v 1000000 && exec \"$0\" mesh3d --npy \"$1\" --iso 0 --format ply --threads 1 -o \"$2\"")
        .arg(env!("CARGO_BIN_EXE_isoterra"))
        .arg(&pipe)
        .arg(&out)
        .output()
        .unwrap();
    release(&pipe);
    writer.join().unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(
        err.contains("343000000 values need 1309 MiB of memory"),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn voxel_world_new_stroke_undo_export() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("v.isoterra");
    ok(&[
        "new",
        s(&file),
        "--kind",
        "voxel",
        "--seed",
        "5",
        "--preset",
        "caves",
        "--chunk",
        "16",
    ]);
    let info = info_json(&file);
    assert_eq!(info["kind"], "voxel");
    assert_eq!(info["preset"], "caves");
    let h0 = hash(&file);

    // Add a ball of solid high in the air, where the generator has none.
    ok(&[
        "stroke",
        s(&file),
        "--tool",
        "add",
        "--at",
        "8,200,8",
        "--radius",
        "5",
        "--material",
        "2",
    ]);
    let h1 = hash(&file);
    assert_ne!(h0, h1);
    let obj = dir.path().join("ball.obj");
    let o = run(&[
        "export",
        s(&file),
        "--format",
        "obj",
        "--region",
        "0,190,0,16,210,16",
        "-o",
        s(&obj),
        "--timings",
    ]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stdout}{stderr}");
    let t: serde_json::Value = serde_json::from_str(stderr.lines().last().unwrap()).unwrap();
    assert!(t["triangles"].as_u64().unwrap() > 50, "{t}");
    let text = std::fs::read_to_string(&obj).unwrap();
    for line in text.lines().filter(|l| l.starts_with("v ")) {
        let v: Vec<f32> = line[2..]
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        let r = ((v[0] - 8.0).powi(2) + (v[1] - 200.0).powi(2) + (v[2] - 8.0).powi(2)).sqrt();
        assert!(
            (r - 5.0).abs() < 1.0,
            "vertex {v:?} is {r} from the ball centre"
        );
    }
    let glb = dir.path().join("ball.glb");
    ok(&[
        "export",
        s(&file),
        "--format",
        "glb",
        "--region",
        "0,190,0,16,210,16",
        "-o",
        s(&glb),
    ]);
    assert_eq!(&std::fs::read(&glb).unwrap()[..4], b"glTF");

    ok(&["undo", s(&file)]);
    assert_eq!(hash(&file), h0);
    ok(&["redo", s(&file)]);
    assert_eq!(hash(&file), h1);

    // Tools and formats of other kinds are refused with the valid list.
    let err = fails(&[
        "stroke",
        s(&file),
        "--tool",
        "raise",
        "--at",
        "1,2,3",
        "--radius",
        "2",
    ]);
    assert!(err.contains("dig") && err.contains("paint"), "{err}");
    let err = fails(&[
        "stroke",
        s(&file),
        "--tool",
        "dig",
        "--at",
        "1,2",
        "--radius",
        "2",
    ]);
    assert!(err.contains("X,Y,Z"), "{err}");
    let err = fails(&[
        "stroke",
        s(&file),
        "--tool",
        "dig",
        "--at",
        "1,2,3",
        "--radius",
        "NaN",
    ]);
    assert!(err.contains("error"), "{err}");
    let err = fails(&["export", s(&file), "--format", "png", "-o", s(&obj)]);
    assert!(err.contains("glb"), "{err}");
    let err = fails(&["export", s(&file), "--format", "glb", "-o", s(&glb)]);
    assert!(err.contains("--region"), "{err}");
    assert_eq!(hash(&file), h1, "refused commands change nothing");
}

#[test]
fn heightmap_world_sculpt_export_and_import_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("h.isoterra");
    ok(&[
        "new",
        s(&file),
        "--kind",
        "heightmap",
        "--seed",
        "9",
        "--preset",
        "mountains",
        "--chunk",
        "32",
    ]);
    let info = info_json(&file);
    assert_eq!(info["kind"], "heightmap");
    let range = info["height_range"].as_array().unwrap().clone();
    let h0 = hash(&file);
    ok(&[
        "stroke",
        s(&file),
        "--tool",
        "raise",
        "--at",
        "20,20",
        "--radius",
        "8",
    ]);
    ok(&[
        "stroke",
        s(&file),
        "--tool",
        "flatten",
        "--at",
        "40,10",
        "--radius",
        "6",
        "--height",
        "3",
    ]);
    assert_ne!(hash(&file), h0);
    ok(&["undo", s(&file)]);
    ok(&["undo", s(&file)]);
    assert_eq!(hash(&file), h0);
    ok(&["redo", s(&file)]);

    // Two adjacent tiles share their border column exactly.
    let a = dir.path().join("a.png");
    let b = dir.path().join("b.png");
    ok(&[
        "export",
        s(&file),
        "--format",
        "png16",
        "--region",
        "0,0,32,32",
        "-o",
        s(&a),
    ]);
    ok(&[
        "export",
        s(&file),
        "--format",
        "png16",
        "--region",
        "32,0,64,32",
        "-o",
        s(&b),
    ]);
    let decode =
        |p: &Path| isoterra::export::import_png16(&std::fs::read(p).unwrap(), None).unwrap();
    let (ia, ib) = (decode(&a), decode(&b));
    assert_eq!(ia.dims, [33, 33]);
    assert!(ia.range_from_file);
    assert_eq!(ia.range[0] as f64, range[0].as_f64().unwrap());
    for z in 0..33 {
        assert_eq!(ia.heights[z * 33 + 32], ib.heights[z * 33], "row {z}");
    }

    let r16 = dir.path().join("a.r16");
    ok(&[
        "export",
        s(&file),
        "--format",
        "r16",
        "--region",
        "0,0,32,32",
        "-o",
        s(&r16),
        "--range",
        "-300,300",
    ]);
    assert_eq!(std::fs::read(&r16).unwrap().len(), 33 * 33 * 2);

    let glb = dir.path().join("t.glb");
    ok(&[
        "export",
        s(&file),
        "--format",
        "glb",
        "--region",
        "0,0,64,64",
        "--lod",
        "1",
        "-o",
        s(&glb),
    ]);
    assert_eq!(&std::fs::read(&glb).unwrap()[..4], b"glTF");

    // Import the exported tile into a new world: heights come back to within
    // one 16-bit step of the range.
    let imported = dir.path().join("i.isoterra");
    ok(&["import", s(&a), "-o", s(&imported)]);
    let back = dir.path().join("back.png");
    let lo = range[0].as_f64().unwrap();
    let hi = range[1].as_f64().unwrap();
    let r = format!("{lo},{hi}");
    ok(&[
        "export",
        s(&imported),
        "--format",
        "png16",
        "--region",
        "0,0,32,32",
        "--range",
        &r,
        "-o",
        s(&back),
    ]);
    let ic = decode(&back);
    let step = ((hi - lo) / 65535.0) as f32;
    for (x, y) in ia.heights.iter().zip(&ic.heights) {
        assert!((x - y).abs() <= step * 1.01, "{x} vs {y}");
    }

    let err = fails(&[
        "export",
        s(&file),
        "--format",
        "png16",
        "--region",
        "0,0,32,32",
        "--range",
        "5,1",
        "-o",
        s(&a),
    ]);
    assert!(err.contains("range"), "{err}");
    let err = fails(&[
        "stroke",
        s(&file),
        "--tool",
        "dig",
        "--at",
        "1,2",
        "--radius",
        "2",
    ]);
    assert!(err.contains("raise"), "{err}");
    let bad = dir.path().join("bad.png");
    std::fs::write(&bad, b"\x89PNG\r\n\x1a\nnot really").unwrap();
    let out = dir.path().join("bad.isoterra");
    fails(&["import", s(&bad), "-o", s(&out)]);
    assert!(!out.exists(), "a failed import leaves no world file");
}

/// Runs the Khronos glTF validator (crates/isoterra-export/tests/validator) on
/// `file` and asserts 0 errors. Skips loudly when it is not installed, unless
/// `ISOTERRA_REQUIRE_VALIDATOR=1`.
fn assert_valid_glb(file: &Path) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../isoterra-export/tests/validator");
    let installed = dir.join("node_modules/gltf-validator").exists();
    if !installed {
        let msg = format!(
            "SKIPPED: gltf-validator not installed; run npm ci in {}",
            dir.display()
        );
        if std::env::var("ISOTERRA_REQUIRE_VALIDATOR").is_ok_and(|v| v == "1") {
            panic!("{msg} (ISOTERRA_REQUIRE_VALIDATOR=1)");
        }
        eprintln!("{msg}");
        return;
    }
    let out = Command::new("node")
        .arg(dir.join("validate.mjs"))
        .arg(file)
        .output()
        .expect("node runs");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert!(
        out.status.success() && report["issues"]["numErrors"] == 0,
        "{} is not valid glTF:\n{}\n{}",
        file.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn exported_glb_files_pass_the_khronos_validator() {
    let dir = tempfile::tempdir().unwrap();
    let hm = dir.path().join("h.isoterra");
    ok(&[
        "new",
        s(&hm),
        "--kind",
        "heightmap",
        "--seed",
        "2",
        "--chunk",
        "32",
    ]);
    ok(&[
        "stroke",
        s(&hm),
        "--tool",
        "raise",
        "--at",
        "30,30",
        "--radius",
        "10",
    ]);
    let glb = dir.path().join("h.glb");
    ok(&[
        "export",
        s(&hm),
        "--format",
        "glb",
        "--region",
        "0,0,64,64",
        "-o",
        s(&glb),
    ]);
    assert_valid_glb(&glb);

    let vx = dir.path().join("v.isoterra");
    ok(&[
        "new",
        s(&vx),
        "--kind",
        "voxel",
        "--seed",
        "2",
        "--chunk",
        "16",
    ]);
    let glb = dir.path().join("v.glb");
    ok(&[
        "export",
        s(&vx),
        "--format",
        "glb",
        "--region",
        "-8,-24,-8,24,24,24",
        "-o",
        s(&glb),
    ]);
    assert_valid_glb(&glb);

    let npy = dir.path().join("ball.npy");
    ball_npy(&npy);
    let glb = dir.path().join("ball.glb");
    ok(&[
        "mesh3d",
        "--npy",
        s(&npy),
        "--iso",
        "0",
        "--format",
        "glb",
        "-o",
        s(&glb),
    ]);
    assert_valid_glb(&glb);
}

#[test]
fn voxel_export_at_a_coarser_lod_is_closed_and_lighter() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("v.isoterra");
    ok(&[
        "new",
        s(&file),
        "--kind",
        "voxel",
        "--seed",
        "4",
        "--chunk",
        "8",
    ]);
    // A ball of solid in the air, well inside the exported region; its radius
    // keeps every node off the iso level, so vertices welded by position are
    // distinct.
    ok(&[
        "stroke",
        s(&file),
        "--tool",
        "add",
        "--at",
        "16.2,216.1,15.9",
        "--radius",
        "9.3",
    ]);
    let region = "0,200,0,32,232,32";
    let mut counts = Vec::new();
    for lod in ["0", "1"] {
        let obj = dir.path().join(format!("lod{lod}.obj"));
        ok(&[
            "export",
            s(&file),
            "--format",
            "obj",
            "--region",
            region,
            "--lod",
            lod,
            "-o",
            s(&obj),
        ]);
        let text = std::fs::read_to_string(&obj).unwrap();
        // Weld by exact position text and check that every edge has a twin.
        let mut verts = Vec::new();
        let mut edges = std::collections::HashMap::new();
        for line in text.lines() {
            if let Some(v) = line.strip_prefix("v ") {
                verts.push(v.to_string());
            } else if let Some(f) = line.strip_prefix("f ") {
                let ids: Vec<&str> = f
                    .split_whitespace()
                    .map(|t| {
                        verts[t.split('/').next().unwrap().parse::<usize>().unwrap() - 1].as_str()
                    })
                    .collect();
                for k in 0..3 {
                    *edges
                        .entry((ids[k].to_string(), ids[(k + 1) % 3].to_string()))
                        .or_insert(0) += 1;
                }
            }
        }
        assert!(!edges.is_empty(), "lod {lod} exported no triangles");
        for ((a, b), n) in &edges {
            assert_eq!(*n, 1, "lod {lod}: edge {a} -> {b} used {n} times");
            assert!(
                edges.contains_key(&(b.clone(), a.clone())),
                "lod {lod}: open edge {a} -> {b}"
            );
        }
        counts.push(edges.len());
    }
    assert!(
        counts[1] < counts[0],
        "LOD 1 has fewer edges than LOD 0: {counts:?}"
    );
    let err = fails(&[
        "export",
        s(&file),
        "--format",
        "obj",
        "--region",
        region,
        "--lod",
        "30",
        "-o",
        "x.obj",
    ]);
    assert!(err.contains("error"), "{err}");
}

#[cfg(unix)]
#[test]
fn output_paths_that_are_not_regular_files_are_refused_unless_forced() {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt, symlink};
    let dir = tempfile::tempdir().unwrap();
    let file = new_world(dir.path(), "w.isoterra");
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, b"precious").unwrap();

    // A symlink at the output path: refused, the link and its target stay.
    let link = dir.path().join("out.png");
    symlink(&victim, &link).unwrap();
    let err = fails(&["export", s(&file), "--format", "png", "-o", s(&link)]);
    assert!(
        err.contains("symbolic link") && err.contains("--force"),
        "{err}"
    );
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    // --force replaces the link itself, never what it points to.
    ok(&[
        "export",
        s(&file),
        "--format",
        "png",
        "-o",
        s(&link),
        "--force",
    ]);
    assert!(std::fs::symlink_metadata(&link).unwrap().is_file());
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");

    // A FIFO: refused without opening it (which would block).
    let fifo = dir.path().join("pipe.png");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let err = fails(&["export", s(&file), "--format", "png", "-o", s(&fifo)]);
    assert!(err.contains("not a regular file"), "{err}");
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );

    // A planted `.NAME.tmp` symlink does not redirect the write.
    let out = dir.path().join("real.png");
    let planted = dir.path().join(".real.png.tmp");
    symlink(&victim, &planted).unwrap();
    ok(&["export", s(&file), "--format", "png", "-o", s(&out)]);
    assert!(std::fs::read(&out).unwrap().starts_with(b"\x89PNG"));
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert!(
        std::fs::symlink_metadata(&planted)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A regular file is replaced, keeping its mode; no temporary is left.
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    ok(&["export", s(&file), "--format", "png", "-o", s(&out)]);
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp") && n != ".real.png.tmp")
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn an_interrupted_import_leaves_nothing_and_can_be_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("big.png");
    let (w, h) = (2048u32, 2048u32);
    let heights: Vec<f32> = (0..w * h)
        .map(|i| ((i % w) as f32 * 0.01).sin() * 10.0 + (i / w) as f32 * 0.004)
        .collect();
    let bytes = isoterra::export::export_png16(&heights, [w, h], [-12.0, 12.0]).unwrap();
    std::fs::write(&png, bytes).unwrap();
    let out = dir.path().join("w.isoterra");
    let mut child = bin()
        .args(["import", s(&png), "-o", s(&out)])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Interrupt it as soon as anything of the new world appears.
    let started = std::time::Instant::now();
    loop {
        let appeared = std::fs::read_dir(dir.path())
            .unwrap()
            .any(|e| e.unwrap().file_name() != "big.png");
        if appeared {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the import ended before writing anything"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "the import was still running when interrupted"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !out.exists(),
        "an interrupted import left a world at the output path"
    );
    // Running it again just works, and gives the imported heights.
    ok(&["import", s(&png), "-o", s(&out)]);
    let info = ok(&["info", s(&out)]);
    assert!(info.contains("heightmap"), "{info}");
    let again = fails(&["import", s(&png), "-o", s(&out)]);
    assert!(again.contains("already exists"), "{again}");
}

#[test]
fn edit_takes_localhost_as_a_host() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.isoterra");
    // A port that is taken: the command gets past argument parsing and
    // fails to bind, creating nothing.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let err = fails(&["edit", s(&file), "--host", "localhost", "--port", &port]);
    assert!(!err.contains("invalid value"), "{err}");
    assert!(err.contains("cannot serve"), "{err}");
    assert!(!file.exists(), "a failed bind created the world file");
    let err = fails(&["edit", s(&file), "--host", "my.example", "--port", &port]);
    assert!(err.contains("not an IP address or `localhost`"), "{err}");
}

#[cfg(unix)]
#[test]
fn an_endless_input_is_refused_at_its_size_limit() {
    let dir = tempfile::tempdir().unwrap();
    let zero = dir.path().join("zero.r16");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let out = dir.path().join("w.isoterra");
    let err = fails(&["import", s(&zero), "--range", "0,1", "-o", s(&out)]);
    assert!(err.contains("holds more than 256 MiB"), "{err}");
    assert!(!out.exists());
    // The extension is checked before anything is read.
    let other = dir.path().join("zero.bin");
    std::os::unix::fs::symlink("/dev/zero", &other).unwrap();
    let err = fails(&["import", s(&other), "-o", s(&out)]);
    assert!(err.contains("cannot import `.bin` files"), "{err}");
}

/// Voxel strokes take a solid (`--shape sphere|box|capsule`) and a blend
/// (`--blend K`, dig and add): each draws something else, undo and redo
/// give the hashes back, and bad shapes or blends are refused with the file
/// unchanged.
#[test]
fn voxel_box_capsule_and_blended_strokes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("v.isoterra");
    let f = s(&file);
    ok(&["new", f, "--kind", "voxel", "--seed", "5"]);
    let fresh = hash(&file);
    let mut hashes = Vec::new();
    for extra in [
        vec!["--shape", "sphere"],
        vec!["--shape", "box"],
        vec!["--shape", "capsule"],
        vec!["--shape", "sphere", "--blend", "3"],
    ] {
        let other = dir.path().join(format!("{}.isoterra", hashes.len()));
        std::fs::copy(&file, &other).unwrap();
        let mut args = vec![
            "stroke",
            s(&other),
            "--tool",
            "dig",
            "--at",
            "0,-6,0",
            "--radius",
            "5",
        ];
        args.extend(extra);
        assert!(ok(&args).contains("nodes changed"));
        hashes.push(hash(&other));
    }
    let distinct: std::collections::BTreeSet<&String> = hashes.iter().collect();
    assert_eq!(
        distinct.len(),
        4,
        "every shape and the blend draw something else"
    );
    ok(&[
        "stroke",
        f,
        "--tool",
        "add",
        "--at",
        "4,-2,4",
        "--radius",
        "4",
        "--shape",
        "capsule",
        "--blend",
        "2",
        "--material",
        "3",
    ]);
    let added = hash(&file);
    assert_ne!(added, fresh);
    ok(&["undo", f]);
    assert_eq!(hash(&file), fresh);
    ok(&["redo", f]);
    assert_eq!(hash(&file), added);
    for (args, needle) in [
        (vec!["--tool", "dig", "--shape", "square"], "2D shape"),
        (vec!["--tool", "dig", "--blend", "20"], "params.blend"),
        (vec!["--tool", "dig", "--blend", "nan"], "finite"),
        (vec!["--tool", "smooth", "--blend", "1"], "does not apply"),
    ] {
        let mut all = vec!["stroke", f, "--at", "0,-6,0", "--radius", "4"];
        all.extend(args);
        let e = fails(&all);
        assert!(e.contains(needle), "{e} lacks {needle}");
        assert_eq!(hash(&file), added);
    }
}

/// Output into a pipe whose reader has gone (`isoterra bench noise | head
/// -1` once head has its line) ends the process quietly: no panic message.
#[test]
fn a_closed_output_pipe_ends_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_isoterra"))
        .args(["bench", "noise", "--reps", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the read end before the first line is written.
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!err.contains("panicked"), "{err}");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?} {err}");
    }
}
