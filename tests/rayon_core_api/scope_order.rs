//! rayon-core 1.13's API: ordering contracts of scope / scope_fifo on a one-thread pool.

use super::*;

/// `$scope` spawns 10 jobs with `$spawn`, each spawning 10 more into the same
/// scope that log `i * 10 + j`.
macro_rules! scope_order {
    ($scope:path, $spawn:ident) => {
        watchdog(TIMEOUT, || {
            let pool = pool(1);
            pool.install(|| {
                let log = Mutex::new(Vec::new());
                $scope(|s| {
                    let log = &log;
                    for i in 0..10 {
                        s.$spawn(move |s| {
                            for j in 0..10 {
                                s.$spawn(move |_| log.lock().unwrap().push(i * 10 + j));
                            }
                        });
                    }
                });
                log.into_inner().unwrap()
            })
        })
    };
}

/// The outer scope's 10 jobs each open an inner scope with 10 jobs.
macro_rules! nested_scope_order {
    ($outer:path, $outer_spawn:ident, $inner:path, $inner_spawn:ident) => {
        watchdog(TIMEOUT, || {
            let pool = pool(1);
            pool.install(|| {
                let log = Mutex::new(Vec::new());
                $outer(|s| {
                    let log = &log;
                    for i in 0..10 {
                        s.$outer_spawn(move |_| {
                            $inner(|s| {
                                for j in 0..10 {
                                    s.$inner_spawn(move |_| log.lock().unwrap().push(i * 10 + j));
                                }
                            });
                        });
                    }
                });
                log.into_inner().unwrap()
            })
        })
    };
}

/// Non-negative numbers go to the outer scope, negative ones to an inner
/// scope opened in the middle of the outer body.
macro_rules! mixed_scope_order {
    ($outer:path, $outer_spawn:ident, $inner:path, $inner_spawn:ident) => {
        watchdog(TIMEOUT, || {
            let pool = pool(1);
            pool.install(|| {
                let log = Mutex::new(Vec::new());
                $outer(|outer| {
                    let log = &log;
                    outer.$outer_spawn(move |_| log.lock().unwrap().push(0));
                    $inner(|inner| {
                        inner.$inner_spawn(move |_| log.lock().unwrap().push(-1));
                        outer.$outer_spawn(move |_| log.lock().unwrap().push(1));
                        inner.$inner_spawn(move |_| log.lock().unwrap().push(-2));
                        outer.$outer_spawn(move |_| log.lock().unwrap().push(2));
                        inner.$inner_spawn(move |_| log.lock().unwrap().push(-3));
                    });
                    outer.$outer_spawn(move |_| log.lock().unwrap().push(3));
                });
                log.into_inner().unwrap()
            })
        })
    };
}

#[test]
fn scope_lifo_order() {
    let got: Vec<i32> = scope_order!(rayon_core::scope, spawn);
    assert_eq!(got, (0..100).rev().collect::<Vec<_>>());
}

#[test]
fn scope_fifo_order() {
    let got: Vec<i32> = scope_order!(rayon_core::scope_fifo, spawn_fifo);
    assert_eq!(got, (0..100).collect::<Vec<_>>());
}

#[test]
fn scope_nested_lifo_order() {
    let got: Vec<i32> = nested_scope_order!(rayon_core::scope, spawn, rayon_core::scope, spawn);
    assert_eq!(got, (0..100).rev().collect::<Vec<_>>());
}

#[test]
fn scope_nested_fifo_order() {
    let got: Vec<i32> = nested_scope_order!(
        rayon_core::scope_fifo,
        spawn_fifo,
        rayon_core::scope_fifo,
        spawn_fifo
    );
    assert_eq!(got, (0..100).collect::<Vec<_>>());
}

#[test]
fn scope_nested_lifo_fifo_order() {
    let got: Vec<i32> =
        nested_scope_order!(rayon_core::scope, spawn, rayon_core::scope_fifo, spawn_fifo);
    let want: Vec<i32> = (0..10)
        .rev()
        .flat_map(|i| (0..10).map(move |j| i * 10 + j))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn scope_nested_fifo_lifo_order() {
    let got: Vec<i32> =
        nested_scope_order!(rayon_core::scope_fifo, spawn_fifo, rayon_core::scope, spawn);
    let want: Vec<i32> = (0..10)
        .flat_map(|i| (0..10).rev().map(move |j| i * 10 + j))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn scope_mixed_lifo_order() {
    let got: Vec<i32> = mixed_scope_order!(rayon_core::scope, spawn, rayon_core::scope, spawn);
    assert_eq!(got, [-3, 2, -2, 1, -1, 3, 0]);
}

#[test]
fn scope_mixed_fifo_order() {
    let got: Vec<i32> = mixed_scope_order!(
        rayon_core::scope_fifo,
        spawn_fifo,
        rayon_core::scope_fifo,
        spawn_fifo
    );
    assert_eq!(got, [-1, 0, -2, 1, -3, 2, 3]);
}

#[test]
fn scope_mixed_lifo_fifo_order() {
    let got: Vec<i32> =
        mixed_scope_order!(rayon_core::scope, spawn, rayon_core::scope_fifo, spawn_fifo);
    assert_eq!(got, [-1, 2, -2, 1, -3, 3, 0]);
}

#[test]
fn scope_mixed_fifo_lifo_order() {
    let got: Vec<i32> =
        mixed_scope_order!(rayon_core::scope_fifo, spawn_fifo, rayon_core::scope, spawn);
    assert_eq!(got, [-3, 0, -2, 1, -1, 2, 3]);
}

#[test]
fn thread_pool_scope_and_scope_fifo_order() {
    let (lifo_got, fifo_got) = watchdog(TIMEOUT, || {
        let pool = pool(1);
        let lifo_got = pool.install(|| {
            let log = Mutex::new(Vec::new());
            pool.scope(|s| {
                for i in 0..10 {
                    let log = &log;
                    s.spawn(move |_| log.lock().unwrap().push(i));
                }
            });
            log.into_inner().unwrap()
        });
        let fifo_got = pool.install(|| {
            let log = Mutex::new(Vec::new());
            pool.scope_fifo(|s| {
                for i in 0..10 {
                    let log = &log;
                    s.spawn_fifo(move |_| log.lock().unwrap().push(i));
                }
            });
            log.into_inner().unwrap()
        });
        (lifo_got, fifo_got)
    });
    assert_eq!(lifo_got, (0..10).rev().collect::<Vec<_>>());
    assert_eq!(fifo_got, (0..10).collect::<Vec<_>>());
}
