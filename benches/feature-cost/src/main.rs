//! What does compiling the worker timeline in cost when nothing is recorded?
//!
//! Issue 11 asks that no row of the benchmark table (`benches/table`) be more than 3%
//! slower with the `timeline` feature compiled in (recording off) than without it. Run
//! as two programs, the comparison drowns in this host's drift between runs (the wake
//! row moved by 8% between identical builds). So this program links **both builds into
//! one process**: `stealpool` with its default features and `stealpool-off`, the same
//! source without `timeline` (see `off/Cargo.toml`). Every row of the table runs the
//! table's own workloads (`benches/table/sp_work.rs`) on both, one sample of each in
//! turn, the first of the pair alternating, so a drift hits both builds alike.
//!
//! ```text
//! cargo run --release --manifest-path benches/feature-cost/Cargo.toml
//! cargo run --release --manifest-path benches/feature-cost/Cargo.toml -- --test  # smoke
//! cargo run --release --manifest-path benches/feature-cost/Cargo.toml -- --processes 5
//! ```
//!
//! It prints one markdown table: each row's median in both builds, their quotient, the
//! median of the per-pair quotients, and `pairs`, the number of sample pairs behind the
//! row (generations of fresh pools × pairs per generation, as the wake row's name says).
//! `--test` takes one pair per row at reduced sizes, to check that every row runs: its
//! quotients are noise (0.1 to 3 is usual), not results. With `--processes N` it runs the measurement in
//! N processes in turn and prints each row's quotient per process and their median (a
//! process's own address-space luck moves some rows in both builds alike).
//! `STEALPOOL_BENCH_THREADS` sets the workers (default: logical CPUs), as for the table;
//! `TABLE_ROWS=wake,fib` picks rows; `FEATURE_COST_CONTROL=1` puts the default build in
//! both columns (an A/A run: the method's own noise).

// `candidate.rs` (and the table's `sp_work.rs` in it) is compiled once per build, on
// purpose: each copy names its own build's crate as `sp`.
#![allow(clippy::duplicate_mod)]

// The table's measuring code; not every probe of it is used here.
#[allow(dead_code)]
#[path = "../../table/harness.rs"]
mod harness;
#[path = "../../table/workload.rs"]
mod workload;

mod off;
mod on;

use harness::{fmt_time, injection_latencies, percentile, sporadic_rate, time, wake_sample, Plan};
use std::sync::atomic::AtomicBool;
use std::thread;
use std::time::Duration;
use workload::{fib_joins, fib_seq, qs_seq, sum_seq, tree_bfs, Node};

/// What a row needs from one build (`candidate.rs`, compiled once per build).
pub trait Candidate: Sync {
    fn name(&self) -> &'static str;
    /// `spawn` onto the pool of every worker.
    fn spawn(&self, job: Box<dyn FnOnce() + Send>);
    /// fib(n) with a `join` per call, on one worker or on every worker.
    fn fib(&self, n: u64, one: bool) -> u64;
    fn tree_sum(&self, tree: &Node) -> u64;
    fn quicksort(&self, v: &mut [u64]);
    /// `n` empty `Scope::spawn`s in one scope.
    fn scope_spawns(&self, n: usize, one: bool);
    /// The injection row's load: a join tree of spinning leaves.
    fn spin_tree(&self, depth: u32, leaf: Duration, started: &AtomicBool) -> u64;
    /// `install(join(spin(leaf), spin(leaf)))`.
    fn join_leaves(&self, leaf: Duration);
}

/// What a row's samples are.
enum Unit {
    /// Seconds of wall time.
    Time,
    /// CPU seconds per second of wall time.
    CpuRate,
}

/// One row's samples, `[on, off]`, taken in pairs.
struct Samples {
    name: String,
    unit: Unit,
    scale: f64,
    pairs: Vec<[f64; 2]>,
}

/// Builds one build's pools.
type Make = fn(usize) -> Box<dyn Candidate>;

/// Takes a row's samples on fresh pools: `generations` times, both builds' pools are
/// built anew (in alternating order) and give `per` pairs. A pool's own luck (where its
/// threads' stacks and its memory landed) moved rows by up to 40% between two pools of
/// the *same* build (the 1-worker `join` row is bimodal), so a row is averaged over many
/// pools rather than measured on one.
struct Runner {
    make: [Make; 2],
    threads: usize,
    /// Scales the generations down for `--test`.
    quick: bool,
}

impl Runner {
    fn take(
        &self,
        name: String,
        generations: usize,
        per: usize,
        sample: &mut dyn FnMut(&dyn Candidate) -> f64,
    ) -> Samples {
        let generations = if self.quick { 1 } else { generations };
        let mut pairs = Vec::with_capacity(generations * per);
        for g in 0..generations {
            let (a, b) = if g % 2 == 0 {
                let a = (self.make[0])(self.threads);
                (a, (self.make[1])(self.threads))
            } else {
                let b = (self.make[1])(self.threads);
                ((self.make[0])(self.threads), b)
            };
            pairs.extend(pairs_of(per, [&*a, &*b], sample));
        }
        Samples {
            name,
            unit: Unit::Time,
            scale: 1.0,
            pairs,
        }
    }
}

/// `per` pairs of `sample` (one per build), after a warm-up of each; the first of each
/// pair alternates.
fn pairs_of(
    per: usize,
    builds: [&dyn Candidate; 2],
    sample: &mut dyn FnMut(&dyn Candidate) -> f64,
) -> Vec<[f64; 2]> {
    sample(builds[0]);
    sample(builds[1]);
    (0..per)
        .map(|i| {
            if i % 2 == 0 {
                let a = sample(builds[0]);
                [a, sample(builds[1])]
            } else {
                let b = sample(builds[1]);
                [sample(builds[0]), b]
            }
        })
        .collect()
}

impl Samples {
    /// The quotient of the two builds' medians.
    fn ratio(&self) -> f64 {
        let mut on: Vec<f64> = self.pairs.iter().map(|p| p[0]).collect();
        let mut off: Vec<f64> = self.pairs.iter().map(|p| p[1]).collect();
        percentile(&mut on, 0.5) / percentile(&mut off, 0.5)
    }

    /// The row in `unit`s: medians per build, their quotient, the median pair quotient.
    fn line(&self) -> String {
        let mut on: Vec<f64> = self.pairs.iter().map(|p| p[0] * self.scale).collect();
        let mut off: Vec<f64> = self.pairs.iter().map(|p| p[1] * self.scale).collect();
        let mut q: Vec<f64> = self.pairs.iter().map(|p| p[0] / p[1]).collect();
        let (on, off) = (percentile(&mut on, 0.5), percentile(&mut off, 0.5));
        let fmt = |v: f64| match self.unit {
            Unit::CpuRate => format!("{:.2} ms/s", v * 1e3),
            Unit::Time => fmt_time(v),
        };
        format!(
            "| {} | {} | {} | {:.3} | {:.3} | {} |",
            self.name,
            fmt(on),
            fmt(off),
            on / off,
            percentile(&mut q, 0.5),
            self.pairs.len()
        )
    }
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().position(|a| a == "--processes") {
        Some(i) => {
            let n = args
                .get(i + 1)
                .and_then(|n| n.parse().ok())
                .filter(|&n| n > 0)
                .expect("--processes takes a positive count");
            let mut rest = args.clone();
            rest.drain(i..i + 2);
            across_processes(n, &rest);
        }
        None => measure(),
    }
}

/// Runs the whole measurement in `n` processes, one after the other, and prints each
/// row's in / out quotient per process and their median. A process's own luck (where
/// ASLR put its stacks and heap) moved some rows by up to 40% in both builds alike (the
/// 1-worker `join` row is bimodal between processes), so one process is not enough.
fn across_processes(n: usize, args: &[String]) {
    let exe = std::env::current_exe().expect("this program's path");
    let mut names: Vec<String> = Vec::new();
    let mut ratios: Vec<Vec<f64>> = Vec::new();
    for i in 0..n {
        let out = std::process::Command::new(&exe)
            .args(args)
            .env("FEATURE_COST_CHILD", "1")
            .stderr(std::process::Stdio::inherit())
            .output()
            .expect("run a measuring process");
        assert!(out.status.success(), "measuring process {i} failed");
        let text = String::from_utf8(out.stdout).expect("UTF-8 output");
        for (row, line) in text
            .lines()
            .filter_map(|l| l.strip_prefix("ROW\t"))
            .enumerate()
        {
            let (name, ratio) = line.rsplit_once('\t').expect("name and ratio");
            if i == 0 {
                names.push(name.to_string());
                ratios.push(Vec::new());
            }
            ratios[row].push(ratio.parse().expect("a quotient"));
        }
        eprintln!("process {} of {n} done", i + 1);
    }
    if std::env::var_os("FEATURE_COST_CONTROL").is_some() {
        println!("FEATURE_COST_CONTROL: both columns are the default build (A/A).\n");
    }
    println!("{n} processes; each row's in / out quotient of medians, per process.\n");
    println!("| row | in / out, each process | median | max |");
    println!("| --- | --- | ---: | ---: |");
    for (name, mut r) in names.into_iter().zip(ratios) {
        let each: Vec<String> = r.iter().map(|q| format!("{q:.3}")).collect();
        let max = r.iter().copied().fold(f64::MIN, f64::max);
        println!(
            "| {name} | {} | {:.3} | {max:.3} |",
            each.join(" "),
            percentile(&mut r, 0.5)
        );
    }
}

/// One process's measurement: every row, both builds, printed as a markdown table.
fn measure() {
    let quick = std::env::args().any(|a| a == "--test");
    let plan = if quick { Plan::quick() } else { Plan::full() };
    let threads = std::env::var("STEALPOOL_BENCH_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(num_threads);
    // `FEATURE_COST_CONTROL=1`: both columns the default build (an A/A run), to see the
    // method's own noise.
    let control = std::env::var_os("FEATURE_COST_CONTROL").is_some();
    let make: [Make; 2] = [
        |threads| Box::new(on::candidate::Build::new("on", threads)),
        if control {
            |threads| Box::new(on::candidate::Build::new("on", threads))
        } else {
            |threads| Box::new(off::candidate::Build::new("off", threads))
        },
    ];
    on::check_not_recording(&on::candidate::Build::new("on", 1));
    let run = Runner {
        make,
        threads,
        quick,
    };
    // The table takes 31 samples of a throughput row; here 8 generations of 4 pairs.
    let (generations, per) = if quick { (1, 1) } else { (8, 4) };
    let shrink = plan.shrink;
    // `TABLE_ROWS=fib,wake` runs only those rows (the table's keys: fib, tree, quicksort,
    // scope, outside, wake, sporadic, leaves, injection).
    let want = harness::row_filter();
    let mut rows = Vec::new();

    // Fork-join rows.
    if want("fib") {
        let n = 30 - u64::from(shrink);
        let expected = fib_seq(n);
        let fib = |b: &dyn Candidate, one: bool| {
            let mut result = 0;
            let t = time(|| result = b.fib(n, one));
            assert_eq!(result, expected, "{}", b.name());
            secs(t)
        };
        rows.push(run.take(
            format!("join-fib({n}), every worker"),
            generations,
            per,
            &mut |b| fib(b, false),
        ));
        let joins = fib_joins(n);
        let mut per_join = run.take(
            "same, 1 worker: time per join".into(),
            generations,
            per,
            &mut |b| fib(b, true),
        );
        per_join.scale = 1.0 / joins;
        rows.push(per_join);
    }

    if want("tree") {
        let layers = 22 - shrink;
        let tree = tree_bfs(layers);
        let expected = sum_seq(&tree);
        rows.push(run.take(
            format!("tree-sum, 2^{layers} nodes"),
            generations,
            per,
            &mut |b| {
                let mut sum = 0;
                let t = time(|| sum = b.tree_sum(&tree));
                assert_eq!(sum, expected);
                secs(t)
            },
        ));
    }

    if want("quicksort") {
        let len = 4_000_000 >> shrink;
        let mut rng = fastrand::Rng::with_seed(7);
        let input: Vec<u64> = (0..len).map(|_| rng.u64(..)).collect();
        let mut sorted = input.clone();
        qs_seq(&mut sorted);
        let mut buf = input.clone();
        rows.push(run.take(
            format!("quicksort {}M u64", len as f64 / 1e6),
            generations,
            per,
            &mut |b| {
                buf.copy_from_slice(&input);
                let t = time(|| b.quicksort(&mut buf));
                assert!(buf == sorted, "{}: wrong order", b.name());
                secs(t)
            },
        ));
    }

    // Spawn rows.
    if want("scope") {
        let n = 1_000_000 >> (2 * shrink);
        for one in [false, true] {
            let who = if one { "1 worker" } else { "every worker" };
            rows.push(run.take(
                format!("{n} tiny `Scope::spawn`s, {who}"),
                generations,
                per.div_ceil(2),
                &mut |b| secs(time(|| b.scope_spawns(n, one))),
            ));
        }
    }

    if want("outside") {
        let n = 200_000 >> (2 * shrink);
        rows.push(run.take(
            format!("{n} `spawn`s from a non-pool thread"),
            generations,
            per,
            &mut |b| {
                let done = harness::Countdown::new(n);
                secs(time(|| {
                    for _ in 0..n {
                        let done = done.clone();
                        b.spawn(Box::new(move || done.count_down()));
                    }
                    done.wait();
                }))
            },
        ));
    }

    // Idle and wake rows.
    if want("wake") {
        let (generations, per) = if quick { (1, 3) } else { (20, 40) };
        rows.push(run.take(
            format!(
                "wake latency: idle 5 ms, one outside `spawn` starts ({generations} × {per} pairs)"
            ),
            generations,
            per,
            &mut |b| wake_sample(&|job| b.spawn(job)),
        ));
    }

    if want("sporadic") {
        let mut sporadic = run.take(
            "sporadic: one empty outside `spawn` per ms (CPU, all threads)".into(),
            // 32 windows of 0.5 s a build: with 11, one process's quotient swung by ±5%
            // in A/A runs too.
            16,
            2,
            &mut |b| sporadic_rate(plan.window, &|job| b.spawn(job)),
        );
        sporadic.unit = Unit::CpuRate;
        rows.push(sporadic);
    }

    if want("leaves") {
        let leaf = Duration::from_millis(5) / (1 << shrink);
        rows.push(run.take(
            format!("long leaves: idle 5 ms, `install(join(spin {leaf:?}, spin {leaf:?}))`"),
            generations,
            per,
            &mut |b| {
                thread::sleep(Duration::from_millis(5));
                secs(time(|| b.join_leaves(leaf)))
            },
        ));
    }

    // Injection under load: one load run per sample, its p90.
    if want("injection") {
        let leaf = Duration::from_micros(20);
        let depth = 13 + threads.max(1).ilog2() - shrink;
        rows.push(run.take(
            format!("injection under load: 2^{depth} × 20 µs join tree, outside `spawn` (p90)"),
            // 16 load runs a build: with 9, one process's quotient swung by ±4% in A/A.
            16,
            1,
            &mut |b| {
                let one_run = Plan { shrink: 1, ..plan };
                injection_latencies(
                    one_run,
                    &|started| {
                        b.spin_tree(depth, leaf, started);
                    },
                    &|job| b.spawn(job),
                )
                .1
            },
        ));
    }

    if control {
        println!("FEATURE_COST_CONTROL: both columns are the default build (A/A).\n");
    }
    if quick {
        println!("--test: a smoke run at reduced sizes; the figures are not results.\n");
    }
    println!("{threads} workers per pool; both builds in this one process, samples in pairs.\n");
    println!("| row | timeline compiled in (off) | compiled out | in / out | median pair in / out | pairs |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    for row in &rows {
        println!("{}", row.line());
    }
    if std::env::var_os("FEATURE_COST_CHILD").is_some() {
        for row in &rows {
            println!("ROW\t{}\t{}", row.name, row.ratio());
        }
    }
}

fn num_threads() -> usize {
    thread::available_parallelism().map_or(1, |n| n.get())
}
