//! How many workers a builder starts: [`ThreadPoolBuilder::num_threads`], and the
//! environment variables ([`NUM_THREADS_ENV`], [`RAYON_NUM_THREADS_ENV`]) that set the
//! count when it is left at `0`.

use super::{ErrorKind, ThreadPoolBuildError, ThreadPoolBuilder};
use crate::sleep::THREADS_MAX;

/// The environment variable that sets the default number of worker threads.
///
/// Read when a builder has `num_threads(0)` (the default). Unset, empty or `0` means one
/// worker per logical CPU (`num_cpus::get()`); surrounding whitespace is ignored; any other
/// value that is not a non-negative integer makes [`ThreadPoolBuilder::build`] fail (and
/// the lazily built global pool panic with that error). It plays the role of rayon-core's
/// `RAYON_NUM_THREADS`; when it is *unset*, [`RAYON_NUM_THREADS_ENV`] is read instead, so a
/// deployment configured for rayon keeps its thread count after switching.
///
/// ```
/// use stealpool::{ThreadPoolBuilder, NUM_THREADS_ENV};
/// std::env::set_var(NUM_THREADS_ENV, "three");
/// assert!(ThreadPoolBuilder::new().build().is_err()); // not a thread count
/// std::env::set_var(NUM_THREADS_ENV, "3");
/// assert_eq!(ThreadPoolBuilder::new().build().unwrap().current_num_threads(), 3);
/// // An explicit `num_threads` wins over the variable.
/// assert_eq!(ThreadPoolBuilder::new().num_threads(2).build().unwrap().current_num_threads(), 2);
/// ```
pub const NUM_THREADS_ENV: &str = "STEALPOOL_NUM_THREADS";

/// rayon-core's thread-count variable, `RAYON_NUM_THREADS`: read only when
/// [`NUM_THREADS_ENV`] is unset, with rayon-core's rules (a positive integer sets the
/// count; anything else, including `0`, is ignored).
///
/// ```
/// use stealpool::{ThreadPoolBuilder, NUM_THREADS_ENV, RAYON_NUM_THREADS_ENV};
/// std::env::remove_var(NUM_THREADS_ENV); // the rayon variable counts only when this is unset
/// std::env::set_var(RAYON_NUM_THREADS_ENV, "2");
/// assert_eq!(ThreadPoolBuilder::new().build().unwrap().current_num_threads(), 2);
/// ```
pub const RAYON_NUM_THREADS_ENV: &str = "RAYON_NUM_THREADS";

impl<S> ThreadPoolBuilder<S> {
    /// Sets the number of worker threads (a count).
    ///
    /// `0` (the default) means: [`NUM_THREADS_ENV`] if set to a positive number, else (if
    /// it is unset) [`RAYON_NUM_THREADS_ENV`] if set to a positive number, else
    /// `num_cpus::get()` (logical CPUs, so an 8P+4E machine gets 12 workers). Counts
    /// above [`max_num_threads`](crate::max_num_threads) (65,535) are clamped to it, as in
    /// rayon-core.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    /// assert_eq!(pool.current_num_threads(), 3);
    /// assert_eq!(pool.broadcast(|ctx| ctx.index()), [0, 1, 2]);
    /// ```
    pub fn num_threads(mut self, num_threads: usize) -> Self {
        self.num_threads = num_threads;
        self
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
                Err(std::env::VarError::NotPresent) => match std::env::var(RAYON_NUM_THREADS_ENV)
                    .ok()
                    .and_then(|v| v.trim().parse::<usize>().ok())
                {
                    // rayon-core's rule: only a positive number counts.
                    Some(n) if n > 0 => n,
                    _ => default_num_threads(),
                },
                Err(std::env::VarError::NotUnicode(value)) => {
                    return Err(ThreadPoolBuildError::new(ErrorKind::InvalidNumThreads(
                        value.to_string_lossy().into_owned(),
                    )))
                }
            }
        };
        Ok(n.min(THREADS_MAX))
    }
}

fn default_num_threads() -> usize {
    num_cpus::get().max(1)
}
