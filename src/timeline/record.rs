//! Recording: the pool's [`Recorder`] (one event log per worker, the injections) and each
//! worker's [`WorkerRecorder`], the only writer of its log.

use super::log::EventLog;
use super::{JobSource, Timeline, TimelineEvent, TimelineEventKind};
use crate::sync::{Arc, Mutex};
use std::cell::Cell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// A pool's recording.
pub(crate) struct Recorder {
    built_at: Instant,
    logs: Vec<EventLog>,
    /// Injection times: injections come from any thread, so they share one lock.
    injections: Mutex<Vec<u64>>,
    /// Where to save the timeline when the pool ends (`STEALPOOL_TIMELINE`).
    save_to: Option<PathBuf>,
    /// Saved already (when the pool ended, or at exit): saved once.
    saved: AtomicBool,
}

impl Recorder {
    pub(crate) fn new(num_workers: usize, save_to: Option<PathBuf>) -> Arc<Recorder> {
        Arc::new(Recorder {
            built_at: Instant::now(),
            logs: (0..num_workers).map(|_| EventLog::new()).collect(),
            injections: Mutex::new(Vec::new()),
            save_to,
            saved: AtomicBool::new(false),
        })
    }

    #[inline]
    fn now(&self) -> u64 {
        self.built_at.elapsed().as_nanos() as u64
    }

    /// Whether it saves a file (`STEALPOOL_TIMELINE`).
    pub(crate) fn saves(&self) -> bool {
        self.save_to.is_some()
    }

    pub(crate) fn num_workers(&self) -> usize {
        self.logs.len()
    }

    /// A job was pushed on the injector (from any thread). Out of line and cold, as every
    /// recording body: the injecting path keeps only the test of the `Option`.
    #[cold]
    #[inline(never)]
    pub(crate) fn injected(&self) {
        let at = self.now();
        self.injections.lock().push(at);
    }

    pub(crate) fn snapshot(&self) -> Vec<Vec<TimelineEvent>> {
        self.logs.iter().map(EventLog::snapshot).collect()
    }

    pub(crate) fn injections(&self) -> Vec<u64> {
        self.injections.lock().clone()
    }

    /// Saves to the `STEALPOOL_TIMELINE` path, if there is one: when the pool ends, or
    /// for the global pool when the process exits. A failure is reported on stderr (there
    /// is no caller to return it to).
    pub(crate) fn save_if_asked(self: &Arc<Self>) {
        let Some(path) = &self.save_to else {
            return;
        };
        // Once: the pool's end and the process's exit both ask.
        if !self.saved.swap(true, Ordering::AcqRel) {
            if let Err(err) = Timeline::new(Arc::clone(self)).save(path) {
                eprintln!(
                    "stealpool: could not save the timeline to {}: {err}",
                    path.display()
                );
            }
        }
    }
}

/// A worker's side of the recording: whether the pool records, the writer of the
/// worker's log, and the source of the job it is about to run. Lives in the
/// `WorkerThread`, so only the worker's own thread uses it. One word: with recording
/// off the feature adds a null pointer to the worker and a test of it to the hot paths.
pub(crate) struct WorkerRecorder {
    log: Option<Box<WorkerLog>>,
}

/// A recording worker's state (boxed: only recording workers pay for it).
struct WorkerLog {
    recorder: Arc<Recorder>,
    index: usize,
    /// Where the next job comes from; set where the job was taken (`note_source`), and
    /// back to `Local` once used, since most jobs are local pops, which note nothing.
    source: Cell<JobSource>,
}

impl WorkerRecorder {
    /// The recorder of worker `index`: one per worker, since it is its log's only writer.
    pub(crate) fn new(recorder: Option<&Arc<Recorder>>, index: usize) -> WorkerRecorder {
        WorkerRecorder {
            log: recorder.map(|r| {
                Box::new(WorkerLog {
                    recorder: Arc::clone(r),
                    index,
                    source: Cell::new(JobSource::Local),
                })
            }),
        }
    }

    #[inline(always)]
    pub(crate) fn is_on(&self) -> bool {
        self.log.is_some()
    }

    /// The job taken next came from `source`.
    #[inline(always)]
    pub(crate) fn note_source(&self, source: JobSource) {
        if let Some(log) = &self.log {
            log.source.set(source);
        }
    }

    #[inline(always)]
    pub(crate) fn job_start(&self) {
        if let Some(log) = &self.log {
            log.job_start();
        }
    }

    #[inline(always)]
    pub(crate) fn job_end(&self) {
        self.push(TimelineEventKind::JobEnd);
    }

    #[inline(always)]
    pub(crate) fn park(&self) {
        self.push(TimelineEventKind::Park);
    }

    #[inline(always)]
    pub(crate) fn unpark(&self) {
        self.push(TimelineEventKind::Unpark);
    }

    #[inline(always)]
    pub(crate) fn promotion(&self) {
        self.push(TimelineEventKind::Promotion);
    }

    /// With recording off, all that the hot paths carry: a test of the pointer. The
    /// recording itself is out of line and cold, so that the code around each call site
    /// (the park and wake-up paths, `execute`) stays as compact as without the feature:
    /// those paths run with cold caches after an idle spell, and every extra cache line
    /// of code on them cost the wake-up row ~1-5% (`docs/performance.md`).
    #[inline(always)]
    fn push(&self, kind: TimelineEventKind) {
        if let Some(log) = &self.log {
            log.push(kind);
        }
    }
}

impl WorkerLog {
    #[cold]
    #[inline(never)]
    fn job_start(&self) {
        let source = self.source.replace(JobSource::Local);
        self.push(TimelineEventKind::JobStart(source));
    }

    #[cold]
    #[inline(never)]
    fn push(&self, kind: TimelineEventKind) {
        let event = TimelineEvent {
            at_ns: self.recorder.now(),
            kind,
        };
        // SAFETY: this `WorkerLog` is the only one for worker `index` (`WorkerRecorder::
        // new`'s contract, one per `WorkerThread`), it is not `Sync`, and `push` does not
        // call back into it: its thread is the log's only writer.
        unsafe { self.recorder.logs[self.index].push(event) };
    }
}
