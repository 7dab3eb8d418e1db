//! How the host reaches an MCP server it declared, and the client it opens: [`McpServer`]
//! names the server by its label and its transport, a program the host starts and speaks to
//! over stdin and stdout, or a streamable-HTTP endpoint (`https://`, `http://` only on a
//! loopback address) with an optional [`BearerToken`]. Opening a client checks that the
//! server declares the skills extension. Over HTTP no redirect is followed and no proxy
//! used, so a token goes to the URL declared with it and nowhere else.

use std::sync::Arc;
use std::time::Duration;

use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt as _};

/// How long an HTTP connection may take to open before the server counts as not answering.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a server may take to answer (the handshake and listing, or one read) before it
/// counts as not answering: a server that hangs never stalls a session.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// Why an MCP server cannot be a source.
#[derive(Debug, thiserror::Error)]
#[error("the MCP server {label}: {reason}")]
pub struct SourceError {
    label: String,
    reason: String,
}

impl SourceError {
    /// Why the server `label` cannot be a source.
    pub(crate) fn new(label: &str, reason: String) -> SourceError {
        SourceError {
            label: label.to_owned(),
            reason,
        }
    }
}

/// An MCP server the host declared: `--mcp-server LABEL=COMMAND` or
/// `--mcp-server LABEL=https://HOST/PATH`, or a URL `register_plugin` names.
#[derive(Debug, Clone)]
pub struct McpServer {
    /// The host-assigned label (`--trust mcp:LABEL`; qualified names `LABEL:name` when the
    /// server is unplaced). A server registered over the wire by URL is labelled by its URL.
    pub label: String,
    /// How it is reached.
    pub transport: McpTransport,
    /// How long it may take to answer (its handshake and listing, or one read) before it
    /// counts as not answering: 30 seconds unless [`McpServer::answering_within`] says.
    pub answer_within: Duration,
}

/// How an MCP server is reached.
#[derive(Debug, Clone)]
pub enum McpTransport {
    /// A program the host starts, spoken to over its stdin and stdout: the program and its
    /// arguments.
    Stdio(Vec<String>),
    /// A streamable-HTTP endpoint, checked by [`McpServer::http`].
    Http {
        /// The endpoint's URL.
        url: String,
        /// The bearer token sent with every request, if any.
        token: Option<BearerToken>,
    },
}

/// A bearer token for an MCP server over HTTP (`--mcp-token-file LABEL=FILE`). It is never
/// shown: its `Debug` says only that there is one, and no error quotes it.
#[derive(Clone)]
pub struct BearerToken(String);

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(..)")
    }
}

/// Why a token file's text is not a bearer token (the text is never shown).
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// Nothing but blanks: an empty token would be sent as `Bearer ` with nothing after it.
    #[error("it is empty or blank")]
    Empty,
    /// A character an HTTP header cannot carry as a token (blanks inside, control or
    /// non-ASCII characters).
    #[error("it holds a character a bearer token cannot carry (blanks inside, control or non-ASCII characters)")]
    BadCharacter,
}

impl BearerToken {
    /// The token a file's text holds: the text without leading and trailing blanks, which
    /// must be visible ASCII.
    pub fn new(text: &str) -> Result<BearerToken, TokenError> {
        let token = text.trim();
        if token.is_empty() {
            return Err(TokenError::Empty);
        }
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(TokenError::BadCharacter);
        }
        Ok(BearerToken(token.to_owned()))
    }
}

impl McpServer {
    /// A server the host starts: `argv` is the program and its arguments.
    pub fn stdio(label: &str, argv: Vec<String>) -> McpServer {
        McpServer {
            label: label.to_owned(),
            transport: McpTransport::Stdio(argv),
            answer_within: ANSWER_WITHIN,
        }
    }

    /// The same server, counted as not answering after `limit`.
    pub fn answering_within(self, limit: Duration) -> McpServer {
        McpServer {
            answer_within: limit,
            ..self
        }
    }

    /// A server over streamable HTTP at `url`: `https://`, or `http://` only on a loopback
    /// address, with no credentials in the URL (a token is given apart).
    pub fn http(
        label: &str,
        url: &str,
        token: Option<BearerToken>,
    ) -> Result<McpServer, SourceError> {
        let url = skills_remote::checked_url(url)
            .map_err(|reason| SourceError::new(label, format!("{url}: {reason}")))?;
        Ok(McpServer {
            label: label.to_owned(),
            transport: McpTransport::Http {
                url: url.into(),
                token,
            },
            answer_within: ANSWER_WITHIN,
        })
    }

    /// A server a peer names by URL over the wire (`register_plugin` with an `https://`
    /// `"server"`): labelled by its URL as parsed, so the host trusts it only by
    /// `--trust mcp:URL` and no peer can take a label the host declared; sent no token.
    pub fn registered_url(url: &str) -> Result<McpServer, SourceError> {
        let parsed = skills_remote::checked_url(url)
            .map_err(|reason| SourceError::new(url, format!("{url}: {reason}")))?;
        McpServer::http(parsed.as_str(), parsed.as_str(), None)
    }
}

/// Opens a client of `server` with `handler`: starts the program or reaches the URL, makes
/// the handshake, and refuses a server that does not declare the skills extension.
pub(crate) async fn open<H: ClientHandler>(
    server: &McpServer,
    handler: H,
) -> Result<RunningService<RoleClient, H>, String> {
    let client = match &server.transport {
        McpTransport::Stdio(argv) => {
            let (program, args) = argv.split_first().ok_or("no command")?;
            let mut child = tokio::process::Command::new(program)
                .args(args)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .kill_on_drop(true)
                .spawn()
                .map_err(|e| format!("cannot start {program}: {e}"))?;
            let stdout = child.stdout.take().ok_or("no stdout")?;
            let stdin = child.stdin.take().ok_or("no stdin")?;
            // The child lives as long as the client's transport: kept by a task that waits.
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
            handler.serve((stdout, stdin)).await
        }
        McpTransport::Http { url, token } => handler.serve(http_transport(url, token)?).await,
    }
    .map_err(|e| handshake_failed(&e))?;
    let declared = client
        .peer_info()
        .and_then(|i| i.capabilities.extensions.clone())
        .is_some_and(|e| e.contains_key(rmcp::model::SKILLS_EXTENSION_ID));
    if !declared {
        return Err("it does not declare io.modelcontextprotocol/skills".to_owned());
    }
    Ok(client)
}

/// Why a handshake failed, in words: over HTTP, the transport's own error and its causes
/// (a refused connection, a status), a missing or refused token said so.
fn handshake_failed(e: &rmcp::service::ClientInitializeError) -> String {
    use rmcp::transport::streamable_http_client::StreamableHttpError as Http;
    let rmcp::service::ClientInitializeError::TransportError { error, .. } = e else {
        return format!("the MCP handshake failed: {e}");
    };
    let mut causes = Vec::new();
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(&*error.error);
    while let Some(cause) = next {
        match cause.downcast_ref::<Http<reqwest::Error>>() {
            Some(Http::AuthRequired(_)) => return "it answered 401 Unauthorized: it needs a bearer token, or refused the one given (--mcp-token-file LABEL=FILE)".to_owned(),
            Some(Http::InsufficientScope(_)) => return "it answered 403 Forbidden: the bearer token given does not grant enough".to_owned(),
            // The HTTP client's error names its causes (a refused connection) as sources.
            Some(Http::Client(client)) => {
                next = Some(client);
                continue;
            }
            _ => causes.push(cause.to_string()),
        }
        next = cause.source();
    }
    causes.dedup();
    format!("the MCP handshake failed: {}", causes.join(": "))
}

/// The streamable-HTTP transport to `url`: TLS with the web's roots (no system OpenSSL),
/// no redirects, no proxy, the token as `Authorization: Bearer`.
fn http_transport(
    url: &str,
    token: &Option<BearerToken>,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, String> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| format!("TLS: {e}"))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let client = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .connect_timeout(CONNECT_TIMEOUT)
        .pool_max_idle_per_host(0)
        .build()
        .map_err(|e| format!("the HTTP client: {e}"))?;
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(BearerToken(token)) = token {
        config = config.auth_header(token.clone());
    }
    Ok(StreamableHttpClientTransport::with_client(client, config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_its_file_s_text_trimmed_and_is_never_shown() {
        let token = BearerToken::new("  s3cret-Token_1=\n").expect("a token");
        assert_eq!(token.0, "s3cret-Token_1=");
        let server = McpServer::http("up", "http://127.0.0.1:9/mcp", Some(token)).unwrap();
        assert!(!format!("{server:?}").contains("s3cret"), "{server:?}");
        for (text, refused) in [
            (" \n\t", "empty or blank"),
            ("two words", "cannot carry"),
            ("caf\u{e9}", "cannot carry"),
            ("a\u{7}b", "cannot carry"),
        ] {
            let error = BearerToken::new(text).expect_err(text).to_string();
            assert!(error.contains(refused), "{text:?}: {error}");
        }
    }

    #[test]
    fn a_server_over_http_is_https_or_loopback_and_a_wire_url_is_its_own_label() {
        for url in [
            "https://skills.example.com/mcp",
            "http://127.0.0.1:8/mcp",
            "http://[::1]:8/mcp",
            "http://localhost/mcp",
        ] {
            assert!(McpServer::http("up", url, None).is_ok(), "{url}");
        }
        for (url, refused) in [
            (
                "http://skills.example.com/mcp",
                "only on a loopback address",
            ),
            ("http://10.0.0.1/mcp", "only on a loopback address"),
            ("https://u:p@skills.example.com/mcp", "credentials"),
            ("ftp://skills.example.com/mcp", "not https"),
        ] {
            let error = McpServer::http("up", url, None).expect_err(url).to_string();
            assert!(error.contains(refused), "{url}: {error}");
        }
        let wire = McpServer::registered_url("https://Skills.Example.com/mcp#x").unwrap();
        assert_eq!(wire.label, "https://skills.example.com/mcp");
        assert!(matches!(
            wire.transport,
            McpTransport::Http { token: None, .. }
        ));
    }
}
