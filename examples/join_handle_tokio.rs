//! A `JoinHandle` awaited from tokio: CPU work goes to a stealpool pool with
//! `spawn_with_handle`, and async code `.await`s its value (or its panic) without
//! blocking the runtime's thread. (Synchronous code waits with `handle.join()` instead.)
//!
//! The runtime here has a single thread, so the first part can only finish if awaiting a
//! handle leaves that thread free: the pool's job waits for a message that another tokio
//! task sends.
//!
//! ```text
//! cargo run --release --example join_handle_tokio
//! ```

use std::sync::mpsc;
use std::time::Duration;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let pool = stealpool::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("cannot build the pool");

    // 1. The runtime's only thread stays free while it awaits: the job below needs a
    // message from a tokio task, which runs only when `handle.await` yields.
    let (tx, rx) = mpsc::channel::<u64>();
    let handle = pool.spawn_with_handle(move || {
        let n = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the tokio task never ran: awaiting blocked the runtime thread");
        n * 2
    });
    let sender = tokio::spawn(async move { tx.send(21).unwrap() });
    let value = handle.await.expect("the job panicked");
    sender.await.unwrap();
    println!("awaited a pool job that needed a tokio task: {value}");
    assert_eq!(value, 42);

    // 2. Many jobs at once: each handle is a future; await them in turn.
    let handles: Vec<stealpool::JoinHandle<u64>> = (0..8u64)
        .map(|i| pool.spawn_with_handle(move || (0..=i * 1000).sum::<u64>()))
        .collect();
    let mut sums = Vec::new();
    for handle in handles {
        sums.push(handle.await.unwrap());
    }
    println!("sums from 8 pool jobs: {sums:?}");
    let expected: Vec<u64> = (0..8u64).map(|i| (0..=i * 1000).sum()).collect();
    assert_eq!(sums, expected);

    // 3. A panic comes back through the handle as `Err(payload)`, not to the pool's panic
    // handler. (The panic hook still reports it when it happens; a one-line hook here.)
    std::panic::set_hook(Box::new(|info| eprintln!("(panic hook) {info}")));
    let failed = pool.spawn_with_handle(|| -> u64 { panic!("a job failed on purpose") });
    let payload = failed.await.expect_err("the job should have panicked");
    let message = payload.downcast_ref::<&str>().copied();
    println!("the panicking job's handle gave Err({message:?})");
    assert_eq!(message, Some("a job failed on purpose"));
}
