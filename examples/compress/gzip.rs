//! Compressing one file: opening its input as gzip opens one, the header, and the output
//! under a temporary name until it is complete.

use std::ffi::OsStr;
use std::fs::{File, FileTimes, Metadata, OpenOptions};
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;
use std::time::UNIX_EPOCH;

use flate2::{Compression, GzBuilder};

use crate::hold;
use crate::output::{Failure, Output, EXISTS};
use crate::partial::{CommitError, Partial};
use crate::report::Skip;

/// Whether gzip leaves a file of this name alone as already compressed ("already has .gz
/// suffix -- unchanged"): its name ends, in any case, in one of gzip's known suffixes,
/// with something before it.
pub fn has_gzip_suffix(name: &OsStr) -> bool {
    const SUFFIXES: [&str; 7] = [".gz", ".z", ".taz", ".tgz", "-gz", "-z", "_z"];
    let name = name.to_string_lossy().to_ascii_lowercase();
    SUFFIXES
        .iter()
        .any(|s| name.len() > s.len() && name.ends_with(s))
}

/// Why gzip would not compress a file with this metadata (`lstat`'s, or the opened
/// file's own), with gzip's warning; `None` for a regular file it compresses. A
/// set-user-ID, set-group-ID or sticky file is passed over as gzip passes it over,
/// even with --force.
pub fn ignored(meta: &Metadata) -> Option<Failure> {
    if meta.is_dir() {
        // Only where a directory took a file's place since the walk.
        return Some((Skip::NotRegular, "is now a directory - ignored".into()));
    }
    if !meta.is_file() {
        let msg = "is not a directory or a regular file - ignored";
        return Some((Skip::NotRegular, msg.into()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let msg = match meta.mode() {
            m if m & 0o4000 != 0 => "is set-user-ID on execution - ignored",
            m if m & 0o2000 != 0 => "is set-group-ID on execution - ignored",
            m if m & 0o1000 != 0 => "has the sticky bit set - file ignored",
            _ => return None,
        };
        Some((Skip::SpecialMode, msg.into()))
    }
    #[cfg(not(unix))]
    None
}

/// How inputs are opened: as gzip opens them, never through a symlink (the open fails:
/// "Too many levels of symbolic links"), and without waiting for a writer when a FIFO
/// has taken the file's place since the walk (nor making a terminal the controlling
/// one); then [`ignored`] on the opened file's own metadata refuses anything but a
/// regular file. Reads from a regular file do not heed O_NONBLOCK.
#[cfg(unix)]
fn input_options() -> OpenOptions {
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
    options
}

/// How inputs are opened: a symlink (or another reparse point) is opened itself, not
/// what it points to (`FILE_FLAG_OPEN_REPARSE_POINT`), and then refused ([`open_input`]).
/// Named pipes live outside the file system, so no FIFO can take a file's place.
#[cfg(windows)]
fn input_options() -> OpenOptions {
    use std::os::windows::fs::OpenOptionsExt;
    const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT);
    options
}

/// Elsewhere the open follows a symlink that replaced the file since the walk; the
/// opened file must still be a regular one.
#[cfg(not(any(unix, windows)))]
fn input_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.read(true);
    options
}

/// Opens the input the walk found at `src` (the entry may have been replaced since:
/// [`input_options`]); returns it with its own metadata.
fn open_input(src: &Path) -> Result<(File, Metadata), Failure> {
    let unreadable = |what: &str, e: io::Error| (Skip::Unreadable, format!("{what}: {e}"));
    let file = input_options()
        .open(src)
        .map_err(|e| unreadable("cannot open", e))?;
    let meta = file.metadata().map_err(|e| unreadable("cannot stat", e))?;
    if meta.file_type().is_symlink() {
        // Windows only: the symlink itself was opened.
        let msg = "is a symbolic link - not followed".to_string();
        return Err((Skip::Unreadable, msg));
    }
    match ignored(&meta) {
        Some(failure) => Err(failure),
        None => Ok((file, meta)),
    }
}

/// Byte sizes of one compressed file.
#[derive(Clone, Copy)]
pub struct Sizes {
    pub input: u64,
    pub output: u64,
}

/// A writer that counts the bytes passed through to `inner`.
struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A reader that reports every read's byte count to `on_read` (the progress bar's
/// position moves within a file, not only when one is done).
struct Reading<'a, R> {
    inner: R,
    on_read: &'a dyn Fn(u64),
}

impl<R: Read> Read for Reading<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        (self.on_read)(n as u64);
        Ok(n)
    }
}

/// The gzip header gzip writes by default: the input's name (without its directory) and
/// its modification time; where that time does not fit the format's unsigned 32-bit
/// seconds (before 1970, after 2106), 0 ("no time") and gzip's warning.
fn header(src: &Path, meta: &Metadata) -> (GzBuilder, Option<String>) {
    let (mtime, warning) = match meta.modified() {
        // No time known: nothing to warn about.
        Err(_) => (0, None),
        Ok(t) => match t
            .duration_since(UNIX_EPOCH)
            .ok()
            .and_then(|d| u32::try_from(d.as_secs()).ok())
        {
            Some(secs) => (secs, None),
            None => {
                let msg = "file timestamp out of range for gzip format; 0 in the header";
                (0, Some(msg.to_string()))
            }
        },
    };
    let builder = GzBuilder::new().mtime(mtime);
    let Some(name) = src.file_name() else {
        return (builder, warning);
    };
    // The name's bytes as they are on Unix; elsewhere (UTF-16 names) as UTF-8.
    #[cfg(unix)]
    let name = std::os::unix::ffi::OsStrExt::as_bytes(name).to_vec();
    #[cfg(not(unix))]
    let name = name.to_string_lossy().into_owned().into_bytes();
    // A file name holds no NUL byte, which the header's field could not carry.
    (builder.filename(name), warning)
}

/// Streams `input` through a gzip encoder into `sink`; returns the sizes and the sink.
fn gzip_into<W: Write>(
    input: &mut impl Read,
    sink: W,
    header: GzBuilder,
    level: Compression,
) -> io::Result<(Sizes, W)> {
    let counting = Counting {
        inner: sink,
        bytes: 0,
    };
    let mut encoder = header.write(counting, level);
    let input = io::copy(input, &mut encoder)?;
    let counted = encoder.finish()?;
    let sizes = Sizes {
        input,
        output: counted.bytes,
    };
    Ok((sizes, counted.inner))
}

/// Gives `out` the input's times, owner (where allowed) and permission bits, as gzip
/// does; after the last write, which would change its modification time.
fn keep_metadata(out: &File, meta: &Metadata) -> io::Result<()> {
    let mut times = FileTimes::new();
    if let Ok(t) = meta.accessed() {
        times = times.set_accessed(t);
    }
    if let Ok(t) = meta.modified() {
        times = times.set_modified(t);
    }
    out.set_times(times)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        // Only root may give a file away; gzip tries too and goes on. Before the mode:
        // a change of owner clears the set-user-ID and set-group-ID bits.
        let _ = std::os::unix::fs::fchown(out, Some(meta.uid()), Some(meta.gid()));
        out.set_permissions(std::fs::Permissions::from_mode(meta.mode() & 0o7777))
    }
    // Elsewhere the permissions are the read-only flag.
    #[cfg(not(unix))]
    out.set_permissions(meta.permissions())
}

fn failed(what: &str, path: &Path, e: io::Error) -> Failure {
    (Skip::Failed, format!("{what} {}: {e}", path.display()))
}

/// `failure` for the output at `dest`, after removing the temporary. A temporary that
/// cannot be removed is left behind: that makes the failure an error, whose message
/// names it.
fn discarding(partial: Partial, dest: &Path, (why, msg): Failure) -> Failure {
    match partial.discard() {
        None => (why, msg),
        // A kept output's message is about the output, named by its path elsewhere.
        Some(note) if why == Skip::Exists => {
            (Skip::Failed, format!("{}: {msg}{note}", dest.display()))
        }
        Some(note) => (Skip::Failed, format!("{msg}{note}")),
    }
}

/// A compressed file: its sizes, and gzip's warning if there was one (the file is
/// compressed all the same).
pub struct Compressed {
    pub sizes: Sizes,
    pub warning: Option<String>,
}

/// Compresses `src` into `out`'s path, or into a counting sink when `out` is `None`,
/// calling `on_read` with the byte count of every read from `src`.
///
/// The output is written under a temporary name in its directory and renamed once
/// complete, with the input's metadata: the output never holds a truncated file, and
/// an interrupted run leaves no temporary behind either (`partial.rs`). Without
/// `--force` the rename fails if the output exists by then.
pub fn compress_one(
    src: &Path,
    out: Option<&Output<'_>>,
    level: Compression,
    on_read: &dyn Fn(u64),
) -> Result<Compressed, Failure> {
    hold::at("open");
    let (file, meta) = open_input(src)?;
    let mut input = Reading {
        inner: file,
        on_read,
    };
    let (header, warning) = header(src, &meta);
    let Some(out) = out else {
        let (sizes, _) = gzip_into(&mut input, io::sink(), header, level)
            .map_err(|e| (Skip::Failed, format!("compressing: {e}")))?;
        return Ok(Compressed { sizes, warning });
    };
    let dir = out.dirs(true)?;
    let dest = out.path();
    let (partial, file) =
        Partial::create(&dir).map_err(|e| failed("cannot create a file in", &dir, e))?;
    let written = gzip_into(&mut input, BufWriter::new(&file), header, level).and_then(
        |(sizes, buffered)| {
            // Flush what is still buffered; a failure here is a failed write.
            buffered.into_inner().map_err(|e| e.into_error())?;
            keep_metadata(&file, &meta)?;
            Ok(sizes)
        },
    );
    // Closed before the rename or the removal (Windows does neither to an open file).
    drop(file);
    let sizes = match written {
        Ok(sizes) => sizes,
        Err(e) => {
            let failure = failed("compressing to", &dest, e);
            return Err(discarding(partial, &dest, failure));
        }
    };
    hold::at("commit");
    let (partial, error) = match partial.commit(&dest, out.force) {
        Ok(()) => return Ok(Compressed { sizes, warning }),
        Err(uncommitted) => uncommitted,
    };
    let failure = match error {
        CommitError::Exists => (Skip::Exists, EXISTS.to_string()),
        CommitError::Failed(e) => failed("cannot rename the output to", &dest, e),
        CommitError::Kept(e) => {
            let msg = format!("written, but its temporary cannot be removed: {e}");
            (Skip::Failed, format!("{}: {msg}", dest.display()))
        }
    };
    Err(discarding(partial, &dest, failure))
}
