//! `skillctl mcp`: the skills over the Model Context Protocol (stdio, or streamable HTTP
//! with `--http`). Only flags here; the server is `skills_mcp`.

use std::io::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use skills_mcp::{HttpOptions, Transport, UnauthenticatedNetwork};

use crate::session::SessionOptions;

/// Serve the runtime tools, skill files and prompts over MCP.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  skillctl mcp
  skillctl mcp --http 127.0.0.1:8765 --token-file token.txt

Exit status: 0 when the client disconnects (stdio) or on SIGINT/SIGTERM (HTTP), 2 usage error")]
pub(crate) struct McpArgs {
    #[command(flatten)]
    options: SessionOptions,
    /// Serve streamable HTTP at ADDR (path /mcp) instead of stdio; prints
    /// {"listening": "ADDR"} on stderr once bound (port 0 picks one).
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// HTTP: require this file's content as a bearer token. Needed to serve an address
    /// beyond loopback, unless --allow-unauthenticated-network.
    #[arg(long, value_name = "FILE")]
    token_file: Option<std::path::PathBuf>,
    /// HTTP: serve an address beyond loopback without --token-file. Any peer that reaches
    /// it gets a session with this host's policy and trust (the Host check stops
    /// browsers, not peers).
    #[arg(long)]
    allow_unauthenticated_network: bool,
    /// HTTP: a browser origin allowed beyond loopback ones (repeatable).
    #[arg(long, value_name = "ORIGIN")]
    allow_origin: Vec<String>,
    /// HTTP: seconds an idle MCP session lives.
    #[arg(long, value_name = "SECS", default_value_t = 1800)]
    session_idle: u64,
    /// HTTP: the most MCP sessions open at once; a request opening one more gets 503.
    #[arg(long, value_name = "N", default_value_t = skills_mcp::DEFAULT_MAX_SESSIONS, value_parser = clap::value_parser!(usize))]
    max_sessions: usize,
    /// MCP's skills extension: serve a skill of a layer trusted to run scripts whole,
    /// its scripts readable as resources (by default a skill with scripts is not served:
    /// a manifest is complete, and scripts are run, not read). Audited as policy_override.
    #[arg(long)]
    serve_scripts: bool,
}

pub(crate) fn run(args: &McpArgs) -> Result<ExitCode> {
    // The libraries' logs go to the sessions that ask for them (`logging/setLevel`).
    let _ = tracing::subscriber::set_global_default(skills_mcp::McpLogs);
    let serving = if args.serve_scripts {
        skills_executor::ScriptServing::TrustedLayers
    } else {
        skills_executor::ScriptServing::Withheld
    };
    let executor = args.options.executor_serving(serving)?;
    let context = args.options.context();
    let transport = match args.http {
        None => Transport::Stdio,
        Some(addr) => {
            let token = match &args.token_file {
                Some(file) => Some(
                    std::fs::read_to_string(file)
                        .with_context(|| format!("reading the token file {}", file.display()))?
                        .trim()
                        .to_owned(),
                ),
                None => None,
            };
            let unauthenticated_network = if args.allow_unauthenticated_network {
                UnauthenticatedNetwork::Allowed
            } else {
                UnauthenticatedNetwork::Refused
            };
            if token.is_none()
                && unauthenticated_network == UnauthenticatedNetwork::Allowed
                && !addr.ip().to_canonical().is_loopback()
            {
                let _ = writeln!(
                    std::io::stderr(),
                    "skillctl: warning: serving {addr} without a token (--allow-unauthenticated-network): any peer that reaches it gets a session"
                );
            }
            Transport::Http {
                addr,
                options: HttpOptions {
                    token,
                    allowed_origins: args.allow_origin.clone(),
                    session_idle: Some(Duration::from_secs(args.session_idle)),
                    max_sessions: Some(args.max_sessions),
                    unauthenticated_network,
                    ..HttpOptions::default()
                },
                on_listening: Box::new(|bound| {
                    let line = serde_json::json!({ "listening": bound.to_string() });
                    let _ = writeln!(std::io::stderr(), "{line}");
                }),
            }
        }
    };
    let flushed = executor.clone();
    let served = skills_mcp::run(executor, context, transport);
    crate::session::flush_export(&flushed);
    served.map_err(|e| match (&e, &args.token_file) {
        (skills_mcp::McpError::EmptyToken, Some(file)) => anyhow::Error::new(e).context(format!(
            "the token file {} is empty or blank",
            file.display()
        )),
        _ => e.into(),
    })?;
    Ok(ExitCode::SUCCESS)
}
