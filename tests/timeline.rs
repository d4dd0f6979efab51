//! The worker timeline: recorded events match what the pool did (the metrics' job count,
//! every start has its end, timestamps in order), and both exports are well formed.
#![cfg(feature = "timeline")]

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::child::{run_child, skip_without_child_processes};
use common::trace::recording_pool;
use common::{fib, watchdog};
use stealpool::{JobSource, ThreadPool, ThreadPoolBuilder, TimelineEventKind};

/// Every kind of work: a join tree, outside spawns, scope spawns, a broadcast.
fn mixed_load(pool: &ThreadPool) {
    assert_eq!(pool.install(|| fib(22)), 17711);
    let done = Arc::new(AtomicUsize::new(0));
    for _ in 0..100 {
        let done = Arc::clone(&done);
        pool.spawn(move || {
            done.fetch_add(1, Ordering::SeqCst);
        });
    }
    pool.scope(|s| {
        for _ in 0..100 {
            let done = &done;
            s.spawn(move |_| {
                done.fetch_add(1, Ordering::SeqCst);
            });
        }
    });
    pool.broadcast(|_| ());
    pool.wait_idle().unwrap();
    assert_eq!(done.load(Ordering::SeqCst), 200);
}

#[test]
fn the_events_match_the_metrics_and_nest() {
    watchdog(60, || {
        let (pool, timeline) = recording_pool(3);
        mixed_load(&pool);
        let metrics = pool.metrics();
        pool.shutdown().unwrap();
        let events = timeline.events();
        assert_eq!(events.len(), 3);
        assert_eq!(timeline.jobs(), metrics.total().jobs_executed);
        let mut sources = HashMap::new();
        for (index, worker) in events.iter().enumerate() {
            let mut depth = 0i64;
            let mut last = 0;
            for event in worker {
                assert!(event.at_ns >= last, "worker {index}: time went back");
                last = event.at_ns;
                match event.kind {
                    TimelineEventKind::JobStart(source) => {
                        *sources.entry(source.name()).or_insert(0u64) += 1;
                        if let JobSource::Steal { victim } | JobSource::Rescue { victim } = source {
                            assert!(victim < 3 && victim != index);
                        }
                        depth += 1;
                    }
                    TimelineEventKind::Park => depth += 1,
                    TimelineEventKind::JobEnd | TimelineEventKind::Unpark => {
                        depth -= 1;
                        assert!(depth >= 0, "worker {index}: an end without a start");
                    }
                    _ => {}
                }
            }
            // The pool was shut down: nothing runs, nobody is parked.
            assert_eq!(depth, 0, "worker {index}: unbalanced");
        }
        assert_eq!(sources.get("broadcast"), Some(&3));
        assert!(sources.get("injector").copied().unwrap_or(0) >= 1);
        // Work from outside (the install, the spawns, the scope's body) came in through
        // the injector, each push recorded once.
        assert_eq!(timeline.injections().len() as u64, metrics.injected_jobs);
    });
}

#[test]
fn the_chrome_json_parses_and_balances() {
    watchdog(60, || {
        let (pool, timeline) = recording_pool(2);
        mixed_load(&pool);
        // Not shut down: a snapshot while the workers are alive (parked or about to);
        // the export closes whatever is open.
        let mut json = Vec::new();
        timeline.write_chrome_json(&mut json).unwrap();
        let begins = common::trace::check_chrome_trace(&json);
        assert!(begins >= 200);
        drop(pool);
    });
}

/// A run of about 10^5 jobs: the SVG stays small (sub-pixel slices are merged) and has
/// a lane per worker and the legend.
#[test]
fn the_svg_of_a_long_run_stays_small() {
    watchdog(120, || {
        let (pool, timeline) = recording_pool(2);
        pool.scope(|s| {
            for _ in 0..100_000 {
                s.spawn(|_| {
                    std::hint::black_box(0);
                });
            }
        });
        pool.shutdown().unwrap();
        assert!(timeline.jobs() >= 100_000);
        let mut svg = Vec::new();
        timeline.write_svg(&mut svg).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("worker 0") && svg.contains("worker 1"));
        assert!(svg.contains("local (") && svg.contains("parked"));
        let rects = svg.matches("<rect").count();
        assert!(rects < 3 * 1200 + 50, "{rects} rectangles");
        assert!(svg.len() < 400_000, "{} bytes", svg.len());
    });
}

#[test]
fn save_picks_the_format_from_the_extension() {
    watchdog(60, || {
        let (pool, timeline) = recording_pool(1);
        pool.install(|| ());
        let dir = std::env::temp_dir().join(format!("stealpool-timeline-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        timeline.save(dir.join("t.json")).unwrap();
        timeline.save(dir.join("t.svg")).unwrap();
        let json = std::fs::read_to_string(dir.join("t.json")).unwrap();
        assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok());
        assert!(std::fs::read_to_string(dir.join("t.svg"))
            .unwrap()
            .starts_with("<svg"));
        let err = timeline.save(dir.join("t.txt")).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
        std::fs::remove_dir_all(dir).unwrap();
    });
}

#[test]
fn a_pool_without_the_option_does_not_record() {
    if std::env::var_os(stealpool::TIMELINE_ENV).is_some() {
        return; // the variable turns recording on for every pool
    }
    let pool = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    assert!(pool.timeline().is_none());
}

/// `STEALPOOL_TIMELINE` on a program that drops a pool and returns from `main` at once:
/// the pool's threads may not have ended by then, so the file is written by the exit
/// handler (found by a breaker: the file used to be lost every time). The program is this
/// test binary itself, running the ignored test below.
#[test]
fn a_dropped_pool_saves_its_timeline_at_exit() {
    if skip_without_child_processes() {
        return;
    }
    watchdog(120, || {
        let dir = std::env::temp_dir().join(format!("stealpool-exit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Killed before the watchdog fires, so that its output is shown.
        run_child(
            "child_drops_a_recording_pool",
            100,
            &[("STEALPOOL_TIMELINE", dir.join("run.json").as_os_str())],
        )
        .expect_success("the child test failed");
        let json = std::fs::read(dir.join("run-pool1.json")).expect("no timeline saved at exit");
        assert!(common::trace::check_chrome_trace(&json) >= 1);
        std::fs::remove_dir_all(dir).unwrap();
    });
}

/// The child process of `a_dropped_pool_saves_its_timeline_at_exit`.
#[test]
#[ignore = "run as a subprocess by a_dropped_pool_saves_its_timeline_at_exit"]
fn child_drops_a_recording_pool() {
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    pool.install(|| stealpool::join(|| (), || ()));
    drop(pool);
}

/// A pool dropped just before `main` returns: the worker that ends the pool writes its
/// file, and the exit handler must wait for that write, not skip the pool as saved and let
/// the process end mid-write. Forced, five times (Linux: a FIFO and `/proc`; elsewhere the
/// test skips): the file is a FIFO that this test reads only once the child's main thread,
/// in its exit handlers, is blocked while the worker is still writing (the trace is longer
/// than the pipe holds). Every file read must be a whole trace, and the child must exit
/// cleanly after it.
#[test]
fn an_exit_during_a_save_waits_for_the_whole_file() {
    #[cfg(target_os = "linux")]
    {
        if skip_without_child_processes() {
            return;
        }
        if common::blocked::my_tid().is_none() {
            common::skip("no /proc: the child's exit cannot be seen blocked");
            return;
        }
        watchdog(120, || {
            let dir = std::env::temp_dir().join(format!("stealpool-mid-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            for run in 0..5 {
                exit_during_save::run(&dir, run);
            }
            std::fs::remove_dir_all(dir).unwrap();
        });
    }
    #[cfg(not(target_os = "linux"))]
    common::skip("needs a FIFO and /proc (Linux) to hold the save open during the exit");
}

/// The child process of `an_exit_during_a_save_waits_for_the_whole_file`: 10,000 jobs
/// (a trace longer than a pipe holds), then the pool is dropped while its workers wait in
/// their exit handler until the handle is gone, so that a worker, not this thread, ends
/// the pool and writes the file. `main` returns once the parent says so (a line on stdin);
/// the parent knows when the exit handlers begin from a line this process prints from an
/// `atexit` handler registered after stealpool's, which therefore runs just before it.
#[test]
#[cfg(target_os = "linux")]
#[ignore = "run as a subprocess by an_exit_during_a_save_waits_for_the_whole_file"]
fn child_exits_while_its_pool_saves() {
    let gate = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
    let g = Arc::clone(&gate);
    let pool = ThreadPoolBuilder::new()
        .num_threads(2)
        .exit_handler(move |_| {
            let (open, opened) = &*g;
            drop(opened.wait_while(open.lock().unwrap(), |open| !*open));
        })
        .build()
        .unwrap();
    // SAFETY: registers a plain `extern "C" fn()` that only writes to stdout.
    assert_eq!(unsafe { libc::atexit(exit_during_save::announce_exit) }, 0);
    pool.install(|| {
        stealpool::scope(|s| {
            for _ in 0..10_000 {
                s.spawn(|_| ());
            }
        })
    });
    drop(pool);
    *gate.0.lock().unwrap() = true;
    gate.1.notify_all();
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).unwrap();
}

/// The parent's side of `an_exit_during_a_save_waits_for_the_whole_file`.
#[cfg(target_os = "linux")]
mod exit_during_save {
    use std::ffi::CString;
    use std::fs::{File, OpenOptions};
    use std::io::{BufRead, BufReader, Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::Path;
    use std::process::{Child, Command, Stdio};
    use std::sync::mpsc;
    use std::thread;

    /// The line the child prints when its exit handlers begin.
    const EXITING: &str = "STEALPOOL-TEST-EXIT-HANDLERS";

    /// The child's `atexit` handler: prints [`EXITING`] on a line of its own.
    pub extern "C" fn announce_exit() {
        let line = format!("\n{EXITING}\n");
        // SAFETY: writes a live buffer of that length to stdout.
        unsafe { libc::write(1, line.as_ptr().cast(), line.len()) };
    }

    /// Kills the child (by its handle) if the test fails before it exited.
    struct Reaped(Child);

    impl Drop for Reaped {
        fn drop(&mut self) {
            if matches!(self.0.try_wait(), Ok(None)) {
                let _ = self.0.kill();
                let _ = self.0.wait();
            }
        }
    }

    /// The state letter of process `pid`'s main thread (`None` once it is reaped).
    fn main_thread_state(pid: u32) -> Option<char> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/stat")).ok()?;
        stat.rsplit_once(')')?.1.trim_start().chars().next()
    }

    /// One run: the child's pool saves to `run{run}-pool1.json` in `dir`, made a FIFO.
    pub fn run(dir: &Path, run: usize) {
        let fifo = dir.join(format!("run{run}-pool1.json"));
        let c_path = CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        let made = unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) };
        assert_eq!(made, 0, "mkfifo: {}", std::io::Error::last_os_error());
        // Opened for reading before the child starts, without waiting for a writer: the
        // worker's open succeeds at once, and its writes stop when the pipe is full.
        let mut reader = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        let fd = reader.as_raw_fd();
        // SAFETY: `fd` is open.
        let capacity = unsafe { libc::fcntl(fd, libc::F_GETPIPE_SZ) };
        assert!(
            capacity > 0,
            "F_GETPIPE_SZ: {}",
            std::io::Error::last_os_error()
        );
        let errors = dir.join(format!("run{run}.stderr"));
        let mut child = Reaped(
            Command::new(std::env::current_exe().unwrap())
                .args(["--ignored", "--exact", "child_exits_while_its_pool_saves"])
                .args(["--quiet", "--nocapture"])
                .env("STEALPOOL_TIMELINE", dir.join(format!("run{run}.json")))
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(File::create(&errors).unwrap())
                .spawn()
                .expect("start the child test"),
        );
        let stderr = || std::fs::read_to_string(&errors).unwrap_or_default();
        let (lines_tx, lines) = mpsc::channel();
        let stdout = child.0.stdout.take().unwrap();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = lines_tx.send(line);
            }
        });

        // 1. Data in the pipe: a worker is inside the save, and cannot finish it.
        let mut ready = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // Each poll returns after 100 ms without data, to notice a child that died.
        // SAFETY: one valid `pollfd`.
        while unsafe { libc::poll(&mut ready, 1, 100) } == 0 {
            if let Some(status) = child.0.try_wait().unwrap() {
                panic!(
                    "run {run}: the child exited ({status}) and saved nothing: {}",
                    stderr()
                );
            }
        }
        // 2. The child's `main` may return, and its exit handlers begin.
        child.0.stdin.take().unwrap().write_all(b"go\n").unwrap();
        let seen: Vec<String> = lines.iter().take_while(|line| line != EXITING).collect();
        // 3. Its main thread, in stealpool's exit handler, blocks on the save in progress;
        // an exit that did not wait ends the process instead.
        let pid = child.0.id();
        let mut state = main_thread_state(pid);
        while matches!(state, Some('R' | 'D')) {
            thread::yield_now();
            state = main_thread_state(pid);
        }
        assert_eq!(
            state,
            Some('S'),
            "run {run}: the exit did not wait for the save in progress (child output: \
             {seen:?}, stderr: {})",
            stderr()
        );
        // 4. The rest of the file: the save ends, and with it the exit.
        // SAFETY: `fd` is open; clears O_NONBLOCK, so reads wait for the writer.
        assert_eq!(unsafe { libc::fcntl(fd, libc::F_SETFL, 0) }, 0);
        let mut json = Vec::new();
        reader.read_to_end(&mut json).unwrap();
        let status = child.0.wait().unwrap();
        assert!(status.success(), "run {run}: child {status}: {}", stderr());
        assert!(
            json.len() > capacity as usize,
            "run {run}: the file fit the pipe, so the save could have ended before the exit"
        );
        assert!(
            crate::common::trace::check_chrome_trace(&json) >= 10_000,
            "run {run}"
        );
    }
}

/// `STEALPOOL_TIMELINE` across a fork: a child that builds its own pool and calls `exit`
/// saves that pool's file, and leaves its parent's pool (inherited, worker-less) alone;
/// the parent saves its own (found by a breaker: with the parent's pool built first, the
/// child saved nothing, since the exit handler checked the pid of the process that had
/// registered it).
#[test]
#[cfg(unix)]
fn a_forked_child_saves_its_own_pool_not_its_parents() {
    if skip_without_child_processes() {
        return;
    }
    common::watchdog(120, || {
        let dir = std::env::temp_dir().join(format!("stealpool-fork-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Killed before the watchdog fires, so that its output is shown.
        run_child(
            "child_forks_with_a_pool",
            100,
            &[("STEALPOOL_TIMELINE", dir.join("f.json").as_os_str())],
        )
        .expect_success("the child test failed");
        // The parent's pool is pool 1 (one job, an install); the child's, pool 2 (the
        // child numbers its pools after those it inherited; two installs).
        let parent = std::fs::read(dir.join("f-pool1.json")).expect("the parent's file");
        let child = std::fs::read(dir.join("f-pool2.json")).expect("the child's file");
        assert_eq!(common::trace::check_chrome_trace(&parent), 1);
        assert_eq!(common::trace::check_chrome_trace(&child), 2);
        std::fs::remove_dir_all(dir).unwrap();
    });
}

/// The process of `a_forked_child_saves_its_own_pool_not_its_parents`: a pool, a fork, a
/// pool in the child, which calls `exit` with that pool alive (running the exit handlers,
/// as a returning `main` does).
#[test]
#[cfg(unix)]
#[ignore = "run as a subprocess by a_forked_child_saves_its_own_pool_not_its_parents"]
fn child_forks_with_a_pool() {
    let pool = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    pool.install(|| ());
    // SAFETY: the child builds a new pool and leaves through `exit`; it uses no lock of
    // the parent's but through std and libc, which handle `fork` (tests/fork.rs does the
    // same a thousand times).
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let child = ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        child.install(|| ());
        child.install(|| ());
        // The pool is alive at `exit`: only the exit handler can save its file.
        // SAFETY: `exit` runs the atexit handlers and ends the child; `child` is never
        // used again.
        unsafe { libc::exit(0) };
    }
    let mut status = 0;
    // SAFETY: `pid` is our child; `status` is a valid out-pointer.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    drop(pool);
}
