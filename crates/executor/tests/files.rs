//! `skills_read` and `skills_run_script` through `Session::call_tool`: the active skill
//! they act on, path rules (relative only, no `..`, `narrow_reads`, links that escape),
//! the size limit, text and base64; scripts only under `scripts/`, argv without a shell,
//! the timeout that kills the whole process group, capped output, the cleared
//! environment, the working folder, trust and `security.executesCommands`, and the audit
//! event of every read and run.
//!
//! Nothing here sleeps to wait: the timeout test waits for a FIFO to reach end of file
//! (which happens when the script's background child dies), on a thread, with a deadline.

mod common;

use std::path::Path;
use std::time::Duration;

use base64::Engine as _;
use common::{make_executable, names, Env};
use serde_json::{json, Value};
use skills_executor::{AuditKind, ExecError, LoadMode, Policy, Session, SessionContext};
use skills_model::Layer;
use skills_protocol as protocol;

fn load(session: &Session, skills: &[&str]) {
    session.load(&names(skills), LoadMode::Add).unwrap();
}

fn read(session: &Session, input: Value) -> Result<Value, ExecError> {
    protocol::call(session, "skills_read", input)
}

fn run(session: &Session, input: Value) -> Result<Value, ExecError> {
    protocol::call(session, "skills_run_script", input)
}

fn invalid_path<T: std::fmt::Debug>(result: Result<T, ExecError>, needle: &str) {
    let err = result.expect_err("the path must be refused");
    assert_eq!(err.code(), "SKILL_PATH_INVALID", "{err}");
    assert!(err.to_string().contains(needle), "{err:?} lacks {needle:?}");
}

/// Two skills with a `references/guide.md` each.
fn two_guides() -> Env {
    let env = Env::new();
    env.skill("first", "", "First.\n");
    env.file("first", "references/guide.md", "first guide\n");
    env.skill("second", "", "Second.\n");
    env.file("second", "references/guide.md", "second guide\n");
    env.file("second", "references/deep/more.md", "deeper\n");
    env
}

#[test]
fn read_needs_an_active_skill_and_defaults_to_the_most_recent() {
    let env = two_guides();
    let session = env.session();
    let err = read(&session, json!({"path": "references/guide.md"})).unwrap_err();
    assert_eq!(err.code(), "SKILL_NOT_ACTIVE");
    assert!(err.to_string().contains("skills_load"), "{err}");

    load(&session, &["first", "second"]);
    let out = read(&session, json!({"path": "references/guide.md"})).unwrap();
    assert_eq!(out["content"], "second guide\n");
    assert_eq!(out["encoding"], "text");
    assert_eq!(out["size"], 13);
    let out = read(
        &session,
        json!({"skill": "first", "path": "references/guide.md"}),
    )
    .unwrap();
    assert_eq!(out["content"], "first guide\n");
    // Qualified names work too.
    let out = read(
        &session,
        json!({"skill": "personal:first", "path": "./references/guide.md"}),
    )
    .unwrap();
    assert_eq!(out["content"], "first guide\n");
    // A skill that exists but is not active.
    env.skill("third", "", "Third.\n");
    let err = read(&session, json!({"skill": "third", "path": "SKILL.md"})).unwrap_err();
    assert_eq!(err.code(), "SKILL_NOT_ACTIVE");
    // SKILL.md itself and deeper files are readable by default.
    assert!(read(&session, json!({"path": "SKILL.md"})).is_ok());
    assert!(read(&session, json!({"path": "references/deep/more.md"})).is_ok());
}

#[test]
fn read_refuses_absolute_paths_dotdot_and_missing_files() {
    let env = two_guides();
    let session = env.session();
    load(&session, &["first"]);
    invalid_path(read(&session, json!({"path": "/etc/passwd"})), "absolute");
    invalid_path(read(&session, json!({"path": "../second/SKILL.md"})), "..");
    invalid_path(
        read(
            &session,
            json!({"path": "references/../../second/SKILL.md"}),
        ),
        "..",
    );
    invalid_path(
        read(&session, json!({"path": "references/../SKILL.md"})),
        "..",
    );
    invalid_path(read(&session, json!({"path": ""})), "empty");
    invalid_path(read(&session, json!({"path": "."})), "names no file");
    invalid_path(
        read(&session, json!({"path": "references/nothing.md"})),
        "no such file",
    );
    invalid_path(read(&session, json!({"path": "references"})), "directory");
    let err = read(&session, json!({})).unwrap_err();
    assert_eq!(err.code(), "SKILL_BAD_INPUT");
}

/// A skill's files beside `references/` and `assets/` (a `LICENSE.txt`, `templates/`) are
/// read as theirs are, loaded or not, and offered; a dot-file, a dot-folder's file or
/// `node_modules` never is, by any read: the one listing rule decides.
#[test]
fn other_files_are_read_and_dot_files_never() {
    let env = two_guides();
    env.file("first", "LICENSE.txt", "MIT\n");
    env.file("first", "templates/form.md", "A form.\n");
    env.file("first", ".env", "TOKEN=secret\n");
    env.file("first", ".git/config", "[core]\n");
    env.file("first", "references/.notes.md", "notes\n");
    env.file("first", "node_modules/x/index.js", "x\n");
    let session = env.session();
    let skill = env.index().load("first").unwrap();
    let servable = session.servable_files(&skill);
    let offered: Vec<&str> = servable.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        offered,
        ["LICENSE.txt", "references/guide.md", "templates/form.md"]
    );
    for unloaded in [false, true] {
        if unloaded {
            load(&session, &["first"]);
        }
        let read_it = |path: &str| match unloaded {
            false => session
                .read_unloaded("first", path, "resources/read")
                .map(|c| c.content),
            true => read(&session, json!({ "path": path }))
                .map(|v| v["content"].as_str().unwrap_or_default().to_owned()),
        };
        assert_eq!(read_it("LICENSE.txt").unwrap(), "MIT\n");
        assert_eq!(read_it("templates/form.md").unwrap(), "A form.\n");
        for hidden in [
            ".env",
            ".git/config",
            "references/.notes.md",
            "node_modules/x/index.js",
        ] {
            invalid_path(read_it(hidden), "never served");
        }
    }
}

#[test]
fn narrow_reads_serve_only_files_directly_under_the_three_folders() {
    let env = two_guides();
    env.file("second", "scripts/run.sh", "echo run\n");
    env.file("second", "assets/logo.txt", "logo\n");
    let executor = env.executor(Policy::builder().narrow_reads(true).build());
    let session = executor.session(SessionContext::default());
    load(&session, &["second"]);
    for ok in ["references/guide.md", "assets/logo.txt"] {
        assert!(read(&session, json!({ "path": ok })).is_ok(), "{ok}");
    }
    // Scripts are run, never read, narrow or not.
    let err = read(&session, json!({"path": "scripts/run.sh"})).unwrap_err();
    assert_eq!(err.code(), "SKILL_SCRIPT_NOT_READABLE");
    for refused in ["SKILL.md", "references/deep/more.md", "other.md"] {
        invalid_path(read(&session, json!({ "path": refused })), "directly under");
    }
}

#[cfg(unix)]
#[test]
fn read_refuses_a_link_that_escapes_the_skill() {
    let env = two_guides();
    let outside = env.outside("secrets");
    std::fs::write(outside.join("key.txt"), "secret").unwrap();
    let dir = env.root.join("first");
    std::os::unix::fs::symlink(outside.join("key.txt"), dir.join("references/key.md")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("assets")).unwrap();
    // A link to the other skill escapes too.
    std::os::unix::fs::symlink(
        env.root.join("second/references/guide.md"),
        dir.join("references/other.md"),
    )
    .unwrap();
    // A link that stays inside is fine.
    std::os::unix::fs::symlink("guide.md", dir.join("references/alias.md")).unwrap();
    let session = env.session();
    load(&session, &["first"]);
    invalid_path(
        read(&session, json!({"path": "references/key.md"})),
        "outside",
    );
    invalid_path(read(&session, json!({"path": "assets/key.txt"})), "outside");
    invalid_path(
        read(&session, json!({"path": "references/other.md"})),
        "outside",
    );
    let out = read(&session, json!({"path": "references/alias.md"})).unwrap();
    assert_eq!(out["content"], "first guide\n");
}

#[test]
fn read_has_a_size_limit_with_a_clear_error() {
    let env = Env::new();
    env.skill("big", "", "Big.\n");
    env.file("big", "assets/exact.txt", vec![b'a'; 200_000]);
    env.file("big", "assets/over.txt", vec![b'a'; 200_001]);
    let session = env.session();
    load(&session, &["big"]);
    let out = read(&session, json!({"path": "assets/exact.txt"})).unwrap();
    assert_eq!(out["size"], 200_000);
    let err = read(&session, json!({"path": "assets/over.txt"})).unwrap_err();
    assert_eq!(err.code(), "SKILL_FILE_TOO_LARGE");
    let message = err.to_string();
    assert!(message.contains("200001 bytes"), "{message}");
    assert!(message.contains("limit of 200000 bytes"), "{message}");

    let small = env
        .executor(Policy::builder().read_limit(10).build())
        .session(SessionContext::default());
    load(&small, &["big"]);
    let err = read(&small, json!({"path": "SKILL.md"})).unwrap_err();
    assert_eq!(err.code(), "SKILL_FILE_TOO_LARGE");
}

#[test]
fn read_returns_text_as_text_and_binary_as_base64_with_its_length() {
    let env = Env::new();
    env.skill("media", "", "Media.\n");
    let binary: Vec<u8> = vec![0x89, b'P', b'N', b'G', 0, 0xff, 0xfe, 10];
    env.file("media", "assets/image.png", &binary);
    env.file("media", "assets/unicode.txt", "héllo wörld ✓\n");
    let session = env.session();
    load(&session, &["media"]);
    let out = read(&session, json!({"path": "assets/image.png"})).unwrap();
    assert_eq!(out["encoding"], "base64");
    assert_eq!(out["size"], binary.len());
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(out["content"].as_str().unwrap())
        .unwrap();
    assert_eq!(decoded, binary);
    let out = read(&session, json!({"path": "assets/unicode.txt"})).unwrap();
    assert_eq!(out["encoding"], "text");
    assert_eq!(out["content"], "héllo wörld ✓\n");
    assert_eq!(out["size"], "héllo wörld ✓\n".len());
}

#[test]
fn every_read_is_audited_served_or_refused() {
    let env = two_guides();
    let session = env.session();
    load(&session, &["first"]);
    read(&session, json!({"path": "references/guide.md"})).unwrap();
    read(&session, json!({"path": "../x"})).unwrap_err();
    let events = env.events(AuditKind::SkillFileRead);
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].skill_name.as_deref(), Some("first"));
    assert_eq!(events[0].tool_name.as_deref(), Some("skills_read"));
    assert_eq!(events[0].path.as_deref(), Some("references/guide.md"));
    assert!(events[0].error.is_none());
    assert!(events[0].duration_ms.is_some());
    assert!(events[1].error.as_deref().unwrap().contains(".."));
}

/// A skill with a few scripts, in the personal (trusted) layer.
fn scripted() -> Env {
    let env = Env::new();
    env.skill("tools", "", "Tools.\n");
    env.file("tools", "scripts/args.sh", "printf '%s\\n' \"$@\"\n");
    env.file("tools", "scripts/pwd.sh", "pwd\n");
    env.file(
        "tools",
        "scripts/env.sh",
        "env | cut -d= -f1 | sort\necho \"MY_VAR=$MY_VAR\"\n",
    );
    env.file("tools", "scripts/fail.sh", "echo oops >&2\nexit 3\n");
    env.file(
        "tools",
        "scripts/flood.sh",
        "head -c 3000000 /dev/zero | tr '\\0' o\nhead -c 3000000 /dev/zero | tr '\\0' e >&2\n",
    );
    env.file(
        "tools",
        "scripts/hang.sh",
        // fd 3 is the FIFO named by $1: only the background child keeps it open.
        "exec 3> \"$1\"\nsleep 30 >&3 &\nexec 3>&-\necho started\nsleep 30\n",
    );
    env.file(
        "tools",
        "scripts/hello.py",
        "import sys\nprint('py', sys.argv[1:])\n",
    );
    env.file("tools", "references/not-a-script.sh", "echo no\n");
    let exe = env.file("tools", "scripts/plain", "#!/bin/sh\necho plain $1\n");
    make_executable(&exe);
    env.file("tools", "scripts/noexec", "#!/bin/sh\necho never\n");
    env.outside("work");
    env
}

#[test]
fn a_script_runs_with_argv_and_reports_every_field() {
    let env = scripted();
    let session = env.session();
    load(&session, &["tools"]);
    let marker = env.root.join("tools/pwned");
    let args = ["$(touch pwned)", "a b", ";", "*", "`id`"];
    let out = run(&session, json!({"path": "scripts/args.sh", "args": args})).unwrap();
    let mut keys: Vec<&str> = out
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "cancelled",
            "duration_ms",
            "exit_code",
            "path",
            "stderr",
            "stdout",
            "timed_out",
            "truncated"
        ]
    );
    assert_eq!(out["path"], "scripts/args.sh");
    assert_eq!(out["exit_code"], 0);
    assert_eq!(out["stdout"], "$(touch pwned)\na b\n;\n*\n`id`\n");
    assert_eq!(out["stderr"], "");
    assert_eq!(out["truncated"], false);
    assert_eq!(out["timed_out"], false);
    assert!(out["duration_ms"].is_u64());
    assert!(!marker.exists(), "a shell interpreted the arguments");

    // A failing script is a result, not an error.
    let out = run(&session, json!({"path": "scripts/fail.sh"})).unwrap();
    assert_eq!(out["exit_code"], 3);
    assert_eq!(out["stderr"], "oops\n");
    // The executable bit, without a known extension.
    let out = run(&session, json!({"path": "scripts/plain", "args": ["x"]})).unwrap();
    assert_eq!(out["stdout"], "plain x\n");
    let err = run(&session, json!({"path": "scripts/noexec"})).unwrap_err();
    assert_eq!(err.code(), "SKILL_SCRIPT_FAILED");
    assert!(err.to_string().contains("not executable"), "{err}");

    let events = env.events(AuditKind::ScriptExecuted);
    assert_eq!(events.len(), 4);
    assert_eq!(events[0].skill_name.as_deref(), Some("tools"));
    assert_eq!(events[0].tool_name.as_deref(), Some("skills_run_script"));
    assert_eq!(events[0].path.as_deref(), Some("scripts/args.sh"));
    assert!(events[0].error.is_none());
    assert!(events[0].duration_ms.is_some());
    assert!(events[1].error.as_deref().unwrap().contains("exit code"));
    assert!(events[3]
        .error
        .as_deref()
        .unwrap()
        .contains("not executable"));
}

#[test]
fn a_python_script_runs_through_python3() {
    let env = scripted();
    let session = env.session();
    load(&session, &["tools"]);
    let out = run(
        &session,
        json!({"path": "scripts/hello.py", "args": ["one", "two"]}),
    )
    .unwrap();
    assert_eq!(out["exit_code"], 0, "{out}");
    assert_eq!(out["stdout"], "py ['one', 'two']\n");
}

// Regression (third attack): an active skill's folder replaced by a link to another folder
// served that folder's files (any file under it), even once the skill was gone from the
// index: reads resolved the folder anew each time.
#[test]
fn a_folder_replaced_by_a_link_serves_nothing_of_the_link_s_target() {
    let env = Env::new();
    let dir = env.skill("ed", "", "Ed.\n");
    env.file("ed", "references/g.md", "Ed's notes.\n");
    let session = env.session();
    session.load(&names(&["ed"]), LoadMode::Add).unwrap();
    let outside = env.root.parent().unwrap().join("outside");
    std::fs::create_dir_all(outside.join("references")).unwrap();
    std::fs::write(outside.join("references/g.md"), "TOPSECRET\n").unwrap();
    std::fs::write(outside.join("secret.txt"), "KEY\n").unwrap();
    std::fs::rename(&dir, env.root.join("ed.old")).unwrap();
    std::os::unix::fs::symlink(&outside, &dir).unwrap();
    for path in ["references/g.md", "secret.txt", "SKILL.md"] {
        let read = session.read(Some("ed"), path);
        assert!(
            read.as_ref()
                .is_err_and(|e| !e.to_string().contains("TOPSECRET")),
            "{path}: {read:?}"
        );
    }
    session.reload();
    assert!(session.read(Some("ed"), "references/g.md").is_err());
    // Back in its place, the folder serves again.
    std::fs::remove_file(&dir).unwrap();
    std::fs::rename(env.root.join("ed.old"), &dir).unwrap();
    let read = session.read(Some("ed"), "references/g.md").unwrap();
    assert_eq!(read.content, "Ed's notes.\n");
}

// Regression: after an edit, `skills_read` of SKILL.md served the file on disk (which said
// `allowed-tools: Bash`) while the loaded version's rules (Read only) were in force.
#[test]
fn an_active_skills_skill_md_is_served_only_as_loaded() {
    let env = Env::new();
    let dir = env.skill("careful", "allowed-tools: Read\n", "Careful.\n");
    let session = env.session();
    load(&session, &["careful"]);
    let served = read(&session, json!({"path": "SKILL.md"})).unwrap();
    assert!(
        served["content"]
            .as_str()
            .unwrap()
            .contains("allowed-tools: Read"),
        "{served}"
    );
    let edited = std::fs::read_to_string(dir.join("SKILL.md"))
        .unwrap()
        .replace("allowed-tools: Read", "allowed-tools: Bash");
    std::fs::write(dir.join("SKILL.md"), edited).unwrap();
    let err = read(&session, json!({"path": "SKILL.md"})).unwrap_err();
    assert_eq!(err.code(), "SKILL_CHANGED", "{err}");
    assert!(
        !session
            .check_tool("Bash", &json!({"command": "ls"}))
            .allowed
    );
    // Regression (attack review): nor through a link to it, by another name.
    std::fs::create_dir_all(dir.join("references")).unwrap();
    std::os::unix::fs::symlink("../SKILL.md", dir.join("references/link.md")).unwrap();
    let err = read(&session, json!({"path": "references/link.md"})).unwrap_err();
    assert_eq!(err.code(), "SKILL_CHANGED", "{err}");
    // Once the index has read the edit, loaded again, the new version is read and enforced.
    session.reload();
    session
        .load(&names(&["careful"]), LoadMode::Replace)
        .unwrap();
    let served = read(&session, json!({"path": "SKILL.md"})).unwrap();
    assert!(
        served["content"]
            .as_str()
            .unwrap()
            .contains("allowed-tools: Bash"),
        "{served}"
    );
}

// Regression (attack review): a hard link to a script, under references/, was served whole
// by skills_read (never a script), though check_tool refused it by its inode.
#[test]
fn a_script_is_not_read_by_another_name() {
    let env = scripted();
    let dir = env.root.join("tools");
    std::fs::create_dir_all(dir.join("references")).unwrap();
    std::fs::hard_link(dir.join("scripts/args.sh"), dir.join("references/args.txt")).unwrap();
    let session = env.session();
    load(&session, &["tools"]);
    let err = read(&session, json!({"path": "references/args.txt"})).unwrap_err();
    assert_eq!(err.code(), "SKILL_SCRIPT_NOT_READABLE", "{err}");
}

// Regression: a read of a skill not loaded (MCP's `resources/read`) and the list of what it
// serves (`resources/list`) went by where the file lies, so a hard link to a script under
// `references/` was offered and served, where `skills_read` refused it. What was opened is
// refused when it is one of the skill's scripts, by whichever name, on every read path.
#[test]
fn a_hard_link_to_a_script_is_neither_offered_nor_served_unloaded() {
    let env = scripted();
    let dir = env.root.join("tools");
    std::fs::create_dir_all(dir.join("references")).unwrap();
    std::fs::hard_link(dir.join("scripts/args.sh"), dir.join("references/args.txt")).unwrap();
    std::fs::write(dir.join("references/guide.md"), "A guide.\n").unwrap();
    let session = env.session();
    let err = session
        .read_unloaded("tools", "references/args.txt", "resources/read")
        .unwrap_err();
    assert_eq!(err.code(), "SKILL_SCRIPT_NOT_READABLE", "{err}");
    let skill = env.index().load("tools").unwrap();
    let servable = session.servable_files(&skill);
    let offered: Vec<&str> = servable.iter().map(|f| f.path.as_str()).collect();
    assert!(offered.contains(&"references/guide.md"), "{offered:?}");
    assert!(!offered.contains(&"references/args.txt"), "{offered:?}");
}

// Regression: a load read every file under scripts/ whole to pin it, so a sparse terabyte
// in a hostile skill folder held the session's load (and every request after it) for hours.
#[test]
fn a_script_over_the_limit_is_not_read_at_load_and_never_runs() {
    let env = scripted();
    let huge = env.file("tools", "scripts/huge.sh", "");
    std::fs::File::options()
        .write(true)
        .open(&huge)
        .unwrap()
        .set_len(1 << 40)
        .unwrap();
    let session = env.session();
    load(&session, &["tools"]);
    let err = run(&session, json!({"path": "scripts/huge.sh"})).unwrap_err();
    assert_eq!(err.code(), "SKILL_FILE_TOO_LARGE", "{err}");
    let out = run(&session, json!({"path": "scripts/args.sh", "args": ["ok"]})).unwrap();
    assert_eq!(out["stdout"], "ok\n", "{out}");
}

#[test]
fn only_files_under_scripts_can_run() {
    let env = scripted();
    let session = env.session();
    load(&session, &["tools"]);
    invalid_path(
        run(&session, json!({"path": "references/not-a-script.sh"})),
        "scripts/",
    );
    invalid_path(run(&session, json!({"path": "SKILL.md"})), "scripts/");
    invalid_path(
        run(
            &session,
            json!({"path": "scripts/../references/not-a-script.sh"}),
        ),
        "..",
    );
    invalid_path(run(&session, json!({"path": "/bin/sh"})), "absolute");
    invalid_path(run(&session, json!({"path": "scripts"})), "scripts/");
    invalid_path(
        run(&session, json!({"path": "scripts/missing.sh"})),
        "no such file",
    );
    #[cfg(unix)]
    {
        let outside = env.outside("evil");
        std::fs::write(outside.join("evil.sh"), "echo evil\n").unwrap();
        std::os::unix::fs::symlink(
            outside.join("evil.sh"),
            env.root.join("tools/scripts/evil.sh"),
        )
        .unwrap();
        std::os::unix::fs::symlink(
            env.root.join("tools/references/not-a-script.sh"),
            env.root.join("tools/scripts/sideways.sh"),
        )
        .unwrap();
        invalid_path(run(&session, json!({"path": "scripts/evil.sh"})), "outside");
        invalid_path(
            run(&session, json!({"path": "scripts/sideways.sh"})),
            "outside the skill's scripts/",
        );
    }
    // Nothing active.
    session.unload_all().unwrap();
    let err = run(&session, json!({"path": "scripts/args.sh"})).unwrap_err();
    assert_eq!(err.code(), "SKILL_NOT_ACTIVE");
}

// Regression: a FIFO under `scripts/` was answered `SKILL_SCRIPT_CHANGED` ("load the skill
// again"), which loading again never fixes: it is refused as what it is.
#[cfg(unix)]
#[test]
fn a_fifo_under_scripts_is_refused_as_not_a_regular_file() {
    let env = scripted();
    let fifo = env.root.join("tools/scripts/pipe.sh");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let session = env.session();
    load(&session, &["tools"]);
    invalid_path(
        run(&session, json!({"path": "scripts/pipe.sh"})),
        "not a regular file",
    );
}

#[cfg(unix)]
#[test]
fn a_timeout_kills_the_script_and_its_children() {
    use std::io::Read as _;
    use std::sync::mpsc;

    let env = scripted();
    let session = env.session();
    load(&session, &["tools"]);
    let fifo = env.outside("fifo").join("alive");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    // The reader reaches end of file once every writer is gone: the background `sleep`
    // is the only one left after the script's shell closed its copy.
    let (eof_tx, eof) = mpsc::channel();
    let reader_path = fifo.clone();
    std::thread::spawn(move || {
        let mut f = std::fs::File::open(&reader_path).unwrap();
        let mut sink = Vec::new();
        let _ = f.read_to_end(&mut sink);
        let _ = eof_tx.send(());
    });
    let out = run(
        &session,
        json!({"path": "scripts/hang.sh", "args": [fifo], "timeout_ms": 1500}),
    )
    .unwrap();
    assert_eq!(out["timed_out"], true, "{out}");
    assert_eq!(out["exit_code"], Value::Null);
    assert_eq!(out["stdout"], "started\n");
    assert!(out["duration_ms"].as_u64().unwrap() < 20_000);
    eof.recv_timeout(Duration::from_secs(10))
        .expect("the script's background child outlived the timeout");
    let event = env.events(AuditKind::ScriptExecuted).pop().unwrap();
    assert!(event.error.as_deref().unwrap().contains("timed out: true"));
}

#[test]
fn output_is_capped_and_marked_truncated() {
    let env = scripted();
    let session = env
        .executor(Policy::builder().output_limit(1000).build())
        .session(SessionContext::default());
    load(&session, &["tools"]);
    let out = run(&session, json!({"path": "scripts/flood.sh"})).unwrap();
    assert_eq!(out["exit_code"], 0);
    assert_eq!(out["truncated"], true);
    assert_eq!(out["stdout"].as_str().unwrap(), "o".repeat(1000));
    assert_eq!(out["stderr"].as_str().unwrap(), "e".repeat(1000));
}

#[test]
fn the_environment_is_cleared_but_for_path_home_lang_and_what_is_passed() {
    let env = scripted();
    // The environment is an allow-list: the host allows MY_VAR.
    let session = env
        .executor(Policy::builder().allow_script_env("MY_VAR").build())
        .session(SessionContext::default());
    load(&session, &["tools"]);
    let out = run(
        &session,
        json!({"path": "scripts/env.sh", "env": {"MY_VAR": "given"}}),
    )
    .unwrap();
    let stdout = out["stdout"].as_str().unwrap();
    assert!(stdout.ends_with("MY_VAR=given\n"), "{stdout}");
    // bash itself exports PWD, SHLVL and `_`.
    let allowed = [
        "PATH", "HOME", "LANG", "MY_VAR", "PWD", "SHLVL", "_", "OLDPWD",
    ];
    let names: Vec<&str> = stdout.lines().filter(|l| !l.contains('=')).collect();
    assert!(names.contains(&"MY_VAR"));
    for name in &names {
        assert!(
            allowed.contains(name),
            "{name} leaked into the script: {stdout}"
        );
    }
    // The test process has CARGO_* variables; none reached the script.
    assert!(std::env::vars().any(|(k, _)| k.starts_with("CARGO")));
}

#[test]
fn the_working_folder_stays_inside_the_skill_or_a_host_area() {
    let env = scripted();
    let tools = std::fs::canonicalize(env.root.join("tools")).unwrap();
    let work = std::fs::canonicalize(env.outside("work")).unwrap();
    let session = env.session();
    load(&session, &["tools"]);
    let pwd = |input: Value| -> Result<String, ExecError> {
        run(&session, input).map(|o| o["stdout"].as_str().unwrap().trim_end().to_owned())
    };
    assert_eq!(
        pwd(json!({"path": "scripts/pwd.sh"})).unwrap(),
        tools.to_str().unwrap()
    );
    assert_eq!(
        pwd(json!({"path": "scripts/pwd.sh", "workdir": "references"})).unwrap(),
        tools.join("references").to_str().unwrap()
    );
    invalid_path(
        pwd(json!({"path": "scripts/pwd.sh", "workdir": ".."})),
        "inside the skill folder",
    );
    invalid_path(
        pwd(json!({"path": "scripts/pwd.sh", "workdir": work})),
        "inside the skill folder",
    );
    invalid_path(
        pwd(json!({"path": "scripts/pwd.sh", "workdir": "nowhere"})),
        "no such folder",
    );
    invalid_path(
        pwd(json!({"path": "scripts/pwd.sh", "workdir": "SKILL.md"})),
        "inside the skill folder",
    );

    let allowed = env
        .executor(Policy::builder().allow_workdir(&work).build())
        .session(SessionContext::default());
    load(&allowed, &["tools"]);
    let out = run(&allowed, json!({"path": "scripts/pwd.sh", "workdir": work})).unwrap();
    assert_eq!(
        out["stdout"].as_str().unwrap().trim_end(),
        work.to_str().unwrap()
    );
}

#[test]
fn scripts_of_an_untrusted_layer_are_refused_with_how_to_trust() {
    let env = scripted();
    let executor = env.executor_as(Layer::Project, Policy::default());
    let session = executor.session(SessionContext::default());
    load(&session, &["tools"]);
    let err = run(&session, json!({"path": "scripts/args.sh"})).unwrap_err();
    assert_eq!(err.code(), "SKILL_UNTRUSTED");
    assert!(err.to_string().contains("--trust project"), "{err}");
    // Reading is refused too: scripts are run, never read, and the message says how.
    let err = read(&session, json!({"path": "scripts/args.sh"})).unwrap_err();
    assert_eq!(err.code(), "SKILL_SCRIPT_NOT_READABLE");
    assert!(err.to_string().contains("skills_run_script"), "{err}");
    let event = env.events(AuditKind::ScriptExecuted).pop().unwrap();
    assert!(event.error.as_deref().unwrap().contains("not trusted"));

    let trusted = env
        .executor_as(
            Layer::Project,
            Policy::builder().trust(Layer::Project).build(),
        )
        .session(SessionContext::default());
    load(&trusted, &["tools"]);
    assert_eq!(
        run(&trusted, json!({"path": "scripts/args.sh"})).unwrap()["exit_code"],
        0
    );

    // And a trusted layer withdrawn.
    let distrusted = env
        .executor(Policy::builder().distrust(Layer::Personal).build())
        .session(SessionContext::default());
    load(&distrusted, &["tools"]);
    assert_eq!(
        run(&distrusted, json!({"path": "scripts/args.sh"}))
            .unwrap_err()
            .code(),
        "SKILL_UNTRUSTED"
    );
}

#[test]
fn security_executes_commands_false_refuses_scripts() {
    let env = Env::new();
    env.skill(
        "no-exec",
        "security:\n  executesCommands: false\n",
        "No commands.\n",
    );
    env.file("no-exec", "scripts/run.sh", "echo ran\n");
    let session = env.session();
    load(&session, &["no-exec"]);
    let err = run(&session, json!({"path": "scripts/run.sh"})).unwrap_err();
    assert_eq!(err.code(), "SKILL_SCRIPTS_FORBIDDEN");
    assert!(err.to_string().contains("executesCommands"), "{err}");
}

#[test]
fn run_script_acts_on_the_named_or_most_recent_skill() {
    let env = scripted();
    env.skill("other", "", "Other.\n");
    env.file("other", "scripts/who.sh", "echo other\n");
    let session = env.session();
    load(&session, &["tools", "other"]);
    let out = run(&session, json!({"path": "scripts/who.sh"})).unwrap();
    assert_eq!(out["stdout"], "other\n");
    invalid_path(
        run(&session, json!({"path": "scripts/args.sh"})),
        "no such file",
    );
    let out = run(
        &session,
        json!({"skill": "tools", "path": "scripts/args.sh", "args": ["t"]}),
    )
    .unwrap();
    assert_eq!(out["stdout"], "t\n");
    assert!(Path::new(&env.root).exists());
}

// Regression: a refused `skills_read` of the most recent skill (no `skill` given) was
// audited without `skill_name`, though the skill it was refused for was known.
#[test]
fn a_refused_read_is_audited_with_the_skill_it_was_for() {
    let env = two_guides();
    let session = env.session();
    load(&session, &["first", "second"]);
    read(&session, json!({"path": "../first/SKILL.md"})).unwrap_err();
    read(&session, json!({"skill": "first", "path": "/etc/passwd"})).unwrap_err();
    read(&session, json!({"skill": "third", "path": "SKILL.md"})).unwrap_err();
    let events = env.events(AuditKind::SkillFileRead);
    let skills: Vec<Option<&str>> = events.iter().map(|e| e.skill_name.as_deref()).collect();
    assert_eq!(skills, [Some("second"), Some("first"), Some("third")]);
    assert!(events.iter().all(|e| e.error.is_some()));
}

#[test]
fn a_call_cannot_lengthen_the_hosts_script_timeout() {
    // Regression: timeout_ms from the model used to replace the policy's timeout.
    let env = Env::new();
    env.skill("slow", "", "Body.\n");
    env.file("slow", "scripts/sleep.sh", "sleep 30\n");
    let policy = Policy::builder()
        .script_timeout(Duration::from_millis(300))
        .build();
    let session = env.executor(policy).session(SessionContext::default());
    session.load(&names(&["slow"]), LoadMode::Replace).unwrap();
    let out = protocol::call(
        &session,
        "skills_run_script",
        json!({"path": "scripts/sleep.sh", "timeout_ms": 60000}),
    )
    .unwrap();
    // With the call's 60 s the script would have finished its 30 s sleep and exited 0: a
    // timeout shows the host's 300 ms applied. (No wall-clock bound: behaviour decides.)
    assert_eq!(out["timed_out"], true);
    assert_eq!(out["exit_code"], Value::Null);
}

#[test]
fn a_skill_that_runs_no_commands_runs_no_hooks() {
    // Regression: hooks used to run for a skill whose manifest says executesCommands: false.
    let env = Env::new();
    let marker = env.outside("marks").join("ran");
    env.skill(
        "quiet",
        "hooks:\n  pre: scripts/setup.sh\nsecurity:\n  executesCommands: false\n",
        "Body.\n",
    );
    env.file(
        "quiet",
        "scripts/setup.sh",
        format!("touch {}\n", marker.display()),
    );
    let session = env.session();
    let receipt = session.load(&names(&["quiet"]), LoadMode::Replace).unwrap();
    let error = receipt.hooks[0].error.as_deref().unwrap();
    assert!(error.contains("executesCommands"), "{error}");
    assert!(!marker.exists());
}

#[test]
fn variables_that_hijack_the_interpreter_are_refused() {
    let env = Env::new();
    // The skill declares what its script takes; declaring a hijacking name lifts nothing.
    env.skill(
        "envy",
        "security:\n  scriptEnv: [MY_INPUT, LD_PRELOAD, PATH, BASH_ENV, POSIXLY_CORRECT, GLOBIGNORE, RES_OPTIONS, NLSPATH, HOSTALIASES, LOCALDOMAIN, NIS_PATH, RESOLV_HOST_CONF, TZDIR, GETCONF_DIR, SSL_CERT_FILE, MAKEFILES, MAKEFLAGS, DOTNET_STARTUP_HOOKS, GOFLAGS, AWKLIBPATH, R_PROFILE_USER, VIMINIT, MYVIMRC, FPATH, KUBECONFIG, AWS_CONFIG_FILE, AWS_PROFILE, HTTPS_PROXY, SSLKEYLOGFILE, DATEMSK, ERL_AFLAGS, JULIA_DEPOT_PATH, GUILE_LOAD_PATH, MAVEN_OPTS, GRADLE_OPTS, GNUPGHOME, CC, RM, TARGET_ARCH, OUTPUT_OPTION, CONFIG_SHELL, SUDO_ASKPASS, CMAKE_TOOLCHAIN_FILE, GIO_EXTRA_MODULES, MAVEN_ARGS, XZ_OPT, GHC_ENVIRONMENT, PGSERVICEFILE, LYNX_CFG, OCAMLFIND_CONF, GH_CONFIG_DIR, SED]\n",
        "Body.\n",
    );
    env.file("envy", "scripts/env.sh", "env\n");
    let session = env.session();
    session.load(&names(&["envy"]), LoadMode::Replace).unwrap();
    for name in [
        "LD_PRELOAD",
        "BASH_ENV",
        "PYTHONPATH",
        "PATH",
        "DYLD_INSERT_LIBRARIES",
        // Regression (review): a deny-list let these through; the names are now an
        // allow-list of shape minus what interpreters read as code, options or paths.
        "BASH_FUNC_echo%%",
        "SHELLOPTS",
        "PS4",
        "HOME",
        "PERL5LIB",
        "NODE_PATH",
        "GIT_SSH_COMMAND",
        // Regression (third attack): the shell's and the C library's options and the
        // files they read instead of their own.
        "POSIXLY_CORRECT",
        "GLOBIGNORE",
        "RES_OPTIONS",
        "NLSPATH",
        "HOSTALIASES",
        "LOCALDOMAIN",
        "NIS_PATH",
        "RESOLV_HOST_CONF",
        "TZDIR",
        "GETCONF_DIR",
        "SSL_CERT_FILE",
        // Regression (review): `MAKEFILES` made the skill's `make` run the model's file; and
        // the other names that start programs or choose their configuration.
        "MAKEFILES",
        "MAKEFLAGS",
        "DOTNET_STARTUP_HOOKS",
        "GOFLAGS",
        "AWKLIBPATH",
        "R_PROFILE_USER",
        "VIMINIT",
        "MYVIMRC",
        "FPATH",
        "KUBECONFIG",
        "AWS_CONFIG_FILE",
        "AWS_PROFILE",
        "HTTPS_PROXY",
        "SSLKEYLOGFILE",
        "DATEMSK",
        "ERL_AFLAGS",
        "JULIA_DEPOT_PATH",
        "GUILE_LOAD_PATH",
        "MAVEN_OPTS",
        "GRADLE_OPTS",
        "GNUPGHOME",
        "CC",
        // Regression (second review): make's built-in variables are expanded into its
        // recipes' shell lines (`$(RM)`), and more names that start programs or pick
        // modules and configuration.
        "RM",
        "TARGET_ARCH",
        "OUTPUT_OPTION",
        "CONFIG_SHELL",
        "SUDO_ASKPASS",
        "CMAKE_TOOLCHAIN_FILE",
        "GIO_EXTRA_MODULES",
        "MAVEN_ARGS",
        "XZ_OPT",
        "GHC_ENVIRONMENT",
        "PGSERVICEFILE",
        "LYNX_CFG",
        "OCAMLFIND_CONF",
        "GH_CONFIG_DIR",
        "SED",
        "lower_case",
        "",
    ] {
        let err = protocol::call(
            &session,
            "skills_run_script",
            json!({"path": "scripts/env.sh", "env": {name: "/tmp/x"}}),
        )
        .unwrap_err();
        assert_eq!(err.code(), "SKILL_BAD_INPUT", "{name}");
    }
    let out = protocol::call(
        &session,
        "skills_run_script",
        json!({"path": "scripts/env.sh", "env": {"MY_INPUT": "ok"}}),
    )
    .unwrap();
    assert!(out["stdout"].as_str().unwrap().contains("MY_INPUT=ok"));
    // Regression (security review): the filter was a deny-list, so `TAR_OPTIONS`,
    // `MAKEFLAGS`, `RSYNC_RSH`, `KUBECONFIG` or `CC` reached scripts. Names neither the
    // host nor the skill allows are refused, each named in the message; those the list
    // refuses as well say so, the others how a skill declares them.
    for name in [
        "TAR_OPTIONS",
        "MAKEFILES",
        "MAKEFLAGS",
        "RSYNC_RSH",
        "KUBECONFIG",
        "CC",
        "MY_OTHER_INPUT",
    ] {
        let err = protocol::call(
            &session,
            "skills_run_script",
            json!({"path": "scripts/env.sh", "env": {name: "x"}}),
        )
        .unwrap_err();
        assert_eq!(err.code(), "SKILL_BAD_INPUT", "{name}");
        assert!(err.to_string().contains(name), "{err}");
        if name == "MY_OTHER_INPUT" {
            assert!(err.to_string().contains("scriptEnv"), "{err}");
        } else {
            assert!(err.to_string().contains("configuration"), "{err}");
        }
    }
}

// Regression (security review): `XDG_CONFIG_HOME` moves the configuration of git and many
// other tools (git's `core.fsmonitor` or `core.pager` run commands) just as `HOME` does,
// and OpenSSL's, Java's, Lua's and PHP's variables load code; they passed the check.
#[test]
fn variables_that_load_configuration_or_code_are_refused() {
    let env = Env::new();
    env.skill("envy", "", "Body.\n");
    env.file("envy", "scripts/env.sh", "env\n");
    let session = env.session();
    session.load(&names(&["envy"]), LoadMode::Replace).unwrap();
    for name in [
        "XDG_CONFIG_HOME",
        "OPENSSL_CONF",
        "CLASSPATH",
        "LUA_INIT",
        "PHPRC",
        "GLIBC_TUNABLES",
        "SHELL",
        "EDITOR",
        "PAGER",
        "ZDOTDIR",
        "CURL_HOME",
        "RUSTC_WRAPPER",
        "CARGO_HOME",
        "BUNDLE_GEMFILE",
        "PIP_CONFIG_FILE",
        "SSH_ASKPASS",
    ] {
        let err = protocol::call(
            &session,
            "skills_run_script",
            json!({"path": "scripts/env.sh", "env": {name: "/tmp/x"}}),
        )
        .unwrap_err();
        assert_eq!(err.code(), "SKILL_BAD_INPUT", "{name}");
    }
}

/// A skill of a source that is not on disk is read through its source: its references
/// can be read, its scripts are refused with a code that says why.
#[test]
fn an_embedded_skill_is_read_through_its_source_and_its_scripts_refused() {
    static FILES: &[(&str, &[u8])] = &[
        (
            "helper/SKILL.md",
            b"---\nname: helper\ndescription: Helps. Use when helping.\n---\nRead the guide.\n",
        ),
        ("helper/references/guide.md", b"embedded guide\n"),
        ("helper/scripts/go.sh", b"#!/bin/sh\necho hi\n"),
    ];
    let index = skills_index::SkillIndex::builder()
        .plugin_source(
            "builtin",
            std::sync::Arc::new(skills_storage::EmbeddedSource::new(FILES)),
        )
        .build()
        .unwrap();
    let session = skills_executor::Executor::builder(std::sync::Arc::new(index))
        .policy(Policy::default())
        .build()
        .session(SessionContext::builder().id("embedded").build());
    load(&session, &["builtin:helper"]);
    let out = read(&session, json!({"path": "references/guide.md"})).unwrap();
    assert_eq!(out["content"], "embedded guide\n");
    let err = read(&session, json!({"path": "references/missing.md"})).unwrap_err();
    assert_eq!(err.code(), "SKILL_PATH_INVALID", "{err}");
    let err = read(&session, json!({"path": "scripts/go.sh"})).unwrap_err();
    assert_eq!(err.code(), "SKILL_SCRIPT_NOT_READABLE", "{err}");
    let err = run(&session, json!({"path": "scripts/go.sh"})).unwrap_err();
    assert_eq!(err.code(), "SKILL_SCRIPT_NOT_ON_DISK", "{err}");
    assert!(err.to_string().contains("not on disk"), "{err}");
}
