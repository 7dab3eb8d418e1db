//! What a skill needs (`requires:` and the conventions read into it) against a session:
//! a skill whose needs are unmet is kept from every surface the model sees, and nothing the
//! model receives names it or why; the policy can offer it anyway, with a note; a program
//! put on the search path is seen at the next publication. And secrets: a granted value
//! reaches only the scripts of a trusted skill that declares it, and nothing the model or
//! the audit receives.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{make_executable, names, Env};
use serde_json::{json, Value};
use skills_executor::{Executor, LoadMode, Policy, Session, SessionContext, Unavailable};
use skills_index::SkillIndex;
use skills_model::Layer;
use skills_protocol as protocol;

/// A program's name no machine has.
const TOOL: &str = "skills-test-tool-4f2a";

/// An executor over `env`'s root as the personal layer, programs looked for on `bin`.
fn executor_with_path(env: &Env, bin: &Path, policy: Policy) -> Executor {
    let index = SkillIndex::builder()
        .root(Layer::Personal, &env.root)
        .program_path(bin.as_os_str())
        .codex_metadata(true)
        .build()
        .expect("build index");
    let sink: Arc<dyn skills_executor::AuditSink> = env.sink.clone();
    Executor::builder(Arc::new(index))
        .policy(policy)
        .audit_sink(sink)
        .build()
}

fn session(executor: &Executor) -> Session {
    executor.session(SessionContext::builder().id("requires").build())
}

fn visible(session: &Session) -> Vec<String> {
    session
        .visible()
        .iter()
        .map(|r| r.name.to_string())
        .collect()
}

/// Two skills: `needs-tool` needs [`TOOL`] on `PATH`; `plain` needs nothing.
fn two_skills() -> Env {
    let env = Env::new();
    env.skill(
        "needs-tool",
        &format!("requires:\n  bins: [{TOOL}]\n"),
        "Run the tool.\n",
    );
    env.skill("plain", "", "Plain.\n");
    env
}

#[test]
fn a_skill_needing_a_missing_program_is_offered_after_the_program_appears_on_path() {
    let env = two_skills();
    let bin = env.outside("bin");
    let executor = executor_with_path(&env, &bin, Policy::default());
    let s = session(&executor);
    assert_eq!(visible(&s), ["plain"]);
    let snapshot = executor.index().snapshot();
    let record = snapshot.get("needs-tool").expect("indexed all the same");
    let why: Vec<String> = s.unmet(record).iter().map(ToString::to_string).collect();
    assert_eq!(why, [format!("program `{TOOL}` is not on PATH")]);

    // The program appears on the search path: the next publication offers the skill.
    let program = bin.join(TOOL);
    std::fs::write(&program, "#!/bin/sh\nexit 0\n").unwrap();
    make_executable(&program);
    assert_eq!(
        visible(&s),
        ["plain"],
        "seen at the next publication, not before"
    );
    executor.reload();
    assert_eq!(visible(&s), ["needs-tool", "plain"]);
    let snapshot = executor.index().snapshot();
    assert!(s.unmet(snapshot.get("needs-tool").unwrap()).is_empty());
}

/// Every answer the model can get about a hidden skill: none names it or says why.
#[test]
fn no_model_facing_answer_names_a_hidden_skill_or_why() {
    let env = two_skills();
    env.file("needs-tool", "references/guide.md", "Guide.\n");
    let bin = env.outside("bin");
    let executor = executor_with_path(&env, &bin, Policy::default());
    let s = session(&executor);
    let mut answers: Vec<String> = Vec::new();
    let mut ask = |tool: &str, input: Value| {
        let answer = match protocol::call(&s, tool, input) {
            Ok(v) => v.to_string(),
            Err(e) => format!("{} {e}", e.code()),
        };
        answers.push(answer);
    };
    ask("skills_load", json!({"names": ["needs-tool"]}));
    ask("skills_load", json!({"names": ["personal:needs-tool"]}));
    ask("skills_load", json!({"names": ["needs-tol"]}));
    ask("skills_search", json!({"query": "run the tool needs"}));
    ask(
        "skills_read",
        json!({"skill": "needs-tool", "path": "references/guide.md"}),
    );
    answers.push(s.instructions(None).instructions);
    answers.push(format!(
        "{:?}",
        protocol::tool_definitions(&s)
            .iter()
            .map(|d| &d.description)
            .collect::<Vec<_>>()
    ));
    for (i, answer) in answers.iter().enumerate() {
        for secret in [TOOL, "PATH", "not on", "requires"] {
            assert!(!answer.contains(secret), "{secret:?} leaks in {answer}");
        }
        // Past the answers to requests that name it, nothing names it.
        assert!(
            i < 2 || i == 4 || !answer.contains("needs-tool"),
            "the name leaks in {answer}"
        );
    }
    // Asked by name, the answer is the one for a skill that does not exist.
    let never = protocol::call(&s, "skills_load", json!({"names": ["never-was"]})).unwrap_err();
    assert_eq!(
        answers[0],
        format!("{} {never}", never.code()).replace("never-was", "needs-tool")
    );
}

#[test]
fn the_policy_option_offers_unavailable_skills_with_a_note() {
    let env = two_skills();
    let bin = env.outside("bin");
    let policy = Policy::builder().unavailable(Unavailable::Offered).build();
    assert!(policy
        .overrides()
        .contains(&"--offer-unavailable".to_owned()));
    let executor = executor_with_path(&env, &bin, policy);
    let s = session(&executor);
    assert_eq!(visible(&s), ["needs-tool", "plain"]);
    let listed = s.visible();
    assert!(listed[0]
        .description
        .ends_with("(Its needs may not be met on this machine.)"));
    assert!(!listed[1].description.contains("needs may not"));
    let prompt = s.instructions(None).instructions;
    assert!(prompt.contains("may not be met"), "{prompt}");
    assert!(
        !prompt.contains(TOOL),
        "the note never says what is missing: {prompt}"
    );
}

/// skillscraft's required `tool-binding.dependencies`, Hermes' `requires_toolsets` and
/// `fallback_for_tools` are judged against the tools the host says it offers; a host that
/// says nothing has them unjudged.
#[test]
fn tool_needs_are_judged_against_the_tools_the_host_offers() {
    let env = Env::new();
    env.skill(
        "containers",
        "tool-binding:\n  dependencies:\n    - tool: docker\n      required: true\n",
        "Containers.\n",
    );
    env.skill("hermes-web", "requires_toolsets: [web]\n", "Web.\n");
    env.skill(
        "fallback",
        "metadata:\n  hermes:\n    fallback_for_tools: [web]\n",
        "Without web.\n",
    );
    env.skill("codex-docs", "", "Docs.\n");
    env.file(
        "codex-docs",
        "agents/openai.yaml",
        "dependencies:\n  tools:\n    - type: \"mcp\"\n      value: \"openaiDeveloperDocs\"\n      transport: \"streamable_http\"\n",
    );
    let bin = env.outside("bin");
    let offered = executor_with_path(&env, &bin, Policy::builder().host_tools(["Web"]).build());
    assert_eq!(visible(&session(&offered)), ["hermes-web"]);
    let docs = Policy::builder()
        .host_tools(["openaiDeveloperDocs"])
        .build();
    assert_eq!(
        visible(&session(&executor_with_path(&env, &bin, docs))),
        ["codex-docs", "fallback"]
    );
    let s = session(&offered);
    let snapshot = offered.index().snapshot();
    let why = |name: &str| -> Vec<String> {
        s.unmet(snapshot.get(name).unwrap())
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    assert_eq!(
        why("containers"),
        ["the host does not offer the tool `docker`"]
    );
    assert_eq!(
        why("fallback"),
        ["the host offers `web`, which this skill stands in for"]
    );
    let unsaid = executor_with_path(&env, &bin, Policy::default());
    assert_eq!(
        visible(&session(&unsaid)),
        ["codex-docs", "containers", "fallback", "hermes-web"]
    );
}

/// A skill whose script prints the secret's length and value.
fn echoing(env: &Env, name: &str, declares: bool) {
    let requires = if declares {
        "requires:\n  secrets: [API_TOKEN]\n"
    } else {
        ""
    };
    env.skill(name, requires, "Echo.\n");
    env.file(
        name,
        "scripts/echo.sh",
        "printf 'len=%s\\n' \"${#API_TOKEN}\"\nprintf 'val=%s\\n' \"$API_TOKEN\"\nprintf 'err=%s\\n' \"$API_TOKEN\" >&2\nexit 3\n",
    );
}

const VALUE: &str = "tok-0123456789abcdef";

fn granted() -> Policy {
    Policy::builder()
        .grant_secret("API_TOKEN", VALUE)
        .expect("a fine secret")
        .build()
}

fn run(s: &Session, skill: &str) -> Result<Value, skills_executor::ExecError> {
    protocol::call(
        s,
        "skills_run_script",
        json!({"skill": skill, "path": "scripts/echo.sh"}),
    )
}

#[test]
fn a_granted_secret_reaches_its_trusted_skill_and_no_other() {
    let env = Env::new();
    echoing(&env, "declares", true);
    echoing(&env, "other", false);
    let executor = env.executor(granted());
    let s = session(&executor);
    s.load(&names(&["declares", "other"]), LoadMode::Add)
        .unwrap();
    let out = run(&s, "declares").unwrap();
    let stdout = out["stdout"].as_str().unwrap();
    assert!(stdout.contains(&format!("len={}", VALUE.len())), "{out}");
    assert!(stdout.contains("val=[REDACTED:API_TOKEN]"), "{out}");
    let out = run(&s, "other").unwrap();
    assert!(out["stdout"].as_str().unwrap().contains("len=0\n"), "{out}");

    // The same skill in an untrusted layer runs nothing, so receives nothing.
    let untrusted = Env::new();
    echoing(&untrusted, "declares", true);
    let executor = untrusted.executor_as(Layer::Project, granted());
    let s = session(&executor);
    s.load(&names(&["declares"]), LoadMode::Add).unwrap();
    let err = run(&s, "declares").unwrap_err();
    assert_eq!(err.code(), "SKILL_UNTRUSTED");
}

/// Receipts, instructions, script output, errors, files read and the audit: the value is
/// in none of them; the audit names no value.
#[test]
fn a_secret_is_never_in_what_the_model_or_the_audit_receives() {
    let env = Env::new();
    echoing(&env, "declares", true);
    // A script could write the value into its skill's files: a read serves it redacted.
    env.file(
        "declares",
        "references/leak.txt",
        format!("the token is {VALUE}\n"),
    );
    let executor = env.executor(granted());
    let s = session(&executor);
    let mut seen = vec![
        protocol::call(&s, "skills_load", json!({"names": ["declares"]}))
            .unwrap()
            .to_string(),
    ];
    seen.push(run(&s, "declares").unwrap().to_string());
    seen.push(s.instructions(None).instructions);
    let read = protocol::call(
        &s,
        "skills_read",
        json!({"skill": "declares", "path": "references/leak.txt"}),
    )
    .unwrap();
    assert!(read.to_string().contains("[REDACTED:API_TOKEN]"), "{read}");
    seen.push(read.to_string());
    let err = protocol::call(
        &s,
        "skills_run_script",
        json!({"skill": "declares", "path": "scripts/echo.sh", "env": {"API_TOKEN": "x"}}),
    )
    .unwrap_err();
    seen.push(err.to_string());
    for event in env.sink.events() {
        seen.push(serde_json::to_string(&event).unwrap());
    }
    for text in &seen {
        assert!(!text.contains(VALUE), "the value leaks in {text}");
    }
    assert!(format!("{:?}", executor.policy()).contains("API_TOKEN"));
    assert!(!format!("{:?}", executor.policy()).contains(VALUE));
}

#[test]
fn a_call_cannot_set_a_secrets_name() {
    let env = Env::new();
    echoing(&env, "declares", true);
    let executor = env.executor(
        Policy::builder()
            .allow_script_env("API_TOKEN")
            .grant_secret("API_TOKEN", VALUE)
            .unwrap()
            .build(),
    );
    let s = session(&executor);
    s.load(&names(&["declares"]), LoadMode::Add).unwrap();
    let err = protocol::call(&s, "skills_run_script", json!({"skill": "declares", "path": "scripts/echo.sh", "env": {"API_TOKEN": "attacker-chosen"}}))
        .unwrap_err();
    assert_eq!(err.code(), "SKILL_BAD_INPUT", "{err}");
    assert!(
        err.to_string()
            .contains("a call cannot set the name of a secret"),
        "{err}"
    );
}

#[test]
fn an_ungranted_secret_is_named_at_run_time() {
    let env = Env::new();
    echoing(&env, "declares", true);
    let s = env.session();
    s.load(&names(&["declares"]), LoadMode::Add).unwrap();
    let err = run(&s, "declares").unwrap_err();
    assert_eq!(err.code(), "SKILL_SECRET_NOT_GRANTED");
    assert!(err.to_string().contains("API_TOKEN"), "{err}");
}

/// Names the environment filter refuses are never secrets, and short values are refused.
#[test]
fn a_refused_name_is_never_a_secret() {
    for name in ["LD_PRELOAD", "PATH", "PYTHONSTARTUP", "BASH_ENV", "lower"] {
        let err = Policy::builder()
            .grant_secret(name, "long-enough-value")
            .unwrap_err();
        assert_eq!(err.code(), "SECRET_NAME_REFUSED", "{name}");
    }
    let err = Policy::builder()
        .grant_secret("API_TOKEN", "short")
        .unwrap_err();
    assert_eq!(err.code(), "SECRET_TOO_SHORT");
}

/// An echoed value is redacted before the output is cut to its cap: a value that starts
/// just before the cap never shows a prefix of itself.
#[test]
fn an_echoed_value_is_redacted_before_the_cap() {
    let env = Env::new();
    env.skill("declares", "requires:\n  secrets: [API_TOKEN]\n", "Echo.\n");
    env.file(
        "declares",
        "scripts/echo.sh",
        "printf 'abcdefghij%s' \"$API_TOKEN\"\n",
    );
    let policy = Policy::builder()
        .grant_secret("API_TOKEN", VALUE)
        .unwrap()
        .output_limit(14)
        .build();
    let executor = env.executor(policy);
    let s = session(&executor);
    s.load(&names(&["declares"]), LoadMode::Add).unwrap();
    let out = run(&s, "declares").unwrap();
    let stdout = out["stdout"].as_str().unwrap();
    assert_eq!(stdout, "abcdefghij[RED", "{out}");
    assert!(!stdout.contains("tok-"), "{out}");
}

/// The host-only request: the host says over the wire which tools it offers, and hears
/// which skills are kept from its model and why. `tool_definitions` never lists it.
#[test]
fn the_host_hears_why_over_the_wire_and_says_which_tools_it_offers() {
    let env = two_skills();
    env.skill("hermes-web", "requires_toolsets: [web]\n", "Web.\n");
    let bin = env.outside("bin");
    let executor = executor_with_path(&env, &bin, Policy::default());
    let s = session(&executor);
    assert_eq!(
        visible(&s),
        ["hermes-web", "plain"],
        "tools unsaid are not judged"
    );
    let answer = protocol::call(
        &s,
        "skills_unavailable",
        json!({"host_tools": ["terminal"]}),
    )
    .unwrap();
    assert_eq!(
        answer,
        json!({"skills": [
            {"name": "hermes-web", "qualified_name": "personal:hermes-web", "unavailable": ["the host does not offer the tool `web`"]},
            {"name": "needs-tool", "qualified_name": "personal:needs-tool", "unavailable": [format!("program `{TOOL}` is not on PATH")]},
        ]})
    );
    assert_eq!(visible(&s), ["plain"]);
    let search = protocol::call(&s, "skills_search", json!({"query": "web"})).unwrap();
    assert_eq!(search["total"], 0, "{search}");
    protocol::call(&s, "skills_unavailable", json!({"host_tools": ["web"]})).unwrap();
    assert_eq!(visible(&s), ["hermes-web", "plain"]);
    let search = protocol::call(&s, "skills_search", json!({"query": "web"})).unwrap();
    assert_eq!(search["total"], 1, "{search}");
    assert!(protocol::HOST_ONLY.contains(&"skills_unavailable"));
    assert!(!protocol::tool_definitions(&s)
        .iter()
        .any(|d| d.name == "skills_unavailable"));
}

/// Change events follow what the session may see: a hidden skill that changes or goes is
/// not mentioned, one whose program appears is added, one whose program goes is removed.
#[test]
fn change_events_name_a_hidden_skill_only_once_it_is_offered() {
    let env = two_skills();
    let bin = env.outside("bin");
    let executor = executor_with_path(&env, &bin, Policy::default());
    let s = session(&executor);
    let batches = executor.index().subscribe_batches();
    let said = || {
        executor.reload();
        let batch = batches
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("a batch per publication");
        serde_json::to_string(&protocol::events(&s, &batch)).unwrap()
    };
    env.skill(
        "needs-tool",
        &format!("requires:\n  bins: [{TOOL}]\n"),
        "Edited.\n",
    );
    let events = said();
    assert!(!events.contains("needs-tool"), "{events}");

    let program = bin.join(TOOL);
    std::fs::write(&program, "#!/bin/sh\nexit 0\n").unwrap();
    make_executable(&program);
    let events = said();
    assert!(
        events.contains("\"added\":[\"personal:needs-tool\"]"),
        "{events}"
    );

    std::fs::remove_file(&program).unwrap();
    let events = said();
    assert!(
        events.contains("\"removed\":[\"personal:needs-tool\"]"),
        "{events}"
    );

    std::fs::remove_dir_all(env.root.join("needs-tool")).unwrap();
    let events = said();
    assert!(
        !events.contains("needs-tool"),
        "a hidden skill that goes is not mentioned: {events}"
    );
}
