//! The timeline compiled out (no `timeline` feature): the scheduler's hooks are no-ops
//! that the compiler removes, and no pool can record.

use std::sync::Arc;

/// Where a job came from (the scheduler notes it; only feature `tracing` reads it here,
/// for its steal and rescue events).
#[derive(Clone, Copy)]
#[allow(dead_code)] // the fields are read by the recording build and by `tracing` only
pub(crate) enum JobSource {
    /// The pool's injector.
    Injector,
    /// Stolen from another worker's deque.
    Steal {
        /// The worker whose deque it came from.
        victim: usize,
    },
    /// The worker's own broadcast queue.
    Broadcast,
    /// A `join` half rescued from another worker's private stack.
    Rescue {
        /// The worker whose private stack it came from.
        victim: usize,
    },
}

/// No pool records without the feature: never built.
pub(crate) enum Recorder {}

impl Recorder {
    /// Notes an injected job: never called, as no recorder exists.
    pub(crate) fn injected(&self) {
        match *self {}
    }

    /// Saves the timeline if asked: never called, as no recorder exists.
    pub(crate) fn save_if_asked(self: &Arc<Self>) {
        match **self {}
    }
}

/// A worker's recorder: always off.
pub(crate) struct WorkerRecorder;

impl WorkerRecorder {
    /// The recorder of any worker: off.
    pub(crate) fn new(_: Option<&Arc<Recorder>>, _: usize) -> WorkerRecorder {
        WorkerRecorder
    }
    /// Whether the pool records: never.
    #[inline(always)]
    pub(crate) fn is_on(&self) -> bool {
        false
    }
    /// Records nothing.
    #[inline(always)]
    pub(crate) fn note_source(&self, _: JobSource) {}
    /// Records nothing.
    #[inline(always)]
    pub(crate) fn job_start(&self) {}
    /// Records nothing.
    #[inline(always)]
    pub(crate) fn job_end(&self) {}
    /// Records nothing.
    #[inline(always)]
    pub(crate) fn park(&self) {}
    /// Records nothing.
    #[inline(always)]
    pub(crate) fn unpark(&self) {}
    /// Records nothing.
    #[inline(always)]
    pub(crate) fn promotion(&self) {}
}

/// No pool records without the feature. A program run with `STEALPOOL_TIMELINE` set is
/// told so on stderr, once, when its first pool is built: silence would leave its user
/// looking for a file that never comes (found by a new user).
pub(crate) fn recorder_for(_: usize, _: bool, _: bool) -> Option<Arc<Recorder>> {
    if std::env::var_os("STEALPOOL_TIMELINE").is_some_and(|v| !v.is_empty()) {
        static REPORTED: std::sync::Once = std::sync::Once::new();
        REPORTED.call_once(|| {
            eprintln!(
                "stealpool: STEALPOOL_TIMELINE is set, but this build of stealpool has no \
                 `timeline` feature (it is on by default); not recording"
            )
        });
    }
    None
}
