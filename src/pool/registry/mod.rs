//! The registry: the shared state of one pool (its workers' stealers, the injector, the
//! sleep state, the handlers, the pool's life). It knows nothing of worker threads: the
//! worker (`pool::worker`) holds an `Arc<Registry>` and reaches down into it, never the
//! other way round (tokio's `multi_thread::Shared` and its `Worker`).
//!
//! A [`ThreadPool`](crate::ThreadPool) is a handle to an `Arc<Registry>`; every worker
//! thread holds another. Jobs reach its queues in three ways: a worker pushes on its own
//! deque (`pool::worker`), another thread injects ([`Registry::push_injected`]), or a
//! broadcast puts one job on each worker's broadcast queue
//! ([`Registry::push_broadcasts`]). Deciding which applies to the calling thread is the
//! worker's part (`pool::worker::entry`).
//!
//! Shape and names follow rayon-core's `registry.rs`, split by concept:
//!
//! * `mod.rs`: the `Registry` struct and its accessors;
//! * `build.rs`: making a registry and the queue ends each worker will own;
//! * `inject.rs`: the injector and the broadcast queues;
//! * `lifecycle.rs`: starting and stopping workers' bookkeeping, termination,
//!   `wait_idle`, the worker threads' join handles;
//! * `terminate.rs`: the terminate count (the references that keep the workers alive),
//!   its own type so that the loom model checks this very code;
//! * `loader_lock.rs`: Windows' loader lock, under which no thread can start or finish
//!   exiting (waits that would hang there fail with the reason instead).

use crate::job::{JobFifo, JobRef};
use crate::latch::{CoreLatch, LockLatch};
use crate::metrics::RegistryCounters;
use crate::pool::config::{PanicHandler, ThreadHandler};
use crate::pool::private_stack::PrivateStack;
use crate::sleep::Sleep;
use crate::sync::deque::{Injector, Stealer, Worker};
use crate::sync::unchecked::{Arc, Mutex};
use crate::timeline_hooks::Recorder;
use crate::unwind;
use crossbeam_utils::CachePadded;
use std::any::Any;
use std::thread;

/// Sends `payload` to `handler`, or drops it when there is none (the standard panic hook
/// has reported it already). A panicking handler has been reported by the hook too; what
/// it unwinds with is dropped quietly like any other payload nobody receives.
pub(crate) fn report_panic(handler: Option<&PanicHandler>, payload: Box<dyn Any + Send>) {
    match handler {
        Some(handler) => {
            if let Err(second) = unwind::halt_unwinding(move || handler(payload)) {
                unwind::drop_quietly(second);
            }
        }
        None => unwind::drop_quietly(payload),
    }
}

/// The shared state of one pool.
pub(crate) struct Registry {
    /// One entry per worker, by index.
    thread_infos: Vec<ThreadInfo>,
    /// Shared with latches that must wake a worker of this pool (`Arc`: a cross-pool
    /// setter keeps it alive until its wake-up is delivered).
    pub(crate) sleep: Arc<Sleep>,
    /// The injector: jobs from threads that are not workers of this pool.
    injected_jobs: Injector<JobRef>,
    /// The pushing ends of every worker's broadcast queue (FIFO). Only broadcasts lock it.
    broadcasts: Mutex<Vec<Worker<JobRef>>>,
    /// The metrics counters.
    counters: RegistryCounters,
    /// Shared (a std `Arc`, not a protocol object) with the join handles of this pool's
    /// jobs, which report an unjoined panic after the pool may be gone.
    panic_handler: Option<std::sync::Arc<PanicHandler>>,
    /// Runs on each worker before its first job (`ThreadPoolBuilder::start_handler`).
    start_handler: Option<Box<ThreadHandler>>,
    /// Runs on each worker after its last job (`ThreadPoolBuilder::exit_handler`).
    exit_handler: Option<Box<ThreadHandler>>,
    /// Starts at 1 for the `ThreadPool` handle; +1 for every `spawn` job until it has run.
    /// When it reaches 0 every worker's `terminate` latch is set.
    terminate_count: TerminateCount,
    /// Worker 0's deque ends with `use_current_thread`, until the building thread adopts
    /// them (`adopt_current_thread`).
    current_thread_parts: Mutex<Option<WorkerQueues>>,
    /// Join handles of the worker threads the default spawn handler started.
    thread_handles: Mutex<Vec<thread::JoinHandle<()>>>,
    /// Worker 0 is the thread that built the pool (`use_current_thread`): it never runs
    /// the main loop, so it never stops.
    current_thread_worker: bool,
    /// Every job taken from a queue runs in a region of its own
    /// (`ThreadPoolBuilder::isolate_waits`).
    isolate_waits: bool,
    /// The worker timeline, if this pool records one.
    /// (std's `Arc`, also under loom: the recording is not part of any model.)
    recorder: Option<std::sync::Arc<Recorder>>,
}

/// The queue ends a worker owns, made with its registry and handed to its thread.
pub(crate) struct WorkerQueues {
    /// The worker's deque: its own jobs (`push`, `join` halves it promoted), LIFO.
    pub(crate) deque: Worker<JobRef>,
    /// Jobs this worker took from other queues in one batch steal besides the one it ran
    /// (a victim's oldest, the injector's), oldest first (FIFO). Not the own deque: a wait
    /// inside the job just taken pops its deque first, and must find there only what the
    /// worker pushed itself, as on rayon-core (`docs/guarantees.md`, "Where a worker runs
    /// other jobs"). The worker takes them where it would steal; others steal them too.
    pub(crate) batch: Worker<JobRef>,
    /// The taking end of the worker's broadcast queue (the registry holds the pushing end).
    pub(crate) broadcasts: Stealer<JobRef>,
}

/// What the registry knows about one worker.
struct ThreadInfo {
    /// Set once the worker has installed itself in its thread-local slot.
    primed: LockLatch,
    /// Set when the worker has left its main loop.
    stopped: LockLatch,
    /// Set when the pool terminates; the worker's main loop waits on it.
    terminate: CoreLatch,
    /// Steals from the worker's deque.
    stealer: Stealer<JobRef>,
    /// Steals from the worker's batch queue (`WorkerQueues::batch`).
    batch: Stealer<JobRef>,
    /// The worker's private `join` halves, for rescuers (`pool::private_stack`).
    private_stack: Arc<CachePadded<PrivateStack>>,
    /// The FIFO behind the worker's `spawn_fifo` stubs. Here, not only in the worker: a
    /// stub may be stolen and run after the worker's own state is gone (the adopted
    /// worker 0 of a `use_current_thread` pool is freed when its thread exits).
    fifo: Arc<JobFifo>,
}

mod build;
mod inject;
mod lifecycle;
mod loader_lock;
mod terminate;

pub(crate) use loader_lock::WaitNeeds;
#[cfg(loom)]
pub(crate) use terminate::Released;
pub(crate) use terminate::TerminateCount;

impl Registry {
    /// Whether every job taken from a queue runs in a region of its own
    /// (`ThreadPoolBuilder::isolate_waits`).
    pub(crate) fn isolate_waits(&self) -> bool {
        self.isolate_waits
    }

    /// Number of worker threads.
    #[inline]
    pub(crate) fn num_threads(&self) -> usize {
        self.thread_infos.len()
    }

    /// Stealer for worker `index`'s deque.
    #[inline]
    pub(crate) fn stealer(&self, index: usize) -> &Stealer<JobRef> {
        &self.thread_infos[index].stealer
    }

    /// Steals from worker `index`'s batch queue.
    #[inline]
    pub(crate) fn batch_stealer(&self, index: usize) -> &Stealer<JobRef> {
        &self.thread_infos[index].batch
    }

    /// Worker `index`'s private `join` halves (its own handle on them).
    pub(crate) fn private_stack_handle(&self, index: usize) -> Arc<CachePadded<PrivateStack>> {
        Arc::clone(&self.thread_infos[index].private_stack)
    }

    /// Worker `index`'s `spawn_fifo` FIFO (its own handle on it).
    pub(crate) fn fifo(&self, index: usize) -> Arc<JobFifo> {
        Arc::clone(&self.thread_infos[index].fifo)
    }

    /// Worker `index`'s private `join` halves, for a rescuer.
    #[inline]
    pub(crate) fn private_stack_of(&self, index: usize) -> &PrivateStack {
        &self.thread_infos[index].private_stack
    }

    /// The shared queue for jobs from outside the pool.
    #[inline]
    pub(crate) fn injector(&self) -> &Injector<JobRef> {
        &self.injected_jobs
    }

    /// The pool's metrics counters.
    #[inline]
    pub(crate) fn counters(&self) -> &RegistryCounters {
        &self.counters
    }

    /// The pool's timeline recorder, if it records one.
    #[inline]
    pub(crate) fn recorder(&self) -> Option<&std::sync::Arc<Recorder>> {
        self.recorder.as_ref()
    }

    /// Whether two handles name the same registry.
    #[inline]
    pub(crate) fn same(a: &Registry, b: &Registry) -> bool {
        std::ptr::eq(a, b)
    }

    /// Runs `func`, sending a panic to the panic handler. Without a handler the panic has
    /// already been reported by the standard panic hook and is dropped: the pool keeps
    /// running (rayon-core aborts the process instead).
    pub(crate) fn catch_unwind(&self, func: impl FnOnce()) {
        if let Err(payload) = unwind::halt_unwinding(func) {
            self.handle_panic(payload);
        }
    }

    /// Sends `payload` to the panic handler, or drops it without one ([`report_panic`]).
    fn handle_panic(&self, payload: Box<dyn Any + Send>) {
        report_panic(self.panic_handler.as_deref(), payload);
    }

    /// The pool's panic handler, for a join handle of one of its jobs.
    pub(crate) fn panic_handler(&self) -> Option<std::sync::Arc<PanicHandler>> {
        self.panic_handler.clone()
    }

    /// Whether any queue of the pool holds a job: the injector, or any worker's deque,
    /// batch queue or private `join` halves. The sleeper's last look before parking
    /// (docs/sleep.md, step 4).
    pub(crate) fn has_queued_jobs(&self) -> bool {
        !self.injected_jobs.is_empty()
            || self.thread_infos.iter().any(|t| {
                !t.stealer.is_empty() || !t.batch.is_empty() || t.private_stack.has_private_halves()
            })
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        // The pool has ended and every worker has left: its timeline is complete.
        if let Some(recorder) = &self.recorder {
            recorder.save_if_asked();
        }
    }
}
