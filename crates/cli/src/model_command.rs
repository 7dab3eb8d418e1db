//! `eval triggers --model-command CMD`: the user's own model, asked once per case which
//! skill it would load.
//!
//! The contract (docs/trigger-evals.md): `CMD` runs through the shell (`sh -c`; `cmd /C`
//! on Windows) once per case, in the current folder, with the environment of `skillctl`
//! plus `SKILLCTL_EVAL_REQUEST` (the request alone). Its standard input is the exact
//! prompt (the session's instructions, as `skillctl prompt --format instructions` prints
//! them, with `<available_skills>`; one blank line; the request; a newline). Its standard
//! output says which skill the model would load: the skill tool's call as JSON
//! (`{"name": "skill", "input": {"name": "pdf"}}`, or its input `{"name": "pdf"}`, or a
//! `skills_load` call with `names`), a bare name, or `none`. Anything else, or a non-zero
//! exit, stops the evaluation with the case named.

use std::io::{Read as _, Write as _};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// Most bytes read of the command's answer.
const MAX_ANSWER_BYTES: u64 = 1 << 20;

/// The prompt a model is given for `request` under `instructions`.
pub(crate) fn prompt(instructions: &str, request: &str) -> String {
    let mut text = String::with_capacity(instructions.len() + request.len() + 2);
    text.push_str(instructions);
    text.push('\n');
    text.push_str(request);
    text.push('\n');
    text
}

/// Runs `command` with `prompt` on its standard input; the skill its answer names (`None`
/// for `none`).
pub(crate) fn ask(command: &str, prompt: &str, request: &str) -> Result<Option<String>> {
    let mut child = shell(command)
        .env("SKILLCTL_EVAL_REQUEST", request)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run the model command {command:?}"))?;
    let mut stdin = child.stdin.take().context("the model command's stdin")?;
    let stdout = child.stdout.take().context("the model command's stdout")?;
    let stderr = child.stderr.take().context("the model command's stderr")?;
    // Written on a thread while the answer is read: a command that answers before it has
    // read the whole prompt must not block on a full pipe.
    let (answer, errors) = std::thread::scope(|scope| {
        let writer = scope.spawn(move || {
            // A command that exits without reading it all closes the pipe: not an error
            // of the evaluation, its answer says what it chose.
            let _ = stdin.write_all(prompt.as_bytes());
        });
        let errors = scope.spawn(move || {
            let mut text = Vec::new();
            let _ = stderr.take(MAX_ANSWER_BYTES).read_to_end(&mut text);
            text
        });
        let mut text = Vec::new();
        let read = stdout.take(MAX_ANSWER_BYTES).read_to_end(&mut text);
        let _ = writer.join();
        (read.map(|_| text), errors.join().unwrap_or_default())
    });
    let status = child.wait().context("waiting for the model command")?;
    let answer = answer.context("reading the model command's answer")?;
    if !status.success() {
        let said = String::from_utf8_lossy(&errors);
        bail!(
            "the model command {command:?} failed ({status}): {}",
            crate::out::one_line(said.trim())
        );
    }
    parse_answer(&String::from_utf8_lossy(&answer))
}

fn shell(command: &str) -> Command {
    if cfg!(windows) {
        let mut c = Command::new("cmd");
        c.args(["/C", command]);
        c
    } else {
        let mut c = Command::new("sh");
        c.args(["-c", command]);
        c
    }
}

/// The skill an answer names (see the module documentation).
pub(crate) fn parse_answer(answer: &str) -> Result<Option<String>> {
    let text = answer.trim();
    if text.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    if text.starts_with('{') {
        let value: Value = serde_json::from_str(text)
            .with_context(|| format!("the model's answer is not JSON: {}", short(text)))?;
        return from_call(&value)
            .map(Some)
            .with_context(|| format!("the model's answer names no skill: {}", short(text)));
    }
    let plain = !text.is_empty() && !text.contains(char::is_whitespace);
    if plain {
        return Ok(Some(text.to_owned()));
    }
    bail!(
        "the model's answer is not a skill call, a name or `none`: {}",
        short(text)
    )
}

/// The skill a tool call names: `input.name`, `input.names[0]` or `name` of the input.
fn from_call(value: &Value) -> Option<String> {
    let input = value.get("input").or(value.get("arguments"));
    let named = |v: &Value| {
        v.get("name")
            .and_then(Value::as_str)
            .or_else(|| v.get("names")?.get(0)?.as_str())
            .or_else(|| v.get("skills")?.get(0)?.as_str())
            .map(str::to_owned)
    };
    match input {
        Some(input) => named(input),
        None => named(value),
    }
}

fn short(text: &str) -> String {
    let line = crate::out::one_line(text);
    match line.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_answer;

    #[test]
    fn answers_are_calls_names_or_none() {
        let cases = [
            (
                r#"{"name": "skill", "input": {"name": "pdf"}}"#,
                Some("pdf"),
            ),
            (
                r#"{"tool": "skill", "input": {"name": "pdf"}}"#,
                Some("pdf"),
            ),
            (r#"{"name": "pdf"}"#, Some("pdf")),
            (
                r#"{"name": "skills_load", "input": {"names": ["pdf"]}}"#,
                Some("pdf"),
            ),
            ("pdf\n", Some("pdf")),
            ("  None \n", None),
        ];
        for (answer, want) in cases {
            let got = parse_answer(answer).unwrap();
            assert_eq!(got.as_deref(), want, "{answer}");
        }
        for bad in ["", "I would load pdf", "{not json", r#"{"input": {}}"#] {
            assert!(parse_answer(bad).is_err(), "{bad}");
        }
    }
}
