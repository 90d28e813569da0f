//! Writing modified chunks behind the scenes: a bounded queue drained by a
//! background thread into a [`ChunkStore`].

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::chunk_store::{ChunkChange, ChunkKey, ChunkStore};
use crate::error::StoreError;

/// Where a [`WriteBehind`] queue writes: anything that commits a batch of
/// chunk changes atomically and durably. Every [`ChunkStore`] is one
/// (through [`ChunkStore::put_chunks`]).
pub trait ChunkWriter: Send + 'static {
    /// Puts or deletes the rows of `changes` as one commit.
    ///
    /// # Errors
    ///
    /// Whatever the backend reports; nothing of the batch is written then.
    fn write_chunks(&mut self, changes: &[ChunkChange]) -> Result<(), StoreError>;
}

impl<S: ChunkStore + Send + 'static> ChunkWriter for S {
    fn write_chunks(&mut self, changes: &[ChunkChange]) -> Result<(), StoreError> {
        self.put_chunks(changes)
    }
}

/// What [`WriteBehind::push`] does when the queue is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum FullPolicy {
    /// Wait until the writer has made room (back-pressure on the caller).
    #[default]
    Block,
    /// Return an error at once; the change is not queued.
    Fail,
}

/// Settings of a [`WriteBehind`] queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteBehindConfig {
    /// Most changes waiting at once, `>= 1`. Default value: `256`.
    pub capacity: usize,
    /// Most changes written in one commit, `>= 1`. Default value: `64`.
    pub batch: usize,
    /// What a push into a full queue does. Default value: [`FullPolicy::Block`].
    pub policy: FullPolicy,
}

impl WriteBehindConfig {
    /// The defaults.
    pub const DEFAULT: Self = WriteBehindConfig {
        capacity: 256,
        batch: 64,
        policy: FullPolicy::Block,
    };

    /// Sets [`capacity`](Self::capacity).
    pub const fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity;
        self
    }

    /// Sets [`batch`](Self::batch).
    pub const fn with_batch(mut self, batch: usize) -> Self {
        self.batch = batch;
        self
    }

    /// Sets [`policy`](Self::policy).
    pub const fn with_policy(mut self, policy: FullPolicy) -> Self {
        self.policy = policy;
        self
    }
}

impl Default for WriteBehindConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[derive(Default)]
struct State {
    queue: VecDeque<ChunkChange>,
    /// Changes taken by the writer and not yet committed.
    writing: usize,
    written: u64,
    /// The first write error, until reported by `flush` or `finish`.
    error: Option<StoreError>,
    /// Why writing stopped, kept after the error itself was reported.
    stopped: Option<String>,
    /// The batch whose commit failed.
    failed: Vec<ChunkChange>,
    closing: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Signalled on every state change.
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'a>(&self, g: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.changed.wait(g).unwrap_or_else(|e| e.into_inner())
    }
}

fn stopped_error(reason: &str) -> StoreError {
    StoreError::input(
        "write-behind queue",
        format!(
            "an earlier write failed ({reason}); take the unwritten changes with take_unwritten and push them again"
        ),
    )
}

/// A bounded queue of chunk changes written to a [`ChunkStore`] (any
/// [`ChunkWriter`]) by a background thread, so that the thread that edits or streams never waits
/// for the disk (until the queue is full).
///
/// * [`push`](Self::push) queues a change (a payload, or `None` to delete
///   the row); when the queue holds [`capacity`](WriteBehindConfig::capacity)
///   changes it blocks or fails, by [`FullPolicy`].
/// * The writer commits up to [`batch`](WriteBehindConfig::batch) changes
///   per [`ChunkWriter::write_chunks`] call, in push order; when one batch
///   holds several changes of one chunk, the last one wins.
/// * [`flush`](Self::flush) returns once everything pushed before it is
///   durable (committed), or with the error that stopped the writer;
///   dropping the queue flushes too (errors are lost then: call
///   [`finish`](Self::finish) to see them and get the store back).
/// * After a failed commit the writer stops: nothing is lost, the failed
///   batch and the rest of the queue wait in
///   [`take_unwritten`](Self::take_unwritten).
///
/// The store should be the file's only writer while the queue owns it (a
/// second [`WorldFile`](crate::WorldFile) handle writing in between makes
/// the next commit fail with [`StoreError::Conflict`]). Strokes are not
/// written here: they stay durable through the stroke log.
///
/// ```
/// use isoterra_store::{ChunkKey, WorldFile, WorldMeta, WriteBehind, WriteBehindConfig};
/// # fn main() -> Result<(), isoterra_store::StoreError> {
/// # let dir = std::env::temp_dir().join(format!("isoterra-wb-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// # let path = dir.join("w.isoterra");
/// # let _ = std::fs::remove_file(&path);
/// let meta = WorldMeta { kind: "test".into(), format_version: 1, seed: 0, params: serde_json::json!({}) };
/// let file = WorldFile::create(&path, &meta)?;
/// let queue = WriteBehind::new(file, WriteBehindConfig::DEFAULT)?;
/// queue.push((ChunkKey::field2(3, 4), Some(vec![1, 2, 3])))?;
/// queue.flush()?; // on disk now
/// let file = queue.finish()?;
/// assert_eq!(file.chunk(&ChunkKey::field2(3, 4))?, Some(vec![1, 2, 3]));
/// # drop(file);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok(())
/// # }
/// ```
pub struct WriteBehind<S: ChunkWriter> {
    shared: Arc<Shared>,
    config: WriteBehindConfig,
    thread: Option<JoinHandle<S>>,
}

impl<S: ChunkWriter> std::fmt::Debug for WriteBehind<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.shared.lock();
        f.debug_struct("WriteBehind")
            .field("config", &self.config)
            .field("queued", &st.queue.len())
            .field("writing", &st.writing)
            .field("written", &st.written)
            .field("stopped", &st.stopped)
            .finish()
    }
}

impl<S: ChunkWriter> WriteBehind<S> {
    /// Starts the writer thread over `store`.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidInput`] for a zero capacity or batch, or a
    /// thread that cannot be started.
    pub fn new(store: S, config: WriteBehindConfig) -> Result<Self, StoreError> {
        if config.capacity == 0 || config.batch == 0 {
            return Err(StoreError::input(
                "write-behind config",
                "capacity and batch must be at least 1",
            ));
        }
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let worker = Arc::clone(&shared);
        let batch = config.batch;
        let thread = std::thread::Builder::new()
            .name("isoterra-write-behind".into())
            .spawn(move || writer(store, &worker, batch))
            .map_err(|e| {
                StoreError::input("write-behind thread", format!("could not be started: {e}"))
            })?;
        Ok(WriteBehind {
            shared,
            config,
            thread: Some(thread),
        })
    }

    /// The settings.
    pub fn config(&self) -> &WriteBehindConfig {
        &self.config
    }

    /// Queues a change.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidInput`] when the queue is full under
    /// [`FullPolicy::Fail`] or the writer stopped after a failed commit; the
    /// change is not queued then.
    pub fn push(&self, change: ChunkChange) -> Result<(), StoreError> {
        let mut st = self.shared.lock();
        loop {
            if let Some(reason) = &st.stopped {
                return Err(stopped_error(reason));
            }
            if st.queue.len() < self.config.capacity {
                break;
            }
            match self.config.policy {
                FullPolicy::Block => st = self.shared.wait(st),
                FullPolicy::Fail => {
                    return Err(StoreError::input(
                        "write-behind queue",
                        format!(
                            "full ({} changes waiting); flush, or push again once the writer caught up",
                            st.queue.len()
                        ),
                    ));
                }
            }
        }
        st.queue.push_back(change);
        self.shared.changed.notify_all();
        Ok(())
    }

    /// Queues a change if there is room, without waiting; gives it back
    /// when the queue is full or the writer stopped.
    pub fn try_push(&self, change: ChunkChange) -> Result<(), ChunkChange> {
        let mut st = self.shared.lock();
        if st.stopped.is_some() || st.queue.len() >= self.config.capacity {
            return Err(change);
        }
        st.queue.push_back(change);
        self.shared.changed.notify_all();
        Ok(())
    }

    /// Changes queued or being written.
    pub fn pending(&self) -> usize {
        let st = self.shared.lock();
        st.queue.len() + st.writing
    }

    /// Changes committed so far.
    pub fn written(&self) -> u64 {
        self.shared.lock().written
    }

    /// Waits until every change pushed so far is committed.
    ///
    /// # Errors
    ///
    /// The store's error when a commit failed (the first call after the
    /// failure gets the error itself, later ones a
    /// [`StoreError::InvalidInput`] that names it); see
    /// [`take_unwritten`](Self::take_unwritten).
    pub fn flush(&self) -> Result<(), StoreError> {
        let mut st = self.shared.lock();
        loop {
            if let Some(e) = st.error.take() {
                return Err(e);
            }
            if let Some(reason) = &st.stopped {
                return Err(stopped_error(reason));
            }
            if st.queue.is_empty() && st.writing == 0 {
                return Ok(());
            }
            st = self.shared.wait(st);
        }
    }

    /// After a failed commit: takes the changes that were not written (the
    /// failed batch, then the queue, in push order) and lets the writer run
    /// again. Empty when nothing failed.
    pub fn take_unwritten(&self) -> Vec<ChunkChange> {
        let mut st = self.shared.lock();
        if st.stopped.is_none() {
            return Vec::new();
        }
        let mut out = std::mem::take(&mut st.failed);
        out.extend(st.queue.drain(..));
        st.error = None;
        st.stopped = None;
        self.shared.changed.notify_all();
        out
    }

    /// Flushes, stops the writer and returns the store.
    ///
    /// # Errors
    ///
    /// As [`flush`](Self::flush) (the store is dropped then, after the
    /// writer stopped), or [`StoreError::InvalidInput`] when the store
    /// panicked inside a write.
    pub fn finish(mut self) -> Result<S, StoreError> {
        let flushed = self.flush();
        let store = self.stop();
        flushed?;
        store.ok_or_else(|| StoreError::input("write-behind writer", "stopped by a panic"))
    }

    /// Closes the queue and joins the writer (which first writes what is
    /// queued, unless a commit failed).
    fn stop(&mut self) -> Option<S> {
        {
            let mut st = self.shared.lock();
            st.closing = true;
            self.shared.changed.notify_all();
        }
        self.thread.take().and_then(|t| t.join().ok())
    }
}

impl<S: ChunkWriter> Drop for WriteBehind<S> {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.stop();
        }
    }
}

/// The writer thread: commits batches until closed with an empty queue.
fn writer<S: ChunkWriter>(mut store: S, shared: &Shared, batch: usize) -> S {
    let mut st = shared.lock();
    loop {
        if st.stopped.is_some() || st.queue.is_empty() {
            if st.closing {
                return store;
            }
            st = shared.wait(st);
            continue;
        }
        let n = batch.min(st.queue.len());
        let taken: Vec<ChunkChange> = st.queue.drain(..n).collect();
        st.writing = n;
        shared.changed.notify_all();
        drop(st);

        let result = store.write_chunks(&coalesce(&taken));

        st = shared.lock();
        st.writing = 0;
        match result {
            Ok(()) => st.written += n as u64,
            Err(e) => {
                st.stopped = Some(e.to_string());
                st.error = Some(e);
                st.failed = taken;
            }
        }
        shared.changed.notify_all();
    }
}

/// The changes of a batch with only the last change of each chunk, in the
/// order of those last changes.
fn coalesce(batch: &[ChunkChange]) -> Vec<ChunkChange> {
    let mut last: HashMap<ChunkKey, usize> = HashMap::with_capacity(batch.len());
    for (i, (k, _)) in batch.iter().enumerate() {
        last.insert(*k, i);
    }
    batch
        .iter()
        .enumerate()
        .filter(|(i, (k, _))| last[k] == *i)
        .map(|(_, c)| c.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalescing_keeps_the_last_change_of_each_chunk() {
        let a = ChunkKey::field2(0, 0);
        let b = ChunkKey::field2(1, 0);
        let batch = vec![(a, Some(vec![1])), (b, Some(vec![2])), (a, None)];
        assert_eq!(coalesce(&batch), vec![(b, Some(vec![2])), (a, None)]);
    }
}
