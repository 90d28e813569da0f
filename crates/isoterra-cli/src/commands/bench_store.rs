//! `isoterra bench store [--url postgres://…]`: the write paths of the
//! chunk stores, a world file and (with `--url`) a world on a PostgreSQL
//! server, on the same rows in one run: chunk rows inserted and upserted
//! (`put_chunks`, the path a game's saves and a bake's edits take) and the
//! latency of one stroke's commit (`commit_stroke` with its chunk, what an
//! editor waits for before it acknowledges).

use std::time::Instant;

use anyhow::Context;
use isoterra::store::{
    ChunkChange, ChunkEncoding, ChunkKey, ChunkStore, NewStroke, PgStore, WorldFile, WorldMeta,
    redact_url,
};

use super::bench::median;
use super::bench_stream::{Figure, dug_payloads};

/// Rows per transaction.
const BATCH: usize = 64;
/// Rows per timed run.
const ROWS: usize = 1024;
/// Strokes whose commits are timed.
const STROKES: usize = 200;

pub fn run(reps: u32, url: Option<&str>) -> anyhow::Result<Vec<Figure>> {
    let (payloads, _) = dug_payloads(ChunkEncoding::F32)?;
    let mean = payloads.iter().map(Vec::len).sum::<usize>() / payloads.len().max(1);
    let meta = WorldMeta {
        kind: "bench".into(),
        format_version: 1,
        seed: 1,
        params: serde_json::json!({}),
    };
    let mut out = Vec::new();
    let dir = tempfile::tempdir().context("cannot make a temporary folder")?;
    let path = dir.path().join("bench.isoterra");
    let mut file = WorldFile::create(&path, &meta)
        .with_context(|| format!("cannot create {}", path.display()))?;
    let note = format!(
        "world file in {} (SQLite WAL, synchronous=FULL)",
        dir.path().display()
    );
    measure(&mut file, "file", &note, &payloads, mean, reps, &mut out)?;
    drop(file);
    if let Some(url) = url {
        let sep = if url.contains('?') { '&' } else { '?' };
        let world = format!("{url}{sep}world=isoterra-bench-{}", std::process::id());
        let mut pg =
            PgStore::open(&world).with_context(|| format!("cannot open {}", redact_url(&world)))?;
        pg.create_world(&meta, &[])
            .with_context(|| format!("cannot create {}", redact_url(&world)))?;
        let note = format!("PostgreSQL at {}", redact_url(url));
        let measured = measure(&mut pg, "postgres", &note, &payloads, mean, reps, &mut out);
        pg.drop_world()?;
        measured?;
    }
    Ok(out)
}

fn measure(
    store: &mut dyn ChunkStore,
    backend: &str,
    note: &str,
    payloads: &[Vec<u8>],
    mean: usize,
    reps: u32,
    out: &mut Vec<Figure>,
) -> anyhow::Result<()> {
    let rows = |round: u32| -> Vec<ChunkChange> {
        (0..ROWS)
            .map(|i| {
                let key = ChunkKey::field2(i as i32, round as i32);
                (key, Some(payloads[i % payloads.len()].clone()))
            })
            .collect()
    };
    let put = |store: &mut dyn ChunkStore, rows: &[ChunkChange]| -> anyhow::Result<f64> {
        let t = Instant::now();
        for batch in rows.chunks(BATCH) {
            store.put_chunks(batch)?;
        }
        Ok(t.elapsed().as_secs_f64())
    };
    // New rows (one warm-up round, then `reps`), then the same rows again.
    let mut insert = Vec::new();
    let mut upsert = Vec::new();
    for round in 0..=reps {
        let r = rows(round);
        let t_new = put(store, &r)?;
        let t_again = put(store, &r)?;
        if round > 0 {
            insert.push(ROWS as f64 / t_new);
            upsert.push(ROWS as f64 / t_again);
        }
    }
    let what = format!(
        "put_chunks, {ROWS} rows in transactions of {BATCH}, dug 32^3 voxel chunk payloads \
         (mean {mean} bytes); {note}; median of {reps}"
    );
    out.push((
        format!("{backend}_chunk_insert_rows_per_s"),
        "rows/s",
        median(insert),
        format!("new rows: {what}"),
        Vec::new(),
    ));
    out.push((
        format!("{backend}_chunk_upsert_rows_per_s"),
        "rows/s",
        median(upsert),
        format!("rows replaced: {what}"),
        Vec::new(),
    ));
    // Stroke commits, each with one chunk.
    let mut lat = Vec::with_capacity(STROKES);
    for i in 0..STROKES {
        let stroke = NewStroke {
            tool: "dig".into(),
            params: serde_json::json!({ "n": i }),
            delta: vec![0; 64],
        };
        let key = ChunkKey::field2(i as i32, -1);
        let change = [(key, Some(payloads[i % payloads.len()].clone()))];
        let t = Instant::now();
        store.commit_stroke(&stroke, &change)?;
        lat.push(t.elapsed().as_secs_f64() * 1e3);
    }
    lat.sort_by(f64::total_cmp);
    let pct = |p: f64| lat[((lat.len() - 1) as f64 * p).round() as usize];
    let what =
        format!("commit_stroke with one chunk (mean {mean} bytes), {STROKES} in a row; {note}");
    out.push((
        format!("{backend}_stroke_commit_p50_ms"),
        "ms",
        pct(0.5),
        what.clone(),
        Vec::new(),
    ));
    out.push((
        format!("{backend}_stroke_commit_p99_ms"),
        "ms",
        pct(0.99),
        what,
        Vec::new(),
    ));
    Ok(())
}
