//! [`ThreadPoolBuilder`] and [`ThreadPoolBuildError`]: configuring and starting a pool.

use crate::pool::config::Config;
use crate::pool::global;
use crate::pool::start::start_registry;
use crate::pool::worker::{adopt_current_thread, ThreadBuilder};
use crate::unwind;
use crate::ThreadPool;
use std::fmt;
use std::io;
use std::thread;

mod handlers;
mod thread_count;

pub use crate::pool::build_error::ThreadPoolBuildError;
pub use crate::pool::env::{ISOLATE_WAITS_ENV, NUM_THREADS_ENV, RAYON_NUM_THREADS_ENV};
#[allow(unreachable_pub)]
pub use crate::pool::spawn_handler::{CustomSpawn, DefaultSpawn, ThreadSpawn};

/// Configures and builds a [`ThreadPool`], or the global pool.
///
/// Same options and semantics as rayon-core 1.13's `ThreadPoolBuilder`: every method takes
/// and returns the builder, and nothing happens until [`build`](Self::build) or
/// [`build_global`](Self::build_global).
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new()
///     .num_threads(2)
///     .thread_name(|i| format!("worker-{i}"))
///     .build()
///     .unwrap();
/// assert_eq!(pool.install(|| stealpool::current_num_threads()), 2);
/// ```
///
/// The type parameter is how the worker threads are started: `DefaultSpawn` uses
/// `std::thread::Builder`; [`spawn_handler`](Self::spawn_handler) switches to a closure of
/// the application's (`CustomSpawn`). Neither type can be named outside this crate (as in
/// rayon-core); they only appear in the builder's type.
pub struct ThreadPoolBuilder<S = DefaultSpawn> {
    /// The settings, as the registry takes them.
    config: Config<S>,
}

impl Default for ThreadPoolBuilder {
    fn default() -> Self {
        ThreadPoolBuilder {
            config: Config::new(DefaultSpawn),
        }
    }
}

impl ThreadPoolBuilder {
    /// A builder with every option at its default: as many workers as logical CPUs (or
    /// [`NUM_THREADS_ENV`]), default thread names and stack size, no handlers.
    ///
    /// ```
    /// let builder = stealpool::ThreadPoolBuilder::new();
    /// // `num_threads: 0`: one worker per logical CPU unless the variable says otherwise.
    /// assert!(format!("{builder:?}").starts_with("ThreadPoolBuilder { num_threads: 0,"));
    /// let pool = builder.num_threads(2).build().unwrap();
    /// let name = pool.install(|| std::thread::current().name().map(String::from));
    /// assert_eq!(name, None); // default thread names: none
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds a pool whose threads are [scoped threads](std::thread::scope), runs
    /// `with_pool(&pool)`, then drops the pool and **joins every worker thread** before
    /// returning, so the workers may borrow from the caller's stack (through `wrapper`)
    /// and have all exited (exit handlers and thread-local destructors run) on return.
    ///
    /// `wrapper` is called on each new thread with its [`ThreadBuilder`] and must call
    /// [`ThreadBuilder::run`] (it may set up thread-local state around it). Same contract
    /// as rayon-core's `build_scoped`; see also [`ThreadPool::shutdown`] for a pool that is
    /// not scoped.
    ///
    /// # Errors
    /// As [`build`](Self::build); `with_pool` does not run then.
    ///
    /// # Panics
    /// A panic in `with_pool` is re-raised after the threads were joined.
    ///
    /// ```
    /// let data = vec![1, 2, 3];
    /// let sum = stealpool::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .build_scoped(
    ///         |thread| thread.run(),
    ///         |pool| pool.install(|| data.iter().sum::<i32>()),
    ///     )
    ///     .unwrap();
    /// assert_eq!(sum, 6);
    /// ```
    pub fn build_scoped<W, F, R>(self, wrapper: W, with_pool: F) -> Result<R, ThreadPoolBuildError>
    where
        W: Fn(ThreadBuilder) + Sync,
        F: FnOnce(&ThreadPool) -> R,
    {
        thread::scope(|scope| {
            let wrapper = &wrapper;
            let pool = self
                .spawn_handler(|thread| {
                    thread
                        .std_builder()
                        .spawn_scoped(scope, move || wrapper(thread))?;
                    Ok(())
                })
                .build()?;
            let result = unwind::halt_unwinding(|| with_pool(&pool));
            // Dropping the pool lets the workers exit once their work is done; the end of
            // `thread::scope` joins them.
            drop(pool);
            match result {
                Ok(value) => Ok(value),
                Err(payload) => unwind::resume_unwinding(payload),
            }
        })
    }

    /// Starts the worker threads with `spawn`, the application's own thread-creation
    /// closure: it receives a [`ThreadBuilder`] per worker, must start a thread that calls
    /// [`ThreadBuilder::run`], and returns `Ok(())` once started (rayon-core's
    /// `spawn_handler`).
    ///
    /// [`ThreadPool::shutdown`] waits for such threads to finish their work and exit
    /// handler, but cannot join them (it has no `JoinHandle`).
    ///
    /// # Errors
    /// An `Err` from `spawn` makes [`build`](Self::build) return it as an I/O
    /// [`ThreadPoolBuildError`]; the threads already started exit.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .spawn_handler(|thread| {
    ///         std::thread::Builder::new()
    ///             .name(format!("custom-{}", thread.index()))
    ///             .spawn(|| thread.run())?;
    ///         Ok(())
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let name = pool.install(|| std::thread::current().name().map(str::to_owned));
    /// assert!(name.unwrap().starts_with("custom-"));
    /// ```
    pub fn spawn_handler<F>(self, spawn: F) -> ThreadPoolBuilder<CustomSpawn<F>>
    where
        F: FnMut(ThreadBuilder) -> io::Result<()>,
    {
        ThreadPoolBuilder {
            config: self.config.with_spawn_handler(CustomSpawn(spawn)),
        }
    }
}

impl<S: ThreadSpawn> ThreadPoolBuilder<S> {
    /// Starts the worker threads and returns the pool. It does not wait for the threads
    /// to start.
    ///
    /// # Errors
    /// [`ThreadPoolBuildError`] if [`NUM_THREADS_ENV`] is not a number, if
    /// [`use_current_thread`](Self::use_current_thread) was set on a thread that already is
    /// a pool worker, or if the OS (or the spawn handler) refuses to start a thread (e.g.
    /// an impossible [`stack_size`](Self::stack_size)); in that case every thread already
    /// started exits (and runs its exit handler).
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .thread_name(|i| format!("worker-{i}"))
    ///     .build()
    ///     .expect("two threads");
    /// assert_eq!(pool.current_num_threads(), 2);
    /// let name = pool.install(|| std::thread::current().name().map(String::from));
    /// assert!(name.unwrap().starts_with("worker-"));
    /// ```
    pub fn build(self) -> Result<ThreadPool, ThreadPoolBuildError> {
        let registry = start_registry(self.config, false)?;
        adopt_current_thread(&registry);
        Ok(ThreadPool::from_registry(registry))
    }

    /// Builds the global pool, the one used by the free functions ([`join`](fn@crate::join),
    /// [`spawn`](fn@crate::spawn), ...) outside any pool. Waits until every worker started.
    ///
    /// # Errors
    /// As [`build`](Self::build), plus an error if the global pool already exists (built
    /// by an earlier call, or lazily by a free function).
    ///
    /// ```
    /// stealpool::ThreadPoolBuilder::new().num_threads(2).build_global().unwrap();
    /// assert_eq!(stealpool::current_num_threads(), 2); // the free functions use it
    /// let (a, b) = stealpool::join(|| 1, || 2);
    /// assert_eq!(a + b, 3);
    /// // Only once per process.
    /// assert!(stealpool::ThreadPoolBuilder::new().build_global().is_err());
    /// ```
    pub fn build_global(self) -> Result<(), ThreadPoolBuildError> {
        global::init_global_registry(self.config)
    }
}

impl<S> ThreadPoolBuilder<S> {
    /// Names worker threads: `closure(index)` is called once per worker, on the building
    /// thread, with the worker's index `0..num_threads`.
    ///
    /// # Panics
    /// A panic in `closure` propagates out of `build`; the threads already started exit.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .thread_name(|index| format!("cruncher-{index}"))
    ///     .build()
    ///     .unwrap();
    /// let names = pool.broadcast(|_| std::thread::current().name().unwrap().to_owned());
    /// assert_eq!(names, ["cruncher-0", "cruncher-1"]);
    /// ```
    pub fn thread_name<F>(mut self, closure: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.config.thread_name = Some(Box::new(closure));
        self
    }

    /// Sets each worker thread's stack size in bytes (passed to
    /// `std::thread::Builder::stack_size`).
    ///
    /// ```
    /// // 16 MiB per worker: room for a 4 MiB array on the stack (the default is 2 MiB).
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).stack_size(16 << 20).build().unwrap();
    /// let sum = pool.install(|| {
    ///     let buffer = std::hint::black_box([1u8; 4 << 20]);
    ///     buffer.iter().map(|&b| u64::from(b)).sum::<u64>()
    /// });
    /// assert_eq!(sum, 4 << 20);
    /// ```
    pub fn stack_size(mut self, stack_size: usize) -> Self {
        self.config.stack_size = Some(stack_size);
        self
    }

    /// Makes the calling thread (the one that calls `build` or `build_global`) worker 0
    /// of the pool, instead of starting a thread for it.
    ///
    /// That thread does not run the scheduling loop: it takes part only while it waits
    /// inside the pool (`install`, `join`, `scope`, `yield_now`, `JoinHandle::join`, ...),
    /// so jobs queued for it alone (its copy of a `spawn_broadcast`) wait until then; the
    /// start and exit handlers do not run for it. It stays a worker of the pool for the
    /// rest of its life, also after the pool is dropped: then `join` and `scope` run on it
    /// alone, `spawn` runs inline, and `broadcast` panics (rayon-core hangs there). Call
    /// [`ThreadPool::shutdown`] on it to run its remaining jobs and wait for the other
    /// workers. Same as rayon-core otherwise.
    ///
    /// # Errors
    /// `build` returns an error if the calling thread already is a worker of a pool.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .use_current_thread()
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(pool.current_thread_index(), Some(0)); // this thread is worker 0
    /// assert_eq!(pool.install(stealpool::current_thread_index), Some(0)); // runs inline
    /// ```
    pub fn use_current_thread(mut self) -> Self {
        self.config.use_current_thread = true;
        self
    }

    /// Makes every worker's deque FIFO instead of LIFO (rayon-core's deprecated
    /// `breadth_first`): each worker runs its own jobs oldest first.
    ///
    /// ```
    /// #[allow(deprecated)]
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).breadth_first().build().unwrap();
    /// let order = std::sync::Mutex::new(Vec::new());
    /// pool.scope(|s| {
    ///     for i in 0..3 {
    ///         let order = &order;
    ///         s.spawn(move |_| order.lock().unwrap().push(i));
    ///     }
    /// });
    /// assert_eq!(order.into_inner().unwrap(), [0, 1, 2]); // oldest first, not [2, 1, 0]
    /// ```
    #[deprecated(note = "use `scope_fifo` and `spawn_fifo` for FIFO order")]
    pub fn breadth_first(mut self) -> Self {
        self.config.breadth_first = true;
        self
    }

    /// Records a worker timeline for this pool (what each worker ran, where each job came
    /// from, parks, injections, promotions), read with
    /// [`ThreadPool::timeline`](crate::ThreadPool::timeline) and saved as Chrome Trace
    /// JSON or SVG ([`Timeline`](crate::Timeline)). Off by default; the
    /// [`TIMELINE_ENV`](crate::TIMELINE_ENV) variable turns it on for every pool. Costs a
    /// few nanoseconds per job while on, and memory (24 bytes per event) for the pool's
    /// whole life. Not in rayon-core; needs the `timeline` feature (on by default).
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().timeline(true).build().unwrap();
    /// assert!(pool.timeline().is_some());
    /// ```
    #[cfg(feature = "timeline")]
    #[cfg_attr(docsrs, doc(cfg(feature = "timeline")))]
    pub fn timeline(mut self, record: bool) -> Self {
        self.config.record_timeline = record;
        self
    }

    /// Runs every job of the pool as if inside its own [`isolate`](fn@crate::isolate):
    /// every job a worker takes from a queue (an `install`, a `spawn`, a scope's job, a
    /// broadcast's job for each worker, a stolen `join` half, a call from another pool),
    /// and each half of every `join` whose second half another worker takes (a `join` that
    /// stays on its thread is a plain call: the waits in it are the caller's). A wait
    /// inside such a job (for a `join` half another worker took, a scope, an `install`, a
    /// handle) then runs only jobs handed out inside it, so a lock held across parallel
    /// work, even in the leaf of a parallel loop, never meets another job that takes it on
    /// the same thread (rayon-rs/rayon#592, #1205, #1251, #1253). `true` isolates, `false`
    /// does not; left unset, [`ISOLATE_WAITS_ENV`] decides (off when it is unset). Not in
    /// rayon-core; the idea is oneTBB's `this_task_arena::isolate` applied to every task
    /// (`docs/isolation.md`, "Every job isolated").
    ///
    /// What it costs and what it can break are `isolate`'s: each job taken from a queue
    /// makes a region (an allocation), and a `join` half that another worker takes two,
    /// while a `join` that stays on its thread costs what it costs without isolation; and
    /// waits that complete only if the waiting worker runs an unrelated job (a job that
    /// blocks on a channel fed by another top-level job, when every worker waits) complete
    /// only once a worker comes free. Two jobs that [`broadcast`](fn@crate::broadcast) at
    /// the same time wait for each other for ever: each worker waits in its own job's
    /// broadcast, where the other's may not run; do not isolate every job of a pool whose
    /// jobs broadcast. Code
    /// that the building thread runs as worker 0 of a
    /// [`use_current_thread`](Self::use_current_thread) pool is not a job: wrap it in
    /// `isolate` where it needs isolated waits.
    ///
    /// ```
    /// use std::sync::Mutex;
    ///
    /// let pool = stealpool::ThreadPoolBuilder::new()
    ///     .num_threads(2)
    ///     .isolate_waits(true)
    ///     .build()
    ///     .unwrap();
    /// let log = Mutex::new(Vec::new());
    /// pool.scope(|s| {
    ///     for i in 0..4 {
    ///         let log = &log;
    ///         // Each job holds the lock across a `join`: its wait runs only its own halves.
    ///         s.spawn(move |_| {
    ///             let mut guard = log.lock().unwrap();
    ///             let (a, b) = stealpool::join(|| i, || 10 * i);
    ///             guard.push(a + b);
    ///         });
    ///     }
    /// });
    /// let mut all = log.into_inner().unwrap();
    /// all.sort();
    /// assert_eq!(all, [0, 11, 22, 33]);
    /// ```
    pub fn isolate_waits(mut self, isolate: bool) -> Self {
        self.config.isolate_waits = Some(isolate);
        self
    }
}

/// Prints `Some(<closure>)` for a set closure, in rayon-core's field order.
impl<S> fmt::Debug for ThreadPoolBuilder<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct ClosurePlaceholder;
        impl fmt::Debug for ClosurePlaceholder {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("<closure>")
            }
        }
        let closure = |present: bool| present.then_some(ClosurePlaceholder);
        let c = &self.config;
        f.debug_struct("ThreadPoolBuilder")
            .field("num_threads", &c.num_threads)
            .field("use_current_thread", &c.use_current_thread)
            .field("get_thread_name", &closure(c.thread_name.is_some()))
            .field("panic_handler", &closure(c.panic_handler.is_some()))
            .field("stack_size", &c.stack_size)
            .field("start_handler", &closure(c.start_handler.is_some()))
            .field("exit_handler", &closure(c.exit_handler.is_some()))
            .field("breadth_first", &c.breadth_first)
            .finish()
    }
}
