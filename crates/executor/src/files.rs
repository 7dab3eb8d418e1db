//! File access inside an active skill: `skills_read` and the containment rules every path
//! a model gives must pass (relative, no `..`, resolved inside the skill folder). Scripts
//! are run, never read.

use std::path::{Component, Path, PathBuf};
use std::time::Instant;

use base64::Engine as _;
use skills_storage::{read_bounded, ReadError};

use crate::audit::AuditKind;
use crate::stack::Active;
use crate::{Encoding, ExecError, FileContent, Session};

/// The components of a path relative to a skill folder, or why it is refused.
pub(crate) fn relative_parts(path: &str) -> Result<Vec<&str>, String> {
    if path.is_empty() {
        return Err("the path is empty".into());
    }
    if path.contains('\0') {
        return Err("the path holds a NUL byte".into());
    }
    let p = Path::new(path);
    if p.is_absolute() || path.starts_with('/') || path.starts_with('\\') {
        return Err("absolute paths are refused: give a path relative to the skill folder".into());
    }
    let mut parts = Vec::new();
    for comp in p.components() {
        match comp {
            Component::Normal(s) => parts.push(s.to_str().ok_or("the path is not UTF-8")?),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err("`..` is refused: paths stay inside the skill folder".into())
            }
            _ => return Err("absolute paths are refused".into()),
        }
    }
    if parts.is_empty() {
        return Err("the path names no file".into());
    }
    Ok(parts)
}

/// Joins `parts` to `dir` and checks that the canonical path stays inside `dir`.
pub(crate) fn inside(dir: &Path, parts: &[&str], shown: &str) -> Result<PathBuf, ExecError> {
    let invalid = |reason: &str| ExecError::InvalidPath {
        path: shown.to_owned(),
        reason: reason.to_owned(),
    };
    let joined: PathBuf = parts.iter().fold(dir.to_path_buf(), |p, part| p.join(part));
    let canonical_dir =
        std::fs::canonicalize(dir).map_err(|_| invalid("the skill folder is gone"))?;
    let canonical =
        std::fs::canonicalize(&joined).map_err(|_| invalid("no such file in the skill"))?;
    if !canonical.starts_with(&canonical_dir) {
        return Err(invalid(
            "it resolves outside the skill folder (a link that escapes is refused)",
        ));
    }
    Ok(canonical)
}

impl Session {
    /// `skills_read`: a file of an active skill (a reference, an asset, its `SKILL.md`),
    /// as text or base64. Files under `scripts/` are refused: scripts are run, not read.
    pub fn read(&self, skill: Option<&str>, path: &str) -> Result<FileContent, ExecError> {
        let started = Instant::now();
        let target = self.target(skill);
        let result = match &target {
            Ok(a) => self.read_in(a, path),
            Err(e) => Err(ExecError::NotActive(e.to_string())),
        };
        let kind = match &result {
            Err(ExecError::ScriptNotReadable { .. }) => AuditKind::ScriptReadBlocked,
            _ => AuditKind::SkillFileRead,
        };
        let mut e = self.event(kind);
        e.tool_name = Some("skills_read".to_owned());
        e.path = Some(path.to_owned());
        e.duration_ms = Some(crate::run::elapsed_ms(started));
        // The skill read from, also when the read is refused.
        e.skill_name = target
            .as_ref()
            .ok()
            .map(|a| a.skill.record.name.to_string())
            .or(skill.map(str::to_owned));
        if let Err(err) = &result {
            e.error = Some(err.to_string());
        }
        self.emit(&e)?;
        result
    }

    fn read_in(&self, a: &Active, path: &str) -> Result<FileContent, ExecError> {
        let invalid = |reason: String| ExecError::InvalidPath {
            path: path.to_owned(),
            reason,
        };
        let parts = relative_parts(path).map_err(invalid)?;
        let script = |p: &Path| {
            std::fs::canonicalize(a.rules.dir.join("scripts")).is_ok_and(|s| p.starts_with(s))
        };
        if parts[0] == "scripts" {
            return Err(ExecError::ScriptNotReadable {
                skill: a.skill.record.name.to_string(),
                path: path.to_owned(),
            });
        }
        if self.exec.policy.narrow_reads
            && !(parts.len() == 2 && ["references", "assets"].contains(&parts[0]))
        {
            return Err(invalid(
                "only files directly under references/ and assets/ can be read".into(),
            ));
        }
        let file = inside(&a.rules.dir, &parts, path)?;
        // A link elsewhere in the skill that resolves into scripts/ is a script too.
        if script(&file) {
            return Err(ExecError::ScriptNotReadable {
                skill: a.skill.record.name.to_string(),
                path: path.to_owned(),
            });
        }
        let limit = self.exec.policy.read_limit;
        let bytes = match read_bounded(&file, limit) {
            Ok(b) => b,
            Err(ReadError::TooLarge { size, .. }) => {
                return Err(ExecError::FileTooLarge {
                    path: path.to_owned(),
                    size,
                    limit,
                })
            }
            Err(other) => return Err(invalid(other.to_string())),
        };
        let size = bytes.len();
        Ok(match String::from_utf8(bytes) {
            Ok(content) => FileContent {
                path: path.to_owned(),
                encoding: Encoding::Text,
                size,
                content,
            },
            Err(e) => FileContent {
                path: path.to_owned(),
                encoding: Encoding::Base64,
                size,
                content: base64::engine::general_purpose::STANDARD.encode(e.as_bytes()),
            },
        })
    }
}
