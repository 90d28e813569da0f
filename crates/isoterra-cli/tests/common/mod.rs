//! Running the real `isoterra` binary from the integration tests.

// Each test file uses its own subset of these.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// The `isoterra` binary built for these tests.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_isoterra"))
}

/// Runs the binary to completion.
pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("the binary runs")
}

/// Standard output and standard error as text.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Runs the binary, asserts it succeeded and returns its standard output.
#[track_caller]
pub fn ok(args: &[&str]) -> String {
    let o = run(args);
    let (stdout, stderr) = text(&o);
    assert!(
        o.status.success(),
        "`isoterra {}` failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        args.join(" ")
    );
    stdout
}

/// Runs the binary, asserts it failed and returns its standard error.
#[track_caller]
pub fn fails(args: &[&str]) -> String {
    let o = run(args);
    let (stdout, stderr) = text(&o);
    assert!(
        !o.status.success(),
        "`isoterra {}` should fail\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        args.join(" ")
    );
    stderr
}

/// A path as `&str` (test paths are UTF-8).
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A version 1.0 `.npy` file: dtype `descr` (e.g. `<f4`, `|u1`), shape as a
/// Python tuple (e.g. `(16, 18, 20)`), then the raw data.
pub fn npy_bytes(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let mut header =
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}").into_bytes();
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(data);
    out
}
