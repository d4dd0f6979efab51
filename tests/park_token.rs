//! An outside thread that waits for the pool (`install`, a blocking scope, a broadcast)
//! must not use up a `Thread::unpark` meant for its own later `std::thread::park()`:
//! code that hands a thread a token before calling into the pool and parks after (it
//! works with rayon-core, whose outside callers block on a condvar) would hang.
//!
//! The interleaving each case needs, the caller blocked in its wait before the job
//! finishes, is forced where the caller's state is observable (Linux, `/proc`): the job
//! waits until the caller's thread sleeps, and the test asserts that the caller blocked
//! inside the call (its voluntary context switches grew). Elsewhere the test skips.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::{mpsc, Arc};
use std::task::{Context, Poll};
use std::thread;

use common::blocked::{my_tid, voluntary_switches, wait_blocked};
use common::watchdog;
use stealpool::ThreadPoolBuilder;

/// A job body that returns only once the thread `caller` is blocked.
fn until_blocked(caller: String) -> impl Fn() + Send + Sync + Clone {
    move || wait_blocked(&caller)
}

/// Gives the calling thread a park token from another thread, runs `call` with a job
/// body that outlasts the caller's first block, then parks: the park must return (the
/// token was there before the call).
fn token_survives(call: impl FnOnce(&(dyn Fn() + Send + Sync))) {
    let me = thread::current();
    let tid = my_tid().expect("/proc/thread-self");
    let body = until_blocked(tid.clone());
    thread::spawn(move || me.unpark()).join().unwrap();
    let before = voluntary_switches(&tid).expect("/proc/self/task/<tid>/status");
    call(&body);
    let after = voluntary_switches(&tid).expect("/proc/self/task/<tid>/status");
    assert!(after > before, "the caller never blocked inside the call");
    // With the token kept this returns at once; a lost token hangs until the watchdog.
    thread::park();
}

#[test]
fn a_pending_unpark_survives_install_scope_and_broadcast() {
    if my_tid().is_none() {
        common::skip("no /proc: a caller blocked inside the call cannot be waited for");
        return;
    }
    watchdog(60, || {
        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        token_survives(|slow| pool.install(slow));
        token_survives(|slow| {
            stealpool::in_place_scope(|s| {
                s.spawn(|_| slow());
            })
        });
        token_survives(|slow| {
            pool.broadcast(|_| slow());
        });
        let (tx, rx) = mpsc::channel();
        // The handle's job must be `'static`: its own body, for the same caller.
        token_survives(|_| {
            let body = until_blocked(my_tid().unwrap());
            pool.spawn_with_handle(move || {
                body();
                tx.send(()).unwrap();
            })
            .join()
            .unwrap()
        });
        rx.recv().unwrap();
    });
}

/// A token given to the caller while it is parked inside the call (here by the job
/// itself, just before it returns) survives too: it lands while the caller wakes for the
/// setter's own `unpark`, and the two merge into one token (tokens do not add up), which
/// the wait's `park` uses up. rayon-core's callers block on a condvar and keep it. The
/// job unparks only once the caller's thread sleeps, which forces the interleaving.
#[test]
fn an_unpark_given_while_the_caller_waits_survives_the_call() {
    let Some(tid) = my_tid() else {
        common::skip("no /proc: a caller blocked inside the call cannot be waited for");
        return;
    };
    watchdog(120, move || {
        let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let me = thread::current();
        // Unparks the caller once it is blocked; a lost token hangs the `park` below
        // until the watchdog fires.
        let unpark_when_blocked = || {
            let (me, tid) = (me.clone(), tid.clone());
            move || {
                wait_blocked(&tid);
                me.unpark();
            }
        };
        for _ in 0..200 {
            pool.install(unpark_when_blocked());
            thread::park();
            let body = unpark_when_blocked();
            stealpool::in_place_scope(|s| s.spawn(move |_| body()));
            thread::park();
            let body = unpark_when_blocked();
            pool.broadcast(move |_| body());
            thread::park();
        }
    });
}

/// The same for `block_on`: the job that wakes the future unparks the waiting thread
/// first, so the two unparks merge.
#[test]
fn an_unpark_given_while_block_on_waits_survives_it() {
    struct WokenWithAnUnpark {
        spawned: bool,
        pool: Arc<stealpool::ThreadPool>,
        caller: thread::Thread,
    }
    impl Future for WokenWithAnUnpark {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.spawned {
                return Poll::Ready(());
            }
            self.spawned = true;
            let (caller, waker) = (self.caller.clone(), cx.waker().clone());
            self.pool.spawn(move || {
                caller.unpark();
                waker.wake();
            });
            Poll::Pending
        }
    }
    watchdog(120, || {
        let pool = Arc::new(ThreadPoolBuilder::new().num_threads(1).build().unwrap());
        for _ in 0..2000 {
            stealpool::block_on(WokenWithAnUnpark {
                spawned: false,
                pool: Arc::clone(&pool),
                caller: thread::current(),
            });
            // A lost token hangs here until the watchdog fires.
            thread::park();
        }
    });
}
