//! Requests through the protocol layer (moved from the executor's `session.rs` with it):
//! inputs it refuses as bad input, and the runtime tools' definitions, each of which
//! dispatches.

#[path = "../../executor/tests/common/mod.rs"]
mod common;

use common::{abc, active, names, Env};
use serde_json::json;
use skills_executor::{ExecError, LoadMode};
use skills_protocol as protocol;

#[test]
fn load_with_an_unknown_mode_or_no_names_is_bad_input() {
    let env = abc();
    let session = env.session();
    let err = protocol::call(
        &session,
        "skills_load",
        json!({"skills": ["alpha"], "mode": "push"}),
    )
    .unwrap_err();
    assert_eq!(err.code(), "SKILL_BAD_INPUT");
    let err = protocol::call(&session, "skills_load", json!({"skills": []})).unwrap_err();
    assert_eq!(err.code(), "SKILL_BAD_INPUT");
    let err = protocol::call(
        &session,
        "skills_load",
        json!({"skills": ["alpha"], "extra": 1}),
    )
    .unwrap_err();
    assert_eq!(err.code(), "SKILL_BAD_INPUT");
    assert!(active(&session).is_empty());
}

// Regression: `timeout_ms: 0` was taken (the schema's minimum is 1) and timed the script
// out before it could run.
#[test]
fn a_zero_timeout_is_bad_input() {
    let env = Env::new();
    env.skill("runner", "", "Runs.\n");
    env.file("runner", "scripts/ok.sh", "true\n");
    let session = env.session();
    session.load(&names(&["runner"]), LoadMode::Add).unwrap();
    let err = protocol::call(
        &session,
        "skills_run_script",
        json!({"path": "scripts/ok.sh", "timeout_ms": 0}),
    )
    .unwrap_err();
    assert_eq!(err.code(), "SKILL_BAD_INPUT", "{err}");
    assert!(err.to_string().contains("timeout_ms"), "{err}");
}

#[test]
fn tool_definitions_have_plain_names_and_object_schemas() {
    let env = abc();
    let session = env.session();
    let defs = protocol::tool_definitions(&session);
    let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    for expected in [
        "skills_list",
        "skills_load",
        "skills_unload",
        "skills_read",
        "skills_run_script",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    for d in &defs {
        assert!(!d.name.is_empty());
        assert!(
            d.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "{}",
            d.name
        );
        assert!(!d.description.is_empty(), "{}", d.name);
        assert_eq!(d.input_schema["type"], "object", "{}", d.name);
        assert!(d.input_schema["properties"].is_object(), "{}", d.name);
        // Every tool named here can be called.
        let err = protocol::call(&session, &d.name, json!({"definitely_not_a_field": 1}));
        assert!(
            !matches!(err, Err(ExecError::UnknownTool(_))),
            "{} is not dispatched",
            d.name
        );
    }
}
