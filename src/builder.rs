//! [`ThreadPoolBuilder`] and [`ThreadPoolBuildError`]: configuring and starting a pool.

use crate::registry::{self, PanicHandler, Registry, ThreadHandler};
use crate::sleep::THREADS_MAX;
use crate::ThreadPool;
use std::any::Any;
use std::error::Error;
use std::fmt;
use std::io;

/// The environment variable that sets the default number of worker threads.
///
/// Read when a builder has `num_threads(0)` (the default). Unset, empty or `0` means one
/// worker per logical CPU (`num_cpus::get()`); surrounding whitespace is ignored; any other
/// value that is not a non-negative integer makes [`ThreadPoolBuilder::build`] fail (and
/// the lazily built global pool panic with that error). It plays the role of rayon-core's
/// `RAYON_NUM_THREADS`, which stealpool does not read.
pub const NUM_THREADS_ENV: &str = "STEALPOOL_NUM_THREADS";

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
#[derive(Default)]
pub struct ThreadPoolBuilder {
    num_threads: usize,
    get_thread_name: Option<Box<dyn FnMut(usize) -> String>>,
    stack_size: Option<usize>,
    panic_handler: Option<Box<PanicHandler>>,
    start_handler: Option<Box<ThreadHandler>>,
    exit_handler: Option<Box<ThreadHandler>>,
}

impl ThreadPoolBuilder {
    /// A builder with every option at its default: as many workers as logical CPUs (or
    /// [`NUM_THREADS_ENV`]), default thread names and stack size, no handlers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the number of worker threads (a count).
    ///
    /// `0` (the default) means: [`NUM_THREADS_ENV`] if set to a positive number, else
    /// `num_cpus::get()` (logical CPUs, so an 8P+4E machine gets 12 workers). Counts
    /// above [`max_num_threads`](crate::max_num_threads) (65,535) are clamped to it, as in
    /// rayon-core.
    pub fn num_threads(mut self, num_threads: usize) -> Self {
        self.num_threads = num_threads;
        self
    }

    /// Names worker threads: `closure(index)` is called once per worker, on the building
    /// thread, with the worker's index `0..num_threads`.
    ///
    /// # Panics
    /// A panic in `closure` propagates out of `build`; the threads already started exit.
    pub fn thread_name<F>(mut self, closure: F) -> Self
    where
        F: FnMut(usize) -> String + 'static,
    {
        self.get_thread_name = Some(Box::new(closure));
        self
    }

    /// Sets each worker thread's stack size in bytes (passed to
    /// `std::thread::Builder::stack_size`).
    pub fn stack_size(mut self, stack_size: usize) -> Self {
        self.stack_size = Some(stack_size);
        self
    }

    /// Receives panics that have no caller to go to: from `spawn`ed jobs and from the
    /// start and exit handlers. Called on the worker that caught the panic.
    ///
    /// Without a handler such a panic is reported once by the standard panic hook (when it
    /// happens) and then dropped, and the pool keeps running. **This differs from
    /// rayon-core, which aborts the process.** If the handler itself panics, that panic is
    /// reported by the hook and dropped too: no panic ever kills a worker thread.
    pub fn panic_handler<H>(mut self, panic_handler: H) -> Self
    where
        H: Fn(Box<dyn Any + Send>) + Send + Sync + 'static,
    {
        self.panic_handler = Some(Box::new(panic_handler));
        self
    }

    /// Runs `start_handler(index)` on each worker thread before it takes any job.
    ///
    /// # Panics
    /// A panic in the handler goes to the [`panic_handler`](Self::panic_handler); the
    /// worker still starts.
    pub fn start_handler<H>(mut self, start_handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.start_handler = Some(Box::new(start_handler));
        self
    }

    /// Runs `exit_handler(index)` on each worker thread after the pool terminated and the
    /// worker left its loop. Never runs for the global pool, which lives for the process.
    ///
    /// # Panics
    /// A panic in the handler goes to the [`panic_handler`](Self::panic_handler).
    pub fn exit_handler<H>(mut self, exit_handler: H) -> Self
    where
        H: Fn(usize) + Send + Sync + 'static,
    {
        self.exit_handler = Some(Box::new(exit_handler));
        self
    }

    /// Starts the worker threads and returns the pool. It does not wait for the threads
    /// to start.
    ///
    /// # Errors
    /// [`ThreadPoolBuildError`] if [`NUM_THREADS_ENV`] is not a number, or if the OS
    /// refuses to start a thread (e.g. an impossible [`stack_size`](Self::stack_size));
    /// in that case every thread already started exits (and runs its exit handler).
    pub fn build(self) -> Result<ThreadPool, ThreadPoolBuildError> {
        Registry::new(self).map(ThreadPool::from_registry)
    }

    /// Builds the global pool, the one used by the free functions ([`join`](crate::join),
    /// [`spawn`](crate::spawn), ...) outside any pool. Waits until every worker started.
    ///
    /// # Errors
    /// As [`build`](Self::build), plus an error if the global pool already exists (built
    /// by an earlier call, or lazily by a free function).
    pub fn build_global(self) -> Result<(), ThreadPoolBuildError> {
        registry::init_global_registry(self)
    }

    /// The thread count this builder will use (resolving `0` as documented).
    pub(crate) fn get_num_threads(&self) -> Result<usize, ThreadPoolBuildError> {
        let n = if self.num_threads > 0 {
            self.num_threads
        } else {
            match std::env::var(NUM_THREADS_ENV) {
                // Empty (`export STEALPOOL_NUM_THREADS=`) counts as unset.
                Ok(value) if value.trim().is_empty() => default_num_threads(),
                Ok(value) => match value.trim().parse::<usize>() {
                    Ok(0) => default_num_threads(),
                    Ok(n) => n,
                    Err(_) => {
                        return Err(ThreadPoolBuildError::new(ErrorKind::InvalidNumThreads(
                            value,
                        )))
                    }
                },
                Err(std::env::VarError::NotPresent) => default_num_threads(),
                Err(std::env::VarError::NotUnicode(value)) => {
                    return Err(ThreadPoolBuildError::new(ErrorKind::InvalidNumThreads(
                        value.to_string_lossy().into_owned(),
                    )))
                }
            }
        };
        Ok(n.min(THREADS_MAX))
    }

    pub(crate) fn get_thread_name(&mut self, index: usize) -> Option<String> {
        self.get_thread_name.as_mut().map(|f| f(index))
    }

    pub(crate) fn get_stack_size(&self) -> Option<usize> {
        self.stack_size
    }

    pub(crate) fn take_panic_handler(&mut self) -> Option<Box<PanicHandler>> {
        self.panic_handler.take()
    }

    pub(crate) fn take_start_handler(&mut self) -> Option<Box<ThreadHandler>> {
        self.start_handler.take()
    }

    pub(crate) fn take_exit_handler(&mut self) -> Option<Box<ThreadHandler>> {
        self.exit_handler.take()
    }
}

fn default_num_threads() -> usize {
    num_cpus::get().max(1)
}

impl fmt::Debug for ThreadPoolBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let closure = |present: bool| if present { Some("<closure>") } else { None };
        f.debug_struct("ThreadPoolBuilder")
            .field("num_threads", &self.num_threads)
            .field("get_thread_name", &closure(self.get_thread_name.is_some()))
            .field("stack_size", &self.stack_size)
            .field("panic_handler", &closure(self.panic_handler.is_some()))
            .field("start_handler", &closure(self.start_handler.is_some()))
            .field("exit_handler", &closure(self.exit_handler.is_some()))
            .finish()
    }
}

/// Why a pool could not be built.
///
/// Opaque like rayon-core's: inspect it through `Display` and [`Error::source`]. It is
/// `Send + Sync`.
#[derive(Debug)]
pub struct ThreadPoolBuildError {
    kind: ErrorKind,
}

#[derive(Debug)]
pub(crate) enum ErrorKind {
    /// `build_global` after the global pool exists.
    GlobalPoolAlreadyInitialized,
    /// The OS refused to start a worker thread.
    IOError(io::Error),
    /// `STEALPOOL_NUM_THREADS` holds something that is not a thread count.
    InvalidNumThreads(String),
}

const GLOBAL_POOL_ALREADY_INITIALIZED: &str =
    "The global thread pool has already been initialized.";

impl ThreadPoolBuildError {
    pub(crate) fn new(kind: ErrorKind) -> Self {
        ThreadPoolBuildError { kind }
    }
}

impl fmt::Display for ThreadPoolBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::GlobalPoolAlreadyInitialized => f.write_str(GLOBAL_POOL_ALREADY_INITIALIZED),
            ErrorKind::IOError(err) => write!(f, "could not start a worker thread: {err}"),
            ErrorKind::InvalidNumThreads(value) => write!(
                f,
                "{NUM_THREADS_ENV}={value:?} is not a thread count (expected a non-negative integer; 0 means one per CPU)"
            ),
        }
    }
}

impl Error for ThreadPoolBuildError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match &self.kind {
            ErrorKind::IOError(err) => Some(err),
            _ => None,
        }
    }
}
