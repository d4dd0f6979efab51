//! The `par_iter` row of stealpool's benchmark table, on stealpool: the `rayon` crate
//! through `compat/rayon-core`. Prints `par_iter_medians <sum s> <sort s>`, which the
//! root package's `benches/table` reads and sets beside the same workload on the real
//! rayon-core.

#[path = "../../../benches/table/par_iter.rs"]
mod par_iter;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let quick = std::env::args().any(|a| a == "--test");
    let threads = std::env::var("STEALPOOL_BENCH_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let [sum, sort] = if quick {
        par_iter::par_iter_medians(threads, 1, 4)
    } else {
        par_iter::par_iter_medians(threads, 15, 0)
    };
    println!("par_iter_medians {sum} {sort}");
}
