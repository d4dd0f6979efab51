//! `wait_idle` and `shutdown`: wait for fire-and-forget work (and the jobs it spawned
//! in turn) without holding a handle to any of it, then stop the pool and wait until every
//! worker thread has run its exit handler and exited.
//!
//! ```text
//! cargo run --release --example wait_idle_shutdown
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn main() {
    let exited = Arc::new(AtomicUsize::new(0));
    let e = Arc::clone(&exited);
    let pool = stealpool::ThreadPoolBuilder::new()
        .num_threads(3)
        .exit_handler(move |_| {
            e.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .expect("cannot build the pool");

    // 100 spawned jobs, each spawning one more from inside the pool: `wait_idle` returns
    // only once all 200 have run.
    let done = Arc::new(AtomicUsize::new(0));
    for _ in 0..100 {
        let done = Arc::clone(&done);
        pool.spawn(move || {
            let inner = Arc::clone(&done);
            stealpool::spawn(move || {
                inner.fetch_add(1, Ordering::SeqCst);
            });
            done.fetch_add(1, Ordering::SeqCst);
        });
    }
    pool.wait_idle().expect("main is not a worker of the pool");
    println!(
        "wait_idle: {} jobs done (100 spawned, each spawning one)",
        done.load(Ordering::SeqCst)
    );
    assert_eq!(done.load(Ordering::SeqCst), 200);

    // On the pool's own worker, waiting for the pool to go idle would wait for itself:
    // an error instead of a deadlock.
    let own = pool.install(|| pool.wait_idle());
    let error = own.expect_err("wait_idle on the pool's own worker must fail");
    println!("wait_idle on the pool's own worker: {error}");

    // Work on the global pool, which no `ThreadPool` value stands for, is waited for
    // with the free function.
    let global = Arc::new(AtomicUsize::new(0));
    for _ in 0..10 {
        let global = Arc::clone(&global);
        stealpool::spawn(move || {
            global.fetch_add(1, Ordering::SeqCst);
        });
    }
    stealpool::wait_idle().expect("main is not a worker of any pool");
    assert_eq!(global.load(Ordering::SeqCst), 10);

    // Queued work still runs; when `shutdown` returns, every worker has run its exit
    // handler and its thread has been joined (thread-local destructors included).
    let late = Arc::new(AtomicUsize::new(0));
    for _ in 0..50 {
        let late = Arc::clone(&late);
        pool.spawn(move || {
            late.fetch_add(1, Ordering::SeqCst);
        });
    }
    pool.shutdown().expect("main is not a worker of the pool");
    println!(
        "shutdown: {} jobs queued before it ran, {} of 3 workers exited",
        late.load(Ordering::SeqCst),
        exited.load(Ordering::SeqCst)
    );
    assert_eq!(late.load(Ordering::SeqCst), 50);
    assert_eq!(exited.load(Ordering::SeqCst), 3);
}
