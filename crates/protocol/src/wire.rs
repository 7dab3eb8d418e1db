//! The JSON-lines framing: a request line `{"id": ANY, "tool": NAME, "input": {...}}` is
//! answered by one response line, `{"id":ID,"ok":true,"output":...}` or
//! `{"id":ID,"ok":false,"error":{"code":...,"message":...}}`, the id echoed byte for byte;
//! pipelined lines are answered as batches whose decisions are audited together.

use std::marker::PhantomData;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use skills_executor::{Cancellation, Decision, ExecError, Session};
use skills_model::{cut_text, MESSAGE_MAX};

use crate::catalogue::{answer_check_text, answer_text, CHECK_TOOL};
use crate::input::{CheckInput, Input};
use crate::output::{check_result, null, AsText, Output};

/// A request as it arrives: `{"id": ANY, "tool": NAME, "input": {...}}`. The id is kept as
/// its raw bytes, to be echoed byte for byte.
#[derive(Deserialize)]
struct WireRequest<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool: Option<&'a RawValue>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
}

/// A request's id alone, for answering a request that is otherwise malformed: read only
/// when the line is one JSON object that names its id at most once.
#[derive(Deserialize)]
struct WireId<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
}

/// `{"id":ID,"ok":true,"output":OUTPUT}`: both already JSON text, written as they are.
fn ok_response(id: &RawValue, output: &str) -> String {
    let id = id.get();
    let mut line = String::with_capacity(id.len() + output.len() + 28);
    line.push_str("{\"id\":");
    line.push_str(id);
    line.push_str(",\"ok\":true,\"output\":");
    line.push_str(output);
    line.push('}');
    line
}

#[derive(Serialize)]
struct WireErr<'a> {
    id: &'a RawValue,
    ok: bool,
    error: WireError<'a>,
}

#[derive(Serialize)]
struct WireError<'a> {
    code: &'a str,
    message: &'a str,
}

/// A request's id as its answer echoes it: byte for byte, but for a carriage return, which
/// can stand in a JSON text only as whitespace between tokens and is written as a space,
/// so that the answer stays one line to a reader that also ends lines at `\r`.
fn wire_id(raw: Option<&RawValue>) -> std::borrow::Cow<'_, RawValue> {
    let id = or_null(raw);
    if !id.get().contains('\r') {
        return std::borrow::Cow::Borrowed(id);
    }
    RawValue::from_string(id.get().replace('\r', " "))
        .map_or(std::borrow::Cow::Borrowed(null()), std::borrow::Cow::Owned)
}

/// A request's id or input as given, or `null` when it is missing.
fn or_null(raw: Option<&RawValue>) -> &RawValue {
    match raw {
        Some(raw) => raw,
        None => null(),
    }
}

/// An error as a transport shows it to a client: its stable code, then its message, cut
/// to [`MESSAGE_MAX`].
pub fn error_text(error: &ExecError) -> String {
    cut_text(&format!("{}: {error}", error.code()), MESSAGE_MAX).into_owned()
}

/// The response line (without its newline) for an error outside any request's handling
/// (a line that is not JSON, too long, not UTF-8).
pub fn error_line(code: &str, message: &str) -> String {
    error_response(null(), code, message)
}

fn error_response(id: &RawValue, code: &str, message: &str) -> String {
    serde_json::to_string(&WireErr {
        id,
        ok: false,
        error: WireError {
            code,
            message: &cut_text(message, MESSAGE_MAX),
        },
    })
    .unwrap_or_default()
}

/// Answers one request line (without its newline) with one response line (without its
/// newline). Never fails: a malformed request gets an error response.
pub fn respond_line(session: &Session, line: &str) -> String {
    respond_line_in(session, line, None)
}

/// [`respond_line`], with a cancellation that stops a script the line runs.
fn respond_line_in(session: &Session, line: &str, cancel: Option<&Cancellation>) -> String {
    // The hot path: a `check_tool` line of the usual shape, read in one pass.
    if let Some(check) = one_pass_check(line) {
        let id = &*wire_id(check.id);
        return match answer_check_text(session, check.input, cancel.cloned()) {
            Ok(output) => ok_response(id, &output),
            Err(e) => error_response(id, e.code(), &e.to_string()),
        };
    }
    respond_line_read_twice(session, line, cancel)
}

/// A `check_tool` line read in one pass: `{"id": ANY, "tool": "check_tool", "input":
/// {...}}`, the id optional, the tool named (plainly, as a string without escapes) before
/// the input, no key twice and no other key, the input an object that reads as
/// `check_tool`'s. What [`respond_line_read_twice`] reads of such a line, without reading
/// the input twice (once to find its end, once into its type). `None` for anything else,
/// which that function then reads and answers, its errors included: so no answer changes.
fn one_pass_check(line: &str) -> Option<OnePassCheck<'_>> {
    serde_json::from_str::<OnePass<'_>>(line).ok()?.0
}

/// See [`one_pass_check`].
struct OnePassCheck<'a> {
    id: Option<&'a RawValue>,
    input: CheckInput,
}

/// See [`one_pass_check`]: `None` when the line is not of that shape.
struct OnePass<'a>(Option<OnePassCheck<'a>>);

impl<'de> Deserialize<'de> for OnePass<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<OnePass<'de>, D::Error> {
        d.deserialize_map(OnePassVisitor)
    }
}

/// See [`one_pass_check`].
struct OnePassVisitor;

impl<'de> serde::de::Visitor<'de> for OnePassVisitor {
    type Value = OnePass<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a check_tool request")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<OnePass<'de>, A::Error> {
        let (mut id, mut named, mut input) = (None, false, None);
        // A key with escapes is no borrowed `&str`: an error, so the line is read twice.
        while let Some(key) = map.next_key::<&str>()? {
            match key {
                "id" if id.is_none() => id = Some(map.next_value::<&RawValue>()?),
                "tool" if !named => {
                    if map.next_value::<&str>()? != CHECK_TOOL {
                        return Ok(OnePass(None));
                    }
                    named = true;
                }
                "input" if named && input.is_none() => {
                    input = Some(map.next_value_seed(AnObject::<CheckInput>(PhantomData))?);
                }
                _ => return Ok(OnePass(None)),
            }
        }
        Ok(OnePass(input.map(|input| OnePassCheck { id, input })))
    }
}

/// Reads a `T` from a JSON object only: a struct's fields would also be read from an
/// array, in order, which a request's input may not be ([`crate::input`]'s rule).
struct AnObject<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> serde::de::DeserializeSeed<'de> for AnObject<T> {
    type Value = T;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        T::deserialize(ObjectOnly(d))
    }
}

/// A deserializer that reads a struct as a map, and anything else as its inner one does.
struct ObjectOnly<D>(D);

impl<'de, D: serde::Deserializer<'de>> serde::Deserializer<'de> for ObjectOnly<D> {
    type Error = D::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(v)
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(v)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// [`respond_line`] for any line: the request read with its input as text, then the input
/// read into its request's type.
fn respond_line_read_twice(session: &Session, line: &str, cancel: Option<&Cancellation>) -> String {
    // An object: a struct's fields would also be read from an array, in order.
    if !line.trim_start().starts_with('{') {
        return error_line("SKILL_BAD_REQUEST", "a request is a JSON object");
    }
    let request: WireRequest<'_> = match serde_json::from_str(line) {
        Ok(r) => r,
        Err(e) => {
            // A request that names its id once is answered with it, whatever else is wrong
            // with it (a field given twice): a host waiting on that id hears of it.
            let named = serde_json::from_str::<WireId<'_>>(line).ok();
            return error_response(
                &wire_id(named.and_then(|r| r.id)),
                "SKILL_BAD_REQUEST",
                &format!("not a JSON request: {e}"),
            );
        }
    };
    let id = &*wire_id(request.id);
    // Borrowed from the line unless the name holds escapes.
    let tool: Option<std::borrow::Cow<'_, str>> = request.tool.and_then(|t| {
        let text = t.get();
        // A JSON string without a backslash (valid JSON: no control characters either) is
        // the text between its quotes.
        if let Some(plain) = text
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .filter(|t| !t.contains(['\\', '"']))
        {
            return Some(std::borrow::Cow::Borrowed(plain));
        }
        serde_json::from_str::<String>(text)
            .ok()
            .map(std::borrow::Cow::Owned)
    });
    let Some(tool) = tool else {
        return error_response(
            id,
            "SKILL_BAD_REQUEST",
            "a request needs \"tool\" (a string) and \"input\"",
        );
    };
    let input = Input::Text(or_null(request.input));
    match answer_text(session, &tool, input, cancel.cloned()) {
        Ok(output) => ok_response(id, &output),
        Err(e) => error_response(id, e.code(), &e.to_string()),
    }
}

/// The bytes of answers past which [`respond_batch_part`] hands back what it has answered: a
/// batch of a thousand script runs, each answering with megabytes of escaped output, held
/// them all (gigabytes) before the first was written.
pub const BATCH_ANSWER_BYTES: usize = 16 << 20;

/// Answers a batch of pipelined request lines, in order, as [`respond_line`] answers each,
/// with the audit events of their `check_tool` decisions written together (one write for a
/// batch, or for each part of [`respond_batch_part`] when its answers are large, instead
/// of one per decision: [`Session::hold_decisions`]).
/// No answer may reach the host before this returns. When the events cannot be written,
/// every `check_tool` of the batch that held one is answered as a denial that says why,
/// as a single `check_tool` is when its event cannot be written.
///
/// Every line is answered, and every answer held until the last: a host that writes
/// answers as they come, and may be handed batches whose answers are large (scripts'
/// output), answers with [`respond_batch_part`] instead.
pub fn respond_batch(session: &Session, lines: &[&str]) -> Vec<String> {
    let mut answers = Vec::with_capacity(lines.len());
    while answers.len() < lines.len() {
        answers.extend(respond_batch_part(session, &lines[answers.len()..], None));
    }
    answers
}

/// [`respond_batch`] for the first lines of `lines`: it stops once its answers reach
/// [`BATCH_ANSWER_BYTES`] (a part holds that much and one answer more, at most) and hands
/// back the answers of the lines it answered, at least one whenever there is a line (and it
/// is not cancelled); the caller writes them and asks again for the rest
/// (`lines[answers.len()..]`). The events of a part are written before it returns. `cancel`
/// stops a script a line runs, and once cancelled no further line is answered (a host's
/// session ending on a signal).
pub fn respond_batch_part(
    session: &Session,
    lines: &[&str],
    cancel: Option<&Cancellation>,
) -> Vec<String> {
    let held = session.hold_decisions();
    let mut answers = Vec::with_capacity(lines.len());
    let mut holding = Vec::new();
    let mut bytes = 0usize;
    for (i, line) in lines.iter().enumerate() {
        if cancel.is_some_and(Cancellation::is_cancelled) {
            break;
        }
        let before = session.held_decisions();
        let answer = respond_line_in(session, line, cancel);
        bytes = bytes.saturating_add(answer.len());
        answers.push(answer);
        if session.held_decisions() != before {
            holding.push(i);
        }
        if bytes >= BATCH_ANSWER_BYTES {
            break;
        }
    }
    if let Err(e) = held.release() {
        for i in holding {
            let request = serde_json::from_str::<WireRequest<'_>>(lines[i]).ok();
            let id = wire_id(request.as_ref().and_then(|r| r.id));
            let refused = check_result(Decision::refused(e.to_string()));
            let output = AsText::check(refused);
            answers[i] = ok_response(&id, &output);
        }
    }
    answers
}
