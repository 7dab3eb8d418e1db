//! The JSON-lines framing under attack (moved from the executor's `attacks.rs` with the
//! protocol layer): malformed requests answered with their id, tool inputs naming a key
//! twice, batches bounded in the bytes they hold, ids holding a carriage return.

#[path = "../../executor/tests/common/mod.rs"]
mod common;

use common::{names, Env};
use serde_json::{json, Value};
use skills_executor::LoadMode;
use skills_protocol as protocol;

// Regression: a tool input naming a key twice was judged by its last value (serde_json's
// reading), while a host whose JSON reader keeps the first would run that one:
// `{"command": "rm -rf /", "command": "git status"}` was allowed.
#[test]
fn a_tool_input_naming_a_key_twice_is_refused() {
    let env = Env::new();
    env.skill("status", "allowed-tools: Bash(git status:*)\n", "Status.\n");
    let session = env.session();
    session.load(&names(&["status"]), LoadMode::Add).unwrap();
    let refused = [
        r#"{"id":1,"tool":"check_tool","input":{"tool":"Bash","input":{"command":"rm -rf /","command":"git status"}}}"#,
        r#"{"id":1,"tool":"check_tool","input":{"tool":"Bash","input":{"command":"git status","command":"rm -rf /"}}}"#,
        r#"{"id":1,"tool":"check_tool","input":{"tool":"Bash","input":{"command":"git status","opts":[{"a":1,"a":2}]}}}"#,
        // An input holding "names" and "skills" is read as a tree first: no key twice there either.
        r#"{"id":1,"tool":"check_tool","input":{"tool":"Bash","input":{"command":"rm -rf / # names skills","command":"git status","names":1,"skills":2}}}"#,
    ];
    for line in refused {
        let answer: Value = serde_json::from_str(&protocol::respond_line(&session, line)).unwrap();
        assert_eq!(answer["ok"], false, "{line}: {answer}");
        assert_eq!(
            answer["error"]["code"], "SKILL_BAD_INPUT",
            "{line}: {answer}"
        );
    }
    let once = r#"{"id":1,"tool":"check_tool","input":{"tool":"Bash","input":{"command":"git status","nested":{"a":1,"b":{"a":1}}}}}"#;
    let answer: Value = serde_json::from_str(&protocol::respond_line(&session, once)).unwrap();
    assert_eq!(answer["ok"], true, "{answer}");
    assert_eq!(answer["output"]["decision"], "allow", "{answer}");
}

// Regression (found by the protocol fuzz target): a request naming `input` twice was
// answered with a null id, so a host waiting on its id never heard of it.
#[test]
fn a_malformed_request_is_answered_with_its_id_when_it_names_one_once() {
    let env = Env::new();
    let session = env.session();
    let cases = [
        (r#"{"id":7,"tool":"hello","input":{},"input":{}}"#, "7"),
        (
            r#"{"id":"x","tool":"hello","tool":"skills_list","input":{}}"#,
            r#""x""#,
        ),
        (
            r#"{"id":[1,{"a":2}],"tool":"hello","input":{},"tool":1}"#,
            r#"[1,{"a":2}]"#,
        ),
        // Named twice, the id is no one's: answered as a line with none.
        (r#"{"id":1,"id":2,"tool":"hello","input":{}}"#, "null"),
        (r#"{"id":3,"tool":"hello","input":{}} {}"#, "null"),
        ("not json", "null"),
        // An array is no request, though its items would fill a request's fields in order.
        (r#"["", "hello", {}]"#, "null"),
    ];
    for (line, id) in cases {
        let answer = protocol::respond_line(&session, line);
        assert!(
            answer.starts_with(&format!("{{\"id\":{id},\"ok\":false,")),
            "{line} -> {answer}"
        );
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(
            answer["error"]["code"], "SKILL_BAD_REQUEST",
            "{line}: {answer}"
        );
    }
    // An input that is an array is refused the same way, over the wire and as a tree.
    let line = r#"{"id":1,"tool":"check_tool","input":["Bash",{"command":"ls"}]}"#;
    let answer: Value = serde_json::from_str(&protocol::respond_line(&session, line)).unwrap();
    assert_eq!(answer["error"]["code"], "SKILL_BAD_INPUT", "{answer}");
    let err =
        protocol::call(&session, "check_tool", json!(["Bash", {"command": "ls"}])).unwrap_err();
    assert_eq!(err.code(), "SKILL_BAD_INPUT");
}

// Regression: a batch held every answer before handing any back, and a script's captured
// output is megabytes of answer (a NUL byte is six bytes of JSON): a hundred pipelined
// runs of a script writing 1 MiB of NULs held 1.3 GB. The answers held are bounded in bytes;
// the rest of the batch is answered by a further call, in order.
#[cfg(unix)]
#[test]
fn a_batch_holds_a_bounded_size_of_answers() {
    let env = Env::new();
    env.skill("noisy", "", "Noise.\n");
    env.file("noisy", "scripts/zeros.sh", "head -c 1048576 /dev/zero\n");
    let session = env.session();
    session.load(&names(&["noisy"]), LoadMode::Add).unwrap();
    let lines: Vec<String> = (0..6)
        .map(|i| {
            format!(
                r#"{{"id":{i},"tool":"skills_run_script","input":{{"path":"scripts/zeros.sh"}}}}"#
            )
        })
        .collect();
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut answered = Vec::new();
    let mut calls = 0;
    while answered.len() < lines.len() {
        let part = protocol::respond_batch_part(&session, &lines[answered.len()..], None);
        assert!(!part.is_empty());
        let held: usize = part[..part.len() - 1].iter().map(String::len).sum();
        assert!(held < protocol::BATCH_ANSWER_BYTES, "{held}");
        answered.extend(part);
        calls += 1;
    }
    assert!(calls > 1, "six answers of 6 MB each were held at once");
    // `respond_batch` still answers every line (holding them all, as a library host that
    // asks for it wants).
    assert_eq!(protocol::respond_batch(&session, &lines).len(), lines.len());
    for (i, answer) in answered.iter().enumerate() {
        let answer: Value = serde_json::from_str(answer).unwrap();
        assert_eq!(answer["id"], i, "answered in order");
        assert_eq!(answer["output"]["exit_code"], 0, "{}", answer["error"]);
    }
}

// Regression (found by the protocol fuzz target): an id holding a carriage return between
// its tokens was echoed with it, and a host reading lines that also end at `\r` (Python's
// text mode) read the answer as two broken lines.
#[test]
fn an_id_holding_a_carriage_return_is_answered_on_one_line() {
    let env = Env::new();
    let session = env.session();
    let lines = [
        "{\"id\":[0\r\r,{\"x\":null}],\"tool\":\"hello\",\"input\":{}}",
        "{\"id\":[0\r,1],\"tool\":\"hello\",\"input\":{},\"input\":{}}",
    ];
    let answers = protocol::respond_batch(&session, &lines);
    for (line, answer) in lines.iter().zip(&answers) {
        assert!(!answer.contains('\r'), "{line:?} -> {answer:?}");
        let id = &serde_json::from_str::<Value>(answer).unwrap()["id"];
        let sent = &serde_json::from_str::<Value>(
            line.split(",\"tool\"")
                .next()
                .unwrap()
                .trim_start_matches("{\"id\":"),
        )
        .unwrap();
        assert_eq!(id, sent, "{answer}");
    }
}

/// A tool's name is read as JSON reads it: written with escapes, it names the same request
/// as written plainly (the plain spelling is taken from between its quotes, the rest
/// through the JSON reader).
#[test]
fn a_tool_name_written_with_escapes_names_the_same_request() {
    let env = Env::new();
    env.skill("status", "allowed-tools: Bash(git status:*)\n", "Status.\n");
    let session = env.session();
    session.load(&names(&["status"]), LoadMode::Add).unwrap();
    let input = r#""input":{"tool":"Bash","input":{"command":"git status"}}"#;
    let plain = protocol::respond_line(
        &session,
        &format!(r#"{{"id":1,"tool":"check_tool",{input}}}"#),
    );
    assert!(plain.contains(r#""decision":"allow""#), "{plain}");
    for name in [
        r#""check\u005ftool""#,
        r#""\u0063heck_tool""#,
        r#""check_too\u006c""#,
    ] {
        let line = format!(r#"{{"id":1,"tool":{name},{input}}}"#);
        assert_eq!(protocol::respond_line(&session, &line), plain, "{line}");
    }
    for name in [r#""check_tool\"""#, r#""""#, r#""check_tool ""#] {
        let line = format!(r#"{{"id":1,"tool":{name},{input}}}"#);
        let answer: Value = serde_json::from_str(&protocol::respond_line(&session, &line)).unwrap();
        assert_eq!(answer["ok"], false, "{line}: {answer}");
    }
}

/// A `check_tool` line of the usual shape (the tool named before the input) is read in one
/// pass; any other shape is read twice (the input as text first). Both readings answer
/// every input alike, allowed, denied or refused: each input below is sent both ways.
#[test]
fn a_check_tool_line_is_answered_alike_read_once_or_twice() {
    let env = Env::new();
    env.skill(
        "status",
        "allowed-tools: Bash(git status:*) Read\n",
        "Status.\n",
    );
    let session = env.session();
    session.load(&names(&["status"]), LoadMode::Add).unwrap();
    let inputs = [
        r#"{"tool":"Bash","input":{"command":"git status"}}"#,
        r#"{"tool":"Bash","input":{"command":"rm -rf /"}}"#,
        r#"{"input":{"command":"git status"},"tool":"Bash"}"#,
        r#"{"tool":"Read","input":{"file_path":"/etc/passwd"}}"#,
        r#"{"tool":"Bash","input":{"command":"echo \"\u00e9\\\n\t\""}}"#,
        r#"{"tool":"Ba\u0073h","input":{"command":"git status"}}"#,
        r#"{"tool":"Bash"}"#,
        r#"{"tool":"Bash","input":null}"#,
        r#"{"tool":"Bash","input":{"command":1}}"#,
        r#"{"tool":"Bash","input":{"command":"git status","command":"rm -rf /"}}"#,
        r#"{"tool":"Bash","tool":"Read","input":{"command":"git status"}}"#,
        r#"{"tool":"Bash","input":{"command":"git status"},"extra":1}"#,
        r#"{"tool":"Bash","input":{"command":"git status","names":1,"skills":2}}"#,
        r#"{"tool":"Bash","input":{"command":"rm # names skills","nested":{"a":1,"a":2}}}"#,
        r#"{"names":["x"],"skills":["y"],"tool":"Bash","input":{}}"#,
        r#"["Bash",{"command":"git status"}]"#,
        r#"null"#,
        r#"{}"#,
        r#"7"#,
        r#""Bash""#,
    ];
    for input in inputs {
        for id in ["1", r#""a\rb""#, "[1,{\"x\":null}]", "null"] {
            let once = format!(r#"{{"id":{id},"tool":"check_tool","input":{input}}}"#);
            let twice = format!(r#"{{"input":{input},"id":{id},"tool":"check_tool"}}"#);
            assert_eq!(
                protocol::respond_line(&session, &once),
                protocol::respond_line(&session, &twice),
                "{once}"
            );
        }
        // Without an id, and with space and another key around.
        let once = format!(r#" {{ "tool" : "check_tool" , "input" : {input} }} "#);
        let twice = format!(r#"{{"input":{input},"tool":"check_tool"}}"#);
        assert_eq!(
            protocol::respond_line(&session, &once),
            protocol::respond_line(&session, &twice),
            "{once}"
        );
    }
    // Lines the one pass leaves to the other reading: a key twice, another key, trailing
    // text; each answered as before (an error with its id, or the request).
    for line in [
        r#"{"id":1,"id":2,"tool":"check_tool","input":{"tool":"Bash","input":{}}}"#,
        r#"{"id":1,"tool":"check_tool","input":{"tool":"Bash","input":{}},"input":{}}"#,
        r#"{"id":1,"tool":"check_tool","input":{"tool":"Bash","input":{}},"x":1}"#,
        r#"{"id":1,"tool":"check_tool","input":{"tool":"Bash","input":{}}} {}"#,
    ] {
        let answer: Value = serde_json::from_str(&protocol::respond_line(&session, line)).unwrap();
        assert!(answer.get("ok").is_some(), "{line}: {answer}");
    }
}
