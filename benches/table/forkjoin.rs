//! Fork-join rows: fib, tree-sum, quicksort. Each workload is written once per pool (the
//! peers' `join`s differ in shape: chili's closures take its `Scope`), with the same
//! sequential baseline beside them.

use crate::harness::{interleaved, time, Plan};
use crate::peers::{fib_chili, fib_rc, sum_chili, sum_rc};
use crate::sp_work;
use crate::workload::{fib_joins, fib_seq, partition, qs_seq, sum_seq, tree_bfs, QS_CUTOFF};
use crate::{Pools, Row};
use std::hint::black_box;

// ---- quicksort: join per partition, sequential below the cutoff ----

fn qs_rc(v: &mut [u64]) {
    if v.len() <= QS_CUTOFF {
        return v.sort_unstable();
    }
    let mid = partition(v);
    let (l, r) = v.split_at_mut(mid);
    rayon_core::join(|| qs_rc(l), || qs_rc(&mut r[1..]));
}

fn qs_chili(s: &mut chili::Scope<'_>, v: &mut [u64]) {
    if v.len() <= QS_CUTOFF {
        return v.sort_unstable();
    }
    let mid = partition(v);
    let (l, r) = v.split_at_mut(mid);
    s.join(|s| qs_chili(s, l), |s| qs_chili(s, &mut r[1..]));
}

// ---- the rows ----

pub fn fib_rows(plan: Plan, pools: &Pools, rows: &mut Vec<Row>) {
    let n = 30 - u64::from(plan.shrink);
    let expected = fib_seq(n);
    assert_eq!(pools.sp.install(|| sp_work::fib(n)), expected);
    assert_eq!(pools.rc.install(|| fib_rc(n)), expected);
    assert_eq!(fib_chili(&mut pools.chili.scope(), n), expected);
    let m = interleaved(
        plan.rounds,
        &mut [
            &mut || time(|| fib_seq(black_box(n))),
            &mut || time(|| pools.rc.install(|| fib_rc(black_box(n)))),
            &mut || time(|| fib_chili(&mut pools.chili.scope(), black_box(n))),
            &mut || time(|| pools.sp.install(|| sp_work::fib(black_box(n)))),
        ],
    );
    rows.push(Row::time(
        format!("join-fib({n}), join per call, no cutoff"),
        m,
        "≤ 0.6x sequential (limit 0.5x)",
    ));

    // One worker each: the cost of a join that is never stolen.
    let sp1 = stealpool::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let rc1 = rayon_core::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let chili1 = crate::chili_pool(1);
    let joins = fib_joins(n);
    let m = interleaved(
        plan.rounds,
        &mut [
            &mut || time(|| fib_seq(black_box(n))),
            &mut || time(|| rc1.install(|| fib_rc(black_box(n)))),
            &mut || time(|| fib_chili(&mut chili1.scope(), black_box(n))),
            &mut || time(|| sp1.install(|| sp_work::fib(black_box(n)))),
        ],
    );
    let per_join = m.iter().map(|t| t / joins).collect();
    rows.push(Row::time(
        "same, 1 worker: time per join".into(),
        per_join,
        "≤ chili",
    ));
}

pub fn tree_row(plan: Plan, pools: &Pools, rows: &mut Vec<Row>) {
    let layers = 22 - plan.shrink;
    let tree = tree_bfs(layers);
    let expected = sum_seq(&tree);
    assert_eq!(pools.sp.install(|| sp_work::tree_sum(&tree)), expected);
    assert_eq!(pools.rc.install(|| sum_rc(&tree)), expected);
    assert_eq!(sum_chili(&mut pools.chili.scope(), &tree), expected);
    let m = interleaved(
        plan.rounds,
        &mut [
            &mut || time(|| sum_seq(black_box(&tree))),
            &mut || time(|| pools.rc.install(|| sum_rc(black_box(&tree)))),
            &mut || time(|| sum_chili(&mut pools.chili.scope(), black_box(&tree))),
            &mut || time(|| pools.sp.install(|| sp_work::tree_sum(black_box(&tree)))),
        ],
    );
    rows.push(Row::time(
        format!("tree-sum, 2^{layers} boxed nodes (breadth-first), join per node"),
        m,
        "≤ 0.6x sequential",
    ));
}

pub fn quicksort_row(plan: Plan, pools: &Pools, rows: &mut Vec<Row>) {
    let len = 4_000_000 >> plan.shrink;
    let mut rng = fastrand::Rng::with_seed(7);
    let input: Vec<u64> = (0..len).map(|_| rng.u64(..)).collect();
    let mut sorted = input.clone();
    sorted.sort_unstable();
    let mut buf = input.clone();
    let mut run = |sort: &dyn Fn(&mut [u64])| {
        buf.copy_from_slice(&input);
        let t = time(|| sort(black_box(&mut buf)));
        assert!(buf == sorted, "quicksort gave a wrong order");
        t
    };
    let m = {
        let run = std::cell::RefCell::new(&mut run);
        interleaved(
            plan.rounds,
            &mut [
                &mut || (run.borrow_mut())(&|v| qs_seq(v)),
                &mut || (run.borrow_mut())(&|v| pools.rc.install(|| qs_rc(v))),
                &mut || (run.borrow_mut())(&|v| qs_chili(&mut pools.chili.scope(), v)),
                &mut || (run.borrow_mut())(&|v| pools.sp.install(|| sp_work::quicksort(v))),
            ],
        )
    };
    rows.push(Row::time(
        format!(
            "quicksort {}M u64, join, cutoff {QS_CUTOFF}",
            len as f64 / 1e6
        ),
        m,
        "≤ both (keep)",
    ));
}
