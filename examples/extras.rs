//! What stealpool adds to rayon-core's API, in one small program:
//!
//! * `spawn_with_handle` / `JoinHandle`: values and panics come back through the handle;
//! * `wait_idle`: wait for fire-and-forget work, including the jobs it spawned;
//! * `metrics`: where the pool's time went, per worker;
//! * `shutdown`: stop the pool and wait until every worker thread has exited.
//!
//! ```text
//! cargo run --release --example extras
//! cargo run --release --example extras -- --threads 4 --limit 2000000
//! ```

use clap::Parser;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Counts primes with stealpool's extras.
#[derive(Parser, Debug)]
struct Args {
    /// Worker threads (default: one per logical CPU).
    #[arg(long)]
    threads: Option<usize>,
    /// Count primes below this number.
    #[arg(long, default_value_t = 1_000_000)]
    limit: u64,
    /// Numbers per task.
    #[arg(long, default_value_t = 10_000)]
    chunk: u64,
}

fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    let mut d = 2;
    while d * d <= n {
        if n % d == 0 {
            return false;
        }
        d += 1;
    }
    true
}

fn main() {
    let args = Args::parse();
    if args.chunk == 0 {
        eprintln!("error: --chunk must be at least 1");
        std::process::exit(2);
    }
    let exited = Arc::new(AtomicUsize::new(0));
    let e = Arc::clone(&exited);
    let mut builder = stealpool::ThreadPoolBuilder::new()
        .thread_name(|i| format!("extras-{i}"))
        .exit_handler(move |_| {
            e.fetch_add(1, Ordering::SeqCst);
        });
    if let Some(n) = args.threads {
        builder = builder.num_threads(n);
    }
    let pool = match builder.build() {
        Ok(pool) => pool,
        Err(err) => {
            eprintln!("error: cannot build the pool: {err}");
            std::process::exit(2);
        }
    };
    let threads = pool.current_num_threads();

    // 1. Join handles: one task per chunk, each returning its count.
    let start = Instant::now();
    let handles: Vec<_> = (0..args.limit)
        .step_by(args.chunk as usize)
        .map(|lo| {
            let hi = (lo + args.chunk).min(args.limit);
            pool.spawn_with_handle(move || (lo..hi).filter(|&n| is_prime(n)).count() as u64)
        })
        .collect();
    let tasks = handles.len();
    let primes: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    println!(
        "join handles: {primes} primes below {} ({tasks} tasks) in {:.3} s",
        args.limit,
        start.elapsed().as_secs_f64()
    );

    // A panic travels through the handle instead of the panic handler. (The panic hook
    // still reports it when it happens, as for std threads; a one-line hook here.)
    std::panic::set_hook(Box::new(|info| eprintln!("(panic hook) {info}")));
    let failed = pool.spawn_with_handle(|| -> u64 { panic!("a task failed on purpose") });
    match failed.join() {
        Ok(_) => println!("unexpected: the failing task returned"),
        Err(payload) => println!(
            "a panicking task's handle returned Err({:?})",
            payload
                .downcast_ref::<&str>()
                .copied()
                .unwrap_or("<non-string>")
        ),
    }

    // 2. wait_idle: fire-and-forget tasks that spawn more tasks; wait for all of them.
    let start = Instant::now();
    let total = Arc::new(AtomicU64::new(0));
    for lo in (0..args.limit).step_by(args.chunk as usize) {
        let total = Arc::clone(&total);
        pool.spawn(move || {
            let hi = (lo + args.chunk).min(args.limit);
            let mid = lo + (hi - lo) / 2;
            // Half of the chunk in a nested spawn, the other half here.
            let t = Arc::clone(&total);
            stealpool::spawn(move || {
                let n = (mid..hi).filter(|&n| is_prime(n)).count() as u64;
                t.fetch_add(n, Ordering::Relaxed);
            });
            let n = (lo..mid).filter(|&n| is_prime(n)).count() as u64;
            total.fetch_add(n, Ordering::Relaxed);
        });
    }
    pool.wait_idle()
        .expect("main is not a worker of the pool, so wait_idle cannot fail here");
    println!(
        "wait_idle: {} primes from {} spawned tasks in {:.3} s",
        total.load(Ordering::Relaxed),
        2 * tasks,
        start.elapsed().as_secs_f64()
    );
    assert_eq!(total.load(Ordering::Relaxed), primes);

    // 3. Metrics: one row per worker.
    println!("\npool metrics:\n{}\n", pool.metrics());

    // 4. Synchronous shutdown: every worker has run its exit handler when it returns.
    pool.shutdown().expect("main is not a worker of the pool");
    println!(
        "shutdown: {} of {threads} workers ran their exit handler",
        exited.load(Ordering::SeqCst)
    );
    assert_eq!(exited.load(Ordering::SeqCst), threads);
}
