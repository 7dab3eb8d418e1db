//! The lenient loader's repairs: what Claude Code and Codex accept although the written
//! specification does not, re-read the way they read it. A repair never changes the strict
//! verdict: the strict diagnostics stay, and each repair adds a `loader.repair` warning that
//! says what was assumed and where.
//!
//! - Delimiter lines with trailing spaces or tabs (`--- `) open and close the frontmatter.
//! - A plain value holding `: ` (`description: Use when: the user asks`), which YAML reads
//!   as a second key, is re-read as text, with its continuation lines, never inside a block
//!   scalar (`key: |` and the lines indented under it are left alone).
//! - A value, a block list's item or an item of a one-line flow list (`tags: [next,
//!   @supabase/ssr]`) that starts with `@` or a backtick, which YAML reserves, is re-read
//!   as text (Codex quotes such values too), outside block scalars.
//! - A missing `name` is the folder's name (see `lib.rs`).

use skills_model::{Diagnostic, Rule, Severity};

use crate::split::Split;

/// A warning that the loader assumed something, placed at a 1-based line and column.
pub(crate) fn warning(message: String, line: u32, column: u32) -> Diagnostic {
    Diagnostic::new(Rule::LoaderRepair, Severity::Warning, message).at(line, column)
}

/// The frontmatter found with delimiter lines whose trailing spaces and tabs are ignored,
/// and the 1-based numbers of the delimiter lines that had them. `None` when even so there
/// is no frontmatter, or when nothing was relaxed (the strict split then stands).
pub(crate) fn relaxed_split(text: &str, limit: usize) -> Option<(Split<'_>, Vec<u32>)> {
    let is_delimiter = |line: &str| line.trim_end_matches([' ', '\t', '\r', '\n']) == "---";
    let mut offset = 0;
    let mut relaxed = Vec::new();
    let mut yaml_start = None;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let exact = line.trim_end_matches(['\r', '\n']) == "---";
        match yaml_start {
            None => {
                if !is_delimiter(line) {
                    return None;
                }
                if !exact {
                    relaxed.push(number);
                }
                yaml_start = Some(offset + line.len());
            }
            Some(start) if is_delimiter(line) => {
                if !exact {
                    relaxed.push(number);
                }
                if relaxed.is_empty() || offset - start > limit {
                    return None;
                }
                let split = Split {
                    yaml: &text[start..offset],
                    body_offset: offset + line.len(),
                };
                return Some((split, relaxed));
            }
            Some(_) => {}
        }
        offset += line.len();
    }
    None
}

/// `yaml` with every plain value that holds `: ` (and its continuation lines) turned into a
/// double-quoted scalar, line for line (so places do not move), and the 1-based lines (in
/// the YAML) of the values re-read. `None` when there is nothing to repair.
pub(crate) fn quote_colon_values(yaml: &str) -> Option<(String, Vec<(u32, String)>)> {
    let lines: Vec<&str> = yaml.split('\n').collect();
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    let mut repaired = Vec::new();
    let mut block: Option<usize> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end_matches('\r');
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(block_indent) = block {
            if line.trim().is_empty() || indent > block_indent {
                i += 1;
                continue;
            }
            block = None;
        }
        let Some((key_end, value_start)) = key_value(line) else {
            i += 1;
            continue;
        };
        let value = line[value_start..].trim_end();
        if value.starts_with(['|', '>']) {
            block = Some(indent);
            i += 1;
            continue;
        }
        let plain = !value.is_empty()
            && !value.starts_with(['"', '\'', '[', '{', '&', '*', '!', '#', '%', '@', '`']);
        if !plain || !(value.contains(": ") || value.ends_with(':')) {
            i += 1;
            continue;
        }
        // The value's continuation lines: indented deeper than the key, until a line that
        // is not.
        let mut last = i;
        while last + 1 < lines.len() {
            let next = lines[last + 1].trim_end_matches('\r');
            let next_indent = next.len() - next.trim_start_matches(' ').len();
            if next.trim().is_empty() || next_indent <= indent {
                break;
            }
            last += 1;
        }
        let escape = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
        let key = &line[..key_end];
        repaired.push((
            u32::try_from(i + 1).unwrap_or(u32::MAX),
            key.trim().trim_start_matches("- ").to_owned(),
        ));
        if last == i {
            out[i] = format!("{}: \"{}\"", key, escape(value));
        } else {
            out[i] = format!("{}: \"{}", key, escape(value));
            for (j, continuation) in out.iter_mut().enumerate().take(last + 1).skip(i + 1) {
                let text = lines[j].trim_end_matches('\r');
                *continuation = if j == last {
                    format!("{}\"", escape(text))
                } else {
                    escape(text)
                };
            }
        }
        i = last + 1;
    }
    (!repaired.is_empty()).then(|| (out.join("\n"), repaired))
}

/// YAML reserves these to start a plain scalar.
const RESERVED: [char; 2] = ['@', '`'];

/// `yaml` with every value that starts with a reserved indicator (`@`, a backtick) quoted,
/// line for line: a plain value (`key: @x`), a block list's item (`- @x`), an item of a
/// one-line flow list (`[next,@supabase/ssr]`, with no nested brackets or quotes); never
/// inside a block scalar. With the `loader.repair` warning of each, placed in the file (the
/// YAML's first line is the file's second). `None` when there is nothing to repair.
pub(crate) fn quote_reserved_starts(yaml: &str) -> Option<(String, Vec<Diagnostic>)> {
    let mut out: Vec<String> = Vec::new();
    let mut warnings = Vec::new();
    let mut block: Option<usize> = None;
    for (i, raw) in yaml.split('\n').enumerate() {
        let line = raw.trim_end_matches('\r');
        let indent = line.len() - line.trim_start_matches(' ').len();
        if block.is_some_and(|b| line.trim().is_empty() || indent > b) {
            out.push(raw.to_owned());
            continue;
        }
        block = None;
        let file_line = u32::try_from(i + 2).unwrap_or(u32::MAX);
        let value_start = match key_value(line) {
            Some((_, start)) => Some(start),
            None => line[indent..].starts_with("- ").then(|| {
                let after = &line[indent + 2..];
                indent + 2 + (after.len() - after.trim_start().len())
            }),
        };
        let Some(start) = value_start else {
            out.push(raw.to_owned());
            continue;
        };
        let value = line[start..].trim_end();
        if value.starts_with(['|', '>']) {
            block = Some(indent);
        }
        let items = if value.starts_with(RESERVED) {
            vec![(start, value.len())]
        } else {
            flow_items(value)
                .into_iter()
                .filter(|(at, len)| value[*at..*at + len].starts_with(RESERVED))
                .map(|(at, len)| (start + at, len))
                .collect()
        };
        if items.is_empty() {
            out.push(raw.to_owned());
            continue;
        }
        let mut fixed = String::with_capacity(raw.len() + 4 * items.len());
        let mut copied = 0;
        for (at, len) in items {
            let text = &line[at..at + len];
            fixed.push_str(&line[copied..at]);
            fixed.push('"');
            fixed.push_str(&text.replace('\\', "\\\\").replace('"', "\\\""));
            fixed.push('"');
            copied = at + len;
            let column = u32::try_from(line[..at].chars().count() + 1).unwrap_or(u32::MAX);
            warnings.push(warning(
                format!("`{text}` starts with `{}`, which YAML reserves, so it cannot start an unquoted value; the loader reads it as text, as Codex does (quote it: `\"{text}\"`)", &text[..1]),
                file_line,
                column,
            ));
        }
        fixed.push_str(&raw[copied..]);
        out.push(fixed);
    }
    (!warnings.is_empty()).then(|| (out.join("\n"), warnings))
}

/// The items of a one-line flow list (`[a, b]`) as (offset, length) in `value`: none when
/// `value` is not one, or holds quotes or nested brackets (left to the YAML parser).
fn flow_items(value: &str) -> Vec<(usize, usize)> {
    let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) else {
        return Vec::new();
    };
    if inner.contains(['[', ']', '{', '}', '"', '\'']) {
        return Vec::new();
    }
    let mut items = Vec::new();
    let mut offset = 1;
    for item in inner.split(',') {
        let lead = item.len() - item.trim_start().len();
        let text = item.trim();
        if !text.is_empty() {
            items.push((offset + lead, text.len()));
        }
        offset += item.len() + 1;
    }
    items
}

/// Where a `key: value` line's key ends and its value starts, for a simple key (letters,
/// digits, `_`, `-`, `.`, after an optional `- ` of a sequence entry).
fn key_value(line: &str) -> Option<(usize, usize)> {
    let body = line.trim_start_matches(' ');
    let lead = line.len() - body.len();
    let body_start = if body.starts_with("- ") {
        lead + 2
    } else {
        lead
    };
    let rest = &line[body_start..];
    let colon = rest.find(':')?;
    let key = &rest[..colon];
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return None;
    }
    let after = &rest[colon + 1..];
    if !after.starts_with(' ') {
        return None;
    }
    let value_start = body_start + colon + 1 + (after.len() - after.trim_start().len());
    Some((body_start + colon, value_start))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_holding_colon_space_are_quoted_line_for_line() {
        let yaml = "name: x\ndescription: Use when: the user asks\nother: fine\n";
        let (fixed, lines) = quote_colon_values(yaml).unwrap();
        assert_eq!(
            fixed,
            "name: x\ndescription: \"Use when: the user asks\"\nother: fine\n"
        );
        assert_eq!(lines, [(2, "description".to_owned())]);
        let yaml = "description: Use when: asked\n  and \"more\"\nnext: 1";
        let (fixed, _) = quote_colon_values(yaml).unwrap();
        assert_eq!(
            fixed,
            "description: \"Use when: asked\n  and \\\"more\\\"\"\nnext: 1"
        );
        // Inside a block scalar nothing is touched; after it, repairs go on.
        let yaml = "notes: |\n  a: b\n  c: d\nwhen: Use when: x\n";
        let (fixed, lines) = quote_colon_values(yaml).unwrap();
        assert_eq!(fixed, "notes: |\n  a: b\n  c: d\nwhen: \"Use when: x\"\n");
        assert_eq!(lines, [(4, "when".to_owned())]);
        assert!(quote_colon_values("a: \"b: c\"\nd: 'e: f'\n").is_none());
    }

    #[test]
    fn values_starting_with_a_reserved_indicator_are_quoted_line_for_line() {
        let yaml = "tags: [next,@supabase/ssr, `x`]\nhint: @file\nlist:\n  - @scope/pkg\n  - fine\nnotes: |\n  @kept\nok: [a, b]";
        let (fixed, warnings) = quote_reserved_starts(yaml).unwrap();
        assert_eq!(
            fixed,
            "tags: [next,\"@supabase/ssr\", \"`x`\"]\nhint: \"@file\"\nlist:\n  - \"@scope/pkg\"\n  - fine\nnotes: |\n  @kept\nok: [a, b]"
        );
        let places: Vec<(Option<u32>, Option<u32>)> =
            warnings.iter().map(|d| (d.line, d.column)).collect();
        assert_eq!(
            places,
            [
                (Some(2), Some(13)),
                (Some(2), Some(28)),
                (Some(3), Some(7)),
                (Some(5), Some(5))
            ]
        );
        assert!(quote_reserved_starts("a: [\"@x\", b]\nc: 'd'\n").is_none());
    }

    #[test]
    fn delimiters_with_trailing_blanks_are_relaxed() {
        let (split, lines) = relaxed_split("--- \nname: x\n---\t\nbody\n", 1 << 16).unwrap();
        assert_eq!(split.yaml, "name: x\n");
        assert_eq!(lines, [1, 3]);
        assert!(relaxed_split("---\nname: x\n---\n", 1 << 16).is_none());
        assert!(relaxed_split("-- \nname: x\n", 1 << 16).is_none());
    }
}
