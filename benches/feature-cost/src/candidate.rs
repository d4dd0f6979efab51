//! One build of stealpool as a [`Candidate`]: its two pools (every worker, and one
//! worker) and the table's workloads compiled against it. `main.rs` includes this file
//! twice, once per build, each time with `super::sp` naming that build's crate.

use super::sp;
use crate::workload::Node;
use crate::Candidate;
use std::hint::black_box;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

#[path = "../../table/sp_work.rs"]
mod sp_work;

/// The pools of one build, sized as the table's.
pub struct Build {
    name: &'static str,
    pub all: sp::ThreadPool,
    pub one: sp::ThreadPool,
}

impl Build {
    pub fn new(name: &'static str, threads: usize) -> Build {
        let pool = |n| {
            sp::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .expect("build a pool")
        };
        Build {
            name,
            all: pool(threads),
            one: pool(1),
        }
    }

    fn pool(&self, one: bool) -> &sp::ThreadPool {
        if one {
            &self.one
        } else {
            &self.all
        }
    }
}

impl Candidate for Build {
    fn name(&self) -> &'static str {
        self.name
    }

    fn spawn(&self, job: Box<dyn FnOnce() + Send>) {
        self.all.spawn(job);
    }

    fn fib(&self, n: u64, one: bool) -> u64 {
        self.pool(one).install(|| sp_work::fib(black_box(n)))
    }

    fn tree_sum(&self, tree: &Node) -> u64 {
        self.all.install(|| sp_work::tree_sum(black_box(tree)))
    }

    fn quicksort(&self, v: &mut [u64]) {
        self.all.install(|| sp_work::quicksort(v));
    }

    fn scope_spawns(&self, n: usize, one: bool) {
        self.pool(one).install(|| {
            sp::scope(|s| {
                for i in 0..n {
                    s.spawn(move |_| {
                        black_box(i);
                    });
                }
            })
        });
    }

    fn spin_tree(&self, depth: u32, leaf: Duration, started: &AtomicBool) -> u64 {
        self.all
            .install(|| sp_work::spin_tree(depth, leaf, started))
    }

    fn join_leaves(&self, leaf: Duration) {
        self.all
            .install(|| sp::join(|| crate::harness::spin(leaf), || crate::harness::spin(leaf)));
    }
}
