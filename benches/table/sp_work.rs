//! stealpool's side of the fork-join workloads. Written against `super::sp` (the
//! `stealpool` crate here; in `benches/feature-cost`, each of the two builds in turn), so
//! that the table and the feature-cost check run the very same code.

use super::sp;
use crate::harness::spin;
use crate::workload::{partition, Node, QS_CUTOFF};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = sp::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

pub fn tree_sum(node: &Node) -> u64 {
    let (l, r) = sp::join(
        || node.left.as_deref().map_or(0, tree_sum),
        || node.right.as_deref().map_or(0, tree_sum),
    );
    node.value + l + r
}

pub fn quicksort(v: &mut [u64]) {
    if v.len() <= QS_CUTOFF {
        return v.sort_unstable();
    }
    let mid = partition(v);
    let (l, r) = v.split_at_mut(mid);
    sp::join(|| quicksort(l), || quicksort(&mut r[1..]));
}

/// A join tree of `depth` levels whose leaves spin for `leaf`; returns the leaf count.
pub fn spin_tree(depth: u32, leaf: Duration, started: &AtomicBool) -> u64 {
    if depth == 0 {
        started.store(true, Ordering::Relaxed);
        spin(leaf);
        return 1;
    }
    let (a, b) = sp::join(
        || spin_tree(depth - 1, leaf, started),
        || spin_tree(depth - 1, leaf, started),
    );
    a + b
}
