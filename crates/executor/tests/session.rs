//! The session's skill stack through the library API: `skills_load` (replace and add, the
//! cap), `skills_unload` (by name wherever a skill is, `all`), the task guard (drop, panic),
//! `scope`, the load receipt, not-found suggestions, `composition`, `tool-binding`, hooks
//! and trust, and the stack surviving failed and panicking calls.
//!
//! Every test writes its own skills into a temporary directory and builds a real index and
//! executor over them. Tests marked `// Regression:` failed before the fix they name.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use common::{abc, active, names, receipt_names, Env};
use serde_json::{json, Value};
use skills_executor::{
    AuditKind, Delivery, ExecError, Executor, LoadMode, Policy, Session, SessionContext,
};
use skills_model::Layer;
use skills_protocol as protocol;

fn load(session: &Session, skills: &[&str], mode: LoadMode) -> Result<Value, ExecError> {
    session
        .load(&names(skills), mode)
        .map(|r| serde_json::to_value(r).unwrap())
}

#[test]
fn load_replaces_by_default() {
    let env = abc();
    let session = env.session();
    protocol::call(
        &session,
        "skills_load",
        json!({"skills": ["alpha", "beta"]}),
    )
    .unwrap();
    assert_eq!(active(&session), ["alpha", "beta"]);
    let receipt = protocol::call(&session, "skills_load", json!({"skills": ["gamma"]})).unwrap();
    assert_eq!(active(&session), ["gamma"]);
    assert_eq!(receipt_names(&receipt), ["gamma"]);
    // Both replaced skills were deactivated, audited.
    let deactivated: Vec<String> = env
        .events(AuditKind::SkillDeactivated)
        .into_iter()
        .filter_map(|e| e.skill_name)
        .collect();
    assert_eq!(deactivated.len(), 2);
    assert!(deactivated.contains(&"alpha".to_owned()));
    assert!(deactivated.contains(&"beta".to_owned()));
}

#[test]
fn load_add_pushes_deduplicates_and_keeps_order() {
    let env = abc();
    let session = env.session();
    load(&session, &["alpha"], LoadMode::Add).unwrap();
    let receipt = protocol::call(
        &session,
        "skills_load",
        json!({"skills": ["beta", "alpha", "gamma", "beta"], "mode": "add"}),
    )
    .unwrap();
    assert_eq!(active(&session), ["alpha", "beta", "gamma"]);
    assert_eq!(receipt_names(&receipt), ["alpha", "beta", "gamma"]);
    // Loading an active skill again changes nothing and activates nothing.
    load(&session, &["beta"], LoadMode::Add).unwrap();
    assert_eq!(active(&session), ["alpha", "beta", "gamma"]);
    assert_eq!(env.events(AuditKind::SkillActivated).len(), 3);
}

// Regression: a replace that named a skill already on the stack pushed it a second time
// (`[alpha]` replaced by `[alpha, beta]` became `[alpha, alpha, beta]`) and audited a second
// activation for it.
#[test]
fn load_replace_keeps_one_copy_of_a_skill_already_active() {
    let env = abc();
    let session = env.session();
    load(&session, &["alpha", "beta"], LoadMode::Replace).unwrap();
    let receipt = load(&session, &["beta", "gamma"], LoadMode::Replace).unwrap();
    assert_eq!(active(&session), ["beta", "gamma"]);
    assert_eq!(receipt_names(&receipt), ["beta", "gamma"]);
    let activated: Vec<String> = env
        .events(AuditKind::SkillActivated)
        .into_iter()
        .filter_map(|e| e.skill_name)
        .collect();
    assert_eq!(activated, ["alpha", "beta", "gamma"]);
    let deactivated: Vec<String> = env
        .events(AuditKind::SkillDeactivated)
        .into_iter()
        .filter_map(|e| e.skill_name)
        .collect();
    assert_eq!(deactivated, ["alpha"]);
    // Unloading it once leaves it inactive.
    session.unload(&names(&["gamma", "beta"])).unwrap();
    assert!(active(&session).is_empty());
}

// Changed by issue 37 (the runtime spec's unload: "remove those skills if present"): this
// test pinned that a named unload must name the top of the stack (`SKILL_UNLOAD_ORDER`)
// and that a name not active is an error; both rules are retired.
#[test]
fn unload_removes_the_named_skills_wherever_they_are() {
    let env = abc();
    let session = env.session();
    load(&session, &["alpha", "beta", "gamma"], LoadMode::Add).unwrap();

    // `beta` is under `gamma`: it goes, and the rest keep their order.
    let out = protocol::call(&session, "skills_unload", json!({"skills": ["beta"]})).unwrap();
    assert_eq!(out["unloaded"], json!(["beta"]));
    assert_eq!(out["active_skills"], json!(["alpha", "gamma"]));
    assert!(out.get("not_active").is_none(), "{out}");
    assert_eq!(active(&session), ["alpha", "gamma"]);

    // A name not active is reported, not refused; the others go.
    let out = protocol::call(
        &session,
        "skills_unload",
        json!({"skills": ["nobody", "alpha"]}),
    )
    .unwrap();
    assert_eq!(out["unloaded"], json!(["alpha"]));
    assert_eq!(out["not_active"], json!(["nobody"]));
    assert_eq!(active(&session), ["gamma"]);
    let receipt = session.unload(&names(&["beta"])).unwrap();
    assert!(receipt.unloaded.is_empty());
    assert_eq!(receipt.not_active, ["beta"]);
    assert_eq!(env.events(AuditKind::SkillDeactivated).len(), 2);
    // Nothing named.
    let err = protocol::call(&session, "skills_unload", json!({})).unwrap_err();
    assert_eq!(err.code(), "SKILL_BAD_INPUT");
}

// Regression (issue 37): an unload below the top must not strand a skill that stays
// without a composition dependency it requires; the refusal names the skill that needs it.
#[test]
fn an_unload_that_would_strand_a_required_dependency_is_refused() {
    let env = Env::new();
    env.skill("base", "", "Base.\n");
    env.skill("extra", "", "Extra.\n");
    env.skill(
        "report",
        "composition:\n  dependencies:\n    - skillName: base\n    - skillName: extra\n      optional: true\n",
        "Report.\n",
    );
    let session = env.session();
    load(&session, &["report"], LoadMode::Add).unwrap();
    assert_eq!(active(&session), ["base", "extra", "report"]);
    let err = session.unload(&names(&["base"])).unwrap_err();
    assert_eq!(err.code(), "SKILL_REQUIRED_BY_ACTIVE", "{err}");
    assert!(
        err.to_string().contains("\"report\" requires \"base\""),
        "{err}"
    );
    assert_eq!(active(&session), ["base", "extra", "report"]);
    // An optional dependency may go; with the skill that needs it, a required one too.
    session.unload(&names(&["extra"])).unwrap();
    session.unload(&names(&["base", "report"])).unwrap();
    assert!(active(&session).is_empty());
}

#[test]
fn unload_all_clears_the_stack() {
    let env = abc();
    let session = env.session();
    load(&session, &["alpha", "beta"], LoadMode::Add).unwrap();
    let out = protocol::call(&session, "skills_unload", json!({"all": true})).unwrap();
    assert_eq!(out["unloaded"], json!(["beta", "alpha"]));
    assert!(active(&session).is_empty());
    // Clearing an empty stack is fine.
    protocol::call(&session, "skills_unload", json!({"all": true})).unwrap();
    assert_eq!(env.events(AuditKind::SkillDeactivated).len(), 2);
}

#[test]
fn loading_past_the_cap_is_refused_and_says_to_load_fewer() {
    let env = abc();
    let executor = env.executor(Policy::builder().max_active(2).build());
    let session = executor.session(SessionContext::default());
    let err = load(&session, &["alpha", "beta", "gamma"], LoadMode::Replace).unwrap_err();
    assert_eq!(err.code(), "SKILL_TOO_MANY_ACTIVE");
    assert!(err.to_string().contains("load fewer"), "{err}");
    assert!(active(&session).is_empty());

    load(&session, &["alpha", "beta"], LoadMode::Add).unwrap();
    let err = load(&session, &["gamma"], LoadMode::Add).unwrap_err();
    assert_eq!(err.code(), "SKILL_TOO_MANY_ACTIVE");
    assert_eq!(active(&session), ["alpha", "beta"]);
    // A replace within the cap is fine.
    load(&session, &["gamma"], LoadMode::Replace).unwrap();
    assert_eq!(active(&session), ["gamma"]);
}

#[test]
fn the_task_guard_deactivates_everything_when_dropped() {
    let env = abc();
    let session = env.session();
    {
        let _task = session.task();
        load(&session, &["alpha", "beta"], LoadMode::Add).unwrap();
        assert_eq!(active(&session), ["alpha", "beta"]);
    }
    assert!(active(&session).is_empty());
    let deactivated: Vec<String> = env
        .events(AuditKind::SkillDeactivated)
        .into_iter()
        .filter_map(|e| e.skill_name)
        .collect();
    assert_eq!(deactivated, ["beta", "alpha"]);
}

#[test]
fn the_task_guard_deactivates_everything_on_panic() {
    let env = abc();
    let session = env.session();
    let result = catch_unwind(AssertUnwindSafe(|| {
        let _task = session.task();
        load(&session, &["alpha", "gamma"], LoadMode::Add).unwrap();
        panic!("the host's task failed");
    }));
    assert!(result.is_err());
    assert!(active(&session).is_empty());
    let events = env.events(AuditKind::SkillDeactivated);
    assert_eq!(events.len(), 2);
    assert!(events.iter().all(|e| e.session_id == "test-session"));
}

/// Skills scoped to an agent, a tenant and an environment, and one for everyone.
fn scoped() -> Env {
    let env = Env::new();
    env.skill("everyone", "", "For everyone.\n");
    env.skill(
        "review-only",
        "scope:\n  agents: [reviewer]\n",
        "Only reviewers.\n",
    );
    env.skill(
        "acme-only",
        "scope:\n  tenants: [acme]\n",
        "Only for acme.\n",
    );
    env.skill(
        "prod-only",
        "scope:\n  environments: [production]\n",
        "Only in production.\n",
    );
    env
}

fn listed(session: &Session) -> Vec<String> {
    let out = protocol::call(session, "skills_list", json!({})).unwrap();
    out["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn scope_hides_a_skill_from_sessions_that_do_not_name_it() {
    let env = scoped();
    let executor = env.executor(Policy::default());
    let plain = executor.session(SessionContext::default());
    assert_eq!(listed(&plain), ["everyone"]);
    let instructions = plain.instructions(None).instructions;
    assert!(instructions.contains("everyone"));
    for hidden in ["review-only", "acme-only", "prod-only"] {
        assert!(!instructions.contains(hidden), "{hidden} in {instructions}");
        let err = load(&plain, &[hidden], LoadMode::Add).unwrap_err();
        assert_eq!(err.code(), "SKILL_NOT_FOUND", "{hidden}");
        let err = load(&plain, &[&format!("personal:{hidden}")], LoadMode::Add).unwrap_err();
        assert_eq!(err.code(), "SKILL_NOT_FOUND", "{hidden}");
        assert!(
            !protocol::tool_definitions(&plain)
                .iter()
                .any(|d| d.description.contains(hidden)),
            "{hidden} in the tool definitions"
        );
    }
    assert!(active(&plain).is_empty());

    // A session naming the agent, tenant and environment sees them all.
    let named = executor.session(
        SessionContext::builder()
            .agent("reviewer")
            .tenant("acme")
            .environment("production")
            .build(),
    );
    assert_eq!(
        listed(&named),
        ["acme-only", "everyone", "prod-only", "review-only"]
    );
    load(
        &named,
        &["review-only", "acme-only", "prod-only"],
        LoadMode::Add,
    )
    .unwrap();
    let instructions = named.instructions(None).instructions;
    assert!(instructions.contains("review-only"));

    // Other values do not match.
    let other = executor.session(
        SessionContext::builder()
            .agent("writer")
            .tenant("globex")
            .environment("staging")
            .build(),
    );
    assert_eq!(listed(&other), ["everyone"]);
}

#[test]
fn the_receipt_carries_location_digest_properties_body_and_base_path() {
    let env = Env::new();
    let dir = env.skill(
        "pdf-tools",
        "allowed-tools: Bash(pdftotext:*) Read\nmodel: claude-opus-4\ncontext: fork\nagent: Explore\nlicense: MIT\n",
        "# PDF tools\n\nExtract text with pdftotext.\n",
    );
    let session = env.session();
    let receipt =
        protocol::call(&session, "skills_load", json!({"skills": ["pdf-tools"]})).unwrap();
    let entries = receipt["active_skills"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    let entry = &entries[0];
    assert_eq!(entry["name"], "pdf-tools");
    assert_eq!(
        entry["location"].as_str().unwrap(),
        dir.join("SKILL.md").to_str().unwrap()
    );
    assert_eq!(entry["root_dir"].as_str().unwrap(), dir.to_str().unwrap());
    let digest = entry["digest"].as_str().unwrap();
    let hex = digest.strip_prefix("sha256:").expect("sha256: prefix");
    assert_eq!(hex.len(), 64);
    assert!(hex.chars().all(|c| c.is_ascii_hexdigit()));
    let properties = entry["properties"].as_object().unwrap();
    assert_eq!(properties["model"], "claude-opus-4");
    assert_eq!(properties["context"], "fork");
    assert_eq!(properties["agent"], "Explore");
    assert_eq!(properties["license"], "MIT");
    assert!(properties.contains_key("description"));
    // Delivered in the tool result (the default): the body and where relative paths start.
    assert_eq!(
        entry["body"],
        "# PDF tools\n\nExtract text with pdftotext.\n"
    );
    assert_eq!(entry["base_path"].as_str().unwrap(), dir.to_str().unwrap());
}

// Issue 37: the receipt's loaded entries carry the agentskills.io wrapped form, and the
// `skill` tool returns it as its content.
#[test]
fn the_receipt_and_the_skill_tool_carry_the_wrapped_skill_content() {
    let env = Env::new();
    let dir = env.skill("pdf-tools", "", "# PDF tools\n\nRun scripts/extract.py.\n");
    env.file("pdf-tools", "scripts/extract.py", "print(1)\n");
    env.file("pdf-tools", "references/spec.md", "Spec.\n");
    env.skill("notes", "", "Notes.\n");
    let session = env.session();
    let wrapped = format!(
        "<skill_content name=\"pdf-tools\">\n# PDF tools\n\nRun scripts/extract.py.\n\nSkill directory: {}\nRelative paths in this skill are relative to the skill directory.\n\n<skill_resources>\n  <file>references/spec.md</file>\n  <file>scripts/extract.py</file>\n</skill_resources>\n</skill_content>\n",
        dir.display()
    );
    let receipt = load(&session, &["pdf-tools"], LoadMode::Add).unwrap();
    assert_eq!(receipt["active_skills"][0]["skill_content"], wrapped);
    // Only the skills this call activated carry it.
    let receipt = load(&session, &["notes"], LoadMode::Add).unwrap();
    assert!(receipt["active_skills"][0].get("skill_content").is_none());
    assert!(receipt["active_skills"][1]["skill_content"]
        .as_str()
        .unwrap()
        .starts_with("<skill_content name=\"notes\">\nNotes.\n"));
    let out = protocol::call(&session, "skill", json!({"name": "pdf-tools"})).unwrap();
    assert_eq!(out["content"], wrapped);
    // Delivered at top level, the receipt carries no instructions at all.
    let executor = env.executor(Policy::builder().delivery(Delivery::TopLevel).build());
    let top = executor.session(SessionContext::default());
    let receipt = load(&top, &["pdf-tools"], LoadMode::Add).unwrap();
    assert!(receipt["active_skills"][0].get("skill_content").is_none());
}

#[test]
fn top_level_delivery_leaves_the_body_out_of_the_receipt_and_puts_it_in_instructions() {
    let env = Env::new();
    env.skill("notes", "", "Write notes in the margin, always.\n");
    let executor = env.executor(Policy::builder().delivery(Delivery::TopLevel).build());
    let session = executor.session(SessionContext::default());
    let before = session.instructions(None).instructions;
    assert!(!before.contains("Write notes in the margin"));
    let receipt = load(&session, &["notes"], LoadMode::Add).unwrap();
    let entry = &receipt["active_skills"][0];
    assert!(entry.get("body").is_none(), "{entry}");
    assert!(entry.get("base_path").is_none(), "{entry}");
    assert!(entry["digest"].as_str().unwrap().starts_with("sha256:"));
    assert!(session
        .instructions(None)
        .instructions
        .contains("Write notes in the margin"));
}

#[test]
fn an_unknown_name_gets_a_suggestion_by_edit_distance() {
    let env = scoped();
    env.skill("pdf-tools", "", "PDF.\n");
    let session = env.session();
    let err = load(&session, &["pdf-tool"], LoadMode::Add).unwrap_err();
    assert_eq!(err.code(), "SKILL_NOT_FOUND");
    assert!(
        err.to_string().contains("did you mean \"pdf-tools\""),
        "{err}"
    );
    // Nothing close: no suggestion.
    let err = load(&session, &["kubernetes-deploy"], LoadMode::Add).unwrap_err();
    assert!(!err.to_string().contains("did you mean"), "{err}");
    // A skill hidden by scope is never suggested.
    let err = load(&session, &["review-onl"], LoadMode::Add).unwrap_err();
    assert!(!err.to_string().contains("review-only"), "{err}");
}

#[test]
fn composition_loads_dependencies_first_and_refuses_conflicts() {
    let env = Env::new();
    env.skill("base-style", "", "Base style.\n");
    env.skill("extras", "", "Extras.\n");
    env.skill(
        "report",
        "composition:\n  dependencies:\n    - skillName: base-style\n      reason: the house style\n    - skillName: extras\n      optional: true\n    - skillName: not-installed\n      optional: true\n",
        "Reports.\n",
    );
    env.skill(
        "broken",
        "composition:\n  dependencies:\n    - skillName: not-installed\n",
        "Broken.\n",
    );
    env.skill(
        "freeform",
        "composition:\n  conflicts: [base-style]\n",
        "No style.\n",
    );
    let session = env.session();

    let receipt = load(&session, &["report"], LoadMode::Replace).unwrap();
    assert_eq!(active(&session), ["base-style", "extras", "report"]);
    assert_eq!(receipt_names(&receipt), ["base-style", "extras", "report"]);

    // A conflict with an active skill, in either direction.
    let err = load(&session, &["freeform"], LoadMode::Add).unwrap_err();
    assert_eq!(err.code(), "SKILL_CONFLICT");
    assert!(err.to_string().contains("base-style"), "{err}");
    assert_eq!(active(&session), ["base-style", "extras", "report"]);
    // Co-loaded conflicting skills.
    let err = load(&session, &["base-style", "freeform"], LoadMode::Replace).unwrap_err();
    assert_eq!(err.code(), "SKILL_CONFLICT");
    assert_eq!(active(&session), ["base-style", "extras", "report"]);
    // Replacing the stack removes the conflict.
    load(&session, &["freeform"], LoadMode::Replace).unwrap();
    assert_eq!(active(&session), ["freeform"]);

    // A required dependency that is missing.
    let err = load(&session, &["broken"], LoadMode::Add).unwrap_err();
    assert_eq!(err.code(), "SKILL_DEPENDENCY_MISSING");
    assert!(err.to_string().contains("not-installed"), "{err}");
    assert_eq!(active(&session), ["freeform"]);
}

#[test]
fn tool_binding_is_checked_against_the_host_tools() {
    let env = Env::new();
    env.skill(
        "containers",
        "tool-binding:\n  dependencies:\n    - tool: docker\n      purpose: build images\n",
        "Containers.\n",
    );
    env.skill(
        "json-helper",
        "tool-binding:\n  dependencies:\n    - tool: Bash\n    - tool: jq\n      required: false\n",
        "JSON.\n",
    );
    // A required tool the host does not offer hides the skill (issue 42): its load answers
    // as for a name that does not exist, and names no tool.
    let executor = env.executor(Policy::builder().host_tools(["bash", "Read"]).build());
    let session = executor.session(SessionContext::default());
    let err = load(&session, &["containers"], LoadMode::Add).unwrap_err();
    assert_eq!(err.code(), "SKILL_NOT_FOUND");
    assert!(!err.to_string().contains("docker"), "{err}");
    assert!(active(&session).is_empty());
    // Offered anyway, its load is refused naming the tool.
    let offered = env.executor(
        Policy::builder()
            .host_tools(["bash", "Read"])
            .unavailable(skills_executor::Unavailable::Offered)
            .build(),
    );
    let err = load(
        &offered.session(SessionContext::default()),
        &["containers"],
        LoadMode::Add,
    )
    .unwrap_err();
    assert_eq!(err.code(), "SKILL_TOOL_BINDING_MISSING");
    assert!(err.to_string().contains("docker"), "{err}");

    let receipt = load(&session, &["json-helper"], LoadMode::Add).unwrap();
    let warnings = receipt["warnings"].as_array().expect("warnings");
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].as_str().unwrap().contains("jq"));

    // A host that declares no tools checks nothing.
    let unchecked = env.session();
    let receipt = load(&unchecked, &["containers", "json-helper"], LoadMode::Add).unwrap();
    assert!(receipt.get("warnings").is_none(), "{receipt}");
}

/// A skill whose hooks append to `hook.log` in its folder.
fn hooked(env: &Env) -> std::path::PathBuf {
    let dir = env.skill(
        "hooked",
        "hooks:\n  pre: [scripts/pre.sh]\n  post: [scripts/post.sh]\n",
        "Hooked.\n",
    );
    env.file("hooked", "scripts/pre.sh", "echo pre >> hook.log\n");
    env.file("hooked", "scripts/post.sh", "echo post >> hook.log\n");
    env.skill("plain", "", "Plain.\n");
    dir
}

fn hook_log(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join("hook.log")).unwrap_or_default()
}

#[test]
fn hooks_run_on_activation_and_deactivation_and_are_audited() {
    let env = Env::new();
    let dir = hooked(&env);
    let session = env.session();
    let receipt = load(&session, &["hooked"], LoadMode::Add).unwrap();
    assert_eq!(hook_log(&dir), "pre\n");
    let hooks = receipt["hooks"].as_array().expect("hooks in the receipt");
    assert_eq!(hooks[0]["stage"], "pre");
    assert_eq!(hooks[0]["exit_code"], 0);

    session.unload(&names(&["hooked"])).unwrap();
    assert_eq!(hook_log(&dir), "pre\npost\n");

    // A replace that drops it runs `post`; the task guard too.
    load(&session, &["hooked"], LoadMode::Add).unwrap();
    load(&session, &["plain"], LoadMode::Replace).unwrap();
    assert_eq!(hook_log(&dir), "pre\npost\npre\npost\n");
    {
        let _task = session.task();
        load(&session, &["hooked"], LoadMode::Add).unwrap();
    }
    assert_eq!(hook_log(&dir), "pre\npost\npre\npost\npre\npost\n");

    let events = env.events(AuditKind::HookExecuted);
    assert_eq!(events.len(), 6);
    assert!(events
        .iter()
        .all(|e| e.skill_name.as_deref() == Some("hooked") && e.error.is_none()));
    assert_eq!(events[0].path.as_deref(), Some("scripts/pre.sh"));
    assert_eq!(events[1].path.as_deref(), Some("scripts/post.sh"));
}

// Regression: under a skill that restricts tools (and refuses another skill's scripts),
// loading a skill with mode "add" ran that skill's pre hook, a script, unasked.
#[test]
fn a_restricting_skill_governs_the_hooks_a_load_would_run() {
    let env = Env::new();
    let dir = hooked(&env);
    env.skill("guard", "allowed-tools: Read\n", "Only read.\n");
    env.skill(
        "lenient",
        "allowed-tools: Read skills_run_script(hooked:scripts/*)\n",
        "Reads, and lets hooked start.\n",
    );
    let session = env.session();
    load(&session, &["guard"], LoadMode::Add).unwrap();
    let err = load(&session, &["hooked"], LoadMode::Add).unwrap_err();
    assert_eq!(err.code(), "SKILL_TOOL_NOT_ALLOWED", "{err}");
    assert!(err.to_string().contains("hooked:scripts/pre.sh"), "{err}");
    assert_eq!(hook_log(&dir), "");
    assert_eq!(active(&session), ["guard"]);
    // A skill that allows it lets the load run its hook.
    let session = env.session();
    load(&session, &["lenient"], LoadMode::Add).unwrap();
    load(&session, &["hooked"], LoadMode::Add).unwrap();
    assert_eq!(hook_log(&dir), "pre\n");
    // The host activates on a user's behalf: its loads need no skill's permission.
    let session = env.session();
    load(&session, &["guard"], LoadMode::Add).unwrap();
    session.host_activate(&names(&["hooked"])).unwrap();
    assert_eq!(hook_log(&dir), "pre\npre\n");
    // Regression (review): a skill already active runs no hook again, so loading it again
    // under a restriction pinned since needs no permission.
    let session = env.session();
    load(&session, &["hooked"], LoadMode::Add).unwrap();
    session.host_activate(&names(&["guard"])).unwrap();
    load(&session, &["hooked"], LoadMode::Add).unwrap();
    assert_eq!(hook_log(&dir), "pre\npre\npre\n");
}

// Regression (review): the hooks a load would run were judged on the index's snapshot, and
// those of the file read at the load ran: hooks written into a SKILL.md after it was
// indexed ran under a skill that refuses them. Post hooks were not judged at all.
#[test]
fn the_hooks_judged_are_the_hooks_of_the_version_loaded() {
    let env = Env::new();
    env.skill("guard", "allowed-tools: Read\n", "Only read.\n");
    let later = env.skill("later", "", "Later.\n");
    env.file("later", "scripts/pre.sh", "echo pre >> hook.log\n");
    env.file("later", "scripts/post.sh", "echo post >> hook.log\n");
    let session = env.session();
    load(&session, &["guard"], LoadMode::Add).unwrap();
    for hooks in ["pre: [scripts/pre.sh]", "post: [scripts/post.sh]"] {
        env.skill("later", &format!("hooks:\n  {hooks}\n"), "Later.\n");
        let err = load(&session, &["later"], LoadMode::Add).unwrap_err();
        assert_eq!(err.code(), "SKILL_TOOL_NOT_ALLOWED", "{hooks}: {err}");
    }
    assert_eq!(hook_log(&later), "");
    assert_eq!(active(&session), ["guard"]);
    // Regression (attack review): a version of an active skill loaded again was not judged,
    // so a post hook written into it since ran at the end under a host-pinned restriction.
    let session = env.session();
    env.skill("later", "", "Later.\n");
    session.reload();
    load(&session, &["later"], LoadMode::Add).unwrap();
    session.host_activate(&names(&["guard"])).unwrap();
    env.skill("later", "hooks:\n  post: [scripts/post.sh]\n", "Later.\n");
    session.reload();
    let err = load(&session, &["later"], LoadMode::Add).unwrap_err();
    assert_eq!(err.code(), "SKILL_TOOL_NOT_ALLOWED", "{err}");
    drop(session.task());
    assert_eq!(hook_log(&later), "");
}

// Regression (third attack): a post hook was judged only when its skill loaded, so a
// restriction the host pinned after the model's load did not stop it at the skill's end,
// whether the model unloaded it or the task ended. Only the host's pins judge it then.
#[test]
fn a_restriction_pinned_after_a_load_governs_its_post_hooks() {
    let env = Env::new();
    let dir = hooked(&env);
    env.skill("guard", "allowed-tools: Read\n", "Only read.\n");
    env.skill(
        "lenient",
        "allowed-tools: Read skills_run_script(hooked:scripts/post.sh)\n",
        "Reads, and lets hooked end.\n",
    );
    // (The model cannot unload it alone: the host's skill is above it on the stack.)
    for end in ["unload all", "task"] {
        let session = env.session();
        load(&session, &["hooked"], LoadMode::Add).unwrap();
        session.host_activate(&names(&["guard"])).unwrap();
        let hooks = match end {
            "unload all" => session.unload_all().unwrap().hooks,
            _ => session.end_task().unwrap().hooks,
        };
        let post = hooks.iter().find(|h| h.hook == "scripts/post.sh").unwrap();
        let error = post.error.as_deref().unwrap_or_default();
        assert!(error.contains("hooked:scripts/post.sh"), "{end}: {error}");
        assert!(error.contains("\"guard\""), "{end}: {error}");
    }
    assert_eq!(hook_log(&dir), "pre\npre\n");
    // Regression (review): a restriction the model loads above it does not judge it, or
    // the model could skip any skill's cleanup, however it ends.
    for end in ["unload all", "task", "one by one"] {
        let session = env.session();
        load(&session, &["hooked"], LoadMode::Add).unwrap();
        load(&session, &["guard"], LoadMode::Add).unwrap();
        let hooks = match end {
            "unload all" => session.unload_all().unwrap().hooks,
            "task" => session.end_task().unwrap().hooks,
            _ => {
                session.unload(&names(&["guard"])).unwrap();
                session.unload(&names(&["hooked"])).unwrap().hooks
            }
        };
        assert!(hooks.iter().all(|h| h.error.is_none()), "{end}: {hooks:?}");
    }
    assert_eq!(
        hook_log(&dir),
        "pre\npre\npre\npost\npre\npost\npre\npost\n"
    );
    // A restriction that allows it lets it run; a skill the host activated is the host's,
    // and its hooks need no skill's permission, as at its load.
    let session = env.session();
    load(&session, &["hooked"], LoadMode::Add).unwrap();
    session.host_activate(&names(&["lenient"])).unwrap();
    session.unload_all().unwrap();
    let session = env.session();
    session.host_activate(&names(&["hooked", "guard"])).unwrap();
    session.end_task().unwrap();
    assert_eq!(
        hook_log(&dir),
        "pre\npre\npre\npost\npre\npost\npre\npost\npre\npost\npre\npost\n"
    );
}

#[test]
fn hooks_of_an_untrusted_layer_are_refused_with_how_to_trust() {
    let env = Env::new();
    let dir = hooked(&env);
    // The project layer is untrusted by default.
    let executor = env.executor_as(Layer::Project, Policy::default());
    let session = executor.session(SessionContext::default());
    let err = load(&session, &["hooked"], LoadMode::Add).unwrap_err();
    assert_eq!(err.code(), "SKILL_UNTRUSTED");
    let message = err.to_string();
    assert!(message.contains("project"), "{message}");
    assert!(message.contains("--trust project"), "{message}");
    assert!(active(&session).is_empty());
    assert_eq!(hook_log(&dir), "");
    // A skill without hooks loads from the same layer.
    load(&session, &["plain"], LoadMode::Add).unwrap();

    // Trusted by the host, it runs.
    let trusted = env.executor_as(
        Layer::Project,
        Policy::builder().trust(Layer::Project).build(),
    );
    let session = trusted.session(SessionContext::default());
    load(&session, &["hooked"], LoadMode::Add).unwrap();
    assert_eq!(hook_log(&dir), "pre\n");
}

#[test]
fn the_stack_and_its_rules_survive_failing_and_panicking_calls() {
    let env = Env::new();
    env.skill(
        "git-only",
        "allowed-tools: Bash(git status:*) Read\n",
        "Git.\n",
    );
    env.file("git-only", "references/a.md", "A\n");
    env.skill("other", "", "Other.\n");
    let session = env.session();
    load(&session, &["other", "git-only"], LoadMode::Add).unwrap();
    let before = active(&session);
    let decisions = |s: &Session| {
        (
            s.check_tool("Bash", &json!({"command": "git status"}))
                .allowed,
            s.check_tool("Bash", &json!({"command": "rm -rf /"}))
                .allowed,
            s.check_tool("Write", &json!({"file_path": "/tmp/x"}))
                .allowed,
        )
    };
    assert_eq!(decisions(&session), (true, false, false));

    // Runtime tools that fail.
    let failures = [
        protocol::call(&session, "skills_read", json!({"path": "../x"})),
        protocol::call(
            &session,
            "skills_read",
            json!({"path": "references/missing.md"}),
        ),
        protocol::call(
            &session,
            "skills_run_script",
            json!({"path": "scripts/none.sh"}),
        ),
        protocol::call(
            &session,
            "skills_load",
            json!({"skills": ["nope"], "mode": "add"}),
        ),
        protocol::call(&session, "skills_load", json!({"skills": ["nope"]})),
        // (Changed by issue 37: an unload of a skill not active is now answered, not
        // refused; an unload whose names are not a list still is.)
        protocol::call(&session, "skills_unload", json!({"skills": "other"})),
        protocol::call(&session, "no_such_tool", json!({})),
        protocol::call(&session, "skills_read", json!("not an object")),
    ];
    assert!(failures.iter().all(Result::is_err));
    assert_eq!(active(&session), before);
    assert_eq!(decisions(&session), (true, false, false));

    // A host tool that was allowed, then failed, and one that panicked.
    let d = session.check_tool("Bash", &json!({"command": "git status --porcelain"}));
    assert!(d.allowed);
    let host_result: Result<(), String> = Err("git: not a repository".into());
    assert!(host_result.is_err());
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        let d = session.check_tool("Read", &json!({"file_path": "/etc/hosts"}));
        assert!(d.allowed);
        panic!("the host's Read tool panicked");
    }));
    assert!(panicked.is_err());
    assert_eq!(active(&session), before);
    assert_eq!(decisions(&session), (true, false, false));
}

#[test]
fn skills_list_marks_the_active_skills() {
    let env = abc();
    let session = env.session();
    load(&session, &["beta"], LoadMode::Add).unwrap();
    let out = protocol::call(&session, "skills_list", Value::Null).unwrap();
    let active: Vec<(String, bool)> = out["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["active"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        active,
        [
            ("alpha".to_owned(), false),
            ("beta".to_owned(), true),
            ("gamma".to_owned(), false)
        ]
    );
}

#[test]
fn sessions_of_one_executor_have_their_own_stacks() {
    let env = abc();
    let executor: Executor = env.executor(Policy::default());
    let one = executor.session(SessionContext::builder().id("one").build());
    let two = executor.session(SessionContext::default());
    assert_eq!(one.id(), "one");
    assert_ne!(two.id(), "one");
    load(&one, &["alpha"], LoadMode::Add).unwrap();
    assert!(active(&two).is_empty());
    let shared = Arc::new(executor);
    let three = shared.session(SessionContext::default());
    assert_ne!(three.id(), two.id());
}

// Regression: `skills_unload` compared bare names only, so a skill loaded by its qualified
// name (`personal:alpha`, as `skills_load` and `skills_read` accept) could not be unloaded
// by that name ("is not active").
#[test]
fn unload_accepts_the_qualified_names_load_accepts() {
    let env = abc();
    let session = env.session();
    load(&session, &["personal:alpha", "beta"], LoadMode::Add).unwrap();
    assert_eq!(active(&session), ["alpha", "beta"]);
    // Changed by issue 37: below the top of the stack too, and a qualified name that
    // stands for no active skill is reported as not active rather than refused.
    let out = protocol::call(
        &session,
        "skills_unload",
        json!({"skills": ["personal:alpha"]}),
    )
    .unwrap();
    assert_eq!(out["unloaded"], json!(["alpha"]));
    let out = protocol::call(
        &session,
        "skills_unload",
        json!({"skills": ["personal:beta", "project:alpha"]}),
    )
    .unwrap();
    assert_eq!(out["unloaded"], json!(["beta"]));
    assert_eq!(out["not_active"], json!(["project:alpha"]));
    assert!(active(&session).is_empty());
}

// Regression (review): the host's activation of a skill the model had loaded already left it
// the model's, so the model could still unload what the user asked for.
#[test]
fn the_host_pins_a_skill_the_model_had_loaded() {
    let env = abc();
    let session = env.session();
    load(&session, &["alpha"], LoadMode::Add).unwrap();
    session.host_activate(&names(&["alpha"])).unwrap();
    let err = session.unload(&names(&["alpha"])).unwrap_err();
    assert_eq!(err.code(), "SKILL_PINNED_BY_HOST", "{err}");
    assert_eq!(active(&session), ["alpha"]);
}

/// Regression: a skill whose `SKILL.md` gained a `scope` that leaves this session out, after
/// the snapshot that resolved it read the file, was loaded as the file now reads (another
/// tenant's instructions) for the model and the host alike, and served as a prompt.
#[test]
fn a_scope_written_since_the_index_read_it_governs_the_load() {
    let env = Env::new();
    env.skill("deploy", "", "Public deploy.\n");
    let session = env.executor(Policy::default()).session(
        SessionContext::builder()
            .id("acme-1")
            .tenant("acme")
            .build(),
    );
    // Rewritten with no reload: the snapshot still holds the public version.
    env.skill(
        "deploy",
        "scope:\n  tenants:\n    - globex\n",
        "Globex's own deploy.\n",
    );
    let err = load(&session, &["deploy"], LoadMode::Add).unwrap_err();
    assert_eq!(err.code(), "SKILL_NOT_FOUND", "{err}");
    assert!(!err.to_string().contains("Globex"), "{err}");
    let err = session.host_activate(&names(&["deploy"])).unwrap_err();
    assert_eq!(err.code(), "SKILL_NOT_FOUND", "{err}");
    let err = session
        .instructions_of("deploy", "prompts/get")
        .unwrap_err();
    assert_eq!(err.code(), "SKILL_NOT_FOUND", "{err}");
    env.file("deploy", "references/notes.md", "Globex's notes.\n");
    for path in ["SKILL.md", "references/notes.md"] {
        let err = session
            .read_unloaded("deploy", path, "resources/read")
            .unwrap_err();
        assert_eq!(err.code(), "SKILL_NOT_FOUND", "{path}: {err}");
    }
    assert!(active(&session).is_empty());
    // A prompt rewritten as no longer the user's to invoke is not served either.
    env.skill("notes", "", "Notes.\n");
    let session = env.executor(Policy::default()).session(
        SessionContext::builder()
            .id("acme-2")
            .tenant("acme")
            .build(),
    );
    env.skill("notes", "user-invocable: false\n", "Notes.\n");
    let err = session.instructions_of("notes", "prompts/get").unwrap_err();
    assert_eq!(err.code(), "SKILL_NOT_FOUND", "{err}");
    // Globex's session loads it as it now reads.
    let globex = env.executor(Policy::default()).session(
        SessionContext::builder()
            .id("globex-1")
            .tenant("globex")
            .build(),
    );
    load(&globex, &["deploy"], LoadMode::Add).unwrap();
    assert_eq!(active(&globex), ["deploy"]);
}

/// Regression (issue 38): a `scope` that could not be read counted as no scope, so a
/// session of another tenant listed, loaded and read the skill's references (also as MCP
/// prompts and resources), and `validate` only warned. Each shape now hides the skill from
/// every session, the named tenant's included, and is an error.
#[test]
fn an_unreadable_scope_hides_the_skill_from_every_session() {
    let shapes = [
        "scope:\n  tenants: {acme: true}\n",
        "scope:\n  tenants: [[acme]]\n",
        "scope:\n  tenants: [acme, {team: x}]\n",
        "scope: acme\n",
        "scope: [{tenants: [acme]}]\n",
    ];
    for shape in shapes {
        let env = Env::new();
        env.skill("deploy", shape, "Acme's deploy.\n");
        env.file("deploy", "references/secret.md", "Acme's secret.\n");
        env.skill("notes", "", "Notes.\n");
        let executor = env.executor(Policy::default());
        for tenant in ["globex", "acme", ""] {
            let mut context = SessionContext::builder().id(format!("s-{tenant}"));
            if !tenant.is_empty() {
                context = context.tenant(tenant);
            }
            let session = executor.session(context.build());
            let seen: Vec<String> = session
                .visible()
                .iter()
                .map(|r| r.name.to_string())
                .collect();
            assert_eq!(seen, ["notes"], "{shape} / {tenant:?}");
            let listed: Vec<String> = session.list().skills.into_iter().map(|s| s.name).collect();
            assert_eq!(listed, ["notes"], "{shape} / {tenant:?}");
            let err = load(&session, &["deploy"], LoadMode::Add).unwrap_err();
            assert_eq!(err.code(), "SKILL_NOT_FOUND", "{shape} / {tenant:?}: {err}");
            let err = session
                .instructions_of("deploy", "prompts/get")
                .unwrap_err();
            assert_eq!(err.code(), "SKILL_NOT_FOUND", "{shape} / {tenant:?}: {err}");
            for path in ["SKILL.md", "references/secret.md"] {
                let err = session
                    .read_unloaded("deploy", path, "resources/read")
                    .unwrap_err();
                assert_eq!(
                    err.code(),
                    "SKILL_NOT_FOUND",
                    "{shape} / {tenant:?} {path}: {err}"
                );
            }
        }
        // `validate` calls it an error (the index keeps the parser's diagnostics).
        let snapshot = env.index().snapshot();
        let record = snapshot
            .records()
            .iter()
            .find(|r| r.name.as_str() == "deploy")
            .expect("the lenient index holds it, hidden");
        assert!(
            record
                .diagnostics
                .iter()
                .any(|d| d.is_error() && d.rule == skills_model::Rule::ScopeType),
            "{shape}: {:?}",
            record.diagnostics
        );
    }
}

/// Regression: once a skill this session may not see took the qualified name of an active
/// skill (a higher `priority` in the same layer), the session was told the active skill
/// changed on disk, with the digest of the hidden skill's `SKILL.md`.
#[test]
fn a_hidden_skill_taking_an_active_skill_s_name_tells_nothing_of_itself() {
    let env = Env::new();
    env.skill("deploy", "", "Public deploy.\n");
    let session = env.executor(Policy::default()).session(
        SessionContext::builder()
            .id("globex-1")
            .tenant("globex")
            .build(),
    );
    load(&session, &["deploy"], LoadMode::Add).unwrap();
    let batches = session.executor().index().subscribe_batches();
    let told_of = |batch: &[skills_index::ChangeEvent]| {
        serde_json::to_value(protocol::events(&session, batch)).unwrap()
    };
    env.file(
        "deploy-acme",
        "SKILL.md",
        "---\nname: deploy\ndescription: Acme's deploy.\npriority: 10\nscope:\n  tenants:\n    - acme\n---\nAcme's.\n",
    );
    session.reload();
    // Regression (review): the session's own `deploy` was reported changed (shadowed), as
    // the hidden skill came and as it went.
    let batch = batches.try_recv().expect("a publication");
    assert_eq!(told_of(&batch), json!([]));
    let acme_digest =
        skills_index::skill_digest(&std::fs::read(env.root.join("deploy-acme/SKILL.md")).unwrap());
    let told = serde_json::to_string(&session.instructions(None)).unwrap();
    assert!(!told.contains(&acme_digest), "{told}");
    assert!(session.outdated().is_empty(), "{:?}", session.outdated());
    std::fs::remove_dir_all(env.root.join("deploy-acme")).unwrap();
    session.reload();
    let batch = batches.try_recv().expect("a publication");
    assert_eq!(told_of(&batch), json!([]));
    // Its own file changed: reported, with its own digest (the name still stands for it,
    // to this session).
    env.skill("deploy", "", "Public deploy, edited.\n");
    session.reload();
    let outdated = session.outdated();
    assert_eq!(outdated.len(), 1);
    let own = skills_index::skill_digest(&std::fs::read(env.root.join("deploy/SKILL.md")).unwrap());
    assert_eq!(outdated[0].current.as_deref(), Some(own.as_str()));
}

/// Regression: the change events a session is sent named a skill it may not see when that
/// skill was removed (a removed skill was reported whatever its scope). A change that hides
/// a skill from the session is, for it, a removal; one that shows it one, an addition.
#[test]
fn change_events_name_only_skills_the_session_may_see() {
    let env = Env::new();
    env.skill("deploy", "", "Public.\n");
    let session = env.executor(Policy::default()).session(
        SessionContext::builder()
            .id("globex-1")
            .tenant("globex")
            .build(),
    );
    let batches = session.executor().index().subscribe_batches();
    let step = |change: &dyn Fn()| {
        change();
        session.reload();
        let batch = batches.try_recv().expect("a publication");
        let told = protocol::events(&session, &batch);
        serde_json::to_value(told).unwrap()
    };
    let acme = "scope:\n  tenants:\n    - acme\n";
    // Another tenant's skill added, then removed: nothing is said.
    let told = step(&|| {
        env.skill("acme-merger", acme, "Secret.\n");
    });
    assert_eq!(told, json!([]));
    let told = step(&|| std::fs::remove_dir_all(env.root.join("acme-merger")).unwrap());
    assert_eq!(told, json!([]), "{told}");
    // A visible skill rewritten as another tenant's: removed, for this session; and back.
    let told = step(&|| {
        env.skill("deploy", acme, "Now Acme's.\n");
    });
    assert_eq!(told[0]["removed"], json!(["personal:deploy"]), "{told}");
    assert_eq!(told[0]["changed"], json!([]), "{told}");
    let told = step(&|| {
        env.skill("deploy", "", "Public again.\n");
    });
    assert_eq!(told[0]["added"], json!(["personal:deploy"]), "{told}");
}

/// Regression (attack): the index's shadowing, worked out over every skill, went into a
/// session's change events, so a hidden skill of a higher layer changed what the session
/// was told when a skill of its name came (its own `deploy` was, or was not, reported
/// changed). What a session is told is the same with and without skills it may not see.
#[test]
fn change_events_are_the_same_with_and_without_hidden_skills() {
    let told = |hidden: bool| {
        let tmp = tempfile::tempdir().unwrap();
        let write = |layer: &str, folder: &str, name: &str, extra: &str| {
            let dir = tmp.path().join(layer).join(folder);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                dir.join("SKILL.md"),
                format!("---\nname: {name}\ndescription: Does {name}.\n{extra}---\nBody.\n"),
            )
            .unwrap();
        };
        let acme = "scope:\n  tenants:\n    - acme\n";
        write("project", "deploy", "deploy", "");
        if hidden {
            write("enterprise", "deploy", "deploy", acme);
        }
        for layer in ["enterprise", "personal"] {
            std::fs::create_dir_all(tmp.path().join(layer)).unwrap();
        }
        let index = skills_index::SkillIndex::builder()
            .root(Layer::Enterprise, tmp.path().join("enterprise"))
            .root(Layer::Personal, tmp.path().join("personal"))
            .root(Layer::Project, tmp.path().join("project"))
            .build()
            .unwrap();
        let session = Executor::builder(Arc::new(index))
            .build()
            .session(SessionContext::builder().id("g").tenant("globex").build());
        let batches = session.executor().index().subscribe_batches();
        let mut said = Vec::new();
        let steps: [&dyn Fn(); 2] = [
            // A skill of the name in a higher layer than the session's own.
            &|| write("personal", "deploy", "deploy", ""),
            // Another tenant's skill of the name arrives with an unrelated one.
            &|| {
                write(
                    "enterprise",
                    "deploy-2",
                    "deploy",
                    &format!("priority: 3\n{acme}"),
                );
                write("personal", "notes", "notes", "");
            },
        ];
        for step in steps {
            step();
            session.reload();
            let batch = batches.try_recv().expect("a publication");
            said.push(serde_json::to_value(protocol::events(&session, &batch)).unwrap());
        }
        said
    };
    let without = told(false);
    assert_eq!(
        without[0][0]["added"],
        json!(["personal:deploy"]),
        "{without:?}"
    );
    assert_eq!(told(true), without);
}

// Regression (issue 38): `build` set the watcher's watches before it returned, walking every
// path through every link, so a session over a watched project with a link to `/` answered
// nothing, `hello` included, for minutes. The watches are set on the watcher's thread: here
// that setup is held until the session has answered.
#[test]
fn a_session_answers_hello_while_its_watcher_is_being_set_up() {
    let env = Env::new();
    env.skill("alpha", "", "Body.\n");
    let (held_tx, held_rx) = crossbeam_channel::bounded::<()>(0);
    let (release_tx, release_rx) = crossbeam_channel::bounded::<()>(0);
    let root = env.root.clone();
    let (built_tx, built_rx) = crossbeam_channel::bounded(1);
    // Built on its own thread: before the fix `build` waited for the held setup.
    std::thread::spawn(move || {
        let index = skills_index::SkillIndex::builder()
            .root(Layer::Personal, &root)
            .watch(true)
            .watch_setup_hook(move || {
                let _ = held_tx.send(());
                let _ = release_rx.recv();
            })
            .build()
            .expect("build index");
        let _ = built_tx.send(index);
    });
    held_rx.recv().expect("the watcher's setup starts");
    let index = built_rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the index is built while its watcher's setup is held");
    let index = Arc::new(index);
    let session = Executor::builder(Arc::clone(&index))
        .build()
        .session(SessionContext::builder().id("held").build());
    let answer: Value = serde_json::from_str(&protocol::respond_line(
        &session,
        r#"{"id":1,"tool":"hello","input":{}}"#,
    ))
    .expect("JSON");
    assert_eq!(answer["ok"], true, "{answer}");
    assert_eq!(
        index.watched_folders(std::time::Duration::ZERO),
        None,
        "the setup is still held"
    );
    release_tx.send(()).expect("release the setup");
    assert!(index
        .watched_folders(std::time::Duration::from_secs(30))
        .is_some());
}
