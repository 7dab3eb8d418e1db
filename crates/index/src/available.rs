//! Which skills' needs this machine does not meet (programs on `PATH`, variables, the
//! system), worked out at each publication: every program looked up once per publication,
//! on the `PATH` scripts receive. Tool needs are the host's to judge (the
//! executor's policy says which tools it offers).

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::path::Path;
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
    unavailable: std::collections::HashSet<usize>,
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
            ..Availability::default()
        };
        if needs.is_empty() {
            return found;
        }
        for (_, n) in &needs {
            for bin in n.bins.iter().chain(n.any_bins.iter().flatten()) {
                if !found.programs.contains_key(bin.as_str()) {
                    let here = on_path(bin, found.path.as_deref());
                    found.programs.insert(bin.clone(), here);
                }
            }
            for name in &n.env {
                if !found.variables.contains_key(name.as_str()) {
                    let set = std::env::var_os(name).is_some_and(|v| !v.is_empty());
                    found.variables.insert(name.clone(), set);
                }
            }
        }
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
        found
    }

    /// Whether `record` (a record of the snapshot) lacks something here.
    pub(crate) fn lacks(&self, record: &SkillRecord) -> bool {
        !self.unavailable.is_empty()
            && self
                .unavailable
                .contains(&(std::ptr::from_ref(record) as usize))
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

/// Whether `name` is an executable file in a folder of `path` (with none, the C library's
/// default, `/bin:/usr/bin`, as `execvp` searches).
fn on_path(name: &str, path: Option<&OsStr>) -> bool {
    let path = path.unwrap_or_else(|| OsStr::new("/bin:/usr/bin"));
    std::env::split_paths(path).any(|dir| executable(&dir.join(name)))
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
