//! Catching and re-raising panics, and the guard for regions that must never unwind.
//!
//! User code always runs under [`halt_unwinding`] inside a job wrapper, so a panic is
//! turned into a value and travels to whoever is owed the result (the `join` caller, the
//! scope owner, the `install` caller, or the pool's panic handler). A panic that escapes
//! into the scheduler's own frames would mean its state is corrupt; [`AbortIfPanic`]
//! turns that into an abort instead of a silent hang. This mirrors rayon-core's
//! `unwind.rs`.

use std::any::Any;
use std::panic::{self, AssertUnwindSafe};
use std::thread;

/// Runs `func`, catching a panic and returning its payload as `Err`.
///
/// `AssertUnwindSafe` is sound here because the payload is always re-raised in (or handed
/// to a handler on behalf of) the code that owns the state `func` touched, exactly as if
/// the panic had unwound there.
pub(crate) fn halt_unwinding<F, R>(func: F) -> thread::Result<R>
where
    F: FnOnce() -> R,
{
    panic::catch_unwind(AssertUnwindSafe(func))
}

/// Re-raises a payload captured by [`halt_unwinding`] without calling the panic hook again.
pub(crate) fn resume_unwinding(payload: Box<dyn Any + Send>) -> ! {
    panic::resume_unwind(payload)
}

/// Drops a value that nobody will receive (a panic payload that lost to another one, the
/// result of a job whose caller is unwinding) without letting its destructor unwind into
/// the scheduler: a destructor that panics is reported by the panic hook, and the second
/// payload is forgotten rather than dropped again.
pub(crate) fn drop_quietly<T>(value: T) {
    if let Err(payload) = halt_unwinding(move || drop(value)) {
        std::mem::forget(payload);
    }
}

/// Drop guard that aborts the process if it is dropped during unwinding.
///
/// Armed around scheduler code that must not unwind; disarmed with `mem::forget` on the
/// success path.
pub(crate) struct AbortIfPanic;

impl Drop for AbortIfPanic {
    fn drop(&mut self) {
        eprintln!("stealpool: a panic escaped into the scheduler itself; aborting");
        std::process::abort();
    }
}
