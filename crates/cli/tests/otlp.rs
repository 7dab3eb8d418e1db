//! The audit over OpenTelemetry: `--otlp-endpoint` on `skillctl session` and `skillctl mcp`
//! against an OTLP/HTTP receiver the test starts on loopback, which decodes every
//! `ExportLogsServiceRequest` with `opentelemetry-proto`. Every event the audit file holds
//! arrives once, with its fields; an endpoint nobody answers leaves every call answered and
//! the file whole.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{self, Receiver, Sender};

use common::{run, skillctl, Fixture, Spawned, DEADLINE};
use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, KeyValue};
use prost::Message as _;
use serde_json::{json, Value};

/// One request the receiver took: its path, content type and decoded body.
struct Received {
    path: String,
    content_type: String,
    request: ExportLogsServiceRequest,
}

/// Reads one HTTP/1.1 request (head and `Content-Length` body); `None` at the end.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(String, String, Vec<u8>)> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let path = line.split(' ').nth(1)?.to_owned();
    let (mut length, mut content_type) = (0usize, String::new());
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).ok()? == 0 {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().ok()?,
            "content-type" => value.trim().clone_into(&mut content_type),
            _ => {}
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((path, content_type, body))
}

/// An OTLP/HTTP logs receiver on loopback: every request decoded and sent on the channel,
/// answered 200 with an empty `ExportLogsServiceResponse`.
fn receiver() -> (String, Receiver<Received>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let tx: Sender<Received> = tx.clone();
            std::thread::spawn(move || {
                let mut writer = stream.try_clone().expect("clone");
                let mut reader = BufReader::new(stream);
                while let Some((path, content_type, body)) = read_request(&mut reader) {
                    let request = ExportLogsServiceRequest::decode(body.as_slice())
                        .expect("an ExportLogsServiceRequest");
                    let _ = tx.send(Received {
                        path,
                        content_type,
                        request,
                    });
                    let _ = writer.write_all(
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n",
                    );
                }
            });
        }
    });
    (format!("http://{addr}"), rx)
}

/// An attribute value as JSON, to compare with the audit line's field.
fn json_of(value: &AnyValue) -> Value {
    match value.value.as_ref().expect("a value") {
        any_value::Value::StringValue(s) => json!(s),
        any_value::Value::BoolValue(b) => json!(b),
        any_value::Value::IntValue(i) => json!(i),
        any_value::Value::DoubleValue(d) => json!(d),
        any_value::Value::ArrayValue(a) => Value::Array(a.values.iter().map(json_of).collect()),
        other => panic!("unexpected attribute value {other:?}"),
    }
}

fn attributes(list: &[KeyValue]) -> BTreeMap<String, Value> {
    list.iter()
        .map(|kv| (kv.key.clone(), json_of(kv.value.as_ref().expect("value"))))
        .collect()
}

/// Every record received (until the channel is empty), checked against the audit file:
/// each line arrives exactly once, as a record whose body is the line, whose attributes
/// hold every field, under a resource naming the service, the host and the session.
fn check_against_file(rx: &Receiver<Received>, audit: &std::path::Path, service: &str) -> usize {
    let lines: Vec<String> = std::fs::read_to_string(audit)
        .expect("the audit file")
        .lines()
        .map(str::to_owned)
        .collect();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    while let Ok(got) = rx.try_recv() {
        assert_eq!(got.path, "/v1/logs");
        assert_eq!(got.content_type, "application/x-protobuf");
        for resource_logs in &got.request.resource_logs {
            let resource = attributes(
                &resource_logs
                    .resource
                    .as_ref()
                    .expect("a resource")
                    .attributes,
            );
            assert_eq!(resource["service.name"], service, "{resource:?}");
            assert!(resource["host.name"].is_string(), "{resource:?}");
            for scope in &resource_logs.scope_logs {
                assert_eq!(
                    scope.scope.as_ref().expect("scope").name,
                    "agent_skills.audit"
                );
                for record in &scope.log_records {
                    let body = json_of(record.body.as_ref().expect("a body"));
                    let line = body.as_str().expect("the line").to_owned();
                    let event: Value = serde_json::from_str(&line).expect("JSON");
                    assert_eq!(resource["session.id"], event["session_id"]);
                    assert_eq!(
                        record.event_name,
                        format!("agent_skills.{}", event["event"].as_str().unwrap())
                    );
                    let attrs = attributes(&record.attributes);
                    for (field, value) in event.as_object().expect("an object") {
                        if field == "timestamp" || field == "session_id" {
                            continue;
                        }
                        let name = skills_executor::ATTRIBUTE_NAMES
                            .iter()
                            .find(|(f, _)| f == field)
                            .map(|(_, a)| (*a).to_owned())
                            .unwrap_or_else(|| format!("agent_skills.{field}"));
                        assert_eq!(attrs.get(&name), Some(value), "{name} of {line}");
                    }
                    assert!(record.time_unix_nano > 0);
                    *seen.entry(line).or_default() += 1;
                }
            }
        }
    }
    for line in &lines {
        assert_eq!(seen.remove(line), Some(1), "arrived once: {line}");
    }
    assert!(seen.is_empty(), "records the file does not hold: {seen:?}");
    lines.len()
}

#[test]
fn every_audit_event_of_a_session_arrives_once_with_its_fields() {
    let (endpoint, rx) = receiver();
    let f = Fixture::new();
    f.skill("gitter", "allowed-tools: Bash(git:*) Read\n", "# Gitter\n");
    f.file("gitter", "references/guide.md", "The guide.\n");
    f.skill("other", "", "# Other\n");
    let audit = f.path().join("audit.jsonl");
    let audit_arg = format!("--audit={}", audit.display());
    let otlp_arg = format!("--otlp-endpoint={endpoint}");
    let mut s = f.session(&[&audit_arg, &otlp_arg, "--allow-skill-writes"]);
    assert!(s.bash("ls"), "no skill active: allowed");
    s.ok("skills_load", json!({"names": ["gitter"]}));
    assert!(s.bash("git status"));
    assert!(!s.bash("rm -rf /"));
    s.ok("skills_read", json!({"path": "references/guide.md"}));
    s.ok("skills_search", json!({"query": "other"}));
    s.ok("skills_unload", json!({"all": true}));
    let (status, _) = s.finish();
    assert!(status.success());
    let kinds: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["event"].clone())
        .collect();
    for kind in [
        "policy_override",
        "tool_checked_without_skill",
        "skill_activated",
        "tool_execution_in_skill",
        "tool_restriction_violated",
        "skill_file_read",
        "skills_searched",
        "skill_deactivated",
    ] {
        assert!(kinds.contains(&json!(kind)), "{kind} in {kinds:?}");
    }
    // The process flushed its export before it exited: everything has arrived.
    assert_eq!(check_against_file(&rx, &audit, "skillctl"), kinds.len());
}

#[test]
fn every_audit_event_of_an_mcp_session_arrives_once() {
    let (endpoint, rx) = receiver();
    let f = Fixture::new();
    f.skill("gitter", "allowed-tools: Bash(git:*)\n", "# Gitter\n");
    let audit = f.path().join("audit.jsonl");
    let mut proc = Spawned::start(
        skillctl()
            .args(["mcp", "--no-defaults", &f.root_arg("personal")])
            .arg(format!("--audit={}", audit.display()))
            .arg(format!("--otlp-endpoint={endpoint}"))
            .current_dir(f.path()),
    );
    let stdin = proc.stdin.as_mut().expect("stdin");
    for message in [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "skills_load", "arguments": {"names": ["gitter"]}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "skills_search", "arguments": {"query": "git"}}}),
    ] {
        writeln!(stdin, "{message}").expect("write");
    }
    stdin.flush().expect("flush");
    let mut answered = 0;
    while answered < 3 {
        let line = proc.lines.recv_timeout(DEADLINE).expect("a line");
        let v: Value = serde_json::from_str(&line).expect("JSON");
        if v.get("id").is_some() {
            answered += 1;
        }
    }
    let (status, _) = proc.finish();
    assert!(status.success());
    let n = check_against_file(&rx, &audit, "skillctl");
    assert!(n >= 3, "activation, search, deactivation: {n}");
}

#[test]
fn an_endpoint_nobody_answers_leaves_every_call_answered_and_the_file_whole() {
    // A loopback port nothing listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let f = Fixture::new();
    f.skill("gitter", "allowed-tools: Bash(git:*)\n", "# Gitter\n");
    let audit = f.path().join("audit.jsonl");
    let audit_arg = format!("--audit={}", audit.display());
    let otlp_arg = format!("--otlp-endpoint=http://127.0.0.1:{port}");
    let mut s = f.session(&[&audit_arg, &otlp_arg]);
    s.ok("skills_load", json!({"names": ["gitter"]}));
    for _ in 0..200 {
        assert!(s.bash("git log"));
        assert!(!s.bash("curl x"));
    }
    let (status, _) = s.finish();
    assert!(status.success());
    let lines = std::fs::read_to_string(&audit).unwrap().lines().count();
    assert_eq!(
        lines,
        1 + 400 + 1,
        "activation, 400 decisions, deactivation"
    );
}

#[test]
fn an_endpoint_that_is_not_an_http_url_is_a_usage_error() {
    let f = Fixture::new();
    run(skillctl()
        .args([
            "session",
            "--no-defaults",
            "--otlp-endpoint",
            "collector:4318",
        ])
        .current_dir(f.path()))
    .fails(2, "OTLP endpoint");
}
