//! One module per subcommand; each takes its parsed arguments and does the work.

mod bake;
mod bench;
mod bench_map;
mod bench_store;
mod bench_stream;
mod contour;
mod demo;
mod edit;
mod export;
mod import;
mod info;
mod map;
mod map_query;
mod merge;
mod mesh3d;
mod new;
mod parse;
mod preview;
mod query;
mod recipe;
mod serve;

use std::sync::atomic::{AtomicBool, Ordering};

use crate::args::{Cli, Command};

/// `--force`: outputs may replace what is not a regular file.
static FORCE: AtomicBool = AtomicBool::new(false);

/// Runs the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    FORCE.store(cli.force, Ordering::Relaxed);
    match cli.command {
        Command::Edit(a) => serve::run(&a),
        Command::New(a) => new::run(&a),
        Command::Recipe(a) => recipe::run(&a),
        Command::Preview(a) => preview::run(&a),
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
        Command::Islands(a) => query::islands(&a),
        Command::Raycast(a) => query::raycast(&a),
        Command::Erode(a) => edit::erode(&a),
        Command::Los(a) => map_query::los(&a),
        Command::Path(a) => map_query::path(&a),
    }
}

/// The worker thread count from `--threads` (all cores when it is left out).
pub fn worker_threads(threads: Option<usize>) -> anyhow::Result<usize> {
    match threads {
        Some(0) => {
            anyhow::bail!("--threads 0: use at least 1 thread (or leave it out for all cores)")
        }
        Some(n) if n > MAX_THREADS => anyhow::bail!("--threads {n}: at most {MAX_THREADS}"),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

/// Most worker threads `--threads` accepts.
const MAX_THREADS: usize = 1024;

/// A thread pool of `threads` workers for one command.
pub fn worker_pool(threads: usize) -> anyhow::Result<rayon::ThreadPool> {
    use anyhow::Context;
    // The calling thread is one of the workers: `install` runs on it, and
    // one thread means no other thread at all. Handing the work to a fresh
    // thread and waiting for it cost a one-thread `mesh3d` up to 18 ms of
    // wake-up time on a shared virtual machine.
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .use_current_thread()
        .build()
        .context("cannot start the worker threads")
}

/// Writes a file through a temporary sibling and a rename, so a failed export
/// never leaves half a file behind.
///
/// Only a regular file is replaced: a symlink, a FIFO, a device or a folder
/// at `path` is refused (and left alone) unless `--force` was given. The
/// temporary file is created exclusively, with a random name, in the target
/// folder, so nothing planted there (a symlink to another file) is followed
/// or overwritten.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_atomic_with(path, |w| Ok(w.write_all(bytes)?))
}

/// As [`write_atomic`], with the file's bytes written by `write` into a
/// buffered writer, so a large output is never held whole in memory; what
/// `write` returns is returned. If `write` fails, nothing is left at `path`
/// (the temporary file goes).
pub fn write_atomic_with<T>(
    path: &std::path::Path,
    write: impl FnOnce(&mut (dyn std::io::Write + Send)) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    use anyhow::Context;
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = path
        .file_name()
        .with_context(|| format!("output path {} has no file name", path.display()))?;
    match std::fs::symlink_metadata(path) {
        Ok(md) if md.is_dir() => {
            anyhow::bail!("{} is a folder; name a file to write", path.display())
        }
        Ok(md) if !md.is_file() && !FORCE.load(Ordering::Relaxed) => {
            let what = if md.file_type().is_symlink() {
                "a symbolic link"
            } else {
                "not a regular file (a FIFO, a socket or a device)"
            };
            anyhow::bail!(
                "{} is {what}; refusing to replace it (remove it, pick another name, or pass --force)",
                path.display()
            )
        }
        _ => {}
    }
    let prefix = format!(".{}.", name.to_string_lossy());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // The file keeps the mode of the one it replaces, or gets the usual
    // 0644 (a temporary file is created 0600).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .map_or(0o644, |m| m.permissions().mode() & 0o777);
        builder.permissions(std::fs::Permissions::from_mode(mode));
    }
    let mut tmp = builder
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    let value = {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
        let value = write(&mut w).with_context(|| format!("cannot write {}", path.display()))?;
        w.flush()
            .with_context(|| format!("cannot write {}", path.display()))?;
        value
    };
    tmp.as_file()
        .sync_all()
        .with_context(|| format!("cannot write {}", tmp.path().display()))?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(value)
}

/// Builds a new world file with `build` in a hidden folder beside `out` and
/// moves it to `out` only once it is complete: an import that fails or is
/// interrupted leaves nothing at `out` (at most a `.isoterra-new-*` folder),
/// so the same command can simply be run again.
///
/// Refuses when something is at `out` already, before doing any work, and
/// never replaces what appears there meanwhile.
pub fn create_in_place(
    out: &std::path::Path,
    build: impl FnOnce(&std::path::Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let exists = |p: &std::path::Path| std::fs::symlink_metadata(p).is_ok();
    if exists(out) {
        anyhow::bail!(
            "{} already exists; choose another output file",
            out.display()
        );
    }
    let dir = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let staging = tempfile::Builder::new()
        .prefix(".isoterra-new-")
        .tempdir_in(dir)
        .with_context(|| format!("cannot create a temporary folder in {}", dir.display()))?;
    let built = staging.path().join("world.isoterra");
    build(&built)?;
    // The document is closed: the file is complete on its own, with no log.
    for side in ["-wal", "-shm"] {
        let mut p = built.as_os_str().to_os_string();
        p.push(side);
        anyhow::ensure!(
            !exists(std::path::Path::new(&p)),
            "the new world {} was not closed cleanly",
            built.display()
        );
    }
    // A hard link claims `out` only if nothing is there (rename would replace).
    match std::fs::hard_link(&built, out) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(anyhow::anyhow!(
            "{} appeared while the world was being built; it was left alone",
            out.display()
        )),
        Err(_) if !exists(out) => std::fs::rename(&built, out)
            .with_context(|| format!("cannot move the new world to {}", out.display())),
        Err(e) => Err(e).with_context(|| format!("cannot create {}", out.display())),
    }
}

/// The most bytes an image (PNG or R16) to import may hold: far more than
/// the most heights one import may store (about 11 million, 22 MB as R16).
pub const MAX_IMAGE_INPUT: u64 = 256 << 20;
/// The most bytes a Tiled map may hold. (A `.npy` array is read as far as
/// its header announces, straight into the field: see `read_npy3_file`.)
pub const MAX_DOCUMENT_INPUT: u64 = 1 << 30;

/// Reads an input file of at most `limit` bytes. Whatever the path is (a
/// pipe, `/dev/zero`), reading stops one byte past the limit with an error
/// naming it, instead of running until memory is gone.
pub fn read_input(path: &std::path::Path, limit: u64) -> anyhow::Result<Vec<u8>> {
    use anyhow::Context;
    use std::io::Read;
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        anyhow::bail!("{} is a folder, not an input file", path.display());
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() as u64 > limit {
        anyhow::bail!(
            "{} holds more than {} MiB, the most this input may be",
            path.display(),
            limit >> 20
        );
    }
    Ok(bytes)
}
