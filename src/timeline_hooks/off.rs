//! The timeline compiled out (no `timeline` feature): the scheduler's hooks are no-ops
//! that the compiler removes, and no pool can record.

use std::sync::Arc;

/// Where a job came from (the scheduler notes it; nothing reads it here).
#[derive(Clone, Copy)]
#[allow(dead_code)] // the fields are read by the recording build only
pub(crate) enum JobSource {
    Injector,
    Steal { victim: usize },
    Broadcast,
    Rescue { victim: usize },
}

/// No pool records without the feature: never built.
pub(crate) enum Recorder {}

impl Recorder {
    pub(crate) fn injected(&self) {
        match *self {}
    }

    pub(crate) fn save_if_asked(self: &Arc<Self>) {
        match **self {}
    }
}

/// A worker's recorder: always off.
pub(crate) struct WorkerRecorder;

impl WorkerRecorder {
    pub(crate) fn new(_: Option<&Arc<Recorder>>, _: usize) -> WorkerRecorder {
        WorkerRecorder
    }
    #[inline(always)]
    pub(crate) fn is_on(&self) -> bool {
        false
    }
    #[inline(always)]
    pub(crate) fn note_source(&self, _: JobSource) {}
    #[inline(always)]
    pub(crate) fn job_start(&self) {}
    #[inline(always)]
    pub(crate) fn job_end(&self) {}
    #[inline(always)]
    pub(crate) fn park(&self) {}
    #[inline(always)]
    pub(crate) fn unpark(&self) {}
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
