//! `skillctl` as a well-behaved Unix tool: a closed pipe ends the output quietly with
//! status 0, and a root that does not exist draws a warning (and stops nothing).

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;

/// Many skills, so the output is larger than a pipe's buffer.
fn many_skills(dir: &std::path::Path, n: usize) {
    for i in 0..n {
        let folder = dir.join(format!("skill-{i:05}"));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("SKILL.md"),
            format!("---\nname: skill-{i:05}\ndescription: Skill number {i}, with a description long enough to fill the pipe quickly. Use when testing.\n---\nBody.\n"),
        )
        .unwrap();
    }
}

#[test]
fn a_closed_pipe_ends_quietly_with_status_zero() {
    let tmp = tempfile::tempdir().unwrap();
    many_skills(tmp.path(), 2000);
    let root = format!("project={}", tmp.path().display());
    for args in [
        vec!["list", "--no-defaults", "--root", &root],
        vec!["list", "--no-defaults", "--root", &root, "--format", "json"],
        vec!["prompt", "--no-defaults", "--root", &root],
        vec![
            "prompt",
            "--no-defaults",
            "--root",
            &root,
            "--format",
            "tool",
        ],
        vec!["completions", "bash"],
    ] {
        let mut child = common::skillctl()
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read one line, then close the pipe, as `head -1` does.
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(!first.is_empty(), "{args:?}");
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&output.stderr), "", "{args:?}");
    }
}

#[test]
fn a_root_that_does_not_exist_draws_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let typo = tmp.path().join("skilz");
    let run = common::run(common::skillctl().args([
        "list",
        "--no-defaults",
        "--root",
        &format!("project={}", typo.display()),
    ]));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stderr.contains("warning")
            && run.stderr.contains(&typo.display().to_string())
            && run.stderr.contains("does not exist"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.starts_with("0 skills"), "{}", run.stdout);
    // A root that exists draws nothing.
    let run = common::run(common::skillctl().args([
        "list",
        "--no-defaults",
        "--root",
        &format!("project={}", tmp.path().display()),
    ]));
    assert_eq!(run.stderr, "");
}

#[test]
fn completions_are_generated_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let run = common::run(common::skillctl().args(["completions", shell]));
        let script = run.ok();
        assert!(script.contains("skillctl"), "{shell}");
        for subcommand in ["validate", "list", "search", "session"] {
            assert!(script.contains(subcommand), "{shell} lacks {subcommand}");
        }
    }
    common::run(common::skillctl().args(["completions", "tcsh"])).fails(2, "tcsh");
}

#[test]
fn man_pages_are_generated_and_help_shows_examples_and_exit_codes() {
    let tmp = tempfile::tempdir().unwrap();
    common::run(common::skillctl().arg("man").arg(tmp.path())).ok();
    let page = std::fs::read_to_string(tmp.path().join("skillctl.1")).unwrap();
    assert!(page.contains(".TH"), "{page}");
    for subcommand in ["validate", "list", "search", "completions"] {
        assert!(page.contains(subcommand), "{subcommand}");
        assert!(tmp
            .path()
            .join(format!("skillctl-{subcommand}.1"))
            .is_file());
    }
    let help = common::run(common::skillctl().arg("--help"));
    let text = help.ok();
    assert!(
        text.contains("Examples:") && text.contains("Exit status:"),
        "{text}"
    );
}

#[test]
fn colour_only_when_asked_and_never_with_no_color() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("Bad_Name");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: Bad_Name\ndescription: Bad. Use when testing.\n---\nBody.\n",
    )
    .unwrap();
    let validate = |env: &[(&str, &str)]| {
        let mut cmd = common::skillctl();
        cmd.arg("validate")
            .arg(&dir)
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE");
        for (k, v) in env {
            cmd.env(k, v);
        }
        common::run(&mut cmd).stdout
    };
    // Piped: plain.
    assert!(!validate(&[]).contains('\x1b'));
    // Forced: coloured.
    assert!(validate(&[("CLICOLOR_FORCE", "1")]).contains("\x1b[1;31merror"));
    // NO_COLOR wins.
    assert!(!validate(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]).contains('\x1b'));
}

#[test]
fn every_command_shows_examples_and_exit_status() {
    for command in [
        "validate",
        "list",
        "show",
        "prompt",
        "search",
        "watch",
        "session",
        "mcp",
        "publish",
        "new",
        "read-properties",
        "completions",
    ] {
        let run = common::run(common::skillctl().args([command, "--help"]));
        let text = run.ok();
        assert!(text.contains("Examples:"), "{command}: {text}");
        assert!(text.contains("Exit status:"), "{command}: {text}");
    }
}

/// Regression: a skill folder whose name is not UTF-8 was called `""` in the message that
/// its name does not match it.
#[test]
fn a_folder_name_not_utf8_is_shown_not_called_empty() {
    use std::os::unix::ffi::OsStrExt as _;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(std::ffi::OsStr::from_bytes(b"ok-\xff"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: ok-x\ndescription: A skill. Use when testing.\n---\nbody\n",
    )
    .unwrap();
    let run = common::run(
        common::skillctl()
            .args(["validate", "--format", "json"])
            .arg(&dir),
    );
    assert_eq!(run.code, Some(1), "{run:?}");
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let messages = doc["skills"][0]["diagnostics"].to_string();
    assert!(messages.contains("ok-\u{fffd}"), "{messages}");
    assert!(!messages.contains(r#"directory name \"\""#), "{messages}");
}

/// Regression: `validate` called every path it could not reach "no such file or directory"
/// (a link loop too), and counted the loop as an invalid skill while exiting as for a
/// missing path.
#[test]
fn validate_says_why_a_path_cannot_be_reached() {
    let tmp = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("loop-b", tmp.path().join("loop-a")).unwrap();
    std::os::unix::fs::symlink("loop-a", tmp.path().join("loop-b")).unwrap();
    let run = common::run(
        common::skillctl()
            .args(["validate", "--format", "json"])
            .arg(tmp.path().join("loop-a")),
    );
    assert_eq!(run.code, Some(2), "{run:?}");
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let message = doc["skills"][0]["diagnostics"][0]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!message.contains("no such file"), "{message}");
    assert!(
        message.to_lowercase().contains("symbolic links"),
        "{message}"
    );
    assert_eq!(doc["summary"]["missing"], 1, "{doc}");
    assert_eq!(doc["summary"]["invalid"], 0, "{doc}");
}

/// Regression: a skill folder whose name is not UTF-8 was left out of `list` without a
/// word (the reason went to a log nobody read): it is said on standard error.
#[test]
fn a_skill_folder_left_out_is_said() {
    use std::os::unix::ffi::OsStrExt as _;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: cafe\ndescription: A skill. Use when testing.\n---\nbody\n",
    )
    .unwrap();
    let root = format!("project={}", tmp.path().display());
    let run = common::run(common::skillctl().args(["list", "--no-defaults", "--root", &root]));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("not UTF-8, left out"), "{run:?}");
    assert!(run.stderr.contains("caf"), "{run:?}");
}

/// Regression: a warning quoting a folder's name kept a line break in it, so a folder
/// could write a line of its own choosing that looked like `skillctl`'s.
#[test]
fn a_warning_about_a_folder_stays_on_one_line() {
    use std::os::unix::ffi::OsStrExt as _;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(std::ffi::OsStr::from_bytes(
        b"x\xff\nskillctl: error: forged",
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: x\ndescription: A skill. Use when testing.\n---\nbody\n",
    )
    .unwrap();
    let root = format!("project={}", tmp.path().display());
    let run = common::run(common::skillctl().args(["list", "--no-defaults", "--root", &root]));
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stderr.contains("not UTF-8, left out"), "{run:?}");
    assert!(
        run.stderr
            .lines()
            .all(|l| !l.starts_with("skillctl: error")),
        "{run:?}"
    );
    assert!(
        run.stderr.contains("\\u{a}skillctl: error: forged"),
        "{run:?}"
    );
}

/// Regression: a diagnostic of a file under a folder whose name is not UTF-8 cut
/// `list --format json` off mid-document: its path is written lossily now.
#[test]
fn list_json_stays_whole_with_a_diagnostic_path_not_utf8() {
    use std::os::unix::ffi::OsStrExt as _;
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().join(std::ffi::OsStr::from_bytes(b"r\xff"));
    let bad = cwd.join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(
        bad.join("SKILL.md"),
        "---\nname: bad\ndescription: A skill. Use when testing.\nfoo: [\n---\nbody\n",
    )
    .unwrap();
    let run = common::run(common::skillctl().current_dir(&cwd).args([
        "list",
        "--no-defaults",
        "--root",
        "personal=.",
        "--format",
        "json",
    ]));
    assert_eq!(run.code, Some(0), "{run:?}");
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("one JSON document");
    let path = doc["diagnostics"][0]["path"].as_str().unwrap_or_default();
    assert!(path.contains("r\u{fffd}"), "{doc}");
}

/// Regression: a session under a file-size limit (`ulimit -f`) died of `SIGXFSZ` in the
/// middle of an audit line. The write now fails (`EFBIG`): the call is refused as any whose
/// event cannot be written, the file keeps whole lines, and the session goes on.
#[test]
fn a_file_size_limit_fails_the_call_closed_and_the_session_goes_on() {
    use std::io::Write as _;
    let tmp = tempfile::tempdir().unwrap();
    let skill = tmp.path().join("p/a");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: a\ndescription: A skill. Use when testing.\n---\nBody.\n",
    )
    .unwrap();
    let audit = tmp.path().join("audit.jsonl");
    let script = format!(
        "ulimit -f 1; exec \"$0\" session --no-defaults --no-watch --root personal={} --audit {}",
        tmp.path().join("p").display(),
        audit.display()
    );
    let mut child = std::process::Command::new("sh")
        .args(["-c", &script, env!("CARGO_BIN_EXE_skillctl")])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let long = "x".repeat(3000);
    let input = format!(
        "{{\"id\":1,\"tool\":\"skills_load\",\"input\":{{\"names\":[\"a\"]}}}}\n\
         {{\"id\":2,\"tool\":\"skills_read\",\"input\":{{\"path\":\"{long}\"}}}}\n\
         {{\"id\":3,\"tool\":\"skills_list\",\"input\":{{}}}}\n"
    );
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    let answers: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert_eq!(
        answers[1]["error"]["code"], "SKILL_AUDIT_FAILED",
        "{}",
        answers[1]
    );
    assert_eq!(answers[2]["ok"], true, "{}", answers[2]);
    let written = std::fs::read(&audit).unwrap();
    assert_eq!(written.last(), Some(&b'\n'), "whole lines only");
}

/// Regression (review): `validate`'s warning about a folder it cannot list kept a line break
/// the folder's name held, so the folder wrote a line that looked like `skillctl`'s own.
#[test]
fn validate_s_warning_about_a_folder_stays_on_one_line() {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = tmp.path().join("root");
    let bad = root.join("x\nskillctl: error: forged");
    std::fs::create_dir_all(bad.join("sub")).unwrap();
    std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o000)).unwrap();
    let mut cmd = common::unprivileged(tmp.path());
    cmd.arg("validate").arg(&root);
    let run = common::run(&mut cmd);
    std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(run.stderr.contains("cannot list"), "{run:?}");
    assert!(
        run.stderr
            .lines()
            .all(|l| !l.starts_with("skillctl: error")),
        "{run:?}"
    );
}
