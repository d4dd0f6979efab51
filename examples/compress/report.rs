//! The run's tallies (what was compressed, skipped, failed), the progress they feed, and
//! the summary printed at the end.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::gzip::{Sizes, Target};
use crate::progress;

/// How many errors the summary lists (all are counted).
const SHOWN_ERRORS: usize = 5;

const MIB: f64 = 1024.0 * 1024.0;

/// Why a directory entry was not compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Skip {
    Symlink,
    SkippedDir,
    NotRegular,
    Unreadable,
    WouldOverwriteInput,
    Failed,
}

impl Skip {
    pub fn label(self) -> &'static str {
        match self {
            Skip::Symlink => "symlink",
            Skip::SkippedDir => "directory left out (skip list)",
            Skip::NotRegular => "not a regular file",
            Skip::Unreadable => "unreadable",
            Skip::WouldOverwriteInput => "would overwrite input",
            Skip::Failed => "failed",
        }
    }

    /// Skips that are errors (listed in the error report), as opposed to
    /// entries that are merely not eligible.
    pub fn is_error(self) -> bool {
        !matches!(self, Skip::Symlink | Skip::SkippedDir | Skip::NotRegular)
    }
}

/// Shared tallies, updated by the walker and by every compression task.
pub struct Report {
    quiet: bool,
    /// Regular files the walk found so far, and their bytes (the progress bar's totals).
    pub found: AtomicUsize,
    pub found_bytes: AtomicU64,
    pub compressed: AtomicUsize,
    empty: AtomicUsize,
    pub input_bytes: AtomicU64,
    output_bytes: AtomicU64,
    /// Per skip reason: how many, and the first path seen.
    skipped: Mutex<BTreeMap<Skip, (usize, PathBuf)>>,
    /// `(path, message)` for every error.
    errors: Mutex<Vec<(PathBuf, String)>>,
    /// Found files that were then not compressed (skipped or failed).
    pub failed_found: AtomicUsize,
    /// Directories found but not read yet; 0 once the walk is done.
    pub walk_pending: AtomicUsize,
    /// When the last directory of the walk was read (ns since the start); 0 before.
    pub walk_done_ns: AtomicU64,
}

impl Report {
    pub fn new(quiet: bool) -> Self {
        Report {
            quiet,
            found: AtomicUsize::new(0),
            found_bytes: AtomicU64::new(0),
            compressed: AtomicUsize::new(0),
            empty: AtomicUsize::new(0),
            input_bytes: AtomicU64::new(0),
            output_bytes: AtomicU64::new(0),
            skipped: Mutex::new(BTreeMap::new()),
            errors: Mutex::new(Vec::new()),
            failed_found: AtomicUsize::new(0),
            walk_pending: AtomicUsize::new(0),
            walk_done_ns: AtomicU64::new(0),
        }
    }

    /// The walk found a regular file of `bytes` bytes.
    pub fn found(&self, bytes: u64) {
        self.found.fetch_add(1, Ordering::Relaxed);
        self.found_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Files the walk found, and files finished (compressed or skipped after being found).
    pub fn done_of_found(&self) -> (usize, usize) {
        (
            self.compressed.load(Ordering::Relaxed) + self.failed_found.load(Ordering::Relaxed),
            self.found.load(Ordering::Relaxed),
        )
    }

    pub fn done(&self, sizes: Sizes) {
        self.compressed.fetch_add(1, Ordering::Relaxed);
        if sizes.input == 0 {
            self.empty.fetch_add(1, Ordering::Relaxed);
        }
        self.input_bytes.fetch_add(sizes.input, Ordering::Relaxed);
        self.output_bytes.fetch_add(sizes.output, Ordering::Relaxed);
    }

    /// Records a skipped entry; `message` is given for errors.
    pub fn skip(&self, why: Skip, path: &Path, message: Option<String>) {
        lock(&self.skipped)
            .entry(why)
            .or_insert_with(|| (0, path.to_path_buf()))
            .0 += 1;
        if let Some(message) = message {
            if !self.quiet {
                say_err(&format!("error: {}: {message}", path.display()));
            }
            lock(&self.errors).push((path.to_path_buf(), message));
        }
    }
}

/// Locks a mutex, ignoring poisoning (a panicking task must not hide the tallies).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Writes a line to stderr without panicking if stderr is gone; above the progress bar
/// while one is shown.
pub fn say_err(line: &str) {
    if !progress::println(line) {
        let _ = writeln!(io::stderr().lock(), "{line}");
    }
}

/// Formats the end-of-run summary.
pub fn summary(
    report: &Report,
    target: Option<&Target>,
    wall: Duration,
    metrics: &stealpool::PoolMetrics,
) -> String {
    let compressed = report.compressed.load(Ordering::Relaxed);
    let empty = report.empty.load(Ordering::Relaxed);
    let input = report.input_bytes.load(Ordering::Relaxed) as f64 / MIB;
    let output = report.output_bytes.load(Ordering::Relaxed) as f64 / MIB;
    let secs = wall.as_secs_f64();
    let skipped = lock(&report.skipped);
    let mut errors = lock(&report.errors).clone();
    errors.sort();

    // Writing into a String cannot fail.
    let mut s = String::new();
    let mode = match target {
        Some(t) => format!("wrote into {}", t.root.display()),
        None => "dry run (nothing written)".to_string(),
    };
    let _ = writeln!(s, "mode            {mode}");
    let _ = writeln!(s, "compressed      {compressed} files ({empty} empty)");
    let total_skipped: usize = skipped.values().map(|(n, _)| n).sum();
    let _ = writeln!(s, "skipped         {total_skipped}");
    for (why, (n, example)) in skipped.iter() {
        let label = format!("{}:", why.label());
        let _ = writeln!(s, "  {label:<32} {n} (e.g. {})", example.display());
    }
    let _ = writeln!(s, "input           {input:.2} MiB");
    let _ = writeln!(s, "output          {output:.2} MiB");
    if input > 0.0 {
        let ratio = output / input;
        let saved = (1.0 - ratio) * 100.0;
        let _ = writeln!(s, "ratio           {ratio:.3} ({saved:.1}% saved)");
    } else {
        let _ = writeln!(s, "ratio           n/a (no input bytes)");
    }
    let walk = report.walk_done_ns.load(Ordering::Relaxed) as f64 / 1e9;
    let _ = writeln!(
        s,
        "wall time       {secs:.3} s (walk done after {walk:.3} s, in parallel)"
    );
    let throughput = if secs > 0.0 { input / secs } else { 0.0 };
    let _ = writeln!(s, "throughput      {throughput:.1} MiB/s");
    let _ = writeln!(s, "pool threads    {}", metrics.workers.len());
    let counts: Vec<u64> = metrics.workers.iter().map(|w| w.jobs_executed).collect();
    let _ = writeln!(s, "jobs/worker     {counts:?}");
    let _ = writeln!(s, "errors          {}", errors.len());
    for (path, msg) in errors.iter().take(SHOWN_ERRORS) {
        let _ = writeln!(s, "  {}: {msg}", path.display());
    }
    if errors.len() > SHOWN_ERRORS {
        let _ = writeln!(s, "  ... and {} more", errors.len() - SHOWN_ERRORS);
    }
    // Where the pool's time went: one row per worker (stealpool's metrics).
    let _ = writeln!(s, "pool metrics (per worker):");
    let _ = writeln!(s, "{metrics}");
    s
}
