//! JSON output written as it is serialised: borrowed views of records, and sequences
//! serialised from iterators, so no command builds a `serde_json::Value` tree of its whole
//! answer (at 100,000 skills that tree was most of `list`'s peak memory).
//!
//! Keys are written in alphabetical order, the order a `Value` object keeps, so the output
//! is the same bytes the tree gave.

use std::cell::Cell;
use std::path::Path;

use serde::ser::{Serialize, Serializer};
use skills_index::Shadowed;
use skills_model::{Diagnostic, Layer, Rule, Severity, SkillRecord};
use skills_protocol::{json_str, json_str_contents};

/// `text` as a terminal shows it safely: control characters (but for the line break and the
/// tab) and the bidirectional overrides written as `\u{..}` escapes. Human output passes
/// every text a skill folder controls (names, descriptions, bodies, paths, the messages
/// that quote them) through it: a description holding `ESC [2J` cleared the screen of
/// whoever listed the skills, a carriage return wrote over what came before. JSON output is
/// escaped by its serialiser.
pub(crate) fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    escaped(text, Breaks::Kept)
}

/// [`visible`] for text that must stay on one line (a warning or an error on stderr): a
/// line break a folder's name carries is escaped too, so it cannot start a line that
/// seems to be this program's own.
pub(crate) fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    escaped(text, Breaks::Escaped)
}

/// Whether [`escaped`] keeps line breaks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Breaks {
    Kept,
    Escaped,
}

/// `text` with every character a terminal acts on written as `\u{..}`: controls (but a
/// tab, and a line break where `breaks` keeps it) and the bidirectional overrides and
/// isolates.
fn escaped(text: &str, breaks: Breaks) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| {
        (c.is_control() && c != '\t' && (c != '\n' || breaks == Breaks::Escaped))
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden(c) {
            shown.extend(c.escape_unicode());
        } else {
            shown.push(c);
        }
    }
    std::borrow::Cow::Owned(shown)
}

/// A sequence serialised from an iterator, once.
pub(crate) struct Seq<I>(Cell<Option<I>>);

impl<I> Seq<I> {
    pub(crate) fn new(items: I) -> Seq<I> {
        Seq(Cell::new(Some(items)))
    }
}

impl<I> Serialize for Seq<I>
where
    I: Iterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0.take() {
            Some(items) => serializer.collect_seq(items),
            None => Err(serde::ser::Error::custom("a sequence serialised twice")),
        }
    }
}

/// A diagnostic as `list` and `validate` print it: its fields in alphabetical order, with
/// the file it concerns where the answer holds diagnostics of many files. Serialising a
/// diagnostic through a `Value` to sort its keys (as this did) was a tenth of `list`'s run
/// on the real-world corpus, which has a diagnostic for every second skill. The unit test
/// `a_diagnostic_view_is_the_diagnostic_s_own_fields_sorted` holds it to the model's own
/// serialisation, so a field added there fails it until added here.
#[derive(serde::Serialize)]
pub(crate) struct DiagnosticView<'a> {
    column: Option<u32>,
    line: Option<u32>,
    message: &'a str,
    /// Lossy where the path is not UTF-8 (a root under such a folder): the document stays
    /// whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<std::borrow::Cow<'a, str>>,
    rule: &'a Rule,
    severity: Severity,
}

impl<'a> DiagnosticView<'a> {
    /// A diagnostic of the one file the answer is about.
    pub(crate) fn of(d: &'a Diagnostic) -> DiagnosticView<'a> {
        DiagnosticView {
            column: d.column,
            line: d.line,
            message: &d.message,
            path: None,
            rule: &d.rule,
            severity: d.severity,
        }
    }

    /// A diagnostic with the file it concerns (a path that is not UTF-8 with its invalid
    /// bytes replaced). A path is first read as UTF-8 whole, which checks a word at a time,
    /// where the lossy reading goes a byte at a time: `list` names a path for each of its
    /// diagnostics.
    pub(crate) fn at(path: &'a Path, d: &'a Diagnostic) -> DiagnosticView<'a> {
        DiagnosticView {
            path: Some(
                path.to_str()
                    .map_or_else(|| path.to_string_lossy(), std::borrow::Cow::Borrowed),
            ),
            ..DiagnosticView::of(d)
        }
    }
}

impl DiagnosticView<'_> {
    /// Writes this view as [`write_at`] would at depth 2 (an element of a document's
    /// array), the same bytes, its strings copied as they are when nothing in them needs
    /// an escape: through serde, the diagnostics of the real-world corpus (one for every
    /// second skill) cost `list --format json` more than its records
    /// (`a_diagnostic_is_written_as_serde_writes_it` holds the bytes to serde's).
    pub(crate) fn write_element(&self, out: &mut Vec<u8>) {
        let key = element_key;
        let number = |out: &mut Vec<u8>, n: Option<u32>| {
            // A number written into a `Vec` does not fail.
            let _ = serde_json::to_writer(&mut *out, &n);
        };
        key(out, "column", true);
        number(out, self.column);
        key(out, "line", false);
        number(out, self.line);
        key(out, "message", false);
        json_str(out, self.message);
        if let Some(path) = &self.path {
            key(out, "path", false);
            json_str(out, path);
        }
        key(out, "rule", false);
        json_str(out, self.rule.id());
        key(out, "severity", false);
        json_str(out, self.severity.as_str());
        element_end(out);
    }
}

/// A record as `list` and `show` print it.
#[derive(serde::Serialize)]
pub(crate) struct RecordView<'a> {
    description: &'a str,
    layer: Layer,
    name: &'a str,
    /// A remote skill's origin (`url:https://HOST`), absent for the others.
    #[serde(skip_serializing_if = "Option::is_none")]
    origin: Option<String>,
    path: &'a Path,
    plugin: Option<&'a str>,
    priority: i64,
    qualified_name: Qualified<'a>,
    tags: &'a [String],
    /// Why the skill is not offered here (its unmet needs); omitted when none.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    unavailable: &'a [skills_model::Unmet],
}

impl<'a> RecordView<'a> {
    /// The view with `unmet`, the needs this machine does not meet.
    pub(crate) fn unavailable(mut self, unmet: &'a [skills_model::Unmet]) -> RecordView<'a> {
        self.unavailable = unmet;
        self
    }

    pub(crate) fn of(r: &'a SkillRecord) -> RecordView<'a> {
        RecordView {
            description: &r.description,
            layer: r.layer,
            name: r.name.as_str(),
            origin: r.remote.as_ref().map(|o| o.to_string()),
            path: &r.path,
            plugin: r.plugin.as_deref(),
            priority: r.frontmatter.priority,
            qualified_name: Qualified(r),
            tags: &r.frontmatter.tags,
            unavailable: &[],
        }
    }
}

impl RecordView<'_> {
    /// Writes this view as [`write_at`] would at depth 2 (an element of a document's array),
    /// the same bytes, with its strings copied as they are when nothing in them needs an
    /// escape: serde_json's escaping, a byte at a time, was most of the cost of writing a
    /// record (`a_record_is_written_as_serde_writes_it` holds the bytes to serde's).
    pub(crate) fn write_element(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        const AT: usize = ELEMENT_FIELDS;
        let key = element_key;
        key(out, "description", true);
        json_str(out, self.description);
        key(out, "layer", false);
        json_str(out, self.layer.as_str());
        key(out, "name", false);
        json_str(out, self.name);
        if let Some(origin) = &self.origin {
            key(out, "origin", false);
            json_str(out, origin);
        }
        key(out, "path", false);
        match self.path.to_str() {
            Some(path) => json_str(out, path),
            // serde's own error for a path that is not UTF-8.
            None => write_at(&mut *out, AT, self.path)?,
        }
        key(out, "plugin", false);
        match self.plugin {
            Some(plugin) => json_str(out, plugin),
            None => out.extend_from_slice(b"null"),
        }
        key(out, "priority", false);
        serde_json::to_writer(&mut *out, &self.priority)?;
        key(out, "qualified_name", false);
        out.push(b'"');
        let r = self.qualified_name.0;
        json_str_contents(out, r.plugin.as_deref().unwrap_or(r.layer.as_str()));
        out.push(b':');
        json_str_contents(out, r.name.as_str());
        out.push(b'"');
        key(out, "tags", false);
        if self.tags.is_empty() {
            out.extend_from_slice(b"[]");
        } else {
            for (i, tag) in self.tags.iter().enumerate() {
                out.extend_from_slice(if i == 0 { b"[\n" } else { b",\n" });
                push_indent(out, AT + 1);
                json_str(out, tag);
            }
            out.push(b'\n');
            push_indent(out, AT);
            out.push(b']');
        }
        if !self.unavailable.is_empty() {
            key(out, "unavailable", false);
            write_at(&mut *out, AT, self.unavailable)?;
        }
        element_end(out);
        Ok(())
    }
}

/// The depth of the fields of an array's element in a document (the document, the array,
/// the element), as the hand-written elements write them.
const ELEMENT_FIELDS: usize = 3;

/// `"key": ` of a hand-written element's field, after the brace that opens the element
/// (`first`) or the comma that ends the field before.
fn element_key(out: &mut Vec<u8>, key: &str, first: bool) {
    out.extend_from_slice(if first { b"{\n" } else { b",\n" });
    push_indent(out, ELEMENT_FIELDS);
    out.push(b'"');
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\": ");
}

/// The brace that closes a hand-written element, on its own line.
fn element_end(out: &mut Vec<u8>) {
    out.push(b'\n');
    push_indent(out, ELEMENT_FIELDS - 1);
    out.push(b'}');
}

/// [`indent`] into a buffer, which cannot fail.
fn push_indent(out: &mut Vec<u8>, depth: usize) {
    out.resize(out.len() + depth * 2, b' ');
}

/// A record's qualified name ([`SkillRecord::qualified_name`]), serialised as a string
/// written in place: a `String` made for each record was a twentieth of the cost of
/// writing a record.
pub(crate) struct Qualified<'a>(&'a SkillRecord);

impl std::fmt::Display for Qualified<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = self.0;
        match &r.plugin {
            Some(id) => write!(f, "{id}:{}", r.name),
            None => write!(f, "{}:{}", r.layer, r.name),
        }
    }
}

impl Serialize for Qualified<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A shadowed record as `list` prints it.
#[derive(serde::Serialize)]
pub(crate) struct ShadowedView<'a> {
    layer: Layer,
    name: &'a str,
    path: &'a Path,
    plugin: Option<&'a str>,
    qualified_name: Qualified<'a>,
    shadowed_by: &'a str,
    shadowed_by_path: &'a Path,
    /// Set when no skill holds the name (MCP servers contest it): `shadowed_by` is then a
    /// rival, not a winner.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    contested: bool,
}

impl<'a> ShadowedView<'a> {
    pub(crate) fn of(s: &'a Shadowed) -> ShadowedView<'a> {
        let r = &s.record;
        ShadowedView {
            layer: r.layer,
            name: r.name.as_str(),
            path: &r.path,
            plugin: r.plugin.as_deref(),
            qualified_name: Qualified(r),
            shadowed_by: &s.shadowed_by,
            shadowed_by_path: &s.winner_path,
            contested: s.contested,
        }
    }
}

/// The indentation of `depth` levels.
fn indent(out: &mut (impl std::io::Write + ?Sized), depth: usize) -> std::io::Result<()> {
    const SPACES: &[u8; 64] = b"                                                                ";
    let mut left = depth * 2;
    while left > 0 {
        let n = left.min(SPACES.len());
        out.write_all(&SPACES[..n])?;
        left -= n;
    }
    Ok(())
}

/// Serialises `value` pretty-printed as it would be `depth` levels down in a document:
/// serde_json's pretty printer's bytes, each line after the first indented `depth` levels
/// more, written straight into `out` ([`Indented`]). The unit tests hold it to the pretty
/// printer's output for a whole document.
fn write_at<W: std::io::Write, T: Serialize + ?Sized>(
    out: W,
    depth: usize,
    value: &T,
) -> serde_json::Result<()> {
    let mut serializer = serde_json::Serializer::with_formatter(out, Indented::at(depth));
    value.serialize(&mut serializer)
}

/// serde_json's pretty printer (two spaces a level) starting `depth` levels down. Written
/// through it, a record of `list` is serialised once into the run's buffer: serialising
/// each into a document of its own and indenting its lines after (as this did) was a
/// third of the instructions of `list --format json` at 1,000 skills.
struct Indented {
    depth: usize,
    /// Whether the array or object just closed holds a value (an empty one is `[]`/`{}`).
    has_value: bool,
}

impl Indented {
    fn at(depth: usize) -> Indented {
        Indented {
            depth,
            has_value: false,
        }
    }

    fn open<W: ?Sized + std::io::Write>(
        &mut self,
        out: &mut W,
        bracket: &[u8],
    ) -> std::io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        out.write_all(bracket)
    }

    fn close<W: ?Sized + std::io::Write>(
        &mut self,
        out: &mut W,
        bracket: &[u8],
    ) -> std::io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            out.write_all(b"\n")?;
            indent(out, self.depth)?;
        }
        out.write_all(bracket)
    }

    fn item<W: ?Sized + std::io::Write>(
        &mut self,
        out: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        out.write_all(if first { b"\n" } else { b",\n" })?;
        indent(out, self.depth)
    }
}

impl serde_json::ser::Formatter for Indented {
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, out: &mut W) -> std::io::Result<()> {
        self.open(out, b"[")
    }

    fn end_array<W: ?Sized + std::io::Write>(&mut self, out: &mut W) -> std::io::Result<()> {
        self.close(out, b"]")
    }

    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        out: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.item(out, first)
    }

    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, _out: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + std::io::Write>(&mut self, out: &mut W) -> std::io::Result<()> {
        self.open(out, b"{")
    }

    fn end_object<W: ?Sized + std::io::Write>(&mut self, out: &mut W) -> std::io::Result<()> {
        self.close(out, b"}")
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        out: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.item(out, first)
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        out: &mut W,
    ) -> std::io::Result<()> {
        out.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        _out: &mut W,
    ) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// A JSON object written a field at a time, the bytes serde_json's pretty printer gives
/// for a struct of those fields in that order: for documents with a field too large to
/// hold whole ([`Object::array_field`]).
pub(crate) struct Object<'w, W: std::io::Write> {
    out: &'w mut W,
    first: bool,
}

impl<'w, W: std::io::Write> Object<'w, W> {
    pub(crate) fn new(out: &'w mut W) -> Object<'w, W> {
        Object { out, first: true }
    }

    /// `"key": ` on its line, after the comma the field before needs. Keys are the
    /// program's own names: nothing in them needs escaping (debug builds check).
    fn key(&mut self, key: &str) -> std::io::Result<()> {
        debug_assert!(key
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\'));
        self.out
            .write_all(if self.first { b"{\n  \"" } else { b",\n  \"" })?;
        self.first = false;
        self.out.write_all(key.as_bytes())?;
        self.out.write_all(b"\": ")
    }

    /// A field serialised on this thread.
    pub(crate) fn field<T: Serialize + ?Sized>(
        &mut self,
        key: &str,
        value: &T,
    ) -> anyhow::Result<()> {
        self.key(key)?;
        write_at(&mut *self.out, 1, value)?;
        Ok(())
    }

    /// A field whose value is the array of what `write` writes of each of `items` (through
    /// the [`Element`] it is given), serialised a run of items at a time and written in
    /// order: the items are taken a run at a time, and one run's output is held at once,
    /// whatever their number.
    pub(crate) fn array_field<T: Send>(
        &mut self,
        key: &str,
        items: impl Iterator<Item = T>,
        write: impl Fn(&T, Element<'_>) -> serde_json::Result<()> + Sync,
    ) -> anyhow::Result<()> {
        self.key(key)?;
        let mut items = items.peekable();
        if items.peek().is_none() {
            self.out.write_all(b"[]")?;
            return Ok(());
        }
        self.out.write_all(b"[")?;
        // Each element on its line, two levels down (the document, then the array).
        let render = |first: bool, run: &[T], buf: &mut Vec<u8>| -> serde_json::Result<()> {
            buf.clear();
            for (i, item) in run.iter().enumerate() {
                buf.extend_from_slice(if first && i == 0 { b"\n" } else { b",\n" });
                indent(buf, 2).map_err(serde_json::Error::io)?;
                write(item, Element(buf))?;
            }
            Ok(())
        };
        write_runs(&mut *self.out, &mut items, &render)?;
        self.out.write_all(b"\n  ]")?;
        Ok(())
    }

    /// The closing brace (an object with no field is `{}`, as the pretty printer writes it).
    pub(crate) fn end(self) -> std::io::Result<()> {
        self.out.write_all(if self.first { b"{}" } else { b"\n}" })
    }
}

/// Where one element of an [`Object::array_field`] is written.
pub(crate) struct Element<'b>(&'b mut Vec<u8>);

impl Element<'_> {
    /// Writes the element: `value`, pretty-printed at its depth (what the hand-written
    /// elements are held to).
    #[cfg(test)]
    pub(crate) fn write<V: Serialize + ?Sized>(self, value: &V) -> serde_json::Result<()> {
        write_at(self.0, 2, value)
    }
}

impl Element<'_> {
    /// Writes a record's element ([`RecordView::write_element`]): the bytes serde_json's
    /// pretty printer writes of it there (the tests' `Element::write`).
    pub(crate) fn write_record(self, record: &RecordView<'_>) -> serde_json::Result<()> {
        record.write_element(self.0)
    }

    /// Writes a diagnostic's element ([`DiagnosticView::write_element`]): the bytes
    /// serde_json's pretty printer writes of it there (the tests' `Element::write`).
    pub(crate) fn write_diagnostic(self, diagnostic: &DiagnosticView<'_>) {
        diagnostic.write_element(self.0);
    }
}

/// Renders one run of items into a buffer (whether it holds the array's first item).
trait Render<T>: Fn(bool, &[T], &mut Vec<u8>) -> serde_json::Result<()> + Sync {}

impl<T, F: Fn(bool, &[T], &mut Vec<u8>) -> serde_json::Result<()> + Sync> Render<T> for F {}

/// Writes `items` to `out` in order, rendered a run at a time into one buffer
/// ([`Object::array_field`]). A second thread rendering every other run was measured and
/// removed: it saved about 2% of `list --format json` at 10,000 and 100,000 skills.
fn write_runs<T, W: std::io::Write>(
    out: &mut W,
    items: &mut std::iter::Peekable<impl Iterator<Item = T>>,
    render: &impl Render<T>,
) -> anyhow::Result<()> {
    let mut buf = run_buffer();
    let mut first = true;
    loop {
        let run: Vec<T> = items.by_ref().take(ARRAY_RUN).collect();
        if run.is_empty() {
            return Ok(());
        }
        // What rendered before a record that fails is written before the error is
        // returned, as a writer serialising record by record would have.
        let result = render(first, &run, &mut buf);
        out.write_all(&buf)?;
        result?;
        first = false;
    }
}

/// Items a run of [`Object::array_field`] serialises: about 40 KiB of `list`'s records.
const ARRAY_RUN: usize = 128;

/// A buffer for one run, made at the size of a run of `list`'s longest records (1 KiB
/// each): grown from nothing, each buffer in use left its smaller sizes with the
/// allocator (with runs of 256, and the records collected first, the peak memory of `list`
/// at 100,000 skills grew by about 2.5 MiB; as it is, by about half of one).
fn run_buffer() -> Vec<u8> {
    Vec::with_capacity(ARRAY_RUN * 1024)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use skills_index::PathDiagnostic;
    use skills_model::{Diagnostic, Rule, Severity};

    use super::{DiagnosticView, Object};

    /// Text a terminal would act on is escaped, the rest left as it is.
    #[test]
    fn visible_text_escapes_what_a_terminal_acts_on() {
        let table = [
            ("plain text, é 日", "plain text, é 日"),
            ("line\nbreak\ttab", "line\nbreak\ttab"),
            ("clear\u{1b}[2J", "clear\\u{1b}[2J"),
            ("over\rwrite", "over\\u{d}write"),
            ("bell\u{7}", "bell\\u{7}"),
            ("c1\u{9b}", "c1\\u{9b}"),
            ("rtl\u{202e}txt.exe", "rtl\\u{202e}txt.exe"),
            ("isolate\u{2066}x", "isolate\\u{2066}x"),
            ("del\u{7f}", "del\\u{7f}"),
        ];
        for (text, shown) in table {
            assert_eq!(super::visible(text), shown, "{text:?}");
            // On one line, the same, but a line break is escaped too.
            let one = shown.replace('\n', "\\u{a}");
            assert_eq!(super::one_line(text), one, "{text:?}");
        }
    }

    /// A diagnostic's view is the bytes of its own serialisation with the keys sorted (as a
    /// `Value` sorts them), with and without a place and a file: a field the model's
    /// `Diagnostic` gains, or one renamed, fails this until the view has it too.
    #[test]
    fn a_diagnostic_view_is_the_diagnostic_s_own_fields_sorted() {
        let placed = Diagnostic::error(Rule::NameFormat, "a \"quoted\" name\n").at(2, 7);
        let unplaced = Diagnostic::warning(Rule::FrontmatterUnknownField, "é 日");
        for d in [placed, unplaced] {
            let want = sorted(&d);
            let got = serde_json::to_string(&DiagnosticView::of(&d)).expect("serialised");
            assert_eq!(got, want);
            let pd = PathDiagnostic {
                path: "/skills/x/SKILL.md".into(),
                diagnostic: d.clone(),
            };
            let want = sorted(&pd);
            let got = serde_json::to_string(&DiagnosticView::at(&pd.path, &pd.diagnostic))
                .expect("serialised");
            assert_eq!(got, want);
        }
    }

    /// Every ASCII character, alone and between plain text, and text past ASCII, is escaped
    /// by hand as serde_json escapes it.
    #[test]
    fn every_character_is_escaped_as_serde_escapes_it() {
        let mut texts: Vec<String> = (0u8..0x80)
            .map(char::from)
            .flat_map(|c| [c.to_string(), format!("ab{c}cd{c}{c}efghijklmnopqrstu")])
            .collect();
        texts.push("é 日本 \u{2028} \u{7f} 😀".into());
        for text in texts {
            let mut got = Vec::new();
            super::json_str(&mut got, &text);
            let want = serde_json::to_vec(&text).expect("serialised");
            assert_eq!(got, want, "{text:?}");
        }
    }

    /// A diagnostic written by hand ([`super::DiagnosticView::write_element`]) is the bytes
    /// serde_json's pretty printer writes of its view at the same depth: placed and not,
    /// each severity, messages and paths plain, escaped and not ASCII, with a path and
    /// without.
    #[test]
    fn a_diagnostic_is_written_as_serde_writes_it() {
        let texts = [
            "`name` is not valid",
            "",
            "a \"quoted\" back\\slash, a tab\t, a break\n, a bell\u{7}",
            "é 日本 \u{2028} \u{7f}",
        ];
        for (i, text) in texts.iter().enumerate() {
            let d = match i % 3 {
                0 => Diagnostic::error(Rule::NameFormat, *text).at(2, 7),
                1 => Diagnostic::warning(Rule::FrontmatterUnknownField, *text),
                _ => Diagnostic::new(Rule::FileUnreadable, Severity::Info, *text).at(40, 1),
            };
            let pd = PathDiagnostic {
                path: format!("/skills/{text}/SKILL.md").into(),
                diagnostic: d.clone(),
            };
            for view in [
                DiagnosticView::of(&d),
                DiagnosticView::at(&pd.path, &pd.diagnostic),
            ] {
                let mut want = Vec::new();
                super::write_at(&mut want, 2, &view).expect("serialised");
                let mut got = Vec::new();
                view.write_element(&mut got);
                assert_eq!(
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&want),
                    "{text:?}"
                );
            }
        }
    }

    /// A diagnostic's path that is not UTF-8 is written with its invalid bytes replaced, as
    /// the lossy reading gives it; one that is UTF-8 is written as it is.
    #[cfg(unix)]
    #[test]
    fn a_diagnostic_s_path_not_in_utf8_is_written_lossily() {
        use std::os::unix::ffi::OsStrExt;
        let d = Diagnostic::error(Rule::NameFormat, "bad");
        for bytes in [
            &b"/skills/caf\xe9/SKILL.md"[..],
            b"/skills/caf\xc3\xa9/SKILL.md",
        ] {
            let path = std::path::Path::new(std::ffi::OsStr::from_bytes(bytes));
            let view = DiagnosticView::at(path, &d);
            assert_eq!(view.path.as_deref(), Some(&*path.to_string_lossy()));
        }
    }

    /// A record's qualified name is written as the model spells it, for a layer's skill and
    /// a plugin's.
    #[test]
    fn a_qualified_name_is_written_as_the_model_spells_it() {
        let record = |plugin: Option<&str>| skills_model::SkillRecord {
            name: skills_model::SkillName::new("deploy").expect("a name"),
            description: "d".into(),
            layer: skills_model::Layer::Project,
            plugin: plugin.map(Into::into),
            path: "/s/deploy/SKILL.md".into(),
            frontmatter: Default::default(),
            body_offset: 0,
            diagnostics: Vec::new().into(),
            remote: None,
        };
        for r in [record(None), record(Some("acme"))] {
            let written = serde_json::to_string(&super::Qualified(&r)).expect("serialised");
            assert_eq!(
                written,
                serde_json::to_string(&r.qualified_name()).expect("a string")
            );
        }
    }

    /// A record written by hand is the bytes serde's serialisation of its view writes at the
    /// same depth: records plain and escaped, not ASCII, with and without tags, a plugin, an
    /// origin, unmet needs, in each layer.
    #[test]
    fn a_record_is_written_as_serde_writes_it() {
        use skills_model::{Layer, RemoteOrigin, SkillName, SkillRecord, Unmet};
        let record = |description: &str, layer, plugin: Option<&str>, tags: &[&str]| {
            let mut frontmatter = skills_model::Frontmatter::default();
            frontmatter.tags = tags.iter().map(|t| t.to_string()).collect();
            frontmatter.priority = -3;
            SkillRecord {
                name: SkillName::lenient("Deploy_it").expect("a name"),
                description: description.into(),
                layer,
                plugin: plugin.map(Into::into),
                path: format!("/s/{description}/SKILL.md").into(),
                frontmatter: std::sync::Arc::new(frontmatter),
                body_offset: 0,
                diagnostics: Vec::new().into(),
                remote: None,
            }
        };
        let texts = [
            "Deploys releases. Use when shipping.",
            "",
            "a \"quoted\" back\\slash, a tab\t, a break\n, a bell\u{7} and \u{1f}",
            "sixteen bytes ok",
            "fifteen bytes\"x",
            "é 日本 \u{2028} \u{7f}",
        ];
        let unmet = [
            Unmet::Program("git".into()),
            Unmet::Variable("TOKEN \"x\"".into()),
        ];
        let mut records = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            let layer = Layer::ALL[i % Layer::ALL.len()];
            records.push(record(text, layer, None, &[]));
            records.push(record(text, Layer::Plugin, Some("acme.x"), &["one"]));
            let mut remote = record(text, layer, None, &["a", text, "c"]);
            remote.remote = Some(std::sync::Arc::new(RemoteOrigin::url(format!(
                "https://h{i}.example"
            ))));
            records.push(remote);
        }
        for r in &records {
            for needs in [&unmet[..0], &unmet[..1], &unmet[..]] {
                let view = super::RecordView::of(r).unavailable(needs);
                let mut want = Vec::new();
                super::write_at(&mut want, 2, &view).expect("serialised");
                let mut got = Vec::new();
                view.write_element(&mut got).expect("written");
                assert_eq!(
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&want),
                    "{:?}",
                    r.description
                );
            }
        }
    }

    /// What the test above compares with: a value serialised through a `Value`.
    fn sorted<T: serde::Serialize>(v: &T) -> String {
        let value = serde_json::to_value(v).expect("a value");
        serde_json::to_string(&value).expect("serialised")
    }

    /// Objects written a field at a time, with a large array serialised a run at a time, are
    /// the bytes serde_json's pretty printer writes for the whole document: for arrays of
    /// none, one, a run less one, a run, a run and one, two runs, two
    /// and one, and several runs of items; items
    /// nested, empty, escaped and not ASCII.
    #[test]
    fn an_object_written_in_parts_is_the_pretty_printers_bytes() {
        let item = |i: usize| {
            json!({
                "description": format!("line \"{i}\"\n\ttab \u{7} é 日"),
                "empty": {}, "none": [], "n": i, "neg": -1.5, "null": null,
                "nested": {"a": [1, {"b": [[], {}]}], "t": true},
                "tags": ["x", "y"],
            })
        };
        let run = super::ARRAY_RUN;
        for n in [
            0,
            1,
            run - 1,
            run,
            run + 1,
            2 * run,
            2 * run + 1,
            3 * run + 5,
            8 * run,
        ] {
            let items: Vec<serde_json::Value> = (0..n).map(item).collect();
            let head = json!({"b": [{"c": []}], "e": []});
            let want = serde_json::to_vec_pretty(&json!({
                "a": head, "generation": 7, "skills": items,
            }))
            .expect("serialised");
            let mut got = Vec::new();
            let mut doc = Object::new(&mut got);
            doc.field("a", &head).expect("written");
            doc.field("generation", &7).expect("written");
            doc.array_field("skills", items.iter(), |v, e| e.write(v))
                .expect("written");
            doc.end().expect("written");
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&want),
                "{n} items"
            );
        }
        let mut got = Vec::new();
        Object::new(&mut got).end().expect("written");
        assert_eq!(
            got,
            serde_json::to_vec_pretty(&json!({})).expect("serialised")
        );
    }

    /// Regression: when an item fails to serialise, every item before it is written (and
    /// nothing after), whichever run it falls in, as a writer serialising item by
    /// item would leave it; the runs rendered before it are not held back.
    #[test]
    fn regression_items_before_one_that_fails_are_written() {
        let run = super::ARRAY_RUN;
        let n = 3 * run + 5;
        let items: Vec<serde_json::Value> = (0..n).map(|i| json!({"n": i})).collect();
        let whole = serde_json::to_vec_pretty(&json!({"skills": items})).expect("serialised");
        for bad in [0, 1, run - 1, run, run + 1, 2 * run + 3, 3 * run + 4] {
            let mut got = Vec::new();
            let mut doc = Object::new(&mut got);
            let result = doc.array_field("skills", items.iter().enumerate(), |(i, v), e| {
                if *i == bad {
                    Err(serde::ser::Error::custom("unwritable"))
                } else {
                    e.write(v)
                }
            });
            let err = result.expect_err("an item failed").to_string();
            assert!(err.contains("unwritable"), "{err}");
            assert!(whole.starts_with(&got), "item {bad}: not a prefix");
            assert!(
                got.ends_with(b"\n    "),
                "item {bad}: does not stop at the item"
            );
            let written = String::from_utf8_lossy(&got).matches("\"n\": ").count();
            assert_eq!(written, bad, "items written before item {bad}");
        }
    }
}
