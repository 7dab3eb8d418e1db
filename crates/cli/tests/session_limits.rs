//! `skillctl session` bounds each request line: an over-long line gets an error response
//! and the session goes on.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

/// What `skillctl session` over `root` answers to `input` (written from another thread
/// while the answers are read); the session must end successfully.
fn session(root: &str, input: Vec<u8>) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_skillctl"))
        .args(["session", "--no-defaults", "--no-watch", "--root", root])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input).unwrap());
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    writer.join().unwrap();
    assert!(child.wait().unwrap().success());
    out
}

#[test]
fn an_over_long_line_is_answered_and_the_session_goes_on() {
    // Regression (review): a request line with no newline grew memory without limit.
    let tmp = tempfile::tempdir().unwrap();
    let root = format!("personal={}", tmp.path().display());
    let mut input = vec![b'x'; 5 << 20];
    input.extend_from_slice(b"\n{\"id\": 2, \"tool\": \"skills_list\", \"input\": {}}\n");
    let out = session(&root, input);
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

/// Regression: a batch of pipelined requests held all its answers (a script's output is
/// megabytes of answer) before writing one. The protocol layer now answers a batch in
/// parts bounded in bytes: every line is still answered, in order, lines refused before
/// they reach it included.
#[cfg(unix)]
#[test]
fn a_batch_answered_in_parts_answers_every_line_in_order() {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = tempfile::tempdir().unwrap();
    let skill = tmp.path().join("noisy");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: noisy\ndescription: Noise. Use when testing.\n---\nNoise.\n",
    )
    .unwrap();
    let script = skill.join("scripts/zeros.sh");
    std::fs::write(&script, "head -c 1048576 /dev/zero\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = format!("personal={}", tmp.path().display());
    let mut input =
        String::from("{\"id\":0,\"tool\":\"skills_load\",\"input\":{\"names\":[\"noisy\"]}}\n");
    for id in 1..=7 {
        if id == 3 {
            input.push_str("not json\n");
        } else {
            input.push_str(&format!(
                "{{\"id\":{id},\"tool\":\"skills_run_script\",\"input\":{{\"path\":\"scripts/zeros.sh\"}}}}\n"
            ));
        }
    }
    let out = session(&root, input.into_bytes());
    let answers: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 8);
    for (i, answer) in answers.iter().enumerate() {
        if i == 3 {
            assert_eq!(answer["error"]["code"], "SKILL_BAD_REQUEST", "{answer}");
        } else {
            assert_eq!(answer["id"], i, "in order");
            assert_eq!(answer["ok"], true, "{}", answer["error"]);
        }
    }
}
