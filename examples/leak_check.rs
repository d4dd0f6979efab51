//! Memory checks (`scripts/leak-check`):
//!
//! * `leak_check every-api`: uses every API once or a few times (join, scopes of every
//!   kind, spawns of every kind, join handles, broadcasts, install across pools, yields,
//!   wait_idle, metrics, shutdown, a `use_current_thread` pool on a thread that exits, the
//!   global pool, panics routed everywhere), small enough to run under
//!   `valgrind --leak-check=full`, which must report no definite leak;
//! * `leak_check rss [N]`: N spawns (default 10,000,000) in batches of 100,000 (half from
//!   outside, half as scope jobs from a worker), waiting for each batch; prints the floor
//!   of the resident set size and of the heap in use (glibc's `mallinfo2`) in each tenth
//!   of the run, and fails if the second half's lowest heap floor exceeds the first
//!   half's (after a tenth of warm-up) by more than 10% and a 64 KiB job-arena chunk per
//!   worker, or its RSS floor by more than 10% and 4 MiB. A deliberate leak of 32 bytes every 64 spawns fails the heap check
//!   (+210%) where the RSS one alone would pass (+56%, under 4 MiB).

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use stealpool::{ThreadPool, ThreadPoolBuilder};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("every-api") => every_api(),
        Some("rss") => rss(args.get(2).map_or(10_000_000, |n| {
            n.parse().expect("rss: N must be a number of spawns")
        })),
        _ => {
            eprintln!("usage: leak_check every-api | leak_check rss [N]");
            std::process::exit(2);
        }
    }
}

fn every_api() {
    // Quiet the deliberate panics (each is routed somewhere and checked).
    std::panic::set_hook(Box::new(|_| {}));
    let handled = Arc::new(AtomicUsize::new(0));
    let pool = {
        let handled = Arc::clone(&handled);
        ThreadPoolBuilder::new()
            .num_threads(3)
            .thread_name(|i| format!("leak-{i}"))
            .panic_handler(move |_| {
                handled.fetch_add(1, Ordering::SeqCst);
            })
            .start_handler(|_| {})
            .exit_handler(|_| {})
            .build()
            .unwrap()
    };
    let other = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let sum = AtomicUsize::new(0);

    pool.install(|| {
        let (a, b) = stealpool::join(|| fib(16), || fib(15));
        assert_eq!(a + b, fib(17));
        let (x, _) = stealpool::join_context(|ctx| ctx.migrated(), |_| ());
        assert!(!x);
        stealpool::scope(|s| {
            for i in 0..100 {
                let sum = &sum;
                s.spawn(move |s| {
                    sum.fetch_add(i, Ordering::Relaxed);
                    s.spawn(move |_| {
                        sum.fetch_add(1, Ordering::Relaxed);
                    });
                });
            }
            // Big captures are boxed rather than put in the arena.
            let big = [7u8; 1024];
            let sum = &sum;
            s.spawn(move |_| {
                sum.fetch_add(big[0] as usize, Ordering::Relaxed);
            });
            s.spawn_broadcast(|_, _| ());
        });
        stealpool::scope_fifo(|s| {
            for _ in 0..10 {
                s.spawn_fifo(|_| ());
            }
            s.spawn_broadcast(|_, _| ());
        });
        stealpool::in_place_scope(|s| s.spawn(|_| ()));
        stealpool::in_place_scope_fifo(|s| s.spawn_fifo(|_| ()));
        other.install(|| stealpool::join(|| fib(10), || fib(10)));
        other.in_place_scope(|s| s.spawn(|_| ()));
        let _ = stealpool::yield_now();
        let _ = stealpool::yield_local();
        stealpool::spawn(|| ());
        stealpool::spawn_fifo(|| ());
        let handle = stealpool::spawn_with_handle(|| 42);
        assert_eq!(handle.join().unwrap(), 42);
    });
    assert_eq!(sum.load(Ordering::Relaxed), 4950 + 100 + 7);

    // Spawns, handles, broadcasts from outside.
    for _ in 0..50 {
        pool.spawn(|| ());
        pool.spawn_fifo(|| ());
    }
    pool.spawn_broadcast(|_| ());
    assert_eq!(pool.broadcast(|ctx| ctx.index()), vec![0, 1, 2]);
    let handles: Vec<_> = (0..20).map(|i| pool.spawn_with_handle(move || i)).collect();
    let dropped = pool.spawn_with_handle(|| vec![1u8; 100]);
    drop(dropped);
    for (i, h) in handles.into_iter().enumerate() {
        assert_eq!(h.join().unwrap(), i);
    }

    // Panics: routed to the caller, the handle, or the panic handler.
    let caught = |f: &dyn Fn()| std::panic::catch_unwind(AssertUnwindSafe(f)).is_err();
    assert!(caught(&|| {
        pool.join(|| panic!("a"), || ());
    }));
    assert!(caught(&|| pool.scope(|s| s.spawn(|_| panic!("s")))));
    assert!(caught(&|| pool.install(|| panic!("i"))));
    assert!(pool.spawn_with_handle(|| panic!("h")).join().is_err());
    pool.spawn(|| panic!("spawn"));
    pool.wait_idle().unwrap();
    assert!(handled.load(Ordering::SeqCst) >= 1);
    let metrics = pool.metrics();
    assert!(metrics.total().jobs_executed > 0);

    // A pool whose building thread is its worker 0, on a thread that then exits.
    std::thread::spawn(|| {
        let p = ThreadPoolBuilder::new()
            .num_threads(2)
            .use_current_thread()
            .build()
            .unwrap();
        p.scope(|s| {
            for _ in 0..100 {
                s.spawn(|_| ());
            }
        });
        p.shutdown().unwrap();
    })
    .join()
    .unwrap();

    // The global pool (it lives until the process exits).
    assert_eq!(stealpool::join(|| 1, || 2), (1, 2));

    pool.shutdown().unwrap();
    drop(other);
    println!("every-api: done");
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = stealpool::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

/// Resident set size in KiB (Linux: `/proc/self/statm`, pages), after giving the
/// allocator's free memory back to the system, so that the figure follows live memory
/// rather than glibc's caching.
fn rss_kib() -> u64 {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only releases free heap memory; no pointer of ours changes.
    unsafe {
        libc::malloc_trim(0);
    }
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4
}

/// Heap bytes in use in KiB (glibc's `mallinfo2`: `uordblks`, summed over all arenas, plus
/// `hblkhd`, the large blocks it maps on their own): live allocations only, whatever the
/// allocator keeps cached or fragmented. 0 where glibc is not the allocator.
fn heap_in_use_kib() -> u64 {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `mallinfo2` only reads the allocator's statistics.
        let info = unsafe { libc::mallinfo2() };
        (info.uordblks + info.hblkhd) as u64 / 1024
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    0
}

fn rss(n: usize) {
    const BATCH: usize = 100_000;
    let pool: ThreadPool = ThreadPoolBuilder::new().build().unwrap();
    let done = Arc::new(AtomicUsize::new(0));
    let batches = (n / BATCH).max(10);
    let per_tenth = batches / 10;
    // The floor (smallest RSS after a batch) of each tenth: freed deque buffers and
    // injector blocks are returned through crossbeam-epoch a little later, so single
    // samples jump by a few MiB; a leak would raise the floor.
    let mut floor = u64::MAX;
    let mut heap_floor = u64::MAX;
    let mut floors = Vec::new();
    let mut heap_floors = Vec::new();
    for batch in 0..batches {
        // Half from outside, half from inside a worker (local deques, the arena).
        if batch % 2 == 0 {
            for _ in 0..BATCH {
                let done = Arc::clone(&done);
                pool.spawn(move || {
                    done.fetch_add(1, Ordering::Relaxed);
                });
            }
        } else {
            let done = Arc::clone(&done);
            pool.install(move || {
                stealpool::scope(|s| {
                    for _ in 0..BATCH {
                        let done = &done;
                        s.spawn(move |_| {
                            done.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                })
            });
        }
        pool.wait_idle().unwrap();
        floor = floor.min(rss_kib());
        heap_floor = heap_floor.min(heap_in_use_kib());
        if (batch + 1) % per_tenth == 0 {
            println!(
                "rss: {:>9} spawns, floor of this tenth {:>7} KiB, heap in use {:>7} KiB",
                (batch + 1) * BATCH,
                floor,
                heap_floor
            );
            heap_floors.push(heap_floor);
            heap_floor = u64::MAX;
            floors.push(floor);
            floor = u64::MAX;
        }
    }
    assert_eq!(done.load(Ordering::Relaxed), batches * BATCH);
    // Warm-up: the first tenth, in which the deques, the injector and the allocator's
    // arenas reach the sizes this load needs. Then two figures, each the lowest floor of
    // tenths 2-5 against that of tenths 6-10:
    //
    // * the heap in use (live allocations) must stay within 10%, or one 64 KiB job-arena
    //   chunk per worker: a worker keeps its current chunk between batches and a chunk
    //   is freed when its last job ends, so a floor can catch a chunk more or less per
    //   worker (a CI run saw floors of 126 and 196 KiB between tenths). A leak of one
    //   byte per spawn would add 5 MB between the two, against ~180 KiB in use;
    // * the RSS, whose floors wander between 2.5 and 7.3 MiB in both directions while
    //   the heap in use stays within 1% (pages the allocator keeps after frees, deque
    //   buffers retired through crossbeam-epoch), must stay within 10% or 4 MiB.
    let compare = |floors: &[u64]| {
        let warm = floors[1..floors.len() / 2]
            .iter()
            .copied()
            .min()
            .unwrap_or(0);
        let late = floors[floors.len() / 2..]
            .iter()
            .copied()
            .min()
            .unwrap_or(0);
        (warm, late, (late as f64 / warm.max(1) as f64 - 1.0) * 100.0)
    };
    let (warm, late, grew) = compare(&floors);
    println!("rss: lowest floor {warm} KiB in tenths 2-5, {late} KiB in tenths 6-10 ({grew:+.1}%)");
    let (heap_warm, heap_late, heap_grew) = compare(&heap_floors);
    if heap_warm > 0 {
        println!(
            "rss: heap in use {heap_warm} KiB in tenths 2-5, {heap_late} KiB in tenths 6-10 ({heap_grew:+.1}%)"
        );
        let arena_chunks = 64 * pool.current_num_threads() as u64;
        if heap_late > heap_warm + (heap_warm / 10).max(arena_chunks) {
            eprintln!(
                "rss: the heap in use grew more than 10% (and {arena_chunks} KiB, a job-arena \
                 chunk per worker) after warm-up"
            );
            std::process::exit(1);
        }
    } else {
        println!("rss: heap in use not available (not glibc); RSS only");
    }
    if late > warm + (warm / 10).max(4096) {
        eprintln!("rss: grew more than 10% (and 4 MiB) after warm-up");
        std::process::exit(1);
    }
    println!("rss: flat");
}
