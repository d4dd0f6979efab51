//! `ThreadPool::shutdown`: it returns once every job finished and every worker ran its
//! exit handler and thread-local destructors; on its own worker it is an error. Every test
//! runs under a watchdog.

mod common;

use common::watchdog;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::thread;
use stealpool::ThreadPoolBuilder;

#[test]
fn shutdown_returns_after_every_exit_handler_ran_and_queued_work_finished() {
    watchdog(60, || {
        for n in [1, 2, 5] {
            let exited = Arc::new(AtomicUsize::new(0));
            let ran = Arc::new(AtomicUsize::new(0));
            let e = Arc::clone(&exited);
            let pool = ThreadPoolBuilder::new()
                .num_threads(n)
                .exit_handler(move |_| {
                    e.fetch_add(1, Ordering::SeqCst);
                })
                .build()
                .unwrap();
            for _ in 0..100 {
                let ran = Arc::clone(&ran);
                pool.spawn(move || {
                    ran.fetch_add(1, Ordering::SeqCst);
                });
            }
            pool.shutdown().unwrap();
            assert_eq!(exited.load(Ordering::SeqCst), n, "{n} threads");
            assert_eq!(ran.load(Ordering::SeqCst), 100);
        }
    });
}

#[test]
fn shutdown_runs_thread_local_destructors() {
    struct Flag(Arc<AtomicUsize>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    thread_local!(static FLAG: std::cell::RefCell<Option<Flag>> = const { std::cell::RefCell::new(None) });
    watchdog(30, || {
        let dropped = Arc::new(AtomicUsize::new(0));
        let d = Arc::clone(&dropped);
        let pool = ThreadPoolBuilder::new()
            .num_threads(3)
            .start_handler(move |_| FLAG.with(|f| *f.borrow_mut() = Some(Flag(Arc::clone(&d)))))
            .build()
            .unwrap();
        pool.broadcast(|_| ());
        pool.shutdown().unwrap();
        assert_eq!(dropped.load(Ordering::SeqCst), 3);
    });
}

#[test]
fn shutdown_with_a_spawn_handler_waits_for_exit_handlers() {
    watchdog(30, || {
        let exited = Arc::new(AtomicUsize::new(0));
        let e = Arc::clone(&exited);
        let pool = ThreadPoolBuilder::new()
            .num_threads(3)
            .exit_handler(move |_| {
                e.fetch_add(1, Ordering::SeqCst);
            })
            .spawn_handler(|t| {
                thread::spawn(move || t.run());
                Ok(())
            })
            .build()
            .unwrap();
        pool.shutdown().unwrap();
        assert_eq!(exited.load(Ordering::SeqCst), 3);
    });
}

#[test]
fn shutdown_from_its_own_worker_is_an_error_and_the_pool_still_winds_down() {
    watchdog(30, || {
        let exited = Arc::new(AtomicUsize::new(0));
        let e = Arc::clone(&exited);
        let pool = ThreadPoolBuilder::new()
            .num_threads(2)
            .exit_handler(move |_| {
                e.fetch_add(1, Ordering::SeqCst);
            })
            .build()
            .unwrap();
        let (tx, rx) = channel();
        let slot = Arc::new(Mutex::new(Some(pool)));
        let s = Arc::clone(&slot);
        // Hand the pool to one of its own jobs, which calls shutdown there.
        let pool_ref = slot.lock().unwrap();
        pool_ref.as_ref().unwrap().spawn(move || {
            let pool = s.lock().unwrap().take().unwrap();
            tx.send(pool.shutdown().is_err()).unwrap();
        });
        drop(pool_ref);
        assert!(rx.recv().unwrap());
        assert!(common::wait_until(
            std::time::Duration::from_secs(10),
            || { exited.load(Ordering::SeqCst) == 2 }
        ));
    });
}

#[test]
fn shutdown_on_the_building_thread_of_a_use_current_thread_pool() {
    watchdog(60, || {
        // On a fresh thread: it becomes worker 0 for life.
        thread::spawn(|| {
            let exited = Arc::new(AtomicUsize::new(0));
            let ran = Arc::new(AtomicUsize::new(0));
            let e = Arc::clone(&exited);
            let pool = ThreadPoolBuilder::new()
                .num_threads(3)
                .use_current_thread()
                .exit_handler(move |_| {
                    e.fetch_add(1, Ordering::SeqCst);
                })
                .build()
                .unwrap();
            assert_eq!(pool.current_thread_index(), Some(0));
            // One copy is queued for this very thread, which is not in the pool's loop:
            // shutdown must run it rather than wait for it forever.
            let r = Arc::clone(&ran);
            pool.spawn_broadcast(move |_| {
                r.fetch_add(1, Ordering::SeqCst);
            });
            pool.shutdown().unwrap();
            assert_eq!(ran.load(Ordering::SeqCst), 3);
            // Workers 1 and 2 ran their exit handler; worker 0 (this thread) never does.
            assert_eq!(exited.load(Ordering::SeqCst), 2);
            // The thread is still worker 0 of the terminated pool: work still runs here,
            // and a broadcast fails loudly instead of hanging.
            assert_eq!(stealpool::join(|| 1, || 2), (1, 2));
            let (tx, rx) = channel();
            stealpool::spawn(move || tx.send(3).unwrap());
            assert_eq!(rx.recv().unwrap(), 3);
            let hung = std::panic::catch_unwind(|| stealpool::broadcast(|_| ()));
            assert!(hung.is_err());
        })
        .join()
        .unwrap();
    });
}
