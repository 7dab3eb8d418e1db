//! The library's `tracing` output forwarded to MCP clients as `notifications/message`, at
//! the level each session asked for with `logging/setLevel` (none until it asks).
//! [`McpLogs`] is the subscriber a binary installs; each session holds a [`LogSink`] it
//! registers here. Only the workspace's own events (targets `skills_*`) are forwarded:
//! rmcp's, logged while a notification is sent, would loop.
#![allow(deprecated)] // MCP logging: deprecated for 2026-07-28 (SEP-2577), current before.

use std::sync::{Arc, Mutex, PoisonError, Weak};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

/// The messages one session may hold unsent; more are dropped (a slow client does not
/// make the process hold its logs without bound).
const QUEUE: usize = 1024;

/// Every session's sink, while the session lives.
static SINKS: Mutex<Vec<Weak<LogSink>>> = Mutex::new(Vec::new());

/// One session's side: the level it asked for, and the queue its sending task drains.
#[derive(Debug)]
pub(crate) struct LogSink {
    level: Mutex<Option<LoggingLevel>>,
    queue: tokio::sync::mpsc::Sender<LoggingMessageNotificationParam>,
}

impl LogSink {
    /// A sink, registered, and the receiving end its session drains to its client.
    pub(crate) fn register() -> (Arc<LogSink>, LogQueue) {
        let (queue, rx) = tokio::sync::mpsc::channel(QUEUE);
        let sink = Arc::new(LogSink {
            level: Mutex::new(None),
            queue,
        });
        let mut sinks = SINKS.lock().unwrap_or_else(PoisonError::into_inner);
        sinks.retain(|s| s.strong_count() > 0);
        sinks.push(Arc::downgrade(&sink));
        (sink, rx)
    }

    /// `logging/setLevel`: messages at `level` and above are sent from now on.
    pub(crate) fn set_level(&self, request: &rmcp::model::SetLevelRequestParams) {
        *self.level.lock().unwrap_or_else(PoisonError::into_inner) = Some(request.level);
    }
}

/// A level's rank, lowest first.
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// The MCP level of a `tracing` level.
fn level_of(level: Level) -> LoggingLevel {
    match level {
        Level::ERROR => LoggingLevel::Error,
        Level::WARN => LoggingLevel::Warning,
        Level::INFO => LoggingLevel::Info,
        _ => LoggingLevel::Debug,
    }
}

/// The subscriber that forwards the workspace's events to the MCP sessions that asked for
/// them (`skillctl mcp` installs it as the global default).
#[derive(Debug, Default, Clone, Copy)]
pub struct McpLogs;

/// An event's fields as a JSON object.
#[derive(Default)]
struct Fields(Map<String, Value>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().to_owned(), Value::String(format!("{value:?}")));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0
            .insert(field.name().to_owned(), Value::String(value.to_owned()));
    }
}

fn ours(metadata: &Metadata<'_>) -> bool {
    metadata.target().starts_with("skills_")
}

impl Subscriber for McpLogs {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        if ours(metadata) && metadata.is_event() {
            Interest::sometimes()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        if !ours(metadata) {
            return false;
        }
        let wanted = rank(level_of(*metadata.level()));
        SINKS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(Weak::upgrade)
            .any(|s| {
                s.level
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .is_some_and(|l| rank(l) <= wanted)
            })
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let metadata = event.metadata();
        let level = level_of(*metadata.level());
        let mut fields = Fields::default();
        event.record(&mut fields);
        let mut data = fields.0;
        let message = data.remove("message").unwrap_or(Value::Null);
        let data = serde_json::json!({"message": message, "fields": data});
        let sinks: Vec<Arc<LogSink>> = SINKS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        for sink in sinks {
            let wanted = *sink.level.lock().unwrap_or_else(PoisonError::into_inner);
            if wanted.is_some_and(|l| rank(l) <= rank(level)) {
                let mut param = LoggingMessageNotificationParam::new(level, data.clone());
                param.logger = Some(metadata.target().to_owned());
                // A full queue drops the message: the client is not reading.
                let _ = sink.queue.try_send(param);
            }
        }
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// The messages waiting for one session's client.
pub(crate) type LogQueue = tokio::sync::mpsc::Receiver<LoggingMessageNotificationParam>;

/// Sends a session's messages to its client, as `notifications/message`, until the client
/// goes.
pub(crate) fn forward(peer: rmcp::Peer<rmcp::RoleServer>, mut queue: LogQueue) {
    tokio::spawn(async move {
        while let Some(message) = queue.recv().await {
            if peer.notify_logging_message(message).await.is_err() {
                return;
            }
        }
    });
}
