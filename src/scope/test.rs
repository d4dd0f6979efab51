//! Unit tests of scopes that need crate internals.

use crate::ThreadPoolBuilder;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

#[test]
fn lifo_order_on_one_thread() {
    // The body pushes 0..10; the owner pops them back newest first.
    let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let order = Mutex::new(Vec::new());
    pool.scope(|s| {
        for i in 0..10 {
            let order = &order;
            s.spawn(move |_| order.lock().unwrap().push(i));
        }
    });
    assert_eq!(
        order.into_inner().unwrap(),
        (0..10).rev().collect::<Vec<_>>()
    );
}

#[test]
fn divide_and_conquer_counts_every_leaf() {
    fn divide<'a>(s: &crate::Scope<'a>, counter: &'a AtomicUsize, depth: u32) {
        if depth == 0 {
            counter.fetch_add(1, Ordering::Relaxed);
        } else {
            s.spawn(move |s| divide(s, counter, depth - 1));
            s.spawn(move |s| divide(s, counter, depth - 1));
        }
    }
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let counter = AtomicUsize::new(0);
    pool.scope(|s| divide(s, &counter, 10));
    assert_eq!(counter.load(Ordering::Relaxed), 1024);
}
