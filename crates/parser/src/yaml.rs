//! The one place that uses the YAML crate: text in, a small tree of positioned nodes out.
//!
//! `saphyr-parser` gives events with spans and scalar styles. The tree built here keeps each
//! scalar's source text, style and tag, so typing happens later under the YAML 1.2 core
//! schema and never through a YAML 1.1 guess (`no` stays a string; `1.10` stays `1.10`).
//! Building is bounded: nesting depth and the number of nodes (alias expansions included)
//! are capped, and the parse stops at the first error (the event iterator repeats an error
//! forever, so it must never be drained after one).

use std::borrow::Cow;
use std::collections::HashSet;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

/// Most bytes of scalar text that alias expansions may add to the tree. The node cap alone
/// does not bound memory: an alias to a long scalar is one node but a full copy of its text
/// (in the tree, and again in every owned value later read from it).
const MAX_ALIAS_BYTES: usize = 1 << 20;

/// Limits on what a frontmatter may expand to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Deepest nesting of sequences and mappings.
    pub(crate) max_depth: usize,
    /// Most nodes in the tree, counting every alias expansion.
    pub(crate) max_nodes: usize,
}

/// A node of the tree, with its 1-based line and column in the YAML text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node<'a> {
    pub(crate) kind: Kind<'a>,
    pub(crate) line: u32,
    pub(crate) col: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind<'a> {
    Scalar(Scalar<'a>),
    Seq(Vec<Node<'a>>),
    Map(Vec<(Node<'a>, Node<'a>)>),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scalar<'a> {
    pub(crate) text: Cow<'a, str>,
    pub(crate) plain: bool,
    /// The core-schema type a tag asks for (`!!str` gives `Some(Str)`), if any.
    pub(crate) tagged: Option<ScalarType>,
}

/// What a scalar is under the YAML 1.2 core schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScalarType {
    Null,
    Bool,
    Int,
    Float,
    Str,
}

impl ScalarType {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            ScalarType::Null => "null",
            ScalarType::Bool => "a boolean",
            ScalarType::Int => "an integer",
            ScalarType::Float => "a number",
            ScalarType::Str => "a string",
        }
    }
}

impl Scalar<'_> {
    /// The scalar's type: quoted and block scalars are strings, a tag decides for itself,
    /// and a plain scalar is resolved by the core schema.
    pub(crate) fn resolve(&self) -> ScalarType {
        if let Some(t) = self.tagged {
            return t;
        }
        if !self.plain {
            return ScalarType::Str;
        }
        resolve_plain(&self.text)
    }
}

fn resolve_plain(text: &str) -> ScalarType {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return ScalarType::Null,
        "true" | "True" | "TRUE" | "false" | "False" | "FALSE" => return ScalarType::Bool,
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => return ScalarType::Float,
        _ => {}
    }
    let b = text.as_bytes();
    let digits =
        |s: &[u8], radix: u32| !s.is_empty() && s.iter().all(|c| (*c as char).is_digit(radix));
    if let Some(rest) = text.strip_prefix("0o") {
        if digits(rest.as_bytes(), 8) {
            return ScalarType::Int;
        }
    }
    if let Some(rest) = text.strip_prefix("0x") {
        if digits(rest.as_bytes(), 16) {
            return ScalarType::Int;
        }
    }
    let unsigned = match b.first() {
        Some(b'-' | b'+') => &b[1..],
        _ => b,
    };
    if digits(unsigned, 10) {
        return ScalarType::Int;
    }
    // [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
    let (mantissa, exponent) = match unsigned.iter().position(|c| *c == b'e' || *c == b'E') {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let mantissa_ok = match mantissa.iter().position(|c| *c == b'.') {
        Some(dot) => {
            let (int, frac) = (&mantissa[..dot], &mantissa[dot + 1..]);
            (int.is_empty() && digits(frac, 10))
                || (digits(int, 10) && (frac.is_empty() || digits(frac, 10)))
        }
        None => false,
    };
    let exponent_ok = match exponent {
        None => true,
        Some(e) => {
            let e = match e.first() {
                Some(b'-' | b'+') => &e[1..],
                _ => e,
            };
            digits(e, 10)
        }
    };
    // An exponent without a dot (`1e5`) is a float in the 1.2 core schema too.
    let int_with_exponent = exponent.is_some() && digits(mantissa, 10);
    if (mantissa_ok || int_with_exponent) && exponent_ok {
        return ScalarType::Float;
    }
    ScalarType::Str
}

fn tag_type(handle: &str, suffix: &str) -> Option<ScalarType> {
    if handle != "tag:yaml.org,2002:" && handle != "!!" {
        return Some(ScalarType::Str);
    }
    Some(match suffix {
        "null" => ScalarType::Null,
        "bool" => ScalarType::Bool,
        "int" => ScalarType::Int,
        "float" => ScalarType::Float,
        _ => ScalarType::Str,
    })
}

/// Why the YAML could not be read, with a 1-based place in the YAML text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct YamlError {
    pub(crate) kind: YamlErrorKind,
    pub(crate) message: String,
    pub(crate) line: u32,
    pub(crate) col: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum YamlErrorKind {
    /// The text is not YAML (or has a duplicate key, or several documents).
    Syntax,
    /// The text is YAML but over a limit.
    Limit,
}

enum Frame<'a> {
    Seq {
        node: Node<'a>,
        anchor: usize,
        items: Vec<Node<'a>>,
    },
    Map {
        node: Node<'a>,
        anchor: usize,
        entries: Vec<(Node<'a>, Node<'a>)>,
        key: Option<Node<'a>>,
    },
}

fn place(span: &Span) -> (u32, u32) {
    let line = u32::try_from(span.start.line()).unwrap_or(u32::MAX);
    let col = u32::try_from(span.start.col() + 1).unwrap_or(u32::MAX);
    (line, col)
}

/// Parses one YAML document. An empty document is `Ok(None)`.
pub(crate) fn parse(text: &str, limits: Limits) -> Result<Option<Node<'_>>, YamlError> {
    // The fast path's tree is taken only within the limits the full parser would apply,
    // so a parser built with lower limits gives the same verdict either way.
    if let Some(root) = crate::fast::parse(text) {
        let (depth, nodes) = extent(&root);
        if depth <= limits.max_depth && nodes <= limits.max_nodes {
            return Ok(Some(root));
        }
    }
    parse_full(text, limits)
}

/// A tree's nesting depth (sequences and mappings) and node count, as [`parse_full`]
/// counts them against its [`Limits`].
fn extent(node: &Node<'_>) -> (usize, usize) {
    let inner = |nodes: &mut dyn Iterator<Item = &Node<'_>>| {
        nodes.fold((0, 0), |(depth, count), n| {
            let (d, c) = extent(n);
            (depth.max(d), count + c)
        })
    };
    match &node.kind {
        Kind::Scalar(_) => (0, 1),
        Kind::Seq(items) => {
            let (depth, count) = inner(&mut items.iter());
            (depth + 1, count + 1)
        }
        Kind::Map(entries) => {
            let (depth, count) = inner(&mut entries.iter().flat_map(|(k, v)| [k, v]));
            (depth + 1, count + 1)
        }
    }
}

/// The full YAML parser (what [`parse`] falls back to).
pub(crate) fn parse_full(text: &str, limits: Limits) -> Result<Option<Node<'_>>, YamlError> {
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut anchors: Vec<(usize, Node<'_>)> = Vec::new();
    let mut nodes = 0usize;
    let mut alias_bytes = 0usize;
    let mut root: Option<Node<'_>> = None;
    let mut documents = 0usize;
    let limit = |message: String, (line, col): (u32, u32)| YamlError {
        kind: YamlErrorKind::Limit,
        message,
        line,
        col,
    };
    let syntax = |message: String, (line, col): (u32, u32)| YamlError {
        kind: YamlErrorKind::Syntax,
        message,
        line,
        col,
    };

    for item in Parser::new_from_str(text) {
        let (event, span) = match item {
            Ok(pair) => pair,
            Err(e) => {
                let line = u32::try_from(e.marker().line()).unwrap_or(u32::MAX);
                let col = u32::try_from(e.marker().col() + 1).unwrap_or(u32::MAX);
                return Err(syntax(e.info().to_owned(), (line, col)));
            }
        };
        let at = place(&span);
        let (finished, anchor) = match event {
            Event::StreamStart | Event::Nothing | Event::DocumentEnd => continue,
            Event::StreamEnd => break,
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(syntax(
                        "more than one YAML document in the frontmatter".into(),
                        at,
                    ));
                }
                continue;
            }
            Event::Scalar(text, style, anchor, tag) => {
                let tagged = tag.as_ref().and_then(|t| tag_type(&t.handle, &t.suffix));
                let node = Node {
                    kind: Kind::Scalar(Scalar {
                        text,
                        plain: style == ScalarStyle::Plain,
                        tagged,
                    }),
                    line: at.0,
                    col: at.1,
                };
                (node, anchor)
            }
            Event::Alias(id) => {
                let Some((_, target)) = anchors.iter().rev().find(|(a, _)| *a == id) else {
                    return Err(syntax("an alias to an unknown anchor".into(), at));
                };
                let (size, bytes) = count(target, limits.max_nodes.saturating_sub(nodes) + 1);
                nodes += size;
                alias_bytes += bytes;
                if nodes > limits.max_nodes {
                    return Err(limit(
                        format!("aliases expand past {} nodes", limits.max_nodes),
                        at,
                    ));
                }
                if alias_bytes > MAX_ALIAS_BYTES {
                    return Err(limit(
                        format!("aliases expand past {MAX_ALIAS_BYTES} bytes of text"),
                        at,
                    ));
                }
                (
                    Node {
                        line: at.0,
                        col: at.1,
                        ..target.clone()
                    },
                    0,
                )
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if stack.len() >= limits.max_depth {
                    return Err(limit(
                        format!("nesting deeper than {} levels", limits.max_depth),
                        at,
                    ));
                }
                nodes += 1;
                if nodes > limits.max_nodes {
                    return Err(limit(format!("more than {} nodes", limits.max_nodes), at));
                }
                let is_seq = matches!(event, Event::SequenceStart(..));
                let node = Node {
                    kind: Kind::Seq(Vec::new()),
                    line: at.0,
                    col: at.1,
                };
                stack.push(if is_seq {
                    Frame::Seq {
                        node,
                        anchor,
                        items: Vec::new(),
                    }
                } else {
                    Frame::Map {
                        node,
                        anchor,
                        entries: Vec::new(),
                        key: None,
                    }
                });
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Frame::Seq {
                    mut node,
                    anchor,
                    items,
                }) => {
                    node.kind = Kind::Seq(items);
                    (node, anchor)
                }
                Some(Frame::Map {
                    mut node,
                    anchor,
                    entries,
                    ..
                }) => {
                    check_duplicates(&entries).map_err(|(msg, at)| syntax(msg, at))?;
                    node.kind = Kind::Map(entries);
                    (node, anchor)
                }
                None => return Err(syntax("unbalanced collection end".into(), at)),
            },
        };
        if !matches!(finished.kind, Kind::Seq(_) | Kind::Map(_)) {
            nodes += 1;
            if nodes > limits.max_nodes {
                return Err(limit(format!("more than {} nodes", limits.max_nodes), at));
            }
        }
        if anchor != 0 {
            anchors.push((anchor, finished.clone()));
        }
        match stack.last_mut() {
            None => root = Some(finished),
            Some(Frame::Seq { items, .. }) => items.push(finished),
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                None => *key = Some(finished),
                Some(k) => entries.push((k, finished)),
            },
        }
    }
    Ok(root)
}

/// Counts nodes in `node` and the bytes of their scalar text, stopping once `cap` nodes are
/// reached.
fn count(node: &Node<'_>, cap: usize) -> (usize, usize) {
    let mut total = 0;
    let mut bytes = 0;
    let mut work = vec![node];
    while let Some(n) = work.pop() {
        total += 1;
        if total >= cap {
            return (total, bytes);
        }
        match &n.kind {
            Kind::Scalar(s) => bytes += s.text.len(),
            Kind::Seq(items) => work.extend(items),
            Kind::Map(entries) => {
                for (k, v) in entries {
                    work.push(k);
                    work.push(v);
                }
            }
        }
    }
    (total, bytes)
}

fn check_duplicates(entries: &[(Node<'_>, Node<'_>)]) -> Result<(), (String, (u32, u32))> {
    let mut seen = HashSet::with_capacity(entries.len());
    for (key, _) in entries {
        if let Kind::Scalar(s) = &key.kind {
            if !seen.insert(s.text.as_ref()) {
                return Err((
                    format!("duplicate key `{}`: each key may appear once", s.text),
                    (key.line, key.col),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        max_depth: 16,
        max_nodes: 1000,
    };

    #[test]
    fn resolves_plain_scalars_by_the_core_schema() {
        for (text, t) in [
            ("", ScalarType::Null),
            ("~", ScalarType::Null),
            ("true", ScalarType::Bool),
            ("no", ScalarType::Str),
            ("yes", ScalarType::Str),
            ("123", ScalarType::Int),
            ("-7", ScalarType::Int),
            ("0x1F", ScalarType::Int),
            ("0o17", ScalarType::Int),
            ("1.0", ScalarType::Float),
            ("1.10", ScalarType::Float),
            (".5", ScalarType::Float),
            ("1e5", ScalarType::Float),
            ("-.inf", ScalarType::Float),
            ("1.2.3", ScalarType::Str),
            ("v1", ScalarType::Str),
            ("1.", ScalarType::Float),
            (".", ScalarType::Str),
            ("-", ScalarType::Str),
        ] {
            assert_eq!(resolve_plain(text), t, "{text:?}");
        }
    }

    #[test]
    fn keeps_source_text_and_style() {
        let root = parse("a: 1.10\nb: '1.10'\nc: !!str 5\n", LIMITS)
            .unwrap()
            .unwrap();
        let Kind::Map(entries) = root.kind else {
            panic!("not a map")
        };
        let types: Vec<_> = entries
            .iter()
            .map(|(_, v)| match &v.kind {
                Kind::Scalar(s) => (s.text.to_string(), s.resolve()),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            types,
            [
                ("1.10".to_string(), ScalarType::Float),
                ("1.10".to_string(), ScalarType::Str),
                ("5".to_string(), ScalarType::Str)
            ]
        );
    }

    #[test]
    fn stops_at_the_first_error() {
        let e = parse("name: x\ndescription: Use when: asked\n", LIMITS).unwrap_err();
        assert_eq!((e.kind, e.line), (YamlErrorKind::Syntax, 2));
    }

    #[test]
    fn refuses_duplicate_keys_and_second_documents() {
        let e = parse("a: 1\nb: 2\na: 3\n", LIMITS).unwrap_err();
        assert_eq!((e.line, e.col), (3, 1));
        assert!(parse("a: 1\n...\n---\nb: 2\n", LIMITS).is_err());
    }

    #[test]
    fn caps_depth_and_alias_expansion() {
        let deep = format!("a: {}{}", "[".repeat(100), "]".repeat(100));
        assert_eq!(parse(&deep, LIMITS).unwrap_err().kind, YamlErrorKind::Limit);
        let mut laughs = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = i - 1;
            laughs.push_str(&format!("a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"));
        }
        assert_eq!(
            parse(&laughs, LIMITS).unwrap_err().kind,
            YamlErrorKind::Limit
        );
    }

    #[test]
    fn empty_text_is_no_document() {
        assert_eq!(parse("", LIMITS).unwrap(), None);
        assert_eq!(parse("# only a comment\n", LIMITS).unwrap(), None);
    }
}
