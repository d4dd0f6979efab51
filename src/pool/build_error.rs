//! [`ThreadPoolBuildError`]: why a pool could not be built.

use std::error::Error;

use super::env::{ISOLATE_WAITS_ENV, NUM_THREADS_ENV};
use std::fmt;
use std::io;

/// Why a pool could not be built.
///
/// Opaque like rayon-core's: inspect it through `Display` and [`Error::source`]. It is
/// `Send + Sync`.
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// // A worker of `pool` cannot become worker 0 of another pool.
/// let result = pool.install(|| {
///     stealpool::ThreadPoolBuilder::new().num_threads(2).use_current_thread().build()
/// });
/// let err: stealpool::ThreadPoolBuildError = result.unwrap_err();
/// assert_eq!(err.to_string(), "The current thread is already part of another thread pool.");
/// assert!(std::error::Error::source(&err).is_none());
/// ```
#[derive(Debug)]
pub struct ThreadPoolBuildError {
    /// What went wrong.
    kind: ErrorKind,
}

/// The reasons a build fails, behind the opaque [`ThreadPoolBuildError`].
#[derive(Debug)]
pub(crate) enum ErrorKind {
    /// `build_global` after the global pool exists.
    GlobalPoolAlreadyInitialized,
    /// `use_current_thread` on a thread that already is a worker of a pool.
    CurrentThreadAlreadyInPool,
    /// The OS refused to start a worker thread.
    IOError(io::Error),
    /// `STEALPOOL_NUM_THREADS` holds something that is not a thread count.
    InvalidNumThreads(String),
    /// `STEALPOOL_ISOLATE_WAITS` holds something other than `0` or `1`.
    InvalidIsolateWaits(String),
}

/// The message of [`ErrorKind::GlobalPoolAlreadyInitialized`], as in rayon-core.
const GLOBAL_POOL_ALREADY_INITIALIZED: &str =
    "The global thread pool has already been initialized.";
/// The message of [`ErrorKind::CurrentThreadAlreadyInPool`], as in rayon-core.
const CURRENT_THREAD_ALREADY_IN_POOL: &str =
    "The current thread is already part of another thread pool.";

impl ThreadPoolBuildError {
    /// An error for `kind`.
    pub(crate) fn new(kind: ErrorKind) -> Self {
        ThreadPoolBuildError { kind }
    }
}

impl fmt::Display for ThreadPoolBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::GlobalPoolAlreadyInitialized => f.write_str(GLOBAL_POOL_ALREADY_INITIALIZED),
            ErrorKind::CurrentThreadAlreadyInPool => f.write_str(CURRENT_THREAD_ALREADY_IN_POOL),
            // The I/O error itself, as in rayon-core (`source()` returns it too).
            ErrorKind::IOError(err) => err.fmt(f),
            ErrorKind::InvalidNumThreads(value) => write!(
                f,
                "{NUM_THREADS_ENV}={value:?} is not a thread count (expected a non-negative integer; 0 means one per CPU)"
            ),
            ErrorKind::InvalidIsolateWaits(value) => write!(
                f,
                "{ISOLATE_WAITS_ENV}={value:?} is not a switch (expected 1 to isolate waits, 0 or empty not to)"
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
