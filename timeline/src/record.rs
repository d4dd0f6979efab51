//! Recording: the pool's [`Recorder`] (one event log per worker, the injections) and each
//! worker's [`WorkerLog`], the only writer of its log.

use super::log::EventLog;
use super::{JobSource, Timeline, TimelineEvent, TimelineEventKind};
use std::cell::Cell;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

/// A pool's recording: one event log per worker, and the injections. Built by
/// [`recorder_for`](crate::scheduler::recorder_for); read through its [`Timeline`].
///
/// ```
/// let recorder = stealpool_timeline::scheduler::recorder_for(2, true, false).unwrap();
/// recorder.injected();
/// assert_eq!(recorder.timeline().injections().len(), 1);
/// ```
pub struct Recorder {
    /// The clock's origin: event and injection times are nanoseconds since this instant.
    built_at: Instant,
    /// One event log per worker, by index.
    logs: Vec<EventLog>,
    /// Injection times: injections come from any thread, so they share one lock.
    injections: Mutex<Vec<u64>>,
    /// Where to save the timeline when the pool ends (`STEALPOOL_TIMELINE`).
    save_to: Option<PathBuf>,
    /// Whether it was saved (when the pool ended, or at exit): saved once. A mutex, not a
    /// flag: the exit handler must wait for a save in progress on a worker, or the
    /// process ends in the middle of the write and leaves a cut file (found by a breaker:
    /// a pool dropped just before `main` returned left an empty or truncated file).
    saved: Mutex<bool>,
}

impl Recorder {
    /// An empty recording for `num_workers` workers, saved to `save_to` if given.
    pub(crate) fn new(num_workers: usize, save_to: Option<PathBuf>) -> Arc<Recorder> {
        Arc::new(Recorder {
            built_at: Instant::now(),
            logs: (0..num_workers).map(|_| EventLog::new()).collect(),
            injections: Mutex::new(Vec::new()),
            save_to,
            saved: Mutex::new(false),
        })
    }

    /// Nanoseconds since `built_at`.
    #[inline]
    fn now(&self) -> u64 {
        self.built_at.elapsed().as_nanos() as u64
    }

    /// Whether it saves a file (`STEALPOOL_TIMELINE`).
    pub(crate) fn saves(&self) -> bool {
        self.save_to.is_some()
    }

    /// The number of workers recorded.
    pub(crate) fn num_workers(&self) -> usize {
        self.logs.len()
    }

    /// A job was pushed on the injector (from any thread); its time, in ns since the
    /// recorder was built, joins [`Timeline::injections`]. Out of line and cold, as every
    /// recording body: the injecting path keeps only the test of the `Option`.
    ///
    /// ```
    /// let recorder = stealpool_timeline::scheduler::recorder_for(1, true, false).unwrap();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| recorder.injected());
    ///     recorder.injected();
    /// });
    /// assert_eq!(recorder.timeline().injections().len(), 2);
    /// ```
    #[cold]
    #[inline(never)]
    pub fn injected(&self) {
        let at = self.now();
        self.injections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(at);
    }

    /// The handle that reads this recording (it keeps the recording alive).
    ///
    /// ```
    /// let recorder = stealpool_timeline::scheduler::recorder_for(3, true, false).unwrap();
    /// let timeline = recorder.timeline();
    /// drop(recorder);
    /// assert_eq!(timeline.events().len(), 3); // one (empty) log per worker
    /// ```
    pub fn timeline(self: &Arc<Self>) -> Timeline {
        Timeline::new(Arc::clone(self))
    }

    /// Every worker's events so far ([`Timeline::events`]).
    pub(crate) fn snapshot(&self) -> Vec<Vec<TimelineEvent>> {
        self.logs.iter().map(EventLog::snapshot).collect()
    }

    /// The injection times so far ([`Timeline::injections`]).
    pub(crate) fn injections(&self) -> Vec<u64> {
        self.injections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Saves to the `STEALPOOL_TIMELINE` path, if there is one: when the pool ends, or
    /// for the global pool when the process exits. A failure is reported on stderr (there
    /// is no caller to return it to). Saves once, however often it is called; a second
    /// caller waits until the first has written the whole file.
    ///
    /// ```
    /// // Built by the builder's option, not the variable: there is no file to save.
    /// # std::env::remove_var(stealpool_timeline::TIMELINE_ENV);
    /// let recorder = stealpool_timeline::scheduler::recorder_for(1, true, false).unwrap();
    /// recorder.save_if_asked(); // nothing to do
    /// ```
    #[cold]
    #[inline(never)]
    pub fn save_if_asked(self: &Arc<Self>) {
        let Some(path) = &self.save_to else {
            return;
        };
        // Once: the pool's end and the process's exit both ask, and the second waits
        // here until the first has written the whole file.
        let mut saved = self.saved.lock().unwrap_or_else(PoisonError::into_inner);
        if !*saved {
            *saved = true;
            if let Err(err) = Timeline::new(Arc::clone(self)).save(path) {
                eprintln!(
                    "stealpool: could not save the timeline to {}: {err}",
                    path.display()
                );
            }
        }
    }
}

/// A recording worker's writer of its own log, and the source of the job it is about to
/// run. Not `Sync`: only the worker's thread uses it. The scheduler keeps it boxed behind
/// an `Option` and tests the pointer; every method that records is out of line and cold,
/// so that the hot paths around the test stay as compact as without the timeline.
///
/// ```
/// use stealpool_timeline::scheduler::{recorder_for, WorkerLog};
/// use stealpool_timeline::{JobSource, TimelineEventKind};
/// let recorder = recorder_for(1, true, false).unwrap();
/// // SAFETY: the only writer of log 0, used on this thread only.
/// let log = unsafe { WorkerLog::new(&recorder, 0) };
/// log.note_source(JobSource::Injector);
/// log.job_start();
/// log.push(TimelineEventKind::JobEnd);
/// let events = &recorder.timeline().events()[0];
/// assert_eq!(events[0].kind, TimelineEventKind::JobStart(JobSource::Injector));
/// assert_eq!(events[1].kind, TimelineEventKind::JobEnd);
/// ```
pub struct WorkerLog {
    /// The recording this writer writes to.
    recorder: Arc<Recorder>,
    /// The index of the worker, and of its log in `recorder`.
    index: usize,
    /// Where the next job comes from; set where the job was taken (`note_source`), and
    /// back to `Local` once used, since most jobs are local pops, which note nothing.
    source: Cell<JobSource>,
}

impl WorkerLog {
    /// The writer of worker `index`'s log in `recorder`.
    ///
    /// # Safety
    /// No other `WorkerLog` for the same `recorder` and `index` exists at the same time:
    /// a log has one writer. (stealpool makes one per worker, in the worker's thread.)
    ///
    /// # Panics
    /// If `index` is not below the recorder's number of workers.
    ///
    /// ```should_panic
    /// let recorder = stealpool_timeline::scheduler::recorder_for(2, true, false).unwrap();
    /// // SAFETY: no other writer of log 2 (there is no log 2: this panics).
    /// let _log = unsafe { stealpool_timeline::scheduler::WorkerLog::new(&recorder, 2) };
    /// ```
    pub unsafe fn new(recorder: &Arc<Recorder>, index: usize) -> WorkerLog {
        assert!(
            index < recorder.logs.len(),
            "no worker {index} in this recording"
        );
        WorkerLog {
            recorder: Arc::clone(recorder),
            index,
            source: Cell::new(JobSource::Local),
        }
    }

    /// The job this worker takes next came from `source` (a job with no source noted is
    /// `Local`). Only a store: the scheduler calls it where it takes a job.
    ///
    /// ```
    /// # use stealpool_timeline::{JobSource, TimelineEventKind};
    /// let recorder = stealpool_timeline::scheduler::recorder_for(1, true, false).unwrap();
    /// // SAFETY: the only writer of log 0, used on this thread only.
    /// let log = unsafe { stealpool_timeline::scheduler::WorkerLog::new(&recorder, 0) };
    /// log.note_source(JobSource::Steal { victim: 3 });
    /// log.job_start();
    /// log.job_start(); // nothing noted: local
    /// let kinds: Vec<_> = recorder.timeline().events()[0].iter().map(|e| e.kind).collect();
    /// assert_eq!(kinds, [
    ///     TimelineEventKind::JobStart(JobSource::Steal { victim: 3 }),
    ///     TimelineEventKind::JobStart(JobSource::Local),
    /// ]);
    /// ```
    #[inline]
    pub fn note_source(&self, source: JobSource) {
        self.source.set(source);
    }

    /// The worker starts a job, from the source noted last (then `Local` again). Example:
    /// [`note_source`](Self::note_source).
    #[cold]
    #[inline(never)]
    pub fn job_start(&self) {
        let source = self.source.replace(JobSource::Local);
        self.push(TimelineEventKind::JobStart(source));
    }

    /// Records `kind` now (ns since the recorder was built). Example: the type's.
    #[cold]
    #[inline(never)]
    pub fn push(&self, kind: TimelineEventKind) {
        let event = TimelineEvent {
            at_ns: self.recorder.now(),
            kind,
        };
        // SAFETY: this `WorkerLog` is the only one for log `index` (`new`'s contract), it
        // is not `Sync`, and `push` does not call back into it: its thread is the log's
        // only writer.
        unsafe { self.recorder.logs[self.index].push(event) };
    }
}
