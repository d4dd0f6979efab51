//! A test hook that makes the races between the walk and the compression reproducible:
//! with `COMPRESS_TEST_HOLD=DIR` in the environment (not documented in `--help`, as
//! `--progress-trace` is not), every file task stops at two points and waits there
//! until the test lets it go on:
//!
//! * `open`: the walk has seen a regular file, its output has been checked, and the
//!   input is about to be opened;
//! * `commit`: the output is complete under its temporary name and about to get its
//!   final name.
//!
//! At point `P` the task creates `DIR/P.ready`, then waits until `DIR/P.go` exists (a
//! minute at most, so that a test that never says go still ends). A test changes the
//! tree after `P.ready` appears and creates `P.go` once done: the change then happens
//! exactly between the walk and the open, or between the compression and the rename,
//! however the threads are scheduled.

use std::fs::File;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The environment variable that turns the hook on.
const HOLD_ENV: &str = "COMPRESS_TEST_HOLD";

/// The longest a task waits at a point.
const HOLD_AT_MOST: Duration = Duration::from_secs(60);

/// Waits at `point` if the hook is on (see the top of this file); returns at once
/// otherwise.
pub fn at(point: &str) {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    let Some(dir) = DIR.get_or_init(|| std::env::var_os(HOLD_ENV).map(PathBuf::from)) else {
        return;
    };
    let _ = File::create(dir.join(format!("{point}.ready")));
    let go = dir.join(format!("{point}.go"));
    let until = Instant::now() + HOLD_AT_MOST;
    while !go.exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
}
