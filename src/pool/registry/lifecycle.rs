//! A registry's life: the terminate count (every `spawn` holds the pool alive until it
//! ran), termination, `wait_idle`, waiting for the workers to stop, and the worker
//! threads' join handles (joined by `shutdown`, else each worker detaches its own).

use super::terminate::Released;
use super::Registry;
use crate::latch::CoreLatch;
use std::mem;

impl Registry {
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
    pub(crate) fn wait_until_stopped(&self, handles: Vec<std::thread::JoinHandle<()>>) {
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
    /// for the workers to stop: it is not one of them, but for the building thread of a
    /// `use_current_thread` pool (worker 0, which never stops), and it does not hold
    /// Windows' loader lock. Otherwise takes none, and each worker detaches itself. To be
    /// called while the caller still holds the pool handle, so before any worker can reach
    /// its end and detach itself.
    pub(crate) fn take_threads_to_join(&self) -> Vec<std::thread::JoinHandle<()>> {
        let own = self.with_current_worker(|worker| worker.map(|w| w.index()));
        let foreign_worker = own.is_some_and(|index| !(self.current_thread_worker && index == 0));
        if foreign_worker || !self.can_wait_for_exit() {
            return Vec::new();
        }
        mem::take(&mut *self.thread_handles.lock())
    }
}
