//! Discovery: which directories under a root are skills.
//!
//! A directory is a skill when it holds `SKILL.md` (or, misnamed, `skill.md` in another
//! case, which validation reports). The walk never stats plain directories: loops are only
//! possible through symbolic links, so only a followed link is resolved to its canonical
//! path. A visible link (its own name neither hidden nor skipped) is followed wherever it
//! points: into a hidden folder, `node_modules`, deeper than the walk goes, or outside the
//! root. It is not followed when its target is the root or holds it, is a folder on the way
//! to it (a loop), was entered through another link already, or is a folder the walk reaches
//! anyway. Each candidate carries its resolved path, and a skill folder reached twice is
//! listed once.

mod reading;

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};

use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::near::{Held, Near};

/// The name a skill file must have.
pub const SKILL_FILE: &str = "SKILL.md";

/// Whether file names are compared with their case (so a `stat` of `SKILL.md` cannot find
/// a `skill.md`): Linux and the other Unix systems but macOS.
const CASE_SENSITIVE: bool = cfg!(all(unix, not(target_os = "macos")));

/// The deepest nesting the layered roots allow.
pub const MAX_ROOT_DEPTH: usize = 6;

/// How to walk a root.
#[derive(Debug, Clone)]
pub struct DiscoveryOptions {
    max_depth: usize,
    include_root: bool,
    skip_hidden: bool,
    descend_into_skills: bool,
    skip_names: Vec<String>,
    leaf_files: LeafFiles,
    /// Whether the walk records every folder it visits ([`folders_to_watch`] asks).
    record_visits: bool,
}

/// How a walk learns that a folder at its last level holds `SKILL.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeafFiles {
    /// It asks (one `stat` per folder): every candidate holds a skill file.
    Checked,
    /// It does not ask: the caller opens `SKILL.md` anyway, and asks about the folder alone
    /// ([`SkillSource::candidate`](crate::SkillSource::candidate)) only when it is not
    /// there. The walk then costs one listing of the root and nothing per skill, and the
    /// opens run in the caller's parallel reads.
    Expected,
}

impl DiscoveryOptions {
    /// The layered-root layout: skills are the immediate subdirectories of the root (depth 1);
    /// hidden folders, `node_modules`, `.git` and `target` are skipped; a skill's own folders
    /// are not searched for more skills.
    pub fn roots() -> DiscoveryOptions {
        DiscoveryOptions {
            max_depth: 1,
            include_root: false,
            skip_hidden: true,
            descend_into_skills: false,
            skip_names: SKIPPED_NAMES.iter().map(|n| (*n).into()).collect(),
            leaf_files: LeafFiles::Checked,
            record_visits: false,
        }
    }

    /// The validator's search: the path itself and everything below it (to depth 64), hidden
    /// folders included, skills nested inside skills included, `.git` and `node_modules`
    /// skipped.
    pub fn validate() -> DiscoveryOptions {
        DiscoveryOptions {
            max_depth: 64,
            include_root: true,
            skip_hidden: false,
            descend_into_skills: true,
            skip_names: vec!["node_modules".into(), ".git".into()],
            leaf_files: LeafFiles::Checked,
            record_visits: false,
        }
    }

    /// The same options with skills searched to `depth` levels below the root.
    #[must_use]
    pub fn with_max_depth(mut self, depth: usize) -> DiscoveryOptions {
        self.max_depth = depth;
        self
    }

    /// Whether a folder at `depth` is taken to hold `SKILL.md` without asking: at the last
    /// level nothing is listed below it anyway, and a caller that opens the file itself
    /// ([`LeafFiles::Expected`]) need not have it asked about first. Only where a `stat`
    /// would have decided (below the root, skills not searched inside skills, a
    /// case-sensitive filesystem).
    fn skill_file_expected(&self, depth: usize) -> bool {
        depth > 0
            && depth >= self.max_depth
            && self.leaf_files == LeafFiles::Expected
            && !self.descend_into_skills
            && CASE_SENSITIVE
    }

    /// The same options, learning of skill files at the last level as `leaf_files` says.
    #[must_use]
    pub fn with_leaf_files(mut self, leaf_files: LeafFiles) -> DiscoveryOptions {
        self.leaf_files = leaf_files;
        self
    }
}

/// The folders the layered-root layout never searches, besides hidden ones.
pub const SKIPPED_NAMES: [&str; 2] = ["node_modules", "target"];

/// Whether the layered-root layout ([`DiscoveryOptions::roots`]) skips a folder of this
/// name: hidden folders (`.git` included), `node_modules` and `target`. The one home of
/// this rule: the index's scans and its watcher ask it too.
pub fn skipped_folder(name: &std::ffi::OsStr) -> bool {
    name.to_str()
        .is_some_and(|n| n.starts_with('.') || SKIPPED_NAMES.contains(&n))
}

/// A skill directory found by discovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The directory, as reached from the root (links not resolved).
    pub dir: PathBuf,
    /// The directory with every link resolved (what is reported to users, and what tells
    /// two ways to one folder apart).
    pub resolved: PathBuf,
    /// `SKILL.md` in the directory, if present.
    pub skill_file: Option<PathBuf>,
    /// A wrongly-cased `skill.md`, when there is no `SKILL.md`.
    pub misnamed: Option<PathBuf>,
}

/// What a walk found.
#[derive(Debug, Default)]
pub struct Discovery {
    /// Skill directories, in path order.
    pub candidates: Vec<Candidate>,
    /// Directories that could not be listed, and why.
    pub problems: Vec<(PathBuf, std::io::Error)>,
}

/// A folder a watcher of a root follows ([`folders_to_watch`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchFolder {
    /// The folder, as reached from the root (links not resolved).
    pub dir: PathBuf,
    /// Whether it is a skill folder: its files matter too ([`skill_folders`](crate::skill_folders)).
    pub skill: bool,
}

/// The folders a watcher of `root` must follow to see every change a scan with `options`
/// would find: exactly the folders the walk visits (listed, or asked about `SKILL.md`),
/// links followed by the walk's rules, each real folder once, within the depth. A link to
/// `/` or a chain of linked folders costs no more than the scan does.
pub fn folders_to_watch(root: &Path, options: &DiscoveryOptions) -> Vec<WatchFolder> {
    let mut options = options.clone().with_leaf_files(LeafFiles::Checked);
    options.record_visits = true;
    let walked = walk(root, &options);
    let skills: std::collections::HashSet<&Path> = walked
        .candidates
        .iter()
        .map(|c| c.resolved.as_path())
        .collect();
    let mut seen = std::collections::HashSet::new();
    walked
        .visited
        .iter()
        .filter(|(_, resolved)| seen.insert(resolved.as_path()))
        .map(|(dir, resolved)| WatchFolder {
            dir: dir.clone(),
            skill: skills.contains(resolved.as_path()),
        })
        .collect()
}

/// Walks `root` for skill directories.
pub fn discover(root: &Path, options: &DiscoveryOptions) -> Discovery {
    walk(root, options).into_discovery()
}

/// The folders of one level of the walk, in order: runs of folders named in a listed
/// folder (their names, not yet joined to its paths), and folders known by whole paths
/// (the root, a followed link). At the last level of a layered root, where each folder is
/// taken to hold `SKILL.md`, a scan holds each skill's name until it reads that skill.
#[derive(Default)]
pub(crate) struct Level {
    pub(crate) runs: Vec<Run>,
    /// The names of the `Children` runs' folders, run after run.
    pub(crate) names: Vec<OsString>,
}

/// A run of a [`Level`]'s folders.
pub(crate) enum Run {
    /// Folders named in the listed folder `dir` (resolved: `resolved`): the level's names
    /// from the previous run's end to `end`.
    Children {
        dir: PathBuf,
        resolved: PathBuf,
        end: usize,
    },
    /// One folder: its path as reached and its path with links resolved.
    Whole { dir: PathBuf, resolved: PathBuf },
}

impl Level {
    /// Adds the folders `names` inside the listed folder `dir`.
    fn push_children(&mut self, dir: PathBuf, resolved: PathBuf, names: Vec<OsString>) {
        if self.names.is_empty() {
            // The usual layered root: one listing names every folder of the level.
            self.names = names;
        } else {
            self.names.extend(names);
        }
        let end = self.names.len();
        self.runs.push(Run::Children { dir, resolved, end });
    }

    fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// Every folder's path as reached and resolved path, in the level's order.
    pub(crate) fn into_paths(self) -> Vec<(PathBuf, PathBuf)> {
        let mut paths = Vec::with_capacity(self.names.len() + self.runs.len());
        let mut names = self.names.into_iter();
        let mut start = 0;
        for run in self.runs {
            match run {
                Run::Children { dir, resolved, end } => {
                    paths.extend(
                        names
                            .by_ref()
                            .take(end - start)
                            .map(|name| (joined(&dir, &name), joined(&resolved, &name))),
                    );
                    start = end;
                }
                Run::Whole { dir, resolved } => paths.push((dir, resolved)),
            }
        }
        paths
    }
}

/// The candidate at a folder of an expected last level: taken to hold `SKILL.md`.
pub(crate) fn expected(dir: PathBuf, resolved: PathBuf) -> Candidate {
    Candidate {
        skill_file: Some(joined(&dir, SKILL_FILE.as_ref())),
        dir,
        resolved,
        misnamed: None,
    }
}

/// What a walk found, its last level's folders not yet joined to their paths.
#[derive(Default)]
pub(crate) struct Walked {
    /// Folders asked about or listed and found to be skills.
    pub(crate) candidates: Vec<Candidate>,
    /// Folders taken to hold `SKILL.md` without a call ([`LeafFiles::Expected`]).
    pub(crate) expected: Level,
    /// Directories that could not be listed, and why.
    pub(crate) problems: Vec<(PathBuf, std::io::Error)>,
    /// Whether a link was followed: then one folder may have been reached twice.
    pub(crate) links_followed: bool,
    /// Every folder visited (as reached, resolved), when the options ask for them.
    pub(crate) visited: Vec<(PathBuf, PathBuf)>,
}

impl Walked {
    /// The walk as [`discover`] reports it: every candidate with its paths, in path order,
    /// each folder once.
    pub(crate) fn into_discovery(self) -> Discovery {
        let mut found = Discovery {
            candidates: self.candidates,
            problems: self.problems,
        };
        let leaves = self.expected.into_paths();
        found.candidates.reserve(leaves.len());
        found.candidates.extend(
            leaves
                .into_iter()
                .map(|(dir, resolved)| expected(dir, resolved)),
        );
        // Byte order of the paths: deterministic, and cheaper than comparing components.
        found
            .candidates
            .sort_by(|a, b| a.dir.as_os_str().cmp(b.dir.as_os_str()));
        // One folder reached twice (through links): listed once, at a path whose last name
        // is the folder's real one when there is such a path, else at its first. Without a
        // link followed, every resolved path is the root's own and unique: nothing to do.
        if !self.links_followed {
            return found;
        }
        let mut first: std::collections::HashMap<PathBuf, usize> = std::collections::HashMap::new();
        let mut keep = vec![true; found.candidates.len()];
        for (i, c) in found.candidates.iter().enumerate() {
            match first.get(&c.resolved) {
                None => {
                    first.insert(c.resolved.clone(), i);
                }
                Some(&j) => {
                    let real = |c: &Candidate| c.dir.file_name() == c.resolved.file_name();
                    if real(c) && !real(&found.candidates[j]) {
                        keep[j] = false;
                        first.insert(c.resolved.clone(), i);
                    } else {
                        keep[i] = false;
                    }
                }
            }
        }
        let mut keep = keep.into_iter();
        found.candidates.retain(|_| keep.next().unwrap_or(true));
        found
    }
}

/// Reads the skill file of a folder a walk found (its path as reached, its resolved path)
/// where the walk finds it, on the walking thread: `false` when no skill file is there, and
/// the walk then lists the folder as it would have ([`walk_reading`]). Where the walk
/// holds the folder above, it gives that too ([`Near`]).
pub(crate) type ReadFound<'a> = dyn Fn(&Path, &Path, Option<Near<'_>>) -> bool + Sync + 'a;

/// Walks `root`, leaving the folders of an expected last level unjoined.
pub(crate) fn walk(root: &Path, options: &DiscoveryOptions) -> Walked {
    walk_reading(root, options, None)
}

/// [`walk`], handing `read` each folder below the root reached by no link that it would
/// have asked about `SKILL.md` (one `stat`): the read's own `stat` answers instead, so a
/// nested layout's skills are read in the walk, with no second pass and no call twice.
/// What `read` took is no candidate; a folder it did not take is listed, so a misnamed
/// `skill.md`, a broken link named `SKILL.md` and the folders below are found as before.
/// A folder reached through a link is never read here: only there can one folder be
/// reached twice, and discovery keeps such a folder once. Where the level below the root
/// is the last (a flat layout), `read` is handed each folder of the root as the listing
/// names it, and what it does not take is a candidate of that level, as before.
pub(crate) fn walk_reading(
    root: &Path,
    options: &DiscoveryOptions,
    read: Option<&ReadFound<'_>>,
) -> Walked {
    let mut found = Walked {
        candidates: Vec::new(),
        expected: Level::default(),
        problems: Vec::new(),
        links_followed: false,
        visited: Vec::new(),
    };
    let canonical_root = match std::fs::canonicalize(root) {
        Ok(p) => p,
        Err(e) => {
            found.problems.push((root.to_path_buf(), e));
            return found;
        }
    };
    let at = Base {
        read,
        resolved: canonical_root.clone(),
        ..Base::open(root)
    };
    // A scan that reads where it finds walks each folder as soon as its parent is listed
    // (see `reading`); the order of what it gathers is the threads'. A walk that records
    // its visits (for a watcher, which keeps the first of two ways to a folder) goes a
    // level at a time.
    if read.is_some() && !options.record_visits {
        return reading::walk((root, canonical_root), options, &at);
    }
    let mut walk = Walk {
        root: canonical_root.clone(),
        entered: Vec::new(),
        options,
    };
    // Walked a level at a time: the folders of a level are visited in parallel (each one
    // `stat` or listing), then the links they hold are followed in order, on this thread
    // (what a link may enter depends on the links entered before it).
    let mut level = Level {
        runs: vec![Run::Whole {
            dir: root.to_path_buf(),
            resolved: canonical_root,
        }],
        names: Vec::new(),
    };
    let mut depth = 0;
    while !level.is_empty() {
        // Expected leaves cost no call: each is a candidate, made whole by its reader.
        if options.skill_file_expected(depth) {
            found.expected = level;
            break;
        }
        let folders = level.into_paths();
        if options.record_visits {
            found.visited.extend(folders.iter().cloned());
        }
        let visit_one = |(dir, resolved): (PathBuf, PathBuf)| {
            visit(
                Cow::Owned(dir),
                Cow::Owned(resolved),
                depth,
                options,
                (&at, None),
            )
        };
        let visits: Vec<Visit> = if folders.len() < 2 {
            folders.into_iter().map(visit_one).collect()
        } else {
            folders.into_par_iter().map(visit_one).collect()
        };
        let mut next = Level::default();
        for v in visits {
            if let Some(candidate) = v.candidate {
                found.candidates.push(candidate);
            }
            found.problems.extend(v.problem);
            let Some((dir, resolved)) = v.folder else {
                continue;
            };
            let mut followed = Vec::new();
            for path in v.links {
                if let Some(target) = walk.follow(&path, &resolved) {
                    tracing::debug!(link = %path.display(), target = %target.display(), "following link");
                    followed.push(Run::Whole {
                        dir: path,
                        resolved: target,
                    });
                }
            }
            if !v.subdirs.is_empty() {
                next.push_children(dir, resolved, v.subdirs);
            }
            next.runs.extend(followed);
        }
        level = next;
        depth += 1;
    }
    found.links_followed = !walk.entered.is_empty();
    found
}

/// The walk's root and, where the system has one, a handle on it opened for this walk: a
/// path below the root is asked about relative to the handle, so the kernel walks only the
/// components below the root (in nested layouts each folder's `SKILL.md` is asked about,
/// and the root's own components were half of every such walk).
struct Base<'r> {
    root: &'r Path,
    #[cfg(unix)]
    dir: Option<Arc<Held>>,
    /// The root with every link resolved (empty until the walk knows it).
    resolved: PathBuf,
    /// Who reads a skill file where the walk finds it ([`walk_reading`]).
    read: Option<&'r ReadFound<'r>>,
}

impl<'r> Base<'r> {
    fn open(root: &'r Path) -> Base<'r> {
        Base {
            root,
            #[cfg(unix)]
            dir: crate::read::open_folder(root).map(Held::root),
            resolved: PathBuf::new(),
            read: None,
        }
    }

    /// The reader of the folder `dir` (resolved: `resolved`), when there is one and the
    /// folder was reached by no link: its path below the root as reached is its path below
    /// the resolved root (a link on the way would have been resolved to another name).
    fn reader_of(&self, dir: &Path, resolved: &Path) -> Option<&'r ReadFound<'r>> {
        let read = self.read?;
        let reached = crate::read::below(self.root, dir)?;
        (crate::read::below(&self.resolved, resolved)? == reached).then_some(read)
    }

    /// The handle on the root, held for the folders below it, where there is one.
    fn root_handle(&self) -> Option<Arc<Held>> {
        #[cfg(unix)]
        return self.dir.clone();
        #[cfg(not(unix))]
        None
    }

    /// Whether anything is at `path` (links not followed): `symlink_metadata`, through the
    /// handle when `path` is the root's bytes, a separator and more. What it is, the read
    /// finds out for itself.
    fn exists(&self, path: &Path) -> bool {
        #[cfg(unix)]
        if let Some(dir) = self
            .dir
            .as_ref()
            .filter(|_| crate::read::walkable(path.as_os_str().len()))
        {
            use std::os::unix::ffi::OsStrExt;
            if let Some(rel) = crate::read::below(self.root, path) {
                let rel = Path::new(std::ffi::OsStr::from_bytes(rel));
                return rustix::fs::statat(dir.fd(), rel, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok();
            }
        }
        std::fs::symlink_metadata(path).is_ok()
    }
}

/// `dir.join(name)` in one allocation of the right size (`join` copies `dir`, then grows
/// the copy for `name`).
pub(crate) fn joined(dir: &Path, name: &OsStr) -> PathBuf {
    let mut path = PathBuf::with_capacity(dir.as_os_str().len() + 1 + name.len());
    joined_into(&mut path, dir, name);
    path
}

/// [`joined`] written into `path`, whatever it held, so that one buffer serves a run of
/// names: the same bytes, and no allocation once the buffer is large enough.
pub(crate) fn joined_into(path: &mut PathBuf, dir: &Path, name: &OsStr) {
    let text = path.as_mut_os_string();
    text.clear();
    text.push(dir.as_os_str());
    path.push(name);
}

/// What one folder holds, as the walk sees it.
struct Visit {
    /// The folder (path as reached, resolved path), when the walk goes on below it: its
    /// subfolders are named relative to it, and its links resolved against it.
    folder: Option<(PathBuf, PathBuf)>,
    candidate: Option<Candidate>,
    problem: Option<(PathBuf, std::io::Error)>,
    /// The names of folders below it to walk.
    subdirs: Vec<OsString>,
    /// Links below it, to follow or not.
    links: Vec<PathBuf>,
    /// The handle its listing was read through, kept for the walk below it.
    held: Option<Arc<Held>>,
}

/// Visits one folder at `depth`: whether it is a skill, and what to walk below it. The
/// paths may be borrowed (a walker's scratch buffers): they are copied only where the
/// visit keeps them, and a skill read where found keeps nothing.
fn visit(
    dir: Cow<'_, Path>,
    resolved: Cow<'_, Path>,
    depth: usize,
    options: &DiscoveryOptions,
    (at, near): (&Base<'_>, Option<Near<'_>>),
) -> Visit {
    let mut v = Visit {
        folder: None,
        candidate: None,
        problem: None,
        subdirs: Vec::new(),
        links: Vec::new(),
        held: None,
    };
    // A folder below the root is a skill when `SKILL.md` is there: one `stat` answers,
    // where listing the folder cost five calls. It is listed only when it is not (to find
    // a misnamed `skill.md`, or to descend), or when skills are searched inside skills.
    // Case-insensitive filesystems answer for `skill.md` too, so they list.
    if depth > 0 && !options.descend_into_skills && CASE_SENSITIVE {
        // Read where found, when the walk reads: the read's own `stat` asks.
        if let Some(read) = at.reader_of(&dir, &resolved) {
            if read(&dir, &resolved, near) {
                return v;
            }
        } else {
            let file = joined(&dir, SKILL_FILE.as_ref());
            if at.exists(&file) {
                v.candidate = Some(Candidate {
                    dir: dir.into_owned(),
                    resolved: resolved.into_owned(),
                    skill_file: Some(file),
                    misnamed: None,
                });
                return v;
            }
        }
    }
    // Each entry's name fetched once, and its type only where the walk may descend (a
    // filesystem without types in its listings answers that with a `stat`). Only what the
    // walk keeps is collected: at 100,000 skills a list of every entry was megabytes.
    let listing = match Listing::open(&dir, near) {
        Ok(listing) => listing,
        Err(e) => {
            // A directory that vanished mid-scan is not a problem worth reporting.
            if e.kind() != std::io::ErrorKind::NotFound {
                v.problem = Some((dir.into_owned(), e));
            }
            return v;
        }
    };
    // The root of a layout whose next level is its skills, when the walk reads: each
    // folder is read as the listing names it, so a large root's listing (one thread) and
    // its reads (the others) overlap. Below the root a folder found to be a skill itself
    // is not walked below, which only its whole listing tells.
    // The only folder at depth 0 is the root, reached by no link.
    let early = at
        .read
        .filter(|_| depth == 0 && options.skill_file_expected(1));
    let (skill_file, misnamed, held) = match early {
        Some(read) => listed_reading(listing, (&dir, &resolved), options, read, &mut v),
        None => listed(listing, &dir, depth, options, &mut v, |v, name| {
            v.subdirs.push(name);
        }),
    };
    let is_skill = skill_file.is_some() || misnamed.is_some();
    if is_skill && depth > 0 && !options.descend_into_skills {
        v.subdirs.clear();
        v.links.clear();
    }
    v.held = held.filter(|_| !v.subdirs.is_empty());
    let walk_on = !v.subdirs.is_empty() || !v.links.is_empty();
    let candidate = |dir, resolved| Candidate {
        dir,
        resolved,
        misnamed: if skill_file.is_some() { None } else { misnamed },
        skill_file,
    };
    match (is_skill && (depth > 0 || options.include_root), walk_on) {
        (true, true) => {
            v.candidate = Some(candidate(dir.to_path_buf(), resolved.to_path_buf()));
            v.folder = Some((dir.into_owned(), resolved.into_owned()));
        }
        (true, false) => v.candidate = Some(candidate(dir.into_owned(), resolved.into_owned())),
        (false, true) => v.folder = Some((dir.into_owned(), resolved.into_owned())),
        (false, false) => {}
    }
    v
}

/// [`listed`] at the root (`dir`, resolved: `resolved`), handing each folder it lists to
/// `read` as the listing goes on, a batch at a time, on the other threads of the pool it
/// runs on: what `read` takes is read where the walk would have reached it next, what it
/// does not take is walked as listed.
fn listed_reading(
    listing: Listing,
    (dir, resolved): (&Path, &Path),
    options: &DiscoveryOptions,
    read: &ReadFound<'_>,
    v: &mut Visit,
) -> (Option<PathBuf>, Option<PathBuf>, Option<Arc<Held>>) {
    /// Folders a batch: enough to make a batch worth a thread's taking it, few enough
    /// that the reads begin with the listing.
    const BATCH: usize = 64;
    let left = std::sync::Mutex::new(Vec::new());
    let files = rayon::scope(|scope| {
        let send = |batch: Vec<OsString>| {
            let left = &left;
            scope.spawn(move |_| {
                // One pair of paths for the batch, each name written into it in turn.
                let (mut at, mut at_resolved) = (PathBuf::new(), PathBuf::new());
                let not_taken: Vec<OsString> = batch
                    .into_iter()
                    .filter(|name| {
                        joined_into(&mut at, dir, name);
                        joined_into(&mut at_resolved, resolved, name);
                        !read(&at, &at_resolved, None)
                    })
                    .collect();
                if !not_taken.is_empty() {
                    left.lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .extend(not_taken);
                }
            });
        };
        let mut batch = Vec::with_capacity(BATCH);
        let files = listed(listing, dir, 0, options, v, |_, name| {
            batch.push(name);
            if batch.len() == BATCH {
                send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)));
            }
        });
        if !batch.is_empty() {
            send(batch);
        }
        files
    });
    v.subdirs = left
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    v.subdirs.sort_unstable();
    files
}

/// Goes through a folder's `listing`: its skill file and the first misnamed one, with the
/// links below it to walk put in `v` (sorted), and each folder below it to walk given to
/// `folder` (which [`visit`] has put in `v`, sorted here); and the handle the listing was
/// read through, where it was.
fn listed(
    listing: Listing,
    dir: &Path,
    depth: usize,
    options: &DiscoveryOptions,
    v: &mut Visit,
    mut folder: impl FnMut(&mut Visit, OsString),
) -> (Option<PathBuf>, Option<PathBuf>, Option<Arc<Held>>) {
    let mut skill_file = None;
    let mut misnamed: Option<OsString> = None;
    let held = listing.each(|name, kind| {
        if *name == *OsStr::new(SKILL_FILE) {
            skill_file = Some(joined(dir, &name));
            return;
        }
        if name
            .to_str()
            .is_some_and(|n| n.eq_ignore_ascii_case(SKILL_FILE))
        {
            // The first in name order, as a sorted listing would give.
            if misnamed.as_deref().is_none_or(|m| *name < *m) {
                misnamed = Some(name.into_owned());
            }
            return;
        }
        if depth >= options.max_depth || skipped(&name, options) {
            return;
        }
        match kind() {
            Kind::Folder => folder(v, name.into_owned()),
            Kind::Link => v.links.push(joined(dir, &name)),
            Kind::Other => {}
        }
    });
    // Names in a folder are unique: no order between equals to keep.
    v.subdirs.sort_unstable();
    v.links.sort_unstable();
    let misnamed = misnamed.map(|name| joined(dir, &name));
    (skill_file, misnamed, held)
}

/// What a listed entry is, as far as the walk cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Folder,
    Link,
    Other,
}

/// A folder's listing: by its whole path, or (on Linux) through a handle opened by its
/// name below the handle on the folder above ([`Near`]), which the walk then keeps for the
/// folders below.
enum Listing {
    Whole(std::fs::ReadDir),
    #[cfg(any(target_os = "linux", target_os = "android"))]
    Near(std::os::fd::OwnedFd),
}

impl Listing {
    /// The listing of `dir`: through `near` where that opens (a folder, not through a
    /// link) and the whole path of any entry could be walked too, else by the whole path,
    /// whose error is the one reported.
    fn open(dir: &Path, near: Option<Near<'_>>) -> std::io::Result<Listing> {
        /// The longest name a folder holds (`NAME_MAX`).
        #[cfg(any(target_os = "linux", target_os = "android"))]
        const LONGEST_NAME: usize = 255;
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if let Some(near) =
            near.filter(|_| crate::read::walkable(dir.as_os_str().len() + 1 + LONGEST_NAME))
        {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            if let Ok(fd) = rustix::fs::openat(near.above.fd(), near.name, flags, Mode::empty()) {
                return Ok(Listing::Near(fd));
            }
        }
        let _ = near;
        std::fs::read_dir(dir).map(Listing::Whole)
    }

    /// Calls `each` with every entry's name (not `.` or `..`) and a way to ask what it is,
    /// links not followed; returns the handle the listing was read through, held while the
    /// bound allows.
    fn each(self, mut each: impl FnMut(Cow<'_, OsStr>, &dyn Fn() -> Kind)) -> Option<Arc<Held>> {
        match self {
            Listing::Whole(listing) => {
                for entry in listing.filter_map(Result::ok) {
                    let kind = || match entry.file_type() {
                        Ok(t) if t.is_dir() => Kind::Folder,
                        Ok(t) if t.is_symlink() => Kind::Link,
                        _ => Kind::Other,
                    };
                    // The name is a copy already: the walk keeps it as it is.
                    each(Cow::Owned(entry.file_name()), &kind);
                }
                None
            }
            #[cfg(any(target_os = "linux", target_os = "android"))]
            Listing::Near(fd) => {
                use rustix::fs::{AtFlags, FileType};
                use std::os::unix::ffi::OsStrExt;
                let kind_of = |t: FileType| match t {
                    FileType::Directory => Kind::Folder,
                    FileType::Symlink => Kind::Link,
                    _ => Kind::Other,
                };
                // As large as the buffer the C library lists a folder through.
                let mut buf = [std::mem::MaybeUninit::uninit(); 32 * 1024];
                let mut listing = rustix::fs::RawDir::new(&fd, &mut buf);
                while let Some(Ok(entry)) = listing.next() {
                    let name = OsStr::from_bytes(entry.file_name().to_bytes());
                    if name == "." || name == ".." {
                        continue;
                    }
                    let kind = || match entry.file_type() {
                        FileType::Unknown => {
                            rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW)
                                .map_or(Kind::Other, |st| {
                                    kind_of(FileType::from_raw_mode(st.st_mode))
                                })
                        }
                        known => kind_of(known),
                    };
                    each(Cow::Borrowed(name), &kind);
                }
                Held::adopt(fd)
            }
        }
    }
}

/// What the walk needs to decide whether to follow a link.
struct Walk<'a> {
    /// The root, resolved.
    root: PathBuf,
    /// Targets entered through links so far.
    entered: Vec<PathBuf>,
    options: &'a DiscoveryOptions,
}

impl Walk<'_> {
    /// Resolves a link found in the folder whose resolved path is `parent`, and records its
    /// target; `None` when it is not a folder, is broken, or would walk a folder twice: the
    /// root or a folder holding it, a folder on the way to `parent` (a loop), a target (or
    /// a folder inside one) entered through another link, or a folder of the root the walk
    /// reaches anyway.
    fn follow(&mut self, path: &Path, parent: &Path) -> Option<PathBuf> {
        let target = std::fs::canonicalize(path).ok()?;
        if !target.is_dir() {
            return None;
        }
        let is_loop = parent.starts_with(&target) || self.root.starts_with(&target);
        let entered = self.entered.iter().any(|r| target.starts_with(r));
        if is_loop || entered || self.walked_anyway(&target) {
            return None;
        }
        self.entered.push(target.clone());
        Some(target)
    }

    /// Whether the plain walk (no links) reaches `target`: it lies inside the root, within
    /// the depth, through no skipped folder.
    fn walked_anyway(&self, target: &Path) -> bool {
        let Ok(rel) = target.strip_prefix(&self.root) else {
            return false;
        };
        let mut depth = 0;
        for part in rel.components() {
            depth += 1;
            if skipped(part.as_os_str(), self.options) {
                return false;
            }
        }
        depth <= self.options.max_depth
    }
}

fn skipped(name: &OsStr, options: &DiscoveryOptions) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    (options.skip_hidden && name.starts_with('.')) || options.skip_names.iter().any(|s| s == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One buffer written with each folder and name in turn holds what `Path::join` gives,
    /// byte for byte, after a longer path and a shorter one alike; `joined` too.
    #[test]
    fn a_path_joined_into_a_buffer_is_the_path_joined_anew() {
        let dirs = [
            "/srv/skills",
            "/srv/skills/",
            "/srv//skills",
            "relative/skills",
            ".",
            "",
            "/",
            "/a/much/longer/folder/name/than/the/others/to/grow/the/buffer",
        ];
        let names = ["pdf", "a b", "..x", "n\u{e9}e", "SKILL.md"];
        let mut buffer = PathBuf::new();
        for dir in dirs.iter().chain(dirs.iter().rev()) {
            for name in names {
                joined_into(&mut buffer, Path::new(dir), OsStr::new(name));
                let fresh = Path::new(dir).join(name);
                assert_eq!(
                    buffer.as_os_str().as_encoded_bytes(),
                    fresh.as_os_str().as_encoded_bytes(),
                    "{dir:?} + {name:?}"
                );
                let made = joined(Path::new(dir), OsStr::new(name));
                assert_eq!(made.as_os_str(), fresh.as_os_str(), "{dir:?} + {name:?}");
            }
        }
    }

    fn skill(dir: &Path, name: &str) {
        std::fs::create_dir_all(dir.join(name)).unwrap();
        std::fs::write(dir.join(name).join(SKILL_FILE), "---\n---\n").unwrap();
    }

    fn names(found: &Discovery, root: &Path) -> Vec<String> {
        found
            .candidates
            .iter()
            .map(|c| c.dir.strip_prefix(root).unwrap().display().to_string())
            .collect()
    }

    #[test]
    fn roots_layout_finds_immediate_skills_only() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        skill(root, "a");
        skill(root, "b");
        skill(root, "a/nested");
        skill(root, ".hidden");
        skill(root, "node_modules/x");
        skill(root, "group/deep");
        let found = discover(root, &DiscoveryOptions::roots());
        assert_eq!(names(&found, root), ["a", "b"]);
        let found = discover(root, &DiscoveryOptions::roots().with_max_depth(2));
        assert_eq!(names(&found, root), ["a", "b", "group/deep"]);
    }

    #[test]
    fn validate_layout_enters_hidden_and_nested() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        skill(root, "a");
        skill(root, "a/nested");
        skill(root, ".hidden");
        skill(root, ".git/x");
        skill(root, "node_modules/y");
        std::fs::create_dir_all(root.join("m")).unwrap();
        std::fs::write(root.join("m/skill.md"), "").unwrap();
        let found = discover(root, &DiscoveryOptions::validate());
        assert_eq!(names(&found, root), [".hidden", "a", "a/nested", "m"]);
        assert!(found.candidates[3].misnamed.is_some());
    }

    #[cfg(unix)]
    #[test]
    fn links_are_followed_once_and_loops_cut() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        let outside = tmp.path().join("outside");
        skill(&root, "a");
        skill(&outside, "ext");
        std::os::unix::fs::symlink(&outside, root.join("linked")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("linked-again")).unwrap();
        std::os::unix::fs::symlink(&root, root.join("a/loop")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("alias")).unwrap();
        let found = discover(&root, &DiscoveryOptions::validate());
        assert_eq!(names(&found, &root), ["a", "linked/ext"]);
    }

    /// A visible link is followed wherever it points: into a hidden folder, under
    /// `node_modules`, or deeper than the walk goes; the skill is listed once, with its
    /// resolved path.
    #[cfg(unix)]
    #[test]
    fn visible_links_are_followed_into_skipped_and_deep_folders() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        skill(&root, ".store/search");
        skill(&root, "node_modules/pkg/lint");
        skill(&root, "vendor/a/b/c/deep");
        skill(&root, "plain");
        let link = |target: &str, name: &str| {
            std::os::unix::fs::symlink(root.join(target), root.join(name)).unwrap();
        };
        link(".store/search", "search");
        link("node_modules/pkg/lint", "lint");
        link("vendor/a/b/c/deep", "deep");
        link("plain", "plain-again");
        // A hidden link is not visible, so not followed.
        link(".store/search", ".search");
        let found = discover(&root, &DiscoveryOptions::roots());
        assert_eq!(names(&found, &root), ["deep", "lint", "plain", "search"]);
        let canonical = std::fs::canonicalize(&root).unwrap();
        let resolved: Vec<PathBuf> = found
            .candidates
            .iter()
            .map(|c| c.resolved.clone())
            .collect();
        assert_eq!(
            resolved,
            [
                canonical.join("vendor/a/b/c/deep"),
                canonical.join("node_modules/pkg/lint"),
                canonical.join("plain"),
                canonical.join(".store/search"),
            ]
        );
    }

    /// Trees of folders, skill files (some misnamed), links (to folders inside and outside
    /// the root, to their own ancestors, to other links, to nothing; named to sort before,
    /// among and after the folders beside them) and hidden folders, drawn from a seed.
    #[cfg(unix)]
    fn draw_tree(seed: u64, base: &Path) -> PathBuf {
        let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let root = base.join("root");
        let outside = base.join("outside");
        let names = ["a", "b", "c", ".h", "d"];
        let mut folders = vec![root.clone(), outside.clone()];
        for _ in 0..24 {
            let parent = folders[next(folders.len() as u64) as usize].clone();
            if parent.components().count() > root.components().count() + 4 {
                continue;
            }
            let dir = parent.join(names[next(names.len() as u64) as usize]);
            std::fs::create_dir_all(&dir).unwrap();
            match next(4) {
                0 => std::fs::write(dir.join(SKILL_FILE), "x").unwrap(),
                1 if next(3) == 0 => std::fs::write(dir.join("skill.md"), "x").unwrap(),
                _ => {}
            }
            if !folders.contains(&dir) {
                folders.push(dir);
            }
        }
        // Links named to sort before, between and after the folders beside them, and
        // hidden; some lead to other links.
        let link_names = ["0", "b", "z", ".l"];
        let mut links: Vec<PathBuf> = Vec::new();
        for i in 0..14 {
            let at = folders[next(folders.len() as u64) as usize].clone();
            // Mostly outside the root or hidden, where a link is followed (a folder the
            // walk reaches anyway is not), so that links compete for the same folders.
            let outside_or_hidden: Vec<&PathBuf> = folders
                .iter()
                .filter(|f| !f.starts_with(&root) || f.to_string_lossy().contains("/.h"))
                .collect();
            let target = match next(8) {
                0 => at.join("nowhere"),
                1 if !links.is_empty() => links[next(links.len() as u64) as usize].clone(),
                2 | 3 => folders[next(folders.len() as u64) as usize].clone(),
                _ => outside_or_hidden[next(outside_or_hidden.len() as u64) as usize].clone(),
            };
            let name = format!("{}{i:02}", link_names[next(4) as usize]);
            if std::os::unix::fs::symlink(&target, at.join(&name)).is_ok() {
                links.push(at.join(name));
            }
        }
        root
    }

    /// The walk of a scan that reads where it finds (each folder visited once its parent
    /// is listed, links followed afterwards in the level walk's order) finds what the level
    /// walk finds: with a reader that takes nothing, the same candidates at the same paths;
    /// with one that takes every folder holding `SKILL.md`, those and the candidates left
    /// are together the level walk's. Over drawn trees with links of every kind, at four
    /// depths. A folder handed over with a handle on the folder above it is that folder.
    #[cfg(unix)]
    #[test]
    fn a_walk_reading_where_it_finds_follows_the_links_a_level_walk_follows() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let held = std::sync::atomic::AtomicUsize::new(0);
        for seed in 0..300 {
            let tmp = tempfile::tempdir().unwrap();
            let root = draw_tree(seed, tmp.path());
            for depth in [1, 2, 3, 5] {
                let options = DiscoveryOptions::roots()
                    .with_max_depth(depth)
                    .with_leaf_files(LeafFiles::Expected);
                let level = walk(&root, &options).into_discovery();
                let paths = |found: &Discovery| -> Vec<Candidate> { found.candidates.clone() };
                let decline = |_: &Path, _: &Path, _: Option<Near<'_>>| false;
                let declined = pool
                    .install(|| walk_reading(&root, &options, Some(&decline)))
                    .into_discovery();
                assert_eq!(
                    paths(&declined),
                    paths(&level),
                    "seed {seed}, depth {depth}"
                );
                let taken = std::sync::Mutex::new(Vec::new());
                let take = |dir: &Path, resolved: &Path, near: Option<Near<'_>>| {
                    // A folder given with the folder above it is that folder, by its name
                    // below the handle.
                    #[cfg(unix)]
                    if let Some(near) = near.filter(|_| {
                        // Below a folder other than the root, whose handle is the walk's own.
                        crate::read::below(&root, dir).is_some_and(|rel| rel.contains(&b'/'))
                    }) {
                        use std::os::unix::fs::MetadataExt;
                        let by_name = rustix::fs::statat(
                            near.above.fd(),
                            near.name,
                            rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
                        )
                        .unwrap();
                        let by_path = std::fs::symlink_metadata(dir).unwrap();
                        assert_eq!(
                            (by_name.st_dev, by_name.st_ino),
                            (by_path.dev(), by_path.ino())
                        );
                        held.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    let file = dir.join(SKILL_FILE);
                    let is_file = std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file());
                    if is_file {
                        taken.lock().unwrap().push(Candidate {
                            dir: dir.to_path_buf(),
                            resolved: resolved.to_path_buf(),
                            skill_file: Some(file),
                            misnamed: None,
                        });
                    }
                    is_file
                };
                let mut found = pool
                    .install(|| walk_reading(&root, &options, Some(&take)))
                    .into_discovery()
                    .candidates;
                found.extend(taken.into_inner().unwrap());
                found.sort_by(|a, b| a.dir.as_os_str().cmp(b.dir.as_os_str()));
                assert_eq!(found, paths(&level), "seed {seed}, depth {depth}");
            }
        }
        assert!(
            held.into_inner() > 0,
            "no folder was handed over with a handle"
        );
    }
}
