//! Stage two of progressive disclosure: a skill's body, its files and a digest, read on
//! demand and cached in the snapshot for its generation.

use std::path::Path;
use std::sync::Arc;

use sha2::{Digest, Sha256};
use skills_model::{Skill, SkillFile};
use skills_parser::{ParseInput, SkillParser};
use skills_storage::read_bounded;

use crate::{IndexError, Snapshot};

/// The folders whose files a loaded skill lists.
const RESOURCE_DIRS: [&str; 3] = ["scripts", "references", "assets"];
/// At most this many files are listed per skill.
const MAX_FILES: usize = 10_000;
/// Listing stops this deep below a resource folder.
const MAX_FILE_DEPTH: usize = 8;

pub(crate) fn load(snapshot: &Snapshot, name: &str, limit: u64) -> Result<Arc<Skill>, IndexError> {
    let Some(i) = snapshot.index_of(name) else {
        // A qualified name is compared with qualified names, a bare one with bare names.
        let suggestion = if name.contains(':') {
            let qualified: Vec<String> = snapshot
                .records()
                .iter()
                .map(|r| r.qualified_name())
                .collect();
            skills_model::closest_name(name, qualified.iter().map(String::as_str))
        } else {
            skills_model::closest_name(name, snapshot.skills().map(|r| r.name.as_str()))
        };
        return Err(IndexError::NotFound {
            name: name.into(),
            suggestion,
        });
    };
    if let Some(skill) = snapshot.bodies[i].get() {
        return Ok(Arc::clone(skill));
    }
    let record = Arc::clone(&snapshot.records()[i]);
    let err = |message: String| IndexError::Load {
        name: name.into(),
        message,
    };
    let dir = record.dir().to_path_buf();
    // A skill of a root that is not on disk is read through its source.
    let source = snapshot
        .sources
        .iter()
        .find_map(|(root, source)| Some((dir.strip_prefix(root).ok()?, source)));
    let bytes = match source {
        Some((rel, source)) => {
            let rel = rel.to_string_lossy().replace('\\', "/");
            source.read(&format!("{rel}/{}", skills_storage::SKILL_FILE), limit)
        }
        None => read_bounded(&record.path, limit),
    }
    .map_err(|e| err(e.to_string()))?;
    let dir_name = crate::dir_name(&dir);
    // The file may have changed since the snapshot was built: take the body from this read.
    let parsed = SkillParser::default().parse(&ParseInput::new(&bytes, &dir_name));
    // A file that broke after its last good version was indexed has no instructions to
    // serve: fail loudly rather than hand the model an empty body.
    if parsed.lenient_name().as_ref() != Some(&record.name) {
        return Err(err(
            "SKILL.md no longer parses as this skill (see its diagnostics); the last good metadata stays indexed, but its instructions cannot be loaded until the file is fixed".into(),
        ));
    }
    let body = parsed.body(&bytes).to_owned();
    let digest = format!("sha256:{:x}", Sha256::digest(&bytes));
    // One version: the record (and so the rules a session enforces) comes from the same
    // bytes as the body, never from the snapshot's older reading of the file.
    let record = {
        let mut frontmatter = parsed.frontmatter;
        let description = frontmatter.description.take().unwrap_or_default();
        frontmatter.name = None;
        Arc::new(skills_model::SkillRecord {
            description: description.into(),
            frontmatter: Arc::new(frontmatter),
            body_offset: parsed.body_offset,
            diagnostics: parsed.diagnostics.into(),
            ..(*record).clone()
        })
    };
    let mut files = Vec::new();
    match source {
        Some((rel, source)) => {
            let rel = rel.to_string_lossy().replace('\\', "/");
            files.extend(
                source
                    .files(&rel)
                    .into_iter()
                    .filter(|(p, _)| {
                        RESOURCE_DIRS
                            .iter()
                            .any(|d| p.starts_with(&format!("{d}/")))
                    })
                    .map(|(path, size)| SkillFile { path, size }),
            );
        }
        None => {
            for sub in RESOURCE_DIRS {
                // A resource folder that is a link could list files outside the skill.
                let is_link = std::fs::symlink_metadata(dir.join(sub))
                    .is_ok_and(|m| m.file_type().is_symlink());
                if !is_link {
                    list_files(&dir, Path::new(sub), 0, &mut files);
                }
            }
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let skill = Arc::new(Skill {
        record,
        body,
        files,
        digest,
    });
    // Another thread may have won the race; either value is the same file's content.
    Ok(Arc::clone(snapshot.bodies[i].get_or_init(|| skill)))
}

fn list_files(base: &Path, rel: &Path, depth: usize, out: &mut Vec<SkillFile>) {
    if depth > MAX_FILE_DEPTH || out.len() >= MAX_FILES {
        return;
    }
    let Ok(entries) = std::fs::read_dir(base.join(rel)) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        if out.len() >= MAX_FILES {
            return;
        }
        let Ok(ft) = entry.file_type() else { continue };
        let path = rel.join(entry.file_name());
        if ft.is_dir() {
            list_files(base, &path, depth + 1, out);
        } else if let Ok(meta) = std::fs::metadata(entry.path()) {
            // Links to files are listed; links to folders are not followed.
            if meta.is_file() {
                let path = path.to_string_lossy().replace('\\', "/");
                out.push(SkillFile {
                    path,
                    size: meta.len(),
                });
            }
        }
    }
}
