//! rayon-core 1.13's public API, item by item, used *only* through the alias
//! below: if this file compiles and passes, code written against rayon-core
//! that uses these items switches to stealpool by changing one `use` line.
//!
//! Every test asserts behaviour (values, indices, counts, exact orders), not
//! just that a call compiles. Bounds are exercised too: where rayon-core does
//! not require `Send` or `'static` (the `in_place_scope` body, the
//! `thread_name` and `spawn_handler` closures, `build_scoped`'s `with_pool`),
//! the tests pass closures that are not `Send` or that borrow locals.
//!
//! The expected sequences of the ordering tests are rayon-core's own (its
//! `spawn/test.rs`, `scope/test.rs` and `thread_pool/test.rs`); the code is
//! written anew. One module per part of the API (`join.rs`, `scope.rs`, ...).
//!
//! The global pool is per process: the only test that calls `build_global`
//! (and the deprecated `initialize`) first makes sure the global pool exists,
//! so both must fail. Every other test uses dedicated pools, or the lazily
//! built global pool through the free functions.

use stealpool as rayon_core;

#[path = "../common/mod.rs"]
mod common;

mod broadcast;
mod builder;
mod current;
mod deprecated;
mod in_place_scope;
mod install;
mod join;
mod scope;
mod scope_order;
mod spawn;
mod spawn_handler;
mod spawn_order;
mod yield_;

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::error::Error;
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::Duration;

use common::{payload_str, quiet_expected_panics, watchdog, Recorded, EXPECTED};
use rayon_core::{ThreadBuilder, ThreadPool, ThreadPoolBuildError, ThreadPoolBuilder, Yield};

/// Watchdog limit for one test body (the machine may be busy compiling).
const TIMEOUT: u64 = 60;
/// How long a test waits for an event that must happen (a handler call, a
/// message from a job).
const WAIT: Duration = Duration::from_secs(10);

/// Asserts that `seen`, the `current_thread_index()` each of a scope's jobs recorded, holds
/// `jobs` entries, each the index of a worker of a pool of `threads`.
fn assert_all_ran_on_the_pool(seen: Mutex<Vec<Option<usize>>>, jobs: usize, threads: usize) {
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), jobs);
    assert!(
        seen.iter().all(|i| matches!(i, Some(i) if *i < threads)),
        "{seen:?}"
    );
}

const ALREADY_IN_POOL: &str = "The current thread is already part of another thread pool.";
const GLOBAL_ALREADY_INITIALIZED: &str = "The global thread pool has already been initialized.";

fn pool(num_threads: usize) -> ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(num_threads)
        .build()
        .expect("building a pool failed")
}

/// Runs `f`, returning its value or the text of its panic.
fn catch<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(|payload| panic_text(&*payload))
}

fn panic_text(payload: &(dyn Any + Send)) -> String {
    payload_str(payload)
        .unwrap_or("<non-string panic payload>")
        .to_owned()
}

/// A deliberate panic message (silenced by the quiet hook).
fn expected(what: &str) -> String {
    format!("{EXPECTED} {what}")
}

/// Fibonacci with a `join` per call, through the alias.
fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = rayon_core::join(|| fib(n - 1), || fib(n - 2));
    a + b
}
