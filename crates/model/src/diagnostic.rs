//! Diagnostics: what the parser, the validator and the loader say about a skill, with a place.

use std::fmt;

use serde::{Serialize, Serializer};

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Makes a skill invalid under the strict reading.
    Error,
    /// Worth fixing; never makes a skill invalid.
    Warning,
    /// A hint.
    Info,
}

impl Severity {
    /// The lowercase name used in output (`error`, `warning`, `info`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! rules {
    ($( $(#[$doc:meta])* $variant:ident = $id:literal, )*) => {
        /// A rule id: the stable name of the check behind a diagnostic.
        ///
        /// The ids of the spec rules are those of the conformance suite; the others are this
        /// project's own (files it cannot read, inputs over its limits, lint rules).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Rule {
            $( $(#[$doc])* $variant, )*
        }

        impl Rule {
            /// Every rule, in declaration order.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant,)*];

            /// The stable id, such as `name.format`.
            pub fn id(self) -> &'static str {
                match self { $( Rule::$variant => $id, )* }
            }

            /// The rule with this id, if there is one.
            pub fn from_id(id: &str) -> Option<Rule> {
                match id { $( $id => Some(Rule::$variant), )* _ => None }
            }
        }
    };
}

rules! {
    /// The skill directory has no `SKILL.md`, or the path does not exist.
    FileMissing = "file.missing",
    /// The skill file is named in the wrong case (`skill.md`).
    FileName = "file.name",
    /// The file could not be read (permissions, a vanished file).
    FileUnreadable = "file.unreadable",
    /// `SKILL.md` is not a regular file (a FIFO, a device, a directory).
    FileNotRegular = "file.notRegular",
    /// The file is larger than the reader's limit.
    FileTooLarge = "file.tooLarge",
    /// The file is not valid UTF-8.
    FileEncoding = "file.encoding",
    /// The file does not start with a `---` line.
    FrontmatterMissing = "frontmatter.missing",
    /// No closing `---` line.
    FrontmatterUnclosed = "frontmatter.unclosed",
    /// The frontmatter is YAML but not a mapping.
    FrontmatterNotMapping = "frontmatter.notMapping",
    /// A Markdown heading inside the frontmatter, followed by prose read as fields: the
    /// closing `---` is missing above it and a later `---` swallowed the body.
    FrontmatterSwallowedBody = "frontmatter.swallowedBody",
    /// The frontmatter is not valid YAML (duplicate keys included).
    FrontmatterYamlSyntax = "frontmatter.yamlSyntax",
    /// The frontmatter is over a size, nesting or alias limit.
    FrontmatterTooLarge = "frontmatter.tooLarge",
    /// A YAML merge key (`<<`): YAML 1.1 readers merge the mapping it names, this reader
    /// does not, so the two would read different fields; the skill is not loaded.
    FrontmatterMergeKey = "frontmatter.mergeKey",
    /// A field that the Agent Skills specification does not define.
    FrontmatterUnknownField = "frontmatter.unknownField",
    /// `name` is missing or empty.
    NameRequired = "name.required",
    /// `name` is not a string.
    NameType = "name.type",
    /// `name` is over 64 characters.
    NameMaxLength = "name.maxLength",
    /// `name` is not lowercase ASCII letters and digits joined by single hyphens.
    NameFormat = "name.format",
    /// `name` differs from the skill's directory name.
    NameMatchesDirectory = "name.matchesDirectory",
    /// `name` differs from another visible skill's name only by case, separators,
    /// invisible characters or confusable letters: it is not indexed.
    NameLookalike = "name.lookalike",
    /// `description` is missing or blank.
    DescriptionRequired = "description.required",
    /// `description` is not a string.
    DescriptionType = "description.type",
    /// `description` is over 1024 characters.
    DescriptionMaxLength = "description.maxLength",
    /// `compatibility` is not a string.
    CompatibilityType = "compatibility.type",
    /// `compatibility` is empty.
    CompatibilityMinLength = "compatibility.minLength",
    /// `compatibility` is over 500 characters.
    CompatibilityMaxLength = "compatibility.maxLength",
    /// `license` is not a string.
    LicenseType = "license.type",
    /// `metadata` is not a mapping.
    MetadataType = "metadata.type",
    /// A `metadata` value (or key) is not a string.
    MetadataValueType = "metadata.valueType",
    /// `allowed-tools` is not a string.
    AllowedToolsType = "allowed-tools.type",
    /// An extension field (`priority`, `tags`, `hooks`, ...) has a value of the wrong shape.
    ExtensionType = "extension.type",
    /// `scope` is present but cannot be read (not a mapping, an unknown dimension, a
    /// dimension that is not a string or a list of strings): the skill is hidden from
    /// every session.
    ScopeType = "scope.type",
    /// A Claude Code hook entry that the executor does not run: a tool event, an event it
    /// has not, or a command that is not a single script under `scripts/`.
    HooksNotRun = "hooks.notRun",
    /// The lenient loader repaired what the strict reading refuses (a delimiter with
    /// trailing blanks, a value holding `: `, a missing `name`), as Claude Code and Codex
    /// do; the strict verdict is unchanged.
    LoaderRepair = "loader.repair",
    /// The lenient loader read a value as Claude Code reads it where YAML or this project
    /// spell it otherwise: a boolean written `yes`, `no`, `on`, `off`, `1` or `0` (any
    /// case), `${CLAUDE_SKILL_DIR}` for the skill's folder; the strict verdict is unchanged.
    LoaderClaudeCode = "loader.claudeCode",
    /// A tool rule in `allowed-tools` or `disallowed-tools` cannot be read.
    ToolRuleSyntax = "tool-rule.syntax",
    /// Lint: the body is over 500 lines or about 5,000 tokens.
    ContextBudget = "context-budget",
    /// Lint: the description says what but not when.
    DescriptionQuality = "description-quality",
    /// Lint: instructions a model already follows without being told.
    NoGenericInstructions = "no-generic-instructions",
    /// Lint: a long body with no `references/` folder to move detail into, and no link to a
    /// bundled file.
    ProgressiveDisclosure = "progressive-disclosure",
    /// Lint: a menu of options where a default would do.
    DefaultsOverMenus = "defaults-over-menus",
    /// Lint: a long procedure (code blocks or numbered steps) that warns about nothing: no
    /// caveat section under any common name, no callout, no prohibition.
    GotchasPresent = "gotchas-present",
    /// Lint: two skills a model sees together whose descriptions it could not tell apart
    /// (their search terms alike); named with the terms both hold.
    DescriptionOverlap = "description.overlap",
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl Serialize for Rule {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id())
    }
}

/// One finding about a skill: a rule, a severity, a message, and where it applies.
///
/// `line` and `column` are 1-based and refer to the `SKILL.md` file itself (so the first
/// frontmatter line is line 2); columns count characters. Both are `None` when the finding
/// has no place in the file (a missing file, a missing field).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The rule that produced it.
    pub rule: Rule,
    /// How serious it is.
    pub severity: Severity,
    /// What is wrong and, where it helps, how to fix it.
    pub message: String,
    /// 1-based line in the file.
    pub line: Option<u32>,
    /// 1-based column (in characters) in the file.
    pub column: Option<u32>,
}

impl Diagnostic {
    /// An error with no place.
    pub fn error(rule: Rule, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(rule, Severity::Error, message)
    }

    /// A warning with no place.
    pub fn warning(rule: Rule, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(rule, Severity::Warning, message)
    }

    /// A diagnostic with no place.
    pub fn new(rule: Rule, severity: Severity, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            rule,
            severity,
            message: message.into(),
            line: None,
            column: None,
        }
    }

    /// The same diagnostic placed at a 1-based line and column.
    #[must_use]
    pub fn at(mut self, line: u32, column: u32) -> Diagnostic {
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    /// Whether this is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]: {}", self.severity, self.rule, self.message)?;
        if let (Some(line), Some(column)) = (self.line, self.column) {
            write!(f, " (line {line}, column {column})")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for rule in Rule::ALL {
            assert!(seen.insert(rule.id()), "duplicate id {}", rule.id());
            assert_eq!(Rule::from_id(rule.id()), Some(*rule));
        }
        assert_eq!(Rule::from_id("no.such"), None);
    }

    #[test]
    fn serializes_rule_as_its_id() {
        let d = Diagnostic::error(Rule::NameFormat, "bad").at(2, 7);
        let json = serde_json::to_string(&d).unwrap();
        assert_eq!(
            json,
            r#"{"rule":"name.format","severity":"error","message":"bad","line":2,"column":7}"#
        );
    }
}
