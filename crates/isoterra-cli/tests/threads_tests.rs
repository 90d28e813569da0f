//! `--threads`: the same bytes at any thread count, and bad counts refused.

mod common;

use std::path::Path;

use common::{fails, npy_bytes, ok, s};

/// Writes a little-endian float32 `.npy` of shape `shape` (C order).
fn npy_f32(path: &Path, shape: &[usize], data: &[f32]) {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(path, npy_bytes("<f4", &shape, &bytes)).unwrap();
}

/// A gyroid in a 48 x 40 x 37 box (x, y, z), with samples exactly at 0 on
/// some planes.
fn gyroid_volume() -> (Vec<usize>, Vec<f32>) {
    let (w, h, d) = (48, 40, 37);
    let mut v = Vec::with_capacity(w * h * d);
    for z in 0..d {
        for y in 0..h {
            for x in 0..w {
                let [a, b, c] = [x, y, z].map(|i| i as f32 * 0.41);
                let g = a.sin() * b.cos() + b.sin() * c.cos() + c.sin() * a.cos();
                v.push(if z % 9 == 4 { 0.0 } else { g });
            }
        }
    }
    (vec![d, h, w], v)
}

#[test]
fn mesh3d_writes_the_same_bytes_on_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("gyroid.npy");
    let (shape, data) = gyroid_volume();
    npy_f32(&npy, &shape, &data);
    for (format, no_normals) in [
        ("ply", false),
        ("glb", false),
        ("obj", true),
        ("obj", false),
    ] {
        let mut outputs = Vec::new();
        for threads in ["1", "2", "3"] {
            let out = dir.path().join(format!("mesh_{threads}.{format}"));
            let mut args = vec![
                "mesh3d",
                "--npy",
                s(&npy),
                "--iso",
                "0",
                "--format",
                format,
                "--threads",
                threads,
                "-o",
                s(&out),
            ];
            if no_normals {
                args.push("--no-normals");
            }
            ok(&args);
            outputs.push(std::fs::read(&out).unwrap());
        }
        assert!(outputs[0].len() > 100_000, "{format}: a real mesh");
        assert!(
            outputs[0] == outputs[1],
            "{format}: --threads 1 and --threads 2 differ"
        );
        assert!(
            outputs[0] == outputs[2],
            "{format}: --threads 1 and --threads 3 differ"
        );
    }
}

#[test]
fn bad_thread_counts_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("gyroid.npy");
    let (shape, data) = gyroid_volume();
    npy_f32(&npy, &shape, &data);
    let out = dir.path().join("m.ply");
    for (threads, says) in [
        ("0", "--threads 0: use at least 1 thread"),
        ("100000", "--threads 100000: at most 1024"),
    ] {
        let err = fails(&[
            "mesh3d",
            "--npy",
            s(&npy),
            "--iso",
            "0",
            "--format",
            "ply",
            "--threads",
            threads,
            "-o",
            s(&out),
        ]);
        assert!(err.contains(says), "{threads}: {err}");
        assert!(!out.exists());
    }
    let err = fails(&[
        "mesh3d",
        "--npy",
        s(&npy),
        "--iso",
        "0",
        "--format",
        "ply",
        "--threads",
        "-2",
        "-o",
        s(&out),
    ]);
    assert!(err.contains("-2"), "{err}");
}

#[test]
fn contour_writes_the_same_bytes_on_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("waves.npy");
    // Large enough that the JSON text is made in several pieces (more than
    // 16,384 points).
    let (w, h) = (900, 611);
    let mut data = Vec::with_capacity(w * h);
    for y in 0..h {
        for x in 0..w {
            let (a, b) = (x as f32 * 0.09, y as f32 * 0.13);
            let v = a.sin() + b.sin() + 0.3 * (0.7 * a + 1.3 * b + 0.5).sin();
            data.push(if y % 17 == 3 { 0.0 } else { v });
        }
    }
    npy_f32(&npy, &[h, w], &data);
    for format in ["json", "svg"] {
        let mut outputs = Vec::new();
        for threads in ["1", "2", "5"] {
            let out = dir.path().join(format!("lines_{threads}.{format}"));
            ok(&[
                "contour",
                "--npy",
                s(&npy),
                "--iso",
                "0",
                "--format",
                format,
                "--threads",
                threads,
                "-o",
                s(&out),
            ]);
            outputs.push(std::fs::read(&out).unwrap());
        }
        assert!(outputs[0].len() > 600_000, "{format}: real lines");
        assert!(
            outputs[0] == outputs[1],
            "{format}: --threads 1 and --threads 2 differ"
        );
        assert!(
            outputs[0] == outputs[2],
            "{format}: --threads 1 and --threads 5 differ"
        );
    }
    let err = fails(&[
        "contour",
        "--npy",
        s(&npy),
        "--iso",
        "0",
        "--threads",
        "0",
        "-o",
        s(&dir.path().join("x.json")),
    ]);
    assert!(err.contains("--threads 0: use at least 1 thread"), "{err}");
}
