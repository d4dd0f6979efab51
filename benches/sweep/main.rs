//! Sizes swept as programs run them: each pool in a process of its own, the input built
//! in that process, many processes per point, interleaved (one process of each pool in
//! turn, so slow drifts of the machine hit all of them alike). A row of the in-process
//! table (`benches/table`) can hide a per-process effect: which path a process settles
//! on, where its input lies in memory, what the other pools of the process left behind.
//!
//! ```text
//! cargo bench --bench sweep -- tree                 # tree-sum, 2^5..2^22 nodes, 1 and 2 workers
//! cargo bench --bench sweep -- spread               # fib(30) and tree-sum on 1 worker, 15 processes
//! scripts/sweep pariter                             # par_iter through compat/rayon-core
//! ```
//!
//! Options (after the mode): `--threads 1,2`, `--layers 5-22` (tree), `--procs N`
//! (processes per point), `--passes N` (timed calls per process, after one warm-up; the
//! process's figure is their median), `--gap-us N[,N]` (sleep before each call: the
//! workers park in between), `--sizes 10,1000` (par_iter), `--compat PATH` (the
//! `par_iter_sweep` bench of `compat/rayon-check`, which runs the `rayon` crate on
//! stealpool). Each point prints the median over processes of the per-process medians,
//! and for stealpool also the slowest and fastest process.
//!
//! The child mode (`child POOL WORK SIZE THREADS PASSES GAP_US`) runs one process's share
//! and prints its per-call times in seconds.

// Medians and the time format of the in-process table.
#[path = "../table/harness.rs"]
#[allow(dead_code)]
mod harness;
#[path = "par_iter_child.rs"]
mod par_iter_child;
#[path = "../table/peers.rs"]
#[allow(dead_code)]
mod peers;
#[path = "../table/workload.rs"]
#[allow(dead_code)]
mod workload;

use harness::{fmt_time, percentile};
use std::hint::black_box;
use std::num::NonZero;
use std::process::Command;
use std::time::{Duration, Instant};
use workload::{fib_seq, sum_seq, tree_bfs, Node};

// ---- the workloads, one per pool ----

fn sum_sp(node: &Node) -> u64 {
    let (l, r) = stealpool::join(
        || node.left.as_deref().map_or(0, sum_sp),
        || node.right.as_deref().map_or(0, sum_sp),
    );
    node.value + l + r
}

fn fib_sp(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = stealpool::join(|| fib_sp(n - 1), || fib_sp(n - 2));
    a + b
}

/// The pools a child can run, as the sweep names them.
const POOLS: [&str; 4] = ["seq", "rayon-core", "chili", "stealpool"];

/// A fork-join workload and its input, built in the child: each pool's version of it.
enum Work {
    /// tree-sum over a breadth-first tree.
    Tree(Box<Node>),
    /// fib(n), a `join` per call.
    Fib(u64),
}

impl Work {
    fn seq(&self) -> u64 {
        match self {
            Work::Tree(tree) => sum_seq(black_box(tree)),
            Work::Fib(n) => fib_seq(black_box(*n)),
        }
    }
    fn rayon_core(&self) -> u64 {
        match self {
            Work::Tree(tree) => peers::sum_rc(black_box(tree)),
            Work::Fib(n) => peers::fib_rc(black_box(*n)),
        }
    }
    fn chili(&self, s: &mut chili::Scope<'_>) -> u64 {
        match self {
            Work::Tree(tree) => peers::sum_chili(s, black_box(tree)),
            Work::Fib(n) => peers::fib_chili(s, black_box(*n)),
        }
    }
    fn stealpool(&self) -> u64 {
        match self {
            Work::Tree(tree) => sum_sp(black_box(tree)),
            Work::Fib(n) => fib_sp(black_box(*n)),
        }
    }
}

/// One process's share: `passes` timed calls of `work` at `size` on `pool` with
/// `threads` workers, after one warm-up call; `gap` of sleep before each.
fn child(
    pool: &str,
    work: &str,
    size: u64,
    threads: usize,
    passes: usize,
    gap: Duration,
) -> Vec<f64> {
    let work = match work {
        "tree" => Work::Tree(tree_bfs(size as u32)),
        "fib" => Work::Fib(size),
        "sum" => {
            // The rayon crate on the real rayon-core (the compat binary runs stealpool's).
            let t = if pool == "seq" { 0 } else { threads };
            return par_iter_child::par_iter_passes(t, size as usize, passes, gap);
        }
        _ => panic!("unknown work {work}"),
    };
    let expected = work.seq();
    let mut times = Vec::with_capacity(passes);
    let mut run = |f: &mut dyn FnMut() -> u64| {
        assert_eq!(f(), expected);
        for _ in 0..passes {
            if !gap.is_zero() {
                std::thread::sleep(gap);
            }
            let start = Instant::now();
            let got = black_box(f());
            times.push(start.elapsed().as_secs_f64());
            assert_eq!(got, expected);
        }
    };
    match pool {
        "seq" => run(&mut || work.seq()),
        "rayon-core" => {
            let p = rayon_core::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            run(&mut || p.install(|| work.rayon_core()))
        }
        "chili" => {
            let p = chili_pool(threads);
            run(&mut || work.chili(&mut p.scope()))
        }
        "stealpool" => {
            let p = stealpool::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            run(&mut || p.install(|| work.stealpool()));
            // Which barrier the process ended on (the parent shows it with SWEEP_SHOW_MODE=1).
            eprintln!("barrier mode: {}", stealpool::__barrier_mode());
        }
        _ => panic!("unknown pool {pool}"),
    }
    times
}

/// A chili pool of `threads` participants (chili counts the calling thread as one).
fn chili_pool(threads: usize) -> chili::ThreadPool {
    chili::ThreadPool::with_config(chili::Config {
        thread_count: NonZero::new(threads),
        ..Default::default()
    })
}

/// Fastest, median and slowest of `v`, which must not be empty.
fn spread(v: &mut [f64]) -> (f64, f64, f64) {
    let median = percentile(v, 0.5);
    (v[0], median, v[v.len() - 1])
}

/// Runs one child process and returns the median of its per-call times.
fn spawn_child(
    exe: &str,
    pool: &str,
    work: &str,
    size: u64,
    threads: usize,
    opts: &Opts,
    gap_us: u64,
) -> f64 {
    let out = Command::new(exe)
        .args(["child", pool, work, &size.to_string(), &threads.to_string()])
        .args([opts.passes.to_string(), gap_us.to_string()])
        .output()
        .expect("the child starts");
    assert!(
        out.status.success(),
        "child {pool} {work} {size} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    if std::env::var_os("SWEEP_SHOW_MODE").is_some() {
        eprint!(
            "{pool} {work} {size}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let mut times: Vec<f64> = String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    assert!(
        !times.is_empty(),
        "{exe} printed no times for {pool} {work} {size}: not a sweep child?"
    );
    percentile(&mut times, 0.5)
}

struct Opts {
    threads: Vec<usize>,
    sizes: Vec<u64>,
    procs: usize,
    passes: usize,
    gaps_us: Vec<u64>,
    compat: Option<String>,
}

fn list(s: &str) -> Vec<u64> {
    if let Some((a, b)) = s.split_once('-') {
        return (a.parse().unwrap()..=b.parse().unwrap()).collect();
    }
    s.split(',')
        .map(|x| x.parse::<f64>().unwrap() as u64)
        .collect()
}

/// One sweep of `work`: for every thread count, gap and size, `procs` processes of each
/// of `pools` (name, the executable whose child runs it), interleaved; prints one
/// markdown table per thread count and gap.
fn sweep(opts: &Opts, work: &str, pools: &[(&str, &str)], label: &dyn Fn(u64) -> String) {
    for &threads in &opts.threads {
        for &gap in &opts.gaps_us {
            // [size][pool] -> per-process medians
            let mut m = vec![vec![Vec::new(); pools.len()]; opts.sizes.len()];
            for _ in 0..opts.procs {
                for (si, &size) in opts.sizes.iter().enumerate() {
                    for (pi, &(pool, bin)) in pools.iter().enumerate() {
                        m[si][pi].push(spawn_child(bin, pool, work, size, threads, opts, gap));
                    }
                }
            }
            println!(
                "\n{work} with {threads} worker(s){}; median of {} processes ({} calls each, median)\n",
                if gap > 0 {
                    format!(", {gap} µs apart")
                } else {
                    ", back to back".into()
                },
                opts.procs,
                opts.passes
            );
            print!(
                "| size | {} |",
                pools.iter().map(|p| p.0).collect::<Vec<_>>().join(" | ")
            );
            println!(" stealpool slowest/fastest process |");
            println!("| --- |{} --- |", " ---: |".repeat(pools.len()));
            for (si, &size) in opts.sizes.iter().enumerate() {
                let spreads: Vec<_> = m[si].iter_mut().map(|v| spread(v)).collect();
                let meds: Vec<f64> = spreads.iter().map(|s| s.1).collect();
                let seq = meds[0];
                let cells: Vec<String> = meds
                    .iter()
                    .enumerate()
                    .map(|(i, &t)| {
                        if i == 0 {
                            fmt_time(t)
                        } else {
                            format!("{} ({:.2}x)", fmt_time(t), t / seq)
                        }
                    })
                    .collect();
                let (lo, _, hi) = spreads[spreads.len() - 1];
                println!(
                    "| {} | {} | {:.2} ({} / {}) |",
                    label(size),
                    cells.join(" | "),
                    hi / lo,
                    fmt_time(hi),
                    fmt_time(lo)
                );
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("child") {
        let a = &args[1..];
        let times = child(
            &a[0],
            &a[1],
            a[2].parse().unwrap(),
            a[3].parse().unwrap(),
            a[4].parse().unwrap(),
            Duration::from_micros(a[5].parse().unwrap()),
        );
        let s: Vec<String> = times.iter().map(|t| format!("{t:e}")).collect();
        println!("{}", s.join(" "));
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return;
    }
    // `cargo bench -- --test` (and `cargo test --benches`) start it with flags only.
    let (mode, flags) = match args.first() {
        Some(first) if !first.starts_with("--") => (first.clone(), &args[1..]),
        _ => ("tree".to_string(), &args[..]),
    };
    let mut opts = Opts {
        threads: vec![1, 2],
        sizes: Vec::new(),
        procs: 5,
        passes: 15,
        gaps_us: vec![0],
        compat: std::env::var("SWEEP_COMPAT_BIN").ok(),
    };
    let mut it = flags.iter();
    while let Some(flag) = it.next() {
        let mut val = || it.next().expect("a value after the flag").clone();
        match flag.as_str() {
            "--threads" => opts.threads = list(&val()).into_iter().map(|t| t as usize).collect(),
            "--layers" | "--sizes" => opts.sizes = list(&val()),
            "--procs" => opts.procs = val().parse().unwrap(),
            "--passes" => opts.passes = val().parse().unwrap(),
            "--gap-us" => opts.gaps_us = list(&val()),
            "--compat" => opts.compat = Some(val()),
            "--test" => {
                opts.procs = 1;
                opts.passes = 2;
                opts.threads = vec![2];
                opts.sizes = vec![5, 10];
            }
            other => panic!("unknown option {other}"),
        }
    }
    let exe = std::env::current_exe().unwrap();
    let exe = exe.to_str().unwrap();
    let here: Vec<(&str, &str)> = POOLS.iter().map(|&p| (p, exe)).collect();
    match mode.as_str() {
        "tree" => {
            if opts.sizes.is_empty() {
                opts.sizes = (5..=22).collect();
            }
            sweep(&opts, "tree", &here, &|l| format!("2^{l}"));
        }
        "fib" => {
            if opts.sizes.is_empty() {
                opts.sizes = vec![20, 25, 30];
            }
            sweep(&opts, "fib", &here, &|n| format!("fib({n})"));
        }
        "spread" => {
            // fastest, median and slowest process of each pool on one worker.
            if opts.procs == 5 {
                opts.procs = 15;
            }
            opts.threads = vec![1];
            for (work, size) in [("fib", 30), ("tree", 16), ("tree", 22)] {
                println!("\n{work}({size}) on 1 worker, {} processes: fastest / median / slowest (slowest/fastest)\n", opts.procs);
                println!("| pool | fastest | median | slowest | slowest/fastest |\n| --- | ---: | ---: | ---: | ---: |");
                let mut m = vec![Vec::new(); POOLS.len()];
                for _ in 0..opts.procs {
                    for (pi, pool) in POOLS.iter().enumerate() {
                        m[pi].push(spawn_child(exe, pool, work, size, 1, &opts, 0));
                    }
                }
                for (pool, v) in POOLS.iter().zip(m.iter_mut()) {
                    let (lo, med, hi) = spread(v);
                    println!(
                        "| {pool} | {} | {} | {} | {:.2} |",
                        fmt_time(lo),
                        fmt_time(med),
                        fmt_time(hi),
                        hi / lo
                    );
                }
            }
        }
        "pariter" => {
            if opts.sizes.is_empty() {
                opts.sizes = vec![10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000];
            }
            if opts.threads == [1, 2] {
                opts.threads = vec![2];
            }
            let compat = opts
                .compat
                .clone()
                .expect("--compat PATH or SWEEP_COMPAT_BIN (scripts/sweep sets it)");
            let pools = [
                ("seq", exe),
                ("rayon-core", exe),
                ("stealpool", compat.as_str()),
            ];
            sweep(&opts, "sum", &pools, &|n| format!("{n}"));
        }
        other => panic!("unknown mode {other} (tree, fib, spread, pariter)"),
    }
}
