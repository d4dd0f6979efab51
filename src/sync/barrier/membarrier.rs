//! Linux: `membarrier(2)` `MEMBARRIER_CMD_PRIVATE_EXPEDITED` as the heavy half, after a
//! registration off the build path; the fence pair until then and after a failure.

use super::Park;
use std::sync::atomic::{fence, AtomicBool, AtomicU8, Ordering};

// Commands of membarrier(2), from <linux/membarrier.h>.
/// Asks which commands the kernel supports (a bit mask).
const MEMBARRIER_CMD_QUERY: libc::c_int = 0;
/// A memory barrier on every running thread of this process, by IPI; needs the
/// registration below first.
const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
/// Registers this process for `MEMBARRIER_CMD_PRIVATE_EXPEDITED`.
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

/// The process's barrier mode: one of the constants above, moved along the transitions
/// drawn above them.
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

/// When a pool is built (before its workers exist): installs the fork handler once per
/// process, and gets the registration done or under way, so that the pool's workers run
/// the asymmetric pair from their first `join` or within one registration of it.
///
/// A process that has only the building thread registers right here: the kernel's
/// registration then skips the RCU grace period (a few microseconds), the mode is
/// published before any worker exists, and every worker fixes its light barrier when it
/// starts. A process that already runs other threads would wait for the grace period
/// (milliseconds): it starts the registration thread ([`prepare`]) instead, and its
/// workers' `join`s take the checked path until the mode is published.
pub(crate) fn init() {
    install_at_fork();
    // Relaxed, as in `prepare`: the exchange decides. `single_threaded` reads `/proc`, so
    // it is asked only while nobody has started.
    if MODE.load(Ordering::Relaxed) == UNREGISTERED
        && single_threaded()
        && transition(UNREGISTERED, REGISTERING)
    {
        register(std::ptr::null_mut());
    }
    // One load once registered or registering; else the registration thread.
    prepare();
}

/// Whether the calling thread is the process's only one (`/proc/self/stat`'s
/// `num_threads`). False when that cannot be read (no `/proc`): then the registration
/// runs on its own thread, as in any process with threads.
fn single_threaded() -> bool {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return false;
    };
    // Fields after the command name (which may hold spaces and parentheses, so split
    // at the last ')'): state is field 3, num_threads field 20.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(17))
        .is_some_and(|n| n == "1")
}

/// Installs [`reset_after_fork`], once per process (again at the next build if it failed).
fn install_at_fork() {
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

/// Starts the registration on a thread of its own, once per process: by [`init`] when a
/// pool is built in a process that runs other threads, and by a worker about to park or
/// promote (not while it holds its sleep mutex) after a `fork` reset the mode. Later
/// calls are one load.
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
fn spawn_detached_pthread(start: extern "C" fn(*mut libc::c_void) -> *mut libc::c_void) -> bool {
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

/// The registration's body, from `REGISTERING` (on the thread `prepare` started, or on
/// a single-threaded process's building thread, `init`): register, make every sleeper
/// use the membarrier, make every thread execute one barrier, then let pushers drop
/// their fence. Three syscalls and atomics; never unwinds.
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

/// Whether pushers may use the compiler fence alone (`EXPEDITED`), for
/// [`FixedLight`](super::FixedLight). Once published, `EXPEDITED` is left only for `FAILED`,
/// whose sleepers recheck after [`RECHECK_AFTER`](super::RECHECK_AFTER) because pushers
/// that read `EXPEDITED` may still use the compiler fence: an owner that remembers the
/// answer is such a pusher for the rest of its life, which the recheck covers the same
/// way (`docs/sleep.md`, "Switching barrier modes").
#[inline]
pub(crate) fn expedited() -> bool {
    // Acquire: pairs with the Release half of the HEAVY -> EXPEDITED exchange, so the
    // publication barrier happens before the caller's push.
    MODE.load(Ordering::Acquire) == EXPEDITED
}

/// Whether `EXPEDITED` was ever published in this process (it is, or it fell to
/// `FAILED`, which only `EXPEDITED` falls to): the condition under which a
/// [`FixedLight`](super::FixedLight) may exist (checked in debug builds).
pub(crate) fn published() -> bool {
    matches!(MODE.load(Ordering::SeqCst), EXPEDITED | FAILED)
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
