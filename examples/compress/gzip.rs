//! Compressing one file, and where its output goes.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, FileTimes, Metadata};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use flate2::{Compression, GzBuilder};

use crate::partial::Partial;
use crate::report::Skip;

/// Identity of a file on disk, used to spot the output directory under another name.
pub type FileId = (u64, u64);

#[cfg(unix)]
pub fn file_id(meta: &Metadata) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
pub fn file_id(_meta: &Metadata) -> Option<FileId> {
    None
}

/// How many names the file has (hard links); 1 where the platform does not say.
#[cfg(unix)]
fn link_count(meta: &Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.nlink()
}

#[cfg(not(unix))]
fn link_count(_meta: &Metadata) -> u64 {
    1
}

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

/// Where outputs go.
pub struct Target {
    /// Canonical output directory.
    pub root: PathBuf,
    /// Its disk identity.
    pub id: Option<FileId>,
}

impl Target {
    /// Whether the directory at `path` (with `meta`) is the output directory.
    pub fn is(&self, path: &Path, meta: &Metadata) -> bool {
        path == self.root || (self.id.is_some() && file_id(meta) == self.id)
    }

    /// `<root>/<rel>.gz`
    pub fn path_for(&self, rel: &Path) -> PathBuf {
        let mut name = OsString::from(rel.as_os_str());
        name.push(".gz");
        self.root.join(name)
    }
}

/// Why [`compress_one`] or [`check_output`] gave up on a file, with a message for errors
/// and warnings.
pub type Failure = (Skip, String);

/// Refuses an output path that is, or may be, one of the inputs, or that exists already
/// (unless `force`). The walk runs while files are compressed, so the rule cannot wait
/// for the list of inputs; it needs none:
///
/// * an output inside the input tree `input_root` (possible when the input tree lies
///   inside the output directory) could be an input, or be found by the walk as one
///   later: refused, unless it is inside the output directory itself, which the walk
///   never enters;
/// * an existing symlink is not replaced, even with `force`;
/// * an existing file with more than one name may be a hard link to an input: not
///   replaced either;
/// * any other existing output is kept, as gzip keeps it ("already exists; not
///   overwritten", a warning), unless `force`: then the new output replaces it.
pub fn check_output(
    dest: &Path,
    input_root: &Path,
    target: &Target,
    force: bool,
) -> Result<(), Failure> {
    // An output directory inside the input tree is left out of the walk: what lands in
    // it is never an input.
    let walk_skips_target = target.root.starts_with(input_root);
    if dest.starts_with(input_root) && !walk_skips_target {
        let msg = format!("output {} would land inside the input tree", dest.display());
        return Err((Skip::WouldOverwriteInput, msg));
    }
    let refuse = |msg: String| Err((Skip::WouldOverwriteInput, msg));
    match fs::symlink_metadata(dest) {
        Ok(meta) if meta.file_type().is_symlink() => refuse(format!(
            "output {} is a symlink; not writing through it",
            dest.display()
        )),
        Ok(meta) if link_count(&meta) > 1 => refuse(format!(
            "output {} has other names (a hard link, maybe to an input); not writing through it",
            dest.display()
        )),
        Ok(_) if !force => Err((
            Skip::Exists,
            "already exists; not overwritten (--force replaces it)".to_string(),
        )),
        _ => Ok(()),
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
/// its modification time, 0 where that does not fit the format's 32-bit seconds.
fn header(src: &Path, meta: &Metadata) -> GzBuilder {
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .and_then(|d| u32::try_from(d.as_secs()).ok())
        .unwrap_or(0);
    let builder = GzBuilder::new().mtime(mtime);
    let Some(name) = src.file_name() else {
        return builder;
    };
    // The name's bytes as they are on Unix; elsewhere (UTF-16 names) as UTF-8.
    #[cfg(unix)]
    let name = std::os::unix::ffi::OsStrExt::as_bytes(name).to_vec();
    #[cfg(not(unix))]
    let name = name.to_string_lossy().into_owned().into_bytes();
    // A file name holds no NUL byte, which the header's field could not carry.
    builder.filename(name)
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
        out.set_permissions(fs::Permissions::from_mode(meta.mode() & 0o7777))
    }
    // Elsewhere the permissions are the read-only flag.
    #[cfg(not(unix))]
    out.set_permissions(meta.permissions())
}

fn failed(what: &str, path: &Path, e: io::Error) -> Failure {
    (Skip::Failed, format!("{what} {}: {e}", path.display()))
}

/// Compresses `src` into `dest`, or into a counting sink when `dest` is `None`, calling
/// `on_read` with the byte count of every read from `src`.
///
/// The output is written under a temporary name in `dest`'s directory and renamed to
/// `dest` once complete, with the input's metadata: `dest` never holds a truncated file,
/// and an interrupted run leaves no temporary behind either (`partial.rs`).
pub fn compress_one(
    src: &Path,
    dest: Option<&Path>,
    level: Compression,
    on_read: &dyn Fn(u64),
) -> Result<Sizes, Failure> {
    let file = File::open(src).map_err(|e| (Skip::Unreadable, format!("cannot open: {e}")))?;
    // The entry may have been replaced since the walk saw it.
    let meta = match file.metadata() {
        Ok(meta) if meta.is_file() => meta,
        Ok(_) => return Err((Skip::NotRegular, String::new())),
        Err(e) => return Err((Skip::Unreadable, format!("cannot stat: {e}"))),
    };
    let mut input = Reading {
        inner: file,
        on_read,
    };
    let header = header(src, &meta);
    let Some(dest) = dest else {
        let (sizes, _) = gzip_into(&mut input, io::sink(), header, level)
            .map_err(|e| (Skip::Failed, format!("compressing: {e}")))?;
        return Ok(sizes);
    };
    let dir = dest.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(|e| failed("cannot create directory", dir, e))?;
    // Removed again, unless committed, when `partial` is dropped.
    let (partial, out) =
        Partial::create(dir).map_err(|e| failed("cannot create a file in", dir, e))?;
    let sizes = gzip_into(&mut input, BufWriter::new(&out), header, level)
        .and_then(|(sizes, buffered)| {
            // Flush what is still buffered; a failure here is a failed write.
            buffered.into_inner().map_err(|e| e.into_error())?;
            keep_metadata(&out, &meta)?;
            Ok(sizes)
        })
        .map_err(|e| failed("compressing to", dest, e))?;
    drop(out);
    partial
        .commit(dest)
        .map_err(|e| failed("cannot rename the output to", dest, e))?;
    Ok(sizes)
}
