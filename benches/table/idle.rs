//! Idle and wake rows: wake latency, CPU burnt while idle, sporadic work, long leaves.

use crate::harness::{
    percentile, process_cpu, spin, sporadic_rate, thread_cpu, time, wake_sample, Plan,
};
use crate::{Pools, Row};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

pub fn wake_latency_row(plan: Plan, pools: &Pools, rows: &mut Vec<Row>) {
    // One sample of each pool in turn, the first pool alternating, so that the host's
    // drifts (frequency, which core sleeps how deeply) hit both alike.
    let (mut rc, mut sp) = (Vec::new(), Vec::new());
    for i in 0..plan.latency_samples {
        if i % 2 == 0 {
            rc.push(wake_sample(&|job| pools.rc.spawn(job)));
            sp.push(wake_sample(&|job| pools.sp.spawn(job)));
        } else {
            sp.push(wake_sample(&|job| pools.sp.spawn(job)));
            rc.push(wake_sample(&|job| pools.rc.spawn(job)));
        }
    }
    let (rc, sp) = (percentile(&mut rc, 0.5), percentile(&mut sp, 0.5));
    rows.push(Row::time(
        "wake latency: idle 5 ms, one outside `spawn` starts (p50)".into(),
        vec![f64::NAN, rc, f64::NAN, sp],
        "≤ rayon-core (keep)",
    ));
}

/// CPU per second of wall time burnt by every thread but the caller's during `window`,
/// while the caller sleeps inside `hold` (which may keep a scope or a handle alive).
fn idle_cpu_rate(window: Duration, hold: &dyn Fn(&dyn Fn())) -> f64 {
    let rate = std::cell::Cell::new(0.0);
    hold(&|| {
        let (p0, t0) = (process_cpu(), thread_cpu());
        let start = Instant::now();
        thread::sleep(window);
        let others = (process_cpu() - p0).saturating_sub(thread_cpu() - t0);
        rate.set(others.as_secs_f64() / start.elapsed().as_secs_f64());
    });
    rate.get()
}

pub fn idle_cpu_rows(plan: Plan, pools: &Pools, rows: &mut Vec<Row>) {
    let burst_rc = || pools.rc.install(crate::forkjoin_burst_rc);
    let burst_sp = || pools.sp.install(crate::forkjoin_burst_sp);
    let burst_chili = || crate::forkjoin_burst_chili(&pools.chili);
    let w = plan.window;
    let plain = [
        {
            burst_rc();
            idle_cpu_rate(w, &|f| f())
        },
        {
            burst_chili();
            idle_cpu_rate(w, &|f| f())
        },
        {
            burst_sp();
            idle_cpu_rate(w, &|f| f())
        },
    ];
    rows.push(Row::cpu(
        "CPU while idle after a burst".into(),
        vec![f64::NAN, plain[0], plain[1], plain[2]],
        "< 1 ms/s (keep)",
    ));
    // The same with a scope alive (the caller sleeps inside it) / a handle alive.
    let scoped = [
        {
            burst_rc();
            idle_cpu_rate(w, &|f| pools.rc.in_place_scope(|_| f()))
        },
        {
            burst_chili();
            idle_cpu_rate(w, &|f| {
                let _scope = pools.chili.scope();
                f()
            })
        },
        {
            burst_sp();
            idle_cpu_rate(w, &|f| pools.sp.in_place_scope(|_| f()))
        },
    ];
    let handle = {
        burst_sp();
        idle_cpu_rate(w, &|f| {
            let handle = pools.sp.spawn_with_handle(|| 1);
            f();
            assert_eq!(handle.join().ok(), Some(1));
        })
    };
    let mut row = Row::cpu(
        "same, with a scope alive".into(),
        vec![f64::NAN, scoped[0], scoped[1], scoped[2]],
        "< 1 ms/s (keep)",
    );
    row.note = format!(
        "stealpool with a `JoinHandle` alive: {}",
        crate::fmt_cpu(handle)
    );
    rows.push(row);
}

pub fn sporadic_row(plan: Plan, pools: &Pools, rows: &mut Vec<Row>) {
    // The floor: one std thread woken per job through a channel.
    let (tx, rx) = mpsc::channel::<Box<dyn FnOnce() + Send>>();
    let floor_thread = thread::spawn(move || {
        for job in rx {
            job();
        }
    });
    let floor = sporadic_rate(plan.window, &|job| tx.send(job).unwrap());
    drop(tx);
    floor_thread.join().unwrap();
    let rc = sporadic_rate(plan.window, &|job| pools.rc.spawn(job));
    let sp = sporadic_rate(plan.window, &|job| pools.sp.spawn(job));
    rows.push(Row::cpu(
        "sporadic work: one empty outside `spawn` per ms (CPU, all threads)".into(),
        vec![floor, rc, f64::NAN, sp],
        "≤ 30 ms/s (sequential column: a std thread fed by a channel)",
    ));
}

pub fn long_leaves_row(plan: Plan, pools: &Pools, rows: &mut Vec<Row>) {
    let leaf = Duration::from_millis(5) / (1 << plan.shrink);
    let idle = || thread::sleep(Duration::from_millis(5));
    // One pool after the other, not interleaved: on the 2-vCPU team machine, switching
    // pools between samples delays the second leaf's start by 1-3 ms for every pool
    // alike (threads that slept in another pool's turn come back slowly), which hides
    // what the row is about: whether the pool splits at all.
    let block = |sample: &mut dyn FnMut() -> Duration| {
        for _ in 0..3 {
            idle();
            sample();
        }
        let mut v: Vec<f64> = (0..plan.rounds)
            .map(|_| {
                idle();
                sample().as_secs_f64()
            })
            .collect();
        percentile(&mut v, 0.5)
    };
    let rc = block(&mut || {
        time(|| {
            pools
                .rc
                .install(|| rayon_core::join(|| spin(leaf), || spin(leaf)))
        })
    });
    let sp = block(&mut || {
        time(|| {
            pools
                .sp
                .install(|| stealpool::join(|| spin(leaf), || spin(leaf)))
        })
    });
    let chili = block(&mut || time(|| pools.chili.scope().join(|_| spin(leaf), |_| spin(leaf))));
    rows.push(Row::time(
        format!("long leaves: idle pool, `install(join(spin {leaf:?}, spin {leaf:?}))`"),
        vec![f64::NAN, rc, chili, sp],
        "≤ 5.3 ms",
    ));
}
