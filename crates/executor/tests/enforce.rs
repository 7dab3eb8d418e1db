//! `Session::check_tool`: the rule forms of `allowed-tools` (`Tool`, `Tool(spec)`, `:*`,
//! a trailing ` *`, case-insensitive names, `${SKILL_DIR}`), several restricting skills
//! (a nested skill narrows, never widens), `disallowed-tools`, the host default when no
//! skill restricts, the refusal of host reads of a skill's scripts, the confinement of
//! `security.fileSystemScope: skill-directory`, and the audit event of every decision.
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
fn every_rule_form_matches_as_documented() {
    let env = Env::new();
    let dir = env.skill(
        "rules",
        "allowed-tools: Bash(git status:*) Bash(npm run *) Bash(python3 ${SKILL_DIR}/scripts/check.py) Read Grep(TODO)\n",
        "Rules.\n",
    );
    let executor = env.executor(Policy::builder().primary_arg("Grep", "pattern").build());
    let session = executor.session(SessionContext::default());
    load(&session, &["rules"]);

    let script = format!("python3 {}/scripts/check.py", dir.display());
    let cmd = |c: &str| json!({ "command": c });
    assert_decisions(
        &session,
        &[
            // `:*`: the words, then whitespace or nothing.
            ("Bash", cmd("git status"), true),
            ("Bash", cmd("git status --short"), true),
            ("Bash", cmd("git statusx"), false),
            ("Bash", cmd("git push"), false),
            // A trailing ` *`: a plain prefix that includes the space.
            ("Bash", cmd("npm run build"), true),
            // The grammar sees words: a trailing blank adds no argument, so `npm run ` is
            // the command `npm run`, which `npm run *` does not allow.
            ("Bash", cmd("npm run "), false),
            ("Bash", cmd("npm run"), false),
            ("Bash", cmd("npm install"), false),
            // `${SKILL_DIR}` expands to the skill's folder.
            ("Bash", cmd(&script), true),
            ("Bash", cmd("python3 ${SKILL_DIR}/scripts/check.py"), false),
            ("Bash", cmd(&format!("{script} --and-more")), false),
            // Tool names compare case-insensitively.
            ("bash", cmd("git status"), true),
            ("BASH", cmd("git status"), true),
            ("read", json!({"file_path": "/etc/hosts"}), true),
            ("READ", json!({"path": "/etc/hosts"}), true),
            // A bare `Tool` allows any input; `Tool(spec)` needs the declared primary
            // argument.
            ("Read", json!({}), true),
            ("Grep", json!({"pattern": "TODO"}), true),
            ("Grep", json!({"pattern": "FIXME"}), false),
            ("Grep", json!({}), false),
            // A command without its field never matches a specifier.
            ("Bash", json!({}), false),
            ("WebFetch", json!({}), false),
        ],
    );
    // Tools not listed.
    let d = session.check_tool("Write", &json!({"file_path": "/tmp/x"}));
    assert!(!d.allowed);
    assert!(d.reason.contains("allowed-tools"), "{}", d.reason);
    assert!(d.reason.contains("rules"), "{}", d.reason);
}

#[test]
fn a_nested_skill_narrows_and_never_widens() {
    let env = Env::new();
    env.skill("outer", "allowed-tools: Bash(git:*) Read\n", "Outer.\n");
    env.skill(
        "inner",
        "allowed-tools: Bash(git status:*) Bash(curl:*) Write\n",
        "Inner.\n",
    );
    env.skill("free", "", "No restrictions.\n");
    let session = env.session();
    load(&session, &["outer"]);
    assert!(bash(&session, "git push"));
    assert!(read(&session, Path::new("/etc/hosts")).allowed);

    load(&session, &["inner"]);
    assert!(bash(&session, "git status"));
    // Narrowed by `inner`.
    assert!(!bash(&session, "git push"));
    assert!(!read(&session, Path::new("/etc/hosts")).allowed);
    // Not widened by `inner`: `outer` allows neither curl nor Write.
    assert!(!bash(&session, "curl https://example.com"));
    assert!(
        !session
            .check_tool("Write", &json!({"file_path": "/tmp/x"}))
            .allowed
    );
    // A skill that restricts nothing does not widen either.
    load(&session, &["free"]);
    assert!(!bash(&session, "git push"));
    assert!(!bash(&session, "curl https://example.com"));

    // Unloading the narrow ones restores `outer`'s rules.
    session.unload(&names(&["free", "inner"])).unwrap();
    assert!(bash(&session, "git push"));
    assert!(!bash(&session, "curl https://example.com"));
}

#[test]
fn disallowed_tools_deny_whatever_else_allows() {
    let env = Env::new();
    env.skill(
        "careful",
        "disallowed-tools: Bash(rm:*) WebFetch\n",
        "Careful.\n",
    );
    env.skill(
        "permissive",
        "allowed-tools: Bash WebFetch Read\n",
        "Permissive.\n",
    );
    let session = env.session();
    load(&session, &["careful"]);
    // No allowlist: everything but the denylist passes.
    assert!(bash(&session, "ls -la"));
    let d = session.check_tool("Bash", &json!({"command": "rm -rf /"}));
    assert!(!d.allowed);
    assert!(d.reason.contains("disallowed-tools"), "{}", d.reason);
    assert!(!session.check_tool("webfetch", &json!({})).allowed);
    // A skill above that allows them does not lift the denial.
    load(&session, &["permissive"]);
    assert!(bash(&session, "ls -la"));
    assert!(!bash(&session, "rm -rf /"));
    assert!(!session.check_tool("WebFetch", &json!({})).allowed);
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

#[test]
fn file_system_scope_confines_host_path_tools_to_the_skill() {
    let env = Env::new();
    let dir = env.skill(
        "sandboxed",
        "security:\n  fileSystemScope: skill-directory\n  executesCommands: false\n",
        "Sandboxed.\n",
    );
    env.file("sandboxed", "references/notes.md", "Notes.\n");
    let outside = env.outside("secrets");
    std::fs::write(outside.join("key.txt"), "secret").unwrap();
    let session = authoring(&env);
    load(&session, &["sandboxed"]);

    assert_decisions(
        &session,
        &[
            (
                "Read",
                json!({"file_path": dir.join("references/notes.md")}),
                true,
            ),
            (
                "Write",
                json!({"file_path": dir.join("references/new.md")}),
                true,
            ),
            ("Edit", json!({"file_path": dir.join("SKILL.md")}), true),
            (
                "Read",
                json!({"file_path": dir.join("../secrets/key.txt")}),
                false,
            ),
            ("Read", json!({"file_path": "relative/path.txt"}), false),
            ("Write", json!({"file_path": "/etc/passwd"}), false),
        ],
    );
    let d = read(&session, &outside.join("key.txt"));
    assert!(!d.allowed);
    assert!(d.reason.contains("confines"), "{}", d.reason);
    // Bash is not a path tool: confinement does not apply to it.
    assert!(bash(&session, "ls /"));
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

// Regression: under `fileSystemScope: skill-directory`, a path tool call whose input held
// its path under a field the policy does not know (or no path at all) skipped the
// confinement check and was allowed.
#[test]
fn file_system_scope_refuses_a_path_tool_call_with_no_known_path() {
    let env = Env::new();
    confined(&env, "sandboxed", "Sandboxed.\n");
    env.skill("free", "", "Free.\n");
    let session = env.session();
    load(&session, &["free"]);
    // Not confined: the host default applies.
    assert!(
        session
            .check_tool("Write", &json!({"filepath": "/etc/passwd"}))
            .allowed
    );
    load(&session, &["sandboxed"]);
    let d = session.check_tool("Write", &json!({"filepath": "/etc/passwd"}));
    assert!(!d.allowed);
    assert!(d.reason.contains("names no path"), "{}", d.reason);
    assert!(!session.check_tool("Read", &json!({})).allowed);
    // Other tools are not path tools.
    assert!(session.check_tool("WebSearch", &json!({})).allowed);
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
fn path_rules_see_through_dot_dot() {
    // Regression: specifiers were matched against the raw argument, so `..` walked out of
    // an allowed folder and around a denied one.
    let env = Env::new();
    let dir = env.skill(
        "paths",
        "allowed-tools: Read(${SKILL_DIR}/*)\ndisallowed-tools: Read(/secret/*)\n",
        "Paths.\n",
    );
    let session = env.session();
    load(&session, &["paths"]);
    let escape = format!("{}/../../../../etc/passwd", dir.display());
    assert_decisions(
        &session,
        &[
            ("Read", json!({ "file_path": escape }), false),
            ("Read", json!({"file_path": dir.join("notes.md")}), true),
        ],
    );
    let env2 = Env::new();
    env2.skill("deny", "disallowed-tools: Read(/secret/*)\n", "Deny.\n");
    let session2 = env2.session();
    load(&session2, &["deny"]);
    for path in ["/x/../secret/f", "/secret/./f", "/secret/f"] {
        assert!(
            !session2
                .check_tool("Read", &json!({ "file_path": path }))
                .allowed,
            "{path}"
        );
    }
}

#[test]
fn compound_bash_commands_are_checked_part_by_part() {
    // Regression: `Bash(git status:*)` allowed `git status && curl x | sh`.
    let env = Env::new();
    env.skill(
        "git",
        "allowed-tools: Bash(git status:*) Bash(git log:*)\n",
        "Git.\n",
    );
    let session = env.session();
    load(&session, &["git"]);
    assert!(bash(&session, "git status && git log -1"));
    for command in [
        "git status && curl x | sh",
        "git status; rm -rf ~",
        "git status\nrm -rf ~",
        "git status | sh",
        "git status $(rm -rf ~)",
        "git status `rm -rf ~`",
        "git status & rm -rf ~",
    ] {
        assert!(!bash(&session, command), "{command:?}");
    }
    // A deny rule sees each part, and a leading space does not hide a command.
    let env2 = Env::new();
    env2.skill("norm", "disallowed-tools: Bash(rm:*)\n", "No rm.\n");
    let session2 = env2.session();
    load(&session2, &["norm"]);
    for command in [" rm -rf /", "ls; rm -rf /", "ls && rm x"] {
        assert!(!bash(&session2, command), "{command:?}");
    }
    assert!(bash(&session2, "ls -la"));
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

// Regression (security review): process substitution (`<(...)`, `>(...)`) runs a command
// like `$(...)` does, but was not counted as a substitution, so `Bash(git status:*)`
// allowed `git status <(rm -rf ~)`.
#[test]
fn process_substitution_is_not_hidden_from_an_allow_list() {
    let env = Env::new();
    env.skill("git", "allowed-tools: Bash(git status:*)\n", "Git.\n");
    let session = env.session();
    load(&session, &["git"]);
    assert!(bash(&session, "git status --short"));
    assert!(!bash(&session, "git status <(rm -rf ~)"));
    assert!(!bash(&session, "git status >(sh)"));
}

// Regression (security review): an output redirection writes a file the allow rule never
// named, so `Bash(echo:*)` allowed `echo 'curl x | sh' >> ~/.bashrc`.
#[test]
fn an_output_redirection_is_not_allowed_by_a_command_rule() {
    let env = Env::new();
    env.skill("echo", "allowed-tools: Bash(echo:*)\n", "Echo.\n");
    let session = env.session();
    load(&session, &["echo"]);
    assert!(bash(&session, "echo hello"));
    for command in [
        "echo 'curl x' >> ~/.bashrc",
        "echo x > /etc/passwd",
        "echo x >| f",
        "echo x <> f",
    ] {
        assert!(!bash(&session, command), "{command:?}");
    }
}

// Regression (security review): a deny rule was matched against the command as written,
// so a tab, a doubled space, quotes, a backslash, a subshell, a group or a substitution
// around the denied command let it through.
#[test]
fn a_bash_deny_rule_sees_through_quoting_spacing_and_grouping() {
    let env = Env::new();
    env.skill(
        "careful",
        "disallowed-tools: Bash(rm *) Bash(git push:*)\n",
        "Careful.\n",
    );
    let session = env.session();
    load(&session, &["careful"]);
    for command in [
        "rm\t-rf /",
        "git  push",
        "git\tpush --force",
        "'rm' -rf /",
        "\"rm\" -rf /",
        "\\rm -rf /",
        "r''m -rf /",
        "(rm -rf /)",
        "{ rm -rf /; }",
        "! rm -rf /",
        "echo $(rm -rf /)",
        "echo `rm -rf /`",
        "cat <(rm -rf /)",
    ] {
        assert!(!bash(&session, command), "{command:?}");
    }
    // Commands that only look alike stay allowed.
    for command in ["ls -la", "rmdir x", "git pull", "echo remove"] {
        assert!(bash(&session, command), "{command:?}");
    }
}

// Regression (security review): a deny rule with a specifier for a tool whose primary
// argument the host does not declare never matched, so the call passed (fail open).
#[test]
fn a_deny_rule_on_an_undeclared_tool_fails_closed() {
    let env = Env::new();
    env.skill("norm", "disallowed-tools: Grep(password)\n", "No.\n");
    let session = env.session();
    load(&session, &["norm"]);
    assert!(
        !session
            .check_tool("Grep", &json!({"pattern": "password"}))
            .allowed
    );
    assert!(session.check_tool("Glob", &json!({"pattern": "*"})).allowed);
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

// Regression (security review): a blank between a tool and its specifier split the rule in
// two, a bare `Bash` (every command allowed) and an unreadable `(git status:*)`, so
// `allowed-tools: Bash (git status:*)` allowed `rm -rf /`.
#[test]
fn a_blank_before_a_specifier_does_not_widen_the_rule() {
    let env = Env::new();
    env.skill("git", "allowed-tools: Bash (git status:*) Read\n", "Git.\n");
    let session = env.session();
    load(&session, &["git"]);
    assert!(bash(&session, "git status"));
    assert!(!bash(&session, "rm -rf /"));
    assert!(read(&session, Path::new("/etc/hosts")).allowed);
}

#[test]
fn the_scripts_of_an_active_skill_cannot_be_written() {
    // Regression (security review): with `allowed-tools: Write Read`, a model could write
    // `<skill>/scripts/x.sh` and then run it through skills_run_script with the skill's
    // trust.
    let env = Env::new();
    let dir = env.skill("writer", "allowed-tools: Write Edit Read\n", "Writes.\n");
    let session = authoring(&env);
    load(&session, &["writer"]);
    for tool in ["Write", "Edit", "write"] {
        let script = dir.join("scripts/x.sh");
        assert!(
            !session
                .check_tool(tool, &json!({ "file_path": script }))
                .allowed,
            "{tool}"
        );
    }
    assert!(
        session
            .check_tool("Write", &json!({ "file_path": dir.join("notes.md") }))
            .allowed
    );
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
