//! `Session::check_tool` where a session and a real folder are the subject: the host default
//! and `Session::decide` (not audited), the refusal of host reads of a skill's scripts
//! through links and hard links, confinement through links, inputs with several path
//! fields or a field that is not a string, and the audit event of every decision. The
//! rules themselves (rule forms, nested skills, deny rules, Bash lines, `..`) are decision
//! tables of `skills-policy` (`crates/policy/tests/decisions/`).
//!
//! Tests marked `// Regression:` failed before the fix they name.

mod common;

use std::path::Path;

use common::{assert_decisions, names, Env};
use serde_json::json;
use skills_executor::{AuditKind, DefaultDecision, LoadMode, Policy, Session, SessionContext};

/// A skill confined to its own folder (`security.fileSystemScope: skill-directory`).
fn confined(env: &Env, name: &str, body: &str) -> std::path::PathBuf {
    env.skill(
        name,
        "security:\n  fileSystemScope: skill-directory\n",
        body,
    )
}

fn bash(session: &Session, command: &str) -> bool {
    session
        .check_tool("Bash", &json!({ "command": command }))
        .allowed
}

fn read(session: &Session, path: &Path) -> skills_executor::Decision {
    session.check_tool("Read", &json!({ "file_path": path }))
}

fn load(session: &Session, skills: &[&str]) {
    session.load(&names(skills), LoadMode::Add).unwrap();
}

#[test]
fn with_no_restricting_skill_the_host_default_decides() {
    let env = Env::new();
    env.skill("free", "", "No restrictions.\n");
    let allow = env.session();
    assert!(bash(&allow, "anything at all"));
    load(&allow, &["free"]);
    let d = allow.check_tool("Bash", &json!({"command": "anything"}));
    assert!(d.allowed);
    assert!(
        d.reason.contains("no active skill restricts"),
        "{}",
        d.reason
    );

    let deny = env
        .executor(
            Policy::builder()
                .default_decision(DefaultDecision::Deny)
                .build(),
        )
        .session(SessionContext::default());
    assert!(!bash(&deny, "ls"));
    load(&deny, &["free"]);
    assert!(!bash(&deny, "ls"));
    // The bare decision agrees and is not audited.
    let before = env.sink.events().len();
    assert!(!deny.decide("Bash", Some("ls")).allowed);
    assert!(allow.decide("Bash", Some("ls")).allowed);
    assert_eq!(env.sink.events().len(), before);
}

#[test]
fn a_host_read_of_an_active_skills_script_is_refused_and_audited() {
    let env = Env::new();
    let dir = env.skill(
        "extractor",
        "allowed-tools: Read Bash(python3:*)\n",
        "Run scripts/extract.py.\n",
    );
    env.file("extractor", "scripts/extract.py", "print('hi')\n");
    env.file("extractor", "references/guide.md", "Guide.\n");
    let outside = env.outside("elsewhere");
    let session = env.session();
    let script = dir.join("scripts/extract.py");
    // Not active yet: nothing to protect.
    assert!(read(&session, &script).allowed);

    load(&session, &["extractor"]);
    let d = read(&session, &script);
    assert!(!d.allowed);
    assert!(d.script_read);
    assert!(d.reason.contains("skills_run_script"), "{}", d.reason);
    // The other field name, a `..` detour, and a case variant of the tool.
    assert!(!session.check_tool("Read", &json!({"path": script})).allowed);
    let detour = dir.join("references/../scripts/extract.py");
    assert!(!read(&session, &detour).allowed);
    assert!(
        !session
            .check_tool("read", &json!({"file_path": script}))
            .allowed
    );
    // A link from elsewhere into scripts/.
    #[cfg(unix)]
    {
        let link = outside.join("innocent.txt");
        std::os::unix::fs::symlink(&script, &link).unwrap();
        assert!(!read(&session, &link).allowed);
    }
    // Other files of the skill are readable.
    assert!(read(&session, &dir.join("references/guide.md")).allowed);

    let blocked = env.events(AuditKind::ScriptReadBlocked);
    assert!(blocked.len() >= 4, "{blocked:?}");
    let e = &blocked[0];
    assert_eq!(e.tool_name.as_deref(), Some("Read"));
    assert_eq!(e.tool_allowed, Some(false));
    assert_eq!(e.skill_name.as_deref(), Some("extractor"));
    assert!(e.error.as_deref().unwrap().contains("skills_run_script"));
}

// Regression: confinement accepted a path if either its lexical or its resolved form was
// inside the skill, so a link inside the skill pointing outside (or a new file under such a
// link) let host path tools escape.
#[cfg(unix)]
#[test]
fn file_system_scope_is_not_escaped_through_a_link_inside_the_skill() {
    let env = Env::new();
    let dir = confined(&env, "sandboxed", "Sandboxed.\n");
    let outside = env.outside("secrets");
    std::fs::write(outside.join("key.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(outside.join("key.txt"), dir.join("key-link")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("dir-link")).unwrap();
    let session = authoring(&env);
    load(&session, &["sandboxed"]);
    assert_decisions(
        &session,
        &[
            ("Read", json!({"file_path": dir.join("key-link")}), false),
            (
                "Read",
                json!({"file_path": dir.join("dir-link/key.txt")}),
                false,
            ),
            // A file that does not exist yet, under a link that leaves the skill.
            (
                "Write",
                json!({"file_path": dir.join("dir-link/new.txt")}),
                false,
            ),
            // A new file inside the skill is still fine.
            (
                "Write",
                json!({"file_path": dir.join("new/deeper.txt")}),
                true,
            ),
        ],
    );
}

#[test]
fn every_decision_is_audited_with_the_rules_in_force() {
    let env = Env::new();
    env.skill(
        "git-only",
        "allowed-tools: Bash(git status:*) Read\n",
        "Git.\n",
    );
    let executor = env.executor(Policy::default());
    let session = executor.session(
        SessionContext::builder()
            .id("s-1")
            .agent("coder")
            .tenant("acme")
            .correlation_id("corr-9")
            .task_id("task-3")
            .build(),
    );
    load(&session, &["git-only"]);
    assert!(bash(&session, "git status"));
    assert!(!bash(&session, "git push"));
    let allowed = env.events(AuditKind::ToolExecutionInSkill);
    let denied = env.events(AuditKind::ToolRestrictionViolated);
    assert_eq!(allowed.len(), 1);
    assert_eq!(denied.len(), 1);
    for (e, ok) in [(&allowed[0], true), (&denied[0], false)] {
        assert_eq!(e.session_id, "s-1");
        assert_eq!(e.agent_id.as_deref(), Some("coder"));
        assert_eq!(e.tenant_id.as_deref(), Some("acme"));
        assert_eq!(e.correlation_id.as_deref(), Some("corr-9"));
        assert_eq!(e.task_id.as_deref(), Some("task-3"));
        assert_eq!(e.skill_name.as_deref(), Some("git-only"));
        assert_eq!(e.tool_name.as_deref(), Some("Bash"));
        assert_eq!(e.tool_allowed, Some(ok));
        assert_eq!(
            e.allowed_tools.as_deref(),
            Some(&["Bash(git status:*)".to_owned(), "Read".to_owned()][..])
        );
        assert_eq!(e.error.is_some(), !ok);
    }
}

#[cfg(unix)]
#[test]
fn confinement_is_not_escaped_through_a_link_and_dot_dot() {
    // Regression: `..` was removed as text before the path was resolved, so
    // `<skill>/link/../secret` passed as `<skill>/secret` while the kernel opened
    // `<outside>/secret`.
    let env = Env::new();
    let dir = confined(&env, "boxed", "Boxed.\n");
    let outside = env.outside("outside");
    std::fs::create_dir_all(outside.join("a/b")).unwrap();
    std::fs::write(outside.join("a/secret"), "no\n").unwrap();
    std::os::unix::fs::symlink(outside.join("a/b"), dir.join("link")).unwrap();
    let session = env.session();
    load(&session, &["boxed"]);
    let sneaky = format!("{}/link/../secret", dir.display());
    assert_decisions(
        &session,
        &[
            ("Read", json!({ "file_path": sneaky }), false),
            ("Read", json!({"file_path": dir.join("SKILL.md")}), true),
        ],
    );
}

#[test]
fn a_deny_rule_fails_closed_without_its_argument() {
    // Regression: `disallowed-tools: Bash(rm:*)` let through a Bash call whose command was
    // not a string (or was missing), since the rule could not match.
    let env = Env::new();
    env.skill("norm", "disallowed-tools: Bash(rm:*)\n", "No rm.\n");
    let session = env.session();
    load(&session, &["norm"]);
    assert!(
        !session
            .check_tool("Bash", &json!({"command": ["rm", "-rf", "/"]}))
            .allowed
    );
    assert!(!session.check_tool("Bash", &json!({})).allowed);
    assert!(session.check_tool("Grep", &json!({})).allowed);
}

// Regression (security review): with both `file_path` and `path` in a call, only the first
// was checked, so a host whose tool reads `path` read a skill's script (or a file outside
// a confined skill) while the check saw a harmless `file_path`.
#[test]
fn every_declared_path_field_of_a_call_is_checked() {
    let env = Env::new();
    let dir = confined(&env, "boxed", "Boxed.\n");
    env.file("boxed", "scripts/run.py", "print(1)\n");
    env.file("boxed", "references/ok.md", "ok\n");
    let session = env.session();
    load(&session, &["boxed"]);
    let ok = dir.join("references/ok.md");
    assert!(
        session
            .check_tool("Read", &json!({"file_path": ok, "path": ok}))
            .allowed
    );
    let d = session.check_tool(
        "Read",
        &json!({"file_path": ok, "path": dir.join("scripts/run.py")}),
    );
    assert!(!d.allowed);
    assert!(d.script_read);
    assert!(
        !session
            .check_tool("Read", &json!({"file_path": ok, "path": "/etc/passwd"}))
            .allowed
    );
    // A declared field that is not a string cannot be checked.
    assert!(
        !session
            .check_tool("Read", &json!({"file_path": ["/etc/passwd"], "path": ok}))
            .allowed
    );
}

// Regression (security review): past the first missing component a path was joined as
// written (and a dangling link was taken for a plain missing file), so `<skill>/missing/../link/x` (which a host that normalises the path, or
// creates parents, opens through `link`) was judged as `<skill>/link/x`, inside the
// skill, though `link` points outside.
#[cfg(unix)]
#[test]
fn a_missing_component_does_not_hide_a_link_after_dot_dot() {
    let env = Env::new();
    let dir = confined(&env, "boxed", "Boxed.\n");
    env.file("boxed", "scripts/run.py", "print(1)\n");
    let outside = env.outside("outside");
    std::fs::write(outside.join("key.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("link")).unwrap();
    let session = authoring(&env);
    load(&session, &["boxed"]);
    let sneaky = format!("{}/missing/../link/key.txt", dir.display());
    assert!(
        !session
            .check_tool("Write", &json!({ "file_path": sneaky }))
            .allowed
    );
    // A dangling link inside the skill: a write through it creates its target outside.
    std::os::unix::fs::symlink(outside.join("new.txt"), dir.join("dangling")).unwrap();
    assert!(
        !session
            .check_tool("Write", &json!({ "file_path": dir.join("dangling") }))
            .allowed
    );
    // New files and folders inside the skill stay fine.
    let fresh = format!("{}/missing/../fresh/new.txt", dir.display());
    assert!(
        session
            .check_tool("Write", &json!({ "file_path": fresh }))
            .allowed
    );
    // And a link outside the skill into its scripts, behind a missing folder.
    let env2 = Env::new();
    let dir2 = env2.skill("plain", "", "Plain.\n");
    env2.file("plain", "scripts/run.py", "print(1)\n");
    let elsewhere = env2.outside("elsewhere");
    std::os::unix::fs::symlink(dir2.join("scripts"), elsewhere.join("s")).unwrap();
    let session2 = env2.session();
    load(&session2, &["plain"]);
    let sneaky = format!("{}/missing/../s/run.py", elsewhere.display());
    let d = session2.check_tool("Read", &json!({ "file_path": sneaky }));
    assert!(!d.allowed);
    assert!(d.script_read);
}

// Regression (attack review): a hard link to an active skill's script, outside the skill
// folder, could be read and written by its other name: a script changed in place runs as
// pinned bytes never were.
#[test]
fn an_active_skills_script_is_protected_under_every_name() {
    let env = Env::new();
    env.skill("linked", "", "Linked.\n");
    let script = env.file("linked", "scripts/run.sh", "echo run\n");
    let other = env.outside("elsewhere").join("innocent.txt");
    std::fs::hard_link(&script, &other).unwrap();
    let session = env.session();
    for tool in ["Read", "Write", "Edit"] {
        assert!(
            session
                .check_tool(tool, &json!({ "file_path": other }))
                .allowed,
            "{tool}: nothing is active yet"
        );
    }
    load(&session, &["linked"]);
    for tool in ["Read", "Write", "Edit"] {
        assert!(
            !session
                .check_tool(tool, &json!({ "file_path": other }))
                .allowed,
            "{tool}"
        );
    }
    assert!(
        session
            .check_tool(
                "Write",
                &json!({ "file_path": env.outside("elsewhere").join("other.txt") })
            )
            .allowed
    );
}

/// A session where host write tools may write skill folders (authoring), for tests of the
/// protections that hold even then.
fn authoring(env: &Env) -> skills_executor::Session {
    env.executor(
        Policy::builder()
            .skill_writes(skills_executor::SkillWrites::Allowed)
            .build(),
    )
    .session(SessionContext::default())
}
