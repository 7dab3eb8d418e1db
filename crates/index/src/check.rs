//! Checking one skill directory on disk: read its `SKILL.md` (bounded, regular files only),
//! parse it, and add the diagnostics only the filesystem can give.

use std::path::{Path, PathBuf};

use skills_model::{Diagnostic, Rule};
use skills_parser::{ParseInput, ParsedSkill, SkillParser};
use skills_storage::{read_bounded, read_prefix, Candidate, ReadError};

/// The largest `SKILL.md` read by default: 1 MiB.
pub const DEFAULT_SKILL_FILE_LIMIT: u64 = 1 << 20;

/// The outcome of checking one skill directory.
#[derive(Debug, Clone)]
pub struct SkillReport {
    /// The skill directory.
    pub dir: PathBuf,
    /// The file the diagnostics refer to (`SKILL.md`, or the misnamed file).
    pub file: PathBuf,
    /// The file's bytes, when it could be read (for showing the lines diagnostics point at).
    pub source: Vec<u8>,
    /// The parse, when the file could be read.
    pub parsed: Option<ParsedSkill>,
    /// Every diagnostic: file-level ones and the parser's.
    pub diagnostics: Vec<Diagnostic>,
}

impl SkillReport {
    /// Whether no diagnostic is an error.
    pub fn is_valid(&self) -> bool {
        !self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The skill's `name` as written, if it could be read.
    pub fn name(&self) -> Option<&str> {
        self.parsed.as_ref()?.frontmatter.name.as_deref()
    }

    /// A report for a path that holds no skill at all.
    pub fn missing(path: &Path, message: impl Into<String>) -> SkillReport {
        SkillReport {
            dir: path.to_path_buf(),
            file: path.to_path_buf(),
            source: Vec::new(),
            parsed: None,
            diagnostics: vec![Diagnostic::error(Rule::FileMissing, message)],
        }
    }
}

/// Reads a frontmatter-sized prefix; if the frontmatter closes inside it, parses it there
/// (returned as the early parse), else reads the whole file.
fn read_metadata(
    file: &Path,
    limit: u64,
    parser: &SkillParser,
) -> Result<(Vec<u8>, Option<skills_parser::ParsedSkill>), ReadError> {
    let mut buf = Vec::new();
    let size = read_prefix(file, METADATA_PREFIX.min(limit), &mut buf)?;
    if size > limit {
        return Err(ReadError::TooLarge { size, limit });
    }
    // The common case: the frontmatter closes inside what was read. Parse it alone, so
    // neither UTF-8 validation nor the delimiter search walks the body.
    if !parser.lints() {
        if let Some(end) = frontmatter_end(&buf) {
            buf.truncate(end);
            let dir_name = file.parent().map(dir_name).unwrap_or_default();
            let parsed = parser.parse(&ParseInput::new(&buf, &dir_name));
            return Ok((buf, Some(parsed)));
        }
    }
    if size <= METADATA_PREFIX && (buf.len() as u64) <= limit {
        return Ok((buf, None));
    }
    // Cut at the last line break: never inside a UTF-8 sequence, never mid-line.
    let cut = buf.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    buf.truncate(cut);
    let dir_name = file.parent().map(dir_name).unwrap_or_default();
    let parsed = parser.parse(&ParseInput::new(&buf, &dir_name));
    let closed = !parsed.diagnostics.iter().any(|d| {
        matches!(
            d.rule,
            Rule::FrontmatterUnclosed | Rule::FrontmatterTooLarge | Rule::FileEncoding
        )
    });
    if closed {
        return Ok((buf, Some(parsed)));
    }
    read_bounded(file, limit).map(|bytes| (bytes, None))
}

/// The end of the frontmatter's closing line in a prefix of the file (the parser's
/// delimiter rule), when the closing line ends inside the prefix with its line break.
fn frontmatter_end(bytes: &[u8]) -> Option<usize> {
    skills_parser::frontmatter_bounds(bytes)
        .filter(|b| b.terminated)
        .map(|b| b.body_offset)
}

/// The name a skill directory is known by: its last component, resolved through `.` and
/// links when the path itself has none.
pub fn dir_name(dir: &Path) -> String {
    let literal = dir.file_name().and_then(|n| n.to_str());
    match literal {
        Some(name) if name != "." && name != ".." => name.to_owned(),
        _ => std::fs::canonicalize(dir)
            .ok()
            .and_then(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_owned))
            .unwrap_or_default(),
    }
}

/// How much of a `SKILL.md` the index reads first: enough for almost every frontmatter.
const METADATA_PREFIX: u64 = 8 * 1024;

/// Reads and parses one candidate skill directory, the whole file.
pub fn check_candidate(candidate: &Candidate, parser: &SkillParser, limit: u64) -> SkillReport {
    check(candidate, parser, limit, false)
}

/// Reads and parses only what the index needs of a skill: its frontmatter. The first 8 KiB
/// are read, cut at their last line break; the whole file (within `limit`) is read only
/// when the frontmatter does not close inside them. The body is not validated (lint rules
/// and an encoding error past the frontmatter are the validator's business).
pub(crate) fn check_metadata(
    candidate: &Candidate,
    parser: &SkillParser,
    limit: u64,
) -> SkillReport {
    check(candidate, parser, limit, true)
}

fn check(
    candidate: &Candidate,
    parser: &SkillParser,
    limit: u64,
    metadata_only: bool,
) -> SkillReport {
    let dir = candidate.dir.clone();
    let mut diagnostics = Vec::new();
    let file = match (&candidate.skill_file, &candidate.misnamed) {
        (Some(file), _) => file.clone(),
        (None, Some(misnamed)) => {
            let found = misnamed
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            diagnostics.push(Diagnostic::error(
                Rule::FileName,
                format!("the skill file is named {found:?}; it must be exactly \"SKILL.md\" (rename it)"),
            ));
            misnamed.clone()
        }
        (None, None) => {
            return SkillReport::missing(&dir, "no SKILL.md in this directory");
        }
    };
    let read = if metadata_only {
        read_metadata(&file, limit, parser)
    } else {
        read_bounded(&file, limit).map(|bytes| (bytes, None))
    };
    let (source, early) = match read {
        Ok(pair) => pair,
        Err(e) => {
            let rule = match &e {
                ReadError::NotFound => Rule::FileMissing,
                ReadError::NotRegular(_) => Rule::FileNotRegular,
                ReadError::TooLarge { .. } => Rule::FileTooLarge,
                _ => Rule::FileUnreadable,
            };
            diagnostics.push(Diagnostic::error(
                rule,
                format!("cannot read {}: {e}", file.display()),
            ));
            return SkillReport {
                dir,
                file,
                source: Vec::new(),
                parsed: None,
                diagnostics,
            };
        }
    };
    let name = dir_name(&dir);
    // Only the lint rules care whether references/ exists: spare the index a stat per skill.
    let has_references = parser.lints() && dir.join("references").is_dir();
    let parsed = match early {
        Some(parsed) => parsed,
        None => parser.parse(&ParseInput::new(&source, &name).with_references_dir(has_references)),
    };
    diagnostics.extend(parsed.diagnostics.iter().cloned());
    SkillReport {
        dir,
        file,
        source,
        parsed: Some(parsed),
        diagnostics,
    }
}

#[cfg(test)]
mod tests {
    use super::frontmatter_end;

    #[test]
    fn finds_the_end_of_the_closing_line_on_bytes() {
        assert_eq!(frontmatter_end(b"---\na: 1\n---\nbody"), Some(13));
        assert_eq!(
            frontmatter_end(b"\xEF\xBB\xBF---\r\na: 1\r\n---\r\nbody"),
            Some(19)
        );
        assert_eq!(frontmatter_end(b"---\na: x---\n--- \n---\n"), Some(21));
        assert_eq!(frontmatter_end(b"---\na: 1\n---"), None);
        assert_eq!(frontmatter_end(b"--- \na: 1\n---\n"), None);
        assert_eq!(frontmatter_end(b"\n---\na: 1\n---\n"), None);
        assert_eq!(frontmatter_end(b"---\na: 1\n"), None);
    }
}
