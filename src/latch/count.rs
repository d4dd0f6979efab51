//! [`CountLatch`]: the latch of a scope, set when its count of outstanding jobs (plus one
//! for the body) reaches zero. Workers that run a scope's jobs may subtract several
//! counts at once (`pool::worker::deferred`).

use super::{CoreLatch, Latch, LatchOwner, ParkLatch};
use crate::sleep::Sleep;
use crate::sync::checked::AtomicUsize;
use crate::sync::unchecked::Arc;
use crate::sync::Ordering;

/// A thread that waits for a latch by running other jobs while it is unset: a worker
/// (the pool layer implements it for `WorkerThread`). Why a trait: latches sit below the
/// pool, so a latch's wait cannot name the worker that runs it.
pub(crate) trait StealingWaiter {
    /// Who a setter of the latches this thread waits on wakes.
    fn latch_owner(&self) -> &LatchOwner;
    /// Runs other jobs until `latch` is set, parking when there are none.
    fn wait_until_set(&self, latch: &CoreLatch);
}

/// Counts outstanding jobs; set when the count reaches zero (scopes).
///
/// Starts at 1 for the scope body. A worker owner waits by stealing ([`CoreLatch`]); an
/// outside owner parks ([`ParkLatch`]).
pub(crate) struct CountLatch {
    /// Outstanding jobs, plus one for the scope body until it returns.
    counter: AtomicUsize,
    /// How the owner waits, and the latch it waits on.
    kind: CountLatchKind,
}

/// How a [`CountLatch`]'s owner waits, with the latch it waits on.
enum CountLatchKind {
    /// The owner is a worker: it keeps executing jobs while it waits.
    Stealing {
        /// Set when the count reaches zero; the owner runs jobs until then.
        latch: CoreLatch,
        /// The owner's pool's sleep state (that pool may differ from the one the counted
        /// jobs run in).
        sleep: Arc<Sleep>,
        /// The owner's index in its pool.
        worker_index: usize,
    },
    /// The owner is outside any pool: it parks.
    Blocking {
        /// Set when the count reaches zero; the owner parks until then.
        latch: ParkLatch,
    },
}

impl CountLatch {
    /// A latch with count 1, waited on by `owner` (a worker) or by an outside thread.
    pub(crate) fn new(owner: Option<&impl StealingWaiter>) -> Self {
        Self::with_count(1, owner)
    }

    /// A latch with count `count`, waited on by `owner` (a worker of any pool: it keeps
    /// running its own pool's jobs while it waits) or by an outside thread.
    pub(crate) fn with_count(count: usize, owner: Option<&impl StealingWaiter>) -> Self {
        let kind = match owner.map(StealingWaiter::latch_owner) {
            Some(owner) => CountLatchKind::Stealing {
                latch: CoreLatch::new(),
                sleep: Arc::clone(&owner.sleep),
                worker_index: owner.index,
            },
            None => CountLatchKind::Blocking {
                latch: ParkLatch::new(),
            },
        };
        CountLatch {
            counter: AtomicUsize::new(count),
            kind,
        }
    }

    /// Adds one outstanding job.
    #[inline]
    pub(crate) fn increment(&self) {
        // Relaxed: the caller already holds one count (the body or a running job), so the
        // counter cannot reach zero concurrently; the job's hand-off through the deque
        // publishes everything the job needs.
        let old = self.counter.fetch_add(1, Ordering::Relaxed);
        debug_assert!(old != 0, "CountLatch incremented after reaching zero");
    }

    /// Waits until the count reaches zero: by stealing if the owner is a worker, by
    /// blocking otherwise.
    pub(crate) fn wait(&self, owner: Option<&impl StealingWaiter>) {
        match &self.kind {
            CountLatchKind::Stealing {
                latch,
                sleep,
                worker_index,
            } => {
                let owner = owner.expect("stealpool: stealing count latch waited on off-pool");
                let latch_owner = owner.latch_owner();
                debug_assert!(Arc::ptr_eq(&latch_owner.sleep, sleep));
                debug_assert_eq!(latch_owner.index, *worker_index);
                owner.wait_until_set(latch);
            }
            CountLatchKind::Blocking { latch } => latch.wait(),
        }
    }
}

impl CountLatch {
    /// The core latch a waiting worker owner watches, or null for an outside owner.
    pub(crate) fn owner_latch(&self) -> *const CoreLatch {
        match &self.kind {
            CountLatchKind::Stealing { latch, .. } => latch,
            CountLatchKind::Blocking { .. } => std::ptr::null(),
        }
    }

    /// Whether the count is `n`. A relaxed load, for a heuristic: a wait loop holding `n`
    /// deferred counts of its own scope delivers them when they are all the scope still
    /// waits for (`pool::worker::deferred`); other workers' count-downs are not ordered with
    /// the loop anyway, its own are in program order.
    pub(crate) fn count_is(&self, n: usize) -> bool {
        self.counter.load(Ordering::Relaxed) == n
    }

    /// Removes `n` outstanding jobs at once (a worker's deferred count-downs); sets the
    /// latch if that was the last of them.
    ///
    /// # Safety
    /// `this` is live and the caller holds `n` counts of it.
    #[inline]
    pub(crate) unsafe fn count_down(this: *const Self, n: usize) {
        // SAFETY: `this` is live until the count reaches zero; only the thread that takes
        // it to zero touches the inner latch, after reading what it needs.
        unsafe {
            if (*this).counter.fetch_sub(n, Ordering::SeqCst) != n {
                return;
            }
            match &(*this).kind {
                CountLatchKind::Stealing {
                    latch,
                    sleep,
                    worker_index,
                } => {
                    // The owner may free the latch (and its `Arc`) once it is set.
                    let sleep = Arc::clone(sleep);
                    let worker_index = *worker_index;
                    sleep.set_latch_and_wake(latch, worker_index);
                }
                CountLatchKind::Blocking { latch } => ParkLatch::set(latch),
            }
        }
    }
}

impl Latch for CountLatch {
    #[inline]
    unsafe fn set(this: *const Self) {
        // SAFETY: forwarded: the caller holds one count.
        unsafe { CountLatch::count_down(this, 1) }
    }
}
