//! The progress bar: on stderr, only when stderr is a terminal, the run is not `--quiet`,
//! and it has lasted a second (short runs print their summary and nothing else). Files
//! and MiB done out of those found so far, throughput, and the ETA once the walk is done
//! (it runs alongside the compression, so until then the totals still grow and the bar
//! says how many directories are left to read instead), drawn by `indicatif` from a
//! thread that reads the tallies ten times a second: the compression tasks only bump
//! counters. The position moves as bytes are read, so a large file moves it too.
//!
//! For tests, `--progress-trace` (hidden from `--help`) runs the same thread with the bar
//! never drawn and prints the bar's own position and length on stderr at every update:
//! `progress <position>/<length> bytes <done>/<found> files`.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::report::Report;

/// The bar, once shown (so that error lines go above it).
static BAR: OnceLock<ProgressBar> = OnceLock::new();

/// How long a run goes before the bar appears.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// Prints `line` above the bar; `false` if no bar is shown.
pub fn println(line: &str) -> bool {
    match BAR
        .get()
        .filter(|bar| !bar.is_finished() && !bar.is_hidden())
    {
        Some(bar) => {
            bar.println(line);
            true
        }
        None => false,
    }
}

/// Takes the bar off the terminal (the process is about to end).
pub fn clear() {
    if let Some(bar) = BAR.get() {
        bar.finish_and_clear();
    }
}

/// Runs `work` while a thread keeps the bar up to date (if one should be shown at all,
/// or `trace`d).
pub fn around<R>(report: &Report, quiet: bool, trace: bool, work: impl FnOnce() -> R) -> R {
    if !trace && (quiet || !std::io::stderr().is_terminal()) {
        return work();
    }
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| draw(report, &done, trace));
        let result = work();
        done.store(true, Ordering::Relaxed);
        result
    })
}

/// While the walk runs the totals still grow, so no ETA is shown yet.
fn style(walking: bool) -> ProgressStyle {
    let template = if walking {
        "{elapsed} [{bar:20}] {bytes}/{total_bytes}+ {binary_bytes_per_sec} {msg}"
    } else {
        "{elapsed} [{bar:20}] {bytes}/{total_bytes} {binary_bytes_per_sec} ETA {eta} {msg}"
    };
    ProgressStyle::with_template(template)
        .expect("a valid template")
        .progress_chars("=> ")
}

fn draw(report: &Report, done: &AtomicBool, trace: bool) {
    let start = Instant::now();
    // Updated from the start (so that the rate has a history), drawn after a second.
    let bar =
        BAR.get_or_init(|| ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden()));
    bar.set_style(style(true));
    let mut shown = false;
    let mut walking = true;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        if walking && report.walk_done_ns.load(Ordering::Acquire) != 0 {
            // The totals are final from now on: an ETA means something.
            walking = false;
            bar.set_style(style(false));
        }
        bar.set_length(report.found_bytes.load(Ordering::Relaxed));
        bar.set_position(report.progress_bytes.load(Ordering::Relaxed));
        let (files_done, files_found) = report.done_of_found();
        let dirs = report.walk_pending.load(Ordering::Relaxed);
        bar.set_message(if walking {
            format!("{files_done}/{files_found}+ files, {dirs} dirs to read")
        } else {
            format!("{files_done}/{files_found} files")
        });
        if trace {
            let line = format!(
                "progress {}/{} bytes {files_done}/{files_found} files\n",
                bar.position(),
                bar.length().unwrap_or(0)
            );
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
        } else if !shown && start.elapsed() >= SHOW_AFTER {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            shown = true;
        }
    }
    bar.finish_and_clear();
}
