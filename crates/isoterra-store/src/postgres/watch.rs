//! Learning that another writer moved a world: `LISTEN`/`NOTIFY`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use postgres::Client;
use postgres::fallible_iterator::FallibleIterator;

use super::connect;
use crate::StoreError;

/// The channel every stroke-log write of every world notifies, with the
/// payload `WORLD REVISION` (the world's name and its revision after the
/// write).
pub const PG_NOTIFY_CHANNEL: &str = "isoterra_world";

/// A connection that listens for the writes of one world.
///
/// A writer's stroke, undo, redo and migration notify when they commit
/// (see [`PgStore`](super::PgStore)); the notification carries only the
/// world and its new revision, and a listener catches up by reading the
/// world (or its log) itself. Chunk puts, the game-rate path, do not
/// notify: a caller that must see them also compares the revision
/// ([`ChunkStore::check_current`](crate::ChunkStore::check_current)) now
/// and then.
pub struct PgWatcher {
    client: Client,
    world: String,
    location: PathBuf,
}

impl std::fmt::Debug for PgWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgWatcher")
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

impl PgWatcher {
    /// Connects to the server `url` names and listens for the writes of its
    /// world (which need not exist yet).
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidInput`] for a URL that is not `postgres://` or
    /// names no valid world, [`StoreError::Postgres`] when the server cannot
    /// be reached or refuses, [`StoreError::NewerVersion`] for a schema
    /// newer than this build's (a database without one is given it).
    pub fn open(url: &str) -> Result<Self, StoreError> {
        let (mut client, world, location) = connect(url)?;
        client
            .batch_execute(&format!("LISTEN {PG_NOTIFY_CHANNEL}"))
            .map_err(|e| StoreError::postgres(&location, e))?;
        Ok(PgWatcher {
            client,
            world,
            location,
        })
    }

    /// What errors name: the server without a password, and the world.
    pub fn location(&self) -> &Path {
        &self.location
    }

    /// Waits up to `timeout` for a write of this world. Returns the newest
    /// revision notified (every notification already waiting is taken), or
    /// `None` when the time ran out with none. Writes of other worlds on the
    /// same server are passed over.
    ///
    /// # Errors
    ///
    /// [`StoreError::Postgres`] when the connection is lost; open a new
    /// watcher, and read the world, since writes may have been missed.
    pub fn wait(&mut self, timeout: Duration) -> Result<Option<u64>, StoreError> {
        let deadline = Instant::now() + timeout;
        let location = self.location.clone();
        let pg = |e| StoreError::postgres(&location, e);
        let mut newest: Option<u64> = None;
        let mut notes = self.client.notifications();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            // Once one came, only what is already there is taken.
            let next = if newest.is_some() {
                notes.iter().next().map_err(pg)?
            } else {
                notes.timeout_iter(left).next().map_err(pg)?
            };
            let Some(note) = next else {
                return Ok(newest);
            };
            if note.channel() != PG_NOTIFY_CHANNEL {
                continue;
            }
            let Some((world, revision)) = note.payload().split_once(' ') else {
                continue;
            };
            if world != self.world {
                continue;
            }
            if let Ok(r) = revision.parse::<u64>() {
                newest = Some(newest.map_or(r, |n| n.max(r)));
            }
        }
    }
}
