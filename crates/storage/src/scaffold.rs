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
    // A name YAML could read as a number, a boolean or null (`123`, `1e5`, `0x1f`, `true`,
    // `null`) is quoted, so the file validates as it promises; the others stay plain.
    let maybe_not_a_string =
        name.starts_with(|c: char| c.is_ascii_digit()) || ["null", "true", "false"].contains(&name);
    let name_field = if maybe_not_a_string {
        format!("\"{name}\"")
    } else {
        name.to_owned()
    };
    let skill = format!(
        "---\nname: {name_field}\ndescription: Replace with what this skill does, in one sentence. Use when the user asks for that task.\n---\n{body}"
    );
    files.insert(0, (dir.join(crate::SKILL_FILE), skill));
    let failed = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ScaffoldError::Write { path, source }
    };
    if !parent.as_os_str().is_empty() {
        std::fs::create_dir_all(parent).map_err(failed(parent))?;
    }
    // Made here or not at all: anything at `dir` now (a folder, a link made since the check
    // above) is refused, and nothing is written through it.
    std::fs::create_dir(&dir).map_err(|source| match source.kind() {
        std::io::ErrorKind::AlreadyExists => ScaffoldError::Exists(dir.clone()),
        _ => failed(&dir)(source),
    })?;
    let mut written = Vec::new();
    for (path, text) in files {
        match write_new(&path, &text) {
            Ok(()) => written.push(path),
            Err(source) => {
                // Whole or nothing: a skill half written would validate as something else,
                // and a second `new` would refuse its folder.
                if let Err(e) = std::fs::remove_dir_all(&dir) {
                    tracing::warn!(dir = %dir.display(), error = %e, "cannot remove a half-written skill");
                }
                return Err(failed(&path)(source));
            }
        }
    }
    Ok(written)
}

/// Writes a new file (never through a link, never over a file), making its folders.
fn write_new(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if path.extension().is_some_and(|e| e == "sh") {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o755);
    }
    let mut file = options.open(path)?;
    file.write_all(text.as_bytes())?;
    #[cfg(unix)]
    if path.extension().is_some_and(|e| e == "sh") {
        // The mode given at creation is cut by the umask; an example script is executable.
        use std::os::unix::fs::PermissionsExt as _;
        file.set_permissions(std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}
