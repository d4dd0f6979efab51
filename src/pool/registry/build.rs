//! Building a registry: starting its workers, and adopting the building thread as
//! worker 0 (`use_current_thread`).

use super::global::Terminator;
use super::thread_builder::ThreadBuilder;
use super::{Registry, TerminateCount, ThreadInfo, WorkerQueues};
use crate::job::{JobFifo, JobRef};
use crate::latch::{CoreLatch, Latch, LatchOwner, LockLatch};
use crate::metrics::RegistryCounters;
use crate::pool::build_error::{ErrorKind, ThreadPoolBuildError};
use crate::pool::config::Config;
use crate::pool::pending::PendingHalves;
use crate::pool::spawn_handler::ThreadSpawn;
use crate::pool::worker::WorkerThread;
use crate::sleep::{Sleep, THREADS_MAX};
use crate::sync::deque::{Injector, Worker};
use crate::sync::unchecked::{Arc, Mutex};
use crate::timeline_hooks;
use crossbeam_utils::CachePadded;
use std::mem;

impl Registry {
    /// Builds the registry and starts its worker threads through `config`'s spawn
    /// handler. `global`: the global pool (its timeline file, if any, is the
    /// `STEALPOOL_TIMELINE` path itself).
    ///
    /// # Errors
    /// A bad thread count from the environment, the current thread already being a worker
    /// (with `use_current_thread`), or an I/O error from starting a thread; in the last
    /// case every thread already started is told to exit.
    pub(crate) fn new<S: ThreadSpawn>(
        mut config: Config<S>,
        global: bool,
    ) -> Result<Arc<Registry>, ThreadPoolBuildError> {
        let n_threads = config.num_threads()?.min(THREADS_MAX);
        let isolate_waits = config.isolate_waits()?;
        let use_current_thread = config.use_current_thread;
        if use_current_thread && WorkerThread::is_worker_thread() {
            return Err(ThreadPoolBuildError::new(
                ErrorKind::CurrentThreadAlreadyInPool,
            ));
        }
        let breadth_first = config.breadth_first;
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
        let queues: Vec<WorkerQueues> = workers
            .into_iter()
            .zip(&broadcasts)
            .map(|(deque, broadcasts)| WorkerQueues {
                deque,
                batch: Worker::new_fifo(),
                broadcasts: broadcasts.stealer(),
            })
            .collect();
        let sleep = Arc::new(Sleep::new(n_threads));
        let thread_infos = queues
            .iter()
            .enumerate()
            .map(|(index, queues)| ThreadInfo {
                primed: LockLatch::new(),
                stopped: LockLatch::new(),
                terminate: CoreLatch::new(),
                stealer: queues.deque.stealer(),
                batch: queues.batch.stealer(),
                pending: Arc::new(CachePadded::new(PendingHalves::new(
                    LatchOwner {
                        sleep: Arc::clone(&sleep),
                        index,
                    },
                    n_threads > 1,
                ))),
                fifo: Arc::new(JobFifo::new()),
            })
            .collect();

        let registry = Arc::new(Registry {
            thread_infos,
            sleep,
            injected_jobs: Injector::new(),
            broadcasts: Mutex::new(broadcasts),
            counters: RegistryCounters::new(n_threads),
            panic_handler: config.panic_handler.take().map(std::sync::Arc::from),
            start_handler: config.start_handler.take(),
            exit_handler: config.exit_handler.take(),
            terminate_count: TerminateCount::new(1),
            current_thread_parts: Mutex::new(None),
            thread_handles: Mutex::new(Vec::new()),
            current_thread_worker: use_current_thread,
            isolate_waits,
            recorder: timeline_hooks::recorder_for(n_threads, config.record_timeline, global),
        });

        // If a thread fails to start, or `thread_name` panics, the threads already
        // started must still be told to exit.
        let t1000 = Terminator(&registry);
        let mut current_thread_parts = None;
        for (index, queues) in queues.into_iter().enumerate() {
            // Named for every index, also the current thread's (as in rayon-core, whose
            // `thread_name` closure sees index 0 even with `use_current_thread`).
            let name = config.thread_name(index);
            if index == 0 && use_current_thread {
                current_thread_parts = Some(queues);
                continue;
            }
            let thread = ThreadBuilder {
                name,
                stack_size: config.stack_size,
                queues,
                registry: Arc::clone(&registry),
                index,
            };
            match config.spawn_handler.spawn(thread) {
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
        let Some(queues) = self.current_thread_parts.lock().take() else {
            return;
        };
        // It does not run the main loop: it takes part whenever it waits inside the pool
        // (as in rayon-core). Its `WorkerThread` lives in a thread-local until the thread
        // exits. The current thread is not a worker: `Registry::new` checked that on this
        // same thread, and nothing in between made it one.
        WorkerThread::adopt(WorkerThread::new(queues, Arc::clone(self), 0));
        // SAFETY: the latch lives in the registry, which `self` keeps alive.
        unsafe { LockLatch::set(&self.thread_infos[0].primed) };
    }

    /// Blocks until every worker has started.
    pub(crate) fn wait_until_primed(&self) {
        for info in &self.thread_infos {
            info.primed.wait();
        }
    }

    /// Whether every worker has started, without blocking.
    pub(crate) fn all_started(&self) -> bool {
        self.thread_infos.iter().all(|info| info.primed.probe())
    }

    /// Whether some worker has started, without blocking.
    pub(crate) fn any_started(&self) -> bool {
        self.thread_infos.iter().any(|info| info.primed.probe())
    }
}
