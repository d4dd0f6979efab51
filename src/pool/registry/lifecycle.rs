//! A registry's life: its workers' start and stop as the registry sees them, the
//! terminate count (every `spawn` holds the pool alive until it ran), termination,
//! `wait_idle`, waiting for the workers to stop, and the worker threads' join handles
//! (joined by `shutdown`, else each worker detaches its own).

use super::terminate::Released;
use super::{Registry, WorkerQueues};
use crate::latch::{CoreLatch, Latch, LockLatch};
use std::mem;
use std::thread::JoinHandle;

impl Registry {
    /// Keeps the join handle of a worker thread the spawn handler started.
    pub(crate) fn keep_thread_handle(&self, handle: JoinHandle<()>) {
        self.thread_handles.lock().push(handle);
    }

    /// With `use_current_thread`: keeps worker 0's queue ends until the building thread
    /// adopts them ([`take_current_thread_queues`](Self::take_current_thread_queues)).
    pub(crate) fn keep_current_thread_queues(&self, queues: WorkerQueues) {
        *self.current_thread_parts.lock() = Some(queues);
    }

    /// Worker 0's queue ends, once, if the building thread is to become worker 0.
    pub(crate) fn take_current_thread_queues(&self) -> Option<WorkerQueues> {
        self.current_thread_parts.lock().take()
    }

    /// Worker `index` has installed itself on its thread (`wait_until_primed` waits for
    /// this).
    pub(crate) fn worker_started(&self, index: usize) {
        // SAFETY: the latch lives in the registry, which `self` keeps alive.
        unsafe { LockLatch::set(&self.thread_infos[index].primed) };
    }

    /// Runs the start handler, if any, for worker `index` (on its thread); a panic goes
    /// to the panic handler.
    pub(crate) fn run_start_handler(&self, index: usize) {
        if let Some(handler) = self.start_handler.as_ref() {
            self.catch_unwind(|| handler(index));
        }
    }

    /// Runs the exit handler, if any, for worker `index` (on its thread); a panic goes to
    /// the panic handler.
    pub(crate) fn run_exit_handler(&self, index: usize) {
        if let Some(handler) = self.exit_handler.as_ref() {
            self.catch_unwind(|| handler(index));
        }
    }

    /// Worker `index` has left its loop and run its exit handler: the last thing its
    /// thread does with the registry (`shutdown` returns once every worker got here).
    pub(crate) fn worker_stopped(&self, index: usize) {
        // SAFETY: the latch lives in the registry, which `self` keeps alive.
        unsafe { LockLatch::set(&self.thread_infos[index].stopped) };
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

    /// `n` more outstanding jobs (a `spawn`, the copies of a broadcast) keep the workers
    /// alive; each later releases its reference with [`terminate`](Self::terminate).
    /// Returns `false`, and changes nothing, if the pool has already terminated: only code
    /// running after termination (an exit handler, the building thread of a dropped
    /// `use_current_thread` pool) can see that, and there is no worker left to run a new
    /// job.
    #[inline]
    pub(crate) fn increment_terminate_count(&self, n: usize) -> bool {
        self.terminate_count.acquire(n)
    }

    /// Drops one reference; the last one tells every worker to exit once idle. When only
    /// the pool handle's reference is left, the pool is idle: wakes `wait_idle` callers.
    pub(crate) fn terminate(&self) {
        if self.terminate_count.release() == Released::Terminated {
            for (index, info) in self.thread_infos.iter().enumerate() {
                // SAFETY: the latch lives in the registry, which `self` keeps alive.
                unsafe { self.sleep.set_latch_and_wake(&info.terminate, index) };
            }
        }
    }

    /// Blocks until every job holding a terminate reference (every `spawn*` job and what
    /// those spawned) has finished, i.e. only the pool handle's reference is left.
    ///
    /// The caller must hold the pool handle and must not itself be such a job.
    pub(crate) fn wait_idle(&self) {
        self.terminate_count.wait_idle()
    }

    /// Whether worker 0 is the thread that built the pool (`use_current_thread`).
    pub(crate) fn has_current_thread_worker(&self) -> bool {
        self.current_thread_worker
    }

    /// Worker `index`'s terminate latch, set once the pool has terminated.
    pub(crate) fn terminate_latch(&self, index: usize) -> &CoreLatch {
        &self.thread_infos[index].terminate
    }

    /// Blocks until every worker thread has left its main loop and run its exit handler,
    /// then joins `handles`, the threads the default spawn handler started, as taken by
    /// [`take_threads_to_join`](Self::take_threads_to_join) (so their thread-local
    /// destructors have run). Worker 0 of a `use_current_thread` pool is the building
    /// thread, which never stops: it is skipped.
    pub(crate) fn wait_until_stopped(&self, handles: Vec<JoinHandle<()>>) {
        let skip = usize::from(self.current_thread_worker);
        for info in &self.thread_infos[skip..] {
            info.stopped.wait();
        }
        for handle in handles {
            // The thread body catches every panic of user code, so an `Err` would mean a
            // panic in the scheduler itself, which aborts before it gets here.
            let _ = handle.join();
        }
    }

    /// Drops the calling worker thread's own join handle, unless `shutdown` took it to
    /// join the thread: the thread is detached while it is still running. Called by every
    /// worker the default spawn handler started, at the end of its body.
    ///
    /// Detaching a thread while it exits is what must never happen: glibc's
    /// `pthread_detach` (2.36 and earlier at least) reads the thread's descriptor after
    /// marking it detached, while the exiting thread, seeing that mark, may free its own
    /// stack, descriptor included; with stacks over glibc's 40 MiB stack cache that memory
    /// is unmapped at once, and the detaching thread crashes (seen under qemu, where the
    /// window is wide). A thread detaching itself cannot race with its own exit, and it
    /// adds no wait anywhere (rayon-core detaches its workers when it starts them). No
    /// handle is left for the registry's drop: `build` stores each handle before any
    /// worker can be told to exit (only a failure later in `build`, or the pool's end,
    /// terminates them), and each worker, or `shutdown`, takes its own.
    pub(crate) fn detach_own_thread(&self) {
        let me = std::thread::current().id();
        let mut handles = self.thread_handles.lock();
        if let Some(at) = handles.iter().position(|h| h.thread().id() == me) {
            drop(handles.swap_remove(at));
        }
    }

    /// Takes the join handles of the worker threads for `shutdown` to join
    /// ([`wait_until_stopped`](Self::wait_until_stopped)), if the calling thread may wait
    /// for the workers to stop: it is not one of them (`own`: its index if it is a worker
    /// of this pool), but for the building thread of a `use_current_thread` pool (worker
    /// 0, which never stops), and it does not hold Windows' loader lock. Otherwise takes
    /// none, and each worker detaches itself. To be called while the caller still holds
    /// the pool handle, so before any worker can reach its end and detach itself.
    pub(crate) fn take_threads_to_join(&self, own: Option<usize>) -> Vec<JoinHandle<()>> {
        let foreign_worker = own.is_some_and(|index| !(self.current_thread_worker && index == 0));
        if foreign_worker || !self.can_wait_for_exit() {
            return Vec::new();
        }
        mem::take(&mut *self.thread_handles.lock())
    }
}
