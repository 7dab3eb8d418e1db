//! File access inside an active skill: `skills_read` and the containment rules every path
//! a model gives must pass (relative, no `..`, resolved inside the skill folder). Scripts
//! are run, never read.

use std::path::{Component, Path, PathBuf};
use std::time::Instant;

use std::io::Read as _;

use base64::Engine as _;

use crate::audit::AuditKind;
use crate::stack::Active;
use crate::{Encoding, ExecError, FileContent, Session};
use skills_model::SkillFile;
use skills_storage::ReadError;

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

/// The skill folder a read is beneath.
#[derive(Clone, Copy)]
enum Folder<'a> {
    /// The folder by its path, resolved now (a skill read without being active).
    AsNow(&'a Path),
    /// The folder's real path resolved when its skill was loaded: what is opened must
    /// lie beneath it, so a folder since replaced by a link elsewhere serves nothing.
    Pinned(&'a Path),
}

/// Whether a path's first folder is one whose files are served to read (beside
/// `SKILL.md`): `references/` and `assets/`, never `scripts/`.
fn served_folder(parts: &[&str]) -> bool {
    parts.len() > 1 && matches!(parts[0], "references" | "assets")
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
struct Served {
    content: FileContent,
    skill_md: bool,
}

/// What [`Session::serve`] reads within: the skill folder as it resolved at the load (an
/// active skill's), or as it resolves now (`None`); and the identities of the skill's
/// scripts, none of which is served by any name.
#[derive(Clone, Copy)]
struct Within<'a> {
    folder: Option<&'a Path>,
    scripts: &'a [(u64, u64)],
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

/// Why a read beneath a skill folder failed.
enum BeneathError {
    /// The file is over the limit (its size).
    TooLarge(u64),
    /// Refused, with the reason for the model.
    Refused(String),
}

/// Opens `parts` beneath `dir` without ever leaving it on the way (on Linux `openat2`
/// with `RESOLVE_BENEATH`: the kernel refuses any `..` or link that would climb out,
/// atomically, so a file swapped for a link mid-read cannot serve an outside file), checks
/// that what was opened is a regular file inside the folder, and reads it with a bound.
/// Returns the opened file's real path and its bytes.
fn read_beneath(dir: &Folder<'_>, parts: &[&str], limit: u64) -> Result<Beneath, BeneathError> {
    let (real, file, meta) = match dir {
        Folder::AsNow(dir) => open_checked(dir, parts, limit)?,
        Folder::Pinned(real_dir) => open_checked_in(real_dir, parts, limit)?,
    };
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    (&file)
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| BeneathError::Refused(format!("cannot read it: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(BeneathError::TooLarge(bytes.len() as u64));
    }
    Ok(Beneath {
        id: crate::resolve::id_of(&meta),
        real,
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

/// What [`read_beneath`] opens before it reads: the file beneath `dir`, a regular file
/// within `limit`, resolving inside the folder; with its real path and metadata.
fn open_checked(
    dir: &Path,
    parts: &[&str],
    limit: u64,
) -> Result<(PathBuf, std::fs::File, std::fs::Metadata), BeneathError> {
    let canonical_dir = std::fs::canonicalize(dir)
        .map_err(|_| BeneathError::Refused("the skill folder is gone".into()))?;
    open_checked_in(&canonical_dir, parts, limit)
}

/// [`open_checked`] beneath a folder given by its real path (one lookup for many files).
fn open_checked_in(
    canonical_dir: &Path,
    parts: &[&str],
    limit: u64,
) -> Result<(PathBuf, std::fs::File, std::fs::Metadata), BeneathError> {
    let refused = |reason: &str| BeneathError::Refused(reason.to_owned());
    let file = open_beneath(canonical_dir, parts)?;
    let meta = file
        .metadata()
        .map_err(|e| BeneathError::Refused(format!("cannot read it: {e}")))?;
    if meta.is_dir() {
        return Err(refused("it is a directory, not a file"));
    }
    if !meta.is_file() {
        return Err(refused("it is not a regular file"));
    }
    if meta.len() > limit {
        return Err(BeneathError::TooLarge(meta.len()));
    }
    let real = opened_path(&file, canonical_dir, parts);
    if !real.starts_with(canonical_dir) {
        return Err(refused(
            "it resolves outside the skill folder (a link that escapes is refused)",
        ));
    }
    Ok((real, file, meta))
}

#[cfg(target_os = "linux")]
fn open_beneath(dir: &Path, parts: &[&str]) -> Result<std::fs::File, BeneathError> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    let refused = |e: rustix::io::Errno| {
        BeneathError::Refused(match e {
            rustix::io::Errno::XDEV => {
                "it resolves outside the skill folder (a link that escapes is refused)".into()
            }
            rustix::io::Errno::NOENT => "no such file in the skill".into(),
            rustix::io::Errno::LOOP => "its links loop".into(),
            other => format!("cannot open it: {other}"),
        })
    };
    let dirfd = rustix::fs::open(
        dir,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|_| BeneathError::Refused("the skill folder is gone".into()))?;
    let rel = parts.join("/");
    // Non-blocking: a FIFO planted in the skill cannot hang the read.
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    match rustix::fs::openat2(&dirfd, rel.as_str(), flags, Mode::empty(), resolve) {
        Ok(fd) => Ok(std::fs::File::from(fd)),
        // Kernels before 5.6 have no openat2: open by the checked name, and let the check
        // of what was opened (its real path) decide.
        Err(rustix::io::Errno::NOSYS) => {
            let path =
                inside(dir, parts, &rel).map_err(|e| BeneathError::Refused(e.to_string()))?;
            open_plain(&path)
        }
        Err(e) => Err(refused(e)),
    }
}

#[cfg(not(target_os = "linux"))]
fn open_beneath(dir: &Path, parts: &[&str]) -> Result<std::fs::File, BeneathError> {
    let rel = parts.join("/");
    let path = inside(dir, parts, &rel).map_err(|e| BeneathError::Refused(e.to_string()))?;
    open_plain(&path)
}

fn open_plain(path: &Path) -> Result<std::fs::File, BeneathError> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc_nonblock());
    }
    options
        .open(path)
        .map_err(|e| BeneathError::Refused(format!("cannot open it: {e}")))
}

#[cfg(unix)]
fn libc_nonblock() -> i32 {
    rustix::fs::OFlags::NONBLOCK.bits() as i32
}

/// The real path of an open file: on Linux what `/proc/self/fd` says of the descriptor
/// (what was opened, not what the name means now); elsewhere the canonical name.
fn opened_path(file: &std::fs::File, dir: &Path, parts: &[&str]) -> PathBuf {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd as _;
        if let Ok(p) = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())) {
            return p;
        }
    }
    let _ = file;
    let joined: PathBuf = parts.iter().fold(dir.to_path_buf(), |p, part| p.join(part));
    std::fs::canonicalize(&joined).unwrap_or(joined)
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

    /// A file of a visible skill, without activating it (MCP resources): `SKILL.md`,
    /// `references/...` or `assets/...`, with the containment and size rules of
    /// [`read`](Session::read); never a script. Audited as `skill_file_read` with the
    /// `via` the transport names (`resources/read`).
    pub fn read_unloaded(
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
        e.duration_ms = Some(crate::run::elapsed_ms(started));
        if let Err(err) = &result {
            e.error = Some(err.to_string());
        }
        self.emit(&e)?;
        result
    }

    /// The files of `skill` that [`read_unloaded`](Session::read_unloaded) serves beside
    /// its `SKILL.md`, as they are now: under `references/` or `assets/`, regular files
    /// within the read limit, and for a skill on disk resolving inside its folder but not
    /// into its `scripts/`. What a client is offered to read (MCP's `resources/list`), so
    /// that nothing is offered that a read refuses; the read still judges what it opens.
    pub fn servable_files<'s>(&self, skill: &'s skills_model::Skill) -> Vec<&'s SkillFile> {
        let limit = self.exec.policy.read_limit;
        let record = &skill.record;
        let on_disk = self.exec.index.snapshot().place_off_disk(record).is_none();
        let dir = record.dir();
        let scripts = on_disk.then(|| real_scripts(dir)).flatten();
        let script_ids = if on_disk {
            crate::resolve::script_ids(dir, &skill.files)
        } else {
            std::sync::Arc::from([])
        };
        let real_dir = on_disk.then(|| std::fs::canonicalize(dir).ok()).flatten();
        skill
            .files
            .iter()
            .filter(|f| {
                let Ok(parts) = relative_parts(&f.path) else {
                    return false;
                };
                if !served_folder(&parts) {
                    return false;
                }
                if !on_disk {
                    return f.size <= limit;
                }
                // Opened as the read opens it, so the same links and sizes are refused.
                real_dir.as_deref().is_some_and(|real_dir| {
                    open_checked_in(real_dir, &parts, limit).is_ok_and(|(real, _, meta)| {
                        !scripts.as_ref().is_some_and(|s| real.starts_with(s))
                            && !crate::resolve::id_of(&meta)
                                .is_some_and(|id| script_ids.contains(&id))
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
        let parts = relative_parts(path).map_err(invalid)?;
        let allowed = parts == ["SKILL.md"] || served_folder(&parts);
        if parts[0] == "scripts" {
            return Err(ExecError::ScriptNotReadable {
                skill: record.name.to_string(),
                path: path.to_owned(),
            });
        }
        if !allowed {
            return Err(invalid(
                "only SKILL.md and files under references/ and assets/ are served".into(),
            ));
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
    fn serve(
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
        } = read_beneath(&folder, parts, limit).map_err(|e| match e {
            BeneathError::TooLarge(size) => ExecError::FileTooLarge {
                path: path.to_owned(),
                size,
                limit,
            },
            BeneathError::Refused(reason) => ExecError::InvalidPath {
                path: path.to_owned(),
                reason,
            },
        })?;
        if real_scripts(dir).is_some_and(|s| real.starts_with(s))
            || opened.is_some_and(|id| within.scripts.contains(&id))
        {
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
                        .is_some_and(|id| crate::resolve::file_id(&d.join("SKILL.md")) == Some(id))
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
        let parts = relative_parts(path).map_err(invalid)?;
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
        Ok(served.content)
    }
}
