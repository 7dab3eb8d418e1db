//! `skillctl session`: the executor over JSON lines, so a host in any language can drive
//! it. One request per line on stdin, one response per line on stdout.

use std::io::{BufRead as _, Read as _, Write as _};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use serde_json::{json, Value};
use skills_executor::{AuditSink, Executor, JsonlFileSink, NullSink, Policy, SessionContext};
use skills_model::Layer;

use crate::roots::RootArgs;

/// Serve the runtime tools as JSON lines on stdin and stdout.
#[derive(Debug, clap::Args)]
pub(crate) struct SessionArgs {
    #[command(flatten)]
    roots: RootArgs,
    /// Append audit events to this file (JSON lines).
    #[arg(long, value_name = "FILE")]
    audit: Option<std::path::PathBuf>,
    /// fsync the audit file after every event.
    #[arg(long)]
    audit_fsync: bool,
    /// Trust a layer to run scripts and hooks (repeatable; project is untrusted by default).
    #[arg(long, value_name = "LAYER")]
    trust: Vec<Layer>,
    /// The cap on active skills.
    #[arg(long, default_value_t = 8)]
    max_active: usize,
    /// The agent type (for skills' `scope`).
    #[arg(long)]
    agent: Option<String>,
    /// The tenant (for skills' `scope`).
    #[arg(long)]
    tenant: Option<String>,
    /// The environment (for skills' `scope`).
    #[arg(long)]
    environment: Option<String>,
    /// Declare a tool's primary argument for check_tool: TOOL=FIELD (repeatable).
    #[arg(long, value_name = "TOOL=FIELD")]
    primary_arg: Vec<String>,
}

pub(crate) fn run(args: &SessionArgs) -> Result<ExitCode> {
    let index = Arc::new(args.roots.build_index(false)?);
    let mut policy = Policy::builder().max_active(args.max_active);
    for layer in &args.trust {
        policy = policy.trust(*layer);
    }
    for spec in &args.primary_arg {
        let (tool, field) = spec
            .split_once('=')
            .with_context(|| format!("--primary-arg {spec:?}: expected TOOL=FIELD"))?;
        policy = policy.primary_arg(tool, field);
    }
    let sink: Arc<dyn AuditSink> = match &args.audit {
        Some(path) => Arc::new(
            JsonlFileSink::open(path)
                .with_context(|| format!("opening the audit file {}", path.display()))?
                .with_fsync(args.audit_fsync),
        ),
        None => Arc::new(NullSink),
    };
    let executor = Executor::builder(index)
        .policy(policy.build())
        .audit_sink(sink)
        .build();
    let mut context = SessionContext::builder();
    if let Some(a) = &args.agent {
        context = context.agent(a);
    }
    if let Some(t) = &args.tenant {
        context = context.tenant(t);
    }
    if let Some(e) = &args.environment {
        context = context.environment(e);
    }
    let session = executor.session(context.build());
    // Whatever ends the loop (end of input, a broken pipe), the task guard deactivates
    // every skill, audited.
    let _task = session.task();
    let mut stdin = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    // Lines are read as bytes: a line that is not UTF-8 is a malformed request, answered
    // like any other, and the session goes on.
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        // A request line is bounded: a line that never ends cannot grow memory without limit.
        let read = (&mut stdin)
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut bytes)
            .context("reading stdin")?;
        if read == 0 {
            break;
        }
        if bytes.len() as u64 > MAX_LINE {
            // Skip the rest of the line, then answer it.
            if !bytes.ends_with(b"\n") {
                let mut sink = Vec::new();
                while {
                    sink.clear();
                    let n = (&mut stdin)
                        .take(1 << 16)
                        .read_until(b'\n', &mut sink)
                        .context("reading stdin")?;
                    n > 0 && !sink.ends_with(b"\n")
                } {}
            }
            let message = format!("the request line is over {MAX_LINE} bytes");
            writeln!(
                out,
                "{}",
                error(&Value::Null, "SKILL_BAD_REQUEST", &message)
            )?;
            out.flush()?;
            continue;
        }
        let response = match std::str::from_utf8(&bytes) {
            Ok(line) if line.trim().is_empty() => continue,
            Ok(line) => respond(&session, line.trim_end_matches(['\n', '\r'])),
            Err(e) => error(
                &Value::Null,
                "SKILL_BAD_REQUEST",
                &format!("the request line is not UTF-8: {e}"),
            ),
        };
        writeln!(out, "{response}")?;
        out.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The longest request line served: 4 MiB.
const MAX_LINE: u64 = 4 << 20;

fn error(id: &Value, code: &str, message: &str) -> Value {
    json!({"id": id, "ok": false, "error": {"code": code, "message": message}})
}

fn respond(session: &skills_executor::Session, line: &str) -> Value {
    let request: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => {
            return error(
                &Value::Null,
                "SKILL_BAD_REQUEST",
                &format!("not a JSON request: {e}"),
            )
        }
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let Some(tool) = request.get("tool").and_then(Value::as_str) else {
        return error(
            &id,
            "SKILL_BAD_REQUEST",
            "a request needs \"tool\" (a string) and \"input\"",
        );
    };
    let input = request.get("input").cloned().unwrap_or(Value::Null);
    match tool {
        "check_tool" => {
            let Some(name) = input.get("tool").and_then(Value::as_str) else {
                return error(
                    &id,
                    "SKILL_BAD_INPUT",
                    "check_tool needs input.tool (a string)",
                );
            };
            let call_input = input.get("input").cloned().unwrap_or(Value::Null);
            let d = session.check_tool(name, &call_input);
            let decision = if d.allowed { "allow" } else { "deny" };
            json!({"id": id, "ok": true, "output": {"decision": decision, "reason": d.reason}})
        }
        "tool_definitions" => json!({"id": id, "ok": true, "output": session.tool_definitions()}),
        "instructions" => {
            let budget = input
                .get("budget")
                .and_then(Value::as_u64)
                .and_then(|b| usize::try_from(b).ok());
            json!({"id": id, "ok": true, "output": {"instructions": session.instructions(budget)}})
        }
        _ => match session.call_tool(tool, input) {
            Ok(output) => json!({"id": id, "ok": true, "output": output}),
            Err(e) => error(&id, e.code(), &e.to_string()),
        },
    }
}
