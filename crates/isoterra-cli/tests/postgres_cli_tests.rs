//! The command line on worlds kept on a PostgreSQL server
//! (`postgres://USER@HOST/DB?world=NAME`): `new`, `stroke`, `undo`, `redo`,
//! `info` and `export` give what they give on a world file — the same
//! `info --hash` and the same exported bytes after the same commands — and
//! bad URLs, missing worlds and taken names are refused with a message.
//!
//! Needs a server: `ISOTERRA_POSTGRES_URL` (a URL without `world=`, e.g.
//! from `.ci/start-postgres`). Without it the tests skip loudly, unless
//! `ISOTERRA_REQUIRE_POSTGRES=1`.

mod common;
#[path = "../../isoterra-store/tests/pg_support/mod.rs"]
mod pg_support;

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{bin, fails, ok, s};
use serde_json::Value;

/// The `info --hash` line.
fn hash(location: &str) -> String {
    ok(&["info", location, "--hash"])
        .lines()
        .last()
        .unwrap()
        .to_string()
}

#[test]
fn every_kind_on_postgres_matches_the_same_world_in_a_file() {
    let Some(server) =
        pg_support::server("every_kind_on_postgres_matches_the_same_world_in_a_file")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // kind, new flags, two strokes, an export.
    type Case<'a> = (&'a str, &'a [&'a str], [&'a [&'a str]; 2], &'a [&'a str]);
    let cases: [Case; 4] = [
        (
            "side2d",
            &["--size", "64x32"],
            [
                &["--tool", "dig", "--at", "20,20", "--radius", "5"],
                &[
                    "--tool",
                    "fill",
                    "--at",
                    "40,28",
                    "--radius",
                    "4",
                    "--material",
                    "2",
                ],
            ],
            &["--format", "png"],
        ),
        (
            "heightmap",
            &[],
            [
                &["--tool", "raise", "--at", "10,10", "--radius", "8"],
                &["--tool", "smooth", "--at", "14,8", "--radius", "6"],
            ],
            &["--format", "png16", "--region", "0,0,64,64"],
        ),
        (
            "voxel",
            &[],
            [
                &["--tool", "dig", "--at", "4,2,4", "--radius", "5"],
                &["--tool", "add", "--at", "4,20,4", "--radius", "4"],
            ],
            &["--format", "glb", "--region", "-16,0,-16,16,40,16"],
        ),
        (
            "map",
            &["--size", "48x48"],
            [
                &["--tool", "cliff-up", "--at", "20,20", "--radius", "5"],
                &[
                    "--tool",
                    "paint",
                    "--at",
                    "30,12",
                    "--radius",
                    "4",
                    "--texture",
                    "3",
                ],
            ],
            &["--format", "glb"],
        ),
    ];
    for (kind, flags, strokes, export) in cases {
        let file = dir.path().join(format!("{kind}.isoterra"));
        let url = pg_support::world_url(&server, kind);
        for at in [s(&file), url.as_str()] {
            let mut new = vec!["new", at, "--kind", kind, "--seed", "5"];
            new.extend_from_slice(flags);
            ok(&new);
            for st in strokes {
                let mut args = vec!["stroke", at];
                args.extend_from_slice(st);
                ok(&args);
            }
            let undid = ok(&["undo", at]);
            assert!(undid.starts_with("undid stroke 2"), "{kind}: {undid}");
            assert!(ok(&["redo", at]).starts_with("redid stroke 2"), "{kind}");
        }
        assert_eq!(hash(s(&file)), hash(&url), "{kind}: info --hash");
        let ext = if export[1] == "glb" { "glb" } else { "png" };
        let out_file = dir.path().join(format!("{kind}-file.{ext}"));
        let out_pg = dir.path().join(format!("{kind}-pg.{ext}"));
        for (at, out) in [(s(&file), &out_file), (url.as_str(), &out_pg)] {
            let mut args = vec!["export", at, "-o", s(out)];
            args.extend_from_slice(export);
            ok(&args);
        }
        assert_eq!(
            std::fs::read(&out_file).unwrap(),
            std::fs::read(&out_pg).unwrap(),
            "{kind}: exported bytes"
        );
    }
}

#[test]
fn bad_urls_missing_worlds_and_taken_names_are_refused() {
    let Some(server) = pg_support::server("bad_urls_missing_worlds_and_taken_names_are_refused")
    else {
        return;
    };
    let url = pg_support::world_url(&server, "taken");
    // A refused `new` makes nothing: the name is still free afterwards.
    let e = fails(&["new", &url, "--kind", "map", "--preset", "volcano"]);
    assert!(e.contains("volcano"), "{e}");
    ok(&["new", &url, "--kind", "map", "--size", "32x32"]);
    let e = fails(&["new", &url, "--kind", "map"]);
    assert!(e.contains("already exists"), "{e}");
    let missing = pg_support::world_url(&server, "missing");
    let e = fails(&["info", &missing]);
    assert!(e.contains("no such world"), "{e}");
    let e = fails(&[
        "stroke", &missing, "--tool", "raise", "--at", "1,1", "--radius", "4",
    ]);
    assert!(e.contains("no such world"), "{e}");
    let no_world = server.split('?').next().unwrap().to_string();
    let e = fails(&["info", &no_world]);
    assert!(e.contains("?world=NAME"), "{e}");
    let e = fails(&["info", &format!("{no_world}?world=a%20b")]);
    assert!(e.contains("world name"), "{e}");
    // Commands that take files only say so, and create nothing.
    let e = fails(&["islands", url.as_str()]);
    assert!(e.contains("takes a world file"), "{e}");
    // --queue needs a server, and hands out the chunks itself.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.isoterra");
    ok(&["new", s(&file), "--kind", "map", "--size", "32x32"]);
    let e = fails(&["bake", s(&file), "--region", "0,0,32,32", "--queue"]);
    assert!(e.contains("PostgreSQL server"), "{e}");
    for extra in [&["--part", "1/2"][..], &["--out", s(dir.path())][..]] {
        let mut args = vec!["bake", url.as_str(), "--region", "0,0,32,32", "--queue"];
        args.extend_from_slice(extra);
        let e = fails(&args);
        assert!(e.contains("leave out"), "{e}");
    }
    let e = fails(&["bake", &url, "--region", "0,0,32,32", "--job-chunks", "4"]);
    assert!(e.contains("add --queue"), "{e}");
    let e = fails(&[
        "bake",
        &url,
        "--region",
        "0,0,32,32",
        "--queue",
        "--job-chunks",
        "0",
    ]);
    assert!(e.contains("at least 1"), "{e}");
    // A password never shows in what is printed.
    let (scheme, rest) = no_world.split_once("://").unwrap();
    let (user, host) = rest.split_once('@').unwrap_or(("isoterra", rest));
    let secret = format!("{scheme}://{user}:hunter2@{host}?world=nope");
    let e = fails(&["info", &secret]);
    assert!(!e.contains("hunter2"), "{e}");
}

/// A `bake --queue` worker process, killed however the test ends.
struct Worker(Option<Child>);

impl Worker {
    fn child(&mut self) -> &mut Child {
        self.0.as_mut().expect("a worker process")
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn worker(args: &[&str]) -> Worker {
    Worker(Some(
        bin()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    ))
}

/// The JSON summary a finished worker printed.
fn summary(mut w: Worker) -> Value {
    let child = w.0.take().expect("a worker process");
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "worker failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(text.lines().last().unwrap()).unwrap()
}

#[test]
fn queue_workers_bake_a_server_world_to_the_hash_of_a_local_bake() {
    let Some(server) =
        pg_support::server("queue_workers_bake_a_server_world_to_the_hash_of_a_local_bake")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // kind, new flags, a stroke, a region, a second stroke inside it.
    type Case<'a> = (
        &'a str,
        &'a [&'a str],
        &'a [&'a str],
        &'a str,
        &'a [&'a str],
    );
    let cases: [Case; 3] = [
        (
            "voxel",
            &[],
            &["--tool", "dig", "--at", "20,30,20", "--radius", "9"],
            "0,0,0,160,64,160",
            &["--tool", "add", "--at", "70,40,70", "--radius", "6"],
        ),
        (
            "map",
            &["--size", "96x96"],
            &["--tool", "cliff-up", "--at", "30,30", "--radius", "8"],
            "0,0,96,96",
            &["--tool", "water", "--at", "60,60", "--radius", "6"],
        ),
        (
            "heightmap",
            &[],
            &["--tool", "raise", "--at", "10,10", "--radius", "8"],
            "0,0,256,256",
            &["--tool", "lower", "--at", "100,100", "--radius", "10"],
        ),
    ];
    for (kind, flags, stroke, region, second) in cases {
        let file = dir.path().join(format!("{kind}.isoterra"));
        let url = pg_support::world_url(&server, &format!("q{kind}"));
        for at in [s(&file), url.as_str()] {
            let mut new = vec!["new", at, "--kind", kind, "--seed", "8"];
            new.extend_from_slice(flags);
            ok(&new);
            let mut args = vec!["stroke", at];
            args.extend_from_slice(stroke);
            ok(&args);
        }
        ok(&["bake", s(&file), "--region", region, "--threads", "1", "-q"]);
        // Three workers at once, one thread each, small jobs.
        let q = [
            "bake",
            &url,
            "--region",
            region,
            "--queue",
            "--job-chunks",
            "3",
            "--threads",
            "1",
            "--json",
            "-q",
        ];
        let workers: Vec<Worker> = (0..3).map(|_| worker(&q)).collect();
        let sums: Vec<Value> = workers.into_iter().map(summary).collect();
        let baked: u64 = sums.iter().map(|v| v["baked"].as_u64().unwrap()).sum();
        let plan = sums[0]["plan_chunks"].as_u64().unwrap();
        assert_eq!(baked, plan, "{kind}: every chunk baked once: {sums:?}");
        let run = &sums[0]["queue"]["run"];
        for v in &sums {
            assert_eq!(&v["queue"]["run"], run, "{kind}: one run");
            assert_eq!(v["queue"]["done"], v["queue"]["jobs"], "{kind}");
        }
        assert_eq!(
            hash(s(&file)),
            hash(&url),
            "{kind}: queue bake = local bake"
        );
        // A worker started after the run finished finds nothing to do.
        let late = summary(worker(&q));
        assert_eq!(late["baked"], 0, "{kind}: {late}");
        assert_eq!(late["queue"]["jobs_here"], 0, "{kind}");
        // An edit makes a new run, which rebakes only what the edit reached.
        for at in [s(&file), url.as_str()] {
            let mut args = vec!["stroke", at];
            args.extend_from_slice(second);
            ok(&args);
        }
        ok(&["bake", s(&file), "--region", region, "--threads", "1", "-q"]);
        let again = summary(worker(&q));
        assert_ne!(
            &again["queue"]["run"], run,
            "{kind}: the edit made a new run"
        );
        let rebaked = again["rebaked"].as_u64().unwrap();
        assert!(rebaked > 0, "{kind}: {again}");
        // Every chunk of the small map borders the edit.
        assert!(kind == "map" || rebaked < plan, "{kind}: {again}");
        assert_eq!(
            again["skipped"].as_u64().unwrap() + rebaked,
            plan,
            "{kind}: {again}"
        );
        assert_eq!(hash(s(&file)), hash(&url), "{kind}: after the edit");
    }
}

#[test]
fn a_queue_bake_killed_mid_way_resumes_and_a_plain_bake_and_merge_work_on_a_server() {
    let Some(server) = pg_support::server(
        "a_queue_bake_killed_mid_way_resumes_and_a_plain_bake_and_merge_work_on_a_server",
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("v.isoterra");
    let url = pg_support::world_url(&server, "qkill");
    for at in [s(&file), url.as_str()] {
        ok(&["new", at, "--kind", "voxel", "--seed", "3"]);
    }
    let region = "-64,0,-64,192,96,192";
    ok(&["bake", s(&file), "--region", region, "--threads", "1", "-q"]);
    let q = [
        "bake",
        &url,
        "--region",
        region,
        "--queue",
        "--job-chunks",
        "1",
        "--threads",
        "1",
        "--json",
        "-q",
    ];
    // kill -9 a worker once some of its jobs are stored (the hash covers
    // the baked rows, so it moves with the first job).
    let unbaked = hash(&url);
    let mut first = worker(&q);
    let t = Instant::now();
    loop {
        if hash(&url) != unbaked {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(120),
            "the worker stored nothing"
        );
        assert!(
            first.child().try_wait().unwrap().is_none(),
            "the worker ended early"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    first.child().kill().unwrap();
    first.child().wait().unwrap();
    // `info` shows how far the run came.
    let info: Value = serde_json::from_str(&ok(&["info", &url, "--json"])).unwrap();
    let runs = info["bake_runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{info}");
    let (done, jobs) = (
        runs[0]["done"].as_u64().unwrap(),
        runs[0]["jobs"].as_u64().unwrap(),
    );
    assert!(done >= 1 && done < jobs, "{info}");
    assert!(ok(&["info", &url]).contains("bake run:"));
    let rest = summary(worker(&q));
    let plan = rest["plan_chunks"].as_u64().unwrap();
    assert!(rest["baked"].as_u64().unwrap() < plan, "{rest}");
    assert_eq!(rest["queue"]["done"], rest["queue"]["jobs"], "{rest}");
    assert_eq!(
        hash(s(&file)),
        hash(&url),
        "resumed queue bake = local bake"
    );
    let info: Value = serde_json::from_str(&ok(&["info", &url, "--json"])).unwrap();
    let run = &info["bake_runs"][0];
    assert_eq!(run["done"], run["jobs"], "{info}");
    assert_eq!(run["chunks"].as_u64(), Some(plan), "{info}");

    // A plain bake of a server world, in two parts, and a merge into it.
    let url2 = pg_support::world_url(&server, "qparts");
    ok(&["new", &url2, "--kind", "voxel", "--seed", "3"]);
    ok(&["bake", &url2, "--region", region, "--part", "1/2", "-q"]);
    assert_ne!(hash(s(&file)), hash(&url2), "half baked");
    let part2 = dir.path().join("part2.isoterra");
    ok(&["new", s(&part2), "--kind", "voxel", "--seed", "3"]);
    ok(&["bake", s(&part2), "--region", region, "--part", "2/2", "-q"]);
    let merged = ok(&["merge", &url2, "--from", s(&part2)]);
    assert!(merged.contains("copied"), "{merged}");
    assert_eq!(
        hash(s(&file)),
        hash(&url2),
        "parts baked on the server and merged into it"
    );
}

/// The command a manifest in docs/k8s runs (the folded `args` block), with
/// its region made small and `isoterra` this build.
fn manifest_command(name: &str, region: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/k8s")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("exec isoterra"));
    let mut command = Vec::new();
    for l in lines.by_ref() {
        if l.trim().is_empty() || l.trim_start().starts_with("env:") {
            break;
        }
        command.push(l.trim());
    }
    assert!(!command.is_empty(), "{name} runs isoterra");
    let command = command.join(" ");
    assert!(
        command.contains("--region=-2048,-128,-2048,2048,256,2048"),
        "{command}"
    );
    command
        .replace(
            "--region=-2048,-128,-2048,2048,256,2048",
            &format!("--region={region}"),
        )
        .replace(
            "exec isoterra",
            &format!("exec {}", env!("CARGO_BIN_EXE_isoterra")),
        )
}

#[test]
fn the_kubernetes_manifests_commands_bake_the_world() {
    let Some(server) = pg_support::server("the_kubernetes_manifests_commands_bake_the_world")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("v.isoterra");
    ok(&["new", s(&file), "--kind", "voxel", "--seed", "6"]);
    let region = "0,0,0,128,64,128";
    ok(&["bake", s(&file), "--region", region, "--threads", "1", "-q"]);
    let sh = |command: &str, env: &[(&str, &str)]| {
        let out = std::process::Command::new("/bin/sh")
            .args(["-c", command])
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    // The queue Job: two pods.
    let url = pg_support::world_url(&server, "k8sq");
    ok(&["new", &url, "--kind", "voxel", "--seed", "6"]);
    let queue = manifest_command("bake-queue-job.yaml", region);
    for _ in 0..2 {
        sh(&queue, &[("ISOTERRA_WORLD", &url)]);
    }
    assert_eq!(hash(s(&file)), hash(&url), "queue Job");
    // The Indexed Job: every completion index once.
    let url = pg_support::world_url(&server, "k8sp");
    ok(&["new", &url, "--kind", "voxel", "--seed", "6"]);
    let parts = manifest_command("bake-indexed-job.yaml", region);
    for index in 0..8 {
        let index = index.to_string();
        sh(
            &parts,
            &[
                ("ISOTERRA_WORLD", &url),
                ("JOB_COMPLETION_INDEX", &index),
                ("PARTS", "8"),
            ],
        );
    }
    assert_eq!(hash(s(&file)), hash(&url), "Indexed Job");
}
