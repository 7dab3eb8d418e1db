//! Splitting a `SKILL.md` into its frontmatter and its body.
//!
//! The first line must be exactly `---` (after an optional UTF-8 BOM; `\r\n` accepted). The
//! frontmatter ends at the next line that is exactly `---`; nothing else is a delimiter, so a
//! `---` inside a value or anywhere in the body is just text.

use skills_model::{Diagnostic, Rule};

/// Where the frontmatter and the body are in the source text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Split<'a> {
    /// The YAML between the two delimiter lines (may be empty).
    pub(crate) yaml: &'a str,
    /// Byte offset of the body in the text.
    pub(crate) body_offset: usize,
}

/// Splits `text` (already known to be UTF-8, BOM removed). `limit` caps the frontmatter's
/// size in bytes.
pub(crate) fn split(text: &str, limit: usize) -> Result<Split<'_>, Diagnostic> {
    let first_end = text.find('\n').map_or(text.len(), |i| i + 1);
    if trim_eol(&text[..first_end]) != "---" {
        let first = trim_eol(&text[..first_end]);
        let message = if first.starts_with("---") {
            "the first line must be exactly `---` (no other characters, no trailing spaces)"
        } else if text.trim_start().starts_with("---") {
            "the file must start with a `---` line: remove what comes before it"
        } else {
            "no frontmatter: the file must start with a `---` line, then YAML, then `---`"
        };
        return Err(Diagnostic::error(Rule::FrontmatterMissing, message).at(1, 1));
    }
    let yaml_start = first_end;
    let mut pos = yaml_start;
    while pos < text.len() {
        let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1);
        if trim_eol(&text[pos..line_end]) == "---" {
            if pos - yaml_start > limit {
                return Err(too_large(limit));
            }
            return Ok(Split {
                yaml: &text[yaml_start..pos],
                body_offset: line_end,
            });
        }
        if pos - yaml_start > limit {
            return Err(too_large(limit));
        }
        pos = line_end;
    }
    let near_miss = text[yaml_start..]
        .lines()
        .position(|l| l.trim() == "---")
        .map(|i| i + 2);
    let message = match near_miss {
        Some(line) => format!(
            "the frontmatter is never closed: line {line} looks like `---` but has other characters or spaces; the closing line must be exactly `---`"
        ),
        None => "the frontmatter is never closed: add a line `---` after the last field".to_owned(),
    };
    Err(Diagnostic::error(Rule::FrontmatterUnclosed, message).at(1, 1))
}

fn too_large(limit: usize) -> Diagnostic {
    Diagnostic::error(
        Rule::FrontmatterTooLarge,
        format!(
            "the frontmatter is over {limit} bytes: move long text into the body or references/"
        ),
    )
    .at(2, 1)
}

fn trim_eol(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> (String, String) {
        let s = split(text, 1 << 16).unwrap();
        (s.yaml.to_owned(), text[s.body_offset..].to_owned())
    }

    fn err(text: &str) -> &'static str {
        split(text, 1 << 16).unwrap_err().rule.id()
    }

    #[test]
    fn splits_the_common_forms() {
        assert_eq!(
            ok("---\na: 1\n---\nbody\n"),
            ("a: 1\n".into(), "body\n".into())
        );
        assert_eq!(
            ok("---\r\na: 1\r\n---\r\nbody"),
            ("a: 1\r\n".into(), "body".into())
        );
        assert_eq!(ok("---\n---\n"), ("".into(), "".into()));
        assert_eq!(ok("---\na: 1\n---"), ("a: 1\n".into(), "".into()));
    }

    #[test]
    fn only_a_whole_line_closes() {
        assert_eq!(
            ok("---\na: x---y\nb: ---\n---\n---\nmore\n"),
            ("a: x---y\nb: ---\n".into(), "---\nmore\n".into())
        );
        assert_eq!(err("---\na: 1\n--- \n"), "frontmatter.unclosed");
        assert_eq!(err("---\na: 1\n----\n"), "frontmatter.unclosed");
    }

    #[test]
    fn the_opening_line_must_be_first_and_exact() {
        assert_eq!(err(""), "frontmatter.missing");
        assert_eq!(err("\n---\na: 1\n---\n"), "frontmatter.missing");
        assert_eq!(err("--- \na: 1\n---\n"), "frontmatter.missing");
        assert_eq!(err("# Title\n"), "frontmatter.missing");
        assert_eq!(err("---"), "frontmatter.unclosed");
    }

    #[test]
    fn caps_the_frontmatter() {
        let big = format!("---\n{}---\n", "a: b\n".repeat(100));
        assert_eq!(
            split(&big, 100).unwrap_err().rule.id(),
            "frontmatter.tooLarge"
        );
        let unclosed = format!("---\n{}", "a: b\n".repeat(100));
        assert_eq!(
            split(&unclosed, 100).unwrap_err().rule.id(),
            "frontmatter.tooLarge"
        );
    }
}
