//! The PostgreSQL store under `kill -9`: a writer process committing
//! strokes is killed at random moments, and every stroke it acknowledged
//! (printed after `commit_stroke` returned) is in the database afterwards,
//! with its chunk; the world opens and the next writer goes on.
//!
//! Needs a server (`ISOTERRA_POSTGRES_URL`, see `pg_support`); the number
//! of kills is `ISOTERRA_KILL_ROUNDS` (default 8).
#![cfg(feature = "postgres")]

mod pg_support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use isoterra_store::{ChunkKey, ChunkStore, NewStroke, PgStore, WorldMeta};

const WORKER_URL_ENV: &str = "ISOTERRA_PG_WORKER_URL";

fn meta() -> WorldMeta {
    WorldMeta {
        kind: "test".into(),
        format_version: 1,
        seed: 3,
        params: serde_json::json!({}),
    }
}

/// The payload stroke `n` writes to chunk `(n, 0)`.
fn payload(n: u64) -> Vec<u8> {
    let mut p = n.to_le_bytes().to_vec();
    p.resize(96, (n % 251) as u8);
    p
}

/// The writer: commits strokes as fast as it can, each writing one chunk,
/// and prints `ack ID N` once a commit returned. Run only as a child of
/// the test below.
#[test]
#[ignore = "the worker process of acknowledged_postgres_strokes_survive_kill_9"]
fn postgres_durability_worker() {
    let Ok(url) = std::env::var(WORKER_URL_ENV) else {
        return;
    };
    let mut store = PgStore::open_existing(&url).unwrap();
    let mut n = store.stroke_counts().unwrap().total();
    let mut out = std::io::stdout().lock();
    loop {
        n += 1;
        let stroke = NewStroke {
            tool: "dig".into(),
            params: serde_json::json!({ "n": n }),
            delta: n.to_le_bytes().to_vec(),
        };
        let key = ChunkKey::field2(n as i32, 0);
        let id = store
            .commit_stroke(&stroke, &[(key, Some(payload(n)))])
            .unwrap();
        writeln!(out, "ack {id} {n}").unwrap();
        out.flush().unwrap();
    }
}

struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn acknowledged_postgres_strokes_survive_kill_9() {
    let Some(server) = pg_support::server("acknowledged_postgres_strokes_survive_kill_9") else {
        return;
    };
    let url = pg_support::world_url(&server, "kill");
    PgStore::open(&url)
        .unwrap()
        .create_world(&meta(), &[])
        .unwrap();
    let rounds: u32 = std::env::var("ISOTERRA_KILL_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(8);
    let mut acked: Vec<(i64, u64)> = Vec::new();
    for round in 0..rounds {
        let child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                "postgres_durability_worker",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(WORKER_URL_ENV, &url)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut child = KillOnDrop(child);
        let kill_after = 1 + (round as usize * 7) % 13;
        let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
        let mut seen = 0;
        for line in lines.by_ref() {
            let Ok(line) = line else { break };
            let mut parts = line.split_whitespace();
            if parts.next() == Some("ack") {
                let id: i64 = parts.next().unwrap().parse().unwrap();
                let n: u64 = parts.next().unwrap().parse().unwrap();
                acked.push((id, n));
                seen += 1;
                if seen == kill_after {
                    break;
                }
            }
        }
        assert_eq!(seen, kill_after, "round {round}: the worker stopped early");
        // Kill between acknowledgements too, not only right after one.
        std::thread::sleep(Duration::from_micros(u64::from(round) * 700 % 3_000));
        child.0.kill().unwrap(); // SIGKILL
        child.0.wait().unwrap();
        // What it printed before it died is acknowledged too.
        for line in lines.map_while(Result::ok) {
            let mut parts = line.split_whitespace();
            if parts.next() == Some("ack") {
                let id: i64 = parts.next().unwrap().parse().unwrap();
                let n: u64 = parts.next().unwrap().parse().unwrap();
                acked.push((id, n));
            }
        }
        let store = PgStore::open_existing(&url).unwrap();
        assert_eq!(store.meta().unwrap(), meta(), "round {round}");
        for &(id, n) in &acked {
            let s = store
                .stroke(id)
                .unwrap()
                .unwrap_or_else(|| panic!("round {round}: acknowledged stroke {id} is missing"));
            assert_eq!(
                s.delta,
                n.to_le_bytes().to_vec(),
                "round {round}: stroke {id}"
            );
            assert_eq!(
                store.chunk(&ChunkKey::field2(n as i32, 0)).unwrap(),
                Some(payload(n)),
                "round {round}: the chunk of stroke {id}"
            );
        }
        // A stroke past the last acknowledgement may be there or not; the
        // log and the chunks agree either way.
        let counts = store.stroke_counts().unwrap();
        assert_eq!(counts.done as usize, store.chunk_keys().unwrap().len());
    }
    assert!(acked.len() >= rounds as usize);
    eprintln!(
        "{rounds} kill -9 rounds, {} acknowledged strokes, all present",
        acked.len()
    );
    PgStore::open_existing(&url).unwrap().drop_world().unwrap();
}
