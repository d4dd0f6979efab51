//! The worker timeline of [stealpool](https://crates.io/crates/stealpool): what each
//! worker ran, where each job came from, when it parked.
//!
//! Use it through stealpool (its default `timeline` feature), which re-exports the public
//! types here: `ThreadPoolBuilder::timeline(true)` or the `STEALPOOL_TIMELINE` environment
//! variable (for a program that cannot change its code, such as one using the `rayon`
//! crate through stealpool's `compat/rayon-core`) turn recording on for a pool, and
//! `ThreadPool::timeline()` returns its [`Timeline`].
//!
//! Each worker appends to its own log (`log.rs`), which only it writes; a [`Timeline`]
//! handle reads every log at any time and exports Chrome Trace Event JSON (opens in
//! Perfetto and `chrome://tracing`; `chrome.rs`) or a self-contained SVG (`svg.rs`).
//!
//! **Why a crate of its own.** With recording off, the scheduler's hooks are a test of a
//! pointer. But when this code was a module of stealpool, compiling it in changed how
//! rustc split stealpool into codegen units, and with that the inlining and layout of the
//! scheduler's own code: the wake-up latency row of the benchmark table moved by 2-5%.
//! As a separate crate it leaves stealpool's code generation as it is. Design and
//! measurements: stealpool's `docs/timeline.md`.
//!
//! ```
//! let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).timeline(true).build().unwrap();
//! let timeline: stealpool_timeline::Timeline = pool.timeline().unwrap();
//! pool.install(|| ());
//! pool.shutdown().unwrap();
//! assert_eq!(timeline.jobs(), 1);
//! ```

#![deny(missing_docs)]
#![warn(clippy::missing_docs_in_private_items)]
#![deny(unsafe_op_in_unsafe_fn)]

mod chrome;
mod exit;
mod json;
mod log;
mod record;
mod svg;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

// stealpool's side of the contract, public only because stealpool is another crate: not an
// API for applications (stealpool pins this crate's exact version).
#[doc(hidden)]
pub mod scheduler;

use record::Recorder;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

/// The environment variable that turns recording on for every pool of an unchanged
/// program: `STEALPOOL_TIMELINE=FILE.json` (or `.svg`). Each pool's timeline is saved
/// when the pool ends (dropped or shut down, and its last job ran), or when the process
/// exits, whichever comes first: on every Unix when `main` returns or the program calls
/// `std::process::exit`, on Windows when `main` returns (`std::process::exit` skips the
/// exit handlers there), on other targets only when the pool ends. The global pool
/// saves to `FILE` itself; the other pools to `FILE` with `-pool<N>` before the extension,
/// `N` counting them in the order they were built, from 1. A value that does not end in
/// `.json` or `.svg` is reported on stderr when the first pool is built, and nothing
/// records. Empty counts as unset. Every process that reads the variable writes the same
/// path: give each process its own (a test runner's several test binaries, say), or the
/// last to save wins.
///
/// Recording keeps every event (24 bytes each) for the pool's whole life: meant for a run
/// one wants to look at, not for a long-lived service.
///
/// ```text
/// STEALPOOL_TIMELINE=run.json ./my-program   # then open run.json in ui.perfetto.dev
/// STEALPOOL_TIMELINE=run.svg ./my-program    # or look at run.svg in a browser
/// ```
pub const TIMELINE_ENV: &str = "STEALPOOL_TIMELINE";

/// The snapshot's last timestamp (0 if empty): where the exports end, and close what is
/// still open.
fn last_timestamp(workers: &[Vec<TimelineEvent>], injections: &[u64]) -> u64 {
    workers
        .iter()
        .filter_map(|events| events.last())
        .map(|e| e.at_ns)
        .chain(injections.last().copied())
        .max()
        .unwrap_or(0)
}

/// Where a job that a worker ran came from.
///
/// ```
/// use stealpool::{JobSource, TimelineEventKind};
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).timeline(true).build().unwrap();
/// let timeline = pool.timeline().unwrap();
/// pool.broadcast(|_| ());
/// pool.shutdown().unwrap();
/// let broadcasts = timeline.events().iter().flatten()
///     .filter(|e| e.kind == TimelineEventKind::JobStart(JobSource::Broadcast))
///     .count();
/// assert_eq!(broadcasts, 2); // one per worker
/// assert_eq!(JobSource::Steal { victim: 1 }.name(), "steal");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JobSource {
    /// The worker's own deque (also jobs an injector batch or a steal moved there).
    Local,
    /// The pool's injector: work from outside the pool (`spawn`, `install`, ...).
    Injector,
    /// Stolen from another worker's deque.
    Steal {
        /// The worker it was stolen from.
        victim: usize,
    },
    /// The worker's own broadcast queue.
    Broadcast,
    /// A `join` half rescued from another worker's private stack (`docs/join.md`).
    Rescue {
        /// The worker whose half it was.
        victim: usize,
    },
}

impl JobSource {
    /// A short name: `"local"`, `"injector"`, `"steal"`, `"broadcast"`, `"rescue"` (the
    /// slice names of the Chrome Trace export).
    ///
    /// ```
    /// assert_eq!(stealpool::JobSource::Injector.name(), "injector");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            JobSource::Local => "local",
            JobSource::Injector => "injector",
            JobSource::Steal { .. } => "steal",
            JobSource::Broadcast => "broadcast",
            JobSource::Rescue { .. } => "rescue",
        }
    }
}

/// What happened.
///
/// ```
/// use stealpool::TimelineEventKind;
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).timeline(true).build().unwrap();
/// let timeline = pool.timeline().unwrap();
/// pool.install(|| ());
/// pool.shutdown().unwrap();
/// let kinds: Vec<_> = timeline.events()[0].iter().map(|e| e.kind).collect();
/// // The install ran as one job, from the injector.
/// assert!(kinds.contains(&TimelineEventKind::JobEnd));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TimelineEventKind {
    /// The worker started a job taken from `source`. Jobs nest: a job that waits (a
    /// `join` whose other half was stolen, a scope) runs other jobs inside it.
    JobStart(JobSource),
    /// The innermost running job ended.
    JobEnd,
    /// The worker parked (nothing to do anywhere).
    Park,
    /// The worker woke up.
    Unpark,
    /// The worker made a private `join` half stealable (`docs/join.md`).
    Promotion,
}

/// One event of one worker.
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(1).timeline(true).build().unwrap();
/// let timeline = pool.timeline().unwrap();
/// pool.install(|| ());
/// pool.shutdown().unwrap();
/// let events = &timeline.events()[0];
/// assert!(events.windows(2).all(|w| w[0].at_ns <= w[1].at_ns));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimelineEvent {
    /// Nanoseconds since the pool was built.
    pub at_ns: u64,
    /// What happened.
    pub kind: TimelineEventKind,
}

/// A pool's recording: a cheap handle (clone it freely) that reads every worker's events
/// at any time, also after the pool is gone.
///
/// Get one from stealpool's
/// [`ThreadPool::timeline`](https://docs.rs/stealpool/latest/stealpool/struct.ThreadPool.html#method.timeline)
/// (or the free [`stealpool::timeline()`](https://docs.rs/stealpool/latest/stealpool/fn.timeline.html)
/// for the current or global pool) on a pool built with
/// [`ThreadPoolBuilder::timeline`](https://docs.rs/stealpool/latest/stealpool/struct.ThreadPoolBuilder.html#method.timeline). A
/// snapshot taken while jobs run shows them as started; the exports close them at the
/// snapshot's time. For a complete record, take it after `ThreadPool::shutdown`.
///
/// The idea comes from `rayon_logs` (a per-`install` log and an animated SVG, ~1 µs per
/// event, not for the global pool) and tokio's runtime metrics; this one records for the
/// whole pool at a few nanoseconds per event.
///
/// ```
/// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).timeline(true).build().unwrap();
/// let timeline = pool.timeline().expect("recording");
/// pool.install(|| stealpool::join(|| (), || ()));
/// pool.shutdown().unwrap();
/// // The install, and the join's second half if the idle worker took it.
/// assert!((1..=2).contains(&timeline.jobs()));
/// let mut json = Vec::new();
/// timeline.write_chrome_json(&mut json).unwrap();
/// assert!(json.starts_with(b"{"));
/// ```
#[derive(Clone)]
pub struct Timeline {
    /// The recording this handle reads, shared with the pool and every other handle.
    recorder: Arc<Recorder>,
}

impl std::fmt::Debug for Timeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timeline")
            .field("workers", &self.recorder.num_workers())
            .finish_non_exhaustive()
    }
}

impl Timeline {
    /// The handle that reads `recorder`.
    fn new(recorder: Arc<Recorder>) -> Timeline {
        Timeline { recorder }
    }

    /// Every worker's events so far, indexed by worker, each in order (timestamps never
    /// decrease).
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(3).timeline(true).build().unwrap();
    /// let timeline = pool.timeline().unwrap();
    /// assert_eq!(timeline.events().len(), 3);
    /// ```
    pub fn events(&self) -> Vec<Vec<TimelineEvent>> {
        self.recorder.snapshot()
    }

    /// When work was injected into the pool from outside (ns since the pool was built).
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().timeline(true).build().unwrap();
    /// let timeline = pool.timeline().unwrap();
    /// pool.install(|| ());
    /// pool.install(|| ());
    /// assert_eq!(timeline.injections().len(), 2);
    /// ```
    pub fn injections(&self) -> Vec<u64> {
        self.recorder.injections()
    }

    /// The number of jobs started so far, all workers together: after a shutdown, the
    /// metrics' `jobs_executed` total.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().num_threads(2).timeline(true).build().unwrap();
    /// let timeline = pool.timeline().unwrap();
    /// pool.scope(|s| for _ in 0..10 { s.spawn(|_| ()); });
    /// let metrics_total = { pool.wait_idle().unwrap(); pool.metrics().total().jobs_executed };
    /// pool.shutdown().unwrap();
    /// assert_eq!(timeline.jobs(), metrics_total);
    /// ```
    pub fn jobs(&self) -> u64 {
        self.events()
            .iter()
            .flatten()
            .filter(|e| matches!(e.kind, TimelineEventKind::JobStart(_)))
            .count() as u64
    }

    /// Writes the events as Chrome Trace Event JSON (`{"traceEvents": [...]}`): one track
    /// per worker with its jobs (named by source) and parks as nested slices, promotions
    /// as instant events, and an `injector` track with the injections. Opens in
    /// [Perfetto](https://ui.perfetto.dev) and `chrome://tracing`.
    ///
    /// # Errors
    /// Those of `out`.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().timeline(true).build().unwrap();
    /// let timeline = pool.timeline().unwrap();
    /// pool.install(|| ());
    /// let mut json = Vec::new();
    /// timeline.write_chrome_json(&mut json).unwrap();
    /// assert!(String::from_utf8(json).unwrap().contains("\"traceEvents\""));
    /// ```
    pub fn write_chrome_json(&self, out: impl Write) -> io::Result<()> {
        chrome::write(&self.events(), &self.injections(), out)
    }

    /// Writes a self-contained SVG: one lane per worker, jobs coloured by source, parks
    /// shaded, a time axis and a legend. Slices narrower than a pixel are merged into one
    /// mark per pixel, coloured by the source that took most of it, so a run of 10⁵ jobs
    /// stays readable.
    ///
    /// # Errors
    /// Those of `out`.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().timeline(true).build().unwrap();
    /// let timeline = pool.timeline().unwrap();
    /// pool.install(|| ());
    /// let mut svg = Vec::new();
    /// timeline.write_svg(&mut svg).unwrap();
    /// assert!(svg.starts_with(b"<svg"));
    /// ```
    pub fn write_svg(&self, out: impl Write) -> io::Result<()> {
        svg::write(&self.events(), &self.injections(), out)
    }

    /// Saves to `path`: Chrome Trace JSON for a `.json` file, SVG for `.svg`.
    ///
    /// # Errors
    /// `InvalidInput` for another extension; otherwise those of creating and writing the
    /// file.
    ///
    /// ```
    /// let pool = stealpool::ThreadPoolBuilder::new().timeline(true).build().unwrap();
    /// let timeline = pool.timeline().unwrap();
    /// let path = std::env::temp_dir().join("stealpool-doc-save.json");
    /// timeline.save(&path).unwrap();
    /// assert!(timeline.save("timeline.txt").is_err()); // neither .json nor .svg
    /// # std::fs::remove_file(path).unwrap();
    /// ```
    pub fn save(&self, path: impl AsRef<Path>) -> io::Result<()> {
        let path = path.as_ref();
        let svg = match path.extension().and_then(|e| e.to_str()) {
            Some("json") => false,
            Some("svg") => true,
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "stealpool: a timeline is saved as .json or .svg, not {}",
                        path.display()
                    ),
                ))
            }
        };
        let mut file = io::BufWriter::new(std::fs::File::create(path)?);
        if svg {
            self.write_svg(&mut file)?;
        } else {
            self.write_chrome_json(&mut file)?;
        }
        file.flush()
    }
}
