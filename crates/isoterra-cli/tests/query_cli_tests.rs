//! `isoterra islands` and `isoterra raycast` on the real binary.

use std::path::{Path, PathBuf};

mod common;
use common::*;

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out.trim()).unwrap()
}

fn new(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let file = dir.join(name);
    let mut all = vec!["new", s(&file)];
    all.extend_from_slice(args);
    ok(&all);
    file
}

#[test]
fn islands_lists_ground_that_floats() {
    let dir = tempfile::tempdir().unwrap();
    let file = new(
        dir.path(),
        "i.isoterra",
        &["--kind", "side2d", "--size", "128x64", "--preset", "hills"],
    );
    let f = s(&file);
    assert_eq!(
        json(&ok(&["islands", f, "--json"]))["islands"],
        serde_json::json!([])
    );
    assert!(ok(&["islands", f]).starts_with("0 floating island"));
    // A blob of ground filled into the sky floats.
    ok(&[
        "stroke", f, "--tool", "fill", "--at", "64,58", "--radius", "3",
    ]);
    let v = json(&ok(&["islands", f, "--json"]));
    let list = v["islands"].as_array().unwrap();
    assert_eq!(list.len(), 1, "{v}");
    let i = &list[0];
    let c = i["centroid"].as_array().unwrap();
    let (cx, cy) = (c[0].as_f64().unwrap(), c[1].as_f64().unwrap());
    assert!((cx - 64.0).abs() < 0.5 && (cy - 58.0).abs() < 0.5, "{i}");
    let area = i["area"].as_f64().unwrap();
    assert!(area > 15.0 && area < 40.0, "about π·3²: {area}");
    assert!(!i["outline"].as_array().unwrap().is_empty());
    let text = ok(&["islands", f]);
    assert!(
        text.starts_with("1 floating island") && text.contains("centroid 64."),
        "{text}"
    );
    // Other kinds are refused.
    let map = new(
        dir.path(),
        "m.isoterra",
        &["--kind", "map", "--size", "32x32"],
    );
    let err = fails(&["islands", s(&map)]);
    assert!(
        err.contains("side2d worlds") && err.contains("map"),
        "{err}"
    );
}

#[test]
fn raycast_finds_the_ground_and_follows_a_dig() {
    let dir = tempfile::tempdir().unwrap();
    // Side view: straight down onto the hills.
    let side = new(
        dir.path(),
        "s.isoterra",
        &["--kind", "side2d", "--size", "128x64", "--preset", "hills"],
    );
    let f = s(&side);
    let v = json(&ok(&[
        "raycast", f, "--from", "40,63", "--dir", "0,-1", "--json",
    ]));
    assert_eq!(v["hit"], true, "{v}");
    let y = v["point"][1].as_f64().unwrap();
    assert!(y > 0.0 && y < 63.0, "{v}");
    assert!(
        (v["distance"].as_f64().unwrap() - (63.0 - y)).abs() < 1e-3,
        "{v}"
    );
    assert!(
        v["normal"][1].as_f64().unwrap() > 0.0,
        "the ground faces up: {v}"
    );
    // Dig where it hit: the next ray goes deeper.
    let at = format!("40,{y}");
    ok(&["stroke", f, "--tool", "dig", "--at", &at, "--radius", "4"]);
    let deeper = json(&ok(&[
        "raycast", f, "--from", "40,63", "--dir", "0,-1", "--json",
    ]));
    assert!(deeper["point"][1].as_f64().unwrap() < y - 2.0, "{deeper}");
    // Up into the sky: nothing.
    let sky = json(&ok(&[
        "raycast", f, "--from", "40,63", "--dir", "0,1", "--json",
    ]));
    assert_eq!(sky["hit"], false);
    assert!(ok(&["raycast", f, "--from", "40,63", "--dir", "0,1"]).starts_with("no ground"));

    // Voxel and heightmap worlds: down from high above.
    for (kind, preset) in [("voxel", "caves"), ("heightmap", "hills")] {
        let file = new(
            dir.path(),
            &format!("{kind}.isoterra"),
            &["--kind", kind, "--preset", preset],
        );
        let f = s(&file);
        let v = json(&ok(&[
            "raycast", f, "--from", "3,200,-5", "--dir", "0,-1,0", "--max", "400", "--json",
        ]));
        assert_eq!(v["hit"], true, "{kind}: {v}");
        let p = v["point"].as_array().unwrap();
        assert_eq!(p.len(), 3);
        assert!((p[0].as_f64().unwrap() - 3.0).abs() < 1e-4, "{kind}: {v}");
        let y = p[1].as_f64().unwrap();
        assert!(
            (v["distance"].as_f64().unwrap() - (200.0 - y)).abs() < 1e-2,
            "{kind}: {v}"
        );
        let text = ok(&[
            "raycast", f, "--from", "3,200,-5", "--dir", "0,-2,0", "--max", "400",
        ]);
        assert!(text.starts_with("hit at 3.000,"), "{kind}: {text}");
    }
}

#[test]
fn raycast_refuses_bad_rays_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let side = new(
        dir.path(),
        "s.isoterra",
        &["--kind", "side2d", "--size", "64x32"],
    );
    let map = new(
        dir.path(),
        "m.isoterra",
        &["--kind", "map", "--size", "32x32"],
    );
    let f = s(&side);
    for (args, expect) in [
        (
            vec!["raycast", f, "--from", "1,2,3", "--dir", "0,-1"],
            "takes 2 numbers",
        ),
        (
            vec!["raycast", f, "--from", "1,2", "--dir", "0,0"],
            "must not be zero",
        ),
        (
            vec!["raycast", f, "--from", "1,nan", "--dir", "0,-1"],
            "not finite",
        ),
        (
            vec!["raycast", f, "--from", "1,x", "--dir", "0,-1"],
            "is not a number",
        ),
        (
            vec!["raycast", f, "--from", "1,2", "--dir", "0,-1", "--max", "0"],
            "--max",
        ),
        (
            vec![
                "raycast", f, "--from", "1,2", "--dir", "0,-1", "--max", "1e9",
            ],
            "--max",
        ),
        (
            vec!["raycast", s(&map), "--from", "1,2,3", "--dir", "0,-1,0"],
            "los",
        ),
    ] {
        let err = fails(&args);
        assert!(err.contains(expect), "{args:?}: {err}");
    }
}

#[test]
fn flags_a_tool_does_not_take_are_refused_not_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let side = new(
        dir.path(),
        "s.isoterra",
        &["--kind", "side2d", "--size", "64x32"],
    );
    let height = new(dir.path(), "h.isoterra", &["--kind", "heightmap"]);
    let voxel = new(dir.path(), "v.isoterra", &["--kind", "voxel"]);
    let state = |f: &Path| ok(&["info", s(f), "--hash"]);
    let before: Vec<String> = [&side, &height, &voxel].iter().map(|f| state(f)).collect();
    for (file, args, expect) in [
        (
            &side,
            vec!["--tool", "dig", "--at", "30,16", "--height", "3"],
            "--height does not apply",
        ),
        (
            &side,
            vec!["--tool", "dig", "--at", "30,16", "--material", "2"],
            "it takes no tool flags",
        ),
        (
            &height,
            vec!["--tool", "raise", "--at", "0,0", "--material", "1"],
            "--material does not apply",
        ),
        (
            &height,
            vec!["--tool", "raise", "--at", "0,0", "--shape", "square"],
            "brushes are round",
        ),
        (
            &voxel,
            vec!["--tool", "dig", "--at", "0,0,0", "--shape", "square"],
            "voxel brushes are solids",
        ),
        (
            &height,
            vec!["--tool", "raise", "--at", "0,0", "--shape", "box"],
            "brushes are round",
        ),
        (
            &voxel,
            vec!["--tool", "dig", "--at", "0,0,0", "--level", "2"],
            "--level does not apply",
        ),
    ] {
        let mut all = vec!["stroke", s(file), "--radius", "3"];
        all.extend_from_slice(&args);
        let err = fails(&all);
        assert!(err.contains(expect), "{args:?}: {err}");
    }
    let after: Vec<String> = [&side, &height, &voxel].iter().map(|f| state(f)).collect();
    assert_eq!(before, after, "refused strokes change nothing");
    // What a tool does take still works.
    ok(&[
        "stroke",
        s(&side),
        "--tool",
        "fill",
        "--at",
        "30,16",
        "--radius",
        "3",
        "--material",
        "2",
    ]);
}
