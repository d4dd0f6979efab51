//! An isolation region's shared state (`docs/isolation.md`): the jobs handed out inside
//! the region, its broadcast jobs, the workers parked in an isolated wait for them, and
//! the regions nested in it.
//!
//! A worker whose current region is R hands a job out by pushing it here and pushing a
//! *stub* on its own deque (`pool::worker::isolate`): a free worker that takes the stub
//! runs one of R's jobs, and a worker waiting inside R takes R's jobs from here, never
//! from a deque. A wait inside R also takes the jobs of the regions nested in R (an
//! `isolate` called inside it, a job handed to another pool and what that one hands back):
//! they were handed out inside R's call too.
//!
//! Each region's state is under its own mutex, taken one at a time. The mutexes pair a
//! push with a waiter's registration: the pusher pushes, then reads the parked waiters of
//! the region and of every enclosing one; the waiter registers, then looks at the region
//! and at every nested one. Either the pusher finds the waiter registered, or the waiter
//! finds the job.

use crate::job::JobRef;
use crate::sleep::Sleep;
use crate::sync::checked::{AtomicUsize, Mutex};
use crate::sync::unchecked::Arc;
use crate::sync::Ordering;
use std::collections::VecDeque;
use std::sync::Weak;

/// One isolation region of one pool.
pub(crate) struct Region {
    /// The sleep state of the region's pool, whose workers wait in it.
    sleep: Arc<Sleep>,
    /// The region this one is nested in (maybe of another pool), if any.
    parent: Option<Arc<Region>>,
    /// Whether a region this one is nested in belongs to another pool: its parked waiters
    /// are counted in that pool's sleep state, not in `sleep`.
    crosses_pools: bool,
    /// Whether this is one of the two regions of a split `join` (`place_half`, in a pool
    /// that isolates every job): its waits also take the jobs queued directly in the
    /// region around it ([`find_nested`](Self::find_nested)).
    half: bool,
    /// The queues, the parked waiters and the nested regions.
    state: Mutex<State>,
    /// How many jobs `state.jobs` holds, written under the mutex and read without it
    /// ([`has_no_jobs`](Self::has_no_jobs)).
    queued: AtomicUsize,
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
    /// The regions nested in this one that may still be alive.
    children: Vec<Weak<Region>>,
}

impl Region {
    /// A new region of the pool whose sleep state is `sleep`, nested in `parent` if any.
    pub(crate) fn new(sleep: Arc<Sleep>, parent: Option<Arc<Region>>) -> Arc<Region> {
        Region::nested(sleep, parent, false)
    }

    /// A new region for one half of a split `join` (`place_half`), nested in `parent`, the
    /// region around the `join`, of the same pool.
    pub(crate) fn new_half(sleep: Arc<Sleep>, parent: Arc<Region>) -> Arc<Region> {
        debug_assert!(Arc::ptr_eq(&sleep, &parent.sleep), "a half of another pool");
        Region::nested(sleep, Some(parent), true)
    }

    /// [`new`](Self::new) and [`new_half`](Self::new_half).
    fn nested(sleep: Arc<Sleep>, parent: Option<Arc<Region>>, half: bool) -> Arc<Region> {
        let crosses_pools = parent
            .as_ref()
            .is_some_and(|parent| parent.crosses_pools || !Arc::ptr_eq(&parent.sleep, &sleep));
        let region = Arc::new(Region {
            sleep,
            parent,
            crosses_pools,
            half,
            state: Mutex::new(State::default()),
            queued: AtomicUsize::new(0),
        });
        if let Some(parent) = &region.parent {
            let mut state = parent.state.lock();
            state.children.retain(|child| child.strong_count() > 0);
            state.children.push(Arc::downgrade(&region));
        }
        region
    }

    /// Queues `job` and wakes the parked waiters of this region and of every region it
    /// is nested in.
    pub(crate) fn push(&self, job: JobRef) {
        self.queue(|state| state.jobs.push_back(job));
    }

    /// Whether no job is queued here (racy: for the `join`'s poll, which offers a half
    /// to an idle worker only while none is waiting here already).
    pub(crate) fn has_no_jobs(&self) -> bool {
        // Relaxed: a stale answer delays or adds one promotion, nothing else.
        self.queued.load(Ordering::Relaxed) == 0
    }

    /// Whether this region is `ancestor` or nested in it (through any pool).
    pub(crate) fn is_within(&self, ancestor: &Region) -> bool {
        let mut region = Some(self);
        while let Some(r) = region {
            if std::ptr::eq(r, ancestor) {
                return true;
            }
            region = r.parent.as_deref();
        }
        false
    }

    /// Queues broadcast job `job` for worker `index`, and wakes as [`push`](Self::push)
    /// does.
    pub(crate) fn push_broadcast(&self, index: usize, job: JobRef) {
        self.queue(|state| state.broadcasts.push((index, job)));
    }

    /// Queues what `add` adds, then wakes the parked waiters of this region (taken in the
    /// same critical section) and of every enclosing one (each under its own mutex): the
    /// pusher's half of the pairing with `register_parked`.
    fn queue(&self, add: impl FnOnce(&mut State)) {
        let parked = self.with_state(|state| {
            add(state);
            std::mem::take(&mut state.parked)
        });
        self.wake_parked(parked);
        // No waiter of the pool is registered anywhere: none to wake in the enclosing
        // regions (`Sleep::has_isolated_parked` says why the load may come this late).
        if !self.crosses_pools && !self.sleep.has_isolated_parked() {
            return;
        }
        let mut outer = self.parent.as_deref();
        while let Some(region) = outer {
            let parked = std::mem::take(&mut region.state.lock().parked);
            region.wake_parked(parked);
            outer = region.parent.as_deref();
        }
    }

    /// Wakes `parked`, waiters of this region no longer registered.
    fn wake_parked(&self, parked: Vec<usize>) {
        for index in parked {
            self.sleep.wake_waiter(index);
        }
    }

    /// For a waiter of the region, worker `index` of its pool: its broadcast job if one
    /// is queued, else the newest job of this region (as a worker's own pop would take
    /// it); else, from the regions nested in this one, shallowest first, the oldest job
    /// (as a thief takes a victim's oldest: those jobs were handed out by whoever runs the
    /// region's jobs, and the oldest is the largest piece, such as the right half of a
    /// whole loop, where the newest is the smallest). Returns the job with its region.
    pub(crate) fn take_for_waiter(self: &Arc<Self>, index: usize) -> Option<(Arc<Region>, JobRef)> {
        self.find_nested(|state, own| {
            take_broadcast(state, index).or_else(|| {
                if own {
                    state.jobs.pop_back()
                } else {
                    state.jobs.pop_front()
                }
            })
        })
    }

    /// Calls `look` on the state of this region (`own`: true) and of every region of its
    /// pool nested in it (false), breadth first (the regions nested directly in this one,
    /// oldest first, then theirs), one mutex at a time, until `look` finds something;
    /// returns it with its region. A nested region of another pool is passed through, not
    /// looked at (its jobs run on that pool's workers), and dead nested regions are
    /// forgotten.
    ///
    /// Then, for a half of a split `join`, the region around it (`own`: its jobs are the
    /// caller's own), and so on up while that one is a half too, each without the regions
    /// nested in it: a `join`'s halves are isolated from each other, not from the code
    /// around the `join`, whose earlier hand-outs (a join handle's job, a spawn) a wait
    /// inside a half may be waiting for. Only the worker whose current region that is
    /// pushes there, and it is the one inside the half: no push there races with a
    /// waiter's registration.
    fn find_nested<T>(
        self: &Arc<Self>,
        mut look: impl FnMut(&mut State, bool) -> Option<T>,
    ) -> Option<(Arc<Region>, T)> {
        let mut regions = VecDeque::from([self.clone()]);
        while let Some(region) = regions.pop_front() {
            let own = Arc::ptr_eq(&region, self);
            let of_this_pool = Arc::ptr_eq(&region.sleep, &self.sleep);
            let found = region.with_state(|state| {
                let found = if of_this_pool { look(state, own) } else { None };
                if found.is_none() {
                    state.children.retain(|child| child.strong_count() > 0);
                    regions.extend(state.children.iter().filter_map(Weak::upgrade));
                }
                found
            });
            if let Some(found) = found {
                return Some((region, found));
            }
        }
        let mut region = self;
        while region.half {
            let around = region
                .parent
                .as_ref()
                .expect("a half has a region around it");
            if let Some(found) = around.with_state(|state| look(state, true)) {
                return Some((around.clone(), found));
            }
            region = around;
        }
        None
    }

    /// Runs `f` on the state under its mutex, then updates [`queued`](Self::queued): every
    /// change to the queue of jobs goes through here.
    fn with_state<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut state = self.state.lock();
        let result = f(&mut state);
        self.queued.store(state.jobs.len(), Ordering::Relaxed);
        result
    }

    /// For a stub: the oldest job (as a thief would take it).
    pub(crate) fn take_oldest(&self) -> Option<JobRef> {
        self.with_state(|state| state.jobs.pop_front())
    }

    /// For a broadcast stub on worker `index`: its broadcast job.
    pub(crate) fn take_broadcast(&self, index: usize) -> Option<JobRef> {
        take_broadcast(&mut self.state.lock(), index)
    }

    /// Takes the job whose identity ([`JobRef::id`]) is `id` back out of the queue, if it
    /// is still there (newest first: a `join` takes back its own half).
    pub(crate) fn take_back(&self, id: (*const (), usize)) -> Option<JobRef> {
        self.with_state(|state| {
            let pos = state.jobs.iter().rposition(|job| job.id() == id)?;
            state.jobs.remove(pos)
        })
    }

    /// Registers worker `index` as parked in an isolated wait, then looks for a job it
    /// could take here or in a nested region: if there is one, undoes the registration
    /// and returns false. A push after the registration wakes the worker; one before it is
    /// what the look finds.
    pub(crate) fn register_parked(self: &Arc<Self>, index: usize) -> bool {
        self.sleep.isolated_waiter_registers();
        self.state.lock().parked.push(index);
        if self.has_work_for(index) {
            self.unregister_parked(index);
            return false;
        }
        true
    }

    /// Whether a job worker `index` of this region's pool could take is queued here or
    /// in a nested region.
    fn has_work_for(self: &Arc<Self>, index: usize) -> bool {
        self.find_nested(|state, _| {
            let any = !state.jobs.is_empty() || state.broadcasts.iter().any(|&(i, _)| i == index);
            any.then_some(())
        })
        .is_some()
    }

    /// Removes worker `index` from the parked waiters, if a push has not already.
    pub(crate) fn unregister_parked(&self, index: usize) {
        self.state.lock().parked.retain(|&i| i != index);
        self.sleep.isolated_waiter_unregistered();
    }
}

/// The first broadcast job queued for worker `index`, if any.
fn take_broadcast(state: &mut State, index: usize) -> Option<JobRef> {
    let pos = state.broadcasts.iter().position(|&(i, _)| i == index)?;
    Some(state.broadcasts.remove(pos).1)
}
