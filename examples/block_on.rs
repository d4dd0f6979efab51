//! `stealpool::block_on`: run a future to completion from synchronous code. On a worker
//! it keeps running the pool's jobs while the future is pending, so even a one-thread
//! pool can block on a handle of its own job; elsewhere it parks the calling thread.
//!
//! ```text
//! cargo run --release --example block_on
//! ```

fn main() {
    let pool = stealpool::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("cannot build the pool");

    // 1. On the pool's only worker: the jobs are queued behind the job that waits, and
    // no other worker exists to run them. `block_on` runs them itself while their
    // handles are pending; an executor that parks the thread between polls (as
    // `futures::executor::block_on` does) would wait here for ever.
    let (sum, ran_on) = pool.install(|| {
        let a = stealpool::spawn_with_handle(|| (1..=100u64).sum::<u64>());
        let b = stealpool::spawn_with_handle(stealpool::current_thread_index);
        stealpool::block_on(async {
            let sum = a.await.unwrap();
            let ran_on = b.await.unwrap();
            (sum, ran_on)
        })
    });
    println!("one-thread pool, block_on on its worker: sum {sum}, job ran on worker {ran_on:?}");
    assert_eq!(sum, 5050);
    assert_eq!(ran_on, Some(0));

    // 2. Outside any pool (this is `main`'s thread): the thread parks until the job's
    // completion wakes it.
    let handle = pool.spawn_with_handle(|| "done on the pool");
    let value = stealpool::block_on(handle).unwrap();
    println!("block_on from main: {value:?}");
    assert_eq!(value, "done on the pool");

    // 3. Any future, not only handles: here one that is ready at once.
    assert_eq!(stealpool::block_on(async { 6 * 7 }), 42);
}
