//! The worker's side of isolation (`docs/isolation.md`): its current region, how it
//! hands jobs out inside one (the region's queue and a stub on the deque), and the
//! isolated wait, which runs only the region's jobs.
//!
//! The invariant everything here keeps: **every private `join` half of a worker is of
//! its current region**, which the private stack's lock holds
//! (`PrivateStack::with_regions`), so that whoever takes a half knows where it must run.
//! The worker enters and leaves regions only with no private half (entering promotes
//! them first, under the region they were pushed in). In a pool that isolates every job
//! (`ThreadPoolBuilder::isolate_waits`), a half that leaves the stack splits its `join`
//! ([`place_half`]): the half runs in a new region nested in the current one, and the rest
//! of the first half in another, the worker's current region until that `join` makes the
//! region around it current again. A part of a `join` that stays on its worker runs in
//! the region around it, as a plain call would; every read of the current region for a
//! hand-out or a wait promotes the private halves first ([`WorkerThread::region`]), so
//! what it reads is the region the `join`s that have split put it in.

use super::{RunJobs, WorkerThread};
use crate::job::{Job, JobRef};
use crate::latch::CoreLatch;
use crate::pool::private_stack::{Regions, Split};
use crate::pool::region::Region;
use crate::sleep::{Sleep, ROUNDS_UNTIL_RESCUE};
use crate::sync::checked::yield_now;
use crate::sync::unchecked::Arc;
use crate::unwind;

/// Unsuccessful looks at the region's queue (each followed by a yield) before an isolated
/// waiter parks. (0 under loom.)
const ROUNDS_UNTIL_PARK: u32 = if cfg!(loom) { 0 } else { 8 };

/// A stub on a deque: runs the oldest job of its region, in the region, if one is left.
/// The stub owns one reference count of the region (`Arc::into_raw`).
impl Job for Region {
    unsafe fn execute(this: *const ()) {
        // SAFETY: a region stub's pointer came from `Arc::into_raw` (`stub`), and the stub
        // runs once, so this takes that reference back once.
        let region = unsafe { Arc::from_raw(this.cast::<Region>()) };
        if let Some(job) = region.take_oldest() {
            WorkerThread::with_current(|worker| {
                worker
                    .expect("stealpool: a region's stub ran off-pool")
                    .run_in_region(&region, job)
            });
        }
    }
}

/// A stub on a worker's broadcast queue: runs that worker's broadcast job of its region.
#[repr(transparent)]
struct BroadcastStub(Region);

impl Job for BroadcastStub {
    unsafe fn execute(this: *const ()) {
        // SAFETY: as for `Region`'s stub (`broadcast_stub`).
        let region = unsafe { Arc::from_raw(this.cast::<Region>()) };
        WorkerThread::with_current(|worker| {
            let worker = worker.expect("stealpool: a broadcast stub ran off-pool");
            if let Some(job) = region.take_broadcast(worker.index()) {
                worker.run_in_region(&region, job);
            }
        });
    }
}

/// A stub of `region` for a deque or an injector.
pub(crate) fn stub(region: &Arc<Region>) -> JobRef {
    // SAFETY: the pointer stays valid until the stub runs or is dropped (`drop_stub`):
    // it holds the reference count `into_raw` leaves behind.
    unsafe { JobRef::new(Arc::into_raw(region.clone())) }
}

/// A broadcast stub of `region`.
fn broadcast_stub(region: &Arc<Region>) -> JobRef {
    // SAFETY: as in `stub`; `BroadcastStub` is `Region` (transparent).
    unsafe { JobRef::new(Arc::into_raw(region.clone()).cast::<BroadcastStub>()) }
}

/// Whether `job` is a stub of `region`.
fn is_stub_of(job: &JobRef, region: &Arc<Region>) -> bool {
    let execute: unsafe fn(*const ()) = <Region as Job>::execute;
    job.id() == (Arc::as_ptr(region).cast(), execute as usize)
}

/// Whether `job` is a stub of any region (its job gets its region when it runs).
pub(super) fn is_any_stub(job: &JobRef) -> bool {
    let stub: unsafe fn(*const ()) = <Region as Job>::execute;
    let broadcast_stub: unsafe fn(*const ()) = <BroadcastStub as Job>::execute;
    let execute = job.id().1;
    execute == stub as usize || execute == broadcast_stub as usize
}

/// Gives back the reference count of a stub of some region that will not run.
///
/// # Safety
/// `job` is a stub made by [`stub`] (checked with [`is_stub_of`]).
unsafe fn drop_stub(job: JobRef) {
    // SAFETY: the stub's pointer came from `Arc::into_raw` and it will not run.
    drop(unsafe { Arc::from_raw(job.id().0.cast::<Region>()) });
}

/// Restores the worker's region when a region it entered ends (also by a panic).
pub(crate) struct Leave<'a> {
    /// The worker.
    worker: &'a WorkerThread,
    /// The region it was in before.
    previous: Option<Arc<Region>>,
}

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        let worker = self.worker;
        debug_assert!(
            !worker.private_stack.has_private_halves(),
            "a private half inside a region"
        );
        let previous = self.previous.take();
        let _entered = worker.private_stack.replace_region(previous.clone());
        drop(worker.region.replace(previous));
    }
}

/// Where a half `job` that leaves a private stack whose regions are `regions` runs (under
/// the stack's lock, once the half is claimed): outside every region, nowhere in
/// particular (`None`: the deque); in a pool that isolates every job (`isolate_waits`),
/// a new region nested in the current one, and the owner's current region becomes
/// another one, the rest of the first half, until the `join` takes it back or waits for
/// it (`take_back_in_region`); else the current region.
pub(crate) fn place_half(
    sleep: &Arc<Sleep>,
    isolate_waits: bool,
    job: &JobRef,
    regions: &mut Regions,
) -> Option<Arc<Region>> {
    let current = regions.current.clone()?;
    if !isolate_waits {
        return Some(current);
    }
    let half = Region::new_half(sleep.clone(), current.clone());
    regions.current = Some(Region::new_half(sleep.clone(), current.clone()));
    let id = job.id();
    regions.split.push(Split {
        id: (id.0 as usize, id.1),
        half: half.clone(),
        around: current,
    });
    Some(half)
}

impl WorkerThread {
    /// The region this worker is in, if any. In a pool that isolates every job, the
    /// private halves are promoted first, so that the `join`s they belong to are split and
    /// the region read is the one a hand-out or a wait of the caller belongs in.
    pub(crate) fn region(&self) -> Option<Arc<Region>> {
        if self.isolate_waits {
            self.promote_all();
            return self
                .private_stack
                .with_regions(|regions| regions.current.clone());
        }
        let region = self.region.take();
        self.region.set(region.clone());
        region
    }

    /// Whether this worker is inside a region.
    #[inline]
    pub(crate) fn in_region(&self) -> bool {
        if self.isolate_waits {
            return self
                .private_stack
                .with_regions(|regions| regions.current.is_some());
        }
        let region = self.region.take();
        let inside = region.is_some();
        self.region.set(region);
        inside
    }

    /// Makes `region` this worker's region until the returned guard drops. Private halves
    /// are promoted first, under the region they were pushed in: every private half is of
    /// the current region.
    fn enter(&self, region: Arc<Region>) -> Leave<'_> {
        self.promote_all();
        let previous = self.private_stack.replace_region(Some(region.clone()));
        drop(self.region.replace(Some(region)));
        Leave {
            worker: self,
            previous,
        }
    }

    /// Runs `op` on this worker inside a new region (`stealpool::isolate`), nested in the
    /// current one if any.
    pub(crate) fn isolate<R>(&self, op: impl FnOnce() -> R) -> R {
        let region = Region::new(self.sleep().clone(), self.region());
        let _leave = self.enter(region);
        op()
    }

    /// Makes `region` this worker's region until the returned guard drops, as
    /// [`enter`](Self::enter) does, unless it already is (then `None`: nothing to undo).
    pub(crate) fn enter_unless_in(&self, region: &Arc<Region>) -> Option<Leave<'_>> {
        let inside = matches!(&self.region(), Some(r) if Arc::ptr_eq(r, region));
        (!inside).then(|| self.enter(region.clone()))
    }

    /// Runs `job`, taken from a queue, in a new region nested in the current one, as if
    /// inside its own `isolate` (`ThreadPoolBuilder::isolate_waits`): its waits run only
    /// the jobs handed out inside it.
    #[cold]
    #[inline(never)]
    pub(super) fn execute_in_own_region(&self, job: JobRef) {
        self.isolate(|| self.execute_here(job));
    }

    /// Runs `job`, a job of `region`, inside it.
    pub(super) fn run_in_region(&self, region: &Arc<Region>, job: JobRef) {
        let _leave = self.enter_unless_in(region);
        self.run_jobs().execute(job);
    }

    /// Hands `job` out inside `region`: on the region's queue, with a stub on the own
    /// deque for the free workers; wakes the region's parked waiters.
    pub(crate) fn hand_out(&self, region: &Arc<Region>, job: JobRef) {
        region.push(job);
        let queue_was_empty = self.deque.is_empty();
        self.deque.push(stub(region));
        self.registry.sleep.new_jobs(1, queue_was_empty);
    }

    /// Waits inside `region` until `latch` is set, running only the region's jobs: those
    /// on its queue (and its nested regions' queues), and the private halves of workers in
    /// it, which it rescues after a few empty rounds, as the wait loop does. Parks when
    /// there are none (`Sleep::park_isolated`).
    // The round limits are 0 under loom: the comparisons are then constant, which is the point.
    #[cfg_attr(loom, allow(clippy::absurd_extreme_comparisons))]
    pub(super) fn wait_isolated(&self, region: &Arc<Region>, latch: &CoreLatch) {
        // As in `wait_loop`: a panic out of here would pop a frame others still use.
        let abort_guard = unwind::AbortIfPanic;
        // A waiting worker hides nothing: its private halves go to the region's queue.
        self.promote_all();
        let run = self.run_jobs();
        let index = self.index();
        let mut rounds = 0;
        while !latch.probe() {
            if let Some((of, job)) = region.take_for_waiter(index) {
                if Arc::ptr_eq(&of, region) {
                    run.execute(job);
                } else {
                    self.run_in_region(&of, job);
                }
                run.settle_for(latch);
                rounds = 0;
                continue;
            }
            run.settle();
            if rounds >= ROUNDS_UNTIL_RESCUE && self.rescue_in_region(region) {
                run.settle_for(latch);
                rounds = 0;
                continue;
            }
            if rounds < ROUNDS_UNTIL_PARK {
                rounds += 1;
                yield_now();
                continue;
            }
            self.sleep().park_isolated(
                index,
                latch,
                self,
                || region.register_parked(index),
                || self.region_has_private_halves(region),
                || region.unregister_parked(index),
                || self.has_queued_jobs(),
            );
            rounds = 0;
        }
        drop(run);
        std::mem::forget(abort_guard);
    }

    /// Runs one job of `region` if one is queued for this worker (`yield_now` and
    /// `yield_local` inside a region); returns whether it ran one.
    pub(super) fn yield_in_region(&self, region: &Arc<Region>) -> bool {
        // As outside a region: private halves first, where an eager `join` had them.
        self.promote_all();
        match region.take_for_waiter(self.index()) {
            Some((of, job)) => {
                self.run_in_region(&of, job);
                true
            }
            None => false,
        }
    }

    /// For a `join` whose half left the private stack while this worker is in a region
    /// (promoted to a region's queue, or rescued): takes it back from that queue by its
    /// identity `id` (`Some(true)`: the caller runs it inline; the stub it left is dropped
    /// if on top of the deque), or waits for `latch` with the isolated wait in the half's
    /// region (`Some(false)`): never by popping the deque, where below the region's stubs
    /// lie jobs from before the region. `None` outside every region.
    ///
    /// In a pool that isolates every job the `join` was split ([`place_half`]): the region
    /// around it is the worker's again, and a half taken back runs there, as one that
    /// never left the stack does.
    pub(crate) fn take_back_in_region(
        &self,
        id: (*const (), usize),
        latch: &CoreLatch,
    ) -> Option<bool> {
        let region = if self.isolate_waits {
            let split = self.private_stack.unsplit(id);
            debug_assert!(
                split.is_some() || !self.in_region(),
                "a half that left the stack in a region without its split"
            );
            split?.half
        } else {
            self.region()?
        };
        if region.take_back(id).is_some() {
            self.drop_own_stub(&region);
            return Some(true);
        }
        let _in_half = self.enter_unless_in(&region);
        self.wait_isolated(&region, latch);
        Some(false)
    }

    /// After a `join` of `region` took its half back from the region's queue: takes the
    /// stub it pushed off the own deque if it is on top (a stub of the region: any of
    /// them stands for any of the region's jobs), else puts back what it popped.
    pub(crate) fn drop_own_stub(&self, region: &Arc<Region>) {
        match self.deque.pop() {
            // SAFETY: checked to be a stub of `region`.
            Some(job) if is_stub_of(&job, region) => unsafe { drop_stub(job) },
            Some(job) => {
                self.deque.push(job);
                self.registry.sleep.new_jobs(1, false);
            }
            None => {}
        }
    }
}

/// Broadcast jobs sent from inside `region` (job `i` for worker `i`): queues each on the
/// region for its worker (waking the region's waiters) and returns the stubs that go on
/// the workers' broadcast queues in their place.
pub(crate) fn broadcast_in_region(
    region: &Arc<Region>,
    jobs: impl ExactSizeIterator<Item = JobRef>,
) -> Vec<JobRef> {
    jobs.enumerate()
        .map(|(index, job)| {
            region.push_broadcast(index, job);
            broadcast_stub(region)
        })
        .collect()
}
