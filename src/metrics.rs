//! Metrics: per-worker counters that explain where a pool's time went.
//!
//! Every worker owns one cache-padded block of counters ([`WorkerCounters`]) in the
//! registry. Only that worker ever writes its block, with a relaxed load and a relaxed
//! store (no read-modify-write, no shared cache line), so counting costs a few plain
//! instructions on the hot path. Readers ([`ThreadPool::metrics`]) take a relaxed snapshot
//! at any time; a snapshot taken while the pool runs is not atomic across counters.
//!
//! The names follow tokio's runtime metrics (`worker_local_schedule_count`,
//! `worker_steal_count`, `worker_park_count`, ...) where the concepts match, and
//! crossbeam-deque's vocabulary (injector batch, `Steal::Retry`) where they do not.
//!
//! Every executed job is counted once, by where it came from (own deque, broadcast
//! queue, injector batch, victim); `jobs_executed` is their sum, computed when a snapshot
//! is taken rather than counted a second time on the hot path.
//!
//! [`ThreadPool::metrics`]: crate::ThreadPool::metrics

use crate::sync::unchecked::{Arc, AtomicU64, OnceLock};
use crate::sync::Ordering;
use crossbeam_utils::CachePadded;
use std::fmt;
use std::time::Instant;

/// Nanoseconds since a process-wide origin (the first call): the clock of the park start
/// times, so that a snapshot can add the time of a park still in progress.
pub(crate) fn now_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// One worker's live counters. Written only by the owning worker.
#[derive(Debug, Default)]
pub(crate) struct WorkerCounters {
    /// Jobs popped from the own deque or batch queue ([`WorkerMetrics::local_pops`]).
    local_pops: AtomicU64,
    /// Jobs taken from the own broadcast queue ([`WorkerMetrics::broadcast_jobs`]).
    broadcast_jobs: AtomicU64,
    /// Takes from the injector ([`WorkerMetrics::injector_batches`]).
    injector_batches: AtomicU64,
    /// Jobs those takes moved ([`WorkerMetrics::injector_jobs`]).
    injector_jobs: AtomicU64,
    /// Successful steals from other workers ([`WorkerMetrics::steals`]).
    steals: AtomicU64,
    /// `Steal::Retry` answers seen ([`WorkerMetrics::retries_seen`]).
    retries_seen: AtomicU64,
    /// Search rounds repeated because of `Retry` ([`WorkerMetrics::retry_rounds`]).
    retry_rounds: AtomicU64,
    /// `join` halves promoted to the own deque ([`WorkerMetrics::promotions`]).
    promotions: AtomicU64,
    /// `join` halves rescued from other workers ([`WorkerMetrics::rescues`]).
    rescues: AtomicU64,
    /// Parks on the condvar ([`WorkerMetrics::parks`]).
    parks: AtomicU64,
    /// Wake-ups from a park ([`WorkerMetrics::unparks`]).
    unparks: AtomicU64,
    /// Nanoseconds parked, parks in progress excluded ([`WorkerMetrics::parked_ns`]).
    parked_ns: AtomicU64,
    /// When the current park began (`now_ns()` + 1), 0 when not
    /// parked; lets a snapshot include a park still in progress.
    park_started: AtomicU64,
}

/// Adds `n` to a counter only its owner writes.
#[inline]
fn bump(counter: &AtomicU64, n: u64) {
    // Relaxed load + store, not fetch_add: one writer (the owning worker), so no update
    // can be lost, and readers only need an eventually consistent snapshot.
    counter.store(
        counter.load(Ordering::Relaxed).wrapping_add(n),
        Ordering::Relaxed,
    );
}

impl WorkerCounters {
    /// Counts a job popped from the own deque or batch queue.
    #[inline]
    pub(crate) fn local_pop(&self) {
        bump(&self.local_pops, 1);
    }
    /// Counts a job taken from the own broadcast queue.
    #[inline]
    pub(crate) fn broadcast_job(&self) {
        bump(&self.broadcast_jobs, 1);
    }
    /// Counts a take from the injector that moved `jobs_moved` jobs.
    #[inline]
    pub(crate) fn injector_batch(&self, jobs_moved: u64) {
        bump(&self.injector_batches, 1);
        bump(&self.injector_jobs, jobs_moved);
    }
    /// Counts a successful steal from another worker's deque.
    #[inline]
    pub(crate) fn steal(&self) {
        bump(&self.steals, 1);
    }
    /// Counts a `Steal::Retry` answer.
    #[inline]
    pub(crate) fn retry_seen(&self) {
        bump(&self.retries_seen, 1);
    }
    /// Counts a search round repeated because some source answered `Retry`.
    #[inline]
    pub(crate) fn retry_round(&self) {
        bump(&self.retry_rounds, 1);
    }
    /// Counts a `join` half promoted from the private stack to the own deque.
    #[inline]
    pub(crate) fn promotion(&self) {
        bump(&self.promotions, 1);
    }
    /// Counts a `join` half rescued from another worker's private stack.
    #[inline]
    pub(crate) fn rescue(&self) {
        bump(&self.rescues, 1);
    }
    /// The worker is about to wait on its condvar; `since_epoch_ns` is now.
    #[inline]
    pub(crate) fn park(&self, since_epoch_ns: u64) {
        bump(&self.parks, 1);
        // Relaxed: a snapshot may see the park a moment late; only the owner writes it.
        self.park_started
            .store(since_epoch_ns + 1, Ordering::Relaxed);
    }
    /// The worker was woken after `nanos` nanoseconds parked.
    #[inline]
    pub(crate) fn unparked(&self, nanos: u64) {
        self.park_started.store(0, Ordering::Relaxed);
        bump(&self.unparks, 1);
        bump(&self.parked_ns, nanos);
    }

    /// The counters as worker `index`'s metrics; `now_since_epoch_ns` (`now_ns()`) ends a
    /// park still in progress.
    pub(crate) fn snapshot(&self, index: usize, now_since_epoch_ns: u64) -> WorkerMetrics {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let started = get(&self.park_started);
        let current_park = match started {
            0 => 0,
            s => now_since_epoch_ns.saturating_sub(s - 1),
        };
        let local_pops = get(&self.local_pops);
        let broadcast_jobs = get(&self.broadcast_jobs);
        let injector_batches = get(&self.injector_batches);
        let steals = get(&self.steals);
        let rescues = get(&self.rescues);
        WorkerMetrics {
            index,
            jobs_executed: local_pops + broadcast_jobs + injector_batches + steals + rescues,
            local_pops,
            broadcast_jobs,
            injector_batches,
            injector_jobs: get(&self.injector_jobs),
            steals,
            retries_seen: get(&self.retries_seen),
            retry_rounds: get(&self.retry_rounds),
            promotions: get(&self.promotions),
            rescues,
            parks: get(&self.parks),
            unparks: get(&self.unparks),
            parked_ns: get(&self.parked_ns) + current_park,
        }
    }
}

/// The registry's counters: one padded block per worker, plus pool-wide totals.
#[derive(Debug)]
pub(crate) struct RegistryCounters {
    /// One block per worker; the worker keeps its own `Arc` (no index, no bounds check on
    /// the hot path).
    workers: Vec<Arc<CachePadded<WorkerCounters>>>,
    /// Jobs pushed on the injector ([`PoolMetrics::injected_jobs`]).
    injected_jobs: CachePadded<AtomicU64>,
}

impl RegistryCounters {
    /// Zeroed counters for `n_threads` workers.
    pub(crate) fn new(n_threads: usize) -> Self {
        RegistryCounters {
            workers: (0..n_threads).map(|_| Default::default()).collect(),
            injected_jobs: Default::default(),
        }
    }

    /// Worker `index`'s block, for that worker to keep: only it may call the recording
    /// methods on it.
    pub(crate) fn worker(&self, index: usize) -> Arc<CachePadded<WorkerCounters>> {
        Arc::clone(&self.workers[index])
    }

    /// A job entered through the injector (any thread may call this).
    #[inline]
    pub(crate) fn job_injected(&self) {
        // Relaxed RMW: many writers, and it is only a count. The injector push next to it
        // writes a shared line anyway, so this adds no new sharing to an uncontended path.
        self.injected_jobs.fetch_add(1, Ordering::Relaxed);
    }

    /// The pool's metrics at this moment: every worker's block and the injected total.
    pub(crate) fn snapshot(&self) -> PoolMetrics {
        let now = now_ns();
        PoolMetrics {
            workers: self
                .workers
                .iter()
                .enumerate()
                .map(|(i, w)| w.snapshot(i, now))
                .collect(),
            injected_jobs: self.injected_jobs.load(Ordering::Relaxed),
        }
    }
}

/// A snapshot of one worker's counters, all counts since the pool was built (except
/// `parked_ns`, nanoseconds).
///
/// Read with [`ThreadPool::metrics`](crate::ThreadPool::metrics). Names follow tokio's
/// runtime metrics where the concept is the same.
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// pool.broadcast(|_| ());
/// let worker: &stealpool::WorkerMetrics = &pool.metrics().workers[0];
/// assert_eq!(worker.index, 0);
/// assert_eq!(worker.broadcast_jobs, 1);
/// assert_eq!(worker.jobs_executed, 1);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkerMetrics {
    /// The worker's index, `0..num_threads`.
    pub index: usize,
    /// Jobs this worker took from any queue to run: the sum `local_pops + broadcast_jobs +
    /// injector_batches + steals + rescues` (each job is counted once, when it is taken). `join`'s
    /// second half run inline after popping it back is part of the `join`, not a separate
    /// job, and is counted nowhere.
    pub jobs_executed: u64,
    /// Jobs this worker popped from its own deque or its batch queue (the rest of its
    /// batch steals) and ran (tokio: local schedule).
    pub local_pops: u64,
    /// Jobs this worker took from its own broadcast queue (`broadcast`,
    /// `spawn_broadcast`: one per worker per broadcast).
    pub broadcast_jobs: u64,
    /// Takes from the injector: batch steals in the search (each returns one job, run at
    /// once, and moves up to 32 more into the worker's batch queue, later local pops or
    /// steals), plus single jobs taken ahead of local work for fairness (between
    /// top-level jobs, at most one per 61 local pops, `docs/guarantees.md`).
    pub injector_batches: u64,
    /// Jobs those takes moved: the one run at once plus those that landed in the batch
    /// queue (a lower bound if a thief stole from it in between).
    pub injector_jobs: u64,
    /// Successful steals from other workers' deques (tokio: `worker_steal_count`).
    pub steals: u64,
    /// `Steal::Retry` answers seen from the injector, a victim or a broadcast queue:
    /// races lost to other thieves or to the owner.
    pub retries_seen: u64,
    /// Search rounds that found nothing but were repeated because some source said
    /// `Retry`. A loop that took `Retry` for `Empty` would have moved toward sleep here
    /// while work was still queued.
    pub retry_rounds: u64,
    /// `join` second halves this worker moved from its private stack to its deque, where
    /// other workers could take them (lazy join, `docs/join.md`). The other halves ran
    /// inline and were never visible to thieves.
    pub promotions: u64,
    /// `join` second halves this worker took straight from another worker's private
    /// stack, because that worker's first half ran long without calling into the pool
    /// (`docs/join.md`, "Rescue"). Counted in `jobs_executed`.
    pub rescues: u64,
    /// Times the worker parked on its condvar (tokio: `worker_park_count`).
    pub parks: u64,
    /// Times the worker was woken from a park by another thread (new work or its latch);
    /// one less than `parks` while the worker is parked.
    pub unparks: u64,
    /// Total time spent parked, in nanoseconds, including a park still in progress.
    /// The rest of the worker's life was spent running jobs or searching for them.
    pub parked_ns: u64,
}

/// A snapshot of a pool's counters: one [`WorkerMetrics`] per worker plus pool totals.
///
/// Counters are written by each worker into its own cache-padded block (no shared write
/// on the hot path) and read here with relaxed loads, so a snapshot of a running pool is
/// not atomic across workers. Compare tokio's `RuntimeMetrics`.
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// for _ in 0..100 {
///     pool.spawn(|| {});
/// }
/// pool.wait_idle().unwrap();
/// let metrics = pool.metrics();
/// assert_eq!(metrics.workers.len(), 2);
/// assert_eq!(metrics.injected_jobs, 100);
/// assert_eq!(metrics.total().jobs_executed, 100);
/// println!("{metrics}"); // a per-worker table
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolMetrics {
    /// Per-worker counters, indexed by worker index.
    pub workers: Vec<WorkerMetrics>,
    /// Jobs pushed on the pool's injector (work from outside the pool: `spawn`,
    /// `install`, `join`/`scope` from other threads) since it was built.
    pub injected_jobs: u64,
}

impl PoolMetrics {
    /// The per-worker counters summed over all workers (`index` is the worker count).
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    /// pool.broadcast(|_| ());
    /// let metrics = pool.metrics();
    /// let total = metrics.total();
    /// assert_eq!(total.index, 2); // the worker count
    /// assert_eq!(total.broadcast_jobs, 2);
    /// assert_eq!(total.jobs_executed, metrics.workers.iter().map(|w| w.jobs_executed).sum::<u64>());
    /// ```
    pub fn total(&self) -> WorkerMetrics {
        let mut t = WorkerMetrics {
            index: self.workers.len(),
            ..WorkerMetrics::default()
        };
        for w in &self.workers {
            t.jobs_executed += w.jobs_executed;
            t.local_pops += w.local_pops;
            t.broadcast_jobs += w.broadcast_jobs;
            t.injector_batches += w.injector_batches;
            t.injector_jobs += w.injector_jobs;
            t.steals += w.steals;
            t.retries_seen += w.retries_seen;
            t.retry_rounds += w.retry_rounds;
            t.promotions += w.promotions;
            t.rescues += w.rescues;
            t.parks += w.parks;
            t.unparks += w.unparks;
            t.parked_ns += w.parked_ns;
        }
        t
    }
}

/// A table, one row per worker and a total row, then a legend; parked time in
/// milliseconds.
impl fmt::Display for PoolMetrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7} {:>7} {:>10}",
            "worker",
            "executed",
            "local",
            "bcast",
            "inj.calls",
            "inj.moved",
            "steals",
            "retries",
            "retry.rd",
            "promoted",
            "rescued",
            "parks",
            "unparks",
            "parked ms"
        )?;
        let row = |f: &mut fmt::Formatter<'_>, label: &str, w: &WorkerMetrics| {
            writeln!(
                f,
                "{:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>7} {:>7} {:>10.1}",
                label,
                w.jobs_executed,
                w.local_pops,
                w.broadcast_jobs,
                w.injector_batches,
                w.injector_jobs,
                w.steals,
                w.retries_seen,
                w.retry_rounds,
                w.promotions,
                w.rescues,
                w.parks,
                w.unparks,
                w.parked_ns as f64 / 1e6
            )
        };
        for w in &self.workers {
            row(f, &w.index.to_string(), w)?;
        }
        row(f, "total", &self.total())?;
        writeln!(f, "injected jobs: {}", self.injected_jobs)?;
        write!(
            f,
            "executed = local + bcast + inj.calls + steals + rescued (where each job came from;\n\
             a join's second half that its own join runs is part of that join, counted nowhere)\n\
             local: popped from the own deque; bcast: from the own broadcast queue\n\
             inj.calls: injector batch steals (inj.moved: jobs they moved); steals: from other workers\n\
             retries: Steal::Retry answers; retry.rd: empty rounds repeated because of Retry\n\
             promoted: join halves moved from the private stack to the deque (lazy join)\n\
             rescued: join halves taken from another worker's private stack\n\
             parked ms: time asleep; the rest of the time was spent running or searching"
        )
    }
}
