//! A registry's life: the terminate count (every `spawn` holds the pool alive until it
//! ran), termination, `wait_idle`, waiting for the workers to stop, and the worker
//! threads' handles when the registry is dropped.

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
    /// then joins the threads the default spawn handler started (so their thread-local
    /// destructors have run). Worker 0 of a `use_current_thread` pool is the building
    /// thread, which never stops: it is skipped.
    pub(crate) fn wait_until_stopped(&self) {
        let skip = usize::from(self.current_thread_worker);
        for info in &self.thread_infos[skip..] {
            info.stopped.wait();
        }
        let handles = mem::take(&mut *self.thread_handles.lock());
        for handle in handles {
            // The thread body catches every panic of user code, so an `Err` would mean a
            // panic in the scheduler itself, which aborts before it gets here.
            let _ = handle.join();
        }
    }

    /// Settles the handles of the worker threads nobody joined, when the registry is
    /// dropped. Every worker has dropped its reference by then: each thread is exiting or
    /// has exited. On Linux, dropping the handle of such a thread would detach it, and
    /// glibc's `pthread_detach` (2.36 and earlier at least) reads the thread's descriptor
    /// after marking it detached, while the exiting thread, seeing that mark, may free its
    /// own stack, descriptor included: with stacks over glibc's 40 MiB stack cache that
    /// memory is unmapped at once, and the detaching thread crashes (seen under qemu, where
    /// the window is wide). So each such thread is joined instead, which waits only for the
    /// rest of its exit (its thread-local destructors). The dropping thread's own handle
    /// (the last worker to leave) is dropped: a thread detaching itself cannot race with
    /// its own exit. Elsewhere every handle is dropped, as rayon-core drops them: the race
    /// is glibc's, and on Windows, where dropping a handle closes it, waiting for an exit
    /// could meet the loader lock.
    pub(super) fn settle_thread_handles(&self) {
        let handles = mem::take(&mut *self.thread_handles.lock());
        #[cfg(target_os = "linux")]
        for handle in handles {
            use std::os::unix::thread::JoinHandleExt;
            // SAFETY: `pthread_self` and `pthread_equal` only compare thread identities;
            // both are valid on any thread, also while its thread-locals are destroyed.
            let own = unsafe { libc::pthread_equal(handle.as_pthread_t(), libc::pthread_self()) };
            if own == 0 {
                // The thread body catches every panic of user code (see
                // `wait_until_stopped`).
                let _ = handle.join();
            }
        }
        #[cfg(not(target_os = "linux"))]
        drop(handles);
    }
}
