//! The `map` kind on the real `isoterra` binary: new, stroke with every
//! tool, undo/redo, info, every export format, Tiled import, and bad input
//! that must fail clearly and leave the file unchanged.

use std::path::{Path, PathBuf};

mod common;
use common::*;

fn new_map(dir: &Path, name: &str) -> PathBuf {
    let file = dir.join(name);
    let out = ok(&[
        "new",
        s(&file),
        "--kind",
        "map",
        "--size",
        "96x64",
        "--preset",
        "plateaus",
        "--seed",
        "5",
    ]);
    assert!(out.contains("map, 96x64 cells"), "{out}");
    file
}

/// The world's content hash and stroke count, from `info --json --hash`.
fn state(file: &Path) -> (String, u64, u64) {
    let out = ok(&["info", s(file), "--json", "--hash"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    (
        v["hash"].as_str().unwrap().to_string(),
        v["strokes_total"].as_u64().unwrap(),
        v["undo_position"].as_u64().unwrap(),
    )
}

#[test]
fn new_info_and_every_tool_with_undo_and_redo() {
    let dir = tempfile::tempdir().unwrap();
    let file = new_map(dir.path(), "m.isoterra");
    let info = ok(&["info", s(&file)]);
    assert!(info.contains("kind:") && info.contains("map"), "{info}");
    assert!(info.contains("walkable cells:"), "{info}");
    let (h0, n0, _) = state(&file);
    assert_eq!(n0, 0);
    let f = s(&file);
    let strokes: Vec<Vec<&str>> = vec![
        vec![
            "--tool",
            "raise",
            "--at",
            "20,20",
            "--radius",
            "6",
            "--strength",
            "0.5",
        ],
        vec![
            "--tool", "lower", "--at", "30,20", "--radius", "5", "--shape", "square",
        ],
        vec![
            "--tool", "plateau", "--at", "40,40", "--radius", "5", "--height", "0.25",
        ],
        vec!["--tool", "smooth", "--at", "20,20", "--radius", "6"],
        vec!["--tool", "noise", "--at", "50,20", "--radius", "8"],
        vec![
            "--tool", "cliff-up", "--at", "20,45", "--to", "35,50", "--radius", "5",
        ],
        vec![
            "--tool",
            "cliff-down",
            "--at",
            "70,30",
            "--radius",
            "5",
            "--level",
            "0",
        ],
        vec![
            "--tool", "ramp", "--at", "25,45", "--radius", "3", "--shape", "diamond",
        ],
        vec![
            "--tool", "ramp", "--at", "27,47", "--radius", "4", "--length", "6",
        ],
        vec![
            "--tool", "cliff-up", "--at", "60,20", "--radius", "6", "--slope", "3",
        ],
        vec![
            "--tool", "water", "--at", "10,55", "--radius", "6", "--height", "3",
        ],
        vec![
            "--tool",
            "paint",
            "--at",
            "60,50",
            "--radius",
            "7",
            "--texture",
            "5",
        ],
        vec![
            "--tool",
            "pathing",
            "--at",
            "80,10",
            "--radius",
            "4",
            "--pathing",
            "walk,build",
        ],
        vec![
            "--tool",
            "pathing",
            "--at",
            "80,10",
            "--radius",
            "2",
            "--pathing",
            "walk",
            "--clear",
        ],
    ];
    let mut hashes = vec![h0.clone()];
    for args in &strokes {
        let mut full = vec!["stroke", f];
        full.extend(args);
        let out = ok(&full);
        assert!(out.contains("nodes changed"), "{args:?}: {out}");
        hashes.push(state(&file).0);
    }
    let (_, n, pos) = state(&file);
    assert_eq!((n, pos), (strokes.len() as u64, strokes.len() as u64));
    // Every stroke changed the world.
    for w in hashes.windows(2) {
        assert_ne!(w[0], w[1]);
    }
    // Undo everything, step by step, through the exact earlier states.
    for k in (0..strokes.len()).rev() {
        assert!(ok(&["undo", f]).contains("undid stroke"));
        assert_eq!(state(&file).0, hashes[k]);
    }
    assert!(ok(&["undo", f]).contains("nothing to undo"));
    assert_eq!(state(&file).0, h0);
    assert!(ok(&["redo", f]).contains("redid stroke"));
    assert_eq!(state(&file).0, hashes[1]);
}

#[test]
fn every_export_format_writes_its_files() {
    let dir = tempfile::tempdir().unwrap();
    let file = new_map(dir.path(), "m.isoterra");
    let f = s(&file);
    ok(&[
        "stroke", f, "--tool", "water", "--at", "10,10", "--radius", "8", "--height", "3",
    ]);
    let glb = dir.path().join("m.glb");
    let o = run(&["export", f, "--format", "glb", "-o", s(&glb), "--timings"]);
    assert!(o.status.success(), "{:?}", text(&o));
    let timing: serde_json::Value = serde_json::from_str(text(&o).1.trim()).unwrap();
    assert!(timing["mesh_ms"].is_number());
    let bytes = std::fs::read(&glb).unwrap();
    assert_eq!(&bytes[..4], b"glTF");
    let png = dir.path().join("layers.png");
    ok(&["export", f, "--format", "png-layers", "-o", s(&png)]);
    let side = dir.path().join("layers.json");
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
    let info = isoterra::export::read_png_layers_sidecar(&std::fs::read(&side).unwrap()).unwrap();
    assert_eq!((info.width_cells, info.depth_cells), (96, 64));
    let layers = isoterra::export::load_png_layers(
        &std::fs::read(&png).unwrap(),
        &std::fs::read(&side).unwrap(),
    )
    .unwrap();
    assert_eq!(layers.width_cells(), 96);
    let tiled = dir.path().join("m.tiled.json");
    ok(&["export", f, "--format", "tiled", "-o", s(&tiled)]);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&tiled).unwrap()).unwrap();
    assert_eq!(doc["layers"][0]["name"], "level");
    assert_eq!(doc["layers"][1]["name"], "pathing");
    let tmx = dir.path().join("m.tmx");
    ok(&["export", f, "--format", "tiled", "-o", s(&tmx)]);
    assert!(
        String::from_utf8(std::fs::read(&tmx).unwrap())
            .unwrap()
            .contains("<map ")
    );
    let pathing = dir.path().join("pathing.png");
    ok(&["export", f, "--format", "pathing", "-o", s(&pathing)]);
    assert_eq!(&std::fs::read(&pathing).unwrap()[1..4], b"PNG");
    // Formats of other kinds are refused.
    let e = fails(&[
        "export",
        f,
        "--format",
        "svg",
        "-o",
        s(&dir.path().join("x.svg")),
    ]);
    assert!(e.contains("does not apply to map"), "{e}");
    // The Tiled export imports back into a map world of the same size.
    let back = dir.path().join("back.isoterra");
    let out = ok(&["import", s(&tiled), "--layer", "level", "-o", s(&back)]);
    assert!(out.contains("96x64 cells"), "{out}");
    let info = ok(&["info", s(&back), "--json"]);
    assert!(info.contains("\"kind\":\"map\""), "{info}");
}

#[test]
fn bad_strokes_fail_clearly_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = new_map(dir.path(), "m.isoterra");
    let f = s(&file);
    ok(&[
        "stroke", f, "--tool", "raise", "--at", "20,20", "--radius", "6",
    ]);
    let before = state(&file);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--tool", "bulldoze", "--at", "1,1", "--radius", "2"],
            "bulldoze",
        ),
        (
            vec![
                "--tool", "cliff-up", "--at", "1,1", "--radius", "2", "--level", "16",
            ],
            "level",
        ),
        (
            vec![
                "--tool",
                "paint",
                "--at",
                "1,1",
                "--radius",
                "2",
                "--texture",
                "16",
            ],
            "texture",
        ),
        (
            vec!["--tool", "raise", "--at", "1,1", "--radius", "0"],
            "radius",
        ),
        (
            vec![
                "--tool",
                "raise",
                "--at",
                "1,1",
                "--radius",
                "2",
                "--strength",
                "2",
            ],
            "strength",
        ),
        (
            vec!["--tool", "raise", "--at", "nan,1", "--radius", "2"],
            "point",
        ),
        (
            vec![
                "--tool",
                "pathing",
                "--at",
                "1,1",
                "--radius",
                "2",
                "--pathing",
                "swim",
            ],
            "swim",
        ),
    ];
    for (args, needle) in &cases {
        let mut full = vec!["stroke", f];
        full.extend(args);
        let e = fails(&full);
        assert!(e.contains(needle), "{args:?}: {e}");
        assert_eq!(state(&file), before, "{args:?} changed the file");
    }
}

#[test]
fn bad_tiled_imports_fail_clearly_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.isoterra");
    let write = |name: &str, body: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        p
    };
    let layer = |extra: &str| {
        format!(
            r#"{{"type":"map","orientation":"orthogonal","width":2,"height":2,"tilewidth":8,"tileheight":8,
               "layers":[{{"type":"tilelayer","name":"ground","width":2,"height":2,{extra}}}],"tilesets":[]}}"#
        )
    };
    let cases = [
        (
            write("broken.json", "{ \"type\": \"map\", "),
            "malformed Tiled JSON",
        ),
        (
            write(
                "lz4.json",
                &layer(r#""encoding":"base64","compression":"lz4","data":"AAAA""#),
            ),
            "unsupported Tiled layer data",
        ),
        (
            write(
                "iso.json",
                &layer(r#""data":[1,1,1,1]"#).replace("orthogonal", "isometric"),
            ),
            "isometric",
        ),
        (
            write("short.json", &layer(r#""data":[1,1,1]"#)),
            "expected 4",
        ),
    ];
    for (input, needle) in &cases {
        let e = fails(&["import", s(input), "-o", s(&out)]);
        assert!(e.contains(needle), "{}: {e}", input.display());
        assert!(!out.exists(), "{} left a file", input.display());
    }
    let good = write("good.json", &layer(r#""data":[1,0,0,1]"#));
    let e = fails(&["import", s(&good), "--layer", "sky", "-o", s(&out)]);
    assert!(
        e.contains("\"sky\" not found") && e.contains("ground"),
        "{e}"
    );
    assert!(!out.exists());
    ok(&["import", s(&good), "--layer", "ground", "-o", s(&out)]);
    let before = state(&out);
    // An existing output is never overwritten.
    let e = fails(&["import", s(&good), "-o", s(&out)]);
    assert!(e.contains("already exists"), "{e}");
    assert_eq!(state(&out), before);
}

#[test]
fn bench_map_prints_json_lines() {
    let o = run(&["bench", "map", "--json", "--reps", "1"]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "{stderr}");
    let names: Vec<String> = stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["group"], "map");
            assert_eq!(v["unit"], "ms");
            assert!(v["value"].as_f64().unwrap() >= 0.0);
            // CPU time beside the wall time, so a figure from a busy
            // machine can be told apart.
            assert!(v["cpu_ms"].as_f64().unwrap() >= 0.0, "{v}");
            v["name"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(
        names,
        [
            "brush_r100_512_apply_remesh",
            "full_mesh_512_chunks",
            "full_mesh_512_whole",
            "paint_r100_512_remesh"
        ]
    );
}

#[test]
fn los_and_path_see_down_from_cliffs_and_route_around_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("q.isoterra");
    let f = s(&file);
    ok(&[
        "new", f, "--kind", "map", "--size", "48x48", "--preset", "blank",
    ]);
    ok(&[
        "stroke", f, "--tool", "cliff-up", "--at", "24,24", "--radius", "6",
    ]);
    let los = |from: &str, to: &str| -> serde_json::Value {
        let out = ok(&["los", f, "--from", from, "--to", to, "--json"]);
        serde_json::from_str(out.trim()).unwrap()
    };
    let down = los("24.5,24.5", "6.5,24.5");
    assert_eq!(down["visible"], true, "{down}");
    assert_eq!(down["from_level"], 1);
    let up = los("6.5,24.5", "24.5,24.5");
    assert_eq!(up["visible"], false, "{up}");
    assert_eq!(up["to_level"], 1);
    assert!(ok(&["los", f, "--from", "6.5,24.5", "--to", "24.5,24.5"]).starts_with("hidden"));
    let over = ok(&[
        "los",
        f,
        "--from",
        "6.5,24.5",
        "--to",
        "24.5,24.5",
        "--levels-above",
        "1",
        "--json",
    ]);
    assert!(over.contains("\"visible\":true"), "{over}");

    let path = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "path",
            f,
            "--from",
            "6.5,24.5",
            "--to",
            "42.5,24.5",
            "--json",
        ];
        args.extend_from_slice(extra);
        serde_json::from_str(ok(&args).trim()).unwrap()
    };
    let ground = path(&[]);
    assert_eq!(ground["found"], true, "{ground}");
    let cells = ground["cells"].as_u64().unwrap();
    assert!(
        ground["length"].as_f64().unwrap() > 36.5,
        "around the plateau, not across: {ground}"
    );
    let points = ground["points"].as_array().unwrap();
    assert_eq!(points.len() as u64, cells);
    assert_eq!(points[0], serde_json::json!([6.5, 0.0, 24.5]));
    let air = path(&["--air"]);
    assert_eq!(air["cells"], 37, "{air}");
    assert!((air["length"].as_f64().unwrap() - 36.0).abs() < 1e-9);
    // The plain text: a summary line, then one X,Y,Z line per cell.
    let text = ok(&["path", f, "--from", "6.5,24.5", "--to", "42.5,24.5"]);
    assert!(text.starts_with("route for a ground unit:"), "{text}");
    assert_eq!(text.lines().count() as u64, cells + 1);
    // On the cliff's top a ground unit has no way down.
    let stuck = ok(&[
        "path",
        f,
        "--from",
        "24.5,24.5",
        "--to",
        "6.5,24.5",
        "--json",
    ]);
    assert!(stuck.contains("\"found\":false"), "{stuck}");
}

#[test]
fn los_and_path_refuse_bad_input_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let file = new_map(dir.path(), "m.isoterra");
    let f = s(&file);
    let before = state(&file);
    for (args, expect) in [
        (
            vec!["los", f, "--from", "1,1", "--to", "500,1"],
            "outside the map",
        ),
        (
            vec!["los", f, "--from", "-1,1", "--to", "5,1"],
            "outside the map",
        ),
        (
            vec!["los", f, "--from", "nan,1", "--to", "5,1"],
            "not finite",
        ),
        (vec!["los", f, "--from", "1", "--to", "5,1"], "is not X,Y"),
        (
            vec![
                "los",
                f,
                "--from",
                "1,1",
                "--to",
                "5,1",
                "--levels-above",
                "16",
            ],
            "0..=15",
        ),
        (
            vec!["path", f, "--from", "1,1", "--to", "1,inf"],
            "not finite",
        ),
        (
            vec!["path", f, "--from", "1,1", "--to", "96,1"],
            "outside the map",
        ),
    ] {
        let err = fails(&args);
        assert!(err.contains(expect), "{args:?}: {err}");
    }
    let side = dir.path().join("side.isoterra");
    ok(&["new", s(&side), "--kind", "side2d"]);
    let err = fails(&["path", s(&side), "--from", "1,1", "--to", "5,5"]);
    assert!(
        err.contains("map worlds") && err.contains("side2d"),
        "{err}"
    );
    assert_eq!(state(&file), before, "queries change nothing");
}

#[test]
fn tiled_export_then_import_keeps_the_map_size() {
    let dir = tempfile::tempdir().unwrap();
    let file = new_map(dir.path(), "m.isoterra");
    let tmj = dir.path().join("m.tmj");
    ok(&["export", s(&file), "--format", "tiled", "-o", s(&tmj)]);
    let size = |f: &Path| -> (u64, u64) {
        let v: serde_json::Value =
            serde_json::from_str(ok(&["info", s(f), "--json"]).trim()).unwrap();
        (
            v["width_cells"].as_u64().unwrap(),
            v["depth_cells"].as_u64().unwrap(),
        )
    };
    // The export says one tile per cell: the import gives 96x64 back.
    let back = dir.path().join("back.isoterra");
    let out = ok(&["import", s(&tmj), "-o", s(&back)]);
    assert!(out.contains("96x64 cells"), "{out}");
    assert_eq!(size(&back), (96, 64));
    // Asked for, two cells per tile doubles it.
    let twice = dir.path().join("twice.isoterra");
    let out = ok(&["import", s(&tmj), "-o", s(&twice), "--cells-per-tile", "2"]);
    assert!(out.contains("192x128 cells"), "{out}");
    // Out of range: refused, nothing created.
    let bad = dir.path().join("bad.isoterra");
    let err = fails(&["import", s(&tmj), "-o", s(&bad), "--cells-per-tile", "0"]);
    assert!(err.contains("cells_per_tile"), "{err}");
    assert!(!bad.exists());
}

/// Runs a tool of Debian's `tiled` package headless, or `None` (with a loud
/// message) when it is not installed and CI does not require it.
fn tiled_tool(tool: &str, args: &[&str]) -> Option<std::process::Output> {
    let runtime = std::env::temp_dir().join("isoterra-tiled-runtime");
    let _ = std::fs::create_dir_all(&runtime);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700));
    }
    match std::process::Command::new(tool)
        .args(args)
        .env("QT_QPA_PLATFORM", "offscreen")
        .env("XDG_RUNTIME_DIR", &runtime)
        .output()
    {
        Ok(out) => Some(out),
        Err(e) if std::env::var("ISOTERRA_REQUIRE_TILED").as_deref() == Ok("1") => {
            panic!("ISOTERRA_REQUIRE_TILED=1 but `{tool}` cannot run: {e}")
        }
        Err(e) => {
            eprintln!(
                "SKIPPED: `{tool}` (Debian package tiled) cannot run ({e}); install it, or set ISOTERRA_REQUIRE_TILED=1 to make this a failure"
            );
            None
        }
    }
}

#[test]
fn real_tiled_reads_renders_and_rewrites_our_maps() {
    let dir = tempfile::tempdir().unwrap();
    let file = new_map(dir.path(), "m.isoterra");
    let tmx = dir.path().join("m.tmx");
    ok(&["export", s(&file), "--format", "tiled", "-o", s(&tmx)]);
    let image = dir.path().join("m.tiles.png");
    assert!(
        image.exists(),
        "the tileset image is written beside the map"
    );
    let png = dir.path().join("render.png");
    let Some(out) = tiled_tool("tmxrasterizer", &[s(&tmx), s(&png)]) else {
        return;
    };
    assert!(out.status.success(), "{out:?}");
    // The render shows the tiles: many pixels, more than one colour.
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.line_size / info.width as usize;
    let colours: std::collections::HashSet<&[u8]> = buf[..info.buffer_size()]
        .chunks(px)
        .filter(|p| p.len() < 4 || p[3] > 0)
        .collect();
    assert!(
        colours.len() > 2,
        "the render is blank: {} colours",
        colours.len()
    );
    // Tiled itself rewrites the map as JSON; importing that gives the map's
    // size back, as does the TMX itself.
    let tmj = dir.path().join("by-tiled.tmj");
    let Some(out) = tiled_tool("tiled", &["--export-map", "json", s(&tmx), s(&tmj)]) else {
        return;
    };
    assert!(out.status.success(), "{out:?}");
    for input in [&tmj, &tmx] {
        let back = dir.path().join(format!(
            "back-{}.isoterra",
            input.extension().unwrap().to_string_lossy()
        ));
        let said = ok(&["import", s(input), "-o", s(&back)]);
        assert!(said.contains("96x64 cells"), "{said}");
    }
}

#[test]
fn external_tilesets_and_the_solid_flags_decide_the_land() {
    let dir = tempfile::tempdir().unwrap();
    // A 4x2 map: gids 1 (water) and 2 (wall), the tileset beside it as TSX.
    std::fs::write(
        dir.path().join("t.tsx"),
        r#"<?xml version="1.0"?><tileset name="t" tilewidth="8" tileheight="8" tilecount="2" columns="2">
 <tile id="1"><properties><property name="wall" type="bool" value="true"/></properties></tile>
</tileset>"#,
    )
    .unwrap();
    let map = dir.path().join("m.tmx");
    std::fs::write(
        &map,
        r#"<?xml version="1.0"?><map orientation="orthogonal" width="4" height="2" tilewidth="8" tileheight="8" infinite="0">
 <tileset firstgid="1" source="t.tsx"/>
 <layer name="ground" width="4" height="2"><data encoding="csv">1,2,2,1,
1,2,2,1</data></layer>
</map>"#,
    )
    .unwrap();
    let out = dir.path().join("a.isoterra");
    let said = ok(&[
        "import",
        s(&map),
        "--cells-per-tile",
        "4",
        "--solid-property",
        "wall",
        "-o",
        s(&out),
    ]);
    assert!(said.contains("16x8 cells"), "{said}");
    let by_gid = dir.path().join("b.isoterra");
    ok(&[
        "import",
        s(&map),
        "--cells-per-tile",
        "4",
        "--solid-gids",
        "2",
        "-o",
        s(&by_gid),
    ]);
    // The same land either way, and some of the map is not land.
    let a = ok(&["info", s(&out)]);
    let b = ok(&["info", s(&by_gid)]);
    assert_eq!(a.replace("a.isoterra", ""), b.replace("b.isoterra", ""));
    // A missing tileset is named, and nothing is created.
    std::fs::remove_file(dir.path().join("t.tsx")).unwrap();
    let bad = dir.path().join("c.isoterra");
    let err = fails(&["import", s(&map), "-o", s(&bad)]);
    assert!(err.contains("t.tsx"), "{err}");
    assert!(!bad.exists());
}

/// Even-odd test of `p` against closed polylines.
fn inside(polylines: &[Vec<[f32; 2]>], p: [f32; 2]) -> bool {
    let mut odd = false;
    for line in polylines {
        for (i, a) in line.iter().enumerate() {
            let b = line[(i + 1) % line.len()];
            if (a[1] > p[1]) != (b[1] > p[1])
                && p[0] < a[0] + (p[1] - a[1]) / (b[1] - a[1]) * (b[0] - a[0])
            {
                odd = !odd;
            }
        }
    }
    odd
}

/// `export --format colliders` on a map: every level's closed outlines in
/// world units with its height, and a cliff raised by a stroke is inside
/// its level's outline.
#[test]
fn map_colliders_outline_each_level() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("flat.isoterra");
    let f = s(&file);
    ok(&[
        "new",
        f,
        "--kind",
        "map",
        "--size",
        "80x60",
        "--preset",
        "blank",
        "--cell-size",
        "2",
    ]);
    ok(&[
        "stroke", f, "--tool", "cliff-up", "--at", "40,30", "--radius", "10",
    ]);
    let out = dir.path().join("c.json");
    ok(&["export", f, "--format", "colliders", "-o", s(&out)]);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(doc["format"], "isoterra-map-colliders");
    assert_eq!(doc["tolerance_cells"], 0.05);
    assert_eq!(doc["size"], serde_json::json!([160.0, 120.0]));
    let levels = doc["levels"].as_array().unwrap();
    let get = |k: u64| -> Vec<Vec<[f32; 2]>> {
        let l = levels.iter().find(|l| l["level"] == k).expect("level");
        serde_json::from_value(l["polylines"].clone()).unwrap()
    };
    for l in levels {
        let k = l["level"].as_f64().unwrap();
        assert_eq!(
            l["height"].as_f64().unwrap(),
            k * doc["level_height"].as_f64().unwrap()
        );
    }
    // Level 0 is the whole (blank) map; level 1 the raised cliff.
    let ground = get(0);
    let cliff = get(1);
    for line in ground.iter().chain(&cliff) {
        assert!(line.len() >= 3 && line.first() != line.last());
        for p in line {
            assert!(
                (0.0..=160.0).contains(&p[0]) && (0.0..=120.0).contains(&p[1]),
                "{p:?}"
            );
        }
    }
    assert!(inside(&ground, [10.0, 10.0]));
    // The stroke was at world (40, 30) (cell (20, 15)), radius 10.
    assert!(inside(&cliff, [40.0, 30.0]), "{cliff:?}");
    assert!(!inside(&cliff, [40.0, 50.0]));
    assert!(!inside(&cliff, [10.0, 10.0]));
    // Other kinds' colliders stay theirs; a voxel world has none.
    let voxel = dir.path().join("v.isoterra");
    ok(&["new", s(&voxel), "--kind", "voxel"]);
    let e = fails(&["export", s(&voxel), "--format", "colliders", "-o", s(&out)]);
    assert!(e.contains("does not apply to voxel"), "{e}");
}
