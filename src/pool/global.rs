//! The global pool, built lazily on first use or once by `build_global`, and the entry
//! points that fall back to it when the calling thread is no worker: the current
//! registry, and running a closure on a worker of the current pool.

use crate::pool::build_error::{ErrorKind, ThreadPoolBuildError};
use crate::pool::config::Config;
use crate::pool::registry::Registry;
use crate::pool::spawn_handler::{DefaultSpawn, ThreadSpawn};
use crate::pool::start::start_registry;
use crate::pool::worker::{adopt_current_thread, in_worker_of, WorkerThread};
use crate::sync::unchecked::{Arc, OnceLock};

/// The global pool's registry, once built.
static THE_REGISTRY: OnceLock<Arc<Registry>> = OnceLock::new();

/// The global pool's registry, built with the default builder on first use.
///
/// # Panics
/// If the global pool cannot be built (e.g. the OS refuses to start threads, or
/// `STEALPOOL_NUM_THREADS` is not a number). rayon-core panics here too.
pub(crate) fn global_registry() -> &'static Arc<Registry> {
    THE_REGISTRY.get_or_init(|| {
        // The default builder runs no user code, so this cannot re-enter `get_or_init`.
        start_registry(Config::new(DefaultSpawn), true).unwrap_or_else(|err| {
            panic!("stealpool: the global thread pool could not be built: {err}")
        })
    })
}

/// Builds the global pool from `config` (for `build_global`).
///
/// The registry is built *before* it is offered to the `OnceLock`, with no lock held, so
/// user code in the builder (a `thread_name` closure) may call free functions: if one of
/// them builds the default global pool first, this returns "already initialized" and the
/// registry built here is terminated.
pub(crate) fn init_global_registry<S: ThreadSpawn>(
    config: Config<S>,
) -> Result<(), ThreadPoolBuildError> {
    let already = || {
        Err(ThreadPoolBuildError::new(
            ErrorKind::GlobalPoolAlreadyInitialized,
        ))
    };
    if THE_REGISTRY.get().is_some() {
        return already();
    }
    let mut candidate = Some(start_registry(config, true)?);
    let registry = THE_REGISTRY.get_or_init(|| candidate.take().expect("offered once"));
    match candidate {
        None => {
            adopt_current_thread(registry);
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

/// The registry of the current worker, else the global one.
pub(crate) fn current_registry() -> Arc<Registry> {
    WorkerThread::with_current(|worker| match worker {
        Some(worker) => Arc::clone(worker.registry()),
        None => Arc::clone(global_registry()),
    })
}

/// Runs `op` on a worker: inline if the current thread is a worker of any pool, else on
/// the global pool (blocking until it finishes).
pub(crate) fn in_worker<OP, R>(op: OP) -> R
where
    OP: FnOnce(&WorkerThread, bool) -> R + Send,
    R: Send,
{
    WorkerThread::with_current(|worker| match worker {
        Some(worker) => op(worker, false),
        None => in_global_pool(op),
    })
}

/// `in_worker` from a thread that is not a worker: on the global pool.
#[cold]
#[inline(never)]
fn in_global_pool<OP, R>(op: OP) -> R
where
    OP: FnOnce(&WorkerThread, bool) -> R + Send,
    R: Send,
{
    in_worker_of(global_registry(), op)
}
