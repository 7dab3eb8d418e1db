//! File access inside an active skill: `skills_read` and the containment rules every path
//! a model gives must pass (relative, no `..`, resolved inside the skill folder). Scripts
//! are run, never read.

use std::path::{Path, PathBuf};
use std::time::Instant;

use base64::Engine as _;

use crate::active::Active;
use crate::audit::AuditKind;
use crate::state::SessionState;
use crate::{Encoding, ExecError, FileContent};
use skills_model::{RelPath, SkillFile};
use skills_storage::{BeneathError, ReadError, SkillDir};

/// A path relative to a skill folder (the model's one rule, [`RelPath`]), or why it is
/// refused.
pub(crate) fn relative_parts(path: &str) -> Result<RelPath<'_>, String> {
    RelPath::file(path).map_err(|e| e.to_string())
}

/// The skill folder a read is beneath.
#[derive(Clone, Copy)]
enum Folder<'a> {
    /// The folder by its path, resolved now (a skill read without being active).
    AsNow(&'a Path),
    /// The folder's real path resolved when its skill was loaded: what is opened must
    /// lie beneath it, so a folder since replaced by a link elsewhere serves nothing.
    Pinned(&'a Path),
}

/// Whether a file of a skill is served to read: any file the one listing rule names
/// ([`skills_storage::listed_path`]: never a dot-file, a dot-folder's file or
/// `node_modules`) outside `scripts/` (scripts are run, not read). `SKILL.md`, a
/// `LICENSE.txt` and `templates/...` are served as `references/` and `assets/` are.
pub(crate) fn served_file(parts: &[&str]) -> bool {
    parts.first() != Some(&"scripts") && skills_storage::listed_path(parts)
}

/// Why a path the listing rule does not name is refused.
const NOT_LISTED: &str =
    "dot-files, dot-folders and node_modules are never served (nor anything deeper than a listing goes)";

/// Joins `parts` to `dir` and checks that the canonical path stays inside `dir`.
pub(crate) fn inside(dir: &Path, parts: &[&str], shown: &str) -> Result<PathBuf, ExecError> {
    skills_storage::resolve_inside(dir, parts).map_err(|reason| ExecError::InvalidPath {
        path: shown.to_owned(),
        reason: reason.to_owned(),
    })
}

/// A file's bytes as text, or base64 when they are not UTF-8.
fn content(path: &str, bytes: Vec<u8>) -> FileContent {
    let size = bytes.len();
    match String::from_utf8(bytes) {
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
    }
}

/// A file served, and whether what was opened is the skill's `SKILL.md`.
pub(crate) struct Served {
    pub(crate) content: FileContent,
    pub(crate) skill_md: bool,
}

/// What `SessionState::serve` reads within: the skill folder as it resolved at the load (an
/// active skill's), or as it resolves now (`None`); and the identities of the skill's
/// scripts, none of which is served by any name.
#[derive(Clone, Copy)]
pub(crate) struct Within<'a> {
    pub(crate) folder: Option<&'a Path>,
    pub(crate) scripts: &'a [(u64, u64)],
    /// Whether the skill's scripts are served too (MCP's skills extension serving a
    /// trusted skill whole, `--serve-scripts`); `Withheld` everywhere else.
    pub(crate) serving: crate::ScriptServing,
}

/// The digest of the bytes a `FileContent` holds (as a skill file's digest is made).
fn served_digest(served: &FileContent) -> Option<String> {
    match served.encoding {
        Encoding::Text => Some(skills_index::skill_digest(served.content.as_bytes())),
        Encoding::Base64 => base64::engine::general_purpose::STANDARD
            .decode(&served.content)
            .ok()
            .map(|bytes| skills_index::skill_digest(&bytes)),
    }
}

/// Reads `parts` beneath `dir` through its [`SkillDir`] (race-free: nothing outside the
/// folder is opened, a FIFO cannot hang the open), a regular file within `limit`.
/// Returns the opened file's real path and identity, and its bytes.
fn read_beneath(dir: &Folder<'_>, parts: &[&str], limit: u64) -> Result<Beneath, BeneathError> {
    let handle = match dir {
        Folder::AsNow(dir) => SkillDir::resolve(dir)?,
        Folder::Pinned(real_dir) => SkillDir::pinned(real_dir),
    };
    let opened = handle.open(parts, limit)?;
    let bytes = opened.read_bounded(limit)?;
    Ok(Beneath {
        id: opened.identity(),
        real: opened.real_path().to_path_buf(),
        bytes,
    })
}

/// What [`read_beneath`] read: the opened file's real path and identity, and its bytes.
struct Beneath {
    real: PathBuf,
    id: Option<(u64, u64)>,
    bytes: Vec<u8>,
}

/// The real path of a skill folder's `scripts/`: whatever opens beneath it is a script,
/// by whichever name it was reached.
fn real_scripts(dir: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(dir.join("scripts")).ok()
}

/// A read refused beneath a skill folder, as the executor says it of `path`.
fn beneath_error(path: &str, limit: u64, e: BeneathError) -> ExecError {
    match e {
        BeneathError::TooLarge(size) => ExecError::FileTooLarge {
            path: path.to_owned(),
            size,
            limit,
        },
        BeneathError::Refused(reason) => ExecError::InvalidPath {
            path: path.to_owned(),
            reason,
        },
        other => ExecError::InvalidPath {
            path: path.to_owned(),
            reason: other.to_string(),
        },
    }
}

impl SessionState {
    /// The work of [`Session::read`](crate::Session::read).
    pub(crate) fn read(&self, skill: Option<&str>, path: &str) -> Result<FileContent, ExecError> {
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
        e.duration_ms = Some(crate::timing::elapsed_ms(started));
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
        result.map(|c| self.exec.policy.secrets.redact_content(c))
    }

    /// The work of [`Session::read_unloaded`](crate::Session::read_unloaded).
    pub(crate) fn read_unloaded(
        &self,
        skill: &str,
        path: &str,
        via: &str,
    ) -> Result<FileContent, ExecError> {
        let started = Instant::now();
        let result = self.read_unloaded_in(skill, path);
        let kind = match &result {
            Err(ExecError::ScriptNotReadable { .. }) => AuditKind::ScriptReadBlocked,
            _ => AuditKind::SkillFileRead,
        };
        let mut e = self.event(kind);
        e.tool_name = Some(via.to_owned());
        e.path = Some(path.to_owned());
        e.skill_name = Some(skill.to_owned());
        e.duration_ms = Some(crate::timing::elapsed_ms(started));
        if let Err(err) = &result {
            e.error = Some(err.to_string());
        }
        self.emit(&e)?;
        result.map(|c| self.exec.policy.secrets.redact_content(c))
    }

    /// Whether MCP's skills extension serves `record`'s skill whole, scripts included: the
    /// host said `--serve-scripts` and trusts the skill to run scripts.
    pub(crate) fn script_serving(
        &self,
        record: &skills_model::SkillRecord,
    ) -> crate::ScriptServing {
        match self.exec.policy.script_serving {
            crate::ScriptServing::TrustedLayers if self.exec.trusts(record) => {
                crate::ScriptServing::TrustedLayers
            }
            _ => crate::ScriptServing::Withheld,
        }
    }

    /// The work of [`Session::servable_files`](crate::Session::servable_files): the
    /// skill's files by the one listing rule (its source's), those a read serves.
    pub(crate) fn servable_files(&self, skill: &skills_model::Skill) -> Vec<SkillFile> {
        let limit = self.exec.policy.read_limit;
        let record = &skill.record;
        let snapshot = self.exec.index.snapshot();
        let Some(place) = snapshot.place_of(record) else {
            return Vec::new();
        };
        let listed = place.source.files(&place.dir);
        let on_disk = snapshot.place_off_disk(record).is_none();
        let dir = record.dir();
        let scripts = on_disk.then(|| real_scripts(dir)).flatten();
        let script_ids = if on_disk {
            crate::resolve::script_ids(dir, &skill.files)
        } else {
            std::sync::Arc::from([])
        };
        let real_dir = on_disk.then(|| std::fs::canonicalize(dir).ok()).flatten();
        listed
            .into_iter()
            .map(|(path, size)| SkillFile { path, size })
            .filter(|f| {
                let Ok(rel) = relative_parts(&f.path) else {
                    return false;
                };
                let parts = rel.parts();
                if parts == ["SKILL.md"] || !served_file(&parts) {
                    return false;
                }
                if !on_disk {
                    return f.size <= limit;
                }
                // Opened as the read opens it, so the same links and sizes are refused.
                real_dir.as_deref().is_some_and(|real_dir| {
                    SkillDir::pinned(real_dir)
                        .open(&parts, limit)
                        .is_ok_and(|opened| {
                            !scripts
                                .as_ref()
                                .is_some_and(|s| opened.real_path().starts_with(s))
                                && !opened.identity().is_some_and(|id| script_ids.contains(&id))
                        })
                })
            })
            .collect()
    }

    fn read_unloaded_in(&self, skill: &str, path: &str) -> Result<FileContent, ExecError> {
        let snapshot = self.exec.index.snapshot();
        let record = snapshot
            .get_for(skill, &|r| self.can_see(r))
            .ok_or_else(|| ExecError::not_found(skill))?;
        let invalid = |reason: String| ExecError::InvalidPath {
            path: path.to_owned(),
            reason,
        };
        let rel = relative_parts(path).map_err(invalid)?;
        let parts = rel.parts();
        let serving = self.script_serving(record);
        let whole = serving == crate::ScriptServing::TrustedLayers;
        if parts[0] == "scripts" && !whole {
            return Err(ExecError::ScriptNotReadable {
                skill: record.name.to_string(),
                path: path.to_owned(),
            });
        }
        if !skills_storage::listed_path(&parts) {
            return Err(invalid(NOT_LISTED.into()));
        }
        // Served only if the file as it now reads still admits this session: the snapshot
        // may hold an older version (before a reload, or with no watcher). Judged before
        // and after the read, the same version both times, and `SKILL.md` served only as
        // the bytes judged: a rewrite between the judgement and the read (another tenant's
        // scope, say) is not served.
        let judged = self.load_resolved(record)?;
        let scripts = crate::resolve::script_ids(record.dir(), &judged.files);
        let served = self.serve(
            record,
            &parts,
            path,
            Within {
                folder: None,
                scripts: &scripts,
                serving,
            },
        )?;
        let changed = || ExecError::ChangedDuringRead {
            skill: record.qualified_name(),
        };
        if served.skill_md && served_digest(&served.content).as_deref() != Some(&judged.digest) {
            return Err(changed());
        }
        if self.load_resolved(record)?.digest != judged.digest {
            return Err(changed());
        }
        Ok(served.content)
    }

    /// Reads `parts` of a skill and serves it. A skill on disk is read beneath its folder
    /// (race-free, bounded), and refused when what was opened lies under the skill's
    /// `scripts/` (a link elsewhere in the skill that resolves into `scripts/` is a script
    /// too) or is one of its scripts by identity (a hard link to one is one): what was
    /// opened decides. A skill of another source is read through it.
    pub(crate) fn serve(
        &self,
        record: &skills_model::SkillRecord,
        parts: &[&str],
        path: &str,
        within: Within<'_>,
    ) -> Result<Served, ExecError> {
        let pinned = within.folder;
        let limit = self.exec.policy.read_limit;
        let skill = record.name.as_str();
        if let Some(place) = self.exec.index.snapshot().place_off_disk(record) {
            let bytes = place
                .source
                .read(&place.file(&parts.join("/")), limit)
                .map_err(|e| match e {
                    ReadError::TooLarge { size, limit } => ExecError::FileTooLarge {
                        path: path.to_owned(),
                        size,
                        limit,
                    },
                    other => ExecError::InvalidPath {
                        path: path.to_owned(),
                        reason: other.to_string(),
                    },
                })?;
            return Ok(Served {
                content: content(path, bytes),
                skill_md: parts == ["SKILL.md"],
            });
        }
        let dir = record.dir();
        let folder = pinned.map_or(Folder::AsNow(dir), Folder::Pinned);
        let Beneath {
            real,
            id: opened,
            bytes,
        } = read_beneath(&folder, parts, limit).map_err(|e| beneath_error(path, limit, e))?;
        let script = real_scripts(dir).is_some_and(|s| real.starts_with(s))
            || opened.is_some_and(|id| within.scripts.contains(&id));
        if script && within.serving == crate::ScriptServing::Withheld {
            return Err(ExecError::ScriptNotReadable {
                skill: skill.to_owned(),
                path: path.to_owned(),
            });
        }
        // What was opened decides whether it is the skill's `SKILL.md`, by whichever name:
        // a link under `references/` (its real path), one renamed over since it was opened
        // (the kernel then names it "... (deleted)"), a hard link (the same file).
        let canonical = pinned.map_or_else(
            || std::fs::canonicalize(dir).ok(),
            |p| Some(p.to_path_buf()),
        );
        let skill_md = parts == ["SKILL.md"]
            || canonical.is_some_and(|d| {
                let named = real.parent() == Some(d.as_path())
                    && real
                        .file_name()
                        .is_some_and(|n| n == "SKILL.md" || n == "SKILL.md (deleted)");
                named
                    || opened
                        .is_some_and(|id| skills_storage::file_id(&d.join("SKILL.md")) == Some(id))
            });
        Ok(Served {
            content: content(path, bytes),
            skill_md,
        })
    }

    fn read_in(&self, a: &Active, path: &str) -> Result<FileContent, ExecError> {
        let invalid = |reason: String| ExecError::InvalidPath {
            path: path.to_owned(),
            reason,
        };
        let rel = relative_parts(path).map_err(invalid)?;
        let parts = rel.parts();
        if parts[0] == "scripts" {
            return Err(ExecError::ScriptNotReadable {
                skill: a.skill.record.name.to_string(),
                path: path.to_owned(),
            });
        }
        if !served_file(&parts) {
            return Err(invalid(NOT_LISTED.into()));
        }
        if self.exec.policy.narrow_reads
            && !(parts.len() == 2 && ["references", "assets"].contains(&parts[0]))
        {
            return Err(invalid(
                "only files directly under references/ and assets/ can be read".into(),
            ));
        }
        let held = held_entry(a, &parts, path)?;
        // Beneath the folder as it was at the load: one replaced since by a link
        // elsewhere serves nothing (its rules are the loaded version's). What was opened is
        // refused when it is one of the scripts pinned at load, by any name (a hard link
        // elsewhere in the skill).
        let served = self.serve(
            &a.skill.record,
            &parts,
            path,
            Within {
                folder: a.rules.canonical_dir.as_deref(),
                scripts: &a.rules.script_files,
                serving: crate::ScriptServing::Withheld,
            },
        )?;
        // Its `SKILL.md` as loaded: the version whose rules are in force. Edited since, it
        // is refused rather than served beside rules it does not state (whether it is the
        // `SKILL.md` is asked of what was opened, by `serve`).
        if served.skill_md && served_digest(&served.content).as_deref() != Some(&a.skill.digest) {
            return Err(ExecError::SkillChanged {
                skill: a.skill.record.name.to_string(),
            });
        }
        // Its files as the entry held at the load stated them (the source checked them
        // against the entry it holds now, which a server may have replaced since).
        if let Some(file) = held {
            let digest = served_digest(&served.content);
            if digest.as_deref() != Some(file.digest.as_str())
                || served.content.size as u64 != file.size
            {
                return Err(ExecError::EntryChanged {
                    skill: a.skill.record.name.to_string(),
                    path: path.to_owned(),
                });
            }
        }
        Ok(served.content)
    }
}

/// The file of an active skill's held entry that `parts` names (`None` for a skill that
/// holds no entry), or the refusal of a file that entry does not list: one a server's
/// newer entry lists is not this version's.
fn held_entry<'a>(
    a: &'a Active,
    parts: &[&str],
    path: &str,
) -> Result<Option<&'a skills_storage::HeldFile>, ExecError> {
    let Some(files) = &a.held else {
        return Ok(None);
    };
    let rel = parts.join("/");
    match files.iter().find(|f| f.path == rel) {
        Some(file) => Ok(Some(file)),
        None => Err(ExecError::InvalidPath {
            path: path.to_owned(),
            reason: "the entry held since the skill was loaded does not list it (if its server lists it now, load the skill again)".into(),
        }),
    }
}
