//! `isoterra bake`: meshes and colliders of a region, chunk by chunk, into
//! the world file (its `baked` table) or a folder of .glb files.
//!
//! Chunks are baked on a rayon pool and handed to this thread, which commits
//! them in small batches (every 64 chunks or 100 ms): whatever was committed
//! survives Ctrl-C or a crash. Each chunk's result depends only on the world
//! and the chunk, so thread count and order do not change a byte.
//!
//! Staleness is per chunk: every row (or journal line) records the chunk's
//! input stamp ([`BakeInputs`]: the world's metadata and the stored chunks
//! the chunk reads). A rerun skips the chunks whose stamp is unchanged and
//! bakes the others again, so after an edit only the chunks around it are
//! redone, and a resumed bake picks up where it stopped.
//!
//! `--part K/N` bakes one of N contiguous ranges of the plan's key order, so
//! a region splits across processes or machines; `isoterra merge` brings
//! part files together. Rows are written through [`ChunkStore`], so a world
//! on a PostgreSQL server (a `postgres://` URL) bakes the same way, and
//! there `--queue` shares the work among any number of workers on any
//! machines through the server ([`PgBakeQueue`]).

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use isoterra::export::{GlbMesh, export_glb};
use isoterra::kind::{BakeInputs, BakePlan, BakeSource, ChunkBaker, Document};
use isoterra::store::{
    BakedChunk, BakedCollider, BakedRow, ChunkKey, ChunkStore, PgBakeQueue, PgStore, WorldFile,
    encode_baked, is_postgres_url, redact_url,
};
use rayon::prelude::*;
use serde_json::json;

use crate::args::{BakeArgs, HeightLayout};
use crate::commands::write_atomic;

/// Chunks per commit at most.
const BATCH_CHUNKS: usize = 64;
/// Longest wait between commits while chunks come in.
const BATCH_TIME: Duration = Duration::from_millis(100);
/// The journal of a folder bake: one JSON line per finished chunk.
const JOURNAL: &str = "bake-journal.jsonl";
/// The manifest of a folder bake.
const MANIFEST: &str = "manifest.json";

/// The hash `info --hash` prints: 16 hex digits of FNV-1a 64 over `ITIH`,
/// the kind, the seed, the generator (the recipe's `params` as JSON) and the
/// world's content hash combined with its baked chunks. Two files print the
/// same hash when they generate the same ground and hold the same edits and
/// bakes, whatever the history; two unedited endless worlds of other seeds
/// or recipes print different ones (their content hashes alone, which cover
/// edits, would agree).
pub(crate) fn stored_hash<S: ChunkStore>(doc: &Document<S>) -> anyhow::Result<String> {
    let world = doc.content_hash();
    let stored = doc.store().stored_content_hash(&world)?;
    let info = doc.info_json();
    let recipe = doc.recipe().to_json_value();
    let mut h = isoterra::field::hash::Fnv1a64::new();
    h.write(b"ITIH");
    h.write(doc.kind().name().as_bytes());
    h.write(info["seed"].to_string().as_bytes());
    h.write(serde_json::to_string(&recipe["params"])?.as_bytes());
    h.write(stored.as_bytes());
    Ok(h.hex())
}

/// What a worker hands back for one chunk.
struct Finished {
    vertices: u64,
    triangles: u64,
    bytes: u64,
    empty: bool,
    /// True when it replaces a stale row (or journal line).
    stale: bool,
    /// File mode: the row to store.
    row: Option<BakedRow>,
    /// Folder mode: the journal line.
    line: Option<serde_json::Value>,
}

/// Where results go.
enum Sink {
    /// A chunk store (the world file) and its name for messages.
    File(Box<dyn ChunkStore>, PathBuf),
    Folder {
        dir: PathBuf,
        journal: fs::File,
    },
}

#[derive(Default)]
struct Totals {
    baked: u64,
    rebaked: u64,
    empty: u64,
    vertices: u64,
    triangles: u64,
    bytes: u64,
}

impl Totals {
    /// Counts one stored chunk.
    fn add(&mut self, f: &Finished) {
        self.baked += 1;
        self.rebaked += u64::from(f.stale);
        self.empty += u64::from(f.empty);
        self.vertices += f.vertices;
        self.triangles += f.triangles;
        self.bytes += f.bytes;
    }

    /// Chunks stored per second of baking.
    fn rate(&self, bake_seconds: f64) -> f64 {
        if bake_seconds > 0.0 {
            self.baked as f64 / bake_seconds
        } else {
            0.0
        }
    }

    /// The `--json` summary's counts and times, which every bake prints.
    fn summary(&self, skipped: u64, seconds: f64, bake_seconds: f64) -> serde_json::Value {
        json!({
            "baked": self.baked,
            "new": self.baked - self.rebaked,
            "rebaked": self.rebaked,
            "skipped": skipped,
            "empty": self.empty,
            "vertices": self.vertices,
            "triangles": self.triangles,
            "bytes": self.bytes,
            "seconds": seconds,
            "bake_seconds": bake_seconds,
            "chunks_per_s": self.rate(bake_seconds),
        })
    }

    fn merge(&mut self, o: &Totals) {
        self.baked += o.baked;
        self.rebaked += o.rebaked;
        self.empty += o.empty;
        self.vertices += o.vertices;
        self.triangles += o.triangles;
        self.bytes += o.bytes;
    }
}

/// Chunks per queue job unless `--job-chunks` says otherwise.
const JOB_CHUNKS: u64 = 64;

pub fn run(a: &BakeArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let threads = match a.threads {
        Some(0) => bail!("--threads 0: use at least 1 thread (or leave it out for all cores)"),
        Some(n) if n > 1024 => bail!("--threads {n}: at most 1024"),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let part = a.part.as_deref().map(parse_part).transpose()?;
    let url = a.file.to_str().filter(|l| is_postgres_url(l));
    if a.queue {
        if url.is_none() {
            bail!(
                "--queue shares a bake among workers through a PostgreSQL server; {} is a                  world file (split a file's bake with --part K/N and merge the parts)",
                a.file.display()
            );
        }
        if a.part.is_some() || a.out.is_some() || a.shuffle.is_some() {
            bail!("--queue hands out the chunks itself: leave out --part, --out and --shuffle");
        }
    }
    let job_chunks = match a.job_chunks {
        Some(_) if !a.queue => bail!("--job-chunks sizes the jobs of --queue; add --queue"),
        Some(0) => bail!("--job-chunks 0: a job holds at least 1 chunk"),
        Some(n) if n > 1 << 20 => bail!("--job-chunks {n}: at most {}", 1u64 << 20),
        Some(n) => n,
        None => JOB_CHUNKS,
    };
    let coords = region_numbers(&a.region)?;
    let world = super::edit::open_world(&a.file)?;
    super::edit::with_world!(world, doc => {
        let queue = url.filter(|_| a.queue).map(|u| (u, job_chunks));
        bake_in(doc, a, t0, threads, part, &coords, queue)
    })
}

/// The world's name in messages: a file's path, or a server URL without
/// its password.
pub(crate) fn shown(location: &Path) -> String {
    redact_url(&location.display().to_string())
}

#[allow(clippy::too_many_arguments)]
fn bake_in<S: ChunkStore + Send>(
    doc: &mut Document<S>,
    a: &BakeArgs,
    t0: Instant,
    threads: usize,
    part: Option<(u64, u64)>,
    coords: &[f32],
    queue: Option<(&str, u64)>,
) -> anyhow::Result<()> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start the worker threads")?;
    pool.install(|| doc.rebuild());
    let source = doc.bake_source();
    let file = doc.store();
    let axes = source.region_axes();
    if coords.len() != 2 * axes {
        bail!(
            "region `{}` has {} numbers; a {} world takes {}",
            a.region,
            coords.len(),
            source.kind(),
            region_form(source.kind())
        );
    }
    let (lo, hi) = coords.split_at(axes);
    let plan = source
        .plan(lo, hi, a.lod)
        .with_context(|| format!("cannot bake region `{}`", a.region))?;
    // What each chunk of this part is made from now.
    let inputs = BakeInputs::read(file)
        .with_context(|| format!("cannot read the chunks of {}", shown(&a.file)))?;
    if let Some((url, job_chunks)) = queue {
        let world = file.world_stamp()?;
        let existing = file.baked_sources()?;
        let job = QueueJob {
            url,
            job_chunks,
            world: &world,
            existing: &existing,
        };
        return bake_queue(a, t0, threads, &source, &plan, &inputs, &job);
    }
    let (index, parts) = part.unwrap_or((0, 1));
    let range = plan.part_range(index, parts)?;
    let wanted = range.end - range.start;
    let keys: Vec<ChunkKey> = plan.part_keys(index, parts)?.collect();
    let stamps: Vec<String> = pool.install(|| {
        keys.par_iter()
            .map(|k| inputs.stamp(&source, k))
            .collect::<Result<_, _>>()
    })?;

    // Where results go, and what is already there.
    let (mut sink, existing) = match &a.out {
        None => {
            let out = open_store(&a.file)?;
            let existing = out.baked_sources()?;
            (Sink::File(out, a.file.clone()), existing)
        }
        Some(dir) => {
            let (journal, existing) = open_folder(dir)?;
            (
                Sink::Folder {
                    dir: dir.clone(),
                    journal,
                },
                existing,
            )
        }
    };
    // Current rows are skipped; stale ones are baked again with new ones.
    let mut todo: Vec<Todo> = Vec::new();
    let mut stale = 0u64;
    for (key, stamp) in keys.into_iter().zip(stamps) {
        match existing.get(&key) {
            Some(recorded) if *recorded == stamp => {}
            other => {
                stale += u64::from(other.is_some());
                todo.push(Todo {
                    key,
                    stamp,
                    stale: other.is_some(),
                });
            }
        }
    }
    drop(existing);
    let skipped = wanted - todo.len() as u64;
    if let Some(seed) = a.shuffle {
        shuffle(&mut todo, seed);
    }

    let bar = if a.quiet || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let bar =
            ProgressBar::with_draw_target(Some(todo.len() as u64), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} chunks  {rate}  ETA {eta}  {msg}")?
                .with_key(
                    "rate",
                    |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{:.0} chunks/s", state.per_sec());
                    },
                )
                .progress_chars("=> "),
        );
        if skipped > 0 || stale > 0 {
            bar.set_message(format!("({skipped} current, {stale} stale)"));
        }
        bar
    };

    let t_bake = Instant::now();
    let stop = AtomicBool::new(false);
    let folder = a.out.clone();
    let kind = source.kind();
    let (tx, rx) = sync_channel::<Result<Finished, String>>(4 * BATCH_CHUNKS);
    let mut totals = Totals::default();
    let outcome: anyhow::Result<()> = std::thread::scope(|s| {
        let todo = &todo;
        let stop = &stop;
        let folder = folder.as_deref();
        let pool = &pool;
        s.spawn(move || {
            pool.install(|| {
                todo.par_iter()
                    .for_each_init(ChunkBaker::new, |baker, job| {
                        if stop.load(Ordering::Relaxed) {
                            return;
                        }
                        let key = &job.key;
                        let r = bake_one(baker, &source, job, folder, kind, a.layout)
                            .map_err(|e| format!("chunk {:?}: {e:#}", [key.x, key.y, key.z]));
                        if tx.send(r).is_err() {
                            stop.store(true, Ordering::Relaxed);
                        }
                    });
            });
            drop(tx);
        });
        let mut batch: Vec<Finished> = Vec::with_capacity(BATCH_CHUNKS);
        let mut last = Instant::now();
        let mut failure = None;
        loop {
            let next = rx.recv_timeout(BATCH_TIME);
            let finished = match next {
                Ok(Ok(f)) => Some(f),
                Ok(Err(e)) => {
                    stop.store(true, Ordering::Relaxed);
                    failure.get_or_insert(e);
                    None
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => None,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            };
            if let Some(f) = finished {
                batch.push(f);
            }
            if !batch.is_empty() && (batch.len() >= BATCH_CHUNKS || last.elapsed() >= BATCH_TIME) {
                if let Err(e) = commit(&mut sink, &mut batch, &mut totals, &bar) {
                    stop.store(true, Ordering::Relaxed);
                    // Drain so the workers can finish.
                    for _ in rx.iter() {}
                    return Err(e);
                }
                last = Instant::now();
            }
        }
        commit(&mut sink, &mut batch, &mut totals, &bar)?;
        match failure {
            Some(e) => bail!("bake stopped: {e}"),
            None => Ok(()),
        }
    });
    bar.finish_and_clear();
    outcome?;
    let bake_seconds = t_bake.elapsed().as_secs_f64();

    if let Sink::Folder { dir, .. } = &sink {
        let world = file.world_stamp()?;
        let current = |k: &ChunkKey| inputs.stamp(&source, k).ok();
        write_manifest(dir, &a.file, &world, &current, &plan, kind)?;
    }
    let seconds = t0.elapsed().as_secs_f64();
    let rate = totals.rate(bake_seconds);
    if a.json {
        let mut v = totals.summary(skipped, seconds, bake_seconds);
        v["kind"] = json!(kind);
        v["lod"] = json!(plan.lod);
        v["threads"] = json!(threads);
        v["chunks"] = json!(wanted);
        v["plan_chunks"] = json!(plan.count());
        v["part"] = json!(part.map(|(k, n)| [k + 1, n]));
        v["first"] = json!(range.start);
        println!("{v}");
    } else {
        let of = match part {
            Some((k, n)) => format!(
                "{wanted} (part {} of {n}: chunks {}..{} of {})",
                k + 1,
                range.start,
                range.end,
                plan.count()
            ),
            None => plan.count().to_string(),
        };
        println!(
            "baked {} chunks ({skipped} skipped as current, {} rebaked after edits, {} empty) of {of} at LOD {}: {} vertices, {} triangles, {} bytes in {seconds:.2} s ({rate:.1} chunks/s, {threads} thread{})",
            totals.baked,
            totals.rebaked,
            totals.empty,
            plan.lod,
            totals.vertices,
            totals.triangles,
            totals.bytes,
            if threads == 1 { "" } else { "s" },
        );
    }
    Ok(())
}

/// Opens the chunk store named by `path` for writing baked rows: a world
/// on a PostgreSQL server for a `postgres://` URL, a world file otherwise.
pub(crate) fn open_store(path: &Path) -> anyhow::Result<Box<dyn ChunkStore>> {
    if let Some(url) = path.to_str().filter(|l| is_postgres_url(l)) {
        let store = PgStore::open_existing(url)
            .with_context(|| format!("cannot open {} for writing", redact_url(url)))?;
        return Ok(Box::new(store));
    }
    let file = WorldFile::open(path)
        .with_context(|| format!("cannot open {} for writing", path.display()))?;
    Ok(Box::new(file))
}

/// What a queue worker needs beside the plan: the server, the job size,
/// the world's stamp and the rows already baked.
struct QueueJob<'a> {
    url: &'a str,
    job_chunks: u64,
    world: &'a str,
    existing: &'a BTreeMap<ChunkKey, String>,
}

/// The run id of a queue bake: what decides its chunks (the kind, the
/// plan, the world as it stands) and the job size, so every worker baking
/// the same region of the same world joins one run.
fn run_id(kind: &str, plan: &BakePlan, world: &str, job_chunks: u64) -> String {
    let mut h = isoterra::field::hash::Fnv1a64::new();
    h.write(b"ITBQ");
    h.write(kind.as_bytes());
    h.write(&plan.lod.to_le_bytes());
    h.write(&plan.layer.0.to_le_bytes());
    h.write(&plan.layer_count.to_le_bytes());
    for v in plan.min.iter().chain(&plan.max) {
        h.write(&v.to_le_bytes());
    }
    h.write(world.as_bytes());
    h.write(&job_chunks.to_le_bytes());
    h.hex()
}

/// This worker's name in the jobs table: the host and the process.
fn worker_name() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".into());
    format!("{host}:{}", std::process::id())
}

/// One thread of a queue worker: claims jobs until none is left (or
/// another thread failed) and bakes each one alone. Returns what it stored:
/// the totals, the jobs and the chunks skipped as current.
#[allow(clippy::too_many_arguments)]
fn claim_jobs(
    queue: &mut PgBakeQueue,
    a: &BakeArgs,
    source: &BakeSource<'_>,
    plan: &BakePlan,
    inputs: &BakeInputs,
    q: &QueueJob<'_>,
    stop: &AtomicBool,
    bar: &ProgressBar,
) -> anyhow::Result<(Totals, u64, u64)> {
    let kind = source.kind();
    let mut baker = ChunkBaker::new();
    let mut totals = Totals::default();
    let (mut jobs, mut skipped) = (0u64, 0u64);
    while !stop.load(Ordering::Relaxed) {
        let mut pending = Totals::default();
        let mut current = 0u64;
        let claimed = queue.work(|job| -> anyhow::Result<Vec<BakedRow>> {
            pending = Totals::default();
            current = 0;
            let mut rows = Vec::new();
            for key in plan.keys_in(job.start..job.end) {
                let stamp = inputs.stamp(source, &key)?;
                let stale = match q.existing.get(&key) {
                    Some(recorded) if *recorded == stamp => {
                        current += 1;
                        continue;
                    }
                    other => other.is_some(),
                };
                let todo = Todo { key, stamp, stale };
                let mut f = bake_one(&mut baker, source, &todo, None, kind, a.layout)
                    .with_context(|| format!("chunk {:?}", [key.x, key.y, key.z]))?;
                rows.extend(f.row.take());
                pending.add(&f);
            }
            Ok(rows)
        })?;
        if claimed.is_none() {
            break;
        }
        jobs += 1;
        skipped += current;
        totals.merge(&pending);
        bar.inc(1);
    }
    Ok((totals, jobs, skipped))
}

/// `bake URL --queue`: claims jobs of the world's run until none is left
/// (see [`PgBakeQueue`]), on `threads` threads each with a connection of
/// its own; each job's chunks are stored with the job in one transaction.
#[allow(clippy::too_many_arguments)]
fn bake_queue(
    a: &BakeArgs,
    t0: Instant,
    threads: usize,
    source: &BakeSource<'_>,
    plan: &BakePlan,
    inputs: &BakeInputs,
    q: &QueueJob<'_>,
) -> anyhow::Result<()> {
    let kind = source.kind();
    let run = run_id(kind, plan, q.world, q.job_chunks);
    let described = format!(
        "{kind} region {} at LOD {}: chunks {:?}..={:?}, {} layer(s) from {}",
        a.region, plan.lod, plan.min, plan.max, plan.layer_count, plan.layer.0
    );
    // Each thread's loop joins the run with a connection of its own.
    let join = || {
        PgBakeQueue::open(
            q.url,
            &run,
            &described,
            plan.count(),
            q.job_chunks,
            &worker_name(),
        )
        .with_context(|| format!("cannot join the bake queue of {}", redact_url(q.url)))
    };
    let queue = join()?;
    let bar = if a.quiet || !std::io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let bar = ProgressBar::with_draw_target(Some(queue.jobs()), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} jobs of run {msg}")?
                .progress_chars("=> "),
        );
        bar.set_message(run.clone());
        bar
    };
    let t_bake = Instant::now();
    // One claim loop per thread, each with its own connection and baking
    // its job alone: while one thread waits for its commit, the others
    // bake (one loop baking each job on all threads waited for every
    // commit with every thread idle).
    let stop = AtomicBool::new(false);
    let mut first = Some(queue);
    let mut queues = Vec::with_capacity(threads);
    for _ in 0..threads {
        queues.push(match first.take() {
            Some(q) => q,
            None => join()?,
        });
    }
    let results: Vec<anyhow::Result<(Totals, u64, u64)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = queues
            .iter_mut()
            .map(|queue| {
                let (stop, bar) = (&stop, &bar);
                scope.spawn(move || {
                    let out = claim_jobs(queue, a, source, plan, inputs, q, stop, bar);
                    if out.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a bake thread panicked")))
            })
            .collect()
    });
    let mut totals = Totals::default();
    let (mut jobs, mut skipped) = (0u64, 0u64);
    for r in results {
        let (t, j, k) = r?;
        totals.merge(&t);
        jobs += j;
        skipped += k;
    }
    let mut queue = queues.swap_remove(0);
    bar.finish_and_clear();
    let progress = queue.progress()?;
    let bake_seconds = t_bake.elapsed().as_secs_f64();
    let seconds = t0.elapsed().as_secs_f64();
    let rate = totals.rate(bake_seconds);
    if a.json {
        let mut v = totals.summary(skipped, seconds, bake_seconds);
        v["kind"] = json!(kind);
        v["lod"] = json!(plan.lod);
        v["threads"] = json!(threads);
        v["plan_chunks"] = json!(plan.count());
        v["queue"] = json!({
            "run": run,
            "jobs": progress.jobs,
            "done": progress.done,
            "job_chunks": q.job_chunks,
            "jobs_here": jobs,
        });
        println!("{v}");
    } else {
        println!(
            "baked {} chunks ({skipped} skipped as current, {} rebaked after edits, {} empty) in {jobs} job{} of run {run} ({} of {} jobs done) at LOD {}: {} vertices, {} triangles, {} bytes in {seconds:.2} s ({rate:.1} chunks/s, {threads} thread{})",
            totals.baked,
            totals.rebaked,
            totals.empty,
            if jobs == 1 { "" } else { "s" },
            progress.done,
            progress.jobs,
            plan.lod,
            totals.vertices,
            totals.triangles,
            totals.bytes,
            if threads == 1 { "" } else { "s" },
        );
    }
    Ok(())
}

/// Parses `--part K/N` (K counted from 1) into the part counted from 0 and
/// the number of parts.
fn parse_part(text: &str) -> anyhow::Result<(u64, u64)> {
    let (k, n) = text.split_once('/').with_context(|| {
        format!("--part `{text}`: write it as K/N, e.g. 2/4 for the second of four parts")
    })?;
    let number = |v: &str, what: &str| {
        v.trim().parse::<u64>().with_context(|| {
            format!("--part `{text}`: {what} `{v}` is not a whole number (write K/N, e.g. 2/4)")
        })
    };
    let (k, n) = (number(k, "K")?, number(n, "N")?);
    if n == 0 {
        bail!("--part `{text}`: 0 parts; N must be at least 1");
    }
    if k == 0 || k > n {
        bail!("--part `{text}`: there is no part {k}; parts are numbered from 1 to {n}");
    }
    Ok((k - 1, n))
}

/// The numbers of `--region`, any count (the kind decides how many fit).
fn region_numbers(text: &str) -> anyhow::Result<Vec<f32>> {
    text.split(',')
        .map(|p| {
            p.trim()
                .parse::<f32>()
                .with_context(|| format!("`{p}` in region `{text}` is not a number"))
        })
        .collect()
}

fn region_form(kind: &str) -> &'static str {
    match kind {
        "voxel" => "X0,Y0,Z0,X1,Y1,Z1",
        "heightmap" | "map" => "X0,Z0,X1,Z1",
        _ => "X0,Y0,X1,Y1",
    }
}

/// One chunk to bake: its key, its input stamp, and whether it replaces a
/// stale row.
struct Todo {
    key: ChunkKey,
    stamp: String,
    stale: bool,
}

/// A deterministic shuffle (Fisher–Yates over SplitMix64).
fn shuffle<T>(keys: &mut [T], seed: u64) {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    for i in (1..keys.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        keys.swap(i, j);
    }
}

fn chunk_name(key: &ChunkKey) -> String {
    if key.layer.0 == 0 {
        format!("chunk_l{}_{}_{}_{}", key.lod, key.x, key.y, key.z)
    } else {
        format!(
            "chunk_l{}_{}_{}_{}_layer{}",
            key.lod, key.x, key.y, key.z, key.layer.0
        )
    }
}

/// Bakes one chunk and prepares what the committing thread stores: the
/// encoded row, or (folder mode) the files, written here, and a journal line.
fn bake_one(
    baker: &mut ChunkBaker,
    source: &BakeSource<'_>,
    job: &Todo,
    folder: Option<&Path>,
    kind: &str,
    layout: HeightLayout,
) -> anyhow::Result<Finished> {
    let (key, stamp) = (&job.key, job.stamp.as_str());
    let chunk = baker.bake(source, key)?;
    let mut f = Finished {
        vertices: chunk.positions.len() as u64,
        triangles: chunk.triangle_count() as u64,
        bytes: 0,
        empty: chunk.is_empty(),
        stale: job.stale,
        row: None,
        line: None,
    };
    match folder {
        None => {
            let row = BakedRow::new(*key, stamp, &chunk)?;
            f.bytes = row.payload.len() as u64;
            f.row = Some(row);
        }
        Some(dir) => {
            let (_, hash) = encode_baked(&chunk)?;
            let name = chunk_name(key);
            let mut glb_name = None;
            if !chunk.indices.is_empty() {
                let mesh = GlbMesh::new(&name, &chunk.positions, &chunk.indices)
                    .with_normals(&chunk.normals);
                let bytes = export_glb(&[mesh])?;
                let file = format!("{name}.glb");
                write_atomic(&dir.join(&file), &bytes)?;
                f.bytes += bytes.len() as u64;
                glb_name = Some(file);
            }
            let mut collider_name = None;
            if let Some(value) = collider_json(&chunk, kind, layout) {
                let text = serde_json::to_string(&value)?;
                let file = format!("{name}.collider.json");
                write_atomic(&dir.join(&file), text.as_bytes())?;
                f.bytes += text.len() as u64;
                collider_name = Some(file);
            }
            f.line = Some(json!({
                "key": [key.x, key.y, key.z],
                "layer": key.layer.0,
                "lod": key.lod,
                "source": stamp,
                "hash": hash,
                "glb": glb_name,
                "collider": collider_name,
                "vertices": f.vertices,
                "triangles": f.triangles,
            }));
        }
    }
    Ok(f)
}

/// The collider of a chunk as JSON, for the kinds whose collider is not the
/// mesh itself. A heightfield states its `layout` (the order of `heights`)
/// and `diagonal` (how each cell is cut into two triangles, as the render
/// mesh is).
fn collider_json(
    chunk: &BakedChunk,
    kind: &str,
    layout: HeightLayout,
) -> Option<serde_json::Value> {
    match &chunk.collider {
        BakedCollider::Polylines(lines) if lines.is_empty() => None,
        BakedCollider::Polylines(lines) => Some(json!({
            "kind": kind,
            "polylines": lines
                .iter()
                .map(|l| json!({ "points": l.points, "closed": l.closed }))
                .collect::<Vec<_>>(),
        })),
        BakedCollider::Heightfield(h) => {
            let (rows, cols) = (h.rows as usize, h.cols as usize);
            let (name, heights) = match layout {
                HeightLayout::RowMajor => ("row-major", h.heights.clone()),
                HeightLayout::ColumnMajor => {
                    let mut t = Vec::with_capacity(h.heights.len());
                    for x in 0..cols {
                        for z in 0..rows {
                            t.push(h.heights.get(z * cols + x).copied().unwrap_or(0.0));
                        }
                    }
                    ("column-major", t)
                }
            };
            Some(json!({
                "kind": kind,
                "heightfield": {
                    "rows": h.rows,
                    "cols": h.cols,
                    "layout": name,
                    "diagonal": "min-x-min-z-to-max-x-max-z",
                    "scale": h.scale,
                    "translation": h.translation,
                    "heights": heights,
                },
            }))
        }
        _ => None,
    }
}

/// Stores a batch: one transaction in the world file, or journal lines
/// (flushed and synced) after the chunk files.
fn commit(
    sink: &mut Sink,
    batch: &mut Vec<Finished>,
    totals: &mut Totals,
    bar: &ProgressBar,
) -> anyhow::Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    match sink {
        Sink::File(store, path) => {
            let rows: Vec<BakedRow> = batch.iter_mut().filter_map(|f| f.row.take()).collect();
            store
                .put_baked(&rows)
                .with_context(|| format!("cannot store baked chunks in {}", shown(path)))?;
        }
        Sink::Folder { dir, journal } => {
            let mut text = String::new();
            for f in batch.iter() {
                if let Some(line) = &f.line {
                    text.push_str(&line.to_string());
                    text.push('\n');
                }
            }
            journal
                .write_all(text.as_bytes())
                .and_then(|()| journal.sync_data())
                .with_context(|| format!("cannot write {}", dir.join(JOURNAL).display()))?;
        }
    }
    for f in batch.drain(..) {
        totals.add(&f);
        bar.inc(1);
    }
    Ok(())
}

/// Reads the journal lines of `dir` (a torn last line is ignored): the
/// newest line per chunk key.
fn read_journal(dir: &Path) -> BTreeMap<(u8, u16, [i32; 3]), serde_json::Value> {
    let mut out = BTreeMap::new();
    let Ok(f) = fs::File::open(dir.join(JOURNAL)) else {
        return out;
    };
    for line in BufReader::new(f).lines() {
        let Ok(line) = line else { break };
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let key = (|| {
            let k = v.get("key")?.as_array()?;
            let c = |i: usize| -> Option<i32> { i32::try_from(k.get(i)?.as_i64()?).ok() };
            Some((
                u8::try_from(v.get("lod")?.as_u64()?).ok()?,
                u16::try_from(v.get("layer")?.as_u64()?).ok()?,
                [c(0)?, c(1)?, c(2)?],
            ))
        })();
        if let Some(key) = key {
            out.insert(key, v);
        }
    }
    out
}

/// Prepares the output folder: creates it, checks it can be written, and
/// opens the journal for appending. Returns the input stamp of every chunk
/// the journal names, or an empty stamp (never current) where a file of the
/// chunk is missing.
fn open_folder(dir: &Path) -> anyhow::Result<(fs::File, BTreeMap<ChunkKey, String>)> {
    if dir.exists() && !dir.is_dir() {
        bail!("--out {}: exists and is not a folder", dir.display());
    }
    fs::create_dir_all(dir)
        .with_context(|| format!("--out {}: cannot create the folder", dir.display()))?;
    let probe = dir.join(".isoterra-bake-probe");
    fs::write(&probe, b"")
        .and_then(|()| fs::remove_file(&probe))
        .with_context(|| format!("--out {}: cannot write into the folder", dir.display()))?;
    let mut done = BTreeMap::new();
    for ((lod, layer, c), v) in read_journal(dir) {
        let present = |field: &str| match v.get(field).and_then(|f| f.as_str()) {
            Some(name) => dir.join(name).is_file(),
            None => true,
        };
        let source = match v.get("source").and_then(|s| s.as_str()) {
            Some(s) if present("glb") && present("collider") => s.to_string(),
            _ => String::new(),
        };
        done.insert(
            ChunkKey {
                layer: isoterra::store::ChunkLayer(layer),
                x: c[0],
                y: c[1],
                z: c[2],
                lod,
            },
            source,
        );
    }
    let journal = OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(JOURNAL))
        .with_context(|| format!("--out {}: cannot open the journal", dir.display()))?;
    Ok((journal, done))
}

/// Writes `manifest.json`: every chunk of the folder that is current (its
/// journal line records the input stamp `current` gives now), in key order,
/// each with its input stamp as `source`; the top-level `source` is the
/// world stamp.
fn write_manifest(
    dir: &Path,
    world: &Path,
    stamp: &str,
    current: &dyn Fn(&ChunkKey) -> Option<String>,
    plan: &BakePlan,
    kind: &str,
) -> anyhow::Result<()> {
    let chunks: Vec<serde_json::Value> = read_journal(dir)
        .into_iter()
        .filter(|((lod, layer, c), v)| {
            let key = ChunkKey {
                layer: isoterra::store::ChunkLayer(*layer),
                x: c[0],
                y: c[1],
                z: c[2],
                lod: *lod,
            };
            let recorded = v.get("source").and_then(|s| s.as_str());
            recorded.is_some() && current(&key).as_deref() == recorded
        })
        .map(|(_, v)| v)
        .collect();
    let manifest = json!({
        "format": "isoterra-bake",
        "version": 1,
        "kind": kind,
        "world": world.display().to_string(),
        "source": stamp,
        "last_region": { "min": plan.min, "max": plan.max, "lod": plan.lod },
        "chunks": chunks,
    });
    write_atomic(
        &dir.join(MANIFEST),
        serde_json::to_string_pretty(&manifest)?.as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_is_a_permutation_and_depends_on_the_seed() {
        let keys: Vec<ChunkKey> = (0..50).map(|x| ChunkKey::field2(x, 0)).collect();
        let mut a = keys.clone();
        let mut b = keys.clone();
        shuffle(&mut a, 1);
        shuffle(&mut b, 2);
        assert_ne!(a, keys);
        assert_ne!(a, b);
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, keys);
        let mut again = keys.clone();
        shuffle(&mut again, 1);
        assert_eq!(again, a);
    }

    #[test]
    fn parts_parse_from_one_to_n() {
        assert_eq!(parse_part("1/1").unwrap(), (0, 1));
        assert_eq!(parse_part(" 3 / 4 ").unwrap(), (2, 4));
        for (bad, needle) in [
            ("0/4", "numbered from 1 to 4"),
            ("5/4", "numbered from 1 to 4"),
            ("1/0", "0 parts"),
            ("2", "K/N"),
            ("a/2", "not a whole number"),
            ("1/-2", "not a whole number"),
            ("1/2/3", "not a whole number"),
        ] {
            let e = format!("{:#}", parse_part(bad).unwrap_err());
            assert!(e.contains(needle), "{bad}: {e}");
        }
    }

    #[test]
    fn region_numbers_parse_any_count() {
        assert_eq!(region_numbers("0,1,-2.5,3").unwrap(), [0.0, 1.0, -2.5, 3.0]);
        assert!(region_numbers("0,x").is_err());
        assert!(region_numbers("nan,0").unwrap()[0].is_nan());
    }
}
