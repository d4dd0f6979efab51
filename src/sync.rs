//! Every synchronisation primitive the scheduler itself owns, imported through one place.
//!
//! The scheduler's protocols (sleep/wake, latches, termination) are written against the
//! names re-exported here, never against `std::sync` or `parking_lot` directly. A later
//! change can therefore build the crate with `--cfg loom` and swap in
//! [loom](https://docs.rs/loom)'s model-checked types without touching the logic, the way
//! tokio and crossbeam test their own protocols.
//!
//! The deques (crossbeam-deque) and `CachePadded` (crossbeam-utils) are not re-exported:
//! they are well-tested data structures that the protocols use, not part of them.

pub(crate) use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
pub(crate) use std::sync::Arc;

pub(crate) use parking_lot::{Condvar, Mutex};

/// The primitives of the sleep/wake protocol itself (the sleep counters, the per-worker
/// parking mutex and condvar, `CoreLatch`'s state, the scheduler's `yield`). Built with
/// `RUSTFLAGS="--cfg loom --cfg stealpool_fences"`, they are loom's model-checked types
/// and `tests/loom_sleep.rs` explores every interleaving of the protocol; otherwise they
/// are std's atomics and parking_lot's mutex and condvar.
pub(crate) mod protocol {
    #[cfg(not(loom))]
    pub(crate) use parking_lot::{Condvar, Mutex};
    #[cfg(not(loom))]
    pub(crate) use std::sync::atomic::{AtomicU64, AtomicUsize};
    #[cfg(not(loom))]
    pub(crate) use std::thread::yield_now;

    #[cfg(loom)]
    pub(crate) use self::model::{Condvar, Mutex};
    #[cfg(loom)]
    pub(crate) use loom::sync::atomic::{AtomicU64, AtomicUsize};
    #[cfg(loom)]
    pub(crate) use loom::thread::yield_now;

    /// loom's mutex and condvar behind parking_lot's API (guards without poisoning,
    /// `wait(&mut guard)`), so the protocol's code is the same under both.
    #[cfg(loom)]
    mod model {
        use std::ops::{Deref, DerefMut};

        #[derive(Debug, Default)]
        pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);

        pub(crate) struct MutexGuard<'a, T>(Option<loom::sync::MutexGuard<'a, T>>);

        impl<T> Mutex<T> {
            pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
                MutexGuard(Some(self.0.lock().expect("poisoned")))
            }
        }

        impl<T> Deref for MutexGuard<'_, T> {
            type Target = T;
            fn deref(&self) -> &T {
                self.0.as_ref().expect("guard present")
            }
        }

        impl<T> DerefMut for MutexGuard<'_, T> {
            fn deref_mut(&mut self) -> &mut T {
                self.0.as_mut().expect("guard present")
            }
        }

        #[derive(Debug, Default)]
        pub(crate) struct Condvar(loom::sync::Condvar);

        impl Condvar {
            pub(crate) fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
                let inner = guard.0.take().expect("guard present");
                guard.0 = Some(self.0.wait(inner).expect("poisoned"));
            }
            pub(crate) fn notify_one(&self) {
                self.0.notify_one();
            }
        }
    }
}

/// The thread-local "which worker am I" slot.
pub(crate) use std::cell::Cell;

/// The global pool's one-time initialisation: a process-wide static, outside the
/// protocols a model checker would explore.
pub(crate) use std::sync::OnceLock;

/// `UnsafeCell` as the jobs use it: a cell whose contents one thread owns at a time,
/// handed over through a latch.
pub(crate) use std::cell::UnsafeCell;

/// Asymmetric memory barriers: a cheap one for the hot path, an expensive one for the
/// rare path, that together order like a pair of SeqCst fences.
///
/// The sleep protocol needs a store-load (Dekker) pairing between every push and every
/// worker about to park (docs/sleep.md). Pushes are the `join` fast path and parking is
/// rare, so the pusher's side is [`light`] and the sleeper's side is [`heavy`]:
///
/// * on Linux with `membarrier(2)` `MEMBARRIER_CMD_PRIVATE_EXPEDITED` available, `light`
///   is a compiler fence only and `heavy` makes every running thread of the process execute
///   a full memory barrier (the kernel's IPIs) before it returns. Whatever point in the
///   pusher's program that barrier lands on, the pusher's store before it is visible to the
///   sleeper afterwards, and the pusher's loads after it see the sleeper's earlier stores;
/// * everywhere else both are `fence(SeqCst)`.
///
/// This is the scheme of folly's `asymmetricLightBarrier`/`asymmetricHeavyBarrier` and of
/// liburcu's membarrier flavour.
///
/// Building with `RUSTFLAGS="--cfg stealpool_fences"` forces the fence pair on Linux too
/// (for measuring what the membarrier buys, and for model checkers that cannot see a
/// membarrier).
pub(crate) mod barrier {
    #[cfg(all(target_os = "linux", not(stealpool_fences), not(loom)))]
    pub(crate) use self::membarrier::{heavy, init, light};

    #[cfg(not(all(target_os = "linux", not(stealpool_fences), not(loom))))]
    pub(crate) use self::fences::{heavy, init, light};

    #[cfg(not(all(target_os = "linux", not(stealpool_fences), not(loom))))]
    mod fences {
        #[cfg(loom)]
        use loom::sync::atomic::fence;
        #[cfg(not(loom))]
        use std::sync::atomic::fence;
        use std::sync::atomic::Ordering;

        /// Nothing to set up.
        pub(crate) fn init() {}

        /// A full fence.
        #[inline]
        pub(crate) fn light() {
            fence(Ordering::SeqCst);
        }

        /// A full fence; always succeeds.
        pub(crate) fn heavy() -> bool {
            fence(Ordering::SeqCst);
            true
        }
    }

    #[cfg(all(target_os = "linux", not(stealpool_fences), not(loom)))]
    mod membarrier {
        use std::sync::atomic::{compiler_fence, fence, AtomicBool, Ordering};
        use std::sync::Once;

        // Commands of membarrier(2), from <linux/membarrier.h>.
        const MEMBARRIER_CMD_QUERY: libc::c_int = 0;
        const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
        const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

        /// Set once, before any worker thread of any pool exists, if the process registered
        /// for expedited private membarriers. Never cleared.
        static EXPEDITED: AtomicBool = AtomicBool::new(false);
        static INIT: Once = Once::new();

        fn membarrier(cmd: libc::c_int) -> libc::c_long {
            // SAFETY: membarrier takes (cmd, flags, cpu_id) integers and touches no memory
            // of ours.
            unsafe {
                libc::syscall(
                    libc::SYS_membarrier,
                    cmd,
                    0 as libc::c_uint,
                    0 as libc::c_int,
                )
            }
        }

        /// Registers the process for expedited membarriers if the kernel offers them.
        /// Called before a pool starts its workers; idempotent.
        pub(crate) fn init() {
            INIT.call_once(|| {
                let wanted =
                    MEMBARRIER_CMD_PRIVATE_EXPEDITED | MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED;
                let supported = membarrier(MEMBARRIER_CMD_QUERY);
                if supported >= 0
                    && (supported as libc::c_int) & wanted == wanted
                    && membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0
                {
                    // Relaxed: every worker thread is spawned after this `call_once`
                    // returns (thread spawn and `Once` give happens-before), so every
                    // worker reads `true`. A thread outside the pools may read a stale
                    // `false`, which only makes it use a full fence: always safe.
                    EXPEDITED.store(true, Ordering::Relaxed);
                }
            });
        }

        /// The pusher's side: a compiler fence if the sleeper's side is a membarrier,
        /// else a full fence.
        #[inline]
        pub(crate) fn light() {
            // Relaxed: see `init`.
            if EXPEDITED.load(Ordering::Relaxed) {
                compiler_fence(Ordering::SeqCst);
            } else {
                fence(Ordering::SeqCst);
            }
        }

        /// The sleeper's side: a full fence of our own, then a membarrier over every
        /// thread of the process. Returns `false` if the membarrier failed (ENOMEM, or a
        /// seccomp filter installed after registration): the caller must then not park,
        /// since pushers rely on this barrier.
        pub(crate) fn heavy() -> bool {
            fence(Ordering::SeqCst);
            // Relaxed: see `init`; only workers call this, and they always read `true`
            // when the process registered.
            !EXPEDITED.load(Ordering::Relaxed) || membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0
        }
    }
}
