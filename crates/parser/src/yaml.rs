//! The one place that uses the YAML crate: text in, a small tree of positioned nodes out.
//!
//! `saphyr-parser` gives events with spans and scalar styles. The tree built here keeps each
//! scalar's source text, style and tag, so typing happens later under the YAML 1.2 core
//! schema and never through a YAML 1.1 guess (`no` stays a string; `1.10` stays `1.10`).
//! Building is bounded: nesting depth and the number of nodes (alias expansions included)
//! are capped, and the parse stops at the first error (the event iterator repeats an error
//! forever, so it must never be drained after one).

use std::collections::HashSet;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

use crate::node::{Kind, Node, Scalar, ScalarType};

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
    let mut build = Build::new(limits);
    for item in Parser::new_from_str(text) {
        let (event, span) = item.map_err(|e| {
            let line = u32::try_from(e.marker().line()).unwrap_or(u32::MAX);
            let col = u32::try_from(e.marker().col() + 1).unwrap_or(u32::MAX);
            syntax(e.info().to_owned(), (line, col))
        })?;
        let at = place(&span);
        let (finished, anchor) = match event {
            Event::StreamStart | Event::Nothing | Event::DocumentEnd => continue,
            Event::StreamEnd => break,
            Event::DocumentStart(_) => {
                build.document(at)?;
                continue;
            }
            Event::Scalar(text, style, anchor, tag) => {
                let tagged = tag.as_ref().and_then(|t| tag_type(&t.handle, &t.suffix));
                let scalar = Scalar {
                    text,
                    plain: style == ScalarStyle::Plain,
                    tagged,
                };
                (node_at(Kind::Scalar(scalar), at), anchor)
            }
            Event::Alias(id) => (build.alias(id, at)?, 0),
            Event::SequenceStart(anchor, _) => {
                let node = build.enter(at)?;
                build.stack.push(Frame::Seq {
                    node,
                    anchor,
                    items: Vec::new(),
                });
                continue;
            }
            Event::MappingStart(anchor, _) => {
                let node = build.enter(at)?;
                build.stack.push(Frame::Map {
                    node,
                    anchor,
                    entries: Vec::new(),
                    key: None,
                });
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => build.close(at)?,
        };
        build.place(finished, anchor, at)?;
    }
    Ok(build.root)
}

fn node_at(kind: Kind<'_>, (line, col): (u32, u32)) -> Node<'_> {
    Node { kind, line, col }
}

fn limit(message: String, (line, col): (u32, u32)) -> YamlError {
    YamlError {
        kind: YamlErrorKind::Limit,
        message,
        line,
        col,
    }
}

fn syntax(message: String, (line, col): (u32, u32)) -> YamlError {
    YamlError {
        kind: YamlErrorKind::Syntax,
        message,
        line,
        col,
    }
}

/// One full parse under way: the collections still open, the anchors seen, and the counts
/// held against the [`Limits`].
struct Build<'a> {
    limits: Limits,
    stack: Vec<Frame<'a>>,
    anchors: Vec<(usize, Node<'a>)>,
    nodes: usize,
    alias_bytes: usize,
    root: Option<Node<'a>>,
    documents: usize,
}

impl<'a> Build<'a> {
    fn new(limits: Limits) -> Self {
        Build {
            limits,
            stack: Vec::new(),
            anchors: Vec::new(),
            nodes: 0,
            alias_bytes: 0,
            root: None,
            documents: 0,
        }
    }

    /// A document starts: the frontmatter holds at most one.
    fn document(&mut self, at: (u32, u32)) -> Result<(), YamlError> {
        self.documents += 1;
        if self.documents > 1 {
            return Err(syntax(
                "more than one YAML document in the frontmatter".into(),
                at,
            ));
        }
        Ok(())
    }

    /// An alias: a copy of its anchor's node, counted (nodes and text) against the limits.
    fn alias(&mut self, id: usize, at: (u32, u32)) -> Result<Node<'a>, YamlError> {
        let Some((_, target)) = self.anchors.iter().rev().find(|(a, _)| *a == id) else {
            return Err(syntax("an alias to an unknown anchor".into(), at));
        };
        let max_nodes = self.limits.max_nodes;
        let (size, bytes) = count(target, max_nodes.saturating_sub(self.nodes) + 1);
        self.nodes += size;
        self.alias_bytes += bytes;
        if self.nodes > max_nodes {
            return Err(limit(format!("aliases expand past {max_nodes} nodes"), at));
        }
        if self.alias_bytes > MAX_ALIAS_BYTES {
            return Err(limit(
                format!("aliases expand past {MAX_ALIAS_BYTES} bytes of text"),
                at,
            ));
        }
        Ok(Node {
            line: at.0,
            col: at.1,
            ..target.clone()
        })
    }

    /// A sequence or mapping starts: within the depth and node limits, its node.
    fn enter(&mut self, at: (u32, u32)) -> Result<Node<'a>, YamlError> {
        if self.stack.len() >= self.limits.max_depth {
            return Err(limit(
                format!("nesting deeper than {} levels", self.limits.max_depth),
                at,
            ));
        }
        self.nodes += 1;
        if self.nodes > self.limits.max_nodes {
            return Err(limit(
                format!("more than {} nodes", self.limits.max_nodes),
                at,
            ));
        }
        Ok(node_at(Kind::Seq(Vec::new()), at))
    }

    /// The innermost collection ends: its finished node and anchor.
    fn close(&mut self, at: (u32, u32)) -> Result<(Node<'a>, usize), YamlError> {
        match self.stack.pop() {
            Some(Frame::Seq {
                mut node,
                anchor,
                items,
            }) => {
                node.kind = Kind::Seq(items);
                Ok((node, anchor))
            }
            Some(Frame::Map {
                mut node,
                anchor,
                entries,
                ..
            }) => {
                check_duplicates(&entries).map_err(|(msg, at)| syntax(msg, at))?;
                node.kind = Kind::Map(entries);
                Ok((node, anchor))
            }
            None => Err(syntax("unbalanced collection end".into(), at)),
        }
    }

    /// A finished node: counted (a collection was counted when it opened), remembered under
    /// its anchor, and put in its parent (or made the root).
    fn place(
        &mut self,
        finished: Node<'a>,
        anchor: usize,
        at: (u32, u32),
    ) -> Result<(), YamlError> {
        if !matches!(finished.kind, Kind::Seq(_) | Kind::Map(_)) {
            self.nodes += 1;
            if self.nodes > self.limits.max_nodes {
                return Err(limit(
                    format!("more than {} nodes", self.limits.max_nodes),
                    at,
                ));
            }
        }
        if anchor != 0 {
            self.anchors.push((anchor, finished.clone()));
        }
        match self.stack.last_mut() {
            None => self.root = Some(finished),
            Some(Frame::Seq { items, .. }) => items.push(finished),
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                None => *key = Some(finished),
                Some(k) => entries.push((k, finished)),
            },
        }
        Ok(())
    }
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
