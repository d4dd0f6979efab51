//! Spawn rows: tiny scope spawns, spawns from outside the pool, and the time an outside
//! spawn waits while the pool is saturated by a join tree (injection under load).

use crate::harness::{injection_latencies, interleaved, spin, time, Countdown, Plan};
use crate::{Pools, Row};
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub fn scope_spawn_row(plan: Plan, pools: &Pools, rows: &mut Vec<Row>) {
    let n = 1_000_000 >> (2 * plan.shrink);
    let sp1 = stealpool::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let sp_scope = |pool: &stealpool::ThreadPool| {
        time(|| {
            pool.install(|| {
                stealpool::scope(|s| {
                    for i in 0..n {
                        s.spawn(move |_| {
                            black_box(i);
                        });
                    }
                })
            })
        })
    };
    let m = interleaved(
        plan.rounds.div_ceil(2),
        &mut [
            &mut || {
                time(|| {
                    pools.rc.install(|| {
                        rayon_core::scope(|s| {
                            for i in 0..n {
                                s.spawn(move |_| {
                                    black_box(i);
                                });
                            }
                        })
                    })
                })
            },
            &mut || sp_scope(&pools.sp),
            &mut || sp_scope(&sp1),
        ],
    );
    let mut row = Row::time(
        format!("{n} tiny `Scope::spawn`s in one scope"),
        vec![f64::NAN, m[0], f64::NAN, m[1]],
        "≤ 0.6x rayon-core; 2 workers never slower than 1",
    );
    row.note = format!("1 worker: {}", crate::fmt_time(m[2]));
    rows.push(row);
}

pub fn outside_spawn_row(plan: Plan, pools: &Pools, rows: &mut Vec<Row>) {
    let n = 200_000 >> (2 * plan.shrink);
    let m = interleaved(
        plan.rounds,
        &mut [
            &mut || {
                let done = Countdown::new(n);
                time(|| {
                    for _ in 0..n {
                        let done = done.clone();
                        pools.rc.spawn(move || done.count_down());
                    }
                    done.wait();
                })
            },
            &mut || {
                let done = Countdown::new(n);
                time(|| {
                    for _ in 0..n {
                        let done = done.clone();
                        pools.sp.spawn(move || done.count_down());
                    }
                    done.wait();
                })
            },
        ],
    );
    rows.push(Row::time(
        format!("{n} `spawn`s from a non-pool thread"),
        vec![f64::NAN, m[0], f64::NAN, m[1]],
        "≤ 0.8x rayon-core",
    ));
}

/// A join tree of `depth` levels whose leaves spin for `leaf`; returns the leaf count
/// (stealpool's is `sp_work::spin_tree`).
fn spin_tree_rc(depth: u32, leaf: Duration, started: &AtomicBool) -> u64 {
    if depth == 0 {
        started.store(true, Ordering::Relaxed);
        spin(leaf);
        return 1;
    }
    let (a, b) = rayon_core::join(
        || spin_tree_rc(depth - 1, leaf, started),
        || spin_tree_rc(depth - 1, leaf, started),
    );
    a + b
}

pub fn injection_row(plan: Plan, pools: &Pools, rows: &mut Vec<Row>) {
    // ~0.3 s of leaves per worker: 20 µs leaves, 2^14 per two workers.
    let leaf = Duration::from_micros(20);
    let depth = 13 + (pools.threads.max(1)).ilog2() - plan.shrink;
    let rc = injection_latencies(
        plan,
        &|started| {
            pools.rc.install(|| spin_tree_rc(depth, leaf, started));
        },
        &|job| pools.rc.spawn(job),
    );
    let sp = injection_latencies(
        plan,
        &|started| {
            pools
                .sp
                .install(|| crate::sp_work::spin_tree(depth, leaf, started));
        },
        &|job| pools.sp.spawn(job),
    );
    let mut row = Row::time(
        format!("injection under load: 2^{depth} × 20 µs join tree, outside `spawn` starts (p90)"),
        vec![f64::NAN, rc.1, f64::NAN, sp.1],
        "p90 ≤ 1 ms",
    );
    row.note = format!(
        "p50: rayon-core {}, stealpool {}",
        crate::fmt_time(rc.0),
        crate::fmt_time(sp.0)
    );
    rows.push(row);
}
