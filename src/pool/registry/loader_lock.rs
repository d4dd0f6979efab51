//! Windows' loader lock: a thread that holds it cannot start new threads, because every
//! new thread takes it (to notify the loaded DLLs) before it runs any code of its own, and
//! no thread can finish exiting. A thread holds it while its thread-local destructors run,
//! and in `DllMain`; at process exit the main thread runs its destructors under it after
//! every other thread was killed. std's `LocalKey` documents the deadlock this gives
//! `JoinHandle::join` there.
//!
//! A pool may still be built there, and `spawn` into it works (the workers start once
//! the lock is released, as on rayon-core). But a wait there for workers that have not
//! started, or that are gone, would never end: such a wait panics with the reason instead
//! (`check_wait`), and `shutdown` returns an error (`docs/guarantees.md`).
//!
//! Elsewhere the checks answer "no wait is refused".

use super::Registry;

/// What a wait needs of a pool's workers.
#[derive(Clone, Copy, Debug)]
pub(crate) enum WaitNeeds {
    /// Some worker, to run the job waited for (`install`, `join` and `scope` from outside
    /// the pool, `wait_idle`).
    AnyWorker,
    /// Every worker, to run its own copy (`broadcast`).
    EveryWorker,
}

impl Registry {
    /// Before a wait on this pool: on Windows, panics if this thread holds the loader lock
    /// and the workers the wait needs have not started (or the process is exiting, so
    /// they are gone).
    ///
    /// # Panics
    /// In that case only, with the reason.
    #[inline]
    pub(crate) fn check_wait(&self, needs: WaitNeeds) {
        if cfg!(windows) && os::holds_loader_lock() {
            self.check_wait_cold(needs);
        }
    }

    /// The rest of [`check_wait`](Self::check_wait), for a thread that holds the loader
    /// lock: panics unless the workers `needs` asks for have started and the process is not
    /// exiting.
    #[cold]
    fn check_wait_cold(&self, needs: WaitNeeds) {
        let why = if os::exiting() {
            "the process is exiting (its workers are gone)"
        } else if match needs {
            WaitNeeds::AnyWorker => self.any_started(),
            WaitNeeds::EveryWorker => self.all_started(),
        } {
            return;
        } else {
            "its workers have not started"
        };
        panic!(
            "stealpool: cannot wait for this pool here: {why}, and this thread holds the \
             Windows loader lock (it is running a thread-local destructor or DllMain), so no \
             worker can start until it returns"
        );
    }

    /// Whether `shutdown` may wait for the workers to exit: not while this thread holds
    /// the loader lock, which every exiting thread needs (Windows).
    pub(crate) fn can_wait_for_exit(&self) -> bool {
        !(cfg!(windows) && os::holds_loader_lock())
    }
}

/// The questions the checks ask the OS: on Windows, of ntdll (looked up once); elsewhere
/// the answers are "no".
#[cfg(windows)]
mod os {
    use crate::sync::ntdll;
    use std::ffi::c_void;
    use std::sync::OnceLock;

    /// `PEB *RtlGetCurrentPeb(void)`.
    type GetPeb = unsafe extern "system" fn() -> *const u8;
    /// `BOOL RtlIsCriticalSectionLockedByThread(RTL_CRITICAL_SECTION *)`.
    type IsLockedByThread = unsafe extern "system" fn(*const c_void) -> i32;
    /// `BOOLEAN RtlDllShutdownInProgress(void)`.
    type ShutdownInProgress = unsafe extern "system" fn() -> u8;

    /// `PEB::LoaderLock`'s offset: 0xA0 on 32-bit Windows, 0x110 on 64-bit (x86_64 and
    /// aarch64 share the layout).
    const LOADER_LOCK_OFFSET: usize = if cfg!(target_pointer_width = "64") {
        0x110
    } else {
        0xA0
    };

    /// The ntdll functions the checks use.
    #[derive(Clone, Copy)]
    struct Ntdll {
        /// `RtlGetCurrentPeb`.
        get_peb: GetPeb,
        /// `RtlIsCriticalSectionLockedByThread`.
        is_locked: IsLockedByThread,
        /// `RtlDllShutdownInProgress`.
        shutdown_in_progress: ShutdownInProgress,
    }

    /// ntdll's functions, looked up once; `None` if it lacks one (no wait is refused
    /// then).
    fn functions() -> Option<Ntdll> {
        static NTDLL: OnceLock<Option<Ntdll>> = OnceLock::new();
        *NTDLL.get_or_init(|| {
            let get_peb = ntdll::export(c"RtlGetCurrentPeb")?;
            let is_locked = ntdll::export(c"RtlIsCriticalSectionLockedByThread")?;
            let shutdown = ntdll::export(c"RtlDllShutdownInProgress")?;
            // SAFETY: these are the functions' signatures on every Windows since XP and
            // in wine (the types above), so the transmuted pointers have the right types.
            unsafe {
                Some(Ntdll {
                    get_peb: std::mem::transmute::<_, GetPeb>(get_peb),
                    is_locked: std::mem::transmute::<_, IsLockedByThread>(is_locked),
                    shutdown_in_progress: std::mem::transmute::<_, ShutdownInProgress>(shutdown),
                })
            }
        })
    }

    /// Whether the calling thread owns the process's loader lock (`PEB::LoaderLock`, a
    /// critical section).
    pub(super) fn holds_loader_lock() -> bool {
        let Some(ntdll) = functions() else {
            return false;
        };
        // SAFETY: ntdll's functions, of their types (`functions`). The PEB lives as long
        // as the process, and its `LoaderLock` field is a pointer, read once, to the
        // critical section, which the second function only reads.
        unsafe {
            let peb = (ntdll.get_peb)();
            if peb.is_null() {
                return false;
            }
            let loader_lock = peb.add(LOADER_LOCK_OFFSET).cast::<*const c_void>().read();
            !loader_lock.is_null() && (ntdll.is_locked)(loader_lock) != 0
        }
    }

    /// Whether the process is exiting (`ExitProcess` ran: every other thread is gone).
    pub(super) fn exiting() -> bool {
        // SAFETY: ntdll's function, of its type (`functions`); it takes no argument.
        functions().is_some_and(|ntdll| unsafe { (ntdll.shutdown_in_progress)() } != 0)
    }
}

/// The checks' questions where there is no loader lock: both answers are "no".
#[cfg(not(windows))]
mod os {
    /// Whether the calling thread owns the loader lock: never here.
    pub(super) fn holds_loader_lock() -> bool {
        false
    }

    /// Whether the process is exiting with the other threads gone: never here.
    pub(super) fn exiting() -> bool {
        false
    }
}
