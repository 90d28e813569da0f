//! Several editor servers on one world kept on a PostgreSQL server: a
//! stroke acknowledged by one server reaches the clients of the other (its
//! history and the chunks it changed), undo and redo are one shared
//! history, a client that joins later sees the current world, and every
//! acknowledged stroke is in the database afterwards.
//!
//! Needs a server: `ISOTERRA_POSTGRES_URL` (a URL without `world=`, e.g.
//! from `.ci/start-postgres`). Without it the test skips loudly, unless
//! `ISOTERRA_REQUIRE_POSTGRES=1`.

mod common;

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

fn server(test: &str) -> Option<String> {
    match std::env::var("ISOTERRA_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("ISOTERRA_REQUIRE_POSTGRES").as_deref() != Ok("1"),
                "{test}: ISOTERRA_REQUIRE_POSTGRES=1 but ISOTERRA_POSTGRES_URL is not set"
            );
            eprintln!("\n*** SKIPPED {test}: no PostgreSQL server (ISOTERRA_POSTGRES_URL) ***\n");
            None
        }
    }
}

/// Reads until a `history` message of `action` arrives.
async fn until_history(ws: &mut Ws, action: &str) -> serde_json::Value {
    let limit = Duration::from_secs(20);
    tokio::time::timeout(limit, async {
        loop {
            let (h, _) = until_json(ws, "history").await;
            if h["action"] == action {
                return h;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no `{action}` history within {limit:?}"))
}

#[test]
fn two_editor_servers_share_one_world_on_postgres() {
    let Some(server_url) = server("two_editor_servers_share_one_world_on_postgres") else {
        return;
    };
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let sep = if server_url.contains('?') { '&' } else { '?' };
    let url = format!(
        "{server_url}{sep}world=editors-{}-{nanos}",
        std::process::id()
    );
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

        // A stroke on A reaches B's client: its history and its chunks.
        let (ack, _) = stroke(&mut a, "a1", "raise", json!({}), [40.0, 0.0, 40.0], 3, 6.0).await;
        let first = ack["id"].as_i64().expect("A acknowledged its stroke");
        let h = until_history(&mut b, "follow").await;
        assert_eq!(h["strokes"], 1, "{h}");
        let frames = drain(&mut b, Duration::from_millis(500)).await;
        assert!(
            !frames.is_empty(),
            "B's client gets the chunks A's stroke changed"
        );

        // B strokes on top of it; A follows.
        let (ack, _) = stroke(&mut b, "b1", "raise", json!({}), [60.0, 0.0, 30.0], 3, 5.0).await;
        let second = ack["id"].as_i64().expect("B acknowledged its stroke");
        assert!(second > first, "{ack}");
        let h = until_history(&mut a, "follow").await;
        assert_eq!(h["strokes"], 2, "{h}");

        // One history: B undoes the last stroke (its own); A sees it.
        send(&mut b, json!({"type": "undo"})).await;
        let h = until_history(&mut b, "undo").await;
        assert_eq!(h["strokes"], 1, "{h}");
        let h = until_history(&mut a, "follow").await;
        assert_eq!(h["strokes"], 1, "{h}");
        send(&mut a, json!({"type": "redo"})).await;
        let h = until_history(&mut a, "redo").await;
        assert_eq!(h["strokes"], 2, "{h}");
        let h = until_history(&mut b, "follow").await;
        assert_eq!(h["strokes"], 2, "{h}");

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
