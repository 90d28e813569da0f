//! The write-behind queue: nothing queued is lost, a full queue pushes back,
//! failures keep the unwritten changes, dropping flushes.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use isoterra_store::{
    ChunkChange, ChunkKey, ChunkWriter, FullPolicy, StoreError, WorldFile, WorldMeta, WriteBehind,
    WriteBehindConfig,
};

fn meta() -> WorldMeta {
    WorldMeta {
        kind: "test".into(),
        format_version: 1,
        seed: 1,
        params: serde_json::json!({}),
    }
}

fn payload(i: usize, round: usize) -> Vec<u8> {
    let mut v = (i as u32).to_le_bytes().to_vec();
    v.push(round as u8);
    v
}

fn key(i: usize) -> ChunkKey {
    ChunkKey::field2((i % 37) as i32 - 18, (i / 37) as i32)
}

/// A store in memory whose writes can be held at a gate or made to fail.
#[derive(Default)]
struct Held {
    rows: Arc<Mutex<std::collections::BTreeMap<ChunkKey, Vec<u8>>>>,
    gate: Arc<(Mutex<bool>, Condvar)>,
    gated: bool,
    fail: Arc<AtomicBool>,
    commits: Arc<AtomicUsize>,
}

impl Held {
    fn open(&self) {
        *self.gate.0.lock().unwrap() = true;
        self.gate.1.notify_all();
    }
}

impl ChunkWriter for Held {
    fn write_chunks(&mut self, changes: &[ChunkChange]) -> Result<(), StoreError> {
        if self.gated {
            let mut open = self.gate.0.lock().unwrap();
            while !*open {
                open = self.gate.1.wait(open).unwrap();
            }
        }
        if self.fail.load(Ordering::SeqCst) {
            return Err(StoreError::Busy {
                path: "memory".into(),
            });
        }
        let mut rows = self.rows.lock().unwrap();
        for (k, v) in changes {
            match v {
                Some(v) => rows.insert(*k, v.clone()),
                None => rows.remove(k),
            };
        }
        self.commits.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

#[test]
fn nothing_queued_is_lost_in_a_world_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.isoterra");
    let file = WorldFile::create(&path, &meta()).unwrap();
    let cfg = WriteBehindConfig::DEFAULT.with_capacity(8).with_batch(5);
    let queue = WriteBehind::new(file, cfg).unwrap();
    // 600 changes over 300 chunks: each written twice, some deleted.
    for round in 0..2 {
        for i in 0..300 {
            let value = if round == 1 && i % 7 == 0 {
                None
            } else {
                Some(payload(i, round))
            };
            queue.push((key(i), value)).unwrap();
        }
    }
    queue.flush().unwrap();
    assert_eq!(queue.pending(), 0);
    assert_eq!(queue.written(), 600);
    // Durable after flush: a second handle sees every row.
    let reader = WorldFile::open(&path).unwrap();
    for i in 0..300 {
        let want = (i % 7 != 0).then(|| payload(i, 1));
        assert_eq!(reader.chunk(&key(i)).unwrap(), want, "chunk {i}");
    }
    drop(reader);
    let file = queue.finish().unwrap();
    assert_eq!(file.chunk_keys().unwrap().len(), 300 - 300usize.div_ceil(7));
}

#[test]
fn dropping_the_queue_writes_what_is_queued() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.isoterra");
    let file = WorldFile::create(&path, &meta()).unwrap();
    let queue = WriteBehind::new(file, WriteBehindConfig::DEFAULT.with_batch(3)).unwrap();
    for i in 0..50 {
        queue.push((key(i), Some(payload(i, 0)))).unwrap();
    }
    drop(queue);
    let file = WorldFile::open(&path).unwrap();
    for i in 0..50 {
        assert_eq!(file.chunk(&key(i)).unwrap(), Some(payload(i, 0)));
    }
}

#[test]
fn a_full_queue_blocks_the_pusher_until_the_writer_catches_up() {
    let store = Held {
        gated: true,
        ..Held::default()
    };
    let rows = Arc::clone(&store.rows);
    let gate = Held {
        gate: Arc::clone(&store.gate),
        ..Held::default()
    };
    let cfg = WriteBehindConfig::DEFAULT.with_capacity(4).with_batch(2);
    let queue = Arc::new(WriteBehind::new(store, cfg).unwrap());
    let pushed = Arc::new(AtomicUsize::new(0));
    let pusher = {
        let queue = Arc::clone(&queue);
        let pushed = Arc::clone(&pushed);
        std::thread::spawn(move || {
            for i in 0..20 {
                queue.push((key(i), Some(payload(i, 0)))).unwrap();
                pushed.fetch_add(1, Ordering::SeqCst);
            }
        })
    };
    // The writer holds one batch (1 or 2 changes) at the gate and the queue
    // holds 4: the pusher cannot get past 6 however long it tries.
    while pushed.load(Ordering::SeqCst) < 5 {
        std::thread::yield_now();
    }
    std::thread::sleep(Duration::from_millis(50));
    let stuck = pushed.load(Ordering::SeqCst);
    assert!((5..=6).contains(&stuck), "{stuck} pushed past a full queue");
    assert_eq!(queue.pending(), stuck);
    assert!(queue.try_push((key(99), None)).is_err());
    gate.open();
    pusher.join().unwrap();
    queue.flush().unwrap();
    assert_eq!(rows.lock().unwrap().len(), 20);
}

#[test]
fn the_fail_policy_refuses_instead_of_waiting() {
    let store = Held {
        gated: true,
        ..Held::default()
    };
    let gate = Held {
        gate: Arc::clone(&store.gate),
        ..Held::default()
    };
    let rows = Arc::clone(&store.rows);
    let cfg = WriteBehindConfig::DEFAULT
        .with_capacity(2)
        .with_batch(1)
        .with_policy(FullPolicy::Fail);
    let queue = WriteBehind::new(store, cfg).unwrap();
    let mut accepted = Vec::new();
    let mut refused = 0;
    for i in 0..10 {
        match queue.push((key(i), Some(payload(i, 0)))) {
            Ok(()) => accepted.push(i),
            Err(e) => {
                assert!(matches!(e, StoreError::InvalidInput { .. }), "{e}");
                refused += 1;
            }
        }
    }
    assert!(refused > 0);
    assert!(accepted.len() <= 3);
    let back = queue.try_push((key(50), Some(vec![7]))).unwrap_err();
    assert_eq!(back.1, Some(vec![7]));
    gate.open();
    queue.flush().unwrap();
    let rows = rows.lock().unwrap();
    assert_eq!(rows.len(), accepted.len());
    for i in accepted {
        assert_eq!(rows.get(&key(i)), Some(&payload(i, 0)));
    }
}

#[test]
fn a_failed_commit_keeps_every_unwritten_change() {
    let store = Held::default();
    let fail = Arc::clone(&store.fail);
    let rows = Arc::clone(&store.rows);
    let queue = WriteBehind::new(store, WriteBehindConfig::DEFAULT.with_batch(4)).unwrap();
    queue.push((key(0), Some(payload(0, 0)))).unwrap();
    queue.flush().unwrap();
    fail.store(true, Ordering::SeqCst);
    for i in 1..=10 {
        // Pushes may be refused once the writer noticed the failure.
        let _ = queue.push((key(i), Some(payload(i, 0))));
    }
    let err = queue.flush().unwrap_err();
    assert!(matches!(err, StoreError::Busy { .. }), "{err}");
    // Later calls keep saying so.
    assert!(queue.flush().is_err());
    assert!(queue.push((key(77), None)).is_err());
    let unwritten = queue.take_unwritten();
    assert!(!unwritten.is_empty());
    let written = rows.lock().unwrap().len();
    assert_eq!(written, 1);
    // Back in business: the unwritten changes go through again.
    fail.store(false, Ordering::SeqCst);
    let n = unwritten.len();
    for c in unwritten {
        queue.push(c).unwrap();
    }
    queue.flush().unwrap();
    assert_eq!(rows.lock().unwrap().len(), 1 + n);
    let store = queue.finish().unwrap();
    assert!(store.commits.load(Ordering::SeqCst) >= 2);
}

#[test]
fn a_zero_capacity_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = WorldFile::create(dir.path().join("w.isoterra"), &meta()).unwrap();
    assert!(WriteBehind::new(file, WriteBehindConfig::DEFAULT.with_capacity(0)).is_err());
}
