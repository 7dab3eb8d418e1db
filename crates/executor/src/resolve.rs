//! The file-system facts a decision needs, read here and nowhere else in enforcement: a
//! path resolved as the kernel would open it, a file's identity (device and inode), the
//! identities of a skill's scripts and its real folder at activation. With them it builds
//! the resolved call and the compiled rules that `skills-policy` judges without I/O.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use skills_model::{Skill, SkillFile};
use skills_policy::{
    normalize, Call, CompiledRules, Decision, Fallback, FolderFacts, PathAccess, ResolvedPath,
};

/// The rules of `skill`, compiled with its folder's facts as they are at activation, and
/// its remote origin when the host does not trust it (`trusted` says).
pub(crate) fn compile(skill: &Skill, trusted: Trusted) -> CompiledRules {
    let dir = skill.record.dir();
    let untrusted_origin = match (&skill.record.remote, trusted) {
        (Some(origin), Trusted::No) => Some(origin.to_string()),
        _ => None,
    };
    let facts = FolderFacts {
        canonical_dir: std::fs::canonicalize(dir).ok(),
        script_files: script_ids(dir, &skill.files),
        untrusted_origin,
    };
    CompiledRules::compile(skill, facts)
}

/// Whether the host trusts a skill (its layer, plugin or remote origin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trusted {
    Yes,
    No,
}

/// Decides one call (its path not resolved yet) against the stack (bottom to top), its
/// path resolved first when it is a path tool's.
pub(crate) fn decide<'a>(
    stack: impl Iterator<Item = &'a CompiledRules> + Clone,
    mut call: Call<'_>,
    fallback: Fallback,
) -> Decision {
    let (access, arg) = (call.access, call.arg);
    let path = match (access, arg) {
        (PathAccess::None, _) | (_, None) => None,
        (_, Some(arg)) => {
            let mut path = touched(arg);
            // A file's identity is asked only when an active skill has scripts a hard link
            // could reach.
            if stack.clone().any(CompiledRules::needs_identity) {
                path.identity =
                    skills_storage::file_id(path.resolved.as_deref().unwrap_or(&path.lexical));
            }
            Some(path)
        }
    };
    call.path = path;
    skills_policy::decide(stack, &call, fallback)
}

/// The path a path tool touches: normalised as written, and with links resolved (the
/// deepest existing ancestor canonicalised, the rest appended, so a file not created yet
/// under a link is resolved through the link). Its identity is not read.
pub(crate) fn touched(arg: &str) -> ResolvedPath {
    ResolvedPath {
        lexical: normalize(Path::new(arg)),
        resolved: resolve_physical(Path::new(arg)),
        identity: None,
    }
}

/// The path the kernel would open: each existing prefix resolved through its links before
/// the next component applies, so `link/..` climbs from where the link points, not from
/// where it sits. A missing component is kept as written, and resolution goes on after it:
/// a host that normalises `missing/../link` (or creates `missing`) reaches `link`, so
/// `link` is resolved too. A dangling link is followed by hand (a write through it creates
/// its target). `None` when the links loop (the kernel refuses such a path too) or the
/// working folder is unknown.
pub(crate) fn resolve_physical(raw: &Path) -> Option<PathBuf> {
    let start = if raw.is_absolute() {
        PathBuf::new()
    } else {
        std::fs::canonicalize(std::env::current_dir().ok()?).ok()?
    };
    // The kernel's own limit on links followed in one lookup.
    let mut links = 40u32;
    resolve_from(start, raw, &mut links)
}

/// Resolves `raw` from `current`, which has no links in it: one `lstat` per component
/// (linear in the path's length), a link followed by resolving its target from where it
/// sits.
fn resolve_from(mut current: PathBuf, raw: &Path, links: &mut u32) -> Option<PathBuf> {
    for comp in raw.components() {
        match comp {
            Component::Prefix(_) | Component::RootDir => current.push(comp),
            Component::CurDir => {}
            Component::ParentDir => {
                current.pop();
            }
            Component::Normal(part) => {
                current.push(part);
                let is_link =
                    std::fs::symlink_metadata(&current).is_ok_and(|m| m.file_type().is_symlink());
                if is_link {
                    *links = links.checked_sub(1)?;
                    let target = std::fs::read_link(&current).ok()?;
                    current.pop();
                    current = resolve_from(current, &target, links)?;
                }
            }
        }
    }
    Some(current)
}

/// The identities of a skill's scripts (the files a load listed under `scripts/`) as they
/// are now: a file with one of them is a script by whichever name it is reached (a hard
/// link elsewhere in the folder).
pub(crate) fn script_ids(dir: &Path, files: &[SkillFile]) -> Arc<[(u64, u64)]> {
    files
        .iter()
        .filter(|f| f.path.starts_with("scripts/"))
        .filter_map(|f| skills_storage::file_id(&dir.join(&f.path)))
        .collect()
}
