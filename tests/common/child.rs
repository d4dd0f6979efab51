//! Running one test of the current test binary in a child process, for scenarios that
//! can abort the process, corrupt memory, wedge the global pool or need an exact thread
//! count: a failure there cannot take the other tests down with it.

use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Set in the child to the name of the test it runs.
const CHILD_ENV: &str = "STEALPOOL_TEST_CHILD";

/// Outcome of a scenario run in a child process.
pub struct ChildRun {
    /// `None` if the child had to be killed after the timeout.
    pub status: Option<std::process::ExitStatus>,
    /// The child's stdout and stderr, interleaved.
    pub output: String,
}

impl ChildRun {
    /// Whether the child exited with success (not killed, status 0).
    pub fn succeeded(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }
}

/// Runs the test named `name` in a child process (this binary, `--exact name`), with
/// [`CHILD_ENV`] set so that the test knows it is the child; kills it after
/// `timeout_secs`. Returns `None` in the child (the caller then runs the scenario),
/// `Some(run)` in the parent.
pub fn child(name: &str, timeout_secs: u64) -> Option<ChildRun> {
    if std::env::var(CHILD_ENV).as_deref() == Ok(name) {
        return None;
    }
    let exe = std::env::current_exe().expect("current_exe");
    let out_path = std::env::temp_dir().join(format!(
        "stealpool-test-child-{}-{name}.log",
        std::process::id()
    ));
    let out_file = std::fs::File::create(&out_path).expect("child log file");
    let mut proc = Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, name)
        .env_remove("STEALPOOL_NUM_THREADS")
        .stdin(Stdio::null())
        .stdout(out_file.try_clone().unwrap())
        .stderr(out_file)
        .spawn()
        .expect("cannot start the child test process");
    let deadline = Instant::now() + Duration::from_secs(timeout_secs);
    let status = loop {
        if let Some(status) = proc.try_wait().expect("try_wait") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = proc.kill(); // our own child, by handle
            let _ = proc.wait();
            break None;
        }
        // Polling the child's exit, not synchronising with it: the deadline is the
        // watchdog.
        thread::sleep(Duration::from_millis(10));
    };
    let output = std::fs::read_to_string(&out_path).unwrap_or_default();
    let _ = std::fs::remove_file(&out_path);
    Some(ChildRun { status, output })
}

/// The frame of a test whose scenario runs in a child process ([`child`]). In the parent:
/// skips where the test binary cannot start itself
/// ([`skip_without_child_processes`](super::skip_without_child_processes)), else runs the
/// test `name` in a child, killed after `timeout_secs`, and asserts that it succeeded
/// (`what` says what a failure means; the child's status and output follow); then returns
/// true, and the caller returns. In the child: returns false, and the caller runs the
/// scenario.
pub fn ran_in_child(name: &str, timeout_secs: u64, what: &str) -> bool {
    if std::env::var(CHILD_ENV).as_deref() == Ok(name) {
        return false;
    }
    if super::skip_without_child_processes() {
        return true;
    }
    let run = child(name, timeout_secs).expect("the parent gets the child's run");
    assert!(
        run.succeeded(),
        "{what}: status {:?}\n--- child output ---\n{}",
        run.status,
        run.output
    );
    true
}

/// The number of threads of this process (Linux: `/proc/self/task`; 0 where there is
/// no such directory).
pub fn task_count() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
}
