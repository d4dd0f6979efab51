//! Pools for the tests: building one (plain, or with a panic handler that counts), the
//! thread count a default-sized pool should get, and checking that every worker of a pool
//! is alive and responsive.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};

use stealpool::{ThreadPool, ThreadPoolBuilder};

/// A pool of `n` workers.
pub fn pool(n: usize) -> ThreadPool {
    ThreadPoolBuilder::new().num_threads(n).build().unwrap()
}

/// A pool of `n` workers whose panic handler counts the panics it is given.
pub fn pool_with_counting_handler(n: usize) -> (ThreadPool, Arc<AtomicUsize>) {
    let handled = Arc::new(AtomicUsize::new(0));
    let h = Arc::clone(&handled);
    let pool = ThreadPoolBuilder::new()
        .num_threads(n)
        .panic_handler(move |_| {
            h.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    (pool, handled)
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

/// Occupies every worker of `pool` at the same time: `num_threads` tasks are
/// spawned in a scope and each waits on a barrier of `num_threads` before
/// doing a small `join`. This only completes if `num_threads` distinct,
/// live, responsive workers each pick up exactly one task, so a pool with a
/// dead or missing worker deadlocks here (run it under
/// [`watchdog`](super::deadline::watchdog)).
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
