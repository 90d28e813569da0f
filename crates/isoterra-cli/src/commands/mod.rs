//! One module per subcommand; each takes its parsed arguments and does the work.

mod bake;
mod bench;
mod bench_map;
mod bench_stream;
mod contour;
mod demo;
mod edit;
mod export;
mod import;
mod info;
mod map;
mod merge;
mod mesh3d;
mod new;
mod parse;
mod serve;

use crate::args::{Cli, Command};

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Edit(a) => serve::run(&a),
        Command::New(a) => new::run(&a),
        Command::Info(a) => info::run(&a),
        Command::Stroke(a) => edit::stroke(&a),
        Command::Undo(a) => edit::undo(&a.file),
        Command::Redo(a) => edit::redo(&a.file),
        Command::Export(a) => export::run(&a),
        Command::Contour(a) => contour::run(&a),
        Command::Mesh3d(a) => mesh3d::run(&a),
        Command::Import(a) => import::run(&a),
        Command::Bench(a) => bench::run(&a),
        Command::Demo(a) => demo::run(&a),
        Command::Bake(a) => bake::run(&a),
        Command::Merge(a) => merge::run(&a),
    }
}

/// Writes a file through a temporary sibling and a rename, so a failed export
/// never leaves half a file behind.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    use anyhow::Context;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = path
        .file_name()
        .with_context(|| format!("output path {} has no file name", path.display()))?;
    let tmp = dir.join(format!(".{}.tmp", name.to_string_lossy()));
    std::fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}
