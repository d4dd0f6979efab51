//! Saving `STEALPOOL_TIMELINE` files when the process exits: the global pool never ends,
//! and a pool that was dropped ends only once its threads have run its last jobs, which
//! a returning `main` does not wait for. Every pool that saves registers here; an
//! `atexit` handler (Linux) saves those not saved yet. A pool that ended first saved
//! itself (`Registry`'s drop), and saves only once.

use crate::record::Recorder;
use std::sync::Arc;
use std::sync::{Mutex, Weak};

/// The recorders that save a file, for the exit handler.
static RECORDERS: Mutex<Vec<Weak<Recorder>>> = Mutex::new(Vec::new());

pub(crate) fn save_at_exit(recorder: &Arc<Recorder>) {
    RECORDERS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(Arc::downgrade(recorder));
    #[cfg(target_os = "linux")]
    linux::register();
}

#[cfg(target_os = "linux")]
mod linux {
    use super::RECORDERS;
    use std::sync::atomic::{AtomicI32, Ordering};
    use std::sync::Once;

    /// The process that registered the handler. A forked child inherits the handler but
    /// not the workers, and must not touch the parent's recording (a lock a parent thread
    /// held at the fork stays locked in the child) or overwrite its files.
    static REGISTERED_BY: AtomicI32 = AtomicI32::new(0);

    pub(super) fn register() {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            // SAFETY: getpid has no preconditions.
            REGISTERED_BY.store(unsafe { libc::getpid() }, Ordering::Relaxed);
            // SAFETY: registers a plain `extern "C" fn()` that reads statics only; it runs
            // once, at exit, on the exiting thread.
            unsafe { libc::atexit(save_all) };
        });
    }

    extern "C" fn save_all() {
        // SAFETY: getpid has no preconditions.
        if REGISTERED_BY.load(Ordering::Relaxed) != unsafe { libc::getpid() } {
            return;
        }
        // `try_lock`: a thread stopped at exit while registering a pool holds it; then
        // nothing is saved rather than the exit hanging.
        let Ok(recorders) = RECORDERS.try_lock() else {
            return;
        };
        for recorder in recorders.iter().filter_map(|weak| weak.upgrade()) {
            recorder.save_if_asked();
        }
    }
}
