//! A [`ChunkStore`] on a PostgreSQL server (cargo feature `postgres`).
//!
//! One database holds any number of worlds, each named: a world is the rows
//! of its name in five tables (schema below, version [`PG_SCHEMA_VERSION`]).
//! A [`PgStore`] is one connection and one world, addressed by a URL:
//!
//! ```text
//! postgres://USER@HOST[:PORT]/DATABASE?world=NAME[&host=/run/postgresql]
//! ```
//!
//! The `world` parameter picks the world (`[A-Za-z0-9_-]`, 1 to 64
//! characters); every other part is the server's connection string as
//! libpq and the `postgres` crate read it.
//!
//! It keeps the promises of the trait the way the world file does:
//!
//! - **One call, one transaction.** A stroke, an undo, a redo, a chunk put
//!   and a migration each run in one transaction that first locks the
//!   world's row (`SELECT … FOR UPDATE`), so two writers of one world take
//!   turns, and a call that returned is committed (the server's
//!   `synchronous_commit`, on by default, makes it durable).
//! - **Stale writers are refused.** Every write bumps the world's revision
//!   inside its transaction; a handle whose last seen revision is no longer
//!   the world's gets [`StoreError::Conflict`] and changes nothing, exactly
//!   as two handles of one file do; a document's `follow` catches its
//!   handle up from the log.
//! - **Baked rows are derived data:** writing them bumps nothing.
//!
//! Schema (all keyed by `world`):
//!
//! ```sql
//! isoterra_schema (version)                          -- one row
//! isoterra_worlds (world PRIMARY KEY, revision, last_id)
//! isoterra_meta   (world, key, value)
//! isoterra_chunks (world, layer, x, y, z, lod, payload)
//! isoterra_strokes(world, id, tool, params, delta, undone, created_ms)
//! isoterra_baked  (world, layer, x, y, z, lod, source, hash, payload)
//! isoterra_bake_runs (world, run, plan, keys, jobs, created_ms)        -- v2
//! isoterra_bake_jobs (world, run, job, first, stop, done, worker, finished_ms)
//! ```
//!
//! Version 2 added the bake queue's two tables ([`PgBakeQueue`]) and keeps
//! payloads (zstd already) without compressing them again; a version 1
//! database is brought to version 2 when a build of version 2 opens it.
//!
//! Every write of the stroke log (a stroke, an undo, a redo, a migration)
//! sends `NOTIFY isoterra_world, 'WORLD REVISION'` in its transaction, so a
//! [`PgWatcher`] learns of it when it commits. Chunk puts (the game-rate
//! path) and baked rows send nothing; a watcher's caller also checks the
//! revision now and then to see those.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};

use postgres::types::ToSql;
use postgres::{Client, GenericClient, NoTls, Row, Statement, Transaction};

use crate::StoreError;
use crate::baked::decode_row;
use crate::chunk_store::{
    BakedRow, ChunkChange, ChunkKey, ChunkLayer, ChunkStore, ChunkVisitor, NewStroke, StrokeCounts,
    StrokeRecord, WorldMeta, check_migration, check_redo, check_undo, initial_meta_entries,
    meta_params_json, now_ms, stroke_params_json, validate_entries, validate_meta,
};
use crate::hash::{BakedHasher, StampHasher};

mod queue;
mod watch;

pub use queue::{BakeJob, BakeRun, MAX_BAKE_JOBS, PgBakeQueue, QueueProgress};
pub use watch::{PG_NOTIFY_CHANNEL, PgWatcher};

/// The schema version this build creates and reads.
pub const PG_SCHEMA_VERSION: i32 = 2;

/// Longest world name.
pub const MAX_PG_WORLD_NAME: usize = 64;

/// Whether `location` names a PostgreSQL world (`postgres://…` or
/// `postgresql://…`) rather than a file.
pub fn is_postgres_url(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

/// The schema, version 2 (version 1 without the two bake tables). Run under
/// the advisory lock, so that two processes creating it at once take turns;
/// every statement is `IF NOT EXISTS`, so running it on a version 1
/// database adds what version 2 added.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS isoterra_schema (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS isoterra_worlds (
    world    TEXT PRIMARY KEY,
    revision BIGINT NOT NULL,
    last_id  BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS isoterra_meta (
    world TEXT NOT NULL REFERENCES isoterra_worlds ON DELETE CASCADE,
    key   TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (world, key)
);
CREATE TABLE IF NOT EXISTS isoterra_chunks (
    world   TEXT NOT NULL REFERENCES isoterra_worlds ON DELETE CASCADE,
    layer   INTEGER NOT NULL,
    x       INTEGER NOT NULL,
    y       INTEGER NOT NULL,
    z       INTEGER NOT NULL,
    lod     SMALLINT NOT NULL,
    payload BYTEA NOT NULL,
    PRIMARY KEY (world, layer, x, y, z, lod)
);
CREATE TABLE IF NOT EXISTS isoterra_strokes (
    world      TEXT NOT NULL REFERENCES isoterra_worlds ON DELETE CASCADE,
    id         BIGINT NOT NULL,
    tool       TEXT NOT NULL,
    params     TEXT NOT NULL,
    delta      BYTEA NOT NULL,
    undone     BOOLEAN NOT NULL,
    created_ms BIGINT NOT NULL,
    PRIMARY KEY (world, id)
);
CREATE TABLE IF NOT EXISTS isoterra_baked (
    world   TEXT NOT NULL REFERENCES isoterra_worlds ON DELETE CASCADE,
    layer   INTEGER NOT NULL,
    x       INTEGER NOT NULL,
    y       INTEGER NOT NULL,
    z       INTEGER NOT NULL,
    lod     SMALLINT NOT NULL,
    source  TEXT NOT NULL,
    hash    TEXT NOT NULL,
    payload BYTEA NOT NULL,
    PRIMARY KEY (world, layer, x, y, z, lod)
);
CREATE TABLE IF NOT EXISTS isoterra_bake_runs (
    world      TEXT NOT NULL REFERENCES isoterra_worlds ON DELETE CASCADE,
    run        TEXT NOT NULL,
    plan       TEXT NOT NULL,
    keys       BIGINT NOT NULL,
    jobs       BIGINT NOT NULL,
    created_ms BIGINT NOT NULL,
    PRIMARY KEY (world, run)
);
CREATE TABLE IF NOT EXISTS isoterra_bake_jobs (
    world       TEXT NOT NULL,
    run         TEXT NOT NULL,
    job         BIGINT NOT NULL,
    first       BIGINT NOT NULL,
    stop        BIGINT NOT NULL,
    done        BOOLEAN NOT NULL,
    worker      TEXT,
    finished_ms BIGINT,
    PRIMARY KEY (world, run, job),
    FOREIGN KEY (world, run) REFERENCES isoterra_bake_runs ON DELETE CASCADE
);
";

/// What version 2 changed in the tables of version 1, run once when a
/// database is made or brought to version 2: payloads are zstd already, so
/// the server keeps them out of line without compressing them again (its
/// own compression of incompressible bytes cost three quarters of the time
/// of a chunk write; `isoterra bench store`).
const TO_V2: &str = "
ALTER TABLE isoterra_chunks ALTER COLUMN payload SET STORAGE EXTERNAL;
ALTER TABLE isoterra_baked ALTER COLUMN payload SET STORAGE EXTERNAL;
ALTER TABLE isoterra_strokes ALTER COLUMN delta SET STORAGE EXTERNAL;
";

/// The advisory lock key the schema is created under (`isoterra` in ASCII).
const SCHEMA_LOCK: i64 = 0x6973_6f74_6572_7261;

/// The prepared statements of one connection, by their text: a query is
/// parsed by the server once per connection, not once per call (each
/// parse is a round trip).
#[derive(Default)]
pub(crate) struct Statements(RefCell<HashMap<String, Statement>>);

impl Statements {
    fn get(&self, c: &mut impl GenericClient, sql: &str) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.0.borrow().get(sql) {
            return Ok(s.clone());
        }
        let s = c.prepare(sql)?;
        self.0.borrow_mut().insert(sql.to_string(), s.clone());
        Ok(s)
    }
}

/// A transaction whose statements are prepared once per connection.
pub(crate) struct Tx<'a, 'b> {
    tx: &'a mut Transaction<'b>,
    statements: &'a Statements,
}

impl<'a, 'b> Tx<'a, 'b> {
    pub(crate) fn new(tx: &'a mut Transaction<'b>, statements: &'a Statements) -> Self {
        Tx { tx, statements }
    }

    pub(crate) fn execute(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, postgres::Error> {
        let st = self.statements.get(self.tx, sql)?;
        self.tx.execute(&st, params)
    }

    pub(crate) fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, postgres::Error> {
        let st = self.statements.get(self.tx, sql)?;
        self.tx.query_opt(&st, params)
    }
}

/// A world on a PostgreSQL server (see the module docs).
pub struct PgStore {
    client: RefCell<Client>,
    statements: Statements,
    world: String,
    location: PathBuf,
    /// The world's revision as this handle last read or wrote it.
    revision: i64,
}

impl fmt::Debug for PgStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgStore")
            .field("location", &self.location)
            .field("revision", &self.revision)
            .finish_non_exhaustive()
    }
}

/// A URL split into the server's connection string and the world's name.
fn split_url(url: &str) -> Result<(String, String), StoreError> {
    let bad = |reason: String| StoreError::input("postgres URL", reason);
    if !is_postgres_url(url) {
        return Err(bad(format!(
            "`{url}` does not start with postgres:// or postgresql://"
        )));
    }
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut world = None;
    let mut rest = Vec::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        match part.split_once('=') {
            Some(("world", name)) => world = Some(name.to_string()),
            _ => rest.push(part),
        }
    }
    let world = world.ok_or_else(|| {
        bad("names no world: add ?world=NAME (letters, digits, _ and -)".to_string())
    })?;
    if world.is_empty()
        || world.len() > MAX_PG_WORLD_NAME
        || !world
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(bad(format!(
            "world name `{world}` must be 1 to {MAX_PG_WORLD_NAME} letters, digits, _ or -"
        )));
    }
    let conn = if rest.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", rest.join("&"))
    };
    Ok((conn, world))
}

/// `url` without its password (`scheme://user:secret@host…` becomes
/// `scheme://user@host…`), for messages; anything else as it is.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.split_once('@') {
        Some((user, host)) => {
            let user = user.split_once(':').map_or(user, |(u, _)| u);
            format!("{scheme}://{user}@{host}")
        }
        None => url.to_string(),
    }
}

/// What errors name: the connection without a password, and the world.
fn redacted(conn: &str, world: &str) -> PathBuf {
    let rest = redact_url(conn);
    let sep = if rest.contains('?') { '&' } else { '?' };
    PathBuf::from(format!("{rest}{sep}world={world}"))
}

impl PgStore {
    /// Connects to the server `url` names and opens its world, creating the
    /// schema when the database has none. The world need not exist yet:
    /// [`create_world`](ChunkStore::create_world) makes it, and reads of a
    /// missing world find nothing (see [`open_existing`](Self::open_existing)).
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidInput`] for a URL that is not `postgres://` or
    /// names no valid world, [`StoreError::Postgres`] when the server cannot
    /// be reached or refuses, [`StoreError::NewerVersion`] for a schema
    /// newer than this build's.
    pub fn open(url: &str) -> Result<Self, StoreError> {
        let (client, world, location) = connect(url)?;
        let mut store = PgStore {
            client: RefCell::new(client),
            statements: Statements::default(),
            world,
            location,
            revision: 0,
        };
        store.revision = store.read_revision()?.unwrap_or(0);
        Ok(store)
    }

    /// As [`open`](Self::open), for a world that must exist.
    ///
    /// # Errors
    ///
    /// As [`open`](Self::open), and [`StoreError::NoSuchWorld`] when the
    /// database holds no world of that name.
    pub fn open_existing(url: &str) -> Result<Self, StoreError> {
        let store = Self::open(url)?;
        if store.read_revision()?.is_none() {
            return Err(StoreError::NoSuchWorld {
                path: store.location.clone(),
            });
        }
        Ok(store)
    }

    /// The world's name.
    pub fn world(&self) -> &str {
        &self.world
    }

    /// Removes the world (its metadata, chunks, log and baked rows) from
    /// the database, if it is there.
    ///
    /// # Errors
    ///
    /// [`StoreError::Postgres`].
    pub fn drop_world(mut self) -> Result<(), StoreError> {
        let world = self.world.clone();
        let location = self.location.clone();
        self.client
            .get_mut()
            .execute("DELETE FROM isoterra_worlds WHERE world = $1", &[&world])
            .map_err(|e| StoreError::postgres(&location, e))?;
        Ok(())
    }

    fn pg(&self) -> impl Fn(postgres::Error) -> StoreError + '_ {
        |e| StoreError::postgres(&self.location, e)
    }

    /// The world's revision, or `None` when the world does not exist.
    fn read_revision(&self) -> Result<Option<i64>, StoreError> {
        Ok(self
            .row(
                "SELECT revision FROM isoterra_worlds WHERE world = $1",
                &[&self.world],
            )?
            .map(|r| r.get(0)))
    }

    /// Runs `f` in one transaction that first checks this handle is
    /// current (locking the world's row) and ends by bumping the revision;
    /// with `notify`, the commit also tells the world's [`PgWatcher`]s.
    fn write<T>(
        &mut self,
        notify: bool,
        f: impl FnOnce(&mut Tx<'_, '_>, &str, i64) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let location = self.location.clone();
        let pg = |e| StoreError::postgres(&location, e);
        let world = self.world.clone();
        let client = self.client.get_mut();
        let mut raw = client.transaction().map_err(pg)?;
        let mut tx = Tx::new(&mut raw, &self.statements);
        let row = tx
            .query_opt(
                "SELECT revision, last_id FROM isoterra_worlds WHERE world = $1 FOR UPDATE",
                &[&world],
            )
            .map_err(pg)?
            .ok_or_else(|| StoreError::NoSuchWorld {
                path: location.clone(),
            })?;
        let (revision, last_id): (i64, i64) = (row.get(0), row.get(1));
        if revision != self.revision {
            return Err(StoreError::Conflict {
                path: location.clone(),
            });
        }
        let out = f(&mut tx, &world, last_id)?;
        tx.execute(
            "UPDATE isoterra_worlds SET revision = revision + 1 WHERE world = $1",
            &[&world],
        )
        .map_err(pg)?;
        if notify {
            let payload = format!("{world} {}", revision + 1);
            tx.execute("SELECT pg_notify($1, $2)", &[&PG_NOTIFY_CHANNEL, &payload])
                .map_err(pg)?;
        }
        raw.commit().map_err(pg)?;
        self.revision = revision + 1;
        Ok(out)
    }

    /// Marks stroke `id` undone or done again and writes its chunks, in
    /// one write (the history checks come first, in the caller).
    fn set_undone(
        &mut self,
        id: i64,
        undone: bool,
        changes: &[ChunkChange],
    ) -> Result<(), StoreError> {
        let location = self.location.clone();
        self.write(true, |tx, world, _| {
            let pg = |e| StoreError::postgres(&location, e);
            tx.execute(
                "UPDATE isoterra_strokes SET undone = $3 WHERE world = $1 AND id = $2",
                &[&world, &id, &undone],
            )
            .map_err(pg)?;
            apply(tx, world, changes).map_err(pg)
        })
    }

    /// The rows of a query.
    fn rows(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, StoreError> {
        let mut c = self.client.borrow_mut();
        let st = self.statements.get(&mut *c, sql).map_err(self.pg())?;
        c.query(&st, params).map_err(self.pg())
    }

    /// Calls `f` with each row of a query as the rows arrive, so that a
    /// world's chunks are never all in memory at once (`f` must not use
    /// this store: the connection is busy until the rows are read).
    fn each_row(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
        mut f: impl FnMut(&Row) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        use postgres::fallible_iterator::FallibleIterator;
        let mut c = self.client.borrow_mut();
        let st = self.statements.get(&mut *c, sql).map_err(self.pg())?;
        let mut rows = c
            .query_raw(&st, params.iter().copied())
            .map_err(self.pg())?;
        while let Some(r) = rows.next().map_err(self.pg())? {
            f(&r)?;
        }
        Ok(())
    }

    /// The row of a query that finds at most one.
    fn row(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Option<Row>, StoreError> {
        let mut c = self.client.borrow_mut();
        let st = self.statements.get(&mut *c, sql).map_err(self.pg())?;
        c.query_opt(&st, params).map_err(self.pg())
    }

    /// The row of a query that finds exactly one.
    fn one_row(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Row, StoreError> {
        let mut c = self.client.borrow_mut();
        let st = self.statements.get(&mut *c, sql).map_err(self.pg())?;
        c.query_one(&st, params).map_err(self.pg())
    }

    fn record(&self, row: &postgres::Row) -> Result<StrokeRecord, StoreError> {
        let id: i64 = row.get(0);
        let params: String = row.get(2);
        let params = serde_json::from_str(&params).map_err(|e| {
            StoreError::corrupt(&self.location, format!("parameters of stroke {id}: {e}"))
        })?;
        Ok(StrokeRecord {
            id,
            tool: row.get(1),
            params,
            delta: row.get(3),
            undone: row.get(4),
            created_ms: row.get(5),
        })
    }

    fn stroke_where(
        &self,
        clause: &str,
        arg: Option<i64>,
    ) -> Result<Option<StrokeRecord>, StoreError> {
        let sql = format!(
            "SELECT id, tool, params, delta, undone, created_ms FROM isoterra_strokes \
             WHERE world = $1 AND {clause} LIMIT 1"
        );
        let row = match arg {
            Some(id) => self.row(&sql, &[&self.world, &id])?,
            None => self.row(&sql, &[&self.world])?,
        };
        row.map(|r| self.record(&r)).transpose()
    }
}

/// Connects to the server `url` names, with the schema created or checked
/// (see [`migrate_schema`]): the client, the world's name and what errors
/// name (the URL without its password). Every handle on a world — store,
/// watcher, bake queue — connects this way.
fn connect(url: &str) -> Result<(Client, String, PathBuf), StoreError> {
    let (conn, world) = split_url(url)?;
    let location = redacted(&conn, &world);
    let mut client =
        Client::connect(&conn, NoTls).map_err(|e| StoreError::postgres(&location, e))?;
    migrate_schema(&mut client, &location)?;
    Ok((client, world, location))
}

/// Creates the schema, or checks it and brings an older one to this
/// build's version, under an advisory lock.
fn migrate_schema(client: &mut Client, location: &Path) -> Result<(), StoreError> {
    let pg = |e| StoreError::postgres(location, e);
    let mut tx = client.transaction().map_err(pg)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
        .map_err(pg)?;
    tx.batch_execute(SCHEMA).map_err(pg)?;
    let version: Option<i32> = tx
        .query_opt("SELECT version FROM isoterra_schema", &[])
        .map_err(pg)?
        .map(|r| r.get(0));
    match version {
        None => {
            tx.batch_execute(TO_V2).map_err(pg)?;
            tx.execute(
                "INSERT INTO isoterra_schema (version) VALUES ($1)",
                &[&PG_SCHEMA_VERSION],
            )
            .map_err(pg)?;
        }
        Some(v) if v > PG_SCHEMA_VERSION => {
            return Err(StoreError::NewerVersion {
                path: location.to_path_buf(),
                found: v as u32,
                supported: PG_SCHEMA_VERSION as u32,
            });
        }
        Some(v) if v < PG_SCHEMA_VERSION => {
            tx.batch_execute(TO_V2).map_err(pg)?;
            tx.execute(
                "UPDATE isoterra_schema SET version = $1",
                &[&PG_SCHEMA_VERSION],
            )
            .map_err(pg)?;
        }
        Some(_) => {}
    }
    tx.commit().map_err(pg)
}

/// A key as the tables' `layer, x, y, z, lod` columns hold it.
struct KeyCols {
    layer: i32,
    x: i32,
    y: i32,
    z: i32,
    lod: i16,
}

impl KeyCols {
    fn of(k: &ChunkKey) -> Self {
        KeyCols {
            layer: i32::from(k.layer.0),
            x: k.x,
            y: k.y,
            z: k.z,
            lod: i16::from(k.lod),
        }
    }

    /// `world` and the key: the parameters `$1..=$6` of a query on one row.
    fn params<'a>(&'a self, world: &'a String) -> [&'a (dyn ToSql + Sync); 6] {
        [world, &self.layer, &self.x, &self.y, &self.z, &self.lod]
    }
}

/// The key of a row whose first columns are `layer, x, y, z, lod`.
fn key_of(row: &postgres::Row, at: usize) -> ChunkKey {
    let layer: i32 = row.get(at);
    let lod: i16 = row.get(at + 4);
    ChunkKey {
        layer: ChunkLayer(layer as u16),
        x: row.get(at + 1),
        y: row.get(at + 2),
        z: row.get(at + 3),
        lod: lod as u8,
    }
}

/// Writes or deletes chunk rows inside a transaction.
fn apply(tx: &mut Tx<'_, '_>, world: &str, changes: &[ChunkChange]) -> Result<(), postgres::Error> {
    const PUT: &str = "INSERT INTO isoterra_chunks (world, layer, x, y, z, lod, payload)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (world, layer, x, y, z, lod) DO UPDATE SET payload = EXCLUDED.payload";
    const DELETE: &str = "DELETE FROM isoterra_chunks
         WHERE world = $1 AND layer = $2 AND x = $3 AND y = $4 AND z = $5 AND lod = $6";
    let world = world.to_string();
    for (key, payload) in changes {
        let cols = KeyCols::of(key);
        let row = cols.params(&world);
        match payload {
            Some(p) => tx.execute(PUT, &[row.as_slice(), &[p]].concat())?,
            None => tx.execute(DELETE, &row)?,
        };
    }
    Ok(())
}

/// Writes baked rows (new or replacing) inside a transaction.
fn insert_baked(
    tx: &mut Tx<'_, '_>,
    world: &str,
    rows: &[BakedRow],
) -> Result<(), postgres::Error> {
    const PUT: &str =
        "INSERT INTO isoterra_baked (world, layer, x, y, z, lod, source, hash, payload)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (world, layer, x, y, z, lod) DO UPDATE
         SET source = EXCLUDED.source, hash = EXCLUDED.hash, payload = EXCLUDED.payload";
    let world = world.to_string();
    for row in rows {
        let cols = KeyCols::of(&row.key);
        let values: [&(dyn ToSql + Sync); 3] = [&row.source, &row.hash, &row.payload];
        tx.execute(PUT, &[cols.params(&world).as_slice(), &values].concat())?;
    }
    Ok(())
}

impl ChunkStore for PgStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    fn location(&self) -> &Path {
        &self.location
    }

    fn check_current(&self) -> Result<(), StoreError> {
        if self.read_revision()?.unwrap_or(0) != self.revision {
            return Err(StoreError::Conflict {
                path: self.location.clone(),
            });
        }
        Ok(())
    }

    fn create_world(
        &mut self,
        meta: &WorldMeta,
        entries: &[(&str, &str)],
    ) -> Result<(), StoreError> {
        validate_meta(meta)?;
        validate_entries(entries)?;
        let params = meta_params_json(meta)?;
        let location = self.location.clone();
        let pg = |e| StoreError::postgres(&location, e);
        let world = self.world.clone();
        let client = self.client.get_mut();
        let mut tx = client.transaction().map_err(pg)?;
        let inserted = tx
            .execute(
                "INSERT INTO isoterra_worlds (world, revision, last_id) VALUES ($1, 1, 0)
                 ON CONFLICT (world) DO NOTHING",
                &[&world],
            )
            .map_err(pg)?;
        if inserted == 0 {
            return Err(StoreError::AlreadyExists { path: location });
        }
        let put = tx
            .prepare("INSERT INTO isoterra_meta (world, key, value) VALUES ($1, $2, $3)")
            .map_err(pg)?;
        for (k, v) in initial_meta_entries(meta, &params) {
            tx.execute(&put, &[&world, &k, &v]).map_err(pg)?;
        }
        for &(k, v) in entries {
            tx.execute(&put, &[&world, &k, &v]).map_err(pg)?;
        }
        tx.commit().map_err(pg)?;
        self.revision = 1;
        Ok(())
    }

    fn meta_entry(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .row(
                "SELECT value FROM isoterra_meta WHERE world = $1 AND key = $2",
                &[&self.world, &key],
            )?
            .map(|r| r.get(0)))
    }

    fn migrate_format(
        &mut self,
        format_version: u32,
        entries: &[(&str, &str)],
    ) -> Result<(), StoreError> {
        check_migration(self.meta()?.format_version, format_version, entries)?;
        let location = self.location.clone();
        self.write(true, |tx, world, _| {
            let pg = |e| StoreError::postgres(&location, e);
            const PUT: &str = "INSERT INTO isoterra_meta (world, key, value) VALUES ($1, $2, $3)
                 ON CONFLICT (world, key) DO UPDATE SET value = EXCLUDED.value";
            let version = format_version.to_string();
            tx.execute(PUT, &[&world, &"format_version", &version])
                .map_err(pg)?;
            for &(k, v) in entries {
                tx.execute(PUT, &[&world, &k, &v]).map_err(pg)?;
            }
            Ok(())
        })
    }

    fn chunk(&self, key: &ChunkKey) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self
            .row(
                "SELECT payload FROM isoterra_chunks
                 WHERE world = $1 AND layer = $2 AND x = $3 AND y = $4 AND z = $5 AND lod = $6",
                &KeyCols::of(key).params(&self.world),
            )?
            .map(|r| r.get(0)))
    }

    fn chunk_keys(&self) -> Result<Vec<ChunkKey>, StoreError> {
        Ok(self
            .rows(
                "SELECT layer, x, y, z, lod FROM isoterra_chunks WHERE world = $1
                 ORDER BY layer, x, y, z, lod",
                &[&self.world],
            )?
            .iter()
            .map(|r| key_of(r, 0))
            .collect())
    }

    fn visit_chunks(&self, layer: ChunkLayer, f: &mut ChunkVisitor<'_>) -> Result<(), StoreError> {
        self.each_row(
            "SELECT layer, x, y, z, lod, payload FROM isoterra_chunks
                 WHERE world = $1 AND layer = $2 ORDER BY layer, x, y, z, lod",
            &[&self.world, &i32::from(layer.0)],
            |r| {
                let payload: &[u8] = r.get(5);
                f(key_of(r, 0), payload)
            },
        )
    }

    fn put_chunks(&mut self, changes: &[ChunkChange]) -> Result<(), StoreError> {
        let location = self.location.clone();
        self.write(false, |tx, world, _| {
            apply(tx, world, changes).map_err(|e| StoreError::postgres(&location, e))
        })
    }

    fn commit_stroke(
        &mut self,
        stroke: &NewStroke,
        changes: &[ChunkChange],
    ) -> Result<i64, StoreError> {
        let params = stroke_params_json(stroke)?;
        let location = self.location.clone();
        self.write(true, |tx, world, last_id| {
            let pg = |e| StoreError::postgres(&location, e);
            let id = last_id
                .checked_add(1)
                .ok_or_else(|| StoreError::input("stroke", "the stroke log has run out of ids"))?;
            // A new stroke drops the redo tail; ids are never handed out twice.
            tx.execute(
                "DELETE FROM isoterra_strokes WHERE world = $1 AND undone",
                &[&world],
            )
            .map_err(pg)?;
            tx.execute(
                "INSERT INTO isoterra_strokes (world, id, tool, params, delta, undone, created_ms)
                 VALUES ($1, $2, $3, $4, $5, FALSE, $6)",
                &[&world, &id, &stroke.tool, &params, &stroke.delta, &now_ms()],
            )
            .map_err(pg)?;
            tx.execute(
                "UPDATE isoterra_worlds SET last_id = $2 WHERE world = $1",
                &[&world, &id],
            )
            .map_err(pg)?;
            apply(tx, world, changes).map_err(pg)?;
            Ok(id)
        })
    }

    fn mark_undone(&mut self, id: i64, changes: &[ChunkChange]) -> Result<(), StoreError> {
        // The ids only: a record's delta may be tens of MB.
        let cursor: i64 = self
            .one_row(
                "SELECT COALESCE(MAX(id), 0) FROM isoterra_strokes WHERE world = $1 AND NOT undone",
                &[&self.world],
            )?
            .get(0);
        check_undo(&self.location, id, cursor)?;
        self.set_undone(id, true, changes)
    }

    fn mark_redone(&mut self, id: i64, changes: &[ChunkChange]) -> Result<(), StoreError> {
        let first: Option<i64> = self
            .one_row(
                "SELECT MIN(id) FROM isoterra_strokes WHERE world = $1 AND undone",
                &[&self.world],
            )?
            .get(0);
        check_redo(&self.location, id, first)?;
        self.set_undone(id, false, changes)
    }

    fn stroke(&self, id: i64) -> Result<Option<StrokeRecord>, StoreError> {
        self.stroke_where("id = $2", Some(id))
    }

    fn last_done_stroke(&self) -> Result<Option<StrokeRecord>, StoreError> {
        self.stroke_where(
            "id = (SELECT MAX(id) FROM isoterra_strokes WHERE world = $1 AND NOT undone)",
            None,
        )
    }

    fn first_undone_stroke(&self) -> Result<Option<StrokeRecord>, StoreError> {
        self.stroke_where(
            "id = (SELECT MIN(id) FROM isoterra_strokes WHERE world = $1 AND undone)",
            None,
        )
    }

    fn stroke_counts(&self) -> Result<StrokeCounts, StoreError> {
        let row = self.one_row(
            "SELECT COUNT(*) FILTER (WHERE NOT undone), COUNT(*) FILTER (WHERE undone)
                 FROM isoterra_strokes WHERE world = $1",
            &[&self.world],
        )?;
        let (done, undone): (i64, i64) = (row.get(0), row.get(1));
        Ok(StrokeCounts {
            done: done as u64,
            undone: undone as u64,
        })
    }

    fn done_stroke_ids(&self) -> Result<Vec<i64>, StoreError> {
        Ok(self
            .rows(
                "SELECT id FROM isoterra_strokes WHERE world = $1 AND NOT undone ORDER BY id",
                &[&self.world],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    fn current_revision(&self) -> Result<u64, StoreError> {
        Ok(self.read_revision()?.unwrap_or(0) as u64)
    }

    fn adopt_revision(&mut self, revision: u64) {
        self.revision = revision as i64;
    }

    fn world_stamp(&self) -> Result<String, StoreError> {
        let mut h = StampHasher::new(|key| self.meta_entry(key))?;
        self.each_row(
            "SELECT layer, x, y, z, lod, payload FROM isoterra_chunks WHERE world = $1
                 ORDER BY layer, x, y, z, lod",
            &[&self.world],
            |r| {
                let payload: &[u8] = r.get(5);
                h.chunk(&key_of(r, 0), payload);
                Ok(())
            },
        )?;
        Ok(h.finish())
    }

    fn put_baked(&mut self, rows: &[BakedRow]) -> Result<(), StoreError> {
        let location = self.location.clone();
        let pg = |e| StoreError::postgres(&location, e);
        let world = self.world.clone();
        let client = self.client.get_mut();
        let mut tx = client.transaction().map_err(pg)?;
        insert_baked(&mut Tx::new(&mut tx, &self.statements), &world, rows).map_err(pg)?;
        tx.commit().map_err(pg)
    }

    fn baked_row(&self, key: &ChunkKey) -> Result<Option<BakedRow>, StoreError> {
        Ok(self
            .row(
                "SELECT source, hash, payload FROM isoterra_baked
                 WHERE world = $1 AND layer = $2 AND x = $3 AND y = $4 AND z = $5 AND lod = $6",
                &KeyCols::of(key).params(&self.world),
            )?
            .map(|r| BakedRow {
                key: *key,
                source: r.get(0),
                hash: r.get(1),
                payload: r.get(2),
            }))
    }

    fn baked_keys_from(&self, source: &str) -> Result<BTreeSet<ChunkKey>, StoreError> {
        Ok(self
            .rows(
                "SELECT layer, x, y, z, lod FROM isoterra_baked WHERE world = $1 AND source = $2",
                &[&self.world, &source],
            )?
            .iter()
            .map(|r| key_of(r, 0))
            .collect())
    }

    fn baked_sources(&self) -> Result<BTreeMap<ChunkKey, String>, StoreError> {
        Ok(self
            .rows(
                "SELECT layer, x, y, z, lod, source FROM isoterra_baked WHERE world = $1",
                &[&self.world],
            )?
            .iter()
            .map(|r| (key_of(r, 0), r.get(5)))
            .collect())
    }

    fn baked_keys_after(
        &self,
        after: Option<&ChunkKey>,
        limit: usize,
    ) -> Result<Vec<ChunkKey>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = match after {
            None => self.rows(
                "SELECT layer, x, y, z, lod FROM isoterra_baked WHERE world = $1
                 ORDER BY layer, x, y, z, lod LIMIT $2",
                &[&self.world, &limit],
            ),
            Some(k) => self.rows(
                "SELECT layer, x, y, z, lod FROM isoterra_baked
                 WHERE world = $1 AND (layer, x, y, z, lod) > ($2, $3, $4, $5, $6)
                 ORDER BY layer, x, y, z, lod LIMIT $7",
                &[KeyCols::of(k).params(&self.world).as_slice(), &[&limit]].concat(),
            ),
        }?;
        Ok(rows.iter().map(|r| key_of(r, 0)).collect())
    }

    fn baked_content_hash(&self) -> Result<Option<String>, StoreError> {
        let mut h = BakedHasher::new();
        self.each_row(
            "SELECT layer, x, y, z, lod, source, hash, payload FROM isoterra_baked
                 WHERE world = $1 ORDER BY layer, x, y, z, lod",
            &[&self.world],
            |r| {
                let row = BakedRow {
                    key: key_of(r, 0),
                    source: r.get(5),
                    hash: r.get(6),
                    payload: r.get(7),
                };
                let (_, hash) = decode_row(&self.location, &row)?;
                h.row(&row.key, &hash);
                Ok(())
            },
        )?;
        Ok(h.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_a_world_and_hide_the_password() {
        let (conn, world) =
            split_url("postgres://me:secret@db.example:5433/terrain?world=isle-1&sslmode=disable")
                .unwrap();
        assert_eq!(
            conn,
            "postgres://me:secret@db.example:5433/terrain?sslmode=disable"
        );
        assert_eq!(world, "isle-1");
        assert_eq!(
            redacted(&conn, &world),
            PathBuf::from("postgres://me@db.example:5433/terrain?sslmode=disable&world=isle-1")
        );
        let (conn, world) = split_url("postgresql://u@h/d?world=w").unwrap();
        assert_eq!((conn.as_str(), world.as_str()), ("postgresql://u@h/d", "w"));
        for bad in [
            "postgres://u@h/d",
            "postgres://u@h/d?world=",
            "postgres://u@h/d?world=a b",
            "postgres://u@h/d?world=../x",
            "mysql://u@h/d?world=w",
        ] {
            assert!(
                matches!(split_url(bad), Err(StoreError::InvalidInput { .. })),
                "{bad}"
            );
        }
        let long = format!(
            "postgres://u@h/d?world={}",
            "a".repeat(MAX_PG_WORLD_NAME + 1)
        );
        assert!(split_url(&long).is_err());
    }
}
