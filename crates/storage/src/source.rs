//! Sources of skills: the filesystem ([`FsSource`]), memory ([`MemorySource`], for tests and
//! generated skills) and files compiled into a binary ([`EmbeddedSource`]), behind one trait,
//! [`SkillSource`].
//!
//! Every source is addressed by relative paths with `/` separators (`pdf-tools/SKILL.md`).
//! `.` and empty components are ignored; a path that is absolute or holds a `..` component
//! is refused by every source as [`ReadError::NotFound`], so no path can leave the source.
//! File listings follow one rule for every source: regular files at most 32 levels below
//! the skill folder, hidden entries (names starting with `.`) and `node_modules` left out,
//! a link listed only when it leads to a file inside the skill folder (links to folders are
//! not followed), at most [`MAX_LISTED_FILES`] files. So a listing names exactly the files a reader confined to the skill
//! folder can open, and the same skill lists the same files on disk and in memory.
//!
//! ```
//! use skills_storage::{MemorySource, SkillSource};
//!
//! let source = MemorySource::from_files([
//!     ("pdf-tools/SKILL.md", "---\nname: pdf-tools\n---\n"),
//!     ("pdf-tools/scripts/fill.py", "print('hi')\n"),
//! ]);
//! assert_eq!(source.skill_dirs(), ["pdf-tools"]);
//! assert!(source.read("pdf-tools/SKILL.md", 1 << 20).unwrap().starts_with(b"---"));
//! assert!(source.read("../etc/passwd", 1 << 20).is_err());
//! ```

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use crate::discover::{expected, joined, walk_reading, Level, Run, Walked};
use crate::{
    discover, read_bounded, Candidate, Discovery, DiscoveryOptions, LeafFiles, ReadError,
    SKILL_FILE,
};

/// The deepest a file listing goes below a skill folder.
const MAX_FILE_DEPTH: usize = 32;
/// The most files a listing names (a hostile folder cannot make one unbounded).
pub const MAX_LISTED_FILES: usize = 10_000;

/// Where skills come from: the filesystem, memory, or a binary.
///
/// Paths are relative with `/` separators; `.` and empty components are ignored, and a path
/// that is absolute or holds `..` names nothing (reads fail with [`ReadError::NotFound`]).
///
/// An index calls a source from its own reading threads, while the thread that asked for
/// the scan waits, and that thread may be a worker of the host's rayon pool, parked for
/// the scan's length. A source must not wait on work queued on the host's pool: when that
/// pool's only free worker is the parked one, nothing would ever run it.
pub trait SkillSource: Send + Sync + std::fmt::Debug {
    /// Skill folders this source holds, by relative folder path (`pdf-tools`, `group/x`), in
    /// path order (component by component, as `Path` orders). The root itself, when it is a
    /// skill, is `.`.
    fn skill_dirs(&self) -> Vec<String>;
    /// Reads a file of the source, by relative path with `/` separators
    /// (`pdf-tools/SKILL.md`), at most `limit` bytes (else [`ReadError::TooLarge`]).
    fn read(&self, path: &str, limit: u64) -> Result<Vec<u8>, ReadError>;
    /// Files under a skill folder (relative to the folder, `/`-separated, sorted in path
    /// order) with their sizes in bytes; hidden entries and `node_modules` are left out.
    fn files(&self, skill_dir: &str) -> Vec<(String, u64)>;
    /// Whether a folder exists in the source (e.g. `pdf-tools/references`).
    fn is_dir(&self, path: &str) -> bool;
    /// The filesystem path of the source's root, when it has one.
    fn fs_root(&self) -> Option<&Path> {
        None
    }
    /// The skill folders with the file each is known by: `SKILL.md`, or a misnamed
    /// `skill.md` that validation reports. The default is [`skill_dirs`](Self::skill_dirs),
    /// each with `SKILL.md`.
    fn candidates(&self) -> Vec<SourceCandidate> {
        self.skill_dirs()
            .into_iter()
            .map(|dir| SourceCandidate {
                dir,
                file: SKILL_FILE.to_owned(),
                misnamed: false,
                resolved: None,
            })
            .collect()
    }
    /// [`candidates`](Self::candidates), or, where finding out costs a call per folder,
    /// more: folders expected to hold `SKILL.md` that may not. A caller reads each, and
    /// asks [`candidate`](Self::candidate) about a folder whose `SKILL.md` is not found
    /// (the index does). The default is [`candidates`](Self::candidates).
    fn expected_candidates(&self) -> CandidateList {
        self.candidates().into()
    }
    /// [`expected_candidates`](Self::expected_candidates), giving `read` the candidates a
    /// source can read where it finds them (for a folder: those of a nested layout's walk
    /// that it would have asked about `SKILL.md`, on the walking thread, before the walk
    /// goes on; and a flat layout's, as the root's listing names them, on the other
    /// threads of the pool it runs on). `read` returns whether it took the candidate; what
    /// it took is not in the
    /// list, what it did not take (no `SKILL.md` there) is found as before. The default
    /// gives `read` nothing.
    fn expected_candidates_reading(&self, read: &ReadCandidate<'_>) -> CandidateList {
        let _ = read;
        self.expected_candidates()
    }

    /// The candidate at one folder (relative path), when it holds a skill file: what
    /// [`candidates`](Self::candidates) would list for it. Watchers ask this of a folder
    /// that changed.
    fn candidate(&self, dir: &str) -> Option<SourceCandidate> {
        let dir = normalize(dir)?;
        self.read_prefix(&join(&dir, SKILL_FILE), 0, &mut Vec::new())
            .ok()?;
        Some(SourceCandidate {
            dir: dir_label(dir),
            file: SKILL_FILE.to_owned(),
            misnamed: false,
            resolved: None,
        })
    }
    /// This source as one scan (a pass reading many of its skills) reads it, or `None` to
    /// read through the source itself (the default). The scan lists and reads through it
    /// alone. An [`FsSource`] gives itself with a handle on its root opened now, so each of
    /// the scan's reads walks only the path below the root.
    fn for_scan(&self) -> Option<std::sync::Arc<dyn SkillSource>> {
        None
    }
    /// Reads at most `max` bytes of a file into `buf` and returns the file's whole size, so
    /// a caller can read a prefix first and the rest only when it needs it.
    fn read_prefix(&self, path: &str, max: u64, buf: &mut Vec<u8>) -> Result<u64, ReadError> {
        let bytes = self.read(path, u64::MAX)?;
        let size = bytes.len() as u64;
        buf.extend_from_slice(
            &bytes[..bytes.len().min(usize::try_from(max).unwrap_or(usize::MAX))],
        );
        Ok(size)
    }
    /// The remote origin this source reads from (a well-known index, an MCP server), or
    /// `None` for disk, memory and the host's binary (the default). Every record read from
    /// a remote source carries it, and the executor trusts such a skill only by it.
    fn remote_origin(&self) -> Option<skills_model::RemoteOrigin> {
        None
    }
    /// A label for where the source's skills are read from (a URL), used as the prefix of
    /// their paths in place of `embedded:<id>`; `None` by default.
    fn location(&self) -> Option<String> {
        None
    }
    /// Gives the source the means to tell its index that what it holds changed (a poller's
    /// new version, a server's notification). The default ignores it: such sources never
    /// change on their own.
    fn set_notifier(&self, notifier: SourceNotifier) {
        let _ = notifier;
    }
    /// The files of skill folder `skill_dir` as the source's current version of it states
    /// them, each with its digest and size (an MCP server's entry): a session keeps this at
    /// a load and checks that skill's later reads against it, whatever the source holds by
    /// then. `None` (the default) for a source whose versions state no digests.
    fn held_files(&self, skill_dir: &str) -> Option<Vec<HeldFile>> {
        let _ = skill_dir;
        None
    }
}

/// Reads a candidate where a source finds it
/// ([`SkillSource::expected_candidates_reading`]): `true` when it took it, `false` when
/// there is no skill file to read (the source then finds what is there as it would have).
pub type ReadCandidate<'a> = dyn Fn(&SourceCandidate) -> bool + Sync + 'a;

/// One file of a skill's version as its source states it ([`SkillSource::held_files`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldFile {
    /// The path relative to the skill folder (`SKILL.md`, `references/guide.md`).
    pub path: String,
    /// `sha256:<64 lowercase hex>` of its bytes.
    pub digest: String,
    /// Its size in bytes.
    pub size: u64,
}

/// Tells an index that a source's skills changed: [`changed`](SourceNotifier::changed)
/// has the index read that source's root again and publish the result as the file watcher
/// publishes a change (change events, `active_skill_outdated`). Cheap to clone; calling it
/// after the index is gone does nothing.
#[derive(Clone)]
pub struct SourceNotifier(Arc<dyn Fn() + Send + Sync>);

impl SourceNotifier {
    /// A notifier that runs `f` on each change (the index's own; tests may count calls).
    pub fn new(f: impl Fn() + Send + Sync + 'static) -> SourceNotifier {
        SourceNotifier(Arc::new(f))
    }

    /// The source's skills changed. Returns at once: the index rereads on a thread of its
    /// own, so a source may call it from any thread, even from inside one of its methods.
    pub fn changed(&self) {
        (self.0)();
    }
}

impl fmt::Debug for SourceNotifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SourceNotifier")
    }
}

/// A skill folder of a source and the file it is known by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceCandidate {
    /// The folder, relative to the source's root (`.` for the root itself).
    pub dir: String,
    /// The skill file's name inside the folder: `SKILL.md`, or the misnamed file's name.
    pub file: String,
    /// Whether the file is misnamed (`skill.md` in another case than `SKILL.md`).
    pub misnamed: bool,
    /// The folder on disk with every link resolved, for a source on disk: the path
    /// reported for the skill.
    pub resolved: Option<PathBuf>,
}

impl SourceCandidate {
    /// The skill file's path relative to the source's root.
    pub fn file_path(&self) -> String {
        join(&self.dir, &self.file)
    }

    /// [`file_path`](Self::file_path) written into `path`, whatever it held (a reader of
    /// many candidates keeps one buffer).
    pub fn file_path_into(&self, path: &mut String) {
        join_into(path, &self.dir, &self.file);
    }
}

/// The candidates a scan reads ([`SkillSource::expected_candidates`]), held compactly: a
/// folder named in its parent's listing is held as its name until it is taken, so a scan
/// of 100,000 skills holds their names, not their paths (the paths are made by the threads
/// that read each skill, and freed there).
///
/// ```
/// use skills_storage::{DiscoveryOptions, FsSource, SkillSource};
///
/// let root = tempfile::tempdir().unwrap();
/// for name in ["a", "b", "c"] {
///     std::fs::create_dir(root.path().join(name)).unwrap();
/// }
/// let source = FsSource::new(root.path().to_path_buf(), DiscoveryOptions::roots());
/// let mut list = source.expected_candidates();
/// assert_eq!(list.len(), 3);
/// // Read a chunk at a time: each candidate is made whole as it is taken.
/// let chunk = list.split_off_last(2);
/// assert_eq!((chunk.len(), list.len()), (2, 1));
/// let mut dirs: Vec<String> = chunk.into_candidates().into_iter().map(|c| c.dir).collect();
/// dirs.extend(list.into_candidates().into_iter().map(|c| c.dir));
/// dirs.sort();
/// assert_eq!(dirs, ["a", "b", "c"]);
/// ```
#[derive(Debug, Default)]
pub struct CandidateList {
    /// The listed folders `names` are in.
    parents: Arc<[ListedParent]>,
    /// Runs of `names`: each the index of its parent and the end of its names.
    runs: Vec<(usize, usize)>,
    /// Folders by name, each taken to hold `SKILL.md`.
    names: Vec<String>,
    /// Candidates held whole.
    whole: Vec<SourceCandidate>,
}

/// A listed folder of a [`CandidateList`]: its path relative to the source's root, and on
/// disk with every link resolved.
#[derive(Debug)]
struct ListedParent {
    rel: String,
    resolved: PathBuf,
}

impl CandidateList {
    /// How many candidates the list holds.
    pub fn len(&self) -> usize {
        self.names.len() + self.whole.len()
    }

    /// Whether the list holds no candidate.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Takes up to `n` candidates off the end of the list, as a list of their own.
    pub fn split_off_last(&mut self, n: usize) -> CandidateList {
        let whole = self.whole.split_off(self.whole.len().saturating_sub(n));
        let start = self.names.len().saturating_sub(n - whole.len());
        let names = self.names.split_off(start);
        let mut kept = Vec::new();
        let mut taken = Vec::new();
        let mut previous = 0;
        for &(parent, end) in &self.runs {
            if end <= start {
                kept.push((parent, end));
            } else {
                if previous < start {
                    kept.push((parent, start));
                }
                taken.push((parent, end - start));
            }
            previous = end;
        }
        self.runs = kept;
        CandidateList {
            parents: Arc::clone(&self.parents),
            runs: taken,
            names,
            whole,
        }
    }

    /// The candidates, each made whole as it is taken, in parallel.
    pub fn into_par_candidates(self) -> impl IndexedParallelIterator<Item = SourceCandidate> {
        let (parents, runs) = (self.parents, self.runs);
        self.names
            .into_par_iter()
            .enumerate()
            .map(move |(i, name)| named_candidate(&parents, &runs, i, &name))
            .chain(self.whole.into_par_iter())
    }

    /// The candidates, each made whole.
    pub fn into_candidates(self) -> Vec<SourceCandidate> {
        let (parents, runs) = (self.parents, self.runs);
        self.names
            .into_iter()
            .enumerate()
            .map(|(i, name)| named_candidate(&parents, &runs, i, &name))
            .chain(self.whole)
            .collect()
    }
}

impl From<Vec<SourceCandidate>> for CandidateList {
    fn from(whole: Vec<SourceCandidate>) -> CandidateList {
        CandidateList {
            whole,
            ..CandidateList::default()
        }
    }
}

/// The `i`th named candidate of a [`CandidateList`]: what [`FsSource`] would make of the
/// same folder found by discovery.
fn named_candidate(
    parents: &[ListedParent],
    runs: &[(usize, usize)],
    i: usize,
    name: &str,
) -> SourceCandidate {
    let run = runs.partition_point(|&(_, end)| end <= i);
    let parent = &parents[runs[run].0];
    SourceCandidate {
        dir: join(&parent.rel, name),
        file: SKILL_FILE.to_owned(),
        misnamed: false,
        resolved: Some(joined(&parent.resolved, name.as_ref())),
    }
}

/// `read` asked of the candidate `SKILL.md` in folder `dir` (resolved: `resolved`), as a
/// reading scan finds it. Each reading thread keeps one candidate and writes each folder
/// into it, so that reading a skill makes no candidate of its own (three allocations a
/// skill); `read` sees it only by reference, so its file and `misnamed` stay as made. A
/// `read` that reads again on the same thread is given a new one.
fn with_skill_candidate(dir: &str, resolved: &Path, read: &ReadCandidate<'_>) -> bool {
    thread_local! {
        static SPARE: std::cell::Cell<Option<SourceCandidate>> =
            const { std::cell::Cell::new(None) };
    }
    let mut candidate = SPARE
        .with(std::cell::Cell::take)
        .unwrap_or_else(|| SourceCandidate {
            dir: String::new(),
            file: SKILL_FILE.to_owned(),
            misnamed: false,
            resolved: None,
        });
    candidate.dir.clear();
    candidate.dir.push_str(dir);
    let held = candidate
        .resolved
        .get_or_insert_with(PathBuf::new)
        .as_mut_os_string();
    held.clear();
    held.push(resolved.as_os_str());
    let taken = read(&candidate);
    SPARE.with(|spare| spare.set(Some(candidate)));
    taken
}

/// `rel/name`, with `.` and the empty path as the root.
pub(crate) fn join(rel: &str, name: &str) -> String {
    // Not `format!`: its machinery was about 4% of an index build, where this runs once
    // per skill.
    let mut path = String::with_capacity(rel.len() + 1 + name.len());
    join_into(&mut path, rel, name);
    path
}

/// [`join`] written into `path`, whatever it held.
fn join_into(path: &mut String, rel: &str, name: &str) {
    path.clear();
    if !(rel.is_empty() || rel == ".") {
        path.push_str(rel);
        path.push('/');
    }
    path.push_str(name);
}

/// `path` in canonical form (no `.` or empty components, no leading or trailing `/`; the
/// root is `""`), or `None` when it is absolute, holds `..`, a backslash or a NUL, or a
/// component the platform would read as more than a plain name (a Windows drive).
fn normalize(path: &str) -> Option<String> {
    normalized(path).map(Cow::into_owned)
}

/// [`normalize`], borrowing `path` when it is in canonical form already (a scan's every
/// read asks with such a path): the model's one rule, [`RelPath`](skills_model::RelPath).
fn normalized(path: &str) -> Option<Cow<'_, str>> {
    skills_model::RelPath::folder(path)
        .ok()
        .map(skills_model::RelPath::into_cow)
}

/// Path order: component by component, as `Path` compares (`a/x` before `a-b/x`).
fn path_order(a: &str, b: &str) -> Ordering {
    a.split('/').cmp(b.split('/'))
}

/// Whether a listing shows an entry of this name (hidden names and `node_modules` are left
/// out): a watcher ignores what happens to a path a listing never shows.
pub fn listed_name(name: &str) -> bool {
    !name.starts_with('.') && name != "node_modules"
}

/// Whether a file's path below a skill folder (its parts, `["references", "guide.md"]`) is
/// one the listing rule may name ([`SkillSource::files`]): no hidden part (a dot-file or
/// dot-folder: `.env`, `.git/...`), no `node_modules`, at most as deep as a listing goes.
/// The readers of a skill's files ask this of a path they were given, so what they serve
/// is what a listing offers.
pub fn listed_path(parts: &[&str]) -> bool {
    !parts.is_empty() && parts.len() <= MAX_FILE_DEPTH + 1 && parts.iter().all(|p| listed_name(p))
}

/// The name of a skill folder as listed: its relative path, `.` for the root itself.
fn dir_label(rel: String) -> String {
    if rel.is_empty() {
        ".".to_owned()
    } else {
        rel
    }
}

/// Skills on disk under a root, found with [`discover`] and read with [`read_bounded`].
///
/// Symbolic links are followed as discovery and bounded reads follow them; only the relative
/// paths given to the source are checked, not where links lead.
///
/// [`for_scan`](SkillSource::for_scan) gives the source with a handle on its root, opened
/// then: a scan's reads walk only their relative paths from it (a path walk of the root's
/// own components per `stat` and `open` was a fifth of an index build). Anything but a
/// regular file read through the handle, and any path too long to walk whole, is read by
/// its whole path, so errors are the same either way. The scan's walk lists each folder
/// below the root through a handle opened below the folder above, and reads the skill
/// files there through it (`near`); the other calls use whole paths. A root or folder
/// replaced or moved during a scan can still give one folder's names and another's
/// contents, as it could before. The handles are never kept beyond the scan: a
/// long-lived one would go on reading a root that was deleted and made again.
#[derive(Debug, Clone)]
pub struct FsSource {
    root: PathBuf,
    options: DiscoveryOptions,
    #[cfg(unix)]
    dir: Option<std::sync::Arc<std::os::fd::OwnedFd>>,
}

impl FsSource {
    /// The skills under `root`, walked with `options`.
    pub fn new(root: PathBuf, options: DiscoveryOptions) -> FsSource {
        FsSource {
            root,
            options,
            #[cfg(unix)]
            dir: None,
        }
    }

    /// Reads a prefix of `path` through the scan's handle on the root, when there is one.
    fn read_prefix_fast(
        &self,
        path: &str,
        max: u64,
        buf: &mut Vec<u8>,
    ) -> Option<Result<u64, ReadError>> {
        #[cfg(unix)]
        if let Some(dir) = &self.dir {
            use std::os::fd::AsFd;
            let Some(rel) = normalized(path) else {
                return Some(Err(ReadError::NotFound));
            };
            // The root itself (`.`) is no file: the whole path says what it is.
            let whole = self.root.as_os_str().len() + 1 + rel.len();
            if !rel.is_empty() && crate::read::walkable(whole) {
                // Below the folder above, where the walk left a note for this read.
                let noted = crate::near::noted(self.id(), &rel);
                let (at, below) = match &noted {
                    Some((above, at)) => (above.fd(), &rel[*at..]),
                    None => (dir.as_fd(), &*rel),
                };
                let full = || self.resolve(path);
                return Some(crate::read::read_prefix_at(
                    at,
                    Path::new(below),
                    full,
                    max,
                    buf,
                ));
            }
        }
        let _ = (path, max, buf);
        None
    }

    /// This source's identity for the notes a walk leaves its reads (`near`): its address.
    fn id(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    /// Whether this is a scan's view, reading through a handle (only its reads use a note).
    fn has_handle(&self) -> bool {
        #[cfg(unix)]
        return self.dir.is_some();
        #[cfg(not(unix))]
        false
    }

    /// The root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A full walk of the root, with misnamed skill files and unreadable folders.
    pub fn discovery(&self) -> Discovery {
        discover(&self.root, &self.options)
    }

    /// A walk's folders as candidates of this source, its problems logged.
    fn found_candidates(&self, found: Discovery) -> Vec<SourceCandidate> {
        self.log_problems(&found.problems);
        // Each folder's paths are freed as it is converted: at 100,000 skills the walk's
        // paths beside the converted ones made tens of MiB of peak memory.
        found
            .candidates
            .into_par_iter()
            .filter_map(|c| self.source_candidate(c))
            .collect()
    }

    /// Logs the folders a walk could not list (a missing root only at debug level).
    fn log_problems(&self, problems: &[(PathBuf, std::io::Error)]) {
        for (path, error) in problems {
            if error.kind() == std::io::ErrorKind::NotFound && path == &self.root {
                tracing::debug!(root = %self.root.display(), "skill root does not exist");
            } else {
                tracing::warn!(path = %path.display(), %error, "cannot list a skill folder");
            }
        }
    }

    /// A discovered folder as a candidate of this source.
    fn source_candidate(&self, c: Candidate) -> Option<SourceCandidate> {
        let file = c.skill_file.as_ref().or(c.misnamed.as_ref())?;
        let file = file.file_name()?.to_str()?.to_owned();
        let Some(dir) = self.relative(&c.dir) else {
            if c.dir.to_str().is_none() {
                tracing::warn!(dir = %c.dir.display(), "skill folder path is not UTF-8, left out");
            }
            return None;
        };
        Some(SourceCandidate {
            dir: dir_label(dir),
            file,
            misnamed: c.skill_file.is_none(),
            resolved: Some(c.resolved),
        })
    }

    /// A folder reached by a walk of the root, as a path relative to the root (`""` for
    /// the root itself); `None` when it is not UTF-8 or not below the root.
    fn relative(&self, dir: &Path) -> Option<String> {
        self.relative_text(dir).map(std::borrow::Cow::into_owned)
    }

    /// [`relative`](Self::relative), borrowed from `dir` where its bytes are the answer.
    fn relative_text<'d>(&self, dir: &'d Path) -> Option<std::borrow::Cow<'d, str>> {
        // The walk joins names to the root as given: a folder below it is the root's bytes,
        // a separator and its names, one separator between each. Where `/` is the only
        // separator, those bytes are the answer the components give below (a nested
        // layout's thousands of folders were converted on one thread, component by
        // component); anything else (an empty, `.` or `..` name, another separator) is
        // left to the components.
        let rel = crate::read::below(&self.root, dir)
            .filter(|rest| {
                if cfg!(unix) {
                    skills_model::names_only(rest)
                } else {
                    !rest.iter().any(|b| *b == b'/' || *b == b'\\')
                        && skills_model::names_only(rest)
                }
            })
            .and_then(|rest| std::str::from_utf8(rest).ok());
        match rel {
            Some(rel) => Some(std::borrow::Cow::Borrowed(rel)),
            None => self
                .relative_by_components(dir)
                .map(std::borrow::Cow::Owned),
        }
    }

    /// [`relative`](Self::relative), component by component.
    fn relative_by_components(&self, dir: &Path) -> Option<String> {
        let rel = dir.strip_prefix(&self.root).ok()?;
        let mut parts = Vec::new();
        for part in rel.components() {
            match part {
                Component::Normal(name) => parts.push(name.to_str()?),
                Component::CurDir => {}
                _ => return None,
            }
        }
        Some(parts.join("/"))
    }

    /// The walk's expected folders held by name ([`CandidateList`]). Should a name or a
    /// listed folder's path not be UTF-8, every candidate is made whole and refused (and
    /// logged) as discovery's are.
    fn listed_candidates(&self, walked: Walked) -> CandidateList {
        self.log_problems(&walked.problems);
        // In parallel, in order: a nested layout's thousands of candidates.
        let mut whole: Vec<SourceCandidate> = walked
            .candidates
            .into_par_iter()
            .filter_map(|c| self.source_candidate(c))
            .collect();
        let Level { runs, names } = walked.expected;
        let mut parents = Vec::new();
        let mut named_runs = Vec::new();
        let mut lean = names.iter().all(|n| n.to_str().is_some());
        for run in &runs {
            if let (true, Run::Children { dir, resolved, end }) = (lean, run) {
                match self.relative(dir) {
                    Some(rel) => {
                        named_runs.push((parents.len(), *end));
                        parents.push(ListedParent {
                            rel,
                            resolved: resolved.clone(),
                        });
                    }
                    None => lean = false,
                }
            }
        }
        if !lean {
            let level = Level { runs, names };
            whole.extend(
                level
                    .into_paths()
                    .into_iter()
                    .filter_map(|(dir, resolved)| self.source_candidate(expected(dir, resolved))),
            );
            return CandidateList {
                whole,
                ..CandidateList::default()
            };
        }
        for run in runs {
            if let Run::Whole { dir, resolved } = run {
                let candidate = self.source_candidate(expected(dir, resolved));
                whole.extend(candidate);
            }
        }
        CandidateList {
            parents: parents.into(),
            runs: named_runs,
            // In place: a name and a `String` are the same size, and each name is UTF-8.
            names: names
                .into_iter()
                .filter_map(|n| n.into_string().ok())
                .collect(),
            whole,
        }
    }

    /// The walk of [`expected_candidates`](SkillSource::expected_candidates), reading
    /// where it finds with `read`.
    fn walked_candidates(&self, read: Option<&crate::discover::ReadFound<'_>>) -> CandidateList {
        let options = self.options.clone().with_leaf_files(LeafFiles::Expected);
        let walked = walk_reading(&self.root, &options, read);
        if walked.links_followed {
            // One folder may have been reached twice: discovery keeps each once.
            return self.found_candidates(walked.into_discovery()).into();
        }
        self.listed_candidates(walked)
    }

    fn resolve(&self, path: &str) -> Option<PathBuf> {
        let rel = normalize(path)?;
        let mut full = self.root.clone();
        full.extend(rel.split('/').filter(|p| !p.is_empty()));
        Some(full)
    }
}

impl SkillSource for FsSource {
    /// Folders holding `SKILL.md`; one with only a misnamed `skill.md` is left out (see
    /// [`candidates`](SkillSource::candidates)). The root itself, when the options include
    /// it, is `.`.
    fn skill_dirs(&self) -> Vec<String> {
        self.candidates()
            .into_iter()
            .filter(|c| !c.misnamed)
            .map(|c| c.dir)
            .collect()
    }

    /// The discovery walk's skill folders, misnamed skill files included. A folder whose
    /// path is not UTF-8 cannot be addressed by a relative path and is left out (logged).
    fn candidates(&self) -> Vec<SourceCandidate> {
        self.found_candidates(self.discovery())
    }

    /// Folders at the walk's last level come unasked ([`LeafFiles::Expected`]): the
    /// layered-root layout then costs one listing of the root and no call per skill.
    fn expected_candidates(&self) -> CandidateList {
        self.walked_candidates(None)
    }

    /// Each folder the walk would ask about `SKILL.md` is given to `read` instead (only
    /// folders reached by no link: each is reached once), with its path relative to the
    /// root; one whose path no relative path names is left to the walk.
    fn expected_candidates_reading(&self, read: &ReadCandidate<'_>) -> CandidateList {
        let found = |dir: &Path, resolved: &Path, near: Option<crate::near::Near<'_>>| {
            self.relative_text(dir)
                .filter(|rel| !rel.is_empty())
                .is_some_and(|rel| {
                    // The read comes back here through the index, by the file's path.
                    let _noted = near.filter(|_| self.has_handle()).and_then(|near| {
                        crate::near::Noted::leave(self.id(), &rel, SKILL_FILE, near)
                    });
                    with_skill_candidate(&rel, resolved, read)
                })
        };
        self.walked_candidates(Some(&found))
    }

    fn candidate(&self, dir: &str) -> Option<SourceCandidate> {
        let full = self.resolve(dir)?;
        let found = discover(&full, &DiscoveryOptions::validate().with_max_depth(0));
        let c = found.candidates.into_iter().next()?;
        let file = c.skill_file.as_ref().or(c.misnamed.as_ref())?;
        Some(SourceCandidate {
            dir: dir_label(normalize(dir)?),
            file: file.file_name()?.to_str()?.to_owned(),
            misnamed: c.skill_file.is_none(),
            resolved: Some(c.resolved.clone()),
        })
    }

    fn read_prefix(&self, path: &str, max: u64, buf: &mut Vec<u8>) -> Result<u64, ReadError> {
        if let Some(read) = self.read_prefix_fast(path, max, buf) {
            return read;
        }
        let full = self.resolve(path).ok_or(ReadError::NotFound)?;
        crate::read_prefix(&full, max, buf)
    }

    fn read(&self, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        let mut buf = Vec::new();
        if let Some(read) = self.read_prefix_fast(path, limit, &mut buf) {
            return crate::read::bounded(read?, buf, limit);
        }
        let full = self.resolve(path).ok_or(ReadError::NotFound)?;
        read_bounded(&full, limit)
    }

    fn for_scan(&self) -> Option<std::sync::Arc<dyn SkillSource>> {
        #[cfg(unix)]
        {
            // No handle (no root, no permission): the scan reads by whole paths.
            let dir = crate::read::open_folder(&self.root)?;
            Some(std::sync::Arc::new(FsSource {
                dir: Some(std::sync::Arc::new(dir)),
                ..self.clone()
            }))
        }
        #[cfg(not(unix))]
        None
    }

    fn files(&self, skill_dir: &str) -> Vec<(String, u64)> {
        let Some(base) = self.resolve(skill_dir) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        list_files(&base, &mut out);
        out.sort_by(|a, b| path_order(&a.0, &b.0));
        out
    }

    fn is_dir(&self, path: &str) -> bool {
        self.resolve(path).is_some_and(|p| p.is_dir())
    }

    fn fs_root(&self) -> Option<&Path> {
        Some(&self.root)
    }
}

/// Lists the regular files under `base` by the one listing rule (see the module's
/// documentation): hidden entries and `node_modules` left out, at most [`MAX_FILE_DEPTH`]
/// levels, links listed only when they lead to a file inside `base`, links to folders not
/// followed.
fn list_files(base: &Path, out: &mut Vec<(String, u64)>) {
    let Ok(canonical) = std::fs::canonicalize(base) else {
        return;
    };
    let mut stack = vec![(base.to_path_buf(), String::new(), 0usize)];
    while let Some((dir, prefix, depth)) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(rd) => rd.filter_map(Result::ok),
            Err(error) => {
                tracing::debug!(dir = %dir.display(), %error, "cannot list a skill's folder");
                continue;
            }
        };
        for entry in entries {
            if out.len() >= MAX_LISTED_FILES {
                tracing::warn!(dir = %base.display(), "file listing cut at {MAX_LISTED_FILES} files");
                return;
            }
            let file_name = entry.file_name();
            let Some(name) = file_name.to_str() else {
                tracing::debug!(path = %entry.path().display(), "file name is not UTF-8, left out");
                continue;
            };
            if !listed_name(name) {
                continue;
            }
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            let rel = join(&prefix, name);
            if file_type.is_dir() {
                if depth < MAX_FILE_DEPTH {
                    stack.push((entry.path(), rel, depth + 1));
                }
            } else if file_type.is_file() {
                if let Ok(meta) = entry.metadata() {
                    out.push((rel, meta.len()));
                }
            } else if file_type.is_symlink() {
                let path = entry.path();
                let inside = std::fs::canonicalize(&path).is_ok_and(|t| t.starts_with(&canonical));
                match std::fs::metadata(&path) {
                    Ok(meta) if inside && meta.is_file() => out.push((rel, meta.len())),
                    _ => {}
                }
            }
        }
    }
}

/// The folders below a skill folder whose files a listing ([`SkillSource::files`]) names,
/// by the same rule: hidden folders and `node_modules` left out, links to folders not
/// followed, at most 32 levels, at most [`MAX_LISTED_FILES`] folders. A watcher follows
/// these (and the skill folder itself) to see a script or reference change.
pub fn skill_folders(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    while let Some((folder, depth)) = stack.pop() {
        if depth >= MAX_FILE_DEPTH {
            continue;
        }
        let Ok(listing) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in listing.filter_map(Result::ok) {
            let listed = entry.file_name().to_str().is_some_and(listed_name);
            if listed && entry.file_type().is_ok_and(|t| t.is_dir()) {
                if out.len() >= MAX_LISTED_FILES {
                    return out;
                }
                out.push(entry.path());
                stack.push((entry.path(), depth + 1));
            }
        }
    }
    out
}

// What memory and embedded sources share: a map from normalized path to contents.

fn map_skill_dirs<B>(map: &BTreeMap<String, B>) -> Vec<String> {
    let mut dirs: Vec<String> = map
        .keys()
        .filter_map(|key| key.strip_suffix(SKILL_FILE)?.strip_suffix('/'))
        .map(str::to_owned)
        .collect();
    dirs.sort_by(|a, b| path_order(a, b));
    dirs
}

fn map_is_dir<B>(map: &BTreeMap<String, B>, path: &str) -> bool {
    let Some(rel) = normalize(path) else {
        return false;
    };
    if rel.is_empty() {
        return true;
    }
    let prefix = format!("{rel}/");
    map.range(prefix.clone()..)
        .next()
        .is_some_and(|(key, _)| key.starts_with(&prefix))
}

fn map_read<B: AsRef<[u8]>>(
    map: &BTreeMap<String, B>,
    path: &str,
    limit: u64,
) -> Result<Vec<u8>, ReadError> {
    let rel = normalize(path).ok_or(ReadError::NotFound)?;
    match map.get(&rel) {
        Some(bytes) => {
            let bytes = bytes.as_ref();
            let size = bytes.len() as u64;
            if size > limit {
                Err(ReadError::TooLarge { size, limit })
            } else {
                Ok(bytes.to_vec())
            }
        }
        None if map_is_dir(map, &rel) => Err(ReadError::NotRegular("a directory")),
        None => Err(ReadError::NotFound),
    }
}

fn map_files<B: AsRef<[u8]>>(map: &BTreeMap<String, B>, skill_dir: &str) -> Vec<(String, u64)> {
    let Some(rel) = normalize(skill_dir) else {
        return Vec::new();
    };
    let prefix = if rel.is_empty() {
        rel
    } else {
        format!("{rel}/")
    };
    let mut out: Vec<(String, u64)> = map
        .range(prefix.clone()..)
        .take_while(|(key, _)| key.starts_with(&prefix))
        .map(|(key, bytes)| (&key[prefix.len()..], bytes.as_ref().len() as u64))
        .filter(|(file, _)| file.split('/').all(listed_name))
        .filter(|(file, _)| file.split('/').count() <= MAX_FILE_DEPTH + 1)
        .take(MAX_LISTED_FILES)
        .map(|(file, size)| (file.to_owned(), size))
        .collect();
    out.sort_by(|a, b| path_order(&a.0, &b.0));
    out
}

/// Builds the map of a source from its entries: paths normalized, invalid ones dropped with a
/// warning, a later entry of the same path replacing an earlier one.
fn build_map<B>(entries: impl IntoIterator<Item = (String, B)>) -> BTreeMap<String, B> {
    let mut map = BTreeMap::new();
    for (path, bytes) in entries {
        match normalize(&path) {
            Some(rel) if !rel.is_empty() => {
                map.insert(rel, bytes);
            }
            _ => tracing::warn!(path, "skill source entry has an invalid path, left out"),
        }
    }
    map
}

fn debug_map<B: AsRef<[u8]>>(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    map: &BTreeMap<String, B>,
) -> fmt::Result {
    f.debug_struct(name)
        .field(
            "files",
            &map.iter()
                .map(|(path, bytes)| (path.as_str(), bytes.as_ref().len()))
                .collect::<Vec<_>>(),
        )
        .finish()
}

/// Skills held in memory, for tests and generated skills. A skill folder is any folder below
/// the root holding `SKILL.md`, at any depth (skills inside skills included).
#[derive(Clone, Default)]
pub struct MemorySource {
    files: BTreeMap<String, Vec<u8>>,
}

impl MemorySource {
    /// A source of these files, by relative path with `/` separators. A path that is
    /// absolute, holds `..` or names the root is left out (with a warning); a path given
    /// twice keeps its last contents.
    pub fn from_files<P, B>(files: impl IntoIterator<Item = (P, B)>) -> MemorySource
    where
        P: Into<String>,
        B: Into<Vec<u8>>,
    {
        MemorySource {
            files: build_map(files.into_iter().map(|(p, b)| (p.into(), b.into()))),
        }
    }
}

impl fmt::Debug for MemorySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_map(f, "MemorySource", &self.files)
    }
}

impl SkillSource for MemorySource {
    fn skill_dirs(&self) -> Vec<String> {
        map_skill_dirs(&self.files)
    }

    fn read(&self, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        map_read(&self.files, path, limit)
    }

    fn files(&self, skill_dir: &str) -> Vec<(String, u64)> {
        map_files(&self.files, skill_dir)
    }

    fn is_dir(&self, path: &str) -> bool {
        map_is_dir(&self.files, path)
    }
}

/// Skills compiled into a binary with `include_bytes!`/`include_str!`. A skill folder is any
/// folder below the root holding `SKILL.md`, at any depth. `new` is `const`, so a source can
/// be a `static`:
///
/// ```
/// use skills_storage::{EmbeddedSource, SkillSource};
///
/// static SKILLS: EmbeddedSource = EmbeddedSource::new(&[
///     ("hello/SKILL.md", b"---\nname: hello\ndescription: Greets.\n---\nSay hello.\n"),
/// ]);
/// assert_eq!(SKILLS.skill_dirs(), ["hello"]);
/// ```
pub struct EmbeddedSource {
    entries: &'static [(&'static str, &'static [u8])],
    map: OnceLock<BTreeMap<String, &'static [u8]>>,
}

impl EmbeddedSource {
    /// A source of these files, by relative path with `/` separators. Paths are checked on
    /// first use: one that is absolute, holds `..` or names the root is left out (with a
    /// warning); a path given twice keeps its last contents.
    pub const fn new(files: &'static [(&'static str, &'static [u8])]) -> EmbeddedSource {
        EmbeddedSource {
            entries: files,
            map: OnceLock::new(),
        }
    }

    fn map(&self) -> &BTreeMap<String, &'static [u8]> {
        self.map.get_or_init(|| {
            build_map(
                self.entries
                    .iter()
                    .map(|&(path, bytes)| (path.to_owned(), bytes)),
            )
        })
    }
}

impl fmt::Debug for EmbeddedSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_map(f, "EmbeddedSource", self.map())
    }
}

impl SkillSource for EmbeddedSource {
    fn skill_dirs(&self) -> Vec<String> {
        map_skill_dirs(self.map())
    }

    fn read(&self, path: &str, limit: u64) -> Result<Vec<u8>, ReadError> {
        map_read(self.map(), path, limit)
    }

    fn files(&self, skill_dir: &str) -> Vec<(String, u64)> {
        map_files(self.map(), skill_dir)
    }

    fn is_dir(&self, path: &str) -> bool {
        map_is_dir(self.map(), path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same skills for every kind of source: two skills at depth one, a folder that is
    /// not a skill, and hidden and `node_modules` entries inside a skill.
    const FILES: &[(&str, &[u8])] = &[
        ("b-tool/SKILL.md", b"---\nname: b-tool\n---\nB\n"),
        ("pdf-tools/SKILL.md", b"---\nname: pdf-tools\n---\nBody\n"),
        ("pdf-tools/references/forms.md", b"# Forms\n"),
        ("pdf-tools/scripts/fill.py", b"print('fill')\n"),
        ("pdf-tools/scripts/.cache", b"x"),
        ("pdf-tools/.secret/key", b"k"),
        ("pdf-tools/node_modules/dep/index.js", b"js"),
        ("pdf-tools/a-b.txt", b"12345"),
        ("notes/readme.md", b"not a skill"),
    ];

    static EMBEDDED: EmbeddedSource = EmbeddedSource::new(FILES);

    fn on_disk(root: &Path, files: &[(&str, &[u8])]) {
        for (path, bytes) in files {
            let full = root.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, bytes).unwrap();
        }
    }

    /// What every source must answer alike for [`FILES`].
    fn check_source(source: &dyn SkillSource) {
        assert_eq!(source.skill_dirs(), ["b-tool", "pdf-tools"], "{source:?}");
        assert_eq!(
            source.read("pdf-tools/SKILL.md", 1024).unwrap(),
            b"---\nname: pdf-tools\n---\nBody\n"
        );
        assert_eq!(
            source.read("./pdf-tools//scripts/fill.py", 1024).unwrap(),
            b"print('fill')\n"
        );
        assert_eq!(source.read("pdf-tools/a-b.txt", 5).unwrap(), b"12345");
        assert!(matches!(
            source.read("pdf-tools/a-b.txt", 4),
            Err(ReadError::TooLarge { size: 5, limit: 4 })
        ));
        assert!(matches!(
            source.read("pdf-tools/missing.md", 1024),
            Err(ReadError::NotFound)
        ));
        assert!(matches!(
            source.read("pdf-tools/scripts", 1024),
            Err(ReadError::NotRegular("a directory"))
        ));
        for escape in [
            "../outside.txt",
            "pdf-tools/../../outside.txt",
            "pdf-tools/../b-tool/SKILL.md",
            "/etc/passwd",
            "pdf-tools\\SKILL.md",
            "pdf-tools/SKILL.md\0",
        ] {
            assert!(
                matches!(source.read(escape, 1024), Err(ReadError::NotFound)),
                "{escape:?} in {source:?}"
            );
            assert!(!source.is_dir(escape));
        }
        assert_eq!(
            source.files("pdf-tools"),
            [
                ("SKILL.md".to_owned(), 29),
                ("a-b.txt".to_owned(), 5),
                ("references/forms.md".to_owned(), 8),
                ("scripts/fill.py".to_owned(), 14),
            ]
        );
        assert_eq!(source.files("pdf-tools/"), source.files("./pdf-tools"));
        assert!(source.files("nope").is_empty());
        assert!(source.files("..").is_empty());
        assert!(source.files("../pdf-tools").is_empty());
        assert!(source.is_dir("pdf-tools/references"));
        assert!(source.is_dir("notes"));
        assert!(source.is_dir(""));
        assert!(source.is_dir("."));
        assert!(!source.is_dir("pdf-tools/SKILL.md"));
        assert!(!source.is_dir("pdf-tool"));
        assert!(!source.is_dir(".."));
    }

    /// A folder's path relative to the root is what its components give, for paths the
    /// walk makes (the bytes themselves) and for any other (the components alone).
    #[test]
    fn a_folder_relative_to_the_root_is_what_its_components_give() {
        let root = PathBuf::from("/skills/base");
        let source = FsSource::new(root.clone(), DiscoveryOptions::roots());
        let cases = [
            "a",
            "a/b",
            "owner__repo/skills/name",
            "a/b/c/d/e/f",
            "with space/é 日",
            "back\\slash/x",
            "./a",
            "a/./b",
            "a//b",
            "a/b/",
            "a/../b",
            "..",
            ".",
            "",
            "/a",
            ".hidden/x",
            "a/..b/c.",
        ];
        for rel in cases {
            let dir = PathBuf::from(format!("/skills/base/{rel}"));
            assert_eq!(
                source.relative(&dir),
                source.relative_by_components(&dir),
                "{rel:?}"
            );
        }
        for other in ["/skills/basex/a", "/skills", "/elsewhere/a"] {
            assert_eq!(source.relative(Path::new(other)), None, "{other}");
        }
        assert_eq!(source.relative(&root).as_deref(), Some(""));
    }

    #[test]
    fn paths_are_normalized_or_refused() {
        assert_eq!(normalize("a/b").as_deref(), Some("a/b"));
        assert_eq!(normalize("./a//b/").as_deref(), Some("a/b"));
        assert_eq!(normalize("").as_deref(), Some(""));
        assert_eq!(normalize(".").as_deref(), Some(""));
        for bad in ["/a", "..", "a/..", "a/../b", "a\\b", "a\0"] {
            assert_eq!(normalize(bad), None, "{bad:?}");
        }
        assert_eq!(path_order("a/x", "a-b/x"), Ordering::Less);
    }

    #[test]
    fn filesystem_source() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        on_disk(&root, FILES);
        std::fs::write(tmp.path().join("outside.txt"), "secret").unwrap();
        let source = FsSource::new(root.clone(), DiscoveryOptions::roots());
        check_source(&source);
        assert_eq!(source.fs_root(), Some(root.as_path()));
        assert_eq!(source.root(), root);
        // A scan's view (a handle on the root) reads the same skills the same way.
        #[cfg(unix)]
        check_source(source.for_scan().unwrap().as_ref());
    }

    /// A root under `tmp` holding what reads must tell apart: a skill file, a folder named
    /// `SKILL.md`, a large file, and under `ok/` links to the skill file, to a device, to a
    /// file outside the root and to nothing, and a FIFO.
    #[cfg(unix)]
    fn reads_tree(tmp: &Path) -> PathBuf {
        let root = tmp.join("root");
        on_disk(
            &root,
            &[
                ("ok/SKILL.md", b"---\nname: ok\n---\n"),
                ("dir/SKILL.md/inner", b"x"),
                ("big/SKILL.md", &[b'a'; 64]),
            ],
        );
        std::fs::write(tmp.join("outside.md"), "outside").unwrap();
        let link = |target: &Path, name: &str| {
            std::os::unix::fs::symlink(target, root.join("ok").join(name)).unwrap();
        };
        link(&root.join("ok/SKILL.md"), "link.md");
        link(Path::new("/dev/zero"), "device.md");
        link(&tmp.join("outside.md"), "out.md");
        link(&root.join("nothing"), "dangling.md");
        assert!(std::process::Command::new("mkfifo")
            .arg(root.join("ok/fifo.md"))
            .status()
            .unwrap()
            .success());
        root
    }

    /// Every read through a scan's handle ends as the same read by the whole path: the
    /// same bytes, or the same refusal with the same code and description.
    #[cfg(unix)]
    #[test]
    fn a_scan_view_reads_and_refuses_as_whole_paths_do() {
        let tmp = tempfile::tempdir().unwrap();
        let root = reads_tree(tmp.path());
        let source = FsSource::new(root.clone(), DiscoveryOptions::roots());
        let view = source.for_scan().unwrap();
        let outcome = |r: Result<u64, ReadError>, buf: &[u8]| match r {
            Ok(size) => format!("{size} {buf:?}"),
            Err(e) => format!("{} {e}", e.code()),
        };
        for (path, max) in [
            ("ok/SKILL.md", 100),
            ("ok/SKILL.md", 3),
            ("ok/link.md", 100),
            ("ok/out.md", 100),
            ("ok/device.md", 100),
            ("ok/dangling.md", 100),
            ("ok/fifo.md", 100),
            ("dir/SKILL.md", 100),
            ("missing/SKILL.md", 100),
            ("../outside.md", 100),
            (".", 100),
            ("big/SKILL.md", 10),
        ] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let by_path = outcome(source.read_prefix(path, max, &mut a), &a);
            let by_view = outcome(view.read_prefix(path, max, &mut b), &b);
            assert_eq!(by_view, by_path, "{path}");
            let whole = |s: &dyn SkillSource| match s.read(path, 32) {
                Ok(bytes) => format!("{bytes:?}"),
                Err(e) => e.code().to_owned(),
            };
            assert_eq!(whole(view.as_ref()), whole(&source), "{path}");
        }
    }

    /// No read opens what is not a regular file, however discovery saw it: a FIFO behind a
    /// link (a device behind one is refused by the same code; a FIFO is what a test can
    /// watch) is never opened, as `inotify` tells: it reports the open of a regular file
    /// beside it, and the FIFO's own open once the test opens it.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_behind_a_link_is_never_opened() {
        use rustix::fs::inotify;
        use std::os::unix::fs::OpenOptionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        let out = tmp.path().join("out");
        on_disk(&out, &[("regular.md", b"---\nname: r\n---\n")]);
        assert!(std::process::Command::new("mkfifo")
            .arg(out.join("fifo"))
            .status()
            .unwrap()
            .success());
        for (dir, target) in [("f", "fifo"), ("r", "regular.md")] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
            std::os::unix::fs::symlink(out.join(target), root.join(dir).join("SKILL.md")).unwrap();
        }
        // A folder on the way that is a link (swapped in after discovery saw a regular
        // file there), to a folder whose `s/SKILL.md` is a FIFO.
        let deep = tmp.path().join("deep");
        std::fs::create_dir_all(deep.join("s")).unwrap();
        assert!(std::process::Command::new("mkfifo")
            .arg(deep.join("s/SKILL.md"))
            .status()
            .unwrap()
            .success());
        std::os::unix::fs::symlink(&deep, root.join("g")).unwrap();
        let source = FsSource::new(root.clone(), DiscoveryOptions::roots());
        let view = source.for_scan().unwrap();
        let watch =
            inotify::init(inotify::CreateFlags::NONBLOCK | inotify::CreateFlags::CLOEXEC).unwrap();
        inotify::add_watch(&watch, &out, inotify::WatchFlags::OPEN).unwrap();
        let opened = || {
            let mut buf = [std::mem::MaybeUninit::uninit(); 4096];
            let mut events = inotify::Reader::new(&watch, &mut buf);
            let mut names = Vec::new();
            while let Ok(event) = events.next() {
                let name = event.file_name().map(|n| n.to_string_lossy().into_owned());
                names.extend(name);
            }
            names
        };
        let mut buf = Vec::new();
        let fifo = view.read_prefix("f/SKILL.md", 100, &mut buf);
        assert!(matches!(fifo, Err(ReadError::NotRegular("a FIFO"))));
        let deep_watch =
            inotify::add_watch(&watch, deep.join("s"), inotify::WatchFlags::OPEN).unwrap();
        let fifo = view.read_prefix("g/s/SKILL.md", 100, &mut buf);
        assert!(matches!(fifo, Err(ReadError::NotRegular("a FIFO"))));
        inotify::remove_watch(&watch, deep_watch).unwrap();
        let regular = view.read_prefix("r/SKILL.md", 100, &mut buf);
        assert!(regular.is_ok());
        assert_eq!(opened(), ["regular.md"]);
        // The watch would have seen the FIFO opened.
        let fifo = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(out.join("fifo"))
            .unwrap();
        drop(fifo);
        assert_eq!(opened(), ["fifo"]);
    }

    /// A scan's candidates are the same whether discovery asked about a skill file (a
    /// regular file, a link to one) or took it to be there (the walk's last level).
    #[cfg(unix)]
    #[test]
    fn a_scan_lists_asked_and_expected_skill_files_alike() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        on_disk(
            &root,
            &[
                ("flat/SKILL.md", b"f"),
                ("g/plain/SKILL.md", b"p"),
                ("g/plain/real.md", b"r"),
                ("g/deeper/leaf/SKILL.md", b"l"),
            ],
        );
        std::fs::create_dir_all(root.join("g/linked")).unwrap();
        std::os::unix::fs::symlink(root.join("g/plain/real.md"), root.join("g/linked/SKILL.md"))
            .unwrap();
        let options = DiscoveryOptions::roots().with_max_depth(3);
        let source = FsSource::new(root.clone(), options);
        let mut dirs: Vec<String> = source
            .expected_candidates()
            .into_par_candidates()
            .map(|c| c.dir)
            .collect();
        dirs.sort();
        assert_eq!(dirs, ["flat", "g/deeper/leaf", "g/linked", "g/plain"]);
    }

    /// A scan reading where the walk finds (decision 0051): each folder reached by no link
    /// that the walk would have asked about `SKILL.md` is handed to the reader, once, and
    /// is then no candidate; what the reader finds no file in is listed as before, so a
    /// misnamed `skill.md`, a broken link named `SKILL.md`, a skill behind a link and the
    /// last level's folders are candidates still. Together they are what a scan lists.
    #[cfg(unix)]
    #[test]
    fn a_scan_reading_where_it_finds_sees_what_a_scan_lists() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        on_disk(
            &root,
            &[
                ("flat/SKILL.md", b"f"),
                ("o/r/skills/a/SKILL.md", b"a"),
                ("o/r/skills/b/skill.md", b"b"),
                ("o/r/skills/empty/x.md", b"e"),
                ("o/r/x/y/leaf/SKILL.md", b"l"),
                (".hidden/h/SKILL.md", b"h"),
            ],
        );
        std::fs::create_dir_all(root.join("o/r/c")).unwrap();
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("o/r/c/SKILL.md")).unwrap();
        on_disk(tmp.path(), &[("outside/ext/SKILL.md", b"x")]);
        std::os::unix::fs::symlink(tmp.path().join("outside"), root.join("linked")).unwrap();
        let source = FsSource::new(root.clone(), DiscoveryOptions::roots().with_max_depth(5));
        let view = source.for_scan().unwrap();
        let read = std::sync::Mutex::new(Vec::new());
        let reader = reading_into(view.as_ref(), &read);
        let listed = source
            .expected_candidates_reading(&reader)
            .into_candidates();
        drop(reader);
        let mut read = read.into_inner().unwrap();
        read.sort_by(|a, b| a.dir.cmp(&b.dir));
        let dirs =
            |list: &[SourceCandidate]| list.iter().map(|c| c.dir.clone()).collect::<Vec<_>>();
        assert_eq!(dirs(&read), ["flat", "o/r/skills/a"]);
        let mut rest = dirs(&listed);
        rest.sort();
        assert_eq!(
            rest,
            ["linked/ext", "o/r/c", "o/r/skills/b", "o/r/x/y/leaf"]
        );
        assert_a_scan_s_list(&source, read, listed);
    }

    /// The skills of a folder of several are read relative to a handle on that folder
    /// (`near`): the same bytes, and the same refusals (a FIFO, a folder named `SKILL.md`,
    /// nothing there), as by their whole paths; also when the process holds every folder
    /// handle it may, and the walk reads relative to the root instead.
    #[cfg(unix)]
    #[test]
    fn skills_below_a_held_folder_read_as_whole_paths_do() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        on_disk(
            &root,
            &[
                ("o/r/skills/a/SKILL.md", b"a"),
                ("o/r/skills/b/SKILL.md", b"bb"),
                ("o/r/skills/c/SKILL.md", b"ccc"),
                ("o/r/skills/dir/SKILL.md/x", b"x"),
                ("o/r/skills/none/x.md", b"n"),
                ("o/r/skills/misnamed/skill.md", b"m"),
            ],
        );
        std::fs::create_dir(root.join("o/r/skills/fifo")).unwrap();
        assert!(std::process::Command::new("mkfifo")
            .arg(root.join("o/r/skills/fifo/SKILL.md"))
            .status()
            .unwrap()
            .success());
        std::fs::create_dir(root.join("o/r/skills/link")).unwrap();
        std::os::unix::fs::symlink("../a/SKILL.md", root.join("o/r/skills/link/SKILL.md")).unwrap();
        let source = FsSource::new(root.clone(), DiscoveryOptions::roots().with_max_depth(5));
        let whole = |dir: &str| {
            let mut buf = Vec::new();
            let read = crate::read_prefix(&root.join(dir).join(SKILL_FILE), 100, &mut buf);
            format!("{:?} {buf:?}", read.map_err(|e| e.code()))
        };
        for every_handle_taken in [false, true] {
            let _taken = every_handle_taken.then(|| crate::near::hold_every_handle(&root));
            let view = source.for_scan().unwrap();
            let used = crate::near::NOTES_USED.load(std::sync::atomic::Ordering::Relaxed);
            let read = std::sync::Mutex::new(Vec::new());
            let reader = |c: &SourceCandidate| {
                let mut buf = Vec::new();
                let found = view.read_prefix(&c.file_path(), 100, &mut buf);
                if matches!(found, Err(ReadError::NotFound)) {
                    return false;
                }
                let said = format!("{:?} {buf:?}", found.map_err(|e| e.code()));
                read.lock().unwrap().push((c.dir.clone(), said));
                true
            };
            let listed = view.expected_candidates_reading(&reader).into_candidates();
            let mut read = read.into_inner().unwrap();
            read.sort();
            let dirs: Vec<&str> = read.iter().map(|(dir, _)| dir.as_str()).collect();
            assert_eq!(
                dirs,
                [
                    "o/r/skills/a",
                    "o/r/skills/b",
                    "o/r/skills/c",
                    "o/r/skills/dir",
                    "o/r/skills/fifo",
                    "o/r/skills/link"
                ],
                "every handle taken: {every_handle_taken}"
            );
            for (dir, said) in &read {
                assert_eq!(
                    *said,
                    whole(dir),
                    "{dir}, every handle taken: {every_handle_taken}"
                );
            }
            let rest: Vec<&str> = listed.iter().map(|c| c.dir.as_str()).collect();
            assert_eq!(rest, ["o/r/skills/misnamed"]);
            if !every_handle_taken {
                // Each of the six read below the handle on `o/r/skills` (other tests may
                // use notes meanwhile: the count only grows).
                let now = crate::near::NOTES_USED.load(std::sync::atomic::Ordering::Relaxed);
                assert!(now - used >= 6, "{} reads used a note", now - used);
            }
        }
    }

    /// What a reader took and what the source listed beside it are together what a scan
    /// of `source` lists.
    fn assert_a_scan_s_list(
        source: &FsSource,
        mut read: Vec<SourceCandidate>,
        listed: Vec<SourceCandidate>,
    ) {
        read.extend(listed);
        read.sort_by(|a, b| a.dir.cmp(&b.dir));
        let mut whole = source.expected_candidates().into_candidates();
        whole.sort_by(|a, b| a.dir.cmp(&b.dir));
        assert_eq!(read, whole);
    }

    /// A reader for [`SkillSource::expected_candidates_reading`] that takes each candidate
    /// whose skill file `view` finds, kept in `read`.
    fn reading_into<'a>(
        view: &'a dyn SkillSource,
        read: &'a std::sync::Mutex<Vec<SourceCandidate>>,
    ) -> impl Fn(&SourceCandidate) -> bool + Sync + 'a {
        move |c: &SourceCandidate| {
            let found = view.read_prefix(&c.file_path(), 0, &mut Vec::new());
            if matches!(found, Err(ReadError::NotFound)) {
                return false;
            }
            read.lock().unwrap().push(c.clone());
            true
        }
    }

    /// A flat layout's root is read as it is listed (in batches, on the pool's threads):
    /// what the reader takes is no candidate, what it finds no file in (a misnamed
    /// `skill.md`, an empty folder, a broken link named `SKILL.md`) is a candidate of the
    /// last level still, and a link is followed as before. Together they are what a scan
    /// lists, with more folders than one batch holds.
    #[cfg(unix)]
    #[test]
    fn a_flat_root_read_as_it_is_listed_sees_what_a_scan_lists() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        let skills: Vec<String> = (0..150).map(|i| format!("s{i:03}/SKILL.md")).collect();
        let mut files: Vec<(&str, &[u8])> =
            skills.iter().map(|f| (f.as_str(), &b"s"[..])).collect();
        files.extend([
            ("misnamed/skill.md", &b"m"[..]),
            ("empty/x.md", b"e"),
            (".hidden/SKILL.md", b"h"),
        ]);
        on_disk(&root, &files);
        std::fs::create_dir_all(root.join("broken")).unwrap();
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("broken/SKILL.md")).unwrap();
        on_disk(tmp.path(), &[("outside/SKILL.md", b"x")]);
        std::os::unix::fs::symlink(tmp.path().join("outside"), root.join("linked")).unwrap();
        let source = FsSource::new(root.clone(), DiscoveryOptions::roots());
        let view = source.for_scan().unwrap();
        let read = std::sync::Mutex::new(Vec::new());
        let reader = reading_into(view.as_ref(), &read);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let listed = pool
            .install(|| source.expected_candidates_reading(&reader))
            .into_candidates();
        drop(reader);
        let mut read = read.into_inner().unwrap();
        read.sort_by(|a, b| a.dir.cmp(&b.dir));
        assert_eq!(read.len(), 150, "every skill read as listed");
        let mut rest: Vec<String> = listed.iter().map(|c| c.dir.clone()).collect();
        rest.sort();
        assert_eq!(rest, ["broken", "empty", "linked", "misnamed"]);
        assert_a_scan_s_list(&source, read, listed);
    }

    /// A read through a scan's handle walked only the relative path, so a file whose whole
    /// path is too long for the kernel (`PATH_MAX`) was read through a view and refused by
    /// every whole-path read (the validator's, the watcher's). A view now reads such a path
    /// whole, and gives the same refusal.
    #[cfg(unix)]
    #[test]
    fn regression_a_path_too_long_whole_is_too_long_through_a_view() {
        use rustix::fs::{Mode, OFlags};
        let tmp = tempfile::tempdir().unwrap();
        let mut root = tmp.path().to_path_buf();
        // The root just short enough to open; `s/SKILL.md` below it is not.
        while root.as_os_str().len() < 4096 - 12 - 250 {
            root.push("d".repeat(250));
        }
        let pad = 4096 - 12 - root.as_os_str().len();
        root.push("e".repeat(pad));
        std::fs::create_dir_all(&root).unwrap();
        let dir = rustix::fs::open(&root, OFlags::DIRECTORY, Mode::empty()).unwrap();
        rustix::fs::mkdirat(&dir, "s", Mode::from_raw_mode(0o755)).unwrap();
        let file = rustix::fs::openat(
            &dir,
            "s/SKILL.md",
            OFlags::CREATE | OFlags::WRONLY,
            Mode::from_raw_mode(0o644),
        )
        .unwrap();
        rustix::io::write(&file, b"---\nname: s\n---\n").unwrap();
        let source = FsSource::new(root.clone(), DiscoveryOptions::roots());
        let view = source.for_scan().unwrap();
        let code = |s: &dyn SkillSource| s.read("s/SKILL.md", 100).map_err(|e| e.code());
        assert_eq!(code(&source), Err("FILE_UNREADABLE"));
        assert_eq!(code(view.as_ref()), code(&source));
    }

    /// A folder whose whole path is too long for the kernel cannot be listed by it, and the
    /// walk listed such a folder through the handle on the folder above (which walks one
    /// name) and went on below it. It now lists through a handle only where every entry's
    /// whole path could be walked too, so a scan reading where it finds sees what a scan
    /// lists: nothing below that folder.
    #[cfg(unix)]
    #[test]
    fn regression_a_folder_too_long_to_list_whole_is_not_listed_through_a_handle() {
        use rustix::fs::{Mode, OFlags};
        let tmp = tempfile::tempdir().unwrap();
        let mut root = tmp.path().to_path_buf();
        // `o` can be listed by its whole path; the 250-byte folder below it cannot.
        while root.as_os_str().len() < 3850 - 250 {
            root.push("d".repeat(250));
        }
        let pad = 3850 - root.as_os_str().len() - 1;
        root.push("e".repeat(pad));
        std::fs::create_dir_all(root.join("o")).unwrap();
        let long = "l".repeat(250);
        assert!(root.join("o").join(&long).as_os_str().len() >= 4096);
        let o = rustix::fs::open(root.join("o"), OFlags::DIRECTORY, Mode::empty()).unwrap();
        rustix::fs::mkdirat(&o, long.as_str(), Mode::from_raw_mode(0o755)).unwrap();
        rustix::fs::mkdirat(&o, format!("{long}/s").as_str(), Mode::from_raw_mode(0o755)).unwrap();
        let file = rustix::fs::openat(
            &o,
            format!("{long}/s/SKILL.md").as_str(),
            OFlags::CREATE | OFlags::WRONLY,
            Mode::from_raw_mode(0o644),
        )
        .unwrap();
        rustix::io::write(&file, b"---\nname: s\n---\n").unwrap();
        let source = FsSource::new(root.clone(), DiscoveryOptions::roots().with_max_depth(5));
        let view = source.for_scan().unwrap();
        // A reader that takes only what it reads, so the walk lists every folder it cannot.
        let reader =
            |c: &SourceCandidate| view.read_prefix(&c.file_path(), 0, &mut Vec::new()).is_ok();
        let listed = view.expected_candidates_reading(&reader).into_candidates();
        assert!(listed.is_empty(), "{listed:?}");
        assert!(source.expected_candidates().into_candidates().is_empty());
    }

    /// A view reads the folder it was opened on, even when the root is replaced; the source
    /// itself keeps no handle and reads whatever is at the root's path now.
    #[cfg(unix)]
    #[test]
    fn only_a_scan_view_holds_the_root_it_opened() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        on_disk(&root, &[("a/SKILL.md", b"old")]);
        let source = FsSource::new(root.clone(), DiscoveryOptions::roots());
        let view = source.for_scan().unwrap();
        std::fs::rename(&root, tmp.path().join("gone")).unwrap();
        on_disk(&root, &[("a/SKILL.md", b"new")]);
        assert_eq!(view.read("a/SKILL.md", 10).unwrap(), b"old");
        assert_eq!(source.read("a/SKILL.md", 10).unwrap(), b"new");
        assert_eq!(
            source.for_scan().unwrap().read("a/SKILL.md", 10).unwrap(),
            b"new"
        );
    }

    #[test]
    fn filesystem_source_details() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        on_disk(
            &root,
            &[
                ("SKILL.md", b"root skill"),
                ("group/x/SKILL.md", b"x"),
                ("misnamed/skill.md", b"m"),
            ],
        );
        let nested = FsSource::new(root.clone(), DiscoveryOptions::roots().with_max_depth(2));
        assert_eq!(nested.skill_dirs(), ["group/x"]);
        assert!(nested
            .discovery()
            .candidates
            .iter()
            .any(|c| c.misnamed.is_some()));
        let validate = FsSource::new(root.clone(), DiscoveryOptions::validate());
        assert_eq!(validate.skill_dirs(), [".", "group/x"]);
        assert_eq!(validate.read("./SKILL.md", 100).unwrap(), b"root skill");
        let missing = FsSource::new(tmp.path().join("not-yet"), DiscoveryOptions::roots());
        assert!(missing.skill_dirs().is_empty());
        assert!(missing.files(".").is_empty());
        assert!(!missing.is_dir(""));
    }

    /// The one listing rule on disk: a link is listed only when it leads to a file inside
    /// the skill folder; links to folders (outside, or looping back) are not followed.
    #[cfg(unix)]
    #[test]
    fn filesystem_listing_names_what_a_confined_reader_can_open() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        on_disk(
            &root,
            &[("s/SKILL.md", b"s"), ("s/assets/logo.svg", b"<svg/>")],
        );
        on_disk(tmp.path(), &[("shared/common.md", b"common")]);
        std::os::unix::fs::symlink(tmp.path().join("shared"), root.join("s/shared")).unwrap();
        std::os::unix::fs::symlink(root.join("s"), root.join("s/assets/loop")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("shared/common.md"), root.join("s/link.md"))
            .unwrap();
        std::os::unix::fs::symlink("assets/logo.svg", root.join("s/alias.svg")).unwrap();
        let source = FsSource::new(root, DiscoveryOptions::roots());
        assert_eq!(
            source.files("s"),
            [
                ("SKILL.md".to_owned(), 1),
                ("alias.svg".to_owned(), 6),
                ("assets/logo.svg".to_owned(), 6),
            ]
        );
    }

    #[test]
    fn candidates_name_the_skill_file_misnamed_or_not() {
        let tmp = tempfile::tempdir().unwrap();
        on_disk(
            tmp.path(),
            &[
                ("good/SKILL.md", b"g"),
                ("bad/skill.md", b"b"),
                ("none/x.md", b"n"),
            ],
        );
        let source = FsSource::new(tmp.path().to_path_buf(), DiscoveryOptions::roots());
        let real = std::fs::canonicalize(tmp.path()).unwrap();
        let good = SourceCandidate {
            dir: "good".into(),
            file: SKILL_FILE.into(),
            misnamed: false,
            resolved: Some(real.join("good")),
        };
        let bad = SourceCandidate {
            dir: "bad".into(),
            file: "skill.md".into(),
            misnamed: true,
            resolved: Some(real.join("bad")),
        };
        assert_eq!(source.candidates(), [bad.clone(), good.clone()]);
        assert_eq!(source.candidate("good"), Some(good.clone()));
        assert_eq!(source.candidate("./bad/"), Some(bad));
        assert_eq!(source.candidate("none"), None);
        assert_eq!(source.candidate("../good"), None);
        assert_eq!(good.file_path(), "good/SKILL.md");
        let memory = MemorySource::from_files([("good/SKILL.md", "g")]);
        let good = SourceCandidate {
            resolved: None,
            ..good
        };
        assert_eq!(memory.candidates(), std::slice::from_ref(&good));
        assert_eq!(memory.candidate("good"), Some(good));
        assert_eq!(memory.candidate("none"), None);
        let mut buf = Vec::new();
        assert_eq!(memory.read_prefix("good/SKILL.md", 0, &mut buf).unwrap(), 1);
        assert!(buf.is_empty());
    }

    /// A scan's list holds listed folders by name; each candidate it gives is the one
    /// discovery's whole paths give, for every layout a root may have: flat, nested to any
    /// level the options allow, links followed, names no source can address.
    #[test]
    fn a_candidate_list_gives_what_discovery_gives() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        on_disk(
            &root,
            &[
                ("a/SKILL.md", b"a"),
                ("b/skill.md", b"b"),
                ("empty/x.md", b"e"),
                ("g/one/SKILL.md", b"1"),
                ("g/two/SKILL.md", b"2"),
                ("g-h/three/SKILL.md", b"3"),
                ("o/r/skills/deep/SKILL.md", b"d"),
                ("back\\slash/SKILL.md", b"s"),
                (".hidden/SKILL.md", b"h"),
                ("node_modules/n/SKILL.md", b"n"),
            ],
        );
        let outside = tmp.path().join("outside");
        on_disk(&outside, &[("ext/SKILL.md", b"x")]);
        let sorted = |mut list: Vec<SourceCandidate>| {
            list.sort_by(|a, b| a.dir.cmp(&b.dir));
            list
        };
        let compare = |what: &str| {
            for depth in [1, 2, 3, 4] {
                let options = DiscoveryOptions::roots().with_max_depth(depth);
                let source = FsSource::new(root.clone(), options.clone());
                let expected = options.with_leaf_files(LeafFiles::Expected);
                let whole = source.found_candidates(discover(&root, &expected));
                let listed = source.expected_candidates();
                assert_eq!(listed.len(), whole.len(), "{what}, depth {depth}");
                assert_eq!(
                    sorted(listed.into_candidates()),
                    sorted(whole),
                    "{what}, depth {depth}"
                );
            }
        };
        compare("plain folders");
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            std::os::unix::fs::symlink(&outside, root.join("linked")).unwrap();
            compare("a link followed");
            std::fs::remove_file(root.join("linked")).unwrap();
            // A name that is not UTF-8 is left out, as discovery leaves it out; where the
            // filesystem refuses such names, the case is the plain one again.
            let bad = root.join(std::ffi::OsStr::from_bytes(b"bad-\xff"));
            if std::fs::create_dir(&bad).is_ok() {
                std::fs::write(bad.join(SKILL_FILE), "x").unwrap();
                compare("a name that is not UTF-8");
                let nested = root.join("g").join(std::ffi::OsStr::from_bytes(b"\xfe"));
                std::fs::create_dir(&nested).unwrap();
                std::fs::write(nested.join(SKILL_FILE), "x").unwrap();
                compare("a nested name that is not UTF-8");
            }
        }
    }

    /// Chunks taken off a list's end, read in any order, are the list: runs of names under
    /// several folders are cut wherever a chunk ends.
    #[test]
    fn a_candidate_list_splits_into_its_candidates() {
        let parents: Arc<[ListedParent]> = ["", "g", "o/r"]
            .into_iter()
            .map(|rel| ListedParent {
                rel: rel.into(),
                resolved: Path::new("/real").join(rel),
            })
            .collect();
        let names: Vec<String> = (0..10).map(|i| format!("s{i}")).collect();
        let whole = vec![SourceCandidate {
            dir: "linked".into(),
            file: SKILL_FILE.into(),
            misnamed: false,
            resolved: Some("/elsewhere/linked".into()),
        }];
        let list = || CandidateList {
            parents: Arc::clone(&parents),
            runs: vec![(0, 3), (1, 4), (2, 10)],
            names: names.clone(),
            whole: CandidateList::from(whole.clone()).whole,
        };
        let all = list().into_candidates();
        assert_eq!(all.len(), 11);
        assert_eq!(all[0].dir, "s0");
        assert_eq!(all[3].dir, "g/s3");
        assert_eq!(all[4].dir, "o/r/s4");
        assert_eq!(all[4].resolved.as_deref(), Some(Path::new("/real/o/r/s4")));
        assert_eq!(all[10].dir, "linked");
        for chunk in [1, 2, 3, 4, 7, 11, 50] {
            let mut rest = list();
            let mut chunks = Vec::new();
            while !rest.is_empty() {
                chunks.push(rest.split_off_last(chunk));
            }
            let mut again = Vec::new();
            for taken in chunks.into_iter().rev() {
                again.extend(taken.into_par_candidates().collect::<Vec<_>>());
            }
            let sorted = |mut v: Vec<SourceCandidate>| {
                v.sort_by(|a, b| a.dir.cmp(&b.dir));
                v
            };
            assert_eq!(sorted(again), sorted(all.clone()), "chunks of {chunk}");
        }
    }

    #[test]
    fn memory_source() {
        let source = MemorySource::from_files(FILES.iter().copied());
        check_source(&source);
        assert_eq!(source.fs_root(), None);
    }

    #[test]
    fn embedded_source() {
        check_source(&EMBEDDED);
        assert_eq!(EMBEDDED.fs_root(), None);
        assert!(format!("{EMBEDDED:?}").contains("pdf-tools/SKILL.md"));
    }

    #[test]
    fn map_sources_find_skills_at_any_depth_and_drop_bad_paths() {
        let source = MemorySource::from_files([
            ("SKILL.md", "a root SKILL.md is not a skill folder"),
            ("group/x/SKILL.md", "x"),
            ("group/x/inner/SKILL.md", "inner"),
            ("a-b/SKILL.md", "ab"),
            ("a/SKILL.md", "a"),
            ("../escape/SKILL.md", "no"),
            ("/abs/SKILL.md", "no"),
            ("", "no"),
            ("dup/SKILL.md", "first"),
            ("dup/SKILL.md", "second"),
        ]);
        assert_eq!(
            source.skill_dirs(),
            ["a", "a-b", "dup", "group/x", "group/x/inner"]
        );
        assert_eq!(source.read("dup/SKILL.md", 100).unwrap(), b"second");
        assert!(!source.is_dir("escape"));
        assert!(!source.is_dir("abs"));
        assert_eq!(
            source.files("group/x"),
            [("SKILL.md".to_owned(), 1), ("inner/SKILL.md".to_owned(), 5)]
        );
        let sources: Vec<Box<dyn SkillSource>> =
            vec![Box::new(source.clone()), Box::new(EmbeddedSource::new(&[]))];
        assert!(sources[1].skill_dirs().is_empty());
    }
}
