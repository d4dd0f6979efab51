//! Pool metrics: `ThreadPool::metrics()` after some work, printed as its per-worker table
//! (`Display`), and `stealpool::metrics()` for the global pool, from code that holds no
//! pool. Each worker counts where every job it ran came from (own deque, injector,
//! another worker's deque, broadcast queue, a rescued `join` half) and how often it
//! parked.
//!
//! ```text
//! cargo run --release --example metrics
//! ```

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = stealpool::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

fn main() {
    let pool = stealpool::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("cannot build the pool");

    // 1,000 fire-and-forget jobs from outside the pool: each goes through the injector and
    // is run exactly once, taken from the injector, from a worker's own queues (the rest
    // of a batch taken from the injector) or from the other worker.
    for _ in 0..1_000 {
        pool.spawn(|| {});
    }
    pool.wait_idle().expect("main is not a worker of the pool");
    let m = pool.metrics();
    let t = m.total();
    assert_eq!(m.workers.len(), 2);
    assert_eq!(m.injected_jobs, 1_000);
    assert_eq!(t.jobs_executed, 1_000);
    assert_eq!(t.injector_batches + t.local_pops + t.steals, 1_000);

    // Fork-join work: one injected `install`, then `join`s inside. A `join`'s second half
    // that its own worker runs is part of the `join` (counted nowhere); one that the other
    // worker takes is a job of its own, counted as a steal or a rescue.
    assert_eq!(pool.install(|| fib(25)), 75_025);
    let m = pool.metrics();
    println!("after 1,000 spawns and fib(25) in one install:\n{m}\n");
    assert_eq!(m.injected_jobs, 1_001);
    for w in &m.workers {
        // Each job is counted once, by the queue it was taken from.
        assert_eq!(
            w.jobs_executed,
            w.local_pops + w.broadcast_jobs + w.injector_batches + w.steals + w.rescues,
            "worker {}",
            w.index
        );
    }
    assert!(m.total().jobs_executed >= 1_001);

    // The global pool's counters, for code whose work goes there (free functions, or
    // the `rayon` crate on compat/rayon-core).
    let before = stealpool::metrics().total().jobs_executed;
    assert_eq!(fib(20), 6_765); // from `main`: the first `join` moves onto the global pool
    let global = stealpool::metrics();
    let after = global.total().jobs_executed;
    println!(
        "global pool: {} workers, {} jobs for fib(20) from main",
        global.workers.len(),
        after - before
    );
    assert_eq!(global.workers.len(), stealpool::current_num_threads());
    assert!(after > before);
}
