//! Windows' barrier mode (`sync/barrier/flush.rs`): decided when the first pool is built,
//! `FlushProcessWriteBuffers` (pushers use a compiler fence: "expedited") on Windows, the
//! fence pair under wine, whose flush is a stub. Either way the pool parks and wakes.
#![cfg(windows)]

mod common;

use common::{fib, watchdog};
use stealpool::ThreadPoolBuilder;
use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleA, GetProcAddress};

/// Whether this process runs under wine (its ntdll exports `wine_get_version`).
fn under_wine() -> bool {
    // SAFETY: NUL-terminated names; the returned address is only compared with null.
    unsafe {
        let ntdll = GetModuleHandleA(b"ntdll.dll\0".as_ptr());
        !ntdll.is_null() && GetProcAddress(ntdll, b"wine_get_version\0".as_ptr()).is_some()
    }
}

#[test]
fn the_first_pool_decides_the_flush_or_under_wine_the_fences() {
    watchdog(60, || {
        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let want = if under_wine() { "fences" } else { "expedited" };
        assert_eq!(stealpool::__barrier_mode(), want);
        // Parks (the heavy half) and wake-ups (the light half) in that mode.
        for _ in 0..200 {
            assert_eq!(pool.install(|| fib(15)), 610);
            common::wait_parked(&pool, 2);
        }
    });
}
