//! An isolation region's shared state (`docs/isolation.md`): the jobs handed out inside
//! the region, its broadcast jobs, and the workers parked in an isolated wait for them.
//!
//! A worker whose current region is R hands a job out by pushing it here and pushing a
//! *stub* on its own deque (`pool::worker::isolate`): a free worker that takes the stub
//! runs one of R's jobs, and a worker waiting inside R takes R's jobs from here, never
//! from a deque. Everything is under one mutex: hand-outs are rare next to `join`s (a
//! `join` inside a region hands its half out), and the mutex is what pairs a push with a
//! waiter's registration, so that no waiter parks while a job it could run is queued.

use crate::job::JobRef;
use crate::sync::checked::Mutex;
use std::collections::VecDeque;

/// One isolation region of one pool.
pub(crate) struct Region {
    /// The queues and the parked waiters.
    state: Mutex<State>,
}

/// [`Region`]'s state, under its mutex.
#[derive(Default)]
struct State {
    /// Jobs handed out inside the region, oldest first.
    jobs: VecDeque<JobRef>,
    /// Broadcast jobs sent from inside the region: `(worker index, job)`.
    broadcasts: Vec<(usize, JobRef)>,
    /// Workers parked in an isolated wait of this region, by index.
    parked: Vec<usize>,
}

impl Region {
    /// A region with nothing queued.
    pub(crate) fn new() -> Region {
        Region {
            state: Mutex::new(State::default()),
        }
    }

    /// Queues `job`; returns the parked waiters, who must be woken (and are no longer
    /// registered).
    pub(crate) fn push(&self, job: JobRef) -> Vec<usize> {
        let mut state = self.state.lock();
        state.jobs.push_back(job);
        std::mem::take(&mut state.parked)
    }

    /// Queues broadcast job `job` for worker `index`; returns the parked waiters, as
    /// [`push`](Self::push) does.
    pub(crate) fn push_broadcast(&self, index: usize, job: JobRef) -> Vec<usize> {
        let mut state = self.state.lock();
        state.broadcasts.push((index, job));
        std::mem::take(&mut state.parked)
    }

    /// For a waiter of the region on worker `index`: its broadcast job if one is queued,
    /// else the newest job (as a worker's own pop would take it).
    pub(crate) fn take_for_waiter(&self, index: usize) -> Option<JobRef> {
        let mut state = self.state.lock();
        take_broadcast(&mut state, index).or_else(|| state.jobs.pop_back())
    }

    /// For a stub: the oldest job (as a thief would take it).
    pub(crate) fn take_oldest(&self) -> Option<JobRef> {
        self.state.lock().jobs.pop_front()
    }

    /// For a broadcast stub on worker `index`: its broadcast job.
    pub(crate) fn take_broadcast(&self, index: usize) -> Option<JobRef> {
        take_broadcast(&mut self.state.lock(), index)
    }

    /// Takes the job whose identity ([`JobRef::id`]) is `id` back out of the queue, if it
    /// is still there (newest first: a `join` takes back its own half).
    pub(crate) fn take_back(&self, id: (*const (), usize)) -> Option<JobRef> {
        let mut state = self.state.lock();
        let pos = state.jobs.iter().rposition(|job| job.id() == id)?;
        state.jobs.remove(pos)
    }

    /// Registers worker `index` as parked in an isolated wait, unless a job it could take
    /// is queued: returns whether it registered. A push after this wakes it; a push
    /// before it is what the answer `false` reports.
    pub(crate) fn register_parked(&self, index: usize) -> bool {
        let mut state = self.state.lock();
        if !state.jobs.is_empty() || state.broadcasts.iter().any(|&(i, _)| i == index) {
            return false;
        }
        state.parked.push(index);
        true
    }

    /// Removes worker `index` from the parked waiters, if a push has not already.
    pub(crate) fn unregister_parked(&self, index: usize) {
        self.state.lock().parked.retain(|&i| i != index);
    }
}

/// The first broadcast job queued for worker `index`, if any.
fn take_broadcast(state: &mut State, index: usize) -> Option<JobRef> {
    let pos = state.broadcasts.iter().position(|&(i, _)| i == index)?;
    Some(state.broadcasts.remove(pos).1)
}
