//! A new skill folder (`skillctl new`): a `SKILL.md` that passes the strict rules and every
//! lint with no finding, a description template with a "Use when" clause for the author to
//! finish, and the resource folders asked for, each with a starting file.

use std::path::{Path, PathBuf};

use thiserror::Error;

/// Which resource folders a new skill gets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScaffoldParts {
    /// `scripts/`, with an executable example script.
    pub scripts: bool,
    /// `references/`, with a starting reference the body links to.
    pub references: bool,
    /// `assets/`, with a note on what goes there.
    pub assets: bool,
}

/// Why a skill could not be created.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ScaffoldError {
    /// The name breaks the specification's name rule.
    #[error("{name:?} cannot name a skill: it {problem}")]
    InvalidName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// Something is already at the path: nothing is overwritten.
    #[error("{0} already exists; nothing was written")]
    Exists(PathBuf),
    /// A file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl ScaffoldError {
    /// A stable code for programs.
    pub fn code(&self) -> &'static str {
        match self {
            ScaffoldError::InvalidName { .. } => "SCAFFOLD_INVALID_NAME",
            ScaffoldError::Exists(_) => "SCAFFOLD_EXISTS",
            ScaffoldError::Write { .. } => "SCAFFOLD_WRITE_FAILED",
        }
    }
}

/// Creates `parent/name/` with its `SKILL.md` and the `parts` asked for; returns the files
/// written. The name is checked first, and nothing that exists is touched.
///
/// ```
/// use skills_storage::{scaffold, ScaffoldParts};
///
/// let tmp = tempfile::tempdir().unwrap();
/// let parts = ScaffoldParts { scripts: true, ..ScaffoldParts::default() };
/// let files = scaffold(tmp.path(), "pdf-tools", parts).unwrap();
/// assert!(files.iter().any(|f| f.ends_with("scripts/example.sh")));
/// assert!(scaffold(tmp.path(), "pdf-tools", parts).is_err()); // never overwrites
/// assert!(scaffold(tmp.path(), "PDF Tools", parts).is_err()); // not a skill name
/// ```
pub fn scaffold(
    parent: &Path,
    name: &str,
    parts: ScaffoldParts,
) -> Result<Vec<PathBuf>, ScaffoldError> {
    if let Some(problem) = skills_model::spec_name_problem(name) {
        return Err(ScaffoldError::InvalidName {
            name: name.to_owned(),
            problem,
        });
    }
    let dir = parent.join(name);
    if std::fs::symlink_metadata(&dir).is_ok() {
        return Err(ScaffoldError::Exists(dir));
    }
    let title: String = name
        .split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ");
    let mut body = format!(
        "# {title}\n\nReplace this with what the agent should do, step by step.\n\n1. Check what the user asked for.\n2. Do the work.\n3. Report what changed.\n"
    );
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    if parts.scripts || parts.references || parts.assets {
        body.push_str("\n## Files\n\n");
    }
    if parts.scripts {
        body.push_str("- `scripts/example.sh`: run it for the repetitive part of the task.\n");
        files.push((
            dir.join("scripts/example.sh"),
            "#!/bin/sh\n# Replace with the script this skill runs.\necho \"example\"\n".into(),
        ));
    }
    if parts.references {
        body.push_str(
            "- [references/guide.md](references/guide.md): read it when the task needs the details.\n",
        );
        files.push((
            dir.join("references/guide.md"),
            format!("# {title}: guide\n\nDetails the agent reads only when it needs them.\n"),
        ));
    }
    if parts.assets {
        body.push_str("- `assets/`: templates and files the output is made from.\n");
        files.push((
            dir.join("assets/README.md"),
            "Templates, images and other files the skill's output uses.\n".into(),
        ));
    }
    let skill = format!(
        "---\nname: {name}\ndescription: Replace with what this skill does, in one sentence. Use when the user asks for that task.\n---\n{body}"
    );
    files.insert(0, (dir.join(crate::SKILL_FILE), skill));
    let mut written = Vec::new();
    for (path, text) in files {
        let write = || -> std::io::Result<()> {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, &text)?;
            #[cfg(unix)]
            if path.extension().is_some_and(|e| e == "sh") {
                use std::os::unix::fs::PermissionsExt as _;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
            }
            Ok(())
        };
        write().map_err(|source| ScaffoldError::Write {
            path: path.clone(),
            source,
        })?;
        written.push(path);
    }
    Ok(written)
}
