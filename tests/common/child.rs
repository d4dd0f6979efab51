//! Running one test of the current test binary in a child process, for scenarios that
//! can abort the process, corrupt memory, wedge the global pool, need an exact thread
//! count or a fresh process (exit handlers, `fork`, environment variables read once): a
//! failure there cannot take the other tests down with it.
//!
//! A test either runs its own scenario in the child ([`ran_in_child`], or [`is_child`]
//! and [`run_child`] when it checks the child's run itself), or starts an ignored test
//! that is the scenario ([`run_child`]). Where the test binary cannot start itself (a
//! user-mode emulator), the test is skipped with a printed reason ([`skip`]).

use std::ffi::OsStr;
use std::fmt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

/// Set in the child to the name of the test it runs.
const CHILD_ENV: &str = "STEALPOOL_TEST_CHILD";

/// Outcome of a test run in a child process.
pub struct ChildRun {
    /// `None` if the child had to be killed after the timeout.
    pub status: Option<ExitStatus>,
    /// What the child wrote to stdout (libtest's lines and the test's own).
    pub stdout: String,
    /// What the child wrote to stderr (panic messages and the library's own).
    pub stderr: String,
}

impl ChildRun {
    /// Whether the child exited with success (not killed, status 0).
    pub fn succeeded(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    /// Returns the run if the child succeeded; else panics with `what` (what a failure
    /// means), the child's status and its output.
    pub fn expect_success(self, what: &str) -> Self {
        assert!(self.succeeded(), "{what}: {self}");
        self
    }
}

/// The status and both outputs, for a failure message.
impl fmt::Display for ChildRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(status) => write!(f, "{status}")?,
            None => write!(f, "killed after the timeout")?,
        }
        write!(
            f,
            "\n--- child stdout ---\n{}\n--- child stderr ---\n{}",
            self.stdout, self.stderr
        )
    }
}

/// Whether this process is the child that [`run_child`] started to run the test `name`.
pub fn is_child(name: &str) -> bool {
    std::env::var(CHILD_ENV).as_deref() == Ok(name)
}

/// Runs the test `name` of this test binary (ignored or not) alone in a child process and
/// returns how it went; kills it after `timeout_secs`.
///
/// The child gets this process's environment with [`CHILD_ENV`] set to `name` (so that
/// [`is_child`] is true there), without `STEALPOOL_NUM_THREADS` (a default-sized pool gets
/// the CPU count), and with the variables of `env` set. It runs the test with
/// `--nocapture`, so what the test and the library write reaches the child's stdout and
/// stderr, which are captured.
pub fn run_child(name: &str, timeout_secs: u64, env: &[(&str, &OsStr)]) -> ChildRun {
    let exe = std::env::current_exe().expect("current_exe");
    // Files rather than pipes: reading them cannot block on a grandchild that still holds
    // a pipe open after the child was killed.
    let log = |stream: &str| {
        std::env::temp_dir().join(format!(
            "stealpool-test-child-{}-{name}.{stream}",
            std::process::id()
        ))
    };
    let (stdout_path, stderr_path) = (log("stdout"), log("stderr"));
    let stdout = std::fs::File::create(&stdout_path).expect("child stdout file");
    let stderr = std::fs::File::create(&stderr_path).expect("child stderr file");
    let mut proc = Command::new(exe)
        .args([
            name,
            "--exact",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, name)
        .env_remove("STEALPOOL_NUM_THREADS")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
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
    ChildRun {
        status,
        stdout: take_log(&stdout_path),
        stderr: take_log(&stderr_path),
    }
}

/// The text of a child's output file, which is then removed.
fn take_log(path: &Path) -> String {
    let text = String::from_utf8_lossy(&std::fs::read(path).unwrap_or_default()).into_owned();
    let _ = std::fs::remove_file(path);
    text
}

/// The frame of a test whose scenario runs in a child process. In the parent: skips where
/// the test binary cannot start itself ([`skip_without_child_processes`]), else runs the
/// test `name` in a child ([`run_child`]), killed after `timeout_secs`, and asserts that it
/// succeeded (`what` says what a failure means; the child's status and output follow);
/// then returns true, and the caller returns. In the child: returns false, and the caller
/// runs the scenario.
pub fn ran_in_child(name: &str, timeout_secs: u64, what: &str) -> bool {
    if is_child(name) {
        return false;
    }
    if skip_without_child_processes() {
        return true;
    }
    run_child(name, timeout_secs, &[]).expect_success(what);
    true
}

/// Why this test binary cannot start itself as a child process, if it cannot, found by
/// trying once per process (`--list`, which runs no test). Tests that run a scenario in a
/// child (an abort or an exit that would end the test binary, or process-wide state such
/// as the global pool or the exit handlers) need it. Only the signs of a user-mode
/// emulator count: the kernel refusing the foreign binary (`ENOEXEC`, "Exec format
/// error"), or, under qemu-user, whose `execve` fails inside the child, the child exiting
/// with status 127 without having listed anything. Any other failure (too many open
/// files, the binary deleted by a rebuild) fails the test instead of skipping it.
pub fn cannot_start_child() -> Option<&'static str> {
    static ANSWER: OnceLock<Option<String>> = OnceLock::new();
    ANSWER
        .get_or_init(|| {
            let exe = std::env::current_exe().expect("current_exe");
            match Command::new(&exe)
                .arg("--list")
                .stdin(Stdio::null())
                .output()
            {
                Ok(out) if out.status.success() => None,
                Ok(out) if out.status.code() == Some(127) && out.stdout.is_empty() => {
                    Some(format!(
                        "the test binary, started again as a child, did not run ({}): a \
                         user-mode emulator that does not run the foreign binary on execve",
                        out.status
                    ))
                }
                Err(e) if e.raw_os_error() == Some(ENOEXEC) => Some(format!(
                    "the test binary cannot start itself as a child process ({e}): a \
                     user-mode emulator that does not run the foreign binary on execve"
                )),
                Ok(out) => panic!(
                    "the test binary, started again as a child, failed ({}): {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                ),
                Err(e) => panic!("the test binary cannot start itself as a child process: {e}"),
            }
        })
        .as_deref()
}

/// `ENOEXEC` ("Exec format error"), the same number on Linux, the BSDs and macOS.
const ENOEXEC: i32 = 8;

/// For a test that needs [`cannot_start_child`] to be `None`: records the skip and
/// returns true when it is not (the caller then returns).
pub fn skip_without_child_processes() -> bool {
    match cannot_start_child() {
        Some(reason) => {
            skip(reason);
            true
        }
        None => false,
    }
}

/// Records that the running test is skipped for `reason` (no child processes here, or no
/// `/proc`, or a platform the scenario cannot run on): a line `SKIPPED <test>: <reason>`
/// on stderr and, when `STEALPOOL_SKIP_LOG` names a file, appended there, where
/// `scripts/cross-check` counts the skips of each target. (libtest has no skipped state:
/// the test itself shows as passed, so the log is what tells.)
pub fn skip(reason: &str) {
    use std::io::Write;
    let test = thread::current().name().unwrap_or("?").to_owned();
    let line = format!("SKIPPED {test}: {reason}\n");
    eprint!("{line}");
    if let Some(path) = std::env::var_os("STEALPOOL_SKIP_LOG") {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("STEALPOOL_SKIP_LOG: cannot open the skip log");
        file.write_all(line.as_bytes())
            .expect("STEALPOOL_SKIP_LOG: cannot write the skip log");
    }
}

/// The number of threads of this process (Linux: `/proc/self/task`; 0 where there is
/// no such directory), for a scenario in a child that checks that its threads ended.
pub fn task_count() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
}
