//! Audit events as OpenTelemetry log records: one `ExportLogsServiceRequest` (OTLP's
//! protobuf) per batch, one `ResourceLogs` per session, each event's fields as attributes
//! named after the OpenTelemetry semantic conventions where one fits
//! ([`ATTRIBUTE_NAMES`]). Encoding only: sending is `export.rs`'s.

use std::collections::BTreeMap;
use std::time::SystemTime;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    any_value, AnyValue, ArrayValue, InstrumentationScope, KeyValue,
};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs, SeverityNumber};
use opentelemetry_proto::tonic::resource::v1::Resource;

/// The instrumentation scope of every record.
pub const AUDIT_SCOPE: &str = "agent_skills.audit";

/// How each field of an audit event's JSON is named as a log record attribute. A field not
/// listed (a kind of field added later) is `agent_skills.<field>`. `timestamp` is the
/// record's time and `session_id` the resource's `session.id`, not attributes.
pub const ATTRIBUTE_NAMES: &[(&str, &str)] = &[
    ("event", "agent_skills.event"),
    ("correlation_id", "agent_skills.correlation_id"),
    ("agent_id", "gen_ai.agent.name"),
    ("task_id", "agent_skills.task_id"),
    ("tenant_id", "agent_skills.tenant_id"),
    ("skill_name", "agent_skills.skill.name"),
    ("tool_name", "gen_ai.tool.name"),
    ("path", "file.path"),
    ("rule", "agent_skills.rule"),
    ("digest", "agent_skills.skill.digest"),
    ("previous_digest", "agent_skills.skill.previous_digest"),
    ("activated_by", "agent_skills.activated_by"),
    ("plugin_id", "agent_skills.plugin.id"),
    ("option", "agent_skills.option"),
    ("tool_allowed", "agent_skills.tool.allowed"),
    ("allowed_tools", "agent_skills.allowed_tools"),
    ("error", "error.message"),
    ("duration_ms", "agent_skills.duration_ms"),
    ("query", "agent_skills.search.query"),
    ("result_count", "agent_skills.search.result_count"),
];

/// Who exports: the resource attributes every session's records share.
#[derive(Debug, Clone)]
pub(crate) struct Origin {
    pub(crate) service_name: String,
    pub(crate) host_name: Option<String>,
}

/// The attribute name of an event's JSON field.
fn attribute_name(field: &str) -> String {
    ATTRIBUTE_NAMES
        .iter()
        .find(|(f, _)| *f == field)
        .map_or_else(|| format!("agent_skills.{field}"), |(_, a)| (*a).to_owned())
}

fn string(text: impl Into<String>) -> AnyValue {
    AnyValue {
        value: Some(any_value::Value::StringValue(text.into())),
    }
}

fn key_value(key: impl Into<String>, value: AnyValue) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(value),
        ..KeyValue::default()
    }
}

/// A JSON value as an attribute value (an object, which no event holds, as its JSON text).
fn any(value: &serde_json::Value) -> AnyValue {
    use serde_json::Value as J;
    let value = match value {
        J::String(s) => any_value::Value::StringValue(s.clone()),
        J::Bool(b) => any_value::Value::BoolValue(*b),
        J::Number(n) => match n.as_i64() {
            Some(i) => any_value::Value::IntValue(i),
            None => any_value::Value::DoubleValue(n.as_f64().unwrap_or_default()),
        },
        J::Array(items) => any_value::Value::ArrayValue(ArrayValue {
            values: items.iter().map(any).collect(),
        }),
        J::Null | J::Object(_) => any_value::Value::StringValue(value.to_string()),
    };
    AnyValue { value: Some(value) }
}

fn nanos(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// Whether an event of this kind reports something refused or gone wrong.
fn is_warning(kind: &str, fields: &serde_json::Map<String, serde_json::Value>) -> bool {
    matches!(
        kind,
        "tool_restriction_violated"
            | "script_read_blocked"
            | "skill_activation_refused"
            | "skill_deactivation_refused"
    ) || fields.contains_key("error")
}

/// One event's JSON line as a log record, and its session; `None` for a line that is not
/// a JSON object (never made by the audit).
fn record(line: &str, observed: u64) -> Option<(String, LogRecord)> {
    let serde_json::Value::Object(fields) = serde_json::from_str(line).ok()? else {
        return None;
    };
    let kind = fields.get("event").and_then(|v| v.as_str()).unwrap_or("");
    let session = fields
        .get("session_id")
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_owned();
    let time = fields
        .get("timestamp")
        .and_then(|v| v.as_str())
        .and_then(|t| humantime::parse_rfc3339(t).ok())
        .map_or(observed, nanos);
    let (severity, text) = if is_warning(kind, &fields) {
        (SeverityNumber::Warn, "WARN")
    } else {
        (SeverityNumber::Info, "INFO")
    };
    let attributes = fields
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "timestamp" | "session_id"))
        .map(|(k, v)| key_value(attribute_name(k), any(v)))
        .collect();
    let record = LogRecord {
        time_unix_nano: time,
        observed_time_unix_nano: observed,
        severity_number: severity as i32,
        severity_text: text.to_owned(),
        event_name: format!("agent_skills.{kind}"),
        body: Some(string(line)),
        attributes,
        ..LogRecord::default()
    };
    Some((session, record))
}

/// The resource of one session's records.
fn resource(origin: &Origin, session: String) -> Resource {
    let mut attributes = vec![
        key_value("service.name", string(origin.service_name.clone())),
        key_value("service.version", string(env!("CARGO_PKG_VERSION"))),
        key_value(
            "process.pid",
            AnyValue {
                value: Some(any_value::Value::IntValue(i64::from(std::process::id()))),
            },
        ),
        key_value("session.id", string(session)),
    ];
    if let Some(host) = &origin.host_name {
        attributes.push(key_value("host.name", string(host.clone())));
    }
    Resource {
        attributes,
        ..Resource::default()
    }
}

/// The request that exports `lines` (audit events' JSON, in order), grouped by session
/// (sessions in order of first appearance, each session's events in order).
pub(crate) fn request(origin: &Origin, lines: &[String]) -> ExportLogsServiceRequest {
    let observed = nanos(SystemTime::now());
    let mut order: Vec<String> = Vec::new();
    let mut by_session: BTreeMap<String, Vec<LogRecord>> = BTreeMap::new();
    for (session, record) in lines.iter().filter_map(|l| record(l, observed)) {
        if !by_session.contains_key(&session) {
            order.push(session.clone());
        }
        by_session.entry(session).or_default().push(record);
    }
    let resource_logs = order
        .into_iter()
        .map(|session| {
            let log_records = by_session.remove(&session).unwrap_or_default();
            ResourceLogs {
                resource: Some(resource(origin, session)),
                scope_logs: vec![ScopeLogs {
                    scope: Some(InstrumentationScope {
                        name: AUDIT_SCOPE.to_owned(),
                        version: env!("CARGO_PKG_VERSION").to_owned(),
                        ..InstrumentationScope::default()
                    }),
                    log_records,
                    ..ScopeLogs::default()
                }],
                ..ResourceLogs::default()
            }
        })
        .collect();
    ExportLogsServiceRequest { resource_logs }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_becomes_an_attribute_and_sessions_stay_apart() {
        let origin = Origin {
            service_name: "test".to_owned(),
            host_name: Some("h".to_owned()),
        };
        let lines = [
            r#"{"timestamp":"2026-01-01T00:00:00.001Z","event":"tool_restriction_violated","session_id":"a","tool_name":"Bash","tool_allowed":false,"allowed_tools":["Read"],"new_field":3}"#.to_owned(),
            r#"{"timestamp":"2026-01-01T00:00:00.002Z","event":"skill_activated","session_id":"b","skill_name":"x"}"#.to_owned(),
            r#"{"timestamp":"2026-01-01T00:00:00.003Z","event":"skill_deactivated","session_id":"a","skill_name":"x"}"#.to_owned(),
        ];
        let req = request(&origin, &lines);
        assert_eq!(req.resource_logs.len(), 2);
        let first = &req.resource_logs[0].scope_logs[0].log_records;
        assert_eq!(first.len(), 2);
        let keys: Vec<&str> = first[0]
            .attributes
            .iter()
            .map(|kv| kv.key.as_str())
            .collect();
        assert_eq!(
            keys,
            [
                "agent_skills.allowed_tools",
                "agent_skills.event",
                "agent_skills.new_field",
                "agent_skills.tool.allowed",
                "gen_ai.tool.name"
            ]
        );
        assert_eq!(first[0].severity_number, SeverityNumber::Warn as i32);
        assert_eq!(first[0].time_unix_nano, 1_767_225_600_001_000_000);
        assert_eq!(
            first[0].event_name,
            "agent_skills.tool_restriction_violated"
        );
    }
}
