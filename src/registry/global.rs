//! The global pool: built lazily on first use, or once by `build_global`.

use super::Registry;
use crate::builder::{ErrorKind, ThreadPoolBuildError, ThreadPoolBuilder, ThreadSpawn};
use crate::sync::{Arc, OnceLock};

static THE_REGISTRY: OnceLock<Arc<Registry>> = OnceLock::new();

/// The global pool's registry, built with the default builder on first use.
///
/// # Panics
/// If the global pool cannot be built (e.g. the OS refuses to start threads, or
/// `STEALPOOL_NUM_THREADS` is not a number). rayon-core panics here too.
pub(crate) fn global_registry() -> &'static Arc<Registry> {
    THE_REGISTRY.get_or_init(|| {
        // The default builder runs no user code, so this cannot re-enter `get_or_init`.
        let registry = Registry::new(ThreadPoolBuilder::new()).unwrap_or_else(|err| {
            panic!("stealpool: the global thread pool could not be built: {err}")
        });
        save_timeline_at_exit(&registry);
        registry
    })
}

/// A global pool that records (`STEALPOOL_TIMELINE`) never ends, so it saves its
/// timeline, to the variable's own path, when the process exits (Linux: an `atexit`
/// handler; elsewhere it is not saved: read it with `stealpool::timeline()`).
fn save_timeline_at_exit(registry: &Arc<Registry>) {
    let Some(recorder) = registry.recorder() else {
        return;
    };
    recorder.save_to(crate::timeline::global_path());
    #[cfg(target_os = "linux")]
    {
        use std::sync::atomic::{AtomicI32, Ordering};
        /// The process that registered the handler: a forked child inherits the handler
        /// but not the workers, and must not touch the parent's recording (a lock a
        /// parent thread held at the fork stays locked in the child).
        static REGISTERED_BY: AtomicI32 = AtomicI32::new(0);
        extern "C" fn save_global_timeline() {
            // SAFETY: getpid has no preconditions.
            let pid = unsafe { libc::getpid() };
            if REGISTERED_BY.load(Ordering::Relaxed) != pid {
                return;
            }
            if let Some(recorder) = THE_REGISTRY.get().and_then(|r| r.recorder()) {
                recorder.save_if_asked();
            }
        }
        // SAFETY: getpid has no preconditions.
        REGISTERED_BY.store(unsafe { libc::getpid() }, Ordering::Relaxed);
        // SAFETY: registers a plain `extern "C" fn()` that reads statics only; it runs
        // at most once, at exit, on the exiting thread.
        unsafe { libc::atexit(save_global_timeline) };
    }
}

/// Builds the global pool from `builder` (for `build_global`).
///
/// The registry is built *before* it is offered to the `OnceLock`, with no lock held, so
/// user code in the builder (a `thread_name` closure) may call free functions: if one of
/// them builds the default global pool first, this returns "already initialized" and the
/// registry built here is terminated.
pub(crate) fn init_global_registry<S: ThreadSpawn>(
    builder: ThreadPoolBuilder<S>,
) -> Result<(), ThreadPoolBuildError> {
    let already = || {
        Err(ThreadPoolBuildError::new(
            ErrorKind::GlobalPoolAlreadyInitialized,
        ))
    };
    if THE_REGISTRY.get().is_some() {
        return already();
    }
    let mut candidate = Some(Registry::new(builder)?);
    let registry = THE_REGISTRY.get_or_init(|| candidate.take().expect("offered once"));
    match candidate {
        None => {
            save_timeline_at_exit(registry);
            registry.adopt_current_thread();
            registry.wait_until_primed();
            Ok(())
        }
        Some(lost) => {
            // Someone else initialised the global pool meanwhile: stop our workers.
            lost.terminate();
            already()
        }
    }
}

/// Terminates a half-built registry if building it fails or panics.
pub(super) struct Terminator<'a>(pub(super) &'a Arc<Registry>);

impl Drop for Terminator<'_> {
    fn drop(&mut self) {
        self.0.terminate();
    }
}
