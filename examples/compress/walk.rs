//! The walk and the compression, both on the pool: one task per directory, which spawns
//! a task for each regular file in it (compressing it) and for each subdirectory
//! (walking it). So the pool compresses from the first directory on, instead of waiting
//! for a sequential walk of the whole tree; on a large tree the workers no longer sit
//! parked while one thread lists directories.

use std::cell::Cell;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

use flate2::Compression;

use crate::gzip::{compress_one, has_gzip_suffix, ignored};
use crate::output::{Output, Target};
use crate::report::{Report, Skip};

/// What every task of the run shares.
pub struct Job<'a> {
    pub root: &'a Path,
    pub target: Option<&'a Target>,
    pub skip_dirs: &'a [String],
    pub level: Compression,
    /// Replace existing outputs, and compress inputs with a gzip suffix too (gzip -f).
    pub force: bool,
    pub report: &'a Report,
    pub start: Instant,
}

/// Walks `job.root` and compresses every regular file under it, in one scope on `pool`.
/// Symlinks are never followed (counted as skipped); FIFOs, sockets, devices and
/// set-user-ID, set-group-ID or sticky files are passed over with gzip's warnings; the
/// output directory is not entered (a note says so); files with a gzip suffix are passed
/// over, as gzip -r passes over them, unless `force`.
pub fn run(pool: &stealpool::ThreadPool, job: &Job<'_>) {
    job.report.walk_pending.fetch_add(1, Ordering::Relaxed);
    pool.scope(|s| walk_dir(s, job, job.root.to_path_buf()));
}

fn walk_dir<'s>(s: &stealpool::Scope<'s>, job: &'s Job<'s>, dir: PathBuf) {
    let report = job.report;
    let mut subdirs = Vec::new();
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) => {
            let msg = format!("cannot read directory: {e}");
            report.skip(Skip::Unreadable, &dir, Some(msg));
            return walk_step_done(job);
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
            if job
                .skip_dirs
                .iter()
                .any(|name| entry.file_name() == name.as_str())
            {
                report.skip(Skip::SkippedDir, &path, None);
            } else if job.target.is_some_and(|t| t.is(&path, &meta)) {
                // What lands in it are outputs: none may be taken for an input.
                report.skip(Skip::OutputDir, &path, None);
                let msg = "the output directory, inside the input tree: left out of the walk";
                report.note(&path, msg);
            } else {
                subdirs.push(path);
            }
        } else if kind.is_file() && !job.force && has_gzip_suffix(&entry.file_name()) {
            report.skip(Skip::GzipSuffix, &path, None);
        } else if let Some((why, msg)) = ignored(&meta) {
            report.skip(why, &path, Some(msg));
        } else {
            let len = meta.len();
            report.found(len);
            s.spawn(move |_| compress_file(job, &path, len));
        }
    }
    // Subdirectories last: the deque is LIFO, so this worker walks on first while
    // thieves take the files, oldest first.
    report
        .walk_pending
        .fetch_add(subdirs.len(), Ordering::Relaxed);
    for path in subdirs {
        s.spawn(move |s| walk_dir(s, job, path));
    }
    walk_step_done(job);
}

/// A directory was read (its subdirectories counted before): the last one ends the walk.
fn walk_step_done(job: &Job<'_>) {
    if job.report.walk_pending.fetch_sub(1, Ordering::AcqRel) == 1 {
        let now = job.start.elapsed().as_nanos() as u64;
        job.report.walk_done_ns.store(now, Ordering::Release);
    }
}

/// Compresses the file at `src`, which the walk found with `len` bytes.
fn compress_file(job: &Job<'_>, src: &Path, len: u64) {
    let report = job.report;
    let Ok(rel) = src.strip_prefix(job.root) else {
        return;
    };
    let read = Cell::new(0);
    let on_read = |n| {
        read.set(read.get() + n);
        report.read(n);
    };
    let out = job.target.map(|target| Output {
        target,
        rel,
        force: job.force,
    });
    let result = match &out {
        Some(out) => out
            .check()
            .and_then(|()| compress_one(src, Some(out), job.level, &on_read)),
        None => compress_one(src, None, job.level, &on_read),
    };
    report.settle(len, read.get());
    match result {
        Ok(done) => {
            report.done(done.sizes);
            if let Some(warning) = done.warning {
                report.warn(src, warning);
            }
        }
        Err((why, msg)) => {
            report.failed_found.fetch_add(1, Ordering::Relaxed);
            // A kept output is named by its own path, as gzip names it.
            match (why, &out) {
                (Skip::Exists, Some(out)) => report.skip(why, &out.path(), Some(msg)),
                _ => report.skip(why, src, Some(msg)),
            }
        }
    }
}
