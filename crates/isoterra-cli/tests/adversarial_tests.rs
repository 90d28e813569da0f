//! The editor under hostile clients, run as a user runs it: the real
//! `isoterra edit` process on a loopback port. Each case bounds its own
//! traffic and time, and asserts two things: the server's peak memory
//! (`VmHWM` from `/proc`) stays under the bound stated in RELIABILITY.md,
//! and every stroke the server acknowledged is in the file afterwards.
//!
//! - a client that stops reading while another strokes (the stalled tab);
//! - a client that floods camera messages without reading;
//! - the largest voxel stroke the limits allow (radius 64, dabs far apart);
//! - a client that disconnects in the middle of a stroke;
//! - a server on a PostgreSQL world killed with `kill -9` while a client
//!   strokes (needs a server, see the test).
//!
//! "New world" while another process holds the file is covered in the
//! editor crate's `reliability_tests.rs`.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::client::IntoClientRequest;
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

mod common;
#[path = "../../isoterra-store/tests/pg_support/mod.rs"]
mod pg_support;
use common::*;

type Ws = WebSocket<MaybeTlsStream<TcpStream>>;

/// Longest wait for any one reply.
const WAIT: Duration = Duration::from_secs(60);

/// A running `isoterra edit`; killed on drop.
struct Editor {
    child: Child,
    addr: String,
}

impl Editor {
    fn start(file: &Path) -> Editor {
        let mut child = bin()
            .args(["edit", s(file), "--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("isoterra edit starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let line = rx
            .recv_timeout(WAIT)
            .expect("the editor says where it listens");
        let url = line
            .strip_prefix("isoterra editor on http://")
            .unwrap_or_else(|| panic!("unexpected first line: {line}"));
        Editor {
            child,
            addr: url.trim_end_matches('/').to_string(),
        }
    }

    /// Peak resident memory of the server process so far, MiB.
    fn peak_mib(&self) -> f64 {
        status_kib(self.child.id(), "VmHWM") / 1024.0
    }

    /// Resident memory now, MiB.
    fn rss_mib(&self) -> f64 {
        status_kib(self.child.id(), "VmRSS") / 1024.0
    }

    fn connect(&self) -> Ws {
        let mut req = format!("ws://{}/ws", self.addr)
            .into_client_request()
            .unwrap();
        req.headers_mut()
            .insert("Origin", format!("http://{}", self.addr).parse().unwrap());
        let (mut ws, _) = tungstenite::connect(req).expect("connects");
        if let MaybeTlsStream::Plain(s) = ws.get_mut() {
            s.set_read_timeout(Some(WAIT)).unwrap();
        }
        ws
    }

    /// Stops the server the way a user does (it may be killed: every
    /// acknowledged stroke is on disk either way).
    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `/proc/PID/status` field in KiB.
fn status_kib(pid: u32, field: &str) -> f64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::Text(v.to_string().into())).expect("send");
}

/// Reads until a text message of type `ty` (binary frames skipped).
fn until(ws: &mut Ws, ty: &str) -> Value {
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        match ws.read().expect("read") {
            Message::Text(t) => {
                let v: Value = serde_json::from_str(&t).unwrap();
                if v["type"] == ty {
                    return v;
                }
                assert_ne!(v["type"], "error", "server error: {v}");
            }
            Message::Close(c) => panic!("closed while waiting for {ty}: {c:?}"),
            _ => {}
        }
    }
    panic!("no {ty} within {WAIT:?}");
}

/// Draws one stroke of `dabs` and returns its `ack`.
fn stroke(ws: &mut Ws, id: &str, tool: &str, radius: f64, dabs: &[[f64; 3]]) -> Value {
    send(
        ws,
        json!({"type": "stroke_begin", "stroke": id, "tool": tool, "radius": radius,
               "strength": 1.0, "params": {}}),
    );
    for at in dabs {
        send(ws, json!({"type": "dab", "stroke": id, "at": at}));
    }
    send(ws, json!({"type": "stroke_end", "stroke": id}));
    loop {
        let v = until(ws, "ack");
        if v["stroke"] == id {
            return v;
        }
    }
}

/// Strokes recorded in the file (done and undone).
fn strokes_in(file: &Path) -> u64 {
    let info: Value = serde_json::from_str(&ok(&["info", s(file), "--json"])).unwrap();
    info["strokes_total"].as_u64().unwrap()
}

/// The memory bounds, MiB, above the server's resident memory once it has
/// sent its first meshes. RELIABILITY.md states them.
const STALLED_READER_MIB: f64 = 256.0;
const FLOOD_MIB: f64 = 128.0;
const GIANT_STROKE_MIB: f64 = 768.0;

#[test]
fn a_stalled_reader_does_not_grow_the_server_and_loses_no_stroke() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.isoterra");
    ok(&["new", s(&file), "--kind", "map", "--size", "256x256"]);
    let editor = Editor::start(&file);
    let mut stalled = editor.connect();
    send(&mut stalled, json!({"type": "hello", "client": "stalled"}));
    let mut writer = editor.connect();
    until(&mut writer, "welcome");
    std::thread::sleep(Duration::from_millis(500));
    let base = editor.rss_mib();
    // The stalled tab never reads again; the other raises 200 cliffs all
    // over the map, each remeshing and sending chunks to both.
    let mut acked = 0;
    for k in 0..200u32 {
        let at = [
            f64::from(16 + (k * 37) % 224),
            0.0,
            f64::from(16 + (k * 91) % 224),
        ];
        let ack = stroke(&mut writer, &format!("s{k}"), "cliff-up", 12.0, &[at]);
        if !ack["id"].is_null() {
            acked += 1;
        }
    }
    let grown = editor.peak_mib() - base;
    eprintln!(
        "stalled reader: {acked} strokes acknowledged, peak {grown:.0} MiB above {base:.0} MiB"
    );
    assert!(acked > 100, "only {acked} strokes changed the map");
    assert!(
        grown < STALLED_READER_MIB,
        "the server grew {grown:.0} MiB with a stalled reader (bound {STALLED_READER_MIB})"
    );
    drop(stalled);
    editor.stop();
    assert_eq!(
        strokes_in(&file),
        acked,
        "an acknowledged stroke is missing"
    );
}

#[test]
fn a_flood_of_messages_is_bounded_and_others_are_still_served() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("h.isoterra");
    ok(&["new", s(&file), "--kind", "heightmap", "--chunk", "32"]);
    let editor = Editor::start(&file);
    let mut other = editor.connect();
    until(&mut other, "welcome");
    std::thread::sleep(Duration::from_millis(500));
    let base = editor.rss_mib();
    // 20,000 camera moves as fast as the socket takes them, never reading:
    // each asks for a new set of streamed chunks.
    let mut flood = editor.connect();
    for k in 0..20_000u32 {
        let x = f64::from(k % 400) * 16.0;
        let msg = json!({"type": "camera", "position": [x, 60.0, x * 0.5],
                         "forward": [1.0, -0.2, 0.0], "view_distance": 400});
        if flood.send(Message::Text(msg.to_string().into())).is_err() {
            break; // the server closed a client that fell too far behind
        }
    }
    // The other client is still served: its stroke is acknowledged.
    let ack = stroke(&mut other, "after", "raise", 8.0, &[[0.0, 0.0, 0.0]]);
    assert!(!ack["id"].is_null(), "{ack}");
    let grown = editor.peak_mib() - base;
    eprintln!("flood: peak {grown:.0} MiB above {base:.0} MiB");
    assert!(
        grown < FLOOD_MIB,
        "the flood grew the server {grown:.0} MiB (bound {FLOOD_MIB})"
    );
    drop(flood);
    editor.stop();
    assert_eq!(strokes_in(&file), 1);
}

#[test]
fn the_largest_voxel_stroke_stays_within_its_memory_bound() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("v.isoterra");
    ok(&["new", s(&file), "--kind", "voxel"]);
    let editor = Editor::start(&file);
    let mut ws = editor.connect();
    until(&mut ws, "welcome");
    std::thread::sleep(Duration::from_millis(500));
    let base = editor.rss_mib();
    // Radius 64, the engine's largest, and 60 dabs 8 units apart: once this
    // held a copy of the touched nodes per dab (7 GB at the stroke's end).
    let dabs: Vec<[f64; 3]> = (0..60).map(|k| [f64::from(k) * 8.0, 0.0, 0.0]).collect();
    let ack = stroke(&mut ws, "giant", "dig", 64.0, &dabs);
    assert!(!ack["id"].is_null(), "{ack}");
    let grown = editor.peak_mib() - base;
    eprintln!("giant stroke: peak {grown:.0} MiB above {base:.0} MiB");
    assert!(
        grown < GIANT_STROKE_MIB,
        "the stroke took {grown:.0} MiB (bound {GIANT_STROKE_MIB})"
    );
    // Undo works on it, and both are on disk.
    send(&mut ws, json!({"type": "undo"}));
    until(&mut ws, "history");
    editor.stop();
    assert_eq!(strokes_in(&file), 1);
    let info: Value = serde_json::from_str(&ok(&["info", s(&file), "--json"])).unwrap();
    assert_eq!(info["undo_position"], 0, "{info}");
}

#[test]
fn a_client_gone_in_the_middle_of_a_stroke_leaves_it_committed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.isoterra");
    ok(&["new", s(&file), "--kind", "side2d", "--size", "256x128"]);
    let editor = Editor::start(&file);
    let mut ws = editor.connect();
    until(&mut ws, "welcome");
    send(
        &mut ws,
        json!({"type": "stroke_begin", "stroke": "cut", "tool": "dig", "radius": 6,
               "strength": 1.0, "params": {}}),
    );
    for k in 0..50 {
        send(
            &mut ws,
            json!({"type": "dab", "stroke": "cut", "at": [20.0 + f64::from(k) * 4.0, 64.0, 0.0]}),
        );
    }
    // A message the server answers with an error, read back so that the
    // dabs are known to have reached the server: a socket dropped with
    // unread data resets, and what was still in flight (never
    // acknowledged) may be lost.
    send(&mut ws, json!({"type": "sync-probe", "req": "sync"}));
    let deadline = Instant::now() + WAIT;
    loop {
        assert!(Instant::now() < deadline, "no answer to the probe");
        if let Message::Text(t) = ws.read().expect("read") {
            let v: Value = serde_json::from_str(&t).unwrap();
            if v["type"] == "error" && v["req"] == "sync" {
                break;
            }
        }
    }
    // Gone in the middle of the stroke, without a close frame: the socket
    // just drops.
    drop(ws);
    // Another client sees the stroke in the history once the server has
    // noticed, and the file holds it.
    let mut other = editor.connect();
    let deadline = Instant::now() + WAIT;
    loop {
        send(&mut other, json!({"type": "hello", "client": "probe"}));
        let welcome = until(&mut other, "welcome");
        if welcome["history"]["strokes"] == 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the cut stroke was never committed"
        );
        std::thread::sleep(Duration::from_millis(100));
        other = editor.connect();
    }
    editor.stop();
    assert_eq!(strokes_in(&file), 1);
}

/// Strokes the server acknowledged until the connection broke.
fn stroke_until_gone(ws: &mut Ws, round: u32) -> Vec<i64> {
    let mut acked = Vec::new();
    for k in 0u32.. {
        let id = format!("r{round}s{k}");
        let at = [
            f64::from(8 + (k * 37) % 80),
            0.0,
            f64::from(8 + (k * 53) % 80),
        ];
        let msgs = [
            json!({"type": "stroke_begin", "stroke": id, "tool": "raise", "radius": 5.0,
                   "strength": 1.0, "params": {}}),
            json!({"type": "dab", "stroke": id, "at": at}),
            json!({"type": "stroke_end", "stroke": id}),
        ];
        for m in msgs {
            if ws.send(Message::Text(m.to_string().into())).is_err() {
                return acked;
            }
        }
        loop {
            match ws.read() {
                Ok(Message::Text(t)) => {
                    let v: Value = serde_json::from_str(&t).unwrap();
                    if v["type"] == "ack" && v["stroke"] == id.as_str() {
                        if let Some(n) = v["id"].as_i64() {
                            acked.push(n);
                        }
                        break;
                    }
                }
                Ok(Message::Close(_)) | Err(_) => return acked,
                Ok(_) => {}
            }
        }
    }
    acked
}

/// `isoterra edit` on a world on a PostgreSQL server, killed with `kill -9`
/// while a client strokes as fast as it is acknowledged: every stroke it
/// acknowledged is in the database, and the next server opens the world and
/// goes on. Needs `ISOTERRA_POSTGRES_URL` (skips loudly without it, unless
/// `ISOTERRA_REQUIRE_POSTGRES=1`); rounds: `ISOTERRA_KILL_ROUNDS` (default 4).
#[test]
fn an_editor_server_killed_on_postgres_loses_no_acknowledged_stroke() {
    let Some(server) =
        pg_support::server("an_editor_server_killed_on_postgres_loses_no_acknowledged_stroke")
    else {
        return;
    };
    let rounds: u32 = std::env::var("ISOTERRA_KILL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let url = pg_support::world_url(&server, "editor-kill");
    ok(&["new", &url, "--kind", "map", "--size", "96x96"]);
    let mut all_acked = Vec::new();
    for round in 0..rounds {
        let editor = Editor::start(Path::new(&url));
        let mut ws = editor.connect();
        let welcome = until(&mut ws, "welcome");
        assert_eq!(
            welcome["history"]["strokes"].as_u64().unwrap(),
            all_acked.len() as u64,
            "round {round}: the world opens with every stroke acknowledged before"
        );
        let pid = editor.child.id();
        let delay = Duration::from_millis(300 + 170 * u64::from(round));
        let killer = std::thread::spawn(move || {
            std::thread::sleep(delay);
            let status = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status()
                .expect("kill runs");
            assert!(status.success());
        });
        let acked = stroke_until_gone(&mut ws, round);
        killer.join().unwrap();
        editor.stop();
        assert!(
            !acked.is_empty(),
            "round {round}: some strokes were acknowledged"
        );
        all_acked.extend(acked);
        let info: Value = serde_json::from_str(&ok(&["info", &url, "--json"])).unwrap();
        let total = info["strokes_total"].as_i64().unwrap();
        // Ids count up from 1 and nothing is undone: every acknowledged id
        // at most the total is a stroke in the log.
        let max = *all_acked.iter().max().unwrap();
        assert!(
            max <= total && all_acked.len() as i64 <= total,
            "round {round}: {} acknowledged (up to id {max}), {total} in the database",
            all_acked.len()
        );
        eprintln!(
            "editor kill -9 round {round}: {} strokes acknowledged so far, {total} stored",
            all_acked.len()
        );
        // A stroke still in flight at the kill may have been committed
        // without its ack reaching the client: count the stored ones from
        // here on.
        all_acked = (1..=total).collect();
    }
}
