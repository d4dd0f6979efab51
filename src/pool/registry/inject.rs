//! The queues jobs from outside the workers reach: the injector, and each worker's
//! broadcast queue. Which of them a job from the calling thread goes to (its own deque, an
//! isolation region, these) is decided above, by the worker (`pool::worker::entry`).

use super::Registry;
use crate::job::JobRef;

impl Registry {
    /// Pushes a job on the injector and wakes a worker if needed. The caller has decided
    /// that the job belongs to this pool's queues (`pool::worker::entry::inject`).
    pub(crate) fn push_injected(&self, job_ref: JobRef) {
        let queue_was_empty = self.injected_jobs.is_empty();
        self.injected_jobs.push(job_ref);
        self.counters.job_injected();
        if let Some(recorder) = self.recorder() {
            recorder.injected();
        }
        self.sleep.new_injected_jobs(1, queue_was_empty);
        // A subscriber is user code: it runs once the job is queued and a worker woken (it
        // may wait for that job), and its panic goes where a spawned job's would, since
        // the caller may not unwind now (its job, on its frame, is queued).
        #[cfg(feature = "tracing")]
        self.catch_unwind(|| tracing::trace!(name: "job_injected", queue_was_empty));
    }

    /// Pushes one job on every worker's broadcast queue (job `i` for worker `i`) and wakes
    /// every sleeper: each job must run on its own worker.
    ///
    /// # Panics
    /// If `jobs` does not yield exactly one job per worker.
    pub(crate) fn push_broadcasts(&self, jobs: impl ExactSizeIterator<Item = JobRef>) {
        let queues = self.broadcasts.lock();
        assert_eq!(jobs.len(), queues.len(), "one broadcast job per worker");
        for (queue, job) in queues.iter().zip(jobs) {
            queue.push(job);
        }
        drop(queues);
        // After the pushes, like every `new_jobs` (docs/sleep.md, "Broadcasts").
        self.sleep.new_broadcast_jobs();
    }
}
