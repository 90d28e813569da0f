//! The low-level world file: one SQLite database holding metadata, chunk
//! payloads and the stroke log.
//!
//! # Schema (version 2)
//!
//! ```text
//! meta    (key TEXT PRIMARY KEY, value TEXT)           kind, format_version, seed, params (JSON),
//!                                                      created_ms, created_by
//! chunks  (layer INTEGER, x INTEGER, y INTEGER,        one row per stored chunk; the payload is
//!          z INTEGER, lod INTEGER, payload BLOB,       written by `encode_chunk`
//!          PRIMARY KEY (layer, x, y, z, lod))
//! strokes (id INTEGER PRIMARY KEY AUTOINCREMENT,       the stroke log, oldest first; done strokes
//!          tool TEXT, params TEXT (JSON),              form a prefix, undone ones (the redo tail)
//!          delta BLOB, undone INTEGER 0/1,             the rest; ids are never reused
//!          created_ms INTEGER)
//! history (singleton = 1, cursor INTEGER,              the undo cursor (id of the last done stroke,
//!          revision INTEGER)                           0 for none) and a counter bumped by every write
//! baked   (layer INTEGER, x INTEGER, y INTEGER,        baked meshes and colliders (version 2, see
//!          z INTEGER, lod INTEGER, source TEXT,        `baked`): `source` is the world stamp the
//!          hash TEXT, payload BLOB,                    chunk was baked from, `hash` the content
//!          PRIMARY KEY (layer, x, y, z, lod))          hash of the decoded payload
//! ```
//!
//! Opening a file with an older schema version migrates it in place, in one
//! transaction: version 1 files get the (empty) `baked` table. The migration
//! is best effort, like the kinds' format migrations: a file that cannot be
//! written (read-only, or another writer holds the lock) still opens and
//! reads as having no baked chunks; a later open migrates it.
//!
//! Chunk coordinates are `(layer, x, y, z, lod)` so every world kind fits the
//! same table: a 2D world uses `z = 0`, `lod = 0`; layers separate densities
//! from, say, baked meshes or paint.
//!
//! The file is marked with `PRAGMA application_id` = [`WorldFile::APPLICATION_ID`]
//! (the bytes `"ISOT"`) and its schema version is `PRAGMA user_version`
//! ([`WorldFile::SCHEMA_VERSION`]).
//!
//! # Durability
//!
//! The database runs in WAL mode with `synchronous = FULL`: every commit
//! syncs the write-ahead log before it returns, so a call that returned `Ok`
//! survives both a killed process and a power loss. (`NORMAL` would survive a
//! killed process but could lose the last commits on power loss; edits are
//! small, so the extra sync per stroke is worth it.) A crash at any instant
//! leaves either the state before or after a transaction, never a half one.
//!
//! # Several handles on one file
//!
//! SQLite allows many readers and one writer at a time; a writer waits up to
//! the busy timeout (5 s by default, see [`WorldFile::set_busy_timeout`]) for
//! another writer to finish and then fails with [`StoreError::Busy`]. Every
//! write also bumps a revision counter inside its transaction: a handle whose
//! last seen revision is no longer current (someone else wrote since) fails
//! with [`StoreError::Conflict`] and writes nothing. So two handles never
//! corrupt the file or interleave their histories; the second writer must
//! reopen to continue. This holds across processes as well as threads (two
//! processes taking turns on one file are tested); the open-time checks read
//! one snapshot, so opening while another process commits sees one
//! consistent state. One host only: SQLite's locks are not reliable on
//! network file systems (see `docs/scaling.md` for a shared server store).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

mod baked_table;

use crate::StoreError;
use crate::chunk_store::{
    BakedRow, ChunkChange, ChunkKey, ChunkLayer, ChunkStore, ChunkVisitor, NewStroke,
    RESERVED_META_KEYS, StrokeCounts, StrokeRecord, WorldMeta, check_migration, check_redo,
    check_undo, initial_meta_entries, meta_params_json, now_ms, parse_meta, stroke_params_json,
    validate_entries, validate_meta,
};
use crate::hash::StampHasher;
use rusqlite::{Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior};

/// An open world file.
///
/// Every write is one SQLite transaction: it either happens completely or
/// not at all, and it is durable when the call returns.
#[derive(Debug)]
pub struct WorldFile {
    conn: Connection,
    path: PathBuf,
    revision: i64,
    /// Declared after `conn`, so the connection closes first.
    _open: OpenMark,
}

/// The worlds this process has open, by file identity (device, inode), with
/// the number of handles.
///
/// Closing any descriptor of a file drops every POSIX lock the process holds
/// on that file, SQLite's included. Reading the header of a file that
/// another handle of this process has open would therefore unlock that
/// handle behind SQLite's back, and another process could then checkpoint
/// and delete the write-ahead log under it (a damaged file). The header is
/// only read for files no handle of this process has open.
static OPEN_WORLDS: Mutex<BTreeMap<(u64, u64), usize>> = Mutex::new(BTreeMap::new());

/// The identity of a file, where the platform has one that locks follow.
fn file_identity(md: &fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((md.dev(), md.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = md;
        None
    }
}

/// One entry of [`OPEN_WORLDS`], removed on drop.
#[derive(Debug)]
struct OpenMark(Option<(u64, u64)>);

impl OpenMark {
    fn new(path: &Path) -> Self {
        let id = fs::metadata(path).ok().as_ref().and_then(file_identity);
        if let Some(id) = id {
            let mut open = OPEN_WORLDS.lock().unwrap_or_else(|e| e.into_inner());
            *open.entry(id).or_default() += 1;
        }
        OpenMark(id)
    }

    fn is_open(md: &fs::Metadata) -> bool {
        file_identity(md).is_some_and(|id| {
            OPEN_WORLDS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains_key(&id)
        })
    }
}

impl Drop for OpenMark {
    fn drop(&mut self) {
        if let Some(id) = self.0 {
            let mut open = OPEN_WORLDS.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(n) = open.get_mut(&id) {
                *n -= 1;
                if *n == 0 {
                    open.remove(&id);
                }
            }
        }
    }
}

const SCHEMA_V1: &str = "
CREATE TABLE meta (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE chunks (
    layer   INTEGER NOT NULL,
    x       INTEGER NOT NULL,
    y       INTEGER NOT NULL,
    z       INTEGER NOT NULL,
    lod     INTEGER NOT NULL,
    payload BLOB NOT NULL,
    PRIMARY KEY (layer, x, y, z, lod)
) WITHOUT ROWID;
CREATE TABLE strokes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    tool       TEXT NOT NULL,
    params     TEXT NOT NULL,
    delta      BLOB NOT NULL,
    undone     INTEGER NOT NULL DEFAULT 0 CHECK (undone IN (0, 1)),
    created_ms INTEGER NOT NULL
);
CREATE INDEX strokes_by_state ON strokes (undone, id);
CREATE TABLE history (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
    cursor    INTEGER NOT NULL,
    revision  INTEGER NOT NULL
);
INSERT INTO history (singleton, cursor, revision) VALUES (1, 0, 0);
";

/// Added by schema version 2: baked chunk meshes and colliders. Derived data,
/// so writing it does not bump the history revision.
const SCHEMA_V2_BAKED: &str = "
CREATE TABLE IF NOT EXISTS baked (
    layer   INTEGER NOT NULL,
    x       INTEGER NOT NULL,
    y       INTEGER NOT NULL,
    z       INTEGER NOT NULL,
    lod     INTEGER NOT NULL,
    source  TEXT NOT NULL,
    hash    TEXT NOT NULL,
    payload BLOB NOT NULL,
    PRIMARY KEY (layer, x, y, z, lod)
);
";

const TABLES: [&str; 4] = ["meta", "chunks", "strokes", "history"];
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";
const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

fn wal_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push("-wal");
    PathBuf::from(s)
}

fn shm_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push("-shm");
    PathBuf::from(s)
}

impl WorldFile {
    /// The schema version this build writes and the newest it reads.
    pub const SCHEMA_VERSION: u32 = 2;
    /// The metadata keys every world file carries, which
    /// [`create_with_entries`](Self::create_with_entries) refuses as extra keys.
    pub const RESERVED_META_KEYS: [&str; 6] = RESERVED_META_KEYS;
    /// `PRAGMA application_id` of every isoterra world file: `"ISOT"` in ASCII.
    pub const APPLICATION_ID: i32 = 0x4953_4F54;

    /// Creates a new world file at `path` holding `meta` and no chunks or strokes.
    ///
    /// Refuses to overwrite anything that exists at `path`
    /// ([`StoreError::AlreadyExists`]). On failure nothing is left behind.
    pub fn create(path: impl AsRef<Path>, meta: &WorldMeta) -> Result<Self, StoreError> {
        Self::create_with_entries(path, meta, &[])
    }

    /// As [`create`](Self::create), also writing the metadata `entries`
    /// (`(key, value)`, read back with [`meta_entry`](Self::meta_entry)) in
    /// the same transaction: the file appears with all of them or not at all.
    ///
    /// Keys are 1 to 64 ASCII letters, digits, `_` or `-`, each at most once,
    /// and not one of the entries every file carries ([`RESERVED_META_KEYS`](Self::RESERVED_META_KEYS));
    /// otherwise [`StoreError::InvalidInput`] and nothing is created.
    pub fn create_with_entries(
        path: impl AsRef<Path>,
        meta: &WorldMeta,
        entries: &[(&str, &str)],
    ) -> Result<Self, StoreError> {
        let path = path.as_ref();
        validate_meta(meta)?;
        validate_entries(entries)?;
        let params = meta_params_json(meta)?;
        // A write-ahead log or shared-memory file at the new name belongs to
        // another database (perhaps one still open elsewhere): SQLite would
        // replay it into the new file, and removing it could lose that
        // database's last commits. Leave both alone and refuse.
        for side in [wal_path(path), shm_path(path)] {
            if fs::symlink_metadata(&side).is_ok() {
                return Err(StoreError::AlreadyExists { path: side });
            }
        }
        // Claim the name atomically: `create_new` fails if anything is there.
        match OpenOptions::new().write(true).create_new(true).open(path) {
            Ok(f) => drop(f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists || path.exists() => {
                return Err(StoreError::AlreadyExists {
                    path: path.to_path_buf(),
                });
            }
            Err(source) => {
                return Err(StoreError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        }
        let result = Self::initialise(path, meta, &params, entries);
        if result.is_err() {
            // The log and shared memory did not exist before (checked above):
            // they are this attempt's own.
            let _ = fs::remove_file(path);
            let _ = fs::remove_file(wal_path(path));
            let _ = fs::remove_file(shm_path(path));
        }
        result
    }

    fn initialise(
        path: &Path,
        meta: &WorldMeta,
        params: &str,
        extra: &[(&str, &str)],
    ) -> Result<Self, StoreError> {
        let sql = |e| StoreError::sqlite(path, e);
        let mut conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sql)?;
        conn.busy_timeout(DEFAULT_BUSY_TIMEOUT).map_err(sql)?;
        configure(&conn).map_err(sql)?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Exclusive)
            .map_err(sql)?;
        tx.pragma_update(None, "application_id", Self::APPLICATION_ID)
            .map_err(sql)?;
        tx.pragma_update(None, "user_version", Self::SCHEMA_VERSION)
            .map_err(sql)?;
        tx.execute_batch(SCHEMA_V1).map_err(sql)?;
        tx.execute_batch(SCHEMA_V2_BAKED).map_err(sql)?;
        {
            let mut put = tx
                .prepare("INSERT INTO meta (key, value) VALUES (?1, ?2)")
                .map_err(sql)?;
            for (k, v) in initial_meta_entries(meta, params) {
                put.execute((k, v)).map_err(sql)?;
            }
            for &(k, v) in extra {
                put.execute((k, v)).map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)?;
        // Fold the log into the main file so it is complete on its own.
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(sql)?;
        Ok(WorldFile {
            conn,
            path: path.to_path_buf(),
            revision: 0,
            _open: OpenMark::new(path),
        })
    }

    /// Opens an existing world file for reading and writing.
    ///
    /// Checks, in order, and fails without changing the file:
    /// - the path exists ([`StoreError::NotFound`]) and is a regular file;
    /// - it is an SQLite database carrying the isoterra application id
    ///   (otherwise [`StoreError::NotAWorldFile`]: empty, not SQLite, or a
    ///   foreign database);
    /// - its schema version is not newer than [`WorldFile::SCHEMA_VERSION`]
    ///   ([`StoreError::NewerVersion`]);
    /// - `PRAGMA quick_check` passes and the tables, history and metadata are
    ///   consistent ([`StoreError::Corrupt`]).
    ///
    /// `quick_check` reads every page of the file once: opening costs time
    /// linear in the file size (about as long as reading the file from disk),
    /// which is small for worlds that store only edited chunks.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        check_file_header(path)?;
        let sql = |e| StoreError::sqlite(path, e);
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sql)?;
        conn.busy_timeout(DEFAULT_BUSY_TIMEOUT).map_err(sql)?;
        let app_id: i32 = conn
            .pragma_query_value(None, "application_id", |r| r.get(0))
            .map_err(sql)?;
        if app_id != Self::APPLICATION_ID {
            let tables: i64 = conn
                .query_row("SELECT COUNT(*) FROM sqlite_schema", [], |r| r.get(0))
                .map_err(sql)?;
            let reason = if app_id == 0 && tables == 0 {
                "an empty SQLite database (nothing was written to it, or its creation was interrupted)".to_string()
            } else if app_id == 0 {
                "a foreign SQLite database (it has no isoterra application id)".to_string()
            } else {
                format!("an SQLite database of another application (application id {app_id:#010x})")
            };
            return Err(StoreError::NotAWorldFile {
                path: path.to_path_buf(),
                reason,
            });
        }
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(sql)?;
        if version > Self::SCHEMA_VERSION as i64 || version < 0 {
            return Err(StoreError::NewerVersion {
                path: path.to_path_buf(),
                found: u32::try_from(version).unwrap_or(u32::MAX),
                supported: Self::SCHEMA_VERSION,
            });
        }
        if version == 0 {
            return Err(StoreError::corrupt(
                path,
                "schema version 0: the file was never completely created",
            ));
        }
        quick_check(&conn, path)?;
        let mut file = WorldFile {
            conn,
            path: path.to_path_buf(),
            revision: 0,
            _open: OpenMark::new(path),
        };
        // One read transaction, so that the cursor, the log and the revision
        // are read from one snapshot even while another process commits
        // (separate statements could see two different states and report a
        // healthy file as damaged).
        file.conn.execute_batch("BEGIN DEFERRED").map_err(sql)?;
        let checked = file
            .check_schema(version)
            .and_then(|()| file.check_history())
            .and_then(|revision| file.meta().map(|_| revision));
        match checked {
            Ok(revision) => {
                file.conn.execute_batch("COMMIT").map_err(sql)?;
                file.revision = revision;
            }
            Err(e) => {
                // The check's error is the one to report.
                let _ = file.conn.execute_batch("ROLLBACK");
                return Err(e);
            }
        }
        configure(&file.conn).map_err(sql)?;
        // An older schema is brought up to date by `upgrade`, once a
        // document has checked the whole world, or when a write needs the
        // newer tables (`ensure_baked_table`): never before the file is
        // known to be whole.
        Ok(file)
    }

    /// Brings an older schema up to [`SCHEMA_VERSION`](Self::SCHEMA_VERSION)
    /// in one transaction (version 1 to 2: the `baked` table); nothing to do
    /// for a current one. Documents call it (as
    /// [`ChunkStore::upgrade`](crate::ChunkStore::upgrade)) once they have
    /// read and checked the whole world, so a damaged old file is reported,
    /// not migrated.
    ///
    /// # Errors
    ///
    /// [`StoreError::Sqlite`] when the file cannot be written now (another
    /// writer, a read-only file); nothing changed then.
    pub fn upgrade_schema(&mut self) -> Result<(), StoreError> {
        let version: i64 = self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(self.sql())?;
        if version < i64::from(Self::SCHEMA_VERSION) {
            self.migrate_schema()?;
        }
        Ok(())
    }

    /// Brings the schema up to [`SCHEMA_VERSION`](Self::SCHEMA_VERSION) in
    /// one transaction (version 1 to 2: the `baked` table). Waits at most a
    /// short while for another writer.
    fn migrate_schema(&mut self) -> Result<(), StoreError> {
        let path = &self.path;
        let sql = |e| StoreError::sqlite(path, e);
        self.conn
            .busy_timeout(Duration::from_millis(250))
            .map_err(sql)?;
        let result = (|| {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql)?;
            let version: i64 = tx
                .pragma_query_value(None, "user_version", |r| r.get(0))
                .map_err(sql)?;
            if version < 2 {
                tx.execute_batch(SCHEMA_V2_BAKED).map_err(sql)?;
            }
            if version < i64::from(Self::SCHEMA_VERSION) {
                tx.pragma_update(None, "user_version", Self::SCHEMA_VERSION)
                    .map_err(sql)?;
            }
            tx.commit().map_err(sql)
        })();
        self.conn.busy_timeout(DEFAULT_BUSY_TIMEOUT).map_err(sql)?;
        result
    }

    /// True when the file has the `baked` table (schema version 2, or a
    /// version 1 file that could be migrated).
    pub(crate) fn has_baked_table(&self) -> Result<bool, StoreError> {
        let n: i64 = self
            .conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'baked'",
                [],
                |r| r.get(0),
            )
            .map_err(self.sql())?;
        Ok(n > 0)
    }

    /// Makes sure the `baked` table exists, migrating now if the open-time
    /// migration could not run.
    pub(crate) fn ensure_baked_table(&mut self) -> Result<(), StoreError> {
        if self.has_baked_table()? {
            return Ok(());
        }
        self.migrate_schema()
    }

    /// The connection, for the baked-chunk functions of this crate.
    pub(crate) fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The connection, mutably (transactions), for the baked-chunk functions.
    pub(crate) fn connection_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// The path the file was opened or created with.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The revision this handle last saw: the number of writes made to the
    /// file up to its last read or write through this handle.
    pub fn revision(&self) -> u64 {
        self.revision as u64
    }

    /// Fails with [`StoreError::Conflict`] when another handle has written to
    /// the file since this handle last read or wrote its revision; such a
    /// handle's writes would be refused.
    pub fn check_current(&self) -> Result<(), StoreError> {
        if self.current_revision()? as i64 != self.revision {
            return Err(StoreError::Conflict {
                path: self.path.clone(),
            });
        }
        Ok(())
    }

    /// How long a write waits for another writer before failing with
    /// [`StoreError::Busy`]. Default value: 5 s.
    pub fn set_busy_timeout(&self, timeout: Duration) -> Result<(), StoreError> {
        self.conn
            .busy_timeout(timeout)
            .map_err(|e| StoreError::sqlite(&self.path, e))
    }

    fn sql(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        move |e| StoreError::sqlite(&self.path, e)
    }

    fn check_schema(&self, version: i64) -> Result<(), StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table'")
            .map_err(self.sql())?;
        let names: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .map_err(self.sql())?
            .collect::<Result<_, _>>()
            .map_err(self.sql())?;
        let v2: &[&str] = if version >= 2 { &["baked"] } else { &[] };
        for &t in TABLES.iter().chain(v2) {
            if !names.iter().any(|n| n == t) {
                return Err(StoreError::corrupt(
                    &self.path,
                    format!("the `{t}` table is missing"),
                ));
            }
        }
        Ok(())
    }

    /// Checks that the undo cursor agrees with the stroke flags and returns
    /// the current revision.
    fn check_history(&self) -> Result<i64, StoreError> {
        let (cursor, revision): (i64, i64) = self
            .conn
            .query_row(
                "SELECT cursor, revision FROM history WHERE singleton = 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(self.sql())?
            .ok_or_else(|| StoreError::corrupt(&self.path, "the history row is missing"))?;
        let last_done: i64 = self
            .conn
            .query_row(
                "SELECT COALESCE(MAX(id), 0) FROM strokes WHERE undone = 0",
                [],
                |r| r.get(0),
            )
            .map_err(self.sql())?;
        let first_undone: Option<i64> = self
            .conn
            .query_row("SELECT MIN(id) FROM strokes WHERE undone = 1", [], |r| {
                r.get(0)
            })
            .map_err(self.sql())?;
        if cursor != last_done || first_undone.is_some_and(|u| u <= cursor) {
            return Err(StoreError::corrupt(
                &self.path,
                format!(
                    "the undo cursor ({cursor}) disagrees with the stroke log (last done {last_done}, first undone {first_undone:?})"
                ),
            ));
        }
        Ok(revision)
    }

    /// Reads the world metadata.
    pub fn meta(&self) -> Result<WorldMeta, StoreError> {
        parse_meta(&self.path, |key| self.meta_entry(key))
    }

    /// One raw metadata entry (`kind`, `format_version`, `seed`, `params`,
    /// `created_ms`, `created_by`, …), or `None` when absent.
    pub fn meta_entry(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(self.sql())
    }

    /// Migrates the file to a newer format version of its kind: sets
    /// `format_version` and writes `entries` (inserted or replaced), all in
    /// one transaction, so a crash leaves either the old or the new format.
    ///
    /// A world kind calls this when it opens a file written by an older
    /// version of its format (see
    /// [`Side2dDocument::open`](crate::Side2dDocument::open)). Fails with
    /// [`StoreError::InvalidInput`] when `format_version` is older than the
    /// file's or an entry's key is reserved ([`WorldFile::RESERVED_META_KEYS`]),
    /// changing nothing.
    pub fn migrate_format(
        &mut self,
        format_version: u32,
        entries: &[(&str, &str)],
    ) -> Result<(), StoreError> {
        check_migration(self.meta()?.format_version, format_version, entries)?;
        self.write(|tx, path| {
            let sql = |e| StoreError::sqlite(path, e);
            tx.execute(
                "UPDATE meta SET value = ?1 WHERE key = 'format_version'",
                [format_version.to_string()],
            )
            .map_err(sql)?;
            for (key, value) in entries {
                tx.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
                    [key, value],
                )
                .map_err(sql)?;
            }
            Ok(())
        })
    }

    /// The payload stored for `key`, or `None` when the chunk is not stored.
    pub fn chunk(&self, key: &ChunkKey) -> Result<Option<Vec<u8>>, StoreError> {
        self.conn
            .prepare_cached(
                "SELECT payload FROM chunks WHERE layer = ?1 AND x = ?2 AND y = ?3 AND z = ?4 AND lod = ?5",
            )
            .and_then(|mut s| {
                s.query_row(
                    (key.layer.0, key.x, key.y, key.z, key.lod),
                    |r| r.get(0),
                )
                .optional()
            })
            .map_err(self.sql())
    }

    /// The keys of all stored chunks, in key order.
    pub fn chunk_keys(&self) -> Result<Vec<ChunkKey>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT layer, x, y, z, lod FROM chunks ORDER BY layer, x, y, z, lod")
            .map_err(self.sql())?;
        let keys = stmt
            .query_map([], |r| {
                Ok(ChunkKey {
                    layer: ChunkLayer(r.get(0)?),
                    x: r.get(1)?,
                    y: r.get(2)?,
                    z: r.get(3)?,
                    lod: r.get(4)?,
                })
            })
            .map_err(self.sql())?
            .collect::<Result<Vec<_>, _>>()
            .map_err(self.sql())?;
        Ok(keys)
    }

    /// The number of stored chunks.
    pub fn chunk_count(&self) -> Result<u64, StoreError> {
        let n: i64 = self
            .conn
            .query_row("SELECT COUNT(*) FROM chunks", [], |r| r.get(0))
            .map_err(self.sql())?;
        Ok(n as u64)
    }

    /// The number of stored chunks of one layer.
    pub fn chunk_count_in(&self, layer: ChunkLayer) -> Result<u64, StoreError> {
        let n: i64 = self
            .conn
            .query_row(
                "SELECT COUNT(*) FROM chunks WHERE layer = ?1",
                [layer.0],
                |r| r.get(0),
            )
            .map_err(self.sql())?;
        Ok(n as u64)
    }

    /// Calls `f` with every stored chunk of `layer`, in key order, streaming
    /// the rows (only one payload is held at a time). Stops at the first error.
    pub fn for_each_chunk(
        &self,
        layer: ChunkLayer,
        mut f: impl FnMut(ChunkKey, &[u8]) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT x, y, z, lod, payload FROM chunks WHERE layer = ?1 ORDER BY x, y, z, lod",
            )
            .map_err(self.sql())?;
        let mut rows = stmt.query([layer.0]).map_err(self.sql())?;
        while let Some(row) = rows.next().map_err(self.sql())? {
            let key = ChunkKey {
                layer,
                x: row.get(0).map_err(self.sql())?,
                y: row.get(1).map_err(self.sql())?,
                z: row.get(2).map_err(self.sql())?,
                lod: row.get(3).map_err(self.sql())?,
            };
            let payload = row.get_ref(4).map_err(self.sql())?;
            let bytes = payload.as_blob().map_err(|e| {
                StoreError::corrupt(&self.path, format!("payload of chunk {key:?}: {e}"))
            })?;
            f(key, bytes)?;
        }
        Ok(())
    }

    /// The world stamp: 16 hex digits of FNV-1a 64 over the baked payload
    /// version, the world's kind, format version, seed and parameters, and
    /// every stored chunk (key and payload, in key order). Any edit (or
    /// undo) that changes the stored chunks changes it, so two files with the
    /// same stamp hold the same world and their baked rows are
    /// interchangeable. Baked rows record the finer per-chunk
    /// [input stamp](crate::input_stamp) instead (computed by the kind
    /// layer's `BakeInputs`), so that an edit makes only the chunks it can
    /// change stale.
    pub fn world_stamp(&self) -> Result<String, StoreError> {
        let sql = |e| StoreError::sqlite(self.path(), e);
        let mut h = StampHasher::new(|key| self.meta_entry(key))?;
        let mut stmt = self
            .connection()
            .prepare("SELECT layer, x, y, z, lod, payload FROM chunks ORDER BY layer, x, y, z, lod")
            .map_err(sql)?;
        let mut rows = stmt.query([]).map_err(sql)?;
        while let Some(row) = rows.next().map_err(sql)? {
            let mut cols = [0i64; 5];
            for (i, c) in cols.iter_mut().enumerate() {
                *c = row.get(i).map_err(sql)?;
            }
            let p = row.get_ref(5).map_err(sql)?;
            let bytes = p
                .as_blob()
                .map_err(|e| StoreError::corrupt(self.path(), format!("a chunk payload: {e}")))?;
            h.chunk_columns(cols, bytes);
        }
        Ok(h.finish())
    }

    /// Writes chunk rows outside the stroke log (imports, bakes), atomically.
    pub fn put_chunks(&mut self, chunk_changes: &[ChunkChange]) -> Result<(), StoreError> {
        self.write(|tx, path| apply_chunk_changes(tx, path, chunk_changes))
    }

    /// Appends a stroke and applies its chunk changes in one transaction;
    /// returns the stroke's id.
    ///
    /// Undone strokes (the redo tail) are deleted in the same transaction: a
    /// new stroke after an undo ends the old future.
    pub fn commit_stroke(
        &mut self,
        stroke: &NewStroke,
        chunk_changes: &[ChunkChange],
    ) -> Result<i64, StoreError> {
        let params = stroke_params_json(stroke)?;
        self.write(|tx, path| {
            let sql = |e| StoreError::sqlite(path, e);
            tx.execute("DELETE FROM strokes WHERE undone = 1", [])
                .map_err(sql)?;
            tx.execute(
                "INSERT INTO strokes (tool, params, delta, undone, created_ms) VALUES (?1, ?2, ?3, 0, ?4)",
                (&stroke.tool, &params, &stroke.delta, now_ms()),
            )
            .map_err(sql)?;
            let id = tx.last_insert_rowid();
            tx.execute("UPDATE history SET cursor = ?1 WHERE singleton = 1", [id])
                .map_err(sql)?;
            apply_chunk_changes(tx, path, chunk_changes)?;
            Ok(id)
        })
    }

    /// Marks stroke `id` undone and applies `chunk_changes`, atomically.
    /// `id` must be the last done stroke ([`WorldFile::last_done_stroke`]).
    pub fn mark_undone(
        &mut self,
        id: i64,
        chunk_changes: &[ChunkChange],
    ) -> Result<(), StoreError> {
        self.write(|tx, path| {
            let sql = |e| StoreError::sqlite(path, e);
            let cursor: i64 = tx
                .query_row("SELECT cursor FROM history WHERE singleton = 1", [], |r| {
                    r.get(0)
                })
                .map_err(sql)?;
            check_undo(path, id, cursor)?;
            tx.execute("UPDATE strokes SET undone = 1 WHERE id = ?1", [id])
                .map_err(sql)?;
            tx.execute(
                "UPDATE history SET cursor = (SELECT COALESCE(MAX(id), 0) FROM strokes WHERE undone = 0) WHERE singleton = 1",
                [],
            )
            .map_err(sql)?;
            apply_chunk_changes(tx, path, chunk_changes)
        })
    }

    /// Marks stroke `id` done again and applies `chunk_changes`, atomically.
    /// `id` must be the first undone stroke ([`WorldFile::first_undone_stroke`]).
    pub fn mark_redone(
        &mut self,
        id: i64,
        chunk_changes: &[ChunkChange],
    ) -> Result<(), StoreError> {
        self.write(|tx, path| {
            let sql = |e| StoreError::sqlite(path, e);
            let first: Option<i64> = tx
                .query_row("SELECT MIN(id) FROM strokes WHERE undone = 1", [], |r| {
                    r.get(0)
                })
                .map_err(sql)?;
            check_redo(path, id, first)?;
            tx.execute("UPDATE strokes SET undone = 0 WHERE id = ?1", [id])
                .map_err(sql)?;
            tx.execute("UPDATE history SET cursor = ?1 WHERE singleton = 1", [id])
                .map_err(sql)?;
            apply_chunk_changes(tx, path, chunk_changes)
        })
    }

    /// Runs `f` in an immediate (write-locked) transaction after checking
    /// that no other handle wrote since this one last did; bumps the revision
    /// and commits when `f` succeeds, rolls back otherwise.
    fn write<T>(
        &mut self,
        f: impl FnOnce(&Transaction<'_>, &Path) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let path = &self.path;
        let sql = |e| StoreError::sqlite(path, e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        let revision: i64 = tx
            .query_row(
                "SELECT revision FROM history WHERE singleton = 1",
                [],
                |r| r.get(0),
            )
            .map_err(sql)?;
        if revision != self.revision {
            return Err(StoreError::Conflict { path: path.clone() });
        }
        let out = f(&tx, path)?;
        tx.execute(
            "UPDATE history SET revision = revision + 1 WHERE singleton = 1",
            [],
        )
        .map_err(sql)?;
        tx.commit().map_err(sql)?;
        self.revision = revision + 1;
        Ok(out)
    }

    /// The stroke with `id`, if the log holds it.
    pub fn stroke(&self, id: i64) -> Result<Option<StrokeRecord>, StoreError> {
        self.stroke_where("id = ?1", [id])
    }

    /// The newest stroke in effect (the one [`undo`](crate::Side2dDocument::undo) reverts).
    pub fn last_done_stroke(&self) -> Result<Option<StrokeRecord>, StoreError> {
        self.stroke_where("id = (SELECT MAX(id) FROM strokes WHERE undone = 0)", [])
    }

    /// The oldest undone stroke (the one a redo brings back).
    pub fn first_undone_stroke(&self) -> Result<Option<StrokeRecord>, StoreError> {
        self.stroke_where("id = (SELECT MIN(id) FROM strokes WHERE undone = 1)", [])
    }

    fn stroke_where(
        &self,
        cond: &str,
        args: impl rusqlite::Params,
    ) -> Result<Option<StrokeRecord>, StoreError> {
        let sql =
            format!("SELECT id, tool, params, delta, undone, created_ms FROM strokes WHERE {cond}");
        let row = self
            .conn
            .prepare_cached(&sql)
            .and_then(|mut s| {
                s.query_row(args, |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, Vec<u8>>(3)?,
                        r.get::<_, i64>(4)?,
                        r.get::<_, i64>(5)?,
                    ))
                })
                .optional()
            })
            .map_err(self.sql())?;
        let Some((id, tool, params, delta, undone, created_ms)) = row else {
            return Ok(None);
        };
        let params = serde_json::from_str(&params).map_err(|e| {
            StoreError::corrupt(&self.path, format!("parameters of stroke {id}: {e}"))
        })?;
        Ok(Some(StrokeRecord {
            id,
            tool,
            params,
            delta,
            undone: undone != 0,
            created_ms,
        }))
    }

    /// How many strokes are done and undone.
    pub fn stroke_counts(&self) -> Result<StrokeCounts, StoreError> {
        let (done, undone): (i64, i64) = self
            .conn
            .query_row(
                "SELECT COALESCE(SUM(undone = 0), 0), COALESCE(SUM(undone = 1), 0) FROM strokes",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(self.sql())?;
        Ok(StrokeCounts {
            done: done as u64,
            undone: undone as u64,
        })
    }

    /// The ids of the strokes in effect (not undone), oldest first.
    pub fn done_stroke_ids(&self) -> Result<Vec<i64>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id FROM strokes WHERE undone = 0 ORDER BY id")
            .map_err(self.sql())?;
        let ids = stmt
            .query_map([], |r| r.get(0))
            .map_err(self.sql())?
            .collect::<Result<Vec<i64>, _>>()
            .map_err(self.sql())?;
        Ok(ids)
    }

    /// The file's write counter as it is now (every stroke, undo and redo
    /// of any handle bumps it); [`revision`](Self::revision) is the one
    /// this handle last saw.
    pub fn current_revision(&self) -> Result<u64, StoreError> {
        let revision: i64 = self
            .conn
            .query_row(
                "SELECT revision FROM history WHERE singleton = 1",
                [],
                |r| r.get(0),
            )
            .map_err(self.sql())?;
        Ok(revision as u64)
    }

    /// The undo position: the number of strokes in effect.
    pub fn undo_position(&self) -> Result<u64, StoreError> {
        Ok(self.stroke_counts()?.done)
    }

    /// Runs the full `PRAGMA integrity_check` (slower than the `quick_check`
    /// done on open: it also checks indexes against tables).
    pub fn integrity_check(&self) -> Result<(), StoreError> {
        run_check(&self.conn, &self.path, "integrity_check")
    }

    /// Folds the write-ahead log into the main file and truncates the log,
    /// so the `.isoterra` file alone holds everything (e.g. before copying it).
    pub fn checkpoint(&self) -> Result<(), StoreError> {
        let (busy, _, _): (i64, i64, i64) = self
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .map_err(self.sql())?;
        if busy != 0 {
            return Err(StoreError::Busy {
                path: self.path.clone(),
            });
        }
        Ok(())
    }

    /// Closes the file, reporting any error SQLite meets while doing so
    /// (dropping the handle closes it too, silently).
    pub fn close(self) -> Result<(), StoreError> {
        let path = self.path;
        self.conn
            .close()
            .map_err(|(_, e)| StoreError::sqlite(&path, e))
    }
}

/// Durability and integrity settings applied to every connection.
fn configure(conn: &Connection) -> rusqlite::Result<()> {
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
            Some(format!("could not switch to WAL mode (got `{mode}`)")),
        ));
    }
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(())
}

/// Cheap checks before SQLite sees the file, so that an empty file, a folder
/// or a non-SQLite file gets a clear message and is never written to.
fn check_file_header(path: &Path) -> Result<(), StoreError> {
    let not_world = |reason: String| StoreError::NotAWorldFile {
        path: path.to_path_buf(),
        reason,
    };
    let md = match fs::metadata(path) {
        Ok(md) => md,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(StoreError::NotFound {
                path: path.to_path_buf(),
            });
        }
        Err(source) => {
            return Err(StoreError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    if md.is_dir() {
        return Err(not_world("it is a folder".into()));
    }
    if !md.is_file() {
        return Err(not_world("it is not a regular file".into()));
    }
    if OpenMark::is_open(&md) {
        // Checked when it was opened; reading it now would unlock it.
        return Ok(());
    }
    let mut head = Vec::with_capacity(100);
    File::open(path)
        .and_then(|f| f.take(100).read_to_end(&mut head))
        .map_err(|source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if head.is_empty() {
        // A world whose first commit still sits in its write-ahead log has an
        // empty main file; let SQLite read it from the log.
        if fs::metadata(wal_path(path)).is_ok_and(|m| m.len() > 0) {
            return Ok(());
        }
        return Err(not_world("the file is empty".into()));
    }
    if head.len() < 100 || !head.starts_with(SQLITE_MAGIC) {
        return Err(not_world(format!(
            "not an SQLite database ({} bytes, no SQLite header)",
            md.len()
        )));
    }
    Ok(())
}

fn quick_check(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    run_check(conn, path, "quick_check")
}

fn run_check(conn: &Connection, path: &Path, pragma: &str) -> Result<(), StoreError> {
    let mut stmt = conn
        .prepare(&format!("PRAGMA {pragma}"))
        .map_err(|e| StoreError::sqlite(path, e))?;
    let rows: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .and_then(|rows| rows.collect())
        .map_err(|e| StoreError::sqlite(path, e))?;
    if rows.len() == 1 && rows[0] == "ok" {
        return Ok(());
    }
    let shown: Vec<&str> = rows.iter().take(3).map(String::as_str).collect();
    Err(StoreError::corrupt(
        path,
        format!("{pragma} failed: {}", shown.join("; ")),
    ))
}

fn apply_chunk_changes(
    tx: &Transaction<'_>,
    path: &Path,
    changes: &[ChunkChange],
) -> Result<(), StoreError> {
    let sql = |e| StoreError::sqlite(path, e);
    let mut upsert = tx
        .prepare_cached(
            "INSERT INTO chunks (layer, x, y, z, lod, payload) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (layer, x, y, z, lod) DO UPDATE SET payload = excluded.payload",
        )
        .map_err(sql)?;
    let mut delete = tx
        .prepare_cached(
            "DELETE FROM chunks WHERE layer = ?1 AND x = ?2 AND y = ?3 AND z = ?4 AND lod = ?5",
        )
        .map_err(sql)?;
    for (k, payload) in changes {
        match payload {
            Some(p) => upsert.execute((k.layer.0, k.x, k.y, k.z, k.lod, p)),
            None => delete.execute((k.layer.0, k.x, k.y, k.z, k.lod)),
        }
        .map_err(sql)?;
    }
    Ok(())
}

impl ChunkStore for WorldFile {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    fn location(&self) -> &Path {
        self.path()
    }

    fn check_current(&self) -> Result<(), StoreError> {
        WorldFile::check_current(self)
    }

    fn create_world(
        &mut self,
        _meta: &WorldMeta,
        _entries: &[(&str, &str)],
    ) -> Result<(), StoreError> {
        Err(StoreError::AlreadyExists {
            path: self.path().to_path_buf(),
        })
    }

    fn meta_entry(&self, key: &str) -> Result<Option<String>, StoreError> {
        WorldFile::meta_entry(self, key)
    }

    fn meta(&self) -> Result<WorldMeta, StoreError> {
        WorldFile::meta(self)
    }

    fn migrate_format(
        &mut self,
        format_version: u32,
        entries: &[(&str, &str)],
    ) -> Result<(), StoreError> {
        WorldFile::migrate_format(self, format_version, entries)
    }

    /// Migrates an older schema (see [`WorldFile::upgrade_schema`]), best
    /// effort.
    fn upgrade(&mut self) {
        // Best effort (see the module documentation): on failure nothing
        // changed and the file reads as the version it is.
        let _ = self.upgrade_schema();
    }

    fn visit_chunks(&self, layer: ChunkLayer, f: &mut ChunkVisitor<'_>) -> Result<(), StoreError> {
        WorldFile::for_each_chunk(self, layer, f)
    }

    fn chunk(&self, key: &ChunkKey) -> Result<Option<Vec<u8>>, StoreError> {
        WorldFile::chunk(self, key)
    }

    fn chunk_keys(&self) -> Result<Vec<ChunkKey>, StoreError> {
        // Read in (layer, x, y, z, lod) order, which is `ChunkKey`'s order.
        WorldFile::chunk_keys(self)
    }

    fn put_chunks(&mut self, changes: &[ChunkChange]) -> Result<(), StoreError> {
        WorldFile::put_chunks(self, changes)
    }

    fn commit_stroke(
        &mut self,
        stroke: &NewStroke,
        changes: &[ChunkChange],
    ) -> Result<i64, StoreError> {
        WorldFile::commit_stroke(self, stroke, changes)
    }

    fn mark_undone(&mut self, id: i64, changes: &[ChunkChange]) -> Result<(), StoreError> {
        WorldFile::mark_undone(self, id, changes)
    }

    fn mark_redone(&mut self, id: i64, changes: &[ChunkChange]) -> Result<(), StoreError> {
        WorldFile::mark_redone(self, id, changes)
    }

    fn stroke(&self, id: i64) -> Result<Option<StrokeRecord>, StoreError> {
        WorldFile::stroke(self, id)
    }

    fn last_done_stroke(&self) -> Result<Option<StrokeRecord>, StoreError> {
        WorldFile::last_done_stroke(self)
    }

    fn first_undone_stroke(&self) -> Result<Option<StrokeRecord>, StoreError> {
        WorldFile::first_undone_stroke(self)
    }

    fn stroke_counts(&self) -> Result<StrokeCounts, StoreError> {
        WorldFile::stroke_counts(self)
    }

    fn done_stroke_ids(&self) -> Result<Vec<i64>, StoreError> {
        WorldFile::done_stroke_ids(self)
    }

    fn current_revision(&self) -> Result<u64, StoreError> {
        WorldFile::current_revision(self)
    }

    fn adopt_revision(&mut self, revision: u64) {
        self.revision = revision as i64;
    }

    fn world_stamp(&self) -> Result<String, StoreError> {
        WorldFile::world_stamp(self)
    }

    fn put_baked(&mut self, rows: &[BakedRow]) -> Result<(), StoreError> {
        WorldFile::put_baked(self, rows)
    }

    fn baked_row(&self, key: &ChunkKey) -> Result<Option<BakedRow>, StoreError> {
        WorldFile::baked_row(self, key)
    }

    fn baked_keys_from(&self, source: &str) -> Result<BTreeSet<ChunkKey>, StoreError> {
        WorldFile::baked_keys_from(self, source)
    }

    fn baked_sources(&self) -> Result<BTreeMap<ChunkKey, String>, StoreError> {
        WorldFile::baked_sources(self)
    }

    fn baked_keys_after(
        &self,
        after: Option<&ChunkKey>,
        limit: usize,
    ) -> Result<Vec<ChunkKey>, StoreError> {
        WorldFile::baked_keys_after(self, after, limit)
    }

    fn baked_content_hash(&self) -> Result<Option<String>, StoreError> {
        WorldFile::baked_content_hash(self)
    }
}
