//! A fast path for the frontmatter most skills have: `key: value` lines, optionally one
//! level of indented `key: value` lines under a bare `key:` (as `metadata` is written),
//! each of which may itself be bare with a block sequence indented under it (as `requires`
//! is written: `requires:`, `  mcp:`, `    - rube`), or an indented block sequence of
//! simple items under one (as `allowed-tools` often is),
//! with plain values that cannot mean anything but a string, number or boolean, simply
//! quoted ones, one-line flow sequences of simple words (`[Read, Glob]`), or literal and
//! folded block scalars (`|`, `|-`, `>`, `>-`) whose lines are all indented alike (as long
//! descriptions are written).
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

/// What follows a key's colon on its line.
enum Value<'a> {
    /// A value on the line itself.
    Node(Node<'a>),
    /// Nothing: indented entries or items follow.
    Bare,
    /// A block scalar's header: its lines follow.
    Block(BlockStyle),
}

/// A block scalar's header, of the four the fast path reads.
#[derive(Clone, Copy)]
struct BlockStyle {
    /// `>`: lines joined by spaces; `|`: kept as lines.
    folded: bool,
    /// `-`: no final line break; else one (YAML's "clip").
    strip: bool,
}

/// A bare `key:` and what is indented under it, once its first indented line says which.
struct Open<'a> {
    key: Node<'a>,
    /// The indentation of its lines (0 until the first).
    indent: usize,
    body: Body<'a>,
    /// A bare key of its mapping whose block sequence is being read.
    inner: Option<Inner<'a>>,
}

/// A bare key inside an open mapping and the block sequence indented under it.
struct Inner<'a> {
    key: Node<'a>,
    /// The indentation of its items (0 until the first).
    indent: usize,
    items: Vec<Node<'a>>,
    /// Where its first `-` is.
    at: (u32, u32),
}

impl<'a> Open<'a> {
    /// Ends the sequence of the open mapping's bare key, if one is being read, as that
    /// key's value in the mapping; a bare key with no item under it is the full parser's
    /// (its value is null).
    fn end_inner(&mut self) -> Option<()> {
        let Some(inner) = self.inner.take() else {
            return Some(());
        };
        let Body::Map(entries) = &mut self.body else {
            return None;
        };
        if inner.items.is_empty() {
            return None;
        }
        let (line, col) = inner.at;
        entries.push((
            inner.key,
            Node {
                kind: Kind::Seq(inner.items),
                line,
                col,
            },
        ));
        Some(())
    }
}

enum Body<'a> {
    /// Nothing yet.
    Empty,
    Map(Entries<'a>),
    /// The items, and where the first `-` is.
    Seq(Vec<Node<'a>>, (u32, u32)),
}

/// A block scalar being read: the key it is the value of, at indentation `parent`, and
/// its lines so far, every one at indentation `indent` (that of the first).
struct Block<'a> {
    key: Node<'a>,
    style: BlockStyle,
    parent: usize,
    indent: usize,
    /// Its first line's number.
    line: u32,
    lines: Vec<&'a str>,
    /// An empty line came after its last line: only empty lines, then the scalar's end,
    /// may follow.
    ended: bool,
}

impl<'a> Block<'a> {
    /// A block scalar whose header is `key`'s value, the key at indentation `parent`.
    fn new(key: Node<'a>, style: BlockStyle, parent: usize) -> Block<'a> {
        Block {
            key,
            style,
            parent,
            indent: 0,
            line: 0,
            lines: Vec::new(),
            ended: false,
        }
    }

    /// Takes `line` (indented past `parent`) as this scalar's next line, or `None` when
    /// the fast path cannot be sure what it means: a line indented otherwise than the first
    /// (a more indented line keeps its line break when folded), after an empty line, ending
    /// in a space, or holding a character YAML treats specially.
    fn push(&mut self, line: &'a str, indent: usize, line_no: u32) -> Option<()> {
        if self.lines.is_empty() {
            self.indent = indent;
            self.line = line_no;
        }
        if indent != self.indent || self.ended || line.ends_with(' ') || has_special(line) {
            return None;
        }
        self.lines.push(&line[indent..]);
        Some(())
    }

    /// The key and its scalar; `None` for a scalar with no line (the full parser's).
    fn finish(self) -> Option<(Node<'a>, Node<'a>)> {
        if self.lines.is_empty() {
            return None;
        }
        let mut text = self.lines.join(if self.style.folded { " " } else { "\n" });
        if !self.style.strip {
            text.push('\n');
        }
        let value = Node {
            kind: Kind::Scalar(Scalar {
                text: Cow::Owned(text),
                plain: false,
                tagged: None,
            }),
            line: self.line,
            col: u32::try_from(self.indent + 1).ok()?,
        };
        Some((self.key, value))
    }
}

/// Parses `text` if it is in the simple subset, else `None`.
pub(crate) fn parse(text: &str) -> Option<Node<'_>> {
    if memchr::memchr2(b'\r', b'\t', text.as_bytes()).is_some() {
        return None;
    }
    // Room for the keys most frontmatter has, so the list grows once at most.
    let mut top: Entries<'_> = Vec::with_capacity(8);
    let mut open: Option<Open<'_>> = None;
    let mut block: Option<Block<'_>> = None;
    let mut first_key: Option<(u32, u32)> = None;
    let mut count = 0usize;
    // `text.split('\n')`, each line break found with `memchr` (vector code, where the
    // standard library's search looks a word at a time).
    let mut rest = Some(text);
    let lines = std::iter::from_fn(|| {
        let r = rest?;
        match memchr::memchr(b'\n', r.as_bytes()) {
            Some(end) => {
                rest = Some(&r[end + 1..]);
                Some(&r[..end])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    });
    for (i, line) in lines.enumerate() {
        let line_no = u32::try_from(i + 1).ok()?;
        // Blank means spaces only: Rust's `trim` also drops characters YAML refuses (the
        // fuzzer found a lone vertical tab).
        if line.bytes().all(|b| b == b' ') {
            if let Some(b) = block.as_mut() {
                // Spaces past a block's indentation are its text: only an empty line is
                // sure to be nothing but a line break, and only at the end (clipped).
                if !line.is_empty() {
                    return None;
                }
                b.ended = true;
            }
            continue;
        }
        count += 1;
        if count > MAX_ENTRIES {
            return None;
        }
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(b) = block.as_mut() {
            if indent > b.parent {
                b.push(line, indent, line_no)?;
                continue;
            }
            place(block.take()?, &mut top, &mut open)?;
        }
        if indent == 0 {
            if let Some(o) = open.take() {
                top.push(close(o)?);
            }
            let (key, value) = entry(line, 0, line_no)?;
            first_key.get_or_insert((key.line, key.col));
            match value {
                Value::Node(value) => top.push((key, value)),
                Value::Bare => {
                    open = Some(Open {
                        key,
                        indent: 0,
                        body: Body::Empty,
                        inner: None,
                    });
                }
                Value::Block(style) => block = Some(Block::new(key, style, 0)),
            }
        } else {
            let o = open.as_mut()?;
            if o.indent == 0 {
                o.indent = indent;
            }
            if let Some(inner) = o.inner.as_mut() {
                if indent > o.indent {
                    // An item of the bare key's sequence, every one at the first's indentation.
                    if inner.indent == 0 {
                        inner.indent = indent;
                        inner.at = (line_no, u32::try_from(indent + 1).ok()?);
                    }
                    if indent != inner.indent {
                        return None;
                    }
                    let item = line[indent..].strip_prefix("- ")?;
                    inner.items.push(value_node(item, line_no, indent + 2)?);
                    continue;
                }
                o.end_inner()?;
            }
            if indent != o.indent {
                return None;
            }
            let rest = &line[indent..];
            if let Some(item) = rest.strip_prefix("- ") {
                if matches!(o.body, Body::Empty) {
                    o.body = Body::Seq(Vec::new(), (line_no, u32::try_from(indent + 1).ok()?));
                }
                let Body::Seq(items, _) = &mut o.body else {
                    return None;
                };
                items.push(value_node(item, line_no, indent + 2)?);
                continue;
            }
            let (key, value) = entry(rest, indent, line_no)?;
            if matches!(o.body, Body::Empty) {
                o.body = Body::Map(Vec::new());
            }
            let Body::Map(entries) = &mut o.body else {
                return None;
            };
            match value {
                Value::Node(value) => entries.push((key, value)),
                Value::Bare => {
                    o.inner = Some(Inner {
                        key,
                        indent: 0,
                        items: Vec::new(),
                        at: (0, 0),
                    });
                }
                Value::Block(style) => block = Some(Block::new(key, style, indent)),
            }
        }
    }
    if let Some(b) = block.take() {
        // Its last line must end with a line break, which clipping keeps.
        if !text.ends_with('\n') {
            return None;
        }
        place(b, &mut top, &mut open)?;
    }
    if let Some(o) = open.take() {
        top.push(close(o)?);
    }
    let (line, col) = first_key?;
    unique(&top)?;
    Some(Node {
        kind: Kind::Map(top),
        line,
        col,
    })
}

/// Puts a finished block scalar's entry where its key is: at the top, or in the open
/// mapping its key is indented in.
fn place<'a>(block: Block<'a>, top: &mut Entries<'a>, open: &mut Option<Open<'a>>) -> Option<()> {
    let parent = block.parent;
    let done = block.finish()?;
    match open {
        _ if parent == 0 => top.push(done),
        // A key indented under a bare `key:` was read into its mapping (`parse` made the
        // body a mapping before reading the key), so the scalar goes there too. Nothing
        // else starts an indented block; were it ever to, the fast path declines.
        Some(Open {
            body: Body::Map(entries),
            ..
        }) => entries.push(done),
        _ => return None,
    }
    Some(())
}

/// A bare `key:` and what is indented under it: a nested mapping placed at its first
/// key, or a sequence placed at its first `-`. Nothing indented is the full parser's.
fn close(mut open: Open<'_>) -> Option<(Node<'_>, Node<'_>)> {
    open.end_inner()?;
    match open.body {
        Body::Empty => None,
        Body::Map(entries) => {
            let (first, _) = entries.first()?;
            let (line, col) = (first.line, first.col);
            unique(&entries)?;
            Some((
                open.key,
                Node {
                    kind: Kind::Map(entries),
                    line,
                    col,
                },
            ))
        }
        Body::Seq(items, (line, col)) => Some((
            open.key,
            Node {
                kind: Kind::Seq(items),
                line,
                col,
            },
        )),
    }
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

/// `key: value`, `key:` (its value indented below) or `key: |` (a block scalar's
/// header), the key at `indent` characters (spaces only).
fn entry(line: &str, indent: usize, line_no: u32) -> Option<(Node<'_>, Value<'_>)> {
    let colon = memchr::memchr(b':', line.as_bytes())?;
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
        return Some((key_node, Value::Bare));
    }
    let value = rest.strip_prefix(' ')?;
    let (folded, strip) = match value {
        "|" => (false, false),
        "|-" => (false, true),
        ">" => (true, false),
        ">-" => (true, true),
        // Columns count characters: the key is ASCII, so the value starts at byte = char.
        _ => {
            let node = value_node(value, line_no, indent + colon + 2)?;
            return Some((key_node, Value::Node(node)));
        }
    };
    Some((key_node, Value::Block(BlockStyle { folded, strip })))
}

/// A value written on its line (after `key: ` or `- `), starting at the 0-based column
/// `col`: simply quoted, a one-line flow sequence of simple words, or a plain scalar whose
/// meaning cannot depend on YAML's finer rules.
fn value_node(value: &str, line_no: u32, col: usize) -> Option<Node<'_>> {
    if value.is_empty() || value.starts_with(' ') || value.ends_with(' ') {
        return None;
    }
    // Control characters, special line breaks and byte-order marks are YAML's business in
    // every style (the fuzzer found a quoted NUL).
    if has_special(value) {
        return None;
    }
    match value.as_bytes()[0] {
        b'"' => {
            let inner = value.strip_prefix('"')?.strip_suffix('"')?;
            if memchr::memchr2(b'"', b'\\', inner.as_bytes()).is_some() {
                return None;
            }
            scalar(inner, false, line_no, col)
        }
        b'\'' => {
            let inner = value.strip_prefix('\'')?.strip_suffix('\'')?;
            if memchr::memchr(b'\'', inner.as_bytes()).is_some() {
                return None;
            }
            scalar(inner, false, line_no, col)
        }
        b'[' => flow_seq(value, line_no, col),
        _ => {
            if !safe_plain(value) {
                return None;
            }
            scalar(value, true, line_no, col)
        }
    }
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
            "name: x\ndescription: >-\n  folded\n",
            "name: x\ndescription: |\n  line one: kept\n  # not a comment\nlicense: MIT\n",
            "description: >\n    a b\n    c\n\n\nname: x\n",
            "description: |-\n  a\n  b\n",
            "metadata:\n  short: >-\n    folded under\n    metadata\n  author: me\nname: x\n",
            "tags:\n  - a\n",
            "metadata:\n  k: |\n    text\nname: x\n",
            "allowed-tools:\n    - Read\n    - 'Bash(git *)'\n    - \"Write\"\n    - [a, b]\nname: x\n",
            // A block sequence under a bare key of a nested mapping, as `requires` is written.
            "m:\n  tags:\n    - a\n",
            "requires:\n  mcp:\n    - rube\n    - github\n  bins: [git]\nname: x\n",
            "requires:\n  env:\n    - A\n  mcp:\n   - rube\n",
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
            "name: x\n  continued\n",
            // Block scalars beyond the four headers, or whose lines the fast path cannot
            // be sure of.
            "description: >-\n  folded\n\n  more\n",
            "description: |\n  a\n    b\n",
            "description: |\n    a\n  b\n",
            "description: |2\n  a\n",
            "description: |+\n  a\n",
            "description: | # c\n  a\n",
            "description: |\n  a \n",
            "description: |\n  a\n  \n",
            "description: |\nname: x\n",
            "description: |\n  a",
            "description: >\n  a\u{85}b\n",
            // Block sequences other than one indented list of simple items.
            "tags:\n  - a\n  b: c\n",
            "tags:\n  b: c\n  - a\n",
            "tags:\n- a\n",
            "tags:\n  - a: b\n",
            "tags:\n  - |\n    a\n",
            "tags:\n  -\n",
            "tags:\n  - a\n   - b\n",
            // Under a nested bare key: no item, an item at the key's own indentation, items
            // indented unlike the first, a mapping, a duplicate key.
            "m:\n  tags:\n",
            "m:\n  tags:\n  - a\n",
            "m:\n  tags:\n    - a\n     - b\n",
            "m:\n  tags:\n    k: v\n",
            "m:\n  tags:\n    - a\n  tags: b\n",
            "metadata:\n  k: |\n    text\n name: x\n",
            "name:\n",
            "name: \"esc\\\"aped\"\n",
            "name: x # comment\n",
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
