//! Outputs in the making, and what an interruption does with them.
//!
//! Each output is written under a temporary name in its final directory
//! (`.compress-<pid>-<n>.tmp`) and renamed to `<name>.gz` once complete, so a `.gz`
//! never holds a truncated stream. Every temporary in existence is in [`PENDING`]: it
//! is created and renamed under that lock, so the list and the disk agree whenever the
//! lock is free.
//!
//! On SIGINT, SIGTERM, SIGHUP, SIGXCPU or SIGXFSZ (Unix), or Ctrl-C, Ctrl-Break or the
//! console closing (Windows), a thread takes the lock for good, removes every temporary
//! and ends the process: on Unix by the same signal, with its default action, as gzip
//! does (a shell reports 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP, 152 for
//! SIGXCPU, 153 for SIGXFSZ); on Windows with exit status 130 (Ctrl-C, Ctrl-Break) or
//! 143 (close, log-off, shutdown). A signal that was ignored when the process started
//! (`nohup`, the background commands of a non-interactive shell) stays ignored, as in
//! gzip.
//!
//! SIGXCPU comes when the process has used up its CPU-time limit, and a SIGXFSZ sent
//! with `kill` comes to the process too. The SIGXFSZ of a write past the file-size limit
//! goes to the writing thread, which blocks it as every thread but the waiting one does:
//! the write fails instead ("File too large"), as any failed write, and its temporary
//! is removed.
//!
//! Elsewhere no handler is installed: the platform's default ends the process, which
//! may leave a `.compress-*.tmp` behind, but still never a truncated `.gz`.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// The temporaries that exist now, by number.
static PENDING: Mutex<BTreeMap<u64, PathBuf>> = Mutex::new(BTreeMap::new());

/// The next temporary's number.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// Locks [`PENDING`], ignoring poisoning (a panicking task must not stop the cleanup).
fn pending() -> MutexGuard<'static, BTreeMap<u64, PathBuf>> {
    PENDING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// An output being written: removed when dropped, unless committed.
pub struct Partial {
    id: u64,
    path: PathBuf,
}

impl Partial {
    /// Creates a new temporary file in `dir` (never an existing one).
    pub fn create(dir: &Path) -> io::Result<(Partial, File)> {
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(".compress-{}-{id}.tmp", std::process::id()));
        let mut pending = pending();
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        pending.insert(id, path.clone());
        Ok((Partial { id, path }, file))
    }

    /// Gives the complete output the name `dest`; the caller closes its handle first
    /// (Windows renames a closed file more reliably). With `replace`, any file at
    /// `dest` is replaced (a rename). Without, an existing `dest` is kept: the output is
    /// hard-linked to `dest`, which fails if anything is there, whenever it appeared,
    /// and the temporary name is then removed. On a file system without hard links the
    /// check and the rename are two steps, and an output that appears between them is
    /// replaced.
    ///
    /// On failure the temporary is handed back, for [`Partial::discard`].
    pub fn commit(self, dest: &Path, replace: bool) -> Result<(), (Partial, CommitError)> {
        let mut pending = pending();
        let result = if replace {
            fs::rename(&self.path, dest).map_err(CommitError::Failed)
        } else {
            link_new(&self.path, dest)
        };
        match result {
            Ok(()) => {
                pending.remove(&self.id);
                Ok(())
            }
            Err(e) => {
                drop(pending);
                Err((self, e))
            }
        }
    }

    /// Removes the temporary now; if it cannot be, a note for the error message that
    /// names it, as it is left behind.
    pub fn discard(self) -> Option<String> {
        let removed = {
            let mut pending = pending();
            pending.remove(&self.id);
            fs::remove_file(&self.path)
        };
        match removed {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Some(format!(
                "; its temporary {} is left behind (cannot remove it: {e})",
                self.path.display()
            )),
            _ => None,
        }
    }
}

/// How [`Partial::commit`] failed.
pub enum CommitError {
    /// `dest` exists, and was not to be replaced.
    Exists,
    /// The rename or the link failed.
    Failed(io::Error),
    /// `dest` is in place, but the temporary name of the same file could not be removed.
    Kept(io::Error),
}

/// Gives the file at `tmp` the name `dest` unless something is there, then removes the
/// name `tmp`.
fn link_new(tmp: &Path, dest: &Path) -> Result<(), CommitError> {
    match fs::hard_link(tmp, dest) {
        Ok(()) => fs::remove_file(tmp).map_err(CommitError::Kept),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(CommitError::Exists),
        // No hard links here (FAT, some network file systems): check, then rename.
        Err(_) => match fs::symlink_metadata(dest) {
            Ok(_) => Err(CommitError::Exists),
            Err(_) => fs::rename(tmp, dest).map_err(CommitError::Failed),
        },
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        let mut pending = pending();
        if pending.remove(&self.id).is_some() {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Removes every temporary and keeps the lock until the process ends, so that no task
/// creates or renames one after this.
fn remove_all() {
    let pending = pending();
    for path in pending.values() {
        let _ = fs::remove_file(path);
    }
    std::mem::forget(pending);
}

/// Starts handling the interruptions listed at the top of this file. Call it before any
/// other thread starts: on Unix the signals are blocked in the calling thread, and so in
/// every thread started after it, and a thread of their own waits for them.
pub fn install() {
    imp::install();
}

#[cfg(unix)]
mod imp {
    use std::mem;
    use std::ptr;

    const SIGNALS: [libc::c_int; 5] = [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGXCPU,
        libc::SIGXFSZ,
    ];

    pub fn install() {
        // SAFETY: the calls fill the zeroed structs they are given; a `sigset_t` and a
        // `sigaction` are plain data.
        let set = unsafe {
            let mut set = mem::zeroed::<libc::sigset_t>();
            libc::sigemptyset(&mut set);
            for sig in SIGNALS {
                let mut old = mem::zeroed::<libc::sigaction>();
                let ignored = libc::sigaction(sig, ptr::null(), &mut old) == 0
                    && old.sa_sigaction == libc::SIG_IGN;
                if !ignored {
                    libc::sigaddset(&mut set, sig);
                }
            }
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, ptr::null_mut());
            set
        };
        let spawned = std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || loop {
                let mut sig = 0;
                // SAFETY: `set` and `sig` are valid for the call.
                if unsafe { libc::sigwait(&set, &mut sig) } == 0 {
                    die_of(sig);
                }
            });
        if spawned.is_err() {
            // Without the waiting thread, the signals' default action is better than
            // none: unblock them.
            // SAFETY: as above.
            unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, ptr::null_mut()) };
        }
    }

    /// Removes the temporaries, then ends the process by `sig` with its default action.
    fn die_of(sig: libc::c_int) -> ! {
        crate::progress::clear();
        super::remove_all();
        // SAFETY: resetting a disposition, unblocking a signal in this thread and
        // raising it there are sound at any point.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            let mut set = mem::zeroed::<libc::sigset_t>();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, ptr::null_mut());
            libc::raise(sig);
        }
        // Not reached where the default action ends the process, as it does for these.
        std::process::exit(128 + sig)
    }
}

#[cfg(windows)]
mod imp {
    type HandlerRoutine = unsafe extern "system" fn(u32) -> i32;

    // In kernel32, which every Windows program links.
    #[link(name = "kernel32")]
    extern "system" {
        fn SetConsoleCtrlHandler(handler: Option<HandlerRoutine>, add: i32) -> i32;
    }

    /// Runs on a thread the system starts for the event.
    unsafe extern "system" fn handler(event: u32) -> i32 {
        // CTRL_C_EVENT (0) and CTRL_BREAK_EVENT (1) interrupt; CTRL_CLOSE_EVENT,
        // CTRL_LOGOFF_EVENT and CTRL_SHUTDOWN_EVENT terminate.
        let code = if event <= 1 { 130 } else { 143 };
        crate::progress::clear();
        super::remove_all();
        std::process::exit(code)
    }

    pub fn install() {
        // SAFETY: `handler` is a valid handler routine for the life of the process.
        unsafe { SetConsoleCtrlHandler(Some(handler), 1) };
    }
}

#[cfg(not(any(unix, windows)))]
mod imp {
    pub fn install() {}
}
