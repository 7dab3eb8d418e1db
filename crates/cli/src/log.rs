//! What the libraries log at `warn` and above, written to standard error for the commands a
//! person runs once (`list`, `validate`, `show`, ...): a skill folder left out, a folder that
//! cannot be listed. The libraries log through `tracing` and never print; without a
//! subscriber these reasons reached nobody, and a skill went missing without a word.
//!
//! A subscriber of its own, a screenful of code, rather than `tracing-subscriber`'s: only
//! events, only their message and fields, each line escaped as the rest of human output.

use std::fmt::Write as _;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Writes warnings and errors to standard error, from now on, for the rest of the process.
pub(crate) fn warnings_to_stderr() {
    // Already set (it cannot be, in this binary) is no reason to fail a command.
    let _ = tracing::subscriber::set_global_default(Warnings);
}

/// The subscriber: events at `warn` and `error`, no spans.
struct Warnings;

/// An event's message and fields as one line.
#[derive(Default)]
struct Line {
    message: String,
    fields: String,
}

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let sep = if self.fields.is_empty() { "" } else { ", " };
            let _ = write!(self.fields, "{sep}{}: {value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let sep = if self.fields.is_empty() { "" } else { ", " };
            let _ = write!(self.fields, "{sep}{}: {value}", field.name());
        }
    }
}

impl Subscriber for Warnings {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= Level::WARN
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut line = Line::default();
        event.record(&mut line);
        let level = if *event.metadata().level() == Level::ERROR {
            "error"
        } else {
            "warning"
        };
        let text = if line.fields.is_empty() {
            line.message
        } else {
            format!("{} ({})", line.message, line.fields)
        };
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr().lock(),
            format_args!("skillctl: {level}: {}\n", crate::out::one_line(&text)),
        );
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}
