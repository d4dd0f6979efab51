//! The waking half of the sleep protocol: what a thread that posts work or sets a
//! worker's latch does so that no sleeper misses it, and what the last searcher does when
//! it stops searching (`docs/sleep.md`, "Posting work", "When P wakes nobody" and
//! "Latches"). The falling-asleep half is in `mod.rs`.

use super::counters::JobsEventCounter;
use super::spot::Blocked;
use super::{CoreLatch, IdleState, Sleep};
use crate::sync::barrier;

impl Sleep {
    /// A searching worker found work (or its latch was set): it is active again.
    ///
    /// "The last searcher wakes one" (tokio): if no other worker is still searching and
    /// some are parked, wake one, unless no work is left for it. A pusher that saw this
    /// worker searching woke nobody, counting on it (`new_jobs`); if it now leaves with
    /// that work queued, a sleeper must take it. `more_work` is the sleeper's last look
    /// (`has_queued_jobs`). Who may have counted on us decides how exact the look must be
    /// (`docs/sleep.md`, "When P wakes nobody"):
    ///
    /// * while some other worker runs, any of its pushes and lazy `join` polls, whose only
    ///   barrier is the light one: a first look that finds nothing is repeated after the
    ///   heavy barrier, which makes it exact;
    /// * while every other worker is parked, only an injection, or this worker itself
    ///   (a batch it moved from the injector to its batch queue). An injection that
    ///   counted on us read the counters with a read-modify-write
    ///   (`AtomicCounters::count_on_searchers`) that our decrement follows in the word's
    ///   order, so its push happens before our look; our own pushes precede it in
    ///   program order. One look without a barrier is exact for both.
    ///
    /// rayon-core woke up to two sleepers on every find, which for sporadic work woke a
    /// second worker per job only for it to spin and park again.
    #[inline]
    pub(crate) fn work_found(&self, idle_state: &mut IdleState, more_work: impl Fn() -> bool) {
        self.stop_spinning(idle_state);
        self.leave_inactive(more_work);
    }

    /// The counters' side of [`work_found`](Self::work_found), also for a worker that
    /// leaves an isolated park (never a spinner): leaves the inactive count and, as the
    /// last searcher while some worker sleeps, wakes one if `more_work` finds work.
    #[inline]
    pub(super) fn leave_inactive(&self, more_work: impl Fn() -> bool) {
        let old = self.counters.sub_inactive_thread();
        if old.sleeping_threads() > 0 && old.awake_but_idle_threads() == 1 {
            if old.inactive_threads() < self.worker_sleep_states.len() {
                self.wake_one_if_work_left(more_work);
            } else if more_work() {
                // Exact for our own pushes (program order) and for every injection that
                // counted on us (its read-modify-write, which our decrement follows).
                self.wake_any_threads(1);
            }
        }
    }

    /// The rest of `work_found` for the last searcher while some worker sleeps and some
    /// other runs: wakes one if `more_work` finds work. A first look that finds none is
    /// repeated after the heavy barrier, which makes it exact; an inexact barrier wakes
    /// one anyway.
    #[cold]
    fn wake_one_if_work_left(&self, more_work: impl Fn() -> bool) {
        // A failed membarrier (`Park::Recheck`) leaves the pair inexact: wake anyway.
        if more_work() || !barrier::heavy().exact_for_light() || more_work() {
            self.wake_any_threads(1);
        }
    }

    /// Sets `latch`, which worker `owner` of this pool waits on, and wakes the owner if it
    /// had fallen asleep on it: the one way a worker's latch is set (the swap and the
    /// wake-up are the two halves of the latch protocol, docs/sleep.md, "Latches").
    ///
    /// # Safety
    /// `latch` must be live; it may be freed as soon as the swap inside is done, so the
    /// caller must not touch it afterwards, and `self` must not live in memory the owner
    /// may free when it sees the latch set (callers keep their own `Arc` of the registry).
    #[inline]
    pub(crate) unsafe fn set_latch_and_wake(&self, latch: *const CoreLatch, owner: usize) {
        // SAFETY: forwarded from this function's contract.
        if unsafe { CoreLatch::set(latch) } {
            self.wake_waiter(owner);
        }
    }

    /// `num_jobs` jobs were pushed to a worker's own deque; `queue_was_empty` is whether
    /// that deque was empty just before. Wakes sleepers if the awake workers may not be
    /// enough to pick the jobs up.
    ///
    /// Must be called *after* the push: the light barrier here pairs with the heavy
    /// barrier in `sleep` (step 4), so either this call sees the sleeper registered and
    /// wakes it, or the sleeper's last look sees the job (docs/sleep.md, "the pairing").
    #[inline]
    pub(crate) fn new_jobs(&self, num_jobs: u32, queue_was_empty: bool) {
        barrier::light();
        self.wake_for_new_jobs(num_jobs, queue_was_empty, false)
    }

    /// [`new_jobs`](Self::new_jobs) for jobs pushed to the injector (from outside the
    /// pool, or from another pool). Their pusher does not look at the queues again, so when it
    /// counts on the searching workers instead of waking a sleeper, it decides on a value
    /// read with a read-modify-write
    /// ([`AtomicCounters::count_on_searchers`](super::counters::AtomicCounters::count_on_searchers)):
    /// that is what lets the last searcher, while every other worker is parked, look for
    /// work left without a heavy barrier ([`Sleep::work_found`]).
    #[inline]
    pub(crate) fn new_injected_jobs(&self, num_jobs: u32, queue_was_empty: bool) {
        barrier::light();
        self.wake_for_new_jobs(num_jobs, queue_was_empty, true)
    }

    /// One job was pushed on *every* worker's broadcast queue. Each must run on its own
    /// worker, so instead of waking "enough" sleepers, every parked worker is woken.
    ///
    /// Waking a count of sleepers is not enough: a worker that took its broadcast job
    /// and went back to sleep after the counters were read would absorb one of the
    /// wake-ups, and the sleeper whose job is still queued would be left parked
    /// (docs/sleep.md, "Broadcasts"). rayon-core 1.13 also wakes each worker (its
    /// `inject_broadcast` notifies every worker's latch).
    pub(crate) fn new_broadcast_jobs(&self) {
        barrier::light();
        let counters = self
            .counters
            .increment_jobs_event_counter_if(JobsEventCounter::is_sleepy);
        if counters.sleeping_threads() == 0 {
            return;
        }
        for index in 0..self.worker_sleep_states.len() {
            self.wake_specific_thread(index);
        }
    }

    /// The rest of [`new_jobs`](Self::new_jobs) and
    /// [`new_injected_jobs`](Self::new_injected_jobs) (`injected`) after the light barrier:
    /// makes the JEC odd if it is even, then wakes sleepers for the jobs the awake idle
    /// workers do not cover: `num_jobs` less those workers, or all `num_jobs` when
    /// `queue_was_empty` is false (the queue held work already, so the awake workers are
    /// busy); at most every sleeper.
    #[inline]
    fn wake_for_new_jobs(&self, num_jobs: u32, queue_was_empty: bool, injected: bool) {
        // Make the JEC odd if some worker is sleepy, so it will back out of sleeping.
        let mut counters = self
            .counters
            .increment_jobs_event_counter_if(JobsEventCounter::is_sleepy);
        if counters.sleeping_threads() == 0 {
            return;
        }
        let num_jobs = num_jobs as usize;
        if injected && queue_was_empty && counters.awake_but_idle_threads() >= num_jobs {
            // About to leave the jobs to the searchers alone: decide on a value read with
            // a read-modify-write, which orders our push before the last searcher's look.
            counters = self.counters.count_on_searchers();
        }
        let num_sleepers = counters.sleeping_threads();
        let num_awake_but_idle = counters.awake_but_idle_threads();
        if !queue_was_empty {
            // Work was already waiting and nobody took it: the awake ones are busy.
            self.wake_any_threads(std::cmp::min(num_jobs, num_sleepers));
        } else if num_awake_but_idle < num_jobs {
            // Searching threads will take some; wake sleepers for the rest.
            self.wake_any_threads(std::cmp::min(num_jobs - num_awake_but_idle, num_sleepers));
        }
    }

    /// Wakes up to `num_to_wake` parked workers, scanning from a random index so no
    /// worker is favoured.
    pub(super) fn wake_any_threads(&self, mut num_to_wake: usize) {
        if num_to_wake == 0 {
            return;
        }
        let n = self.worker_sleep_states.len();
        // Under loom the model must be deterministic: always start at 0.
        let start = if cfg!(loom) { 0 } else { fastrand::usize(..n) };
        for i in (start..n).chain(0..start) {
            if self.wake_specific_thread(i) {
                num_to_wake -= 1;
                if num_to_wake == 0 {
                    return;
                }
            }
        }
    }

    /// Wakes worker `index` if it is parked as a searcher ([`Blocked::Counted`]). Returns
    /// whether it was. A worker parked in an isolated wait is left alone: it takes none of
    /// the work a searcher's wake-up is for.
    fn wake_specific_thread(&self, index: usize) -> bool {
        self.wake(index, false)
    }

    /// Wakes worker `index`, which waits on a latch that was just set or, in an isolated
    /// wait, for its region's jobs: whether it parked as a searcher or in an isolated wait.
    pub(crate) fn wake_waiter(&self, index: usize) {
        self.wake(index, true);
    }

    /// Wakes worker `index` if it is parked as a searcher, or in an isolated wait if
    /// `isolated_too`; returns whether it woke a searcher.
    fn wake(&self, index: usize, isolated_too: bool) -> bool {
        let sleep_state = &self.worker_sleep_states[index];
        let mut is_blocked = sleep_state.is_blocked.lock();
        let searcher = match *is_blocked {
            Blocked::No => return false,
            Blocked::Isolated if !isolated_too => return false,
            Blocked::Isolated => false,
            Blocked::Counted => true,
        };
        *is_blocked = Blocked::No;
        // The waker, not the sleeper, decrements `sleeping` (a parked searcher and an
        // isolated waiter are both counted), so posters see the new count as early as
        // possible.
        self.counters.sub_sleeping_thread();
        drop(is_blocked);
        // Notify after unlocking: std's condvar does not requeue the woken thread onto
        // the mutex (parking_lot's did), so a notify under the lock wakes the sleeper
        // only for it to block again on the mutex we still hold. The sleeper re-checks
        // `is_blocked` under the mutex, and `sleep_state` lives as long as the registry,
        // so the late notify is safe.
        sleep_state.condvar.notify_one();
        searcher
    }
}
