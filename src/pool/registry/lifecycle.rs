//! A registry's life: the terminate count (every `spawn` holds the pool alive until it
//! ran), termination, `wait_idle`, and waiting for the workers to stop.

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
}
