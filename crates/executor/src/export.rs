//! The audit shipped over OpenTelemetry: [`OtlpExporter`] sends every audit event the
//! durable sink recorded as an OTLP log record (HTTP/protobuf, through `ureq` with rustls)
//! from a thread of its own. A decision never waits for it: events go through a bounded
//! queue of ours, and what does not fit is dropped, counted ([`ExportStats::dropped`]) and
//! warned of. The audit sink (the JSON-lines file) stays the durable record that fails
//! closed; the exporter is a shipper beside it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError};

use crate::audit::{AuditEvent, AuditSink};
use crate::otlp::{request, Origin};

/// How many events wait for the exporter at most, by default.
pub const DEFAULT_EXPORT_QUEUE: usize = 4096;
/// How many events one request carries at most.
const MAX_BATCH: usize = 512;
/// How long one export request may take, by default (connection included).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long dropping the last handle waits for the queue to be sent, by default.
const DEFAULT_DRAIN: Duration = Duration::from_secs(5);

/// Why an exporter cannot be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The endpoint is not an `http://` or `https://` URL.
    #[error("the OTLP endpoint {0:?} is not an http:// or https:// URL")]
    Endpoint(String),
    /// The exporter's thread could not be started.
    #[error("cannot start the OTLP exporter's thread: {0}")]
    Thread(#[source] std::io::Error),
}

impl ExportError {
    /// A stable code.
    pub fn code(&self) -> &'static str {
        match self {
            ExportError::Endpoint(_) => "OTLP_ENDPOINT_INVALID",
            ExportError::Thread(_) => "OTLP_THREAD",
        }
    }
}

/// What an exporter has done so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExportStats {
    /// Events the endpoint accepted.
    pub exported: u64,
    /// Events dropped because the queue was full.
    pub dropped: u64,
    /// Events lost because their request failed (unreachable endpoint, an error status).
    pub failed: u64,
}

enum Msg {
    Event(String),
    Flush(Sender<()>),
    Close(Sender<()>),
}

#[derive(Debug, Default)]
struct Counts {
    exported: AtomicU64,
    dropped: AtomicU64,
    failed: AtomicU64,
}

#[derive(Debug)]
struct Shared {
    tx: Sender<Msg>,
    counts: Arc<Counts>,
    drain: Duration,
    endpoint: String,
}

impl std::fmt::Debug for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Msg")
    }
}

/// Exports audit events as OTLP logs over HTTP/protobuf. Cheap to clone: clones share the
/// queue and the thread; the thread sends what is queued and stops when the last one is
/// dropped (waiting for that as long as the builder's `drain`, at most).
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use skills_executor::{Executor, OtlpExporter};
/// # let index = std::sync::Arc::new(skills_index::SkillIndex::builder().build()?);
/// let exporter = OtlpExporter::builder("http://127.0.0.1:4318")
///     .service_name("my-agent")
///     .build()?;
/// let executor = Executor::builder(index).audit_export(exporter.clone()).build();
/// // ... later: how much was lost
/// let stats = exporter.stats();
/// # let _ = (executor, stats); Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct OtlpExporter {
    shared: Arc<Shared>,
}

/// Configures an [`OtlpExporter`].
#[derive(Debug, Clone)]
pub struct OtlpExporterBuilder {
    endpoint: String,
    origin: Origin,
    queue: usize,
    timeout: Duration,
    drain: Duration,
}

/// The logs URL of an endpoint: a URL with no path (or `/`) gets OTLP's `/v1/logs`, as
/// a collector's base address; any other path is used as given.
fn logs_url(endpoint: &str) -> Result<String, ExportError> {
    let rest = endpoint
        .strip_prefix("http://")
        .or_else(|| endpoint.strip_prefix("https://"))
        .filter(|r| !r.is_empty() && !r.starts_with('/'))
        .ok_or_else(|| ExportError::Endpoint(endpoint.to_owned()))?;
    Ok(match rest.find('/') {
        None => format!("{endpoint}/v1/logs"),
        Some(i) if rest[i..] == *"/" => format!("{}v1/logs", endpoint),
        Some(_) => endpoint.to_owned(),
    })
}

/// This machine's name, for the resource's `host.name`.
fn host_name() -> Option<String> {
    #[cfg(unix)]
    {
        let name = rustix::system::uname();
        let name = name.nodename().to_string_lossy().into_owned();
        (!name.is_empty()).then_some(name)
    }
    #[cfg(not(unix))]
    {
        std::env::var("COMPUTERNAME").ok()
    }
}

impl OtlpExporter {
    /// A builder exporting to `endpoint` (`http://HOST:4318` sends to `/v1/logs`; a URL
    /// with a path is used as given).
    pub fn builder(endpoint: &str) -> OtlpExporterBuilder {
        OtlpExporterBuilder {
            endpoint: endpoint.to_owned(),
            origin: Origin {
                service_name: "agent-skills".to_owned(),
                host_name: host_name(),
            },
            queue: DEFAULT_EXPORT_QUEUE,
            timeout: DEFAULT_TIMEOUT,
            drain: DEFAULT_DRAIN,
        }
    }

    /// What the exporter has done so far.
    pub fn stats(&self) -> ExportStats {
        let c = &self.shared.counts;
        ExportStats {
            exported: c.exported.load(Ordering::Relaxed),
            dropped: c.dropped.load(Ordering::Relaxed),
            failed: c.failed.load(Ordering::Relaxed),
        }
    }

    /// The URL records are sent to.
    pub fn endpoint(&self) -> &str {
        &self.shared.endpoint
    }

    /// Waits until every event queued before the call has been sent (or its request has
    /// failed), for `timeout` at most; `false` when the time ran out.
    pub fn flush(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let (done, wait) = crossbeam_channel::bounded(1);
        if self
            .shared
            .tx
            .send_timeout(Msg::Flush(done), timeout)
            .is_err()
        {
            return false;
        }
        wait.recv_deadline(deadline).is_ok()
    }

    /// Queues one event's JSON; never waits. A full queue drops it, counted.
    pub(crate) fn offer(&self, json: &str) {
        match self.shared.tx.try_send(Msg::Event(json.to_owned())) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                let n = self.shared.counts.dropped.fetch_add(1, Ordering::Relaxed) + 1;
                if n.is_power_of_two() {
                    tracing::warn!(
                        target: "agent_skills::audit",
                        dropped = n,
                        "the OTLP export queue is full: audit events dropped from the export (the audit sink keeps them)"
                    );
                }
            }
        }
    }
}

impl OtlpExporterBuilder {
    /// The resource's `service.name` (default `agent-skills`).
    pub fn service_name(mut self, name: &str) -> OtlpExporterBuilder {
        name.clone_into(&mut self.origin.service_name);
        self
    }

    /// The resource's `host.name` (default: this machine's name).
    pub fn host_name(mut self, name: &str) -> OtlpExporterBuilder {
        self.origin.host_name = Some(name.to_owned());
        self
    }

    /// How many events may wait at most (default [`DEFAULT_EXPORT_QUEUE`], at least 1).
    pub fn queue(mut self, events: usize) -> OtlpExporterBuilder {
        self.queue = events.max(1);
        self
    }

    /// How long one request may take (default 10 s).
    pub fn timeout(mut self, timeout: Duration) -> OtlpExporterBuilder {
        self.timeout = timeout;
        self
    }

    /// How long dropping the last handle waits for the queue to be sent (default 5 s).
    pub fn drain(mut self, drain: Duration) -> OtlpExporterBuilder {
        self.drain = drain;
        self
    }

    /// The exporter, its thread started.
    pub fn build(self) -> Result<OtlpExporter, ExportError> {
        let url = logs_url(&self.endpoint)?;
        let (tx, rx) = crossbeam_channel::bounded(self.queue);
        let counts = Arc::new(Counts::default());
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(self.timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            .build()
            .into();
        let worker = Worker {
            rx,
            agent,
            url: url.clone(),
            origin: self.origin,
            counts: Arc::clone(&counts),
        };
        std::thread::Builder::new()
            .name("otlp-audit".to_owned())
            .spawn(move || worker.run())
            .map_err(ExportError::Thread)?;
        Ok(OtlpExporter {
            shared: Arc::new(Shared {
                tx,
                counts,
                drain: self.drain,
                endpoint: url,
            }),
        })
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        let deadline = Instant::now() + self.drain;
        let (done, wait) = crossbeam_channel::bounded(1);
        let closed = self.tx.send_deadline(Msg::Close(done), deadline).is_ok()
            && wait.recv_deadline(deadline).is_ok();
        if !closed {
            tracing::warn!(
                target: "agent_skills::audit",
                queued = self.tx.len(),
                "the OTLP exporter stopped before sending every queued audit event"
            );
        }
    }
}

/// The exporter's thread: takes what is queued, a batch at a time, and sends it.
struct Worker {
    rx: Receiver<Msg>,
    agent: ureq::Agent,
    url: String,
    origin: Origin,
    counts: Arc<Counts>,
}

/// The first pause after a failed request, during which batches are counted as failed
/// without a request (a collector that is down is not asked again at once).
const FIRST_PAUSE: Duration = Duration::from_millis(100);
/// The longest such pause (it doubles after each failure, and ends at a success).
const LONGEST_PAUSE: Duration = Duration::from_secs(10);

impl Worker {
    fn run(self) {
        let mut failures = 0u64;
        let mut pause = FIRST_PAUSE;
        let mut paused_until: Option<Instant> = None;
        while let Ok(first) = self.rx.recv() {
            let (lines, waiting, close) = self.batch(first);
            if !lines.is_empty() {
                if paused_until.is_some_and(|until| Instant::now() < until) {
                    // The endpoint failed a moment ago: not asked again yet.
                    self.counts
                        .failed
                        .fetch_add(lines.len() as u64, Ordering::Relaxed);
                } else if self.send(&lines) {
                    pause = FIRST_PAUSE;
                    paused_until = None;
                } else {
                    paused_until = Some(Instant::now() + pause);
                    pause = (pause * 2).min(LONGEST_PAUSE);
                    failures += 1;
                    if failures.is_power_of_two() {
                        tracing::warn!(
                            target: "agent_skills::audit",
                            url = %self.url,
                            failed = self.counts.failed.load(Ordering::Relaxed),
                            "the OTLP endpoint did not take audit events (the audit sink keeps them)"
                        );
                    }
                }
            }
            for done in waiting {
                let _ = done.send(());
            }
            if let Some(done) = close {
                let _ = done.send(());
                return;
            }
        }
    }

    /// What is queued after `first`, up to a batch: the events, the flushes waiting for
    /// them, and a close (which ends the batch).
    fn batch(&self, first: Msg) -> (Vec<String>, Vec<Sender<()>>, Option<Sender<()>>) {
        let mut lines = Vec::new();
        let mut waiting = Vec::new();
        let mut next = Some(first);
        while let Some(msg) = next.take() {
            match msg {
                Msg::Event(line) => lines.push(line),
                Msg::Flush(done) => waiting.push(done),
                Msg::Close(done) => return (lines, waiting, Some(done)),
            }
            if lines.len() < MAX_BATCH {
                next = self.rx.try_recv().ok();
            }
        }
        (lines, waiting, None)
    }

    /// Sends one batch; counts it as exported or failed.
    fn send(&self, lines: &[String]) -> bool {
        let body = prost::Message::encode_to_vec(&request(&self.origin, lines));
        let n = lines.len() as u64;
        let result = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/x-protobuf")
            .send(&body[..]);
        match result {
            Ok(response) if response.status().is_success() => {
                self.counts.exported.fetch_add(n, Ordering::Relaxed);
                true
            }
            Ok(response) => {
                tracing::debug!(status = %response.status(), "OTLP export refused");
                self.counts.failed.fetch_add(n, Ordering::Relaxed);
                false
            }
            Err(error) => {
                tracing::debug!(%error, "OTLP export failed");
                self.counts.failed.fetch_add(n, Ordering::Relaxed);
                false
            }
        }
    }
}

/// The durable sink, and the exporter after it: an event is offered for export only once
/// the durable sink has recorded it, and the call's outcome is the durable sink's alone.
#[derive(Debug)]
pub(crate) struct Exported {
    pub(crate) durable: Arc<dyn AuditSink>,
    pub(crate) exporter: OtlpExporter,
}

impl AuditSink for Exported {
    fn record(&self, event: &AuditEvent) -> std::io::Result<()> {
        self.durable.record(event)?;
        self.exporter.offer(&serde_json::to_string(event)?);
        Ok(())
    }

    fn record_json(&self, event: &AuditEvent, json: &str) -> std::io::Result<()> {
        self.durable.record_json(event, json)?;
        self.exporter.offer(json);
        Ok(())
    }

    fn record_batch(&self, events: &[(AuditEvent, String)]) -> std::io::Result<()> {
        self.durable.record_batch(events)?;
        for (_, json) in events {
            self.exporter.offer(json);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_get_the_logs_path_only_without_one() {
        for (given, url) in [
            ("http://h:4318", "http://h:4318/v1/logs"),
            ("http://h:4318/", "http://h:4318/v1/logs"),
            ("https://h/otlp/v1/logs", "https://h/otlp/v1/logs"),
        ] {
            assert_eq!(logs_url(given).unwrap(), url);
        }
        for bad in ["h:4318", "ftp://h", "http://", "http:///x"] {
            assert_eq!(logs_url(bad).unwrap_err().code(), "OTLP_ENDPOINT_INVALID");
        }
    }
}
