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
