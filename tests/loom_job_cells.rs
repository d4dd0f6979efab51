//! Model checking of the job cells: a stolen `join` half hands its result to the owner
//! through its `StackJob`'s result cell, and nothing else. The cells are
//! `sync::checked::UnsafeCell`, loom's under `--cfg loom`, so every read and write of them
//! is a tracked access: a read that does not happen after the write (no Acquire/Release
//! edge through the latch) fails the model as a data race, in every interleaving where it
//! occurs, whatever value the memory holds.
//!
//! Unlike `loom_join_steal.rs`, `b` here writes no atomic witness: what the owner sees
//! of `b` is only the result cell, so this model is the one that shows what the switched
//! cell adds (mutant K1 in `scripts/loom-mutants`: with std's cell under loom it survives
//! here, because the memory always holds the right value by the time the owner reads it).
//!
//! ```text
//! LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom --cfg stealpool_fences" \
//!     cargo test --release --features loom --target-dir target/loom --test loom_job_cells
//! ```
#![cfg(loom)]

use loom::sync::Arc;
use loom::thread;
use std::sync::atomic::{AtomicUsize, Ordering};
use stealpool::__loom_join_steal::ModelPool;

/// A `b` that the owner promotes at once: the thief may steal it and write its result
/// while the owner waits on the latch. The owner reads the result cell after the latch.
#[test]
fn a_stolen_half_s_result_cell_is_read_after_its_write() {
    let stolen = std::sync::Arc::new(AtomicUsize::new(0));
    let seen = stolen.clone();
    loom::model(move || {
        let pool = Arc::new(ModelPool::new(true));
        let thief = {
            let pool = pool.clone();
            thread::spawn(move || pool.run_thief())
        };
        let (a, (b, migrated)) = pool.join(|_| 1u64, |ctx| (0x5eed_u64, ctx.migrated()));
        pool.stop_thief();
        thief.join().unwrap();
        assert_eq!((a, b), (1, 0x5eed));
        if migrated {
            seen.fetch_add(1, Ordering::Relaxed);
        }
    });
    assert!(
        stolen.load(Ordering::Relaxed) > 0,
        "some interleaving has b stolen"
    );
}
