//! `skillctl session` bounds each request line: an over-long line gets an error response
//! and the session goes on.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

#[test]
fn an_over_long_line_is_answered_and_the_session_goes_on() {
    // Regression (review): a request line with no newline grew memory without limit.
    let tmp = tempfile::tempdir().unwrap();
    let root = format!("personal={}", tmp.path().display());
    let mut child = Command::new(env!("CARGO_BIN_EXE_skillctl"))
        .args(["session", "--no-defaults", "--root", &root])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let long = vec![b'x'; 5 << 20];
        stdin.write_all(&long).unwrap();
        stdin
            .write_all(b"\n{\"id\": 2, \"tool\": \"skills_list\", \"input\": {}}\n")
            .unwrap();
    });
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    writer.join().unwrap();
    assert!(child.wait().unwrap().success());
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].contains("SKILL_BAD_REQUEST") && lines[0].contains("over"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains("\"id\":2") && lines[1].contains("\"ok\":true"),
        "{}",
        lines[1]
    );
}
