//! Waiting with a deadline: the watchdog every test that could hang runs its body under,
//! polling a condition, and two things a test waits on (values recorded by handlers and
//! jobs, a countdown that jobs bring to zero). Each wait gives up after its timeout and
//! says how far it got, so a deadlock or a lost wake-up fails the test with a message
//! instead of hanging `cargo test`.

use std::panic::{self, AssertUnwindSafe};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

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

/// The values that handlers or jobs recorded (a worker index per `start_handler` call,
/// say), in any order; the test counts them, reads them sorted, or waits, with a timeout,
/// until enough were recorded.
#[derive(Default)]
pub struct Recorded {
    values: Mutex<Vec<usize>>,
    changed: Condvar,
}

impl Recorded {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Records one event carrying `value` (e.g. a worker index).
    pub fn record(&self, value: usize) {
        self.values.lock().unwrap().push(value);
        self.changed.notify_all();
    }

    /// How many events were recorded.
    pub fn count(&self) -> usize {
        self.values.lock().unwrap().len()
    }

    /// Values recorded so far, sorted.
    pub fn sorted(&self) -> Vec<usize> {
        let mut v = self.values.lock().unwrap().clone();
        v.sort_unstable();
        v
    }

    /// Waits until at least `target` events were recorded. Returns the count
    /// reached, which is below `target` only if `timeout` expired.
    pub fn wait_for(&self, target: usize, timeout: Duration) -> usize {
        let deadline = Instant::now() + timeout;
        let mut values = self.values.lock().unwrap();
        while values.len() < target {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            values = self.changed.wait_timeout(values, deadline - now).unwrap().0;
        }
        values.len()
    }
}

/// A countdown from a given number: jobs call [`count_down`](Self::count_down), the test
/// [`wait`](Self::wait)s for zero.
pub struct Countdown {
    remaining: Mutex<usize>,
    zero: Condvar,
}

impl Countdown {
    pub fn new(count: usize) -> Arc<Self> {
        Arc::new(Self {
            remaining: Mutex::new(count),
            zero: Condvar::new(),
        })
    }

    /// Counts one down; panics if the count is already zero.
    pub fn count_down(&self) {
        let mut remaining = self.remaining.lock().unwrap();
        assert!(*remaining > 0, "Countdown counted down below zero");
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
