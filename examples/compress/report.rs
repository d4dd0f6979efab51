//! The run's tallies (what was compressed, skipped, failed), the progress they feed, the
//! summary printed at the end, and the exit status: gzip's, 0 when all went well, 1 after
//! any error, else 2 after any warning.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::gzip::Sizes;
use crate::output::Target;
use crate::progress;

/// How many errors, and how many warnings, the summary lists (all are counted).
const SHOWN_ERRORS: usize = 5;

const MIB: f64 = 1024.0 * 1024.0;

/// Why a directory entry was not compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Skip {
    Symlink,
    SkippedDir,
    OutputDir,
    NotRegular,
    // Only Unix has these mode bits.
    #[cfg_attr(not(unix), allow(dead_code))]
    SpecialMode,
    GzipSuffix,
    Exists,
    Unreadable,
    WouldOverwriteInput,
    Failed,
}

impl Skip {
    pub fn label(self) -> &'static str {
        match self {
            Skip::Symlink => "symlink",
            Skip::SkippedDir => "directory left out (skip list)",
            Skip::OutputDir => "output directory (not walked)",
            Skip::NotRegular => "not a regular file",
            Skip::SpecialMode => "set-user-ID/-group-ID or sticky",
            Skip::GzipSuffix => "has a gzip suffix -- unchanged",
            Skip::Exists => "output exists; not overwritten",
            Skip::Unreadable => "unreadable",
            Skip::WouldOverwriteInput => "would overwrite input",
            Skip::Failed => "failed",
        }
    }

    /// How serious the skip is: `None` for entries that are merely not eligible (gzip
    /// -r also passes over a `.gz` silently); a kept output, a FIFO or a device, and a
    /// set-user-ID, set-group-ID or sticky file are warnings, as in gzip. A symlink is
    /// passed over silently: the walk never follows one, by design, where gzip -r tries
    /// to and reports the refusal of its open as an error (and gzip -rf follows it).
    pub fn level(self) -> Option<Level> {
        match self {
            Skip::Symlink | Skip::SkippedDir | Skip::OutputDir | Skip::GzipSuffix => None,
            Skip::Exists | Skip::NotRegular | Skip::SpecialMode => Some(Level::Warning),
            Skip::Unreadable | Skip::WouldOverwriteInput | Skip::Failed => Some(Level::Error),
        }
    }
}

/// A skip that is reported with a message (and sets the exit status).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Warning,
    Error,
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
    /// The progress bar's position: bytes read so far, plus the found bytes of the
    /// files finished without reading them all.
    pub progress_bytes: AtomicU64,
    /// Per skip reason: how many, and the first path seen.
    skipped: Mutex<BTreeMap<Skip, (usize, PathBuf)>>,
    /// `(path, message)` for every error, and for every warning.
    errors: Mutex<Vec<(PathBuf, String)>>,
    warnings: Mutex<Vec<(PathBuf, String)>>,
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
            progress_bytes: AtomicU64::new(0),
            skipped: Mutex::new(BTreeMap::new()),
            errors: Mutex::new(Vec::new()),
            warnings: Mutex::new(Vec::new()),
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

    /// `bytes` more were read from a file.
    pub fn read(&self, bytes: u64) {
        self.progress_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// A file the walk found with `found` bytes is finished, after `read` bytes were read
    /// from it: the rest of it counts as done too, so that the bar reaches its end.
    pub fn settle(&self, found: u64, read: u64) {
        let rest = found.saturating_sub(read);
        self.progress_bytes.fetch_add(rest, Ordering::Relaxed);
    }

    /// Records a skipped entry; `message` is given for errors and warnings, and printed
    /// on stderr as it happens unless quiet.
    pub fn skip(&self, why: Skip, path: &Path, message: Option<String>) {
        lock(&self.skipped)
            .entry(why)
            .or_insert_with(|| (0, path.to_path_buf()))
            .0 += 1;
        if let (Some(message), Some(level)) = (message, why.level()) {
            self.tell(level, path, message);
        }
    }

    /// Records a warning about a file that was compressed all the same.
    pub fn warn(&self, path: &Path, message: String) {
        self.tell(Level::Warning, path, message);
    }

    /// Prints a note about `path` on stderr unless quiet; it changes no exit status.
    pub fn note(&self, path: &Path, message: &str) {
        if !self.quiet {
            say_err(&format!("note: {}: {message}", path.display()));
        }
    }

    fn tell(&self, level: Level, path: &Path, message: String) {
        let (prefix, list) = match level {
            Level::Error => ("error", &self.errors),
            Level::Warning => ("warning", &self.warnings),
        };
        if !self.quiet {
            say_err(&format!("{prefix}: {}: {message}", path.display()));
        }
        lock(list).push((path.to_path_buf(), message));
    }

    /// gzip's exit status for the run so far: 1 after any error, else 2 after any
    /// warning, else 0.
    pub fn exit_status(&self) -> u8 {
        if !lock(&self.errors).is_empty() {
            1
        } else if !lock(&self.warnings).is_empty() {
            2
        } else {
            0
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
    let mut warnings = lock(&report.warnings).clone();
    warnings.sort();

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
    for (name, list) in [("errors", &errors), ("warnings", &warnings)] {
        let _ = writeln!(s, "{name:<16}{}", list.len());
        for (path, msg) in list.iter().take(SHOWN_ERRORS) {
            let _ = writeln!(s, "  {}: {msg}", path.display());
        }
        if list.len() > SHOWN_ERRORS {
            let _ = writeln!(s, "  ... and {} more", list.len() - SHOWN_ERRORS);
        }
    }
    // Where the pool's time went: one row per worker (stealpool's metrics).
    let _ = writeln!(s, "pool metrics (per worker):");
    let _ = writeln!(s, "{metrics}");
    s
}
