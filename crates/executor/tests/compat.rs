//! Skills written for Claude Code and Codex, on disk, behave as those agents users expect:
//! `disable-model-invocation` (and Codex's `allow_implicit_invocation: false`) keeps a skill
//! from the model while the host can still activate it, `when_to_use` joins the listing,
//! Claude Code's `hooks` run only where this executor can run them. (That `allowed-tools`
//! can mean Claude Code's pre-approval is a decision table of `skills-policy`:
//! `tests/decisions/preapprove.txt`.)

mod common;

use common::{active, make_executable, names, Env};
use skills_executor::{AuditKind, LoadMode, SessionContext};
use skills_model::Layer;
use skills_protocol as protocol;

#[test]
fn a_skill_the_model_may_not_invoke_is_hidden_from_it_and_host_activated() {
    let env = Env::new();
    env.skill("deploy", "disable-model-invocation: true\n", "Deploy.\n");
    env.skill("notes", "", "Notes.\n");
    let session = env.session();
    let seen: Vec<String> = session
        .visible()
        .iter()
        .map(|r| r.name.to_string())
        .collect();
    assert_eq!(seen, ["notes"]);
    let listed: Vec<String> = session.list().skills.into_iter().map(|s| s.name).collect();
    assert_eq!(listed, ["notes"]);
    let text = session.instructions(None).instructions;
    assert!(!text.contains("deploy"), "{text}");
    let tools = serde_json::to_string(&protocol::tool_definitions(&session)).unwrap();
    assert!(!tools.contains("Test skill deploy"), "{tools}");
    let err = session
        .load(&names(&["deploy"]), LoadMode::Add)
        .unwrap_err();
    assert_eq!(err.code(), "SKILL_MODEL_INVOCATION_DISABLED", "{err}");
    assert!(err.to_string().contains("host_activate"), "{err}");
    // The host activates it on the user's request.
    session.host_activate(&names(&["deploy"])).unwrap();
    assert_eq!(active(&session), ["deploy"]);
}

// Regression (issue 37): Claude Code reads `yes`/`no`/`on`/`off`/`1`/`0` as booleans;
// `disable-model-invocation: yes` was ignored and the user-only skill offered to the model.
#[test]
fn claude_code_boolean_spellings_keep_a_user_only_skill_from_the_model() {
    let env = Env::new();
    env.skill("deploy", "disable-model-invocation: yes\n", "Deploy.\n");
    env.skill("release", "disable-model-invocation: ON\n", "Release.\n");
    env.skill("notes", "disable-model-invocation: 0\n", "Notes.\n");
    let session = env.session();
    let listed: Vec<String> = session.list().skills.into_iter().map(|s| s.name).collect();
    assert_eq!(listed, ["notes"]);
    let err = session
        .load(&names(&["deploy"]), LoadMode::Add)
        .unwrap_err();
    assert_eq!(err.code(), "SKILL_MODEL_INVOCATION_DISABLED", "{err}");
    session.host_activate(&names(&["deploy"])).unwrap();
    assert_eq!(active(&session), ["deploy"]);
}

#[test]
fn codex_allow_implicit_invocation_false_hides_a_skill_from_the_model() {
    let env = Env::new();
    env.skill("review", "", "Review.\n");
    env.file(
        "review",
        "agents/openai.yaml",
        "interface:\n  display_name: Review\npolicy:\n  allow_implicit_invocation: false\n",
    );
    env.skill(
        "explicit",
        "disable-model-invocation: false\n",
        "Explicit.\n",
    );
    env.file(
        "explicit",
        "agents/openai.yaml",
        "policy:\n  allow_implicit_invocation: false\n",
    );
    let index = std::sync::Arc::new(
        skills_index::SkillIndex::builder()
            .root(Layer::Personal, &env.root)
            .codex_metadata(true)
            .build()
            .unwrap(),
    );
    let session = skills_executor::Executor::builder(std::sync::Arc::clone(&index))
        .build()
        .session(SessionContext::builder().id("codex").build());
    let seen: Vec<String> = session
        .visible()
        .iter()
        .map(|r| r.name.to_string())
        .collect();
    // The frontmatter's own word wins over agents/openai.yaml.
    assert_eq!(seen, ["explicit"]);
    let err = session
        .load(&names(&["review"]), LoadMode::Add)
        .unwrap_err();
    assert_eq!(err.code(), "SKILL_MODEL_INVOCATION_DISABLED");
    // Without the Codex preset the file is not read.
    let plain = env.session();
    assert_eq!(plain.visible().len(), 2);
}

// Regression (issue 38): an `agents/openai.yaml` the loader could not read (over its
// 64 KiB limit, not a regular file, not YAML, a policy of the wrong shape) was skipped
// with a log line, so its `allow_implicit_invocation: false` was lost and the skill was
// offered to the model. A policy that cannot be read keeps the skill from the model.
#[test]
fn a_codex_policy_file_that_cannot_be_read_keeps_the_skill_from_the_model() {
    let long = format!(
        "interface:\n  short_description: {}\npolicy:\n  allow_implicit_invocation: false\n",
        "x".repeat(70 * 1024)
    );
    // (skill, what agents/openai.yaml is: contents, or None for a folder)
    let cases: &[(&str, Option<&str>)] = &[
        ("too-large", Some(&long)),
        (
            "not-yaml",
            Some("policy: [\n  allow_implicit_invocation: false\n"),
        ),
        (
            "not-utf8",
            Some("policy:\n  allow_implicit_invocation: false # \u{0}"),
        ),
        (
            "policy-a-list",
            Some("policy: [allow_implicit_invocation]\n"),
        ),
        (
            "not-a-boolean",
            Some("policy:\n  allow_implicit_invocation: no\n"),
        ),
        ("a-folder", None),
    ];
    let env = Env::new();
    env.skill("readable", "", "Readable.\n");
    env.file(
        "readable",
        "agents/openai.yaml",
        "policy:\n  allow_implicit_invocation: true\n",
    );
    env.skill("no-policy", "", "No policy.\n");
    for (skill, contents) in cases {
        env.skill(skill, "", "Hidden.\n");
        match contents {
            Some(text) if *skill == "not-utf8" => {
                let mut bytes = text.as_bytes().to_vec();
                bytes.extend([0xff, 0xfe, b'\n']);
                env.file(skill, "agents/openai.yaml", bytes);
            }
            Some(text) => {
                env.file(skill, "agents/openai.yaml", text);
            }
            None => {
                std::fs::create_dir_all(env.root.join(skill).join("agents/openai.yaml")).unwrap()
            }
        }
    }
    let index = std::sync::Arc::new(
        skills_index::SkillIndex::builder()
            .root(Layer::Personal, &env.root)
            .codex_metadata(true)
            .build()
            .unwrap(),
    );
    let session = skills_executor::Executor::builder(std::sync::Arc::clone(&index))
        .build()
        .session(SessionContext::builder().id("codex").build());
    let mut seen: Vec<String> = session
        .visible()
        .iter()
        .map(|r| r.name.to_string())
        .collect();
    seen.sort();
    assert_eq!(seen, ["no-policy", "readable"]);
    for (skill, _) in cases {
        let err = session.load(&names(&[skill]), LoadMode::Add).unwrap_err();
        assert_eq!(
            err.code(),
            "SKILL_MODEL_INVOCATION_DISABLED",
            "{skill}: {err}"
        );
    }
}

#[test]
fn when_to_use_joins_the_description_in_listings() {
    let env = Env::new();
    env.skill(
        "charts",
        "when_to_use: Use when the user asks for a chart.\n",
        "Charts.\n",
    );
    let session = env.session();
    let text = session.instructions(None).instructions;
    assert!(
        text.contains("tests. - Use when the user asks for a chart.\n</description>"),
        "{text}"
    );
    let listed = &session.list().skills[0].description;
    assert!(
        listed.ends_with(" - Use when the user asks for a chart."),
        "{listed}"
    );
}

#[cfg(unix)]
#[test]
fn claude_code_hooks_run_only_as_single_scripts_at_events_the_executor_has() {
    let env = Env::new();
    let dir = env.skill(
        "hooked",
        concat!(
            "hooks:\n",
            "  SessionStart:\n",
            "    - hooks:\n",
            "        - type: command\n",
            "          command: ./scripts/start.sh\n",
            "  PreToolUse:\n",
            "    - matcher: Bash\n",
            "      hooks:\n",
            "        - type: command\n",
            "          command: scripts/check.sh\n",
            "  Stop:\n",
            "    - hooks:\n",
            "        - type: command\n",
            "          command: scripts/stop.sh $ARGS | tee log\n",
        ),
        "Hooked.\n",
    );
    for script in ["start.sh", "check.sh", "stop.sh"] {
        let path = env.file(
            "hooked",
            &format!("scripts/{script}"),
            format!("#!/bin/sh\necho {script} > \"$(dirname \"$0\")/../{script}.ran\"\n"),
        );
        make_executable(&path);
    }
    let index = env.index();
    let record = index.snapshot().get("hooked").unwrap().clone();
    let hooks = record.frontmatter.hooks.as_deref().unwrap();
    assert_eq!(hooks.pre, ["scripts/start.sh"]);
    assert!(hooks.post.is_empty());
    assert_eq!(hooks.claude_code.len(), 3);
    let not_run: Vec<(Option<u32>, String)> = record
        .diagnostics
        .iter()
        .filter(|d| d.rule.id() == "hooks.notRun")
        .map(|d| (d.line, d.message.clone()))
        .collect();
    assert_eq!(not_run.len(), 2, "{not_run:?}");
    assert!(not_run[0].1.contains("tool event"), "{not_run:?}");
    assert!(not_run[1].1.contains("not a single script"), "{not_run:?}");
    assert!(not_run.iter().all(|(line, _)| line.is_some()));
    // Personal is trusted: the activation hook runs, the others never do.
    let session = env.session();
    let receipt = session.load(&names(&["hooked"]), LoadMode::Add).unwrap();
    assert_eq!(receipt.hooks.len(), 1);
    session.unload(&names(&["hooked"])).unwrap();
    assert!(dir.join("start.sh.ran").exists());
    assert!(!dir.join("check.sh.ran").exists());
    assert!(!dir.join("stop.sh.ran").exists());
    assert!(!env.events(AuditKind::HookExecuted).is_empty());
}

#[test]
fn claude_code_fields_are_typed() {
    let env = Env::new();
    env.skill(
        "typed",
        "arguments: issue branch\neffort: high\npaths:\n  - \"src/**/*.rs\"\n  - docs/*.md\nshell: powershell\n",
        "Typed.\n",
    );
    env.skill("odd", "effort: extreme\npaths: \"a/*, b/*\"\n", "Odd.\n");
    let snap = env.index().snapshot();
    let typed = snap.get("typed").unwrap();
    let cc = typed.frontmatter.claude_code.as_deref().unwrap();
    assert_eq!(cc.arguments, ["issue", "branch"]);
    assert_eq!(cc.effort.as_deref(), Some("high"));
    assert_eq!(cc.paths, ["src/**/*.rs", "docs/*.md"]);
    assert_eq!(cc.shell.as_deref(), Some("powershell"));
    assert!(typed
        .diagnostics
        .iter()
        .all(|d| !d.message.starts_with("unknown field")));
    let odd = snap.get("odd").unwrap();
    let cc = odd.frontmatter.claude_code.as_deref().unwrap();
    assert_eq!(cc.effort, None);
    assert_eq!(cc.paths, ["a/*", "b/*"]);
    assert!(odd
        .diagnostics
        .iter()
        .any(|d| d.rule.id() == "extension.type" && d.message.contains("effort")));
}
