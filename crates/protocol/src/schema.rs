//! The JSON Schemas of inputs and outputs, as the catalogue serves them in tool
//! definitions and PROTOCOL.md documents them, and the shapes they are served in.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

/// A tool as LLM APIs describe one: a name (letters, digits, underscores), a description
/// and a JSON Schema for its input.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ToolDefinition {
    /// The tool's name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of its input.
    pub input_schema: Value,
}

/// One request's schemas, as documented in PROTOCOL.md.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestSchema {
    /// The request's name.
    pub name: &'static str,
    /// Whether it is for the host's code only.
    pub host_only: bool,
    /// JSON Schema of its input.
    pub input: Value,
    /// JSON Schema of its output.
    pub output: Value,
}

/// The JSON Schema of a request's input, as LLM APIs take it: an object schema, untitled.
pub(crate) fn input_schema<T: JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
        map.remove("title");
        map.remove("description");
        // LLM APIs want an object schema with its properties, even when there are none.
        map.entry("properties").or_insert_with(|| json!({}));
    }
    schema
}

/// The JSON Schema of a request's output.
pub(crate) fn output_schema<T: JsonSchema>() -> Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
    }
    schema
}
