//! The workloads' sequential halves and data, shared by every pool's version (here, in
//! `sp_work.rs`, and in `benches/feature-cost`): fib, a breadth-first tree, quicksort.

// ---- fib(n): one join per call, no cutoff ----

pub fn fib_seq(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    fib_seq(n - 1) + fib_seq(n - 2)
}

/// Joins made by fib(n): one per call with n >= 2, i.e. fib(n + 1) - 1.
pub fn fib_joins(n: u64) -> f64 {
    (fib_seq(n + 1) - 1) as f64
}

// ---- tree-sum: a complete binary tree of boxed nodes, one join per node ----

pub struct Node {
    pub value: u64,
    pub left: Option<Box<Node>>,
    pub right: Option<Box<Node>>,
}

/// A complete tree of `layers` layers (2^layers - 1 nodes), allocated breadth-first, so
/// that a left-first walk and a right-first walk touch memory in the same pattern
/// (chili runs a join's second closure first; a post-order layout would favour it).
pub fn tree_bfs(layers: u32) -> Box<Node> {
    let n = (1usize << layers) - 1;
    let mut nodes: Vec<Option<Box<Node>>> = (0..n)
        .map(|i| {
            Some(Box::new(Node {
                value: i as u64,
                left: None,
                right: None,
            }))
        })
        .collect();
    // Link bottom-up; moving a `Box` does not move its node.
    for i in (0..n / 2).rev() {
        let left = nodes[2 * i + 1].take();
        let right = nodes[2 * i + 2].take();
        let node = nodes[i].as_mut().expect("linked once");
        node.left = left;
        node.right = right;
    }
    nodes[0].take().expect("root")
}

pub fn sum_seq(node: &Node) -> u64 {
    let l = node.left.as_deref().map_or(0, sum_seq);
    let r = node.right.as_deref().map_or(0, sum_seq);
    node.value + l + r
}

// ---- quicksort: join per partition, sequential below the cutoff ----

pub const QS_CUTOFF: usize = 1000;

/// Lomuto partition around the middle element; returns the pivot's final index.
pub fn partition(v: &mut [u64]) -> usize {
    let last = v.len() - 1;
    v.swap(v.len() / 2, last);
    let pivot = v[last];
    let mut store = 0;
    for i in 0..last {
        if v[i] < pivot {
            v.swap(i, store);
            store += 1;
        }
    }
    v.swap(store, last);
    store
}

pub fn qs_seq(v: &mut [u64]) {
    if v.len() <= QS_CUTOFF {
        return v.sort_unstable();
    }
    let mid = partition(v);
    let (l, r) = v.split_at_mut(mid);
    qs_seq(l);
    qs_seq(&mut r[1..]);
}
