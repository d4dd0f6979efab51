//! Asymmetric memory barriers: a cheap one for the hot path, an expensive one for the
//! rare path, that together order like a pair of SeqCst fences.
//!
//! The sleep protocol needs a store-load (Dekker) pairing between every push and every
//! worker about to park (`docs/sleep.md`). Pushes are the `join` fast path and parking is
//! rare, so the pusher's side is [`light`] and the sleeper's side is [`heavy`]:
//!
//! * on Linux, once the process is registered for `membarrier(2)`
//!   `MEMBARRIER_CMD_PRIVATE_EXPEDITED`, `light` is a compiler fence only and `heavy`
//!   makes every running thread of the process execute a full memory barrier (the
//!   kernel's IPIs) before it returns. Whatever point in the pusher's program that barrier
//!   lands on, the pusher's store before it is visible to the sleeper afterwards, and the
//!   pusher's loads after it see the sleeper's earlier stores;
//! * before that, and everywhere else, both are `fence(SeqCst)`.
//!
//! This is the scheme of folly's `asymmetricLightBarrier`/`asymmetricHeavyBarrier` and of
//! liburcu's membarrier flavour.
//!
//! **Start-up.** Registering waits for an RCU grace period (8-16 ms here in a process
//! that already runs threads), so it is off the build path: the first worker that is
//! about to park calls [`prepare`], which starts a short-lived thread to register while
//! everyone keeps using the fence pair (a bare pthread, so that a `fork()` landing on
//! its start or exit cannot leave one of std's locks held in the child). `docs/sleep.md` ("Switching barrier modes") gives
//! the argument that the switch, and the fall-back below, lose no wake-up.
//!
//! **Failure.** If a sleeper's membarrier fails (ENOMEM, or a seccomp filter installed
//! after registration), the process falls back to the fence pair for good. Pushers that
//! read the old mode just before the switch may still use a compiler fence once, so
//! [`heavy`] then answers [`Park::Recheck`]: the sleeper parks with a timeout and looks
//! at the queues once more before it parks for good. It never spins.
//!
//! Building with `RUSTFLAGS="--cfg stealpool_fences"` forces the fence pair on Linux too
//! (for measuring what the membarrier buys, and for model checkers that cannot see a
//! membarrier).

use std::time::Duration;

/// What [`heavy`] ordered, and so how a worker that passed it and found no work may park.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Park {
    /// A process-wide barrier (a membarrier): exact against every other thread's stores,
    /// whatever barrier, if any, that thread ran. Park until woken. (Only the membarrier
    /// variant makes one.)
    #[cfg_attr(
        not(all(target_os = "linux", not(stealpool_fences), not(loom))),
        allow(dead_code)
    )]
    Untimed,
    /// A fence of our own only: exact against the threads that ran [`light`] (every
    /// push to a queue, every pop of a private `join` half), but not against the lazy
    /// `join`'s poll, which runs no fence ([`poll_fence`]): a sleeper that may miss such
    /// a poll's private push rechecks as for [`Recheck`](Park::Recheck).
    FenceOnly,
    /// For at most [`RECHECK_AFTER`], then one more look at the queues, then until
    /// woken: a pusher may have used a compiler fence against a fence-only sleeper.
    Recheck,
}

impl Park {
    /// Whether the pair is exact against a pusher that ran [`light`].
    #[inline]
    pub(crate) fn exact_for_light(self) -> bool {
        self != Park::Recheck
    }
}

/// The lazy `join`'s poll barrier, between the private push and the load of the sleep
/// counters: a compiler fence, never a fence instruction, in every mode. A sleeper whose
/// own barrier was a membarrier is exact against it anyway; one that only fenced
/// ([`Park::FenceOnly`]) while another worker was running, which might be such a pusher,
/// looks again after [`RECHECK_AFTER`] (`docs/join.md`, "The poll without a fence").
#[inline(always)]
pub(crate) fn poll_fence() {
    // loom models no compiler reordering: std's fence is what it sees either way.
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
}

/// How long a [`Park::Recheck`] sleeper waits before its second look. A pusher's
/// unfenced store and load are reordered only within its CPU's store buffer, which drains
/// in nanoseconds to microseconds; a millisecond is far beyond that window.
pub(crate) const RECHECK_AFTER: Duration = Duration::from_millis(1);

#[cfg(all(target_os = "linux", not(stealpool_fences), not(loom)))]
pub(crate) use self::membarrier::{heavy, init, light, mode_name, prepare, OwnLight};

#[cfg(not(all(target_os = "linux", not(stealpool_fences), not(loom))))]
pub(crate) use self::fences::{heavy, init, light, mode_name, prepare, OwnLight};

#[cfg(not(all(target_os = "linux", not(stealpool_fences), not(loom))))]
mod fences {
    use super::Park;
    #[cfg(loom)]
    use loom::sync::atomic::fence;
    #[cfg(not(loom))]
    use std::sync::atomic::fence;
    use std::sync::atomic::Ordering;

    /// Nothing to set up.
    pub(crate) fn init() {}

    /// Nothing to start.
    pub(crate) fn prepare() {}

    /// Always the fence pair.
    pub(crate) fn mode_name() -> &'static str {
        "fences"
    }

    /// A full fence.
    #[inline]
    pub(crate) fn light() {
        fence(Ordering::SeqCst);
    }

    /// A full fence: exact against fenced pushers only.
    pub(crate) fn heavy() -> Park {
        fence(Ordering::SeqCst);
        Park::FenceOnly
    }

    /// One thread's [`light`] (see the membarrier variant's): here always the full fence.
    #[derive(Debug)]
    pub(crate) struct OwnLight;

    impl OwnLight {
        /// One thread's light barrier.
        pub(crate) const fn new() -> Self {
            OwnLight
        }

        /// A full fence.
        #[inline(always)]
        pub(crate) fn light(&self) {
            fence(Ordering::SeqCst);
        }
    }
}

#[cfg(all(target_os = "linux", not(stealpool_fences), not(loom)))]
mod membarrier {
    use super::Park;
    use std::sync::atomic::{compiler_fence, fence, AtomicBool, AtomicU8, Ordering};

    // Commands of membarrier(2), from <linux/membarrier.h>.
    const MEMBARRIER_CMD_QUERY: libc::c_int = 0;
    const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
    const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

    // The process's barrier mode. Transitions (all by compare-exchange):
    //
    //   UNREGISTERED -> REGISTERING -> HEAVY -> EXPEDITED -> FAILED
    //        ^              |            |
    //        |  (fork)      +------------+--> FENCES
    //        +--------------+------------+
    //
    // Pushers use the compiler fence only in EXPEDITED; sleepers add a membarrier in
    // HEAVY and EXPEDITED. FENCES and FAILED are final; FAILED (a membarrier failed after
    // pushers may have relied on it) makes sleepers recheck.

    /// Nobody started registering: the fence pair.
    const UNREGISTERED: u8 = 0;
    /// The registration thread is at work: the fence pair.
    const REGISTERING: u8 = 1;
    /// Registered: sleepers add a membarrier; pushers still fence.
    const HEAVY: u8 = 2;
    /// Published: pushers use a compiler fence only.
    const EXPEDITED: u8 = 3;
    /// membarrier unavailable, or it failed before pushers relied on it: the fence pair.
    const FENCES: u8 = 4;
    /// A membarrier failed after pushers relied on it: the fence pair, sleepers recheck.
    const FAILED: u8 = 5;

    static MODE: AtomicU8 = AtomicU8::new(UNREGISTERED);

    /// Whether this process (or the parent it was forked from) installed
    /// [`reset_after_fork`] (`init`).
    static AT_FORK_INSTALLED: AtomicBool = AtomicBool::new(false);

    /// `membarrier(cmd, 0, 0)`: the command's result, or -1 with `errno` set.
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

    /// Moves `MODE` from `from` to `to`; false if it was not `from`.
    fn transition(from: u8, to: u8) -> bool {
        MODE.compare_exchange(from, to, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// Installs the fork handler, once per process, when a pool is built (before its
    /// workers exist, so before any registration can be under way). Microseconds.
    pub(crate) fn init() {
        if AT_FORK_INSTALLED.swap(true, Ordering::SeqCst) {
            return;
        }
        // SAFETY: `reset_after_fork` is an `extern "C" fn()` that only does atomic
        // operations, which is all a child handler of a multithreaded process may do.
        let installed = unsafe {
            libc::pthread_atfork(None, None, Some(reset_after_fork as unsafe extern "C" fn()))
        };
        if installed != 0 {
            // ENOMEM: try again at the next build.
            AT_FORK_INSTALLED.store(false, Ordering::SeqCst);
        }
    }

    /// Starts the registration on a thread of its own, once per process. Called by a
    /// worker about to park (not while it holds its sleep mutex), so neither building a
    /// pool nor a short program that never idles pays for it.
    pub(crate) fn prepare() {
        // Relaxed: a stale value only means trying the CAS, which decides.
        if MODE.load(Ordering::Relaxed) != UNREGISTERED || !transition(UNREGISTERED, REGISTERING) {
            return;
        }
        if !spawn_detached_pthread(register) {
            transition(REGISTERING, FENCES);
        }
    }

    /// Starts `start` on a detached thread made with `pthread_create` directly, not
    /// `std::thread`: std's thread start and exit take a process-wide lock (its
    /// stack-overflow bookkeeping), and a `fork()` that lands while this thread starts or
    /// ends would leave that lock held in the child, hanging every std thread the child
    /// starts. This thread runs no Rust runtime code: three syscalls and atomics.
    fn spawn_detached_pthread(
        start: extern "C" fn(*mut libc::c_void) -> *mut libc::c_void,
    ) -> bool {
        // SAFETY: `attr` is initialised by `pthread_attr_init` before any other use and
        // destroyed after `pthread_create` copied it; `thread` is a valid out-pointer.
        // `start` never unwinds (an `extern "C"` fn aborts instead) and takes no
        // argument, so the null pointer is never read.
        unsafe {
            let mut attr: libc::pthread_attr_t = std::mem::zeroed();
            if libc::pthread_attr_init(&mut attr) != 0 {
                return false;
            }
            let mut ok =
                libc::pthread_attr_setdetachstate(&mut attr, libc::PTHREAD_CREATE_DETACHED) == 0;
            // The default stack size: a smaller one would have to leave room for the
            // binary's static TLS, which glibc carves out of it. Untouched pages cost
            // nothing.
            let mut thread: libc::pthread_t = std::mem::zeroed();
            ok = ok && libc::pthread_create(&mut thread, &attr, start, std::ptr::null_mut()) == 0;
            libc::pthread_attr_destroy(&mut attr);
            ok
        }
    }

    /// The registration thread's body (started by `prepare`): register, make every
    /// sleeper use the membarrier, make every thread execute one barrier, then let
    /// pushers drop their fence. Three syscalls and atomics; never unwinds.
    extern "C" fn register(_: *mut libc::c_void) -> *mut libc::c_void {
        let wanted = MEMBARRIER_CMD_PRIVATE_EXPEDITED | MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED;
        let supported = membarrier(MEMBARRIER_CMD_QUERY);
        if supported < 0
            || (supported as libc::c_int) & wanted != wanted
            || membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0
        {
            transition(REGISTERING, FENCES);
            return std::ptr::null_mut();
        }
        if !transition(REGISTERING, HEAVY) {
            return std::ptr::null_mut();
        }
        // The publication barrier: every thread that read a mode before HEAVY did so
        // before its barrier point inside this call, so its fenced stores are visible
        // to every pusher that reads EXPEDITED below (docs/sleep.md, "Switching barrier
        // modes").
        if membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0 {
            transition(HEAVY, EXPEDITED);
        } else {
            transition(HEAVY, FENCES);
        }
        std::ptr::null_mut()
    }

    /// `pthread_atfork` child handler. The child has only the forking thread, so a
    /// registration under way in the parent will never finish there: start over (the
    /// child's next park registers again; registering twice is harmless).
    extern "C" fn reset_after_fork() {
        transition(REGISTERING, UNREGISTERED);
        transition(HEAVY, UNREGISTERED);
    }

    /// What the pair is now: `"fences"`, `"expedited"` or `"failed"`.
    pub(crate) fn mode_name() -> &'static str {
        match MODE.load(Ordering::SeqCst) {
            EXPEDITED => "expedited",
            FAILED => "failed",
            _ => "fences",
        }
    }

    /// The pusher's side: a compiler fence once every sleeper uses the membarrier, else a
    /// full fence.
    #[inline]
    pub(crate) fn light() {
        // Acquire: pairs with the Release half of the HEAVY -> EXPEDITED exchange, so the
        // publication barrier happens before this push.
        if MODE.load(Ordering::Acquire) == EXPEDITED {
            compiler_fence(Ordering::SeqCst);
        } else {
            fence(Ordering::SeqCst);
        }
    }

    /// [`light`] for the one thread that owns this value (a worker's `join` path), which
    /// remembers that it saw `EXPEDITED`: from then on its barrier is the compiler fence
    /// alone, with no load of the mode. One byte the owner reads, on a line it writes
    /// anyway, instead of a load of the shared mode, a compare and a branch.
    ///
    /// Once published, `EXPEDITED` is left only for `FAILED`, whose sleepers recheck after
    /// [`RECHECK_AFTER`](super::RECHECK_AFTER) because pushers that read `EXPEDITED` may
    /// still use the compiler fence; this owner is such a pusher for the rest of its life,
    /// which the recheck covers the same way (`docs/sleep.md`, "Switching barrier modes").
    #[derive(Debug)]
    pub(crate) struct OwnLight {
        /// Whether this owner saw `EXPEDITED`. Written and read only by the owner
        /// (Relaxed: an atomic only so that the owner's struct may be shared).
        expedited: AtomicBool,
    }

    impl OwnLight {
        /// One thread's light barrier, which has not seen `EXPEDITED` yet.
        pub(crate) const fn new() -> Self {
            OwnLight {
                expedited: AtomicBool::new(false),
            }
        }

        /// The pusher's side of the barrier pair, as [`light`].
        #[inline(always)]
        pub(crate) fn light(&self) {
            if self.expedited.load(Ordering::Relaxed) {
                compiler_fence(Ordering::SeqCst);
            } else {
                self.light_cold();
            }
        }

        #[cold]
        #[inline(never)]
        fn light_cold(&self) {
            // As `light`: Acquire pairs with the publication of EXPEDITED.
            if MODE.load(Ordering::Acquire) == EXPEDITED {
                self.expedited.store(true, Ordering::Relaxed);
                compiler_fence(Ordering::SeqCst);
            } else {
                fence(Ordering::SeqCst);
            }
        }
    }

    /// The sleeper's side: a full fence of our own, then, once registered, a membarrier
    /// over every thread of the process. A failed membarrier switches the process to the
    /// fence pair for good.
    pub(crate) fn heavy() -> Park {
        fence(Ordering::SeqCst);
        match MODE.load(Ordering::SeqCst) {
            mode @ (HEAVY | EXPEDITED) => {
                if membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0 {
                    return Park::Untimed;
                }
                if mode == HEAVY && transition(HEAVY, FENCES) {
                    // No pusher used a compiler fence yet: our fence pairs with theirs.
                    return Park::FenceOnly;
                }
                // Pushers may have read EXPEDITED: from now on everyone fences, and this
                // sleeper and all later ones recheck. (If the exchange fails, MODE is
                // FAILED already, or FENCES, set by a sleeper that failed in HEAVY before
                // anything was published: then no pusher ever read EXPEDITED.)
                transition(EXPEDITED, FAILED);
                if MODE.load(Ordering::SeqCst) == FAILED {
                    Park::Recheck
                } else {
                    Park::FenceOnly
                }
            }
            FAILED => Park::Recheck,
            _ => Park::FenceOnly,
        }
    }
}
