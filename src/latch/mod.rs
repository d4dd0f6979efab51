//! Latches: one-shot signals that a job (or a set of jobs) has finished.
//!
//! Waiting is where a work-stealing pool earns its keep, so there are two ways to wait:
//!
//! * a **worker** waits by executing other jobs (the pool's `WorkerThread::wait_until`,
//!   reached from here through [`StealingWaiter`]) and only parks (through the sleep
//!   module) when there is nothing to do. Those latches are built on [`CoreLatch`], whose four states
//!   let the setter know whether the owner is asleep and must be woken;
//! * a thread **outside** the pool has nothing to steal and parks on a [`ParkLatch`]
//!   (its own job) or blocks on a [`LockLatch`] (mutex + condvar: a registry's start-up
//!   and shutdown, which several threads may wait for).
//!
//! The shapes follow rayon-core's `latch.rs`: `set` takes a raw pointer because the waiter
//! may free the latch the moment it observes it set, so `set` must read everything it
//! needs *before* the releasing store and touch nothing of the latch afterwards.

mod count;

pub(crate) use crate::sleep::CoreLatch;
pub(crate) use count::{CountLatch, StealingWaiter};

use crate::sleep::Sleep;
use crate::sync::checked::{thread, AtomicBool, Condvar, Mutex, UnsafeCell};
use crate::sync::unchecked::Arc;
use crate::sync::Ordering;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

/// A one-shot signal.
pub(crate) trait Latch {
    /// Sets the latch, waking its waiter if needed.
    ///
    /// # Safety
    /// `this` must point to a live latch. The waiter may free the latch as soon as it
    /// observes it set, so implementations must not touch `*this` after the store that
    /// makes the latch observable as set.
    unsafe fn set(this: *const Self);
}

/// Latches a worker can wait on with `wait_until`: they expose a [`CoreLatch`].
pub(crate) trait AsCoreLatch {
    /// The core state machine of this latch.
    fn as_core_latch(&self) -> &CoreLatch;
}

impl AsCoreLatch for CoreLatch {
    #[inline]
    fn as_core_latch(&self) -> &CoreLatch {
        self
    }
}

/// A worker as the owner of the latches it waits on: its pool's sleep state and its
/// index there, which a setter needs to wake it. One per worker, in its private stack of
/// `join` halves (`PrivateStack::owner`), so that a latch holds a single pointer to it.
pub(crate) struct LatchOwner {
    /// The owner's pool's sleep state.
    pub(crate) sleep: Arc<Sleep>,
    /// The owner's index in its pool.
    pub(crate) index: usize,
}

/// The latch of a `join`'s second half, which its owner waits on only if the half left
/// its private stack (`pool::private_stack`).
///
/// Written only then: the `join` fast path builds the half's job without touching its
/// latch, and the private stack initialises it (state `UNSET`, the owner's
/// [`LatchOwner`]) when it hands the half out, by promotion or rescue, under the stack's
/// lock (`PrivateStack::take`). Whoever runs the half got it from there, and the owner
/// reads the latch only after its pop answered "taken" under the same lock, so every
/// reader comes after the initialisation. The setter, a worker of the same pool, wakes
/// the owner if it fell asleep.
pub(crate) struct JoinLatch {
    /// The latch and its owner; uninitialised until [`write`](Self::write).
    inner: UnsafeCell<MaybeUninit<JoinLatchInner>>,
}

/// A written [`JoinLatch`].
struct JoinLatchInner {
    /// The state the owner waits on, `UNSET` when written.
    core_latch: CoreLatch,
    /// The owner to wake, in its private stack of `join` halves.
    owner: *const LatchOwner,
}

// SAFETY: the cell is written once, by the thread that hands the half out, under the
// private stack's lock and before anyone reads it (see the type's documentation); after
// that it is only read, and its `CoreLatch` is atomic. The owner pointer points into the
// owner's private stack, which the pool keeps alive while any of its workers runs.
unsafe impl Sync for JoinLatch {}

impl JoinLatch {
    /// A latch not written yet: no store on the `join` fast path.
    #[inline(always)]
    pub(crate) fn new_unwritten() -> Self {
        JoinLatch {
            inner: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// Writes the latch of a half that leaves its owner's private stack: `UNSET`, owned
    /// by `owner`.
    ///
    /// # Safety
    /// `this` points to the latch of a live half that is being handed out, once, by the
    /// thread that holds the private stack's lock; nobody reads the latch before.
    /// `owner` must outlive every setter (it lives in the owner's private stack, which
    /// the pool keeps while its workers run).
    #[inline]
    pub(crate) unsafe fn write(this: *const JoinLatch, owner: &LatchOwner) {
        // SAFETY: per the contract this thread is the only one touching the cell now.
        unsafe {
            (*this).inner.with_mut(|inner| {
                (*inner).write(JoinLatchInner {
                    core_latch: CoreLatch::new(),
                    owner,
                })
            });
        }
    }

    /// The core latch, after the half left the private stack.
    ///
    /// # Safety
    /// The latch was written ([`write`](Self::write)) before, and that write happens
    /// before this call (the owner's pop answered "taken" under the stack's lock).
    #[inline]
    pub(crate) unsafe fn core_latch(&self) -> &CoreLatch {
        // SAFETY: per the contract the cell is initialised and no longer written.
        unsafe {
            &(*self.inner.with(|inner| inner))
                .assume_init_ref()
                .core_latch
        }
    }
}

impl Latch for JoinLatch {
    #[inline]
    unsafe fn set(this: *const Self) {
        // SAFETY: whoever sets the latch runs the half, which it got from the private
        // stack after the latch was written (the type's documentation). `this` is live
        // until the swap inside `set_latch_and_wake`; the owner's `LatchOwner` and the
        // sleep state are read before it and outlive the call (the setter, a worker of the
        // same pool, keeps the pool's registry, and so the owner's private stack and the
        // sleep state, alive).
        unsafe {
            let inner = (*(*this).inner.with(|inner| inner)).assume_init_ref();
            let owner = &*inner.owner;
            let sleep: &Sleep = &owner.sleep;
            sleep.set_latch_and_wake(&inner.core_latch, owner.index);
        }
    }
}

/// The latch a worker waits on for a job it handed out to *another* pool (`install` on a
/// pool from a worker of a different one): the setter holds the owner's sleep state alive
/// until the wake-up was delivered, since the owner may finish and drop its pool as soon
/// as the latch is set.
pub(crate) struct CrossLatch<'r> {
    /// The state the owner waits on.
    core_latch: CoreLatch,
    /// The owner to wake.
    owner: &'r LatchOwner,
}

impl<'r> CrossLatch<'r> {
    /// A latch owned by `owner`, set by a worker of another pool.
    #[inline]
    pub(crate) fn new(owner: &'r LatchOwner) -> Self {
        CrossLatch {
            core_latch: CoreLatch::new(),
            owner,
        }
    }
}

impl AsCoreLatch for CrossLatch<'_> {
    #[inline]
    fn as_core_latch(&self) -> &CoreLatch {
        &self.core_latch
    }
}

impl Latch for CrossLatch<'_> {
    #[inline]
    unsafe fn set(this: *const Self) {
        // SAFETY: `this` and its owner are live until the swap inside
        // `set_latch_and_wake`; the sleep state is held by our own `Arc` through the
        // wake-up, and nothing of `*this` is touched after the swap.
        unsafe {
            let owner = (*this).owner;
            let sleep = Arc::clone(&owner.sleep);
            sleep.set_latch_and_wake(&(*this).core_latch, owner.index);
        }
    }
}

/// How long a thread outside the pool spins on its [`ParkLatch`] before it parks: about
/// a parked thread's wake-up, so that a short `install` or `join` from outside (the work
/// handed to a worker and the result back) costs no wake-up of the caller, while a long
/// one costs the caller this much CPU time once. The idea of spin-then-park locks (glibc's
/// adaptive mutex, Go's runtime locks); rayon-core's outside waiters block at once.
#[cfg(not(loom))]
const SPIN_BEFORE_PARK: std::time::Duration = std::time::Duration::from_micros(20);

/// The latch of one thread outside the pool that waits for its own job (`install` and
/// blocking scopes and broadcasts from outside): the owner parks with
/// `std::thread::park`, the setter unparks it.
///
/// Cheaper than [`LockLatch`] on the hot outside paths: the setter makes no syscall
/// unless the owner is actually parked, and the woken owner takes no lock (a condvar
/// notified under its mutex wakes the waiter only for it to block on that mutex again;
/// parking_lot hid that by requeueing, std's condvar does not). std's parker is a futex
/// word inside the owner's `Thread`, so this is fork-safe like the rest of `sync`.
#[derive(Debug)]
pub(crate) struct ParkLatch {
    /// Whether the latch is set (Release by the setter, Acquire by the owner).
    set: AtomicBool,
    /// The only thread that may wait.
    owner: thread::Thread,
}

impl ParkLatch {
    /// An unset latch owned by the calling thread.
    pub(crate) fn new() -> ParkLatch {
        ParkLatch {
            set: AtomicBool::new(false),
            owner: thread::current(),
        }
    }

    /// Blocks until the latch is set. Only the owner may call this. Spins first, for at
    /// most [`SPIN_BEFORE_PARK`], then parks.
    ///
    /// The thread's park token is the caller's too: any `park` here may have used up an
    /// `unpark` meant for the caller's own next `park`, even one that returned with the
    /// latch set (tokens do not add up: another thread's `unpark` that lands while the
    /// owner wakes merges with the setter's), so after parking one token is handed back
    /// before returning (an extra token only makes a later `park` return early, which
    /// `park` allows anyway).
    pub(crate) fn wait(&self) {
        debug_assert_eq!(thread::current().id(), self.owner.id());
        #[cfg(not(loom))]
        self.spin();
        // Acquire pairs with the Release in `set`: the job's result is visible after.
        if self.set.load(Ordering::Acquire) {
            return;
        }
        while !self.set.load(Ordering::Acquire) {
            // Returns on our setter's unpark, on a token from someone else, or spuriously.
            thread::park();
        }
        self.owner.unpark();
    }

    /// Waits for the latch without blocking, for at most [`SPIN_BEFORE_PARK`]: a job
    /// that takes less than a thread's wake-up is back before the owner could have been
    /// woken, and then neither side makes a system call (the setter's `unpark` finds the
    /// owner awake). Yields every few dozen spins, so that a worker sharing the owner's
    /// CPU (more threads than CPUs) runs meanwhile.
    #[cfg(not(loom))]
    fn spin(&self) {
        let start = std::time::Instant::now();
        let mut spins = 0u32;
        loop {
            // Acquire pairs with the Release in `set`, as in `wait`.
            if self.set.load(Ordering::Acquire) {
                return;
            }
            spins = spins.wrapping_add(1);
            if spins % 64 == 0 {
                if start.elapsed() >= SPIN_BEFORE_PARK {
                    return;
                }
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Blocks until the latch is set, then resets it for the owner's next job.
    pub(crate) fn wait_and_reset(&self) {
        self.wait();
        // Relaxed: the setter is done with this latch (it stored `true` last), and the
        // next job is handed over through the injector, which orders this store.
        self.set.store(false, Ordering::Relaxed);
    }
}

impl Latch for ParkLatch {
    #[inline]
    unsafe fn set(this: *const Self) {
        // SAFETY: `this` is live per the contract. The owner may free the latch once it
        // sees `true`, so the handle to unpark is cloned (its own reference count)
        // before the store, and nothing of `*this` is touched after it.
        unsafe {
            let owner = (*this).owner.clone();
            (*this).set.store(true, Ordering::Release);
            // Under loom only: a scheduling point between the store and the unpark, as the
            // OS may deschedule the setter there. loom makes no such point by itself, and
            // its `unpark` hands the setter's history to the owner at once, so without it
            // the owner could never see `true` before the unpark and a missing Release
            // here would go unnoticed (`tests/loom_latch.rs`).
            #[cfg(loom)]
            thread::yield_now();
            owner.unpark();
        }
    }
}

/// A latch for threads outside the pool that any number of threads may wait on (a
/// registry's start-up and shutdown): they block on a condvar.
#[derive(Debug)]
pub(crate) struct LockLatch {
    /// Whether the latch is set.
    m: Mutex<bool>,
    /// Notified, under `m`, when the latch is set.
    v: Condvar,
}

impl LockLatch {
    /// An unset latch.
    pub(crate) fn new() -> LockLatch {
        LockLatch {
            m: Mutex::new(false),
            v: Condvar::new(),
        }
    }

    /// Blocks until the latch is set.
    pub(crate) fn wait(&self) {
        let mut guard = self.m.lock();
        while !*guard {
            guard = self.v.wait(guard);
        }
    }

    /// Whether the latch is set, without blocking.
    pub(crate) fn probe(&self) -> bool {
        *self.m.lock()
    }
}

impl Latch for LockLatch {
    #[inline]
    unsafe fn set(this: *const Self) {
        // SAFETY: `this` is live per the contract. The waiter can only observe `true`
        // after acquiring the mutex, i.e. after this guard is released, so the latch
        // outlives every access made here.
        unsafe {
            let mut guard = (*this).m.lock();
            *guard = true;
            (*this).v.notify_all();
        }
    }
}

/// A reference to a latch owned elsewhere (the thread-local [`ParkLatch`] of `install`
/// from outside the pool, the count latch of a blocking broadcast), for a job's latch
/// slot. The lifetime ties it to the latch, so it cannot outlive it; it is kept as a raw
/// pointer because [`Latch::set`] hands the latch on as one (the waiter may free the
/// latch as soon as it is set).
pub(crate) struct LatchRef<'a, L> {
    /// The latch referred to, valid for `'a`.
    inner: *const L,
    /// Ties the reference to the latch's lifetime `'a`.
    marker: PhantomData<&'a L>,
}

impl<'a, L> LatchRef<'a, L> {
    /// Refers to `inner` for `'a`.
    pub(crate) fn new(inner: &'a L) -> Self {
        LatchRef {
            inner,
            marker: PhantomData,
        }
    }
}

// SAFETY: a LatchRef is only dereferenced as `&L` (shared across threads: `L: Sync`) and
// handed to `L::set`, as a `&'a L` would be.
unsafe impl<L: Sync> Sync for LatchRef<'_, L> {}

impl<L> std::ops::Deref for LatchRef<'_, L> {
    type Target = L;
    fn deref(&self) -> &L {
        // SAFETY: made from a `&'a L`, and `self` cannot outlive `'a`.
        unsafe { &*self.inner }
    }
}

impl<L: Latch> Latch for LatchRef<'_, L> {
    #[inline]
    unsafe fn set(this: *const Self) {
        // SAFETY: read the target pointer before setting; the target is alive for `'a`,
        // which the caller's `this` (alive, by `set`'s contract) does not outlive.
        unsafe { L::set((*this).inner) }
    }
}
