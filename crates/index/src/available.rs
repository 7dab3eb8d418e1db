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

/// The unmet needs of a snapshot's records, by record (its address: the snapshot holds
/// every record it names). Empty for most snapshots.
#[derive(Debug, Default)]
pub(crate) struct Availability {
    unmet: Map<usize, Arc<[Unmet]>>,
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
        if needs.is_empty() {
            return Availability {
                unmet: Map::default(),
                path,
            };
        }
        let mut programs: Map<&str, bool> = Map::default();
        let mut variables: Map<&str, bool> = Map::default();
        for (_, n) in &needs {
            for bin in n.bins.iter().chain(n.any_bins.iter().flatten()) {
                programs.entry(bin.as_str()).or_insert(false);
            }
            for name in &n.env {
                variables.entry(name.as_str()).or_insert(false);
            }
        }
        for (name, here) in &mut programs {
            *here = on_path(name, path.as_deref());
        }
        for (name, set) in &mut variables {
            *set = std::env::var_os(name).is_some_and(|v| !v.is_empty());
        }
        let os = Os::current();
        let unmet = needs
            .par_iter()
            .filter_map(|(i, n)| {
                let missing = n.unmet_here(
                    os,
                    &mut |b| programs.get(b).copied().unwrap_or(false),
                    &|v| variables.get(v).copied().unwrap_or(false),
                );
                (!missing.is_empty()).then(|| (Arc::as_ptr(&records[*i]) as usize, missing.into()))
            })
            .collect();
        Availability { unmet, path }
    }

    /// What `record` (a record of the snapshot) needs and lacks here.
    pub(crate) fn of(&self, record: &SkillRecord) -> &[Unmet] {
        if self.unmet.is_empty() {
            return &[];
        }
        self.unmet
            .get(&(std::ptr::from_ref(record) as usize))
            .map_or(&[], |u| u)
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
