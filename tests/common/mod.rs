//! Helpers shared by the integration tests.
//!
//! Every test that could hang runs its body under [`watchdog`], so a deadlock
//! or a lost wakeup turns into a test failure with a clear message instead of
//! a hung `cargo test`.
#![allow(dead_code)]

pub mod blocked;
pub mod child;
pub mod held;
pub mod isolation;
pub mod parity;
pub mod seccomp;
pub mod trace;
pub mod wake;

// Each test binary uses some of them.
#[allow(unused_imports)]
pub use wake::{another_worker_woke, assert_some_woke, parked_workers, wait_parked, Pacer};

use std::any::Any;
use std::collections::HashMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::AtomicUsize;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Barrier, Condvar, Mutex, Once, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use stealpool::ThreadPool;

/// Runs `f` on a fresh thread and returns its result.
///
/// Panics with a clear message if `f` has not finished after `secs` seconds
/// (the stuck thread is left behind; the test fails anyway). If `f` panicked,
/// its panic is re-raised on the calling thread with the original payload.
pub fn watchdog<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let body = thread::Builder::new()
        .name("watchdog-body".into())
        .spawn(move || {
            let result = panic::catch_unwind(AssertUnwindSafe(f));
            // The receiver is gone only if the watchdog already fired.
            let _ = tx.send(result);
        })
        .expect("watchdog: failed to spawn the test body thread");
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(Ok(value)) => {
            body.join()
                .expect("watchdog: body thread died after reporting");
            value
        }
        Ok(Err(payload)) => {
            let _ = body.join();
            panic::resume_unwind(payload)
        }
        Err(RecvTimeoutError::Timeout) => panic!(
            "watchdog: test body did not finish within {secs} s \
             (deadlock, lost wakeup or livelock in the pool)"
        ),
        Err(RecvTimeoutError::Disconnected) => {
            panic!("watchdog: test body thread exited without reporting a result")
        }
    }
}

/// A counter that threads bump and another thread can wait on, with a timeout.
/// It also remembers every value passed to [`Tally::record`].
#[derive(Default)]
pub struct Tally {
    state: Mutex<Vec<usize>>,
    changed: Condvar,
}

impl Tally {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Records one event carrying `value` (e.g. a worker index).
    pub fn record(&self, value: usize) {
        self.state.lock().unwrap().push(value);
        self.changed.notify_all();
    }

    pub fn count(&self) -> usize {
        self.state.lock().unwrap().len()
    }

    /// Values recorded so far, sorted.
    pub fn sorted(&self) -> Vec<usize> {
        let mut v = self.state.lock().unwrap().clone();
        v.sort_unstable();
        v
    }

    /// Waits until at least `target` events were recorded. Returns the count
    /// reached, which is below `target` only if `timeout` expired.
    pub fn wait_for(&self, target: usize, timeout: Duration) -> usize {
        let deadline = Instant::now() + timeout;
        let mut state = self.state.lock().unwrap();
        while state.len() < target {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            state = self.changed.wait_timeout(state, deadline - now).unwrap().0;
        }
        state.len()
    }
}

/// A count-down latch: `count_down` is called by jobs, `wait` by the test.
pub struct CountLatch {
    remaining: Mutex<usize>,
    zero: Condvar,
}

impl CountLatch {
    pub fn new(count: usize) -> Arc<Self> {
        Arc::new(Self {
            remaining: Mutex::new(count),
            zero: Condvar::new(),
        })
    }

    pub fn count_down(&self) {
        let mut remaining = self.remaining.lock().unwrap();
        assert!(*remaining > 0, "CountLatch counted down below zero");
        *remaining -= 1;
        if *remaining == 0 {
            self.zero.notify_all();
        }
    }

    /// Waits for the count to reach zero. Returns the count still remaining
    /// (0 on success, > 0 if `timeout` expired).
    pub fn wait(&self, timeout: Duration) -> usize {
        let deadline = Instant::now() + timeout;
        let mut remaining = self.remaining.lock().unwrap();
        while *remaining > 0 {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            remaining = self.zero.wait_timeout(remaining, deadline - now).unwrap().0;
        }
        *remaining
    }
}

/// Polls `cond` (yielding between polls) until it holds or `timeout` expires.
/// Returns whether it held.
pub fn wait_until(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    let mut polls = 0u32;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        polls += 1;
        if polls < 1000 {
            thread::yield_now();
        } else {
            // Long waits (e.g. for handler `Arc`s to be dropped): back off.
            thread::sleep(Duration::from_millis(1));
        }
    }
}

/// A seeded RNG so that every run of a test sees the same data.
pub fn rng(seed: u64) -> fastrand::Rng {
    fastrand::Rng::with_seed(seed)
}

/// `n` pseudo-random `u64`s from `seed`.
pub fn random_u64s(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = rng(seed);
    (0..n).map(|_| rng.u64(..)).collect()
}

/// Occupies every worker of `pool` at the same time: `num_threads` tasks are
/// spawned in a scope and each waits on a barrier of `num_threads` before
/// doing a small `join`. This only completes if `num_threads` distinct,
/// live, responsive workers each pick up exactly one task, so a pool with a
/// dead or missing worker deadlocks here (run it under [`watchdog`]).
///
/// Returns the sorted worker indices that ran the tasks; a healthy pool
/// returns `0..num_threads`.
pub fn run_on_all_workers(pool: &ThreadPool, num_threads: usize) -> Vec<usize> {
    let barrier = Barrier::new(num_threads);
    let seen = Mutex::new(Vec::with_capacity(num_threads));
    pool.install(|| {
        stealpool::scope(|s| {
            for _ in 0..num_threads {
                s.spawn(|_| {
                    barrier.wait();
                    let index = stealpool::current_thread_index()
                        .expect("scope task is not running on a worker thread");
                    let (a, b) = stealpool::join(|| index * 2, || index + 1);
                    assert_eq!((a, b), (index * 2, index + 1));
                    seen.lock().unwrap().push(index);
                });
            }
        });
    });
    let mut seen = seen.into_inner().unwrap();
    seen.sort_unstable();
    seen
}

/// Marker that a panic is deliberate. Panics whose message starts with it are
/// not printed by the hook installed by [`quiet_expected_panics`].
pub const EXPECTED: &str = "EXPECTED-PANIC";

/// Payload type for deliberate `std::panic::panic_any` panics with a
/// non-string payload; also silenced by the hook.
#[derive(Debug, PartialEq, Eq)]
pub struct ExpectedPayload(pub u32);

/// A panic payload whose destructor panics (with an [`EXPECTED`] message); the quiet
/// hook silences both the panic that carries it and the one its drop raises.
pub struct PanickyDrop(pub &'static str);

impl Drop for PanickyDrop {
    fn drop(&mut self) {
        panic!("{EXPECTED} PanickyDrop::drop({})", self.0);
    }
}

/// A pool of `n` workers whose panic handler counts the panics it is given.
pub fn pool_with_counting_handler(n: usize) -> (ThreadPool, Arc<AtomicUsize>) {
    let handled = Arc::new(AtomicUsize::new(0));
    let h = Arc::clone(&handled);
    let pool = stealpool::ThreadPoolBuilder::new()
        .num_threads(n)
        .panic_handler(move |_| {
            h.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        })
        .build()
        .unwrap();
    (pool, handled)
}

/// A pool of `n` workers.
pub fn pool(n: usize) -> ThreadPool {
    stealpool::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .unwrap()
}

/// Runs `f`, which must panic, and returns its payload.
pub fn expect_panic<R>(f: impl FnOnce() -> R) -> Box<dyn Any + Send> {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(_) => panic!("expected a panic"),
        Err(payload) => payload,
    }
}

/// Busy-waits for `nanos` nanoseconds (a delay that keeps the thread running).
pub fn spin_for(nanos: u64) {
    let start = Instant::now();
    while (start.elapsed().as_nanos() as u64) < nanos {
        std::hint::spin_loop();
    }
}

fn hook_counts() -> &'static Mutex<HashMap<String, usize>> {
    static COUNTS: OnceLock<Mutex<HashMap<String, usize>>> = OnceLock::new();
    COUNTS.get_or_init(Default::default)
}

/// Text of a panic payload if it is a string.
pub fn payload_str(payload: &(dyn Any + Send)) -> Option<&str> {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        Some(s)
    } else {
        payload.downcast_ref::<String>().map(String::as_str)
    }
}

/// Installs (once per test binary) a panic hook that stays silent for
/// deliberate panics (message starting with [`EXPECTED`], or an
/// [`ExpectedPayload`] payload) and counts how often the hook saw each such
/// message; every other panic (e.g. a failing assertion) goes to the default
/// hook and is printed as usual.
///
/// The hook is process-global, so it affects every test of the binary that
/// calls this, including tests running in parallel; that is intended.
pub fn quiet_expected_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let default_hook = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            if let Some(msg) = payload_str(payload).filter(|m| m.starts_with(EXPECTED)) {
                *hook_counts()
                    .lock()
                    .unwrap()
                    .entry(msg.to_owned())
                    .or_insert(0) += 1;
                return;
            }
            if payload.is::<PanickyDrop>() {
                return;
            }
            if let Some(p) = payload.downcast_ref::<ExpectedPayload>() {
                *hook_counts()
                    .lock()
                    .unwrap()
                    .entry(format!("{p:?}"))
                    .or_insert(0) += 1;
                return;
            }
            default_hook(info);
        }));
    });
}

/// How many times the quiet hook saw a deliberate panic with exactly this
/// message (for an [`ExpectedPayload`], its `Debug` text).
pub fn expected_panic_count(message: &str) -> usize {
    hook_counts()
        .lock()
        .unwrap()
        .get(message)
        .copied()
        .unwrap_or(0)
}

/// The number of threads a pool built with `num_threads(0)` should get:
/// `STEALPOOL_NUM_THREADS` if set to a positive number, else (empty or `0`) the
/// CPU count; when it is unset, `RAYON_NUM_THREADS` if positive, else the CPU
/// count. Returns `None` if the variable is set but is not a number (building
/// must then fail).
pub fn expected_default_threads() -> Option<usize> {
    match std::env::var("STEALPOOL_NUM_THREADS") {
        Err(_) => Some(
            std::env::var("RAYON_NUM_THREADS")
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|&n| n > 0)
                .unwrap_or_else(num_cpus::get),
        ),
        Ok(s) if s.trim().is_empty() => Some(num_cpus::get()),
        Ok(s) => match s.trim().parse::<usize>() {
            Ok(0) => Some(num_cpus::get()),
            Ok(n) => Some(n),
            Err(_) => None,
        },
    }
}

/// fib with one `join` per call and no cutoff: the finest-grained fork-join load.
pub fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = stealpool::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// Runs the ignored test `name` of this test binary as a child process, with the
/// environment variable `STEALPOOL_TIMELINE` (the tests that need a fresh process: exit
/// handlers, `fork`, start-up messages) set to `timeline`, and its output captured
/// (`--nocapture`, so the child's stderr is the process's). Panics if it cannot start or
/// does not succeed, with its stderr.
pub fn run_child_test(name: &str, timeline: &std::path::Path) -> std::process::Output {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", name, "--quiet", "--nocapture"])
        .env("STEALPOOL_TIMELINE", timeline)
        .output()
        .expect("start the child test");
    assert!(
        out.status.success(),
        "child test {name} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Why this test binary cannot start itself as a child process, if it cannot, found by
/// trying once per process (`--list`, which runs no test). Tests that run a scenario in a
/// child (an abort or an exit that would end the test binary, or process-wide state such
/// as the global pool or the exit handlers) need it. Only the signs of a user-mode
/// emulator count: the kernel refusing the foreign binary (`ENOEXEC`, "Exec format
/// error"), or, under qemu-user, whose `execve` fails inside the child, the child exiting
/// with status 127 without having listed anything. Any other failure (too many open
/// files, the binary deleted by a rebuild) fails the test instead of skipping it.
pub fn cannot_start_child() -> Option<&'static str> {
    static ANSWER: OnceLock<Option<String>> = OnceLock::new();
    ANSWER
        .get_or_init(|| {
            let exe = std::env::current_exe().expect("current_exe");
            match std::process::Command::new(&exe)
                .arg("--list")
                .stdin(std::process::Stdio::null())
                .output()
            {
                Ok(out) if out.status.success() => None,
                Ok(out) if out.status.code() == Some(127) && out.stdout.is_empty() => {
                    Some(format!(
                        "the test binary, started again as a child, did not run ({}): a \
                         user-mode emulator that does not run the foreign binary on execve",
                        out.status
                    ))
                }
                Err(e) if e.raw_os_error() == Some(ENOEXEC) => Some(format!(
                    "the test binary cannot start itself as a child process ({e}): a \
                     user-mode emulator that does not run the foreign binary on execve"
                )),
                Ok(out) => panic!(
                    "the test binary, started again as a child, failed ({}): {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                ),
                Err(e) => panic!("the test binary cannot start itself as a child process: {e}"),
            }
        })
        .as_deref()
}

/// `ENOEXEC` ("Exec format error"), the same number on Linux, the BSDs and macOS.
const ENOEXEC: i32 = 8;

/// Records that the running test is skipped for `reason`: a line `SKIPPED <test>:
/// <reason>` on stderr and, when `STEALPOOL_SKIP_LOG` names a file, appended there, where
/// `scripts/cross-check` counts the skips of each target. (libtest has no skipped state:
/// the test itself shows as passed, so the log is what tells.)
pub fn skip(reason: &str) {
    use std::io::Write;
    let test = thread::current().name().unwrap_or("?").to_owned();
    let line = format!("SKIPPED {test}: {reason}\n");
    eprint!("{line}");
    if let Some(path) = std::env::var_os("STEALPOOL_SKIP_LOG") {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("STEALPOOL_SKIP_LOG: cannot open the skip log");
        file.write_all(line.as_bytes())
            .expect("STEALPOOL_SKIP_LOG: cannot write the skip log");
    }
}

/// For a test that needs [`cannot_start_child`] to be `None`: records the skip and
/// returns true when it is not (the caller then returns).
pub fn skip_without_child_processes() -> bool {
    match cannot_start_child() {
        Some(reason) => {
            skip(reason);
            true
        }
        None => false,
    }
}
