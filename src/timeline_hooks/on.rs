//! The timeline compiled in (feature `timeline`): the scheduler's hooks over the
//! `stealpool-timeline` crate, which records and exports. With recording off, each hook
//! is a test of one pointer in the worker; the recording itself is out of line and cold
//! in that crate. Design and costs: `docs/timeline.md`.

use std::sync::Arc;

use stealpool_timeline::scheduler::WorkerLog;
pub(crate) use stealpool_timeline::scheduler::{recorder_for, Recorder};
pub(crate) use stealpool_timeline::JobSource;
use stealpool_timeline::TimelineEventKind;

/// A worker's side of the recording: its log's writer if the pool records. Lives in the
/// `WorkerThread`, so only the worker's own thread uses it. One word: with recording off
/// the feature adds a null pointer to the worker and a test of it to the hot paths.
pub(crate) struct WorkerRecorder {
    /// The writer of this worker's log; `None` when the pool does not record.
    log: Option<Box<WorkerLog>>,
}

impl WorkerRecorder {
    /// The recorder of worker `index`: built once per worker, by `WorkerThread::new`.
    pub(crate) fn new(recorder: Option<&Arc<Recorder>>, index: usize) -> WorkerRecorder {
        WorkerRecorder {
            log: recorder.map(|r| {
                // SAFETY: `WorkerThread::new` is the only caller, and one `WorkerThread`
                // is built per worker index (the registry hands each index's queue ends
                // out once, to the thread body or to `adopt_current_thread` in
                // `pool/worker/thread.rs`), so this is the only writer of log `index`.
                Box::new(unsafe { WorkerLog::new(r, index) })
            }),
        }
    }

    /// Whether the pool records.
    #[inline(always)]
    pub(crate) fn is_on(&self) -> bool {
        self.log.is_some()
    }

    /// The job taken next came from `source`.
    #[inline(always)]
    pub(crate) fn note_source(&self, source: JobSource) {
        if let Some(log) = &self.log {
            log.note_source(source);
        }
    }

    /// The worker starts a job, from the source noted last.
    #[inline(always)]
    pub(crate) fn job_start(&self) {
        if let Some(log) = &self.log {
            log.job_start();
        }
    }

    /// The innermost running job ended.
    #[inline(always)]
    pub(crate) fn job_end(&self) {
        self.push(TimelineEventKind::JobEnd);
    }

    /// The worker parks.
    #[inline(always)]
    pub(crate) fn park(&self) {
        self.push(TimelineEventKind::Park);
    }

    /// The worker woke up.
    #[inline(always)]
    pub(crate) fn unpark(&self) {
        self.push(TimelineEventKind::Unpark);
    }

    /// The worker promoted a private `join` half to its deque.
    #[inline(always)]
    pub(crate) fn promotion(&self) {
        self.push(TimelineEventKind::Promotion);
    }

    /// Records `kind` if the pool records: here only the test of the log pointer, the
    /// recording itself out of line and cold (`WorkerLog::push`).
    #[inline(always)]
    fn push(&self, kind: TimelineEventKind) {
        if let Some(log) = &self.log {
            log.push(kind);
        }
    }
}
