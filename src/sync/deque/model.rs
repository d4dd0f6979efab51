//! crossbeam-deque's API over a loom mutex, for the loom models (see `mod.rs`). Only the
//! methods the scheduler calls. A steal takes one job (crossbeam's batch steals may take
//! more; one is the case where the owner and a thief race for the same job).

use loom::sync::{Arc, Mutex};
use std::collections::VecDeque;

/// crossbeam-deque's `Steal`.
#[derive(Debug)]
pub(crate) enum Steal<T> {
    Empty,
    Success(T),
    Retry,
}

type Queue<T> = Arc<Mutex<VecDeque<T>>>;

/// Takes the oldest job, or `Retry` if another thread holds the lock (a lost race).
fn steal_from<T>(queue: &Queue<T>) -> Steal<T> {
    match queue.try_lock() {
        Ok(mut jobs) => jobs.pop_front().map_or(Steal::Empty, Steal::Success),
        Err(_) => Steal::Retry,
    }
}

/// The owner's end: LIFO (`new_lifo`) or FIFO (`new_fifo`) pops.
#[derive(Debug)]
pub(crate) struct Worker<T> {
    queue: Queue<T>,
    lifo: bool,
}

impl<T> Worker<T> {
    pub(crate) fn new_lifo() -> Self {
        Worker {
            queue: Arc::new(Mutex::new(VecDeque::new())),
            lifo: true,
        }
    }

    pub(crate) fn new_fifo() -> Self {
        Worker {
            lifo: false,
            ..Worker::new_lifo()
        }
    }

    pub(crate) fn push(&self, job: T) {
        self.queue.lock().unwrap().push_back(job);
    }

    pub(crate) fn pop(&self) -> Option<T> {
        let mut jobs = self.queue.lock().unwrap();
        if self.lifo {
            jobs.pop_back()
        } else {
            jobs.pop_front()
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queue.lock().unwrap().is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.queue.lock().unwrap().len()
    }

    pub(crate) fn stealer(&self) -> Stealer<T> {
        Stealer {
            queue: self.queue.clone(),
        }
    }
}

/// Another worker's end of a `Worker`.
#[derive(Debug)]
pub(crate) struct Stealer<T> {
    queue: Queue<T>,
}

impl<T> Clone for Stealer<T> {
    fn clone(&self) -> Self {
        Stealer {
            queue: self.queue.clone(),
        }
    }
}

impl<T> Stealer<T> {
    pub(crate) fn steal(&self) -> Steal<T> {
        steal_from(&self.queue)
    }

    pub(crate) fn steal_batch_and_pop(&self, _dest: &Worker<T>) -> Steal<T> {
        self.steal()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queue.lock().unwrap().is_empty()
    }
}

/// The shared FIFO queue for work from outside the pool: a queue with only stealers'
/// ends, plus `push` (its steals are a `Stealer`'s).
#[derive(Debug)]
pub(crate) struct Injector<T> {
    stealer: Stealer<T>,
}

impl<T> Injector<T> {
    pub(crate) fn new() -> Self {
        Injector {
            stealer: Stealer {
                queue: Arc::new(Mutex::new(VecDeque::new())),
            },
        }
    }

    pub(crate) fn push(&self, job: T) {
        self.stealer.queue.lock().unwrap().push_back(job);
    }
}

impl<T> std::ops::Deref for Injector<T> {
    type Target = Stealer<T>;

    /// `steal`, `steal_batch_and_pop` and `is_empty` are the stealer's.
    fn deref(&self) -> &Stealer<T> {
        &self.stealer
    }
}
