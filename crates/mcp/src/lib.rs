//! The MCP transport of agent-skills, on the official Rust SDK `rmcp`: the runtime tools
//! (through the executor's protocol layer, the same calls, decisions and audit as the
//! JSON-lines session), skill files as `skill://{layer}/{name}/{+path}` resources,
//! user-invocable skills as prompts, and `list_changed` notifications when skills change.
//! Over stdio, or streamable HTTP with a session per client.
//!
//! Tokio lives here only: the executor stays synchronous, and its calls run on blocking
//! threads.

mod complete;
mod connect;
mod extension;
mod logs;
mod server;
mod source;
mod uri;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::SessionManager as _;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt as _;
use skills_executor::{Executor, SessionContext};
use thiserror::Error;

pub use crate::connect::{BearerToken, McpServer, McpTransport, SourceError, TokenError};
pub use crate::logs::McpLogs;
pub use crate::server::MAX_PROGRAM_CALLS;
use crate::server::{Endings, SkillsServer};
pub use crate::source::McpSource;

/// Errors of the MCP server, with stable codes.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum McpError {
    /// The transport failed (stdio closed abnormally, the HTTP listener).
    #[error("MCP transport: {0}")]
    Transport(#[source] std::io::Error),
    /// The MCP session could not start (the initialize handshake failed).
    #[error("MCP session: {0}")]
    Session(String),
    /// The HTTP transport was given an empty bearer token, which would admit any request
    /// that sends `Authorization: Bearer ` with nothing after it.
    #[error("the bearer token is empty, which would admit any request that sends `Authorization: Bearer ` with nothing after it: give a token, or none")]
    EmptyToken,
    /// A call that may run a program (a script, or hooks) while the most such calls of its
    /// MCP session run ([`MAX_PROGRAM_CALLS`]): answered at once as a tool error.
    #[error("{MAX_PROGRAM_CALLS} calls of this MCP session that may run a program (skills_load, skills_unload, skills_run_script, skill) are running, the most at once: call again once one has answered")]
    Busy,
    /// The HTTP transport was asked to serve an address beyond loopback without a bearer
    /// token: any peer that reaches it would get a session (the `Host` check stops
    /// browsers, not peers).
    #[error("serving {0} without a bearer token would give a session to any peer that reaches it (the Host check stops browsers, not peers): give a token (--token-file), bind a loopback address, or accept that with --allow-unauthenticated-network")]
    UnauthenticatedNetwork(SocketAddr),
}

impl McpError {
    /// A stable, upper-case code.
    pub fn code(&self) -> &'static str {
        match self {
            McpError::Transport(_) => "MCP_TRANSPORT",
            McpError::Session(_) => "MCP_SESSION",
            McpError::EmptyToken => "MCP_EMPTY_TOKEN",
            McpError::Busy => "MCP_BUSY",
            McpError::UnauthenticatedNetwork(_) => "MCP_UNAUTHENTICATED_NETWORK",
        }
    }
}

/// How the HTTP transport admits requests.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// A bearer token every request must carry (`Authorization: Bearer ...`); a request
    /// without it gets 401. An empty one is refused ([`McpError::EmptyToken`]).
    pub token: Option<String>,
    /// Browser origins allowed beyond loopback ones (DNS-rebinding protection: a request
    /// with another `Origin` is refused).
    pub allowed_origins: Vec<String>,
    /// How long an idle MCP session lives (default 30 minutes).
    pub session_idle: Option<Duration>,
    /// How many MCP sessions may be open at once (default [`DEFAULT_MAX_SESSIONS`]): a
    /// request that would open one more is answered 503, so that clients opening sessions
    /// without end cannot spend the process's threads and memory.
    pub max_sessions: Option<usize>,
    /// How long a client may take to send a request's head, and then its body (default 10
    /// seconds each).
    pub request_timeout: Option<Duration>,
    /// The most connections served at once (default 256); one more is closed at once.
    pub max_connections: Option<usize>,
    /// Whether an address beyond loopback may be served without a token (refused by
    /// default: [`McpError::UnauthenticatedNetwork`]).
    pub unauthenticated_network: UnauthenticatedNetwork,
}

/// Whether the HTTP transport may serve an address beyond loopback without a bearer token.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum UnauthenticatedNetwork {
    /// Refused before anything listens (the default).
    #[default]
    Refused,
    /// Allowed (`skillctl mcp --allow-unauthenticated-network`): any peer that reaches the
    /// address gets a session, with the host's policy and trust.
    Allowed,
}

/// The MCP sessions open at once over HTTP when [`HttpOptions::max_sessions`] says nothing.
pub const DEFAULT_MAX_SESSIONS: usize = 64;

impl HttpOptions {
    /// Whether these options can serve: an empty token cannot ([`McpError::EmptyToken`]).
    pub fn check(&self) -> Result<(), McpError> {
        match self.token.as_deref() {
            Some("") => Err(McpError::EmptyToken),
            _ => Ok(()),
        }
    }

    /// Whether these options can serve `addr`: one beyond loopback (`0.0.0.0` included)
    /// needs a token, unless [`UnauthenticatedNetwork::Allowed`] says otherwise.
    pub fn check_address(&self, addr: SocketAddr) -> Result<(), McpError> {
        self.check()?;
        let loopback = addr.ip().to_canonical().is_loopback();
        match (&self.token, self.unauthenticated_network) {
            (None, UnauthenticatedNetwork::Refused) if !loopback => {
                Err(McpError::UnauthenticatedNetwork(addr))
            }
            _ => Ok(()),
        }
    }
}

/// Serves one MCP session over stdin and stdout until the client closes it (or SIGTERM),
/// then ends the executor session (its running calls stopped and recorded, every skill
/// deactivated, post hooks run, all audited) and returns once that is done.
pub async fn serve_stdio(executor: Executor, context: SessionContext) -> Result<(), McpError> {
    let endings = Endings::default();
    let server = SkillsServer::new(&executor, context, &endings);
    let served = match server.serve(rmcp::transport::stdio()).await {
        Ok(running) => tokio::select! {
            done = running.waiting() => done.map(drop).map_err(|e| McpError::Session(e.to_string())),
            () = terminated() => Ok(()),
        },
        Err(e) => Err(McpError::Session(e.to_string())),
    };
    // Not left to whichever rmcp task drops the server last: the process could exit
    // while that end ran, cutting off a post hook and its record.
    endings.end_all().await;
    served
}

/// Serves streamable HTTP at `/mcp` on `listener` until SIGTERM or SIGINT: each MCP session
/// gets its own executor session, ended (and audited) when the client disconnects or the
/// session expires.
pub async fn serve_http(
    executor: Executor,
    context: SessionContext,
    listener: tokio::net::TcpListener,
    options: HttpOptions,
) -> Result<(), McpError> {
    options.check_address(listener.local_addr().map_err(McpError::Transport)?)?;
    let mut origins = vec![
        "http://localhost:*".to_owned(),
        "http://127.0.0.1:*".to_owned(),
        "http://[::1]:*".to_owned(),
    ];
    origins.extend(options.allowed_origins.iter().cloned());
    let mut hosts = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    if let Ok(addr) = listener.local_addr() {
        hosts.push(addr.ip().to_string());
    }
    let mut config = StreamableHttpServerConfig::default();
    config.allowed_origins = origins;
    config.allowed_hosts = hosts;
    config.legacy_session_mode = true;
    let sessions_end = config.cancellation_token.clone();
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive =
        Some(options.session_idle.unwrap_or(Duration::from_secs(1800)));
    let sessions = Arc::new(manager);
    let endings = Endings::default();
    let opened = endings.clone();
    let service = StreamableHttpService::new(
        move || Ok(SkillsServer::new(&executor, context.clone(), &opened)),
        Arc::clone(&sessions),
        config,
    );
    let admission = Admission {
        token: options.token.map(Arc::<str>::from),
        sessions: Arc::clone(&sessions),
        max_sessions: options.max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS),
        body_timeout: options.request_timeout.unwrap_or(REQUEST_TIMEOUT),
    };
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(admission, admit));
    // On SIGTERM or SIGINT every MCP session is ended (its skills deactivated, audited),
    // then the listener stops.
    let bounds = Bounds {
        head_timeout: options.request_timeout.unwrap_or(REQUEST_TIMEOUT),
        max_connections: options
            .max_connections
            .unwrap_or(MAX_CONNECTIONS)
            .min(u32::MAX as usize)
            .min(tokio::sync::Semaphore::MAX_PERMITS),
    };
    connections(listener, router, bounds, async move {
        terminated().await;
        sessions_end.cancel();
    })
    .await;
    // Every session still open ends (and is waited for) before this returns.
    endings.end_all().await;
    Ok(())
}

/// How long a client may take to send a request's head (its line and headers), and then
/// its body, when [`HttpOptions::request_timeout`] says nothing: a connection that sends
/// nothing, or a byte at a time, is closed then.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The most connections served at once when [`HttpOptions::max_connections`] says nothing.
const MAX_CONNECTIONS: usize = 256;

/// What [`connections`] bounds.
struct Bounds {
    head_timeout: Duration,
    max_connections: usize,
}

/// Serves `router` on every connection `listener` accepts until `stop` resolves, then
/// ends the open ones gracefully and waits for them: HTTP/1.1 with a timeout on each
/// request's head and a most connections at once, so that clients that open connections
/// and send nothing (or a byte at a time) hold neither the server's descriptors nor its
/// memory beyond those bounds. (`axum::serve` has neither bound.)
async fn connections(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    bounds: Bounds,
    stop: impl std::future::Future<Output = ()>,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::service::TowerToHyperService;
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(bounds.head_timeout);
    let places = Arc::new(tokio::sync::Semaphore::new(bounds.max_connections));
    // Told once `stop` resolves; each connection then ends after its current request.
    let (ending, ended) = tokio::sync::watch::channel(false);
    let mut stop = std::pin::pin!(stop);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of descriptors, most likely: let some connections end first.
                    tracing::warn!(error = %e, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let Ok(place) = Arc::clone(&places).try_acquire_owned() else {
            tracing::warn!(
                "{} connections are open, the most served: closing a new one",
                bounds.max_connections
            );
            continue;
        };
        let service = TowerToHyperService::new(router.clone());
        let connection = builder
            .serve_connection(TokioIo::new(stream), service)
            .with_upgrades();
        let mut ended = ended.clone();
        tokio::spawn(async move {
            let mut connection = std::pin::pin!(connection);
            loop {
                tokio::select! {
                    done = connection.as_mut() => {
                        if let Err(e) = done {
                            tracing::debug!(error = %e, "a connection ended with an error");
                        }
                        break;
                    }
                    changed = ended.changed() => {
                        if changed.is_err() || *ended.borrow() {
                            connection.as_mut().graceful_shutdown();
                        }
                    }
                }
            }
            drop(place);
        });
    }
    // No new connection from here on; the open ones end after their current request, and
    // a client that keeps one open (a body sent a byte at a time) is not waited for past
    // the drain's time.
    drop(listener);
    let _ = ending.send(true);
    let all = u32::try_from(bounds.max_connections).unwrap_or(u32::MAX);
    if tokio::time::timeout(DRAIN, places.acquire_many(all))
        .await
        .is_err()
    {
        tracing::warn!("connections still open at the end of the drain are closed");
    }
}

/// How long the server waits, once told to stop, for its open connections to end.
const DRAIN: Duration = Duration::from_secs(10);

/// What [`admit`] checks a request against.
#[derive(Clone)]
struct Admission {
    /// The bearer token every request must carry, if any.
    token: Option<Arc<str>>,
    /// The MCP sessions, shared with rmcp's service.
    sessions: Arc<LocalSessionManager>,
    /// How many may be open at once.
    max_sessions: usize,
    /// How long a request's body may take to arrive.
    body_timeout: Duration,
}

/// Admits a request to `/mcp`, before rmcp sees it:
/// - without the bearer token (when there is one), 401 with `WWW-Authenticate: Bearer`;
/// - a `DELETE` of a session that is not open, 404 (rmcp closes an unknown session
///   without a word and answers 202; the specification answers a request for a session
///   that ended with 404, as rmcp does for `GET` and `POST`);
/// - a `DELETE` rmcp answers 202 (the session is closed by then) is answered 200: the
///   official Python client takes anything but 200 or 204 as a failed termination;
/// - a `POST` that names no session (it would open one) while the most sessions are open,
///   503. Requests that arrive together may each see one place left, so the bound can be
///   passed by as many requests as arrive at once, never by a client that waits for its
///   answers.
async fn admit(
    axum::extract::State(admission): axum::extract::State<Admission>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{Method, StatusCode};
    use axum::response::IntoResponse as _;
    if let Some(refused) = unauthorized(&admission, &request) {
        return refused;
    }
    // A body comes whole within its time (a client sending one a byte at a time would hold
    // a connection, and rmcp reads bodies without a deadline), and is at most rmcp's size.
    let request = if request.method() == Method::POST {
        let (parts, body) = request.into_parts();
        match tokio::time::timeout(admission.body_timeout, axum::body::to_bytes(body, MAX_BODY))
            .await
        {
            Ok(Ok(bytes)) => {
                axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes))
            }
            Ok(Err(_)) => {
                return (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "the body is too large or broken",
                )
                    .into_response()
            }
            Err(_) => {
                return (
                    StatusCode::REQUEST_TIMEOUT,
                    "the body did not arrive in time",
                )
                    .into_response()
            }
        }
    } else {
        request
    };
    let opens_session =
        request.method() == Method::POST && !request.headers().contains_key(SESSION_HEADER);
    if opens_session && admission.sessions.sessions.read().await.len() >= admission.max_sessions {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "{} MCP sessions are open, the most this server keeps: end one (DELETE) or wait for one to idle out",
                admission.max_sessions
            ),
        )
            .into_response();
    }
    let ends_session = request.method() == Method::DELETE;
    if ends_session {
        let id = request
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok());
        if let Some(id) = id {
            let open = admission
                .sessions
                .has_session(&id.into())
                .await
                .unwrap_or(false);
            if !open {
                return (StatusCode::NOT_FOUND, "no such MCP session").into_response();
            }
        }
    }
    let mut response = next.run(request).await;
    if ends_session && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    response
}

/// The answer to a request without the server's token, if it has one and the request does
/// not carry it: a 401 that names the scheme it wants (RFC 6750), and says when a token was
/// given but is not the one.
fn unauthorized(
    admission: &Admission,
    request: &axum::extract::Request,
) -> Option<axum::response::Response> {
    use axum::response::IntoResponse as _;
    let token = admission.token.as_ref()?;
    let given = request
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if given.is_some_and(|given| same_secret(given, token)) {
        return None;
    }
    let challenge = if given.is_some() {
        "Bearer error=\"invalid_token\""
    } else {
        "Bearer"
    };
    Some(
        (
            axum::http::StatusCode::UNAUTHORIZED,
            [(axum::http::header::WWW_AUTHENTICATE, challenge)],
            "a bearer token is required",
        )
            .into_response(),
    )
}

/// The largest request body read (rmcp's own bound).
const MAX_BODY: usize = 4 * 1024 * 1024;

/// The header that names a request's MCP session.
const SESSION_HEADER: &str = "mcp-session-id";

/// Whether `given` is `secret`, in a time that does not depend on where they first differ
/// (only on their lengths): a client timing refusals learns nothing of the token's bytes.
fn same_secret(given: &str, secret: &str) -> bool {
    let (given, secret) = (given.as_bytes(), secret.as_bytes());
    if given.len() != secret.len() {
        return false;
    }
    let differ = given
        .iter()
        .zip(secret)
        .fold(0u8, |acc, (a, b)| std::hint::black_box(acc | (a ^ b)));
    differ == 0
}

/// Binds `addr` for [`serve_http`]; port 0 picks a free port (read it from the listener).
pub async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, McpError> {
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(McpError::Transport)
}

/// Resolves on SIGTERM or SIGINT.
async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// Where the server listens.
pub enum Transport {
    /// One session over stdin and stdout.
    Stdio,
    /// Streamable HTTP at `/mcp` on `addr`; `on_listening` is called with the bound address
    /// once the socket is bound (so port 0 can be reported).
    Http {
        /// The address to bind.
        addr: SocketAddr,
        /// Token, origins and idle time.
        options: HttpOptions,
        /// Told the bound address.
        on_listening: Box<dyn FnOnce(SocketAddr) + Send>,
    },
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Transport::Stdio => f.write_str("Stdio"),
            Transport::Http { addr, .. } => write!(f, "Http({addr})"),
        }
    }
}

/// Runs the server on its own Tokio runtime until the transport ends or SIGTERM: the
/// synchronous entry point (`skillctl mcp` uses it).
pub fn run(
    executor: Executor,
    context: SessionContext,
    transport: Transport,
) -> Result<(), McpError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(McpError::Transport)?;
    let result = runtime.block_on(async move {
        match transport {
            Transport::Stdio => serve_stdio(executor, context).await,
            Transport::Http {
                addr,
                options,
                on_listening,
            } => {
                // Refused before anything listens.
                options.check_address(addr)?;
                let listener = bind(addr).await?;
                let bound = listener.local_addr().map_err(McpError::Transport)?;
                on_listening(bound);
                serve_http(executor, context, listener, options).await
            }
        }
    });
    // The sessions have ended (the transports wait for that); what else still runs gets
    // this long.
    runtime.shutdown_timeout(Duration::from_secs(5));
    result
}

#[cfg(test)]
mod tests {
    use super::same_secret;

    #[test]
    fn a_secret_is_the_same_only_byte_for_byte() {
        let cases = [
            ("s3cret", "s3cret", true),
            ("s3cres", "s3cret", false),
            ("t3cret", "s3cret", false),
            ("s3cre", "s3cret", false),
            ("s3crett", "s3cret", false),
            ("", "s3cret", false),
            ("", "", true),
        ];
        for (given, secret, same) in cases {
            assert_eq!(
                same_secret(given, secret),
                same,
                "{given:?} against {secret:?}"
            );
        }
    }
}
