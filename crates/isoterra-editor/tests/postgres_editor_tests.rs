//! Several editor servers on one world kept on a PostgreSQL server: a
//! stroke acknowledged by one server reaches the clients of the other (the
//! server notifies it, and the other reads the world again and welcomes
//! them to it), undo and redo are
//! one shared history, a client that joins later sees the current world,
//! and every acknowledged stroke is in the database afterwards.
//!
//! Needs a server: `ISOTERRA_POSTGRES_URL` (a URL without `world=`, e.g.
//! from `.ci/start-postgres`). Without it the test skips loudly, unless
//! `ISOTERRA_REQUIRE_POSTGRES=1`.

mod common;
#[path = "../../isoterra-store/tests/pg_support/mod.rs"]
mod pg_support;

use std::time::Duration;

use common::*;
use isoterra::kind::{Document, NewWorld, WorldKind};
use isoterra::store::PgStore;
use isoterra_editor::{EditorOptions, serve};
use serde_json::json;

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// Reads until a `welcome` holding `strokes` strokes arrives (the server
/// read the world again after another server wrote).
async fn until_welcome(ws: &mut Ws, strokes: u64) -> serde_json::Value {
    let limit = Duration::from_secs(20);
    tokio::time::timeout(limit, async {
        loop {
            let (w, _) = until_json(ws, "welcome").await;
            if w["history"]["strokes"] == strokes {
                return w;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no welcome with {strokes} strokes within {limit:?}"))
}

#[test]
fn two_editor_servers_share_one_world_on_postgres() {
    let Some(server_url) = pg_support::server("two_editor_servers_share_one_world_on_postgres")
    else {
        return;
    };
    let url = pg_support::world_url(&server_url, "editors");
    let new = NewWorld::new(WorldKind::Map)
        .with_size([96, 96])
        .with_seed(3);
    Document::create_in(PgStore::open(&url).unwrap(), &new).unwrap();
    // The synchronous PostgreSQL client runs outside the async runtime.
    let shown = rt().block_on(async {
        let start = |url: &str| serve(EditorOptions::new(url).with_port(0));
        let a_server = start(&url).await.expect("server A starts");
        let b_server = start(&url).await.expect("server B starts");
        let mut a = connect(a_server.addr()).await;
        let mut b = connect(b_server.addr()).await;
        let (wa, _) = until_json(&mut a, "welcome").await;
        let (wb, _) = until_json(&mut b, "welcome").await;
        assert_eq!(wa["kind"], "map");
        assert_eq!(wa["history"]["strokes"], 0, "{wa}");
        assert_eq!(wb["history"]["strokes"], 0, "{wb}");
        drain(&mut b, Duration::from_millis(300)).await;

        // A stroke on A reaches B's client: B reads the world again and
        // welcomes it to the world with A's stroke, chunks and all.
        let (ack, _) = stroke(&mut a, "a1", "raise", json!({}), [40.0, 0.0, 40.0], 3, 6.0).await;
        let first = ack["id"].as_i64().expect("A acknowledged its stroke");
        until_welcome(&mut b, 1).await;
        let frames = drain(&mut b, Duration::from_millis(500)).await;
        assert!(
            !frames.is_empty(),
            "B's client gets the world with A's stroke"
        );

        // B strokes on top of it; A reads it.
        let (ack, _) = stroke(&mut b, "b1", "raise", json!({}), [60.0, 0.0, 30.0], 3, 5.0).await;
        let second = ack["id"].as_i64().expect("B acknowledged its stroke");
        assert!(second > first, "{ack}");
        until_welcome(&mut a, 2).await;

        // One history: B undoes the last stroke (its own); A sees it.
        send(&mut b, json!({"type": "undo"})).await;
        let (h, _) = until_json(&mut b, "history").await;
        assert_eq!(
            (&h["action"], &h["strokes"]),
            (&json!("undo"), &json!(1)),
            "{h}"
        );
        until_welcome(&mut a, 1).await;
        send(&mut a, json!({"type": "redo"})).await;
        let (h, _) = until_json(&mut a, "history").await;
        assert_eq!(
            (&h["action"], &h["strokes"]),
            (&json!("redo"), &json!(2)),
            "{h}"
        );
        until_welcome(&mut b, 2).await;

        // A client joining B later sees the current world.
        let mut c = connect(b_server.addr()).await;
        let (wc, _) = until_json(&mut c, "welcome").await;
        assert_eq!(wc["history"]["strokes"], 2, "{wc}");

        // New world is a files-only dialog.
        send(
            &mut c,
            json!({"type": "new_world", "kind": "map", "seed": 4}),
        )
        .await;
        let (err, _) = until_json(&mut c, "error").await;
        assert!(
            err["message"]
                .as_str()
                .unwrap()
                .contains("isoterra new URL"),
            "{err}"
        );

        // The servers agree on the world, and so does the database.
        let hash = |addr| async move {
            info(addr).await["content_hash"]
                .as_str()
                .unwrap()
                .to_string()
        };
        let (ha, hb) = (hash(a_server.addr()).await, hash(b_server.addr()).await);
        assert_eq!(ha, hb, "both servers show one world");
        // The other's writes were heard through LISTEN/NOTIFY: the revision
        // check runs only once a second on a server world.
        for addr in [a_server.addr(), b_server.addr()] {
            let others = &info(addr).await["others"];
            assert_eq!(others["check_ms"], 1000, "{others}");
            assert!(
                others["notified"].as_u64().unwrap() >= 1,
                "a notification started a read of the world: {others}"
            );
        }
        a_server.shutdown().await;
        b_server.shutdown().await;
        ha
    });
    let doc = Document::open_in(PgStore::open_existing(&url).unwrap()).unwrap();
    assert_eq!(doc.history().strokes, 2);
    assert_eq!(
        doc.content_hash(),
        shown,
        "every acknowledged stroke is stored"
    );
    doc.into_store().drop_world().unwrap();
}

/// One client of the load test: `strokes` strokes of random map tools at
/// random spots, each ended and waited for. Returns the acknowledged ids,
/// the stroke-to-ack latencies and how many strokes were refused.
async fn load_client(
    addr: std::net::SocketAddr,
    index: usize,
    strokes: usize,
) -> (Vec<i64>, Vec<Duration>, usize) {
    let mut ws = connect(addr).await;
    until_json(&mut ws, "welcome").await;
    let mut seed = 0x9e37_79b9_u64 ^ (index as u64 * 7919);
    let mut next = move || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) as f32 / (1u64 << 31) as f32
    };
    let (mut ids, mut latencies, mut refused) = (Vec::new(), Vec::new(), 0);
    for s in 0..strokes {
        let tools = ["raise", "lower", "smooth", "paint"];
        let tool = tools[(next() * 4.0) as usize % 4];
        let id = format!("c{index}-{s}");
        send(
            &mut ws,
            json!({"type": "stroke_begin", "stroke": id, "tool": tool,
                   "radius": 1.5 + 3.5 * next(), "strength": 0.2 + 0.8 * next(),
                   "params": {"texture": (next() * 16.0) as u32 % 16}}),
        )
        .await;
        let (x, z) = (8.0 + 80.0 * next(), 8.0 + 80.0 * next());
        send(
            &mut ws,
            json!({"type": "dab", "stroke": id, "at": [x, 0.0, z]}),
        )
        .await;
        let sent = std::time::Instant::now();
        send(&mut ws, json!({"type": "stroke_end", "stroke": id})).await;
        loop {
            match next_within(&mut ws, WAIT).await {
                Some(Got::Json(v)) if v["type"] == "ack" && v["stroke"] == id.as_str() => {
                    latencies.push(sent.elapsed());
                    ids.extend(v["id"].as_i64());
                    break;
                }
                Some(Got::Json(v)) if v["type"] == "error" && v["stroke"] == id.as_str() => {
                    refused += 1;
                    break;
                }
                Some(Got::Closed(c)) => panic!("client {index}: closed {c:?}"),
                None => panic!("client {index}: no answer for {id}"),
                _ => {}
            }
        }
    }
    (ids, latencies, refused)
}

/// Two editor servers on one world, eight clients on each, every client
/// stroking as fast as its acks come back. A server reads the world again
/// whenever the other wrote (dropping its clients' open strokes), and a
/// stroke that ends just after the other server committed is refused
/// (never acknowledged). Every acknowledged stroke is in the
/// database, both servers end with the world the database holds, and that
/// world equals the stroke log replayed one stroke at a time into a fresh
/// world. The stroke-to-ack
/// latencies are printed (`--nocapture`); `ISOTERRA_EDITOR_LOAD_STROKES`
/// sets the strokes per client (default 200),
/// `ISOTERRA_EDITOR_LOAD_CLIENTS` the clients per server (default 8) and
/// `ISOTERRA_EDITOR_LOAD_SERVERS` the servers (default 2; 1 measures one
/// server on PostgreSQL next to one on a file).
#[test]
fn two_servers_under_load_equal_a_serial_replay_on_postgres() {
    let Some(server_url) =
        pg_support::server("two_servers_under_load_equal_a_serial_replay_on_postgres")
    else {
        return;
    };
    let strokes: usize = std::env::var("ISOTERRA_EDITOR_LOAD_STROKES")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or(200);
    let per_server: usize = std::env::var("ISOTERRA_EDITOR_LOAD_CLIENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &usize| (1..=64).contains(&n))
        .unwrap_or(8);
    let servers: usize = std::env::var("ISOTERRA_EDITOR_LOAD_SERVERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &usize| (1..=4).contains(&n))
        .unwrap_or(2);
    let url = pg_support::world_url(&server_url, "load");
    let new = NewWorld::new(WorldKind::Map)
        .with_size([96, 96])
        .with_seed(3);
    Document::create_in(PgStore::open(&url).unwrap(), &new).unwrap();
    let (acked, hashes) = rt().block_on(async {
        let mut running = Vec::new();
        for _ in 0..servers {
            running.push(serve(EditorOptions::new(&url).with_port(0)).await.unwrap());
        }
        let started = std::time::Instant::now();
        let tasks: Vec<_> = (0..servers * per_server)
            .map(|i| {
                let addr = running[i % servers].addr();
                tokio::spawn(load_client(addr, i, strokes))
            })
            .collect();
        let (mut ids, mut latencies, mut refused) = (Vec::new(), Vec::new(), 0);
        for t in tasks {
            let (i, l, r) = t.await.expect("client task");
            ids.extend(i);
            latencies.extend(l);
            refused += r;
        }
        let elapsed = started.elapsed();
        // The servers catch up with each other's last strokes.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let mut hashes = Vec::new();
        for r in &running {
            hashes.push(info(r.addr()).await["content_hash"].clone());
        }
        for r in running {
            r.shutdown().await;
        }
        latencies.sort();
        let pct = |p: f64| {
            let i = ((latencies.len() as f64 - 1.0) * p).round() as usize;
            latencies[i].as_secs_f64() * 1e3
        };
        println!(
            "postgres load: {servers} server(s) x {per_server} clients x {strokes} strokes in {:.2} s; \
             stroke->ack p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; {} acknowledged, {refused} refused",
            elapsed.as_secs_f64(),
            pct(0.5),
            pct(0.99),
            pct(1.0),
            ids.len()
        );
        (ids, hashes)
    });
    let rows_hash = Document::open_in(PgStore::open_existing(&url).unwrap())
        .unwrap()
        .content_hash();
    assert!(
        hashes.iter().all(|h| *h == hashes[0]),
        "every server shows one world: {hashes:?}"
    );
    assert_eq!(
        hashes[0],
        serde_json::Value::String(rows_hash),
        "the database holds the world the servers show"
    );
    let store = PgStore::open_existing(&url).unwrap();
    for id in &acked {
        let rec = isoterra::store::ChunkStore::stroke(&store, *id)
            .unwrap()
            .expect("every acknowledged stroke is in the log");
        assert!(!rec.undone);
    }
    let counts = isoterra::store::ChunkStore::stroke_counts(&store).unwrap();
    assert_eq!(counts.done as usize, acked.len());
    // The log replayed one stroke at a time gives the world the servers show.
    let params = match Document::open_in(PgStore::open_existing(&url).unwrap())
        .unwrap()
        .typed()
    {
        isoterra::kind::AnyDocument::Map(d) => *d.params(),
        _ => unreachable!("a map world"),
    };
    let mut fresh =
        isoterra::store::MapDocument::create_in(isoterra::store::MemoryStore::new(), &params)
            .unwrap();
    let mut ids = acked.clone();
    ids.sort();
    for id in ids {
        let rec = isoterra::store::ChunkStore::stroke(&store, id)
            .unwrap()
            .unwrap();
        let stroke: isoterra::world::MapStroke = serde_json::from_value(rec.params).unwrap();
        assert!(fresh.stroke(&stroke).unwrap().id.is_some());
    }
    assert_eq!(
        serde_json::Value::String(fresh.content_hash()),
        hashes[0],
        "a serial replay of the log"
    );
    drop(store);
    PgStore::open_existing(&url).unwrap().drop_world().unwrap();
}
