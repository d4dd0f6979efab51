//! crossbeam-deque's API over a loom mutex, for the loom models (see `mod.rs`). Only the
//! methods the scheduler calls. A steal takes one job (crossbeam's batch steals may take
//! more; one is the case where the owner and a thief race for the same job).

use loom::sync::{Arc, Mutex};
use std::collections::VecDeque;

/// crossbeam-deque's `Steal`.
#[derive(Debug)]
pub(crate) enum Steal<T> {
    /// The queue is empty.
    Empty,
    /// The oldest job, taken.
    Success(T),
    /// Another thread held the queue's lock: a lost race, try again.
    Retry,
}

/// A deque's jobs, oldest first, behind the loom mutex its `Worker` and `Stealer`s share.
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
    /// The jobs.
    queue: Queue<T>,
    /// Whether `pop` takes the newest job (LIFO) rather than the oldest (FIFO).
    lifo: bool,
}

impl<T> Worker<T> {
    /// An empty deque whose owner pops the newest job first.
    pub(crate) fn new_lifo() -> Self {
        Worker {
            queue: Arc::new(Mutex::new(VecDeque::new())),
            lifo: true,
        }
    }

    /// An empty deque whose owner pops the oldest job first.
    pub(crate) fn new_fifo() -> Self {
        Worker {
            lifo: false,
            ..Worker::new_lifo()
        }
    }

    /// Pushes `job` as the newest job.
    pub(crate) fn push(&self, job: T) {
        self.queue.lock().unwrap().push_back(job);
    }

    /// The owner's pop: the newest job (LIFO) or the oldest (FIFO), if any.
    pub(crate) fn pop(&self) -> Option<T> {
        let mut jobs = self.queue.lock().unwrap();
        if self.lifo {
            jobs.pop_back()
        } else {
            jobs.pop_front()
        }
    }

    /// Whether the deque holds no job.
    pub(crate) fn is_empty(&self) -> bool {
        self.queue.lock().unwrap().is_empty()
    }

    /// The number of jobs in the deque.
    pub(crate) fn len(&self) -> usize {
        self.queue.lock().unwrap().len()
    }

    /// A stealing end of this deque.
    pub(crate) fn stealer(&self) -> Stealer<T> {
        Stealer {
            queue: self.queue.clone(),
        }
    }
}

/// Another worker's end of a `Worker`.
#[derive(Debug)]
pub(crate) struct Stealer<T> {
    /// The jobs, shared with the deque's `Worker`.
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
    /// Takes the oldest job ([`steal_from`]).
    pub(crate) fn steal(&self) -> Steal<T> {
        steal_from(&self.queue)
    }

    /// crossbeam's batch steal as a single steal: takes the oldest job and moves none into
    /// `_dest`.
    pub(crate) fn steal_batch_and_pop(&self, _dest: &Worker<T>) -> Steal<T> {
        self.steal()
    }

    /// Whether the deque holds no job.
    pub(crate) fn is_empty(&self) -> bool {
        self.queue.lock().unwrap().is_empty()
    }
}

/// The shared FIFO queue for work from outside the pool: a queue with only stealers'
/// ends, plus `push` (its steals are a `Stealer`'s).
#[derive(Debug)]
pub(crate) struct Injector<T> {
    /// The queue, through a stealing end.
    stealer: Stealer<T>,
}

impl<T> Injector<T> {
    /// An empty injector.
    pub(crate) fn new() -> Self {
        Injector {
            stealer: Stealer {
                queue: Arc::new(Mutex::new(VecDeque::new())),
            },
        }
    }

    /// Pushes `job` as the newest job.
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
