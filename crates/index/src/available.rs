//! Which skills' needs this machine does not meet (programs on `PATH`, variables, the
//! system), worked out at each publication: every program looked up once per publication,
//! on the `PATH` scripts receive. Tool needs are the host's to judge (the
//! executor's policy says which tools it offers).

use std::cell::RefCell;
use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use rayon::iter::ParallelIterator;
use rayon::slice::ParallelSlice;
use skills_model::{Os, Requires, SkillRecord, Unmet};

use crate::Map;

/// What a publication found of this machine: which records' needs are unmet (by address:
/// the snapshot holds every record it names), and the answers for each program and variable
/// asked about, from which a record's reasons are worked out when the host asks. Empty for
/// most snapshots; nothing is allocated for a record beyond its entry in the set.
#[derive(Debug, Default)]
pub(crate) struct Availability {
    /// The addresses of the records whose needs are unmet, sorted.
    unavailable: Vec<usize>,
    /// How many records were checked.
    checked: usize,
    programs: Map<String, bool>,
    variables: Map<String, bool>,
    /// The `PATH` programs were looked up on.
    pub(crate) path: Option<OsString>,
}

impl Availability {
    /// Checks every record's needs here. `path` is the search path (`None`: this process's
    /// `PATH`, read now). The records are judged in parallel (on the caller's pool: the
    /// index's reading threads), in one pass over each record; each distinct program and
    /// variable is looked up once, the first time a record names it.
    pub(crate) fn check(records: &[Arc<SkillRecord>], path: Option<&OsStr>) -> Availability {
        let path = path
            .map(OsStr::to_os_string)
            .or_else(|| std::env::var_os("PATH"));
        let os = Os::current();
        let answers = Answers::on(path.as_deref());
        // Runs long enough that each thread's copy of the answers is filled few times, each
        // walked in order so that what the next records' needs touch is asked for ahead.
        let mut unavailable: Vec<usize> = records
            .par_chunks(512)
            .flat_map_iter(|run| {
                let local = Local::default();
                let mut lacking = Vec::new();
                for (i, record) in run.iter().enumerate() {
                    warm_needs_ahead(run, i);
                    let Some(needs) = Requires::of(&record.frontmatter) else {
                        continue;
                    };
                    let met = needs.met_here(os, &|b| local.program(b, &answers), &|v| {
                        local.variable(v, &answers)
                    });
                    if !met {
                        lacking.push(Arc::as_ptr(record) as usize);
                    }
                }
                lacking
            })
            .collect();
        unavailable.sort_unstable();
        let (programs, variables) = answers.into_maps();
        Availability {
            unavailable,
            checked: records.len(),
            programs,
            variables,
            path,
        }
    }

    /// Keeps only what names `kept`, the records that stayed of those checked (a snapshot's
    /// build drops some: lookalikes, a folder found twice), so that no address of a dropped
    /// record, free to be reused, stays here. Nothing to do when none was dropped.
    pub(crate) fn keep_only(&mut self, kept: &[Arc<SkillRecord>]) {
        if kept.len() == self.checked || self.unavailable.is_empty() {
            return;
        }
        let mut addresses: Vec<usize> = kept.iter().map(|r| Arc::as_ptr(r) as usize).collect();
        addresses.sort_unstable();
        self.unavailable
            .retain(|a| addresses.binary_search(a).is_ok());
        self.checked = kept.len();
    }

    /// Whether `record` (a record of the snapshot) lacks something here.
    pub(crate) fn lacks(&self, record: &SkillRecord) -> bool {
        !self.unavailable.is_empty()
            && self
                .unavailable
                .binary_search(&(std::ptr::from_ref(record) as usize))
                .is_ok()
    }

    /// What `record` (a record of the snapshot) needs and lacks here.
    pub(crate) fn of(&self, record: &SkillRecord) -> Vec<Unmet> {
        if !self.lacks(record) {
            return Vec::new();
        }
        let Some(needs) = Requires::of(&record.frontmatter) else {
            return Vec::new();
        };
        needs.unmet_here(
            Os::current(),
            &mut |b| self.programs.get(b).copied().unwrap_or(false),
            &|v| self.variables.get(v).copied().unwrap_or(false),
        )
    }
}

/// Asks the processor to start loading what judging a record touches, in stages ahead (as
/// the search build does): the record eight places on; four on, its frontmatter; two on, its
/// `requires:`; one on, the first program it names. The needs of 10,000 records lie in as
/// many scattered allocations, and judging them cold cost most of the check. A hint only.
fn warm_needs_ahead(records: &[Arc<SkillRecord>], i: usize) {
    if let Some(record) = records.get(i + 8) {
        crate::warm::warm(&**record);
    }
    if let Some(record) = records.get(i + 4) {
        crate::warm::warm(&*record.frontmatter);
    }
    if let Some(requires) = records
        .get(i + 2)
        .and_then(|r| r.frontmatter.requires.as_deref())
    {
        crate::warm::warm(requires);
    }
    let first = records
        .get(i + 1)
        .and_then(|r| r.frontmatter.requires.as_deref());
    if let Some(bin) = first.and_then(|r| r.bins.first()) {
        crate::warm::warm(bin);
        if let Some(byte) = bin.as_bytes().first() {
            crate::warm::warm(byte);
        }
    }
}

/// One reading thread's copy of the answers it has had (so that judging a record takes no
/// lock once its names have been asked about).
#[derive(Default)]
struct Local {
    programs: RefCell<Map<Box<str>, bool>>,
    variables: RefCell<Map<Box<str>, bool>>,
}

impl Local {
    fn program(&self, name: &str, answers: &Answers) -> bool {
        remembered(&self.programs, name, || answers.program(name))
    }

    fn variable(&self, name: &str, answers: &Answers) -> bool {
        remembered(&self.variables, name, || answers.variable(name))
    }
}

/// The answer `seen` holds for `name`, or `ask`'s, then held.
fn remembered(seen: &RefCell<Map<Box<str>, bool>>, name: &str, ask: impl FnOnce() -> bool) -> bool {
    if let Some(answer) = seen.borrow().get(name) {
        return *answer;
    }
    let answer = ask();
    seen.borrow_mut().insert(name.into(), answer);
    answer
}

/// From this many distinct programs on, each folder of the search path is listed once and
/// a program is looked for only in the folders whose listing may hold its name: a `stat`
/// that finds nothing costs about what listing a folder of a hundred names does, and a
/// machine's `PATH` has around ten folders.
const LIST_FROM: usize = 16;

/// The answers of one check, shared by the reading threads: whether each program asked
/// about is an executable file in a folder of the search path (with none, the C library's
/// default, `/bin:/usr/bin`, as `execvp` searches), and whether each variable is set and
/// not empty. A folder named twice, or reached twice through a link, is searched once (it
/// gives the same answer).
struct Answers {
    /// The search path as given; its folders are worked out at the first program asked
    /// about (most publications ask about none, and then `stat` no folder).
    path: OsString,
    dirs: OnceLock<Vec<PathBuf>>,
    programs: Mutex<Map<String, bool>>,
    variables: Mutex<Map<String, bool>>,
    /// The folders' listings, made once [`LIST_FROM`] programs have been looked up.
    listings: OnceLock<Vec<Option<Listing>>>,
}

impl Answers {
    fn on(path: Option<&OsStr>) -> Answers {
        Answers {
            path: path
                .unwrap_or_else(|| OsStr::new("/bin:/usr/bin"))
                .to_os_string(),
            dirs: OnceLock::new(),
            programs: Mutex::default(),
            variables: Mutex::default(),
            listings: OnceLock::new(),
        }
    }

    /// The search path's folders, each once.
    fn dirs(&self) -> &[PathBuf] {
        self.dirs.get_or_init(|| {
            let mut dirs: Vec<PathBuf> = Vec::new();
            let mut seen = Vec::new();
            for dir in std::env::split_paths(&self.path) {
                if dirs.contains(&dir) {
                    continue;
                }
                if let Some(id) = folder_id(&dir) {
                    if seen.contains(&id) {
                        continue;
                    }
                    seen.push(id);
                }
                dirs.push(dir);
            }
            dirs
        })
    }

    fn program(&self, name: &str) -> bool {
        let asked = {
            let programs = self.programs.lock();
            if let Some(found) = programs.get(name) {
                return *found;
            }
            programs.len()
        };
        // Looked up outside the lock: two threads asking at once give the same answer.
        let dirs = self.dirs();
        let listings = (asked >= LIST_FROM).then(|| {
            self.listings
                .get_or_init(|| dirs.iter().map(|d| Listing::of(d)).collect())
        });
        let found = dirs.iter().enumerate().any(|(i, dir)| {
            let may_be = listings.is_none_or(|l| l[i].as_ref().is_none_or(|l| l.may_hold(name)));
            may_be && executable(&dir.join(name))
        });
        self.programs.lock().insert(name.to_owned(), found);
        found
    }

    fn variable(&self, name: &str) -> bool {
        if let Some(set) = self.variables.lock().get(name) {
            return *set;
        }
        let set = std::env::var_os(name).is_some_and(|v| !v.is_empty());
        self.variables.lock().insert(name.to_owned(), set);
        set
    }

    fn into_maps(self) -> (Map<String, bool>, Map<String, bool>) {
        (self.programs.into_inner(), self.variables.into_inner())
    }
}

/// What identifies a folder whichever path reaches it.
#[cfg(unix)]
fn folder_id(dir: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn folder_id(_dir: &Path) -> Option<(u64, u64)> {
    None
}

/// The names in a folder, with ASCII letters folded to lower case (so that a folder on a
/// file system that ignores case is not judged by its listing's spelling). Only a hint: a
/// name that may be there is still looked up with `stat`, the folder's only judge.
struct Listing {
    names: HashSet<Box<[u8]>>,
}

impl Listing {
    /// `None` when `dir` cannot be listed (every name is looked up then).
    #[cfg(unix)]
    fn of(dir: &Path) -> Option<Listing> {
        use std::os::unix::ffi::OsStrExt;
        let mut names = HashSet::new();
        for entry in std::fs::read_dir(dir).ok()? {
            let name = entry.ok()?.file_name();
            names.insert(name.as_bytes().to_ascii_lowercase().into_boxed_slice());
        }
        Some(Listing { names })
    }

    /// Not on this system: a program may be found under another name (`.exe`).
    #[cfg(not(unix))]
    fn of(_dir: &Path) -> Option<Listing> {
        None
    }

    /// Whether `name` may be in the folder. A name with a byte outside ASCII may be spelt
    /// otherwise by a file system that folds case: it may always be there.
    fn may_hold(&self, name: &str) -> bool {
        !name.is_ascii() || self.names.contains(name.to_ascii_lowercase().as_bytes())
    }
}

#[cfg(unix)]
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn executable(path: &Path) -> bool {
    let exe = path.with_extension("exe");
    [path, exe.as_path()]
        .iter()
        .any(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each program's answer with no listing: a `stat` in each folder, as `execvp` looks.
    fn by_stat(names: &[&str], path: &OsStr) -> Vec<bool> {
        names
            .iter()
            .map(|n| std::env::split_paths(path).any(|d| executable(&d.join(n))))
            .collect()
    }

    /// Listing each folder of `PATH` (once [`LIST_FROM`] programs were looked up) answers
    /// as looking every program up does: executables found, in any folder and in one named twice;
    /// files that cannot run, folders, dangling links and absent names not; a folder that
    /// does not exist passed over.
    #[cfg(unix)]
    #[test]
    fn listing_the_folders_answers_as_looking_each_program_up() {
        use std::os::unix::fs::{symlink, PermissionsExt};
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let file = |dir: &Path, name: &str, mode: u32| {
            let p = dir.join(name);
            std::fs::write(&p, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        file(a.path(), "runs", 0o755);
        file(a.path(), "Mixed", 0o755);
        file(b.path(), "later", 0o700);
        file(b.path(), "cannot-run", 0o644);
        std::fs::create_dir(a.path().join("a-folder")).unwrap();
        symlink(a.path().join("runs"), b.path().join("linked")).unwrap();
        symlink(a.path().join("nowhere"), b.path().join("dangling")).unwrap();
        let path =
            std::env::join_paths([a.path(), &a.path().join("absent"), b.path(), a.path()]).unwrap();
        let names = [
            "runs",
            "Mixed",
            "mixed",
            "later",
            "cannot-run",
            "a-folder",
            "linked",
            "dangling",
            "ünïcode",
        ];
        let absent: Vec<String> = (0..LIST_FROM).map(|i| format!("absent-{i}")).collect();
        // Asked after LIST_FROM others, the names are judged by the folders' listings.
        let listing = Answers::on(Some(&path));
        assert!(absent.iter().all(|a| !listing.program(a)));
        let listed: Vec<bool> = names.iter().map(|n| listing.program(n)).collect();
        assert!(listing.listings.get().is_some());
        assert_eq!(listed, by_stat(&names, &path));
        assert_eq!(
            listed,
            [true, true, false, true, false, false, true, false, false]
        );
        let few = Answers::on(Some(&path));
        let looked: Vec<bool> = names[..3].iter().map(|n| few.program(n)).collect();
        assert!(few.listings.get().is_none());
        assert_eq!(looked, [true, true, false]);
    }

    /// The search path's folders are looked at only when a program is asked about: a
    /// publication whose skills need no program (most) makes no `stat` of them.
    #[test]
    fn the_search_path_is_read_at_the_first_program_asked() {
        let answers = Answers::on(Some(OsStr::new("/bin:/usr/bin")));
        assert!(!answers.variable("SKILLS_TEST_SURELY_UNSET_VARIABLE"));
        assert!(answers.dirs.get().is_none());
        let _ = answers.program("sh");
        assert!(answers.dirs.get().is_some());
    }
}
