//! Making a registry: its shared state, and the queue ends each worker will own
//! ([`WorkerQueues`]), handed back for the threads that will run the workers.

use super::{Registry, TerminateCount, ThreadInfo, WorkerQueues};
use crate::job::{JobFifo, JobRef};
use crate::latch::{CoreLatch, LatchOwner, LockLatch};
use crate::metrics::RegistryCounters;
use crate::pool::config::Config;
use crate::pool::private_stack::PrivateStack;
use crate::sleep::Sleep;
use crate::sync::deque::{Injector, Worker};
use crate::sync::unchecked::{Arc, Mutex};
use crate::timeline_hooks;
use crossbeam_utils::CachePadded;

impl Registry {
    /// A registry of `n_threads` workers with `config`'s handlers and options (the
    /// handlers are taken out of `config`), and the queue ends of each worker, by index.
    /// `global`: the global pool (its timeline file, if any, is the `STEALPOOL_TIMELINE`
    /// path itself). No thread is started here (`pool::start`).
    pub(crate) fn new<S>(
        config: &mut Config<S>,
        n_threads: usize,
        isolate_waits: bool,
        global: bool,
    ) -> (Arc<Registry>, Vec<WorkerQueues>) {
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
                private_stack: Arc::new(CachePadded::new(PrivateStack::new(
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
            current_thread_worker: config.use_current_thread,
            isolate_waits,
            recorder: timeline_hooks::recorder_for(n_threads, config.record_timeline, global),
        });
        (registry, queues)
    }
}
