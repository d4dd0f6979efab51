//! Whether a thread of this process is blocked, read from `/proc` (Linux): a test that
//! needs a caller blocked inside a call before it lets the call finish waits for that
//! instead of sleeping. Where `/proc` is missing every answer is `None`, and the test
//! skips (`common::skip`).

use std::thread;

/// The calling thread's id in `/proc`, if there is one.
pub fn my_tid() -> Option<String> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str().map(str::to_owned)
}

/// The state letter of this process's thread `tid` (`S`: sleeping), from `/proc`.
pub fn thread_state(tid: &str) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // "tid (comm) S ...": the state follows the last ')'.
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// How often this process's thread `tid` gave up the CPU to wait.
pub fn voluntary_switches(tid: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/self/task/{tid}/status")).ok()?;
    let line = status
        .lines()
        .find(|l| l.starts_with("voluntary_ctxt_switches"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Returns once this process's thread `tid` is sleeping (blocked in the kernel).
pub fn wait_blocked(tid: &str) {
    while thread_state(tid) != Some('S') {
        thread::yield_now();
    }
}
