//! A bake shared by any number of workers: jobs claimed from a table with
//! `FOR UPDATE SKIP LOCKED`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use postgres::Client;

use super::{Statements, Tx, connect, insert_baked};
use crate::StoreError;
use crate::chunk_store::{BakedRow, now_ms};

/// How long a worker waits before looking again when every job left is
/// held by another worker (it takes over the job of one that died).
const HELD_WAIT: Duration = Duration::from_millis(100);

/// Most jobs one run may have.
pub const MAX_BAKE_JOBS: u64 = 1 << 24;

/// One job of a run: the positions `start..end` of the plan's keys in
/// their canonical order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BakeJob {
    /// The job's number, from 0.
    pub job: u64,
    /// First position.
    pub start: u64,
    /// One past the last position.
    pub end: u64,
}

/// How far a run has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueProgress {
    /// Jobs in the run.
    pub jobs: u64,
    /// Jobs whose rows are stored.
    pub done: u64,
}

/// A bake run of a world as the jobs table holds it (see [`PgBakeQueue::runs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BakeRun {
    /// The run's id.
    pub run: String,
    /// What the run bakes, as its first worker described it.
    pub plan: String,
    /// Chunks in the run (keys of the plan: chunks times layers).
    pub chunks: u64,
    /// Jobs in the run.
    pub jobs: u64,
    /// Jobs whose rows are stored.
    pub done: u64,
    /// When the run was made, in milliseconds since the Unix epoch.
    pub created_ms: i64,
}

/// One worker's handle on a bake run of a world on a PostgreSQL server.
///
/// A *run* is a bake plan of a world as it stands: its id is chosen by the
/// caller from what makes the chunks (the plan and the world's stamp), so
/// every worker that bakes the same region of the same world joins the
/// same run, and a world edited since gets a run of its own. The first
/// worker creates the run's jobs: the plan's keys, in their canonical
/// order, cut into ranges of `job_keys`.
///
/// [`work`](Self::work) claims the first job no one holds, with `SELECT …
/// FOR UPDATE SKIP LOCKED` in a transaction that stays open while the job
/// is baked, and stores the job's rows and marks it done in that same
/// transaction. So:
///
/// - two workers never bake one job at once, and no job is done twice;
/// - a job is done exactly when its rows are stored;
/// - a worker that dies (a crash, `kill -9`, a lost machine) loses its
///   connection, the server rolls its transaction back, and the job is free
///   for the next worker at once: there are no leases to time out;
/// - a stopped run resumes where it stopped with any number of workers.
///
/// Finished runs stay (a rerun finds nothing to do) until a new run of the
/// same world is created, which removes the world's finished runs.
pub struct PgBakeQueue {
    client: Client,
    statements: Statements,
    world: String,
    location: PathBuf,
    run: String,
    worker: String,
    jobs: u64,
}

impl std::fmt::Debug for PgBakeQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgBakeQueue")
            .field("location", &self.location)
            .field("run", &self.run)
            .field("jobs", &self.jobs)
            .finish_non_exhaustive()
    }
}

impl PgBakeQueue {
    /// Joins run `run` of the world `url` names as `worker` (a name kept
    /// with each job it finishes), creating the run when it is not there:
    /// `keys` positions cut into jobs of `job_keys`. `plan` describes the
    /// run for people reading the table.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidInput`] for a bad URL, `job_keys` of 0, more
    /// than [`MAX_BAKE_JOBS`] jobs, or a run of that id with another number
    /// of keys; [`StoreError::NoSuchWorld`]; [`StoreError::Postgres`].
    pub fn open(
        url: &str,
        run: &str,
        plan: &str,
        keys: u64,
        job_keys: u64,
        worker: &str,
    ) -> Result<Self, StoreError> {
        if job_keys == 0 {
            return Err(StoreError::input(
                "job size",
                "a job holds at least 1 chunk",
            ));
        }
        let jobs = keys.div_ceil(job_keys);
        if jobs > MAX_BAKE_JOBS {
            return Err(StoreError::input(
                "job size",
                format!(
                    "{keys} chunks in jobs of {job_keys} make {jobs} jobs; at most {MAX_BAKE_JOBS} \
                     (take larger jobs)"
                ),
            ));
        }
        let (mut client, world, location) = connect(url)?;
        let pg = |e| StoreError::postgres(&location, e);
        let as_i64 = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        let (keys_i, jobs_i, size_i) = (as_i64(keys), as_i64(jobs), as_i64(job_keys));
        let mut tx = client.transaction().map_err(pg)?;
        // Lock the world's row: run creation and clean-up take turns.
        let exists = tx
            .query_opt(
                "SELECT 1 FROM isoterra_worlds WHERE world = $1 FOR SHARE",
                &[&world],
            )
            .map_err(pg)?;
        if exists.is_none() {
            return Err(StoreError::NoSuchWorld { path: location });
        }
        let created = tx
            .execute(
                "INSERT INTO isoterra_bake_runs (world, run, plan, keys, jobs, created_ms)
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (world, run) DO NOTHING",
                &[&world, &run, &plan, &keys_i, &jobs_i, &now_ms()],
            )
            .map_err(pg)?;
        if created == 1 {
            tx.execute(
                "INSERT INTO isoterra_bake_jobs (world, run, job, first, stop, done)
                 SELECT $1, $2, j, j * $3::BIGINT, LEAST((j + 1) * $3::BIGINT, $4::BIGINT), FALSE
                 FROM generate_series(0::BIGINT, $5::BIGINT - 1) AS j",
                &[&world, &run, &size_i, &keys_i, &jobs_i],
            )
            .map_err(pg)?;
            tx.execute(
                "DELETE FROM isoterra_bake_runs r WHERE r.world = $1 AND r.run <> $2
                 AND NOT EXISTS (SELECT 1 FROM isoterra_bake_jobs j
                                 WHERE j.world = r.world AND j.run = r.run AND NOT j.done)",
                &[&world, &run],
            )
            .map_err(pg)?;
        } else {
            let row = tx
                .query_one(
                    "SELECT keys, jobs FROM isoterra_bake_runs WHERE world = $1 AND run = $2",
                    &[&world, &run],
                )
                .map_err(pg)?;
            let (k, j): (i64, i64) = (row.get(0), row.get(1));
            if (k, j) != (keys_i, jobs_i) {
                return Err(StoreError::input(
                    "bake run",
                    format!(
                        "run {run} holds {k} chunks in {j} jobs; this worker plans {keys} in {jobs}"
                    ),
                ));
            }
        }
        tx.commit().map_err(pg)?;
        Ok(PgBakeQueue {
            client,
            statements: Statements::default(),
            world,
            location,
            run: run.to_string(),
            worker: worker.to_string(),
            jobs,
        })
    }

    /// What errors name: the server without a password, and the world.
    pub fn location(&self) -> &Path {
        &self.location
    }

    /// The bake runs of the world `url` names, newest first, with how many
    /// of their jobs are done: how far a shared bake has come. A world
    /// keeps its unfinished runs and its newest finished one.
    ///
    /// # Errors
    ///
    /// [`StoreError::InvalidInput`] for a bad URL, [`StoreError::Postgres`].
    pub fn runs(url: &str) -> Result<Vec<BakeRun>, StoreError> {
        let (mut client, world, location) = connect(url)?;
        let pg = |e| StoreError::postgres(&location, e);
        let rows = client
            .query(
                "SELECT r.run, r.plan, r.keys, r.jobs, r.created_ms,
                        (SELECT COUNT(*) FROM isoterra_bake_jobs j
                         WHERE j.world = r.world AND j.run = r.run AND j.done)
                 FROM isoterra_bake_runs r WHERE r.world = $1
                 ORDER BY r.created_ms DESC, r.run",
                &[&world],
            )
            .map_err(pg)?;
        Ok(rows
            .iter()
            .map(|r| BakeRun {
                run: r.get(0),
                plan: r.get(1),
                chunks: r.get::<_, i64>(2) as u64,
                jobs: r.get::<_, i64>(3) as u64,
                created_ms: r.get(4),
                done: r.get::<_, i64>(5) as u64,
            })
            .collect())
    }

    /// The run's id.
    pub fn run(&self) -> &str {
        &self.run
    }

    /// Jobs in the run.
    pub fn jobs(&self) -> u64 {
        self.jobs
    }

    /// Claims the next free job, hands it to `bake`, stores the rows `bake`
    /// returns and marks the job done, all in one transaction that holds
    /// the job from claim to commit. Returns the job, or `None` when every
    /// job of the run is done. While the only jobs left are held by other
    /// workers it waits, and takes over any whose worker dies.
    ///
    /// An error from `bake` (or the server) rolls the transaction back: the
    /// job stays to do, and nothing of it is stored.
    ///
    /// # Errors
    ///
    /// What `bake` returns, or [`StoreError::Postgres`] converted into it.
    pub fn work<E: From<StoreError>>(
        &mut self,
        mut bake: impl FnMut(&BakeJob) -> Result<Vec<BakedRow>, E>,
    ) -> Result<Option<BakeJob>, E> {
        let location = self.location.clone();
        let pg = |e| StoreError::postgres(&location, e);
        loop {
            let mut tx = self.client.transaction().map_err(pg)?;
            let row = tx
                .query_opt(
                    "SELECT job, first, stop FROM isoterra_bake_jobs
                     WHERE world = $1 AND run = $2 AND NOT done
                     ORDER BY job LIMIT 1 FOR UPDATE SKIP LOCKED",
                    &[&self.world, &self.run],
                )
                .map_err(pg)?;
            if let Some(row) = row {
                let (job, first, stop): (i64, i64, i64) = (row.get(0), row.get(1), row.get(2));
                let job = BakeJob {
                    job: job as u64,
                    start: first as u64,
                    end: stop as u64,
                };
                let rows = bake(&job)?;
                insert_baked(&mut Tx::new(&mut tx, &self.statements), &self.world, &rows)
                    .map_err(pg)?;
                tx.execute(
                    "UPDATE isoterra_bake_jobs SET done = TRUE, worker = $4, finished_ms = $5
                     WHERE world = $1 AND run = $2 AND job = $3",
                    &[
                        &self.world,
                        &self.run,
                        &(job.job as i64),
                        &self.worker,
                        &now_ms(),
                    ],
                )
                .map_err(pg)?;
                tx.commit().map_err(pg)?;
                return Ok(Some(job));
            }
            tx.commit().map_err(pg)?;
            if self.progress()?.done >= self.jobs {
                return Ok(None);
            }
            std::thread::sleep(HELD_WAIT);
        }
    }

    /// How many of the run's jobs are done.
    ///
    /// # Errors
    ///
    /// [`StoreError::Postgres`].
    pub fn progress(&mut self) -> Result<QueueProgress, StoreError> {
        let location = self.location.clone();
        let row = self
            .client
            .query_one(
                "SELECT COUNT(*), COUNT(*) FILTER (WHERE done) FROM isoterra_bake_jobs
                 WHERE world = $1 AND run = $2",
                &[&self.world, &self.run],
            )
            .map_err(|e| StoreError::postgres(&location, e))?;
        let (jobs, done): (i64, i64) = (row.get(0), row.get(1));
        Ok(QueueProgress {
            jobs: jobs as u64,
            done: done as u64,
        })
    }
}
