//! `skills_search` through the protocol layer: what the model may see only (scope,
//! `disable-model-invocation`), the layer and tag filters, the limit, and the
//! `skills_searched` audit event.

mod common;

use std::sync::Arc;

use common::Env;
use serde_json::{json, Value};
use skills_executor::{AuditKind, Executor, Policy, SessionContext, Unavailable};
use skills_index::SkillIndex;
use skills_model::Layer;
use skills_protocol as protocol;

fn names(out: &Value) -> Vec<&str> {
    out["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect()
}

#[test]
fn search_sees_what_the_model_may_see_and_is_audited() {
    let env = Env::new();
    env.skill("invoice-pdf", "tags:\n  - billing\n", "Invoices.\n");
    env.skill("invoice-csv", "", "CSV.\n");
    env.skill(
        "invoice-secret",
        "disable-model-invocation: true\n",
        "Hidden.\n",
    );
    env.skill(
        "invoice-ops",
        "scope:\n  agents:\n    - ops-bot\n",
        "Only for the ops bot.\n",
    );
    let session = env.session();
    let out = protocol::call(&session, "skills_search", json!({"query": "invoice"})).unwrap();
    let mut found = names(&out);
    found.sort_unstable();
    assert_eq!(found, ["invoice-csv", "invoice-pdf"]);
    assert_eq!(out["total"], 2);
    let first = &out["results"][0];
    assert_eq!(first["matched"][0], "name");
    assert!(first["score"].as_f64().unwrap() > 0.0);
    assert_eq!(first["layer"], "personal");
    // Filters and the limit.
    let out = protocol::call(
        &session,
        "skills_search",
        json!({"query": "invoice", "tag": "BILLING"}),
    )
    .unwrap();
    assert_eq!(names(&out), ["invoice-pdf"]);
    let out = protocol::call(
        &session,
        "skills_search",
        json!({"query": "invoice", "layer": "project"}),
    )
    .unwrap();
    assert_eq!(out["total"], 0);
    let out = protocol::call(
        &session,
        "skills_search",
        json!({"query": "invoice", "limit": 1}),
    )
    .unwrap();
    assert_eq!(names(&out).len(), 1);
    assert_eq!(out["total"], 2);
    for bad in [
        json!({"query": "x", "limit": 0}),
        json!({"query": "x", "limit": 51}),
        json!({"query": "x", "layer": "nope"}),
        json!({}),
    ] {
        let err = protocol::call(&session, "skills_search", bad.clone()).unwrap_err();
        assert_eq!(err.code(), "SKILL_BAD_INPUT", "{bad}: {err}");
    }
    // The ops bot sees its own skill.
    let ops = env
        .executor(Policy::default())
        .session(SessionContext::builder().id("ops").agent("ops-bot").build());
    let out = protocol::call(&ops, "skills_search", json!({"query": "invoice"})).unwrap();
    assert_eq!(out["total"], 3);
    // Audited: the query and the number of matches.
    let events = env.events(AuditKind::SkillsSearched);
    assert!(!events.is_empty());
    assert_eq!(events[0].query.as_deref(), Some("invoice"));
    assert_eq!(events[0].result_count, Some(2));
    assert_eq!(events[0].tool_name.as_deref(), Some("skills_search"));
    // It is a runtime tool.
    let defs = protocol::tool_definitions(&session);
    assert!(defs.iter().any(|d| d.name == "skills_search"));
}

/// Promise: a search's scores are over the skills the session may see. Skills of another
/// tenant and skills only the user invokes that hold the query's words change no score and
/// no place of what the model is shown.
#[test]
fn a_hidden_skill_moves_no_score_of_a_search() {
    let shown = Env::new();
    let with_hidden = Env::new();
    for env in [&shown, &with_hidden] {
        env.skill("invoice-tables", "", "Tables.\n");
        env.skill("quarterly-invoice-report", "", "Reports.\n");
    }
    for i in 0..4 {
        with_hidden.skill(
            &format!("invoice-merger-{i}"),
            "scope:\n  tenants:\n    - globex\n",
            "Another tenant's.\n",
        );
        with_hidden.skill(
            &format!("invoice-private-{i}"),
            "disable-model-invocation: true\n",
            "The user's alone.\n",
        );
    }
    let acme = |env: &Env| {
        env.executor(Policy::default()).session(
            SessionContext::builder()
                .id("acme-1")
                .tenant("acme")
                .build(),
        )
    };
    let search = |session: &skills_executor::Session, query: &str| {
        let out = protocol::call(session, "skills_search", json!({"query": query})).unwrap();
        out["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["name"].as_str().unwrap().to_owned(),
                    r["score"].as_f64().unwrap(),
                )
            })
            .collect::<Vec<_>>()
    };
    let (hidden_from, seeing_all) = (acme(&with_hidden), acme(&shown));
    let queries = [
        "invoice",
        "invoice tables",
        "quarterly invoice report",
        "merger",
    ];
    for query in queries {
        assert_eq!(
            search(&hidden_from, query),
            search(&seeing_all, query),
            "{query}"
        );
    }
    // The same sessions after a publication that adds a visible skill: what a session
    // sees is worked out again for the new index.
    for env in [&shown, &with_hidden] {
        env.skill("invoice-ledger", "", "Ledger.\n");
    }
    hidden_from.reload();
    seeing_all.reload();
    for query in queries.into_iter().chain(["ledger"]) {
        let found = search(&hidden_from, query);
        assert_eq!(
            found,
            search(&seeing_all, query),
            "{query} after a publication"
        );
        assert!(query != "ledger" || found.len() == 1);
    }
    // The other tenant's session does see its skills.
    let globex = with_hidden.executor(Policy::default()).session(
        SessionContext::builder()
            .id("globex-1")
            .tenant("globex")
            .build(),
    );
    let out = protocol::call(&globex, "skills_search", json!({"query": "merger"})).unwrap();
    assert_eq!(out["total"], 4);
}

/// Promise: `skills_search` with `explain` tells the model which of its words matched
/// which field of each skill it lists, and nothing of a skill it may not see: not its
/// name, not its terms, not that it exists or why it is hidden. The explanation of a
/// listed skill is the same whether hidden skills hold the query's words or not, and its
/// parts add up to the listed score.
#[test]
fn an_explained_search_says_nothing_of_a_hidden_skill() {
    let shown = Env::new();
    let with_hidden = Env::new();
    for env in [&shown, &with_hidden] {
        env.skill("invoice-tables", "tags: [billing]\n", "Tables.\n");
    }
    with_hidden.skill(
        "invoice-merger",
        "scope:\n  tenants:\n    - globex\n",
        "Another tenant's.\n",
    );
    with_hidden.skill(
        "invoice-private",
        "disable-model-invocation: true\n",
        "The user's alone.\n",
    );
    let acme = |env: &Env| {
        env.executor(Policy::default()).session(
            SessionContext::builder()
                .id("acme-1")
                .tenant("acme")
                .build(),
        )
    };
    let ask = json!({"query": "invoice merger private billing", "explain": true});
    let hidden_from = protocol::call(&acme(&with_hidden), "skills_search", ask.clone()).unwrap();
    let seeing_all = protocol::call(&acme(&shown), "skills_search", ask).unwrap();
    assert_eq!(hidden_from, seeing_all);
    let results = hidden_from["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{hidden_from}");
    let terms = results[0]["terms"].as_array().unwrap();
    let fields: Vec<(&str, &str)> = terms
        .iter()
        .map(|t| (t["term"].as_str().unwrap(), t["field"].as_str().unwrap()))
        .collect();
    assert!(fields.contains(&("invoic", "name")), "{fields:?}");
    assert!(fields.contains(&("bill", "tags")), "{fields:?}");
    let sum: f64 = terms
        .iter()
        .map(|t| t["contribution"].as_f64().unwrap())
        .sum();
    let score = results[0]["score"].as_f64().unwrap();
    assert!((sum - score).abs() < 0.001, "{sum} against {score}");
    let text = hidden_from.to_string();
    for secret in ["merger", "private", "globex", "scope", "hidden", "disable"] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    // Without `explain`, no result carries terms.
    let plain = protocol::call(
        &acme(&with_hidden),
        "skills_search",
        json!({"query": "invoice"}),
    )
    .unwrap();
    assert!(plain["results"][0].get("terms").is_none(), "{plain}");
}

/// A name two skills hold stands, to each session, for the first of them it may see: the
/// session the winner's scope hides it from finds the skill it shadows, by that skill's
/// words, and nothing of the winner's; the winner's tenant finds the winner and nothing of
/// the skill it shadows. Names only one skill holds are found as they are (a session's
/// search resolves only the names more than one skill holds).
#[test]
fn a_shadowed_skill_is_found_by_whom_its_name_stands_for_it() {
    let personal = tempfile::tempdir().expect("a temporary folder");
    let project = tempfile::tempdir().expect("a temporary folder");
    let write = |root: &std::path::Path, name: &str, rest: &str| {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).expect("a skill folder");
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: {name}\n{rest}---\n"),
        )
        .expect("SKILL.md");
    };
    write(
        personal.path(),
        "deploy",
        "description: Ships releases to production.\nscope:\n  tenants: [globex]\n",
    );
    write(
        project.path(),
        "deploy",
        "description: Rolls back failed releases.\n",
    );
    write(
        project.path(),
        "dice",
        "description: Rolls dice for failed games.\n",
    );
    let index = skills_index::SkillIndex::builder()
        .root(skills_model::Layer::Personal, personal.path())
        .root(skills_model::Layer::Project, project.path())
        .build()
        .expect("an index");
    let executor = skills_executor::Executor::builder(std::sync::Arc::new(index)).build();
    let total = |tenant: &str, query: &str| {
        let session = executor.session(SessionContext::builder().id(tenant).tenant(tenant).build());
        let out = protocol::call(&session, "skills_search", json!({"query": query})).unwrap();
        out["total"].as_u64().unwrap()
    };
    assert_eq!(
        total("acme", "production"),
        0,
        "the winner is hidden from acme"
    );
    assert_eq!(total("acme", "failed"), 2, "the shadowed deploy and dice");
    assert_eq!(total("acme", "rolls back"), 2);
    assert_eq!(total("globex", "production"), 1, "the winner");
    assert_eq!(
        total("globex", "failed"),
        1,
        "dice alone: deploy is the winner's"
    );
}

/// A skill nothing restricts (`SkillRecord::unrestricted`: no scope, no needs, model
/// invocation allowed) is offered to the model of every session, whatever its context,
/// the policy or the tools its host offers: a session's search sees such skills without
/// asking of each (`with_audience`). The table holds every way a skill can be restricted,
/// so a new one that `unrestricted` does not know fails here.
#[test]
fn an_unrestricted_skill_is_offered_to_every_session() {
    let env = Env::new();
    let skills = [
        ("plain", ""),
        (
            "dressed",
            "tags: [billing]\nallowed-tools: Read Bash(git status:*)\nmetadata:\n  owner: ops\n",
        ),
        ("scoped", "scope:\n  tenants: [acme]\n"),
        ("scope-unread", "scope: 5\n"),
        (
            "needs-bin",
            "requires:\n  bins: [skills-test-absent-4f2a]\n",
        ),
        ("needs-env", "requires:\n  env: [SKILLS_TEST_ABSENT_4F2A]\n"),
        ("hermes-web", "requires_toolsets: [web]\n"),
        (
            "fallback",
            "metadata:\n  hermes:\n    fallback_for_tools: [web]\n",
        ),
        (
            "containers",
            "tool-binding:\n  dependencies:\n    - tool: docker\n      required: true\n",
        ),
        ("quiet", "disable-model-invocation: true\n"),
        ("codex-tools", ""),
        ("codex-quiet", ""),
    ];
    for (name, extra) in skills {
        env.skill(name, extra, "Body.\n");
    }
    env.file(
        "codex-tools",
        "agents/openai.yaml",
        "dependencies:\n  tools:\n    - type: \"mcp\"\n      value: \"openaiDeveloperDocs\"\n",
    );
    env.file(
        "codex-quiet",
        "agents/openai.yaml",
        "policy:\n  allow_implicit_invocation: false\n",
    );
    let index = Arc::new(
        SkillIndex::builder()
            .root(Layer::Personal, &env.root)
            .codex_metadata(true)
            .build()
            .expect("build index"),
    );
    let snapshot = index.snapshot();
    let mut unrestricted: Vec<&str> = snapshot
        .skills()
        .filter(|r| r.unrestricted())
        .map(|r| r.name.as_str())
        .collect();
    unrestricted.sort_unstable();
    assert_eq!(unrestricted, ["dressed", "plain"]);
    let policies = [
        Policy::default(),
        Policy::builder().unavailable(Unavailable::Offered).build(),
        Policy::builder().host_tools(["web"]).build(),
        Policy::builder().host_tools(Vec::<String>::new()).build(),
    ];
    let contexts = [
        SessionContext::builder().id("bare").build(),
        SessionContext::builder()
            .id("full")
            .agent("ops-bot")
            .tenant("globex")
            .environment("prod")
            .build(),
        SessionContext::builder().id("acme").tenant("acme").build(),
    ];
    for policy in policies {
        let executor = Executor::builder(Arc::clone(&index)).policy(policy).build();
        for context in &contexts {
            let session = executor.session(context.clone());
            for record in snapshot.skills().filter(|r| r.unrestricted()) {
                assert!(
                    session.offers_model(record),
                    "{} hidden from {context:?}",
                    record.name
                );
            }
            session.set_host_tools(Vec::new());
            for record in snapshot.skills().filter(|r| r.unrestricted()) {
                assert!(
                    session.offers_model(record),
                    "{} without tools",
                    record.name
                );
            }
        }
    }
}
