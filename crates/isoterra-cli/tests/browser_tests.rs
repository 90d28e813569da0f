//! The web editor in a real browser: runs `tests/e2e/editor.test.mjs`
//! (playwright-core driving Debian's Chromium) against this crate's
//! `isoterra` binary.
//!
//! Needs `/usr/bin/chromium` (or `CHROMIUM=/path`), Node.js and
//! `npm ci` in `tests/e2e`. When any of them is missing the test prints a loud
//! notice and passes, unless `ISOTERRA_REQUIRE_BROWSER=1`, which makes a
//! missing browser a failure (CI sets it).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("..");
    root.canonicalize().unwrap_or(root)
}

fn chromium() -> Result<PathBuf, String> {
    match std::env::var_os("CHROMIUM") {
        Some(p) if !p.is_empty() => {
            let p = PathBuf::from(p);
            if p.is_file() {
                Ok(p)
            } else {
                Err(format!("CHROMIUM={} is not a file", p.display()))
            }
        }
        _ => {
            let p = PathBuf::from("/usr/bin/chromium");
            if p.is_file() {
                Ok(p)
            } else {
                Err("no /usr/bin/chromium (apt-get install chromium, or set CHROMIUM)".to_string())
            }
        }
    }
}

fn node() -> Result<String, String> {
    match Command::new("node").arg("--version").output() {
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).trim().to_string()),
        Ok(o) => Err(format!("`node --version` failed with {}", o.status)),
        Err(e) => Err(format!("no `node` on PATH ({e})")),
    }
}

fn playwright(root: &Path) -> Result<PathBuf, String> {
    let p = root.join("tests/e2e/node_modules/playwright-core/package.json");
    if p.is_file() {
        Ok(p)
    } else {
        Err("no tests/e2e/node_modules/playwright-core (run `npm ci` in tests/e2e)".to_string())
    }
}

/// Writes straight to the process's stderr, past the test harness's output
/// capture, so the notice shows in a passing run too.
fn loud(message: &str) {
    let bar = "=".repeat(78);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "\n{bar}\n{message}\n{bar}\n");
    let _ = err.flush();
}

#[test]
fn editor_works_in_a_real_browser() {
    let root = repo_root();
    let require = std::env::var("ISOTERRA_REQUIRE_BROWSER").is_ok_and(|v| v == "1");
    let missing: Vec<String> = [chromium().err(), node().err(), playwright(&root).err()]
        .into_iter()
        .flatten()
        .collect();
    if !missing.is_empty() {
        let message = format!(
            "SKIPPED: browser tests need Debian's chromium, Node.js and `npm ci` in tests/e2e.\n\
             Missing: {}.\n\
             Set ISOTERRA_REQUIRE_BROWSER=1 to make this a failure.",
            missing.join("; ")
        );
        assert!(!require, "ISOTERRA_REQUIRE_BROWSER=1 but {message}");
        loud(&message);
        return;
    }
    let chromium = chromium().expect("checked above");
    let screenshots = std::env::var_os("ISOTERRA_SCREENSHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target").join("e2e-screenshots"));
    let script = root.join("tests/e2e/editor.test.mjs");
    let status = Command::new("node")
        .arg(&script)
        .current_dir(&root)
        .env("ISOTERRA_BIN", env!("CARGO_BIN_EXE_isoterra"))
        .env("CHROMIUM", &chromium)
        .env("ISOTERRA_SCREENSHOTS", &screenshots)
        .status()
        .expect("node starts");
    assert!(
        status.success(),
        "the browser tests failed ({status}); their output is above, screenshots are in {}",
        screenshots.display()
    );
}

#[test]
fn browser_test_files_are_in_place() {
    let root = repo_root();
    for f in [
        "tests/e2e/package.json",
        "tests/e2e/package-lock.json",
        "tests/e2e/editor.test.mjs",
        "tests/e2e/png.mjs",
        "tests/e2e/frames.mjs",
    ] {
        assert!(root.join(f).is_file(), "{f} is missing");
    }
    let lock = std::fs::read_to_string(root.join("tests/e2e/package-lock.json")).expect("lock");
    assert!(
        lock.contains("\"node_modules/playwright-core\""),
        "package-lock.json pins playwright-core"
    );
}
