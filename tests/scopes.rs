//! Scopes used the unusual ways: spawned into from outside threads holding `&Scope` and
//! from nested tasks, opened inside spawned jobs thousands of times, nested 1000 deep.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::mpsc::{self};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

mod common;

use common::pool;

use common::child::ran_in_child;
use common::watchdog;

/// Scope tasks spawned from outside threads (holding `&Scope`) and from inside tasks.
#[test]
fn scope_spawns_from_outside_threads_and_nested_tasks() {
    watchdog(30, || {
        let p = pool(2);
        for _ in 0..50 {
            let count = AtomicUsize::new(0);
            p.scope(|s| {
                thread::scope(|ts| {
                    for _ in 0..4 {
                        ts.spawn(|| {
                            for _ in 0..50 {
                                s.spawn(|s2| {
                                    count.fetch_add(1, SeqCst);
                                    s2.spawn(|_| {
                                        count.fetch_add(1, SeqCst);
                                    });
                                });
                            }
                        });
                    }
                });
            });
            assert_eq!(count.load(SeqCst), 400);
        }
    });
}

/// Scopes opened inside spawned jobs, thousands of times.
#[test]
fn scopes_inside_spawned_jobs() {
    watchdog(30, || {
        let p = pool(2);
        let total = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = mpsc::channel();
        for _ in 0..2000 {
            let (total, tx) = (total.clone(), tx.clone());
            p.spawn(move || {
                let c = AtomicUsize::new(0);
                stealpool::scope(|s| {
                    for _ in 0..5 {
                        s.spawn(|_| {
                            c.fetch_add(1, SeqCst);
                        });
                    }
                });
                total.fetch_add(c.load(SeqCst), SeqCst);
                tx.send(()).unwrap();
            });
        }
        for _ in 0..2000 {
            rx.recv_timeout(Duration::from_secs(5))
                .expect("spawned job lost");
        }
        assert_eq!(total.load(SeqCst), 10_000);
    });
}

/// Scopes nested 1000 deep on a worker (child process: a stack overflow would abort).
#[test]
fn nested_scopes_1000_deep() {
    if ran_in_child(
        "nested_scopes_1000_deep",
        30,
        "the scenario failed in its child process",
    ) {
        return;
    }
    fn rec(depth: usize, c: &AtomicUsize) {
        if depth > 0 {
            stealpool::scope(|s| {
                s.spawn(|_| {
                    c.fetch_add(1, SeqCst);
                });
                rec(depth - 1, c);
            });
        }
    }
    let c = AtomicUsize::new(0);
    pool(2).install(|| rec(1000, &c));
    assert_eq!(c.load(SeqCst), 1000);
}
