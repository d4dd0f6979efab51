//! Parallel gzip compression of a directory tree on a `stealpool` thread pool.
//!
//! Usage:
//!
//! ```text
//! cargo run --release --example compress -- [DIR] [--level N] [--threads N] [--out DIR] [--force]
//!                                            [--quiet] [--skip-dir NAME]... [--all-dirs]
//!                                            [--timeline FILE.json|FILE.svg]
//! ```
//!
//! * `DIR` — the tree to compress (default: the current directory).
//! * `--level N` — gzip level, 0 (store) to 9 (best); default 6.
//! * `--threads N` — pool size, at most 1024; 0 or absent uses the pool's default.
//! * `--out DIR` — write `<DIR>/<relative path>.gz` for every input file,
//!   creating directories as needed. Without `--out` the run is a dry run:
//!   every file is still compressed, but into a byte-counting sink, and
//!   nothing is written.
//! * `--force` — replace existing outputs, and compress files with a gzip suffix too
//!   (as gzip -f).
//! * `--quiet` — no progress bar, and no line per failed file as it happens (the
//!   summary at the end still counts and lists the first few errors and warnings).
//! * `--skip-dir NAME` — leave directories with this name out of the walk
//!   (repeatable; default `target` and `.git`); `--all-dirs` walks everything.
//! * `--timeline FILE` — record the pool's worker timeline and save it (Chrome Trace
//!   JSON for `.json`, SVG for `.svg`).
//!
//! How it works (`walk.rs`): one `scope` on a pool built with `ThreadPoolBuilder`; a
//! task per directory lists it with `std::fs` and spawns a task per regular file and per
//! subdirectory, so compression starts with the first directory. Symlinks are never
//! followed (counted as skipped in the summary), nor is an input that became one after
//! the walk saw it (the open refuses it). Each file task streams its file through a
//! `GzEncoder` with `std::io::copy` (`gzip.rs`: flate2 on its zlib-rs backend, the
//! fastest of those measured in `docs/performance.md`). A progress bar (`indicatif`)
//! shows files and MiB done, throughput and ETA on a terminal once the run has lasted a
//! second (`progress.rs`). Every I/O problem is reported on stderr as it happens and
//! collected for the summary (`report.rs`).
//!
//! As gzip -r does, and as its users expect:
//!
//! * exit status 0 when all went well, 1 after any error (an unreadable file, a failed
//!   write, bad arguments, an input directory that cannot be read: "cannot read DIR"),
//!   else 2 after any warning; every other file is still compressed;
//! * an existing output is kept, with a warning ("already exists; not overwritten"),
//!   unless `--force`, also one that appears while its input is compressed; with
//!   `--force`, an output path that is a directory is an error;
//! * FIFOs, sockets and devices, and set-user-ID, set-group-ID or sticky files (even
//!   with `--force`), are passed over with gzip's warnings; a modification time that
//!   the header cannot carry (before 1970, after 2106) is written as 0, with gzip's
//!   warning;
//! * a file whose name has a gzip suffix (`.gz`, `.tgz`, `.z`, ...) is passed over
//!   silently (the summary counts them), unless `--force`;
//! * the header carries the input's name and modification time, and the output gets
//!   the input's access and modification times, owner (where allowed) and permission
//!   bits (`gzip -lv`, `gzip -d -N`);
//! * SIGINT, SIGTERM, SIGHUP, SIGXCPU and SIGXFSZ (Ctrl-C on Windows) leave no partial
//!   output: outputs are written under a temporary name and renamed when complete, and
//!   the temporaries are removed before the process ends with the signal's status
//!   (`partial.rs`).
//!
//! Inputs are never overwritten (`output.rs`): `--out` may not be the input directory;
//! if it lies inside the input tree it is left out of the walk (with a note saying so);
//! no output is written inside the input tree otherwise, nor through a symlink to a
//! directory below `--out`, nor in place of a symlink or a file with other names (hard
//! links), even with `--force`.
//!
//! For tests, `COMPRESS_TEST_HOLD=DIR` in the environment holds every file task at two
//! points, so that a test can change the tree there (`hold.rs`).

mod gzip;
mod hold;
mod output;
mod partial;
mod progress;
mod report;
mod walk;

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Instant;

use clap::Parser;
use flate2::Compression;

use output::{file_id, Target};
use report::{say_err, summary, Report};

#[derive(Parser, Debug)]
#[command(about = "gzip every regular file under DIR in parallel on a stealpool thread pool")]
struct Args {
    /// Directory tree to compress.
    #[arg(default_value = ".")]
    dir: PathBuf,

    /// gzip compression level, 0 (store only) to 9 (best).
    #[arg(long, value_name = "N", default_value_t = 6, allow_negative_numbers = true,
          value_parser = clap::value_parser!(u32).range(0..=9))]
    level: u32,

    /// Worker threads, at most 1024; 0 or absent means the pool's default.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(0..=MAX_THREADS))]
    threads: Option<u16>,

    /// Write `<OUT>/<relative path>.gz`; without it nothing is written (dry run).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,

    /// Replace existing outputs, and compress files with a gzip suffix (.gz, .tgz, ...)
    /// too, as gzip -f does.
    #[arg(long, short)]
    force: bool,

    /// Do not print a line for each failed file as it happens.
    #[arg(long, short)]
    quiet: bool,

    /// Directory names left out of the walk (repeatable); by default `target` and `.git`,
    /// so that running on a Rust checkout compresses its sources, not its build output.
    #[arg(long = "skip-dir", value_name = "NAME", default_values_t = [String::from("target"), String::from(".git")])]
    skip_dirs: Vec<String>,

    /// Walk every directory (ignore `--skip-dir`).
    #[arg(long)]
    all_dirs: bool,

    /// Record the pool's worker timeline and save it to FILE: Chrome Trace JSON for
    /// `.json` (open it in https://ui.perfetto.dev), an SVG for `.svg`.
    #[arg(long, value_name = "FILE")]
    timeline: Option<PathBuf>,

    /// For tests: print the progress bar's position on stderr at every update, without
    /// drawing it (progress.rs).
    #[arg(long, hide = true)]
    progress_trace: bool,
}

/// The most worker threads `--threads` asks for. More would only add contention to a job
/// bound by the cores and the disk; and far more can exhaust the process's memory
/// mappings while the threads start, which the standard library reports by aborting
/// from the new thread, where the pool's build cannot turn it into an error.
const MAX_THREADS: i64 = 1024;

/// Prints an error and returns gzip's exit status for errors, which it also uses for
/// bad arguments.
fn error(msg: &str) -> ExitCode {
    say_err(&format!("error: {msg}"));
    ExitCode::FAILURE
}

/// Resolves `--out`: creates it, and refuses the input directory itself.
fn resolve_target(out: &Path, root: &Path) -> Result<Target, String> {
    fs::create_dir_all(out)
        .map_err(|e| format!("cannot create output directory {}: {e}", out.display()))?;
    let out_root =
        fs::canonicalize(out).map_err(|e| format!("cannot resolve {}: {e}", out.display()))?;
    let id = fs::metadata(&out_root).ok().and_then(|m| file_id(&m));
    let root_id = fs::metadata(root).ok().and_then(|m| file_id(&m));
    if out_root == root || (id.is_some() && id == root_id) {
        return Err(format!(
            "--out {} is the input directory; refusing to write into the tree being compressed",
            out.display()
        ));
    }
    Ok(Target {
        root: out_root,
        id,
        input: root.to_path_buf(),
    })
}

/// Checks that the timeline can be saved at `path` before the run, rather than finding
/// out after it: opens it for writing, without changing it if it exists, and removes it
/// again if it did not.
fn check_writable(path: &Path) -> io::Result<()> {
    match OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            OpenOptions::new().write(true).open(path).map(drop)
        }
        Err(e) => Err(e),
    }
}

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(args) => args,
        // `--help` and `--version` go to stdout and succeed; anything else is an error.
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    // Before any other thread starts (partial.rs).
    partial::install();

    // A directory that is missing, unreadable or not a directory: said so, not found
    // empty.
    let root = match fs::canonicalize(&args.dir).and_then(|root| fs::read_dir(&root).map(|_| root))
    {
        Ok(root) => root,
        Err(e) => return error(&format!("cannot read {}: {e}", args.dir.display())),
    };
    // Everything that can fail before the run does so before --out is created.
    if let Some(path) = &args.timeline {
        let ext = path.extension().and_then(|e| e.to_str());
        if !matches!(ext, Some("json" | "svg")) {
            return error(&format!(
                "--timeline {}: the file must end in .json or .svg",
                path.display()
            ));
        }
        if let Err(e) = check_writable(path) {
            return error(&format!(
                "cannot save the timeline to {}: {e}",
                path.display()
            ));
        }
    }

    let mut builder = stealpool::ThreadPoolBuilder::new()
        .thread_name(|i| format!("compress-{i}"))
        .timeline(args.timeline.is_some());
    if let Some(n) = args.threads {
        builder = builder.num_threads(usize::from(n));
    }
    let pool = match builder.build() {
        Ok(pool) => pool,
        Err(e) => return error(&format!("cannot build thread pool: {e}")),
    };

    let target = match args.out.as_deref().map(|out| resolve_target(out, &root)) {
        None => None,
        Some(Ok(target)) => Some(target),
        Some(Err(msg)) => return error(&msg),
    };

    let report = Report::new(args.quiet);
    let job = walk::Job {
        root: &root,
        target: target.as_ref(),
        skip_dirs: if args.all_dirs { &[] } else { &args.skip_dirs },
        level: Compression::new(args.level),
        force: args.force,
        report: &report,
        start: Instant::now(),
    };
    progress::around(&report, args.quiet, args.progress_trace, || {
        walk::run(&pool, &job)
    });
    let wall = job.start.elapsed();

    let text = summary(&report, target.as_ref(), wall, &pool.metrics());
    let _ = io::stdout().lock().write_all(text.as_bytes());

    if let (Some(path), Some(timeline)) = (&args.timeline, pool.timeline()) {
        // After the shutdown every worker has written its last event.
        let _ = pool.shutdown();
        match timeline.save(path) {
            Ok(()) => {
                let line = format!(
                    "timeline        {} ({} jobs)\n",
                    path.display(),
                    timeline.jobs()
                );
                let _ = io::stdout().lock().write_all(line.as_bytes());
            }
            Err(e) => {
                return error(&format!(
                    "cannot save the timeline to {}: {e}",
                    path.display()
                ));
            }
        }
    }

    // Not an error for gzip -r either, but worth a word.
    if report.found.load(Ordering::Relaxed) == 0 {
        say_err(&format!(
            "note: no files to compress under {}",
            root.display()
        ));
    }
    ExitCode::from(report.exit_status())
}
