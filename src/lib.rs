//! # stealpool
//!
//! A work-stealing thread pool with rayon-core's API: switching is a crate rename in
//! `Cargo.toml` (`rayon-core = { package = "stealpool", ... }`; the README has the
//! details, and how the `rayon` crate runs on it through `compat/rayon-core`).
//!
//! * A **registry** starts one worker thread per logical CPU (`num_cpus::get()`,
//!   overridable with [`ThreadPoolBuilder::num_threads`] or the `STEALPOOL_NUM_THREADS`
//!   environment variable). Each worker owns a crossbeam-deque `Worker` (LIFO); all share
//!   one `Injector` for work arriving from outside the pool.
//! * Each worker runs the **scheduling loop** of crossbeam-deque's docs and rayon-core:
//!   local `pop`, then `Injector::steal_batch_and_pop` (one job plus up to 32 more in one CAS), then a
//!   scan of the other workers' stealers from a random victim (`steal_batch_and_pop`
//!   as well). A round that saw `Steal::Retry` is repeated after a `Backoff` step:
//!   `Retry` is never taken for `Empty`. A worker busy with its own work still takes one
//!   injected job every 61 `join`s or local jobs (fair injection).
//! * [`join`] is **lazy**: the second half waits on a private per-worker stack and is
//!   promoted to the deque only when another worker is idle, or rescued by an idle worker
//!   when the first half runs long without calling into the pool (`docs/join.md`). About
//!   half of rayon-core's cost per `join`, with the same semantics.
//! * A **sleep/wake** protocol parks a worker only after a round confirmed `Empty`
//!   everywhere, and never loses a wake-up (see `docs/sleep.md`).
//! * [`join`], [`scope`], [`spawn`] and [`ThreadPool::install`] behave as in rayon-core,
//!   except that a panicking `spawn` without a panic handler does not abort the process.
//!
//! ```
//! let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
//! let v: Vec<u64> = (0..1000).collect();
//! let (left, right) = v.split_at(500);
//! let (a, b) = pool.join(|| left.iter().sum::<u64>(), || right.iter().sum::<u64>());
//! assert_eq!(a + b, 499_500);
//! ```
//!
//! The architecture (which module does what, and the path a job takes) is in
//! `docs/architecture.md`.

#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(unreachable_pub)]
#![deny(missing_debug_implementations)]
#![warn(rust_2018_idioms)]
#![deny(clippy::undocumented_unsafe_blocks)]

mod broadcast;
mod builder;
mod deprecated;
mod job;
mod join;
mod join_handle;
mod latch;
mod metrics;
mod registry;
mod scope;
mod sleep;
mod spawn;
mod sync;
mod thread_pool;
mod unwind;
mod worker;

pub use crate::broadcast::{broadcast, spawn_broadcast, BroadcastContext};
pub use crate::builder::{
    ThreadPoolBuildError, ThreadPoolBuilder, NUM_THREADS_ENV, RAYON_NUM_THREADS_ENV,
};
#[allow(deprecated)]
pub use crate::deprecated::{initialize, Configuration};
pub use crate::join::{join, join_context};
pub use crate::join_handle::{spawn_with_handle, JoinHandle};
pub use crate::metrics::{PoolMetrics, WorkerMetrics};
pub use crate::registry::ThreadBuilder;
pub use crate::scope::{in_place_scope, in_place_scope_fifo, scope, scope_fifo, Scope, ScopeFifo};
pub use crate::spawn::{spawn, spawn_fifo};
pub use crate::thread_pool::{
    current_num_threads, current_thread_has_pending_tasks, current_thread_index, yield_local,
    yield_now, ThreadPool, WaitError, Yield,
};

use std::marker::PhantomData;

/// The largest number of worker threads a pool can have: 65,535.
///
/// The sleep module packs thread counts into 16-bit fields; larger requests are clamped
/// to this, as in rayon-core (whose limit comes from the same packing).
pub fn max_num_threads() -> usize {
    sleep::THREADS_MAX
}

/// What a closure passed to [`join_context`] learns about where it runs.
///
/// Not `Send`/`Sync`: it describes the current call on the current thread.
#[derive(Debug)]
pub struct FnContext {
    migrated: bool,
    _marker: PhantomData<*mut ()>,
}

impl FnContext {
    #[inline]
    fn new(migrated: bool) -> Self {
        FnContext {
            migrated,
            _marker: PhantomData,
        }
    }

    /// `true` if the closure was not run directly by the [`join_context`] call on the
    /// calling worker: it was stolen by another worker, the whole call came from outside
    /// the pool (and so runs on a worker), or, rarely, the calling worker itself picked the
    /// second closure up from its deque while waiting for other work (same thread, but
    /// reported as migrated, as in rayon-core). `false` means it runs on the calling
    /// worker, called directly by `join_context`.
    #[inline]
    pub fn migrated(&self) -> bool {
        self.migrated
    }
}

/// The process's barrier mode (`sync/barrier.rs`), for `tests/membarrier_refused.rs`:
/// `"fences"` until the membarrier registration is published, `"expedited"` after,
/// `"failed"` once a membarrier was refused after that. Not an API.
#[doc(hidden)]
pub fn __barrier_mode() -> &'static str {
    crate::sync::barrier::mode_name()
}

/// The sleep/wake protocol's pieces for the loom model (`tests/loom_sleep.rs`); only with
/// `--cfg loom`. Not an API.
#[cfg(loom)]
#[doc(hidden)]
pub mod __loom {
    use crate::latch::CoreLatch;
    use crate::metrics::WorkerCounters;
    use crate::sleep::{IdleState, Sleep};

    /// A pool's sleep state for `n` workers.
    pub struct ModelSleep {
        sleep: Sleep,
        counters: Vec<WorkerCounters>,
    }

    /// A worker's idle schedule between searches.
    pub struct ModelIdle(IdleState);

    /// A latch a worker can wait on (its terminate latch, a `join` half...).
    #[derive(Debug)]
    pub struct ModelLatch(CoreLatch);

    impl std::fmt::Debug for ModelSleep {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("ModelSleep").finish_non_exhaustive()
        }
    }

    impl std::fmt::Debug for ModelIdle {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("ModelIdle").finish_non_exhaustive()
        }
    }

    impl Default for ModelLatch {
        fn default() -> Self {
            Self::new()
        }
    }

    impl ModelLatch {
        /// An unset latch.
        pub fn new() -> Self {
            ModelLatch(CoreLatch::new())
        }
        /// Whether it is set.
        pub fn probe(&self) -> bool {
            self.0.probe()
        }
    }

    impl ModelSleep {
        /// Sleep state for `n` workers.
        pub fn new(n: usize) -> Self {
            ModelSleep {
                sleep: Sleep::new(n),
                counters: (0..n).map(|_| WorkerCounters::default()).collect(),
            }
        }
        /// `Sleep::start_looking`.
        pub fn start_looking(&self, worker: usize) -> ModelIdle {
            ModelIdle(self.sleep.start_looking(worker))
        }
        /// `Sleep::work_found`; `more_work` tells whether other jobs are queued.
        pub fn work_found(&self, idle: &mut ModelIdle, more_work: impl Fn() -> bool) {
            self.sleep.work_found(&mut idle.0, more_work)
        }
        /// `Sleep::no_work_found` for worker `worker`, waiting on `latch`; `pending` is the
        /// last look at the queues.
        pub fn no_work_found(
            &self,
            worker: usize,
            idle: &mut ModelIdle,
            latch: &ModelLatch,
            pending: impl Fn() -> bool,
        ) {
            self.sleep
                .no_work_found(&mut idle.0, &latch.0, &self.counters[worker], pending)
        }
        /// `Sleep::new_jobs` (after the push).
        pub fn new_jobs(&self, num_jobs: u32, queue_was_empty: bool) {
            self.sleep.new_jobs(num_jobs, queue_was_empty)
        }
        /// `Sleep::idle_workers_after_private_push` (a lazy `join`'s poll, after its
        /// private push): whether the owner would promote.
        pub fn idle_workers_after_private_push(&self) -> bool {
            self.sleep.idle_workers_after_private_push()
        }
        /// `Sleep::new_broadcast_jobs` (after the pushes).
        pub fn new_broadcast_jobs(&self) {
            self.sleep.new_broadcast_jobs()
        }
        /// Sets `latch`, owned by worker `owner`, waking it if it sleeps (as every latch
        /// setter does).
        pub fn set_latch(&self, latch: &ModelLatch, owner: usize) {
            // SAFETY: `latch` is borrowed, so it stays alive for the whole call.
            unsafe { self.sleep.set_latch_and_wake(&latch.0, owner) };
        }
    }
}

/// A scope's count latch for the loom model (`tests/loom_scope.rs`); only with
/// `--cfg loom`. Not an API. The owner is the thread that creates it and waits outside any
/// pool (a `ParkLatch`), as for `in_place_scope` called from a non-worker thread.
#[cfg(loom)]
#[doc(hidden)]
pub mod __loom_scope {
    use crate::latch::CountLatch;

    /// A scope's count of outstanding jobs, plus one for its body.
    pub struct ModelCountLatch(CountLatch);

    impl std::fmt::Debug for ModelCountLatch {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("ModelCountLatch").finish_non_exhaustive()
        }
    }

    impl ModelCountLatch {
        /// A latch with `count` outstanding jobs, owned by the calling thread.
        pub fn new(count: usize) -> Self {
            ModelCountLatch(CountLatch::with_count(count, None))
        }
        /// A job spawns one more job (`Scope::spawn` from inside the scope).
        pub fn increment(&self) {
            self.0.increment()
        }
        /// `n` jobs finished (one job, or a worker's deferred run of `n`).
        ///
        /// # Safety
        /// The caller holds `n` counts, and the latch outlives the call.
        pub unsafe fn count_down(&self, n: usize) {
            // SAFETY: forwarded.
            unsafe { CountLatch::count_down(&self.0, n) }
        }
        /// The owner waits until the count is zero.
        pub fn wait(&self) {
            self.0.wait(None)
        }
    }
}

/// The latch several outside threads wait on (a pool's start-up and shutdown) for the
/// loom model (`tests/loom_latch.rs`); only with `--cfg loom`. Not an API.
#[cfg(loom)]
#[doc(hidden)]
pub mod __loom_latch {
    use crate::latch::{Latch, LockLatch};

    /// A `LockLatch`: any number of waiters, one setter.
    #[derive(Debug)]
    pub struct ModelLockLatch(LockLatch);

    impl Default for ModelLockLatch {
        fn default() -> Self {
            ModelLockLatch(LockLatch::new())
        }
    }

    impl ModelLockLatch {
        /// Blocks until set.
        pub fn wait(&self) {
            self.0.wait()
        }
        /// Sets it (waking every waiter).
        pub fn set(&self) {
            // SAFETY: borrowed, so alive for the whole call.
            unsafe { LockLatch::set(&self.0) }
        }
    }
}

/// A join handle and its job's completion for the loom model (`tests/loom_handle.rs`);
/// only with `--cfg loom`. Not an API. The joiner is outside any pool (it waits on the
/// handle's condvar), as for `JoinHandle::join` called from a non-worker thread.
#[cfg(loom)]
#[doc(hidden)]
pub mod __loom_handle {
    use crate::join_handle::{HandleState, JoinHandle};
    use crate::sync::Arc;

    /// The job's side: completes the handle once.
    pub struct ModelCompletion<T>(Arc<HandleState<T>>);

    impl<T> std::fmt::Debug for ModelCompletion<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("ModelCompletion").finish_non_exhaustive()
        }
    }

    /// A handle (the real `JoinHandle`: `join`, `is_finished`, drop) and its job's side.
    pub fn handle<T>() -> (JoinHandle<T>, ModelCompletion<T>) {
        let (handle, state) = JoinHandle::new_pair();
        (handle, ModelCompletion(state))
    }

    impl<T> ModelCompletion<T> {
        /// The job returned `value`.
        pub fn complete(self, value: T) {
            self.0.complete(Ok(value))
        }
    }
}

/// A pool's terminate count for the loom model (`tests/loom_lifecycle.rs`); only with
/// `--cfg loom`. Not an API.
#[cfg(loom)]
#[doc(hidden)]
pub mod __loom_lifecycle {
    use crate::registry::{Released, TerminateCount};

    /// The references that keep a pool alive (the handle, each `spawn` job until it ran),
    /// and `wait_idle`.
    pub struct ModelTerminateCount(TerminateCount);

    impl std::fmt::Debug for ModelTerminateCount {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("ModelTerminateCount")
                .finish_non_exhaustive()
        }
    }

    impl ModelTerminateCount {
        /// A count of `references`.
        pub fn new(references: usize) -> Self {
            ModelTerminateCount(TerminateCount::new(references))
        }
        /// A `spawn` (the caller holds a reference); `false` once terminated.
        pub fn acquire(&self, n: usize) -> bool {
            self.0.acquire(n)
        }
        /// A job ran, or the handle was dropped; `true` if that terminated the pool.
        pub fn release(&self) -> bool {
            self.0.release() == Released::Terminated
        }
        /// `ThreadPool::wait_idle`: until only the handle's reference is left.
        pub fn wait_idle(&self) {
            self.0.wait_idle()
        }
    }
}

/// The lazy `join`'s private stack for the loom model (`tests/loom_join.rs`); only with
/// `--cfg loom`. Not an API. Halves are plain tokens (never executed).
#[cfg(loom)]
#[doc(hidden)]
pub mod __loom_join {
    use crate::job::JobRef;
    use crate::join::pending::{PendingHalves, Popped};

    /// One worker's private stack of `join` halves.
    pub struct ModelPending(PendingHalves);

    impl std::fmt::Debug for ModelPending {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("ModelPending").finish_non_exhaustive()
        }
    }

    unsafe fn never_run(_: *const ()) {
        unreachable!("model halves are never executed")
    }

    fn half(token: usize) -> JobRef {
        // SAFETY: the two words of a JobRef; the model never executes it.
        unsafe {
            JobRef::from_raw(
                token as *const (),
                never_run as unsafe fn(*const ()) as usize,
            )
        }
    }

    fn token(job: JobRef) -> usize {
        job.id().0 as usize
    }

    impl Default for ModelPending {
        fn default() -> Self {
            ModelPending(PendingHalves::new())
        }
    }

    impl ModelPending {
        /// Owner: `join` keeps the half `token` private; returns its position.
        pub fn push(&self, token: usize) -> usize {
            self.0.push(half(token))
        }
        /// Owner: the `join` of `pos` takes its half back: `"private"` (run inline) or
        /// `"taken"` (promoted or rescued).
        pub fn pop(&self, pos: usize) -> &'static str {
            match self.0.pop(pos) {
                Popped::Private => "private",
                Popped::Taken => "taken",
            }
        }
        /// Owner: promotes the oldest private half; returns its token.
        pub fn promote_oldest(&self) -> Option<usize> {
            let mut promoted = None;
            self.0.promote_oldest(|job| promoted = Some(token(job)));
            promoted
        }
        /// Another worker: rescues the oldest private half; returns its token.
        pub fn rescue(&self) -> Option<usize> {
            self.0.rescue(|| true).map(token)
        }
    }
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
