//! Tests of the low-level world file: schema, round-trips, history,
//! damaged and foreign files, concurrency and crash safety.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use isoterra_store::{
    ChunkData, ChunkEncoding, ChunkKey, ChunkLayer, EditDelta, NewStroke, StoreError, WorldFile,
    WorldMeta, decode_chunk, decode_delta, encode_chunk, encode_delta,
};
use proptest::prelude::*;
use serde_json::json;

fn meta() -> WorldMeta {
    WorldMeta {
        kind: "testkind".into(),
        format_version: 3,
        seed: u64::MAX - 5,
        params: json!({"width": 64, "nested": {"a": [1, 2.5, "x"]}}),
    }
}

fn temp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

fn chunk_payload(seed: u32) -> Vec<u8> {
    let values: Vec<f32> = (0..35)
        .map(|i| ((i * 7 + seed) % 13) as f32 / 6.5 - 1.0)
        .collect();
    let mats: Vec<u8> = (0..35).map(|i| ((i + seed) % 5) as u8).collect();
    encode_chunk(&ChunkData::new(ChunkEncoding::F32, [7, 5, 1], values, Some(mats)).unwrap())
}

fn stroke(tool: &str, n: u32) -> NewStroke {
    let delta = EditDelta {
        rect: isoterra_field::NodeRect::new(0, 0, n + 1, 1),
        nodes: (0..n).collect(),
        before: (0..n).map(|i| i as f32).collect(),
        after: (0..n).map(|i| -(i as f32)).collect(),
        mat_before: vec![1; n as usize],
        mat_after: vec![2; n as usize],
    };
    NewStroke {
        tool: tool.into(),
        params: json!({"radius": n, "tool": tool}),
        delta: encode_delta(&delta).unwrap(),
    }
}

/// A real world file with a few chunks and strokes, checkpointed so the main
/// file holds everything.
fn sample_file(dir: &Path) -> PathBuf {
    let path = dir.join("sample.isoterra");
    let mut f = WorldFile::create(&path, &meta()).unwrap();
    for i in 0..4 {
        f.commit_stroke(
            &stroke("dig", i + 1),
            &[(ChunkKey::field2(i as i32, 1), Some(chunk_payload(i)))],
        )
        .unwrap();
    }
    let last = f.last_done_stroke().unwrap().unwrap().id;
    f.mark_undone(last, &[(ChunkKey::field2(3, 1), None)])
        .unwrap();
    f.checkpoint().unwrap();
    f.close().unwrap();
    path
}

#[test]
fn create_then_open_round_trips_meta_chunks_and_strokes() {
    let dir = temp();
    let path = dir.path().join("w.isoterra");
    let mut f = WorldFile::create(&path, &meta()).unwrap();
    assert_eq!(f.meta().unwrap(), meta());
    assert_eq!(f.chunk_count().unwrap(), 0);
    let keys = [
        ChunkKey::field2(-3, 7),
        ChunkKey {
            layer: ChunkLayer(9),
            x: i32::MIN,
            y: i32::MAX,
            z: -1,
            lod: 255,
        },
        ChunkKey::field2(0, 0),
    ];
    let changes: Vec<_> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (*k, Some(chunk_payload(i as u32))))
        .collect();
    f.put_chunks(&changes).unwrap();
    let s = stroke("fill", 5);
    let id = f.commit_stroke(&s, &[]).unwrap();
    drop(f);

    let f = WorldFile::open(&path).unwrap();
    assert_eq!(f.meta().unwrap(), meta());
    assert!(
        f.meta_entry("created_by")
            .unwrap()
            .unwrap()
            .starts_with("isoterra-store")
    );
    assert!(f.meta_entry("created_ms").unwrap().is_some());
    assert_eq!(f.meta_entry("nope").unwrap(), None);
    let mut sorted = keys.to_vec();
    sorted.sort();
    assert_eq!(f.chunk_keys().unwrap(), sorted);
    for (k, p) in &changes {
        assert_eq!(f.chunk(k).unwrap().as_ref(), p.as_ref());
    }
    assert_eq!(f.chunk(&ChunkKey::field2(1, 1)).unwrap(), None);
    let rec = f.stroke(id).unwrap().unwrap();
    assert_eq!(rec.id, id);
    assert_eq!(rec.tool, "fill");
    assert_eq!(rec.params, s.params);
    assert_eq!(rec.delta, s.delta);
    assert!(!rec.undone);
    assert!(rec.created_ms > 0);
    assert_eq!(decode_delta(&rec.delta).unwrap().nodes.len(), 5);
    assert_eq!(f.stroke(id + 1).unwrap(), None);
    f.integrity_check().unwrap();
}

#[test]
fn create_leaves_a_foreign_write_ahead_log_alone() {
    // A log at the new name belongs to another database (one moved away
    // while still open elsewhere): creating must neither replay nor delete it.
    let dir = temp();
    let path = dir.path().join("w.isoterra");
    for side in ["-wal", "-shm"] {
        let mut name = path.as_os_str().to_os_string();
        name.push(side);
        let side = PathBuf::from(name);
        fs::write(&side, b"the last commits of another world").unwrap();
        let err = WorldFile::create(&path, &meta()).unwrap_err();
        assert!(matches!(err, StoreError::AlreadyExists { .. }), "{err}");
        assert!(err.to_string().contains(side.to_str().unwrap()), "{err}");
        assert_eq!(
            fs::read(&side).unwrap(),
            b"the last commits of another world"
        );
        assert!(!path.exists(), "nothing was created");
        fs::remove_file(&side).unwrap();
    }
    WorldFile::create(&path, &meta()).unwrap();
}

#[test]
fn create_refuses_to_overwrite_and_leaves_the_target_alone() {
    let dir = temp();
    let path = dir.path().join("taken.isoterra");
    fs::write(&path, b"precious").unwrap();
    let err = WorldFile::create(&path, &meta()).unwrap_err();
    assert!(matches!(err, StoreError::AlreadyExists { .. }), "{err}");
    assert!(err.to_string().contains("refusing to overwrite"));
    assert_eq!(fs::read(&path).unwrap(), b"precious");

    let err = WorldFile::create(dir.path(), &meta()).unwrap_err();
    assert!(matches!(err, StoreError::AlreadyExists { .. }), "{err}");

    let err = WorldFile::create(dir.path().join("no/such/dir/w.isoterra"), &meta()).unwrap_err();
    assert!(matches!(err, StoreError::Io { .. }), "{err}");

    let mut bad = meta();
    bad.kind = "has space".into();
    let p2 = dir.path().join("bad.isoterra");
    assert!(matches!(
        WorldFile::create(&p2, &bad),
        Err(StoreError::InvalidInput { .. })
    ));
    assert!(!p2.exists(), "a refused create leaves nothing behind");
}

#[test]
fn history_undo_redo_and_tail_drop() {
    let dir = temp();
    let path = dir.path().join("h.isoterra");
    let mut f = WorldFile::create(&path, &meta()).unwrap();
    assert_eq!(f.last_done_stroke().unwrap(), None);
    assert_eq!(f.first_undone_stroke().unwrap(), None);
    let a = f.commit_stroke(&stroke("dig", 1), &[]).unwrap();
    let b = f.commit_stroke(&stroke("dig", 2), &[]).unwrap();
    let c = f.commit_stroke(&stroke("fill", 3), &[]).unwrap();
    assert!(a < b && b < c);
    assert_eq!(f.undo_position().unwrap(), 3);

    // Only the last done stroke can be undone.
    let err = f.mark_undone(b, &[]).unwrap_err();
    assert!(matches!(err, StoreError::History { .. }), "{err}");
    f.mark_undone(c, &[(ChunkKey::field2(0, 0), Some(chunk_payload(1)))])
        .unwrap();
    f.mark_undone(b, &[]).unwrap();
    assert_eq!(f.last_done_stroke().unwrap().unwrap().id, a);
    assert_eq!(f.first_undone_stroke().unwrap().unwrap().id, b);
    let counts = f.stroke_counts().unwrap();
    assert_eq!((counts.done, counts.undone, counts.total()), (1, 2, 3));

    // Only the first undone stroke can be redone.
    assert!(matches!(
        f.mark_redone(c, &[]),
        Err(StoreError::History { .. })
    ));
    f.mark_redone(b, &[]).unwrap();
    drop(f);

    // The cursor survives reopening.
    let mut f = WorldFile::open(&path).unwrap();
    assert_eq!(f.last_done_stroke().unwrap().unwrap().id, b);
    assert_eq!(f.first_undone_stroke().unwrap().unwrap().id, c);
    assert!(f.stroke(c).unwrap().unwrap().undone);
    assert_eq!(
        f.chunk(&ChunkKey::field2(0, 0)).unwrap(),
        Some(chunk_payload(1))
    );

    // A new stroke drops the redo tail, and ids are never reused.
    let d = f.commit_stroke(&stroke("dig", 4), &[]).unwrap();
    assert!(d > c);
    assert_eq!(f.stroke(c).unwrap(), None);
    assert_eq!(f.first_undone_stroke().unwrap(), None);
    assert_eq!(f.stroke_counts().unwrap().total(), 3);
    f.mark_undone(d, &[]).unwrap();
    f.mark_undone(b, &[]).unwrap();
    f.mark_undone(a, &[]).unwrap();
    assert_eq!(f.undo_position().unwrap(), 0);
    assert!(matches!(
        f.mark_undone(a, &[]),
        Err(StoreError::History { .. })
    ));
    f.integrity_check().unwrap();
}

#[test]
fn a_refused_write_changes_nothing() {
    let dir = temp();
    let path = sample_file(dir.path());
    let mut f = WorldFile::open(&path).unwrap();
    let before = (f.chunk_keys().unwrap(), f.stroke_counts().unwrap());
    let empty_tool = NewStroke {
        tool: String::new(),
        ..stroke("x", 1)
    };
    assert!(matches!(
        f.commit_stroke(&empty_tool, &[(ChunkKey::field2(9, 9), Some(vec![1]))]),
        Err(StoreError::InvalidInput { .. })
    ));
    assert!(
        f.mark_undone(12345, &[(ChunkKey::field2(0, 1), None)])
            .is_err()
    );
    assert_eq!(
        (f.chunk_keys().unwrap(), f.stroke_counts().unwrap()),
        before
    );
    // The handle still works after refusals.
    f.commit_stroke(&stroke("dig", 1), &[]).unwrap();
}

#[test]
fn open_reports_missing_empty_folder_and_garbage() {
    let dir = temp();
    let missing = dir.path().join("missing.isoterra");
    let err = WorldFile::open(&missing).unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err}");
    assert!(err.to_string().contains("missing.isoterra"));

    let err = WorldFile::open(dir.path()).unwrap_err();
    assert!(matches!(err, StoreError::NotAWorldFile { .. }), "{err}");
    assert!(err.to_string().contains("folder"));

    let empty = dir.path().join("empty.isoterra");
    fs::write(&empty, b"").unwrap();
    let err = WorldFile::open(&empty).unwrap_err();
    assert!(err.to_string().contains("empty"), "{err}");
    assert_eq!(fs::read(&empty).unwrap(), b"");

    let garbage = dir.path().join("garbage.isoterra");
    let bytes: Vec<u8> = (0..5000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    fs::write(&garbage, &bytes).unwrap();
    let err = WorldFile::open(&garbage).unwrap_err();
    assert!(matches!(err, StoreError::NotAWorldFile { .. }), "{err}");
    assert!(err.to_string().contains("not an SQLite database"));
    assert_eq!(fs::read(&garbage).unwrap(), bytes);
}

#[test]
fn foreign_sqlite_databases_are_recognised_and_untouched() {
    let dir = temp();
    let path = dir.path().join("foreign.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("CREATE TABLE recipes (name TEXT, stars INTEGER); INSERT INTO recipes VALUES ('soup', 4);")
            .unwrap();
    }
    let bytes = fs::read(&path).unwrap();
    let err = WorldFile::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::NotAWorldFile { .. }), "{err}");
    assert!(err.to_string().contains("foreign"), "{err}");
    assert_eq!(fs::read(&path).unwrap(), bytes);
    let mut names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["foreign.db"], "a refused open leaves no side files");

    // Another application's id is named.
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.pragma_update(None, "application_id", 0x1234_5678)
            .unwrap();
    }
    let bytes = fs::read(&path).unwrap();
    let err = WorldFile::open(&path).unwrap_err();
    assert!(err.to_string().contains("0x12345678"), "{err}");
    assert_eq!(fs::read(&path).unwrap(), bytes);

    // Our application id but none of our tables: damaged, not foreign.
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.pragma_update(None, "application_id", WorldFile::APPLICATION_ID)
            .unwrap();
        c.pragma_update(None, "user_version", 1).unwrap();
    }
    let err = WorldFile::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("table is missing"), "{err}");
}

#[test]
fn an_empty_sqlite_database_is_called_empty() {
    let dir = temp();
    let path = dir.path().join("blank.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        // Write the header page without creating anything.
        c.pragma_update(None, "user_version", 0).unwrap();
        c.execute_batch("VACUUM").unwrap();
    }
    assert!(fs::metadata(&path).unwrap().len() > 0);
    let err = WorldFile::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::NotAWorldFile { .. }), "{err}");
    assert!(err.to_string().contains("empty SQLite database"), "{err}");
}

#[test]
fn newer_schema_versions_are_refused_with_the_version() {
    let dir = temp();
    let path = sample_file(dir.path());
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.pragma_update(None, "user_version", 7).unwrap();
    }
    let bytes = fs::read(&path).unwrap();
    let err = WorldFile::open(&path).unwrap_err();
    match &err {
        StoreError::NewerVersion {
            found, supported, ..
        } => {
            assert_eq!((*found, *supported), (7, WorldFile::SCHEMA_VERSION));
        }
        other => panic!("expected NewerVersion, got {other}"),
    }
    assert!(err.to_string().contains("upgrade"));
    assert_eq!(fs::read(&path).unwrap(), bytes);
}

#[test]
fn inconsistent_history_and_bad_meta_are_reported_as_damage() {
    let dir = temp();
    let path = sample_file(dir.path());
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute("UPDATE history SET cursor = 999", []).unwrap();
    }
    let err = WorldFile::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("undo cursor"));

    let path = dir.path().join("m.isoterra");
    WorldFile::create(&path, &meta()).unwrap();
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute(
            "UPDATE meta SET value = 'not json' WHERE key = 'params'",
            [],
        )
        .unwrap();
    }
    let err = WorldFile::open(&path).unwrap_err();
    assert!(err.to_string().contains("params"), "{err}");

    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute("DELETE FROM meta WHERE key = 'params'", [])
            .unwrap();
    }
    let err = WorldFile::open(&path).unwrap_err();
    assert!(err.to_string().contains("missing"), "{err}");
}

#[test]
fn truncated_copies_of_a_real_file_never_panic_and_stay_unchanged() {
    let dir = temp();
    let path = sample_file(dir.path());
    let full = fs::read(&path).unwrap();
    assert!(full.len() > 4096);
    let copy = dir.path().join("cut.isoterra");
    let mut cuts: Vec<usize> = vec![0, 1, 16, 99, 100, 101, 512, 4095, 4096, 4097];
    cuts.extend((0..24).map(|i| (i * 7919 + 13) % full.len()));
    cuts.push(full.len() - 1);
    for cut in cuts {
        fs::write(&copy, &full[..cut]).unwrap();
        let result = WorldFile::open(&copy);
        if cut <= 4096 {
            // Nothing but the first page: the tables are gone.
            assert!(result.is_err(), "cut at {cut} opened");
        }
        if let Ok(f) = &result {
            // A cut that keeps every page SQLite needs may open; reading must
            // still not panic.
            let _ = f.chunk_keys();
            let _ = f.last_done_stroke();
        }
        drop(result);
        assert_eq!(
            fs::read(&copy).unwrap(),
            &full[..cut],
            "cut at {cut} changed the file"
        );
    }
}

#[test]
fn a_damaged_page_is_reported_not_panicked_on() {
    let dir = temp();
    let path = sample_file(dir.path());
    let full = fs::read(&path).unwrap();
    let copy = dir.path().join("flip.isoterra");
    let page = 4096;
    for (i, offset) in (100..full.len()).step_by(page / 3).enumerate() {
        let mut bytes = full.clone();
        for b in &mut bytes[offset..(offset + 64).min(full.len())] {
            *b ^= 0x5a ^ (i as u8);
        }
        fs::write(&copy, &bytes).unwrap();
        if let Ok(f) = WorldFile::open(&copy) {
            let _ = f.chunk_keys();
            let _ = f.meta();
            let _ = f.first_undone_stroke();
        }
    }
}

#[test]
fn a_stale_handle_gets_a_conflict_and_writes_nothing() {
    let dir = temp();
    let path = sample_file(dir.path());
    let mut a = WorldFile::open(&path).unwrap();
    let mut b = WorldFile::open(&path).unwrap();
    a.commit_stroke(&stroke("dig", 2), &[]).unwrap();
    let err = b
        .commit_stroke(
            &stroke("fill", 3),
            &[(ChunkKey::field2(5, 5), Some(vec![9]))],
        )
        .unwrap_err();
    assert!(matches!(err, StoreError::Conflict { .. }), "{err}");
    assert!(err.to_string().contains("reopen"));
    assert_eq!(a.chunk(&ChunkKey::field2(5, 5)).unwrap(), None);
    assert_eq!(a.stroke_counts().unwrap().total(), 4);
    // Reopening catches up.
    let mut b = WorldFile::open(&path).unwrap();
    assert_eq!(b.revision(), a.revision());
    b.commit_stroke(&stroke("fill", 3), &[]).unwrap();
    b.integrity_check().unwrap();
}

#[test]
fn a_held_write_lock_gives_busy_after_the_timeout() {
    let dir = temp();
    let path = sample_file(dir.path());
    let mut f = WorldFile::open(&path).unwrap();
    f.set_busy_timeout(Duration::from_millis(20)).unwrap();
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let before = f.stroke_counts().unwrap();
    let err = f.commit_stroke(&stroke("dig", 1), &[]).unwrap_err();
    assert!(matches!(err, StoreError::Busy { .. }), "{err}");
    other.execute_batch("ROLLBACK").unwrap();
    assert_eq!(f.stroke_counts().unwrap(), before);
    f.commit_stroke(&stroke("dig", 1), &[]).unwrap();
}

#[test]
fn two_writers_in_threads_never_corrupt_the_file() {
    let dir = temp();
    let path = sample_file(dir.path());
    let writers: Vec<_> = (0..2)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut f = WorldFile::open(&path).unwrap();
                let mut done = 0;
                let mut attempts = 0;
                while done < 15 && attempts < 10_000 {
                    attempts += 1;
                    let key = ChunkKey::field2(t, done);
                    match f
                        .commit_stroke(&stroke("dig", 1), &[(key, Some(chunk_payload(t as u32)))])
                    {
                        Ok(_) => done += 1,
                        Err(StoreError::Conflict { .. }) | Err(StoreError::Busy { .. }) => {
                            f = WorldFile::open(&path).unwrap();
                        }
                        Err(e) => panic!("unexpected error: {e}"),
                    }
                }
                done
            })
        })
        .collect();
    let done: i32 = writers.into_iter().map(|w| w.join().unwrap()).sum();
    assert_eq!(done, 30);
    let f = WorldFile::open(&path).unwrap();
    f.integrity_check().unwrap();
    // The sample's redo tail was dropped by the first new stroke.
    assert_eq!(f.stroke_counts().unwrap().done, 3 + 30);
    assert_eq!(f.stroke_counts().unwrap().undone, 0);
    for t in 0..2 {
        for i in 0..15 {
            assert!(f.chunk(&ChunkKey::field2(t, i)).unwrap().is_some());
        }
    }
}

/// Run by `acknowledged_strokes_survive_kill_9` in a child process: commits
/// strokes forever, printing each acknowledged id.
#[test]
#[ignore = "helper process for acknowledged_strokes_survive_kill_9"]
fn writer_process_for_kill_test() {
    let Ok(path) = std::env::var("ISOTERRA_STORE_KILL_TEST_FILE") else {
        return;
    };
    let mut f = WorldFile::open(&path).unwrap();
    // Bounded, so a parent that died before killing it cannot leave it running.
    for i in 0..20_000 {
        let id = f
            .commit_stroke(
                &stroke("dig", 1 + i % 50),
                &[(ChunkKey::field2(i as i32 % 16, 0), Some(chunk_payload(i)))],
            )
            .unwrap();
        println!("ack {id}");
    }
}

/// Kills the child process if the test fails before it does.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn acknowledged_strokes_survive_kill_9() {
    let dir = temp();
    let path = dir.path().join("kill.isoterra");
    WorldFile::create(&path, &meta()).unwrap();
    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "writer_process_for_kill_test",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("ISOTERRA_STORE_KILL_TEST_FILE", &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = KillOnDrop(child);
    let mut acked = Vec::new();
    let reader = BufReader::new(child.0.stdout.take().unwrap());
    for line in reader.lines() {
        let Ok(line) = line else { break };
        // The test harness may print its own text before the first line.
        if let Some(pos) = line.find("ack ") {
            acked.push(line[pos + 4..].trim().parse::<i64>().unwrap());
            if acked.len() == 40 {
                child.0.kill().unwrap(); // SIGKILL on Unix
                break;
            }
        }
    }
    child.0.wait().unwrap();
    assert_eq!(
        acked.len(),
        40,
        "the writer process acknowledged too little"
    );
    let f = WorldFile::open(&path).unwrap();
    f.integrity_check().unwrap();
    for id in &acked {
        assert!(
            f.stroke(*id).unwrap().is_some(),
            "acknowledged stroke {id} lost"
        );
    }
    assert!(f.stroke_counts().unwrap().done >= 40);
}

fn f32_values(max_len: usize) -> impl Strategy<Value = Vec<f32>> {
    prop::collection::vec(
        prop_oneof![
            -2.0f32..2.0,
            Just(0.0f32),
            Just(-0.0f32),
            prop::num::f32::NORMAL | prop::num::f32::SUBNORMAL | prop::num::f32::ZERO,
        ],
        1..max_len,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn f32_chunks_round_trip_bit_for_bit(values in f32_values(300), with_mats in any::<bool>(), w in 1u32..20) {
        let w = w.min(values.len() as u32);
        let h = values.len() as u32 / w;
        let values = values[..(w * h) as usize].to_vec();
        let mats = with_mats.then(|| values.iter().map(|v| v.to_bits() as u8).collect());
        let c = ChunkData::new(ChunkEncoding::F32, [w, h, 1], values, mats).unwrap();
        let back = decode_chunk(&encode_chunk(&c)).unwrap();
        prop_assert_eq!(back.dims(), c.dims());
        prop_assert_eq!(back.materials(), c.materials());
        let bits = |d: &ChunkData| d.values().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        prop_assert_eq!(bits(&back), bits(&c));
    }

    #[test]
    fn quantized_chunks_round_trip_within_half_a_step(values in prop::collection::vec(-1.0f32..=1.0, 1..400), d in 1u32..4) {
        let n = values.len() as u32;
        let c8 = ChunkData::new(ChunkEncoding::U8, [n, 1, 1], values.clone(), None).unwrap();
        let b8 = decode_chunk(&encode_chunk(&c8)).unwrap();
        for (a, b) in values.iter().zip(b8.values()) {
            prop_assert!((a - b).abs() <= 1.0 / 255.0 + 1e-6);
        }
        let c16 = ChunkData::new(ChunkEncoding::U16, [1, 1, n], values.clone(), Some(vec![d as u8; n as usize])).unwrap();
        let b16 = decode_chunk(&encode_chunk(&c16)).unwrap();
        prop_assert_eq!(b16.dims(), [1, 1, n]);
        for (a, b) in values.iter().zip(b16.values()) {
            prop_assert!((a - b).abs() <= 1.0 / 65535.0 + 1e-6);
        }
    }

    #[test]
    fn random_bytes_never_panic_the_codecs(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let _ = decode_chunk(&bytes);
        let _ = decode_delta(&bytes);
        let mut c = b"ITCK\x01\x00\x03\x00".to_vec();
        c.extend_from_slice(&bytes);
        let _ = decode_chunk(&c);
        let mut d = b"ITDL\x01\x03\x00\x00".to_vec();
        d.extend_from_slice(&bytes);
        prop_assert!(decode_delta(&d).is_err() || d.len() >= 12);
    }

    #[test]
    fn damaged_chunk_payloads_are_errors_or_valid(seed in 0u32..100, at in any::<prop::sample::Index>(), xor in 1u8..=255) {
        let good = chunk_payload(seed);
        let mut bad = good.clone();
        let i = at.index(bad.len());
        bad[i] ^= xor;
        match decode_chunk(&bad) {
            Ok(c) => prop_assert!(c.values().iter().all(|v| v.is_finite())),
            Err(e) => {
                let ok = matches!(e, StoreError::CorruptData { .. });
                prop_assert!(ok, "unexpected error {}", e);
            }
        }
        let cut = at.index(good.len());
        prop_assert!(decode_chunk(&good[..cut]).is_err());
    }

    #[test]
    fn deltas_round_trip_exactly(
        gaps in prop::collection::vec(1u32..5000, 0..200),
        start in 0u32..1_000_000,
        with_mats in any::<bool>(),
        rect in (0u32..100, 0u32..100, 0u32..u32::MAX, 0u32..u32::MAX),
    ) {
        let mut nodes = Vec::with_capacity(gaps.len());
        let mut at = start;
        for g in &gaps {
            nodes.push(at);
            at += g;
        }
        let n = nodes.len();
        let d = EditDelta {
            rect: isoterra_field::NodeRect::new(rect.0, rect.1, rect.2, rect.3),
            before: nodes.iter().map(|&i| (i as f32).sin()).collect(),
            after: nodes.iter().map(|&i| -(i as f32) * 1e-3).collect(),
            mat_before: if with_mats { nodes.iter().map(|&i| i as u8).collect() } else { vec![] },
            mat_after: if with_mats { vec![3; n] } else { vec![] },
            nodes,
        };
        let back = decode_delta(&encode_delta(&d).unwrap()).unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        prop_assert_eq!(bits(&back.before), bits(&d.before));
        prop_assert_eq!(bits(&back.after), bits(&d.after));
        prop_assert_eq!(back, d);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn random_files_never_panic_open(bytes in prop::collection::vec(any::<u8>(), 0..3000), sqlite_header in any::<bool>()) {
        let dir = temp();
        let path = dir.path().join("r.isoterra");
        let mut content = bytes;
        if sqlite_header {
            let mut h = b"SQLite format 3\0".to_vec();
            h.extend_from_slice(&content);
            content = h;
        }
        fs::write(&path, &content).unwrap();
        let result = WorldFile::open(&path);
        prop_assert!(result.is_err());
        prop_assert_eq!(fs::read(&path).unwrap(), content);
    }
}

#[test]
fn extra_metadata_entries_are_written_with_the_file() {
    let dir = temp();
    let path = dir.path().join("extra.isoterra");
    let file =
        WorldFile::create_with_entries(&path, &meta(), &[("materials", "[1]"), ("note", "hi")])
            .unwrap();
    assert_eq!(
        file.meta_entry("materials").unwrap().as_deref(),
        Some("[1]")
    );
    assert_eq!(file.meta_entry("note").unwrap().as_deref(), Some("hi"));
    assert_eq!(file.meta().unwrap(), meta());
    drop(file);
    for (i, bad) in [
        &[("kind", "x")][..],
        &[("params", "{}")][..],
        &[("", "x")][..],
        &[("a b", "x")][..],
        &[("twice", "1"), ("twice", "2")][..],
    ]
    .into_iter()
    .enumerate()
    {
        let p = dir.path().join(format!("bad{i}.isoterra"));
        let err = WorldFile::create_with_entries(&p, &meta(), bad).unwrap_err();
        assert!(matches!(err, StoreError::InvalidInput { .. }), "{err}");
        assert!(!p.exists());
    }
}
