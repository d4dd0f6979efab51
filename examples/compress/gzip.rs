//! Compressing one file, and where its output goes.

use std::ffi::OsString;
use std::fs::{self, File, Metadata};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use flate2::Compression;

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

/// Refuses an output path that is, or may be, one of the inputs. The walk runs while
/// files are compressed, so the rule cannot wait for the list of inputs; it needs none:
///
/// * an output inside the input tree `input_root` (possible when the input tree lies
///   inside the output directory) could be an input, or be found by the walk as one
///   later: refused, unless it is inside the output directory itself, which the walk
///   never enters;
/// * an existing symlink is not written through;
/// * an existing file with more than one name may be a hard link to an input: not
///   written through either.
pub fn check_output(dest: &Path, input_root: &Path, target: &Target) -> Result<(), String> {
    // An output directory inside the input tree is left out of the walk: what lands in
    // it is never an input.
    let walk_skips_target = target.root.starts_with(input_root);
    if dest.starts_with(input_root) && !walk_skips_target {
        return Err(format!(
            "output {} would land inside the input tree",
            dest.display()
        ));
    }
    match fs::symlink_metadata(dest) {
        Ok(meta) if meta.file_type().is_symlink() => Err(format!(
            "output {} is a symlink; not writing through it",
            dest.display()
        )),
        Ok(meta) if link_count(&meta) > 1 => Err(format!(
            "output {} has other names (a hard link, maybe to an input); not writing through it",
            dest.display()
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

/// Streams `file` through a gzip encoder into `sink`; returns the sizes and the sink.
fn gzip_into<W: Write>(file: &mut File, sink: W, level: Compression) -> io::Result<(Sizes, W)> {
    let mut encoder = GzEncoder::new(
        Counting {
            inner: sink,
            bytes: 0,
        },
        level,
    );
    let input = io::copy(file, &mut encoder)?;
    let counted = encoder.finish()?;
    let sizes = Sizes {
        input,
        output: counted.bytes,
    };
    Ok((sizes, counted.inner))
}

/// Why [`compress_one`] gave up on a file, with a message for errors.
pub type Failure = (Skip, String);

fn failed(what: &str, path: &Path, e: io::Error) -> Failure {
    (Skip::Failed, format!("{what} {}: {e}", path.display()))
}

/// Compresses `src` into `dest`, or into a counting sink when `dest` is `None`.
pub fn compress_one(src: &Path, dest: Option<&Path>, level: Compression) -> Result<Sizes, Failure> {
    let mut file = File::open(src).map_err(|e| (Skip::Unreadable, format!("cannot open: {e}")))?;
    // The entry may have been replaced since the walk saw it.
    match file.metadata() {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return Err((Skip::NotRegular, String::new())),
        Err(e) => return Err((Skip::Unreadable, format!("cannot stat: {e}"))),
    }
    let Some(dest) = dest else {
        let (sizes, _) = gzip_into(&mut file, io::sink(), level)
            .map_err(|e| (Skip::Failed, format!("compressing: {e}")))?;
        return Ok(sizes);
    };
    if let Some(parent) = dest.parent() {
        fs::create_dir_all(parent).map_err(|e| failed("cannot create directory", parent, e))?;
    }
    let out = File::create(dest).map_err(|e| failed("cannot create", dest, e))?;
    let written = gzip_into(&mut file, BufWriter::new(out), level).and_then(|(sizes, out)| {
        // Flush what is still buffered; a failure here is a failed write.
        out.into_inner().map_err(|e| e.into_error())?;
        Ok(sizes)
    });
    written.map_err(|e| {
        // Do not leave a truncated .gz behind.
        let _ = fs::remove_file(dest);
        failed("compressing to", dest, e)
    })
}
