//! The audit trail: which operations make which events, the fields every event carries
//! (RFC 3339 timestamp, event name, session, correlation, agent, task and tenant ids, skill,
//! tool, decision, rules, error, duration), the JSON-lines file sink (appends whole lines,
//! written before the call returns, safe under 8 threads), and failing closed when the sink
//! cannot write.
//!
//! Tests marked `// Regression:` failed before the fix they name.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::{active, names, Env};
use serde_json::{json, Value};
use skills_executor::{
    AuditEvent, AuditKind, AuditSink, Executor, JsonlFileSink, LoadMode, MemorySink, Policy,
    SessionContext,
};
use skills_protocol as protocol;

/// A sink that fails while `fail` is set, and otherwise keeps events in memory.
#[derive(Debug, Default)]
struct FlakySink {
    fail: AtomicBool,
    inner: MemorySink,
}

impl AuditSink for FlakySink {
    fn record(&self, event: &AuditEvent) -> std::io::Result<()> {
        if self.fail.load(Ordering::SeqCst) {
            return Err(std::io::Error::other("disk full"));
        }
        self.inner.record(event)
    }
}

fn context() -> SessionContext {
    SessionContext::builder()
        .id("sess-42")
        .agent("coder")
        .tenant("acme")
        .environment("staging")
        .correlation_id("corr-7")
        .task_id("task-1")
        .build()
}

/// A skill with a script, a hook and a reference.
fn full_env() -> Env {
    let env = Env::new();
    env.skill(
        "builder",
        "allowed-tools: Bash(make:*) Read\nhooks:\n  pre: [scripts/pre.sh]\n",
        "Build.\n",
    );
    env.file("builder", "scripts/pre.sh", "true\n");
    env.file("builder", "scripts/build.sh", "echo built\n");
    env.file("builder", "references/notes.md", "Notes.\n");
    env
}

#[test]
fn every_operation_is_an_event_with_the_session_context() {
    let env = full_env();
    let dir = env.root.join("builder");
    let session = env.executor(Policy::default()).session(context());
    {
        let _task = session.task();
        session.load(&names(&["builder"]), LoadMode::Add).unwrap();
        assert!(
            session
                .check_tool("Bash", &json!({"command": "make all"}))
                .allowed
        );
        assert!(
            !session
                .check_tool("Bash", &json!({"command": "rm -rf /"}))
                .allowed
        );
        assert!(
            !session
                .check_tool("Read", &json!({"file_path": dir.join("scripts/build.sh")}))
                .allowed
        );
        protocol::call(
            &session,
            "skills_read",
            json!({"path": "references/notes.md"}),
        )
        .unwrap();
        protocol::call(
            &session,
            "skills_run_script",
            json!({"path": "scripts/build.sh"}),
        )
        .unwrap();
    }
    let events = env.sink.events();
    let kinds: Vec<AuditKind> = events.iter().map(|e| e.event).collect();
    // A hook and a script are recorded before they start, and again when they end.
    assert_eq!(
        kinds,
        [
            AuditKind::SkillActivated,
            AuditKind::HookStarted,
            AuditKind::HookExecuted,
            AuditKind::ToolExecutionInSkill,
            AuditKind::ToolRestrictionViolated,
            AuditKind::ScriptReadBlocked,
            AuditKind::SkillFileRead,
            AuditKind::ScriptStarted,
            AuditKind::ScriptExecuted,
            AuditKind::SkillDeactivated,
        ]
    );
    for e in &events {
        assert_eq!(e.session_id, "sess-42");
        assert_eq!(e.correlation_id.as_deref(), Some("corr-7"));
        assert_eq!(e.agent_id.as_deref(), Some("coder"));
        assert_eq!(e.task_id.as_deref(), Some("task-1"));
        assert_eq!(e.tenant_id.as_deref(), Some("acme"));
        assert_eq!(e.skill_name.as_deref(), Some("builder"), "{e:?}");
        let parsed = humantime::parse_rfc3339(&e.timestamp);
        assert!(parsed.is_ok(), "{} is not RFC 3339", e.timestamp);
    }
    let rules = Some(vec!["Bash(make:*)".to_owned(), "Read".to_owned()]);
    assert_eq!(events[0].allowed_tools, rules);
    assert_eq!(events[3].tool_name.as_deref(), Some("Bash"));
    assert_eq!(events[3].tool_allowed, Some(true));
    assert_eq!(events[3].allowed_tools, rules);
    assert_eq!(events[4].tool_allowed, Some(false));
    assert!(events[4].error.is_some());
    assert_eq!(events[5].tool_name.as_deref(), Some("Read"));
    assert_eq!(events[5].tool_allowed, Some(false));
    for i in [2, 6, 8] {
        assert!(events[i].duration_ms.is_some(), "{:?}", events[i]);
    }
    // File reads and script runs name the runtime tool, and carry the file in `path`.
    assert_eq!(events[6].tool_name.as_deref(), Some("skills_read"));
    assert_eq!(events[6].path.as_deref(), Some("references/notes.md"));
    for i in [7, 8] {
        assert_eq!(events[i].tool_name.as_deref(), Some("skills_run_script"));
        assert_eq!(events[i].path.as_deref(), Some("scripts/build.sh"));
    }
    assert_eq!(events[1].path.as_deref(), Some("scripts/pre.sh"));
    // A decision names the rule that decided.
    assert_eq!(events[3].rule.as_deref(), Some("Bash(make:*)"));
}

// Regression: a script or hook started, and only then was its event written: with the
// audit file gone mid-session (rotated away, a full disk) it ran with no record of it.
#[test]
fn a_script_or_hook_that_cannot_be_recorded_does_not_start() {
    let env = Env::new();
    let dir = env.skill("marker", "hooks:\n  pre: [scripts/pre.sh]\n", "Marks.\n");
    env.file("marker", "scripts/pre.sh", "echo hook >> ran.log\n");
    env.file("marker", "scripts/run.sh", "echo script >> ran.log\n");
    let sink = Arc::new(FailsFrom::default());
    let dyn_sink: Arc<dyn AuditSink> = sink.clone();
    let executor = Executor::builder(env.index()).audit_sink(dyn_sink).build();
    // The activation is recorded; the sink fails from the hook's event on.
    let session = executor.session(context());
    sink.left.store(1, Ordering::SeqCst);
    let receipt = session.load(&names(&["marker"]), LoadMode::Add).unwrap();
    assert!(
        receipt.hooks[0]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("audit")),
        "{receipt:?}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("ran.log")).unwrap_or_default(),
        ""
    );
    let err = protocol::call(
        &session,
        "skills_run_script",
        json!({"path": "scripts/run.sh"}),
    )
    .unwrap_err();
    assert_eq!(err.code(), "SKILL_AUDIT_FAILED");
    assert_eq!(
        std::fs::read_to_string(dir.join("ran.log")).unwrap_or_default(),
        ""
    );
}

// Regression: `script_started` ("every check passed, about to start") was written before
// the runner's own checks (an environment name refused, a NUL byte in an argument, a file
// neither executable nor of a known interpreter), so a run refused by them read as one
// that started. Only `script_executed`, with the error, is written now.
#[test]
fn a_run_refused_by_its_checks_is_never_recorded_as_started() {
    let env = Env::new();
    env.skill("runner", "", "Runs.\n");
    env.file("runner", "scripts/env.sh", "true\n");
    env.file("runner", "scripts/plain", "true\n");
    let session = env.session();
    session.load(&names(&["runner"]), LoadMode::Add).unwrap();
    let refused = [
        json!({"path": "scripts/env.sh", "env": {"LD_PRELOAD": "x"}}),
        json!({"path": "scripts/env.sh", "args": ["a\u{0}b"]}),
        json!({"path": "scripts/plain"}),
    ];
    for call in refused {
        let before = env.sink.events().len();
        let err = protocol::call(&session, "skills_run_script", call.clone()).unwrap_err();
        let kinds: Vec<AuditKind> = env.sink.events()[before..]
            .iter()
            .map(|e| e.event)
            .collect();
        assert_eq!(kinds, [AuditKind::ScriptExecuted], "{call}: {err}");
    }
}

/// A sink that records `left` more events, then fails every one.
#[derive(Debug, Default)]
struct FailsFrom {
    left: std::sync::atomic::AtomicUsize,
}

impl AuditSink for FailsFrom {
    fn record(&self, _: &AuditEvent) -> std::io::Result<()> {
        self.left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .map(|_| ())
            .map_err(|_| std::io::Error::other("disk full"))
    }
}

#[test]
fn events_serialise_with_snake_case_names_and_without_empty_fields() {
    let env = full_env();
    let session = env
        .executor(Policy::default())
        .session(SessionContext::builder().id("s").build());
    session.check_tool("Bash", &json!({"command": "ls"}));
    let event = env.sink.events().pop().unwrap();
    let value = serde_json::to_value(&event).unwrap();
    let object = value.as_object().unwrap();
    // With no skill active, the decision has its own event name.
    assert_eq!(object["event"], "tool_checked_without_skill");
    assert_eq!(object["session_id"], "s");
    assert_eq!(object["tool_name"], "Bash");
    assert_eq!(object["tool_allowed"], true);
    for absent in [
        "correlation_id",
        "agent_id",
        "task_id",
        "tenant_id",
        "skill_name",
        "error",
    ] {
        assert!(!object.contains_key(absent), "{absent} in {value}");
    }
    let timestamp = object["timestamp"].as_str().unwrap();
    assert!(timestamp.ends_with('Z'), "{timestamp}");
    assert!(humantime::parse_rfc3339(timestamp).is_ok());
}

fn lines(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "a partial last line"
    );
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect()
}

#[test]
fn the_file_sink_appends_one_line_per_event_before_the_call_returns() {
    let env = full_env();
    let file = env.outside("audit").join("audit.jsonl");
    std::fs::write(&file, "{\"earlier\":true}\n").unwrap();
    let sink: Arc<dyn AuditSink> = Arc::new(JsonlFileSink::open(&file).unwrap());
    let executor = Executor::builder(env.index()).audit_sink(sink).build();
    let session = executor.session(context());
    session.load(&names(&["builder"]), LoadMode::Add).unwrap();
    // Activation and the pre hook (its start and its end), already on disk.
    let after_load = lines(&file);
    assert_eq!(after_load.len(), 4);
    assert_eq!(after_load[0], json!({"earlier": true}));
    assert_eq!(after_load[1]["event"], "skill_activated");
    assert_eq!(after_load[2]["event"], "hook_started");
    assert_eq!(after_load[3]["event"], "hook_executed");
    session.check_tool("Bash", &json!({"command": "make"}));
    let after_check = lines(&file);
    assert_eq!(after_check.len(), 5);
    assert_eq!(after_check[4]["event"], "tool_execution_in_skill");
    assert_eq!(after_check[4]["tool_allowed"], true);
    session.unload_all().unwrap();
    let after_unload = lines(&file);
    assert_eq!(after_unload[5]["event"], "skill_deactivated");
    assert_eq!(after_unload[5]["skill_name"], "builder");

    // A second sink on the same file appends too (fsync on).
    let again: Arc<dyn AuditSink> = Arc::new(JsonlFileSink::open(&file).unwrap().with_fsync(true));
    let executor = Executor::builder(env.index()).audit_sink(again).build();
    executor
        .session(SessionContext::default())
        .check_tool("Read", &json!({"file_path": "/x"}));
    assert_eq!(lines(&file).len(), 7);
}

#[test]
fn a_sink_that_cannot_write_makes_every_call_fail_closed() {
    let env = full_env();
    let sink = Arc::new(FlakySink::default());
    let dyn_sink: Arc<dyn AuditSink> = sink.clone();
    let executor = Executor::builder(env.index()).audit_sink(dyn_sink).build();
    let session = executor.session(context());

    sink.fail.store(true, Ordering::SeqCst);
    // A decision that would be allowed is denied.
    let d = session.check_tool("Bash", &json!({"command": "ls"}));
    assert!(!d.allowed);
    assert!(d.reason.contains("audit"), "{}", d.reason);
    // Loading is refused and activates nothing.
    let err = session
        .load(&names(&["builder"]), LoadMode::Add)
        .unwrap_err();
    assert_eq!(err.code(), "SKILL_AUDIT_FAILED");
    assert!(err.to_string().contains("disk full"), "{err}");
    assert!(active(&session).is_empty());

    sink.fail.store(false, Ordering::SeqCst);
    session.load(&names(&["builder"]), LoadMode::Add).unwrap();
    sink.fail.store(true, Ordering::SeqCst);
    let err = protocol::call(
        &session,
        "skills_read",
        json!({"path": "references/notes.md"}),
    )
    .unwrap_err();
    assert_eq!(err.code(), "SKILL_AUDIT_FAILED");
    let err = protocol::call(
        &session,
        "skills_run_script",
        json!({"path": "scripts/build.sh"}),
    )
    .unwrap_err();
    assert_eq!(err.code(), "SKILL_AUDIT_FAILED");
    // Unloading is refused: the skill and its restrictions stay.
    let err = session.unload(&names(&["builder"])).unwrap_err();
    assert_eq!(err.code(), "SKILL_AUDIT_FAILED");
    assert_eq!(active(&session), ["builder"]);
    assert!(
        !session
            .check_tool("Bash", &json!({"command": "make"}))
            .allowed
    );
    sink.fail.store(false, Ordering::SeqCst);
    assert!(
        session
            .check_tool("Bash", &json!({"command": "make"}))
            .allowed
    );
    assert!(
        !session
            .check_tool("Bash", &json!({"command": "ls"}))
            .allowed
    );
}

// Regression: when the sink could not write, dropping the task guard left every skill
// active (the unload it tried failed at the first event), so the next task of the session
// inherited them, contrary to the guard's "whatever happened".
#[test]
fn the_task_guard_ends_the_task_even_when_the_sink_fails() {
    let env = full_env();
    let sink = Arc::new(FlakySink::default());
    let dyn_sink: Arc<dyn AuditSink> = sink.clone();
    let executor = Executor::builder(env.index()).audit_sink(dyn_sink).build();
    let session = executor.session(context());
    {
        let _task = session.task();
        session.load(&names(&["builder"]), LoadMode::Add).unwrap();
        sink.fail.store(true, Ordering::SeqCst);
    }
    assert!(active(&session).is_empty());
    // Every check is still denied while the sink is down.
    assert!(
        !session
            .check_tool("Bash", &json!({"command": "ls"}))
            .allowed
    );
}

#[test]
fn eight_threads_of_a_thousand_checks_make_eight_thousand_whole_lines() {
    const THREADS: usize = 8;
    const CALLS: usize = 1_000;
    let env = full_env();
    let file = env.outside("audit").join("concurrent.jsonl");
    let sink: Arc<dyn AuditSink> = Arc::new(JsonlFileSink::open(&file).unwrap());
    let executor = Executor::builder(env.index()).audit_sink(sink).build();
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let executor = executor.clone();
            std::thread::spawn(move || {
                let session =
                    executor.session(SessionContext::builder().id(format!("thread-{t}")).build());
                for i in 0..CALLS {
                    let command = if i % 2 == 0 { "make test" } else { "curl evil" };
                    let d = session.check_tool("Bash", &json!({ "command": command }));
                    assert!(d.allowed);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.ends_with('\n'));
    let mut per_session: HashMap<String, usize> = HashMap::new();
    let mut count = 0;
    for line in text.lines() {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not a whole JSON object ({e}): {line:?}"));
        assert!(v.is_object());
        assert_eq!(v["event"], "tool_checked_without_skill");
        *per_session
            .entry(v["session_id"].as_str().unwrap().to_owned())
            .or_default() += 1;
        count += 1;
    }
    assert_eq!(count, THREADS * CALLS);
    assert_eq!(per_session.len(), THREADS);
    assert!(per_session.values().all(|n| *n == CALLS));
}

#[test]
fn eight_threads_with_restricting_skills_audit_both_decisions() {
    const THREADS: usize = 8;
    const CALLS: usize = 1_000;
    let env = full_env();
    let file = env.outside("audit").join("decisions.jsonl");
    let sink: Arc<dyn AuditSink> = Arc::new(JsonlFileSink::open(&file).unwrap());
    let executor = Executor::builder(env.index()).audit_sink(sink).build();
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let executor = executor.clone();
            std::thread::spawn(move || {
                let session =
                    executor.session(SessionContext::builder().id(format!("thread-{t}")).build());
                session.load(&names(&["builder"]), LoadMode::Add).unwrap();
                for i in 0..CALLS {
                    let command = if i % 2 == 0 { "make test" } else { "curl evil" };
                    let d = session.check_tool("Bash", &json!({ "command": command }));
                    assert_eq!(d.allowed, i % 2 == 0);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let decisions: Vec<Value> = lines(&file)
        .into_iter()
        .filter(|v| {
            v["event"] == "tool_execution_in_skill" || v["event"] == "tool_restriction_violated"
        })
        .collect();
    assert_eq!(decisions.len(), THREADS * CALLS);
    let denied = decisions
        .iter()
        .filter(|v| v["tool_allowed"] == false)
        .count();
    assert_eq!(denied, THREADS * CALLS / 2);
}

// Regression: a file left with a torn last line (a crash mid-write) had the next event
// glued to it; it is cut back to its last whole line on open.
#[test]
fn a_torn_last_line_is_cut_back_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("audit.jsonl");
    std::fs::write(&file, "{\"event\":\"whole\"}\n{\"event\":\"to").unwrap();
    let env = full_env();
    let sink: Arc<dyn AuditSink> = Arc::new(JsonlFileSink::open(&file).unwrap());
    let session = Executor::builder(env.index())
        .audit_sink(sink)
        .build()
        .session(context());
    assert!(
        session
            .check_tool("Bash", &json!({"command": "ls"}))
            .allowed
    );
    let lines = lines(&file);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["event"], "whole");
}

// Regression: events went on into an unlinked file, and into the old file after another
// was renamed over the path; both now fail closed.
#[test]
fn an_unlinked_or_replaced_audit_file_fails_closed() {
    for replace in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("audit.jsonl");
        let env = full_env();
        let sink: Arc<dyn AuditSink> = Arc::new(JsonlFileSink::open(&file).unwrap());
        let session = Executor::builder(env.index())
            .audit_sink(sink)
            .build()
            .session(context());
        assert!(
            session
                .check_tool("Bash", &json!({"command": "ls"}))
                .allowed
        );
        if replace {
            let other = dir.path().join("other.jsonl");
            std::fs::write(&other, "").unwrap();
            std::fs::rename(&other, &file).unwrap();
        } else {
            std::fs::remove_file(&file).unwrap();
        }
        let d = session.check_tool("Bash", &json!({"command": "ls"}));
        assert!(!d.allowed, "replace: {replace}");
        assert!(d.reason.contains("removed or replaced"), "{}", d.reason);
    }
}

// Regression: a sink read the length it would roll a failed write back to under a lock of
// its own process only, so when two sessions shared an audit file, one's rollback (a full
// disk) cut off a decision the other had written meanwhile. Each append now holds an
// exclusive `flock` on the file: while another process holds it, an audited call waits
// (it is seen pausing between its tries for the lock, never answered first), and its line
// follows the other writer's.
#[cfg(target_os = "linux")]
#[test]
fn an_append_waits_for_another_writer_of_the_audit_file() {
    use rustix::fs::{flock, FlockOperation};
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let (_env, file, session) = file_audited(dir.path());
    let mut other = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    flock(&other, FlockOperation::LockExclusive).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let writer = std::thread::spawn(move || {
        // `/proc/thread-self` names this thread: `PID/task/TID`.
        tx.send(Some(std::fs::read_link("/proc/thread-self").unwrap()))
            .unwrap();
        let allowed = session
            .check_tool("Bash", &json!({"command": "ls"}))
            .allowed;
        tx.send(None).unwrap();
        allowed
    });
    let me = rx.recv().unwrap().expect("the writer's thread");
    let wchan = std::path::Path::new("/proc").join(me).join("wchan");
    // The writer pauses between its tries for the lock: seen asleep in the kernel, it is
    // waiting (nothing else in a `check_tool` sleeps).
    loop {
        assert!(
            rx.try_recv().is_err(),
            "an audited call was answered while another process held the audit file"
        );
        if std::fs::read_to_string(&wchan).is_ok_and(|w| w.contains("nanosleep")) {
            break;
        }
        std::thread::yield_now();
    }
    other.write_all(b"{\"event\":\"other\"}\n").unwrap();
    flock(&other, FlockOperation::Unlock).unwrap();
    assert!(writer.join().unwrap());
    let lines = lines(&file);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["event"], "other");
    assert!(
        lines[1]["event"].as_str().unwrap().starts_with("tool_"),
        "{lines:?}"
    );
}

// Regression (review): the wait for another process's lock had no end, so any process that
// could open the audit file (made readable by all) and lock it held every session that
// wrote it for ever. The file is made for its owner alone, and a call waits for the lock
// for a bounded time, then is refused saying why.
#[cfg(unix)]
#[test]
fn a_lock_held_for_ever_refuses_the_call_and_the_file_is_the_owner_s() {
    use rustix::fs::{flock, FlockOperation};
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let (_env, file, session) = file_audited(dir.path());
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "{mode:o}");
    let other = std::fs::File::open(&file).unwrap();
    flock(&other, FlockOperation::LockShared).unwrap();
    let d = session.check_tool("Bash", &json!({"command": "ls"}));
    assert!(!d.allowed);
    assert!(d.reason.contains("locked"), "{}", d.reason);
    flock(&other, FlockOperation::Unlock).unwrap();
    assert!(
        session
            .check_tool("Bash", &json!({"command": "ls"}))
            .allowed
    );
}

// Regression: a FIFO audit path with no reader blocked start-up; only regular files are
// accepted, and the refusal is immediate.
#[test]
fn only_regular_files_are_accepted_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for path in [
        fifo.as_path(),
        dir.path(),
        std::path::Path::new("/dev/full"),
    ] {
        assert!(JsonlFileSink::open(path).is_err(), "{}", path.display());
    }
}

// Regression: at the end of input the task guard ran `hooks.post` while the audit sink was
// down, and recorded neither the deactivation nor the hook.
#[test]
fn a_post_hook_does_not_run_unaudited_at_the_end_of_a_task() {
    let env = Env::new();
    let marker = env.outside("marks").join("post-ran");
    env.skill("closer", "hooks:\n  post: [scripts/post.sh]\n", "Close.\n");
    env.file(
        "closer",
        "scripts/post.sh",
        format!("touch '{}'\n", marker.display()),
    );
    let sink = Arc::new(FlakySink::default());
    let dyn_sink: Arc<dyn AuditSink> = sink.clone();
    let session = Executor::builder(env.index())
        .audit_sink(dyn_sink)
        .build()
        .session(context());
    {
        let _task = session.task();
        session.load(&names(&["closer"]), LoadMode::Add).unwrap();
        sink.fail.store(true, Ordering::SeqCst);
    }
    assert!(active(&session).is_empty());
    assert!(!marker.exists(), "the post hook ran unaudited");
    // With the sink up, the same end of task records the deactivation and runs the hook.
    sink.fail.store(false, Ordering::SeqCst);
    {
        let _task = session.task();
        session.load(&names(&["closer"]), LoadMode::Add).unwrap();
    }
    assert!(marker.exists());
    let kinds: Vec<AuditKind> = sink.inner.events().iter().map(|e| e.event).collect();
    assert!(
        kinds.ends_with(&[
            AuditKind::SkillDeactivated,
            AuditKind::HookStarted,
            AuditKind::HookExecuted
        ]),
        "{kinds:?}"
    );
}

/// A session of [`full_env`] audited to `audit.jsonl` in `dir`: the environment (keep it
/// alive), the audit file and the session.
fn file_audited(dir: &std::path::Path) -> (Env, std::path::PathBuf, skills_executor::Session) {
    let file = dir.join("audit.jsonl");
    let env = full_env();
    let sink: Arc<dyn AuditSink> = Arc::new(JsonlFileSink::open(&file).unwrap());
    let session = Executor::builder(env.index())
        .audit_sink(sink)
        .build()
        .session(context());
    (env, file, session)
}

/// A batch of pipelined `check_tool` requests (`protocol::respond_batch`): their events are
/// written together after the last decision, before any answer is handed back, in order.
#[test]
fn a_batch_writes_its_decisions_events_before_answering() {
    let dir = tempfile::tempdir().unwrap();
    let (_env, file, session) = file_audited(dir.path());
    // Held, the event is not in the file until the release.
    let held = session.hold_decisions();
    assert!(
        session
            .check_tool("Bash", &json!({"command": "ls"}))
            .allowed
    );
    assert!(lines(&file).is_empty());
    held.release().unwrap();
    assert_eq!(lines(&file).len(), 1);
    let requests: Vec<String> = (0..10)
        .map(|i| {
            format!(r#"{{"id":{i},"tool":"check_tool","input":{{"tool":"Bash","input":{{"command":"ls {i}"}}}}}}"#)
        })
        .collect();
    let refs: Vec<&str> = requests.iter().map(String::as_str).collect();
    let answers = protocol::respond_batch(&session, &refs);
    assert_eq!(answers.len(), 10);
    assert!(answers.iter().all(|a| a.contains(r#""decision":"allow""#)));
    let events = lines(&file);
    assert_eq!(events.len(), 11);
    let tools: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap_or(""))
        .collect();
    assert!(
        tools.iter().all(|t| *t == "tool_checked_without_skill"),
        "{tools:?}"
    );
}

/// When a batch's events cannot be written, none of its `check_tool` decisions is released:
/// each is answered as a denial that names the audit failure; other answers stand.
#[test]
fn a_batch_whose_events_cannot_be_written_is_denied_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (_env, file, session) = file_audited(dir.path());
    std::fs::remove_file(&file).unwrap();
    let requests = [
        r#"{"id":"a","tool":"check_tool","input":{"tool":"Bash","input":{"command":"ls"}}}"#,
        r#"{"id":"b","tool":"hello","input":{}}"#,
        r#"{"id":"c","tool":"check_tool","input":{"tool":"Read","input":{"file_path":"x"}}}"#,
    ];
    let answers = protocol::respond_batch(&session, &requests);
    let parsed: Vec<Value> = answers
        .iter()
        .map(|a| serde_json::from_str(a).unwrap())
        .collect();
    for i in [0, 2] {
        assert_eq!(parsed[i]["output"]["decision"], "deny", "{}", answers[i]);
        let reason = parsed[i]["output"]["reason"].as_str().unwrap();
        assert!(reason.contains("removed or replaced"), "{reason}");
    }
    assert_eq!(parsed[0]["id"], "a");
    assert_eq!(parsed[2]["id"], "c");
    assert_eq!(parsed[1]["ok"], true);
    assert!(
        parsed[1]["output"]["protocol"].is_string(),
        "{}",
        answers[1]
    );
}

/// Regression: holding was a flag of the whole session, so a `check_tool` on another thread
/// was held too and answered before its event was written. Only the holding thread's
/// decisions are held; another thread's are written before its call returns.
#[test]
fn regression_only_the_holding_threads_decisions_are_held() {
    let dir = tempfile::tempdir().unwrap();
    let (_env, file, session) = file_audited(dir.path());
    let held = session.hold_decisions();
    assert!(
        session
            .check_tool("Bash", &json!({"command": "ls"}))
            .allowed
    );
    std::thread::scope(|s| {
        s.spawn(|| {
            assert!(
                session
                    .check_tool("Bash", &json!({"command": "pwd"}))
                    .allowed
            );
            assert_eq!(session.held_decisions(), 0);
        });
    });
    // The other thread's event is written; this thread's is still held.
    assert_eq!(lines(&file).len(), 1);
    assert_eq!(session.held_decisions(), 1);
    held.release().unwrap();
    assert_eq!(lines(&file).len(), 2);
}

/// A call that is not a decision, made while decisions are held, writes the held events
/// first: the trail keeps the order of the calls.
#[test]
fn a_call_made_while_decisions_are_held_keeps_the_order() {
    let dir = tempfile::tempdir().unwrap();
    let (_env, file, session) = file_audited(dir.path());
    let held = session.hold_decisions();
    assert!(
        session
            .check_tool("Bash", &json!({"command": "ls"}))
            .allowed
    );
    session
        .load(&names(&["builder"]), LoadMode::Replace)
        .unwrap();
    let events: Vec<String> = lines(&file)
        .iter()
        .map(|e| e["event"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(
        events.first().map(String::as_str),
        Some("tool_checked_without_skill")
    );
    assert!(events.len() >= 2, "{events:?}");
    held.release().unwrap();
    assert_eq!(lines(&file).len(), events.len());
}

// Regression: runtime calls refused by a rule left no record (promise 24: every decision
// is recorded): an unload that would strand a required dependency, a load of
// hooks it does not allow, a skill the user alone invokes (by `skills_load` or `skill`),
// the unload of a skill the host pinned. Each is now recorded, its code first, and fails
// closed when it cannot be.
#[test]
fn a_refused_load_or_unload_is_recorded_with_its_code() {
    let env = Env::new();
    env.skill("alpha", "allowed-tools: skills_read\n", "A.\n");
    env.skill("other", "", "O.\n");
    env.skill("hooked", "hooks:\n  pre: [scripts/pre.sh]\n", "H.\n");
    env.file("hooked", "scripts/pre.sh", "true\n");
    env.skill("secret", "disable-model-invocation: true\n", "S.\n");
    env.skill("pinned", "", "P.\n");
    env.skill("base", "", "B.\n");
    env.skill(
        "needs",
        "composition:\n  dependencies:\n    - skillName: base\n",
        "N.\n",
    );
    let session = env.session();
    session.host_activate(&names(&["pinned"])).unwrap();
    session.load(&names(&["needs"]), LoadMode::Add).unwrap();
    session.load(&names(&["alpha"]), LoadMode::Add).unwrap();
    // Changed by issue 37: a replace-mode load no longer needs the permission of the
    // restricting skills it ends, so the refusal this table held for it (a replace under
    // `alpha`) is now an unload that would strand a required dependency.
    let refusals = [
        (
            session.load(&names(&["hooked"]), LoadMode::Add).err(),
            AuditKind::SkillActivationRefused,
            "skills_load",
            "hooked",
            "SKILL_TOOL_NOT_ALLOWED: ",
        ),
        (
            session.load(&names(&["secret"]), LoadMode::Add).err(),
            AuditKind::SkillActivationRefused,
            "skills_load",
            "secret",
            "SKILL_MODEL_INVOCATION_DISABLED: ",
        ),
        (
            session.skill("secret").err(),
            AuditKind::SkillActivationRefused,
            "skill",
            "secret",
            "SKILL_MODEL_INVOCATION_DISABLED: ",
        ),
        (
            session.unload(&names(&["base"])).err(),
            AuditKind::SkillDeactivationRefused,
            "skills_unload",
            "base",
            "SKILL_REQUIRED_BY_ACTIVE: ",
        ),
        (
            session.unload(&names(&["pinned"])).err(),
            AuditKind::SkillDeactivationRefused,
            "skills_unload",
            "pinned",
            "SKILL_PINNED_BY_HOST: ",
        ),
    ];
    let mut recorded = env.events(AuditKind::SkillActivationRefused);
    recorded.extend(env.events(AuditKind::SkillDeactivationRefused));
    assert_eq!(recorded.len(), refusals.len(), "{recorded:?}");
    for ((err, kind, tool, skill, code), event) in refusals.iter().zip(&recorded) {
        let err = err.as_ref().expect("refused");
        assert!(code.starts_with(err.code()), "{err}");
        assert_eq!(event.event, *kind);
        assert_eq!(event.tool_name.as_deref(), Some(*tool));
        assert_eq!(event.skill_name.as_deref(), Some(*skill));
        assert_eq!(event.error, Some(format!("{code}{err}")));
    }
    assert_eq!(active(&session), ["pinned", "base", "needs", "alpha"]);

    // A refusal that cannot be recorded fails closed, saying why.
    let sink = Arc::new(FlakySink::default());
    let dyn_sink: Arc<dyn AuditSink> = sink.clone();
    let executor = Executor::builder(env.index()).audit_sink(dyn_sink).build();
    let session = executor.session(context());
    session.host_activate(&names(&["pinned"])).unwrap();
    sink.fail.store(true, Ordering::SeqCst);
    let err = session.unload(&names(&["pinned"])).unwrap_err();
    assert_eq!(err.code(), "SKILL_AUDIT_FAILED", "{err}");
    let err = session.skill("secret").unwrap_err();
    assert_eq!(err.code(), "SKILL_AUDIT_FAILED", "{err}");
    assert_eq!(active(&session), ["pinned"]);
}
