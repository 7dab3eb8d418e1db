//! The protocol layer: every request and response on the wire, in one place, for every
//! transport. A request (a tool name and its JSON input) becomes a typed call on a
//! [`Session`](skills_executor::Session); its typed result or error becomes the response.
//! `skillctl session` only moves lines through [`respond_line`] (and its batches); the MCP
//! server calls [`call`] for the same tools.
//!
//! Each request is defined once, in the catalogue: its name, its input (a Rust type
//! deriving `Deserialize` and `JsonSchema`), its output (the typed value the session
//! returns), its audience and whether it may run programs. Dispatch, the tool definitions
//! ([`tool_definitions`]), the schemas documented in PROTOCOL.md ([`schemas`]),
//! [`HOST_ONLY`], [`RUNTIME_TOOLS`] and [`may_run_programs`] all come from it.

mod catalogue;
mod events;
mod input;
mod json_text;
mod output;
mod schema;
mod wire;

pub use catalogue::{
    call, call_cancellable, hello, may_run_programs, schemas, tool_definitions, HOST_ONLY,
    RUNTIME_TOOLS,
};
pub use events::{event_line, event_schemas, events, Event};
pub use json_text::{json_str, json_str_contents, JsonOut};
pub use schema::{RequestSchema, ToolDefinition};
pub use skills_model::{cut_text, MESSAGE_MAX};
pub use wire::{
    error_line, error_text, respond_batch, respond_batch_part, respond_line, BATCH_ANSWER_BYTES,
};

/// The protocol version `hello` reports. It changes only when a request, field or code
/// changes meaning or goes away; additions keep it.
pub const PROTOCOL_VERSION: &str = "1";
