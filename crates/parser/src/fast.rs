//! A fast path for the frontmatter most skills have: `key: value` lines, optionally one
//! level of indented `key: value` lines under a bare `key:` (as `metadata` is written),
//! with plain values that cannot mean anything but a string, number or boolean, simply
//! quoted ones, or one-line flow sequences of simple words (`[Read, Glob]`).
//!
//! It builds exactly the tree `yaml::parse` would, positions included, or gives up
//! (`None`) at the first line it is not sure of, and the full parser reads the text instead.
//! A differential test and a fuzz target hold the two to the same result whenever the fast
//! path accepts.

use std::borrow::Cow;

use crate::node::{Kind, Node, Scalar};

/// The most entries the fast path builds; larger documents go to the full parser, whose
/// limits then apply.
const MAX_ENTRIES: usize = 256;

/// The entries of a mapping, in order.
type Entries<'a> = Vec<(Node<'a>, Node<'a>)>;

/// Parses `text` if it is in the simple subset, else `None`.
pub(crate) fn parse(text: &str) -> Option<Node<'_>> {
    if memchr::memchr2(b'\r', b'\t', text.as_bytes()).is_some() {
        return None;
    }
    let mut top: Entries<'_> = Vec::new();
    // A bare `key:` waiting for its indented entries: (key, entries, indent).
    let mut open: Option<(Node<'_>, Entries<'_>, usize)> = None;
    let mut first_key: Option<(u32, u32)> = None;
    let mut count = 0usize;
    for (i, line) in text.split('\n').enumerate() {
        let line_no = u32::try_from(i + 1).ok()?;
        // Blank means spaces only: Rust's `trim` also drops characters YAML refuses (the
        // fuzzer found a lone vertical tab).
        if line.bytes().all(|b| b == b' ') {
            continue;
        }
        count += 1;
        if count > MAX_ENTRIES {
            return None;
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        if indent == 0 {
            if let Some((key, entries, _)) = open.take() {
                top.push(close(key, entries)?);
            }
            let (key, value) = entry(line, 0, line_no)?;
            first_key.get_or_insert((key.line, key.col));
            match value {
                Some(value) => top.push((key, value)),
                None => open = Some((key, Vec::new(), 0)),
            }
        } else {
            let (_, entries, open_indent) = open.as_mut()?;
            if *open_indent == 0 {
                *open_indent = indent;
            }
            if indent != *open_indent {
                return None;
            }
            let (key, value) = entry(&line[indent..], indent, line_no)?;
            entries.push((key, value?));
        }
    }
    if let Some((key, entries, _)) = open.take() {
        top.push(close(key, entries)?);
    }
    let (line, col) = first_key?;
    unique(&top)?;
    Some(Node {
        kind: Kind::Map(top),
        line,
        col,
    })
}

/// A bare `key:` and its indented entries, as a nested mapping placed at its first key.
fn close<'a>(key: Node<'a>, entries: Entries<'a>) -> Option<(Node<'a>, Node<'a>)> {
    let (first, _) = entries.first()?;
    let (line, col) = (first.line, first.col);
    unique(&entries)?;
    Some((
        key,
        Node {
            kind: Kind::Map(entries),
            line,
            col,
        },
    ))
}

/// Duplicate keys are an error: the full parser reports them.
fn unique(entries: &[(Node<'_>, Node<'_>)]) -> Option<()> {
    for (i, (a, _)) in entries.iter().enumerate() {
        for (b, _) in &entries[..i] {
            if text_of(a) == text_of(b) {
                return None;
            }
        }
    }
    Some(())
}

fn text_of<'n>(node: &'n Node<'_>) -> &'n str {
    match &node.kind {
        Kind::Scalar(s) => &s.text,
        _ => "",
    }
}

fn scalar(text: &str, plain: bool, line: u32, col: usize) -> Option<Node<'_>> {
    Some(Node {
        kind: Kind::Scalar(Scalar {
            text: Cow::Borrowed(text),
            plain,
            tagged: None,
        }),
        line,
        col: u32::try_from(col + 1).ok()?,
    })
}

/// `key: value` or `key:` (value `None`), the key at `indent` characters (spaces only).
fn entry(line: &str, indent: usize, line_no: u32) -> Option<(Node<'_>, Option<Node<'_>>)> {
    let colon = line.find(':')?;
    let key = &line[..colon];
    // YAML caps implicit keys at 1,024 characters (the fuzzer found it); real keys are short.
    if key.is_empty()
        || key.len() > 128
        || !key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return None;
    }
    let key_node = scalar(key, true, line_no, indent)?;
    let rest = &line[colon + 1..];
    if rest.is_empty() {
        return Some((key_node, None));
    }
    let value = rest.strip_prefix(' ')?;
    if value.is_empty() || value.starts_with(' ') || value.ends_with(' ') {
        return None;
    }
    // Control characters, special line breaks and byte-order marks are YAML's business in
    // every style (the fuzzer found a quoted NUL).
    if has_special(value) {
        return None;
    }
    // Columns count characters: the key is ASCII, so the value starts at byte = char.
    let col = indent + colon + 2;
    let node = match value.as_bytes()[0] {
        b'"' => {
            let inner = value.strip_prefix('"')?.strip_suffix('"')?;
            if inner.contains(['"', '\\']) {
                return None;
            }
            scalar(inner, false, line_no, col)?
        }
        b'\'' => {
            let inner = value.strip_prefix('\'')?.strip_suffix('\'')?;
            if inner.contains('\'') {
                return None;
            }
            scalar(inner, false, line_no, col)?
        }
        b'[' => flow_seq(value, line_no, col)?,
        _ => {
            if !safe_plain(value) {
                return None;
            }
            scalar(value, true, line_no, col)?
        }
    };
    Some((key_node, Some(node)))
}

/// The most items of a flow sequence the fast path builds: with [`MAX_ENTRIES`] it keeps
/// every tree it builds far below the full parser's node limit.
const MAX_FLOW_ITEMS: usize = 32;

/// A one-line flow sequence of simple words, `[rube]` or `[Read, Glob, Grep]` (as many
/// skills write `requires` and `allowed-tools`), its `[` at the 0-based column `col`: each
/// item a plain scalar of ASCII letters, digits and `-_./`, starting with a letter or
/// digit, items separated by commas and spaces. Anything else (nesting, quotes, a trailing
/// comma) is the full parser's.
fn flow_seq(value: &str, line: u32, col: usize) -> Option<Node<'_>> {
    let inner = value.strip_prefix('[')?.strip_suffix(']')?;
    let mut items = Vec::new();
    if !inner.bytes().all(|b| b == b' ') {
        let mut at = col + 1;
        for part in inner.split(',') {
            let item = part.trim_matches(' ');
            let simple = item
                .as_bytes()
                .first()
                .is_some_and(u8::is_ascii_alphanumeric)
                && item
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/'));
            if !simple || items.len() == MAX_FLOW_ITEMS {
                return None;
            }
            let lead = part.len() - part.trim_start_matches(' ').len();
            items.push(scalar(item, true, line, at + lead)?);
            at += part.len() + 1;
        }
    }
    Some(Node {
        kind: Kind::Seq(items),
        line,
        col: u32::try_from(col + 1).ok()?,
    })
}

/// A plain scalar whose meaning cannot depend on YAML's finer rules: it starts with no
/// indicator, holds no `: ` or ` #`, and ends with no `:`.
fn safe_plain(value: &str) -> bool {
    let bytes = value.as_bytes();
    if b"-?:,[]{}#&*!|>'\"%@`~".contains(&bytes[0]) || bytes.ends_with(b":") {
        return false;
    }
    // `: ` and ` #`, looked for from each `:` and `#` rather than at every pair of bytes.
    !memchr::memchr2_iter(b':', b'#', bytes).any(|i| {
        if bytes[i] == b':' {
            bytes.get(i + 1) == Some(&b' ')
        } else {
            i > 0 && bytes[i - 1] == b' '
        }
    })
}

/// Whether `value` holds a [`special`] character; ASCII text (the common case) is judged
/// by bytes, without decoding a character.
fn has_special(value: &str) -> bool {
    // One pass with no early exit, which compiles to vector code: is any byte outside
    // printable ASCII?
    let unusual = value
        .bytes()
        .fold(false, |seen, b| seen | !(0x20..0x7f).contains(&b));
    unusual && value.chars().any(special)
}

/// Control characters, and the characters YAML treats as line breaks or byte-order marks.
fn special(c: char) -> bool {
    c.is_control() || matches!(c, '\u{85}' | '\u{2028}' | '\u{2029}' | '\u{feff}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fast_path_agrees as agrees;

    #[test]
    fn accepts_the_common_shapes_and_agrees() {
        for text in [
            "name: pdf-tools\ndescription: Fill PDF forms. Use when asked.\n",
            "name: x\ndescription: 'quoted, with: colon'\nlicense: MIT\n",
            "name: x\nmetadata:\n  author: me\n  version: \"1.0\"\nallowed-tools: Read Bash(git log:*)\n",
            "\nname: x\n\ndescription: a\n",
            "name: 123\nversion: 1.0\nflag: true\ndescription: café — ünïcode\n",
            "name: x\nrequires:\n  mcp: [rube]\nallowed-tools: [Read, Glob,Grep ,  Bash]\n",
            "name: x\ntags: []\nempty: [ ]\nv: [1.0, true, null, a-b_c/d.e]\n",
        ] {
            assert!(parse(text).is_some(), "{text:?}");
            assert!(agrees(text), "{text:?}");
        }
    }

    #[test]
    fn gives_up_on_anything_else() {
        for text in [
            "",
            "# comment\nname: x\n",
            "name: x\r\n",
            "name: x\ndescription: Use when: asked\n",
            "name: x\nname: y\n",
            "name: [a, [b]]\n",
            "name: [a, b,]\n",
            "name: ['a']\n",
            "name: [-a]\n",
            "name: [a b]\n",
            "name: [a, b] # comment\n",
            &format!("name: [{}]\n", vec!["a"; 33].join(", ")),
            "name: &a x\n",
            "name: x\ndescription: >-\n  folded\n",
            "name: x\n  continued\n",
            "name:\n",
            "name: \"esc\\\"aped\"\n",
            "name: x # comment\n",
            "tags:\n  - a\n",
            "metadata:\n  a: 1\n   b: 2\n",
            "name: x \n",
            // Found by the fast_path fuzz target: control characters inside quotes.
            "name: \"a\u{11}\0b\"\n",
            "name: 'a\u{7f}'\n",
            "name: x\n\u{b}\nother: y\n",
            "name: x\n\u{a0}\nother: y\n",
            &format!("{}: x\n", "k".repeat(1100)),
        ] {
            assert!(parse(text).is_none(), "{text:?}");
        }
    }
}
