//! The `rayon` crate from crates.io, unchanged, running on stealpool: `Cargo.toml` patches
//! rayon-core to `compat/rayon-core`, which re-exports stealpool. Every parallel result is
//! compared with the sequential one; inputs come from a fixed-seed `fastrand` generator.

use rayon::prelude::*;
use std::any::TypeId;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

const SEED: u64 = 0x5EED_CAFE_F00D_0001;

fn random_u64s(n: usize, below: u64) -> Vec<u64> {
    let mut rng = fastrand::Rng::with_seed(SEED);
    (0..n).map(|_| rng.u64(..below)).collect()
}

#[test]
fn par_iter_map_reduce_sum() {
    let v = random_u64s(200_000, 1 << 20);

    let seq_sum: u64 = v.iter().map(|&x| x * 3 + 1).sum();
    let par_sum: u64 = v.par_iter().map(|&x| x * 3 + 1).sum();
    assert_eq!(par_sum, seq_sum);

    let seq_max = v.iter().copied().max().unwrap();
    let par_max = v.par_iter().copied().reduce(|| 0, u64::max);
    assert_eq!(par_max, seq_max);

    let seq_xor = v.iter().fold(0, |a, &x| a ^ x.rotate_left(7));
    let par_xor = v
        .par_iter()
        .fold(|| 0, |a, &x| a ^ x.rotate_left(7))
        .reduce(|| 0, |a, b| a ^ b);
    assert_eq!(par_xor, seq_xor);

    let seq_even = v.iter().filter(|&&x| x % 2 == 0).count();
    assert_eq!(v.par_iter().filter(|&&x| x % 2 == 0).count(), seq_even);

    // Into-parallel ranges, and `min_by_key` (the first minimum, as sequentially).
    let squares: u128 = (0..100_000u128).into_par_iter().map(|i| i * i).sum();
    assert_eq!(squares, (0..100_000u128).map(|i| i * i).sum::<u128>());
    let seq_min = v.iter().enumerate().min_by_key(|&(_, &x)| x).unwrap();
    let par_min = v.par_iter().enumerate().min_by_key(|&(_, &x)| x).unwrap();
    assert_eq!(par_min, seq_min);
}

#[test]
fn collect_into_vec_preserves_order() {
    let v = random_u64s(300_000, u64::MAX);

    let seq: Vec<u64> = v.iter().map(|&x| x.wrapping_mul(31)).collect();
    let par: Vec<u64> = v.par_iter().map(|&x| x.wrapping_mul(31)).collect();
    assert_eq!(par, seq);

    // Unindexed (filter) and indexed-into-existing-buffer paths.
    let seq_f: Vec<u64> = v.iter().copied().filter(|x| x % 3 == 0).collect();
    let par_f: Vec<u64> = v.par_iter().copied().filter(|x| x % 3 == 0).collect();
    assert_eq!(par_f, seq_f);

    let mut buf = Vec::new();
    (0..250_000u32)
        .into_par_iter()
        .map(|i| i ^ 0xABCD)
        .collect_into_vec(&mut buf);
    assert!(buf.iter().enumerate().all(|(i, &x)| x == i as u32 ^ 0xABCD));
}

#[test]
fn par_sort_and_par_sort_unstable_match_sort() {
    // Many duplicates (values below 1000) so stability matters.
    let v = random_u64s(300_000, 1000);

    let mut expected = v.clone();
    expected.sort();
    let mut stable = v.clone();
    stable.par_sort();
    assert_eq!(stable, expected);

    let mut expected_unstable = v.clone();
    expected_unstable.sort_unstable();
    let mut unstable = v.clone();
    unstable.par_sort_unstable();
    assert_eq!(unstable, expected_unstable);

    // Stability: sort (key, original position) by key only; a stable sort keeps positions
    // increasing within a key, so it must equal the sequential stable sort exactly.
    let tagged: Vec<(u64, usize)> = v.iter().copied().zip(0..).collect();
    let mut seq = tagged.clone();
    seq.sort_by_key(|&(k, _)| k);
    let mut par = tagged;
    par.par_sort_by_key(|&(k, _)| k);
    assert_eq!(par, seq);

    // A custom comparator (descending), full range of values.
    let w = random_u64s(500_000, u64::MAX);
    let mut seq = w.clone();
    seq.sort_unstable_by(|a, b| b.cmp(a));
    let mut par = w;
    par.par_sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(par, seq);
}

#[test]
fn par_chunks_and_par_chunks_mut() {
    // 100_003 is not a multiple of 1000: the last chunk is short.
    let v = random_u64s(100_003, 1 << 30);

    let seq: Vec<u64> = v.chunks(1000).map(|c| c.iter().sum()).collect();
    let par: Vec<u64> = v.par_chunks(1000).map(|c| c.iter().sum()).collect();
    assert_eq!(par.len(), 101);
    assert_eq!(par, seq);

    let mut seq_m = v.clone();
    seq_m.chunks_mut(777).enumerate().for_each(|(i, c)| {
        c.iter_mut().for_each(|x| *x += i as u64);
        c.reverse();
    });
    let mut par_m = v;
    par_m.par_chunks_mut(777).enumerate().for_each(|(i, c)| {
        c.iter_mut().for_each(|x| *x += i as u64);
        c.reverse();
    });
    assert_eq!(par_m, seq_m);
}

#[test]
fn par_bridge_collects_every_item() {
    // A plain sequential iterator.
    let mut from_iter: Vec<u64> = (0..100_000u64)
        .filter(|x| x % 7 != 0)
        .par_bridge()
        .map(|x| x * 2)
        .collect();
    from_iter.sort_unstable();
    let expected: Vec<u64> = (0..100_000u64)
        .filter(|x| x % 7 != 0)
        .map(|x| x * 2)
        .collect();
    assert_eq!(from_iter, expected);

    // A channel fed by another thread: items arrive while the bridge runs.
    let (tx, rx) = mpsc::channel();
    let producer = std::thread::spawn(move || {
        for x in random_u64s(50_000, u64::MAX) {
            tx.send(x).unwrap();
        }
    });
    let mut got: Vec<u64> = rx.into_iter().par_bridge().collect();
    producer.join().unwrap();
    got.sort_unstable();
    let mut want = random_u64s(50_000, u64::MAX);
    want.sort_unstable();
    assert_eq!(got, want);
}

#[test]
fn nested_parallel_iterators() {
    let rows: Vec<Vec<u64>> = (0..200u64)
        .map(|i| (0..1000u64).map(|j| i * 1000 + j).collect())
        .collect();

    let seq: Vec<u64> = rows
        .iter()
        .map(|r| r.iter().map(|x| x % 97).sum())
        .collect();
    let par: Vec<u64> = rows
        .par_iter()
        .map(|r| r.par_iter().map(|x| x % 97).sum())
        .collect();
    assert_eq!(par, seq);

    // Three levels, with a flat_map in the middle.
    let total: u64 = (0..20u64)
        .into_par_iter()
        .flat_map(|a| {
            (0..20u64)
                .into_par_iter()
                .map(move |b| (0..50u64).into_par_iter().map(|c| a * b + c).sum::<u64>())
        })
        .sum();
    let expected: u64 = (0..20u64)
        .flat_map(|a| (0..20u64).map(move |b| (0..50u64).map(|c| a * b + c).sum::<u64>()))
        .sum();
    assert_eq!(total, expected);
}

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = rayon::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

#[test]
fn join_and_scope() {
    assert_eq!(fib(22), 17711);

    let (left, right) = rayon::join(
        || (0..100_000u64).into_par_iter().sum::<u64>(),
        || (0..100_000u64).into_par_iter().map(|x| x * 2).sum::<u64>(),
    );
    assert_eq!((left, right), (4_999_950_000, 9_999_900_000));

    // Scope: spawned tasks borrow from the stack and may spawn more, and use par_iter.
    let inputs = random_u64s(64, 1 << 16);
    let mut outputs = vec![0u64; inputs.len()];
    let extra = AtomicUsize::new(0);
    rayon::scope(|s| {
        for (out, &x) in outputs.iter_mut().zip(&inputs) {
            let extra = &extra;
            s.spawn(move |s| {
                *out = (0..x).into_par_iter().map(|i| i % 5).sum();
                s.spawn(move |_| {
                    extra.fetch_add(1, Ordering::Relaxed);
                });
            });
        }
    });
    let expected: Vec<u64> = inputs
        .iter()
        .map(|&x| (0..x).map(|i| i % 5).sum())
        .collect();
    assert_eq!(outputs, expected);
    assert_eq!(extra.load(Ordering::Relaxed), inputs.len());
}

#[test]
fn custom_rayon_pool_with_install() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .thread_name(|i| format!("rayon-check-{i}"))
        .build()
        .unwrap();
    assert_eq!(pool.current_num_threads(), 3);

    let names = Mutex::new(HashSet::new());
    let (n, sum) = pool.install(|| {
        let sum: u64 = (0..300_000u64)
            .into_par_iter()
            .map(|x| {
                let t = std::thread::current();
                let name = t.name().expect("pool workers are named").to_owned();
                names.lock().unwrap().insert(name);
                assert!(rayon::current_thread_index().unwrap() < 3);
                x
            })
            .sum();
        (rayon::current_num_threads(), sum)
    });
    assert_eq!(n, 3);
    assert_eq!(sum, 299_999 * 300_000 / 2);
    let names = names.into_inner().unwrap();
    assert!(!names.is_empty());
    assert!(
        names.iter().all(|n| n.starts_with("rayon-check-")),
        "{names:?}"
    );

    // Outside the pool, the caller is no worker of it.
    assert_eq!(pool.current_thread_index(), None);
}

/// Proof that rayon's types and work are stealpool's: the types are identical (a pool
/// built by `rayon::ThreadPoolBuilder` *is* a `stealpool::ThreadPool` and has its
/// stealpool-only `metrics()`), every item runs on a worker of that pool, and a par_iter
/// whose two halves wait for each other can only finish if stealpool's second worker
/// stole one half (its counters show it).
#[test]
fn rayon_runs_on_stealpool() {
    assert_eq!(
        TypeId::of::<rayon::ThreadPool>(),
        TypeId::of::<stealpool::ThreadPool>()
    );
    assert_eq!(
        TypeId::of::<rayon::ThreadPoolBuilder>(),
        TypeId::of::<stealpool::ThreadPoolBuilder>()
    );
    assert_eq!(
        TypeId::of::<rayon::Scope<'static>>(),
        TypeId::of::<stealpool::Scope<'static>>()
    );

    // Compiles only because the types are the same.
    let pool: stealpool::ThreadPool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let before = pool.metrics();
    assert_eq!(before.workers.len(), 2);

    let started = AtomicUsize::new(0);
    let workers = Mutex::new(HashSet::new());
    pool.install(|| {
        (0..2usize).into_par_iter().with_max_len(1).for_each(|_| {
            workers
                .lock()
                .unwrap()
                .insert(pool.current_thread_index().unwrap());
            // Both halves must be running at once: one thread cannot do this alone.
            started.fetch_add(1, Ordering::SeqCst);
            let deadline = Instant::now() + Duration::from_secs(20);
            while started.load(Ordering::SeqCst) < 2 {
                assert!(Instant::now() < deadline, "the second half never started");
                std::thread::yield_now();
            }
        });
    });
    assert_eq!(workers.into_inner().unwrap().len(), 2);

    let sum: u64 = pool.install(|| random_u64s(100_000, 1000).par_iter().sum());
    assert_eq!(sum, random_u64s(100_000, 1000).iter().sum::<u64>());

    let after = pool.metrics();
    let total = after.total();
    assert!(total.jobs_executed > 0, "{after}");
    // Work moved between workers: stolen from a deque, or rescued from a worker's
    // private `join` stack (lazy join: which one depends on timing, docs/join.md).
    assert!(total.steals + total.rescues > 0, "{after}");
    assert!(after.injected_jobs >= 2, "{after}"); // the two installs

    // And the other way round: a pool built with stealpool's builder runs rayon iterators.
    let sp = stealpool::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let mut v = random_u64s(200_000, u64::MAX);
    sp.install(|| v.par_sort_unstable());
    assert!(v.windows(2).all(|w| w[0] <= w[1]));
    assert!(sp.metrics().total().jobs_executed > 0);
}

/// The rest of the rayon-core surface that `rayon` re-exports, called through `rayon::`.
#[test]
fn rayon_core_reexports_work() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();

    let indices = pool.broadcast(|ctx| (ctx.index(), ctx.num_threads()));
    assert_eq!(indices, vec![(0, 2), (1, 2)]);

    let order = Mutex::new(Vec::new());
    pool.install(|| {
        rayon::scope_fifo(|s| {
            for i in 0..4 {
                let order = &order;
                s.spawn_fifo(move |_| order.lock().unwrap().push(i));
            }
        })
    });
    let mut order = order.into_inner().unwrap();
    order.sort_unstable();
    assert_eq!(order, [0, 1, 2, 3]);

    let mut x = 0;
    rayon::in_place_scope(|s| s.spawn(|_| x += 1));
    assert_eq!(x, 1);

    let (tx, rx) = mpsc::channel();
    pool.spawn_fifo(move || tx.send(rayon::current_thread_index()).unwrap());
    assert!(rx.recv().unwrap().is_some());

    let migrated = pool.install(|| rayon::join_context(|_| (), |ctx| ctx.migrated()).1);
    let _ = migrated; // Either value is legal; the call must work.
    assert!(rayon::max_num_threads() >= 255);
    assert_eq!(rayon::yield_now(), None); // not a worker
}
