//! Checking one skill directory on disk: read its `SKILL.md` (bounded, regular files only),
//! parse it, and add the diagnostics only the filesystem can give.

use std::path::{Path, PathBuf};

use skills_model::{Diagnostic, Rule};
use skills_parser::{ParseInput, ParsedSkill, SkillParser};
use skills_storage::{read_bounded, Candidate, ReadError};

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

/// Reads and parses one candidate skill directory.
pub fn check_candidate(candidate: &Candidate, parser: &SkillParser, limit: u64) -> SkillReport {
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
    let source = match read_bounded(&file, limit) {
        Ok(bytes) => bytes,
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
    let has_references = dir.join("references").is_dir();
    let parsed = parser.parse(&ParseInput::new(&source, &name).with_references_dir(has_references));
    diagnostics.extend(parsed.diagnostics.iter().cloned());
    SkillReport {
        dir,
        file,
        source,
        parsed: Some(parsed),
        diagnostics,
    }
}
