//! End-to-end tests of `skillctl session`: the real binary, driven over piped stdin and
//! stdout one JSON line at a time, with skills written into temporary directories.
//!
//! Covered: loading and the receipt, nested skills narrowing `check_tool`, unloading by
//! name and switching by replace, attacks on `skills_read` paths (`../`, absolute, a link escaping the skill, a
//! file over the limit), a script that runs, one that times out (its background child dies
//! too), one that floods stdout, an untrusted project root refused and then trusted,
//! malformed lines (the session goes on), and end of input ending the session with the
//! audit file (`--audit FILE`) holding every expected event, the final deactivation
//! included.
//!
//! Nothing waits by sleeping: responses are read on a thread and received with a
//! deadline, the exit is awaited the same way, and a session still running when its
//! harness is dropped is killed. Tests marked `// Regression:` failed before the fix they
//! name.

mod common;

use std::io::Read as _;
use std::process::Command;
use std::sync::mpsc;

use common::{Fixture, Session, DEADLINE};
use serde_json::{json, Value};

/// `git-flow` (git only, and Read) and `status-only` (git status only), plus `writer`.
fn git_skills() -> Fixture {
    let f = Fixture::new();
    f.skill(
        "git-flow",
        "allowed-tools: Bash(git:*) Read\nmodel: fast-model\n",
        "# Git flow\n\nUse git for everything.\n",
    );
    f.skill(
        "status-only",
        "allowed-tools: Bash(git status:*) Bash(git diff *) Write\n",
        "# Status only\n\nLook, do not touch.\n",
    );
    f.skill("writer", "", "# Writer\n\nWrite prose.\n");
    f
}

#[test]
fn load_returns_the_receipt_and_nested_skills_narrow_check_tool() {
    let f = git_skills();
    let mut s = f.session(&[]);
    // Nothing active: the host default allows.
    assert!(s.bash("rm -rf /"));

    let receipt = s.ok("skills_load", json!({"skills": ["git-flow"]}));
    let entry = &receipt["active_skills"][0];
    assert_eq!(entry["name"], "git-flow");
    assert!(entry["digest"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(entry["properties"]["model"], "fast-model");
    // Issue 37: the properties are under the keys the file writes them with.
    assert_eq!(
        entry["properties"]["allowed-tools"],
        json!(["Bash(git:*)", "Read"])
    );
    assert_eq!(entry["body"], "# Git flow\n\nUse git for everything.\n");
    assert_eq!(
        entry["base_path"].as_str().unwrap(),
        f.root().join("git-flow").to_str().unwrap()
    );
    assert!(entry["location"].as_str().unwrap().ends_with("SKILL.md"));
    assert!(entry["root_dir"].is_string());
    assert!(s.bash("git push origin main"));
    assert!(!s.bash("rm -rf /"));

    // Nested: narrows to git status / git diff; Write is not widened.
    let receipt = s.ok(
        "skills_load",
        json!({"skills": ["status-only"], "mode": "add"}),
    );
    let names: Vec<&str> = receipt["active_skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["git-flow", "status-only"]);
    assert!(s.bash("git status --short"));
    assert!(s.bash("git diff --staged"));
    assert!(!s.bash("git push origin main"));
    assert!(!s.bash("git diff"));
    let out = s.ok(
        "check_tool",
        json!({"tool": "write", "input": {"file_path": "/tmp/x"}}),
    );
    assert_eq!(out["decision"], "deny");
    assert!(
        out["reason"].as_str().unwrap().contains("git-flow"),
        "{out}"
    );

    // Unloading the inner skill restores the outer rules.
    let out = s.ok("skills_unload", json!({"skills": ["status-only"]}));
    assert_eq!(out["active_skills"], json!(["git-flow"]));
    assert!(s.bash("git push origin main"));
    let (status, _) = s.finish();
    assert!(status.success());
}

// Changed by issue 37: this test (`unload_out_of_order_names_what_must_go_first`) pinned
// `SKILL_UNLOAD_ORDER` and `SKILL_NOT_ACTIVE` for a named unload; the runtime spec's unload
// removes the named skills wherever they are and reports names that are not active.
#[test]
fn unload_below_the_top_removes_the_skill_and_the_rest_keep_their_order() {
    let f = git_skills();
    let mut s = f.session(&[]);
    s.ok(
        "skills_load",
        json!({"skills": ["writer", "git-flow", "status-only"], "mode": "add"}),
    );
    // `git-flow` is under `status-only`: it goes, and `status-only` alone now judges.
    assert!(!s.bash("git push origin main"));
    let out = s.ok("skills_unload", json!({"skills": ["git-flow", "nobody"]}));
    assert_eq!(out["unloaded"], json!(["git-flow"]));
    assert_eq!(out["active_skills"], json!(["writer", "status-only"]));
    assert_eq!(out["not_active"], json!(["nobody"]));
    assert!(s.bash("git status"));
    assert!(!s.bash("git push origin main"));
    let out = s.ok("skills_unload", json!({"all": true}));
    assert_eq!(out["active_skills"], json!([]));
    // A suggestion for a misspelt name.
    let (code, message) = s.err("skills_load", json!({"skills": ["git-flw"]}));
    assert_eq!(code, "SKILL_NOT_FOUND");
    assert!(message.contains("did you mean \"git-flow\""), "{message}");
    let (status, _) = s.finish();
    assert!(status.success());
}

// Issue 37: the runtime spec's skill switching end to end. Inside a skill that restricts
// tools (`Read Bash(git status:*)`, no runtime tool listed), the model switches with a
// replace-mode load; a skill the host pinned survives the replace and the model's unload.
#[test]
fn the_model_switches_skills_by_replace_under_a_restriction_and_the_host_s_pin_stays() {
    let f = git_skills();
    f.skill(
        "narrow",
        "allowed-tools: Read Bash(git status:*)\n",
        "# Narrow\n\nOnly look.\n",
    );
    let mut s = f.session(&[]);
    s.ok("host_activate", json!({"names": ["git-flow"]}));
    s.ok("skills_load", json!({"names": ["narrow"], "mode": "add"}));
    assert!(!s.bash("git push origin main"));
    let out = s.ok(
        "skills_load",
        json!({"names": ["writer"], "mode": "replace"}),
    );
    let stack: Vec<&str> = out["active_skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(stack, ["git-flow", "writer"]);
    assert_eq!(out["kept_pinned"], json!(["git-flow"]));
    // The narrow skill's rules are gone; the pinned one's still judge.
    assert!(s.bash("git push origin main"));
    assert!(!s.bash("rm -rf /"));
    let (code, _) = s.err("skills_unload", json!({"names": ["git-flow"]}));
    assert_eq!(code, "SKILL_PINNED_BY_HOST");
    let (status, _) = s.finish();
    assert!(status.success());
}

#[test]
fn the_cap_on_active_skills_comes_from_the_command_line() {
    let f = git_skills();
    let mut s = f.session(&["--max-active", "2"]);
    let (code, message) = s.err(
        "skills_load",
        json!({"skills": ["writer", "git-flow", "status-only"]}),
    );
    assert_eq!(code, "SKILL_TOO_MANY_ACTIVE");
    assert!(message.contains("load fewer"), "{message}");
    let (status, _) = s.finish();
    assert!(status.success());
}

// Regression (review): a declared tool whose name is not plain was accepted, and every call
// to it was then denied; the host hears of it when it starts.
#[test]
fn a_declared_tool_name_that_is_not_plain_is_refused_at_start() {
    for flag in ["--path-tool", "--primary-arg"] {
        let run = common::run(common::skillctl().args([
            "session",
            "--no-defaults",
            flag,
            "\u{c9}diter=file",
        ]));
        assert_eq!(run.code, Some(2), "{flag}: {}", run.stderr);
        assert!(
            run.stderr.contains("not a plain tool name"),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn read_path_attacks_are_refused() {
    let f = Fixture::new();
    f.skill("docs", "", "# Docs\n");
    f.file("docs", "references/guide.md", "The guide.\n");
    f.file("docs", "assets/huge.txt", vec![b'x'; 200_001]);
    f.skill("neighbour", "", "# Neighbour\n");
    let secret = f.path().join("secret.txt");
    std::fs::write(&secret, "top secret").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&secret, f.root().join("docs/references/secret.md")).unwrap();

    let mut s = f.session(&[]);
    let (code, _) = s.err("skills_read", json!({"path": "references/guide.md"}));
    assert_eq!(code, "SKILL_NOT_ACTIVE");
    s.ok("skills_load", json!({"skills": ["docs"]}));
    let out = s.ok("skills_read", json!({"path": "references/guide.md"}));
    assert_eq!(out["content"], "The guide.\n");
    assert_eq!(out["encoding"], "text");

    for (path, needle) in [
        ("../neighbour/SKILL.md", ".."),
        ("references/../../neighbour/SKILL.md", ".."),
        ("../../secret.txt", ".."),
        (secret.to_str().unwrap(), "absolute"),
        ("/etc/passwd", "absolute"),
    ] {
        let (code, message) = s.err("skills_read", json!({ "path": path }));
        assert_eq!(code, "SKILL_PATH_INVALID", "{path}");
        assert!(message.contains(needle), "{path}: {message}");
    }
    #[cfg(unix)]
    {
        let (code, message) = s.err("skills_read", json!({"path": "references/secret.md"}));
        assert_eq!(code, "SKILL_PATH_INVALID");
        assert!(message.contains("outside the skill"), "{message}");
        assert!(!message.contains("top secret"));
    }
    let (code, message) = s.err("skills_read", json!({"path": "assets/huge.txt"}));
    assert_eq!(code, "SKILL_FILE_TOO_LARGE");
    assert!(message.contains("limit of 200000 bytes"), "{message}");
    let (status, _) = s.finish();
    assert!(status.success());
}

/// A skill with scripts: one that echoes, one that hangs (with a background child holding
/// the FIFO named by its argument), one that floods stdout.
fn script_skills(f: &Fixture) {
    f.skill("runner", "", "# Runner\n\nRun the scripts.\n");
    f.file(
        "runner",
        "scripts/echo.sh",
        "printf 'arg:%s\\n' \"$@\"\necho \"dir:$(pwd)\"\n",
    );
    f.file(
        "runner",
        "scripts/hang.sh",
        "exec 3> \"$1\"\nsleep 60 >&3 &\nexec 3>&-\necho waiting\nsleep 60\n",
    );
    f.file(
        "runner",
        "scripts/flood.sh",
        "head -c 5000000 /dev/zero | tr '\\0' y\necho done >&2\n",
    );
}

#[test]
fn a_script_runs_with_its_arguments() {
    let f = Fixture::new();
    script_skills(&f);
    let mut s = f.session(&[]);
    s.ok("skills_load", json!({"skills": ["runner"]}));
    let out = s.ok(
        "skills_run_script",
        json!({"path": "scripts/echo.sh", "args": ["one two", "$HOME", "; ls"]}),
    );
    assert_eq!(out["exit_code"], 0, "{out}");
    let dir = std::fs::canonicalize(f.root().join("runner")).unwrap();
    assert_eq!(
        out["stdout"],
        format!("arg:one two\narg:$HOME\narg:; ls\ndir:{}\n", dir.display())
    );
    assert_eq!(out["timed_out"], false);
    assert_eq!(out["truncated"], false);
    assert_eq!(out["path"], "scripts/echo.sh");
    assert!(out["duration_ms"].is_u64());
    // Not under scripts/.
    let (code, _) = s.err("skills_run_script", json!({"path": "SKILL.md"}));
    assert_eq!(code, "SKILL_PATH_INVALID");
    let (status, _) = s.finish();
    assert!(status.success());
}

#[cfg(unix)]
#[test]
fn a_script_that_times_out_is_killed_with_its_children() {
    let f = Fixture::new();
    script_skills(&f);
    let fifo = f.path().join("alive.fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    // End of file on the FIFO means its last writer, the background `sleep`, is dead.
    let (eof_tx, eof) = mpsc::channel();
    let reader = fifo.clone();
    std::thread::spawn(move || {
        let mut file = std::fs::File::open(reader).unwrap();
        let mut bytes = Vec::new();
        let _ = file.read_to_end(&mut bytes);
        let _ = eof_tx.send(());
    });
    let mut s = f.session(&[]);
    s.ok("skills_load", json!({"skills": ["runner"]}));
    let out = s.ok(
        "skills_run_script",
        json!({"path": "scripts/hang.sh", "args": [fifo], "timeout_ms": 1500}),
    );
    assert_eq!(out["timed_out"], true, "{out}");
    assert_eq!(out["exit_code"], Value::Null);
    assert_eq!(out["stdout"], "waiting\n");
    eof.recv_timeout(DEADLINE)
        .expect("the script's background child survived the timeout");
    // The session goes on.
    assert!(s.bash("ls"));
    let (status, _) = s.finish();
    assert!(status.success());
}

#[test]
fn a_script_that_floods_stdout_is_capped() {
    let f = Fixture::new();
    script_skills(&f);
    let mut s = f.session(&[]);
    s.ok("skills_load", json!({"skills": ["runner"]}));
    let out = s.ok("skills_run_script", json!({"path": "scripts/flood.sh"}));
    assert_eq!(out["exit_code"], 0, "{}", out["stderr"]);
    assert_eq!(out["truncated"], true);
    let stdout = out["stdout"].as_str().unwrap();
    assert_eq!(stdout.len(), 1 << 20);
    assert!(stdout.bytes().all(|b| b == b'y'));
    assert_eq!(out["stderr"], "done\n");
    let (status, _) = s.finish();
    assert!(status.success());
}

#[test]
fn an_untrusted_project_root_cannot_run_scripts_until_trusted() {
    let f = Fixture::new();
    script_skills(&f);
    f.skill("hooked", "hooks:\n  pre: [scripts/pre.sh]\n", "# Hooked\n");
    f.file("hooked", "scripts/pre.sh", "echo pre > pre.log\n");
    let project = f.root_arg("project");

    let mut s = Session::start(f.path(), &[project.as_str()]);
    let listed = s.ok("skills_list", json!({}));
    assert_eq!(listed["skills"][0]["layer"], "project");
    s.ok("skills_load", json!({"skills": ["runner"]}));
    let (code, message) = s.err("skills_run_script", json!({"path": "scripts/echo.sh"}));
    assert_eq!(code, "SKILL_UNTRUSTED");
    assert!(message.contains("--trust project"), "{message}");
    let (code, message) = s.err("skills_load", json!({"skills": ["hooked"]}));
    assert_eq!(code, "SKILL_UNTRUSTED");
    assert!(message.contains("--trust project"), "{message}");
    assert!(!f.root().join("hooked/pre.log").exists());
    let (status, _) = s.finish();
    assert!(status.success());

    let mut s = Session::start(f.path(), &[project.as_str(), "--trust", "project"]);
    s.ok("skills_load", json!({"skills": ["runner"]}));
    let out = s.ok("skills_run_script", json!({"path": "scripts/echo.sh"}));
    assert_eq!(out["exit_code"], 0);
    s.ok("skills_load", json!({"skills": ["hooked"]}));
    assert_eq!(
        std::fs::read_to_string(f.root().join("hooked/pre.log")).unwrap(),
        "pre\n"
    );
    let (status, _) = s.finish();
    assert!(status.success());
}

#[test]
fn a_malformed_line_is_answered_and_the_session_goes_on() {
    let f = git_skills();
    let mut s = f.session(&[]);
    s.send_raw(b"this is not json\n");
    let response = s.recv();
    assert_eq!(response["ok"], false);
    assert_eq!(response["id"], Value::Null);
    assert_eq!(response["error"]["code"], "SKILL_BAD_REQUEST");
    assert!(response["error"]["message"].is_string());

    s.send_raw(b"{\"id\": 7, \"input\": {}}\n");
    let response = s.recv();
    assert_eq!(response["id"], 7);
    assert_eq!(response["error"]["code"], "SKILL_BAD_REQUEST");

    // Blank lines are skipped; an unknown tool and bad input are errors with codes.
    s.send_raw(b"\n   \n");
    let (code, _) = s.err("skills_fly", json!({}));
    assert_eq!(code, "SKILL_UNKNOWN_TOOL");
    let (code, _) = s.err("skills_load", json!({"skills": "git-flow"}));
    assert_eq!(code, "SKILL_BAD_INPUT");
    let (code, _) = s.err("check_tool", json!({"input": {}}));
    assert_eq!(code, "SKILL_BAD_INPUT");

    // The session still works.
    s.ok("skills_load", json!({"skills": ["git-flow"]}));
    assert!(!s.bash("rm -rf /"));
    let (status, stderr) = s.finish();
    assert!(status.success(), "{stderr}");
}

// Regression: a line that was not UTF-8 ended the session (exit 2, "reading stdin: stream
// did not contain valid UTF-8") instead of being answered like any malformed line.
#[test]
fn a_line_that_is_not_utf8_is_answered_and_the_session_goes_on() {
    let f = git_skills();
    let mut s = f.session(&[]);
    s.ok("skills_load", json!({"skills": ["git-flow"]}));
    s.send_raw(b"{\"id\": 1, \"tool\": \"skills_list\xff\xfe\"}\n");
    let response = s.recv();
    assert_eq!(response["ok"], false, "{response}");
    assert_eq!(response["error"]["code"], "SKILL_BAD_REQUEST");
    assert!(!s.bash("rm -rf /"));
    let (status, stderr) = s.finish();
    assert!(status.success(), "{stderr}");
}

#[test]
fn tool_definitions_instructions_and_list_are_served() {
    let f = git_skills();
    let mut s = f.session(&[]);
    let defs = s.ok("tool_definitions", json!({}));
    let defs = defs.as_array().unwrap();
    assert!(defs.len() >= 5);
    for d in defs {
        let name = d["name"].as_str().unwrap();
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "{name}"
        );
        assert_eq!(d["input_schema"]["type"], "object", "{name}");
    }
    let out = s.ok("instructions", json!({}));
    let text = out["instructions"].as_str().unwrap();
    assert!(
        text.contains("git-flow") && text.contains("writer"),
        "{text}"
    );
    let out = s.ok("skills_list", json!({}));
    assert_eq!(out["skills"].as_array().unwrap().len(), 3);
    let (status, _) = s.finish();
    assert!(status.success());
}

#[test]
fn end_of_input_ends_the_session_and_the_audit_file_holds_every_event() {
    let f = Fixture::new();
    script_skills(&f);
    f.skill(
        "careful",
        "allowed-tools: Bash(git status:*) Read\n",
        "# Careful\n",
    );
    f.file("careful", "references/notes.md", "Notes.\n");
    f.file("careful", "scripts/check.sh", "echo ok\n");
    let audit = f.path().join("audit.jsonl");
    let audit_arg = format!("--audit={}", audit.display());
    let mut s = f.session(&[audit_arg.as_str(), "--agent", "ci-bot", "--tenant", "acme"]);
    s.ok("skills_load", json!({"skills": ["runner", "careful"]}));
    assert!(s.bash("git status"));
    assert!(!s.bash("git push"));
    let script = f.root().join("careful/scripts/check.sh");
    let out = s.ok(
        "check_tool",
        json!({"tool": "Read", "input": {"file_path": script}}),
    );
    assert_eq!(out["decision"], "deny");
    assert!(out["reason"]
        .as_str()
        .unwrap()
        .contains("skills_run_script"));
    s.ok("skills_read", json!({"path": "references/notes.md"}));
    s.ok("skills_run_script", json!({"path": "scripts/check.sh"}));
    s.ok("skills_unload", json!({"skills": ["careful"]}));
    s.ok("skills_load", json!({"skills": ["careful"], "mode": "add"}));
    let (status, stderr) = s.finish();
    assert!(status.success(), "{stderr}");

    let text = std::fs::read_to_string(&audit).unwrap();
    assert!(text.ends_with('\n'));
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let summary: Vec<(String, String)> = events
        .iter()
        .map(|e| {
            (
                e["event"].as_str().unwrap().to_owned(),
                e["skill_name"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = [
        ("skill_activated", "runner"),
        ("skill_activated", "careful"),
        ("tool_execution_in_skill", "careful"),
        ("tool_restriction_violated", "careful"),
        ("script_read_blocked", "careful"),
        ("skill_file_read", "careful"),
        ("script_started", "careful"),
        ("script_executed", "careful"),
        ("skill_deactivated", "careful"),
        ("skill_activated", "careful"),
        // End of input: the task guard deactivates the stack, top first.
        ("skill_deactivated", "careful"),
        ("skill_deactivated", "runner"),
    ]
    .iter()
    .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
    .collect();
    assert_eq!(summary, expected);
    let session_id = events[0]["session_id"].as_str().unwrap();
    for e in &events {
        assert_eq!(e["session_id"], session_id);
        assert_eq!(e["agent_id"], "ci-bot");
        assert_eq!(e["tenant_id"], "acme");
        assert!(e["timestamp"].as_str().unwrap().ends_with('Z'));
    }
    assert_eq!(events[2]["tool_name"], "Bash");
    assert_eq!(events[2]["tool_allowed"], true);
    assert_eq!(
        events[2]["allowed_tools"],
        json!(["Bash(git status:*)", "Read"])
    );
    assert_eq!(events[3]["tool_allowed"], false);
    assert!(events[3]["error"].is_string());
}

// Regression (attack): SIGTERM killed `skillctl session` at once: no deactivation was
// recorded and no post hook ran. A signal now ends the session as the end of input does,
// after stopping a script that runs then and recording its run.
#[cfg(unix)]
#[test]
fn a_signal_ends_the_session_as_the_end_of_input_does() {
    for running in [false, true] {
        let f = Fixture::new();
        let dir = f.skill("hooky", "hooks:\n  post: [scripts/post.sh]\n", "Hooks.\n");
        f.file("hooky", "scripts/post.sh", "echo done > post.out\n");
        f.file("hooky", "scripts/hold.sh", common::HOLD_SCRIPT);
        f.file("hooky", "scripts/mark.sh", "echo ran > \"$1\"\n");
        let audit = f.path().join("audit.jsonl");
        let audit_arg = format!("--audit={}", audit.display());
        let mut s = f.session(&[&audit_arg, "--no-watch"]);
        s.ok("skills_load", json!({"names": ["hooky"]}));
        let mut expected = vec!["skill_deactivated", "hook_started", "hook_executed"];
        let marked = f.path().join("marked");
        if running {
            let fifo = common::fifo(&f, "started");
            // One batch: the script that runs when the signal comes, and one after it
            // (regression, review: it still started after the signal).
            let line = json!({"id": 9, "tool": "skills_run_script", "input": {"path": "scripts/hold.sh", "args": [fifo]}});
            let next = json!({"id": 10, "tool": "skills_run_script", "input": {"path": "scripts/mark.sh", "args": [marked]}});
            s.send_raw(format!("{line}\n{next}\n").as_bytes());
            assert_eq!(std::fs::read_to_string(&fifo).unwrap(), "started\n");
            expected.insert(0, "script_executed");
        }
        let (status, stderr) = s.signal_and_finish("TERM");
        assert!(status.success(), "running: {running}: {status:?} {stderr}");
        common::assert_in_audit(&audit, &expected, &format!("running: {running}"));
        assert_eq!(
            std::fs::read_to_string(dir.join("post.out"))
                .ok()
                .as_deref(),
            Some("done\n"),
            "running: {running}"
        );
        assert!(
            !marked.exists(),
            "a script of the batch started after the signal"
        );
    }
}

// Regression (review): a session whose host stopped reading its answers held its output
// for ever, and a signal then waited for it for ever (the handler had replaced the
// default action): SIGTERM no longer ended it at all. The session ends without the output
// once a grace has passed.
#[cfg(target_os = "linux")]
#[test]
fn a_signal_ends_a_session_whose_answers_nobody_reads() {
    use std::io::Write as _;
    let f = Fixture::new();
    f.skill("alpha", "", "Alpha.\n");
    let audit = f.path().join("audit.jsonl");
    let mut child = common::skillctl()
        .args(["session", "--no-defaults", "--no-watch"])
        .arg(f.root_arg("personal"))
        .arg(format!("--audit={}", audit.display()))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut input =
        String::from("{\"id\":0,\"tool\":\"skills_load\",\"input\":{\"names\":[\"alpha\"]}}\n");
    // Answers of 5 KB each, far more than the session's widened pipe holds (1 MiB), from
    // requests that fit in any pipe (48 KB): the write below never waits.
    for id in 1..1000 {
        input.push_str(&format!(
            "{{\"id\":{id},\"tool\":\"tool_definitions\",\"input\":{{}}}}\n"
        ));
    }
    stdin.write_all(input.as_bytes()).unwrap();
    // Blocked writing an answer nobody reads.
    let tasks = format!("/proc/{}/task", child.id());
    while !std::fs::read_dir(&tasks)
        .unwrap()
        .filter_map(Result::ok)
        .any(|t| {
            std::fs::read_to_string(t.path().join("wchan")).is_ok_and(|w| w.contains("pipe_write"))
        })
    {
        std::thread::yield_now();
    }
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    common::assert_in_audit(&audit, &["skill_activated", "skill_deactivated"], "");
    drop(stdin);
}

/// A host that pipelines requests writes many before it reads the answers: the session
/// widens its pipes to 1 MiB where the system allows it (Linux, up to its
/// `fs.pipe-max-size`), so that the two need not take turns every 64 KiB.
#[cfg(target_os = "linux")]
#[test]
fn a_session_widens_its_pipes_where_the_system_allows() {
    use std::io::{BufRead as _, Write as _};
    use std::process::Stdio;
    let f = Fixture::new();
    let mut child = Command::new(common::BIN)
        .args(["session", "--no-defaults"])
        .current_dir(f.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let ours = rustix::pipe::fcntl_getpipe_size(&stdout).unwrap();
    stdin
        .write_all(b"{\"id\":1,\"tool\":\"hello\",\"input\":{}}\n")
        .unwrap();
    // The first answer comes after the pipes were widened.
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut stdout = std::io::BufReader::new(stdout);
        let mut line = String::new();
        let _ = stdout.read_line(&mut line);
        let _ = tx.send(line);
        stdout
    });
    let answer = rx.recv_timeout(DEADLINE).expect("an answer to hello");
    assert!(answer.contains("\"ok\":true"), "{answer}");
    let stdout = reader.join().unwrap();
    let max: usize = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .ok()
        .and_then(|m| m.trim().parse().ok())
        .unwrap_or(0);
    let want = if max >= 1 << 20 { 1 << 20 } else { ours };
    assert_eq!(rustix::pipe::fcntl_getpipe_size(&stdin).unwrap(), want);
    assert_eq!(
        rustix::pipe::fcntl_getpipe_size(stdout.get_ref()).unwrap(),
        want
    );
    drop(stdin);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    assert!(rx
        .recv_timeout(DEADLINE)
        .expect("the session ends")
        .unwrap()
        .success());
}
