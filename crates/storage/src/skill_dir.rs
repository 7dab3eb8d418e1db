//! The home of file-system safety: how this project opens a skill's files. A [`SkillDir`]
//! is a handle on a skill folder by its real path; it alone opens files beneath it
//! (refusing any link that climbs out), and every open here is non-blocking (a FIFO
//! planted or swapped in cannot hang it) and keeps only a regular file, checked before
//! and after the open. Beside it: a regular file's bounded digest and its identity
//! (device, inode). Bounded reads by path are in `read.rs`, on the same open.

use std::fs::{File, Metadata, OpenOptions};
use std::io::Read as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use thiserror::Error;

/// The one spelling of a non-blocking read-only open (close-on-exec, as every open of the
/// standard library): a FIFO swapped in after any check must not block the open.
pub(crate) fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(NONBLOCK.bits() as i32);
    }
    options.open(path)
}

/// The flag [`open_nonblocking`] adds, for the opens relative to a folder's handle.
#[cfg(unix)]
pub(crate) const NONBLOCK: rustix::fs::OFlags = rustix::fs::OFlags::NONBLOCK;

/// The flags of a non-blocking read-only open relative to a folder's handle.
#[cfg(unix)]
pub(crate) const READ_FLAGS: rustix::fs::OFlags = rustix::fs::OFlags::RDONLY
    .union(NONBLOCK)
    .union(rustix::fs::OFlags::CLOEXEC);

/// Opens `path` for reading without blocking (a FIFO swapped in after a caller's check
/// cannot hang the open) and keeps it only if what was opened is a regular file; with its
/// metadata.
pub fn open_regular(path: &Path) -> std::io::Result<(File, Metadata)> {
    let file = open_nonblocking(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "it is not a regular file",
        ));
    }
    Ok((file, meta))
}

/// A file's device and inode (`None` off Unix: there each name is its own file).
pub fn file_identity(meta: &Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// [`file_identity`] of what `path` names now (links followed).
pub fn file_id(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path)
        .ok()
        .as_ref()
        .and_then(file_identity)
}

/// The `sha256:<hex>` digest of what opening `path` finds, if that is a regular file of at
/// most `limit` bytes, and how many bytes were read: opened without blocking and asked once
/// open ([`open_regular`]), so what is hashed is the regular file that was opened. Never
/// reads more than `limit + 1` bytes; a file that grows past `limit` while read gives none.
pub fn digest_regular(path: &Path, limit: u64) -> (Option<String>, u64) {
    let Ok((file, opened)) = open_regular(path) else {
        return (None, 0);
    };
    if opened.len() > limit {
        return (None, 0);
    }
    let mut file = file.take(limit + 1);
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut read = 0u64;
    loop {
        let Ok(n) = file.read(&mut buf) else {
            return (None, read);
        };
        if n == 0 {
            break;
        }
        read += n as u64;
        hasher.update(&buf[..n]);
    }
    let digest = (read <= limit).then(|| format!("sha256:{:x}", hasher.finalize()));
    (digest, read)
}

/// Why a file beneath a skill folder was not opened or read.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum BeneathError {
    /// The file is over the limit (its size).
    #[error("the file is {0} bytes, over the limit")]
    TooLarge(u64),
    /// Refused, with the reason (for a model to read).
    #[error("{0}")]
    Refused(String),
}

impl BeneathError {
    /// A stable code for programs.
    pub fn code(&self) -> &'static str {
        match self {
            BeneathError::TooLarge(_) => "FILE_TOO_LARGE",
            BeneathError::Refused(_) => "FILE_REFUSED",
        }
    }
}

/// The reason given for a file that resolves outside its skill folder.
const ESCAPES: &str = "it resolves outside the skill folder (a link that escapes is refused)";

/// A handle on a skill folder, by its real path: what opens a skill's files beneath it.
#[derive(Debug, Clone)]
pub struct SkillDir {
    real: PathBuf,
}

impl SkillDir {
    /// The folder at `dir`, resolved now.
    pub fn resolve(dir: &Path) -> Result<SkillDir, BeneathError> {
        std::fs::canonicalize(dir)
            .map(|real| SkillDir { real })
            .map_err(|_| BeneathError::Refused("the skill folder is gone".into()))
    }

    /// The folder by a real path resolved before (at a skill's load): what is opened must
    /// lie beneath it, so a folder since replaced by a link elsewhere serves nothing.
    pub fn pinned(real: &Path) -> SkillDir {
        SkillDir {
            real: real.to_path_buf(),
        }
    }

    /// The folder's real path.
    pub fn real_path(&self) -> &Path {
        &self.real
    }

    /// Opens `parts` beneath the folder without ever leaving it on the way (on Linux
    /// `openat2` with `RESOLVE_BENEATH`: the kernel refuses any `..` or link that would
    /// climb out, atomically), and keeps it only if it is a regular file within `limit`
    /// bytes whose real path lies inside the folder.
    pub fn open(&self, parts: &[&str], limit: u64) -> Result<OpenedFile, BeneathError> {
        let refused = |reason: &str| BeneathError::Refused(reason.to_owned());
        let file = open_beneath(&self.real, parts)?;
        let meta = file
            .metadata()
            .map_err(|e| BeneathError::Refused(format!("cannot read it: {e}")))?;
        if meta.is_dir() {
            return Err(refused("it is a directory, not a file"));
        }
        if !meta.is_file() {
            return Err(refused("it is not a regular file"));
        }
        if meta.len() > limit {
            return Err(BeneathError::TooLarge(meta.len()));
        }
        let real = opened_path(&file, &self.real, parts);
        if !real.starts_with(&self.real) {
            return Err(refused(ESCAPES));
        }
        Ok(OpenedFile { file, meta, real })
    }
}

/// A regular file opened beneath a [`SkillDir`].
#[derive(Debug)]
pub struct OpenedFile {
    file: File,
    meta: Metadata,
    real: PathBuf,
}

impl OpenedFile {
    /// The real path of what was opened.
    pub fn real_path(&self) -> &Path {
        &self.real
    }

    /// Its identity (device, inode), as [`file_identity`] gives.
    pub fn identity(&self) -> Option<(u64, u64)> {
        file_identity(&self.meta)
    }

    /// Reads it whole, at most `limit` bytes (a file grown past it since the open is
    /// `TooLarge`).
    pub fn read_bounded(&self, limit: u64) -> Result<Vec<u8>, BeneathError> {
        let mut bytes = Vec::with_capacity(usize::try_from(self.meta.len()).unwrap_or(0));
        (&self.file)
            .take(limit + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| BeneathError::Refused(format!("cannot read it: {e}")))?;
        if bytes.len() as u64 > limit {
            return Err(BeneathError::TooLarge(bytes.len() as u64));
        }
        Ok(bytes)
    }
}

/// Joins `parts` to `dir` and checks that the canonical path stays inside `dir`'s; the
/// canonical path, or the reason it is refused.
pub fn resolve_inside(dir: &Path, parts: &[&str]) -> Result<PathBuf, &'static str> {
    let joined: PathBuf = parts.iter().fold(dir.to_path_buf(), |p, part| p.join(part));
    let canonical_dir = std::fs::canonicalize(dir).map_err(|_| "the skill folder is gone")?;
    let canonical = std::fs::canonicalize(&joined).map_err(|_| "no such file in the skill")?;
    if !canonical.starts_with(&canonical_dir) {
        return Err(ESCAPES);
    }
    Ok(canonical)
}

#[cfg(target_os = "linux")]
fn open_beneath(dir: &Path, parts: &[&str]) -> Result<File, BeneathError> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    let refused = |e: rustix::io::Errno| {
        BeneathError::Refused(match e {
            rustix::io::Errno::XDEV => ESCAPES.into(),
            rustix::io::Errno::NOENT => "no such file in the skill".into(),
            rustix::io::Errno::LOOP => "its links loop".into(),
            other => format!("cannot open it: {other}"),
        })
    };
    let dirfd = rustix::fs::open(
        dir,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|_| BeneathError::Refused("the skill folder is gone".into()))?;
    let rel = parts.join("/");
    let flags = READ_FLAGS | OFlags::NOCTTY;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(&dirfd, rel.as_str(), flags, Mode::empty(), resolve) {
        Ok(fd) => Ok(File::from(fd)),
        // Kernels before 5.6 have no openat2: open by the checked name, and let the check
        // of what was opened (its real path) decide.
        Err(rustix::io::Errno::NOSYS) => open_checked_name(dir, parts),
        Err(e) => Err(refused(e)),
    }
}

#[cfg(not(target_os = "linux"))]
fn open_beneath(dir: &Path, parts: &[&str]) -> Result<File, BeneathError> {
    open_checked_name(dir, parts)
}

/// Opens `parts` of `dir` by its canonical name, once that is inside `dir` (a refusal
/// names the path it refuses).
fn open_checked_name(dir: &Path, parts: &[&str]) -> Result<File, BeneathError> {
    let path = resolve_inside(dir, parts)
        .map_err(|r| BeneathError::Refused(format!("{:?}: {r}", parts.join("/"))))?;
    open_nonblocking(&path).map_err(|e| BeneathError::Refused(format!("cannot open it: {e}")))
}

/// The real path of an open file: on Linux what `/proc/self/fd` says of the descriptor
/// (what was opened, not what the name means now); elsewhere the canonical name.
fn opened_path(file: &File, dir: &Path, parts: &[&str]) -> PathBuf {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd as _;
        if let Ok(p) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
            return p;
        }
    }
    let _ = file;
    let joined: PathBuf = parts.iter().fold(dir.to_path_buf(), |p, part| p.join(part));
    std::fs::canonicalize(&joined).unwrap_or(joined)
}
