//! The scheduler's side: what stealpool calls to record. Applications use the
//! [`Timeline`](crate::Timeline) that stealpool hands out instead; the contracts here are
//! the scheduler's (one writer per worker log).

use crate::{exit, TIMELINE_ENV};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

pub use crate::record::{Recorder, WorkerLog};

/// The recorder for a new pool of `num_workers` workers, if it records: the builder asked
/// for it (`wanted`), or `TIMELINE_ENV` is set (then it also says where to save; `global`:
/// the global pool, which saves to the variable's own path).
///
/// With the variable set, each call for a non-global pool takes the next pool number
/// (`FILE-pool<N>`), whether or not its recorder is ever used: call it once per pool, as
/// stealpool does when it builds one.
///
/// ```
/// use stealpool_timeline::scheduler::recorder_for;
/// # std::env::remove_var(stealpool_timeline::TIMELINE_ENV);
/// assert!(recorder_for(4, false, false).is_none()); // not asked, no variable
/// let recorder = recorder_for(4, true, false).unwrap();
/// assert_eq!(recorder.timeline().events().len(), 4);
/// ```
pub fn recorder_for(num_workers: usize, wanted: bool, global: bool) -> Option<Arc<Recorder>> {
    static POOLS: AtomicUsize = AtomicUsize::new(0);
    let env = env_path();
    if !wanted && env.is_none() {
        return None;
    }
    let save_to = env.map(|base| {
        if global {
            base
        } else {
            // Relaxed: a unique number is all that is needed.
            pool_path(&base, POOLS.fetch_add(1, Ordering::Relaxed) + 1)
        }
    });
    let recorder = Recorder::new(num_workers, save_to);
    if recorder.saves() {
        exit::save_at_exit(&recorder);
    }
    Some(recorder)
}

/// The `TIMELINE_ENV` path, if it is set and names a `.json` or `.svg` file; otherwise a
/// set-but-wrong value is reported once.
fn env_path() -> Option<PathBuf> {
    let value = std::env::var_os(TIMELINE_ENV).filter(|v| !v.is_empty())?;
    let path = PathBuf::from(value);
    match path.extension().and_then(|e| e.to_str()) {
        Some("json" | "svg") => Some(path),
        _ => {
            static REPORTED: std::sync::Once = std::sync::Once::new();
            REPORTED.call_once(|| {
                eprintln!(
                    "stealpool: {TIMELINE_ENV}={}: a timeline is saved as .json or .svg; not recording",
                    path.display()
                )
            });
            None
        }
    }
}

/// `base` with `-pool<n>` before its extension.
fn pool_path(base: &Path, n: usize) -> PathBuf {
    let stem = base.file_stem().unwrap_or_default().to_string_lossy();
    let name = match base.extension() {
        Some(ext) => format!("{stem}-pool{n}.{}", ext.to_string_lossy()),
        None => format!("{stem}-pool{n}"),
    };
    base.with_file_name(name)
}
