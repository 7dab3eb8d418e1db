//! Discovery: which directories under a root are skills.
//!
//! A directory is a skill when it holds `SKILL.md` (or, misnamed, `skill.md` in another
//! case, which validation reports). The walk never stats plain directories: loops are only
//! possible through symbolic links, so only a followed link is resolved to its canonical
//! path, and a link whose target lies inside the root or inside a region already entered is
//! skipped. Every directory is therefore visited once, and loops are cut.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The name a skill file must have.
pub const SKILL_FILE: &str = "SKILL.md";

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
        }
    }

    /// The same options with skills searched to `depth` levels below the root.
    #[must_use]
    pub fn with_max_depth(mut self, depth: usize) -> DiscoveryOptions {
        self.max_depth = depth;
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

/// Walks `root` for skill directories.
pub fn discover(root: &Path, options: &DiscoveryOptions) -> Discovery {
    let mut found = Discovery::default();
    let canonical_root = match std::fs::canonicalize(root) {
        Ok(p) => p,
        Err(e) => {
            found.problems.push((root.to_path_buf(), e));
            return found;
        }
    };
    let mut regions: Vec<PathBuf> = vec![canonical_root];
    // (logical path, depth), walked depth-first in name order.
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let mut entries = match std::fs::read_dir(&dir) {
            Ok(rd) => rd.filter_map(Result::ok).collect::<Vec<_>>(),
            Err(e) => {
                // A directory that vanished mid-scan is not a problem worth reporting.
                if e.kind() != std::io::ErrorKind::NotFound {
                    found.problems.push((dir, e));
                }
                continue;
            }
        };
        entries.sort_by_key(std::fs::DirEntry::file_name);
        let mut skill_file = None;
        let mut misnamed = None;
        let mut subdirs = Vec::new();
        for entry in &entries {
            let name = entry.file_name();
            if name == OsStr::new(SKILL_FILE) {
                skill_file = Some(entry.path());
                continue;
            }
            if name
                .to_str()
                .is_some_and(|n| n.eq_ignore_ascii_case(SKILL_FILE))
            {
                misnamed.get_or_insert_with(|| entry.path());
                continue;
            }
            if depth >= options.max_depth {
                continue;
            }
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if file_type.is_dir() {
                if !skipped(&name, options) {
                    subdirs.push(path);
                }
            } else if file_type.is_symlink() && !skipped(&name, options) {
                if let Some(target) = follow_link(&path, &mut regions) {
                    tracing::debug!(link = %path.display(), target = %target.display(), "following link");
                    subdirs.push(path);
                }
            }
        }
        let is_skill = skill_file.is_some() || misnamed.is_some();
        if is_skill && (depth > 0 || options.include_root) {
            found.candidates.push(Candidate {
                dir: dir.clone(),
                misnamed: if skill_file.is_some() { None } else { misnamed },
                skill_file,
            });
        }
        if is_skill && depth > 0 && !options.descend_into_skills {
            continue;
        }
        for sub in subdirs.into_iter().rev() {
            stack.push((sub, depth + 1));
        }
    }
    // Byte order of the paths: deterministic, and cheaper than comparing components.
    found
        .candidates
        .sort_by(|a, b| a.dir.as_os_str().cmp(b.dir.as_os_str()));
    found
}

fn skipped(name: &OsStr, options: &DiscoveryOptions) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    (options.skip_hidden && name.starts_with('.')) || options.skip_names.iter().any(|s| s == name)
}

/// Resolves a symbolic link to a directory and records its region; `None` when it is not a
/// directory, is broken, or points into a region already walked (a loop or a duplicate).
fn follow_link(path: &Path, regions: &mut Vec<PathBuf>) -> Option<PathBuf> {
    let target = std::fs::canonicalize(path).ok()?;
    if !target.is_dir() {
        return None;
    }
    // Inside a region already walked: a duplicate, or a loop back into it. An ancestor of
    // the root would walk the root again. A link that merely contains a region entered
    // through another link is followed; callers deduplicate skills found twice.
    let inside_walked = regions.iter().any(|r| target.starts_with(r));
    let contains_root = regions
        .first()
        .is_some_and(|root| root.starts_with(&target));
    if inside_walked || contains_root {
        return None;
    }
    regions.push(target.clone());
    Some(target)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
