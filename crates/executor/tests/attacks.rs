//! Regression tests for the classes of attack an adversarial review found through
//! `skillctl session`, one test (or table) per class: code planted in skill folders and
//! run later, path tools other than Read/Write/Edit, a read racing a swap to a link, a
//! malformed `allowed-tools` failing open, paths too long to check, NUL bytes and
//! non-string paths. Each failed before the change that closed its class.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::{assert_decisions, names, Env};
use serde_json::{json, Value};
use skills_executor::{AuditKind, LoadMode, Policy, SessionContext, SkillWrites};
use skills_protocol as protocol;

fn allowed(session: &skills_executor::Session, tool: &str, input: Value) -> bool {
    session.check_tool(tool, &input).allowed
}

// Regression: an inactive skill's scripts, any SKILL.md, and files reached through a
// `scripts -> bin` link could be written, then the skill loaded and the code run.
#[test]
fn skill_folders_are_read_only_to_host_write_tools() {
    let env = Env::new();
    let idle = env.skill("idle", "", "Idle.\n");
    env.file("idle", "bin/run.sh", "echo run\n");
    std::os::unix::fs::symlink(idle.join("bin"), idle.join("scripts")).unwrap();
    let active = env.skill("active", "", "Active.\n");
    let session = env.session();
    session.load(&names(&["active"]), LoadMode::Add).unwrap();
    let targets = [
        idle.join("scripts/run.sh"),
        idle.join("bin/run.sh"),
        idle.join("SKILL.md"),
        idle.join("references/planted.sh"),
        active.join("SKILL.md"),
        active.join("notes.md"),
        env.root.join("new-skill/SKILL.md"),
    ];
    for tool in ["Write", "Edit", "MultiEdit"] {
        for target in &targets {
            let input = json!({ "file_path": target });
            assert!(
                !allowed(&session, tool, input),
                "{tool} {}",
                target.display()
            );
        }
    }
    let notebook = json!({ "notebook_path": idle.join("scripts/x.ipynb") });
    assert!(!allowed(&session, "NotebookEdit", notebook));
    // Outside every skill folder, writes are the rules' business as before.
    let outside = env.outside("work").join("out.txt");
    assert!(allowed(&session, "Write", json!({ "file_path": outside })));
    // Reading references stays fine.
    assert!(allowed(
        &session,
        "Read",
        json!({ "file_path": active.join("SKILL.md") })
    ));
}

#[test]
fn authoring_opens_skill_folders_but_never_an_active_skills_scripts() {
    let env = Env::new();
    let dir = env.skill("tool", "", "Tool.\n");
    env.file("tool", "scripts/run.sh", "echo run\n");
    let executor = env.executor(Policy::builder().skill_writes(SkillWrites::Allowed).build());
    let session = executor.session(SessionContext::default());
    assert!(allowed(
        &session,
        "Write",
        json!({ "file_path": env.root.join("fresh/SKILL.md") })
    ));
    session.load(&names(&["tool"]), LoadMode::Add).unwrap();
    assert!(!allowed(
        &session,
        "MultiEdit",
        json!({ "file_path": dir.join("scripts/run.sh") })
    ));
}

// Regression: with Grep, MultiEdit and NotebookEdit declared, path rules skipped
// normalisation and links, and confinement and the scripts protection did not apply.
#[test]
fn every_path_tool_gets_every_path_rule_and_protection() {
    let env = Env::new();
    let dir = env.skill(
        "boxed",
        "allowed-tools: Read Grep Glob LS MultiEdit NotebookEdit\nsecurity:\n  fileSystemScope: skill-directory\n",
        "Boxed.\n",
    );
    env.file("boxed", "scripts/run.sh", "echo run\n");
    env.file("boxed", "references/guide.md", "Guide.\n");
    let outside = env.outside("secrets");
    std::os::unix::fs::symlink(&outside, dir.join("link")).unwrap();
    let session = env
        .executor(Policy::builder().skill_writes(SkillWrites::Allowed).build())
        .session(SessionContext::default());
    session.load(&names(&["boxed"]), LoadMode::Add).unwrap();
    // (tool, input, allowed)
    let table: Vec<(&str, Value, bool)> = vec![
        (
            "Grep",
            json!({"pattern": "x", "path": dir.join("references")}),
            true,
        ),
        (
            "Grep",
            json!({"pattern": "x", "path": dir.join("scripts")}),
            false,
        ),
        (
            "Grep",
            json!({"pattern": "x", "path": dir.join("link")}),
            false,
        ),
        (
            "Grep",
            json!({"pattern": "x", "path": format!("{}/references/../../x", dir.display())}),
            false,
        ),
        ("Glob", json!({"pattern": "*", "path": outside}), false),
        // Regression (attack review): Glob's pattern climbed out of an allowed path.
        (
            "Glob",
            json!({"pattern": "**/*.md", "path": dir.join("references")}),
            true,
        ),
        (
            "Glob",
            json!({"pattern": "../../secrets/*", "path": dir.join("references")}),
            false,
        ),
        (
            "Glob",
            json!({"pattern": "/etc/*", "path": dir.join("references")}),
            false,
        ),
        (
            "Glob",
            json!({"pattern": "~/.ssh/*", "path": dir.join("references")}),
            false,
        ),
        (
            "Glob",
            json!({"pattern": ["*"], "path": dir.join("references")}),
            false,
        ),
        // Regression (review): braces a glob expands climbed through `{..,x}`.
        (
            "Glob",
            json!({"pattern": "{..,x}/{..,x}/secrets/*", "path": dir.join("references")}),
            false,
        ),
        // Regression (attack review): a glob that removes escapes climbs through `.\.`.
        (
            "Glob",
            json!({"pattern": ".\\./.\\./secrets/*", "path": dir.join("references")}),
            false,
        ),
        ("LS", json!({"path": dir.join("scripts")}), false),
        ("LS", json!({"path": dir.join("references")}), true),
        (
            "MultiEdit",
            json!({"file_path": dir.join("scripts/run.sh"), "edits": []}),
            false,
        ),
        (
            "MultiEdit",
            json!({"file_path": dir.join("references/guide.md"), "edits": []}),
            true,
        ),
        (
            "NotebookEdit",
            json!({"notebook_path": dir.join("link/n.ipynb")}),
            false,
        ),
        // An absent optional path, with no working folder declared, cannot be checked.
        ("Grep", json!({"pattern": "x"}), false),
    ];
    assert_decisions(&session, &table);
}

#[test]
fn a_declared_working_folder_stands_for_an_absent_optional_path() {
    let env = Env::new();
    let dir = env.skill(
        "boxed",
        "security:\n  fileSystemScope: skill-directory\n",
        "B.\n",
    );
    let inside = env
        .executor(Policy::builder().working_dir(&dir).build())
        .session(SessionContext::default());
    inside.load(&names(&["boxed"]), LoadMode::Add).unwrap();
    assert!(allowed(&inside, "Grep", json!({"pattern": "x"})));
    let elsewhere = env
        .executor(Policy::builder().working_dir(env.outside("cwd")).build())
        .session(SessionContext::default());
    elsewhere.load(&names(&["boxed"]), LoadMode::Add).unwrap();
    assert!(!allowed(&elsewhere, "Grep", json!({"pattern": "x"})));
}

#[test]
fn a_host_declared_path_tool_is_a_path_tool() {
    let env = Env::new();
    let dir = env.skill("tool", "allowed-tools: View\n", "Tool.\n");
    env.file("tool", "scripts/run.sh", "echo run\n");
    let session = env
        .executor(Policy::builder().path_tool("View", "target").build())
        .session(SessionContext::default());
    session.load(&names(&["tool"]), LoadMode::Add).unwrap();
    assert!(!allowed(
        &session,
        "View",
        json!({"target": dir.join("scripts/run.sh")})
    ));
    assert!(!allowed(
        &session,
        "View",
        json!({"target": dir.join("SKILL.md")})
    ));
    assert!(allowed(
        &session,
        "View",
        json!({"target": env.outside("o").join("a")})
    ));
}

// Regression: a null, `~`, `{}` or mapping `allowed-tools` loaded the skill with no
// restriction at all.
#[test]
fn an_unreadable_allowed_tools_restricts_to_nothing() {
    for (i, value) in ["", " ~", " {}", "\n  Bash: yes", " null"]
        .iter()
        .enumerate()
    {
        let env = Env::new();
        let name = format!("broken-{i}");
        env.skill(
            &name,
            &format!("allowed-tools:{value}\n"),
            "Never run rm.\n",
        );
        let session = env.session();
        let receipt = session
            .load(std::slice::from_ref(&name), LoadMode::Add)
            .unwrap();
        assert!(
            receipt
                .warnings
                .iter()
                .any(|w| w.contains("allows no tool")),
            "{value:?}: {:?}",
            receipt.warnings
        );
        assert!(
            !allowed(&session, "Bash", json!({"command": "rm -rf /"})),
            "{value:?}"
        );
        assert!(
            !allowed(&session, "Read", json!({"file_path": "/etc/hosts"})),
            "{value:?}"
        );
    }
}

// Regression: a path of N components took time quadratic in N (43 s for 1 MB); paths are
// now capped at PATH_MAX and checked in one pass. NUL bytes passed path rules.
#[test]
fn paths_too_long_or_with_nul_are_denied() {
    let env = Env::new();
    env.skill("reader", "allowed-tools: Read(/tmp/**)\n", "R.\n");
    let session = env.session();
    session.load(&names(&["reader"]), LoadMode::Add).unwrap();
    let long = format!("/tmp/{}", "a/".repeat(500_000));
    let d = session.check_tool("Read", &json!({ "file_path": long }));
    assert!(!d.allowed);
    assert!(d.reason.contains("longer than"), "{}", d.reason);
    let d = session.check_tool(
        "Read",
        &json!({"file_path": "/tmp/ok\u{0}/../../etc/passwd"}),
    );
    assert!(!d.allowed);
    assert!(d.reason.contains("NUL"), "{}", d.reason);
    // Even with no skill active, a write's path is checked for the skill folders.
    let idle = env.session();
    assert!(!allowed(
        &idle,
        "Write",
        json!({"file_path": "/tmp/x\u{0}"})
    ));
}

// Regression: a Read whose `file_path` was a list or an object skipped the scripts
// protection when no allowlist was active.
#[test]
fn a_path_field_that_is_not_a_string_is_denied_where_a_protection_applies() {
    let env = Env::new();
    let dir = env.skill("free", "", "No rules.\n");
    env.file("free", "scripts/run.sh", "echo run\n");
    let session = env.session();
    session.load(&names(&["free"]), LoadMode::Add).unwrap();
    let script = dir.join("scripts/run.sh").display().to_string();
    for input in [
        json!({"file_path": [script]}),
        json!({"file_path": {"path": script}}),
        json!({"file_path": 7}),
    ] {
        assert!(!allowed(&session, "Read", input.clone()), "{input}");
    }
    assert!(!allowed(
        &env.session(),
        "Write",
        json!({"file_path": ["x"]})
    ));
}

// Regression: `skills_read` checked the canonical path, then opened the name again; a
// file swapped for a link to an outside file between the two served the outside file.
#[test]
fn a_read_racing_a_swap_to_a_link_never_serves_an_outside_file() {
    let env = Env::new();
    let dir = env.skill("docs", "", "Docs.\n");
    env.file("docs", "references/page.md", "inside\n");
    let secret = env.outside("secret").join("key.txt");
    std::fs::write(&secret, "outside\n").unwrap();
    let session = env.session();
    session.load(&names(&["docs"]), LoadMode::Add).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = Arc::clone(&stop);
        let page = dir.join("references/page.md");
        let plain = dir.join("references/plain.tmp");
        let link = dir.join("references/link.tmp");
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                std::fs::write(&plain, "inside\n").unwrap();
                std::fs::rename(&plain, &page).unwrap();
                let _ = std::fs::remove_file(&link);
                std::os::unix::fs::symlink(&secret, &link).unwrap();
                std::fs::rename(&link, &page).unwrap();
                swaps += 1;
            }
            swaps
        })
    };
    let mut served = 0;
    for _ in 0..3000 {
        if let Ok(out) = protocol::call(
            &session,
            "skills_read",
            json!({"path": "references/page.md"}),
        ) {
            assert_eq!(out["content"], "inside\n", "an outside file was served");
            served += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    assert!(
        swaps > 0 && served > 0,
        "the race did not run: {swaps} swaps, {served} reads"
    );
}

// Regression: `hooks:` could point at a planted file anywhere in the skill.
#[test]
fn hooks_outside_scripts_do_not_run() {
    let env = Env::new();
    let dir = env.skill("hooked", "hooks:\n  pre: [references/planted.sh]\n", "H.\n");
    env.file("hooked", "references/planted.sh", "touch \"$0.ran\"\n");
    let session = env.session();
    let receipt = session.load(&names(&["hooked"]), LoadMode::Add).unwrap();
    let hook = &receipt.hooks[0];
    assert!(
        hook.error.as_deref().unwrap_or("").contains("scripts/"),
        "{hook:?}"
    );
    assert!(!dir.join("references/planted.sh.ran").exists());
}

// Regression: a skill restricted to `Read` could load another trusted skill and run its
// scripts. A restricting skill governs the runtime tools too.
#[test]
fn a_restricting_skill_governs_the_runtime_tools() {
    let env = Env::new();
    env.skill("careful", "allowed-tools: Read\n", "Only read.\n");
    env.file("careful", "scripts/own.sh", "echo own\n");
    env.skill("powerful", "", "Anything.\n");
    env.file("powerful", "scripts/any.sh", "echo any\n");
    let session = env.session();
    session.load(&names(&["careful"]), LoadMode::Add).unwrap();
    // Its own scripts need no permission from itself.
    let out = protocol::call(
        &session,
        "skills_run_script",
        json!({"path": "scripts/own.sh"}),
    );
    assert_eq!(out.unwrap()["stdout"], "own\n");
    // Adding narrows: allowed, but the other skill's scripts are not.
    session.load(&names(&["powerful"]), LoadMode::Add).unwrap();
    let err = protocol::call(
        &session,
        "skills_run_script",
        json!({"skill": "powerful", "path": "scripts/any.sh"}),
    )
    .unwrap_err();
    assert_eq!(err.code(), "SKILL_TOOL_NOT_ALLOWED", "{err}");
    // A skill that lists the runtime tool allows it.
    let env = Env::new();
    env.skill(
        "open",
        "allowed-tools: Read skills_run_script skills_load\n",
        "O.\n",
    );
    env.skill("powerful", "", "Anything.\n");
    env.file("powerful", "scripts/any.sh", "echo any\n");
    let session = env.session();
    session.load(&names(&["open"]), LoadMode::Add).unwrap();
    session.load(&names(&["powerful"]), LoadMode::Add).unwrap();
    let out = protocol::call(
        &session,
        "skills_run_script",
        json!({"skill": "powerful", "path": "scripts/any.sh"}),
    );
    assert_eq!(out.unwrap()["stdout"], "any\n");
    session
        .load(&names(&["powerful"]), LoadMode::Replace)
        .unwrap();
}

// Regression: the stack told skills apart by bare name, so loading `project:guard` (no
// rules) with mode "add" replaced the restricting `personal:guard` of the same name, and a
// host-pinned one was swapped with its pin carried over: Bash went from denied to allowed.
#[test]
fn a_skill_of_the_same_name_from_another_layer_never_stands_for_an_active_one() {
    let tmp = tempfile::tempdir().unwrap();
    for (layer, rules) in [("personal", "allowed-tools: Read\n"), ("project", "")] {
        let dir = tmp.path().join(layer).join("guard");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: guard\ndescription: The {layer} guard.\n{rules}---\nBody.\n"),
        )
        .unwrap();
    }
    let index = skills_index::SkillIndex::builder()
        .root(skills_model::Layer::Personal, tmp.path().join("personal"))
        .root(skills_model::Layer::Project, tmp.path().join("project"))
        .build()
        .unwrap();
    let executor = skills_executor::Executor::builder(Arc::new(index)).build();
    let rm = json!({ "command": "rm -rf /tmp/important" });
    let cases: [(&str, LoadMode, &str); 3] = [
        ("model", LoadMode::Add, "SKILL_NAME_ACTIVE"),
        ("host", LoadMode::Add, "SKILL_NAME_ACTIVE"),
        ("host", LoadMode::Replace, "SKILL_NAME_ACTIVE"),
    ];
    for (by, mode, code) in cases {
        let session = executor.session(SessionContext::default());
        match by {
            "model" => session.load(&names(&["guard"]), LoadMode::Add),
            _ => session.host_activate(&names(&["guard"])),
        }
        .unwrap();
        assert!(!allowed(&session, "Bash", rm.clone()));
        let err = session
            .load(&names(&["project:guard"]), mode)
            .expect_err("a second guard must not be activated");
        assert_eq!(err.code(), code, "{by} {mode:?}: {err}");
        assert!(!allowed(&session, "Bash", rm.clone()), "{by} {mode:?}");
        assert_eq!(
            session.list().skills.iter().filter(|s| s.active).count(),
            1,
            "{by} {mode:?}"
        );
    }
    // Regression (review): both in one load, the second was dropped without a word.
    let session = executor.session(SessionContext::default());
    let err = session
        .load(&names(&["personal:guard", "project:guard"]), LoadMode::Add)
        .unwrap_err();
    assert_eq!(err.code(), "SKILL_NAME_ACTIVE", "{err}");
    // Regression (review): with `project:guard` active, `skills_list` said the visible
    // `personal:guard` was.
    session
        .load(&names(&["project:guard"]), LoadMode::Add)
        .unwrap();
    let listed = session.list();
    let guard = listed.skills.iter().find(|s| s.name == "guard").unwrap();
    assert_eq!(guard.qualified_name, "personal:guard");
    assert!(!guard.active);
    // Changed by issue 37 (the runtime spec's skill switching): a model's replace ends the
    // restricting skill it loaded, as unloading it would, and the other skill of the name
    // stands alone; only a host pin keeps a restriction in force (the cases above).
    let session = executor.session(SessionContext::default());
    session.load(&names(&["guard"]), LoadMode::Add).unwrap();
    session
        .load(&names(&["project:guard"]), LoadMode::Replace)
        .unwrap();
    assert_eq!(session.active().len(), 1);
    assert!(allowed(&session, "Bash", rm));
}

// Regression (third attack): tool names were keyed by ASCII lowercase alone, so `Write `,
// a fullwidth `Ｗrite` or `Wr<zero-width space>ite` were unknown tools, allowed with no
// path protection when no skill restricts, and a host that trims or folds names ran Write.
#[test]
fn a_tool_name_that_is_not_plain_is_denied() {
    let env = Env::new();
    let skill = env.skill("notes", "", "Notes.\n");
    let session = env.session();
    let target = skill.join("SKILL.md");
    let input = json!({"file_path": target, "content": "x"});
    let long = "a".repeat(129);
    for tool in [
        "Write ",
        " Write",
        "Write\n",
        "\u{ff37}rite",
        "Wr\u{200b}ite",
        "Write\u{0}",
        "Wri\u{301}te",
        "",
        long.as_str(),
    ] {
        let d = session.check_tool(tool, &input);
        assert!(!d.allowed, "{tool:?}");
        assert!(
            d.reason.contains("not a plain name"),
            "{tool:?}: {}",
            d.reason
        );
        assert!(!session.decide(tool, None).allowed, "{tool:?}");
    }
    // Regression (review): the denial echoed the whole name, escaped, into the answer and
    // the audit event: 3.8 MB of combining marks made a 15 MB answer. Both show at most
    // its first 128 bytes.
    let huge = format!("a{}", "\u{301}".repeat(100_000));
    let d = session.check_tool(&huge, &input);
    assert!(!d.allowed);
    assert!(d.reason.len() < 1_000, "{}", d.reason.len());
    let event = env.sink.events().pop().unwrap();
    let shown = event.tool_name.unwrap_or_default();
    assert!(
        shown.len() <= 131 && shown.ends_with("..."),
        "{}",
        shown.len()
    );
    // Plain names are judged as before: a write into a skill folder is refused, other
    // tools pass when no skill restricts.
    assert!(!allowed(&session, "WRITE", input.clone()));
    for tool in [
        "Bash",
        "mcp__github__create_issue",
        "server:tool",
        "a.b-c",
        &long[1..],
    ] {
        assert!(allowed(&session, tool, json!({})), "{tool:?}");
    }
}

// Regression (second review): error messages and audit events echoed a model's input
// whole: 200 KB of combining marks as a tool or skill name came back as 800 KB (escaped)
// in the answer and a megabyte in the trail. Both are cut to `MESSAGE_MAX`.
#[test]
fn an_answer_or_audit_event_never_echoes_a_huge_input_whole() {
    let env = Env::new();
    env.skill("notes", "", "Notes.\n");
    let session = env.session();
    let huge = format!("x{}", "\u{301}".repeat(100_000));
    for line in [
        json!({"id": 1, "tool": huge, "input": {}}),
        json!({"id": 2, "tool": "skills_load", "input": {"names": [huge]}}),
        json!({"id": 3, "tool": "skills_unload", "input": {"names": [huge]}}),
        json!({"id": 4, "tool": "skills_read", "input": {"skill": huge, "path": "SKILL.md"}}),
    ] {
        let answer = protocol::respond_line(&session, &line.to_string());
        assert!(
            answer.len() < 2 * protocol::MESSAGE_MAX,
            "{}: {}",
            line["id"],
            answer.len()
        );
        // An unload of a name not active answers with a receipt that names it, cut
        // (issue 37); the others are errors.
        let ok = line["id"] == 3;
        assert_eq!(answer.contains("\"ok\":true"), ok, "{answer}");
    }
    // Regression (attack): a denial's reason quoted the whole command (300 KB came back).
    env.skill("guard", "allowed-tools: Read\n", "Only read.\n");
    let session = env.session();
    session.load(&names(&["guard"]), LoadMode::Add).unwrap();
    let command = "x".repeat(300_000);
    let d = session.check_tool("Bash", &json!({ "command": command }));
    assert!(!d.allowed);
    assert!(
        d.reason.len() < 2 * protocol::MESSAGE_MAX,
        "{}",
        d.reason.len()
    );
    assert!(session.decide("Bash", Some(&command)).reason.len() < 2 * protocol::MESSAGE_MAX);
    for event in env.sink.events() {
        let line = serde_json::to_string(&event).unwrap();
        assert!(line.len() < 8 * protocol::MESSAGE_MAX, "{}", line.len());
    }
}

// Regression (third attack): a name that found nothing suggested a skill the user alone
// invokes, which the model was not to know of; the host and a user's prompt still get it.
#[test]
fn a_suggestion_to_the_model_never_names_a_skill_the_user_alone_invokes() {
    let env = Env::new();
    env.skill(
        "deploy-prod",
        "disable-model-invocation: true\n",
        "Deploy.\n",
    );
    let session = env.session();
    let err = session
        .load(&names(&["deploy-prd"]), LoadMode::Add)
        .unwrap_err();
    assert_eq!(err.code(), "SKILL_NOT_FOUND", "{err}");
    assert!(!err.to_string().contains("deploy-prod"), "{err}");
    let err = session.host_activate(&names(&["deploy-prd"])).unwrap_err();
    assert!(
        err.to_string().contains("did you mean \"deploy-prod\""),
        "{err}"
    );
    let err = session.instructions_of("deploy-prd", "prompt").unwrap_err();
    assert!(
        err.to_string().contains("did you mean \"deploy-prod\""),
        "{err}"
    );
    // A skill the model may load is suggested to it.
    env.skill("deploy-test", "", "Deploy to test.\n");
    let session = env.session();
    let err = session
        .load(&names(&["deploy-tst"]), LoadMode::Add)
        .unwrap_err();
    assert!(
        err.to_string().contains("did you mean \"deploy-test\""),
        "{err}"
    );
}

// Regression: the model could not load a skill a user alone invokes by name, but could as
// a dependency of another skill, which then ran that skill's hooks.
#[test]
fn a_dependency_a_user_alone_invokes_is_not_activated_by_the_model() {
    let env = Env::new();
    env.skill("deploy", "disable-model-invocation: true\n", "Deploy.\n");
    env.skill(
        "helper",
        "composition:\n  dependencies:\n    - skillName: deploy\n",
        "Helps.\n",
    );
    let session = env.session();
    let err = session
        .load(&names(&["helper"]), LoadMode::Add)
        .unwrap_err();
    assert_eq!(err.code(), "SKILL_MODEL_INVOCATION_DISABLED", "{err}");
    assert!(err.to_string().contains("deploy"), "{err}");
    assert!(common::active(&session).is_empty());
    // On a user's behalf, the host may.
    session.host_activate(&names(&["helper"])).unwrap();
    assert_eq!(common::active(&session), ["deploy", "helper"]);
    // Regression (attack): an optional dependency a user alone invokes is absent to the
    // model, as an optional one it may not see is; it blocked the load, naming itself.
    env.skill(
        "notes",
        "composition:\n  dependencies:\n    - skillName: deploy\n      optional: true\n",
        "Notes.\n",
    );
    let model = env.session();
    model.load(&names(&["notes"]), LoadMode::Add).unwrap();
    assert_eq!(common::active(&model), ["notes"]);
    // Regression (review): with the host's `deploy` active, the model may load a skill that
    // needs it: nothing a user alone invokes is activated by the model.
    let session = env.session();
    session.host_activate(&names(&["deploy"])).unwrap();
    session.load(&names(&["helper"]), LoadMode::Add).unwrap();
    assert_eq!(common::active(&session), ["deploy", "helper"]);
    // Regression (review): judged on the version read at the load, not the index's
    // snapshot: a SKILL.md marked user-only since it was indexed is refused too.
    let env = Env::new();
    env.skill("fresh", "", "Fresh.\n");
    let session = env.session();
    env.skill("fresh", "disable-model-invocation: true\n", "Fresh.\n");
    let err = session.load(&names(&["fresh"]), LoadMode::Add).unwrap_err();
    assert_eq!(err.code(), "SKILL_MODEL_INVOCATION_DISABLED", "{err}");
    // Regression (attack review): an active skill loaded again in a version marked
    // user-only since was pinned by the model.
    env.skill("fresh", "", "Fresh.\n");
    session.reload();
    session.load(&names(&["fresh"]), LoadMode::Add).unwrap();
    env.skill(
        "fresh",
        "disable-model-invocation: true\n",
        "Fresh, again.\n",
    );
    session.reload();
    let err = session.load(&names(&["fresh"]), LoadMode::Add).unwrap_err();
    assert_eq!(err.code(), "SKILL_MODEL_INVOCATION_DISABLED", "{err}");
}

/// Regression (attack): a skill of another tenant took the name of a skill this session
/// may see, when it ranked higher (a higher layer, or a higher `priority` in the same one):
/// the session's own `deploy` left its listing, its search and its loads, and which names
/// were taken told it what the other tenant had. A skill it may not see takes no name from
/// one it may.
#[test]
fn a_hidden_skill_takes_no_name_from_a_visible_one() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |folder: &str, extra: &str, body: &str| {
        let dir = tmp.path().join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: deploy\ndescription: Deploys the service.\n{extra}---\n{body}\n"),
        )
        .unwrap();
    };
    let acme = "scope:\n  tenants:\n    - acme\n";
    write("personal/acme-deploy", acme, "Acme's deploy.");
    write("personal/deploy", "", "Personal deploy.");
    write(
        "personal/acme-deploy-2",
        &format!("priority: 10\n{acme}"),
        "Acme's other.",
    );
    write("project/deploy", "", "Project deploy.");
    let index = Arc::new(
        skills_index::SkillIndex::builder()
            .root(skills_model::Layer::Personal, tmp.path().join("personal"))
            .root(skills_model::Layer::Project, tmp.path().join("project"))
            .build()
            .unwrap(),
    );
    let executor = skills_executor::Executor::builder(index).build();
    let session = |tenant: &str| {
        executor.session(SessionContext::builder().id(tenant).tenant(tenant).build())
    };
    let body = |s: &skills_executor::Session, name: &str| {
        s.unload_all().unwrap();
        s.load(&names(&[name]), LoadMode::Add).unwrap();
        s.active()[0].body.trim().to_owned()
    };
    let globex = session("globex");
    let listed: Vec<String> = globex
        .visible()
        .iter()
        .map(|r| r.qualified_name())
        .collect();
    assert_eq!(listed, ["personal:deploy"]);
    assert_eq!(body(&globex, "deploy"), "Personal deploy.");
    assert_eq!(body(&globex, "personal:deploy"), "Personal deploy.");
    assert_eq!(body(&globex, "project:deploy"), "Project deploy.");
    let found = protocol::call(&globex, "skills_search", json!({"query": "deploy"})).unwrap();
    assert_eq!(found["total"], 1, "{found}");
    assert_eq!(found["results"][0]["layer"], "personal", "{found}");
    // Regression (review): a name that finds nothing suggested from the global winners,
    // so this session's own `deploy` was never suggested.
    let err = globex.load(&names(&["deplyo"]), LoadMode::Add).unwrap_err();
    assert!(err.to_string().contains("\"deploy\""), "{err}");
    // Acme's session gets Acme's, by precedence as before.
    let acme = session("acme");
    assert_eq!(body(&acme, "deploy"), "Acme's other.");
    let found = protocol::call(&acme, "skills_search", json!({"query": "deploy"})).unwrap();
    assert_eq!(found["total"], 1, "{found}");
}

/// Regression (attack): a second folder of the same layer holding an active skill's name,
/// once it ranked first (a higher `priority`), was loaded as a new version of the active
/// skill: it took its place, its host pin and its hooks' turn, and dropped its restriction
/// (`allowed-tools: Read`), so `rm -rf` was allowed. It is another skill: loading it while
/// the first is active is refused, as for a skill of the name from another layer.
#[test]
fn another_folder_of_the_same_name_never_replaces_an_active_skill() {
    for host in [false, true] {
        let env = Env::new();
        env.file(
            "deploy-a",
            "SKILL.md",
            "---\nname: deploy\ndescription: Restricted.\nallowed-tools: Read\n---\nRestricted.\n",
        );
        let session = env.session();
        if host {
            session.host_activate(&names(&["deploy"])).unwrap();
        } else {
            session.load(&names(&["deploy"]), LoadMode::Add).unwrap();
        }
        env.file(
            "deploy-b",
            "SKILL.md",
            "---\nname: deploy\ndescription: Unrestricted.\npriority: 5\n---\nUnrestricted.\n",
        );
        session.reload();
        // Refused as another skill of the name; in replace mode too when the host pinned
        // the first. (Changed by issue 37: a model's replace of the skill it loaded is the
        // runtime spec's switch, an unload and a load, and the test below shows it.)
        let modes: &[LoadMode] = if host {
            &[LoadMode::Add, LoadMode::Replace]
        } else {
            &[LoadMode::Add]
        };
        for &mode in modes {
            let err = session.load(&names(&["deploy"]), mode).unwrap_err();
            assert_eq!(
                err.code(),
                "SKILL_NAME_ACTIVE",
                "host {host}, {mode:?}: {err}"
            );
        }
        assert_eq!(session.active()[0].body.trim(), "Restricted.");
        assert!(!allowed(
            &session,
            "Bash",
            json!({"command": "rm -rf /tmp/x"})
        ));
    }
}

/// Regression (review): a restricting skill's exemption for its own hooks and scripts went
/// by name, so another folder's skill of that name (ranked first since) ran its pre hook
/// under the restriction when the model loaded it in its place. Its own is itself only.
#[test]
fn a_skill_of_the_same_name_is_not_a_restricting_skill_s_own() {
    let env = Env::new();
    env.file(
        "deploy-a",
        "SKILL.md",
        "---\nname: deploy\ndescription: Restricted.\nallowed-tools: Read skills_load\n---\nRestricted.\n",
    );
    let session = env.session();
    session.load(&names(&["deploy"]), LoadMode::Add).unwrap();
    env.file(
        "deploy-b",
        "SKILL.md",
        "---\nname: deploy\ndescription: Hooked.\npriority: 5\nhooks:\n  pre:\n    - scripts/pre.sh\n---\nHooked.\n",
    );
    env.file(
        "deploy-b",
        "scripts/pre.sh",
        "#!/bin/sh\ntouch \"$0.ran\"\n",
    );
    session.reload();
    // Changed by issue 37: in replace mode the restricting skill ends first (the runtime
    // spec's switch) and judges nothing; beside it (add mode) it judges the hook.
    let err = session
        .load(&names(&["deploy"]), LoadMode::Add)
        .unwrap_err();
    assert_eq!(err.code(), "SKILL_TOOL_NOT_ALLOWED", "{err}");
    assert!(!env.root.join("deploy-b/scripts/pre.sh.ran").exists());
    assert_eq!(session.active()[0].body.trim(), "Restricted.");
}

// Issue 37: the runtime spec's skill switching. A model inside a skill that restricts
// tools (and does not list `skills_load`) switches with a replace-mode load: the loaded set
// becomes the new skill, audited as an unload then a load, with the post hook of the skill
// that ends; a skill the host pinned stays, and the receipt says so.
#[test]
fn a_replace_switches_skills_under_a_restriction_and_keeps_the_host_s_pins() {
    let env = Env::new();
    env.skill(
        "status",
        "allowed-tools: Read Bash(git status:*)\nhooks:\n  post: [scripts/post.sh]\n",
        "Status.\n",
    );
    env.file("status", "scripts/post.sh", "#!/bin/sh\ntouch \"$0.ran\"\n");
    env.skill("review", "", "Review.\n");
    env.skill("house", "", "House rules.\n");
    let session = env.session();
    session.host_activate(&names(&["house"])).unwrap();
    session.load(&names(&["status"]), LoadMode::Add).unwrap();
    let receipt = session
        .load(&names(&["review"]), LoadMode::Replace)
        .unwrap();
    let stack: Vec<&str> = receipt
        .active_skills
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    assert_eq!(stack, ["house", "review"]);
    assert_eq!(receipt.kept_pinned, ["house"]);
    assert!(env.root.join("status/scripts/post.sh.ran").exists());
    assert_eq!(env.events(AuditKind::SkillDeactivated).len(), 1);
    // The pinned skill cannot be unloaded by the model.
    let err = session.unload(&names(&["house"])).unwrap_err();
    assert_eq!(err.code(), "SKILL_PINNED_BY_HOST", "{err}");
}

/// Regression (review): a dependency listed twice, once optional and once required, was
/// read by its first entry alone once repeats were resolved once: a missing required
/// dependency let the load through. Repeats are required if any entry is.
#[test]
fn a_dependency_listed_twice_is_required_if_either_entry_says_so() {
    let env = Env::new();
    env.skill(
        "app",
        "composition:\n  dependencies:\n    - skillName: helper\n      optional: true\n    - skillName: helper\n",
        "App.\n",
    );
    let session = env.session();
    let err = session.load(&names(&["app"]), LoadMode::Add).unwrap_err();
    assert_eq!(err.code(), "SKILL_DEPENDENCY_MISSING", "{err}");
    env.skill("helper", "disable-model-invocation: true\n", "Helper.\n");
    session.reload();
    let err = session.load(&names(&["app"]), LoadMode::Add).unwrap_err();
    assert_eq!(err.code(), "SKILL_MODEL_INVOCATION_DISABLED", "{err}");
    assert!(common::active(&session).is_empty());
}

/// Regression: a root that does not exist yet, named through a linked folder (a new user's
/// `~/.skills` under a linked home), was protected only as written: the model's write tools
/// could plant a skill through its real path, which a reload then indexed in the trusted
/// layer and whose script ran.
#[test]
fn a_root_not_made_yet_is_read_only_through_its_real_path() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let real_home = tmp.path().join("real-home");
    std::fs::create_dir_all(&real_home).expect("home");
    let home = tmp.path().join("home");
    std::os::unix::fs::symlink(&real_home, &home).expect("link");
    let index = skills_index::SkillIndex::builder()
        .root(skills_model::Layer::Personal, home.join(".skills"))
        .build()
        .expect("index");
    let executor = skills_executor::Executor::builder(Arc::new(index))
        .policy(Policy::default())
        .build();
    let session = executor.session(SessionContext::builder().id("m").build());
    let planted = real_home.join(".skills/planted");
    for path in [planted.join("SKILL.md"), planted.join("scripts/run.sh")] {
        for tool in ["Write", "Edit", "MultiEdit"] {
            let decision = session.check_tool(tool, &json!({ "file_path": path }));
            assert!(!decision.allowed, "{tool} {} allowed", path.display());
        }
    }
    // Spelled with `..` through the link, too.
    let dotted = home.join("x/../.skills/planted/SKILL.md");
    assert!(
        !session
            .check_tool("Write", &json!({ "file_path": dotted }))
            .allowed
    );
}
