//! The editor protocol against a real server and real WebSocket clients,
//! for every world kind.

mod common;

use std::time::Duration;

use common::*;
use isoterra_editor::{FLAG_SURFACE, parse_frame_header};
use serde_json::{Value, json};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

const QUIET: Duration = Duration::from_millis(400);

/// Welcome, then the initial meshes (the endless kinds after a camera).
async fn open(ws: &mut Ws, kind: Kind) -> (Value, Vec<Vec<u8>>) {
    let (welcome, _) = until_json(ws, "welcome").await;
    if matches!(kind, Kind::Heightmap | Kind::Voxel) {
        send(ws, camera([8.0, 10.0, 8.0], 40.0)).await;
    }
    let frames = drain(ws, QUIET).await;
    (welcome, frames)
}

/// A stroke that changes something in `kind`: its ack and frames.
async fn changing_stroke(ws: &mut Ws, kind: Kind, id: &str) -> (Value, Vec<Vec<u8>>) {
    let (at, tool, params) = stroke_spot(kind);
    let (ack, mut frames) = stroke(ws, id, tool, params, at, 2, 4.0).await;
    if ack["id"].is_null() && kind == Kind::Voxel {
        let (ack, f) = stroke(ws, &format!("{id}-dig"), "dig", json!({}), at, 2, 4.0).await;
        frames.extend(f);
        return (ack, frames);
    }
    (ack, frames)
}

#[test]
fn welcome_describes_the_world_and_frames_parse() {
    rt().block_on(async {
        for kind in KINDS {
            let dir = tempfile::tempdir().unwrap();
            let path = create_world(dir.path(), kind);
            let server = start(&path).await;
            let mut ws = connect(server.addr()).await;
            let (welcome, frames) = open(&mut ws, kind).await;
            assert_eq!(welcome["protocol"], 1);
            assert!(welcome["tools"].as_array().is_some_and(|t| !t.is_empty()));
            assert_eq!(welcome["kind"], welcome["world"]["kind"]);
            assert_eq!(welcome["detail"]["url"], "/textures/detail.bin");
            assert_eq!(welcome["detail"]["layers"][2], "rock");
            assert!(!frames.is_empty(), "{kind:?}: initial meshes");
            let mut vertices = 0;
            let mut grass = 0usize;
            let mut soil = 0usize;
            for f in &frames {
                let h = parse_frame_header(f).expect("header");
                assert_eq!(h.frame_len(), f.len());
                // Surface weights come with every kind's terrain and the
                // map's water; lines and side views' grass rims have none.
                let weighted = h.layer != 2 && h.layer != 3 && h.vertices > 0;
                assert_eq!(h.flags, if weighted { FLAG_SURFACE } else { 0 }, "{kind:?}");
                if h.layer == 2 {
                    assert_eq!(h.indices % 2, 0);
                } else {
                    assert_eq!(h.indices % 3, 0);
                }
                let per_vertex = if weighted { 32 } else { 28 };
                if weighted && h.layer == 0 {
                    // Every terrain vertex's weights sum to 255.
                    let at = 32 + 28 * h.vertices as usize;
                    for v in 0..h.vertices as usize {
                        let w = &f[at + 4 * v..at + 4 * v + 4];
                        let sum: u32 = w.iter().map(|&b| u32::from(b)).sum();
                        assert_eq!(sum, 255, "{kind:?}: weights {w:?}");
                        grass += usize::from(w[0] >= 200);
                        soil += usize::from(w[1] >= 200);
                    }
                }
                if weighted && h.layer == 1 {
                    // Map water: byte 0 the depth, byte 1 marks it as given.
                    let at = 32 + 28 * h.vertices as usize;
                    for v in 0..h.vertices as usize {
                        assert_eq!(f[at + 4 * v + 1], 255, "{kind:?}: water depth bytes");
                    }
                }
                // Indices stay inside the vertex range.
                let idx_at = 32 + per_vertex * h.vertices as usize;
                for k in 0..h.indices as usize {
                    let o = idx_at + 4 * k;
                    let i = u32::from_le_bytes([f[o], f[o + 1], f[o + 2], f[o + 3]]);
                    assert!(i < h.vertices);
                }
                vertices += h.vertices;
            }
            assert!(vertices > 0, "{kind:?}: some geometry");
            if matches!(kind, Kind::Map | Kind::Heightmap) {
                assert!(grass > 0, "{kind:?}: some ground is grass");
            }
            if kind == Kind::Side2d {
                assert!(soil > 0, "side2d: some ground is soil (dirt)");
            }
            server.shutdown().await;
        }
    });
}

#[test]
fn map_surface_weights_follow_walls_and_paint() {
    // The frames of a new cliff carry the rock detail texture on its walls
    // (normals away from vertical); ground painted with texture 0 (grass)
    // carries the grass texture, and with 8 (snow) the snow texture.
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Map);
        let server = start(&path).await;
        let mut ws = connect(server.addr()).await;
        open(&mut ws, Kind::Map).await;
        // Class weights of the flat and of the sloped vertices in `frames`.
        let classes = |frames: &[Vec<u8>]| {
            let (mut flat, mut walls) = (Vec::new(), Vec::new());
            for f in frames {
                let h = parse_frame_header(f).expect("header");
                if h.layer != 0 || h.vertices == 0 {
                    continue;
                }
                assert_eq!(h.flags, FLAG_SURFACE);
                let n = h.vertices as usize;
                let (normals, weights) = (32 + 12 * n, 32 + 28 * n);
                for v in 0..n {
                    let w: [u8; 4] = f[weights + 4 * v..weights + 4 * v + 4].try_into().unwrap();
                    let o = normals + 12 * v + 4;
                    let ny = f32::from_le_bytes([f[o], f[o + 1], f[o + 2], f[o + 3]]);
                    if ny < 0.9 {
                        walls.push(w)
                    } else {
                        flat.push(w)
                    }
                }
            }
            (flat, walls)
        };
        let (ack, mut frames) = stroke(
            &mut ws,
            "c",
            "cliff-up",
            json!({}),
            [48.0, 0.0, 48.0],
            1,
            10.0,
        )
        .await;
        assert!(!ack["id"].is_null(), "{ack}");
        frames.extend(drain(&mut ws, Duration::from_millis(500)).await);
        let (_, walls) = classes(&frames);
        assert!(!walls.is_empty(), "the cliff has walls");
        let rock = walls.iter().filter(|w| w[2] >= 128).count();
        assert!(
            rock * 10 >= walls.len() * 9,
            "{rock} of {} wall vertices are rock",
            walls.len()
        );

        let mut last = frames;
        for (texture, class) in [(0, 0), (8, 3)] {
            let id = format!("paint{texture}");
            let params = json!({"texture": texture});
            let (ack, mut frames) =
                stroke(&mut ws, &id, "paint", params, [48.0, 0.0, 48.0], 1, 30.0).await;
            assert!(!ack["id"].is_null(), "{ack}");
            frames.extend(drain(&mut ws, Duration::from_millis(500)).await);
            let count = |frames: &[Vec<u8>]| {
                let (flat, _) = classes(frames);
                flat.iter().filter(|w| w[class] >= 128).count()
            };
            let (before, after) = (count(&last), count(&frames));
            // A brush of radius 30 covers about 2,800 cells.
            assert!(
                after >= before + 1000,
                "texture {texture}: {before} flat vertices of class {class} before, {after} after"
            );
            last = frames;
        }
        server.shutdown().await;
    });
}

#[test]
fn strokes_make_frames_and_are_on_disk_before_the_ack() {
    rt().block_on(async {
        for kind in KINDS {
            let dir = tempfile::tempdir().unwrap();
            let path = create_world(dir.path(), kind);
            let server = start(&path).await;
            let mut ws = connect(server.addr()).await;
            open(&mut ws, kind).await;
            let (ack, mut frames) = changing_stroke(&mut ws, kind, "s1").await;
            let id = ack["id"]
                .as_i64()
                .unwrap_or_else(|| panic!("{kind:?}: {ack}"));
            assert!(ack["changed_nodes"].as_u64().unwrap() > 0);
            assert_eq!(ack["history"]["can_undo"], true);
            // The ack came after the commit: a second handle sees the stroke.
            let file = isoterra::store::WorldFile::open(&path).unwrap();
            let rec = file.stroke(id).unwrap().expect("stroke in the log");
            assert!(!rec.undone);
            drop(file);
            frames.extend(drain(&mut ws, QUIET).await);
            assert!(
                !frames.is_empty(),
                "{kind:?}: the stroke remeshed something"
            );
            for f in &frames {
                parse_frame_header(f).expect("frame parses");
            }
            server.shutdown().await;
        }
    });
}

#[test]
fn undo_and_redo_bring_meshes_back() {
    rt().block_on(async {
        for kind in KINDS {
            let dir = tempfile::tempdir().unwrap();
            let path = create_world(dir.path(), kind);
            let server = start(&path).await;
            let mut ws = connect(server.addr()).await;
            let (_, initial) = open(&mut ws, kind).await;
            let before = latest(&initial);
            let hash0 = info(server.addr()).await["content_hash"].clone();
            let (ack, mut frames) = changing_stroke(&mut ws, kind, "s1").await;
            assert!(!ack["id"].is_null(), "{kind:?}");
            frames.extend(drain(&mut ws, QUIET).await);
            let stroked = latest(&frames);
            let hash1 = info(server.addr()).await["content_hash"].clone();
            assert_ne!(hash0, hash1);
            // Some chunk changed.
            assert!(
                stroked.iter().any(|(k, f)| before.get(k) != Some(f)),
                "{kind:?}"
            );
            // Undo: every chunk the stroke resent comes back to its bytes.
            send(&mut ws, json!({"type": "undo", "req": "u"})).await;
            let (h, mut undone) = until_json(&mut ws, "history").await;
            assert_eq!(h["action"], "undo");
            assert_eq!(h["req"], "u");
            undone.extend(drain(&mut ws, QUIET).await);
            let undone = latest(&undone);
            assert_eq!(info(server.addr()).await["content_hash"], hash0);
            for (k, f) in &stroked {
                if let Some(orig) = before.get(k) {
                    assert_eq!(
                        undone.get(k).unwrap_or(f),
                        orig,
                        "{kind:?} chunk {k:?} after undo"
                    );
                }
            }
            // Redo: the stroke's meshes again.
            send(&mut ws, json!({"type": "redo"})).await;
            let (h, mut redone) = until_json(&mut ws, "history").await;
            assert_eq!(h["action"], "redo");
            redone.extend(drain(&mut ws, QUIET).await);
            let redone = latest(&redone);
            assert_eq!(info(server.addr()).await["content_hash"], hash1);
            for (k, f) in &redone {
                assert_eq!(
                    stroked.get(k).or(before.get(k)),
                    Some(f),
                    "{kind:?} chunk {k:?} after redo"
                );
            }
            server.shutdown().await;
        }
    });
}

#[test]
fn two_clients_see_each_others_strokes() {
    rt().block_on(async {
        for kind in KINDS {
            let dir = tempfile::tempdir().unwrap();
            let path = create_world(dir.path(), kind);
            let server = start(&path).await;
            let mut a = connect(server.addr()).await;
            let mut b = connect(server.addr()).await;
            open(&mut a, kind).await;
            let (_, b_initial) = open(&mut b, kind).await;
            let b_before = latest(&b_initial);
            let (ack, _) = changing_stroke(&mut a, kind, "a1").await;
            assert!(!ack["id"].is_null());
            // B gets the history message and new meshes for the changed chunks.
            let (h, mut frames) = until_json(&mut b, "history").await;
            assert_eq!(h["action"], "stroke");
            assert_eq!(h["can_undo"], true);
            frames.extend(drain(&mut b, QUIET).await);
            let after = latest(&frames);
            assert!(
                after.iter().any(|(k, f)| b_before.get(k) != Some(f)),
                "{kind:?}: B saw A's stroke"
            );
            // And B can undo A's stroke; A sees it.
            send(&mut b, json!({"type": "undo"})).await;
            let (h, _) = until_json(&mut a, "history").await;
            assert_eq!(h["action"], "undo");
            assert_eq!(h["can_redo"], true);
            server.shutdown().await;
        }
    });
}

#[test]
fn foreign_origin_or_host_is_refused() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Side2d);
        let server = start(&path).await;
        let addr = server.addr();
        let own = addr.to_string();
        let own_origin = format!("http://{addr}");
        let localhost = format!("localhost:{}", addr.port());
        assert_eq!(http_status(addr, "/", &[("Host", &own)]).await, 200);
        assert_eq!(http_status(addr, "/", &[("Host", &localhost)]).await, 200);
        assert_eq!(
            http_status(
                addr,
                "/api/info",
                &[("Host", &own), ("Origin", &own_origin)]
            )
            .await,
            200
        );
        assert_eq!(
            http_status(addr, "/", &[("Host", "evil.example:80")]).await,
            403
        );
        assert_eq!(http_status(addr, "/", &[]).await, 403);
        for origin in [
            "http://evil.example",
            "https://127.0.0.1",
            "null",
            &format!("http://{addr}.evil"),
        ] {
            assert_eq!(
                http_status(addr, "/api/info", &[("Host", &own), ("Origin", origin)]).await,
                403,
                "{origin}"
            );
            assert_eq!(
                http_status(
                    addr,
                    "/export?format=png",
                    &[("Host", &own), ("Origin", origin)]
                )
                .await,
                403
            );
        }
        // The upgrade: foreign origin, missing origin, foreign host.
        let refused = |r: Result<Ws, tokio_tungstenite::tungstenite::Error>| match r {
            Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => resp.status().as_u16(),
            Err(e) => panic!("unexpected error {e}"),
            Ok(_) => 101,
        };
        assert_eq!(
            refused(connect_with(addr, Some("http://evil.example"), None).await),
            403
        );
        assert_eq!(refused(connect_with(addr, None, None).await), 403);
        assert_eq!(
            refused(connect_with(addr, Some(&own_origin), Some("evil.example")).await),
            403
        );
        assert_eq!(
            refused(connect_with(addr, Some(&own_origin), None).await),
            101
        );
        server.shutdown().await;
    });
}

#[test]
fn oversize_messages_close_the_connection() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Side2d);
        let server = start(&path).await;
        let mut ws = connect(server.addr()).await;
        until_json(&mut ws, "welcome").await;
        let big = format!(
            r#"{{"type":"hello","client":"{}"}}"#,
            "x".repeat(isoterra_editor::MAX_MESSAGE_BYTES)
        );
        send_text(&mut ws, &big).await;
        let mut saw_error = false;
        let mut code = None;
        while let Some(got) = next_within(&mut ws, WAIT).await {
            match got {
                Got::Json(v) if v["type"] == "error" => {
                    assert_eq!(v["code"], "too_large");
                    saw_error = true;
                }
                Got::Closed(c) => {
                    code = c;
                    break;
                }
                _ => {}
            }
        }
        assert!(saw_error);
        assert_eq!(code, Some(1009));
        // The server still serves others.
        let mut other = connect(server.addr()).await;
        until_json(&mut other, "welcome").await;
        server.shutdown().await;
    });
}

/// Messages that must be refused with `code`, for `kind`.
fn invalid_messages(kind: Kind) -> Vec<(String, &'static str)> {
    let (at, tool, _) = stroke_spot(kind);
    let begin = |extra: &str| {
        format!(
            r#"{{"type":"stroke_begin","stroke":"bad","tool":"{tool}","radius":4,"strength":1{extra}}}"#
        )
    };
    let mut out = vec![
        ("{not json".to_string(), "bad_message"),
        (r#"{"type":"teleport"}"#.to_string(), "bad_message"),
        (r#"{"type":"dab","stroke":"x"}"#.to_string(), "bad_message"),
        (
            r#"{"type":"stroke_begin","stroke":"bad","tool":"dig","radius":NaN,"strength":1}"#
                .to_string(),
            "bad_message",
        ),
        (
            format!(
                r#"{{"type":"stroke_begin","stroke":"bad","tool":"{tool}","radius":1e999,"strength":1}}"#
            ),
            "bad_message",
        ),
        (
            begin("").replace(r#""radius":4"#, r#""radius":-3"#),
            "invalid_parameter",
        ),
        (
            begin("").replace(r#""radius":4"#, r#""radius":1000"#),
            "invalid_parameter",
        ),
        (
            begin("").replace(r#""strength":1"#, r#""strength":2"#),
            "invalid_parameter",
        ),
        (begin(r#","shape":"hexagon""#), "invalid_parameter"),
        (
            r#"{"type":"stroke_begin","stroke":"bad","tool":"teleport","radius":4,"strength":1}"#
                .to_string(),
            "unknown_tool",
        ),
        (
            format!(
                r#"{{"type":"dab","stroke":"never-begun","at":[{},{},{}]}}"#,
                at[0], at[1], at[2]
            ),
            "unknown_stroke",
        ),
        (
            r#"{"type":"stroke_end","stroke":"never-begun"}"#.to_string(),
            "unknown_stroke",
        ),
        (
            r#"{"type":"camera","position":[0,1e300,0],"view_distance":10}"#.to_string(),
            "invalid_parameter",
        ),
        (
            r#"{"type":"new_world","kind":"teapot"}"#.to_string(),
            "invalid_parameter",
        ),
    ];
    if kind == Kind::Side2d {
        out.push((
            begin(r#","params":{"material":200}"#).replace(r#""dig""#, r#""fill""#),
            "invalid_parameter",
        ));
    }
    out
}

#[test]
fn invalid_parameters_get_an_error_and_change_nothing() {
    rt().block_on(async {
        for kind in KINDS {
            let dir = tempfile::tempdir().unwrap();
            let path = create_world(dir.path(), kind);
            let server = start(&path).await;
            let mut ws = connect(server.addr()).await;
            open(&mut ws, kind).await;
            let hash = info(server.addr()).await["content_hash"].clone();
            for (text, code) in invalid_messages(kind) {
                send_text(&mut ws, &text).await;
                let (err, frames) = until_json(&mut ws, "error").await;
                assert_eq!(err["code"], code, "{kind:?}: {text} -> {err}");
                assert!(err["message"].as_str().is_some_and(|m| !m.is_empty()));
                assert!(frames.is_empty(), "{kind:?}: {text} made meshes");
            }
            // A dab outside the limits, in a stroke that was begun, is refused too.
            let (at, tool, params) = stroke_spot(kind);
            send(
                &mut ws,
                json!({"type": "stroke_begin", "stroke": "ok", "tool": tool, "radius": 3,
                                  "strength": 1, "params": params, "req": "r9"}),
            )
            .await;
            send(
                &mut ws,
                json!({"type": "dab", "stroke": "ok", "at": [at[0], 1.0e12, at[2]]}),
            )
            .await;
            let (err, _) = until_json(&mut ws, "error").await;
            assert_eq!(err["code"], "invalid_parameter");
            assert_eq!(err["stroke"], "ok");
            send(&mut ws, json!({"type": "stroke_end", "stroke": "ok"})).await;
            let (ack, _) = until_json(&mut ws, "ack").await;
            assert!(ack["id"].is_null(), "a stroke without dabs records nothing");
            assert_eq!(ack["req"], "r9");
            drain(&mut ws, QUIET).await;
            let after = info(server.addr()).await;
            assert_eq!(after["content_hash"], hash, "{kind:?}");
            assert_eq!(after["history"]["strokes"], 0);
            server.shutdown().await;
        }
    });
}

#[test]
fn a_connection_closing_mid_stroke_ends_its_stroke() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Side2d);
        let server = start(&path).await;
        let mut ws = connect(server.addr()).await;
        until_json(&mut ws, "welcome").await;
        let (at, tool, params) = stroke_spot(Kind::Side2d);
        send(
            &mut ws,
            json!({"type": "stroke_begin", "stroke": "s", "tool": tool, "radius": 4,
                              "strength": 1, "params": params}),
        )
        .await;
        send(&mut ws, json!({"type": "dab", "stroke": "s", "at": at})).await;
        // Close without ending the stroke; read to the end so that the socket
        // closes cleanly (unread data would turn the close into a reset).
        use futures_util::StreamExt;
        let _ = ws.close(None).await;
        while let Some(Ok(_)) = ws.next().await {}
        drop(ws);
        // The stroke lands in the file.
        let mut found = false;
        let deadline = std::time::Instant::now() + WAIT;
        while std::time::Instant::now() < deadline {
            if info(server.addr()).await["history"]["strokes"] == 1 {
                found = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert!(found);
        server.shutdown().await;
        let doc = isoterra::store::Side2dDocument::open(&path).unwrap();
        assert_eq!(doc.info().undo_position, 1);
    });
}

#[test]
fn exports_are_downloads_of_the_listed_formats() {
    rt().block_on(async {
        for kind in KINDS {
            let dir = tempfile::tempdir().unwrap();
            let path = create_world(dir.path(), kind);
            let server = start(&path).await;
            let mut ws = connect(server.addr()).await;
            let (welcome, _) = until_json(&mut ws, "welcome").await;
            let host = server.addr().to_string();
            for format in welcome["exports"].as_array().unwrap() {
                let format = format.as_str().unwrap();
                let region = match kind {
                    Kind::Side2d | Kind::Map => "",
                    Kind::Heightmap => "&region=0,0,40,40",
                    Kind::Voxel => "&region=0,0,0,20,20,20",
                };
                let (status, body) = http_get(
                    server.addr(),
                    &format!("/export?format={format}{region}"),
                    &[("Host", &host)],
                )
                .await;
                assert_eq!(status, 200, "{kind:?} {format}");
                assert!(!body.is_empty());
                // Mesh files are streamed as they are encoded: the same
                // bytes as the world's own export.
                if matches!(format, "glb" | "obj") {
                    let mut doc = isoterra::kind::Document::open(&path).unwrap();
                    let req = isoterra::kind::ExportRequest::new(format.parse().unwrap())
                        .with_region(region.strip_prefix("&region=").map(str::to_string));
                    let want = doc.export(&req).unwrap();
                    assert!(
                        body == want.main().bytes,
                        "{kind:?} {format}: the download differs"
                    );
                }
            }
            let (status, _) =
                http_get(server.addr(), "/export?format=exe", &[("Host", &host)]).await;
            assert_eq!(status, 400);
            if matches!(kind, Kind::Heightmap | Kind::Voxel) {
                let format = welcome["exports"][0].as_str().unwrap();
                for region in ["nan,0,1,1", "0,0,0,0,0,0,0", "5,5,1,1", "1e30,0,1e31,1"] {
                    let (status, _) = http_get(
                        server.addr(),
                        &format!("/export?format={format}&region={region}"),
                        &[("Host", &host)],
                    )
                    .await;
                    assert_eq!(status, 400, "{kind:?} region {region}");
                }
            }
            server.shutdown().await;
        }
    });
}

/// A Tiled map needs its tileset image beside it: the `tiled-zip` download
/// holds both, under the names the map refers to, so a user unzips and
/// opens the map in Tiled with nothing saved by hand. An OBJ comes with its
/// `.mtl` the same way.
#[test]
fn zip_downloads_hold_the_map_and_the_files_it_names() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Map);
        let server = start(&path).await;
        let mut ws = connect(server.addr()).await;
        let (welcome, _) = until_json(&mut ws, "welcome").await;
        let listed: Vec<&str> = welcome["exports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(listed.contains(&"tiled-zip"), "{listed:?}");
        assert!(listed.contains(&"obj-zip"), "{listed:?}");
        let host = server.addr().to_string();
        let fetch = |format: &'static str| {
            let host = host.clone();
            let addr = server.addr();
            async move {
                let (status, body) = http_get(
                    addr,
                    &format!("/export?format={format}"),
                    &[("Host", &host)],
                )
                .await;
                assert_eq!(status, 200, "{format}");
                let mut zip = zip::ZipArchive::new(std::io::Cursor::new(body)).unwrap();
                let mut files = std::collections::BTreeMap::new();
                for i in 0..zip.len() {
                    let mut f = zip.by_index(i).unwrap();
                    let mut bytes = Vec::new();
                    std::io::Read::read_to_end(&mut f, &mut bytes).unwrap();
                    files.insert(f.name().unwrap().to_string(), bytes);
                }
                files
            }
        };
        let tiled = fetch("tiled-zip").await;
        assert_eq!(
            tiled.keys().map(String::as_str).collect::<Vec<_>>(),
            ["map.tiles.png", "map.tmj"]
        );
        let map: Value = serde_json::from_slice(&tiled["map.tmj"]).unwrap();
        assert_eq!(map["tilesets"][0]["image"], "map.tiles.png");
        assert!(tiled["map.tiles.png"].starts_with(b"\x89PNG"));
        // The same bytes as the single downloads.
        let (_, alone) = http_get(
            server.addr(),
            "/export?format=tiled-tileset",
            &[("Host", &host)],
        )
        .await;
        assert_eq!(alone, tiled["map.tiles.png"]);
        let obj = fetch("obj-zip").await;
        assert_eq!(
            obj.keys().map(String::as_str).collect::<Vec<_>>(),
            ["map.mtl", "map.obj"]
        );
        let text = String::from_utf8(obj["map.obj"].clone()).unwrap();
        assert!(
            text.contains("mtllib map.mtl"),
            "{}",
            &text[..200.min(text.len())]
        );
        assert!(text.contains("usemtl terrain"));
        let mtl = String::from_utf8(obj["map.mtl"].clone()).unwrap();
        for used in text.lines().filter_map(|l| l.strip_prefix("usemtl ")) {
            assert!(
                mtl.contains(&format!("newmtl {used}\n")),
                "newmtl {used}: {mtl}"
            );
        }
        server.shutdown().await;
    });
}

/// The chunks the streamed frames show are meshed off the world thread, so
/// a voxel export meshes its region itself: it shows every stroke, and an
/// undo brings the first export back byte for byte.
#[test]
fn voxel_exports_follow_strokes_and_undo() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Voxel);
        let server = start(&path).await;
        let mut ws = connect(server.addr()).await;
        open(&mut ws, Kind::Voxel).await;
        let host = server.addr().to_string();
        let export = |addr| {
            let host = host.clone();
            async move {
                let (status, body) = http_get(
                    addr,
                    "/export?format=obj&region=-8,-8,-8,20,20,20",
                    &[("Host", &host)],
                )
                .await;
                assert_eq!(status, 200);
                body
            }
        };
        let before = export(server.addr()).await;
        let (ack, frames) = changing_stroke(&mut ws, Kind::Voxel, "s1").await;
        assert!(!ack["id"].is_null(), "the stroke changed something: {ack}");
        let mut frames = frames;
        frames.extend(drain(&mut ws, QUIET).await);
        assert!(
            !frames.is_empty(),
            "the stroke's chunks were streamed again"
        );
        let edited = export(server.addr()).await;
        assert_ne!(edited, before, "the export shows the stroke");
        // Exporting again changes nothing and still streams edits afterwards.
        assert_eq!(export(server.addr()).await, edited);
        send(&mut ws, json!({"type": "undo"})).await;
        until_json(&mut ws, "history").await;
        let undone = drain(&mut ws, QUIET).await;
        assert!(!undone.is_empty(), "the undo was streamed");
        assert_eq!(export(server.addr()).await, before);
        server.shutdown().await;
    });
}

/// An export runs off the world thread: a stroke sent while a large voxel
/// export meshes is acknowledged before the export is done, and the export
/// holds every stroke acknowledged before it was asked for.
#[test]
fn strokes_are_acknowledged_while_a_large_export_runs() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Voxel);
        let server = start(&path).await;
        let mut ws = connect(server.addr()).await;
        open(&mut ws, Kind::Voxel).await;
        let host = server.addr().to_string();
        let addr = server.addr();
        // 4,096 chunks of 16 cells: the largest region one export takes.
        let big = tokio::spawn(async move {
            let (status, body) = http_get(
                addr,
                "/export?format=glb&region=-128,-128,-128,127,127,127",
                &[("Host", &host)],
            )
            .await;
            (status, body.len(), std::time::Instant::now())
        });
        // Let the export start, then stroke.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (ack, _) = changing_stroke(&mut ws, Kind::Voxel, "during").await;
        let acked = std::time::Instant::now();
        assert!(!ack["id"].is_null(), "{ack}");
        let (status, len, done) = big.await.unwrap();
        assert_eq!(status, 200);
        assert!(len > 1000);
        assert!(
            acked < done,
            "the stroke was acknowledged only after the export finished"
        );
        server.shutdown().await;
    });
}

#[test]
fn new_world_replaces_the_file_and_keeps_a_backup() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Side2d);
        let server = start(&path).await;
        let mut a = connect(server.addr()).await;
        let mut b = connect(server.addr()).await;
        until_json(&mut a, "welcome").await;
        until_json(&mut b, "welcome").await;
        send(
            &mut a,
            json!({"type": "new_world", "kind": "heightmap", "seed": 9, "preset": "islands"}),
        )
        .await;
        let (wa, _) = until_json(&mut a, "welcome").await;
        let (wb, _) = until_json(&mut b, "welcome").await;
        assert_eq!(wa["kind"], "heightmap");
        assert_eq!(wb["kind"], "heightmap");
        let mut backup = path.as_os_str().to_os_string();
        backup.push(".bak-1");
        assert!(std::path::PathBuf::from(backup).exists());
        assert_eq!(isoterra::store::detect_kind(&path).unwrap(), "heightmap");
        server.shutdown().await;
    });
}

#[test]
fn moving_the_camera_streams_and_unloads_chunks() {
    rt().block_on(async {
        for kind in [Kind::Heightmap, Kind::Voxel] {
            let dir = tempfile::tempdir().unwrap();
            let path = create_world(dir.path(), kind);
            let server = start(&path).await;
            let mut ws = connect(server.addr()).await;
            let (_, near) = open(&mut ws, kind).await;
            let near = latest(&near);
            assert!(!near.is_empty());
            send(&mut ws, camera([2000.0, 10.0, 2000.0], 40.0)).await;
            let (unload, mut frames) = until_json(&mut ws, "unload").await;
            let gone = unload["chunks"].as_array().unwrap();
            assert!(!gone.is_empty(), "{kind:?}");
            // Everything that was loaded near the origin is unloaded.
            for (_, _, c) in near.keys() {
                assert!(
                    gone.iter().any(|g| g == &json!(c)),
                    "{kind:?}: chunk {c:?} was not unloaded"
                );
            }
            frames.extend(drain(&mut ws, QUIET).await);
            let far = latest(&frames);
            assert!(!far.is_empty(), "{kind:?}: chunks around the new position");
            assert!(far.keys().all(|k| !near.contains_key(k)));
            server.shutdown().await;
        }
    });
}

#[test]
fn overlapping_strokes_and_undo_keep_memory_and_file_equal() {
    rt().block_on(async {
        for kind in KINDS {
            let dir = tempfile::tempdir().unwrap();
            let path = create_world(dir.path(), kind);
            let server = start(&path).await;
            let mut a = connect(server.addr()).await;
            let mut b = connect(server.addr()).await;
            open(&mut a, kind).await;
            open(&mut b, kind).await;
            let (at, tool, params) = stroke_spot(kind);
            // A keeps a stroke open over the spot while B strokes there,
            // undoes, redoes and strokes again.
            send(
                &mut a,
                json!({"type": "stroke_begin", "stroke": "long", "tool": tool,
                                 "radius": 5, "strength": 1, "params": params}),
            )
            .await;
            for k in 0..4 {
                send(
                    &mut a,
                    json!({"type": "dab", "stroke": "long",
                                     "at": [at[0] + k as f32, at[1], at[2]]}),
                )
                .await;
            }
            let (ack1, _) = changing_stroke(&mut b, kind, "b1").await;
            assert!(!ack1["id"].is_null(), "{kind:?}");
            send(&mut b, json!({"type": "undo"})).await;
            until_json(&mut b, "history").await;
            send(&mut b, json!({"type": "redo"})).await;
            until_json(&mut b, "history").await;
            // The same stroke again may change nothing (a dig where it dug).
            let (ack2, _) = changing_stroke(&mut b, kind, "b2").await;
            for k in 4..6 {
                send(
                    &mut a,
                    json!({"type": "dab", "stroke": "long",
                                     "at": [at[0] + k as f32, at[1], at[2]]}),
                )
                .await;
            }
            send(&mut a, json!({"type": "stroke_end", "stroke": "long"})).await;
            let (ack3, _) = until_json(&mut a, "ack").await;
            assert!(!ack3["id"].is_null(), "{kind:?}");
            let memory = info(server.addr()).await;
            let expected = 2 + u64::from(!ack2["id"].is_null());
            assert_eq!(memory["history"]["strokes"], expected, "{kind:?}");
            server.shutdown().await;
            // The file, reopened, holds exactly what the server held.
            let reopened = match kind {
                Kind::Side2d => isoterra::store::Side2dDocument::open(&path)
                    .unwrap()
                    .content_hash(),
                Kind::Heightmap => isoterra::store::HeightmapDocument::open(&path)
                    .unwrap()
                    .content_hash(),
                Kind::Voxel => isoterra::store::VoxelDocument::open(&path)
                    .unwrap()
                    .content_hash(),
                Kind::Map => isoterra::store::MapDocument::open(&path)
                    .unwrap()
                    .content_hash(),
            };
            assert_eq!(json!(reopened), memory["content_hash"], "{kind:?}");
        }
    });
}

/// Voxel chunk size of the test worlds (see `create_world`).
const VOXEL_N: u32 = 16;

/// What a voxel client holds: frame coordinate -> (LOD, vertex count), from
/// the frames and unloads in the order they came.
type Held = std::collections::BTreeMap<[i32; 3], (u8, u32)>;

/// Reads until nothing arrives for `QUIET`, applying frames and unloads to
/// `held`; returns the frames in arrival order.
async fn stream_into(ws: &mut Ws, held: &mut Held) -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    while let Some(got) = next_within(ws, QUIET).await {
        match got {
            Got::Frame(f) => {
                let h = parse_frame_header(&f).expect("frame parses");
                assert_eq!(h.kind, 3, "voxel frames only");
                held.insert(h.chunk, (h.lod, h.vertices));
                frames.push(f);
            }
            Got::Json(v) if v["type"] == "unload" => {
                for c in v["chunks"].as_array().expect("chunk list") {
                    let c: [i32; 3] = serde_json::from_value(c.clone()).expect("coordinate");
                    held.remove(&c);
                }
            }
            Got::Json(_) => {}
            Got::Closed(c) => panic!("closed ({c:?})"),
        }
    }
    frames
}

/// Distance from `p` to the box of the chunk at frame coordinate `key`
/// (a frame covers its own chunk, whatever its LOD).
fn chunk_distance(p: [f32; 3], key: [i32; 3], _lod: u8) -> f32 {
    let n = VOXEL_N as f32;
    let mut d2 = 0.0;
    for a in 0..3 {
        let lo = key[a] as f32 * n;
        let d = (lo - p[a]).max(p[a] - (lo + n)).max(0.0);
        d2 += d * d;
    }
    d2.sqrt()
}

/// No two held chunks that touch (by a face, an edge or a corner) differ by
/// more than one LOD, so transition cells close every seam.
fn assert_two_to_one(held: &Held) {
    for (key, (lod, _)) in held {
        for k in 0..27 {
            let d = [k % 3 - 1, (k / 3) % 3 - 1, k / 9 - 1];
            let nb = [key[0] + d[0], key[1] + d[1], key[2] + d[2]];
            if let Some((nl, _)) = held.get(&nb) {
                assert!(
                    lod.abs_diff(*nl) <= 1,
                    "chunk {key:?} at LOD {lod} touches {nb:?} at LOD {nl}"
                );
            }
        }
    }
}

fn voxel_camera(at: [f32; 3], forward: [f32; 3], view_distance: f32) -> Value {
    json!({"type": "camera", "position": at, "forward": forward, "view_distance": view_distance})
}

#[test]
fn voxel_camera_moves_stream_the_nearest_chunks_first() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Voxel);
        let server = start(&path).await;
        let mut ws = connect(server.addr()).await;
        until_json(&mut ws, "welcome").await;
        let mut held = Held::new();
        send(
            &mut ws,
            voxel_camera([8.0, 10.0, 8.0], [1.0, 0.0, 0.0], 40.0),
        )
        .await;
        stream_into(&mut ws, &mut held).await;
        // A jump far enough to be a teleport however long the first view
        // took (over 64 chunk sizes per second): no velocity, so no
        // look-ahead moves the nearest chunks back in the order.
        let at = [20_008.0, 10.0, 8.0];
        let cx = (at[0] / VOXEL_N as f32).floor() as i32;
        send(&mut ws, voxel_camera(at, [1.0, 0.0, 0.0], 40.0)).await;
        let frames = stream_into(&mut ws, &mut held).await;
        assert!(frames.len() > 27, "a whole view streamed: {}", frames.len());
        let dist: Vec<f32> = frames
            .iter()
            .map(|f| {
                let h = parse_frame_header(f).unwrap();
                chunk_distance(at, h.chunk, h.lod)
            })
            .collect();
        // The chunk around the camera and its neighbours first. Frames go
        // out in the order builds finish, on worker threads: a neighbour in
        // plain air or rock finishes before the surface chunk it started
        // with, and on a loaded machine one worker can finish several
        // while the other still builds the camera's own chunk. So: that
        // chunk within the first third of the view, and the first eight
        // frames all next to the camera.
        let own = dist.iter().position(|d| *d == 0.0);
        assert!(
            own.is_some_and(|k| k < dist.len() / 3),
            "the camera's chunk came as frame {own:?} of {}; first frames {:?}",
            dist.len(),
            &dist[..8]
        );
        for (k, d) in dist.iter().take(8).enumerate() {
            assert!(*d <= VOXEL_N as f32, "frame {k} is {d} away");
        }
        let quarter = dist.len() / 4;
        let mean = |s: &[f32]| s.iter().sum::<f32>() / s.len() as f32;
        assert!(mean(&dist[..quarter]) * 2.0 < mean(&dist[dist.len() - quarter..]));
        // In front of the camera (+x) before behind it, at the same distance.
        let pos = |key: [i32; 3]| {
            frames.iter().position(|f| {
                let h = parse_frame_header(f).unwrap();
                h.chunk == key && h.lod == 0
            })
        };
        let (ahead, behind) = (pos([cx + 1, 0, 0]), pos([cx - 1, 0, 0]));
        assert!(ahead.is_some() && behind.is_some());
        assert!(ahead < behind, "ahead {ahead:?}, behind {behind:?}");
        // Nothing of the old place is left.
        assert!(held.keys().all(|k| k[0] >= cx - 10), "{held:?}");
        assert_two_to_one(&held);
        server.shutdown().await;
    });
}

#[test]
fn voxel_far_chunks_come_coarse_and_lods_step_by_one() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Voxel);
        let server = start(&path).await;
        let mut ws = connect(server.addr()).await;
        until_json(&mut ws, "welcome").await;
        let mut held = Held::new();
        let at = [8.0, 10.0, 8.0];
        send(&mut ws, voxel_camera(at, [0.0, 0.0, -1.0], 200.0)).await;
        stream_into(&mut ws, &mut held).await;
        assert_two_to_one(&held);
        let lods: std::collections::BTreeSet<u8> = held.values().map(|v| v.0).collect();
        assert!(
            lods.contains(&0) && lods.iter().any(|l| *l >= 2),
            "{lods:?}"
        );
        assert!(
            held.values().any(|(l, v)| *l > 0 && *v > 0),
            "coarse geometry"
        );
        // The LOD 0 ring is inside the coarse chunks' reach.
        let far0 = held
            .iter()
            .filter(|(_, (l, _))| *l == 0)
            .map(|(k, (l, _))| chunk_distance(at, *k, *l))
            .fold(0.0f32, f32::max);
        let near2 = held
            .iter()
            .filter(|(_, (l, _))| *l >= 2)
            .map(|(k, (l, _))| chunk_distance(at, *k, *l))
            .fold(f32::INFINITY, f32::min);
        assert!(far0 < near2, "LOD 0 up to {far0}, LOD 2+ from {near2}");
        // The view reaches farther than the LOD 0 ring did before (4 chunks).
        let reach = held
            .iter()
            .map(|(k, (l, _))| chunk_distance(at, *k, *l))
            .fold(0.0f32, f32::max);
        assert!(reach > 4.0 * VOXEL_N as f32, "reach {reach}");
        // Moving changes LODs: finer chunks give way to coarser ones and the
        // other way round, and neighbours still differ by one LOD at most.
        for at in [[70.0, 10.0, 8.0], [150.0, 30.0, -60.0], [8.0, 10.0, 8.0]] {
            send(&mut ws, voxel_camera(at, [0.0, 0.0, -1.0], 200.0)).await;
            stream_into(&mut ws, &mut held).await;
            assert_two_to_one(&held);
            let here = held
                .iter()
                .find(|(k, (l, _))| chunk_distance(at, **k, *l) == 0.0)
                .expect("a chunk around the camera");
            assert_eq!(here.1.0, 0, "LOD 0 at the camera {at:?}");
        }
        server.shutdown().await;
    });
}

#[test]
fn voxel_edits_remesh_at_the_current_lod() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Voxel);
        let server = start(&path).await;
        let mut ws = connect(server.addr()).await;
        until_json(&mut ws, "welcome").await;
        let mut held = Held::new();
        let at = [8.0, 10.0, 8.0];
        send(&mut ws, voxel_camera(at, [0.0, 0.0, -1.0], 200.0)).await;
        let frames = stream_into(&mut ws, &mut held).await;
        // The nearest coarse chunk with geometry, and a point on its surface.
        let (key, lod, point) = held
            .iter()
            .filter(|(_, (l, v))| *l >= 1 && *v > 0)
            .min_by(|a, b| {
                let da = chunk_distance(at, *a.0, a.1.0);
                let db = chunk_distance(at, *b.0, b.1.0);
                da.total_cmp(&db)
            })
            .map(|(k, (l, _))| {
                let f = frames
                    .iter()
                    .rev()
                    .find(|f| {
                        let h = parse_frame_header(f).unwrap();
                        h.chunk == *k && h.lod == *l
                    })
                    .expect("its frame");
                let p: Vec<f32> = (0..3)
                    .map(|i| f32::from_le_bytes(f[32 + 4 * i..36 + 4 * i].try_into().unwrap()))
                    .collect();
                (*k, *l, [p[0], p[1], p[2]])
            })
            .expect("a coarse chunk with geometry");
        let (ack, _) = stroke(&mut ws, "far-dig", "dig", json!({}), point, 1, 3.0).await;
        let ack = if ack["id"].is_null() {
            stroke(&mut ws, "far-add", "add", json!({}), point, 1, 3.0)
                .await
                .0
        } else {
            ack
        };
        assert!(!ack["id"].is_null(), "the stroke changed something: {ack}");
        let before = held.clone();
        let after = stream_into(&mut ws, &mut held).await;
        let resent: Vec<_> = after
            .iter()
            .map(|f| parse_frame_header(f).unwrap())
            .collect();
        assert!(
            resent.iter().any(|h| h.chunk == key && h.lod == lod),
            "chunk {key:?} at LOD {lod} was remeshed"
        );
        for h in &resent {
            assert_eq!(
                before.get(&h.chunk).map(|v| v.0),
                Some(h.lod),
                "chunk {:?} keeps its LOD",
                h.chunk
            );
        }
        assert_eq!(
            held.keys().collect::<Vec<_>>(),
            before.keys().collect::<Vec<_>>()
        );
        assert_two_to_one(&held);
        server.shutdown().await;
    });
}

/// The latest frame of each chunk among `frames`.
fn latest_voxel(frames: &[Vec<u8>]) -> std::collections::BTreeMap<[i32; 3], Vec<u8>> {
    frames
        .iter()
        .map(|f| {
            (
                parse_frame_header(f).expect("frame parses").chunk,
                f.clone(),
            )
        })
        .collect()
}

/// Reads `ws` until nothing arrives for `QUIET`, applying to `held`, and
/// returns the latest frame of each chunk that came (`extra` frames first).
async fn settle_voxel(
    ws: &mut Ws,
    held: &mut Held,
    extra: Vec<Vec<u8>>,
) -> std::collections::BTreeMap<[i32; 3], Vec<u8>> {
    for f in &extra {
        let h = parse_frame_header(f).expect("frame parses");
        held.insert(h.chunk, (h.lod, h.vertices));
    }
    let mut frames = extra;
    frames.extend(stream_into(ws, held).await);
    latest_voxel(&frames)
}

#[test]
fn voxel_clients_share_one_stream_and_see_edits_and_undo() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Voxel);
        let server = start(&path).await;
        let mut a = connect(server.addr()).await;
        let mut b = connect(server.addr()).await;
        until_json(&mut a, "welcome").await;
        until_json(&mut b, "welcome").await;
        let (at_a, at_b) = ([8.0, 10.0, 8.0], [408.0, 10.0, 8.0]);
        send(&mut a, voxel_camera(at_a, [1.0, 0.0, 0.0], 40.0)).await;
        send(&mut b, voxel_camera(at_b, [-1.0, 0.0, 0.0], 40.0)).await;
        let (mut held_a, mut held_b) = (Held::new(), Held::new());
        let mut first_a = settle_voxel(&mut a, &mut held_a, Vec::new()).await;
        let first_b = settle_voxel(&mut b, &mut held_b, Vec::new()).await;
        // Both see the chunks around both cameras, at the same LODs.
        assert_eq!(held_a, held_b);
        let near = |held: &Held, p: [f32; 3]| held.keys().any(|k| chunk_distance(p, *k, 0) == 0.0);
        assert!(near(&held_a, at_a) && near(&held_a, at_b), "{held_a:?}");
        assert_eq!(held_a[&[0, 0, 0]].0, 0, "LOD 0 at camera A");
        assert_eq!(held_a[&[25, 0, 0]].0, 0, "LOD 0 at camera B");
        assert_two_to_one(&held_a);
        for (k, f) in &first_b {
            first_a.entry(*k).or_insert_with(|| f.clone());
        }
        // A chunk with ground near A, and a point of its surface.
        let (key, point) = held_a
            .iter()
            .filter(|(k, (l, v))| *l == 0 && *v > 0 && chunk_distance(at_a, **k, 0) <= 16.0)
            .map(|(k, _)| {
                let f = &first_a[k];
                let p: Vec<f32> = (0..3)
                    .map(|i| f32::from_le_bytes(f[32 + 4 * i..36 + 4 * i].try_into().unwrap()))
                    .collect();
                (*k, [p[0], p[1], p[2]])
            })
            .next()
            .expect("ground near camera A");
        let original = first_a[&key].clone();
        let (ack, seen) = stroke(&mut a, "dig-a", "dig", json!({}), point, 1, 3.0).await;
        let (ack, seen) = if ack["id"].is_null() {
            stroke(&mut a, "add-a", "add", json!({}), point, 1, 3.0).await
        } else {
            (ack, seen)
        };
        assert!(!ack["id"].is_null(), "the stroke changed something: {ack}");
        let after_a = settle_voxel(&mut a, &mut held_a, seen).await;
        let after_b = settle_voxel(&mut b, &mut held_b, Vec::new()).await;
        assert!(after_a.contains_key(&key), "A gets chunk {key:?} again");
        assert_ne!(after_a[&key], original, "with the edit");
        assert_eq!(
            after_b.get(&key),
            Some(&after_a[&key]),
            "B gets the same frame"
        );
        // Only chunks near the edit were sent again, none near B.
        assert!(
            after_b
                .keys()
                .all(|k| chunk_distance(at_a, *k, 0) <= 3.0 * 16.0),
            "{:?}",
            after_b.keys()
        );
        // Undo (by B) brings back the original bytes, to both.
        send(&mut b, json!({"type": "undo"})).await;
        let (_, seen_b) = until_json(&mut b, "history").await;
        let undone_b = settle_voxel(&mut b, &mut held_b, seen_b).await;
        let undone_a = settle_voxel(&mut a, &mut held_a, Vec::new()).await;
        assert_eq!(
            undone_a.get(&key),
            Some(&original),
            "A sees the original chunk"
        );
        assert_eq!(
            undone_b.get(&key),
            Some(&original),
            "B sees the original chunk"
        );
        for (k, f) in &undone_a {
            assert_eq!(f, &first_a[k], "chunk {k:?} is back as it was");
        }
        assert_eq!(held_a, held_b);
        // One client leaves: the chunks only it wanted are unloaded for the other.
        drop(b);
        stream_into(&mut a, &mut held_a).await;
        assert!(near(&held_a, at_a) && !near(&held_a, at_b), "{held_a:?}");
        server.shutdown().await;
    });
}

/// Frames until nothing arrives for `QUIET`: the latest of each chunk.
async fn quiet_frames(ws: &mut Ws) -> std::collections::BTreeMap<[i32; 3], Vec<u8>> {
    latest_voxel(&drain(ws, QUIET).await)
}

#[test]
fn heightmap_clients_share_one_stream_and_see_edits_and_undo() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Heightmap);
        let server = start(&path).await;
        let mut a = connect(server.addr()).await;
        let mut b = connect(server.addr()).await;
        until_json(&mut a, "welcome").await;
        until_json(&mut b, "welcome").await;
        send(&mut a, camera([8.0, 10.0, 8.0], 60.0)).await;
        let first_a = quiet_frames(&mut a).await;
        send(&mut b, camera([600.0, 10.0, 8.0], 60.0)).await;
        let first_b = quiet_frames(&mut b).await;
        let more_a = quiet_frames(&mut a).await;
        // B got what A streamed and its own chunks; A got B's too.
        assert!(first_a.contains_key(&[0, 0, 0]));
        assert!(first_b.contains_key(&[0, 0, 0]), "B sees A's chunks");
        assert!(more_a.keys().any(|k| k[0] > 10), "A sees B's chunks");
        let original = first_a[&[0, 0, 0]].clone();
        let (at, tool, params) = stroke_spot(Kind::Heightmap);
        let (ack, seen) = stroke(&mut a, "raise-a", tool, params, at, 1, 4.0).await;
        assert!(!ack["id"].is_null(), "{ack}");
        let mut after_a = latest_voxel(&seen);
        after_a.extend(quiet_frames(&mut a).await);
        let after_b = quiet_frames(&mut b).await;
        assert_ne!(after_a.get(&[0, 0, 0]), Some(&original), "A sees the edit");
        assert_eq!(after_b.get(&[0, 0, 0]), after_a.get(&[0, 0, 0]), "B too");
        send(&mut b, json!({"type": "undo"})).await;
        let (_, seen) = until_json(&mut b, "history").await;
        let mut undone_b = latest_voxel(&seen);
        undone_b.extend(quiet_frames(&mut b).await);
        let undone_a = quiet_frames(&mut a).await;
        assert_eq!(undone_a.get(&[0, 0, 0]), Some(&original));
        assert_eq!(undone_b.get(&[0, 0, 0]), Some(&original));
        server.shutdown().await;
    });
}

#[test]
fn tool_keys_are_unique_single_characters() {
    rt().block_on(async {
        for kind in KINDS {
            let dir = tempfile::tempdir().unwrap();
            let path = create_world(dir.path(), kind);
            let server = start(&path).await;
            let mut ws = connect(server.addr()).await;
            let (welcome, _) = until_json(&mut ws, "welcome").await;
            let tools = welcome["tools"].as_array().expect("tools");
            let mut keys = std::collections::HashSet::new();
            for t in tools {
                let key = t["key"].as_str().expect("a key");
                assert_eq!(
                    key.chars().count(),
                    1,
                    "{kind:?} {}: key `{key}`",
                    t["name"]
                );
                assert!(keys.insert(key.to_string()), "{kind:?}: key `{key}` twice");
            }
            server.shutdown().await;
        }
    });
}

#[test]
fn too_many_open_strokes_are_busy() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Map);
        let server = start(&path).await;
        let mut ws = connect(server.addr()).await;
        until_json(&mut ws, "welcome").await;
        for k in 0..17 {
            send(
                &mut ws,
                json!({"type": "stroke_begin", "stroke": format!("s{k}"), "tool": "raise",
                       "radius": 4, "strength": 0.5, "req": format!("r{k}")}),
            )
            .await;
        }
        let (err, _) = until_json(&mut ws, "error").await;
        assert_eq!(err["code"], "busy");
        assert_eq!(err["req"], "r16");
        // Ending one makes room again.
        send(&mut ws, json!({"type": "stroke_end", "stroke": "s0"})).await;
        until_json(&mut ws, "ack").await;
        send(
            &mut ws,
            json!({"type": "stroke_begin", "stroke": "s16", "tool": "raise",
                   "radius": 4, "strength": 0.5}),
        )
        .await;
        send(&mut ws, json!({"type": "stroke_end", "stroke": "s16"})).await;
        let (ack, _) = until_json(&mut ws, "ack").await;
        assert_eq!(ack["stroke"], "s16");
        server.shutdown().await;
    });
}

/// `/api/pathing` as (width, depth, cells).
async fn pathing(addr: std::net::SocketAddr) -> (u16, u32, u32, Vec<u8>) {
    let host = addr.to_string();
    let (status, body) = http_get(addr, "/api/pathing", &[("Host", &host)]).await;
    if status != 200 || body.len() < 8 {
        return (status, 0, 0, body);
    }
    let w = u32::from_le_bytes(body[0..4].try_into().unwrap());
    let d = u32::from_le_bytes(body[4..8].try_into().unwrap());
    (status, w, d, body[8..].to_vec())
}

#[test]
fn the_pathing_overlay_follows_pathing_strokes_and_undo() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Map);
        let server = start(&path).await;
        let addr = server.addr();
        let mut ws = connect(addr).await;
        let _ = open(&mut ws, Kind::Map).await;
        let (status, w, d, before) = pathing(addr).await;
        assert_eq!(status, 200);
        assert_eq!((w, d), (96, 96));
        assert_eq!(before.len(), 96 * 96);
        // Flying is allowed everywhere on a fresh map.
        assert!(before.iter().all(|c| c & 2 != 0));
        let (ack, _) = stroke(
            &mut ws,
            "p1",
            "pathing",
            json!({"pathing": ["fly"], "clear": false}),
            [40.0, 0.0, 40.0],
            3,
            5.0,
        )
        .await;
        assert!(
            !ack["id"].is_null(),
            "the pathing stroke changed nothing: {ack}"
        );
        let (_, _, _, after) = pathing(addr).await;
        let blocked: Vec<usize> = (0..after.len()).filter(|&i| after[i] & 2 == 0).collect();
        assert!(
            blocked.len() > 20,
            "only {} cells lost flying",
            blocked.len()
        );
        // The cells are near the stroke (x 40..43, z 40, radius 5).
        for &i in &blocked {
            let (x, z) = ((i % 96) as f32 + 0.5, (i / 96) as f32 + 0.5);
            assert!(
                (33.0..50.0).contains(&x) && (33.0..48.0).contains(&z),
                "cell {x},{z}"
            );
        }
        send(&mut ws, json!({"type": "undo"})).await;
        let _ = until_json(&mut ws, "history").await;
        let (_, _, _, undone) = pathing(addr).await;
        assert_eq!(undone, before, "undo brings the pathing grid back");
        server.shutdown().await;

        // Other kinds have no pathing grid: a clear error, nothing else.
        let path = create_world(dir.path(), Kind::Side2d);
        let server = start(&path).await;
        let (status, _, _, body) = pathing(server.addr()).await;
        assert_eq!(status, 400);
        assert!(String::from_utf8_lossy(&body).contains("pathing"));
        server.shutdown().await;
    });
}

#[test]
fn welcome_names_textures_materials_and_parameters() {
    rt().block_on(async {
        for kind in KINDS {
            let dir = tempfile::tempdir().unwrap();
            let path = create_world(dir.path(), kind);
            let server = start(&path).await;
            let mut ws = connect(server.addr()).await;
            let (welcome, _) = open(&mut ws, kind).await;
            for tool in welcome["tools"].as_array().unwrap() {
                let d = tool["description"].as_str().unwrap_or("");
                assert!(d.len() > 8 && d != tool["name"], "{kind:?}: {tool}");
                for p in tool["params"].as_array().unwrap() {
                    assert!(
                        p["description"].as_str().is_some_and(|d| !d.is_empty()),
                        "{kind:?}: parameter without a description: {p}"
                    );
                }
            }
            let world = &welcome["world"];
            match kind {
                Kind::Map => {
                    let names = world["texture_names"].as_array().unwrap();
                    let colors = world["textures"].as_array().unwrap();
                    assert_eq!(names.len(), 16);
                    assert_eq!(names.len(), colors.len());
                    assert_eq!(names[0], "grass");
                }
                Kind::Voxel | Kind::Side2d => {
                    let m = world["materials"].as_array().unwrap();
                    assert!(m.len() >= 2, "{kind:?}: {world}");
                    assert!(
                        m.iter()
                            .all(|m| m["name"].is_string() && m["color"].is_array())
                    );
                }
                Kind::Heightmap => {}
            }
            // The status line says how many chunks a client should hold.
            let mut wanted = None;
            for _ in 0..20 {
                let (status, _) = until_json(&mut ws, "status").await;
                if status["wanted"].as_u64().is_some_and(|w| w > 0) {
                    wanted = status["wanted"].as_u64();
                    break;
                }
            }
            assert!(wanted.is_some(), "{kind:?}: no status with a wanted count");
            server.shutdown().await;
        }
    });
}

fn lookup<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |v, k| {
        v.get(k)
            .or_else(|| k.parse::<usize>().ok().and_then(|i| v.get(i)))
    })
}

#[test]
fn recipe_fields_previews_and_worlds_made_from_an_edited_recipe() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Side2d);
        let server = start(&path).await;
        let addr = server.addr();
        let host = addr.to_string();
        let h = [("Host", host.as_str())];

        // Every kind's recipe comes with a control for every parameter.
        for kind in ["side2d", "heightmap", "voxel", "map"] {
            let (status, body) = http_get(addr, &format!("/api/recipe?kind={kind}"), &h).await;
            assert_eq!(status, 200, "{kind}");
            let v = json_body(&body);
            let params = &v["recipe"]["params"];
            let fields = v["fields"].as_array().unwrap();
            assert!(!fields.is_empty(), "{kind}");
            for f in fields {
                let p = f["path"].as_str().unwrap();
                if let Some(part) = f["within"].as_str() {
                    // A field of an optional part (off in the presets): it
                    // is in the value the part's toggle turns it on with.
                    let toggle = fields.iter().find(|g| g["path"] == part).unwrap();
                    assert_eq!(toggle["control"]["type"], "toggle", "{kind}: {part}");
                    let rest = &p[part.len() + 1..];
                    let initial = &toggle["control"]["initial"];
                    assert!(lookup(initial, rest).is_some(), "{kind}: {p} is not in {part}");
                } else if f["control"]["type"] == "toggle" {
                    assert!(lookup(params, p).is_none(), "{kind}: {p} is on in a preset");
                } else if f["when"].is_null() {
                    assert!(lookup(params, p).is_some(), "{kind}: {p} is not in the recipe");
                }
            }
            assert!(v["presets"].as_array().unwrap().len() >= 3);
        }
        let (status, body) = http_get(addr, "/api/recipe?kind=voxel&preset=overhangs", &h).await;
        assert_eq!(status, 200);
        assert_eq!(json_body(&body)["recipe"]["name"], "overhangs");
        for bad in [
            "/api/recipe?kind=teapot",
            "/api/recipe?kind=voxel&preset=volcano",
            "/api/recipe",
        ] {
            assert_eq!(http_get(addr, bad, &h).await.0, 400, "{bad}");
        }

        // A preview of an edited recipe; the same request draws the same
        // picture, another fill another one.
        let (_, body) = http_get(addr, "/api/recipe?kind=side2d&preset=caves", &h).await;
        let mut recipe = json_body(&body)["recipe"].clone();
        recipe["params"]["fill"] = json!(0.3);
        let req = |recipe: &Value| {
            serde_json::to_vec(&json!({"kind": "side2d", "seed": 3, "size": [64, 32], "recipe": recipe}))
                .unwrap()
        };
        let (status, a) = http_post(addr, "/api/preview", &h, &req(&recipe)).await;
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&a));
        assert!(a.starts_with(b"\x89PNG\r\n\x1a\n"));
        let (_, again) = http_post(addr, "/api/preview", &h, &req(&recipe)).await;
        assert_eq!(a, again);
        let mut fuller = recipe.clone();
        fuller["params"]["fill"] = json!(0.8);
        let (_, b) = http_post(addr, "/api/preview", &h, &req(&fuller)).await;
        assert_ne!(a, b);

        // Bad requests are refused with the reason, and change nothing.
        let hash = info(addr).await["content_hash"].clone();
        let mut bad_fill = recipe.clone();
        bad_fill["params"]["fill"] = json!(3.0);
        for (body, needle) in [
            (req(&bad_fill), "params.fill"),
            (b"{not json".to_vec(), "preview"),
            (
                serde_json::to_vec(&json!({"kind": "heightmap", "recipe": recipe})).unwrap(),
                "side2d worlds",
            ),
            (
                serde_json::to_vec(&json!({"kind": "side2d", "pixels": 0})).unwrap(),
                "pixels",
            ),
            (
                serde_json::to_vec(&json!({"kind": "side2d", "area": 100.0})).unwrap(),
                "area",
            ),
            (vec![b' '; 70_000], "at most"),
        ] {
            let (status, out) = http_post(addr, "/api/preview", &h, &body).await;
            assert_eq!(status, 400);
            let msg = json_body(&out)["message"].as_str().unwrap().to_string();
            assert!(msg.contains(needle), "{msg} lacks {needle}");
        }
        // Another site's page cannot make the server draw.
        let (status, _) = http_post(
            addr,
            "/api/preview",
            &[("Host", host.as_str()), ("Origin", "http://evil.example")],
            &req(&recipe),
        )
        .await;
        assert_eq!(status, 403);
        assert_eq!(info(addr).await["content_hash"], hash);

        // A new world from the edited recipe holds exactly that recipe.
        let mut ws = connect(addr).await;
        until_json(&mut ws, "welcome").await;
        send(
            &mut ws,
            json!({"type": "new_world", "kind": "side2d", "seed": 3, "size": [64, 32], "recipe": recipe}),
        )
        .await;
        let (w, _) = until_json(&mut ws, "welcome").await;
        assert_eq!(w["world"]["kind"], "side2d");
        let held = info(addr).await["recipe"].clone();
        assert_eq!(held["params"], recipe["params"]);
        server.shutdown().await;
    });
}

/// What a client holds of a streamed map: per chunk, its terrain frame's
/// LOD (0 full, 1 overview tile), size and a hash of its bytes.
type MapHeld = std::collections::BTreeMap<[i32; 3], (u8, usize, u64)>;

/// Reads until nothing arrives for `QUIET`, applying map terrain frames to
/// `held`; returns the bytes of every frame received.
async fn map_stream_into(ws: &mut Ws, held: &mut MapHeld) -> usize {
    let mut bytes = 0;
    while let Some(got) = next_within(ws, QUIET).await {
        match got {
            Got::Frame(f) => {
                let h = parse_frame_header(&f).expect("frame parses");
                assert_eq!(h.kind, 1, "map frames only");
                bytes += f.len();
                if h.layer == 0 {
                    use std::hash::{Hash, Hasher};
                    let mut hasher = std::collections::hash_map::DefaultHasher::new();
                    f.hash(&mut hasher);
                    held.insert(h.chunk, (h.lod, f.len(), hasher.finish()));
                }
            }
            Got::Json(_) => {}
            Got::Closed(c) => panic!("closed ({c:?})"),
        }
    }
    bytes
}

/// 320 x 320 cells in chunks of 16: 400 chunks, more than a map sent whole
/// may have, so the server streams it per camera.
fn create_large_map(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("large.isoterra");
    let params = isoterra::world::MapParams::DEFAULT
        .with_size(320, 320)
        .with_chunk_cells(16)
        .with_seed(3);
    isoterra::store::MapDocument::create(&path, &params).expect("create map");
    path
}

/// Whether chunk `c` (16 cells of 1 unit) is within `radius` of `at` (x, z):
/// the server's rule for sending it in full.
fn map_chunk_near(c: [i32; 3], at: [f32; 2], radius: f32) -> bool {
    let d = |k: i32, p: f32| ((k as f32 + 0.5) * 16.0 - p).abs() - 8.0;
    let (dx, dz) = (d(c[0], at[0]).max(0.0), d(c[2], at[1]).max(0.0));
    (dx * dx + dz * dz).sqrt() <= radius
}

#[test]
fn a_large_map_streams_full_chunks_near_the_camera_and_an_overview_elsewhere() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_large_map(dir.path());
        let server = start(&path).await;
        // A client without a camera gets every chunk as an overview tile.
        let mut idle = connect(server.addr()).await;
        let (welcome, _) = until_json(&mut idle, "welcome").await;
        assert_eq!(welcome["world"]["size"], json!([320, 320]));
        let mut idle_held = MapHeld::new();
        let overview_bytes = map_stream_into(&mut idle, &mut idle_held).await;
        assert_eq!(idle_held.len(), 400, "every chunk arrives");
        assert!(idle_held.values().all(|(lod, _, _)| *lod == 1));
        // A camera over one corner: the chunks within its distance in full
        // (radius 40 units, under the cap of 6 chunks), the rest as tiles.
        let mut ws = connect(server.addr()).await;
        until_json(&mut ws, "welcome").await;
        send(
            &mut ws,
            json!({"type": "camera", "position": [40.0, 0.0, 40.0], "view_distance": 40.0}),
        )
        .await;
        let mut held = MapHeld::new();
        let first_bytes = map_stream_into(&mut ws, &mut held).await;
        assert_eq!(held.len(), 400);
        let check = |held: &MapHeld, at: [f32; 2], radius: f32| {
            for (c, (lod, _, _)) in held {
                let near = map_chunk_near(*c, at, radius);
                assert_eq!(
                    *lod == 0,
                    near,
                    "chunk {c:?} at LOD {lod} (camera at {at:?})"
                );
            }
        };
        check(&held, [40.0, 40.0], 40.0);
        let full: Vec<usize> = held.values().filter(|h| h.0 == 0).map(|h| h.1).collect();
        let tiles: Vec<usize> = held.values().filter(|h| h.0 == 1).map(|h| h.1).collect();
        assert!(
            full.len() >= 9 && tiles.len() >= 350,
            "{} full, {} tiles",
            full.len(),
            tiles.len()
        );
        // A tile is a fraction of a full chunk; the whole stream is a
        // fraction of every chunk in full.
        let mean = |v: &[usize]| v.iter().sum::<usize>() as f64 / v.len() as f64;
        assert!(
            mean(&tiles) < 0.2 * mean(&full),
            "tiles {} bytes, full {}",
            mean(&tiles),
            mean(&full)
        );
        assert!(
            (first_bytes as f64) < 0.25 * 400.0 * mean(&full),
            "{first_bytes} bytes streamed; every chunk in full would be about {}",
            400.0 * mean(&full)
        );
        assert!(overview_bytes < first_bytes);
        // The camera moves to the far corner: the chunks there come in
        // full, the ones it left become tiles again.
        send(
            &mut ws,
            json!({"type": "camera", "position": [280.0, 0.0, 280.0], "view_distance": 40.0}),
        )
        .await;
        map_stream_into(&mut ws, &mut held).await;
        assert_eq!(held.len(), 400);
        check(&held, [280.0, 280.0], 40.0);
        // A far camera is capped at 6 chunks (96 units) of full detail.
        send(
            &mut ws,
            json!({"type": "camera", "position": [160.0, 0.0, 160.0], "view_distance": 4000.0}),
        )
        .await;
        map_stream_into(&mut ws, &mut held).await;
        check(&held, [160.0, 160.0], 96.0);
        // An edit under the camera: the touched chunks come again, in full
        // to this client and as tiles to the idle one.
        let (ack, _) = stroke(
            &mut ws,
            "s1",
            "raise",
            json!({}),
            [160.0, 0.0, 160.0],
            2,
            4.0,
        )
        .await;
        assert!(!ack["id"].is_null(), "the stroke changed the map");
        let before = held.clone();
        let bytes = map_stream_into(&mut ws, &mut held).await;
        assert!(bytes > 0, "the edited chunks are sent again");
        check(&held, [160.0, 160.0], 96.0);
        let changed: Vec<&[i32; 3]> = held.keys().filter(|c| before[*c] != held[*c]).collect();
        assert!(!changed.is_empty(), "an edited chunk changed");
        assert!(
            changed.iter().all(|c| held[*c].0 == 0),
            "in full under the camera"
        );
        let mut again = MapHeld::new();
        map_stream_into(&mut idle, &mut again).await;
        assert!(
            !again.is_empty() && again.len() < 400,
            "{} tiles sent again",
            again.len()
        );
        assert!(again.values().all(|h| h.0 == 1));
        assert!(
            again
                .keys()
                .all(|c| map_chunk_near(*c, [160.0, 160.0], 16.0))
        );
        server.shutdown().await;
    });
}
