//! Parsing and validation of one `SKILL.md`: bytes in, a typed [`Frontmatter`] and every
//! [`Diagnostic`] out, each placed at a 1-based line and column of the file.
//!
//! The parser never touches the filesystem and never panics, whatever the input: it is given
//! the bytes and the facts about the skill's folder it needs (the folder's name, whether it
//! has `references/`). One pass yields both readings of a skill: the strict verdict
//! ([`ParsedSkill::is_valid`]) and the lenient values a loader uses
//! ([`ParsedSkill::lenient_name`]).
//!
//! ```
//! use skills_parser::{ParseInput, SkillParser};
//!
//! let source = b"---\nname: pdf-tools\ndescription: Fill PDF forms. Use when asked.\nmetadata:\n  version: 1.0\n---\n# PDF tools\n";
//! let parsed = SkillParser::default().parse(&ParseInput::new(source, "pdf-tools"));
//! // Strictly, an unquoted 1.0 is a number, not a string...
//! assert!(!parsed.is_valid());
//! assert_eq!(parsed.diagnostics[0].rule.id(), "metadata.valueType");
//! assert_eq!((parsed.diagnostics[0].line, parsed.diagnostics[0].column), (Some(5), Some(12)));
//! // ...but the lenient reading keeps its source text.
//! assert_eq!(&parsed.frontmatter.metadata["version"], "1.0");
//! assert_eq!(parsed.lenient_name().unwrap().as_str(), "pdf-tools");
//! assert_eq!(parsed.body(source), "# PDF tools\n");
//! ```

mod codex;
mod core_value;
mod data;
mod fast;
mod fields;
mod lint;
mod node;
mod repair;
mod requires;
mod split;

pub use codex::{read_codex_policy, CodexPolicy};
pub use core_value::{core_frontmatter, CoreValueError};
pub use data::{read_yaml_items, YamlItem, YamlProblem};
pub use split::{frontmatter_bounds, FrontmatterBounds};
mod yaml;

use skills_model::{Diagnostic, Frontmatter, Rule, SkillName, SPEC_FIELDS};

/// The default cap on the frontmatter's size: 64 KiB.
pub const DEFAULT_FRONTMATTER_LIMIT: usize = 64 * 1024;
/// The default cap on YAML nesting depth.
pub const DEFAULT_MAX_DEPTH: usize = 32;
/// The default cap on YAML nodes, alias expansions included.
pub const DEFAULT_MAX_NODES: usize = 20_000;

/// What the parser is given about one skill.
#[derive(Debug, Clone, Copy)]
pub struct ParseInput<'a> {
    /// The bytes of `SKILL.md`.
    pub source: &'a [u8],
    /// The name of the skill's folder (what `name` must equal).
    pub dir_name: &'a str,
    /// Whether the folder has a `references/` folder (for the `progressive-disclosure` lint).
    pub has_references_dir: bool,
}

impl<'a> ParseInput<'a> {
    /// Input with no `references/` folder.
    pub fn new(source: &'a [u8], dir_name: &'a str) -> ParseInput<'a> {
        ParseInput {
            source,
            dir_name,
            has_references_dir: false,
        }
    }

    /// The same input, saying whether the folder has `references/`.
    #[must_use]
    pub fn with_references_dir(mut self, present: bool) -> ParseInput<'a> {
        self.has_references_dir = present;
        self
    }
}

/// The result of parsing one `SKILL.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedSkill {
    /// Every field, read leniently (default when the frontmatter could not be read).
    pub frontmatter: Frontmatter,
    /// Byte offset of the body in the source (the source's length when there is no body).
    pub body_offset: usize,
    /// Every finding, errors first in file order, then warnings.
    pub diagnostics: Vec<Diagnostic>,
}

impl ParsedSkill {
    /// Whether the skill passes the strict rules (no error diagnostic).
    pub fn is_valid(&self) -> bool {
        !self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The name a lenient loader indexes the skill under: the frontmatter's `name` if it can
    /// be read and a description can be read too. `None` means the skill cannot be loaded.
    pub fn lenient_name(&self) -> Option<SkillName> {
        if !self.has_lenient_description() {
            return None;
        }
        SkillName::lenient(self.frontmatter.name.as_deref()?).ok()
    }

    /// [`lenient_name`](Self::lenient_name), the name moved out of the frontmatter rather
    /// than copied (a loader that keeps the name apart, as the index's records do). When
    /// there is none, the frontmatter is left as it was.
    pub fn take_lenient_name(&mut self) -> Option<SkillName> {
        if !self.has_lenient_description() {
            return None;
        }
        match SkillName::lenient_owned(self.frontmatter.name.take()?) {
            Ok(name) => Some(name),
            Err(name) => {
                self.frontmatter.name = Some(name);
                None
            }
        }
    }

    /// Whether the description can be read, as a lenient name needs.
    fn has_lenient_description(&self) -> bool {
        // Any character but white space (what `trim` would leave), found from the front:
        // most descriptions answer at their first character.
        self.frontmatter
            .description
            .as_ref()
            .is_some_and(|d| d.chars().any(|c| !c.is_whitespace()))
    }

    /// The body: the text after the closing `---` line.
    pub fn body<'s>(&self, source: &'s [u8]) -> &'s str {
        let rest = source.get(self.body_offset..).unwrap_or_default();
        std::str::from_utf8(rest).unwrap_or_default()
    }
}

/// The parser, with its limits and whether lint rules run. Cheap to copy; build one and
/// reuse it.
#[derive(Debug, Clone, Copy)]
pub struct SkillParser {
    lint: bool,
    frontmatter_limit: usize,
    max_depth: usize,
    max_nodes: usize,
}

impl Default for SkillParser {
    fn default() -> SkillParser {
        SkillParser::builder().build()
    }
}

/// Configures a [`SkillParser`].
#[derive(Debug, Clone, Copy)]
pub struct SkillParserBuilder {
    parser: SkillParser,
}

impl SkillParserBuilder {
    /// Run the lint rules too (default: off).
    pub fn lint(mut self, yes: bool) -> SkillParserBuilder {
        self.parser.lint = yes;
        self
    }

    /// Cap on the frontmatter's size in bytes (default 64 KiB).
    pub fn frontmatter_limit(mut self, bytes: usize) -> SkillParserBuilder {
        self.parser.frontmatter_limit = bytes;
        self
    }

    /// Cap on YAML nesting depth (default 32).
    pub fn max_depth(mut self, depth: usize) -> SkillParserBuilder {
        self.parser.max_depth = depth;
        self
    }

    /// Cap on YAML nodes, alias expansions included (default 20,000).
    pub fn max_nodes(mut self, nodes: usize) -> SkillParserBuilder {
        self.parser.max_nodes = nodes;
        self
    }

    /// The parser.
    pub fn build(self) -> SkillParser {
        self.parser
    }
}

impl SkillParser {
    /// A builder with the defaults.
    pub fn builder() -> SkillParserBuilder {
        SkillParserBuilder {
            parser: SkillParser {
                lint: false,
                frontmatter_limit: DEFAULT_FRONTMATTER_LIMIT,
                max_depth: DEFAULT_MAX_DEPTH,
                max_nodes: DEFAULT_MAX_NODES,
            },
        }
    }

    /// Whether the lint rules run.
    pub fn lints(&self) -> bool {
        self.lint
    }

    /// Parses one `SKILL.md`.
    pub fn parse(&self, input: &ParseInput<'_>) -> ParsedSkill {
        // What a file that could not be split gives, before anything else is read.
        let unread = |d: Diagnostic| ParsedSkill {
            frontmatter: Frontmatter::default(),
            body_offset: input.source.len(),
            diagnostics: vec![d],
        };
        let (bom, text) = match decoded(input.source) {
            Ok(decoded) => decoded,
            Err(d) => return unread(d),
        };
        let split = match split::split(text, self.frontmatter_limit) {
            Ok(split) => split,
            Err(d) => {
                let mut parsed = unread(d);
                self.read_unclosed(text, bom, input, &mut parsed);
                return parsed;
            }
        };
        let mut diagnostics = Vec::new();
        let mut body_offset = bom + split.body_offset;
        // Read into a frontmatter of its own and put in place whole: assigned over the
        // default, the default's every field was dropped first (on every skill read).
        let mut frontmatter = self.read_frontmatter(
            (&split, text, bom),
            input,
            &mut body_offset,
            &mut diagnostics,
        );
        name_from_folder(&mut frontmatter, &mut diagnostics, input.dir_name);
        if self.lint {
            lint_body(
                &frontmatter,
                text,
                split.body_offset,
                input,
                &mut diagnostics,
            );
        }
        diagnostics.sort_by_key(|d| (d.severity, d.line, d.column));
        ParsedSkill {
            frontmatter,
            body_offset,
            diagnostics,
        }
    }

    /// A frontmatter whose delimiters the strict split refused: the loader still accepts
    /// delimiter lines with trailing blanks, as Claude Code and Codex do (the strict verdict
    /// stays the split's error, already in `parsed`).
    fn read_unclosed(
        &self,
        text: &str,
        bom: usize,
        input: &ParseInput<'_>,
        parsed: &mut ParsedSkill,
    ) {
        if let Some((split, lines)) = repair::relaxed_split(text, self.frontmatter_limit) {
            parsed.body_offset = bom + split.body_offset;
            parsed.diagnostics.extend(relaxed_warnings(&lines));
            parsed.frontmatter = self.lenient_reading(split.yaml, input, &mut parsed.diagnostics);
        }
    }

    /// The frontmatter of a split file (`split` of `text`, after a `bom` of that many
    /// bytes): read strictly when its YAML parses; else the YAML error, and a lenient
    /// reading, from a near-miss closing line when one swallowed part of the body (which
    /// moves `body_offset` there), else of the YAML as split.
    fn read_frontmatter(
        &self,
        (split, text, bom): (&split::Split<'_>, &str, usize),
        input: &ParseInput<'_>,
        body_offset: &mut usize,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Frontmatter {
        let limits = yaml::Limits {
            max_depth: self.max_depth,
            max_nodes: self.max_nodes,
        };
        match yaml::parse(split.yaml, limits) {
            Ok(root) => {
                let mut reader = fields::FieldReader {
                    diagnostics: &mut *diagnostics,
                    line_offset: 1,
                    dir_name: input.dir_name,
                };
                let frontmatter = reader.read(root.as_ref());
                if let Some(d) = swallowed_body(split.yaml) {
                    diagnostics.push(d);
                }
                frontmatter
            }
            Err(e) => {
                diagnostics.push(yaml_diagnostic(&e, split.yaml));
                // A near-miss closing line swallowed part of the body: the loader closes
                // the frontmatter there; else a value holding `: ` is re-read as text.
                let relaxed = repair::relaxed_split(text, self.frontmatter_limit)
                    .filter(|(r, _)| r.body_offset < split.body_offset);
                match relaxed {
                    Some((r, lines)) => {
                        *body_offset = bom + r.body_offset;
                        diagnostics.extend(relaxed_warnings(&lines));
                        self.lenient_reading(r.yaml, input, diagnostics)
                    }
                    None => self.lenient_reading(split.yaml, input, diagnostics),
                }
            }
        }
    }
}

/// The file's text after an optional BOM, with the BOM's length; or the diagnostic placing
/// the first byte that is not UTF-8.
fn decoded(source: &[u8]) -> Result<(usize, &str), Diagnostic> {
    let (bom, bytes) = match source.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => (3, rest),
        None => (0, source),
    };
    std::str::from_utf8(bytes)
        .map(|text| (bom, text))
        .map_err(|e| {
            let offset = bom + e.valid_up_to();
            let line = 1 + bytes[..e.valid_up_to()]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            let line_start = bytes[..e.valid_up_to()]
                .iter()
                .rposition(|b| *b == b'\n')
                .map_or(0, |p| p + 1);
            let column = String::from_utf8_lossy(&bytes[line_start..e.valid_up_to()])
                .chars()
                .count()
                + 1;
            Diagnostic::error(
                Rule::FileEncoding,
                format!("the file is not valid UTF-8: bad byte at offset {offset}"),
            )
            .at(to_u32(line), to_u32(column))
        })
}

/// With no usable `name`, the loader takes the folder's (a `loader.repair` warning), as
/// Claude Code and Codex do.
fn name_from_folder(
    frontmatter: &mut Frontmatter,
    diagnostics: &mut Vec<Diagnostic>,
    dir_name: &str,
) {
    if let Some(name) = missing_name(frontmatter, diagnostics, dir_name) {
        diagnostics.push(Diagnostic::new(
            Rule::LoaderRepair,
            skills_model::Severity::Warning,
            format!("no `name`: the loader takes the folder's name, {name:?}, as Claude Code and Codex do (add `name: {name}`)"),
        ));
        frontmatter.name = Some(name.into());
    }
}

/// The lint rules, over the frontmatter and the body from `body_offset` of `text`.
fn lint_body(
    frontmatter: &Frontmatter,
    text: &str,
    body_offset: usize,
    input: &ParseInput<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let body = &text[body_offset..];
    let body_line = to_u32(1 + text[..body_offset].matches('\n').count());
    let input = lint::LintInput {
        frontmatter,
        body,
        body_line,
        has_references_dir: input.has_references_dir,
    };
    lint::lint(&input, diagnostics);
}

/// A Markdown heading inside the frontmatter followed by a field no specification or
/// extension defines: the closing `---` is missing above the heading, and the body down to
/// a later `---` (a Markdown rule) was read as YAML, its prose lines as unknown fields.
fn swallowed_body(yaml: &str) -> Option<Diagnostic> {
    // A heading starts a line with `#`; nearly no frontmatter has one, and then nothing
    // below needs its lines.
    let bytes = yaml.as_bytes();
    let heading = |i: usize| bytes.get(i + 1) == Some(&b'#');
    if !yaml.starts_with('#') && !memchr::memchr_iter(b'\n', bytes).any(heading) {
        return None;
    }
    let lines: Vec<&str> = yaml.lines().collect();
    let heading = lines.iter().position(|l| {
        let hashes = l.len() - l.trim_start_matches('#').len();
        (1..=6).contains(&hashes)
            && l[hashes..].starts_with([' ', '\t'])
            && !l[hashes..].trim().is_empty()
    })?;
    let unknown = lines[heading + 1..].iter().position(|l| {
        let Some((key, _)) = l.split_once(':') else {
            return false;
        };
        !l.starts_with([' ', '\t', '#', '-'])
            && !key.is_empty()
            && !SPEC_FIELDS.contains(&key)
            && !skills_model::EXTENSION_FIELDS.contains(&key)
    })?;
    let (h, u) = (heading + 2, heading + unknown + 3);
    let message = format!(
        "line {h} is a Markdown heading inside the frontmatter, and line {u} reads as an unknown field: the frontmatter's closing `---` is missing above the heading, so the body was read as YAML down to a later `---` line; add a line `---` before line {h}"
    );
    Some(
        Diagnostic::error(Rule::FrontmatterSwallowedBody, message)
            .at(u32::try_from(h).unwrap_or(u32::MAX), 1),
    )
}

/// The `loader.repair` warnings for delimiter lines read with their trailing blanks.
fn relaxed_warnings(lines: &[u32]) -> impl Iterator<Item = Diagnostic> + '_ {
    lines.iter().map(|line| {
        repair::warning(
            format!("line {line} is read as a frontmatter delimiter despite its trailing spaces (the strict rule wants exactly `---`; remove them)"),
            *line,
            4,
        )
    })
}

/// The folder's name, when the frontmatter has no usable `name` (missing or empty) and the
/// folder's name can be one.
fn missing_name(fm: &Frontmatter, diagnostics: &[Diagnostic], dir_name: &str) -> Option<String> {
    let missing = fm.name.is_none() && diagnostics.iter().any(|d| d.rule == Rule::NameRequired);
    (missing && SkillName::lenient(dir_name).is_ok()).then(|| dir_name.to_owned())
}

impl SkillParser {
    /// The lenient values of a frontmatter the strict reading refused: `yaml` read as it
    /// is, or with its values that start with `@` or a backtick and its `: ` values re-read
    /// as text (each a `loader.repair` warning pushed to `diagnostics`). The reading's own diagnostics are dropped: the strict verdict is
    /// already the error that led here, and a repaired text must not add findings to it.
    fn lenient_reading(
        &self,
        yaml: &str,
        input: &ParseInput<'_>,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Frontmatter {
        let limits = yaml::Limits {
            max_depth: self.max_depth,
            max_nodes: self.max_nodes,
        };
        // A merge key's refusal is the one finding of this reading kept: it says why the
        // loader loads nothing.
        let mut read = |text: &str| -> Option<Frontmatter> {
            let root = yaml::parse(text, limits).ok()?;
            let mut dropped = Vec::new();
            let mut reader = fields::FieldReader {
                diagnostics: &mut dropped,
                line_offset: 1,
                dir_name: input.dir_name,
            };
            let fm = reader.read(root.as_ref());
            diagnostics.extend(
                dropped
                    .into_iter()
                    .filter(|d| d.rule == Rule::FrontmatterMergeKey),
            );
            Some(fm)
        };
        if let Some(fm) = read(yaml) {
            return fm;
        }
        let (yaml, reserved) = match repair::quote_reserved_starts(yaml) {
            Some((fixed, warnings)) => (std::borrow::Cow::Owned(fixed), warnings),
            None => (std::borrow::Cow::Borrowed(yaml), Vec::new()),
        };
        let (fixed, lines) = match repair::quote_colon_values(&yaml) {
            Some(repaired) => repaired,
            None if !reserved.is_empty() => (yaml.into_owned(), Vec::new()),
            None => return Frontmatter::default(),
        };
        let Some(fm) = read(&fixed) else {
            return Frontmatter::default();
        };
        diagnostics.extend(reserved);
        for (line, key) in lines {
            let line = line.saturating_add(1);
            if said_by_the_error(diagnostics, line, &key) {
                continue;
            }
            diagnostics.push(repair::warning(
                format!("the value of `{key}` holds \": \", which YAML reads as another key; the loader reads the whole value as text, as Codex does (quote it: `{key}: \"...\"`)"),
                line,
                1,
            ));
        }
        fm
    }
}

/// Whether the YAML error already names the value of `key` that starts on `line` as one
/// holding `: ` (on that line or a continuation line below it): its `loader.repair`
/// warning would say the same thing again.
fn said_by_the_error(diagnostics: &[Diagnostic], line: u32, key: &str) -> bool {
    let hint = format!("the value of `{key}` contains \": \"");
    diagnostics.iter().any(|d| {
        d.rule == Rule::FrontmatterYamlSyntax
            && d.line.is_some_and(|at| at >= line)
            && d.message.contains(&hint)
    })
}

/// Whether the frontmatter fast path, when it accepts `yaml`, builds exactly the full YAML
/// parser's tree (true when it declines). For the differential tests and the fuzz target.
#[doc(hidden)]
pub fn fast_path_agrees(yaml: &str) -> bool {
    let limits = yaml::Limits {
        max_depth: DEFAULT_MAX_DEPTH,
        max_nodes: DEFAULT_MAX_NODES,
    };
    match fast::parse(yaml) {
        Some(tree) => yaml::parse_full(yaml, limits).ok().flatten().as_ref() == Some(&tree),
        None => true,
    }
}

/// Whether the fast path accepts `yaml` (for the differential tests' coverage checks).
#[doc(hidden)]
pub fn fast_path_accepts(yaml: &str) -> bool {
    fast::parse(yaml).is_some()
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Turns a YAML error into a diagnostic placed in the file, with a hint for the most common
/// mistakes (the first that fits): a tab in the indentation, a field indented under one
/// whose value is given, a near-miss closing line, an unquoted value holding `: `.
fn yaml_diagnostic(e: &yaml::YamlError, yaml: &str) -> Diagnostic {
    let line = e.line.saturating_add(1);
    if e.kind == yaml::YamlErrorKind::Limit {
        return Diagnostic::error(
            Rule::FrontmatterTooLarge,
            format!("the frontmatter is too complex: {}", e.message),
        )
        .at(line, e.col);
    }
    let source_line = yaml
        .lines()
        .nth(e.line.saturating_sub(1) as usize)
        .unwrap_or("");
    tab_indented(e, yaml, source_line, line)
        .or_else(|| indented_under_a_value(e, yaml, source_line, line))
        .or_else(|| under_indented(e, yaml, source_line, line))
        .or_else(|| near_miss_closing_line(e, yaml))
        .unwrap_or_else(|| syntax_error(e, yaml, source_line, line))
}

/// The width of a line's leading blanks.
fn lead_of(l: &str) -> usize {
    l.len() - l.trim_start().len()
}

/// A tab in the indentation: YAML indents with spaces only. Scanning a plain value, the
/// YAML parser reports the tab at the value's start: the tab is on a line below it.
fn tab_indented(
    e: &yaml::YamlError,
    yaml: &str,
    source_line: &str,
    line: u32,
) -> Option<Diagnostic> {
    let lead = &source_line[..lead_of(source_line)];
    let (line, tab) = lead.find('\t').map(|tab| (line, tab)).or_else(|| {
        e.message.contains("found a tab").then(|| {
            yaml.lines()
                .enumerate()
                .skip(e.line.saturating_sub(1) as usize)
                .find_map(|(i, l)| l[..lead_of(l)].find('\t').map(|tab| (i, tab)))
                .map(|(i, tab)| (u32::try_from(i).unwrap_or(u32::MAX).saturating_add(2), tab))
        })?
    })?;
    let message = format!(
        "invalid YAML: line {line} is indented with a tab; YAML indents with spaces only: replace the tab with spaces"
    );
    Some(
        Diagnostic::error(Rule::FrontmatterYamlSyntax, message)
            .at(line, u32::try_from(tab + 1).unwrap_or(1)),
    )
}

/// The key of a `key:` line (letters, digits, `-`, `_`), without its indentation.
fn simple_key(line: &str) -> Option<&str> {
    let (key, _) = line.trim().split_once(':')?;
    let simple = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
    simple.then_some(key)
}

/// The non-blank lines above the error's line, nearest first, with their 0-based numbers in
/// `yaml`; comment lines left out.
fn lines_above<'y>(
    e: &yaml::YamlError,
    yaml: &'y str,
) -> impl Iterator<Item = (usize, &'y str)> + 'y {
    let above: Vec<(usize, &str)> = yaml
        .lines()
        .enumerate()
        .take(e.line.saturating_sub(1) as usize)
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .collect();
    above.into_iter().rev()
}

/// A field indented under one whose value is already given: the fix is to align it with
/// that field (at the first column, for a top-level one), not to quote anything.
fn indented_under_a_value(
    e: &yaml::YamlError,
    yaml: &str,
    source_line: &str,
    line: u32,
) -> Option<Diagnostic> {
    let lead = lead_of(source_line);
    if lead == 0 || !e.message.contains("mapping values are not allowed") {
        return None;
    }
    let (parent_at, parent) = lines_above(e, yaml)
        .next()
        .filter(|(_, l)| lead_of(l) < lead)?;
    let key = simple_key(source_line)?;
    // In a list entry (`- tool: git`) the field starts after the dash.
    let (entry, parent_key) = match parent.trim().strip_prefix("- ") {
        Some(rest) => (2, rest),
        None => (0, parent.trim()),
    };
    let (parent_key, value) = parent_key.split_once(": ")?;
    let value = value.trim();
    if value.is_empty() || value.starts_with(['|', '>']) {
        return None;
    }
    // The fix moves `key` to `parent_key`'s column: the first one for a top-level field,
    // else the one that keeps `key` in the mapping both are in.
    let fix = match lead_of(parent) + entry {
        0 => format!("fields start at the first column; remove the indentation before `{key}`"),
        n => format!(
            "align `{key}` with `{parent_key}` ({n} space{} of indentation, not {lead})",
            if n == 1 { "" } else { "s" }
        ),
    };
    let message = format!(
        "invalid YAML: `{key}` is indented under `{parent_key}`, whose value is already given on line {}: {fix}",
        parent_at + 2
    );
    Some(Diagnostic::error(Rule::FrontmatterYamlSyntax, message).at(line, to_u32(lead + 1)))
}

/// A field indented less than the field above it and more than the mapping holding both
/// (` version:` under `  author:` in `metadata:`): YAML finds no key it expects. The fix is
/// to align it with the field above (or with the mapping's key, to leave the mapping).
fn under_indented(
    e: &yaml::YamlError,
    yaml: &str,
    source_line: &str,
    line: u32,
) -> Option<Diagnostic> {
    let lead = lead_of(source_line);
    if lead == 0 || !e.message.contains("did not find expected key") {
        return None;
    }
    let key = simple_key(source_line)?;
    // Nearest first: the outermost field above indented more than `key` (its sibling, once
    // aligned), up to the first line indented less (the mapping holding both).
    let mut sibling: Option<&str> = None;
    let mut parent = None;
    for (_, l) in lines_above(e, yaml) {
        if lead_of(l) < lead {
            parent = Some(l);
            break;
        }
        if lead_of(l) > lead && sibling.is_none_or(|s| lead_of(l) < lead_of(s)) {
            sibling = Some(l);
        }
    }
    let (sibling, parent) = (sibling?, parent?);
    let (sibling_key, parent_key) = (simple_key(sibling)?, simple_key(parent)?);
    let n = lead_of(sibling);
    let leave = match lead_of(parent) {
        0 => "remove its indentation".to_owned(),
        _ => format!("align it with `{parent_key}`"),
    };
    let message = format!(
        "invalid YAML: `{key}` is indented {lead} space{}, less than `{sibling_key}` above it ({n}) and more than `{parent_key}`: align `{key}` with `{sibling_key}` ({n} spaces) to keep it in `{parent_key}`, or {leave} to take it out",
        if lead == 1 { "" } else { "s" }
    );
    Some(Diagnostic::error(Rule::FrontmatterYamlSyntax, message).at(line, to_u32(lead + 1)))
}

/// A closing line with trailing characters leaves the real one to close a frontmatter
/// that swallowed part of the body: name the near miss.
fn near_miss_closing_line(e: &yaml::YamlError, yaml: &str) -> Option<Diagnostic> {
    if !e.message.contains("more than one YAML document") {
        return None;
    }
    let n = yaml.lines().position(|l| l != "---" && l.trim() == "---")?;
    let near = u32::try_from(n + 2).unwrap_or(u32::MAX);
    let message = format!(
        "invalid YAML: line {near} looks like the closing `---` but has other characters or spaces; the closing line must be exactly `---`"
    );
    Some(Diagnostic::error(Rule::FrontmatterYamlSyntax, message).at(near, 4))
}

/// The YAML error as it is, or, for a value holding `: `, the hint to quote it.
fn syntax_error(e: &yaml::YamlError, yaml: &str, source_line: &str, line: u32) -> Diagnostic {
    // On a continuation line of a plain value, the key is on the nearest line above that
    // is indented less.
    let key = unquoted_colon_key(source_line).or_else(|| {
        let indent = lead_of(source_line);
        if indent == 0 {
            return None;
        }
        let above: Vec<&str> = yaml
            .lines()
            .take(e.line.saturating_sub(1) as usize)
            .collect();
        above
            .into_iter()
            .rev()
            .find(|l| !l.trim().is_empty() && lead_of(l) < indent)
            .and_then(unquoted_colon_key)
    });
    let message = match key {
        Some(key) if e.message.contains("mapping values are not allowed") => format!(
            "invalid YAML: the value of `{key}` contains \": \", which YAML reads as another key; quote the whole value (`{key}: \"...\"`) or use a folded block (`{key}: >-` with the text indented on the next lines)"
        ),
        _ => format!("invalid YAML: {}", e.message),
    };
    Diagnostic::error(Rule::FrontmatterYamlSyntax, message).at(line, e.col)
}

/// The key of a `key: value` line whose value is unquoted.
fn unquoted_colon_key(line: &str) -> Option<&str> {
    let (key, value) = line.split_once(": ")?;
    let key = key.trim();
    let value = value.trim_start();
    let plain_key = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_');
    let unquoted = !value.starts_with(['"', '\'', '|', '>', '[', '{']);
    (plain_key && unquoted).then_some(key)
}
