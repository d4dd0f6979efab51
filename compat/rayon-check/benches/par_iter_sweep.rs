//! The `par_iter` sweep's child on stealpool: the `rayon` crate through
//! `compat/rayon-core`. The root package's `benches/sweep` (`pariter` mode) starts it,
//! one process per point, beside the same child on the real rayon-core.
//!
//! Arguments as the sweep's child mode: `child POOL sum N THREADS PASSES GAP_US`; prints
//! the per-call times in seconds.

#[path = "../../../benches/sweep/par_iter_child.rs"]
mod par_iter_child;

use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) != Some("child") {
        // `cargo bench` with no arguments: nothing to do on its own.
        return;
    }
    let threads: usize = args[4].parse().unwrap();
    let times = par_iter_child::par_iter_passes(
        threads,
        args[3].parse().unwrap(),
        args[5].parse().unwrap(),
        Duration::from_micros(args[6].parse().unwrap()),
    );
    let s: Vec<String> = times.iter().map(|t| format!("{t:e}")).collect();
    println!("{}", s.join(" "));
}
