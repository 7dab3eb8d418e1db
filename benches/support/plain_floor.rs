//! The floor every indexing figure is measured against: list the root's folders and read
//! the bytes the index reads of each `SKILL.md` (its first 8 KiB and one byte more), in
//! parallel, with the standard library and nothing else: no code of this project's runs
//! here. A folder with no `SKILL.md` is listed and descended into, to `depth` levels, as a
//! nested layout (owner/repo/skills/name) needs.
//!
//! Shared by `benches/gates.rs` (in process) and `examples/floor.rs` (the whole-process
//! floor beside `skillctl list`).

use std::io::Read;
use std::path::Path;

use rayon::prelude::*;

/// The bytes the index reads of a `SKILL.md`: the metadata prefix and one byte more.
pub(crate) const PREFIX: usize = 8 * 1024 + 1;

/// What the floor does around each read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checks {
    /// Open and read: the floor every figure is gated against.
    None,
    /// A `stat` before the open (a device is never opened) and an `fstat` after it, as the
    /// index does: reported beside, so the cost of that promise shows apart from the rest.
    Stat,
}

/// Reads every `SKILL.md` under `root` to `depth` levels; returns the bytes read.
pub(crate) fn floor(root: &Path, depth: usize) -> usize {
    floor_with(root, depth, Checks::None)
}

/// [`floor`], with `checks` around each read.
pub(crate) fn floor_with(root: &Path, depth: usize, checks: Checks) -> usize {
    folders(root)
        .par_iter()
        .map(|dir| folder(dir, depth.saturating_sub(1), checks))
        .sum()
}

/// The folders listed in `dir` (following links, as discovery does), hidden ones left out.
fn folders(dir: &Path) -> Vec<std::path::PathBuf> {
    listed(dir).map(|e| e.path()).collect()
}

/// The entries of `dir` that [`folders`] keeps.
fn listed(dir: &Path) -> impl Iterator<Item = std::fs::DirEntry> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().as_encoded_bytes().starts_with(b"."))
        .filter(|e| {
            e.file_type()
                .is_ok_and(|t| t.is_dir() || (t.is_symlink() && e.path().is_dir()))
        })
}

/// Reads `dir/SKILL.md`, or descends when there is none.
fn folder(dir: &Path, depth_left: usize, checks: Checks) -> usize {
    let path = dir.join("SKILL.md");
    let checked = || std::fs::metadata(&path).map(|m| m.is_file());
    let opened = match checks {
        Checks::None => std::fs::File::open(&path),
        Checks::Stat => match checked() {
            Ok(true) => std::fs::File::open(&path),
            Ok(false) => return 0,
            Err(e) => Err(e),
        },
    };
    match opened {
        Ok(mut file) => {
            if checks == Checks::Stat && !file.metadata().is_ok_and(|m| m.is_file()) {
                return 0;
            }
            let mut buf = vec![0u8; PREFIX];
            let mut filled = 0;
            while filled < PREFIX {
                match file.read(&mut buf[filled..]) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => filled += n,
                }
            }
            filled
        }
        Err(_) if depth_left > 0 => folders(dir)
            .par_iter()
            .map(|sub| folder(sub, depth_left - 1, checks))
            .sum(),
        Err(_) => 0,
    }
}

/// What [`least`] does with each `SKILL.md` it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Work {
    /// Read it, with the index's calls.
    Read,
    /// Read it, and parse its frontmatter with this project's parser, as the index does.
    Parse,
}

/// An estimate of the least an index build keeping SECURITY.md promise 20 does (from
/// above: it is one way of doing that work, not a proven minimum): the floor's reads made
/// with the index's own calls, and with [`Work::Parse`] each frontmatter parsed by this
/// project's parser as the index parses it. Nothing else: no records, no map, no
/// precedence, no reading threads of its own.
///
/// The calls: a handle on the root opened once; for each folder, relative to that handle, a
/// `stat` of its `SKILL.md` (a device is never opened), the open (non-blocking), an `fstat`
/// of the open file, one read of the size that gives (at most the index's 8 KiB and one
/// byte more), the close: the calls the index makes for a skill, in a nested layout as the
/// walk finds it (the walk's `stat` is the read's). A folder with no `SKILL.md` is listed
/// and descended into, as in
/// [`floor`]. Where the floor opens by whole path, these calls walk only the path below the
/// root, as the index's do. As the index, each thread reads into one buffer of its own
/// ([`release`] frees them). What it parsed is dropped at once, so the next parse reuses
/// its memory: keeping it all to the end, as the index keeps its records, measured 10-13%
/// slower (alternated runs at 1,000 and 10,000 skills and on the real corpus), and the
/// estimate takes the cheaper way.
///
/// Elsewhere than on Unix, the same work by whole path.
pub(crate) fn least(root: &Path, depth: usize, work: Work) -> usize {
    let parser = skills_parser::SkillParser::default();
    #[cfg(unix)]
    let handle = {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        match rustix::fs::open(root, flags, Mode::empty()) {
            Ok(handle) => handle,
            Err(_) => return 0,
        }
    };
    let at = Least {
        root,
        #[cfg(unix)]
        handle: &handle,
        parser: &parser,
        work,
    };
    at.folders(Path::new(""))
        .par_iter()
        .map(|rel| at.folder(rel, depth.saturating_sub(1)))
        .sum()
}

/// Frees the read buffer [`least`] keeps on each of rayon's threads.
#[allow(dead_code)] // The floor process exits instead.
pub(crate) fn release() {
    rayon::broadcast(|_| BUF.with(|b| *b.borrow_mut() = Vec::new()));
}

thread_local! {
    /// The read buffer of [`least`] on this thread.
    static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// What [`least`] works from.
struct Least<'a> {
    root: &'a Path,
    #[cfg(unix)]
    handle: &'a std::os::fd::OwnedFd,
    parser: &'a skills_parser::SkillParser,
    work: Work,
}

impl Least<'_> {
    /// The folders in the folder `rel` below the root (listed by whole path, as [`folders`]
    /// and the index list), relative to the root.
    fn folders(&self, rel: &Path) -> Vec<std::path::PathBuf> {
        listed(&self.root.join(rel))
            .map(|e| rel.join(e.file_name()))
            .collect()
    }

    /// Reads (and parses) `rel/SKILL.md`, or descends when there is none.
    fn folder(&self, rel: &Path, depth_left: usize) -> usize {
        let file = rel.join("SKILL.md");
        let Some((opened, size)) = self.open(&file) else {
            if depth_left == 0 {
                return 0;
            }
            return self
                .folders(rel)
                .par_iter()
                .map(|sub| self.folder(sub, depth_left - 1))
                .sum();
        };
        let Some(mut opened) = opened else {
            return 0;
        };
        // As the index: the size the `fstat` gave, at most the prefix, in one read.
        let want = if size == 0 { PREFIX } else { size.min(PREFIX) };
        BUF.with(|buf| {
            let mut buf = buf.borrow_mut();
            buf.clear();
            buf.resize(want, 0);
            let mut filled = 0;
            while filled < want {
                match opened.read(&mut buf[filled..]) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => filled += n,
                }
            }
            buf.truncate(filled);
            if self.work == Work::Parse {
                let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                let end =
                    skills_parser::frontmatter_bounds(&buf).map_or(buf.len(), |b| b.body_offset);
                let input = skills_parser::ParseInput::new(&buf[..end], name);
                std::hint::black_box(self.parser.parse(&input));
            }
            filled
        })
    }

    /// `rel`'s file opened as the index opens it, with its size: `None` when there is
    /// nothing there (a folder to descend into), `Some((None, _))` when it is not a
    /// regular file.
    #[cfg(unix)]
    fn open(&self, file: &Path) -> Option<(Option<std::fs::File>, usize)> {
        use rustix::fs::{fstat, openat, statat, AtFlags, FileType, Mode, OFlags};
        let regular = |mode| FileType::from_raw_mode(mode) == FileType::RegularFile;
        match statat(self.handle, file, AtFlags::empty()) {
            Ok(st) if regular(st.st_mode) => {}
            Ok(_) => return Some((None, 0)),
            Err(_) => return None,
        }
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let Ok(fd) = openat(self.handle, file, flags, Mode::empty()) else {
            return Some((None, 0));
        };
        match fstat(&fd) {
            Ok(st) if regular(st.st_mode) => Some((
                Some(std::fs::File::from(fd)),
                usize::try_from(st.st_size).unwrap_or(PREFIX),
            )),
            _ => Some((None, 0)),
        }
    }

    /// [`open`](Self::open) by whole path, where there is no handle to open relative to.
    #[cfg(not(unix))]
    fn open(&self, file: &Path) -> Option<(Option<std::fs::File>, usize)> {
        let path = self.root.join(file);
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() => {}
            Ok(_) => return Some((None, 0)),
            Err(_) => return None,
        }
        let Ok(opened) = std::fs::File::open(&path) else {
            return Some((None, 0));
        };
        match opened.metadata() {
            Ok(m) if m.is_file() => {
                Some((Some(opened), usize::try_from(m.len()).unwrap_or(PREFIX)))
            }
            _ => Some((None, 0)),
        }
    }
}
