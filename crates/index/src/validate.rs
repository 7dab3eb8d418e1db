//! Validating paths as `skillctl validate` takes them: skill folders, `SKILL.md` files, or
//! folders to search. Each skill is checked once however many paths reach it, and reports
//! keep the order of the paths.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use skills_parser::SkillParser;
use skills_storage::{discover, Candidate, DiscoveryOptions, SKILL_FILE};

use crate::{check_candidate, SkillReport, DEFAULT_SKILL_FILE_LIMIT};

/// What [`validate_paths`] found.
#[derive(Debug, Default)]
pub struct Validation {
    /// One report per skill (and per path that holds none), in the order of the paths.
    pub reports: Vec<SkillReport>,
    /// Whether a path does not exist.
    pub missing_paths: bool,
    /// Folders that could not be listed, and why.
    pub problems: Vec<(PathBuf, std::io::Error)>,
}

/// Checks every skill `paths` reach with `parser`. A skill reached twice (through a link)
/// is checked once, under the folder whose name is its real one when there is such a path,
/// so the verdict does not depend on the order of the paths.
pub fn validate_paths(paths: &[PathBuf], parser: &SkillParser) -> Validation {
    let mut out = Validation::default();
    let mut pending: Vec<(PathBuf, Candidate, usize)> = Vec::new();
    let mut positions: HashMap<PathBuf, usize> = HashMap::new();
    for path in paths {
        let Ok(meta) = std::fs::metadata(path) else {
            out.missing_paths = true;
            out.reports.push(SkillReport::missing(
                path,
                format!("{}: no such file or directory", path.display()),
            ));
            continue;
        };
        let candidates = if meta.is_dir() {
            let found = discover(path, &DiscoveryOptions::validate());
            out.problems.extend(found.problems);
            if found.candidates.is_empty() {
                out.reports.push(SkillReport::missing(
                    path,
                    "no SKILL.md in or below this directory",
                ));
            }
            found.candidates
        } else if let Some(c) = file_candidate(path) {
            vec![c]
        } else {
            out.reports.push(SkillReport::missing(
                path,
                "not a SKILL.md file or a directory holding skills",
            ));
            Vec::new()
        };
        for candidate in candidates {
            let key = candidate.resolved.clone();
            match positions.get(&key).map(|i| &mut pending[*i]) {
                Some((k, existing, _)) => {
                    if k.file_name() == candidate.dir.file_name()
                        && existing.dir.file_name() != k.file_name()
                    {
                        *existing = candidate;
                    }
                }
                None => {
                    positions.insert(key.clone(), pending.len());
                    pending.push((key, candidate, out.reports.len()));
                }
            }
        }
    }
    let checked: Vec<(usize, SkillReport)> = pending
        .into_iter()
        .map(|(_, c, at)| (at, check_candidate(&c, parser, DEFAULT_SKILL_FILE_LIMIT)))
        .collect();
    // Keep reports in the order their paths were given, missing-path reports included.
    for (offset, (at, report)) in checked.into_iter().enumerate() {
        let at = (at + offset).min(out.reports.len());
        out.reports.insert(at, report);
    }
    out
}

/// A file given directly: `SKILL.md`, or a wrongly-cased `skill.md`.
fn file_candidate(path: &Path) -> Option<Candidate> {
    let name = path.file_name()?.to_str()?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if name == SKILL_FILE {
        Some(Candidate {
            resolved: std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone()),
            dir,
            skill_file: Some(path.to_path_buf()),
            misnamed: None,
        })
    } else if name.eq_ignore_ascii_case(SKILL_FILE) {
        Some(Candidate {
            resolved: std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone()),
            dir,
            skill_file: None,
            misnamed: Some(path.to_path_buf()),
        })
    } else {
        None
    }
}
