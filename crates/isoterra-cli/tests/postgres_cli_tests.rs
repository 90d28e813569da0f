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

use common::{fails, ok, s};

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

/// A world URL on `server` no other test uses.
fn world_url(server: &str, tag: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let sep = if server.contains('?') { '&' } else { '?' };
    format!("{server}{sep}world={tag}-{}-{nanos}", std::process::id())
}

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
    let Some(server) = server("every_kind_on_postgres_matches_the_same_world_in_a_file") else {
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
        let url = world_url(&server, kind);
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
    let Some(server) = server("bad_urls_missing_worlds_and_taken_names_are_refused") else {
        return;
    };
    let url = world_url(&server, "taken");
    // A refused `new` makes nothing: the name is still free afterwards.
    let e = fails(&["new", &url, "--kind", "map", "--preset", "volcano"]);
    assert!(e.contains("volcano"), "{e}");
    ok(&["new", &url, "--kind", "map", "--size", "32x32"]);
    let e = fails(&["new", &url, "--kind", "map"]);
    assert!(e.contains("already exists"), "{e}");
    let missing = world_url(&server, "missing");
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
    let e = fails(&["bake", url.as_str(), "--region", "0,0,32,32"]);
    assert!(e.contains("takes a world file"), "{e}");
    // A password never shows in what is printed.
    let (scheme, rest) = no_world.split_once("://").unwrap();
    let (user, host) = rest.split_once('@').unwrap_or(("isoterra", rest));
    let secret = format!("{scheme}://{user}:hunter2@{host}?world=nope");
    let e = fails(&["info", &secret]);
    assert!(!e.contains("hunter2"), "{e}");
}
