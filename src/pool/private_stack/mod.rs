//! A worker's private stack of pending second halves: the lazy half of `join`.
//!
//! `join` keeps its second half (`b`) here instead of on the worker's crossbeam deque.
//! The owner pushes and pops with plain (relaxed) loads and stores and a [`light`](fn@crate::sync::barrier::light)
//! barrier, which is a compiler fence once `membarrier(2)` is registered: no atomic
//! read-modify-write, no fence instruction. A half leaves the stack in one of three ways:
//!
//! * its `join` pops it back after the first half returned and runs it inline (the
//!   common case: nobody needed it);
//! * the owner *promotes* it to its deque, oldest first, where thieves can take it;
//! * an idle worker *rescues* it: takes the oldest half straight from this stack, for a
//!   first half that runs long without calling into the pool (a long leaf, or one that
//!   blocks until the second half runs).
//!
//! Positions are absolute and grow with `join` nesting; slots are reused modulo
//! [`CAPACITY`]. Positions `bottom..top` are private; below `bottom` a half was promoted
//! or rescued. Only the owner writes `top`; `bottom` is written only under `lock` (by the
//! owner's promotions and slow pops, and by rescuers). The owner does not need to know
//! which of the two took its half: either way it pops its deque until it finds the half
//! or the deque is empty, then waits for the half's latch (`docs/join.md`, "Order").
//!
//! The owner's pop and a rescuer's claim race for the same half in the THE protocol of
//! Cilk-5 (Frigo, Leiserson, Randall, PLDI 1998): the owner stores `top` then loads
//! `bottom`, the rescuer stores `bottom` then loads `top`. Cilk puts a fence on the
//! owner's side; here the owner has [`light`](fn@crate::sync::barrier::light) and the rescuer [`heavy`](fn@crate::sync::barrier::heavy), the asymmetric
//! pair the sleep module already uses, so at least one of the two sees the other's
//! store and a half is never run twice. `docs/join.md` gives the whole argument.

use crate::job::{JobRef, JoinHalf};
use crate::latch::LatchOwner;
use crate::pool::region::Region;
use crate::sleep::IdleWorkers;
use crate::sync::barrier::{self, Light};
use crate::sync::checked::{AtomicUsize, Mutex};
use crate::sync::unchecked::{Arc, AtomicU32};
use crate::sync::Ordering;

/// Slots of the private stack. A worker whose `join`s nest deeper promotes the oldest
/// half to make room (it is offered eagerly, as in rayon-core).
pub(crate) const CAPACITY: usize = 64;

/// Polls skipped after one found the deque still holding work
/// ([`PrivateStack::skip_polls`]): a few dozen fine-grained `join`s, far less time than a
/// thief takes to arrive, and enough that the look at the deque (a line the thieves write)
/// is paid once per that many `join`s, not on each.
pub(crate) const POLLS_SKIPPED: u32 = 63;

/// Where a popped half went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Popped {
    /// Still private: the `join` runs it inline.
    Private,
    /// Promoted to the owner's deque (maybe stolen from there since), or rescued by
    /// another worker, who runs it and sets its latch.
    Taken,
}

/// The owner's isolation regions (`docs/isolation.md`), under the stack's lock.
#[derive(Default)]
pub(crate) struct Regions {
    /// The owner's current region. Every private half was pushed in it: the owner enters
    /// and leaves regions only while no half is private, and a half that leaves the stack
    /// in a pool that isolates every job changes it only together with `split`.
    pub(crate) current: Option<Arc<Region>>,
    /// In a pool that isolates every job: the `join`s whose half left the stack, oldest
    /// first (`pool::worker::isolate`, `place_half`).
    pub(crate) split: Vec<Split>,
}

/// A `join` whose second half left the private stack in a pool that isolates every job:
/// the half runs in a region of its own, and the rest of the first half in another.
pub(crate) struct Split {
    /// The half's identity ([`JobRef::id`], the address as an integer).
    pub(crate) id: (usize, usize),
    /// The half's region.
    pub(crate) half: Arc<Region>,
    /// The region around the `join`, the owner's again once the `join` is over.
    pub(crate) around: Arc<Region>,
}

/// A half's one word ([`JoinHalf::word`]).
struct Slot {
    /// The word of the half last pushed at a position that maps to this slot.
    half: AtomicUsize,
}

/// A worker's private stack of pending second halves (the module's documentation).
///
/// `repr(C)`: the fields the `join` fast path touches (`top`, `limit`, `bottom`,
/// `can_share` and `owner` for the poll) share the first cache line, in this order.
#[repr(C)]
pub(crate) struct PrivateStack {
    /// One past the newest half. Written only by the owner.
    top: AtomicUsize,
    /// The owner's bound on `top` for a push (`bottom + CAPACITY - 1` as the owner last
    /// read `bottom`). Owner only (Relaxed). `bottom` only grows under others' hands, so
    /// a stale bound is too low, never too high (see `push`).
    limit: AtomicUsize,
    /// The oldest private half. Written only under `lock`.
    bottom: AtomicUsize,
    /// Whether another worker exists to take a promoted half or rescue a private one (the
    /// pool has more than one worker): else the poll after a push never promotes, and the
    /// pop has no rescuer to order itself against (`pop`).
    can_share: bool,
    /// Polls the owner still skips (`poll`): set when a poll found the owner's deque
    /// still holding work, so that a worker seen idle is not answered by a look at the
    /// deque on every `join`. Owner only (Relaxed). Applied only while an idle worker is
    /// awake (`poll_due`), which finds the half itself or wakes a parked one for it.
    polls_to_skip: AtomicU32,
    /// The owner, as the owner of its halves' latches (written when a half is handed
    /// out), and of every other latch it waits on ([`owner`](Self::owner)).
    owner: LatchOwner,
    /// Serialises rescuers against each other and against the owner's promotions and
    /// slow pops. The owner's push and fast pop never take it. It holds the owner's
    /// isolation regions ([`Regions`]), so that a rescuer knows where the half it takes
    /// must run.
    lock: Mutex<Regions>,
    /// The halves: position `pos` lives in slot `pos % CAPACITY`.
    slots: [Slot; CAPACITY],
}

impl PrivateStack {
    /// The private stack of `owner`, in a pool where another worker can take a half if
    /// `can_share`.
    pub(crate) fn new(owner: LatchOwner, can_share: bool) -> Self {
        PrivateStack {
            owner,
            top: AtomicUsize::new(0),
            limit: AtomicUsize::new(CAPACITY - 1),
            bottom: AtomicUsize::new(0),
            can_share,
            polls_to_skip: AtomicU32::new(0),
            lock: Mutex::new(Regions::default()),
            slots: std::array::from_fn(|_| Slot {
                half: AtomicUsize::new(0),
            }),
        }
    }

    /// The worker that owns this stack, as the owner of the latches it waits on: its
    /// pool's sleep state and its index (the worker keeps it here rather than twice).
    #[inline(always)]
    pub(crate) fn owner(&self) -> &LatchOwner {
        &self.owner
    }

    // Orderings: `top` is stored Release by the owner and loaded Acquire by rescuers, so
    // a rescuer that sees a half's position also sees its slot. Everything else the
    // owner does on the fast path is Relaxed: the store-load race with a rescuer is
    // ordered by the barrier pair, and all other accesses to `bottom` and the slots
    // happen under `lock` or by the owner alone (`limit`).

    /// Whether any half is private (racy for anyone but the owner; exact for the owner).
    #[inline]
    pub(crate) fn has_private_halves(&self) -> bool {
        self.top.load(Ordering::Relaxed) > self.bottom.load(Ordering::Relaxed)
    }

    /// Owner: the position the next push will take, if there is room for it (else
    /// [`make_room`](Self::make_room) first).
    ///
    /// One slot is always kept free, so that a rescuer's provisional claim (`bottom + 1`,
    /// then maybe undone) can never make the owner reuse the slot the rescuer reads: a
    /// push at `pos` needs `pos < bottom + CAPACITY - 1` for the `bottom` the owner last
    /// read. `bottom` decreases only in a rescuer's undo (by the one it provisionally
    /// added, which the rule allows for) and in the owner's own `pop_cold` (which resets
    /// `limit`), so the cached `limit` keeps the rule.
    #[inline(always)]
    pub(crate) fn reserve(&self) -> Option<usize> {
        let pos = self.top.load(Ordering::Relaxed);
        (pos < self.limit.load(Ordering::Relaxed)).then_some(pos)
    }

    /// Owner: pushes `job` as the newest private half at `pos`, which
    /// [`reserve`](Self::reserve) just returned.
    #[inline(always)]
    pub(crate) fn push_at(&self, pos: usize, job: JoinHalf) {
        debug_assert_eq!(self.reserve(), Some(pos), "push_at without a reservation");
        let slot = &self.slots[pos % CAPACITY];
        slot.half.store(job.word(), Ordering::Relaxed);
        self.top.store(pos + 1, Ordering::Release);
    }

    /// Owner: `reserve` found no room. Reads `bottom` again (promotions and rescues raise
    /// it), and calls `promote_oldest` (which must move the oldest half out with
    /// [`promote_oldest_to`](Self::promote_oldest_to), if any is left) while that is not
    /// enough; returns the position reserved. Terminates: each round either promotes a
    /// half or finds none left, and then `bottom` reached `top`, which leaves room.
    #[cold]
    pub(crate) fn make_room(&self, mut promote_oldest: impl FnMut() -> bool) -> usize {
        let pos = self.top.load(Ordering::Relaxed);
        loop {
            let limit = self.bottom.load(Ordering::Relaxed) + CAPACITY - 1;
            self.limit.store(limit, Ordering::Relaxed);
            if pos < limit {
                return pos;
            }
            // Nothing to promote means that rescuers took every half since we read
            // `bottom` (the owner may be preempted in between): read it again.
            promote_oldest();
        }
    }

    /// Owner: `reserve`, `make_room` if needed, and `push_at`; returns the position (the
    /// `join` frame does the three itself, `join::join_on`).
    #[cfg(any(test, loom))]
    pub(crate) fn push(&self, job: JoinHalf, promote_oldest: impl FnMut() -> bool) -> usize {
        let pos = self
            .reserve()
            .unwrap_or_else(|| self.make_room(promote_oldest));
        self.push_at(pos, job);
        pos
    }

    /// Owner: after a push, whether an idle worker could take a half now (the poll:
    /// promoting the oldest would help), unless the owner still skips polls
    /// ([`skip_polls`](Self::skip_polls)). Between the push and the load of the sleep
    /// counters there is only a compiler fence (`Sleep::idle_workers_after_private_push`).
    /// `exact_for_poll` is the owner's [`Light::EXACT_FOR_POLL`]: whether the other
    /// workers' heavy barriers are exact against that push.
    #[inline(always)]
    pub(crate) fn poll(&self, exact_for_poll: bool) -> bool {
        if !self.can_share {
            return false;
        }
        let idle = self.owner.sleep.idle_workers_after_private_push();
        idle.any() && self.poll_due(idle, exact_for_poll)
    }

    /// Owner: whether this poll, which saw `idle` workers, is due, counting down the
    /// polls to skip. A poll is skipped only while some idle worker is awake (searching
    /// or sleepy): it cannot park without a last look that sees the half, nor stop
    /// searching, as the last searcher while others are parked, without a look for work
    /// left that wakes one for it (`Sleep::work_found`). Both looks follow a change of the
    /// counters this poll did not see, and a heavy barrier, so they see the push when that
    /// barrier is exact against it (`exact_for_poll`). Without it (the fence pair) only
    /// the last look before parking is covered (its recheck), so every idle worker must
    /// be awake, none parked: a parked worker sees the new half only if this poll
    /// promotes it, which wakes it. Skipping then could leave the half to a first half
    /// that waits for it, with every other worker asleep (`docs/join.md`, "Skipped polls").
    #[inline(always)]
    fn poll_due(&self, idle: IdleWorkers, exact_for_poll: bool) -> bool {
        let skip = self.polls_to_skip.load(Ordering::Relaxed);
        let left_to_the_awake = if exact_for_poll {
            idle.any_awake()
        } else {
            !idle.any_asleep()
        };
        if skip == 0 || !left_to_the_awake {
            return true;
        }
        self.polls_to_skip.store(skip - 1, Ordering::Relaxed);
        false
    }

    /// Owner: a poll saw an idle worker but found the deque still holding work (a
    /// promoted half not stolen yet): the next [`POLLS_SKIPPED`] polls that may leave the
    /// half to an idle worker that is awake ([`poll_due`](Self::poll_due)) answer no
    /// without the look at the deque, whose line the thieves' steals write.
    #[inline]
    pub(crate) fn skip_polls(&self) {
        self.polls_to_skip.store(POLLS_SKIPPED, Ordering::Relaxed);
    }

    /// Owner: the `join` that pushed `pos` takes its half back, with `light` as its side
    /// of the barrier pair. Every newer half was popped before (`join`s nest).
    #[inline(always)]
    pub(crate) fn pop<L: Light>(&self, pos: usize, light: L) -> Popped {
        debug_assert_eq!(
            self.top.load(Ordering::Relaxed),
            pos + 1,
            "join halves popped out of order"
        );
        self.top.store(pos, Ordering::Relaxed);
        // Pairs with the rescuer's heavy barrier between its store of `bottom` and its
        // load of `top` (docs/join.md, "Rescue"). A rescuer is another worker of the
        // pool: a pool of one worker (`!can_share`) has none, so a barrier that is an
        // instruction (the fence builds) is left out there. Nothing else pairs with the
        // pop's barrier: the sleep protocol's pushes are the queues' and the poll's.
        if self.can_share || !L::IS_INSTRUCTION {
            light.light();
        }
        if pos >= self.bottom.load(Ordering::Relaxed) {
            return Popped::Private;
        }
        self.pop_cold(pos)
    }

    /// The rest of [`pop`](Self::pop) when `pos` is below `bottom`: under `lock`, where
    /// `bottom` is settled, finds whether the half is still private; if it is taken, lowers
    /// `bottom` and `limit` to `pos` (everything from `pos` up is gone).
    #[cold]
    fn pop_cold(&self, pos: usize) -> Popped {
        let _lock = self.lock.lock();
        // Under the lock `bottom` is settled: a rescuer that saw our pop has undone its
        // claim; one that won keeps it.
        if pos >= self.bottom.load(Ordering::Relaxed) {
            return Popped::Private;
        }
        // Everything from `pos` up is gone: the stack is empty. `bottom` goes down, so
        // the push limit must follow.
        self.bottom.store(pos, Ordering::Relaxed);
        self.limit.store(pos + CAPACITY - 1, Ordering::Relaxed);
        Popped::Taken
    }

    /// Owner: [`promote_oldest_to`](Self::promote_oldest_to) for a `push` that needs no
    /// regions. Returns whether a half was promoted.
    #[cfg(any(test, loom))]
    pub(crate) fn promote_oldest(&self, push: impl FnOnce(JobRef)) -> bool {
        self.promote_oldest_to(|job, _| push(job)).is_some()
    }

    /// Owner: takes the oldest private half out and hands it to `hand`, with the owner's
    /// regions, while still holding the lock, so that a rescuer, which checks the owner's
    /// deque under the same lock, never takes a half while an older promoted one sits on
    /// the deque. Returns what `hand` returned, if there was a half.
    pub(crate) fn promote_oldest_to<T>(
        &self,
        hand: impl FnOnce(JobRef, &mut Regions) -> T,
    ) -> Option<T> {
        let mut regions = self.lock.lock();
        let bottom = self.bottom.load(Ordering::Relaxed);
        if bottom == self.top.load(Ordering::Relaxed) {
            return None;
        }
        let job = self.take(bottom);
        self.bottom.store(bottom + 1, Ordering::Relaxed);
        Some(hand(job, &mut regions))
    }

    /// Owner, with no half private: `region` is its current isolation region from now on;
    /// returns the one before.
    pub(crate) fn replace_region(&self, region: Option<Arc<Region>>) -> Option<Arc<Region>> {
        debug_assert!(
            !self.has_private_halves(),
            "a region change with a private half"
        );
        std::mem::replace(&mut self.lock.lock().current, region)
    }

    /// Runs `f` on the owner's regions, under the lock.
    pub(crate) fn with_regions<T>(&self, f: impl FnOnce(&mut Regions) -> T) -> T {
        f(&mut self.lock.lock())
    }

    /// Owner: the `join` whose half is `id` ([`JobRef::id`]) found it taken: if that
    /// `join` was split ([`Split`]), forgets it and makes the region around it current
    /// again.
    pub(crate) fn unsplit(&self, id: (*const (), usize)) -> Option<Split> {
        let mut regions = self.lock.lock();
        let id = (id.0 as usize, id.1);
        if !matches!(regions.split.last(), Some(split) if split.id == id) {
            return None;
        }
        let split = regions.split.pop()?;
        regions.current = Some(split.around.clone());
        Some(split)
    }

    /// Another worker: takes the oldest private half if there is one and
    /// `owner_deque_is_empty()` holds (checked under the lock). The caller runs the
    /// half; the owner's `join` waits for its latch.
    #[cfg(any(test, loom))]
    pub(crate) fn rescue(&self, owner_deque_is_empty: impl FnOnce() -> bool) -> Option<JobRef> {
        self.rescue_from(|_| owner_deque_is_empty(), |_, _| None)
            .map(|(job, _)| job)
    }

    /// Another worker: takes the oldest private half if there is one and `may_take`,
    /// called under the lock with the owner's regions, allows it. `place` (also under the
    /// lock, once the half is claimed) says in which region it runs. Returns the half with
    /// that region. The caller runs the half; the owner's `join` waits for its latch.
    pub(crate) fn rescue_from(
        &self,
        may_take: impl FnOnce(&Regions) -> bool,
        place: impl FnOnce(&JobRef, &mut Regions) -> Option<Arc<Region>>,
    ) -> Option<(JobRef, Option<Arc<Region>>)> {
        if !self.has_private_halves() {
            return None;
        }
        let mut regions = self.lock.lock();
        if !may_take(&regions) {
            return None;
        }
        let bottom = self.bottom.load(Ordering::Relaxed);
        if bottom >= self.top.load(Ordering::Acquire) {
            return None;
        }
        // Claim, then look whether the owner popped the half meanwhile.
        self.bottom.store(bottom + 1, Ordering::Relaxed);
        if !barrier::heavy().exact_for_light() {
            // The barrier pair may be inexact for an owner that read the old mode: wait
            // until its pop, if any, is visible (sync::barrier, "Failure").
            std::thread::sleep(barrier::RECHECK_AFTER);
        }
        if bottom < self.top.load(Ordering::Acquire) {
            let job = self.take(bottom);
            let region = place(&job, &mut regions);
            Some((job, region))
        } else {
            self.bottom.store(bottom, Ordering::Relaxed);
            None
        }
    }

    /// Whether a half is private and the owner's regions satisfy `pred` (racy as
    /// [`has_private_halves`](Self::has_private_halves); the regions are read under the
    /// lock).
    pub(crate) fn has_private_in(&self, pred: impl FnOnce(&Regions) -> bool) -> bool {
        self.has_private_halves() && pred(&self.lock.lock())
    }

    /// Hands out the half at `pos`: reads its slot and writes its latch. Under the lock,
    /// once per half (promotion and rescue both move `bottom` past it).
    fn take(&self, pos: usize) -> JobRef {
        let slot = &self.slots[pos % CAPACITY];
        let word = slot.half.load(Ordering::Relaxed);
        // SAFETY: the slot holds the word of the half pushed at `pos`: the owner
        // wrote it before publishing `top > pos` (Release, seen by our Acquire load or
        // written by ourselves), and cannot overwrite it while the position is claimed
        // (`reserve` keeps a slot free). The half is live (its `join` has not popped it:
        // `pos` is below `top`, checked under the barrier pair by a rescuer, or the owner
        // promotes it itself) and handed out once, here, under the lock; `self.owner`
        // lives as long as this stack, which the pool keeps while its workers run.
        unsafe { JoinHalf::from_word(word).hand_out(&self.owner) }
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
