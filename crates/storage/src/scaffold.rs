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
    let files = contents(name, parts);
    let failed = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ScaffoldError::Write { path, source }
    };
    if !parent.as_os_str().is_empty() {
        std::fs::create_dir_all(parent).map_err(failed(parent))?;
    }
    let mut folder = NewFolder::make(parent, name).map_err(|source| match source.kind() {
        // Made here or not at all: anything at `dir` (a folder, a link made since the check
        // above) is refused, and nothing is written through it.
        std::io::ErrorKind::AlreadyExists => ScaffoldError::Exists(dir.clone()),
        _ => failed(&dir)(source),
    })?;
    let mut written = Vec::new();
    for (rel, text) in files {
        if let Err(source) = folder.write(rel, &text) {
            // Whole or nothing: a skill half written would validate as something else, and
            // a second `new` would refuse its folder. Only what this call made goes.
            if let Err(e) = folder.remove() {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot remove a half-written skill");
            }
            return Err(failed(&dir.join(rel))(source));
        }
        written.push(dir.join(rel));
    }
    Ok(written)
}

/// The files of a new skill `name`d so with `parts`, by path in its folder, `SKILL.md`
/// first.
fn contents(name: &str, parts: ScaffoldParts) -> Vec<(&'static str, String)> {
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
    let mut files: Vec<(&'static str, String)> = Vec::new();
    if parts.scripts || parts.references || parts.assets {
        body.push_str("\n## Files\n\n");
    }
    if parts.scripts {
        body.push_str("- `scripts/example.sh`: run it for the repetitive part of the task.\n");
        files.push((
            "scripts/example.sh",
            "#!/bin/sh\n# Replace with the script this skill runs.\necho \"example\"\n".into(),
        ));
    }
    if parts.references {
        body.push_str(
            "- [references/guide.md](references/guide.md): read it when the task needs the details.\n",
        );
        files.push((
            "references/guide.md",
            format!("# {title}: guide\n\nDetails the agent reads only when it needs them.\n"),
        ));
    }
    if parts.assets {
        body.push_str("- `assets/`: templates and files the output is made from.\n");
        files.push((
            "assets/README.md",
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
    files.insert(0, (crate::SKILL_FILE, skill));
    files
}

/// A skill folder this call made, written and (on failure) removed through handles: the
/// folder it holds is the one it made, whatever links on the way to it point to later
/// (a link in `--path` swapped mid-way must not have it write into, or remove, another
/// folder). Elsewhere than on Unix, by path.
struct NewFolder {
    #[cfg(unix)]
    parent: std::os::fd::OwnedFd,
    #[cfg(unix)]
    dir: std::os::fd::OwnedFd,
    #[cfg(not(unix))]
    dir: PathBuf,
    name: String,
    /// Files made (relative paths), then folders made inside it, in order.
    files: Vec<String>,
    folders: Vec<String>,
}

impl NewFolder {
    /// Makes `parent/name`, which must not exist.
    #[cfg(unix)]
    fn make(parent: &Path, name: &str) -> std::io::Result<NewFolder> {
        use rustix::fs::{mkdirat, open, openat, Mode, OFlags};
        let here = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        // A handle that needs no right to list the parent (a drop folder one may write and
        // enter, not read), as `mkdir` by path needed none.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let handle = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let handle = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let parent = open(here, handle, Mode::empty())?;
        mkdirat(&parent, name, Mode::from_raw_mode(0o777))?;
        let folder = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let dir = openat(&parent, name, folder, Mode::empty())?;
        Ok(NewFolder {
            parent,
            dir,
            name: name.to_owned(),
            files: Vec::new(),
            folders: Vec::new(),
        })
    }

    /// Makes `parent/name`, which must not exist.
    #[cfg(not(unix))]
    fn make(parent: &Path, name: &str) -> std::io::Result<NewFolder> {
        let dir = parent.join(name);
        std::fs::create_dir(&dir)?;
        Ok(NewFolder {
            dir,
            name: name.to_owned(),
            files: Vec::new(),
            folders: Vec::new(),
        })
    }

    /// Writes the new file `rel` (one folder deep at most), never over a file or through a
    /// link; an example script is made executable.
    #[cfg(unix)]
    fn write(&mut self, rel: &str, text: &str) -> std::io::Result<()> {
        use rustix::fs::{fchmod, mkdirat, openat, Mode, OFlags};
        let (sub, file) = rel.rsplit_once('/').unwrap_or(("", rel));
        let sub_dir;
        let at = if sub.is_empty() {
            &self.dir
        } else {
            if !self.folders.iter().any(|f| f == sub) {
                mkdirat(&self.dir, sub, Mode::from_raw_mode(0o777))?;
                self.folders.push(sub.to_owned());
            }
            let folder = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            sub_dir = openat(&self.dir, sub, folder, Mode::empty())?;
            &sub_dir
        };
        let script = file.ends_with(".sh");
        let mode = Mode::from_raw_mode(if script { 0o755 } else { 0o666 });
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = openat(at, file, flags, mode)?;
        self.files.push(rel.to_owned());
        let mut opened = std::fs::File::from(fd);
        std::io::Write::write_all(&mut opened, text.as_bytes())?;
        if script {
            // The mode given at creation is cut by the umask; an example script runs.
            fchmod(&opened, Mode::from_raw_mode(0o755))?;
        }
        Ok(())
    }

    /// Writes the new file `rel`, never over a file.
    #[cfg(not(unix))]
    fn write(&mut self, rel: &str, text: &str) -> std::io::Result<()> {
        let path = self.dir.join(rel);
        if let Some((sub, _)) = rel.rsplit_once('/') {
            if !self.folders.iter().any(|f| f == sub) {
                std::fs::create_dir(self.dir.join(sub))?;
                self.folders.push(sub.to_owned());
            }
        }
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        self.files.push(rel.to_owned());
        std::io::Write::write_all(&mut file, text.as_bytes())
    }

    /// Removes what this call made, and nothing else: its files, its folders once empty,
    /// then the skill folder once empty.
    #[cfg(unix)]
    fn remove(&mut self) -> std::io::Result<()> {
        use rustix::fs::{openat, unlinkat, AtFlags, Mode, OFlags};
        for rel in self.files.drain(..).rev() {
            match rel.rsplit_once('/') {
                None => unlinkat(&self.dir, rel.as_str(), AtFlags::empty())?,
                Some((sub, file)) => {
                    let folder =
                        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                    let at = openat(&self.dir, sub, folder, Mode::empty())?;
                    unlinkat(&at, file, AtFlags::empty())?;
                }
            }
        }
        for sub in self.folders.drain(..).rev() {
            unlinkat(&self.dir, sub.as_str(), AtFlags::REMOVEDIR)?;
        }
        unlinkat(&self.parent, self.name.as_str(), AtFlags::REMOVEDIR)?;
        Ok(())
    }

    /// Removes what this call made, and nothing else.
    #[cfg(not(unix))]
    fn remove(&mut self) -> std::io::Result<()> {
        for rel in self.files.drain(..).rev() {
            std::fs::remove_file(self.dir.join(rel))?;
        }
        for sub in self.folders.drain(..).rev() {
            std::fs::remove_dir(self.dir.join(sub))?;
        }
        let _ = &self.name;
        std::fs::remove_dir(&self.dir)
    }
}

#[cfg(test)]
mod tests {
    use super::NewFolder;

    /// A write that fails leaves nothing this call made, and everything else: the folder
    /// and its files go, a file someone else put in the parent stays.
    #[test]
    fn a_new_folder_that_fails_removes_what_it_made() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("other.txt"), "not ours").unwrap();
        let mut folder = NewFolder::make(tmp.path(), "fresh").unwrap();
        folder.write("SKILL.md", "---\n").unwrap();
        folder.write("scripts/example.sh", "#!/bin/sh\n").unwrap();
        assert!(
            folder.write("scripts/example.sh", "again").is_err(),
            "never over a file"
        );
        folder.remove().unwrap();
        assert!(std::fs::symlink_metadata(tmp.path().join("fresh")).is_err());
        assert!(tmp.path().join("other.txt").is_file());
        assert!(NewFolder::make(tmp.path(), "other.txt").is_err());
    }
}
