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

use crate::builder::{ErrorKind, ThreadPoolBuildError, ThreadPoolBuilder, ThreadSpawn};
use crate::job::{JobRef, StackJob};
use crate::join::pending::PendingHalves;
use crate::latch::{CoreLatch, Latch, LatchRef, LockLatch, ParkLatch, SpinLatch};
use crate::metrics::RegistryCounters;
use crate::sleep::{Sleep, THREADS_MAX};
use crate::sync::{Arc, AtomicUsize, Condvar, Mutex, OnceLock, Ordering};
use crate::unwind;
use crate::worker::WorkerThread;
use crossbeam_deque::{Injector, Stealer, Worker};
use crossbeam_utils::CachePadded;
use std::any::Any;
use std::fmt;
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
    /// The pushing ends of every worker's broadcast queue (FIFO). Only broadcasts lock it.
    broadcasts: Mutex<Vec<Worker<JobRef>>>,
    counters: RegistryCounters,
    panic_handler: Option<Box<PanicHandler>>,
    start_handler: Option<Box<ThreadHandler>>,
    exit_handler: Option<Box<ThreadHandler>>,
    /// Starts at 1 for the `ThreadPool` handle; +1 for every `spawn` job until it has run.
    /// When it reaches 0 every worker's `terminate` latch is set.
    terminate_count: AtomicUsize,
    /// Where `wait_idle` callers wait for `terminate_count` to fall back to 1.
    idle: IdleWait,
    /// Worker 0's deque ends with `use_current_thread`, until the building thread adopts
    /// them (`adopt_current_thread`).
    current_thread_parts: Mutex<Option<(Worker<JobRef>, Stealer<JobRef>)>>,
    /// Join handles of the worker threads the default spawn handler started.
    thread_handles: Mutex<Vec<thread::JoinHandle<()>>>,
    /// Worker 0 is the thread that built the pool (`use_current_thread`): it never runs
    /// the main loop, so it never stops.
    current_thread_worker: bool,
}

/// `wait_idle` waiters: a count the terminating side checks, and a condvar.
#[derive(Default)]
struct IdleWait {
    waiters: AtomicUsize,
    lock: Mutex<()>,
    condvar: Condvar,
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
    /// The worker's private `join` halves, for rescuers (`join::pending`).
    pending: Arc<CachePadded<PendingHalves>>,
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
pub(crate) fn init_global_registry<S: ThreadSpawn>(
    builder: ThreadPoolBuilder<S>,
) -> Result<(), ThreadPoolBuildError> {
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
            registry.adopt_current_thread();
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

/// Everything a new worker thread needs to run: handed to the spawn handler, which starts
/// an OS thread that must call [`ThreadBuilder::run`].
///
/// This is rayon-core's `ThreadBuilder`: with
/// [`ThreadPoolBuilder::spawn_handler`](crate::ThreadPoolBuilder::spawn_handler) the
/// application creates the threads itself (its own thread type, affinity, a scoped
/// thread), and stealpool only supplies the body.
pub struct ThreadBuilder {
    name: Option<String>,
    stack_size: Option<usize>,
    worker: Worker<JobRef>,
    broadcasts: Stealer<JobRef>,
    registry: Arc<Registry>,
    index: usize,
}

impl ThreadBuilder {
    /// The index of this worker in its pool, `0..num_threads`.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The thread name the builder's `thread_name` closure gave this worker, if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The stack size (bytes) requested with `stack_size`, if any.
    pub fn stack_size(&self) -> Option<usize> {
        self.stack_size
    }

    /// A `std::thread::Builder` with this worker's name and stack size.
    pub(crate) fn std_builder(&self) -> thread::Builder {
        let mut b = thread::Builder::new();
        if let Some(name) = &self.name {
            b = b.name(name.clone());
        }
        if let Some(stack_size) = self.stack_size {
            b = b.stack_size(stack_size);
        }
        b
    }

    /// Runs the worker on the current thread: the start handler, the scheduling loop until
    /// the pool terminates, then the exit handler. Blocks until then.
    ///
    /// # Panics
    /// If the current thread is already a worker of a pool (a spawn handler must call
    /// `run` on a new thread).
    pub fn run(self) {
        assert!(
            WorkerThread::current().is_none(),
            "stealpool: ThreadBuilder::run called on a thread that is already a pool worker"
        );
        // SAFETY: the current thread is not a worker (checked above), and `main_loop`
        // keeps its `WorkerThread` on this frame until it returns.
        unsafe { main_loop(self) }
    }
}

impl fmt::Debug for ThreadBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ThreadBuilder")
            .field("pool", &Arc::as_ptr(&self.registry))
            .field("index", &self.index)
            .field("name", &self.name)
            .field("stack_size", &self.stack_size)
            .finish()
    }
}

impl Registry {
    /// Builds the registry and starts its worker threads through `builder`'s spawn
    /// handler.
    ///
    /// # Errors
    /// A bad thread count from the environment, the current thread already being a worker
    /// (with `use_current_thread`), or an I/O error from starting a thread; in the last
    /// case every thread already started is told to exit.
    pub(crate) fn new<S: ThreadSpawn>(
        mut builder: ThreadPoolBuilder<S>,
    ) -> Result<Arc<Registry>, ThreadPoolBuildError> {
        let n_threads = builder.get_num_threads()?.min(THREADS_MAX);
        let use_current_thread = builder.get_use_current_thread();
        if use_current_thread && WorkerThread::current().is_some() {
            return Err(ThreadPoolBuildError::new(
                ErrorKind::CurrentThreadAlreadyInPool,
            ));
        }
        let breadth_first = builder.get_breadth_first();
        let workers: Vec<Worker<JobRef>> = (0..n_threads)
            .map(|_| {
                if breadth_first {
                    Worker::new_fifo()
                } else {
                    Worker::new_lifo()
                }
            })
            .collect();
        let broadcasts: Vec<Worker<JobRef>> = (0..n_threads).map(|_| Worker::new_fifo()).collect();
        let broadcast_stealers: Vec<Stealer<JobRef>> =
            broadcasts.iter().map(Worker::stealer).collect();
        let thread_infos = workers
            .iter()
            .map(|worker| ThreadInfo {
                primed: LockLatch::new(),
                stopped: LockLatch::new(),
                terminate: CoreLatch::new(),
                stealer: worker.stealer(),
                pending: Arc::new(CachePadded::new(PendingHalves::new())),
            })
            .collect();

        let registry = Arc::new(Registry {
            thread_infos,
            sleep: Sleep::new(n_threads),
            injected_jobs: Injector::new(),
            broadcasts: Mutex::new(broadcasts),
            counters: RegistryCounters::new(n_threads),
            panic_handler: builder.take_panic_handler(),
            start_handler: builder.take_start_handler(),
            exit_handler: builder.take_exit_handler(),
            terminate_count: AtomicUsize::new(1),
            idle: IdleWait::default(),
            current_thread_parts: Mutex::new(None),
            thread_handles: Mutex::new(Vec::new()),
            current_thread_worker: use_current_thread,
        });

        // If a thread fails to start, or `thread_name` panics, the threads already
        // started must still be told to exit.
        let t1000 = Terminator(&registry);
        let mut current_thread_parts = None;
        for (index, (worker, broadcasts)) in workers.into_iter().zip(broadcast_stealers).enumerate()
        {
            // Named for every index, also the current thread's (as in rayon-core, whose
            // `thread_name` closure sees index 0 even with `use_current_thread`).
            let name = builder.get_thread_name(index);
            if index == 0 && use_current_thread {
                current_thread_parts = Some((worker, broadcasts));
                continue;
            }
            let thread = ThreadBuilder {
                name,
                stack_size: builder.get_stack_size(),
                worker,
                broadcasts,
                registry: Arc::clone(&registry),
                index,
            };
            match builder.spawner_mut().spawn(thread) {
                Ok(Some(handle)) => registry.thread_handles.lock().push(handle),
                Ok(None) => {}
                Err(err) => return Err(ThreadPoolBuildError::new(ErrorKind::IOError(err))),
            }
        }
        // With `use_current_thread`, worker 0's deque waits here until the caller has
        // decided to keep this registry (`adopt_current_thread`): `build_global` may yet
        // lose the race for the global slot, and the thread must not be left a worker of
        // a pool that was thrown away.
        *registry.current_thread_parts.lock() = current_thread_parts;
        mem::forget(t1000);
        Ok(registry)
    }

    /// With `use_current_thread`: makes the calling thread (the one that built this
    /// registry) its worker 0, for the rest of the thread's life. Called once the registry
    /// is definitely kept (`build`, or `build_global` after winning the global slot). A
    /// no-op for other registries.
    pub(crate) fn adopt_current_thread(self: &Arc<Self>) {
        let Some((worker, broadcasts)) = self.current_thread_parts.lock().take() else {
            return;
        };
        // It does not run the main loop: it takes part whenever it waits inside the pool
        // (as in rayon-core). Its `WorkerThread` is leaked because the thread-local slot
        // must stay valid for as long as the thread runs.
        let worker_thread = Box::leak(Box::new(WorkerThread::new_adopted(
            worker,
            broadcasts,
            Arc::clone(self),
            0,
        )));
        // SAFETY: the leaked box is never freed or moved, and the current thread is not a
        // worker: `Registry::new` checked that on this same thread, and nothing in between
        // made it one.
        unsafe { WorkerThread::set_current(worker_thread) };
        // SAFETY: the latch lives in the registry, which `self` keeps alive.
        unsafe { LockLatch::set(&self.thread_infos[0].primed) };
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

    /// Worker `index`'s private `join` halves (its own handle on them).
    pub(crate) fn pending(&self, index: usize) -> Arc<CachePadded<PendingHalves>> {
        Arc::clone(&self.thread_infos[index].pending)
    }

    /// Worker `index`'s private `join` halves, for a rescuer.
    #[inline]
    pub(crate) fn pending_of(&self, index: usize) -> &PendingHalves {
        &self.thread_infos[index].pending
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

    /// The current thread's worker, if it is a worker of this registry.
    #[inline]
    pub(crate) fn current_worker(&self) -> Option<&'static WorkerThread> {
        WorkerThread::current().filter(|worker| Registry::same(worker.registry(), self))
    }

    /// Pushes on the current worker's deque if it belongs to this registry, else injects.
    pub(crate) fn inject_or_push(&self, job_ref: JobRef) {
        match self.current_worker() {
            Some(worker) => worker.push(job_ref),
            None => self.inject(job_ref),
        }
    }

    /// Pushes a job from outside the pool onto the injector and wakes a worker if needed.
    pub(crate) fn inject(&self, job_ref: JobRef) {
        let queue_was_empty = self.injected_jobs.is_empty();
        self.injected_jobs.push(job_ref);
        self.counters.job_injected();
        self.sleep.new_jobs(1, queue_was_empty);
    }

    /// Pushes one job on every worker's broadcast queue (job `i` for worker `i`) and wakes
    /// every sleeper: each job must run on its own worker.
    ///
    /// # Panics
    /// If `jobs` does not yield exactly one job per worker.
    pub(crate) fn inject_broadcast(&self, jobs: impl ExactSizeIterator<Item = JobRef>) {
        let queues = self.broadcasts.lock();
        assert_eq!(jobs.len(), queues.len(), "one broadcast job per worker");
        for (queue, job) in queues.iter().zip(jobs) {
            queue.push(job);
        }
        drop(queues);
        // After the pushes, like every `new_jobs` (docs/sleep.md, "Broadcasts").
        self.sleep.new_broadcast_jobs();
    }

    /// Whether any queue of the pool holds a job: the injector or any worker's deque.
    /// The sleeper's last look before parking (docs/sleep.md, step 4).
    pub(crate) fn has_pending_jobs(&self) -> bool {
        !self.injected_jobs.is_empty()
            || self
                .thread_infos
                .iter()
                .any(|t| !t.stealer.is_empty() || t.pending.has_private())
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
        thread_local!(static PARK_LATCH: ParkLatch = ParkLatch::new());

        let mut op = Some(op);
        let mut run = |latch: &ParkLatch| {
            let op = op
                .take()
                .expect("stealpool: in_worker_cold ran its job twice");
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
        };
        // From a thread-local destructor that runs after `PARK_LATCH`'s own, the
        // thread-local is gone: use a latch on this frame instead.
        PARK_LATCH
            .try_with(&mut run)
            .unwrap_or_else(|_| run(&ParkLatch::new()))
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

    /// `n` more outstanding jobs (a `spawn`, the copies of a broadcast) keep the workers
    /// alive; each later releases its reference with [`terminate`](Self::terminate).
    /// Returns `false`, and changes nothing, if the pool has already terminated: only code
    /// running after termination (an exit handler, the building thread of a dropped
    /// `use_current_thread` pool) can see that, and there is no worker left to run a new
    /// job.
    #[inline]
    pub(crate) fn increment_terminate_count(&self, n: usize) -> bool {
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
                count + n,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(actual) => count = actual,
            }
        }
    }

    /// Drops one reference; the last one tells every worker to exit once idle. When only
    /// the pool handle's reference is left, the pool is idle: wakes `wait_idle` callers.
    pub(crate) fn terminate(&self) {
        match self.terminate_count.fetch_sub(1, Ordering::SeqCst) {
            1 => {
                for (index, info) in self.thread_infos.iter().enumerate() {
                    // SAFETY: the latch lives in the registry, which `self` keeps alive.
                    if unsafe { CoreLatch::set(&info.terminate) } {
                        self.sleep.notify_worker_latch_is_set(index);
                    }
                }
            }
            // SeqCst pair with `wait_idle`: either it sees our decrement, or we see its
            // registration as a waiter (store-load on both sides).
            2 if self.idle.waiters.load(Ordering::SeqCst) > 0 => {
                let _guard = self.idle.lock.lock();
                self.idle.condvar.notify_all();
            }
            _ => {}
        }
    }

    /// Blocks until every job holding a terminate reference (every `spawn*` job and what
    /// those spawned) has finished, i.e. only the pool handle's reference is left.
    ///
    /// The caller must hold the pool handle and must not itself be such a job.
    pub(crate) fn wait_idle(&self) {
        self.idle.waiters.fetch_add(1, Ordering::SeqCst);
        let mut guard = self.idle.lock.lock();
        while self.terminate_count.load(Ordering::SeqCst) > 1 {
            guard = self.idle.condvar.wait(guard);
        }
        drop(guard);
        self.idle.waiters.fetch_sub(1, Ordering::SeqCst);
    }

    /// Whether worker 0 is the thread that built the pool (`use_current_thread`).
    pub(crate) fn has_current_thread_worker(&self) -> bool {
        self.current_thread_worker
    }

    /// Worker `index`'s terminate latch, set once the pool has terminated.
    pub(crate) fn terminate_latch(&self, index: usize) -> &CoreLatch {
        &self.thread_infos[index].terminate
    }

    /// Blocks until every worker has started.
    pub(crate) fn wait_until_primed(&self) {
        for info in &self.thread_infos {
            info.primed.wait();
        }
    }

    /// Blocks until every worker thread has left its main loop and run its exit handler,
    /// then joins the threads the default spawn handler started (so their thread-local
    /// destructors have run). Worker 0 of a `use_current_thread` pool is the building
    /// thread, which never stops: it is skipped.
    pub(crate) fn wait_until_stopped(&self) {
        let skip = usize::from(self.current_thread_worker);
        for info in &self.thread_infos[skip..] {
            info.stopped.wait();
        }
        let handles = mem::take(&mut *self.thread_handles.lock());
        for handle in handles {
            // The thread body catches every panic of user code, so an `Err` would mean a
            // panic in the scheduler itself, which aborts before it gets here.
            let _ = handle.join();
        }
    }
}

/// The body of a worker thread.
///
/// # Safety
/// Called on a thread that is not a worker yet; the `WorkerThread` lives on this frame.
unsafe fn main_loop(thread: ThreadBuilder) {
    let ThreadBuilder {
        worker,
        broadcasts,
        registry,
        index,
        ..
    } = thread;
    let worker_thread = &WorkerThread::new(worker, broadcasts, Arc::clone(&registry), index);
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
    // Normally empty: every job that holds no terminate reference (a `join` half, a scope
    // job) belongs to a caller that keeps the pool alive. The exception is the building
    // thread of a `use_current_thread` pool, which can use the pool without a handle;
    // run what it left here rather than leave it to be stolen later.
    while let Some(job) = worker_thread.take_local_job() {
        worker_thread.execute(job);
    }
    worker_thread.flush_count_downs();

    if let Some(handler) = registry.exit_handler.as_ref() {
        registry.catch_unwind(|| handler(index));
    }
    mem::forget(abort_guard);

    // Last: `shutdown` returns once every worker got here (and, for threads it started
    // itself, once the thread has ended).
    // SAFETY: as for `primed`.
    unsafe { LockLatch::set(&info.stopped) };
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
