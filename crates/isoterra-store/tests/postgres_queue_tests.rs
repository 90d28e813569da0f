//! The PostgreSQL bake queue and watcher, on a real server:
//!
//! - every job of a run is handed out once across workers in threads, and
//!   its rows are stored with it;
//! - a job whose bake fails stays to do, with nothing stored;
//! - a worker process killed with `kill -9` while it holds a job frees the
//!   job at once: the next worker bakes it, with no lease to wait out;
//! - a watcher hears the stroke-log writes of its world, and not chunk
//!   puts or other worlds;
//! - a version 1 database is brought to version 2 and keeps its worlds.
//!
//! Needs a server (`ISOTERRA_POSTGRES_URL`, see `pg_support`).
#![cfg(feature = "postgres")]

mod pg_support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use isoterra_store::{
    BakeJob, BakedRow, ChunkKey, ChunkLayer, ChunkStore, NewStroke, PG_SCHEMA_VERSION, PgBakeQueue,
    PgStore, PgWatcher, StoreError, WorldMeta,
};

const HOLDER_URL_ENV: &str = "ISOTERRA_PG_QUEUE_HOLDER_URL";

fn meta() -> WorldMeta {
    WorldMeta {
        kind: "test".into(),
        format_version: 1,
        seed: 5,
        params: serde_json::json!({}),
    }
}

fn new_world(server: &str, tag: &str) -> (String, PgStore) {
    let url = pg_support::world_url(server, tag);
    let mut store = PgStore::open(&url).unwrap();
    store.create_world(&meta(), &[]).unwrap();
    (url, store)
}

/// The row a test bakes for plan position `i`.
fn row(i: u64) -> BakedRow {
    BakedRow {
        key: ChunkKey {
            layer: ChunkLayer(0x100),
            x: i as i32,
            y: 0,
            z: 0,
            lod: 0,
        },
        source: format!("src{i}"),
        hash: format!("{i:016x}"),
        payload: i.to_le_bytes().to_vec(),
    }
}

fn rows(job: &BakeJob) -> Vec<BakedRow> {
    (job.start..job.end).map(row).collect()
}

#[test]
fn every_job_is_baked_once_across_workers() {
    let Some(server) = pg_support::server("every_job_is_baked_once_across_workers") else {
        return;
    };
    let (url, store) = new_world(&server, "queue");
    let (keys, size) = (1000u64, 7u64);
    let handed: Arc<Mutex<Vec<BakeJob>>> = Arc::default();
    let workers: Vec<_> = (0..4)
        .map(|w| {
            let (url, handed) = (url.clone(), handed.clone());
            std::thread::spawn(move || {
                let mut q =
                    PgBakeQueue::open(&url, "run-a", "test plan", keys, size, &format!("w{w}"))
                        .unwrap();
                assert_eq!(q.jobs(), keys.div_ceil(size));
                let mut mine = 0;
                while let Some(job) = q.work(|job| Ok::<_, StoreError>(rows(job))).unwrap() {
                    handed.lock().unwrap().push(job);
                    mine += 1;
                }
                mine
            })
        })
        .collect();
    let per_worker: Vec<u64> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    let mut jobs = handed.lock().unwrap().clone();
    jobs.sort_by_key(|j| j.job);
    assert_eq!(jobs.len() as u64, keys.div_ceil(size), "{per_worker:?}");
    for (i, j) in jobs.iter().enumerate() {
        assert_eq!(j.job, i as u64, "each job once");
        assert_eq!(j.start, i as u64 * size);
        assert_eq!(j.end, ((i as u64 + 1) * size).min(keys));
    }
    let stored = store.baked_sources().unwrap();
    assert_eq!(stored.len() as u64, keys);
    for i in 0..keys {
        assert_eq!(stored[&row(i).key], format!("src{i}"));
    }
    // A worker joining the finished run finds nothing to do.
    let mut late = PgBakeQueue::open(&url, "run-a", "test plan", keys, size, "late").unwrap();
    let none = late.work(|_| -> Result<Vec<BakedRow>, StoreError> {
        panic!("a finished run hands out no job")
    });
    assert_eq!(none.unwrap(), None);
    // The same run planned with other sizes is refused.
    let err = PgBakeQueue::open(&url, "run-a", "test plan", keys + 1, size, "x").unwrap_err();
    assert!(matches!(err, StoreError::InvalidInput { .. }), "{err}");
    // A new run of the world removes the finished one.
    let mut next = PgBakeQueue::open(&url, "run-b", "test plan", 3, 2, "w").unwrap();
    assert_eq!(next.progress().unwrap().jobs, 2);
    let again = PgBakeQueue::open(&url, "run-a", "test plan", keys, size, "w").unwrap();
    assert_eq!(again.jobs(), keys.div_ceil(size));
    store.drop_world().unwrap();
}

#[test]
fn a_failed_job_stays_to_do_with_nothing_stored() {
    let Some(server) = pg_support::server("a_failed_job_stays_to_do_with_nothing_stored") else {
        return;
    };
    let (url, store) = new_world(&server, "qfail");
    let mut q = PgBakeQueue::open(&url, "r", "plan", 10, 4, "w").unwrap();
    let err = q
        .work(|_| Err::<Vec<BakedRow>, _>(StoreError::input("bake", "refused on purpose")))
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidInput { .. }));
    assert!(store.baked_sources().unwrap().is_empty());
    assert_eq!(q.progress().unwrap().done, 0);
    let first = q.work(|j| Ok::<_, StoreError>(rows(j))).unwrap().unwrap();
    assert_eq!(first.job, 0, "the failed job is handed out again");
    assert_eq!(store.baked_sources().unwrap().len(), 4);
    // Bad sizes are refused before anything is written.
    assert!(PgBakeQueue::open(&url, "r2", "plan", 10, 0, "w").is_err());
    let missing = pg_support::world_url(&server, "qnone");
    assert!(matches!(
        PgBakeQueue::open(&missing, "r", "plan", 10, 4, "w"),
        Err(StoreError::NoSuchWorld { .. })
    ));
    store.drop_world().unwrap();
}

/// Claims a job and holds it, printing `held JOB`, until killed. Run only as
/// a child of the test below.
#[test]
#[ignore = "the worker process of a_killed_worker_frees_its_job_at_once"]
fn postgres_queue_holder() {
    let Ok(url) = std::env::var(HOLDER_URL_ENV) else {
        return;
    };
    let mut q = PgBakeQueue::open(&url, "held", "plan", 6, 2, "holder").unwrap();
    let _ = q.work(|job| -> Result<Vec<BakedRow>, StoreError> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "held {}", job.job).unwrap();
        out.flush().unwrap();
        drop(out);
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    });
}

/// The holder process, killed however the test ends.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_killed_worker_frees_its_job_at_once() {
    let Some(server) = pg_support::server("a_killed_worker_frees_its_job_at_once") else {
        return;
    };
    let (url, store) = new_world(&server, "qkill");
    let mut child = KillOnDrop(
        Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "postgres_queue_holder",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(HOLDER_URL_ENV, &url)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
    let held: u64 = loop {
        let line = lines
            .next()
            .expect("the holder printed what it holds")
            .unwrap();
        // The harness may have begun the line with the test's name.
        if let Some((_, n)) = line.split_once("held ") {
            break n.trim().parse().unwrap();
        }
    };
    assert_eq!(held, 0);
    // While it lives, its job is skipped, not waited for.
    let mut q = PgBakeQueue::open(&url, "held", "plan", 6, 2, "second").unwrap();
    let next = q.work(|j| Ok::<_, StoreError>(rows(j))).unwrap().unwrap();
    assert_eq!(next.job, 1, "the held job is skipped");
    let next = q.work(|j| Ok::<_, StoreError>(rows(j))).unwrap().unwrap();
    assert_eq!(next.job, 2);
    // kill -9: the server rolls the holder's transaction back.
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    let taken = q.work(|j| Ok::<_, StoreError>(rows(j))).unwrap().unwrap();
    assert_eq!(taken.job, held, "the dead worker's job is done by the next");
    assert_eq!(q.work(|j| Ok::<_, StoreError>(rows(j))).unwrap(), None);
    let stored = store.baked_sources().unwrap();
    assert_eq!(stored.len(), 6);
    store.drop_world().unwrap();
}

#[test]
fn a_watcher_hears_log_writes_of_its_world() {
    let Some(server) = pg_support::server("a_watcher_hears_log_writes_of_its_world") else {
        return;
    };
    let (url, mut store) = new_world(&server, "watch");
    let (_, mut other) = new_world(&server, "watch-other");
    let mut watcher = PgWatcher::open(&url).unwrap();
    let quiet = Duration::from_millis(150);
    assert_eq!(watcher.wait(quiet).unwrap(), None);
    let stroke = NewStroke {
        tool: "dig".into(),
        params: serde_json::json!({}),
        delta: vec![1, 2, 3],
    };
    let key = ChunkKey::field2(0, 0);
    let id = store
        .commit_stroke(&stroke, &[(key, Some(vec![9; 8]))])
        .unwrap();
    let revision = store.current_revision().unwrap();
    assert_eq!(
        watcher.wait(Duration::from_secs(10)).unwrap(),
        Some(revision)
    );
    // Three writes in a row come as the newest of them.
    store.mark_undone(id, &[(key, None)]).unwrap();
    store.mark_redone(id, &[(key, Some(vec![9; 8]))]).unwrap();
    store.mark_undone(id, &[(key, None)]).unwrap();
    let revision = store.current_revision().unwrap();
    let mut newest = None;
    while newest != Some(revision) {
        newest = watcher.wait(Duration::from_secs(10)).unwrap();
        assert!(newest.is_some(), "the writes were heard");
    }
    // Chunk puts (the game-rate path) and other worlds are not heard.
    store
        .put_chunks(&[(ChunkKey::field2(1, 0), Some(vec![1; 8]))])
        .unwrap();
    other
        .commit_stroke(&stroke, &[(key, Some(vec![2; 8]))])
        .unwrap();
    assert_eq!(watcher.wait(quiet).unwrap(), None);
    assert!(
        PgWatcher::open("postgres://u@h/d").is_err(),
        "no world named"
    );
    store.drop_world().unwrap();
    other.drop_world().unwrap();
}

/// How the server stores `table`'s payload column (`attstorage`).
fn storage(client: &mut postgres::Client, table: &str) -> u8 {
    let sql = format!(
        "SELECT attstorage FROM pg_attribute
         WHERE attrelid = '{table}'::regclass AND attname = 'payload'"
    );
    let v: i8 = client.query_one(&sql, &[]).unwrap().get(0);
    v as u8
}

#[test]
fn a_version_1_database_is_brought_to_version_2() {
    let Some(server) = pg_support::server("a_version_1_database_is_brought_to_version_2") else {
        return;
    };
    let name = format!("isoterra_v1_{}", std::process::id());
    let (base, query) = server.split_once('?').unwrap_or((&server, ""));
    let (host, _) = base.rsplit_once('/').unwrap();
    let sep = if query.is_empty() { "" } else { "?" };
    let db_url = format!("{host}/{name}{sep}{query}");
    let mut admin = postgres::Client::connect(&server, postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
        .unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    // Version 1 as it was: five tables and version 1, with one world.
    let mut v1 = postgres::Client::connect(&db_url, postgres::NoTls).unwrap();
    v1.batch_execute(
        "CREATE TABLE isoterra_schema (version INTEGER NOT NULL);
         INSERT INTO isoterra_schema VALUES (1);
         CREATE TABLE isoterra_worlds (world TEXT PRIMARY KEY, revision BIGINT NOT NULL,
             last_id BIGINT NOT NULL);
         CREATE TABLE isoterra_meta (world TEXT NOT NULL REFERENCES isoterra_worlds
             ON DELETE CASCADE, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (world, key));
         CREATE TABLE isoterra_chunks (world TEXT NOT NULL REFERENCES isoterra_worlds
             ON DELETE CASCADE, layer INTEGER NOT NULL, x INTEGER NOT NULL, y INTEGER NOT NULL,
             z INTEGER NOT NULL, lod SMALLINT NOT NULL, payload BYTEA NOT NULL,
             PRIMARY KEY (world, layer, x, y, z, lod));
         CREATE TABLE isoterra_strokes (world TEXT NOT NULL REFERENCES isoterra_worlds
             ON DELETE CASCADE, id BIGINT NOT NULL, tool TEXT NOT NULL, params TEXT NOT NULL,
             delta BYTEA NOT NULL, undone BOOLEAN NOT NULL, created_ms BIGINT NOT NULL,
             PRIMARY KEY (world, id));
         CREATE TABLE isoterra_baked (world TEXT NOT NULL REFERENCES isoterra_worlds
             ON DELETE CASCADE, layer INTEGER NOT NULL, x INTEGER NOT NULL, y INTEGER NOT NULL,
             z INTEGER NOT NULL, lod SMALLINT NOT NULL, source TEXT NOT NULL, hash TEXT NOT NULL,
             payload BYTEA NOT NULL, PRIMARY KEY (world, layer, x, y, z, lod));
         INSERT INTO isoterra_worlds VALUES ('old', 1, 0);
         INSERT INTO isoterra_meta VALUES ('old', 'kind', 'test'),
             ('old', 'format_version', '1'), ('old', 'seed', '5'), ('old', 'params', '{}');",
    )
    .unwrap();
    let world_url = format!(
        "{db_url}{}world=old",
        if query.is_empty() { "?" } else { "&" }
    );
    let store = PgStore::open_existing(&world_url).unwrap();
    assert_eq!(store.meta().unwrap().seed, 5, "the old world is kept");
    let version: i32 = v1
        .query_one("SELECT version FROM isoterra_schema", &[])
        .unwrap()
        .get(0);
    assert_eq!(version, PG_SCHEMA_VERSION);
    // Payloads are kept without the server's compression ('e'xternal), in
    // the upgraded database and in one this build made (the test server's).
    assert_eq!(storage(&mut v1, "isoterra_chunks"), b'e');
    assert_eq!(storage(&mut admin, "isoterra_baked"), b'e');
    let mut q = PgBakeQueue::open(&world_url, "r", "plan", 3, 3, "w").unwrap();
    assert!(q.work(|j| Ok::<_, StoreError>(rows(j))).unwrap().is_some());
    let by_key: BTreeMap<_, _> = store.baked_sources().unwrap().into_iter().collect();
    assert_eq!(by_key.len(), 3);
    drop((store, q, v1));
    admin
        .batch_execute(&format!("DROP DATABASE {name} WITH (FORCE)"))
        .unwrap();
}
