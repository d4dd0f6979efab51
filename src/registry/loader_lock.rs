//! Windows' loader lock: a thread that holds it cannot start new threads, because every
//! new thread takes it (to notify the loaded DLLs) before it runs any code of its own. A
//! thread holds it while its thread-local destructors run, and in `DllMain`; a pool built
//! there would have workers that never start, and the first wait on the pool would hang
//! (std's `LocalKey` documents the same deadlock for `JoinHandle::join`). So building a
//! pool there fails with an error instead, and waiting there on a pool whose workers have
//! not all started panics with the reason (`docs/guarantees.md`).
//!
//! Elsewhere a thread never waits like this for another one to start, and the checks
//! answer "no".

use super::Registry;
use std::io;

/// The message of both checks.
const HELD: &str = "this thread holds the Windows loader lock (it is running a \
     thread-local destructor or DllMain), so no new thread can start until it returns";

/// The error a pool build returns when the calling thread holds the loader lock, else
/// `None`.
pub(super) fn threads_cannot_start() -> Option<io::Error> {
    if !holds_loader_lock() {
        return None;
    }
    Some(io::Error::new(
        io::ErrorKind::WouldBlock,
        format!("cannot start worker threads: {HELD}; build the pool before that"),
    ))
}

impl Registry {
    /// Before a thread outside the pool waits for its workers (`install`, `broadcast`):
    /// on Windows, panics if this thread holds the loader lock and some worker has not
    /// started, which it cannot do before this thread's wait ends.
    ///
    /// # Panics
    /// In that case only, with the reason.
    #[inline]
    pub(crate) fn check_outside_wait(&self) {
        if cfg!(windows) && holds_loader_lock() && !self.all_started() {
            panic!("stealpool: cannot wait for this pool: some of its workers have not started, and {HELD}");
        }
    }
}

/// Whether the calling thread owns the process's loader lock (`PEB::LoaderLock`, a
/// critical section), asked through ntdll's `RtlGetCurrentPeb` and
/// `RtlIsCriticalSectionLockedByThread` (looked up once). False when either is missing
/// (so a build goes on as before).
#[cfg(windows)]
fn holds_loader_lock() -> bool {
    use std::sync::OnceLock;
    static NTDLL: OnceLock<Option<(GetPeb, IsLockedByThread)>> = OnceLock::new();
    let Some((get_peb, is_locked)) = *NTDLL.get_or_init(ntdll_functions) else {
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

/// ntdll's two functions, if it exports them.
#[cfg(windows)]
fn ntdll_functions() -> Option<(GetPeb, IsLockedByThread)> {
    use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleA, GetProcAddress};
    // SAFETY: the names are NUL-terminated; ntdll is mapped in every process and never
    // unloaded, and GetModuleHandleA takes no reference on it. The two functions have
    // these signatures on every Windows since XP and in wine, so the transmuted pointers
    // are of the right types.
    unsafe {
        let ntdll = GetModuleHandleA(b"ntdll.dll\0".as_ptr());
        if ntdll.is_null() {
            return None;
        }
        let get_peb = GetProcAddress(ntdll, b"RtlGetCurrentPeb\0".as_ptr())?;
        let is_locked = GetProcAddress(ntdll, b"RtlIsCriticalSectionLockedByThread\0".as_ptr())?;
        Some((
            std::mem::transmute::<_, GetPeb>(get_peb),
            std::mem::transmute::<_, IsLockedByThread>(is_locked),
        ))
    }
}

#[cfg(not(windows))]
fn holds_loader_lock() -> bool {
    false
}
