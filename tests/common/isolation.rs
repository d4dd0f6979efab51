//! The forced wait of rayon-rs/rayon#592 for the isolation tests (`tests/isolate.rs`,
//! `tests/isolate_waits.rs`): a job holds a section across a `join` whose `b` the other
//! worker took, and an unrelated job is in reach of the wait. [`stolen_half_wait`] counts
//! the unrelated job's runs inside the section: one without isolation, none with it.

use super::held::{Held, Locks};
use super::wake::wait_parked;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use stealpool::{ThreadPool, ThreadPoolBuilder};

/// How the section's waits are isolated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// Not at all: the pools are built with `isolate_waits(false)`, which wins over
    /// `STEALPOOL_ISOLATE_WAITS`.
    Off,
    /// `stealpool::isolate` around the section's `join` (or `a.isolate` for
    /// [`Route::ThroughAnotherPool`]).
    Isolate,
    /// The pools are built with `isolate_waits(true)`.
    Builder,
    /// The pools are built without choosing: `STEALPOOL_ISOLATE_WAITS` decides.
    Environment,
}

impl Isolation {
    /// A pool of `n` workers built as this isolation says.
    pub fn pool(self, n: usize) -> Arc<ThreadPool> {
        let builder = ThreadPoolBuilder::new().num_threads(n);
        let builder = match self {
            Isolation::Off | Isolation::Isolate => builder.isolate_waits(false),
            Isolation::Builder => builder.isolate_waits(true),
            Isolation::Environment => builder,
        };
        Arc::new(builder.build().unwrap())
    }
}

/// How the section reaches the two-worker pool `b` it runs on.
#[derive(Clone, Copy, Debug)]
pub enum Route {
    /// A job spawned into `b`.
    Spawned,
    /// `b.install` from a job of a one-worker pool `a` (`a.isolate` with
    /// [`Isolation::Isolate`], else `a.install`): a job handed to another pool.
    ThroughAnotherPool,
}

/// The section on a two-worker pool `b`, isolated as `how` says: a `join` whose `b` half
/// the other worker takes; once that half started, `a` has `u` injected into the pool from
/// outside (it tries the section) and returns, so `u` is in reach of the section's wait
/// for the half until that wait parks, which the half waits for. Returns how often `u`
/// found the section held on its thread, after `u` ran: 1 without isolation (the wait
/// takes `u` from the injector, as rayon-core's does), 0 with it.
pub fn stolen_half_wait(held: Held, route: Route, how: Isolation) -> usize {
    let b = how.pool(2);
    let locks = Arc::new(Locks::default());
    let reentries = Arc::new(AtomicUsize::new(0));
    let (inject_tx, inject_rx) = mpsc::channel::<()>();
    let (injected_tx, injected_rx) = mpsc::channel::<()>();
    let (u_ran_tx, u_ran_rx) = mpsc::channel::<()>();
    let section_locks = locks.clone();
    let b_for_half = b.clone();
    let join = move || {
        let (started_tx, started_rx) = mpsc::channel::<()>();
        let ((), ()) = stealpool::join(
            move || {
                started_rx.recv().unwrap();
                inject_tx.send(()).unwrap();
                injected_rx.recv().unwrap();
            },
            move || {
                started_tx.send(()).unwrap();
                // The section's worker waits for this half: let it park first.
                wait_parked(&b_for_half, 1);
            },
        );
    };
    let section = move || {
        held.hold(&section_locks, || match (route, how) {
            (Route::Spawned, Isolation::Isolate) => stealpool::isolate(join),
            _ => join(),
        })
    };
    let b_for_section = b.clone();
    let done = std::thread::spawn(move || match route {
        Route::Spawned => {
            let (done_tx, done_rx) = mpsc::channel::<()>();
            b_for_section.spawn(move || {
                section();
                done_tx.send(()).unwrap();
            });
            done_rx.recv().unwrap();
        }
        Route::ThroughAnotherPool => {
            let a = how.pool(1);
            let from_a = || b_for_section.install(section);
            if how == Isolation::Isolate {
                a.isolate(from_a)
            } else {
                a.install(from_a)
            }
        }
    });
    inject_rx.recv().unwrap();
    let u_reentries = reentries.clone();
    b.spawn(move || {
        if held.is_held_here(&locks) {
            u_reentries.fetch_add(1, Ordering::SeqCst);
        }
        u_ran_tx.send(()).unwrap();
    });
    injected_tx.send(()).unwrap();
    done.join().unwrap();
    u_ran_rx.recv().unwrap();
    reentries.load(Ordering::SeqCst)
}

/// A `join` whose `a` returns only once `b` has started, so `b` ran on another worker;
/// returns the workers `a` and `b` ran on.
pub fn halves_that_meet() -> (Option<usize>, Option<usize>) {
    let (tx, rx) = mpsc::channel::<()>();
    stealpool::join(
        move || {
            rx.recv().unwrap();
            stealpool::current_thread_index()
        },
        move || {
            tx.send(()).unwrap();
            stealpool::current_thread_index()
        },
    )
}

/// A `join` tree of `2^depth` leaves; returns the leaf count.
pub fn tree(depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let (a, b) = stealpool::join(|| tree(depth - 1), || tree(depth - 1));
    a + b
}
