//! Starting a pool: checks the builder's settings, makes the registry, and starts one
//! thread per worker through the spawn handler (the building thread of a
//! `use_current_thread` pool becomes worker 0 later, once the pool is kept).

use crate::pool::build_error::{ErrorKind, ThreadPoolBuildError};
use crate::pool::config::Config;
use crate::pool::registry::Registry;
use crate::pool::spawn_handler::ThreadSpawn;
use crate::pool::worker::{ThreadBuilder, WorkerThread};
use crate::sync::unchecked::Arc;
use std::mem;

/// Builds a registry from `config` and starts its worker threads through `config`'s spawn
/// handler. `global`: the global pool (its timeline file, if any, is the
/// `STEALPOOL_TIMELINE` path itself).
///
/// # Errors
/// A bad thread count or isolation switch from the environment, the current thread
/// already being a worker (with `use_current_thread`), or an I/O error from starting a
/// thread; in the last case every thread already started is told to exit.
pub(crate) fn start_registry<S: ThreadSpawn>(
    mut config: Config<S>,
    global: bool,
) -> Result<Arc<Registry>, ThreadPoolBuildError> {
    let n_threads = config.num_threads()?;
    let isolate_waits = config.isolate_waits()?;
    let use_current_thread = config.use_current_thread;
    // Until the build is over, this thread counts as worker 0: user code run below (the
    // spawn handler, `thread_name`) cannot make it a worker of another pool meanwhile.
    let adopting = match use_current_thread {
        true => Some(
            WorkerThread::adopting()
                .ok_or_else(|| ThreadPoolBuildError::new(ErrorKind::CurrentThreadAlreadyInPool))?,
        ),
        false => None,
    };
    let (registry, queues) = Registry::new(&mut config, n_threads, isolate_waits, global);

    // If a thread fails to start, or `thread_name` panics, the threads already started
    // must still be told to exit.
    let t1000 = Terminator(&registry);
    for (index, queues) in queues.into_iter().enumerate() {
        // Named for every index, also the current thread's (as in rayon-core, whose
        // `thread_name` closure sees index 0 even with `use_current_thread`).
        let name = config.thread_name(index);
        if index == 0 && use_current_thread {
            // Worker 0's queue ends wait in the registry until the caller has decided to
            // keep it (`adopt_current_thread`): `build_global` may yet lose the race for
            // the global slot, and the thread must not be left a worker of a pool that
            // was thrown away.
            registry.keep_current_thread_queues(queues);
            continue;
        }
        let thread = ThreadBuilder::new(
            name,
            config.stack_size,
            queues,
            Arc::clone(&registry),
            index,
        );
        match config.spawn_handler.spawn(thread) {
            Ok(Some(handle)) => registry.keep_thread_handle(handle),
            Ok(None) => {}
            Err(err) => return Err(ThreadPoolBuildError::new(ErrorKind::IOError(err))),
        }
    }
    drop(adopting);
    mem::forget(t1000);
    Ok(registry)
}

/// Terminates a half-built registry if building it fails or panics.
struct Terminator<'a>(&'a Arc<Registry>);

impl Drop for Terminator<'_> {
    fn drop(&mut self) {
        self.0.terminate();
    }
}
