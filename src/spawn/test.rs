//! Unit tests of `spawn` that need crate internals.

use crate::ThreadPoolBuilder;
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};

#[test]
fn lifo_order_on_one_thread() {
    // Spawns made by a worker run newest first once it is free.
    let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let (tx, rx) = channel();
    let order = Arc::new(Mutex::new(Vec::new()));
    let o = Arc::clone(&order);
    pool.spawn(move || {
        for i in 0..10 {
            let o = Arc::clone(&o);
            let tx = tx.clone();
            crate::spawn(move || {
                o.lock().unwrap().push(i);
                tx.send(()).unwrap();
            });
        }
    });
    for _ in 0..10 {
        rx.recv().unwrap();
    }
    assert_eq!(*order.lock().unwrap(), (0..10).rev().collect::<Vec<_>>());
}

#[test]
fn pool_outlives_its_handle_until_spawned_work_is_done() {
    let (tx, rx) = channel();
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let registry = Arc::clone(&pool.registry);
    let handles = registry.take_threads_to_join(None);
    pool.spawn(move || {
        // Runs after the handle is gone; it can still spawn.
        crate::spawn(move || tx.send(7).unwrap());
    });
    drop(pool);
    assert_eq!(rx.recv().unwrap(), 7);
    registry.wait_until_stopped(handles);
}

#[test]
fn spawn_from_exit_handler_is_not_lost() {
    // After termination no worker is left; the job must still run (inline).
    let (tx, rx) = channel();
    let tx = Mutex::new(tx);
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .exit_handler(move |index| {
            let tx = tx.lock().unwrap().clone();
            crate::spawn(move || tx.send(index).unwrap());
        })
        .build()
        .unwrap();
    drop(pool);
    let mut seen: Vec<usize> = (0..2).map(|_| rx.recv().unwrap()).collect();
    seen.sort_unstable();
    assert_eq!(seen, [0, 1]);
}
