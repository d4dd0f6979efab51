//! The registry: the shared state of one pool (its workers' stealers, the injector, the
//! sleep state, the handlers) and the ways work enters it.
//!
//! A [`ThreadPool`](crate::ThreadPool) is a handle to an `Arc<Registry>`; every worker
//! thread holds another. Work enters in three ways:
//!
//! * **push**: a worker of this registry puts a job on its own deque
//!   ([`WorkerThread::push`]);
//! * **inject**: any other thread puts it on the shared [`Injector`] ([`Registry::inject`]);
//! * **in_worker**: run a closure *on* a worker and wait for it (`install`, `join` and
//!   `scope` from outside, cross-pool calls).
//!
//! Shape and names follow rayon-core's `registry.rs`.

use crate::builder::{ErrorKind, ThreadPoolBuildError, ThreadPoolBuilder};
use crate::job::{JobRef, StackJob};
use crate::latch::{CoreLatch, Latch, LatchRef, LockLatch, SpinLatch};
use crate::sleep::{Sleep, THREADS_MAX};
use crate::sync::{Arc, AtomicUsize, OnceLock, Ordering};
use crate::unwind;
use crate::worker::WorkerThread;
use crossbeam_deque::{Injector, Stealer, Worker};
use std::any::Any;
use std::mem;
use std::thread;

/// Receives panics that have nowhere else to go (`spawn`, start and exit handlers).
pub(crate) type PanicHandler = dyn Fn(Box<dyn Any + Send>) + Send + Sync;
/// Runs on each worker thread before it starts (start) or after it stops (exit).
pub(crate) type ThreadHandler = dyn Fn(usize) + Send + Sync;

/// The shared state of one pool.
pub(crate) struct Registry {
    thread_infos: Vec<ThreadInfo>,
    pub(crate) sleep: Sleep,
    injected_jobs: Injector<JobRef>,
    panic_handler: Option<Box<PanicHandler>>,
    start_handler: Option<Box<ThreadHandler>>,
    exit_handler: Option<Box<ThreadHandler>>,
    /// Starts at 1 for the `ThreadPool` handle; +1 for every `spawn` job until it has run.
    /// When it reaches 0 every worker's `terminate` latch is set.
    terminate_count: AtomicUsize,
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
}

static THE_REGISTRY: OnceLock<Arc<Registry>> = OnceLock::new();

/// The global pool's registry, built with the default builder on first use.
///
/// # Panics
/// If the global pool cannot be built (e.g. the OS refuses to start threads, or
/// `STEALPOOL_NUM_THREADS` is not a number). rayon-core panics here too.
pub(crate) fn global_registry() -> &'static Arc<Registry> {
    THE_REGISTRY.get_or_init(|| {
        // The default builder runs no user code, so this cannot re-enter `get_or_init`.
        Registry::new(ThreadPoolBuilder::new()).unwrap_or_else(|err| {
            panic!("stealpool: the global thread pool could not be built: {err}")
        })
    })
}

/// Builds the global pool from `builder` (for `build_global`).
///
/// The registry is built *before* it is offered to the `OnceLock`, with no lock held, so
/// user code in the builder (a `thread_name` closure) may call free functions: if one of
/// them builds the default global pool first, this returns "already initialized" and the
/// registry built here is terminated.
pub(crate) fn init_global_registry(builder: ThreadPoolBuilder) -> Result<(), ThreadPoolBuildError> {
    let already = || {
        Err(ThreadPoolBuildError::new(
            ErrorKind::GlobalPoolAlreadyInitialized,
        ))
    };
    if THE_REGISTRY.get().is_some() {
        return already();
    }
    let mut candidate = Some(Registry::new(builder)?);
    let registry = THE_REGISTRY.get_or_init(|| candidate.take().expect("offered once"));
    match candidate {
        None => {
            registry.wait_until_primed();
            Ok(())
        }
        Some(lost) => {
            // Someone else initialised the global pool meanwhile: stop our workers.
            lost.terminate();
            already()
        }
    }
}

/// Terminates a half-built registry if building it fails or panics.
struct Terminator<'a>(&'a Arc<Registry>);

impl Drop for Terminator<'_> {
    fn drop(&mut self) {
        self.0.terminate();
    }
}

impl Registry {
    /// Builds the registry and starts its worker threads.
    ///
    /// # Errors
    /// A bad thread count from the environment, or an I/O error from starting a thread;
    /// in the latter case every thread already started is told to exit.
    pub(crate) fn new(
        mut builder: ThreadPoolBuilder,
    ) -> Result<Arc<Registry>, ThreadPoolBuildError> {
        let n_threads = builder.get_num_threads()?.min(THREADS_MAX);
        let workers: Vec<Worker<JobRef>> = (0..n_threads).map(|_| Worker::new_lifo()).collect();
        let thread_infos = workers
            .iter()
            .map(|worker| ThreadInfo {
                primed: LockLatch::new(),
                stopped: LockLatch::new(),
                terminate: CoreLatch::new(),
                stealer: worker.stealer(),
            })
            .collect();

        let registry = Arc::new(Registry {
            thread_infos,
            sleep: Sleep::new(n_threads),
            injected_jobs: Injector::new(),
            panic_handler: builder.take_panic_handler(),
            start_handler: builder.take_start_handler(),
            exit_handler: builder.take_exit_handler(),
            terminate_count: AtomicUsize::new(1),
        });

        // If a thread fails to start, or `thread_name` panics, the threads already
        // started must still be told to exit.
        let t1000 = Terminator(&registry);
        for (index, worker) in workers.into_iter().enumerate() {
            let mut b = thread::Builder::new();
            if let Some(name) = builder.get_thread_name(index) {
                b = b.name(name);
            }
            if let Some(stack_size) = builder.get_stack_size() {
                b = b.stack_size(stack_size);
            }
            let thread_registry = Arc::clone(&registry);
            if let Err(err) = b.spawn(move || {
                // SAFETY: this closure is the thread's whole body; `main_loop`'s contract
                // (called once, on a fresh thread) holds.
                unsafe { main_loop(worker, thread_registry, index) }
            }) {
                return Err(ThreadPoolBuildError::new(ErrorKind::IOError(err)));
            }
        }
        mem::forget(t1000);
        Ok(registry)
    }

    /// The registry of the current worker, else the global one.
    pub(crate) fn current() -> Arc<Registry> {
        match WorkerThread::current() {
            Some(worker) => Arc::clone(worker.registry()),
            None => Arc::clone(global_registry()),
        }
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

    /// The shared queue for jobs from outside the pool.
    #[inline]
    pub(crate) fn injector(&self) -> &Injector<JobRef> {
        &self.injected_jobs
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

    fn handle_panic(&self, payload: Box<dyn Any + Send>) {
        match &self.panic_handler {
            Some(handler) => {
                // A panicking handler has been reported by the hook; what it unwinds with
                // is dropped quietly like any other payload nobody receives.
                if let Err(second) = unwind::halt_unwinding(move || handler(payload)) {
                    unwind::drop_quietly(second);
                }
            }
            None => unwind::drop_quietly(payload),
        }
    }

    /// Pushes on the current worker's deque if it belongs to this registry, else injects.
    pub(crate) fn inject_or_push(&self, job_ref: JobRef) {
        match WorkerThread::current() {
            Some(worker) if Registry::same(worker.registry(), self) => worker.push(job_ref),
            _ => self.inject(job_ref),
        }
    }

    /// Pushes a job from outside the pool onto the injector and wakes a worker if needed.
    pub(crate) fn inject(&self, job_ref: JobRef) {
        let queue_was_empty = self.injected_jobs.is_empty();
        self.injected_jobs.push(job_ref);
        self.sleep.new_jobs(1, queue_was_empty);
    }

    /// Whether any queue of the pool holds a job: the injector or any worker's deque.
    /// The sleeper's last look before parking (docs/sleep.md, step 4).
    pub(crate) fn has_pending_jobs(&self) -> bool {
        !self.injected_jobs.is_empty() || self.thread_infos.iter().any(|t| !t.stealer.is_empty())
    }

    /// Runs `op` on a worker of this registry and returns its result.
    ///
    /// On a worker of this registry `op` runs inline; on a worker of another registry the
    /// caller keeps running its own pool's jobs while it waits; elsewhere it blocks.
    ///
    /// # Panics
    /// Re-raises a panic from `op`.
    pub(crate) fn in_worker<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread, bool) -> R + Send,
        R: Send,
    {
        match WorkerThread::current() {
            None => self.in_worker_cold(op),
            Some(worker) if Registry::same(worker.registry(), self) => op(worker, false),
            Some(worker) => self.in_worker_cross(worker, op),
        }
    }

    #[cold]
    fn in_worker_cold<OP, R>(&self, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread, bool) -> R + Send,
        R: Send,
    {
        thread_local!(static LOCK_LATCH: LockLatch = const { LockLatch::new() });

        LOCK_LATCH.with(|latch| {
            let job = StackJob::new(
                |injected| {
                    let worker = WorkerThread::current()
                        .expect("stealpool: injected job must run on a worker");
                    op(worker, injected)
                },
                LatchRef::new(latch),
            );
            // SAFETY: `job` lives on this frame until `wait_and_reset` returns, which
            // happens only after the job set its latch.
            self.inject(unsafe { job.as_job_ref() });
            job.latch.wait_and_reset();
            job.into_result()
        })
    }

    #[cold]
    fn in_worker_cross<OP, R>(&self, current_thread: &WorkerThread, op: OP) -> R
    where
        OP: FnOnce(&WorkerThread, bool) -> R + Send,
        R: Send,
    {
        let latch = SpinLatch::cross(current_thread);
        let job = StackJob::new(
            |injected| {
                let worker =
                    WorkerThread::current().expect("stealpool: injected job must run on a worker");
                op(worker, injected)
            },
            latch,
        );
        // SAFETY: `job` lives on this frame until `wait_until` returns, which happens
        // only after the job set its latch.
        self.inject(unsafe { job.as_job_ref() });
        current_thread.wait_until(&job.latch);
        job.into_result()
    }

    /// One more outstanding `spawn` job keeps the workers alive. Returns `false`, and
    /// changes nothing, if the pool has already terminated: only code running after
    /// termination (an exit handler) can see that, and there is no worker left to run a
    /// new job.
    #[inline]
    pub(crate) fn increment_terminate_count(&self) -> bool {
        let mut count = self.terminate_count.load(Ordering::Relaxed);
        loop {
            if count == 0 {
                return false;
            }
            // Relaxed: a non-zero count means the caller's own reference (pool handle or
            // running spawn job) keeps it from reaching zero concurrently, as with
            // `Arc::clone`; the job itself is published by the deque push that follows.
            match self.terminate_count.compare_exchange_weak(
                count,
                count + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(actual) => count = actual,
            }
        }
    }

    /// Drops one reference; the last one tells every worker to exit once idle.
    pub(crate) fn terminate(&self) {
        if self.terminate_count.fetch_sub(1, Ordering::SeqCst) == 1 {
            for (index, info) in self.thread_infos.iter().enumerate() {
                // SAFETY: the latch lives in the registry, which `self` keeps alive.
                if unsafe { CoreLatch::set(&info.terminate) } {
                    self.sleep.notify_worker_latch_is_set(index);
                }
            }
        }
    }

    /// Blocks until every worker has started.
    pub(crate) fn wait_until_primed(&self) {
        for info in &self.thread_infos {
            info.primed.wait();
        }
    }

    /// Blocks until every worker has left its main loop (used by tests).
    #[cfg(test)]
    pub(crate) fn wait_until_stopped(&self) {
        for info in &self.thread_infos {
            info.stopped.wait();
        }
    }
}

/// The body of a worker thread.
///
/// # Safety
/// Called once, as the whole body of a freshly started thread.
unsafe fn main_loop(worker: Worker<JobRef>, registry: Arc<Registry>, index: usize) {
    let worker_thread = &WorkerThread::new(worker, Arc::clone(&registry), index);
    // SAFETY: `worker_thread` lives on this frame for the rest of the thread's work and is
    // unregistered by its `Drop` before the frame ends.
    unsafe { WorkerThread::set_current(worker_thread) };
    let info = &registry.thread_infos[index];
    // SAFETY: the latch lives in the registry, which this thread keeps alive.
    unsafe { LockLatch::set(&info.primed) };

    // Nothing below may unwind: user code runs under `catch_unwind`.
    let abort_guard = unwind::AbortIfPanic;

    if let Some(handler) = registry.start_handler.as_ref() {
        registry.catch_unwind(|| handler(index));
    }

    // The whole scheduling loop: run jobs until the pool terminates.
    worker_thread.wait_until(&info.terminate);
    debug_assert!(
        worker_thread.take_local_job().is_none(),
        "worker exiting with jobs left in its deque"
    );

    // SAFETY: as for `primed`.
    unsafe { LockLatch::set(&info.stopped) };
    mem::forget(abort_guard);

    if let Some(handler) = registry.exit_handler.as_ref() {
        registry.catch_unwind(|| handler(index));
    }
    // `worker_thread` is dropped here, clearing the thread-local pointer.
}

/// Runs `op` on a worker: inline if the current thread is a worker of any pool, else on
/// the global pool (blocking until it finishes).
pub(crate) fn in_worker<OP, R>(op: OP) -> R
where
    OP: FnOnce(&WorkerThread, bool) -> R + Send,
    R: Send,
{
    match WorkerThread::current() {
        Some(worker) => op(worker, false),
        None => global_registry().in_worker(op),
    }
}
