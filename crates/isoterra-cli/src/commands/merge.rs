//! `isoterra merge`: copies baked chunks from part files into a world file
//! (or a world on a PostgreSQL server; parts may be either too).
//!
//! A bake split with `bake --part K/N` over several machines leaves one copy
//! of the world per machine, each holding the baked rows of its range. This
//! command brings them together, through [`ChunkStore`] on both sides:
//!
//! 1. Every part must hold the same world as FILE (the same world stamp:
//!    generator, parameters and every edited chunk); a part of another
//!    world, or of the same world before or after an edit, is refused.
//! 2. Every row to copy is read, decoded and checked against its recorded
//!    content hash. A row is current when it records the input stamp its
//!    chunk has in FILE now ([`BakeInputs`]: the world's metadata and the
//!    stored chunks the chunk reads); other rows are stale and ignored. A
//!    current row FILE already holds is skipped when its hash is the same
//!    and refused when it differs (the same chunk baked from the same
//!    inputs to different bytes: another build, or damage); so are two
//!    parts disagreeing about one chunk.
//! 3. Only when all parts passed are the rows copied, in batches, each one
//!    commit. Rerunning a merge is harmless: what is there is skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use isoterra::kind::{BakeInputs, Document};
use isoterra::store::{BakedRow, ChunkKey, ChunkStore, decode_baked};
use serde_json::json;

use crate::args::MergeArgs;
use crate::commands::bake::{open_store, shown};

/// Keys listed per page while walking a part.
const PAGE: usize = 512;
/// Rows per commit while copying.
const BATCH: usize = 256;

/// What the check found in the parts.
#[derive(Default)]
struct Scan {
    /// Rows to copy: key, the part that holds it and its content hash.
    copy: BTreeMap<ChunkKey, (usize, String)>,
    /// Rows FILE (or an earlier part) already holds with the same hash.
    present: u64,
    /// Rows baked from another world stamp, ignored.
    stale: u64,
}

fn describe(k: &ChunkKey) -> String {
    format!(
        "(layer {}, {}, {}, {}, LOD {})",
        k.layer.0, k.x, k.y, k.z, k.lod
    )
}

/// Calls `f` with every baked row of `store`, in key order, a page at a time.
fn each_row(
    store: &dyn ChunkStore,
    mut f: impl FnMut(BakedRow) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut after: Option<ChunkKey> = None;
    loop {
        let keys = store.baked_keys_after(after.as_ref(), PAGE)?;
        let Some(last) = keys.last().copied() else {
            return Ok(());
        };
        for k in &keys {
            if let Some(row) = store.baked_row(k)? {
                f(row)?;
            }
        }
        after = Some(last);
    }
}

pub fn run(a: &MergeArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let dest = open_store(&a.file)?;
    let stamp = dest
        .world_stamp()
        .with_context(|| format!("cannot read {}", shown(&a.file)))?;
    let mut parts: Vec<(PathBuf, Box<dyn ChunkStore>)> = Vec::with_capacity(a.from.len());
    for path in &a.from {
        let store = open_store(path)?;
        let theirs = store
            .world_stamp()
            .with_context(|| format!("cannot read {}", shown(path)))?;
        if theirs != stamp {
            bail!(
                "{} holds a different world than {} (world stamp {theirs}, not {stamp}): \
                 another world, or a copy taken before or after an edit; bake the part again \
                 from a copy of the world as it is now. Nothing was merged.",
                shown(path),
                shown(&a.file)
            );
        }
        parts.push((path.clone(), store));
    }

    let world = super::edit::open_world(&a.file)?;
    super::edit::with_world!(world, doc => copy_parts(doc, a, t0, dest, parts))
}

/// Checks every part against FILE, then copies the rows FILE lacks.
fn copy_parts<S: ChunkStore>(
    doc: &mut Document<S>,
    a: &MergeArgs,
    t0: Instant,
    mut dest: Box<dyn ChunkStore>,
    parts: Vec<(PathBuf, Box<dyn ChunkStore>)>,
) -> anyhow::Result<()> {
    // The input stamp each chunk has in FILE now: rows recording it are
    // current (the parts hold the same world, so theirs are the same).
    let source = doc.bake_source();
    let inputs = BakeInputs::read(doc.store())
        .with_context(|| format!("cannot read the chunks of {}", shown(&a.file)))?;
    let current = |k: &ChunkKey| inputs.stamp(&source, k).ok();

    // Check everything before writing anything.
    let mut scan = Scan::default();
    for (i, (path, part)) in parts.iter().enumerate() {
        check_part(
            &*dest, &a.file, &current, i, path, &**part, &parts, &mut scan,
        )?;
    }

    // Copy.
    let mut copied = 0u64;
    for (i, (path, part)) in parts.iter().enumerate() {
        let mut batch: Vec<BakedRow> = Vec::with_capacity(BATCH);
        let mut flush = |batch: &mut Vec<BakedRow>, dest: &mut dyn ChunkStore| {
            if batch.is_empty() {
                return Ok::<(), anyhow::Error>(());
            }
            dest.put_baked(batch)
                .with_context(|| format!("cannot store baked chunks in {}", shown(&a.file)))?;
            copied += batch.len() as u64;
            batch.clear();
            Ok(())
        };
        for (key, _) in scan.copy.iter().filter(|(_, (p, _))| *p == i) {
            let row = part
                .baked_row(key)?
                .filter(|r| scan.copy.get(key).is_some_and(|(_, h)| *h == r.hash))
                .with_context(|| {
                    format!(
                        "{}: chunk {} changed while merging; run the merge again",
                        shown(path),
                        describe(key)
                    )
                })?;
            batch.push(row);
            if batch.len() >= BATCH {
                flush(&mut batch, &mut *dest)?;
            }
        }
        flush(&mut batch, &mut *dest)?;
    }
    let seconds = t0.elapsed().as_secs_f64();
    if a.json {
        println!(
            "{}",
            json!({
                "parts": parts.len(),
                "copied": copied,
                "present": scan.present,
                "stale": scan.stale,
                "seconds": seconds,
            })
        );
    } else {
        println!(
            "merged {} part{} into {}: {copied} chunks copied, {} already there, {} stale rows ignored ({seconds:.2} s)",
            parts.len(),
            if parts.len() == 1 { "" } else { "s" },
            shown(&a.file),
            scan.present,
            scan.stale,
        );
    }
    Ok(())
}

/// Checks the rows of part `index` against FILE and the parts before it.
#[allow(clippy::too_many_arguments)]
fn check_part(
    dest: &dyn ChunkStore,
    file: &Path,
    current: &dyn Fn(&ChunkKey) -> Option<String>,
    index: usize,
    path: &Path,
    part: &dyn ChunkStore,
    parts: &[(PathBuf, Box<dyn ChunkStore>)],
    scan: &mut Scan,
) -> anyhow::Result<()> {
    let refuse = |key: &ChunkKey, other: &Path, ours: &str, theirs: &str, stamp: &str| {
        anyhow::anyhow!(
            "refusing to merge: chunk {} has content hash {theirs} in {} but {ours} in {}, \
             both baked from the same inputs (input stamp {stamp}; baked by a different \
             build, or one file is damaged). Nothing was merged.",
            describe(key),
            shown(path),
            shown(other),
        )
    };
    each_row(part, |row| {
        let (_, hash) = decode_baked(&row.payload).with_context(|| {
            format!(
                "{}: baked chunk {} is damaged; nothing was merged",
                shown(path),
                describe(&row.key)
            )
        })?;
        if hash != row.hash {
            bail!(
                "{}: baked chunk {} decodes to content hash {hash} but records {}; \
                 the file is damaged. Nothing was merged.",
                shown(path),
                describe(&row.key),
                row.hash
            );
        }
        let Some(stamp) = current(&row.key).filter(|s| *s == row.source) else {
            scan.stale += 1;
            return Ok(());
        };
        if let Some(ours) = dest.baked_row(&row.key)?
            && ours.source == stamp
        {
            if ours.hash != row.hash {
                return Err(refuse(&row.key, file, &ours.hash, &row.hash, &stamp));
            }
            scan.present += 1;
            return Ok(());
        }
        match scan.copy.get(&row.key) {
            Some((other, h)) if *h != row.hash => {
                Err(refuse(&row.key, &parts[*other].0, h, &row.hash, &stamp))
            }
            Some(_) => {
                scan.present += 1;
                Ok(())
            }
            None => {
                scan.copy.insert(row.key, (index, row.hash));
                Ok(())
            }
        }
    })
}
