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
        if cfg!(windows) && holds_loader_lock() {
            self.check_wait_cold(needs);
        }
    }

    #[cold]
    fn check_wait_cold(&self, needs: WaitNeeds) {
        let started = match needs {
            WaitNeeds::AnyWorker => self.any_started(),
            WaitNeeds::EveryWorker => self.all_started(),
        };
        if exiting() || !started {
            panic!(
                "stealpool: cannot wait for this pool here: {}, and this thread holds the \
                 Windows loader lock (it is running a thread-local destructor or DllMain), \
                 so no worker can start until it returns",
                if exiting() {
                    "the process is exiting (its workers are gone)"
                } else {
                    "its workers have not started"
                }
            );
        }
    }

    /// Whether `shutdown` may wait for the workers to exit: not while this thread holds
    /// the loader lock, which every exiting thread needs (Windows).
    pub(crate) fn can_wait_for_exit(&self) -> bool {
        !(cfg!(windows) && holds_loader_lock())
    }
}

/// Whether the calling thread owns the process's loader lock (`PEB::LoaderLock`, a
/// critical section), asked through ntdll's `RtlGetCurrentPeb` and
/// `RtlIsCriticalSectionLockedByThread` (looked up once). False when ntdll lacks one of
/// them (no wait is refused then).
#[cfg(windows)]
fn holds_loader_lock() -> bool {
    let Some(Ntdll {
        get_peb, is_locked, ..
    }) = ntdll()
    else {
        return false;
    };
    // SAFETY: both are ntdll's, of these types (`ntdll_functions`). The PEB lives as long
    // as the process, and its `LoaderLock` field is a pointer, read once, to the critical
    // section, which the second function only reads.
    unsafe {
        let peb = get_peb();
        if peb.is_null() {
            return false;
        }
        let loader_lock = peb.add(LOADER_LOCK_OFFSET).cast::<*const c_void>().read();
        !loader_lock.is_null() && is_locked(loader_lock) != 0
    }
}

#[cfg(windows)]
use std::ffi::c_void;

/// `PEB *RtlGetCurrentPeb(void)`.
#[cfg(windows)]
type GetPeb = unsafe extern "system" fn() -> *const u8;
/// `BOOL RtlIsCriticalSectionLockedByThread(RTL_CRITICAL_SECTION *)`.
#[cfg(windows)]
type IsLockedByThread = unsafe extern "system" fn(*const c_void) -> i32;

/// `PEB::LoaderLock`'s offset: 0xA0 on 32-bit Windows, 0x110 on 64-bit (x86_64 and
/// aarch64 share the layout).
#[cfg(windows)]
const LOADER_LOCK_OFFSET: usize = if cfg!(target_pointer_width = "64") {
    0x110
} else {
    0xA0
};

/// `BOOLEAN RtlDllShutdownInProgress(void)`.
#[cfg(windows)]
type ShutdownInProgress = unsafe extern "system" fn() -> u8;

/// The ntdll functions the checks use.
#[cfg(windows)]
#[derive(Clone, Copy)]
struct Ntdll {
    get_peb: GetPeb,
    is_locked: IsLockedByThread,
    shutdown_in_progress: ShutdownInProgress,
}

/// ntdll's functions, looked up once; `None` if it lacks one.
#[cfg(windows)]
fn ntdll() -> Option<Ntdll> {
    use std::sync::OnceLock;
    static NTDLL: OnceLock<Option<Ntdll>> = OnceLock::new();
    *NTDLL.get_or_init(ntdll_functions)
}

/// Whether the process is exiting (`ExitProcess` ran: every other thread is gone).
#[cfg(windows)]
fn exiting() -> bool {
    // SAFETY: ntdll's function, of this type (`ntdll_functions`); it takes no argument.
    ntdll().is_some_and(|ntdll| unsafe { (ntdll.shutdown_in_progress)() } != 0)
}

#[cfg(not(windows))]
fn exiting() -> bool {
    false
}

#[cfg(windows)]
fn ntdll_functions() -> Option<Ntdll> {
    use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleA, GetProcAddress};
    // SAFETY: the names are NUL-terminated; ntdll is mapped in every process and never
    // unloaded, and GetModuleHandleA takes no reference on it. The two functions have
    // these signatures on every Windows since XP and in wine (`RtlDllShutdownInProgress`:
    // `BOOLEAN (void)`), so the transmuted pointers are of the right types.
    unsafe {
        let ntdll = GetModuleHandleA(b"ntdll.dll\0".as_ptr());
        if ntdll.is_null() {
            return None;
        }
        let get_peb = GetProcAddress(ntdll, b"RtlGetCurrentPeb\0".as_ptr())?;
        let is_locked = GetProcAddress(ntdll, b"RtlIsCriticalSectionLockedByThread\0".as_ptr())?;
        let shutdown = GetProcAddress(ntdll, b"RtlDllShutdownInProgress\0".as_ptr())?;
        Some(Ntdll {
            get_peb: std::mem::transmute::<_, GetPeb>(get_peb),
            is_locked: std::mem::transmute::<_, IsLockedByThread>(is_locked),
            shutdown_in_progress: std::mem::transmute::<_, ShutdownInProgress>(shutdown),
        })
    }
}

#[cfg(not(windows))]
fn holds_loader_lock() -> bool {
    false
}
