//! Validating paths as `skillctl validate` takes them: skill folders, `SKILL.md` files, or
//! folders to search. Each skill is checked once however many paths reach it, and reports
//! keep the order of the paths.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
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
        let candidates = candidates_at(path, &mut out);
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
    // Checked in parallel, where the caller's work runs (discovery's walk runs there too),
    // in the order found: one thread checking every skill was most of a run's time (at
    // 10,000 skills, half its samples; the walk before it was already parallel). Nothing
    // waits for every thread of that pool (a validation reads whole files, in no thread's
    // scratch buffer): a worker busy elsewhere, or waiting on a lock the caller holds, does
    // not hold it up.
    let check_one = |(_, c, at): (PathBuf, Candidate, usize)| {
        (at, check_candidate(&c, parser, DEFAULT_SKILL_FILE_LIMIT))
    };
    let checked: Vec<(usize, SkillReport)> = if pending.len() < 2 {
        // One skill (an author checking theirs) is checked on this thread, with no hop to
        // a pool's, as discovery visits a lone folder on this thread.
        pending.into_iter().map(check_one).collect()
    } else {
        pending.into_par_iter().map(check_one).collect()
    };
    // Keep reports in the order their paths were given, missing-path reports included.
    for (offset, (at, report)) in checked.into_iter().enumerate() {
        let at = (at + offset).min(out.reports.len());
        out.reports.insert(at, report);
    }
    out
}

/// The skills a given path reaches: the folders discovery finds below a folder, or the
/// file itself; a path that reaches none gets its report in `out`.
fn candidates_at(path: &Path, out: &mut Validation) -> Vec<Candidate> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) => {
            // The system's own reason: a link loop, a denied folder or a path too long
            // is not "no such file".
            let reason = match e.kind() {
                std::io::ErrorKind::NotFound => "no such file or directory".to_owned(),
                _ => e.to_string(),
            };
            out.missing_paths = true;
            out.reports.push(SkillReport::missing(
                path,
                format!("{}: {reason}", path.display()),
            ));
            return Vec::new();
        }
    };
    if meta.is_dir() {
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
    }
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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use skills_parser::SkillParser;
    use skills_storage::{discover, DiscoveryOptions};

    use super::validate_paths;
    use crate::{check_candidate, DEFAULT_SKILL_FILE_LIMIT};

    /// Skills checked in parallel are reported in the order of the paths given and, within
    /// a folder searched, in discovery's order, each report the one a check of that skill
    /// alone gives: valid and invalid skills, a path that does not exist between folders,
    /// and a `SKILL.md` given as a file.
    #[test]
    fn reports_keep_the_order_of_the_paths_and_of_discovery() {
        let tmp = tempfile::tempdir().expect("temporary folder");
        let root = tmp.path();
        for (folder, count) in [("a", 40), ("b", 7)] {
            for i in 0..count {
                let dir = root.join(folder).join(format!("s{i:02}"));
                std::fs::create_dir_all(&dir).expect("folder made");
                // Every third skill is invalid: its name is not its folder's.
                let name = if i % 3 == 0 {
                    "other"
                } else {
                    &format!("s{i:02}")
                };
                std::fs::write(
                    dir.join("SKILL.md"),
                    format!("---\nname: {name}\ndescription: Skill {i} of {folder}.\n---\nBody\n"),
                )
                .expect("skill written");
            }
        }
        let parser = SkillParser::builder().build();
        let paths: Vec<PathBuf> = vec![
            root.join("a"),
            root.join("missing"),
            root.join("b"),
            root.join("a/s03/SKILL.md"),
        ];
        let got = validate_paths(&paths, &parser);
        assert!(got.missing_paths);
        let mut want: Vec<(PathBuf, bool)> = Vec::new();
        for folder in ["a", "b"] {
            if folder == "b" {
                want.push((root.join("missing"), false));
            }
            let found = discover(&root.join(folder), &DiscoveryOptions::validate());
            for c in &found.candidates {
                let report = check_candidate(c, &parser, DEFAULT_SKILL_FILE_LIMIT);
                let valid = report.is_valid();
                want.push((report.dir, valid));
            }
        }
        // `a/s03` was reached already, through `a`: it is checked once.
        let got: Vec<(PathBuf, bool)> = got
            .reports
            .into_iter()
            .map(|r| {
                let valid = r.is_valid();
                (r.dir, valid)
            })
            .collect();
        assert_eq!(got, want);
        assert_eq!(got.iter().filter(|(_, valid)| !valid).count(), 14 + 3 + 1);
    }

    /// Regression: a validation on a pool one of whose workers is busy until it returns
    /// finishes (it used to wait for every worker of the pool, to free a buffer it never
    /// used, and would wait here for ever).
    #[test]
    fn regression_a_busy_worker_does_not_hold_validation_up() {
        let tmp = tempfile::tempdir().expect("temporary folder");
        for i in 0..50 {
            let dir = tmp.path().join(format!("s{i:02}"));
            std::fs::create_dir_all(&dir).expect("folder made");
            std::fs::write(
                dir.join("SKILL.md"),
                format!("---\nname: s{i:02}\ndescription: Skill {i}.\n---\nBody\n"),
            )
            .expect("skill written");
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("pool");
        let (started, busy) = std::sync::mpsc::channel();
        let (release, wait) = std::sync::mpsc::channel::<()>();
        pool.spawn(move || {
            started.send(()).expect("test waits");
            // Busy until the validation below has returned.
            let _ = wait.recv();
        });
        busy.recv().expect("worker started");
        let parser = SkillParser::builder().build();
        let got = pool.install(|| validate_paths(&[tmp.path().to_path_buf()], &parser));
        release.send(()).expect("worker waits");
        assert_eq!(got.reports.len(), 50);
        assert!(got.reports.iter().all(crate::SkillReport::is_valid));
    }
}
