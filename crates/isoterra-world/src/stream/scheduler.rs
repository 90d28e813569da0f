//! The streaming scheduler: build jobs on a thread pool, prioritised and
//! cancelled as viewers move, with stable slots and a polled event stream.

use std::collections::{BTreeSet, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::select::{
    ChunkCoord, CoordMap, CoordSet, StreamConfig, StreamViewer, offset, request_of, select,
    touching_offsets, viewer_points,
};
use super::source::{CancelFlag, ChunkRequest, ChunkSource, SlotId, StreamEvent};
use crate::WorldError;

/// Counters of a [`StreamScheduler`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamStats {
    /// Chunks held now (wanted or inside the hysteresis band).
    pub held: usize,
    /// Chunks handed out with a ready event and not unloaded.
    pub shown: usize,
    /// Jobs queued or running on the pool.
    pub in_flight: usize,
    /// Jobs whose results were accepted so far.
    pub built: u64,
    /// Jobs cancelled (flag set) so far.
    pub cancelled: u64,
    /// Builds that failed so far.
    pub failed: u64,
    /// Events waiting to be polled.
    pub queued_events: usize,
}

/// Where a [`StreamScheduler`] runs its build jobs: a rayon pool by
/// default ([`StreamScheduler::new`], [`with_pool`](StreamScheduler::with_pool)),
/// or an engine's own task pool ([`with_executor`](StreamScheduler::with_executor)),
/// so chunk builds share the workers the rest of the game uses.
///
/// A job never blocks on the scheduler and sends its result back itself, so
/// an executor only has to run each job once, on any thread, eventually.
pub trait StreamExecutor: Send + Sync + 'static {
    /// Runs `job` on a worker thread (not the calling thread, which is the
    /// application's frame loop).
    fn spawn(&self, job: Box<dyn FnOnce() + Send + 'static>);
}

impl StreamExecutor for rayon::ThreadPool {
    fn spawn(&self, job: Box<dyn FnOnce() + Send + 'static>) {
        rayon::ThreadPool::spawn(self, job);
    }
}

/// How a job ended.
enum Outcome<T> {
    Built(T),
    Cancelled,
    Failed,
}

struct Done<T> {
    ticket: u64,
    request: ChunkRequest,
    outcome: Outcome<T>,
}

/// The results of finished jobs, handed from the workers to the scheduler.
///
/// A scheduler blocked in [`StreamScheduler::wait`] asks to be woken once a
/// number of results wait, not at each one: a wake-up is a system call on
/// the worker and a context switch on the waiting thread, which for small
/// chunks (a heightmap chunk builds in tens of microseconds) was a large
/// part of the time. A scheduler that polls never blocks, and a worker then
/// only takes the lock.
struct Finished<T> {
    state: Mutex<FinishedState<T>>,
    ready: Condvar,
}

struct FinishedState<T> {
    done: Vec<Done<T>>,
    /// Wake the waiting scheduler when this many results wait (0: nobody
    /// waits).
    wake_at: usize,
}

impl<T> Finished<T> {
    fn new() -> Self {
        Finished {
            state: Mutex::new(FinishedState {
                done: Vec::new(),
                wake_at: 0,
            }),
            ready: Condvar::new(),
        }
    }

    /// The state; a worker that panicked while holding the lock (it cannot:
    /// it only pushes) leaves the results as they are.
    fn lock(&self) -> MutexGuard<'_, FinishedState<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds the result of a job (on the worker that ran it).
    fn push(&self, done: Done<T>) {
        let mut s = self.lock();
        s.done.push(done);
        if s.wake_at != 0 && s.done.len() >= s.wake_at {
            s.wake_at = 0;
            drop(s);
            self.ready.notify_one();
        }
    }

    /// Blocks until at least `n` results wait (`0`: never blocks), then
    /// moves them all to the end of `into`, in the order the jobs finished.
    /// `n` must not exceed the jobs still to report.
    fn take_at_least(&self, n: usize, into: &mut Vec<Done<T>>) {
        let mut s = self.lock();
        while s.done.len() < n {
            s.wake_at = n;
            s = self.ready.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.wake_at = 0;
        into.append(&mut s.done);
    }
}

struct Job {
    ticket: u64,
    request: ChunkRequest,
    cancel: CancelFlag,
}

struct Entry {
    /// The LOD the chunk should have.
    target: u8,
    /// What the chunk should be built from (its LOD and the neighbour LODs
    /// its seams depend on).
    want: ChunkRequest,
    /// The LOD and slot handed out, if any.
    shown: Option<(u8, SlotId)>,
    /// The request the shown content was built from.
    shown_request: Option<Box<ChunkRequest>>,
    /// The job building it, if any.
    job: Option<Box<Job>>,
    /// A request whose build failed.
    failed: Option<Box<ChunkRequest>>,
    /// Invalidated: built before anything else.
    urgent: bool,
    /// Whether the shown content or the failure is for `want` (kept by
    /// [`Entry::refresh`]).
    done: bool,
}

impl Entry {
    fn needs_job(&self) -> bool {
        !self.done && self.job.as_ref().map(|j| &j.request) != Some(&self.want)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    /// Works out [`done`](Self::done) again after `want`, `shown_request`
    /// or `failed` changed.
    fn refresh(&mut self) {
        self.done = self.shown_request.as_deref() == Some(&self.want)
            || self.failed.as_deref() == Some(&self.want);
    }
}

/// A chunk leaving the held set: its job and what it showed.
type Leaving = (ChunkCoord, Option<Box<Job>>, Option<(u8, SlotId)>);

/// A flag on LODs in the selection while it is matched with the held chunks.
const HELD: u8 = 0x80;

/// Streams chunks of any world kind around viewers.
///
/// Call [`update`](Self::update) when viewers move (once per frame is
/// fine) and [`poll`](Self::poll) every frame on the application thread;
/// neither ever waits for a build. The scheduler
///
/// * works out the chunks to hold: the wanted set of
///   [`desired_chunks`](crate::desired_chunks) plus loaded chunks still
///   within `view_distance +` [`unload_hysteresis`](StreamConfig::unload_hysteresis)
///   of a viewer (which are also made coarser only that far past their
///   ring), with the 2:1 rule over all of them;
/// * builds the missing ones with its [`ChunkSource`] on a rayon pool,
///   nearest first, chunks in front of a viewer before chunks behind, at
///   most [`max_in_flight`](StreamConfig::max_in_flight) jobs at a time, and
///   prefetches along each viewer's velocity;
/// * cancels jobs of chunks that stop being wanted (their
///   [`CancelFlag`] is set and their results are dropped), and reports
///   chunks leaving the band as [`StreamEvent::ChunkUnloaded`];
/// * gives every shown chunk a [`SlotId`];
/// * hands each build the LODs of the chunk's neighbours
///   ([`ChunkRequest`]) and rebuilds a shown chunk, keeping its slot, when
///   the part of its request that its seams depend on
///   ([`ChunkSource::seam_request`]) changes;
/// * follows edits: after the source's data changed, the chunks that read
///   it are [`invalidate`](Self::invalidate)d and rebuilt before anything
///   else, keeping their slots (builds of them already running are
///   cancelled and their results dropped).
///
/// Events come in order: a [`ChunkUnloaded`](StreamEvent::ChunkUnloaded)
/// always follows the [`ChunkReady`](StreamEvent::ChunkReady) of its chunk,
/// and a slot is only reused after the unload that freed it. The content
/// of a chunk depends only on the source and its request, not on the
/// number of threads or the order jobs ran in.
///
/// ```
/// use isoterra_world::{ChunkRequest, ChunkSource, CancelFlag, StreamConfig, StreamEvent,
///     StreamScheduler, StreamViewer};
///
/// struct Squares;
/// impl ChunkSource for Squares {
///     type Output = i64;
///     fn build(&self, r: &ChunkRequest, _cancel: &CancelFlag) -> Option<i64> {
///         Some(i64::from(r.coord[0]) * i64::from(r.coord[0]))
///     }
/// }
///
/// let cfg = StreamConfig::DEFAULT.with_chunk_size(16.0).with_threads(2);
/// let mut stream = StreamScheduler::new(Squares, cfg)?;
/// stream.update(&[StreamViewer::new([0.0; 3], 20.0)])?;
/// let mut ready = 0;
/// while !stream.is_settled() {
///     for e in stream.poll(64) {
///         if let StreamEvent::ChunkReady { .. } = e {
///             ready += 1;
///         }
///     }
///     std::thread::yield_now();
/// }
/// assert_eq!(ready, stream.stats().shown);
/// # Ok::<(), isoterra_world::WorldError>(())
/// ```
pub struct StreamScheduler<S: ChunkSource> {
    source: Arc<S>,
    config: StreamConfig,
    pool: Arc<dyn StreamExecutor>,
    finished: Arc<Finished<S::Output>>,
    /// Results taken from `finished`, being accepted (kept for its memory).
    taken: Vec<Done<S::Output>>,
    entries: CoordMap<Entry>,
    /// Chunks that may need a job, best first.
    queue: Vec<ChunkCoord>,
    events: VecDeque<StreamEvent<S::Output>>,
    free_slots: BTreeSet<SlotId>,
    next_slot: SlotId,
    in_flight: usize,
    next_ticket: u64,
    built: u64,
    cancelled: u64,
    failed: u64,
}

impl<S: ChunkSource> std::fmt::Debug for StreamScheduler<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamScheduler")
            .field("config", &self.config)
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl<S: ChunkSource> StreamScheduler<S> {
    /// A scheduler with its own pool of [`threads`](StreamConfig::threads)
    /// workers.
    ///
    /// # Errors
    ///
    /// A bad configuration ([`StreamConfig::validate`]), or a pool that
    /// cannot be started.
    pub fn new(source: S, config: StreamConfig) -> Result<Self, WorldError> {
        config.validate()?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(config.threads)
            .thread_name(|i| format!("isoterra-stream-{i}"))
            .build()
            .map_err(|_| {
                WorldError::param(
                    "threads",
                    config.threads,
                    "the worker threads could not be started",
                )
            })?;
        Self::with_pool(source, config, Arc::new(pool))
    }

    /// A scheduler running its jobs on an existing pool (shared with other
    /// work); [`threads`](StreamConfig::threads) is ignored.
    ///
    /// # Errors
    ///
    /// A bad configuration ([`StreamConfig::validate`]).
    pub fn with_pool(
        source: S,
        config: StreamConfig,
        pool: Arc<rayon::ThreadPool>,
    ) -> Result<Self, WorldError> {
        Self::with_executor(source, config, pool)
    }

    /// A scheduler running its jobs on `executor` (an engine's task pool,
    /// say); [`threads`](StreamConfig::threads) is ignored. How many jobs
    /// run at once is still bounded by
    /// [`max_in_flight`](StreamConfig::max_in_flight).
    ///
    /// # Errors
    ///
    /// A bad configuration ([`StreamConfig::validate`]).
    pub fn with_executor(
        source: S,
        config: StreamConfig,
        pool: Arc<dyn StreamExecutor>,
    ) -> Result<Self, WorldError> {
        config.validate()?;
        Ok(StreamScheduler {
            source: Arc::new(source),
            config,
            pool,
            finished: Arc::new(Finished::new()),
            taken: Vec::new(),
            entries: CoordMap::default(),
            queue: Vec::new(),
            events: VecDeque::new(),
            free_slots: BTreeSet::new(),
            next_slot: 0,
            in_flight: 0,
            next_ticket: 0,
            built: 0,
            cancelled: 0,
            failed: 0,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &StreamConfig {
        &self.config
    }

    /// The source.
    pub fn source(&self) -> &S {
        &self.source
    }

    /// The counters.
    pub fn stats(&self) -> StreamStats {
        StreamStats {
            held: self.entries.len(),
            shown: self.entries.values().filter(|e| e.shown.is_some()).count(),
            in_flight: self.in_flight,
            built: self.built,
            cancelled: self.cancelled,
            failed: self.failed,
            queued_events: self.events.len(),
        }
    }

    /// The shown chunks with their LOD and slot, sorted by coordinate.
    pub fn shown(&self) -> Vec<(ChunkCoord, u8, SlotId)> {
        let mut v: Vec<_> = self
            .entries
            .iter()
            .filter_map(|(c, e)| e.shown.map(|(l, s)| (*c, l, s)))
            .collect();
        v.sort_unstable();
        v
    }

    /// The slot of a shown chunk.
    pub fn slot(&self, coord: ChunkCoord) -> Option<SlotId> {
        self.entries.get(&coord).and_then(|e| e.shown.map(|s| s.1))
    }

    /// True when no job is in flight, no event is waiting and every held
    /// chunk is shown at its target LOD (or failed at it): nothing more
    /// happens until viewers move.
    pub fn is_settled(&self) -> bool {
        self.in_flight == 0 && self.events.is_empty() && self.entries.values().all(Entry::is_done)
    }

    /// Takes new viewer positions: chooses the chunks to hold, queues unload
    /// events, cancels jobs no longer wanted and starts new ones. Never
    /// waits for a build. Its cost grows with the number of held chunks (a
    /// few passes over them); the neighbour LODs of a chunk's request are
    /// only worked out again when the chunk or one that touches it arrives,
    /// leaves or changes LOD.
    ///
    /// # Errors
    ///
    /// Bad viewers (see [`desired_chunks`](crate::desired_chunks)); nothing
    /// changes then.
    pub fn update(&mut self, viewers: &[StreamViewer]) -> Result<(), WorldError> {
        self.config.check_viewers(viewers)?;
        let mut target = select(
            &self.config,
            viewers,
            self.entries
                .iter()
                .filter_map(|(c, e)| e.shown.map(|s| (*c, s.0))),
            self.entries.len() + self.entries.len() / 8,
        );
        let dim = self.config.dim;

        // One pass over the held chunks: the ones leaving are taken out,
        // the others get their new LOD and are flagged in `target` as held.
        let mut leaving: Vec<Leaving> = Vec::new();
        let mut changed: Vec<ChunkCoord> = Vec::new();
        self.entries.retain(|c, e| match target.get_mut(c) {
            None => {
                leaving.push((*c, e.job.take(), e.shown));
                false
            }
            Some(lod) => {
                if e.target != *lod {
                    e.target = *lod;
                    changed.push(*c);
                }
                *lod |= HELD;
                true
            }
        });
        // Chunks arriving.
        for (&c, lod) in target.iter_mut() {
            if *lod & HELD != 0 {
                *lod &= !HELD;
                continue;
            }
            self.entries.insert(
                c,
                Entry {
                    target: *lod,
                    want: ChunkRequest::new(c, *lod),
                    shown: None,
                    shown_request: None,
                    job: None,
                    failed: None,
                    urgent: false,
                    done: false,
                },
            );
            changed.push(c);
        }

        // Chunks whose request may change: the ones leaving, arriving or
        // changing LOD, and every chunk touching one of them. The others
        // keep theirs.
        let mut touched = CoordSet::default();
        let mark = |c: ChunkCoord, touched: &mut CoordSet| {
            if target.contains_key(&c) {
                touched.insert(c);
            }
            for d in touching_offsets(dim) {
                let n = offset(c, d);
                if target.contains_key(&n) {
                    touched.insert(n);
                }
            }
        };
        for &c in &changed {
            mark(c, &mut touched);
        }

        // Chunks leaving: cancel their jobs, free their slots (in
        // coordinate order, so slots and events do not depend on the map).
        leaving.sort_unstable_by_key(|l| l.0);
        for (c, job, shown) in leaving {
            mark(c, &mut touched);
            if let Some(job) = job {
                job.cancel.cancel();
                self.cancelled += 1;
            }
            if let Some((_, slot)) = shown {
                self.free_slots.insert(slot);
                self.events
                    .push_back(StreamEvent::ChunkUnloaded { coord: c, slot });
            }
        }
        for c in touched {
            let Some(e) = self.entries.get_mut(&c) else {
                continue;
            };
            let want = self
                .source
                .seam_request(request_of(dim, &target, c, e.target));
            e.want = want;
            if e.failed.as_deref().is_some_and(|f| *f != want) {
                e.failed = None;
            }
            e.refresh();
            // A job for another LOD or other seams is no use any more.
            if e.job.as_ref().is_some_and(|j| j.request != want)
                && let Some(job) = e.job.take()
            {
                job.cancel.cancel();
                self.cancelled += 1;
            }
        }

        // Priorities: distance to the nearest viewer point, doubled for
        // chunks straight behind the viewer.
        let cfg = self.config;
        let points: Vec<([f64; 3], [f64; 3], f64)> = viewers
            .iter()
            .flat_map(|v| {
                let fwd = v.forward.map(f64::from);
                let len = fwd.iter().map(|x| x * x).sum::<f64>().sqrt();
                let fwd = if len > 0.0 {
                    fwd.map(|x| x / len)
                } else {
                    [0.0; 3]
                };
                viewer_points(v, &cfg)
                    .into_iter()
                    .enumerate()
                    .map(move |(k, p)| (p, fwd, if k == 0 { 0.0 } else { cfg.chunk_size.into() }))
            })
            .collect();
        let mut queue: Vec<(bool, u64, ChunkCoord)> = self
            .entries
            .iter()
            .filter(|(_, e)| e.needs_job())
            .map(|(&c, e)| {
                let mut best = f64::INFINITY;
                for &(p, fwd, penalty) in &points {
                    let d = cfg.distance(c, p);
                    let centre = cfg.centre(c, p);
                    let dir: [f64; 3] = std::array::from_fn(|a| centre[a] - p[a]);
                    let len = dir.iter().map(|x| x * x).sum::<f64>().sqrt();
                    let cos = if len > 0.0 {
                        (0..3).map(|a| dir[a] * fwd[a]).sum::<f64>() / len
                    } else {
                        1.0
                    };
                    best = best.min(d * (1.5 - 0.5 * cos) + penalty);
                }
                // Non-negative, so the bits order like the values.
                (!e.urgent, best.to_bits(), c)
            })
            .collect();
        queue.sort_unstable();
        self.queue = queue.into_iter().map(|(_, _, c)| c).collect();
        self.receive();
        self.dispatch();
        Ok(())
    }

    /// Collects finished builds and returns up to `max` events, oldest
    /// first, without blocking. Starts queued jobs as the budget frees up.
    pub fn poll(&mut self, max: usize) -> Vec<StreamEvent<S::Output>> {
        self.receive();
        self.dispatch();
        let n = max.min(self.events.len());
        self.events.drain(..n).collect()
    }

    /// Every waiting event ([`poll`](Self::poll) without a limit).
    pub fn drain(&mut self) -> Vec<StreamEvent<S::Output>> {
        self.poll(usize::MAX)
    }

    /// Blocks until the scheduler is settled and returns every event. For
    /// tools and tests (bakes, benchmarks): a frame loop calls
    /// [`poll`](Self::poll) instead. Must not be called from a job of the
    /// scheduler's pool.
    pub fn wait(&mut self) -> Vec<StreamEvent<S::Output>> {
        let mut out: Vec<StreamEvent<S::Output>> = self.events.drain(..).collect();
        loop {
            self.receive();
            self.dispatch();
            out.extend(self.events.drain(..));
            if self.in_flight == 0 {
                break;
            }
            // Woken when half the jobs in flight are done: the other half
            // keeps the workers busy meanwhile, and the jobs that take
            // their place are handed out together.
            self.receive_at_least((self.in_flight / 2).max(1));
        }
        out
    }

    /// Marks held chunks among `coords` as out of date (their source data
    /// changed, for example after an edit) and returns how many were held.
    ///
    /// A job already building one of them is cancelled and its result is
    /// dropped; each of them is built again before any other chunk, at its
    /// current target LOD, and handed out as a new
    /// [`ChunkReady`](StreamEvent::ChunkReady) with the slot it has. A chunk
    /// not shown yet is simply built from the new data. Coordinates that are
    /// not held are ignored. Never waits for a build.
    ///
    /// Call it after the source's data changed (for example
    /// [`VoxelSource::set_chunks`](crate::VoxelSource::set_chunks)): builds
    /// that started before see the old data, which is why they are redone.
    pub fn invalidate<I: IntoIterator<Item = ChunkCoord>>(&mut self, coords: I) -> usize {
        let coords: std::collections::HashSet<ChunkCoord> = coords.into_iter().collect();
        self.invalidate_where(|_, c, _| coords.contains(&c))
    }

    /// As [`invalidate`](Self::invalidate), for the held chunks for which
    /// `stale(source, coord, lod)` is true, asked once per held chunk with
    /// its target LOD and, when another LOD is shown, once more with the
    /// shown one (so sources can tell by LOD which samples a build reads,
    /// as [`VoxelSource::reads_dirty`](crate::VoxelSource::reads_dirty)
    /// does). Returns how many chunks were invalidated.
    pub fn invalidate_where(&mut self, mut stale: impl FnMut(&S, ChunkCoord, u8) -> bool) -> usize {
        self.receive();
        let source: &S = &self.source;
        let mut hit: Vec<ChunkCoord> = Vec::new();
        for (&c, e) in &mut self.entries {
            let shown_lod = e.shown.map(|s| s.0).filter(|&l| l != e.target);
            let is_stale =
                stale(source, c, e.target) || shown_lod.is_some_and(|l| stale(source, c, l));
            if !is_stale {
                continue;
            }
            if let Some(job) = e.job.take() {
                job.cancel.cancel();
                self.cancelled += 1;
            }
            e.shown_request = None;
            e.failed = None;
            e.refresh();
            e.urgent = true;
            hit.push(c);
        }
        hit.sort_unstable();
        // Ahead of everything queued, in coordinate order.
        let rest = std::mem::take(&mut self.queue);
        self.queue = hit.iter().copied().chain(rest).collect();
        self.dispatch();
        hit.len()
    }

    fn receive(&mut self) {
        self.receive_at_least(0);
    }

    /// Accepts the finished jobs' results, waiting until there are `n`.
    fn receive_at_least(&mut self, n: usize) {
        let mut taken = std::mem::take(&mut self.taken);
        self.finished.take_at_least(n, &mut taken);
        for done in taken.drain(..) {
            self.accept(done);
        }
        self.taken = taken;
    }

    fn accept(&mut self, done: Done<S::Output>) {
        self.in_flight = self.in_flight.saturating_sub(1);
        let coord = done.request.coord;
        let lod = done.request.lod;
        let Some(e) = self.entries.get_mut(&coord) else {
            return;
        };
        if e.job.as_ref().map(|j| j.ticket) != Some(done.ticket) {
            // Stale: the chunk left or changed LOD since; drop the result.
            return;
        }
        e.job = None;
        match done.outcome {
            Outcome::Built(output) => {
                self.built += 1;
                let slot = match e.shown {
                    Some((_, slot)) => slot,
                    None => match self.free_slots.pop_first() {
                        Some(s) => s,
                        None => {
                            self.next_slot += 1;
                            self.next_slot - 1
                        }
                    },
                };
                e.shown = Some((lod, slot));
                match &mut e.shown_request {
                    Some(r) => **r = done.request,
                    None => e.shown_request = Some(Box::new(done.request)),
                }
                e.refresh();
                self.events.push_back(StreamEvent::ChunkReady {
                    coord,
                    lod,
                    slot,
                    output,
                });
            }
            Outcome::Cancelled => {}
            Outcome::Failed => {
                self.failed += 1;
                e.failed = Some(Box::new(done.request));
                e.refresh();
                self.events
                    .push_back(StreamEvent::ChunkFailed { coord, lod });
            }
        }
    }

    fn dispatch(&mut self) {
        if self.in_flight >= self.config.max_in_flight {
            return;
        }
        let mut queue = std::mem::take(&mut self.queue);
        let mut used = 0;
        for &c in &queue {
            if self.in_flight >= self.config.max_in_flight {
                break;
            }
            used += 1;
            let Some(e) = self.entries.get_mut(&c) else {
                continue;
            };
            if !e.needs_job() {
                continue;
            }
            let request = e.want;
            e.urgent = false;
            let cancel = CancelFlag::new();
            let ticket = self.next_ticket;
            self.next_ticket += 1;
            e.job = Some(Box::new(Job {
                ticket,
                request,
                cancel: cancel.clone(),
            }));
            self.in_flight += 1;
            let source = Arc::clone(&self.source);
            let finished = Arc::clone(&self.finished);
            self.pool.spawn(Box::new(move || {
                let outcome = if cancel.is_cancelled() {
                    Outcome::Cancelled
                } else {
                    match catch_unwind(AssertUnwindSafe(|| source.build(&request, &cancel))) {
                        _ if cancel.is_cancelled() => Outcome::Cancelled,
                        Ok(Some(out)) => Outcome::Built(out),
                        Ok(None) | Err(_) => Outcome::Failed,
                    }
                };
                // Kept until the scheduler takes it (or is dropped).
                finished.push(Done {
                    ticket,
                    request,
                    outcome,
                });
            }));
        }
        queue.drain(..used);
        self.queue = queue;
    }
}

impl<S: ChunkSource> Drop for StreamScheduler<S> {
    fn drop(&mut self) {
        for e in self.entries.values() {
            if let Some(job) = &e.job {
                job.cancel.cancel();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done(ticket: u64) -> Done<u64> {
        Done {
            ticket,
            request: ChunkRequest::new([0, 0, 0], 0),
            outcome: Outcome::Built(ticket),
        }
    }

    /// Results pushed from several threads all reach a scheduler that asks
    /// for half of what is still to come each time, each thread's in the
    /// order it pushed them; asking for what already waits does not block.
    #[test]
    fn finished_results_reach_a_waiting_scheduler() {
        let finished = Arc::new(Finished::new());
        let (threads, each) = (4u64, 50u64);
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let finished = Arc::clone(&finished);
                std::thread::spawn(move || {
                    for i in 0..each {
                        if i % 7 == 0 {
                            std::thread::sleep(std::time::Duration::from_micros(200));
                        }
                        finished.push(done(t * 1000 + i));
                    }
                })
            })
            .collect();
        let mut got = Vec::new();
        let total = (threads * each) as usize;
        while got.len() < total {
            let left = total - got.len();
            finished.take_at_least((left / 2).max(1), &mut got);
        }
        for w in workers {
            w.join().unwrap();
        }
        assert_eq!(got.len(), total);
        for t in 0..threads {
            let mine: Vec<u64> = got
                .iter()
                .map(|d| d.ticket)
                .filter(|k| k / 1000 == t)
                .collect();
            assert_eq!(mine, (0..each).map(|i| t * 1000 + i).collect::<Vec<_>>());
        }
        finished.push(done(1));
        finished.push(done(2));
        let mut two = Vec::new();
        finished.take_at_least(2, &mut two);
        assert_eq!(two.iter().map(|d| d.ticket).collect::<Vec<_>>(), [1, 2]);
        let mut none = Vec::new();
        finished.take_at_least(0, &mut none);
        assert!(none.is_empty());
    }
}
