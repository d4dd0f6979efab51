//! The seeds' experiment E4, rerunnable: why stealpool's loop never treats `Steal::Retry`
//! as `Empty`, and why it steals from the injector in batches.
//!
//! Three experiments on crossbeam-deque directly (no pool), then the same effect inside
//! stealpool, seen through its metrics:
//!
//! * **retry**: an owner pushes `--tasks` tasks on its deque; `--stealers` thieves start
//!   together (a `Barrier`) and `steal()` in a loop. The *correct* policy stops only on
//!   `Empty` (continues on `Retry`); the *wrong* one stops on `Retry` or `Empty`. With and
//!   without the owner popping at the same time, with and without per-task work
//!   (`--work` multiply-adds under `black_box`).
//! * **drain**: the owner pushes 1,000,000 tasks (200,000 with `--quick`); each thief has
//!   its own FIFO `Worker` and uses `steal()` or `steal_batch_and_pop()`, from a FIFO and
//!   from a LIFO source.
//! * **order**: a source pushes 1..8, one `steal_batch` moves a batch into a destination;
//!   all four flavor combinations, and the order in which the destination's owner pops.
//! * **pool**: a fine-grained workload on a stealpool pool and its per-worker metrics.
//!
//! Every table shows min–max over `--runs` runs. The write-up, with the seed's published
//! figures beside this machine's, is `docs/experiments.md`.
//!
//! ```text
//! cargo run --release --example steal_experiment -- --quick     # < 1 min
//! cargo run --release --example steal_experiment                # the full run
//! cargo run --release --example steal_experiment -- --experiment drain --stealers 3
//! ```

use clap::{Parser, ValueEnum};
use crossbeam_deque::{Steal, Stealer, Worker};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

/// Reruns experiment E4 of stealpool's design notes on crossbeam-deque: thieves that take
/// `Steal::Retry` for `Empty`, `steal()` against `steal_batch_and_pop()`, the order of a
/// batch steal, and the same effect inside a stealpool pool. Results and their meaning:
/// docs/experiments.md. Run it on an otherwise idle machine: other load changes which
/// threads run, and with it the results.
#[derive(Parser, Debug, Clone)]
struct Args {
    /// Thief threads in every experiment (the notes used 11 beside the owner: 12 threads);
    /// the pool experiment uses this + 1 workers. At most 256.
    #[arg(long, default_value_t = 11)]
    stealers: usize,
    /// Tasks the owner pushes in the retry experiment (the drain experiment always uses
    /// 1,000,000). At most 4,294,967,295.
    #[arg(long, default_value_t = 100_000)]
    tasks: usize,
    /// Spin iterations (multiply-adds under `black_box`) per task in the "with work" rows
    /// of the retry experiment; the pool experiment uses a tenth of it.
    #[arg(long, default_value_t = 2000)]
    work: u64,
    /// Runs per configuration; tables show min–max.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// A short run (a second or two): 2 runs, at most 20,000 tasks in the retry experiment,
    /// 200,000 in the drain experiment, 50,000 in the pool; overrides `--runs`.
    #[arg(long)]
    quick: bool,
    /// In the retry experiment, make the owner's deque FIFO (it then pops at the same end
    /// the thieves steal from) instead of LIFO (stealpool's and rayon's flavor).
    #[arg(long)]
    owner_fifo: bool,
    /// Which experiment to run.
    #[arg(long, value_enum, default_value_t = Experiment::All)]
    experiment: Experiment,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Experiment {
    /// All four, in order.
    All,
    /// Correct against wrong Retry policy, with and without the owner popping and work.
    Retry,
    /// `steal()` against `steal_batch_and_pop()` from a FIFO and a LIFO source.
    Drain,
    /// What one `steal_batch` moves, for the four flavor combinations.
    Order,
    /// A fine-grained workload on a stealpool pool, with its metrics.
    Pool,
}

// ------------------------------------------------------------------ the retry experiment

/// What a thief does when `steal()` answers `Retry`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Policy {
    /// Continue on `Retry`, stop on `Empty` (crossbeam-deque's `find_task` idiom).
    Correct,
    /// Stop on `Retry` or `Empty`: the classic bug (seed 001).
    Wrong,
}

impl Policy {
    /// Whether a thief following this policy keeps stealing after `answer`.
    fn keeps_stealing<T>(self, answer: &Steal<T>) -> bool {
        match answer {
            Steal::Success(_) => true,
            Steal::Retry => self == Policy::Correct,
            Steal::Empty => false,
        }
    }
}

/// One configuration of the retry experiment.
#[derive(Copy, Clone, Debug)]
struct RetryConfig {
    policy: Policy,
    owner_pops: bool,
    owner_fifo: bool,
    work: u64,
    tasks: usize,
    stealers: usize,
}

/// What one run of the retry experiment measured.
#[derive(Clone, Debug)]
struct RetryOutcome {
    /// Tasks taken per thread: index 0 is the owner, then the thieves.
    per_thread: Vec<u64>,
    /// Tasks taken by anyone.
    taken: u64,
    /// Tasks still in the deque once every thread stopped.
    left: u64,
    /// Tasks taken more than once (extra takes).
    duplicates: u64,
    /// `Retry` answers seen by all thieves.
    retries: u64,
    /// Thieves that stopped because of a `Retry` (only the wrong policy does).
    stopped_by_retry: u64,
    wall: Duration,
}

/// Simulated work: `iterations` dependent multiply-adds the optimiser cannot remove.
fn spin(seed: u64, iterations: u64) -> u64 {
    let mut x = seed;
    for _ in 0..iterations {
        x = black_box(
            x.wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407),
        );
    }
    x
}

/// Counts how often each task id was taken; returns (distinct taken, extra takes).
fn tally(n: usize, taken_lists: &[Vec<u32>]) -> (u64, u64) {
    let mut seen = vec![0u32; n];
    for list in taken_lists {
        for &id in list {
            seen[id as usize] += 1;
        }
    }
    let distinct = seen.iter().filter(|&&c| c > 0).count() as u64;
    let extra = seen.iter().map(|&c| c.saturating_sub(1) as u64).sum();
    (distinct, extra)
}

fn run_retry(cfg: RetryConfig) -> RetryOutcome {
    let owner = if cfg.owner_fifo {
        Worker::new_fifo()
    } else {
        Worker::new_lifo()
    };
    for id in 0..cfg.tasks as u32 {
        owner.push(id);
    }
    let barrier = Arc::new(Barrier::new(cfg.stealers + 1));
    // Wall time is measured from the first thread's start to the last thread's end, each
    // timestamped by the thread itself: on a machine with fewer cores than threads, the
    // thread that takes a single start time may be descheduled until the work is done.
    let t0 = Instant::now();
    let retries = Arc::new(AtomicU64::new(0));
    let stopped_by_retry = Arc::new(AtomicU64::new(0));
    let thieves: Vec<_> = (0..cfg.stealers)
        .map(|_| {
            let stealer: Stealer<u32> = owner.stealer();
            let barrier = Arc::clone(&barrier);
            let retries = Arc::clone(&retries);
            let stopped_by_retry = Arc::clone(&stopped_by_retry);
            thread::spawn(move || {
                let mut taken = Vec::new();
                let mut my_retries = 0;
                barrier.wait();
                let started = t0.elapsed();
                loop {
                    let answer = stealer.steal();
                    let go_on = cfg.policy.keeps_stealing(&answer);
                    match answer {
                        Steal::Success(id) => {
                            black_box(spin(u64::from(id), cfg.work));
                            taken.push(id);
                        }
                        Steal::Retry => {
                            my_retries += 1;
                            if !go_on {
                                stopped_by_retry.fetch_add(1, Ordering::Relaxed);
                            }
                            std::hint::spin_loop();
                        }
                        Steal::Empty => {}
                    }
                    if !go_on {
                        break;
                    }
                }
                retries.fetch_add(my_retries, Ordering::Relaxed);
                (taken, started, t0.elapsed())
            })
        })
        .collect();
    barrier.wait();
    let owner_started = t0.elapsed();
    let mut owner_taken = Vec::new();
    if cfg.owner_pops {
        while let Some(id) = owner.pop() {
            black_box(spin(u64::from(id), cfg.work));
            owner_taken.push(id);
        }
    }
    let owner_ended = t0.elapsed();
    let mut lists = vec![owner_taken];
    let (mut first_start, mut last_end) = if cfg.owner_pops {
        (owner_started, owner_ended)
    } else {
        (Duration::MAX, Duration::ZERO)
    };
    for t in thieves {
        let (taken, started, ended) = t.join().expect("thief panicked");
        lists.push(taken);
        first_start = first_start.min(started);
        last_end = last_end.max(ended);
    }
    let wall = last_end.saturating_sub(first_start);
    let mut left = 0;
    while owner.pop().is_some() {
        left += 1;
    }
    let (taken, duplicates) = tally(cfg.tasks, &lists);
    RetryOutcome {
        per_thread: lists.iter().map(|l| l.len() as u64).collect(),
        taken,
        left,
        duplicates,
        retries: retries.load(Ordering::Relaxed),
        stopped_by_retry: stopped_by_retry.load(Ordering::Relaxed),
        wall,
    }
}

// ------------------------------------------------------------------ the drain experiment

/// How a thief takes work in the drain experiment.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Method {
    /// `Stealer::steal`: one task per call.
    Steal,
    /// `Stealer::steal_batch_with_limit_and_pop` into the thief's own FIFO worker.
    Batch { limit: usize },
}

#[derive(Copy, Clone, Debug)]
struct DrainConfig {
    source_fifo: bool,
    method: Method,
    tasks: usize,
    stealers: usize,
}

#[derive(Clone, Debug)]
struct DrainOutcome {
    /// Calls that returned `Success`.
    successes: u64,
    retries: u64,
    taken: u64,
    duplicates: u64,
    /// The largest number of tasks one successful call moved (the one returned plus
    /// what landed in the thief's own worker).
    max_batch: u64,
    wall: Duration,
}

fn run_drain(cfg: DrainConfig) -> DrainOutcome {
    let owner = if cfg.source_fifo {
        Worker::new_fifo()
    } else {
        Worker::new_lifo()
    };
    for id in 0..cfg.tasks as u32 {
        owner.push(id);
    }
    let barrier = Arc::new(Barrier::new(cfg.stealers));
    let t0 = Instant::now();
    let thieves: Vec<_> = (0..cfg.stealers)
        .map(|_| {
            let stealer = owner.stealer();
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                let local = Worker::new_fifo();
                let (mut successes, mut retries, mut max_batch) = (0u64, 0u64, 0u64);
                let mut taken = Vec::new();
                barrier.wait();
                let started = t0.elapsed();
                loop {
                    let got = match cfg.method {
                        Method::Steal => stealer.steal(),
                        Method::Batch { limit } => {
                            stealer.steal_batch_with_limit_and_pop(&local, limit)
                        }
                    };
                    match got {
                        Steal::Success(id) => {
                            successes += 1;
                            taken.push(id);
                            let mut batch = 1;
                            while let Some(id) = local.pop() {
                                taken.push(id);
                                batch += 1;
                            }
                            max_batch = max_batch.max(batch);
                        }
                        Steal::Retry => retries += 1,
                        Steal::Empty => break,
                    }
                }
                (successes, retries, max_batch, taken, started, t0.elapsed())
            })
        })
        .collect();
    let results: Vec<_> = thieves
        .into_iter()
        .map(|t| t.join().expect("thief panicked"))
        .collect();
    // From the first thief's start to the last thief's end (see `run_retry`).
    let first_start = results.iter().map(|r| r.4).min().unwrap_or_default();
    let last_end = results.iter().map(|r| r.5).max().unwrap_or_default();
    let wall = last_end.saturating_sub(first_start);
    let lists: Vec<Vec<u32>> = results.iter().map(|r| r.3.clone()).collect();
    let (taken, duplicates) = tally(cfg.tasks, &lists);
    DrainOutcome {
        successes: results.iter().map(|r| r.0).sum(),
        retries: results.iter().map(|r| r.1).sum(),
        max_batch: results.iter().map(|r| r.2).max().unwrap_or(0),
        taken,
        duplicates,
        wall,
    }
}

// ------------------------------------------------------------------ the order experiment

#[derive(Clone, Debug, PartialEq, Eq)]
struct OrderOutcome {
    /// Tasks `steal_batch` moved, in the order the destination's owner pops them.
    destination_pops: Vec<u32>,
    /// The order in which the source's owner would have popped those same tasks.
    source_owner_order: Vec<u32>,
}

/// Source pushes 1..=8; one `steal_batch` into the destination; pop it all.
fn run_order(source_fifo: bool, destination_fifo: bool) -> OrderOutcome {
    let flavor = |fifo: bool| {
        if fifo {
            Worker::new_fifo()
        } else {
            Worker::new_lifo()
        }
    };
    let source = flavor(source_fifo);
    let destination = flavor(destination_fifo);
    for i in 1..=8u32 {
        source.push(i);
    }
    // Single-threaded: Retry cannot happen, but loop on it anyway as the idiom demands.
    while let Steal::Retry = source.stealer().steal_batch(&destination) {}
    let mut destination_pops = Vec::new();
    while let Some(t) = destination.pop() {
        destination_pops.push(t);
    }
    let mut moved = destination_pops.clone();
    moved.sort_unstable();
    // A FIFO owner pops oldest first, a LIFO owner newest first.
    let source_owner_order = if source_fifo {
        moved
    } else {
        moved.into_iter().rev().collect()
    };
    OrderOutcome {
        destination_pops,
        source_owner_order,
    }
}

// ------------------------------------------------------------------ printing

/// `min–max` of a column over runs.
fn range<T: PartialOrd + Copy + std::fmt::Display>(values: impl Iterator<Item = T>) -> String {
    let v: Vec<T> = values.collect();
    let min = v
        .iter()
        .copied()
        .fold(v[0], |a, b| if b < a { b } else { a });
    let max = v
        .iter()
        .copied()
        .fold(v[0], |a, b| if b > a { b } else { a });
    if min == max {
        format!("{min}")
    } else {
        format!("{min}–{max}")
    }
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e4).round() / 10.0
}

fn retry_table(args: &Args, tasks: usize, work: u64) {
    println!(
        "## retry: owner pushes {tasks} tasks on a {} deque, {} thieves; {} run(s) each (min–max)\n",
        if args.owner_fifo { "FIFO" } else { "LIFO" },
        args.stealers,
        args.runs
    );
    println!(
        "| policy | owner pops | work | taken | left | dup | thieves with tasks | top thread share | owner share | Retry seen | stopped by Retry | wall ms |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut examples = Vec::new();
    let works = if work == 0 { vec![0] } else { vec![0, work] };
    let mut ratios = Vec::new();
    for owner_pops in [false, true] {
        for &work in &works {
            let mut walls = Vec::new();
            for policy in [Policy::Correct, Policy::Wrong] {
                let cfg = RetryConfig {
                    policy,
                    owner_pops,
                    owner_fifo: args.owner_fifo,
                    work,
                    tasks,
                    stealers: args.stealers,
                };
                let runs: Vec<RetryOutcome> = (0..args.runs).map(|_| run_retry(cfg)).collect();
                let thieves_busy =
                    |r: &RetryOutcome| r.per_thread[1..].iter().filter(|&&c| c > 0).count();
                let top_share = |r: &RetryOutcome| {
                    let top = r.per_thread.iter().max().copied().unwrap_or(0);
                    (1000.0 * top as f64 / tasks as f64).round() / 10.0
                };
                let owner_share = |r: &RetryOutcome| {
                    (1000.0 * r.per_thread[0] as f64 / tasks as f64).round() / 10.0
                };
                println!(
                    "| {:?} | {} | {} | {} | {} | {} | {} of {} | {}% | {}% | {} | {} | {} |",
                    policy,
                    if owner_pops { "yes" } else { "no" },
                    work,
                    range(runs.iter().map(|r| r.taken)),
                    range(runs.iter().map(|r| r.left)),
                    range(runs.iter().map(|r| r.duplicates)),
                    range(runs.iter().map(thieves_busy)),
                    args.stealers,
                    range(runs.iter().map(top_share)),
                    range(runs.iter().map(owner_share)),
                    range(runs.iter().map(|r| r.retries)),
                    range(runs.iter().map(|r| r.stopped_by_retry)),
                    range(runs.iter().map(|r| ms(r.wall))),
                );
                let last = runs.last().expect("at least one run");
                examples.push(format!(
                    "{policy:?}, owner pops: {owner_pops}, work {work}: {:?}",
                    last.per_thread
                ));
                let mut w: Vec<f64> = runs.iter().map(|r| r.wall.as_secs_f64()).collect();
                w.sort_by(f64::total_cmp);
                walls.push(w[w.len() / 2]);
            }
            ratios.push(format!(
                "owner pops: {}, work {work}: wrong / correct wall time (medians) = {:.2}",
                if owner_pops { "yes" } else { "no" },
                walls[1] / walls[0].max(1e-9)
            ));
        }
    }
    println!(
        "\n\"thieves with tasks\" counts thieves that took at least one task (a thief that quit at"
    );
    println!(
        "its first collision may still have taken a few); \"stopped by Retry\" counts thieves that"
    );
    println!("quit because of a Retry.\n");
    for r in ratios {
        println!("* {r}");
    }
    println!("\nTasks per thread in the last run (owner first, then each thief):\n");
    for e in examples {
        println!("* {e}");
    }
    println!();
}

fn drain_table(args: &Args, tasks: usize) {
    println!(
        "## drain: owner pushes {tasks} tasks, {} thieves each with its own FIFO worker; {} run(s) (min–max)\n",
        args.stealers, args.runs
    );
    println!("| source | method | taken | dup | successful calls | Retry | tasks per successful call | largest batch | wall ms |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for source_fifo in [true, false] {
        for method in [Method::Steal, Method::Batch { limit: 32 }] {
            let cfg = DrainConfig {
                source_fifo,
                method,
                tasks,
                stealers: args.stealers,
            };
            let runs: Vec<DrainOutcome> = (0..args.runs).map(|_| run_drain(cfg)).collect();
            println!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                if source_fifo { "FIFO" } else { "LIFO" },
                match method {
                    Method::Steal => "steal()",
                    Method::Batch { .. } => "steal_batch_and_pop()",
                },
                range(runs.iter().map(|r| r.taken)),
                range(runs.iter().map(|r| r.duplicates)),
                range(runs.iter().map(|r| r.successes)),
                range(runs.iter().map(|r| r.retries)),
                range(
                    runs.iter()
                        .map(
                            |r| (10.0 * r.taken as f64 / r.successes.max(1) as f64).round() / 10.0
                        )
                ),
                range(runs.iter().map(|r| r.max_batch)),
                range(runs.iter().map(|r| ms(r.wall))),
            );
        }
    }
    println!();
}

fn order_table() {
    println!("## order: source pushes 1..8, one steal_batch into the destination\n");
    println!("| source | destination | destination's owner pops | source's owner would pop | same order |");
    println!("|---|---|---|---|---|");
    for source_fifo in [true, false] {
        for destination_fifo in [true, false] {
            let o = run_order(source_fifo, destination_fifo);
            let name = |fifo: bool| if fifo { "FIFO" } else { "LIFO" };
            println!(
                "| {} | {} | {:?} | {:?} | {} |",
                name(source_fifo),
                name(destination_fifo),
                o.destination_pops,
                o.source_owner_order,
                if o.destination_pops == o.source_owner_order {
                    "yes"
                } else {
                    "NO"
                }
            );
        }
    }
    println!();
}

/// Fine-grained work on a stealpool pool: a scope spawning many tiny tasks from one worker,
/// then a join-based reduction, then the per-worker metrics.
fn pool_run(args: &Args) {
    let threads = args.stealers + 1;
    let tasks = if args.quick { 50_000 } else { 200_000 };
    // A tenth of the retry experiment's per-task work: many small jobs.
    let pool = stealpool::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("cannot build the pool");
    println!(
        "## pool: stealpool with {threads} workers, one scope spawning {tasks} tasks of {} multiply-adds, then a join tree over the same range\n",
        args.work / 10
    );
    let work = args.work / 10;
    let start = Instant::now();
    let sum = AtomicU64::new(0);
    let spawner = pool.scope(|s| {
        for i in 0..tasks as u64 {
            let sum = &sum;
            s.spawn(move |_| {
                sum.fetch_add(spin(i, work) & 1, Ordering::Relaxed);
            });
        }
        stealpool::current_thread_index()
    });
    fn tree(lo: u64, hi: u64, work: u64) -> u64 {
        if hi - lo <= 16 {
            return (lo..hi).map(|i| spin(i, work) & 1).sum();
        }
        let mid = lo + (hi - lo) / 2;
        let (a, b) = stealpool::join(|| tree(lo, mid, work), || tree(mid, hi, work));
        a + b
    }
    let joined = pool.install(|| tree(0, tasks as u64, work));
    assert_eq!(
        joined,
        sum.load(Ordering::Relaxed),
        "scope and join disagree"
    );
    let wall = start.elapsed();
    let m = pool.metrics();
    println!(
        "wall {:.1} ms; the scope body (the spawning worker) ran on worker {}\n",
        ms(wall),
        spawner.map_or_else(|| "?".to_string(), |i| i.to_string())
    );
    println!("```text\n{m}\n```\n");
    let idle: Vec<usize> = m
        .workers
        .iter()
        .filter(|w| w.jobs_executed == 0)
        .map(|w| w.index)
        .collect();
    if idle.is_empty() {
        println!("Every one of the {threads} workers ran jobs.\n");
    } else {
        println!("Workers that ran no job: {idle:?}\n");
    }
}

/// The largest `--stealers` accepted: every thief is an OS thread, and the pool
/// experiment's workers each scan all the others when idle.
const MAX_STEALERS: usize = 256;

/// The 1-minute load average (Linux `/proc/loadavg`), to show how busy the machine was.
fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next().map(str::to_owned)
}

fn main() {
    let mut args = Args::parse();
    if args.stealers == 0 || args.runs == 0 || args.tasks == 0 {
        eprintln!("error: --stealers, --runs and --tasks must be at least 1");
        std::process::exit(2);
    }
    if args.stealers > MAX_STEALERS {
        eprintln!("error: --stealers is at most {MAX_STEALERS}");
        std::process::exit(2);
    }
    if u32::try_from(args.tasks).is_err() {
        eprintln!("error: --tasks is at most {} (task ids are u32)", u32::MAX);
        std::process::exit(2);
    }
    let (tasks, drain_tasks, work) = if args.quick {
        args.runs = 2;
        (args.tasks.min(20_000), 200_000, args.work)
    } else {
        (args.tasks, 1_000_000, args.work)
    };
    println!(
        "# steal_experiment: {} thieves, {} logical CPUs here, 1-minute load average {}{}\n",
        args.stealers,
        num_cpus::get(),
        load_average().unwrap_or_else(|| "unknown".to_string()),
        if args.quick { " (--quick)" } else { "" }
    );
    println!("(Results depend on every thread getting a core: run on an idle machine.)\n");
    let all = args.experiment == Experiment::All;
    if all || args.experiment == Experiment::Retry {
        retry_table(&args, tasks, work);
    }
    if all || args.experiment == Experiment::Drain {
        drain_table(&args, drain_tasks);
    }
    if all || args.experiment == Experiment::Order {
        order_table();
    }
    if all || args.experiment == Experiment::Pool {
        pool_run(&args);
    }
}

// ------------------------------------------------------------------ tests

/// The deterministic parts: what must hold on every run, on any machine.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_policy_takes_every_task_exactly_once() {
        for (policy, owner_fifo) in [
            (Policy::Correct, false),
            (Policy::Wrong, false),
            (Policy::Correct, true),
            (Policy::Wrong, true),
        ] {
            for owner_pops in [false, true] {
                for work in [0, 50] {
                    let cfg = RetryConfig {
                        policy,
                        owner_pops,
                        owner_fifo,
                        work,
                        tasks: 5_000,
                        stealers: 4,
                    };
                    let r = run_retry(cfg);
                    assert_eq!(r.duplicates, 0, "{cfg:?}");
                    assert_eq!(r.taken + r.left, 5_000, "{cfg:?}: {r:?}");
                    assert_eq!(r.per_thread.iter().sum::<u64>(), r.taken, "{cfg:?}");
                    if policy == Policy::Correct {
                        // Only Empty stops a correct thief, and the owner (if it pops)
                        // stops on empty too: nothing can be left.
                        assert_eq!(r.left, 0, "{cfg:?}");
                        assert_eq!(r.stopped_by_retry, 0, "{cfg:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn drain_takes_every_task_once_and_batches_stay_within_the_limit() {
        for source_fifo in [true, false] {
            for method in [
                Method::Steal,
                Method::Batch { limit: 32 },
                Method::Batch { limit: 5 },
                Method::Batch { limit: 1 },
            ] {
                let r = run_drain(DrainConfig {
                    source_fifo,
                    method,
                    tasks: 20_000,
                    stealers: 3,
                });
                assert_eq!(r.taken, 20_000, "{source_fifo} {method:?}");
                assert_eq!(r.duplicates, 0, "{source_fifo} {method:?}");
                let limit = match method {
                    Method::Steal => 1,
                    Method::Batch { limit } => limit as u64,
                };
                assert!(
                    r.max_batch <= limit,
                    "{source_fifo} {method:?}: {}",
                    r.max_batch
                );
                assert!(r.max_batch >= 1);
            }
        }
    }

    #[test]
    fn tally_counts_distinct_and_extra_takes() {
        let (distinct, extra) = tally(5, &[vec![0, 1, 2], vec![2, 4], vec![2]]);
        assert_eq!((distinct, extra), (4, 2));
        assert_eq!(tally(3, &[vec![], vec![]]), (0, 0));
    }

    #[test]
    fn only_the_wrong_policy_stops_on_retry() {
        let (retry, empty, success) = (Steal::<u32>::Retry, Steal::<u32>::Empty, Steal::Success(1));
        assert!(Policy::Correct.keeps_stealing(&retry));
        assert!(!Policy::Wrong.keeps_stealing(&retry));
        for policy in [Policy::Correct, Policy::Wrong] {
            assert!(policy.keeps_stealing(&success));
            assert!(!policy.keeps_stealing(&empty));
        }
    }

    #[test]
    fn a_fifo_source_gives_full_batches_to_a_lone_thief() {
        // One thief, no contention: every batch call on a FIFO source with >= 64 tasks
        // left moves exactly 32 (crossbeam-deque's MAX_BATCH).
        let r = run_drain(DrainConfig {
            source_fifo: true,
            method: Method::Batch { limit: 32 },
            tasks: 64 * 100,
            stealers: 1,
        });
        assert_eq!(r.max_batch, 32);
        assert_eq!(r.taken, 6_400);
        // Full batches while 64 or more are left (199 calls), then a few halves: never
        // fewer calls than 6,400 / 32, and only a handful more.
        assert!((200..=210).contains(&r.successes), "{}", r.successes);
        assert_eq!(r.retries, 0, "no contention, no Retry");
    }

    #[test]
    fn batch_steals_preserve_the_source_owners_order() {
        for source_fifo in [true, false] {
            for destination_fifo in [true, false] {
                let o = run_order(source_fifo, destination_fifo);
                assert!(!o.destination_pops.is_empty());
                assert_eq!(
                    o.destination_pops, o.source_owner_order,
                    "source fifo {source_fifo}, destination fifo {destination_fifo}"
                );
                // Thieves take from the front (the oldest end): 1, 2, ... come first.
                let mut moved = o.destination_pops.clone();
                moved.sort_unstable();
                assert_eq!(moved, (1..=moved.len() as u32).collect::<Vec<_>>());
            }
        }
    }
}
