//! Fuzz target: the JSON-lines protocol layer (`protocol::respond_batch`), as a host's
//! pipelined lines reach it. Every line gets exactly one answer; every answer is one line
//! of JSON, an object with `ok`, and `output` or an `error` whose code is a stable
//! upper-case name; the id of a line that names one once is echoed byte for byte (a carriage
//! return between its tokens as a space), whatever else is wrong with the line. The requests that change the roots (`register_plugin`,
//! `unregister_plugin`, `reload`) are left out: a fuzzed root could be any folder of this
//! machine.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use serde::Deserialize;
use serde_json::value::RawValue;
use skills_protocol::respond_batch;
use skills_executor::{Executor, Session, SessionContext};
use skills_index::SkillIndex;
use skills_model::Layer;

fn session() -> &'static Session {
    static SESSION: OnceLock<Session> = OnceLock::new();
    SESSION.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("skills-fuzz-protocol-{}", std::process::id()));
        for (name, allowed) in [("alpha", "Read Bash(git status:*)"), ("beta", "Grep")] {
            let skill = base.join("skills").join(name);
            std::fs::create_dir_all(skill.join("references")).unwrap();
            std::fs::write(
                skill.join("SKILL.md"),
                format!("---\nname: {name}\ndescription: The {name} skill. Use when fuzzing.\nallowed-tools: {allowed}\n---\nBody of {name}.\n"),
            )
            .unwrap();
            std::fs::write(skill.join("references/guide.md"), "A guide.\n").unwrap();
        }
        let index = SkillIndex::builder().root(Layer::Personal, base.join("skills")).build().unwrap();
        Executor::builder(Arc::new(index)).build().session(SessionContext::default())
    })
}

/// What a request line says of its id: one JSON object naming it once.
#[derive(Deserialize)]
struct Request<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
}

/// An answer, its id and output kept as text: an id is echoed as it came, and JSON allows
/// escapes (a lone surrogate) that a reader decoding strings refuses.
#[derive(Deserialize)]
struct Answer<'a> {
    #[serde(borrow)]
    id: &'a RawValue,
    ok: bool,
    #[serde(borrow, default)]
    output: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<AnswerError>,
}

#[derive(Deserialize)]
struct AnswerError {
    code: String,
    #[allow(dead_code)]
    message: String,
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if ["plugin", "reload"].iter().any(|w| text.contains(w)) {
        return;
    }
    let lines: Vec<&str> = text.split('\n').take(8).collect();
    let answers = respond_batch(session(), &lines);
    assert_eq!(answers.len(), lines.len());
    for (line, answer) in lines.iter().zip(&answers) {
        assert!(!answer.contains(['\n', '\r']), "{answer:?}");
        let parsed: Answer<'_> = serde_json::from_str(answer).expect("an answer is JSON");
        match (parsed.ok, parsed.output, parsed.error) {
            (true, Some(_), None) => {}
            (false, None, Some(AnswerError { code, .. })) => assert!(
                !code.is_empty() && code.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'),
                "{code:?}"
            ),
            _ => panic!("neither an output nor an error: {answer}"),
        }
        // An object (serde would fill the fields from an array too).
        let object = line.trim_start().starts_with('{');
        match serde_json::from_str::<Request<'_>>(line)
            .ok()
            .filter(|_| object)
        {
            // Byte for byte, but a carriage return between tokens is written as a space.
            Some(Request { id: Some(id) }) => {
                assert_eq!(parsed.id.get(), id.get().replace('\r', " "), "{line:?}")
            }
            _ => assert_eq!(parsed.id.get(), "null", "{line:?}"),
        }
    }
});
