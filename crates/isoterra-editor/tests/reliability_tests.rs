//! Reliability of the editor server: what another process does to the
//! world file, and what one slow client may cost the others.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use common::*;
use serde_json::json;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

const HOLD_ENV: &str = "ISOTERRA_TEST_HOLD_WORLD";

/// Run in a child process: opens the world named by the environment (as a
/// second editor, a bake or `isoterra info` would) and keeps it open until
/// its standard input closes.
#[test]
#[ignore = "worker process for the tests that need a second process on the file"]
fn hold_world_open_worker() {
    let Ok(path) = std::env::var(HOLD_ENV) else {
        return;
    };
    let file = isoterra::store::WorldFile::open(&path).expect("the worker opens the world");
    println!("holding");
    let mut rest = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut rest);
    drop(file);
}

/// A second process holding `path` open; it closes the file when dropped.
struct Holder(Child);

impl Holder {
    fn start(path: &Path) -> Holder {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                "hold_world_open_worker",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(HOLD_ENV, path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let holder = Holder(child);
        let held = BufReader::new(out)
            .lines()
            .map_while(Result::ok)
            .any(|l| l.contains("holding"));
        assert!(held, "the worker opened the world");
        holder
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        if self.0.wait().is_err() {
            let _ = self.0.kill();
        }
    }
}

fn strokes_in_file(path: &Path) -> u64 {
    let f = isoterra::store::WorldFile::open(path).unwrap();
    f.stroke_counts().unwrap().done
}

#[test]
fn new_world_while_another_process_holds_the_file_keeps_every_acknowledged_stroke() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Side2d);
        let server = start(&path).await;
        let mut ws = connect(server.addr()).await;
        until_json(&mut ws, "welcome").await;
        let (at, tool, params) = stroke_spot(Kind::Side2d);
        let (ack, _) = stroke(&mut ws, "s1", tool, params.clone(), at, 2, 4.0).await;
        assert!(!ack["id"].is_null(), "{ack}");

        let holder = Holder::start(&path);
        send(
            &mut ws,
            json!({"type": "new_world", "kind": "map", "seed": 2, "size": [32, 32]}),
        )
        .await;
        // The old world is still the open one, with its stroke; everyone is
        // welcomed to it again, then the request is refused.
        let (welcome, _) = until_json(&mut ws, "welcome").await;
        assert_eq!(welcome["kind"], "side2d");
        assert_eq!(welcome["history"]["strokes"], 1, "{welcome}");
        let (err, _) = until_json(&mut ws, "error").await;
        assert_eq!(err["code"], "busy", "{err}");
        assert!(
            err["message"].as_str().unwrap().contains("another program"),
            "{err}"
        );
        let at2 = [at[0] + 20.0, at[1], at[2]];
        let (ack, _) = stroke(&mut ws, "s2", tool, params, at2, 2, 4.0).await;
        assert!(!ack["id"].is_null(), "{ack}");
        server.shutdown().await;
        drop(holder);

        assert_eq!(strokes_in_file(&path), 2, "both acknowledged strokes");
        assert_eq!(isoterra::store::detect_kind(&path).unwrap(), "side2d");
        let mut backup = path.as_os_str().to_os_string();
        backup.push(".bak-1");
        assert!(!Path::new(&backup).exists(), "nothing was moved aside");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().starts_with(".isoterra-new-"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    });
}

#[test]
fn new_world_once_the_other_process_is_gone_switches_and_keeps_the_old_world_whole() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Side2d);
        let server = start(&path).await;
        let mut ws = connect(server.addr()).await;
        until_json(&mut ws, "welcome").await;
        let (at, tool, params) = stroke_spot(Kind::Side2d);
        let (ack, _) = stroke(&mut ws, "s1", tool, params, at, 2, 4.0).await;
        assert!(!ack["id"].is_null(), "{ack}");
        drop(Holder::start(&path));
        send(
            &mut ws,
            json!({"type": "new_world", "kind": "map", "seed": 2, "size": [32, 32]}),
        )
        .await;
        let (welcome, _) = until_json(&mut ws, "welcome").await;
        assert_eq!(welcome["kind"], "map");
        server.shutdown().await;
        assert_eq!(isoterra::store::detect_kind(&path).unwrap(), "map");
        let mut backup = path.as_os_str().to_os_string();
        backup.push(".bak-1");
        assert_eq!(
            strokes_in_file(Path::new(&backup)),
            1,
            "the old world, whole"
        );
    });
}

/// A client whose socket takes little before the server must wait on it,
/// so that a client that stops reading is noticed after a few kilobytes.
async fn connect_small(addr: std::net::SocketAddr) -> Ws {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let stream = socket.connect(addr).await.unwrap();
    let mut req = format!("ws://{addr}/ws").into_client_request().unwrap();
    req.headers_mut()
        .insert("Origin", format!("http://{addr}").parse().unwrap());
    let (ws, _) =
        tokio_tungstenite::client_async(req, tokio_tungstenite::MaybeTlsStream::Plain(stream))
            .await
            .unwrap();
    ws
}

/// Frames of `frames` per (layer, chunk).
fn per_chunk(frames: &[Vec<u8>]) -> std::collections::BTreeMap<(u8, [i32; 3]), usize> {
    let mut n = std::collections::BTreeMap::new();
    for f in frames {
        let h = isoterra_editor::parse_frame_header(f).unwrap();
        *n.entry((h.layer, h.chunk)).or_default() += 1;
    }
    n
}

#[test]
fn a_client_that_stops_reading_gets_only_the_newest_frame_of_each_chunk() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Side2d);
        let server = start(&path).await;
        let mut stalled = connect_small(server.addr()).await;
        let mut b = connect(server.addr()).await;
        until_json(&mut b, "welcome").await;
        let mut seen_by_b = drain(&mut b, std::time::Duration::from_millis(300)).await;
        // `stalled` reads nothing while `b` strokes the same spot again and
        // again, digging and filling so that every stroke changes the mesh.
        let (at, _, _) = stroke_spot(Kind::Side2d);
        for k in 0..200 {
            let tool = if k % 2 == 0 { "dig" } else { "fill" };
            let (ack, frames) = stroke(&mut b, &format!("s{k}"), tool, json!({}), at, 1, 6.0).await;
            assert!(!ack["id"].is_null(), "{ack}");
            seen_by_b.extend(frames);
        }
        seen_by_b.extend(drain(&mut b, std::time::Duration::from_millis(500)).await);
        let mut seen_by_stalled = Vec::new();
        loop {
            match next_within(&mut stalled, std::time::Duration::from_millis(500)).await {
                Some(Got::Frame(f)) => seen_by_stalled.push(f),
                Some(Got::Json(_)) => {}
                Some(Got::Closed(c)) => panic!("the stalled client was closed ({c:?})"),
                None => break,
            }
        }
        // Both end with the same meshes…
        let (last_b, last_stalled) = (latest(&seen_by_b), latest(&seen_by_stalled));
        assert!(!last_stalled.is_empty());
        for (k, f) in &last_stalled {
            assert!(
                last_b.get(k) == Some(f),
                "chunk {k:?}: the stalled client ends with the newest mesh"
            );
        }
        // …but the stalled client was not sent every stale version.
        let (nb, ns) = (per_chunk(&seen_by_b), per_chunk(&seen_by_stalled));
        let busiest = nb.iter().max_by_key(|(_, n)| **n).unwrap();
        assert!(*busiest.1 >= 200, "every stroke remeshed {busiest:?}");
        let stalled_n = ns.get(busiest.0).copied().unwrap_or(0);
        assert!(
            stalled_n * 4 < *busiest.1,
            "chunk {:?}: the stalled client got {stalled_n} of {} versions",
            busiest.0,
            busiest.1
        );
        server.shutdown().await;
    });
}

#[test]
fn a_client_that_falls_too_far_behind_is_closed_and_the_others_go_on() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Heightmap);
        let options = isoterra_editor::EditorOptions::new(&path)
            .with_port(0)
            .with_max_queued_bytes(2 << 20);
        let server = isoterra_editor::serve(options).await.unwrap();
        let mut stalled = connect_small(server.addr()).await;
        send(&mut stalled, camera([8.0, 10.0, 8.0], 40.0)).await;
        let mut b = connect(server.addr()).await;
        until_json(&mut b, "welcome").await;
        // `b` flies on: every new place streams chunks nobody had, which
        // the stalled client is sent too (one shared stream) and never takes.
        let mut closed = None;
        for k in 0..200 {
            let x = 8.0 + 400.0 * k as f32;
            send(&mut b, camera([x, 10.0, 8.0], 60.0)).await;
            drain(&mut b, std::time::Duration::from_millis(150)).await;
            if k % 10 == 9 {
                // Peek whether the server gave up on the stalled client.
                while let Some(got) =
                    next_within(&mut stalled, std::time::Duration::from_millis(20)).await
                {
                    if let Got::Closed(c) = got {
                        closed = Some(c);
                        break;
                    }
                }
                if closed.is_some() {
                    break;
                }
                // Reading a little let the socket take more; stall again.
            }
        }
        assert_eq!(closed, Some(Some(1008)), "the stalled client was closed");
        // The reading client still works.
        let (ack, _) = stroke(&mut b, "after", "raise", json!({}), [8.0, 0.0, 8.0], 1, 4.0).await;
        assert!(ack["type"] == "ack", "{ack}");
        server.shutdown().await;
    });
}

#[test]
fn the_limits_the_editor_advertises_are_the_engines() {
    rt().block_on(async {
        for kind in KINDS {
            let dir = tempfile::tempdir().unwrap();
            let path = create_world(dir.path(), kind);
            let server = start(&path).await;
            let mut ws = connect(server.addr()).await;
            let (welcome, _) = until_json(&mut ws, "welcome").await;
            let k: isoterra::kind::WorldKind = welcome["kind"].as_str().unwrap().parse().unwrap();
            let l = isoterra::kind::schema::Limits::of(k);
            let got = &welcome["limits"];
            assert_eq!(got["radius"], json!(l.radius), "{kind:?}");
            assert_eq!(got["dabs_per_stroke"], json!(l.dabs_per_stroke), "{kind:?}");
            assert_eq!(got["stroke_nodes"], json!(l.stroke_nodes), "{kind:?}");
            let engine = match k {
                isoterra::kind::WorldKind::Voxel => {
                    assert_eq!(
                        l.radius[1],
                        f64::from(isoterra::world::VoxelBrush::MAX_RADIUS)
                    );
                    Some(isoterra::store::MAX_VOXEL_STROKE_NODES as u64)
                }
                isoterra::kind::WorldKind::Heightmap => {
                    Some(isoterra::store::MAX_HEIGHT_STROKE_NODES as u64)
                }
                _ => None,
            };
            assert_eq!(l.stroke_nodes, engine, "{kind:?}");
            server.shutdown().await;
        }
    });
}

/// The raw response to `GET path` with exactly the given header lines.
async fn raw_get(addr: std::net::SocketAddr, path: &str, headers: &[(&str, &str)]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut req = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(WAIT, stream.read_to_end(&mut buf))
        .await
        .unwrap()
        .unwrap();
    String::from_utf8_lossy(&buf).into_owned()
}

fn status_of(response: &str) -> u16 {
    response.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn exports_from_other_sites_doubled_headers_and_foreign_scripts_are_refused() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Side2d);
        let server = start(&path).await;
        let addr = server.addr();
        let host = addr.to_string();
        let export = "/export?format=png";
        // A page elsewhere (even another port of this machine) cannot
        // trigger an export with a plain GET.
        for site in ["cross-site", "same-site"] {
            let r = raw_get(addr, export, &[("Host", &host), ("Sec-Fetch-Site", site)]).await;
            assert_eq!(status_of(&r), 403, "{site}");
            let r = raw_get(
                addr,
                "/api/info",
                &[("Host", &host), ("Sec-Fetch-Site", site)],
            )
            .await;
            assert_eq!(status_of(&r), 403, "{site}");
        }
        // The editor's own page, a typed URL, and tools that send no
        // Sec-Fetch-Site still export.
        for site in [Some("same-origin"), Some("none"), None] {
            let mut h = vec![("Host", host.as_str())];
            if let Some(s) = site {
                h.push(("Sec-Fetch-Site", s));
            }
            assert_eq!(status_of(&raw_get(addr, export, &h).await), 200, "{site:?}");
        }
        // Two Host headers, the second one this server's, are refused.
        let r = raw_get(addr, "/", &[("Host", "evil.example"), ("Host", &host)]).await;
        assert_eq!(status_of(&r), 400, "{r}");
        let r = raw_get(addr, "/", &[("Host", &host), ("Host", &host)]).await;
        assert_eq!(status_of(&r), 400, "{r}");
        // The page gets a Content-Security-Policy: its own scripts only,
        // and connections only to this server.
        let r = raw_get(addr, "/", &[("Host", &host)]).await;
        assert_eq!(status_of(&r), 200);
        let csp = r
            .lines()
            .find(|l| {
                l.to_ascii_lowercase()
                    .starts_with("content-security-policy:")
            })
            .unwrap_or_else(|| panic!("no Content-Security-Policy in\n{r}"));
        assert!(csp.contains("script-src 'self'"), "{csp}");
        assert!(
            csp.contains(&format!("connect-src 'self' ws://{host}")),
            "{csp}"
        );
        assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
        server.shutdown().await;
    });
}

#[test]
fn a_port_in_use_creates_no_world_file() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let path = dir.path().join("new.isoterra");
        let err =
            isoterra_editor::serve(isoterra_editor::EditorOptions::new(&path).with_port(port))
                .await
                .unwrap_err();
        assert!(matches!(err, isoterra_editor::EditorError::Io(_)), "{err}");
        assert!(!path.exists(), "a failed bind created {}", path.display());
    });
}

#[test]
fn after_another_program_writes_the_file_the_editor_reads_it_again_and_goes_on() {
    rt().block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), Kind::Side2d);
        let server = start(&path).await;
        let mut ws = connect(server.addr()).await;
        until_json(&mut ws, "welcome").await;
        let (at, tool, params) = stroke_spot(Kind::Side2d);
        let (ack, _) = stroke(&mut ws, "s1", tool, params.clone(), at, 2, 4.0).await;
        assert!(!ack["id"].is_null(), "{ack}");
        // Another program strokes the file.
        let other_id = {
            let mut other = isoterra::kind::Document::open(&path).unwrap();
            let spec = isoterra::kind::StrokeSpec::new("dig", 4.0);
            let done = other.stroke(&spec, &[[100.0, 16.0, 0.0]]).unwrap();
            other.close().unwrap();
            done.id.expect("the other stroke changed something")
        };
        // The editor notices within a tenth of a second, reads the world
        // again and welcomes every client to it, with its chunks.
        let limit = std::time::Duration::from_secs(20);
        let (welcome, _) = tokio::time::timeout(limit, until_json(&mut ws, "welcome"))
            .await
            .expect("the world was read again");
        assert_eq!(welcome["history"]["strokes"], 2, "{welcome}");
        let frames = drain(&mut ws, std::time::Duration::from_millis(300)).await;
        assert!(!frames.is_empty(), "the world's chunks are sent again");
        // Editing goes on, on top of the other's stroke.
        let at2 = [at[0] + 20.0, at[1], at[2]];
        let (ack, _) =
            tokio::time::timeout(limit, stroke(&mut ws, "s2", tool, params, at2, 2, 4.0))
                .await
                .expect("the next stroke is acknowledged");
        assert!(!ack["id"].is_null(), "{ack}");
        assert!(ack["id"].as_i64().unwrap() > other_id, "{ack}");
        let (ack, _) = stroke(&mut ws, "s3", "fill", json!({}), at2, 1, 3.0).await;
        assert!(!ack["id"].is_null(), "{ack}");
        server.shutdown().await;
        assert_eq!(
            strokes_in_file(&path),
            4,
            "every acknowledged stroke and the other's"
        );
    });
}
