//! What a registry is built from ([`Config`]: the builder's settings, tokio's
//! `runtime::Config`), and the environment variables that set the thread count when it is
//! left at `0` ([`NUM_THREADS_ENV`], [`RAYON_NUM_THREADS_ENV`]) and isolated waits when
//! the builder did not choose ([`ISOLATE_WAITS_ENV`]).

use super::build_error::{ErrorKind, ThreadPoolBuildError};
use super::registry::{PanicHandler, ThreadHandler};
use super::spawn_handler::DefaultSpawn;
use crate::sleep::THREADS_MAX;

/// The environment variable that sets the default number of worker threads.
///
/// Read when a builder has `num_threads(0)` (the default). Unset, empty or `0` means one
/// worker per logical CPU (`num_cpus::get()`); surrounding whitespace is ignored; any other
/// value that is not a non-negative integer makes
/// [`ThreadPoolBuilder::build`](crate::ThreadPoolBuilder::build) fail (and the lazily built
/// global pool panic with that error). It plays the role of rayon-core's
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

/// The environment variable that isolates the waits of every job of every pool whose
/// builder did not call [`isolate_waits`](crate::ThreadPoolBuilder::isolate_waits), the
/// global pool included: `1` runs each of their jobs (and each half of every `join`) as if
/// inside its own [`isolate`](fn@crate::isolate), as `isolate_waits(true)` does, so that a
/// program using rayon through `compat/rayon-core` gets it without a code change
/// (`docs/isolation.md`).
///
/// Unset, empty or `0`: off. `1`: on. Surrounding whitespace is ignored; any other value
/// makes [`ThreadPoolBuilder::build`](crate::ThreadPoolBuilder::build) fail (and the
/// lazily built global pool panic with that error), so a typo does not silently leave the
/// waits unisolated. Read when a pool is built.
///
/// ```
/// use stealpool::{ThreadPoolBuilder, ISOLATE_WAITS_ENV};
/// std::env::set_var(ISOLATE_WAITS_ENV, "yes");
/// assert!(ThreadPoolBuilder::new().num_threads(1).build().is_err()); // not 0 or 1
/// std::env::set_var(ISOLATE_WAITS_ENV, "1");
/// let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
/// assert_eq!(pool.install(|| stealpool::join(|| 1, || 2)), (1, 2));
/// // The builder's choice wins over the variable.
/// std::env::set_var(ISOLATE_WAITS_ENV, "oops");
/// assert!(ThreadPoolBuilder::new().isolate_waits(false).build().is_ok());
/// ```
pub const ISOLATE_WAITS_ENV: &str = "STEALPOOL_ISOLATE_WAITS";

/// A registry's settings, as `ThreadPoolBuilder` collects them (its fields are the
/// builder's options, documented on its methods).
pub(crate) struct Config<S> {
    /// `0`: from the environment ([`Config::num_threads`]).
    pub(crate) num_threads: usize,
    /// The building thread becomes worker 0 (`ThreadPoolBuilder::use_current_thread`).
    pub(crate) use_current_thread: bool,
    /// Names worker `index` (`ThreadPoolBuilder::thread_name`); `None`: unnamed threads.
    pub(crate) thread_name: Option<Box<dyn FnMut(usize) -> String>>,
    /// Worker stack size in bytes (`ThreadPoolBuilder::stack_size`); `None`: the default.
    pub(crate) stack_size: Option<usize>,
    /// Receives panics that have no caller to go to (`ThreadPoolBuilder::panic_handler`).
    pub(crate) panic_handler: Option<Box<PanicHandler>>,
    /// Runs on each worker before its first job (`ThreadPoolBuilder::start_handler`).
    pub(crate) start_handler: Option<Box<ThreadHandler>>,
    /// Runs on each worker after its last job (`ThreadPoolBuilder::exit_handler`).
    pub(crate) exit_handler: Option<Box<ThreadHandler>>,
    /// FIFO worker deques (`ThreadPoolBuilder::breadth_first`, deprecated).
    pub(crate) breadth_first: bool,
    /// Records a worker timeline (`ThreadPoolBuilder::timeline`).
    pub(crate) record_timeline: bool,
    /// Every job runs in a region of its own (`ThreadPoolBuilder::isolate_waits`);
    /// `None`: from the environment ([`Config::isolate_waits`]).
    pub(crate) isolate_waits: Option<bool>,
    /// How the worker threads are started.
    pub(crate) spawn_handler: S,
}

impl Default for Config<DefaultSpawn> {
    fn default() -> Self {
        Config {
            num_threads: 0,
            use_current_thread: false,
            thread_name: None,
            stack_size: None,
            panic_handler: None,
            start_handler: None,
            exit_handler: None,
            breadth_first: false,
            record_timeline: false,
            isolate_waits: None,
            spawn_handler: DefaultSpawn,
        }
    }
}

impl<S> Config<S> {
    /// The same settings with another way of starting threads.
    pub(crate) fn with_spawn_handler<T>(self, spawn_handler: T) -> Config<T> {
        Config {
            num_threads: self.num_threads,
            use_current_thread: self.use_current_thread,
            thread_name: self.thread_name,
            stack_size: self.stack_size,
            panic_handler: self.panic_handler,
            start_handler: self.start_handler,
            exit_handler: self.exit_handler,
            breadth_first: self.breadth_first,
            record_timeline: self.record_timeline,
            isolate_waits: self.isolate_waits,
            spawn_handler,
        }
    }

    /// The thread count to start: `num_threads`, or for `0` the environment's count or
    /// one per logical CPU (rules at [`NUM_THREADS_ENV`]); at most [`THREADS_MAX`].
    ///
    /// # Errors
    /// [`NUM_THREADS_ENV`] holds something that is not a thread count.
    pub(crate) fn num_threads(&self) -> Result<usize, ThreadPoolBuildError> {
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

    /// Whether every job runs in a region of its own: the builder's choice, else
    /// [`ISOLATE_WAITS_ENV`] (rules there).
    ///
    /// # Errors
    /// [`ISOLATE_WAITS_ENV`] holds something other than `0` or `1`.
    pub(crate) fn isolate_waits(&self) -> Result<bool, ThreadPoolBuildError> {
        if let Some(isolate) = self.isolate_waits {
            return Ok(isolate);
        }
        match std::env::var(ISOLATE_WAITS_ENV) {
            Err(std::env::VarError::NotPresent) => Ok(false),
            Ok(value) => match value.trim() {
                "" | "0" => Ok(false),
                "1" => Ok(true),
                _ => Err(ThreadPoolBuildError::new(ErrorKind::InvalidIsolateWaits(
                    value,
                ))),
            },
            Err(std::env::VarError::NotUnicode(value)) => Err(ThreadPoolBuildError::new(
                ErrorKind::InvalidIsolateWaits(value.to_string_lossy().into_owned()),
            )),
        }
    }

    /// The name of worker `index`, if the builder names threads.
    pub(crate) fn thread_name(&mut self, index: usize) -> Option<String> {
        self.thread_name.as_mut().map(|f| f(index))
    }
}

/// One worker per logical CPU (`num_cpus::get()`), at least one.
fn default_num_threads() -> usize {
    num_cpus::get().max(1)
}
