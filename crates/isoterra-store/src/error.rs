//! The one error type of this crate.

use std::path::{Path, PathBuf};

use thiserror::Error;

/// Everything that can go wrong while reading or writing a world file.
///
/// A failed call changes nothing: neither the file nor, for the document
/// types, the world held in memory.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The path names no file.
    #[error("{}: no such file; check the path, or create a new world first", path.display())]
    NotFound {
        /// The path that was looked up.
        path: PathBuf,
    },
    /// Creating a world file would overwrite something.
    #[error("{}: already exists; refusing to overwrite it (pick another name or remove it first)", path.display())]
    AlreadyExists {
        /// The path that is taken.
        path: PathBuf,
    },
    /// The file exists but is not an isoterra world file.
    #[error("{}: not an isoterra world file: {reason}", path.display())]
    NotAWorldFile {
        /// The file.
        path: PathBuf,
        /// What was found instead (not SQLite, a foreign database, a folder…).
        reason: String,
    },
    /// The file is an isoterra world file, but its contents are damaged.
    #[error("{}: the world file is damaged: {reason}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A chunk payload or stroke delta does not decode.
    #[error("corrupt {what}: {reason}")]
    CorruptData {
        /// Which kind of data (`"chunk payload"`, `"stroke delta"`).
        what: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// The file was written by a newer isoterra with a schema this build does not know.
    #[error(
        "{}: written with world file schema version {found}, but this isoterra reads versions up to {supported}; upgrade isoterra to open it",
        path.display()
    )]
    NewerVersion {
        /// The file.
        path: PathBuf,
        /// The schema version found in the file.
        found: u32,
        /// The newest schema version this build understands.
        supported: u32,
    },
    /// The world inside the file uses a newer layout of its kind than this build reads.
    #[error(
        "{}: holds a `{kind}` world of format version {found}, but this isoterra reads versions up to {supported}; upgrade isoterra to open it",
        path.display()
    )]
    NewerFormat {
        /// The file.
        path: PathBuf,
        /// The world kind.
        kind: String,
        /// The format version found in the file.
        found: u32,
        /// The newest format version this build understands.
        supported: u32,
    },
    /// The file holds a different kind of world than the caller asked for.
    #[error("{}: holds a `{found}` world, not a `{expected}` world", path.display())]
    WrongKind {
        /// The file.
        path: PathBuf,
        /// The kind the caller can handle.
        expected: String,
        /// The kind recorded in the file.
        found: String,
    },
    /// Another handle wrote to the file after this handle opened it.
    #[error(
        "{}: the file was changed by another handle after this one opened it; reopen it to see the changes and continue",
        path.display()
    )]
    Conflict {
        /// The file.
        path: PathBuf,
    },
    /// Another connection held the file's write lock for longer than the busy timeout.
    #[error(
        "{}: the file is locked by another writer; try again when it is done",
        path.display()
    )]
    Busy {
        /// The file.
        path: PathBuf,
    },
    /// The file (or its folder, which must hold the write-ahead log) cannot be written.
    #[error(
        "{}: the file is read-only; check the permissions of the file and its folder",
        path.display()
    )]
    ReadOnly {
        /// The file.
        path: PathBuf,
    },
    /// An argument is out of range or inconsistent.
    #[error("invalid {what}: {reason}")]
    InvalidInput {
        /// Which argument.
        what: &'static str,
        /// What is wrong and what to do.
        reason: String,
    },
    /// A history operation does not fit the stroke log (e.g. undoing a stroke
    /// that is not the last done one).
    #[error("{}: {reason}", path.display())]
    History {
        /// The file.
        path: PathBuf,
        /// What does not fit.
        reason: String,
    },
    /// An operating-system error while touching the file.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// An SQLite error not covered by a more specific variant.
    #[error("{}: database error: {source}", path.display())]
    Sqlite {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: rusqlite::Error,
    },
    /// The database server named no world of that name.
    #[error("{}: the database holds no such world; create it first", path.display())]
    NoSuchWorld {
        /// The world's location (its URL, without a password).
        path: PathBuf,
    },
    /// A PostgreSQL error: the server could not be reached, refused the
    /// login or failed a query.
    #[cfg(feature = "postgres")]
    #[error("{}: database error: {source}", path.display())]
    Postgres {
        /// The world's location (its URL, without a password).
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: postgres::Error,
    },
    /// Parameters could not be turned into or read from JSON.
    #[error("JSON error in {what}: {source}")]
    Json {
        /// Which value.
        what: &'static str,
        /// The underlying error.
        #[source]
        source: serde_json::Error,
    },
    /// The field layer rejected a size or value.
    #[error(transparent)]
    Field(#[from] isoterra_field::FieldError),
    /// The world rejected parameters, a brush or an edit.
    #[error(transparent)]
    World(#[from] isoterra_world::WorldError),
}

impl StoreError {
    /// The stroke log's stroke `id` does not fit the world held in memory
    /// (another handle moved the history); the cure is to reopen the file.
    pub(crate) fn history_mismatch(path: &Path, id: i64) -> Self {
        StoreError::History {
            path: path.to_path_buf(),
            reason: format!("stroke {id} does not match the world in memory; reopen the file"),
        }
    }

    /// Wraps a PostgreSQL error for the world at `path`.
    #[cfg(feature = "postgres")]
    pub(crate) fn postgres(path: &Path, source: postgres::Error) -> Self {
        StoreError::Postgres {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Wraps an SQLite error for `path`, turning the codes that have a meaning
    /// for users (busy, corrupt, not a database) into their own variants.
    pub(crate) fn sqlite(path: &Path, source: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode;
        if matches!(
            source,
            rusqlite::Error::InvalidColumnType(..)
                | rusqlite::Error::FromSqlConversionFailure(..)
                | rusqlite::Error::IntegralValueOutOfRange(..)
        ) {
            return StoreError::Corrupt {
                path: path.to_path_buf(),
                reason: format!("unexpected value in the database: {source}"),
            };
        }
        match source.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => StoreError::Busy {
                path: path.to_path_buf(),
            },
            Some(ErrorCode::ReadOnly) => StoreError::ReadOnly {
                path: path.to_path_buf(),
            },
            Some(ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
                path: path.to_path_buf(),
                reason: source.to_string(),
            },
            Some(ErrorCode::NotADatabase) => StoreError::NotAWorldFile {
                path: path.to_path_buf(),
                reason: "not an SQLite database (or an encrypted one)".into(),
            },
            _ => StoreError::Sqlite {
                path: path.to_path_buf(),
                source,
            },
        }
    }

    pub(crate) fn corrupt(path: &Path, reason: impl Into<String>) -> Self {
        StoreError::Corrupt {
            path: path.to_path_buf(),
            reason: reason.into(),
        }
    }

    pub(crate) fn data(what: &'static str, reason: impl Into<String>) -> Self {
        StoreError::CorruptData {
            what,
            reason: reason.into(),
        }
    }

    /// An [`InvalidInput`](StoreError::InvalidInput) error: argument `what`
    /// is wrong for `reason` (which says what to do). Public so that the
    /// layers above the store (the kind layer's bakes) report bad arguments
    /// of calls that return store errors the same way.
    pub fn input(what: &'static str, reason: impl Into<String>) -> Self {
        StoreError::InvalidInput {
            what,
            reason: reason.into(),
        }
    }
}
