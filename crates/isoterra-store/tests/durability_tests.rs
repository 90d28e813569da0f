//! Kill -9 durability: a child process edits a `side2d` world file and
//! acknowledges each call after it returns; the parent kills it with SIGKILL
//! at random moments and checks the file after every kill.
//!
//! The number of kills comes from `ISOTERRA_KILL_ROUNDS` (default 20, the CI
//! setting); run `ISOTERRA_KILL_ROUNDS=100 cargo test -p isoterra-store --test
//! durability_tests` for the longer local run. The kill moments and the
//! edits come from a fixed seed, so a failure reproduces;
//! `ISOTERRA_KILL_SEED=<u64>` explores other schedules.
//!
//! # The allowed window
//!
//! The child prints `ack <op> <id|none> <done> <total>` after each call
//! returns, so a printed line always describes a committed state. After the
//! kill the parent reads the child's output to its end (lines written before
//! the kill stay in the pipe). The file must then show either the state of
//! the last acknowledgement, or that state advanced by exactly one more
//! operation (a stroke, undo or redo that committed while the process was
//! killed before printing). Nothing acknowledged may be missing.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use isoterra_field::{Side2dGen, Side2dPreset};
use isoterra_store::{Side2dDocument, StoreError};
use isoterra_world::{Side2dBrush, Side2dParams, Side2dTool};

const WORKER_FILE_ENV: &str = "ISOTERRA_DURABILITY_WORKER_FILE";
const WORKER_SEED_ENV: &str = "ISOTERRA_DURABILITY_WORKER_SEED";
const ROUNDS_ENV: &str = "ISOTERRA_KILL_ROUNDS";
const SEED: u64 = 0x1507_e77a;

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

fn params() -> Side2dParams {
    Side2dParams::DEFAULT.with_chunk_cells(16).with_generator(
        Side2dGen::DEFAULT
            .with_preset(Side2dPreset::Hills)
            .with_seed(7)
            .with_size(64, 32)
            .with_feature_cells(8.0)
            .with_fill(0.5),
    )
}

/// Run by the durability tests in a child process: edits the file named by
/// the environment forever (bounded), acknowledging each returned call.
#[test]
#[ignore = "worker process for the kill -9 durability tests"]
fn durability_worker() {
    let Ok(path) = std::env::var(WORKER_FILE_ENV) else {
        return;
    };
    let seed = std::env::var(WORKER_SEED_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let mut rng = Rng(seed);
    let mut doc = Side2dDocument::open(&path).unwrap();
    // Bounded, so a worker whose parent died cannot run forever.
    for _ in 0..5_000 {
        let roll = rng.below(10);
        let (op, id) = if roll < 6 {
            let tool = if rng.below(2) == 0 {
                Side2dTool::Dig
            } else {
                Side2dTool::Fill
            };
            let brush = Side2dBrush::new(
                tool,
                [rng.unit() * 64.0, rng.unit() * 32.0],
                2.0 + rng.unit() * 3.0,
            )
            .with_material(1 + rng.below(3) as u8);
            ("stroke", doc.stroke(&brush).unwrap().id)
        } else if roll < 8 {
            ("undo", doc.undo().unwrap())
        } else {
            ("redo", doc.redo().unwrap())
        };
        let c = doc.file().stroke_counts().unwrap();
        let id = id.map_or("none".to_string(), |i| i.to_string());
        println!("ack {op} {id} {} {}", c.done, c.total());
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

/// The parent's picture of the stroke log: ids in order, with undone flags.
#[derive(Debug, Clone, Default, PartialEq)]
struct Model {
    strokes: Vec<(i64, bool)>,
}

impl Model {
    fn counts(&self) -> (u64, u64) {
        let done = self.strokes.iter().filter(|s| !s.1).count() as u64;
        (done, self.strokes.len() as u64)
    }

    /// Applies one acknowledged operation.
    fn apply(&mut self, op: &str, id: Option<i64>) {
        let Some(id) = id else { return };
        match op {
            "stroke" => {
                self.strokes.retain(|s| !s.1);
                self.strokes.push((id, false));
            }
            "undo" => {
                let s = self.strokes.iter_mut().find(|s| s.0 == id).unwrap();
                assert!(!s.1, "undo of a stroke the model holds undone");
                s.1 = true;
            }
            "redo" => {
                let s = self.strokes.iter_mut().find(|s| s.0 == id).unwrap();
                assert!(s.1, "redo of a stroke the model holds done");
                s.1 = false;
            }
            other => panic!("unknown acknowledgement {other}"),
        }
    }

    /// The model after undoing, when there is something to undo.
    fn undone(&self) -> Option<Model> {
        let id = self.strokes.iter().rev().find(|s| !s.1)?.0;
        let mut m = self.clone();
        m.apply("undo", Some(id));
        Some(m)
    }

    /// The model after redoing, when there is something to redo.
    fn redone(&self) -> Option<Model> {
        let id = self.strokes.iter().find(|s| s.1)?.0;
        let mut m = self.clone();
        m.apply("redo", Some(id));
        Some(m)
    }

    /// True when the file holds exactly the strokes of `self`, with the same
    /// flags, besides possibly newer ones (checked separately by counts).
    fn matches(&self, doc: &Side2dDocument) -> bool {
        self.strokes.iter().all(|&(id, undone)| {
            doc.file()
                .stroke(id)
                .unwrap()
                .is_some_and(|r| r.undone == undone)
        })
    }
}

/// Parses `ack <op> <id|none> <done> <total>` anywhere in a line (the test
/// harness may print its own text before it).
fn parse_ack(line: &str) -> Option<(String, Option<i64>, u64, u64)> {
    let rest = &line[line.find("ack ")? + 4..];
    let mut it = rest.split_whitespace();
    let op = it.next()?.to_string();
    let id = match it.next()? {
        "none" => None,
        s => Some(s.parse().ok()?),
    };
    let done = it.next()?.parse().ok()?;
    let total = it.next()?.parse().ok()?;
    Some((op, id, done, total))
}

/// Checks the file against the model after a kill and returns the model of
/// what the file holds (the model itself or one operation further).
fn check_after_kill(path: &Path, model: &Model, round: u32) -> Model {
    let doc = Side2dDocument::open(path)
        .unwrap_or_else(|e| panic!("round {round}: the file does not open: {e}"));
    doc.file()
        .integrity_check()
        .unwrap_or_else(|e| panic!("round {round}: integrity check: {e}"));
    let c = doc.file().stroke_counts().unwrap();
    let found = (c.done, c.total());
    if found == model.counts() && model.matches(&doc) {
        return model.clone();
    }
    for next in [model.undone(), model.redone()].into_iter().flatten() {
        if found == next.counts() && next.matches(&doc) {
            return next;
        }
    }
    // One unacknowledged stroke: the redo tail is gone, one newer stroke done.
    let mut next = model.clone();
    next.strokes.retain(|s| !s.1);
    let max = next.strokes.last().map_or(0, |s| s.0);
    if let Some(last) = doc.file().last_done_stroke().unwrap()
        && last.id > max
    {
        next.strokes.push((last.id, false));
        if found == next.counts() && next.matches(&doc) {
            return next;
        }
    }
    panic!(
        "round {round}: the file holds {found:?} (done, total), which is neither the \
         acknowledged {:?} nor one operation past it; model {model:?}",
        model.counts()
    );
}

/// The seed of the kill moments and the workers' edits: `SEED`, or
/// `ISOTERRA_KILL_SEED` to explore other schedules.
fn seed() -> u64 {
    std::env::var("ISOTERRA_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SEED)
}

fn rounds() -> u32 {
    std::env::var(ROUNDS_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(20)
}

#[test]
fn acknowledged_edits_survive_repeated_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("durable.isoterra");
    Side2dDocument::create(&path, &params())
        .unwrap()
        .close()
        .unwrap();
    let mut rng = Rng(seed());
    let mut model = Model::default();
    let mut acks_total = 0usize;
    let mut beyond_ack = 0u32;
    let rounds = rounds();
    for round in 0..rounds {
        let child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                "durability_worker",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(WORKER_FILE_ENV, &path)
            .env(WORKER_SEED_ENV, rng.next().to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut child = KillOnDrop(child);
        let kill_after = 1 + rng.below(12) as usize;
        let pause_us = rng.below(3_000);
        let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
        let mut acks = Vec::new();
        for line in lines.by_ref() {
            let Ok(line) = line else { break };
            if let Some(ack) = parse_ack(&line) {
                acks.push(ack);
                if acks.len() == kill_after {
                    break;
                }
            }
        }
        assert_eq!(
            acks.len(),
            kill_after,
            "round {round}: the worker stopped before it was killed"
        );
        // Kill at a moment between acknowledgements, not only right after one.
        std::thread::sleep(Duration::from_micros(pause_us));
        child.0.kill().unwrap(); // SIGKILL on Unix
        child.0.wait().unwrap();
        // What the worker printed before it died is acknowledged too.
        for line in lines {
            let Ok(line) = line else { break };
            if let Some(ack) = parse_ack(&line) {
                acks.push(ack);
            }
        }
        acks_total += acks.len();
        for (op, id, done, total) in &acks {
            model.apply(op, *id);
            assert_eq!(
                model.counts(),
                (*done, *total),
                "round {round}: the worker's own counts disagree with its acknowledgements"
            );
        }
        let next = check_after_kill(&path, &model, round);
        if next != model {
            beyond_ack += 1;
        }
        model = next;
    }
    assert!(acks_total >= rounds as usize);
    // The file stays editable after the last kill: undo everything done.
    let mut doc = Side2dDocument::open(&path).unwrap();
    let done = model.counts().0;
    for _ in 0..done {
        assert!(doc.undo().unwrap().is_some());
    }
    assert_eq!(doc.undo().unwrap(), None);
    doc.file().integrity_check().unwrap();
    let generated = Side2dDocument::create(dir.path().join("fresh.isoterra"), &params())
        .unwrap()
        .content_hash();
    assert_eq!(doc.content_hash(), generated);
    eprintln!(
        "{rounds} kills, {acks_total} acknowledgements, {beyond_ack} files one operation past the last acknowledgement"
    );
}

const SHARED_WORKER_STROKES: usize = 30;

/// Run by `two_processes_editing_one_file_never_corrupt_it` in two child
/// processes at once: each records `SHARED_WORKER_STROKES` strokes on the
/// same file, handling the documented errors of a shared file:
/// [`StoreError::Conflict`] (the other process wrote since this one
/// opened: reopen to see its changes, then stroke again) and
/// [`StoreError::Busy`] (the other holds the write lock past the busy
/// timeout: try again).
#[test]
#[ignore = "worker process for the two-process test"]
fn shared_file_worker() {
    let Ok(path) = std::env::var(WORKER_FILE_ENV) else {
        return;
    };
    let seed = std::env::var(WORKER_SEED_ENV)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let mut rng = Rng(seed);
    let open = |path: &str| loop {
        match Side2dDocument::open(path) {
            Ok(doc) => return doc,
            Err(StoreError::Busy { .. }) => continue,
            Err(e) => panic!("open: {e}"),
        }
    };
    // Start together with the other worker, so their strokes interleave.
    let go = format!("{path}.go");
    for _ in 0..5_000 {
        if Path::new(&go).exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut doc = open(&path);
    let (mut acked, mut conflicts, mut attempts) = (0, 0, 0);
    while acked < SHARED_WORKER_STROKES && attempts < 10_000 {
        attempts += 1;
        let tool = if rng.below(2) == 0 {
            Side2dTool::Dig
        } else {
            Side2dTool::Fill
        };
        let brush = Side2dBrush::new(tool, [rng.unit() * 64.0, rng.unit() * 32.0], 3.0);
        match doc.stroke(&brush) {
            Ok(out) => {
                if let Some(id) = out.id {
                    acked += 1;
                    println!("ack stroke {id}");
                }
            }
            Err(StoreError::Conflict { .. }) => {
                conflicts += 1;
                doc = open(&path);
            }
            Err(StoreError::Busy { .. }) => {}
            Err(e) => panic!("stroke: {e}"),
        }
    }
    println!("done {acked} strokes, {conflicts} conflicts");
}

#[test]
fn two_processes_editing_one_file_never_corrupt_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.isoterra");
    Side2dDocument::create(&path, &params())
        .unwrap()
        .close()
        .unwrap();
    let workers: Vec<_> = (0..2u64)
        .map(|w| {
            KillOnDrop(
                Command::new(std::env::current_exe().unwrap())
                    .args([
                        "--ignored",
                        "--exact",
                        "shared_file_worker",
                        "--nocapture",
                        "--test-threads=1",
                    ])
                    .env(WORKER_FILE_ENV, &path)
                    .env(WORKER_SEED_ENV, (SEED + w).to_string())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::inherit())
                    .spawn()
                    .unwrap(),
            )
        })
        .collect();
    let mut go = path.clone().into_os_string();
    go.push(".go");
    std::fs::write(&go, b"").unwrap();
    // Both run at once; read each one's output on its own thread.
    let readers: Vec<_> = workers
        .into_iter()
        .map(|mut w| {
            let out = w.0.stdout.take().unwrap();
            std::thread::spawn(move || {
                let mut ids = Vec::new();
                let mut summary = None;
                for line in BufReader::new(out).lines() {
                    let line = line.unwrap();
                    if let Some(pos) = line.find("ack stroke ") {
                        ids.push(line[pos + 11..].trim().parse::<i64>().unwrap());
                    }
                    if let Some(pos) = line.find("done ") {
                        summary = Some(line[pos..].to_string());
                    }
                }
                let status = w.0.wait().unwrap();
                (ids, summary.filter(|_| status.success()))
            })
        })
        .collect();
    let mut all = Vec::new();
    for r in readers {
        let (ids, summary) = r.join().unwrap();
        let summary = summary.expect("a worker failed");
        eprintln!("worker: {summary}");
        assert_eq!(ids.len(), SHARED_WORKER_STROKES);
        all.extend(ids);
    }
    let doc = Side2dDocument::open(&path).unwrap();
    doc.file().integrity_check().unwrap();
    let mut sorted = all.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), all.len(), "two acknowledgements share an id");
    for id in &all {
        let rec = doc.file().stroke(*id).unwrap();
        assert!(
            rec.is_some_and(|r| !r.undone),
            "acknowledged stroke {id} is missing or undone"
        );
    }
    let counts = doc.file().stroke_counts().unwrap();
    assert_eq!(counts.done, 2 * SHARED_WORKER_STROKES as u64);
    assert_eq!(counts.undone, 0);
    // The interleaved log is one coherent history: every stroke undoes onto
    // the state the one before it left, back to the generated world.
    let generated = Side2dDocument::create(dir.path().join("fresh.isoterra"), &params())
        .unwrap()
        .content_hash();
    let mut doc = doc;
    for _ in 0..counts.done {
        assert!(doc.undo().unwrap().is_some());
    }
    assert_eq!(doc.content_hash(), generated);
}

/// The window check itself: a file one operation past the acknowledgements
/// is accepted (and reported as such), two operations past is not.
#[test]
fn the_allowed_window_is_one_operation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("window.isoterra");
    let mut doc = Side2dDocument::create(&path, &params()).unwrap();
    let mut ids = Vec::new();
    for x in [10.0, 30.0, 50.0] {
        let brush = Side2dBrush::new(Side2dTool::Dig, [x, 6.0], 4.0);
        ids.push(doc.stroke(&brush).unwrap().id.unwrap());
    }
    assert_eq!(doc.undo().unwrap(), Some(ids[2]));
    drop(doc);
    // The file: strokes 0 and 1 done, 2 undone.
    let exact = Model {
        strokes: vec![(ids[0], false), (ids[1], false), (ids[2], true)],
    };
    assert_eq!(check_after_kill(&path, &exact, 0), exact);
    // Acknowledged up to the third stroke; the undo was not acknowledged.
    let before_undo = Model {
        strokes: vec![(ids[0], false), (ids[1], false), (ids[2], false)],
    };
    assert_eq!(check_after_kill(&path, &before_undo, 0), exact);
    // Acknowledged up to the second stroke: the third stroke and the undo
    // were not, two operations.
    let two_behind = Model {
        strokes: vec![(ids[0], false), (ids[1], false)],
    };
    let caught = std::panic::catch_unwind(|| check_after_kill(&path, &two_behind, 0));
    assert!(
        caught.is_err(),
        "two unacknowledged operations were accepted"
    );
    // An acknowledged stroke that the file lacks is caught.
    let lost = Model {
        strokes: vec![
            (ids[0], false),
            (ids[1], false),
            (ids[2], true),
            (ids[2] + 1, false),
        ],
    };
    let caught = std::panic::catch_unwind(|| check_after_kill(&path, &lost, 0));
    assert!(caught.is_err(), "a lost acknowledged stroke was accepted");
}

/// Opening while another handle commits never reports a healthy file as
/// damaged: the open-time checks read one snapshot.
#[test]
fn opening_during_commits_sees_one_consistent_state() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("busy.isoterra");
    Side2dDocument::create(&path, &params())
        .unwrap()
        .close()
        .unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let started = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (path, stop, started) = (path.clone(), stop.clone(), started.clone());
        std::thread::spawn(move || {
            let mut doc = Side2dDocument::open(&path).unwrap();
            started.store(true, std::sync::atomic::Ordering::Relaxed);
            let mut rng = Rng(SEED);
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && n < 2_000 {
                let tool = if n % 2 == 0 {
                    Side2dTool::Dig
                } else {
                    Side2dTool::Fill
                };
                let brush = Side2dBrush::new(tool, [rng.unit() * 64.0, rng.unit() * 32.0], 3.0);
                doc.stroke(&brush).unwrap();
                if n % 3 == 0 {
                    doc.undo().unwrap();
                }
                n += 1;
            }
            n
        })
    };
    while !started.load(std::sync::atomic::Ordering::Relaxed) && !writer.is_finished() {
        std::thread::yield_now();
    }
    let mut opened = 0;
    for _ in 0..1_500 {
        match isoterra_store::WorldFile::open(&path) {
            Ok(f) => {
                opened += 1;
                drop(f);
            }
            Err(StoreError::Busy { .. }) => {}
            Err(e) => panic!("open during commits: {e}"),
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(writer.join().unwrap() > 0);
    assert!(opened > 0);
    Side2dDocument::open(&path)
        .unwrap()
        .file()
        .integrity_check()
        .unwrap();
}
