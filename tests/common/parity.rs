//! Scenarios checked on stealpool and on rayon-core 1.13 alike (`tests/rayon_parity_*.rs`).
//!
//! A test file writes its scenarios once, as the body of a `macro_rules!` macro without
//! arguments, and [`on_both_crates`] expands it twice: in a module `sp`, where `rp` is
//! `stealpool`, and in a module `rc`, where `rp` is `rayon_core`. Both modules also get
//! `pool(n)` (a pool of `n` workers of that crate) and `occupy(&pool)` (see [`occupy`]).
//! A passing `rc` test shows that the expectation is rayon-core's behaviour, so a
//! rayon-core program may rely on it; the `sp` test shows that stealpool keeps it.

use std::fmt::Debug;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// Expands the scenario macro `$scenarios` in a module `sp` on stealpool and in a module
/// `rc` on rayon-core, each with `use super::*`, the crate under test as `rp`, and the
/// helpers `pool` and `occupy` for that crate.
#[allow(unused_macros)] // in the test files that write no parity scenarios
macro_rules! on_both_crates {
    ($scenarios:ident) => {
        /// The scenarios on stealpool.
        mod sp {
            $crate::common::parity::on_both_crates!(@crate stealpool, $scenarios);
        }
        /// The same scenarios on rayon-core 1.13: the expectations are its behaviour.
        mod rc {
            $crate::common::parity::on_both_crates!(@crate rayon_core, $scenarios);
        }
    };
    (@crate $krate:ident, $scenarios:ident) => {
        #[allow(unused_imports)]
        use super::*;
        use ::$krate as rp;

        /// A pool of `n` workers.
        #[allow(dead_code)]
        fn pool(n: usize) -> rp::ThreadPool {
            rp::ThreadPoolBuilder::new().num_threads(n).build().unwrap()
        }

        /// Holds the only worker of `pool` in a job until the returned sender is used or
        /// dropped; returns once the worker is inside that job.
        #[allow(dead_code)]
        fn occupy(pool: &rp::ThreadPool) -> std::sync::mpsc::Sender<()> {
            $crate::common::parity::occupy(|job| pool.spawn(job))
        }

        $scenarios!();
    };
}
#[allow(unused_imports)] // in the test files that write no parity scenarios
pub(crate) use on_both_crates;

/// Runs `scenario` `runs` times, each under a watchdog of `secs` seconds, and stops at
/// the first run that returns an error, panics or hangs (a hung run still holds its
/// pool's threads); panics then with that run's number and its failure.
pub fn repeat(runs: usize, secs: u64, scenario: fn() -> Result<(), String>) {
    for run in 1..=runs {
        let error = match std::panic::catch_unwind(|| super::deadline::watchdog(secs, scenario)) {
            Ok(Ok(())) => continue,
            Ok(Err(e)) => e,
            Err(payload) => super::panics::payload_str(&*payload)
                .unwrap_or("a panic with a non-string payload")
                .to_owned(),
        };
        panic!("run {run} of {runs} failed: {error}");
    }
}

/// Receives from `rx`, panicking after 5 s: a job that never runs fails its run instead of
/// waiting for the watchdog.
pub fn recv<T>(rx: &mpsc::Receiver<T>) -> T {
    rx.recv_timeout(Duration::from_secs(5))
        .expect("timed out waiting on a channel: a job did not run")
}

/// Hands `spawn` a job that blocks its worker until the returned sender is used or
/// dropped, and returns once the job has started. On a one-thread pool every job queued
/// before the sender is used is then in its queue when the worker next looks for work,
/// whatever state the worker was in (starting, spinning, parked) when the pool was built.
pub fn occupy(spawn: impl FnOnce(Box<dyn FnOnce() + Send>)) -> mpsc::Sender<()> {
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let (started_tx, started_rx) = mpsc::channel::<()>();
    spawn(Box::new(move || {
        started_tx.send(()).unwrap();
        let _ = gate_rx.recv();
    }));
    recv(&started_rx);
    gate_tx
}

/// `Ok` if `got == want`, else an error naming `what` and both values.
pub fn expect<T: Debug + PartialEq<U>, U: Debug>(
    what: &str,
    got: T,
    want: U,
) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: {got:?}, expected {want:?}"))
    }
}

/// An order of events, appended to by jobs on any thread.
#[derive(Clone, Default)]
pub struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    pub fn push(&self, event: impl Into<String>) {
        self.0.lock().unwrap().push(event.into());
    }

    /// The events so far, in the order they were pushed.
    pub fn events(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}
