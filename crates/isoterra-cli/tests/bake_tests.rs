//! `isoterra bake`, run as the real binary: results in the file or a folder,
//! resuming after a kill, the same bytes at any thread count and order, and
//! refused input that leaves the file alone; bakes split with `--part` and
//! brought together with `merge`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use isoterra::kind::{BakeInputs, BakeSource};
use isoterra::store::{BakedChunk, BakedRow, ChunkKey, ChunkLayer, VoxelDocument, WorldFile};

mod common;
use common::*;

fn hash(file: &Path) -> String {
    let out = ok(&["info", s(file), "--hash"]);
    out.lines().last().unwrap().trim().to_string()
}

/// Runs a bake with `--json` and returns its summary.
#[track_caller]
fn bake(file: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["bake", s(file), "--json"];
    args.extend_from_slice(extra);
    let out = ok(&args);
    serde_json::from_str(out.lines().last().unwrap()).unwrap()
}

fn voxel_world(dir: &Path, name: &str) -> PathBuf {
    let file = dir.join(name);
    ok(&[
        "new",
        s(&file),
        "--kind",
        "voxel",
        "--seed",
        "5",
        "--preset",
        "caves",
        "--chunk",
        "16",
    ]);
    file
}

fn heightmap_world(dir: &Path, name: &str) -> PathBuf {
    let file = dir.join(name);
    ok(&[
        "new",
        s(&file),
        "--kind",
        "heightmap",
        "--seed",
        "9",
        "--chunk",
        "16",
    ]);
    file
}

/// `(key, content hash, payload)` of every baked row.
fn rows(file: &Path) -> Vec<(ChunkKey, String, Vec<u8>)> {
    let f = WorldFile::open(file).unwrap();
    let mut out = Vec::new();
    f.for_each_baked(|r| {
        out.push((r.key, r.hash, r.payload));
        Ok(())
    })
    .unwrap();
    out
}

#[test]
fn bake_into_the_file_then_again_skips_everything() {
    let dir = tempfile::tempdir().unwrap();
    let file = voxel_world(dir.path(), "v.isoterra");
    let h0 = hash(&file);
    let first = bake(&file, &["--region", "0,0,0,64,32,64", "--threads", "2"]);
    assert_eq!(first["chunks"], 32);
    assert_eq!(first["baked"], 32);
    assert_eq!(first["skipped"], 0);
    assert!(first["triangles"].as_u64().unwrap() > 0, "{first}");
    assert!(first["bytes"].as_u64().unwrap() > 0, "{first}");
    assert_eq!(rows(&file).len(), 32);
    let h1 = hash(&file);
    assert_ne!(h0, h1, "the hash covers the baked chunks");

    let again = bake(&file, &["--region", "0,0,0,64,32,64"]);
    assert_eq!(again["baked"], 0);
    assert_eq!(again["skipped"], 32);
    assert_eq!(hash(&file), h1);

    // A larger region bakes only what is new; a coarser LOD is separate.
    let more = bake(&file, &["--region", "0,0,0,64,32,80"]);
    assert_eq!(
        (more["baked"].as_u64(), more["skipped"].as_u64()),
        (Some(8), Some(32))
    );
    let coarse = bake(&file, &["--region", "0,0,0,64,32,64", "--lod", "1"]);
    assert_eq!(coarse["chunks"], 4);
    assert_eq!(coarse["baked"], 4);
    assert_eq!(rows(&file).len(), 44);

    // The text summary names the counts.
    let text = ok(&["bake", s(&file), "--region", "0,0,0,64,32,64", "--quiet"]);
    assert!(text.contains("baked 0 chunks (32 skipped"), "{text}");
}

/// The stored field chunks of a world file.
fn stored(file: &Path) -> BTreeMap<ChunkKey, Vec<u8>> {
    let f = WorldFile::open(file).unwrap();
    f.chunk_keys()
        .unwrap()
        .into_iter()
        .filter(|k| k.layer == ChunkLayer(0))
        .map(|k| (k, f.chunk(&k).unwrap().unwrap()))
        .collect()
}

/// The storage chunks whose payload (or presence) differs.
fn edited(a: &BTreeMap<ChunkKey, Vec<u8>>, b: &BTreeMap<ChunkKey, Vec<u8>>) -> BTreeSet<ChunkKey> {
    a.keys()
        .chain(b.keys())
        .filter(|k| a.get(k) != b.get(k))
        .copied()
        .collect()
}

/// The recorded source (input stamp) of every baked row.
fn sources(file: &Path) -> BTreeMap<ChunkKey, String> {
    WorldFile::open(file).unwrap().baked_sources().unwrap()
}

#[test]
fn an_edit_makes_the_bake_stale_and_changes_the_hash() {
    let dir = tempfile::tempdir().unwrap();
    let file = heightmap_world(dir.path(), "h.isoterra");
    bake(&file, &["--region", "0,0,64,64"]);
    let before = rows(&file);
    assert_eq!(before.len(), 16);
    let h1 = hash(&file);
    let chunks_before = stored(&file);
    ok(&[
        "stroke",
        s(&file),
        "--tool",
        "raise",
        "--at",
        "20,20",
        "--radius",
        "6",
    ]);
    let h2 = hash(&file);
    assert_ne!(h1, h2, "an edit changes the hash");
    // Stale chunks are baked again, not skipped: those whose nodes and
    // normal apron (one chunk either way at LOD 0) reach an edited chunk.
    let touched = edited(&chunks_before, &stored(&file));
    assert!(!touched.is_empty());
    let stale = before
        .iter()
        .filter(|(k, ..)| {
            touched
                .iter()
                .any(|t| (t.x - k.x).abs() <= 1 && (t.y - k.y).abs() <= 1)
        })
        .count() as u64;
    assert!(stale > 0 && stale < 16, "{stale}");
    let again = bake(&file, &["--region", "0,0,64,64"]);
    assert_eq!(again["baked"].as_u64(), Some(stale));
    assert_eq!(again["rebaked"].as_u64(), Some(stale));
    assert_eq!(again["skipped"].as_u64(), Some(16 - stale));
    let after = rows(&file);
    let changed = before
        .iter()
        .zip(&after)
        .filter(|(a, b)| a.1 != b.1)
        .count();
    assert!(changed > 0 && changed < 16, "{changed} chunks changed");
    assert_ne!(hash(&file), h2);
    // Undo brings the world and, after a bake, the hash back.
    ok(&["undo", s(&file)]);
    bake(&file, &["--region", "0,0,64,64"]);
    assert_eq!(hash(&file), h1);
}

#[test]
fn thread_counts_and_orders_give_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    for (kind, region) in [
        ("voxel", "-16,-16,-16,48,32,48"),
        ("heightmap", "-40,-8,40,60"),
    ] {
        let make = |name: &str| match kind {
            "voxel" => voxel_world(dir.path(), name),
            _ => heightmap_world(dir.path(), name),
        };
        let a = make(&format!("{kind}-a.isoterra"));
        let b = make(&format!("{kind}-b.isoterra"));
        let c = make(&format!("{kind}-c.isoterra"));
        let one = bake(&a, &["--region", region, "--threads", "1"]);
        bake(&b, &["--region", region, "--threads", "4"]);
        bake(
            &c,
            &["--region", region, "--threads", "3", "--shuffle", "99"],
        );
        assert!(one["baked"].as_u64().unwrap() >= 16, "{one}");
        let ra = rows(&a);
        assert_eq!(ra, rows(&b), "{kind}: 1 vs 4 threads");
        assert_eq!(ra, rows(&c), "{kind}: shuffled");
        assert_eq!(hash(&a), hash(&b));
        assert_eq!(hash(&a), hash(&c));

        // Folders: the same files, byte for byte.
        let d1 = dir.path().join(format!("{kind}-out1"));
        let d4 = dir.path().join(format!("{kind}-out4"));
        bake(&a, &["--region", region, "--threads", "1", "--out", s(&d1)]);
        bake(
            &a,
            &[
                "--region",
                region,
                "--threads",
                "4",
                "--shuffle",
                "5",
                "--out",
                s(&d4),
            ],
        );
        let listing = |d: &Path| {
            let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap())
                .filter(|e| e.file_name() != "bake-journal.jsonl")
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        std::fs::read(e.path()).unwrap(),
                    )
                })
                .collect();
            v.sort();
            v
        };
        let (l1, l4) = (listing(&d1), listing(&d4));
        assert!(l1.iter().any(|(n, _)| n.ends_with(".glb")));
        let names = |l: &[(String, Vec<u8>)]| l.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
        assert_eq!(names(&l1), names(&l4));
        for ((n, x), (_, y)) in l1.iter().zip(&l4) {
            if n == "manifest.json" {
                let strip = |b: &[u8]| {
                    let mut v: serde_json::Value = serde_json::from_slice(b).unwrap();
                    v.as_object_mut().unwrap().remove("world");
                    v
                };
                assert_eq!(strip(x), strip(y));
            } else {
                assert!(x == y, "{kind}: {n} differs between thread counts");
            }
        }
        // A folder bake leaves the world file as it was.
        assert_eq!(rows(&a), ra);
    }
}

#[test]
fn a_killed_bake_resumes_and_ends_like_a_clean_one() {
    let dir = tempfile::tempdir().unwrap();
    let file = voxel_world(dir.path(), "k.isoterra");
    let clean = voxel_world(dir.path(), "clean.isoterra");
    // 16 x 4 x 16 chunks of 16 cells.
    let region = "0,-32,0,256,32,256";
    let total = 1024;
    let mut child = bin()
        .args([
            "bake",
            s(&file),
            "--region",
            region,
            "--threads",
            "1",
            "--quiet",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut seen = 0;
    while start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(10));
        if let Ok(f) = WorldFile::open(&file) {
            seen = f.baked_count().unwrap_or(0);
            if seen >= 64 {
                break;
            }
        }
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "the bake was killed before it finished");
    let after_kill = WorldFile::open(&file).unwrap();
    after_kill.integrity_check().unwrap();
    let kept = after_kill.baked_count().unwrap();
    drop(after_kill);
    assert!(
        kept >= seen && kept < total,
        "{kept} of {total} kept ({seen} seen)"
    );

    let resumed = bake(&file, &["--region", region, "--threads", "2"]);
    assert_eq!(resumed["skipped"].as_u64(), Some(kept));
    assert_eq!(resumed["baked"].as_u64(), Some(total - kept));
    bake(&clean, &["--region", region, "--threads", "2"]);
    assert_eq!(rows(&file), rows(&clean));
    assert_eq!(hash(&file), hash(&clean));
}

#[test]
fn side2d_bakes_colliders_and_refuses_other_lods() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.isoterra");
    ok(&[
        "new",
        s(&file),
        "--kind",
        "side2d",
        "--seed",
        "3",
        "--size",
        "96x48",
        "--preset",
        "caves",
        "--chunk",
        "16",
    ]);
    let out = dir.path().join("out");
    let summary = bake(&file, &["--region", "-10,-10,1000,1000", "--out", s(&out)]);
    assert_eq!(summary["chunks"], 18, "clipped to the world: {summary}");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    let chunks = manifest["chunks"].as_array().unwrap();
    assert_eq!(chunks.len(), 18);
    let with_collider = chunks
        .iter()
        .filter_map(|c| c["collider"].as_str())
        .collect::<Vec<_>>();
    assert!(!with_collider.is_empty());
    let collider: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join(with_collider[0])).unwrap()).unwrap();
    assert!(!collider["polylines"].as_array().unwrap().is_empty());
    // A folder bake again skips what is there.
    let again = bake(&file, &["--region", "0,0,96,48", "--out", s(&out)]);
    assert_eq!(again["skipped"], 18);
    let err = fails(&["bake", s(&file), "--region", "0,0,96,48", "--lod", "1"]);
    assert!(err.contains("lod"), "{err}");
    let err = fails(&["bake", s(&file), "--region", "200,0,300,48"]);
    assert!(err.contains("outside the world"), "{err}");
}

#[test]
fn bad_input_is_refused_and_leaves_the_file_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let file = voxel_world(dir.path(), "v.isoterra");
    let hm = heightmap_world(dir.path(), "h.isoterra");
    bake(&file, &["--region", "0,0,0,16,16,16"]);
    let h = hash(&file);
    let bytes_before = rows(&file);
    let blocker = dir.path().join("not-a-folder");
    std::fs::write(&blocker, b"x").unwrap();
    let under_file = blocker.join("out");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--region", "nan,0,0,16,16,16"], "not finite"),
        (vec!["--region", "0,0,0,inf,16,16"], "not finite"),
        (vec!["--region", "0,0,0,-16,16,16"], "inverted"),
        (vec!["--region", "0,0,0,0,16,16"], "empty"),
        (vec!["--region", "0,0,0,16,16"], "X0,Y0,Z0,X1,Y1,Z1"),
        (vec!["--region", "0,0,0,a,16,16"], "not a number"),
        (
            vec!["--region", "0,0,0,100000,100000,16"],
            "at most 1000000",
        ),
        (
            vec!["--region", "0,0,0,16,16,16", "--lod", "17"],
            "coarsest",
        ),
        (
            vec!["--region", "0,0,0,16,16,16", "--threads", "0"],
            "threads",
        ),
        (
            vec!["--region", "0,0,0,16,16,16", "--out", s(&under_file)],
            "--out",
        ),
        (
            vec!["--region", "0,0,0,32,16,16", "--part", "0/2"],
            "numbered from 1 to 2",
        ),
        (
            vec!["--region", "0,0,0,32,16,16", "--part", "3/2"],
            "numbered from 1 to 2",
        ),
        (
            vec!["--region", "0,0,0,32,16,16", "--part", "1/0"],
            "0 parts",
        ),
        (
            vec!["--region", "0,0,0,32,16,16", "--part", "a/2"],
            "not a whole number",
        ),
        (
            vec!["--region", "0,0,0,32,16,16", "--part", "1/-2"],
            "not a whole number",
        ),
        (vec!["--region", "0,0,0,32,16,16", "--part", "2"], "K/N"),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["bake", s(&file)];
        args.extend(&extra);
        let err = fails(&args);
        assert!(err.contains(needle), "{extra:?}: {err}");
        assert_eq!(hash(&file), h, "{extra:?} changed the file");
        assert_eq!(rows(&file), bytes_before);
    }
    let err = fails(&["bake", s(&hm), "--region", "0,0,16,16", "--lod", "9"]);
    assert!(err.contains("coarsest"), "{err}");
    let err = fails(&["bake", s(&hm), "--region", "0,0,0,16,16,16"]);
    assert!(err.contains("X0,Z0,X1,Z1"), "{err}");
    assert_eq!(rows(&hm).len(), 0);
}

#[test]
fn map_worlds_bake_terrain_and_water_at_any_thread_count() {
    use isoterra::store::MapDocument;
    use isoterra::world::MapParams;
    let dir = tempfile::tempdir().unwrap();
    let params = MapParams::DEFAULT.with_size(64, 48).with_chunk_cells(16);
    let a = dir.path().join("a.isoterra");
    let b = dir.path().join("b.isoterra");
    drop(MapDocument::create(&a, &params).unwrap());
    drop(MapDocument::create(&b, &params).unwrap());
    let unbaked = hash(&a);
    assert_eq!(unbaked, hash(&b));
    let one = bake(&a, &["--region", "0,0,64,48", "--threads", "1"]);
    assert_eq!(one["kind"], "map");
    assert_eq!(one["chunks"], 24, "12 chunks, terrain and water: {one}");
    bake(
        &b,
        &["--region", "0,0,64,48", "--threads", "3", "--shuffle", "4"],
    );
    let ra = rows(&a);
    assert_eq!(ra.len(), 24);
    assert_eq!(ra, rows(&b));
    assert!(ra.iter().any(|r| r.0.layer.0 == 1));
    // As for the other kinds, `info --hash` covers the baked rows too: the
    // same bake gives the same hash, and it differs from the unbaked world's.
    assert_eq!(hash(&a), hash(&b));
    assert_ne!(hash(&a), unbaked);
    let again = bake(&a, &["--region", "0,0,64,48"]);
    assert_eq!(again["skipped"], 24);
    let err = fails(&["bake", s(&a), "--region", "0,0,64,48", "--lod", "1"]);
    assert!(err.contains("coarsest"), "{err}");
}

fn copy_world(from: &Path, dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(from, &to).unwrap();
    to
}

/// Rows of several files together, in key order (each key once).
fn union(files: &[PathBuf]) -> Vec<(ChunkKey, String, Vec<u8>)> {
    let mut all: Vec<_> = files.iter().flat_map(|f| rows(f)).collect();
    all.sort_by_key(|r| r.0);
    all
}

#[track_caller]
fn merge(file: &Path, parts: &[&Path]) -> serde_json::Value {
    let mut args = vec!["merge", s(file), "--json"];
    for p in parts {
        args.extend(["--from", s(p)]);
    }
    let out = ok(&args);
    serde_json::from_str(out.lines().last().unwrap()).unwrap()
}

#[test]
fn parts_baked_apart_or_together_equal_a_whole_bake() {
    let dir = tempfile::tempdir().unwrap();
    for (kind, region, n, order) in [
        // 4 x 3 x 4 = 48 chunks in 3 parts of 16.
        ("voxel", "-16,-16,-16,48,32,48", 3u64, vec![3u64, 1, 2]),
        // 16 chunks in 7 parts of 2 or 3.
        ("heightmap", "0,0,64,64", 7, vec![7, 5, 3, 1, 2, 4, 6]),
        // 25 chunks in more parts than chunks: some parts are empty.
        ("heightmap", "-40,-40,40,40", 30, (1..=30).rev().collect()),
    ] {
        let base = match kind {
            "voxel" => voxel_world(dir.path(), &format!("{kind}{n}.isoterra")),
            _ => heightmap_world(dir.path(), &format!("{kind}{n}.isoterra")),
        };
        let whole = copy_world(&base, dir.path(), &format!("{kind}{n}-whole.isoterra"));
        let w = bake(&whole, &["--region", region, "--threads", "2"]);
        let total = w["chunks"].as_u64().unwrap();
        assert!(total >= 16, "{w}");

        // Each part into its own copy: contiguous, disjoint ranges in key
        // order whose rows together are the whole bake's, byte for byte.
        let mut copies = Vec::new();
        let mut next_first = 0;
        for k in 1..=n {
            let c = copy_world(&base, dir.path(), &format!("{kind}{n}-part{k}.isoterra"));
            let threads = if k % 2 == 0 { "1" } else { "3" };
            let part = format!("{k}/{n}");
            let p = bake(
                &c,
                &["--region", region, "--threads", threads, "--part", &part],
            );
            assert_eq!(p["part"], serde_json::json!([k, n]));
            assert_eq!(p["plan_chunks"].as_u64(), Some(total));
            assert_eq!(p["first"].as_u64(), Some(next_first), "{p}");
            let count = p["chunks"].as_u64().unwrap();
            assert!(count.abs_diff(total / n) <= 1, "{p}");
            assert_eq!(p["baked"].as_u64(), Some(count));
            next_first += count;
            let r = rows(&c);
            assert_eq!(r.len() as u64, count);
            copies.push(c);
        }
        assert_eq!(next_first, total, "the parts cover the region");
        assert_eq!(union(&copies), rows(&whole), "{kind} {n}: parts apart");

        // All parts into one file, in a scrambled order.
        let one = copy_world(&base, dir.path(), &format!("{kind}{n}-one.isoterra"));
        for k in &order {
            bake(&one, &["--region", region, "--part", &format!("{k}/{n}")]);
        }
        assert_eq!(rows(&one), rows(&whole), "{kind} {n}: parts together");
        assert_eq!(hash(&one), hash(&whole));
        // A whole bake afterwards finds everything done.
        let again = bake(&one, &["--region", region]);
        assert_eq!(again["skipped"].as_u64(), Some(total));
        // So does a part.
        let part = bake(&one, &["--region", region, "--part", &format!("1/{n}")]);
        assert_eq!(part["baked"], 0);
    }
}

#[test]
fn merging_part_files_equals_a_whole_bake() {
    let dir = tempfile::tempdir().unwrap();
    let base = voxel_world(dir.path(), "base.isoterra");
    let region = "0,-16,0,64,32,48";
    let whole = copy_world(&base, dir.path(), "whole.isoterra");
    bake(&whole, &["--region", region]);
    let n = 4;
    let parts: Vec<PathBuf> = (1..=n)
        .map(|k| {
            let c = copy_world(&base, dir.path(), &format!("part{k}.isoterra"));
            bake(&c, &["--region", region, "--part", &format!("{k}/{n}")]);
            c
        })
        .collect();
    let total = rows(&whole).len() as u64;
    let refs: Vec<&Path> = parts.iter().map(|p| p.as_path()).collect();

    let target = copy_world(&base, dir.path(), "merged.isoterra");
    let m = merge(&target, &[refs[2], refs[0], refs[3], refs[1]]);
    assert_eq!(m["copied"].as_u64(), Some(total), "{m}");
    assert_eq!(m["present"], 0);
    assert_eq!(rows(&target), rows(&whole));
    assert_eq!(hash(&target), hash(&whole));

    // Merging again, or into the whole bake, copies nothing.
    let again = merge(&target, &refs);
    assert_eq!(again["copied"], 0);
    assert_eq!(again["present"].as_u64(), Some(total));
    let into_whole = merge(&whole, &refs);
    assert_eq!(into_whole["copied"], 0);
    assert_eq!(hash(&target), hash(&whole));

    // A file that already holds part 1 (baked there) takes the rest; a part
    // named twice counts once.
    let half = copy_world(&base, dir.path(), "half.isoterra");
    bake(&half, &["--region", region, "--part", "1/4"]);
    let m = merge(&half, &[refs[0], refs[1], refs[1], refs[2], refs[3]]);
    let first = rows(&parts[0]).len() as u64;
    assert_eq!(m["copied"].as_u64(), Some(total - first), "{m}");
    assert_eq!(hash(&half), hash(&whole));

    // Rows a part baked from an older stamp are ignored, not copied.
    let stale_part = copy_world(&base, dir.path(), "stale.isoterra");
    {
        let mut f = WorldFile::open(&stale_part).unwrap();
        let row = BakedRow::new(
            ChunkKey {
                z: 99,
                ..rows(&parts[0])[0].0
            },
            "0123456789abcdef",
            &BakedChunk::default(),
        )
        .unwrap();
        f.put_baked(&[row]).unwrap();
    }
    let fresh = copy_world(&base, dir.path(), "fresh.isoterra");
    let m = merge(&fresh, &[&stale_part]);
    assert_eq!(
        (m["copied"].as_u64(), m["stale"].as_u64()),
        (Some(0), Some(1))
    );
    assert!(rows(&fresh).is_empty());

    // The text summary names the counts.
    let text = ok(&["merge", s(&fresh), "--from", s(&parts[0])]);
    assert!(text.contains(&format!("{first} chunks copied")), "{text}");
}

#[test]
fn foreign_or_conflicting_parts_are_refused_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let base = voxel_world(dir.path(), "base.isoterra");
    let region = "0,0,0,64,32,64";
    let file = copy_world(&base, dir.path(), "file.isoterra");
    bake(&file, &["--region", region, "--part", "1/2"]);
    let good = copy_world(&base, dir.path(), "good.isoterra");
    bake(&good, &["--region", region, "--part", "2/2"]);
    let (h, before) = (hash(&file), rows(&file));
    let unchanged = |why: &str| {
        assert_eq!(hash(&file), h, "{why} changed the file");
        assert_eq!(rows(&file), before, "{why} changed the rows");
    };

    // Another world (another seed), baked over the same region.
    let other = dir.path().join("other.isoterra");
    ok(&[
        "new",
        s(&other),
        "--kind",
        "voxel",
        "--seed",
        "6",
        "--preset",
        "caves",
        "--chunk",
        "16",
    ]);
    bake(&other, &["--region", region, "--part", "2/2"]);
    let err = fails(&["merge", s(&file), "--from", s(&good), "--from", s(&other)]);
    assert!(err.contains("different world"), "{err}");
    assert!(err.contains("other.isoterra"), "{err}");
    unchanged("another world");

    // The same world after an edit.
    let edited = copy_world(&base, dir.path(), "edited.isoterra");
    ok(&[
        "stroke",
        s(&edited),
        "--tool",
        "add",
        "--at",
        "8,8,8",
        "--radius",
        "4",
    ]);
    assert_ne!(hash(&edited), hash(&base), "the stroke changed the world");
    bake(&edited, &["--region", region, "--part", "2/2"]);
    let err = fails(&["merge", s(&file), "--from", s(&good), "--from", s(&edited)]);
    assert!(err.contains("different world"), "{err}");
    unchanged("an edited copy");

    // A part whose row for a chunk FILE holds differs from FILE's.
    let first_key = before[0].0;
    let odd_chunk = BakedChunk {
        positions: vec![[0.0; 3]; 3],
        indices: vec![0, 1, 2],
        ..BakedChunk::default()
    };
    // The row records the chunk's current input stamp, as a bake by
    // another build would: only the bytes differ.
    let tamper = |name: &str, key: ChunkKey| {
        let c = copy_world(&good, dir.path(), name);
        let stamp = {
            let doc = VoxelDocument::open(&c).unwrap();
            let inputs = BakeInputs::read(doc.file()).unwrap();
            inputs.stamp(&BakeSource::Voxel(doc.world()), &key).unwrap()
        };
        let mut f = WorldFile::open(&c).unwrap();
        f.put_baked(&[BakedRow::new(key, &stamp, &odd_chunk).unwrap()])
            .unwrap();
        c
    };
    let clash = tamper("clash.isoterra", first_key);
    let err = fails(&["merge", s(&file), "--from", s(&clash)]);
    assert!(err.contains("refusing to merge"), "{err}");
    assert!(err.contains("file.isoterra"), "{err}");
    unchanged("a conflicting row");

    // Two parts that disagree about a chunk FILE does not hold.
    let second_key = rows(&good)[0].0;
    let clash2 = tamper("clash2.isoterra", second_key);
    let err = fails(&["merge", s(&file), "--from", s(&good), "--from", s(&clash2)]);
    assert!(err.contains("refusing to merge"), "{err}");
    assert!(err.contains("good.isoterra"), "{err}");
    unchanged("two disagreeing parts");

    // A damaged row: its payload does not match its recorded hash.
    let damaged = copy_world(&good, dir.path(), "damaged.isoterra");
    {
        let mut f = WorldFile::open(&damaged).unwrap();
        let mut row = f.baked_row(&second_key).unwrap().unwrap();
        row.hash = "0000000000000000".into();
        f.put_baked(&[row]).unwrap();
    }
    let err = fails(&["merge", s(&file), "--from", s(&good), "--from", s(&damaged)]);
    assert!(err.contains("damaged"), "{err}");
    unchanged("a damaged part");

    // A part that is not a world file at all.
    let junk = dir.path().join("junk.isoterra");
    std::fs::write(&junk, b"not a world").unwrap();
    let err = fails(&["merge", s(&file), "--from", s(&junk)]);
    assert!(err.contains("junk.isoterra"), "{err}");
    unchanged("a junk part");

    // After all that, the good part still merges.
    let m = merge(&file, &[&good]);
    assert_eq!(m["copied"].as_u64(), Some(rows(&good).len() as u64));
}

#[test]
fn parts_baked_by_concurrent_processes_into_one_file_equal_a_whole_bake() {
    // Two processes share the file: they take turns for the write lock of
    // each batch, and the file ends whole and equal to a one-process bake.
    let dir = tempfile::tempdir().unwrap();
    let base = voxel_world(dir.path(), "base.isoterra");
    let region = "0,-32,0,256,32,128";
    let whole = copy_world(&base, dir.path(), "whole.isoterra");
    bake(&whole, &["--region", region, "--threads", "2"]);
    let expected = rows(&whole);
    assert_eq!(expected.len(), 512);
    for round in 0..2 {
        let shared = copy_world(&base, dir.path(), &format!("shared{round}.isoterra"));
        let children: Vec<_> = (1..=2)
            .map(|k| {
                bin()
                    .args([
                        "bake",
                        s(&shared),
                        "--region",
                        region,
                        "--threads",
                        "1",
                        "--quiet",
                        "--part",
                        &format!("{k}/2"),
                    ])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let f = WorldFile::open(&shared).unwrap();
        f.integrity_check().unwrap();
        drop(f);
        let got = rows(&shared);
        let keys = |r: &[(ChunkKey, String, Vec<u8>)]| {
            r.iter().map(|x| (x.0, x.1.clone())).collect::<Vec<_>>()
        };
        assert_eq!(got.len(), expected.len(), "round {round}: rows lost");
        assert_eq!(keys(&got), keys(&expected), "round {round}");
        assert!(got == expected, "round {round}: payloads differ");
        assert_eq!(hash(&shared), hash(&whole));
    }
}

/// The input box of a baked key as the test computes it from how each kind
/// meshes (not from the code under test): storage chunk ranges per axis.
type BoxOf = dyn Fn(&ChunkKey) -> ([i32; 3], [i32; 3]);

/// Bakes `region` of a copy of `base`, strokes once, and checks that a
/// rebake redoes exactly the chunks whose input box holds an edited storage
/// chunk, ends byte for byte like a fresh bake of the edited world, and
/// that undo makes the first rows current again.
fn check_incremental(
    dir: &Path,
    base: &Path,
    name: &str,
    bake_args: &[&str],
    stroke: &[&str],
    box_of: &BoxOf,
) {
    let work = copy_world(base, dir, &format!("{name}-work.isoterra"));
    let first = bake(&work, bake_args);
    let total = first["chunks"].as_u64().unwrap();
    assert_eq!(first["baked"].as_u64(), Some(total), "{name}: {first}");
    assert_eq!(first["rebaked"], 0);
    let (rows0, src0, stored0) = (rows(&work), sources(&work), stored(&work));
    let h0 = hash(&work);

    let mut args = vec!["stroke", s(&work)];
    args.extend_from_slice(stroke);
    ok(&args);
    let stored1 = stored(&work);
    let touched = edited(&stored0, &stored1);
    assert!(!touched.is_empty(), "{name}: the stroke changed nothing");
    let inside = |k: &ChunkKey, t: &ChunkKey| {
        let (lo, hi) = box_of(k);
        let c = [t.x, t.y, t.z];
        (0..3).all(|a| lo[a] <= c[a] && c[a] <= hi[a])
    };
    let expected: BTreeSet<ChunkKey> = rows0
        .iter()
        .map(|r| r.0)
        .filter(|k| touched.iter().any(|t| inside(k, t)))
        .collect();
    assert!(
        !expected.is_empty() && (expected.len() as u64) < total,
        "{name}: {} of {total} chunks see the edit",
        expected.len()
    );

    // Undone before any rebake: the stored chunks and so the first rows'
    // stamps are back, and nothing is baked.
    ok(&["undo", s(&work)]);
    assert_eq!(stored(&work), stored0, "{name}: undo restores the chunks");
    let none = bake(&work, bake_args);
    assert_eq!(
        (none["baked"].as_u64(), none["skipped"].as_u64()),
        (Some(0), Some(total)),
        "{name}: {none}"
    );
    ok(&["redo", s(&work)]);
    assert_eq!(stored(&work), stored1);

    // The rebake: exactly the expected chunks, counted as rebaked.
    let mut threads = bake_args.to_vec();
    threads.extend(["--threads", "3", "--shuffle", "7"]);
    let again = bake(&work, &threads);
    let n = expected.len() as u64;
    assert_eq!(again["baked"].as_u64(), Some(n), "{name}: {again}");
    assert_eq!(again["rebaked"].as_u64(), Some(n), "{name}: {again}");
    assert_eq!(again["new"], 0);
    assert_eq!(again["skipped"].as_u64(), Some(total - n));
    let src1 = sources(&work);
    let restamped: BTreeSet<ChunkKey> = src1
        .iter()
        .filter(|(k, v)| src0.get(k) != Some(v))
        .map(|(k, _)| *k)
        .collect();
    assert_eq!(restamped, expected, "{name}: the rebaked set");

    // The same as a bake from scratch of the edited world.
    let fresh = copy_world(base, dir, &format!("{name}-fresh.isoterra"));
    let mut args = vec!["stroke", s(&fresh)];
    args.extend_from_slice(stroke);
    ok(&args);
    assert_eq!(stored(&fresh), stored1);
    bake(&fresh, bake_args);
    assert!(rows(&fresh) == rows(&work), "{name}: incremental != fresh");
    assert_eq!(sources(&fresh), src1);
    assert_eq!(hash(&fresh), hash(&work));
    // The text summary names the rebaked chunks.
    let mut quiet = bake_args.to_vec();
    quiet.push("--quiet");
    let mut args = vec!["bake", s(&fresh)];
    args.extend_from_slice(&quiet);
    let text = ok(&args);
    assert!(
        text.contains(&format!(
            "baked 0 chunks ({total} skipped as current, 0 rebaked"
        )),
        "{text}"
    );

    // Undone after the rebake: the same chunks are rebaked, back to the
    // first bytes and stamps.
    ok(&["undo", s(&work)]);
    let back = bake(&work, bake_args);
    assert_eq!(back["rebaked"].as_u64(), Some(n), "{name}: {back}");
    assert_eq!(back["skipped"].as_u64(), Some(total - n));
    assert!(rows(&work) == rows0, "{name}: undo gives the first rows");
    assert_eq!(sources(&work), src0);
    assert_eq!(hash(&work), h0);
}

/// `[c*2^lod - 1, (c + 1)*2^lod]`: the storage chunks a chunk at `lod` reads
/// on one axis (its own, plus the nodes one sample past each face), while
/// `2^lod` is below the chunk size.
fn around(c: i32, lod: u8) -> (i32, i32) {
    ((c << lod) - 1, (c + 1) << lod)
}

#[test]
fn a_rebake_after_an_edit_redoes_only_the_chunks_that_read_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();

    // Voxel, 16-cell chunks, at LOD 0 and 1.
    let voxel = voxel_world(d, "voxel.isoterra");
    for lod in [0u8, 1] {
        let box_of = move |k: &ChunkKey| {
            let a = [k.x, k.y, k.z].map(|c| around(c, lod));
            (a.map(|v| v.0), a.map(|v| v.1))
        };
        let l = lod.to_string();
        check_incremental(
            d,
            &voxel,
            &format!("voxel-lod{lod}"),
            &["--region", "0,0,0,128,32,128", "--lod", &l],
            &["--tool", "add", "--at", "40,8,40", "--radius", "3"],
            &box_of,
        );
    }

    // Heightmap, 16-cell chunks: the apron of one sample reaches one chunk
    // either way at LOD 0 and 1.
    let hm = heightmap_world(d, "hm.isoterra");
    for lod in [0u8, 1] {
        let box_of = |k: &ChunkKey| ([k.x - 1, k.y - 1, 0], [k.x + 1, k.y + 1, 0]);
        let l = lod.to_string();
        check_incremental(
            d,
            &hm,
            &format!("heightmap-lod{lod}"),
            &["--region", "0,0,128,128", "--lod", &l],
            &["--tool", "raise", "--at", "40,40", "--radius", "4"],
            &box_of,
        );
    }

    // Side view, 6 x 3 chunks of 16 cells: a chunk reads its own nodes and
    // the first row and column of the chunks above and to the right.
    let side = d.join("side.isoterra");
    ok(&[
        "new",
        s(&side),
        "--kind",
        "side2d",
        "--seed",
        "3",
        "--size",
        "96x48",
        "--preset",
        "caves",
        "--chunk",
        "16",
    ]);
    let box_of = |k: &ChunkKey| ([k.x, k.y, 0], [(k.x + 1).min(5), (k.y + 1).min(2), 0]);
    check_incremental(
        d,
        &side,
        "side2d",
        &["--region", "0,0,96,48"],
        &["--tool", "dig", "--at", "40,20", "--radius", "3"],
        &box_of,
    );

    // Map, 4 x 3 chunks of 16 cells, terrain and water: one ring of nodes
    // around the chunk's own.
    use isoterra::store::MapDocument;
    use isoterra::world::MapParams;
    let map = d.join("map.isoterra");
    drop(
        MapDocument::create(
            &map,
            &MapParams::DEFAULT.with_size(64, 48).with_chunk_cells(16),
        )
        .unwrap(),
    );
    let box_of = |k: &ChunkKey| {
        (
            [(k.x - 1).max(0), (k.y - 1).max(0), 0],
            [(k.x + 1).min(3), (k.y + 1).min(2), 0],
        )
    };
    check_incremental(
        d,
        &map,
        "map",
        &["--region", "0,0,64,48"],
        &["--tool", "raise", "--at", "40,20", "--radius", "3"],
        &box_of,
    );
}

#[test]
fn a_folder_bake_rebakes_only_stale_chunks_too() {
    let dir = tempfile::tempdir().unwrap();
    let file = heightmap_world(dir.path(), "h.isoterra");
    let out = dir.path().join("out");
    let region = "0,0,128,128";
    let first = bake(&file, &["--region", region, "--out", s(&out)]);
    assert_eq!(first["baked"], 64);
    let manifest = |d: &Path| -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(d.join("manifest.json")).unwrap()).unwrap()
    };
    let m0 = manifest(&out);
    ok(&[
        "stroke",
        s(&file),
        "--tool",
        "raise",
        "--at",
        "40,40",
        "--radius",
        "4",
    ]);
    let touched = stored(&file);
    assert!(!touched.is_empty());
    let expected = m0["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            let (x, y) = (c["key"][0].as_i64().unwrap(), c["key"][1].as_i64().unwrap());
            touched
                .keys()
                .any(|t| (i64::from(t.x) - x).abs() <= 1 && (i64::from(t.y) - y).abs() <= 1)
        })
        .count() as u64;
    let again = bake(&file, &["--region", region, "--out", s(&out)]);
    assert_eq!(again["rebaked"].as_u64(), Some(expected), "{again}");
    assert_eq!(again["skipped"].as_u64(), Some(64 - expected));
    // The folder ends like a fresh folder bake of the edited world.
    let fresh = dir.path().join("fresh");
    bake(&file, &["--region", region, "--out", s(&fresh)]);
    let mut m1 = manifest(&out);
    let mut m2 = manifest(&fresh);
    for m in [&mut m1, &mut m2] {
        m.as_object_mut().unwrap().remove("world");
    }
    assert_eq!(m1, m2);
    assert_eq!(m1["chunks"].as_array().unwrap().len(), 64);
    for c in m1["chunks"].as_array().unwrap() {
        if let Some(glb) = c["glb"].as_str() {
            assert_eq!(
                std::fs::read(out.join(glb)).unwrap(),
                std::fs::read(fresh.join(glb)).unwrap()
            );
        }
    }
}

#[test]
fn a_merge_after_the_same_edit_keeps_the_rows_it_did_not_reach() {
    // A part baked before an edit, then the same stroke on the part and on
    // FILE: they hold the same world again, and the part's rows whose
    // inputs the stroke did not reach are still current.
    let dir = tempfile::tempdir().unwrap();
    let base = voxel_world(dir.path(), "base.isoterra");
    let region = "0,0,0,128,32,64";
    let part = copy_world(&base, dir.path(), "part.isoterra");
    let p = bake(&part, &["--region", region, "--part", "2/2"]);
    assert_eq!(p["baked"], 32);
    let file = copy_world(&base, dir.path(), "file.isoterra");
    let stroke = |f: &Path| {
        ok(&[
            "stroke",
            s(f),
            "--tool",
            "add",
            "--at",
            "72,8,8",
            "--radius",
            "3",
        ])
    };
    let before = stored(&part);
    stroke(&part);
    stroke(&file);
    let touched = edited(&before, &stored(&part));
    assert!(!touched.is_empty());
    let reached = rows(&part)
        .iter()
        .filter(|(k, ..)| {
            touched
                .iter()
                .any(|t| (t.x - k.x).abs() <= 1 && (t.y - k.y).abs() <= 1 && (t.z - k.z).abs() <= 1)
        })
        .count() as u64;
    assert!(reached > 0 && reached < 32, "{reached}");
    let m = merge(&file, &[&part]);
    assert_eq!(m["copied"].as_u64(), Some(32 - reached), "{m}");
    assert_eq!(m["stale"].as_u64(), Some(reached), "{m}");
    // The rest of the region is baked in FILE; the result is a whole bake.
    let rest = bake(&file, &["--region", region]);
    assert_eq!(rest["skipped"].as_u64(), Some(32 - reached), "{rest}");
    assert_eq!(rest["new"].as_u64(), Some(32 + reached), "{rest}");
    let whole = copy_world(&base, dir.path(), "whole.isoterra");
    stroke(&whole);
    bake(&whole, &["--region", region]);
    assert!(rows(&file) == rows(&whole));
    assert_eq!(hash(&file), hash(&whole));
}
