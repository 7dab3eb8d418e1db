//! The audit's OpenTelemetry exporter beside the durable sink: a full queue drops events
//! (counted, readable from the API) and never holds up a decision; an event the durable
//! sink refuses fails the call closed and is not exported; the endpoint is checked.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::Env;
use serde_json::json;
use skills_executor::{
    AuditEvent, AuditKind, AuditSink, Executor, MemorySink, OtlpExporter, SessionContext,
};

/// A durable sink that fails while `fail` is set.
#[derive(Debug, Default)]
struct FlakySink {
    fail: AtomicBool,
    inner: MemorySink,
}

impl AuditSink for FlakySink {
    fn record(&self, event: &AuditEvent) -> std::io::Result<()> {
        if self.fail.load(Ordering::SeqCst) {
            return Err(std::io::Error::other("disk full"));
        }
        self.inner.record(event)
    }
}

#[test]
fn a_full_export_queue_drops_and_counts_and_never_holds_up_a_decision() {
    // Bound and never accepted: a request to it waits for an answer that never comes.
    let blackhole = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let endpoint = format!("http://{}", blackhole.local_addr().expect("addr"));
    let exporter = OtlpExporter::builder(&endpoint)
        .queue(4)
        .timeout(Duration::from_secs(600))
        .drain(Duration::ZERO)
        .build()
        .expect("an exporter");
    let env = Env::new();
    let sink: Arc<dyn AuditSink> = env.sink.clone();
    let executor = Executor::builder(env.index())
        .audit_sink(sink)
        .audit_export(exporter.clone())
        .build();
    let session = executor.session(SessionContext::default());
    const CALLS: u64 = 300;
    for _ in 0..CALLS {
        assert!(
            session
                .check_tool("Bash", &json!({"command": "ls"}))
                .allowed
        );
    }
    let recorded = env
        .sink
        .events()
        .iter()
        .filter(|e| e.event == AuditKind::ToolCheckedWithoutSkill)
        .count() as u64;
    assert_eq!(recorded, CALLS, "the durable sink holds every event");
    let stats = executor.audit_export().expect("the exporter").stats();
    assert_eq!(stats, exporter.stats(), "one exporter, two handles");
    assert_eq!(stats.exported, 0);
    assert!(stats.dropped > 0, "{stats:?}");
    assert!(stats.dropped <= CALLS, "{stats:?}");
    assert!(
        !exporter.flush(Duration::ZERO),
        "the request under way never ends"
    );
    drop(blackhole);
}

#[test]
fn an_event_the_durable_sink_refuses_fails_the_call_and_is_not_exported() {
    // A loopback port nothing listens on: each request is refused at once, and counted.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let exporter = OtlpExporter::builder(&format!("http://127.0.0.1:{port}/v1/logs"))
        .build()
        .expect("an exporter");
    assert_eq!(
        exporter.endpoint(),
        format!("http://127.0.0.1:{port}/v1/logs")
    );
    let env = Env::new();
    let sink = Arc::new(FlakySink::default());
    let dyn_sink: Arc<dyn AuditSink> = sink.clone();
    let executor = Executor::builder(env.index())
        .audit_sink(dyn_sink)
        .audit_export(exporter.clone())
        .build();
    let session = executor.session(SessionContext::default());
    sink.fail.store(true, Ordering::SeqCst);
    for _ in 0..3 {
        assert!(
            !session
                .check_tool("Bash", &json!({"command": "ls"}))
                .allowed
        );
    }
    assert!(exporter.flush(Duration::from_secs(60)));
    assert_eq!(
        exporter.stats().failed,
        0,
        "nothing recorded, nothing offered"
    );
    sink.fail.store(false, Ordering::SeqCst);
    for _ in 0..3 {
        assert!(
            session
                .check_tool("Bash", &json!({"command": "ls"}))
                .allowed
        );
    }
    assert!(exporter.flush(Duration::from_secs(60)));
    let stats = exporter.stats();
    assert_eq!((stats.failed, stats.dropped, stats.exported), (3, 0, 0));
}

#[test]
fn an_endpoint_must_be_an_http_url() {
    for bad in ["collector:4318", "ftp://collector", "http://"] {
        let err = OtlpExporter::builder(bad).build().unwrap_err();
        assert_eq!(err.code(), "OTLP_ENDPOINT_INVALID", "{bad}");
        assert!(err.to_string().contains(bad), "{err}");
    }
}
