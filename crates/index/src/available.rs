//! Which skills' needs this machine does not meet (programs on `PATH`, variables, the
//! system), worked out at each publication: every program looked up once per publication,
//! on the `PATH` scripts receive. Tool needs are the host's to judge (the
//! executor's policy says which tools it offers).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::iter::{IntoParallelRefIterator, ParallelIterator};
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
    /// `PATH`, read now). Each distinct program and variable is looked up once, then the
    /// records are judged in parallel (on the caller's pool: the index's reading threads).
    pub(crate) fn check(records: &[Arc<SkillRecord>], path: Option<&OsStr>) -> Availability {
        let path = path
            .map(OsStr::to_os_string)
            .or_else(|| std::env::var_os("PATH"));
        let needs: Vec<(usize, Cow<'_, Requires>)> = records
            .iter()
            .enumerate()
            .filter_map(|(i, r)| Requires::of(&r.frontmatter).map(|n| (i, n)))
            .collect();
        let mut found = Availability {
            path,
            checked: records.len(),
            ..Availability::default()
        };
        if needs.is_empty() {
            return found;
        }
        let (bins, vars) = distinct_names(&needs);
        let here = look_up(&bins, found.path.as_deref());
        found.programs = bins.iter().map(|b| (*b).to_owned()).zip(here).collect();
        found.variables = vars
            .iter()
            .map(|v| {
                let set = std::env::var_os(v).is_some_and(|v| !v.is_empty());
                ((*v).to_owned(), set)
            })
            .collect();
        let os = Os::current();
        let (programs, variables) = (&found.programs, &found.variables);
        found.unavailable = needs
            .par_iter()
            .filter(|(_, n)| {
                !n.met_here(os, &|b| programs.get(b).copied().unwrap_or(false), &|v| {
                    variables.get(v).copied().unwrap_or(false)
                })
            })
            .map(|(i, _)| Arc::as_ptr(&records[*i]) as usize)
            .collect();
        found.unavailable.sort_unstable();
        found
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

/// The distinct programs and variables `needs` name, each once, in the order first named.
fn distinct_names<'n>(needs: &'n [(usize, Cow<'_, Requires>)]) -> (Vec<&'n str>, Vec<&'n str>) {
    let (mut bins, mut vars) = (Vec::new(), Vec::new());
    let (mut seen_bins, mut seen_vars) = (HashSet::new(), HashSet::new());
    for (_, n) in needs {
        for bin in n.bins.iter().chain(n.any_bins.iter().flatten()) {
            if seen_bins.insert(bin.as_str()) {
                bins.push(bin.as_str());
            }
        }
        for name in &n.env {
            if seen_vars.insert(name.as_str()) {
                vars.push(name.as_str());
            }
        }
    }
    (bins, vars)
}

/// From this many distinct programs on, each folder of the search path is listed once and
/// a program is looked for only in the folders whose listing may hold its name: a `stat`
/// that finds nothing costs about what listing a folder of a hundred names does, and a
/// machine's `PATH` has around ten folders.
const LIST_FROM: usize = 16;

/// Whether each of `names` is an executable file in a folder of `path` (with none, the C
/// library's default, `/bin:/usr/bin`, as `execvp` searches). A folder named twice is
/// searched once (it gives the same answer).
fn look_up(names: &[&str], path: Option<&OsStr>) -> Vec<bool> {
    let path = path.unwrap_or_else(|| OsStr::new("/bin:/usr/bin"));
    let mut dirs: Vec<PathBuf> = Vec::new();
    for dir in std::env::split_paths(path) {
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    let wanted = (names.len() >= LIST_FROM).then(|| Wanted::of(names));
    let listings: Vec<Option<Vec<bool>>> = match &wanted {
        Some(wanted) => dirs.iter().map(|dir| wanted.listed_in(dir)).collect(),
        None => dirs.iter().map(|_| None).collect(),
    };
    (0..names.len())
        .map(|i| {
            dirs.iter().zip(&listings).any(|(dir, listed)| {
                listed.as_ref().is_none_or(|l| l[i]) && executable(&dir.join(names[i]))
            })
        })
        .collect()
}

/// The programs looked for, by name with ASCII letters folded to lower case (so that a
/// folder on a file system that ignores case is not judged by its listing's spelling).
struct Wanted {
    by_name: HashMap<Box<[u8]>, Vec<usize>>,
    count: usize,
}

impl Wanted {
    fn of(names: &[&str]) -> Wanted {
        let mut by_name: HashMap<Box<[u8]>, Vec<usize>> = HashMap::new();
        for (i, name) in names.iter().enumerate() {
            by_name
                .entry(name.as_bytes().to_ascii_lowercase().into())
                .or_default()
                .push(i);
        }
        Wanted {
            by_name,
            count: names.len(),
        }
    }

    /// Which programs may be in `dir`, by its listing: one whose name is not listed is not
    /// there. Only a hint (a name that may be there is still looked up with `stat`, the
    /// folder's only judge); `None` when `dir` cannot be listed (every name is looked up
    /// then). A name with a byte outside ASCII may be spelt otherwise by a file system that
    /// folds case: it may always be there.
    #[cfg(unix)]
    fn listed_in(&self, dir: &Path) -> Option<Vec<bool>> {
        use std::os::unix::ffi::OsStrExt;
        let mut listed = vec![false; self.count];
        let mut mark = |at: &[usize]| at.iter().for_each(|&i| listed[i] = true);
        for (name, at) in &self.by_name {
            if !name.is_ascii() {
                mark(at);
            }
        }
        let mut lower = Vec::new();
        for entry in std::fs::read_dir(dir).ok()? {
            let entry = entry.ok()?.file_name();
            lower.clear();
            lower.extend(entry.as_bytes().iter().map(u8::to_ascii_lowercase));
            if let Some(at) = self.by_name.get(lower.as_slice()) {
                mark(at);
            }
        }
        Some(listed)
    }

    /// Not on this system: a program may be found under another name (`.exe`).
    #[cfg(not(unix))]
    fn listed_in(&self, _dir: &Path) -> Option<Vec<bool>> {
        None
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

    /// Listing each folder of `PATH` (from [`LIST_FROM`] programs on) answers as looking
    /// every program up does: executables found, in any folder and in one named twice;
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
        let mut names = vec![
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
        names.extend(absent.iter().map(String::as_str));
        let listed = look_up(&names, Some(&path));
        assert_eq!(listed, by_stat(&names, &path));
        assert_eq!(
            &listed[..9],
            [true, true, false, true, false, false, true, false, false]
        );
        assert_eq!(look_up(&names[..3], Some(&path)), [true, true, false]);
    }
}
