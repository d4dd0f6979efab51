//! A worker timeline from a program that never asks for one: this program only uses the
//! global pool (`join`, `scope`), and nothing in it names the timeline. Run with
//! `STEALPOOL_TIMELINE=FILE.json` (or `.svg`) in its environment, it writes the pool's
//! timeline to `FILE` when it exits: every job with the queue it came from, parks,
//! promotions, injections. Open a `.json` file in <https://ui.perfetto.dev>, an `.svg`
//! in a browser.
//!
//! ```text
//! STEALPOOL_TIMELINE=/tmp/run.json cargo run --release --example timeline_env
//! ```

/// Sums `v` by splitting it in halves with `join` down to 1,000 elements.
fn sum(v: &[u64]) -> u64 {
    if v.len() <= 1_000 {
        return v.iter().sum();
    }
    let (left, right) = v.split_at(v.len() / 2);
    let (a, b) = stealpool::join(|| sum(left), || sum(right));
    a + b
}

fn main() {
    let v: Vec<u64> = (0..1_000_000).collect();
    let total = sum(&v);
    assert_eq!(total, 499_999_500_000);

    // One task per slot of `squares`, in a scope.
    let mut squares = vec![0u64; 64];
    stealpool::scope(|s| {
        for (i, slot) in squares.iter_mut().enumerate() {
            s.spawn(move |_| *slot = (i as u64) * (i as u64));
        }
    });
    assert!(squares
        .iter()
        .enumerate()
        .all(|(i, &q)| q == (i * i) as u64));

    println!(
        "sum {total}, {} squares, on {} workers",
        squares.len(),
        stealpool::current_num_threads()
    );
}
