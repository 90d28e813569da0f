//! `isoterra recipe`, `new --recipe` and `info --recipe`, run through the
//! real binary in temporary folders.

use std::path::Path;

mod common;
use common::*;

use serde_json::{Value, json};

/// The kinds with their presets, as `isoterra new --help` lists them.
const NAMED: [(&str, &[&str]); 4] = [
    ("side2d", &["hills", "caves", "cellular"]),
    ("heightmap", &["hills", "mountains", "islands"]),
    ("voxel", &["caves", "overhangs", "planet", "mesas"]),
    ("map", &["island", "plateaus", "blank"]),
];

/// Small sizes for the bounded kinds, to keep the tests quick.
fn size_args(kind: &str) -> Vec<&'static str> {
    match kind {
        "side2d" => vec!["--size", "96x48"],
        "map" => vec!["--size", "64x48"],
        _ => vec![],
    }
}

fn new_world(file: &Path, kind: &str, how: &[&str]) {
    let mut args = vec!["new", s(file), "--kind", kind, "--seed", "7"];
    args.extend(size_args(kind));
    args.extend(how);
    ok(&args);
}

fn hash(file: &Path) -> String {
    let out = ok(&["info", s(file), "--hash"]);
    out.lines().last().unwrap().trim().to_string()
}

/// What the world generates where a hash cannot see it: the endless kinds'
/// content hashes cover edits only, so their generated ground is compared
/// through an export of a small region.
fn generated(file: &Path, kind: &str, dir: &Path) -> String {
    let out = dir.join(format!(
        "{}.out",
        file.file_name().unwrap().to_string_lossy()
    ));
    match kind {
        "heightmap" => {
            ok(&[
                "export",
                s(file),
                "--format",
                "r16",
                "--region",
                "0,0,32,32",
                "--range",
                "-300,300",
                "-o",
                s(&out),
            ]);
        }
        "voxel" => {
            ok(&[
                "export",
                s(file),
                "--format",
                "obj",
                "--region",
                "-8,-48,-8,24,48,24",
                "-o",
                s(&out),
            ]);
        }
        _ => return hash(file),
    }
    let bytes = std::fs::read(&out).unwrap();
    // An OBJ names its material file, which is named after the output.
    let text = String::from_utf8_lossy(&bytes);
    let kept: Vec<&str> = text.lines().filter(|l| !l.starts_with("mtllib")).collect();
    let kept = kept.join("\n");
    assert!(kept.len() > 100, "{kind}: the export holds something");
    format!("{} bytes, fnv {:016x}", kept.len(), fnv(kept.as_bytes()))
}

/// FNV-1a 64 of `bytes`, to compare exports without printing them.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[test]
fn every_named_recipe_makes_the_preset_world() {
    let dir = tempfile::tempdir().unwrap();
    for (kind, presets) in NAMED {
        for preset in presets {
            let recipe = dir.path().join(format!("{kind}-{preset}.json"));
            ok(&[
                "recipe",
                "--kind",
                kind,
                "--preset",
                preset,
                "-o",
                s(&recipe),
            ]);
            let printed = ok(&["recipe", "--kind", kind, "--preset", preset]);
            let text = std::fs::read_to_string(&recipe).unwrap();
            assert_eq!(printed, text, "stdout and -o agree");
            let v: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v["version"], 1);
            assert_eq!(v["kind"], *kind);
            assert_eq!(v["name"], *preset);

            let a = dir.path().join(format!("{kind}-{preset}-preset.isoterra"));
            let b = dir.path().join(format!("{kind}-{preset}-recipe.isoterra"));
            new_world(&a, kind, &["--preset", preset]);
            new_world(&b, kind, &["--recipe", s(&recipe)]);
            assert_eq!(hash(&a), hash(&b), "{kind} {preset}");
            assert_eq!(
                generated(&a, kind, dir.path()),
                generated(&b, kind, dir.path()),
                "{kind} {preset}"
            );
            // The stored parameters are the same: both files print the
            // preset's recipe, under its name.
            assert_eq!(ok(&["info", s(&a), "--recipe"]), text, "{kind} {preset}");
            assert_eq!(ok(&["info", s(&b), "--recipe"]), text, "{kind} {preset}");
        }
    }
}

#[test]
fn an_edited_recipe_round_trips_and_changes_the_world() {
    let dir = tempfile::tempdir().unwrap();
    // (kind, preset, the parameter's path, its new value)
    let edits: [(&str, &str, &[&str], Value); 4] = [
        ("heightmap", "mountains", &["base", "octaves"], json!(3)),
        ("side2d", "caves", &["fill"], json!(0.4)),
        ("voxel", "caves", &["cave_threshold"], json!(0.15)),
        ("map", "island", &["generator"], json!("plateaus")),
    ];
    for (kind, preset, path, value) in edits {
        let recipe = dir.path().join(format!("{kind}.json"));
        ok(&[
            "recipe",
            "--kind",
            kind,
            "--preset",
            preset,
            "-o",
            s(&recipe),
        ]);
        let mut v: Value = serde_json::from_slice(&std::fs::read(&recipe).unwrap()).unwrap();
        let mut field = &mut v["params"];
        for key in path {
            field = &mut field[*key];
        }
        assert_ne!(*field, value, "{kind}: the edit changes something");
        *field = value.clone();
        std::fs::write(&recipe, serde_json::to_string_pretty(&v).unwrap()).unwrap();

        let a = dir.path().join(format!("{kind}-preset.isoterra"));
        let b = dir.path().join(format!("{kind}-edited.isoterra"));
        new_world(&a, kind, &["--preset", preset]);
        new_world(&b, kind, &["--recipe", s(&recipe)]);

        let back: Value = serde_json::from_str(&ok(&["info", s(&b), "--recipe"])).unwrap();
        let mut shown = &back["params"];
        for key in path {
            shown = &shown[*key];
        }
        assert_eq!(*shown, value, "{kind}: info --recipe shows the edit");
        // Another map generator is exactly that preset; the other edits
        // match no preset.
        if kind == "map" {
            assert_eq!(back["name"], "plateaus");
        } else {
            assert!(back.get("name").is_none(), "{kind}: no preset makes it");
        }
        assert_eq!(
            back["params"], v["params"],
            "{kind}: the rest is as written"
        );

        assert_ne!(
            generated(&a, kind, dir.path()),
            generated(&b, kind, dir.path()),
            "{kind}: the edited world differs from the preset's"
        );
        if matches!(kind, "side2d" | "map") {
            assert_ne!(hash(&a), hash(&b), "{kind}");
        }
    }
}

#[test]
fn seed_and_size_come_from_the_flags() {
    let dir = tempfile::tempdir().unwrap();
    let recipe = dir.path().join("r.json");
    ok(&["recipe", "--kind", "side2d", "-o", s(&recipe)]);
    let v: Value = serde_json::from_slice(&std::fs::read(&recipe).unwrap()).unwrap();
    assert_eq!(v["name"], "hills", "the default preset");
    let file = dir.path().join("w.isoterra");
    ok(&[
        "new",
        s(&file),
        "--kind",
        "side2d",
        "--recipe",
        s(&recipe),
        "--seed",
        "11",
        "--size",
        "40x30",
    ]);
    let info: Value = serde_json::from_str(&ok(&["info", s(&file), "--json"])).unwrap();
    assert_eq!(info["seed"], 11);
    assert_eq!(info["width_cells"], 40);
    assert_eq!(info["height_cells"], 30);
}

/// `info --hash` covers the generator: unedited endless worlds of other
/// seeds or recipes hash differently (their content hashes, which cover
/// edits, agree), the same seed and recipe hash the same, and the hash
/// stays the one of the contents after strokes that cancel out.
#[test]
fn info_hash_tells_generators_apart() {
    let dir = tempfile::tempdir().unwrap();
    for kind in ["heightmap", "voxel"] {
        let w = |name: &str, seed: &str, how: &[&str]| {
            let file = dir.path().join(format!("{kind}-{name}.isoterra"));
            let mut args = vec!["new", s(&file), "--kind", kind, "--seed", seed];
            args.extend(how);
            ok(&args);
            file
        };
        let a = w("a", "1", &[]);
        let b = w("b", "1", &[]);
        let c = w("c", "2", &[]);
        assert_eq!(hash(&a), hash(&b), "{kind}: same seed and recipe");
        assert_ne!(hash(&a), hash(&c), "{kind}: another seed");
        let recipe = dir.path().join(format!("{kind}.json"));
        ok(&["recipe", "--kind", kind, "-o", s(&recipe)]);
        let mut v: Value = serde_json::from_slice(&std::fs::read(&recipe).unwrap()).unwrap();
        let key = if kind == "heightmap" {
            "height_scale"
        } else {
            "ground_level"
        };
        let was = v["params"][key].as_f64().unwrap();
        v["params"][key] = json!(was + 7.0);
        std::fs::write(&recipe, v.to_string()).unwrap();
        let d = w("d", "1", &["--recipe", s(&recipe)]);
        assert_ne!(hash(&a), hash(&d), "{kind}: another recipe");
    }
}

/// A side2d recipe with `storage: u8` makes a world that stores a quarter of
/// the value bytes: its strokes undo and redo exactly through the real
/// binary, `info --recipe` names the storage, and its file is smaller than
/// the same strokes on an `f32` world.
#[test]
fn a_quantized_side2d_world_is_smaller_and_undoes_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let mut sizes = Vec::new();
    for storage in ["f32", "u8"] {
        let recipe = dir.path().join(format!("{storage}.json"));
        ok(&[
            "recipe",
            "--kind",
            "side2d",
            "--preset",
            "caves",
            "-o",
            s(&recipe),
        ]);
        let mut v: Value = serde_json::from_slice(&std::fs::read(&recipe).unwrap()).unwrap();
        assert_eq!(
            v["params"]["storage"], "f32",
            "printed recipes name the storage"
        );
        v["params"]["storage"] = json!(storage);
        std::fs::write(&recipe, v.to_string()).unwrap();
        let file = dir.path().join(format!("{storage}.isoterra"));
        ok(&[
            "new",
            s(&file),
            "--kind",
            "side2d",
            "--recipe",
            s(&recipe),
            "--seed",
            "5",
            "--size",
            "192x96",
        ]);
        let h0 = hash(&file);
        for k in 0..12 {
            let at = format!("{},{}", 20 + k * 13, 20 + (k * 29) % 60);
            ok(&[
                "stroke",
                s(&file),
                "--tool",
                "dig",
                "--at",
                &at,
                "--radius",
                "7",
            ]);
        }
        let h1 = hash(&file);
        assert_ne!(h0, h1);
        for _ in 0..12 {
            ok(&["undo", s(&file)]);
        }
        assert_eq!(
            hash(&file),
            h0,
            "{storage}: undo restores the exact content"
        );
        for _ in 0..12 {
            ok(&["redo", s(&file)]);
        }
        assert_eq!(
            hash(&file),
            h1,
            "{storage}: redo restores the edited content"
        );
        let back: Value = serde_json::from_str(&ok(&["info", s(&file), "--recipe"])).unwrap();
        assert_eq!(back["params"]["storage"], storage);
        sizes.push(std::fs::metadata(&file).unwrap().len());
    }
    assert!(
        sizes[1] < sizes[0],
        "u8 {} B is not smaller than f32 {} B",
        sizes[1],
        sizes[0]
    );

    // A storage that does not exist is refused, naming the field.
    let bad = dir.path().join("bad.json");
    ok(&["recipe", "--kind", "side2d", "-o", s(&bad)]);
    let mut v: Value = serde_json::from_slice(&std::fs::read(&bad).unwrap()).unwrap();
    v["params"]["storage"] = json!("u4");
    std::fs::write(&bad, v.to_string()).unwrap();
    let file = dir.path().join("never.isoterra");
    let err = fails(&["new", s(&file), "--kind", "side2d", "--recipe", s(&bad)]);
    assert!(err.contains("params.storage"), "{err}");
    assert!(!file.exists());
}

#[test]
fn bad_recipes_fail_clearly_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.json");
    ok(&[
        "recipe",
        "--kind",
        "heightmap",
        "--preset",
        "hills",
        "-o",
        s(&good),
    ]);
    let good_v: Value = serde_json::from_slice(&std::fs::read(&good).unwrap()).unwrap();
    let edited = |f: &dyn Fn(&mut Value)| {
        let mut v = good_v.clone();
        f(&mut v);
        v.to_string()
    };
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let cases: Vec<(std::path::PathBuf, &str)> = vec![
        (write("text.json", "mountains please"), "not valid JSON"),
        (write("empty.json", ""), "not valid JSON"),
        (
            write("v2.json", &edited(&|v| v["version"] = json!(2))),
            "version: unsupported recipe version 2",
        ),
        (
            write(
                "octaves.json",
                &edited(&|v| v["params"]["base"]["octaves"] = json!(40)),
            ),
            "params.base.octaves: must be 1..=32, got 40",
        ),
        (
            write(
                "inf.json",
                &edited(&|v| v["params"]["height_scale"] = json!(1e300)),
            ),
            "params.height_scale: must be finite",
        ),
        (
            write(
                "unknown.json",
                &edited(&|v| v["params"]["mask"]["scale"] = json!(3)),
            ),
            "unknown field `scale`",
        ),
        (
            write("kind.json", &edited(&|v| v["kind"] = json!("voxel"))),
            "params",
        ),
        (
            write("map.json", &edited(&|v| v["kind"] = json!("teapot"))),
            "kind: unknown world kind `teapot`",
        ),
        (dir.path().join("missing.json"), "cannot read"),
        (dir.path().to_path_buf(), "is a folder"),
        ("/dev/zero".into(), "more than 1 MiB"),
    ];
    for (i, (recipe, want)) in cases.iter().enumerate() {
        let file = dir.path().join(format!("w{i}.isoterra"));
        let err = fails(&[
            "new",
            s(&file),
            "--kind",
            "heightmap",
            "--recipe",
            s(recipe),
        ]);
        assert!(
            err.contains(want),
            "{}: want `{want}` in\n{err}",
            recipe.display()
        );
        assert!(!file.exists(), "{}: a file was created", recipe.display());
    }

    // A valid recipe of another kind.
    let file = dir.path().join("wrong-kind.isoterra");
    let err = fails(&["new", s(&file), "--kind", "voxel", "--recipe", s(&good)]);
    assert!(
        err.contains("kind: the recipe makes heightmap worlds, not voxel worlds"),
        "{err}"
    );
    assert!(!file.exists());

    // --recipe and --preset together.
    let file = dir.path().join("both.isoterra");
    let err = fails(&[
        "new",
        s(&file),
        "--kind",
        "heightmap",
        "--recipe",
        s(&good),
        "--preset",
        "hills",
    ]);
    assert!(err.contains("cannot be used with"), "{err}");
    assert!(!file.exists());

    let err = fails(&["recipe", "--kind", "voxel", "--preset", "volcano"]);
    assert!(err.contains("volcano"), "{err}");
}

#[test]
fn info_recipe_reads_a_file_from_before_recipes() {
    // A side2d world file of schema version 1, from long before recipes.
    let old = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../isoterra-store/tests/data/side2d_v1.isoterra");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("old.isoterra");
    std::fs::copy(&old, &file).unwrap();
    let text = ok(&["info", s(&file), "--recipe"]);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["version"], 1);
    assert_eq!(v["kind"], "side2d");
    // What it prints makes a world again.
    let recipe = dir.path().join("old.json");
    std::fs::write(&recipe, &text).unwrap();
    let again = dir.path().join("again.isoterra");
    ok(&["new", s(&again), "--kind", "side2d", "--recipe", s(&recipe)]);
    assert_eq!(ok(&["info", s(&again), "--recipe"]), text);
}

/// `isoterra preview` draws every named recipe (and an edited one) without
/// creating a world, and refuses bad options with a message.
#[test]
fn preview_draws_presets_and_recipes_without_creating_a_world() {
    let dir = tempfile::tempdir().unwrap();
    for (kind, presets) in NAMED {
        for preset in presets {
            let out = dir.path().join(format!("{kind}-{preset}.png"));
            let mut args = vec![
                "preview",
                s(&out),
                "--kind",
                kind,
                "--preset",
                preset,
                "--pixels",
                "64",
                "--json",
            ];
            args.extend(size_args(kind));
            let v: Value = serde_json::from_str(&ok(&args)).unwrap();
            let png = std::fs::read(&out).unwrap();
            assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{kind} {preset}");
            assert_eq!(
                v["width"]
                    .as_u64()
                    .unwrap()
                    .max(v["height"].as_u64().unwrap()),
                64
            );
        }
    }
    // An edited recipe draws another picture than its preset.
    let recipe = dir.path().join("r.json");
    ok(&[
        "recipe",
        "--kind",
        "side2d",
        "--preset",
        "caves",
        "-o",
        s(&recipe),
    ]);
    let a = dir.path().join("a.png");
    ok(&[
        "preview",
        s(&a),
        "--kind",
        "side2d",
        "--recipe",
        s(&recipe),
        "--size",
        "96x48",
    ]);
    let mut r: Value = serde_json::from_slice(&std::fs::read(&recipe).unwrap()).unwrap();
    r["params"]["fill"] = json!(0.2);
    std::fs::write(&recipe, r.to_string()).unwrap();
    let b = dir.path().join("b.png");
    ok(&[
        "preview",
        s(&b),
        "--kind",
        "side2d",
        "--recipe",
        s(&recipe),
        "--size",
        "96x48",
    ]);
    assert_ne!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    // Nothing but the pictures was written.
    let files = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(files, 13 + 3);

    let c = dir.path().join("c.png");
    for (args, needle) in [
        (vec!["--kind", "side2d", "--pixels", "5000"], "pixels"),
        (
            vec!["--kind", "side2d", "--area", "64"],
            "area does not apply",
        ),
        (vec!["--kind", "heightmap", "--area", "nan"], "area"),
        (vec!["--kind", "heightmap", "--preset", "plains"], "plains"),
        (vec!["--kind", "voxel", "--size", "64x64"], "endless"),
    ] {
        let mut all = vec!["preview", s(&c)];
        all.extend(args);
        let msg = fails(&all);
        assert!(msg.contains(needle), "{msg} lacks {needle}");
        assert!(!c.exists());
    }
}

/// A heightmap recipe's erosion step through the real binary: `recipe
/// --erosion` prints the default step, `new --recipe` makes a world whose
/// region is what `isoterra erode` of the same region with the same
/// settings makes of the plain world (compared through a float EXR
/// export), with no stroke to undo; `info --recipe` prints the step back,
/// and only heightmap recipes take one.
#[test]
fn an_eroding_recipe_makes_a_world_that_starts_eroded() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let recipe = path("eroded.json");
    ok(&[
        "recipe",
        "--kind",
        "heightmap",
        "--erosion",
        "-o",
        s(&recipe),
    ]);
    let mut v: Value = serde_json::from_slice(&std::fs::read(&recipe).unwrap()).unwrap();
    assert!(v.get("name").is_none(), "an edited preset is unnamed: {v}");
    assert_eq!(
        v["params"]["erosion"]["region"],
        json!([-256.0, -256.0, 256.0, 256.0])
    );
    assert_eq!(v["params"]["erosion"]["passes"], 8);
    // Lighter settings, so that the test stays quick.
    let e = &mut v["params"]["erosion"];
    e["region"] = json!([-24.0, -20.0, 24.0, 28.0]);
    e["passes"] = json!(2);
    e["lifetime"] = json!(12);
    e["thermal"] = json!(5);
    e["blur"] = json!(2);
    std::fs::write(&recipe, v.to_string()).unwrap();

    let eroded = path("eroded.isoterra");
    let out = ok(&[
        "new",
        s(&eroded),
        "--kind",
        "heightmap",
        "--recipe",
        s(&recipe),
    ]);
    assert!(out.contains("created"), "{out}");
    let plain = path("plain.isoterra");
    ok(&["new", s(&plain), "--kind", "heightmap"]);
    let by_hand = path("by-hand.isoterra");
    ok(&["new", s(&by_hand), "--kind", "heightmap"]);
    ok(&[
        "erode",
        s(&by_hand),
        "--region",
        "-24,-20,24,28",
        "--passes",
        "2",
        "--lifetime",
        "12",
        "--thermal",
        "5",
        "--blur",
        "2",
        "--feather",
        "16",
    ]);
    let exr = |file: &Path| {
        let out = dir.path().join(format!(
            "{}.exr",
            file.file_name().unwrap().to_string_lossy()
        ));
        ok(&[
            "export",
            s(file),
            "--format",
            "exr",
            "--region",
            "-40,-40,40,40",
            "-o",
            s(&out),
        ]);
        std::fs::read(out).unwrap()
    };
    assert_eq!(
        exr(&eroded),
        exr(&by_hand),
        "the step is the region's erosion"
    );
    assert_ne!(exr(&eroded), exr(&plain), "the step changed the ground");

    let printed = ok(&["info", s(&eroded), "--recipe"]);
    let back: Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(back["params"]["erosion"], v["params"]["erosion"]);
    let undo = ok(&["undo", s(&eroded)]);
    assert!(undo.contains("nothing to undo"), "{undo}");
    assert_ne!(hash(&eroded), hash(&plain));

    let err = fails(&["recipe", "--kind", "map", "--erosion"]);
    assert!(err.contains("only heightmap recipes"), "{err}");
    // A step that erodes too much is refused, and no file is made.
    v["params"]["erosion"]["region"] = json!([0.0, 0.0, 5000.0, 5000.0]);
    std::fs::write(&recipe, v.to_string()).unwrap();
    let big = path("big.isoterra");
    let err = fails(&[
        "new",
        s(&big),
        "--kind",
        "heightmap",
        "--recipe",
        s(&recipe),
    ]);
    assert!(err.contains("at most"), "{err}");
    assert!(!big.exists());
}
