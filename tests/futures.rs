//! Futures: a `JoinHandle` awaited from a real tokio runtime, and `block_on`, which on a
//! worker runs pool jobs while its future is pending instead of blocking the worker.

mod common;

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::thread;
use std::time::Duration;

use common::blocked::{my_tid, wait_blocked};
use common::{payload_str, wait_parked, watchdog, Countdown};
use stealpool::ThreadPoolBuilder;

fn tokio_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

/// The handle is polled while its job is blocked (so `Pending` for sure), then the job is
/// released: the job's completion must wake the tokio task, or this hangs.
#[test]
fn a_pending_join_handle_wakes_its_tokio_task() {
    watchdog(60, || {
        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let (release, blocked) = mpsc::channel::<()>();
        let mut handle = pool.spawn_with_handle(move || {
            blocked.recv().unwrap();
            42
        });
        let value = tokio_runtime().block_on(async move {
            let first = poll_fn(|cx| Poll::Ready(Pin::new(&mut handle).poll(cx))).await;
            assert!(first.is_pending(), "the job cannot have finished");
            release.send(()).unwrap();
            handle.await
        });
        assert_eq!(value.unwrap(), 42);
    });
}

#[test]
fn an_awaited_handle_returns_the_jobs_panic() {
    watchdog(60, || {
        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let handle = pool.spawn_with_handle(|| -> u32 { panic!("boom in the pool") });
        let payload = tokio_runtime().block_on(handle).unwrap_err();
        assert_eq!(payload_str(&*payload), Some("boom in the pool"));
    });
}

/// Many tasks of a multi-thread runtime await CPU work at once, each on a handle that is
/// pending when first polled, for certain: every pool job waits on a gate that opens only
/// once every task has polled its handle, so each task is woken by its job's completion.
/// Asserts that every first poll returned `Pending`.
#[test]
fn many_tokio_tasks_await_pool_work_at_once() {
    const TASKS: usize = 200;
    watchdog(60, || {
        let pool = Arc::new(ThreadPoolBuilder::new().num_threads(2).build().unwrap());
        let gate = Countdown::new(1);
        let first_polls = Arc::new(AtomicUsize::new(0));
        let pending_first_polls = Arc::new(AtomicUsize::new(0));
        let all_polled = Arc::new(tokio::sync::Notify::new());
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let total = runtime.block_on(async {
            let tasks: Vec<_> = (0..TASKS as u64)
                .map(|i| {
                    let (pool, gate) = (Arc::clone(&pool), Arc::clone(&gate));
                    let first_polls = Arc::clone(&first_polls);
                    let pending = Arc::clone(&pending_first_polls);
                    let all_polled = Arc::clone(&all_polled);
                    tokio::spawn(async move {
                        let mut handle = pool.spawn_with_handle(move || {
                            assert_eq!(gate.wait(Duration::from_secs(50)), 0, "gate shut");
                            (0..=i).sum::<u64>()
                        });
                        let mut first = true;
                        poll_fn(|cx| {
                            let poll = Pin::new(&mut handle).poll(cx);
                            if std::mem::take(&mut first) {
                                if poll.is_pending() {
                                    pending.fetch_add(1, SeqCst);
                                }
                                if first_polls.fetch_add(1, SeqCst) + 1 == TASKS {
                                    all_polled.notify_one();
                                }
                            }
                            poll
                        })
                        .await
                        .unwrap()
                    })
                })
                .collect();
            // Every handle has been polled once (and counted): the jobs may finish.
            all_polled.notified().await;
            gate.count_down();
            let mut total = 0;
            for task in tasks {
                total += task.await.unwrap();
            }
            total
        });
        assert_eq!(
            total,
            (0..TASKS as u64).map(|i| i * (i + 1) / 2).sum::<u64>()
        );
        assert_eq!(
            pending_first_polls.load(SeqCst),
            TASKS,
            "a handle was ready on its first poll: its task was never woken"
        );
    });
}

#[test]
fn joining_a_handle_after_awaiting_it_panics_clearly() {
    watchdog(60, || {
        let mut handle = stealpool::spawn_with_handle(|| 1);
        assert_eq!(stealpool::block_on(&mut handle).unwrap(), 1);
        let err = std::panic::catch_unwind(move || handle.join()).unwrap_err();
        assert!(payload_str(&*err).unwrap().contains("after it was awaited"));
    });
}

/// The only worker blocks on a job queued behind it: it runs that job itself. A
/// `block_on` that parked the thread would deadlock here.
#[test]
fn block_on_on_the_only_worker_runs_the_job_it_waits_for() {
    watchdog(60, || {
        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let value = pool.install(|| {
            let handle = stealpool::spawn_with_handle(|| 6 * 7);
            stealpool::block_on(async { handle.await.unwrap() })
        });
        assert_eq!(value, 42);
        assert!(pool.metrics().total().jobs_executed >= 2);
    });
}

/// A worker in `block_on` with nothing to run parks, and the future's waker (called from
/// a thread outside the pool) wakes it.
#[test]
fn a_worker_parked_in_block_on_is_woken_by_the_waker() {
    watchdog(60, || {
        let pool = Arc::new(ThreadPoolBuilder::new().num_threads(1).build().unwrap());
        let (polled_tx, polled_rx) = mpsc::channel();
        let (value_tx, value_rx) = tokio::sync::oneshot::channel::<u32>();
        let sender = {
            let pool = Arc::clone(&pool);
            thread::spawn(move || {
                polled_rx.recv().unwrap();
                // The worker polled the future, found it pending, and parks.
                wait_parked(&pool, 1);
                value_tx.send(7).unwrap();
            })
        };
        let value = pool.install(move || {
            let mut value_rx = value_rx;
            let mut first = Some(polled_tx);
            stealpool::block_on(poll_fn(move |cx| {
                let poll = Pin::new(&mut value_rx).poll(cx);
                if let Some(tx) = first.take() {
                    tx.send(()).unwrap();
                }
                poll
            }))
        });
        assert_eq!(value.unwrap(), 7);
        sender.join().unwrap();
    });
}

/// `block_on` outside a pool parks its caller until the waker, called from another
/// thread, wakes it. Forced: the value is sent only after the first poll returned
/// `Pending` (asserted) and the calling thread was seen blocked (Linux `/proc`; elsewhere
/// the test skips).
#[test]
fn block_on_outside_a_pool_parks_until_woken() {
    if my_tid().is_none() {
        common::skip("no /proc: the caller cannot be seen blocked");
        return;
    }
    watchdog(60, || {
        let caller = my_tid().unwrap();
        let (polled_tx, polled_rx) = mpsc::channel::<()>();
        let (value_tx, mut value_rx) = tokio::sync::oneshot::channel();
        let sender = thread::spawn(move || {
            polled_rx.recv().unwrap();
            // The caller found the future pending; once it is blocked, wake it.
            wait_blocked(&caller);
            value_tx.send("hello").unwrap();
        });
        let mut first_poll = None;
        let value = stealpool::block_on(poll_fn(|cx| {
            let poll = Pin::new(&mut value_rx).poll(cx);
            if first_poll.is_none() {
                first_poll = Some(poll.is_pending());
                polled_tx.send(()).unwrap();
            }
            poll
        }));
        assert_eq!(first_poll, Some(true), "the first poll was not pending");
        assert_eq!(value.unwrap(), "hello");
        sender.join().unwrap();
    });
}

/// Wakers may outlive `block_on`: waking one afterwards, on a worker's pool or outside,
/// touches nothing that is gone.
#[test]
fn a_waker_that_outlives_block_on_is_harmless() {
    watchdog(60, || {
        let kept: Arc<Mutex<Vec<Waker>>> = Arc::default();
        let keep_waker = |kept: Arc<Mutex<Vec<Waker>>>| {
            let mut polls = 0;
            poll_fn(move |cx| {
                polls += 1;
                kept.lock().unwrap().push(cx.waker().clone());
                if polls == 1 {
                    cx.waker().wake_by_ref();
                    Poll::Pending
                } else {
                    Poll::Ready(polls)
                }
            })
        };
        let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let k = Arc::clone(&kept);
        assert_eq!(pool.install(move || stealpool::block_on(keep_waker(k))), 2);
        assert_eq!(stealpool::block_on(keep_waker(Arc::clone(&kept))), 2);
        let wakers: Vec<Waker> = kept.lock().unwrap().drain(..).collect();
        let wakers = thread::spawn(move || {
            for waker in &wakers {
                waker.wake_by_ref();
            }
            wakers
        })
        .join()
        .unwrap();
        drop(pool);
        for waker in wakers {
            waker.wake();
        }
    });
}

/// What a test waker does from its `clone` or its `drop`: release the handle's job (blocked
/// on a channel), then `install` on the job's one-worker pool. Leaked: a `RawWaker`'s data.
struct PoolWaker {
    pool: Arc<stealpool::ThreadPool>,
    release: Mutex<Option<mpsc::Sender<()>>>,
    on_clone: bool,
}

impl PoolWaker {
    fn act(&self) {
        if let Some(release) = self.release.lock().unwrap().take() {
            release.send(()).unwrap();
            // The worker can run this only once the job has completed, which takes the
            // handle's lock: a waker called under that lock never returns.
            self.pool.install(|| ());
        }
    }
}

static POOL_WAKER: std::task::RawWakerVTable = std::task::RawWakerVTable::new(
    |data| {
        // SAFETY: `data` is a leaked `PoolWaker` (`pool_waker`).
        let waker = unsafe { &*data.cast::<PoolWaker>() };
        if waker.on_clone {
            waker.act();
        }
        std::task::RawWaker::new(data, &POOL_WAKER)
    },
    |_| {},
    |_| {},
    |data| {
        // SAFETY: as above.
        let waker = unsafe { &*data.cast::<PoolWaker>() };
        if !waker.on_clone {
            waker.act();
        }
    },
);

/// A one-worker pool whose only worker runs a job held until the returned sender sends,
/// and that job's handle.
fn held_job() -> (
    Arc<stealpool::ThreadPool>,
    stealpool::JoinHandle<()>,
    mpsc::Sender<()>,
) {
    let pool = Arc::new(ThreadPoolBuilder::new().num_threads(1).build().unwrap());
    let (release, released) = mpsc::channel::<()>();
    let handle = pool.spawn_with_handle(move || released.recv().unwrap());
    (pool, handle, release)
}

/// A waker over a leaked `PoolWaker` for `pool` that acts from its `clone` if `on_clone`,
/// else from its `drop`, releasing the held job through `release` if given.
fn pool_waker(
    pool: &Arc<stealpool::ThreadPool>,
    release: Option<mpsc::Sender<()>>,
    on_clone: bool,
) -> Waker {
    let waker = PoolWaker {
        pool: Arc::clone(pool),
        release: Mutex::new(release),
        on_clone,
    };
    let data: *const PoolWaker = Box::leak(Box::new(waker));
    // SAFETY: the vtable's functions take `data` as the leaked `PoolWaker` it is, which
    // lives for the rest of the process.
    unsafe { Waker::from_raw(std::task::RawWaker::new(data.cast(), &POOL_WAKER)) }
}

/// A waker's `clone` (the executor's code) that waits for the handle's own pool: the
/// handle must not call it while holding the lock the job's completion takes.
#[test]
fn a_waker_whose_clone_waits_for_the_pool_does_not_deadlock_the_handle() {
    watchdog(60, || {
        let (pool, mut handle, release) = held_job();
        let waker = pool_waker(&pool, Some(release), true);
        // The job waits for the release, so the poll finds no result and clones the waker,
        // which releases the job and waits for the pool; the poll then finds the result.
        let poll = Pin::new(&mut handle).poll(&mut std::task::Context::from_waker(&waker));
        assert!(matches!(poll, Poll::Ready(Ok(()))));
    });
}

/// The same from the `drop` of the waker a second poll replaces.
#[test]
fn a_replaced_waker_whose_drop_waits_for_the_pool_does_not_deadlock_the_handle() {
    watchdog(60, || {
        let (pool, mut handle, release) = held_job();
        let first = pool_waker(&pool, Some(release), false);
        let poll = Pin::new(&mut handle).poll(&mut std::task::Context::from_waker(&first));
        assert!(poll.is_pending());
        // The handle keeps a clone of `first`; a poll with another waker drops that clone
        // (ours stays alive until the end, so the clone's drop is the first to act).
        let second = pool_waker(&pool, None, false);
        let poll = Pin::new(&mut handle).poll(&mut std::task::Context::from_waker(&second));
        // The replaced waker's drop released the job and waited for it to complete.
        assert!(poll.is_pending());
        assert!(handle.is_finished());
        drop(first);
        handle.join().unwrap();
    });
}
