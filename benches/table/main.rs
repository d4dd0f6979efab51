//! The whole benchmark table of issue 9 in one run: stealpool beside rayon-core and chili
//! (where the peer has the feature) and the sequential baseline, every row interleaved
//! and reduced to medians or percentiles, printed as the markdown table that
//! `docs/performance.md` holds.
//!
//! ```text
//! cargo bench --bench table              # the full table (a few minutes)
//! cargo bench --bench table -- --test    # every row once, small, as a smoke check
//! ```
//!
//! `STEALPOOL_BENCH_THREADS` sets the workers of every pool (default: logical CPUs); more
//! workers than CPUs is the oversubscribed condition (a container whose CPU quota is
//! below its CPU count, a user's `num_threads(8)`). `TABLE_BUSY_CPU=N` keeps a busy loop
//! running on CPU `N` for the whole run (pinned with `sched_setaffinity` on Linux; not
//! pinned elsewhere): a noisy neighbour. `scripts/table-conditions` runs both.
//! The `par_iter` row runs `compat/rayon-check`'s `par_iter` bench first (the `rayon`
//! crate on stealpool), then the same workload on the real rayon-core here;
//! `TABLE_SKIP_COMPAT=1` leaves that half out.

mod forkjoin;
mod harness;
mod idle;
#[path = "par_iter.rs"]
mod par_iter;
mod peers;
mod sp_work;
mod spawn;
mod workload;

pub use harness::fmt_time;
use harness::Plan;
use std::num::NonZero;
use std::process::Command;
/// The pool crate `sp_work.rs` is compiled against.
use stealpool as sp;

/// Every pool of the run, each with the same number of workers.
pub struct Pools {
    pub sp: stealpool::ThreadPool,
    pub rc: rayon_core::ThreadPool,
    pub chili: chili::ThreadPool,
    pub threads: usize,
}

/// A chili pool of `threads` participants (chili counts the calling thread as one).
pub fn chili_pool(threads: usize) -> chili::ThreadPool {
    chili::ThreadPool::with_config(chili::Config {
        thread_count: NonZero::new(threads),
        ..Default::default()
    })
}

enum Unit {
    Time,
    CpuRate,
}

/// One line of the table: `[sequential, rayon-core, chili, stealpool]`, NaN where the
/// column does not apply.
pub struct Row {
    name: String,
    unit: Unit,
    values: Vec<f64>,
    goal: &'static str,
    note: String,
}

impl Row {
    pub fn time(name: String, values: Vec<f64>, goal: &'static str) -> Row {
        Row {
            name,
            unit: Unit::Time,
            values,
            goal,
            note: String::new(),
        }
    }
    pub fn cpu(name: String, values: Vec<f64>, goal: &'static str) -> Row {
        Row {
            name,
            unit: Unit::CpuRate,
            values,
            goal,
            note: String::new(),
        }
    }
}

pub fn fmt_cpu(rate: f64) -> String {
    if rate.is_nan() {
        "—".into()
    } else {
        format!("{:.2} ms/s", rate * 1e3)
    }
}

fn ratio(a: f64, b: f64) -> String {
    if a.is_nan() || b.is_nan() || b == 0.0 {
        "—".into()
    } else {
        format!("{:.2}x", a / b)
    }
}

/// A short fork-join burst for the idle rows (work, then nothing).
pub fn forkjoin_burst_sp() {
    for _ in 0..20 {
        std::hint::black_box(stealpool::join(
            || workload::fib_seq(18),
            || workload::fib_seq(18),
        ));
    }
}
pub fn forkjoin_burst_rc() {
    for _ in 0..20 {
        std::hint::black_box(rayon_core::join(
            || workload::fib_seq(18),
            || workload::fib_seq(18),
        ));
    }
}
pub fn forkjoin_burst_chili(pool: &chili::ThreadPool) {
    let mut s = pool.scope();
    for _ in 0..20 {
        std::hint::black_box(s.join(|_| workload::fib_seq(18), |_| workload::fib_seq(18)));
    }
}

/// `[stealpool (compat), rayon-core]` medians of the `par_iter` workloads.
fn par_iter_row(plan: Plan, threads: usize, quick: bool, rows: &mut Vec<Row>) {
    let compat = if quick || std::env::var_os("TABLE_SKIP_COMPAT").is_some() {
        [f64::NAN; 2]
    } else {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/compat/rayon-check");
        let out = Command::new(env!("CARGO"))
            .args(["bench", "--quiet", "--bench", "par_iter"])
            .current_dir(dir)
            .env("STEALPOOL_BENCH_THREADS", threads.to_string())
            .output()
            .expect("run compat/rayon-check's par_iter bench");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix("par_iter_medians "))
            .expect("the compat bench prints its medians");
        let mut v = line
            .split_whitespace()
            .map(|x| x.parse::<f64>().expect("a number"));
        [v.next().unwrap(), v.next().unwrap()]
    };
    let real = par_iter::par_iter_medians(threads, plan.rounds, plan.shrink);
    let names = [
        format!(
            "`par_iter` map-reduce sum of {}M u64 (rayon crate)",
            10 >> plan.shrink
        ),
        format!(
            "`par_sort_unstable` of {}M u64 (rayon crate)",
            4 >> plan.shrink
        ),
    ];
    for i in 0..2 {
        rows.push(Row::time(
            names[i].clone(),
            vec![f64::NAN, real[i], f64::NAN, compat[i]],
            "≤ rayon-core",
        ));
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--test");
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo bench -- --list` asks every bench target for its names
    }
    let plan = if quick { Plan::quick() } else { Plan::full() };
    let _neighbour = std::env::var("TABLE_BUSY_CPU")
        .ok()
        .map(|cpu| harness::BusyLoop::start(cpu.parse().expect("TABLE_BUSY_CPU: a CPU number")));
    let threads = std::env::var("STEALPOOL_BENCH_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(num_cpus::get);

    // `TABLE_ROWS=fib,sporadic` runs only those rows (keys: fib, tree, scope, outside,
    // wake, idle, sporadic, leaves, injection, quicksort, par_iter).
    let want = harness::row_filter();
    let mut rows = Vec::new();
    // First, while nothing else runs: the compat half compiles and measures in a child.
    if want("par_iter") {
        par_iter_row(plan, threads, quick, &mut rows);
    }
    let par = rows.len();
    let pools = Pools {
        sp: stealpool::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap(),
        rc: rayon_core::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap(),
        chili: chili_pool(threads),
        threads,
    };
    type RowFn = fn(Plan, &Pools, &mut Vec<Row>);
    let all: [(&str, RowFn); 10] = [
        ("fib", forkjoin::fib_rows),
        ("tree", forkjoin::tree_row),
        ("scope", spawn::scope_spawn_row),
        ("outside", spawn::outside_spawn_row),
        ("wake", idle::wake_latency_row),
        ("idle", idle::idle_cpu_rows),
        ("sporadic", idle::sporadic_row),
        ("leaves", idle::long_leaves_row),
        ("injection", spawn::injection_row),
        ("quicksort", forkjoin::quicksort_row),
    ];
    for (key, row) in all {
        if want(key) {
            row(plan, &pools, &mut rows);
        }
    }
    // The par_iter rows (measured first) go last.
    let par = rows.drain(..par).collect::<Vec<_>>();
    rows.extend(par);

    if quick {
        println!("\n--test: a smoke run at reduced sizes (and without the compat half of the");
        println!("par_iter rows); the figures below are not results.");
    }
    println!("\n{threads} workers per pool; medians (latency rows: the stated percentile).\n");
    println!("| row | sequential | rayon-core | chili | stealpool | stealpool / rayon-core | stealpool / chili | stealpool / sequential | goal |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
    for row in &rows {
        let f = |v: f64| match row.unit {
            Unit::Time => fmt_time(v),
            Unit::CpuRate => fmt_cpu(v),
        };
        let [seq, rc, chili, sp] = [row.values[0], row.values[1], row.values[2], row.values[3]];
        let name = if row.note.is_empty() {
            row.name.clone()
        } else {
            format!("{} ({})", row.name, row.note)
        };
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} |",
            f(seq),
            f(rc),
            f(chili),
            f(sp),
            ratio(sp, rc),
            ratio(sp, chili),
            ratio(sp, seq),
            row.goal
        );
    }
}
