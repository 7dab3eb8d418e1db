//! PROTOCOL.md tells the truth: its schema appendix is generated from the types the
//! protocol layer serves (rewrite it with `UPDATE_PROTOCOL=1 cargo test -p
//! skills-protocol --test protocol_doc`), every error code and audit event is documented,
//! and the schemas `tool_definitions` serves are the documented ones.

use std::path::PathBuf;

use serde_json::json;
use skills_executor::{AuditKind, ExecError};
use skills_protocol as protocol;

const BEGIN: &str = "<!-- generated: schemas (do not edit by hand) -->\n";
const END: &str = "<!-- end of generated schemas -->\n";

fn document() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../PROTOCOL.md")
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).expect("schema serialises")
}

fn generated() -> String {
    let mut out = String::from(BEGIN);
    for r in protocol::schemas() {
        out.push_str(&format!(
            "\n### `{}`{}\n\nInput:\n\n```json\n{}\n```\n\nOutput:\n\n```json\n{}\n```\n",
            r.name,
            if r.host_only { " (host only)" } else { "" },
            pretty(&r.input),
            pretty(&r.output)
        ));
    }
    for (name, schema) in protocol::event_schemas() {
        out.push_str(&format!(
            "\n### {name} lines\n\n```json\n{}\n```\n",
            pretty(&schema)
        ));
    }
    out.push('\n');
    out.push_str(END);
    out
}

#[test]
fn the_schema_appendix_is_generated_from_the_types() {
    let path = document();
    let text = std::fs::read_to_string(&path).expect("PROTOCOL.md at the workspace root");
    let start = text
        .find(BEGIN)
        .expect("the generated section's start marker");
    let end = text.find(END).expect("the generated section's end marker") + END.len();
    let want = generated();
    if text[start..end] != want {
        if std::env::var_os("UPDATE_PROTOCOL").is_some() {
            let updated = format!("{}{}{}", &text[..start], want, &text[end..]);
            std::fs::write(&path, updated).expect("rewrite PROTOCOL.md");
        } else {
            panic!("PROTOCOL.md's schemas are stale: run UPDATE_PROTOCOL=1 cargo test -p skills-protocol --test protocol_doc");
        }
    }
}

#[test]
fn every_error_code_and_audit_event_is_documented() {
    let text = std::fs::read_to_string(document()).expect("PROTOCOL.md");
    for code in ExecError::CODES {
        assert!(
            text.contains(&format!("`{code}`")),
            "{code} is not documented"
        );
    }
    let events = protocol::event_schemas();
    let audit = &events.iter().find(|(n, _)| *n == "audit").expect("audit").1;
    let kinds = audit["$defs"]["AuditKind"]["oneOf"]
        .as_array()
        .expect("the audit kinds");
    assert!(kinds.len() >= 12);
    for kind in kinds {
        let name = kind["const"].as_str().expect("a kind name");
        assert!(
            text.contains(&format!("`{name}`")),
            "audit event {name} is not documented"
        );
    }
    let _ = AuditKind::PolicyOverride;
}

#[test]
fn served_tool_schemas_are_the_documented_ones() {
    let documented = protocol::schemas();
    let index = std::sync::Arc::new(
        skills_index::SkillIndex::builder()
            .build()
            .expect("an empty index"),
    );
    let executor = skills_executor::Executor::builder(index).build();
    let session = executor.session(skills_executor::SessionContext::default());
    let served = protocol::tool_definitions(&session);
    assert_eq!(served.len(), protocol::RUNTIME_TOOLS.len());
    for tool in &served {
        let doc = documented
            .iter()
            .find(|r| r.name == tool.name)
            .unwrap_or_else(|| panic!("{} is not documented", tool.name));
        assert_eq!(doc.input, tool.input_schema, "{}", tool.name);
        assert!(!doc.host_only);
    }
    let defs = protocol::call(&session, "tool_definitions", json!({})).expect("served");
    assert_eq!(defs.as_array().map(Vec::len), Some(served.len()));
}
