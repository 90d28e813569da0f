//! Load: several clients stroke one world at once over loopback. Every
//! acknowledged stroke must be in the file, and replaying the file's stroke
//! log one stroke at a time into a fresh world must give the same world.
//!
//! The default size is 8 clients x 500 strokes per kind; set
//! `ISOTERRA_EDITOR_LOAD_STROKES=N` for another count. The
//! stroke-to-ack latency percentiles are printed (run with `--nocapture`).

mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

const CLIENTS: usize = 8;

fn strokes_per_client() -> usize {
    std::env::var("ISOTERRA_EDITOR_LOAD_STROKES")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or(500)
}

/// A small deterministic generator.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * (self.next() % 10_000) as f32 / 10_000.0
    }
}

/// One client's run: its acks (stroke id in the log, or null) and latencies.
async fn client(
    addr: std::net::SocketAddr,
    kind: Kind,
    index: usize,
    strokes: usize,
) -> (Vec<Option<i64>>, Vec<Duration>) {
    let mut ws = connect(addr).await;
    until_json(&mut ws, "welcome").await;
    let mut rng = Lcg(0x9e37_79b9 ^ (index as u64 * 7919));
    let mut ids = Vec::with_capacity(strokes);
    let mut latencies = Vec::with_capacity(strokes);
    for s in 0..strokes {
        let (tool, params, y) = match kind {
            Kind::Side2d => {
                if rng.next().is_multiple_of(2) {
                    ("dig", json!({}), rng.range(8.0, 56.0))
                } else {
                    (
                        "fill",
                        json!({"material": rng.next() % 3}),
                        rng.range(8.0, 56.0),
                    )
                }
            }
            Kind::Map => {
                let tools = ["raise", "lower", "smooth", "paint", "ramp"];
                let t = tools[(rng.next() % tools.len() as u64) as usize];
                (t, json!({"texture": rng.next() % 16}), 0.0)
            }
            _ => unreachable!("the load test covers the bounded kinds"),
        };
        let id = format!("c{index}-{s}");
        let radius = rng.range(1.5, 5.0);
        send(
            &mut ws,
            json!({"type": "stroke_begin", "stroke": id, "tool": tool, "radius": radius,
                   "strength": rng.range(0.2, 1.0), "params": params}),
        )
        .await;
        let dabs = 1 + rng.next() % 3;
        let (x0, z0) = (rng.range(8.0, 88.0), rng.range(8.0, 88.0));
        for k in 0..dabs {
            let at = match kind {
                Kind::Side2d => [x0 + k as f32, y, 0.0],
                _ => [x0 + k as f32, 0.0, z0],
            };
            send(&mut ws, json!({"type": "dab", "stroke": id, "at": at})).await;
        }
        let sent = Instant::now();
        send(&mut ws, json!({"type": "stroke_end", "stroke": id})).await;
        loop {
            match next_within(&mut ws, WAIT).await {
                Some(Got::Json(v)) if v["type"] == "ack" && v["stroke"] == id.as_str() => {
                    latencies.push(sent.elapsed());
                    ids.push(v["id"].as_i64());
                    break;
                }
                Some(Got::Json(v)) if v["type"] == "error" => panic!("client {index}: {v}"),
                Some(Got::Closed(c)) => panic!("client {index}: closed {c:?}"),
                None => panic!("client {index}: no ack for {id}"),
                _ => {}
            }
        }
    }
    (ids, latencies)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Replays the log of `path` into a fresh world of the same parameters at
/// `fresh`; returns its content hash.
fn replay(kind: Kind, path: &std::path::Path, fresh_dir: &std::path::Path) -> (String, usize) {
    let file = isoterra::store::WorldFile::open(path).unwrap();
    let fresh = create_world(fresh_dir, kind);
    let mut replayed = 0;
    let mut id = 1;
    let total = file.stroke_counts().unwrap().total();
    let mut seen = 0;
    let hash = match kind {
        Kind::Side2d => {
            let mut doc = isoterra::store::Side2dDocument::open(&fresh).unwrap();
            while seen < total {
                if let Some(rec) = file.stroke(id).unwrap() {
                    seen += 1;
                    assert!(!rec.undone);
                    let stamps: Vec<isoterra::world::Side2dBrush> =
                        serde_json::from_value(rec.params.clone()).unwrap();
                    assert!(doc.stroke_stamps(&stamps).unwrap().id.is_some());
                    replayed += 1;
                }
                id += 1;
            }
            doc.content_hash()
        }
        Kind::Map => {
            let mut doc = isoterra::store::MapDocument::open(&fresh).unwrap();
            while seen < total {
                if let Some(rec) = file.stroke(id).unwrap() {
                    seen += 1;
                    assert!(!rec.undone);
                    let stroke: isoterra::world::MapStroke =
                        serde_json::from_value(rec.params.clone()).unwrap();
                    assert!(doc.stroke(&stroke).unwrap().id.is_some());
                    replayed += 1;
                }
                id += 1;
            }
            doc.content_hash()
        }
        _ => unreachable!(),
    };
    (hash, replayed)
}

fn load(kind: Kind) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let strokes = strokes_per_client();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let path = create_world(dir.path(), kind);
        let server = start(&path).await;
        let addr = server.addr();
        let started = Instant::now();
        let tasks: Vec<_> = (0..CLIENTS)
            .map(|i| tokio::spawn(client(addr, kind, i, strokes)))
            .collect();
        let mut ids = Vec::new();
        let mut latencies = Vec::new();
        for t in tasks {
            let (i, l) = t.await.expect("client task");
            ids.extend(i);
            latencies.extend(l);
        }
        let elapsed = started.elapsed();
        assert_eq!(ids.len(), CLIENTS * strokes);
        let server_hash: Value = info(addr).await["content_hash"].clone();
        server.shutdown().await;

        // Nothing lost: every acknowledged stroke is in the log, in effect.
        let recorded: Vec<i64> = ids.iter().flatten().copied().collect();
        let file = isoterra::store::WorldFile::open(&path).unwrap();
        for id in &recorded {
            let rec = file.stroke(*id).unwrap().expect("acked stroke in the log");
            assert!(!rec.undone);
        }
        let counts = file.stroke_counts().unwrap();
        assert_eq!(counts.total(), recorded.len() as u64);
        drop(file);

        // The field equals a serial replay of the log.
        let fresh = tempfile::tempdir().unwrap();
        let (replayed_hash, replayed) = replay(kind, &path, fresh.path());
        assert_eq!(replayed, recorded.len());
        assert_eq!(Value::String(replayed_hash.clone()), server_hash, "{kind:?}");
        let reopened = match kind {
            Kind::Side2d => isoterra::store::Side2dDocument::open(&path).unwrap().content_hash(),
            _ => isoterra::store::MapDocument::open(&path).unwrap().content_hash(),
        };
        assert_eq!(reopened, replayed_hash);

        latencies.sort();
        println!(
            "load {kind:?}: {CLIENTS} clients x {strokes} strokes in {:.2} s; stroke->ack p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; {} strokes recorded",
            elapsed.as_secs_f64(),
            percentile(&latencies, 0.5).as_secs_f64() * 1e3,
            percentile(&latencies, 0.99).as_secs_f64() * 1e3,
            latencies.last().map_or(0.0, |d| d.as_secs_f64() * 1e3),
            recorded.len()
        );
    });
}

#[test]
fn concurrent_side2d_strokes_equal_a_serial_replay() {
    load(Kind::Side2d);
}

#[test]
fn concurrent_map_strokes_equal_a_serial_replay() {
    load(Kind::Map);
}
