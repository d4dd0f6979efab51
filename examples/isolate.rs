//! `isolate` and `isolate_waits`: a section that holds something across parallel work (a
//! `Mutex` guard, a `RefCell` borrow, a `OnceLock` initialisation) must not be entered
//! again on its own thread. Without isolation, a worker that waits inside the section
//! (for a `join` half another worker took) runs other queued jobs meanwhile, and one of
//! them may enter the same section: with a `Mutex` that is a deadlock (rayon issue 592),
//! with a `RefCell` a panic. Here a thread-local flag marks the section, so a second
//! entry is counted instead, and the wait is forced to happen every time.
//!
//! ```text
//! cargo run --release --example isolate
//! STEALPOOL_ISOLATE_WAITS=1 ./your-program   # isolates every job of an unchanged program
//! ```

use std::cell::Cell;
use std::sync::mpsc;
use stealpool::{ThreadPool, ThreadPoolBuilder};

thread_local! {
    /// Whether this thread is inside the section.
    static IN_SECTION: Cell<bool> = const { Cell::new(false) };
}

/// How the section is run.
#[derive(Clone, Copy, PartialEq)]
enum How {
    Plain,
    Isolated,
}

/// Whether `worker` of `pool` is parked (it waits, and found nothing it may run).
fn parked(pool: &ThreadPool, worker: usize) -> bool {
    let metrics = &pool.metrics().workers[worker];
    metrics.parks > metrics.unparks
}

/// One round on a pool of two workers; returns whether the section was entered again.
///
/// The section runs `join(a, b)` on a worker. `a` waits until the other worker has taken
/// `b`, has the main thread queue a job that enters the section too, and returns; the
/// section's worker then waits for `b`, which returns once that worker has parked.
fn entered_again(pool: &ThreadPool, how: How) -> bool {
    let (want_job, job_wanted) = mpsc::channel();
    let (job_queued, queued) = mpsc::channel();
    let (job_ran, ran) = mpsc::channel();
    std::thread::scope(|threads| {
        threads.spawn(|| {
            pool.install(|| {
                let section_worker = stealpool::current_thread_index().expect("a worker");
                let section = || {
                    IN_SECTION.with(|inside| inside.set(true));
                    let (b_started, started) = mpsc::channel();
                    stealpool::join(
                        move || {
                            started.recv().expect("b starts");
                            want_job.send(()).expect("main queues the job");
                            queued.recv().expect("main queued the job");
                        },
                        move || {
                            b_started.send(()).expect("a waits");
                            while !parked(pool, section_worker) {
                                std::thread::yield_now();
                            }
                        },
                    );
                    IN_SECTION.with(|inside| inside.set(false));
                };
                match how {
                    How::Plain => section(),
                    How::Isolated => stealpool::isolate(section),
                }
            })
        });
        // Another job, queued from outside the pool while the section is held.
        job_wanted.recv().expect("a asks for the job");
        pool.spawn(move || {
            let _ = job_ran.send(IN_SECTION.with(Cell::get));
        });
        job_queued.send(()).expect("a waits for the job");
        // The job runs on the section's worker while it waits, or after the section.
        ran.recv().expect("the job runs")
    })
}

/// A pool of two workers, isolating every job or not (the builder's choice wins over
/// `STEALPOOL_ISOLATE_WAITS`).
fn pool(isolate_waits: bool) -> ThreadPool {
    ThreadPoolBuilder::new()
        .num_threads(2)
        .isolate_waits(isolate_waits)
        .build()
        .expect("cannot build the pool")
}

/// Rounds of `how` on `pool` in which the section was entered again, out of 20.
fn rounds_entered_again(pool: &ThreadPool, how: How) -> usize {
    (0..20).filter(|_| entered_again(pool, how)).count()
}

fn main() {
    let plain_pool = pool(false);
    let plain = rounds_entered_again(&plain_pool, How::Plain);
    let isolated = rounds_entered_again(&plain_pool, How::Isolated);
    println!("section entered again while waiting: {plain} of 20 rounds without isolate, {isolated} inside isolate");
    assert_eq!(
        plain, 20,
        "without isolate the waiting worker runs the queued job"
    );
    assert_eq!(
        isolated, 0,
        "a worker waiting inside isolate ran an outside job"
    );

    // The same code without `isolate`, on a pool that isolates every job (the builder's
    // switch; STEALPOOL_ISOLATE_WAITS=1 turns it on for every pool whose builder does not
    // choose, the global pool included).
    let strict = rounds_entered_again(&pool(true), How::Plain);
    println!("with isolate_waits(true) and no isolate in the code: {strict} of 20");
    assert_eq!(
        strict, 0,
        "isolate_waits let a waiting worker run an outside job"
    );
}
