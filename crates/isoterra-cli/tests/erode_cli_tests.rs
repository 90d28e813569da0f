//! `isoterra erode` on the real binary: a region of a heightmap world
//! eroded as one stroke that undo takes back exactly; bad input refused
//! with the world unchanged.

mod common;
use common::*;

fn hash(file: &str) -> String {
    ok(&["info", file, "--hash"])
        .lines()
        .last()
        .unwrap()
        .to_string()
}

#[test]
fn erode_is_one_undoable_stroke_on_a_region() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("land.isoterra");
    let f = s(&path);
    ok(&["new", f, "--kind", "heightmap"]);
    let fresh = hash(f);
    let out = ok(&[
        "erode",
        f,
        "--region",
        "-40,-20,40,30",
        "--passes",
        "2",
        "--lifetime",
        "12",
        "--thermal",
        "5",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["stroke"], 1, "{v}");
    let changed = v["changed_nodes"].as_u64().unwrap();
    assert!(changed > 81 * 51 / 2 && changed <= 81 * 51, "{v}");
    assert_eq!(v["erosion"]["hydraulic"]["passes"], 2);
    assert_eq!(v["erosion"]["thermal"]["iterations"], 5);
    let eroded = hash(f);
    assert_ne!(eroded, fresh);
    let info: serde_json::Value = serde_json::from_str(ok(&["info", f, "--json"]).trim()).unwrap();
    assert_eq!(info["strokes_total"], 1);
    assert!(ok(&["undo", f]).contains("undid stroke 1"));
    assert_eq!(hash(f), fresh);
    ok(&["redo", f]);
    assert_eq!(hash(f), eroded);
    // The text form says what it did.
    let text = ok(&[
        "erode",
        f,
        "--region",
        "0,0,16,16",
        "--passes",
        "1",
        "--lifetime",
        "8",
    ]);
    assert!(text.starts_with("stroke 2 (erode): "), "{text}");
    // A blur alone: no droplets, no thermal pass.
    let out = ok(&[
        "erode",
        f,
        "--region",
        "20,20,40,40",
        "--passes",
        "0",
        "--blur",
        "3",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["stroke"], 3, "{v}");
    assert_eq!(v["erosion"]["blur"], 3);
    assert!(v["erosion"]["hydraulic"].is_null(), "{v}");
    assert!(v["changed_nodes"].as_u64().unwrap() > 100, "{v}");
}

#[test]
fn bad_erosions_are_refused_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("land.isoterra");
    let f = s(&path);
    ok(&["new", f, "--kind", "heightmap"]);
    let before = hash(f);
    for (args, says) in [
        (vec!["--region", "0,0,10"], "X0,Z0,X1,Z1"),
        (vec!["--region", "0,0,10,inf"], "not finite"),
        (vec!["--region", "10,0,0,10"], "x0 < x1"),
        (vec!["--region", "0,0,9000,9000"], "at most"),
        (
            vec!["--region", "0,0,10,10", "--passes", "0"],
            "nothing to do",
        ),
        (vec!["--region", "0,0,10,10", "--passes", "65"], "passes"),
        (vec!["--region", "0,0,10,10", "--density", "2"], "density"),
        (vec!["--region", "0,0,10,10", "--talus", "0.5"], "--thermal"),
        (
            vec![
                "--region",
                "0,0,10,10",
                "--passes",
                "0",
                "--radius",
                "2",
                "--thermal",
                "3",
            ],
            "--passes 0",
        ),
        (vec!["--region", "0,0,10,10", "--feather", "-1"], "feather"),
        (vec!["--region", "0,0,10,10", "--blur", "65"], "blur radius"),
    ] {
        let mut all = vec!["erode", f];
        all.extend(args.iter().copied());
        let err = fails(&all);
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(hash(f), before, "{args:?} changed the world");
    }
    // Other kinds are refused.
    let voxel = dir.path().join("v.isoterra");
    ok(&["new", s(&voxel), "--kind", "voxel"]);
    let err = fails(&["erode", s(&voxel), "--region", "0,0,8,8"]);
    assert!(err.contains("heightmap"), "{err}");
}
