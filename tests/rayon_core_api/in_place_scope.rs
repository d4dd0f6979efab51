//! rayon-core 1.13's API: in_place_scope, in_place_scope_fifo.

use super::*;

#[test]
fn in_place_scope_runs_the_body_on_the_calling_thread() {
    watchdog(TIMEOUT, || {
        let caller = thread::current().id();
        // The body need not be Send.
        let not_send = Rc::new(Cell::new(0));
        let mut slot = 0;
        let job_index = Mutex::new(None);
        let body = rayon_core::in_place_scope(|s| {
            not_send.set(5);
            let slot = &mut slot;
            s.spawn(|_| *job_index.lock().unwrap() = rayon_core::current_thread_index());
            s.spawn(move |_| *slot = 7);
            (thread::current().id(), rayon_core::current_thread_index())
        });
        assert_eq!(body, (caller, None));
        assert_eq!((not_send.get(), slot), (5, 7));
        // Jobs go to the global pool.
        let job_index = job_index.into_inner().unwrap();
        assert!(
            matches!(job_index, Some(i) if i < rayon_core::current_num_threads()),
            "{job_index:?}"
        );

        let order = Mutex::new(Vec::new());
        let body = rayon_core::in_place_scope_fifo(|s| {
            not_send.set(6);
            s.spawn_fifo(|_| {
                order
                    .lock()
                    .unwrap()
                    .push(rayon_core::current_thread_index())
            });
            thread::current().id()
        });
        assert_eq!(body, caller);
        assert_eq!(not_send.get(), 6);
        let order = order.into_inner().unwrap();
        assert!(matches!(order[..], [Some(_)]), "{order:?}");
    });
}

#[test]
fn thread_pool_in_place_scope_sends_jobs_to_that_pool() {
    watchdog(TIMEOUT, || {
        let caller = thread::current().id();
        let pool = pool(3);
        let not_send = Rc::new(1);
        let seen = Mutex::new(Vec::new());
        let body = pool.in_place_scope(|s| {
            for _ in 0..6 {
                s.spawn(|_| seen.lock().unwrap().push(pool.current_thread_index()));
            }
            (
                *not_send,
                thread::current().id(),
                pool.current_thread_index(),
            )
        });
        assert_eq!(body, (1, caller, None));
        assert_all_ran_on_the_pool(seen, 6, 3);

        let seen = Mutex::new(Vec::new());
        let body = pool.in_place_scope_fifo(|s| {
            for _ in 0..6 {
                s.spawn_fifo(|_| seen.lock().unwrap().push(pool.current_thread_index()));
            }
            (
                *not_send,
                thread::current().id(),
                pool.current_thread_index(),
            )
        });
        assert_eq!(body, (1, caller, None));
        assert_all_ran_on_the_pool(seen, 6, 3);
    });
}

#[test]
fn in_place_scope_on_a_worker_of_another_pool() {
    watchdog(TIMEOUT, || {
        let outer = pool(2);
        let inner = pool(2);
        let (body_outer_index, body_inner_index, jobs) = outer.install(|| {
            let jobs = Mutex::new(Vec::new());
            let body = inner.in_place_scope(|s| {
                for _ in 0..4 {
                    s.spawn(|_| jobs.lock().unwrap().push(inner.current_thread_index()));
                }
                (outer.current_thread_index(), inner.current_thread_index())
            });
            (body.0, body.1, jobs.into_inner().unwrap())
        });
        // The body stays on the calling worker of `outer`...
        assert!(body_outer_index.is_some());
        assert_eq!(body_inner_index, None);
        // ...and the jobs run on `inner`.
        assert_eq!(jobs.len(), 4);
        assert!(jobs.iter().all(Option::is_some), "{jobs:?}");
    });
}

#[test]
fn in_place_scope_on_a_single_thread_pool_does_not_deadlock() {
    watchdog(TIMEOUT, || {
        let pool = pool(1);
        // The body blocks until a job has run: only possible because the body
        // does not occupy the pool's only worker.
        let (tx, rx) = mpsc::channel();
        pool.in_place_scope(|s| {
            s.spawn(move |_| tx.send(()).unwrap());
            rx.recv().unwrap();
        });
        let (tx, rx) = mpsc::channel();
        pool.in_place_scope_fifo(|s| {
            s.spawn_fifo(move |_| tx.send(()).unwrap());
            rx.recv().unwrap();
        });
    });
}
