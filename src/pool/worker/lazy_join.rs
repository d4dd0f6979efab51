//! The worker's side of the lazy `join` (`docs/join.md`): keeping second halves private,
//! the per-`join` poll, promotion, and rescue of another worker's halves.
//!
//! Nothing here runs a job: a `join` whose second half nobody took runs `a`, then `b`,
//! and nothing in between, as on rayon-core (`docs/guarantees.md`, "Where a worker runs
//! other jobs").

use super::WorkerThread;
use crate::job::{JobRef, JoinHalf};
use crate::pool::pending::Popped;
use crate::timeline_hooks::JobSource;

impl WorkerThread {
    /// The position of the next private half, if the private stack has room for it
    /// (else [`make_room_pending`](Self::make_room_pending) first).
    #[inline(always)]
    pub(crate) fn reserve_pending(&self) -> Option<usize> {
        self.pending.reserve()
    }

    /// Promotes the oldest private halves until the private stack has room for a push,
    /// and returns the position of that push.
    #[cold]
    #[inline(never)]
    pub(crate) fn make_room_pending(&self) -> usize {
        self.pending.make_room(|| self.promote_oldest())
    }

    /// Keeps a `join`'s second half private (lazy join) at `pos`, which
    /// [`reserve_pending`](Self::reserve_pending) just returned, and polls whether
    /// anyone could use a promoted half (`docs/join.md`).
    ///
    /// # Safety
    /// `job` must stay valid until its `join` popped it back with `pop_pending` and, if
    /// that returned `Popped::Taken`, until its latch is set (it may be on the deque or
    /// running on a thief or rescuer).
    #[inline(always)]
    pub(crate) unsafe fn push_pending(&self, pos: usize, job: JoinHalf) {
        self.pending.push_at(pos, job);
        self.poll_join();
    }

    /// The `join` of position `pos` takes its second half back.
    #[inline]
    pub(crate) fn pop_pending(&self, pos: usize) -> Popped {
        self.pending.pop(pos)
    }

    /// The per-`join` poll, after the private push: the light barrier and one load of a
    /// line that changes only when a worker goes idle. Promotes when some worker is idle
    /// or searching.
    #[inline]
    fn poll_join(&self) {
        if self.can_share && self.pending.owner().sleep.idle_workers_after_private_push() {
            self.poll_join_cold();
        }
    }

    #[cold]
    #[inline(never)]
    fn poll_join_cold(&self) {
        // One promoted half at a time: while the deque still holds work, an idle worker
        // can take that (`docs/join.md`, "When a half is promoted").
        if self.worker.is_empty() {
            self.promote_oldest();
        }
    }

    /// Moves the oldest private half to the deque, where thieves can take it. Returns
    /// whether there was one.
    fn promote_oldest(&self) -> bool {
        let promoted = self.pending.promote_oldest(|job| self.worker.push(job));
        if promoted {
            // A pool that shares `join` halves pays the light barrier twice per `join`:
            // make sure the membarrier registration that turns it into a compiler fence
            // has started, even if no worker ever parks (one relaxed load once started).
            crate::sync::barrier::prepare();
            self.counters.promotion();
            self.timeline.promotion();
            // As for any push: tell the sleep module (after the push, docs/sleep.md).
            self.registry.sleep.new_jobs(1, true);
        }
        promoted
    }

    /// Moves every private half to the deque, oldest first: before this worker waits,
    /// searches or parks, so that no half stays hidden from the other workers.
    #[inline]
    pub(super) fn promote_all(&self) {
        if self.pending.has_private() {
            while self.promote_oldest() {}
        }
    }

    /// Takes the oldest private half of another worker whose deque is empty: the first
    /// half it runs has not called into the pool for a while (a long leaf, or one that
    /// blocks until the second half runs), so it cannot promote (`docs/join.md`,
    /// "Rescue"). Scans from a random victim.
    pub(crate) fn rescue(&self) -> Option<JobRef> {
        self.victims().find_map(|victim| {
            let stealer = self.registry.stealer(victim);
            let job = self
                .registry
                .pending_of(victim)
                .rescue(|| stealer.is_empty())?;
            self.timeline.note_source(JobSource::Rescue { victim });
            #[cfg(feature = "tracing")]
            tracing::trace!(name: "job_rescued", worker = self.index(), victim);
            Some(job)
        })
    }
}
