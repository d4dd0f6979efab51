//! rayon-core 1.13's API: ordering contracts of spawn / spawn_fifo on a one-thread pool.

use super::*;

type Job = Box<dyn FnOnce() + Send + 'static>;
type Spawner = fn(Job);

fn lifo(job: Job) {
    rayon_core::spawn(job)
}

fn fifo(job: Job) {
    rayon_core::spawn_fifo(job)
}

/// From inside a one-thread pool, `outer` spawns 10 jobs, each of which uses
/// `inner` to spawn 10 jobs that report `i * 10 + j`.
fn nested_spawn_order(outer: Spawner, inner: Spawner) -> Vec<i32> {
    let pool = pool(1);
    let (tx, rx) = mpsc::channel();
    pool.install(move || {
        for i in 0..10 {
            let tx = tx.clone();
            outer(Box::new(move || {
                for j in 0..10 {
                    let tx = tx.clone();
                    inner(Box::new(move || tx.send(i * 10 + j).unwrap()));
                }
            }));
        }
    });
    rx.iter().collect()
}

/// Spawns 0, -1, 1, -2, 2, -3, 3 from inside a one-thread pool, the
/// non-negative numbers with `pos`, the negative ones with `neg`.
fn mixed_spawn_order(pos: Spawner, neg: Spawner) -> Vec<i32> {
    let pool = pool(1);
    let (tx, rx) = mpsc::channel();
    pool.install(move || {
        for (spawner, value) in [
            (pos, 0),
            (neg, -1),
            (pos, 1),
            (neg, -2),
            (pos, 2),
            (neg, -3),
            (pos, 3),
        ] {
            let tx = tx.clone();
            spawner(Box::new(move || tx.send(value).unwrap()));
        }
    });
    rx.iter().collect()
}

#[test]
fn spawn_lifo_order() {
    let got = watchdog(TIMEOUT, || nested_spawn_order(lifo, lifo));
    assert_eq!(got, (0..100).rev().collect::<Vec<_>>());
}

#[test]
fn spawn_fifo_order() {
    let got = watchdog(TIMEOUT, || nested_spawn_order(fifo, fifo));
    assert_eq!(got, (0..100).collect::<Vec<_>>());
}

#[test]
fn spawn_lifo_outside_fifo_inside_order() {
    let got = watchdog(TIMEOUT, || nested_spawn_order(lifo, fifo));
    let want: Vec<i32> = (0..10)
        .rev()
        .flat_map(|i| (0..10).map(move |j| i * 10 + j))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn spawn_fifo_outside_lifo_inside_order() {
    let got = watchdog(TIMEOUT, || nested_spawn_order(fifo, lifo));
    let want: Vec<i32> = (0..10)
        .flat_map(|i| (0..10).rev().map(move |j| i * 10 + j))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn spawn_mixed_lifo_fifo_order() {
    let got = watchdog(TIMEOUT, || mixed_spawn_order(lifo, fifo));
    assert_eq!(got, [3, -1, 2, -2, 1, -3, 0]);
}

#[test]
fn spawn_mixed_fifo_lifo_order() {
    let got = watchdog(TIMEOUT, || mixed_spawn_order(fifo, lifo));
    assert_eq!(got, [0, -3, 1, -2, 2, -1, 3]);
}

#[test]
fn thread_pool_spawn_and_spawn_fifo_order() {
    let (lifo_got, fifo_got) = watchdog(TIMEOUT, || {
        let run = |fifo: bool| {
            let pool = pool(1);
            let (tx, rx) = mpsc::channel();
            pool.install(|| {
                for i in 0..10 {
                    let tx = tx.clone();
                    let job = move || tx.send(i).unwrap();
                    if fifo {
                        pool.spawn_fifo(job);
                    } else {
                        pool.spawn(job);
                    }
                }
            });
            drop(tx);
            rx.iter().collect::<Vec<i32>>()
        };
        (run(false), run(true))
    });
    assert_eq!(lifo_got, (0..10).rev().collect::<Vec<_>>());
    assert_eq!(fifo_got, (0..10).collect::<Vec<_>>());
}
