//! What a registry is built from ([`Config`]: the builder's settings, tokio's
//! `runtime::Config`), and how the settings left to the environment are read from it
//! (`env.rs` names the variables).

use super::build_error::{ErrorKind, ThreadPoolBuildError};
use super::env::{
    ISOLATE_WAITS_ENV, NUM_THREADS_ENV, RAYON_NUM_THREADS_ENV, RAYON_RS_NUM_CPUS_ENV,
};
use crate::sleep::THREADS_MAX;
use std::any::Any;

/// Receives panics that have nowhere else to go (`spawn`, start and exit handlers).
pub(crate) type PanicHandler = dyn Fn(Box<dyn Any + Send>) + Send + Sync;

/// Runs on each worker thread before it starts (start) or after it stops (exit).
pub(crate) type ThreadHandler = dyn Fn(usize) + Send + Sync;

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

impl<S> Config<S> {
    /// The builder's defaults, starting threads with `spawn_handler`.
    pub(crate) fn new(spawn_handler: S) -> Self {
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
            spawn_handler,
        }
    }

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
                Err(std::env::VarError::NotPresent) => {
                    rayon_num_threads().unwrap_or_else(default_num_threads)
                }
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

/// The thread count rayon-core 1.13 reads from its variables, if they set one:
/// [`RAYON_NUM_THREADS_ENV`] when it is a positive integer (`0`: none, one per CPU,
/// without looking further), else the deprecated `RAYON_RS_NUM_CPUS` when it is one. The
/// values are parsed as written, as rayon-core does.
fn rayon_num_threads() -> Option<usize> {
    let read = |var| std::env::var(var).ok()?.parse::<usize>().ok();
    match read(RAYON_NUM_THREADS_ENV) {
        Some(0) => None,
        Some(n) => Some(n),
        None => read(RAYON_RS_NUM_CPUS_ENV).filter(|&n| n > 0),
    }
}

/// One worker per logical CPU (`num_cpus::get()`), at least one.
fn default_num_threads() -> usize {
    num_cpus::get().max(1)
}
