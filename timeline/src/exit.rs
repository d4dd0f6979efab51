//! Saving `STEALPOOL_TIMELINE` files when the process exits: the global pool never ends,
//! and a pool that was dropped ends only once its threads have run its last jobs, which
//! a returning `main` does not wait for. Every pool that saves registers here; an
//! `atexit` handler saves those not saved yet. A pool that ended first saved itself
//! (`Registry`'s drop), and saves only once.
//!
//! The handler runs where the C runtime's `exit` runs: on every Unix when `main` returns
//! or the program calls `std::process::exit`, and on Windows when `main` returns (there
//! `std::process::exit` calls `ExitProcess`, which skips `atexit` handlers: a pool still
//! alive then saves nothing). Other targets have no handler: a pool saves when it ends.

use crate::record::Recorder;
use std::sync::Arc;
use std::sync::{Mutex, Weak};

/// The recorders that save a file, for the exit handler, each with the process that
/// built it: a forked child inherits the parent's list, and must save its own pools, not
/// the parent's.
static RECORDERS: Mutex<Vec<(u32, Weak<Recorder>)>> = Mutex::new(Vec::new());

/// Registers `recorder`, for this process, with the exit handler, which saves it unless
/// it saved already; registers the handler itself on the first call.
pub(crate) fn save_at_exit(recorder: &Arc<Recorder>) {
    RECORDERS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push((std::process::id(), Arc::downgrade(recorder)));
    #[cfg(any(unix, windows))]
    handler::register();
}

/// The `atexit` handler, on the targets whose C runtime runs one.
#[cfg(any(unix, windows))]
mod handler {
    use super::RECORDERS;
    use std::sync::Once;

    /// Registers [`save_all`] with `atexit`, once per process image.
    pub(super) fn register() {
        // Once per process image: a forked child inherits both the handler and this
        // `Once`, so the handler is never registered twice.
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            // SAFETY: registers a plain `extern "C" fn()` that reads statics only; it runs
            // once, at exit, on the exiting thread.
            unsafe { libc::atexit(save_all) };
        });
    }

    /// Saves the pools of the exiting process that have not saved yet. A forked child
    /// leaves its parent's pools alone (their workers are not in the child, and their
    /// files are the parent's), but saves those it built itself (found by a breaker: a
    /// child whose parent had built a recording pool first saved nothing).
    extern "C" fn save_all() {
        // `try_lock`: a thread stopped at exit while registering a pool holds it (or, in
        // a forked child, a parent thread held it at the fork); then nothing is saved
        // rather than the exit hanging.
        let Ok(recorders) = RECORDERS.try_lock() else {
            return;
        };
        let me = std::process::id();
        for recorder in recorders
            .iter()
            .filter(|(pid, _)| *pid == me)
            .filter_map(|(_, weak)| weak.upgrade())
        {
            recorder.save_if_asked();
        }
    }
}
