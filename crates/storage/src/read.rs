//! Bounded reads of regular files by path, and below a folder's handle during a scan: with
//! `skill_dir.rs`, the home of how this project opens a skill's files.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use thiserror::Error;

/// Why a file could not be read.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ReadError {
    /// Nothing at the path.
    #[error("no such file")]
    NotFound,
    /// Something other than a regular file (a FIFO, a device, a directory, a socket).
    #[error("not a regular file ({0})")]
    NotRegular(&'static str),
    /// Larger than the limit.
    #[error("the file is {size} bytes, over the limit of {limit} bytes")]
    TooLarge {
        /// The file's size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Any other I/O failure (permissions, a vanished file).
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl ReadError {
    /// A stable code for programs.
    pub fn code(&self) -> &'static str {
        match self {
            ReadError::NotFound => "FILE_NOT_FOUND",
            ReadError::NotRegular(_) => "FILE_NOT_REGULAR",
            ReadError::TooLarge { .. } => "FILE_TOO_LARGE",
            ReadError::Io(_) => "FILE_UNREADABLE",
        }
    }
}

/// What kind of non-regular file a file type is.
pub(crate) fn describe(ft: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    if ft.is_dir() {
        "a directory"
    } else if ft.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// Reads at most `limit` bytes of a regular file (symlinks followed). A larger file is
/// `TooLarge`; a FIFO, device or directory is refused before a byte is read, and the open
/// itself never blocks.
pub fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let mut buf = Vec::new();
    let size = read_prefix(path, limit, &mut buf)?;
    bounded(size, buf, limit)
}

/// What [`read_bounded`] gives for a [`read_prefix`] of `limit` bytes: the bytes, or
/// `TooLarge` when the extra byte came too.
pub(crate) fn bounded(size: u64, buf: Vec<u8>, limit: u64) -> Result<Vec<u8>, ReadError> {
    if buf.len() as u64 > limit {
        return Err(ReadError::TooLarge {
            size: size.max(buf.len() as u64),
            limit,
        });
    }
    Ok(buf)
}

/// Reads up to `max + 1` bytes of a regular file into `buf` (cleared first) and returns the
/// file's size as `fstat` reports it. The extra byte tells a caller the file is longer.
pub fn read_prefix(path: &Path, max: u64, buf: &mut Vec<u8>) -> Result<u64, ReadError> {
    buf.clear();
    let meta = std::fs::metadata(path).map_err(not_found_or_io)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(describe(meta.file_type())));
    }
    let file = crate::skill_dir::open_nonblocking(path).map_err(not_found_or_io)?;
    read_opened(file, max, buf)
}

/// A handle on the folder `root`, for calls relative to it during one pass (a scan, a
/// walk); `None` when it cannot be opened, and the pass uses whole paths.
#[cfg(unix)]
pub(crate) fn open_folder(root: &Path) -> Option<std::os::fd::OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    rustix::fs::open(root, flags, Mode::empty()).ok()
}

/// What follows `root` in `path` when `path` is the bytes of `root`, a separator and more:
/// a path joined below the root as given, told without comparing components (`None` for
/// anything else, which callers treat as a whole path).
pub(crate) fn below<'p>(root: &Path, path: &'p Path) -> Option<&'p [u8]> {
    path.as_os_str()
        .as_encoded_bytes()
        .strip_prefix(root.as_os_str().as_encoded_bytes())?
        .strip_prefix(std::path::MAIN_SEPARATOR_STR.as_bytes())
        .filter(|rest| {
            !rest.is_empty() && !rest.starts_with(std::path::MAIN_SEPARATOR_STR.as_bytes())
        })
}

/// Whether a whole path of `len` bytes is one the kernel walks: `PATH_MAX` counts the
/// closing NUL. A call relative to a folder's handle walks only its relative part, so it is
/// made only where the whole path could have been walked too: a path too long to read whole
/// is refused the same way through a handle.
#[cfg(unix)]
pub(crate) fn walkable(len: usize) -> bool {
    len < usize::try_from(libc::PATH_MAX).unwrap_or(4096)
}

/// [`read_prefix`] of `rel` below an open folder `dir`: the `stat` and the `open` walk
/// only `rel`, not the folder's whole path again. What is opened and is no regular file is
/// refused by its `fstat`; nothing there is [`ReadError::NotFound`], as by the whole path;
/// what else is not opened (no regular file, a failed open, a `stat` failing otherwise) is
/// read by `full` (the same file's whole path) through [`read_prefix`], so every refusal
/// and error is the one the whole path gives.
#[cfg(unix)]
pub(crate) fn read_prefix_at(
    dir: std::os::fd::BorrowedFd<'_>,
    rel: &Path,
    full: impl FnOnce() -> Option<std::path::PathBuf>,
    max: u64,
    buf: &mut Vec<u8>,
) -> Result<u64, ReadError> {
    use rustix::fs::{statat, AtFlags, FileType, Mode};
    // As `open_nonblocking`: a FIFO swapped in after the check must not block.
    let flags = crate::skill_dir::READ_FLAGS;
    let stat = statat(dir, rel, AtFlags::empty());
    // Nothing there (or a broken link): the whole path answers the same, so it is not
    // asked again (a nested layout's walk reads each folder it would have asked about
    // `SKILL.md`, and most folders that are no skill have none).
    if matches!(stat, Err(rustix::io::Errno::NOENT)) {
        buf.clear();
        return Err(ReadError::NotFound);
    }
    let regular = stat.is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile);
    let opened = regular
        .then(|| rustix::fs::openat(dir, rel, flags, Mode::empty()).ok())
        .flatten();
    match opened {
        Some(fd) => {
            buf.clear();
            read_opened(File::from(fd), max, buf)
        }
        None => read_prefix(&full().ok_or(ReadError::NotFound)?, max, buf),
    }
}

/// The rest of [`read_prefix`] once the file is open: refuse what is not a regular file
/// (checked again on the open file), then read.
fn read_opened(file: File, max: u64, buf: &mut Vec<u8>) -> Result<u64, ReadError> {
    let size = regular_size(&file)?;
    if size == 0 {
        // Some files report no size and still have content (procfs): read to the end.
        file.take(max.saturating_add(1)).read_to_end(buf)?;
        return Ok(buf.len() as u64);
    }
    let want = usize::try_from(size.min(max.saturating_add(1))).unwrap_or(usize::MAX);
    // Read the size `fstat` gave (one `read` for a small file), without the extra `read`
    // that would only find the end: a file that grows meanwhile is read as it was.
    buf.clear();
    let read = fill(file, want, buf);
    if let Err(e) = read {
        buf.clear();
        return Err(ReadError::Io(e));
    }
    buf.truncate(want);
    Ok(size)
}

/// Reads up to `want` bytes of `file` into the empty `buf`, until the end of the file: on
/// Unix into the buffer's spare room, not zeroed first (the kernel writes what it reads),
/// when that room is no larger than `want` (a read never asks for more than that).
fn fill(file: File, want: usize, buf: &mut Vec<u8>) -> std::io::Result<()> {
    #[cfg(unix)]
    if buf.capacity() <= want {
        buf.reserve_exact(want);
        if buf.capacity() == want {
            while buf.len() < want {
                match rustix::io::read(&file, rustix::buffer::spare_capacity(buf)) {
                    Ok(0) => break,
                    Ok(_) | Err(rustix::io::Errno::INTR) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            return Ok(());
        }
    }
    fill_zeroed(file, want, buf)
}

/// [`fill`] through a zeroed buffer.
fn fill_zeroed(mut file: File, want: usize, buf: &mut Vec<u8>) -> std::io::Result<()> {
    buf.resize(want, 0);
    let mut filled = 0;
    while filled < want {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(filled);
    Ok(())
}

/// The size of an open regular file; anything else is refused, described as it is.
fn regular_size(file: &File) -> Result<u64, ReadError> {
    // `fstat` itself: the standard library asks `statx` with an empty path, which costs a
    // path lookup per call.
    #[cfg(unix)]
    if let Ok(st) = rustix::fs::fstat(file) {
        use rustix::fs::FileType;
        if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile {
            return Ok(u64::try_from(st.st_size).unwrap_or(0));
        }
    }
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(describe(meta.file_type())));
    }
    Ok(meta.len())
}

fn not_found_or_io(e: std::io::Error) -> ReadError {
    if e.kind() == std::io::ErrorKind::NotFound {
        ReadError::NotFound
    } else {
        ReadError::Io(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_within_the_limit_and_refuses_past_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(read_bounded(&path, 5).unwrap(), b"12345");
        assert!(matches!(
            read_bounded(&path, 4),
            Err(ReadError::TooLarge { limit: 4, .. })
        ));
        assert!(matches!(
            read_bounded(&dir.path().join("nope"), 4),
            Err(ReadError::NotFound)
        ));
        assert!(matches!(
            read_bounded(dir.path(), 4),
            Err(ReadError::NotRegular("a directory"))
        ));
    }

    /// A prefix read gives the file's first bytes up to one past the limit, whatever room
    /// the buffer had before (none, less than the read, more than it) and whatever it held.
    #[test]
    fn a_prefix_is_the_file_s_first_bytes_whatever_the_buffer_held() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let text: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        for size in [1, 2, 7, 4096, 8192, 8193, 8194, 20_000] {
            std::fs::write(&path, &text[..size]).unwrap();
            for max in [0, 1, 8192, 30_000] {
                for room in [0, 1, 9000, 40_000] {
                    let mut buf = Vec::with_capacity(room);
                    buf.extend_from_slice(b"stale");
                    assert_eq!(read_prefix(&path, max, &mut buf).unwrap(), size as u64);
                    let want = size.min(max as usize + 1);
                    assert_eq!(buf, &text[..want], "size {size} max {max} room {room}");
                }
            }
        }
    }

    #[cfg(unix)]
    #[test]
    fn refuses_devices_and_fifos_without_blocking() {
        assert!(matches!(
            read_bounded(Path::new("/dev/zero"), 10),
            Err(ReadError::NotRegular("a character device"))
        ));
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        assert!(matches!(
            read_bounded(&fifo, 10),
            Err(ReadError::NotRegular("a FIFO"))
        ));
    }
}
