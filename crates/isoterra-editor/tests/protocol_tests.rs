//! The editor protocol against a real server and real WebSocket clients,
//! for every world kind.

mod common;

use std::time::Duration;

use common::*;
use isoterra_editor::parse_frame_header;
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
            assert!(!frames.is_empty(), "{kind:?}: initial meshes");
            let mut vertices = 0;
            for f in &frames {
                let h = parse_frame_header(f).expect("header");
                assert_eq!(h.frame_len(), f.len());
                assert_eq!(h.flags, 0);
                if h.layer == 2 {
                    assert_eq!(h.indices % 2, 0);
                } else {
                    assert_eq!(h.indices % 3, 0);
                }
                // Indices stay inside the vertex range.
                let idx_at = 32 + 28 * h.vertices as usize;
                for k in 0..h.indices as usize {
                    let o = idx_at + 4 * k;
                    let i = u32::from_le_bytes([f[o], f[o + 1], f[o + 2], f[o + 3]]);
                    assert!(i < h.vertices);
                }
                vertices += h.vertices;
            }
            assert!(vertices > 0, "{kind:?}: some geometry");
            server.shutdown().await;
        }
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
            let file = isoterra_store::WorldFile::open(&path).unwrap();
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
        let doc = isoterra_store::Side2dDocument::open(&path).unwrap();
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
        assert_eq!(isoterra_store::detect_kind(&path).unwrap(), "heightmap");
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
                Kind::Side2d => isoterra_store::Side2dDocument::open(&path)
                    .unwrap()
                    .content_hash(),
                Kind::Heightmap => isoterra_store::HeightmapDocument::open(&path)
                    .unwrap()
                    .content_hash(),
                Kind::Voxel => isoterra_store::VoxelDocument::open(&path)
                    .unwrap()
                    .content_hash(),
                Kind::Map => isoterra_store::MapDocument::open(&path)
                    .unwrap()
                    .content_hash(),
            };
            assert_eq!(json!(reopened), memory["content_hash"], "{kind:?}");
        }
    });
}
