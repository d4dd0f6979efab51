//! Where an output goes, and whether it may be written there. Inputs are never
//! overwritten: no output lands inside the input tree, whether by its path, through a
//! symlink on the way to it, or in place of a hard link.

use std::ffi::OsString;
use std::fs::{self, Metadata};
use std::io;
use std::path::{Path, PathBuf};

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

/// Why a file was not compressed, with a message for errors and warnings.
pub type Failure = (Skip, String);

/// gzip's warning for an output it keeps.
pub const EXISTS: &str = "already exists; not overwritten (--force replaces it)";

/// Where outputs go.
pub struct Target {
    /// Canonical output directory.
    pub root: PathBuf,
    /// Its disk identity.
    pub id: Option<FileId>,
    /// Canonical input directory.
    pub input: PathBuf,
}

/// One file's output: under `target`, at `rel` (the input's path relative to the input
/// directory) with `.gz` added; an existing one is replaced if `force`.
pub struct Output<'a> {
    pub target: &'a Target,
    pub rel: &'a Path,
    pub force: bool,
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

    /// Whether the output directory lies inside the input tree: the walk leaves it out,
    /// so what lands in it is never an input.
    fn inside_input(&self) -> bool {
        self.root.starts_with(&self.input)
    }
}

fn refuse<T>(msg: String) -> Result<T, Failure> {
    Err((Skip::WouldOverwriteInput, msg))
}

fn failed(what: &str, path: &Path, e: io::Error) -> Failure {
    (Skip::Failed, format!("{what} {}: {e}", path.display()))
}

impl Output<'_> {
    /// `<root>/<rel>.gz`
    pub fn path(&self) -> PathBuf {
        self.target.path_for(self.rel)
    }

    /// Refuses an output path that is, or may be, one of the inputs, or that exists already
    /// (unless `force`). The walk runs while files are compressed, so the rule cannot wait
    /// for the list of inputs; it needs none:
    ///
    /// * an output inside the input tree (possible when the input tree lies inside the
    ///   output directory) could be an input, or be found by the walk as one later:
    ///   refused, unless it is inside the output directory itself, which the walk never
    ///   enters;
    /// * a symlink among the directories below the output directory is never followed
    ///   ([`Output::dirs`]);
    /// * any existing output is kept, as gzip keeps it ("already exists; not
    ///   overwritten", a warning), unless `force`; then a directory is an error, as in
    ///   gzip -f, and so are a symlink and a file with more than one name (it may be a
    ///   hard link to an input): none of these is replaced; any other file is.
    ///
    /// The check is made again when the output is committed, where it counts: an output
    /// that appears meanwhile is not replaced either (`Partial::commit`).
    pub fn check(&self) -> Result<(), Failure> {
        let dest = self.path();
        if dest.starts_with(&self.target.input) && !self.target.inside_input() {
            return refuse(format!(
                "output {} would land inside the input tree",
                dest.display()
            ));
        }
        self.dirs(false)?;
        match fs::symlink_metadata(&dest) {
            Ok(_) if !self.force => Err((Skip::Exists, EXISTS.to_string())),
            Ok(meta) if meta.is_dir() => Err((
                Skip::Failed,
                format!("output {}: Is a directory", dest.display()),
            )),
            Ok(meta) if meta.file_type().is_symlink() => refuse(format!(
                "output {} is a symlink; not replaced, even with --force",
                dest.display()
            )),
            Ok(meta) if link_count(&meta) > 1 => refuse(format!(
                "output {} has other names (a hard link, maybe to an input); not writing through it",
                dest.display()
            )),
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(failed("cannot stat", &dest, e)),
        }
    }

    /// The directory the output goes in, below the output directory. Every directory on
    /// the way there must be a directory of its own, not a symlink to one: following a
    /// symlink could lead anywhere, the input tree included. With `create`, the missing
    /// ones are created and the directory's real path is checked once more (a component
    /// replaced by a symlink since it was looked at shows there); without, a missing
    /// directory ends the check, as nothing below it exists yet.
    ///
    /// The output directory itself is resolved once, at the start; symlinks above it are
    /// the user's choice.
    pub fn dirs(&self, create: bool) -> Result<PathBuf, Failure> {
        let target = self.target;
        let mut dir = target.root.clone();
        let parent = self.rel.parent().unwrap_or(Path::new(""));
        for part in parent.components() {
            dir.push(part);
            if create {
                match fs::create_dir(&dir) {
                    // Made here, so a directory of its own.
                    Ok(()) => continue,
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(failed("cannot create directory", &dir, e)),
                }
            }
            match fs::symlink_metadata(&dir) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return refuse(format!(
                        "output directory {} is a symlink; not writing through it",
                        dir.display()
                    ));
                }
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => {
                    return Err((
                        Skip::Failed,
                        format!("cannot create directory {}: Not a directory", dir.display()),
                    ))
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound && !create => return Ok(dir),
                Err(e) => return Err(failed("cannot stat", &dir, e)),
            }
        }
        if create {
            let real = fs::canonicalize(&dir).map_err(|e| failed("cannot resolve", &dir, e))?;
            let in_input = real.starts_with(&target.input) && !target.inside_input();
            if !real.starts_with(&target.root) || in_input {
                return refuse(format!(
                    "output directory {} leads to {}; not writing there",
                    dir.display(),
                    real.display()
                ));
            }
        }
        Ok(dir)
    }
}
