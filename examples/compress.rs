//! Parallel gzip compression of a directory tree on a `stealpool` thread pool.
//!
//! Usage:
//!
//! ```text
//! cargo run --release --example compress -- [DIR] [--level N] [--threads N] [--out DIR] [--quiet]
//!                                            [--skip-dir NAME]... [--all-dirs]
//! ```
//!
//! * `DIR` — the tree to compress (default: the current directory).
//! * `--level N` — gzip level, 0 (store) to 9 (best); default 6.
//! * `--threads N` — pool size; 0 or absent uses the pool's default.
//! * `--out DIR` — write `<DIR>/<relative path>.gz` for every input file,
//!   creating directories as needed. Without `--out` the run is a dry run:
//!   every file is still compressed, but into a byte-counting sink, and
//!   nothing is written.
//! * `--quiet` — do not print a line per failed file as it happens (the
//!   summary at the end still counts and lists the first few errors).
//! * `--skip-dir NAME` — leave directories with this name out of the walk
//!   (repeatable; default `target` and `.git`); `--all-dirs` walks everything.
//!
//! How it works: the tree is walked first with `std::fs` (symlinks are
//! never followed and are reported as skipped, as are FIFOs, sockets and
//! devices). Then every regular file becomes exactly one task spawned into a
//! `scope` on a pool built with `ThreadPoolBuilder`; each task streams its
//! file through a `GzEncoder` with `std::io::copy`. Every I/O problem is
//! collected and reported at the end; the process exits non-zero only when
//! the arguments are bad or nothing at all could be compressed.
//!
//! Inputs are never overwritten: `--out` may not be the input directory; if
//! it lies inside the input tree it is left out of the walk; and no output is
//! written to a path that is (or links to) one of the input files.

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs::{self, File, Metadata};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::Parser;
use flate2::write::GzEncoder;
use flate2::Compression;

/// How many error messages the final summary lists.
const SHOWN_ERRORS: usize = 5;

const MIB: f64 = 1024.0 * 1024.0;

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

    /// Worker threads; 0 or absent means the pool's default.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,

    /// Write `<OUT>/<relative path>.gz`; without it nothing is written (dry run).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,

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
}

/// Why a directory entry was not compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Skip {
    Symlink,
    SkippedDir,
    NotRegular,
    Unreadable,
    WouldOverwriteInput,
    Failed,
}

impl Skip {
    fn label(self) -> &'static str {
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
    fn is_error(self) -> bool {
        !matches!(self, Skip::Symlink | Skip::SkippedDir | Skip::NotRegular)
    }
}

/// Identity of a file on disk, used to spot outputs that alias an input.
type FileId = (u64, u64);

#[cfg(unix)]
fn file_id(meta: &Metadata) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn file_id(_meta: &Metadata) -> Option<FileId> {
    None
}

/// Shared tallies, updated by the walker and by every compression task.
struct Report {
    quiet: bool,
    compressed: AtomicUsize,
    empty: AtomicUsize,
    input_bytes: AtomicU64,
    output_bytes: AtomicU64,
    /// Per skip reason: how many, and the first path seen.
    skipped: Mutex<BTreeMap<Skip, (usize, PathBuf)>>,
    /// `(path, message)` for every error.
    errors: Mutex<Vec<(PathBuf, String)>>,
}

impl Report {
    fn new(quiet: bool) -> Self {
        Report {
            quiet,
            compressed: AtomicUsize::new(0),
            empty: AtomicUsize::new(0),
            input_bytes: AtomicU64::new(0),
            output_bytes: AtomicU64::new(0),
            skipped: Mutex::new(BTreeMap::new()),
            errors: Mutex::new(Vec::new()),
        }
    }

    fn done(&self, sizes: Sizes) {
        self.compressed.fetch_add(1, Ordering::Relaxed);
        if sizes.input == 0 {
            self.empty.fetch_add(1, Ordering::Relaxed);
        }
        self.input_bytes.fetch_add(sizes.input, Ordering::Relaxed);
        self.output_bytes.fetch_add(sizes.output, Ordering::Relaxed);
    }

    /// Records a skipped entry; `message` is given for errors.
    fn skip(&self, why: Skip, path: &Path, message: Option<String>) {
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

/// Writes a line to stderr without panicking if stderr is gone.
fn say_err(line: &str) {
    let _ = writeln!(io::stderr().lock(), "{line}");
}

/// The regular files found by the walk.
struct Inputs {
    /// Paths relative to the input root, in walk order.
    files: Vec<PathBuf>,
    /// Absolute paths of all inputs: no output may be written to one of them.
    paths: HashSet<PathBuf>,
    /// Disk identities of all inputs (catches hard links and symlinks).
    ids: HashSet<FileId>,
}

/// Walks `root` without following symlinks and returns its regular files.
///
/// The directory `exclude` (the output directory, matched by path or by disk
/// identity) is not entered. Everything else that is not compressed is
/// recorded in `report`.
fn walk(root: &Path, exclude: Option<&Target>, skip_dirs: &[String], report: &Report) -> Inputs {
    let mut inputs = Inputs {
        files: Vec::new(),
        paths: HashSet::new(),
        ids: HashSet::new(),
    };
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) => {
                let msg = format!("cannot read directory: {e}");
                report.skip(Skip::Unreadable, &dir, Some(msg));
                continue;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    let msg = format!("cannot list directory entry: {e}");
                    report.skip(Skip::Unreadable, &dir, Some(msg));
                    continue;
                }
            };
            let path = entry.path();
            // `DirEntry::metadata` does not traverse symlinks.
            let meta = match entry.metadata() {
                Ok(meta) => meta,
                Err(e) => {
                    let msg = format!("cannot stat: {e}");
                    report.skip(Skip::Unreadable, &path, Some(msg));
                    continue;
                }
            };
            let kind = meta.file_type();
            if kind.is_symlink() {
                report.skip(Skip::Symlink, &path, None);
            } else if kind.is_dir() {
                if skip_dirs
                    .iter()
                    .any(|name| entry.file_name() == name.as_str())
                {
                    report.skip(Skip::SkippedDir, &path, None);
                } else if !exclude.is_some_and(|t| t.is(&path, &meta)) {
                    pending.push(path);
                }
            } else if kind.is_file() {
                if let Some(id) = file_id(&meta) {
                    inputs.ids.insert(id);
                }
                if let Ok(rel) = path.strip_prefix(root) {
                    inputs.files.push(rel.to_path_buf());
                }
                inputs.paths.insert(path);
            } else {
                report.skip(Skip::NotRegular, &path, None);
            }
        }
    }
    inputs
}

/// Where outputs go.
struct Target {
    /// Canonical output directory.
    root: PathBuf,
    /// Its disk identity.
    id: Option<FileId>,
}

impl Target {
    /// Whether the directory at `path` (with `meta`) is the output directory.
    fn is(&self, path: &Path, meta: &Metadata) -> bool {
        path == self.root || (self.id.is_some() && file_id(meta) == self.id)
    }

    /// `<root>/<rel>.gz`
    fn path_for(&self, rel: &Path) -> PathBuf {
        let mut name = OsString::from(rel.as_os_str());
        name.push(".gz");
        self.root.join(name)
    }
}

/// Refuses an output path that is, or resolves to, one of the inputs.
fn check_output(dest: &Path, inputs: &Inputs) -> Result<(), String> {
    if inputs.paths.contains(dest) {
        return Err(format!("output {} is an input file", dest.display()));
    }
    match fs::symlink_metadata(dest) {
        Ok(meta) if meta.file_type().is_symlink() => Err(format!(
            "output {} is a symlink; not writing through it",
            dest.display()
        )),
        Ok(meta) if file_id(&meta).is_some_and(|id| inputs.ids.contains(&id)) => Err(format!(
            "output {} is a hard link to an input file",
            dest.display()
        )),
        _ => Ok(()),
    }
}

/// Byte sizes of one compressed file.
#[derive(Clone, Copy)]
struct Sizes {
    input: u64,
    output: u64,
}

/// A writer that counts the bytes passed through to `inner`.
struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W> Counting<W> {
    fn new(inner: W) -> Self {
        Counting { inner, bytes: 0 }
    }
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Streams `file` through a gzip encoder into `sink`; returns the sizes and
/// the sink.
fn gzip_into<W: Write>(file: &mut File, sink: W, level: Compression) -> io::Result<(Sizes, W)> {
    let mut encoder = GzEncoder::new(Counting::new(sink), level);
    let input = io::copy(file, &mut encoder)?;
    let counted = encoder.finish()?;
    let sizes = Sizes {
        input,
        output: counted.bytes,
    };
    Ok((sizes, counted.inner))
}

/// Why [`compress_one`] gave up on a file, with a message for errors.
type Failure = (Skip, String);

fn failed(what: &str, path: &Path, e: io::Error) -> Failure {
    (Skip::Failed, format!("{what} {}: {e}", path.display()))
}

/// Compresses `src` into `dest`, or into a counting sink when `dest` is `None`.
fn compress_one(src: &Path, dest: Option<&Path>, level: Compression) -> Result<Sizes, Failure> {
    let mut file = File::open(src).map_err(|e| (Skip::Unreadable, format!("cannot open: {e}")))?;
    // The entry may have been replaced since the walk saw it.
    match file.metadata() {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return Err((Skip::NotRegular, String::new())),
        Err(e) => return Err((Skip::Unreadable, format!("cannot stat: {e}"))),
    }
    let Some(dest) = dest else {
        let (sizes, _) = gzip_into(&mut file, io::sink(), level)
            .map_err(|e| (Skip::Failed, format!("compressing: {e}")))?;
        return Ok(sizes);
    };
    if let Some(parent) = dest.parent() {
        fs::create_dir_all(parent).map_err(|e| failed("cannot create directory", parent, e))?;
    }
    let out = File::create(dest).map_err(|e| failed("cannot create", dest, e))?;
    let written = gzip_into(&mut file, BufWriter::new(out), level).and_then(|(sizes, out)| {
        // Flush what is still buffered; a failure here is a failed write.
        out.into_inner().map_err(|e| e.into_error())?;
        Ok(sizes)
    });
    written.map_err(|e| {
        // Do not leave a truncated .gz behind.
        let _ = fs::remove_file(dest);
        failed("compressing to", dest, e)
    })
}

/// Compresses every input file, one `scope` task per file.
fn compress_all(
    pool: &stealpool::ThreadPool,
    root: &Path,
    inputs: &Inputs,
    target: Option<&Target>,
    level: Compression,
    report: &Report,
) {
    pool.scope(|s| {
        for rel in &inputs.files {
            s.spawn(move |_| {
                let src = root.join(rel);
                let dest = target.map(|t| t.path_for(rel));
                if let Some(dest) = &dest {
                    if let Err(msg) = check_output(dest, inputs) {
                        report.skip(Skip::WouldOverwriteInput, &src, Some(msg));
                        return;
                    }
                }
                match compress_one(&src, dest.as_deref(), level) {
                    Ok(sizes) => report.done(sizes),
                    Err((why, msg)) => report.skip(why, &src, why.is_error().then_some(msg)),
                }
            });
        }
    });
}

/// Formats the end-of-run summary.
fn summary(
    report: &Report,
    target: Option<&Target>,
    (wall, walk): (Duration, Duration),
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
    let walk = walk.as_secs_f64();
    let _ = writeln!(s, "wall time       {secs:.3} s (walk {walk:.3} s)");
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

/// Prints an argument error and returns the usage-error exit code.
fn bad_args(msg: &str) -> ExitCode {
    say_err(&format!("error: {msg}"));
    ExitCode::from(2)
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
    Ok(Target { root: out_root, id })
}

fn main() -> ExitCode {
    let args = Args::parse();

    let root = match fs::canonicalize(&args.dir) {
        Ok(root) if root.is_dir() => root,
        Ok(_) => return bad_args(&format!("{} is not a directory", args.dir.display())),
        Err(e) => return bad_args(&format!("cannot open {}: {e}", args.dir.display())),
    };
    let target = match args.out.as_deref().map(|out| resolve_target(out, &root)) {
        None => None,
        Some(Ok(target)) => Some(target),
        Some(Err(msg)) => return bad_args(&msg),
    };

    if let Some(path) = &args.timeline {
        let ext = path.extension().and_then(|e| e.to_str());
        if !matches!(ext, Some("json" | "svg")) {
            return bad_args(&format!(
                "--timeline {}: the file must end in .json or .svg",
                path.display()
            ));
        }
    }

    let mut builder = stealpool::ThreadPoolBuilder::new()
        .thread_name(|i| format!("compress-{i}"))
        .timeline(args.timeline.is_some());
    if let Some(n) = args.threads {
        builder = builder.num_threads(n);
    }
    let pool = match builder.build() {
        Ok(pool) => pool,
        Err(e) => return bad_args(&format!("cannot build thread pool: {e}")),
    };

    let report = Report::new(args.quiet);
    let level = Compression::new(args.level);

    let start = Instant::now();
    let skip_dirs: &[String] = if args.all_dirs { &[] } else { &args.skip_dirs };
    let inputs = walk(&root, target.as_ref(), skip_dirs, &report);
    let walk_time = start.elapsed();
    compress_all(&pool, &root, &inputs, target.as_ref(), level, &report);
    let wall = start.elapsed();

    let text = summary(&report, target.as_ref(), (wall, walk_time), &pool.metrics());
    let _ = io::stdout().lock().write_all(text.as_bytes());

    if let (Some(path), Some(timeline)) = (&args.timeline, pool.timeline()) {
        // After the shutdown every worker has written its last event.
        let _ = pool.shutdown();
        match timeline.save(path) {
            Ok(()) => println!(
                "timeline        {} ({} jobs)",
                path.display(),
                timeline.jobs()
            ),
            Err(e) => {
                say_err(&format!(
                    "error: cannot save the timeline to {}: {e}",
                    path.display()
                ));
                return ExitCode::FAILURE;
            }
        }
    }

    if report.compressed.load(Ordering::Relaxed) > 0 {
        return ExitCode::SUCCESS;
    }
    if inputs.files.is_empty() {
        say_err(&format!(
            "error: no regular files found under {}",
            root.display()
        ));
    } else {
        say_err("error: nothing was compressed");
    }
    ExitCode::FAILURE
}
