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

/// Where a `SKILL.md`'s frontmatter is, in bytes: the one home of the delimiter rule, used by
/// the parser, the index (to read only the frontmatter of a file) and the tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontmatterBounds {
    /// The YAML between the two delimiter lines (may be empty).
    pub yaml: std::ops::Range<usize>,
    /// Where the body starts: just after the closing line.
    pub body_offset: usize,
    /// Whether the closing line ends with a line break (a `---` at the very end of the
    /// bytes closes the frontmatter, but in a prefix it may be the start of a longer line).
    pub terminated: bool,
}

/// Finds the frontmatter in `bytes`: a first line that is exactly `---` (after an optional
/// UTF-8 BOM; `\r\n` accepted), then the next line that is exactly `---`. `None` when the
/// first line is not `---` or no line closes it. Offsets count the BOM.
///
/// ```
/// let b = skills_parser::frontmatter_bounds(b"---\nname: x\n---\nBody\n").unwrap();
/// assert_eq!(b.yaml, 4..12);
/// assert_eq!(b.body_offset, 16);
/// assert!(skills_parser::frontmatter_bounds(b"--- \nname: x\n---\n").is_none());
/// ```
pub fn frontmatter_bounds(bytes: &[u8]) -> Option<FrontmatterBounds> {
    let start = if bytes.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let first_end = start + memchr::memchr(b'\n', &bytes[start..])?;
    if trim_eol_bytes(&bytes[start..=first_end]) != b"---" {
        return None;
    }
    let yaml_start = first_end + 1;
    // Every line that starts with `---`, found by searching for "\n---" from the first
    // line's own line break (so an empty frontmatter is found too); the first whose rest
    // is only a line ending closes the frontmatter.
    // One searcher for every file: building it was about a twentieth of this function.
    static DELIMITER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\n---"));
    for hit in DELIMITER.find_iter(&bytes[first_end..]) {
        let line_start = first_end + hit + 1;
        let after = line_start + 3;
        let ending = match &bytes[after..] {
            [] => 0,
            [b'\n', ..] | [b'\r'] => 1,
            [b'\r', b'\n', ..] => 2,
            _ => continue,
        };
        return Some(FrontmatterBounds {
            yaml: yaml_start..line_start,
            body_offset: after + ending,
            terminated: ending > 0 && bytes[after + ending - 1] == b'\n',
        });
    }
    None
}

fn trim_eol_bytes(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
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
    if let Some(bounds) = frontmatter_bounds(text.as_bytes()) {
        if bounds.yaml.len() > limit {
            return Err(too_large(limit));
        }
        return Ok(Split {
            yaml: &text[bounds.yaml],
            body_offset: bounds.body_offset,
        });
    }
    // Unclosed: over the cap when its last line starts past it.
    let last_line_start = text[yaml_start..]
        .trim_end_matches('\n')
        .rfind('\n')
        .map_or(yaml_start, |i| yaml_start + i + 1);
    if last_line_start - yaml_start > limit {
        return Err(too_large(limit));
    }
    let near_miss = text[yaml_start..]
        .lines()
        .position(|l| l.trim() == "---")
        .map(|i| i + 2);
    match near_miss {
        // Placed where the near miss is: that is the line to fix.
        Some(line) => Err(Diagnostic::error(
            Rule::FrontmatterUnclosed,
            format!(
                "the frontmatter is never closed: line {line} looks like `---` but has other characters or spaces; the closing line must be exactly `---`"
            ),
        )
        .at(u32::try_from(line).unwrap_or(u32::MAX), 4)),
        // Placed where the closing line belongs: after the last field.
        None => {
            let last = last_field_line(&text[yaml_start..]);
            let message = match last {
                1 => "the frontmatter is never closed: add a line `---` after the first line"
                    .to_owned(),
                n => format!(
                    "the frontmatter is never closed: add a line `---` after the last field (after line {n})"
                ),
            };
            Err(Diagnostic::error(Rule::FrontmatterUnclosed, message)
                .at(u32::try_from(last + 1).unwrap_or(u32::MAX), 1))
        }
    }
}

/// The 1-based line (in the file, the opening `---` being line 1) of the last field of an
/// unclosed frontmatter whose YAML starts `yaml`: the last line of the run of field lines
/// (`key: value`, lines indented under one, `- ` entries, comments and blank lines between
/// them) that ends at the first line that is none of these (prose) or is a Markdown heading
/// after a blank line; 1 when there is no field.
fn last_field_line(yaml: &str) -> usize {
    let is_field = |l: &str| {
        l.split_once(':').is_some_and(|(key, rest)| {
            !key.is_empty()
                && !key.contains(char::is_whitespace)
                && (rest.is_empty() || rest.starts_with([' ', '\t']))
        })
    };
    let is_heading = |l: &str| {
        let hashes = l.len() - l.trim_start_matches('#').len();
        (1..=6).contains(&hashes)
            && l[hashes..].starts_with([' ', '\t'])
            && !l[hashes..].trim().is_empty()
    };
    let mut last = 1;
    let mut after_blank = false;
    for (i, line) in yaml.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            after_blank = true;
            continue;
        }
        if line.starts_with('#') {
            if after_blank && is_heading(line) {
                break;
            }
            continue;
        }
        after_blank = false;
        if !line.starts_with([' ', '\t', '-']) && !is_field(line) {
            break;
        }
        last = i + 2;
    }
    last
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

    /// The closing line found line by line: what the `memchr` search must agree with.
    fn bounds_by_lines(bytes: &[u8]) -> Option<FrontmatterBounds> {
        let start = if bytes.starts_with(b"\xEF\xBB\xBF") {
            3
        } else {
            0
        };
        let mut lines = bytes[start..].split_inclusive(|b| *b == b'\n');
        if trim_eol_bytes(lines.next()?) != b"---" {
            return None;
        }
        let yaml_start = start + bytes[start..].iter().position(|b| *b == b'\n')? + 1;
        let mut pos = yaml_start;
        for line in lines {
            if trim_eol_bytes(line) == b"---" {
                return Some(FrontmatterBounds {
                    yaml: yaml_start..pos,
                    body_offset: pos + line.len(),
                    terminated: line.ends_with(b"\n"),
                });
            }
            pos += line.len();
        }
        None
    }

    proptest::proptest! {
        #[test]
        fn bounds_agree_with_a_line_by_line_reading(
            parts in proptest::collection::vec(
                proptest::sample::select(vec!["---", "\n", "\r", "\r\n", "-", "a: b", "\u{feff}", " "]),
                0..24,
            )
        ) {
            let text = parts.concat();
            let got = frontmatter_bounds(text.as_bytes());
            let want = bounds_by_lines(text.as_bytes());
            proptest::prop_assert_eq!(
                got.map(|b| (b.yaml, b.body_offset, b.terminated)),
                want.map(|b| (b.yaml, b.body_offset, b.terminated)),
                "{:?}", text
            );
        }
    }

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
