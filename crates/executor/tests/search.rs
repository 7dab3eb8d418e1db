//! `skills_search` through the protocol layer: what the model may see only (scope,
//! `disable-model-invocation`), the layer and tag filters, the limit, and the
//! `skills_searched` audit event.

mod common;

use common::Env;
use serde_json::{json, Value};
use skills_executor::{protocol, AuditKind, Policy, SessionContext};

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
