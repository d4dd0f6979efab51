//! The worker: the thread that runs a pool's jobs, and everything that belongs to it.
//! It sits above the registry (`pool::registry`), which it reaches through its
//! `Arc<Registry>`; the registry never names it (tokio's `multi_thread::Worker` over
//! `Shared`).
//!
//! Each worker owns a LIFO crossbeam-deque [`Worker`]; the registry holds its [`Stealer`]
//! for the others. One file per concept of [`WorkerThread`]:
//!
//! * `mod.rs`: the struct, its own queues (`push`, the local pops) and running a job;
//! * `current.rs`: the thread-locals that find the current worker and, for the `join`
//!   fast path, its private stack ([`PrivateStackRef`]);
//! * `entry.rs`: the ways into a pool from the calling thread (inject, `in_worker_of`);
//! * `thread.rs`: [`ThreadBuilder`] and the thread body (start handler, scheduling loop,
//!   exit handler), and adopting the building thread (`use_current_thread`);
//! * `wait.rs`: the wait loop every wait runs ([`WorkerThread::wait_until`], and the
//!   scheduling loop, `main_loop`): local jobs, then a search, then the sleep module;
//! * `search.rs`: the search of the other queues ([`WorkerThread::find_work`]);
//! * `lazy_join.rs`: promotion of the own `join` halves and rescue of others';
//! * `isolate.rs`: isolation regions, the worker's side (`docs/isolation.md`);
//! * `deferred.rs`: running jobs (`JobRun`) and the count-downs and chunk releases they
//!   defer;
//! * `observe.rs`: what the worker tells the timeline and `tracing`.

use crate::job::{JobArena, JobFifo, JobRef};
use crate::latch::LatchOwner;
use crate::metrics::WorkerCounters;
use crate::pool::private_stack::PrivateStack;
use crate::pool::region::Region;
use crate::pool::registry::{Registry, WorkerQueues};
use crate::sleep::Sleep;
use crate::sync::deque::{Stealer, Worker};
use crate::sync::unchecked::{Arc, Cell};
#[cfg(feature = "tracing")]
use crate::timeline_hooks::JobSource;
use crate::timeline_hooks::WorkerRecorder;
use crossbeam_utils::CachePadded;
pub(crate) use current::PrivateStackRef;
use deferred::DeferredWork;
pub(crate) use deferred::{JobRun, RunJobs};
pub(crate) use entry::{in_worker_of, inject, inject_broadcast, inject_or_push, with_worker_of};
pub(crate) use thread::adopt_current_thread;
pub use thread::ThreadBuilder;
pub(crate) use wait::Waiter;
#[cfg(loom)]
pub(crate) use wait::{wait_loop, WaitFrame};

mod current;
mod deferred;
mod entry;
mod isolate;
mod lazy_join;
mod observe;
mod search;
mod thread;
mod wait;

/// The per-thread half of a worker: its deque and its identity. Lives on the worker's
/// stack (the thread body, `thread.rs`) for the thread's whole life, or, for the building
/// thread of a `use_current_thread` pool, in that thread's `ADOPTED` slot until the
/// thread exits.
pub(crate) struct WorkerThread {
    /// This worker's deque: its own jobs, LIFO (`WorkerQueues::deque`).
    deque: Worker<JobRef>,
    /// Jobs taken in batches from other queues, oldest first (`WorkerQueues::batch`).
    batch: Worker<JobRef>,
    /// The FIFO behind this worker's `spawn_fifo` stubs (the registry holds it too).
    fifo: Arc<JobFifo>,
    /// This worker's broadcast queue (the registry holds the pushing end).
    broadcasts: Stealer<JobRef>,
    /// This worker's metrics block (shared with the registry, written only here).
    counters: Arc<CachePadded<WorkerCounters>>,
    /// The pool this worker belongs to.
    registry: Arc<Registry>,
    /// Second halves of this worker's `join`s not yet offered to thieves (lazy join,
    /// `docs/join.md`); the registry holds it too, for rescuers. It also holds this
    /// worker's index and sleep state (`PrivateStack::owner`).
    private_stack: Arc<CachePadded<PrivateStack>>,
    /// Local jobs taken between top-level jobs, counted for fair injection
    /// (`FAIR_INTERVAL`).
    local_ticks: Cell<u32>,
    /// Count-downs and arena chunk references of jobs run here, not yet delivered
    /// (`deferred`).
    deferred: DeferredWork,
    /// Where this worker's scope spawns put their jobs (`job::arena`).
    job_arena: JobArena,
    /// This worker's side of the pool's timeline (a no-op unless the pool records).
    timeline: WorkerRecorder,
    /// The steal or rescue noted last, for its `tracing` event (`tell_found`).
    #[cfg(feature = "tracing")]
    found: Cell<Option<JobSource>>,
    /// The idle period announced to `tracing` (`tell_idle`).
    #[cfg(feature = "tracing")]
    idle: observe::IdlePeriod,
    /// The isolation region this worker is in, if any (`isolate.rs`): a copy of its
    /// private stack's current region, read without that stack's lock. Not read in a pool
    /// that isolates every job, where a rescuer that splits a `join` changes the current
    /// region (`isolate::place_half`).
    region: Cell<Option<Arc<Region>>>,
    /// The pool's `isolate_waits` (`Registry::isolate_waits`), kept here for the job
    /// and steal paths: every job taken from a queue runs in a region of its own
    /// (`isolate.rs`), and steals take one job.
    isolate_waits: bool,
}

/// Fair injection: between top-level jobs, at most one injected job per this many local
/// pops is taken ahead of local work. Tokio's and Go's global-queue interval.
pub(crate) const FAIR_INTERVAL: u32 = 61;

impl WorkerThread {
    /// Worker `index` of `registry`, owning `queues`; not yet the current thread's worker
    /// (`set_current`).
    pub(crate) fn new(queues: WorkerQueues, registry: Arc<Registry>, index: usize) -> Self {
        let isolate_waits = registry.isolate_waits();
        WorkerThread {
            deque: queues.deque,
            batch: queues.batch,
            fifo: registry.fifo(index),
            broadcasts: queues.broadcasts,
            counters: registry.counters().worker(index),
            private_stack: registry.private_stack_handle(index),
            timeline: WorkerRecorder::new(registry.recorder(), index),
            registry,
            local_ticks: Cell::new(0),
            deferred: DeferredWork::new(),
            job_arena: JobArena::new(),
            #[cfg(feature = "tracing")]
            found: Cell::new(None),
            #[cfg(feature = "tracing")]
            idle: observe::IdlePeriod::default(),
            region: Cell::new(None),
            isolate_waits,
        }
    }

    /// This worker's index in its pool, `0..num_threads`.
    #[inline]
    pub(crate) fn index(&self) -> usize {
        self.private_stack.owner().index
    }

    /// The sleep state of the pool this worker belongs to.
    #[inline]
    pub(crate) fn sleep(&self) -> &Arc<Sleep> {
        &self.private_stack.owner().sleep
    }

    /// This worker as the owner of the latches it waits on.
    #[inline(always)]
    pub(crate) fn latch_owner(&self) -> &LatchOwner {
        self.private_stack.owner()
    }

    /// The pool this worker belongs to.
    #[inline]
    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// Pushes a job on the own deque, where the owner pops it LIFO and thieves steal it
    /// FIFO, and tells the sleep module (which may wake a parked worker to steal it).
    #[inline]
    pub(crate) fn push(&self, job: JobRef) {
        // Private `join` halves first: they are older than this job, and an eager `join`
        // would have put them below it. A wait inside the first half pops LIFO and must
        // meet its own jobs before an enclosing `join`'s second half (which may wait for
        // the first half: a deadlock rayon-core does not have; docs/join.md, "Order").
        self.promote_all();
        if let Some(region) = self.region() {
            return self.hand_out(&region, job);
        }
        let queue_was_empty = self.deque.is_empty();
        self.deque.push(job);
        self.registry.sleep.new_jobs(1, queue_was_empty);
    }

    /// Pushes a job that must run in FIFO order relative to this worker's other FIFO
    /// jobs: it goes on the worker's FIFO, and a stub that runs the oldest FIFO job goes on
    /// the deque.
    #[inline]
    pub(crate) fn push_fifo(&self, job: JobRef) {
        // Inside a region the job goes to the region's queue as `push` puts it there
        // (`isolate.rs`): the FIFO would let a waiter of the region reach this worker's
        // older FIFO jobs.
        if self.in_region() {
            return self.push(job);
        }
        // SAFETY: the FIFO is held by the registry, which outlives every stub: stubs are
        // only in this registry's deques, and whoever runs one (a worker of this pool)
        // holds the registry. (Not this worker: the adopted worker 0 of a
        // `use_current_thread` pool is freed when its thread exits, stubs or not.)
        let stub = unsafe { self.fifo.push(job) };
        self.push(stub);
    }

    /// This worker's private stack of `join` halves (the `join` frame's checked path).
    #[inline(always)]
    pub(crate) fn private_stack(&self) -> &PrivateStack {
        &self.private_stack
    }

    /// The arena this worker's scope spawns allocate from.
    pub(crate) fn job_arena(&self) -> &JobArena {
        &self.job_arena
    }

    /// This worker's counters (metrics).
    #[inline]
    pub(crate) fn counters(&self) -> &WorkerCounters {
        &self.counters
    }

    /// Pops the most recently pushed job of the own deque, to execute it (counted as a
    /// local pop).
    #[inline]
    pub(crate) fn take_local_job(&self) -> Option<JobRef> {
        let job = self.deque.pop();
        if job.is_some() {
            self.counters().local_pop();
        }
        job
    }

    /// `take_local_job`, except that every `FAIR_INTERVAL`-th call first takes one job from
    /// elsewhere, if there is any: the oldest job of the batch queue (what an earlier batch
    /// steal brought), else the injector's oldest. Work from outside starts within a
    /// bounded number of local jobs even while the own deque never runs dry (tokio's and
    /// Go's global-queue interval). Only between top-level jobs (`WaitFrame::Top`): inside
    /// a user's frame an injected job would overtake local work where rayon-core runs the
    /// local work, and the frame may hold a lock or a borrow the injected job takes.
    #[inline]
    fn take_local_job_fair(&self) -> Option<JobRef> {
        let tick = self.local_ticks.get().wrapping_add(1);
        self.local_ticks.set(tick);
        if tick % FAIR_INTERVAL == 0 {
            // The oldest work from elsewhere: what an earlier batch brought, else the
            // injector's oldest job. A `Retry` here is left to the search that follows
            // when the deque is empty.
            if let Some(job) = self
                .take_batched_job()
                .or_else(|| self.take_injected_job(&mut false))
            {
                return Some(job);
            }
        }
        self.take_local_job()
    }

    /// Pops the own deque without counting: `join` taking its own second half back.
    #[inline]
    pub(crate) fn pop_local(&self) -> Option<JobRef> {
        self.deque.pop()
    }

    /// Whether the own deque or the private stack of `join` halves holds a job (racy,
    /// like rayon-core's answer: thieves may take them).
    #[inline]
    pub(crate) fn has_local_jobs(&self) -> bool {
        !self.deque.is_empty() || self.private_stack.has_private_halves()
    }

    /// Executes a job (for [`JobRun::execute`](deferred::JobRun), which settles what it
    /// defers), recording it on the timeline when the pool records; in a region of its
    /// own when the pool isolates every job's waits.
    #[inline]
    fn execute_job(&self, job: JobRef) {
        if self.isolate_waits && !isolate::is_any_stub(&job) {
            return self.execute_in_own_region(job);
        }
        self.execute_here(job);
    }

    /// `execute_job` in the worker's current region.
    #[inline]
    fn execute_here(&self, job: JobRef) {
        if self.timeline.is_on() {
            return self.execute_recorded(job);
        }
        // SAFETY: every JobRef in the deques and the injector was created by a job type
        // whose creator keeps it alive until it runs, and each is taken out of a queue
        // exactly once, so it is executed exactly once.
        unsafe { job.execute() }
    }

    /// `execute_job` with the job's start and end on the timeline (out of line and cold:
    /// see `WorkerRecorder::push`).
    #[cold]
    #[inline(never)]
    fn execute_recorded(&self, job: JobRef) {
        self.timeline.job_start();
        // SAFETY: as in `execute_job`.
        unsafe { job.execute() };
        self.timeline.job_end();
    }

    /// Whether any queue this worker could take a job from holds one: the injector, any
    /// worker's deque, or this worker's own broadcast queue (other workers' broadcast
    /// jobs are not ours to run). The sleeper's last look before parking
    /// (docs/sleep.md, step 4).
    pub(crate) fn has_queued_jobs(&self) -> bool {
        !self.broadcasts.is_empty() || self.registry.has_queued_jobs()
    }

    /// `yield_now`: runs one job from anywhere this worker may take one, if any. Returns
    /// whether it ran one.
    pub(crate) fn yield_now(&self) -> bool {
        if let Some(region) = self.region() {
            return self.yield_in_region(&region);
        }
        // As in rayon-core, the own pending `join` halves are among the jobs to yield to.
        self.promote_all();
        match self.find_work() {
            Some(job) => {
                self.tell_found();
                self.run_jobs().execute(job);
                true
            }
            None => false,
        }
    }

    /// `yield_local`: runs one job from the own deque or broadcast queue, if any. Returns
    /// whether it ran one.
    pub(crate) fn yield_local(&self) -> bool {
        if let Some(region) = self.region() {
            return self.yield_in_region(&region);
        }
        self.promote_all();
        let job = self.take_local_job().or_else(|| loop {
            let mut retry = false;
            match self.take_broadcast_job(&mut retry) {
                Some(job) => break Some(job),
                None if retry => continue,
                None => break None,
            }
        });
        match job {
            Some(job) => {
                self.run_jobs().execute(job);
                true
            }
            None => false,
        }
    }
}
