//! A worker's thread: [`ThreadBuilder`], what a spawn handler receives for each worker;
//! the body the thread runs ([`ThreadBuilder::run`]: start handler, scheduling loop, exit
//! handler); and the building thread of a `use_current_thread` pool becoming worker 0
//! ([`adopt_current_thread`]).

use super::{RunJobs, WorkerThread};
use crate::pool::registry::{Registry, WorkerQueues};
use crate::sync::unchecked::Arc;
use crate::unwind;
use std::fmt;
use std::mem;
use std::thread;

/// Everything a new worker thread needs to run: handed to the spawn handler, which starts
/// an OS thread that must call [`ThreadBuilder::run`].
///
/// This is rayon-core's `ThreadBuilder`: with
/// [`ThreadPoolBuilder::spawn_handler`](crate::ThreadPoolBuilder::spawn_handler) the
/// application creates the threads itself (its own thread type, affinity, a scoped
/// thread), and stealpool only supplies the body.
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new()
///     .num_threads(2)
///     .spawn_handler(|thread: stealpool::ThreadBuilder| {
///         std::thread::Builder::new().spawn(move || thread.run())?;
///         Ok(())
///     })
///     .build()
///     .unwrap();
/// assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1]);
/// ```
pub struct ThreadBuilder {
    /// The worker's thread name, from the builder's `thread_name` closure.
    name: Option<String>,
    /// The worker's stack size in bytes, from the builder's `stack_size`.
    stack_size: Option<usize>,
    /// The queue ends the worker owns.
    queues: WorkerQueues,
    /// The worker's pool.
    registry: Arc<Registry>,
    /// The worker's index in its pool.
    index: usize,
}

impl ThreadBuilder {
    /// What worker `index` of `registry`, owning `queues`, needs to run on a new thread.
    pub(crate) fn new(
        name: Option<String>,
        stack_size: Option<usize>,
        queues: WorkerQueues,
        registry: Arc<Registry>,
        index: usize,
    ) -> Self {
        ThreadBuilder {
            name,
            stack_size,
            queues,
            registry,
            index,
        }
    }

    /// The index of this worker in its pool, `0..num_threads`.
    ///
    /// ```
    /// let mut indices = Vec::new();
    /// let builder = stealpool::ThreadPoolBuilder::new().num_threads(3);
    /// let _pool = builder.spawn_handler(|thread| {
    ///     indices.push(thread.index());
    ///     std::thread::Builder::new().spawn(move || thread.run()).map(drop)
    /// }).build().unwrap();
    /// assert_eq!(indices, [0, 1, 2]);
    /// ```
    pub fn index(&self) -> usize {
        self.index
    }

    /// The thread name the builder's `thread_name` closure gave this worker, if any.
    ///
    /// ```
    /// let mut names = Vec::new();
    /// let builder = stealpool::ThreadPoolBuilder::new().num_threads(2).thread_name(|i| format!("w{i}"));
    /// let _pool = builder.spawn_handler(|thread| {
    ///     names.push(thread.name().unwrap().to_owned());
    ///     std::thread::Builder::new().spawn(move || thread.run()).map(drop)
    /// }).build().unwrap();
    /// assert_eq!(names, ["w0", "w1"]);
    /// ```
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The stack size (bytes) requested with `stack_size`, if any.
    ///
    /// ```
    /// let mut sizes = Vec::new();
    /// let builder = stealpool::ThreadPoolBuilder::new().num_threads(1).stack_size(4 << 20);
    /// let _pool = builder.spawn_handler(|thread| {
    ///     sizes.push(thread.stack_size());
    ///     std::thread::Builder::new().spawn(move || thread.run()).map(drop)
    /// }).build().unwrap();
    /// assert_eq!(sizes, [Some(4 << 20)]);
    /// ```
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
    /// If the current thread is already a worker of a pool, or is building a
    /// `use_current_thread` pool (a spawn handler must call `run` on a new thread).
    ///
    /// ```
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// let returned = AtomicUsize::new(0);
    /// let wrapper = |thread: stealpool::ThreadBuilder| {
    ///     thread.run(); // returns once the pool has terminated
    ///     returned.fetch_add(1, Ordering::SeqCst);
    /// };
    /// let builder = stealpool::ThreadPoolBuilder::new().num_threads(2);
    /// assert_eq!(builder.build_scoped(wrapper, |pool| pool.install(|| 1 + 1)).unwrap(), 2);
    /// assert_eq!(returned.load(Ordering::SeqCst), 2); // every worker's `run` returned
    /// ```
    pub fn run(self) {
        assert!(
            !WorkerThread::is_or_becomes_worker(),
            "stealpool: ThreadBuilder::run called on a thread that is already a pool worker \
             (or building a `use_current_thread` pool)"
        );
        // SAFETY: the current thread is not a worker (checked above), and `thread_body`
        // keeps its `WorkerThread` on this frame until it returns.
        unsafe { thread_body(self) }
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

/// The body of a worker thread.
///
/// # Safety
/// Called on a thread that is not a worker yet; the `WorkerThread` lives on this frame.
unsafe fn thread_body(thread: ThreadBuilder) {
    let ThreadBuilder {
        queues,
        registry,
        index,
        ..
    } = thread;
    let worker_thread = &WorkerThread::new(queues, Arc::clone(&registry), index);
    // SAFETY: `worker_thread` lives on this frame for the rest of the thread's work and is
    // unregistered by its `Drop` before the frame ends.
    unsafe { WorkerThread::set_current(worker_thread) };
    registry.worker_started(index);

    // Nothing below may unwind: user code runs under `catch_unwind`.
    let abort_guard = unwind::AbortIfPanic;

    registry.run_start_handler(index);

    // The whole scheduling loop: run jobs until the pool terminates. The span's subscriber
    // is user code: its panic goes to the panic handler, as the handlers' do.
    #[cfg(feature = "tracing")]
    let mut span = None;
    #[cfg(feature = "tracing")]
    registry.catch_unwind(|| {
        span = Some(tracing::trace_span!("worker_thread", worker = index).entered())
    });
    worker_thread.main_loop(registry.terminate_latch(index));
    #[cfg(feature = "tracing")]
    registry.catch_unwind(|| drop(span));
    // Normally empty: every job that holds no terminate reference (a `join` half, a scope
    // job) belongs to a caller that keeps the pool alive. The exception is the building
    // thread of a `use_current_thread` pool, which can use the pool without a handle;
    // run what it left here rather than leave it to be stolen later.
    let run = worker_thread.run_jobs();
    while let Some(job) = worker_thread
        .take_local_job()
        .or_else(|| worker_thread.take_batched_job())
    {
        run.execute(job);
    }
    drop(run);

    registry.run_exit_handler(index);
    mem::forget(abort_guard);

    // Detached now, while it runs, unless `shutdown` will join it.
    registry.detach_own_thread();
    // Last: `shutdown` returns once every worker got here (and, for threads it started
    // itself, once the thread has ended).
    registry.worker_stopped(index);
    // `worker_thread` is dropped here, clearing the thread-local pointer.
}

/// With `use_current_thread`: makes the calling thread (the one that built `registry`)
/// its worker 0, for the rest of the thread's life. Called once the registry is
/// definitely kept (`build`, or `build_global` after winning the global slot). A no-op
/// for other registries.
pub(crate) fn adopt_current_thread(registry: &Arc<Registry>) {
    let Some(queues) = registry.take_current_thread_queues() else {
        return;
    };
    // It does not run the main loop: it takes part whenever it waits inside the pool
    // (as in rayon-core). Its `WorkerThread` lives in a thread-local until the thread
    // exits. The current thread is not a worker: `pool::start` checked that on this same
    // thread, and nothing in between made it one.
    WorkerThread::adopt(WorkerThread::new(queues, Arc::clone(registry), 0));
    registry.worker_started(0);
}
