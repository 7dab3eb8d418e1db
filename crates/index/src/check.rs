//! Checking one skill directory on disk: read its `SKILL.md` (bounded, regular files only),
//! parse it, and add the diagnostics only the filesystem can give.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use skills_model::{Diagnostic, Rule};
use skills_parser::{ParseInput, ParsedSkill, SkillParser};
use skills_storage::{Candidate, FsSource, ReadError, SkillSource, SourceCandidate};

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
    /// The parse, when the file could be read. Its diagnostics are moved into
    /// [`diagnostics`](SkillReport::diagnostics): ask the report whether it is valid.
    pub parsed: Option<ParsedSkill>,
    /// Every diagnostic: file-level ones, then the parser's.
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
/// (returned as the early parse, with no bytes: the index keeps none), else gives the
/// bytes to parse: the prefix, or the whole file.
fn read_metadata(
    at: &At<'_>,
    limit: u64,
    parser: &SkillParser,
) -> Result<(Vec<u8>, Option<skills_parser::ParsedSkill>), ReadError> {
    PREFIX.with(|buf| match buf.try_borrow_mut() {
        Ok(mut buf) => read_metadata_into(at, limit, parser, &mut buf),
        Err(_) => read_metadata_into(at, limit, parser, &mut Vec::new()),
    })
}

thread_local! {
    /// Each reading thread writes the path of every file it reads into one buffer.
    static REL_FILE: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
    /// Each reading thread reads every prefix into one buffer: a buffer a skill, made and
    /// freed, was about a tenth of a build under the system allocator.
    static PREFIX: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Frees this thread's prefix buffer (a scan's scratch), once the scan is over.
pub(crate) fn release_scratch() {
    PREFIX.with(|buf| {
        if let Ok(mut buf) = buf.try_borrow_mut() {
            *buf = Vec::new();
        }
    });
}

/// [`read_metadata`] through `buf`.
fn read_metadata_into(
    at: &At<'_>,
    limit: u64,
    parser: &SkillParser,
    buf: &mut Vec<u8>,
) -> Result<(Vec<u8>, Option<skills_parser::ParsedSkill>), ReadError> {
    buf.clear();
    let size = at
        .source
        .read_prefix(at.rel_file, METADATA_PREFIX.min(limit), buf)?;
    if size > limit {
        return Err(ReadError::TooLarge { size, limit });
    }
    // The common case: the frontmatter closes inside what was read. Parse it alone, so
    // neither UTF-8 validation nor the delimiter search walks the body.
    if !parser.lints() {
        if let Some(end) = frontmatter_end(buf) {
            let parsed = parser.parse(&ParseInput::new(&buf[..end], at.name));
            return Ok((Vec::new(), Some(parsed)));
        }
    }
    if size <= METADATA_PREFIX && (buf.len() as u64) <= limit {
        return Ok((buf.clone(), None));
    }
    // Cut at the last line break: never inside a UTF-8 sequence, never mid-line.
    let cut = buf.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let parsed = parser.parse(&ParseInput::new(&buf[..cut], at.name));
    let closed = !parsed.diagnostics.iter().any(|d| {
        matches!(
            d.rule,
            Rule::FrontmatterUnclosed | Rule::FrontmatterTooLarge | Rule::FileEncoding
        )
    });
    if closed {
        return Ok((Vec::new(), Some(parsed)));
    }
    at.source
        .read(at.rel_file, limit)
        .map(|bytes| (bytes, None))
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
    // Shown lossily where it is not UTF-8 (so a message names the folder, not ""); such a
    // name never equals a skill's name, which is.
    let named = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| literal(n).is_some())
    };
    named(dir)
        .or_else(|| std::fs::canonicalize(dir).ok().as_deref().and_then(named))
        .unwrap_or_default()
}

/// A folder's last component when it names the folder itself (not empty, `.` or `..`).
fn literal(name: &str) -> Option<&str> {
    (!name.is_empty() && name != "." && name != "..").then_some(name)
}

/// How much of a `SKILL.md` the index reads first: enough for almost every frontmatter.
const METADATA_PREFIX: u64 = 8 * 1024;

/// Reads and parses one candidate skill directory found by discovery, the whole file.
pub fn check_candidate(candidate: &Candidate, parser: &SkillParser, limit: u64) -> SkillReport {
    let Some(file) = candidate
        .skill_file
        .as_ref()
        .or(candidate.misnamed.as_ref())
    else {
        return SkillReport::missing(&candidate.dir, "no SKILL.md in this directory");
    };
    // The folder is read as a source of its own, through the same path as the index reads.
    let source = FsSource::new(
        candidate.dir.clone(),
        skills_storage::DiscoveryOptions::validate(),
    );
    let found = SourceCandidate {
        dir: ".".into(),
        file: file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        misnamed: candidate.skill_file.is_none(),
        // The validator reports paths as the user gave them.
        resolved: None,
    };
    let how = How {
        parser,
        limit,
        reading: Reading::Whole,
    };
    check(&source, &candidate.dir, &found, how)
}

/// How much of a skill file a check reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// The whole file, every rule checked (the validator).
    Whole,
    /// Only the frontmatter: the first 8 KiB, cut at their last line break, and the whole
    /// file (within the limit) only when the frontmatter does not close inside them. The
    /// body is not validated (lint rules and an encoding error past the frontmatter are the
    /// validator's business). What the index needs; the report's `source` is empty when
    /// the frontmatter was parsed from the prefix.
    Metadata,
}

/// A candidate's place: its source, the folder's name, the skill file's path in the
/// source.
struct At<'a> {
    source: &'a dyn SkillSource,
    name: &'a str,
    rel_file: &'a str,
}

/// Reads and parses one skill folder of a source whose root is at `base` (the prefix of
/// the report's paths).
pub(crate) fn check(
    source: &dyn SkillSource,
    base: &Path,
    candidate: &SourceCandidate,
    how: How<'_>,
) -> SkillReport {
    checked(source, base, candidate, how, Missing::Reported)
        .unwrap_or_else(|| SkillReport::missing(&under(base, &candidate.dir), "no skill file"))
}

/// How a check reads and parses.
#[derive(Clone, Copy)]
pub(crate) struct How<'a> {
    pub(crate) parser: &'a SkillParser,
    pub(crate) limit: u64,
    pub(crate) reading: Reading,
}

/// What a check gives when the skill file is not there.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Missing {
    /// A report of it.
    Reported,
    /// Nothing, unless the file is misnamed.
    Skipped,
}

/// [`check`], or with [`Missing::Skipped`] `None` when the candidate's file is not there
/// and it is not misnamed: a walk reading where it finds lists such a folder instead, and
/// no report is made for it.
pub(crate) fn checked(
    source: &dyn SkillSource,
    base: &Path,
    candidate: &SourceCandidate,
    how: How<'_>,
    missing: Missing,
) -> Option<SkillReport> {
    let How {
        parser,
        limit,
        reading,
    } = how;
    // Reported at the resolved path when the source knows it; named after the folder as
    // reached (a link's own name is what the author sees in the tree).
    let dir = match &candidate.resolved {
        Some(resolved) => resolved.clone(),
        None => under(base, &candidate.dir),
    };
    // One allocation of the right size: a record holds its file's path as long as it lives.
    let file = under(&dir, &candidate.file);
    let mut diagnostics = Vec::new();
    if candidate.misnamed {
        diagnostics.push(Diagnostic::error(
            Rule::FileName,
            format!(
                "the skill file is named {:?}; it must be exactly \"SKILL.md\" (rename it)",
                candidate.file
            ),
        ));
    }
    let name = folder_name(base, candidate);
    // The file's path in the source, written into this thread's buffer for it.
    let mut rel_file = REL_FILE.with(std::cell::Cell::take);
    candidate.file_path_into(&mut rel_file);
    let at = At {
        source,
        name: &name,
        rel_file: &rel_file,
    };
    let read = match reading {
        Reading::Metadata => read_metadata(&at, limit, parser),
        Reading::Whole => source.read(at.rel_file, limit).map(|bytes| (bytes, None)),
    };
    REL_FILE.with(|spare| spare.set(rel_file));
    let (bytes, early) = match read {
        Ok(pair) => pair,
        Err(ReadError::NotFound) if missing == Missing::Skipped && !candidate.misnamed => {
            return None;
        }
        Err(e) => {
            diagnostics.push(unreadable(&e, &file));
            return Some(SkillReport {
                dir,
                file,
                source: Vec::new(),
                parsed: None,
                diagnostics,
            });
        }
    };
    let mut parsed = match early {
        Some(parsed) => parsed,
        None => parse_read(source, candidate, parser, (&bytes, &name)),
    };
    // Moved, not copied: the report holds each diagnostic once.
    if diagnostics.is_empty() {
        diagnostics = std::mem::take(&mut parsed.diagnostics);
    } else {
        diagnostics.append(&mut parsed.diagnostics);
    }
    Some(SkillReport {
        dir,
        file,
        source: bytes,
        parsed: Some(parsed),
        diagnostics,
    })
}

/// The folder's own name: the relative path's last component, or for the root of the
/// source (`.`) the name the path reached resolves to.
fn folder_name<'c>(base: &Path, candidate: &'c SourceCandidate) -> Cow<'c, str> {
    match candidate.dir.rsplit('/').next().and_then(literal) {
        Some(last) => Cow::Borrowed(last),
        None => Cow::Owned(dir_name(&under(base, &candidate.dir))),
    }
}

/// The error a skill file that cannot be read draws, by why.
fn unreadable(e: &ReadError, file: &Path) -> Diagnostic {
    let rule = match e {
        ReadError::NotFound => Rule::FileMissing,
        ReadError::NotRegular(_) => Rule::FileNotRegular,
        ReadError::TooLarge { .. } => Rule::FileTooLarge,
        _ => Rule::FileUnreadable,
    };
    Diagnostic::error(rule, format!("cannot read {}: {e}", file.display()))
}

/// Parses the `bytes` read of a candidate's skill file (the folder `name`d so).
fn parse_read(
    source: &dyn SkillSource,
    candidate: &SourceCandidate,
    parser: &SkillParser,
    (bytes, name): (&[u8], &str),
) -> ParsedSkill {
    // Only the lint rules care whether references/ exists: spare the index a stat per
    // skill.
    let has_references = parser.lints()
        && source.is_dir(
            &SourceCandidate {
                file: "references".into(),
                ..candidate.clone()
            }
            .file_path(),
        );
    parser.parse(&ParseInput::new(bytes, name).with_references_dir(has_references))
}

/// `base` joined with a relative path of a source (`/`-separated; `.` is `base` itself): a
/// folder or a file on the record side.
pub(crate) fn under(base: &Path, rel: &str) -> PathBuf {
    if cfg!(unix) && skills_model::names_only(rel.as_bytes()) {
        joined(base, rel)
    } else {
        under_by_parts(base, rel)
    }
}

/// [`under`] of a `rel` whose parts are all names where `/` is the one separator: pushed
/// whole, which gives the bytes pushing its parts one by one gives.
fn joined(base: &Path, rel: &str) -> PathBuf {
    // One allocation of the right size: a record holds this path as long as it lives.
    let mut dir = PathBuf::with_capacity(base.as_os_str().len() + 1 + rel.len());
    dir.push(base);
    dir.push(rel);
    dir
}

/// [`under`], each part joined in turn.
fn under_by_parts(base: &Path, rel: &str) -> PathBuf {
    let mut dir = PathBuf::with_capacity(base.as_os_str().len() + 1 + rel.len());
    dir.push(base);
    dir.extend(under_parts(rel));
    dir
}

/// The parts of `rel` that [`under`] joins to its base, in order.
fn under_parts(rel: &str) -> impl Iterator<Item = &str> {
    rel.split('/').filter(|p| !p.is_empty() && *p != ".")
}

/// [`under`]`(base, rel)`, moved out of `held` when `held` already has exactly its bytes
/// (the resolved path of a folder no link led to is the path as reached), else made.
pub(crate) fn under_reusing(base: &Path, rel: &str, held: &mut PathBuf) -> PathBuf {
    if same_as_under(held, base, rel) {
        std::mem::take(held)
    } else {
        under(base, rel)
    }
}

/// Whether `path` has exactly the bytes [`under`]`(base, rel)` would have, worked out as
/// `under` joins them (a separator before each part unless the path so far is empty or
/// ends in one). Only where `/` is the one separator; elsewhere `false`.
fn same_as_under(path: &Path, base: &Path, rel: &str) -> bool {
    if !cfg!(unix) {
        return false;
    }
    let base = base.as_os_str().as_encoded_bytes();
    let Some(mut rest) = path.as_os_str().as_encoded_bytes().strip_prefix(base) else {
        return false;
    };
    let mut separated = base.last().is_none_or(|b| *b == b'/');
    // Parts all names: `under` is `joined`, its bytes compared whole.
    if skills_model::names_only(rel.as_bytes()) {
        let rest = if separated {
            Some(rest)
        } else {
            rest.strip_prefix(b"/")
        };
        return rest == Some(rel.as_bytes());
    }
    for part in under_parts(rel) {
        if !separated {
            let Some(after) = rest.strip_prefix(b"/") else {
                return false;
            };
            rest = after;
        }
        let Some(after) = rest.strip_prefix(part.as_bytes()) else {
            return false;
        };
        rest = after;
        separated = false;
    }
    rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::frontmatter_end;

    /// The bases the joining tests join to: with and without a trailing separator, the
    /// root, none, relative, and with a doubled separator.
    const BASES: [&str; 6] = [
        "/srv/skills",
        "/srv/skills/",
        "/",
        "",
        "rel",
        "/srv//skills",
    ];

    /// Where every part is a name, the path joined whole is the path joined part by part.
    #[test]
    fn a_path_of_names_is_joined_as_part_by_part() {
        use std::path::Path;
        let rels = ["pdf", "a/b", "owner/repo/skills/pdf", "...", ".a/b.", "é/x"];
        for base in BASES {
            for rel in rels {
                assert!(skills_model::names_only(rel.as_bytes()), "{rel:?}");
                // Compared as bytes: paths compare equal by their components.
                assert_eq!(
                    super::joined(Path::new(base), rel).as_os_str(),
                    super::under_by_parts(Path::new(base), rel).as_os_str(),
                    "{base:?} {rel:?}"
                );
            }
        }
    }

    /// A path is taken in place of `under`'s only when it has exactly `under`'s bytes.
    #[test]
    fn a_held_path_is_reused_only_when_it_is_the_joined_path() {
        use std::path::{Path, PathBuf};
        let rels = ["pdf", "a/b", "./a", "a//b", ".", "", "a/./b/", "../x", "é"];
        let mut candidates: Vec<PathBuf> = Vec::new();
        for base in BASES {
            for rel in rels {
                candidates.push(super::under(Path::new(base), rel));
                for extra in [
                    "/srv/skills/pdf",
                    "/srv/skills//pdf",
                    "/srv/skills/pdf/",
                    "pdf",
                ] {
                    candidates.push(PathBuf::from(extra));
                }
            }
        }
        for base in BASES {
            for rel in rels {
                let joined = super::under(Path::new(base), rel);
                for held in &candidates {
                    let same = held.as_os_str().as_encoded_bytes()
                        == joined.as_os_str().as_encoded_bytes();
                    assert_eq!(
                        super::same_as_under(held, Path::new(base), rel),
                        same,
                        "{held:?} against {base:?} + {rel:?} ({joined:?})"
                    );
                    let mut kept = held.clone();
                    let got = super::under_reusing(Path::new(base), rel, &mut kept);
                    assert_eq!(got.as_os_str(), joined.as_os_str());
                }
            }
        }
    }

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
