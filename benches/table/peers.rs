//! The peers' fib and tree-sum (rayon-core's and chili's `join`s differ in shape: chili's
//! closures take its `Scope`), shared by the table (`forkjoin.rs`), `benches/sweep` and
//! `benches/join_instructions.rs`. stealpool's are in `sp_work.rs`, the sequential ones in
//! `workload.rs`.

use crate::workload::Node;

// ---- fib(n): one join per call, no cutoff ----

pub fn fib_rc(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = rayon_core::join(|| fib_rc(n - 1), || fib_rc(n - 2));
    a + b
}

pub fn fib_chili(s: &mut chili::Scope<'_>, n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = s.join(|s| fib_chili(s, n - 1), |s| fib_chili(s, n - 2));
    a + b
}

// ---- tree-sum: a complete binary tree of boxed nodes, one join per node ----

pub fn sum_rc(node: &Node) -> u64 {
    let (l, r) = rayon_core::join(
        || node.left.as_deref().map_or(0, sum_rc),
        || node.right.as_deref().map_or(0, sum_rc),
    );
    node.value + l + r
}

pub fn sum_chili(s: &mut chili::Scope<'_>, node: &Node) -> u64 {
    let (l, r) = s.join(
        |s| node.left.as_deref().map_or(0, |n| sum_chili(s, n)),
        |s| node.right.as_deref().map_or(0, |n| sum_chili(s, n)),
    );
    node.value + l + r
}
