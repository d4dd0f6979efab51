//! A plain `rayon` program (no stealpool in its source): sums with `par_iter`. Run by
//! `tests/timeline_env.rs` with `STEALPOOL_TIMELINE` set, to show that an unchanged rayon
//! program gets a worker timeline through `compat/rayon-core`.

use rayon::prelude::*;

fn main() {
    let v: Vec<u64> = (0..1_000_000).collect();
    let sum: u64 = v.par_iter().map(|x| x * 2).sum();
    assert_eq!(sum, 999_999_000_000);
    let sorted = {
        let mut w: Vec<u64> = v.iter().rev().copied().collect();
        w.par_sort();
        w
    };
    assert_eq!(sorted, v);
    println!("{sum}");
}
