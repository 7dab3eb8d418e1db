//! The streamable HTTP transport as a client meets it on the wire: the bearer token, the
//! answers to a session's `DELETE`, the bound on sessions and on subscriptions (raw HTTP/1.1
//! over a socket, so nothing between the test and the server interprets a status).

use std::net::SocketAddr;
use std::sync::Arc;

use skills_executor::{
    AllowedToolsMode, AuditSink, Executor, MemorySink, Policy, SessionContext, SkillWrites,
};
use skills_index::SkillIndex;
use skills_mcp::{HttpOptions, McpError, UnauthenticatedNetwork};
use skills_model::Layer;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

const TOKEN: &str = "s3cret";

fn executor(root: &std::path::Path) -> Executor {
    let index = SkillIndex::builder()
        .root(Layer::Project, root)
        .build()
        .expect("an empty root indexes");
    Executor::builder(Arc::new(index)).build()
}

/// Starts the server on a free loopback port; it stops with the test's runtime.
async fn serve(root: &std::path::Path) -> SocketAddr {
    serve_with(
        root,
        HttpOptions {
            token: Some(TOKEN.to_owned()),
            ..HttpOptions::default()
        },
    )
    .await
}

/// [`serve`] with `options`.
async fn serve_with(root: &std::path::Path, options: HttpOptions) -> SocketAddr {
    let listener = skills_mcp::bind("127.0.0.1:0".parse().expect("an address"))
        .await
        .expect("a free port");
    let addr = listener.local_addr().expect("its address");
    let executor = executor(root);
    tokio::spawn(skills_mcp::serve_http(
        executor,
        SessionContext::builder().build(),
        listener,
        options,
    ));
    addr
}

/// The status and headers of one request's answer (header names lowercased).
async fn send(
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Vec<(String, String)>) {
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    let mut request = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.expect("sends");
    // The head only: an answer in an event stream may stay open after it.
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut byte).await.expect("reads");
        assert_eq!(n, 1, "the answer ended inside its head: {head:?}");
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).expect("an ASCII head");
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(n, v)| (n.to_ascii_lowercase(), v.to_owned()))
        .collect();
    (status, headers)
}

/// Opens a session (no token asked) and returns its id.
async fn opened(addr: SocketAddr) -> String {
    let (status, headers) = send(addr, "POST", &[], INITIALIZE).await;
    assert_eq!(status, 200);
    headers
        .into_iter()
        .find(|(n, _)| n == "mcp-session-id")
        .map(|(_, v)| v)
        .expect("a session id")
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"http-test","version":"0"}}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_admits_and_a_session_ends_once() {
    let root = tempfile::tempdir().expect("a temporary folder");
    let addr = serve(root.path()).await;
    let bearer = format!("Bearer {TOKEN}");

    // Without the token, or with another, nothing is served.
    for auth in [None, Some("Bearer wrong"), Some("Bearer "), Some("s3cret")] {
        let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", *a)).collect();
        let (status, _) = send(addr, "POST", &headers, INITIALIZE).await;
        assert_eq!(status, 401, "authorization {auth:?}");
    }

    let (status, headers) = send(addr, "POST", &[("Authorization", &bearer)], INITIALIZE).await;
    assert_eq!(status, 200);
    let session = headers
        .iter()
        .find(|(n, _)| n == "mcp-session-id")
        .map(|(_, v)| v.clone())
        .expect("a session id");

    // A DELETE without the token says nothing about the session.
    let (status, _) = send(addr, "DELETE", &[("mcp-session-id", &session)], "").await;
    assert_eq!(status, 401);

    let with = |id: &str| {
        [
            ("Authorization", bearer.clone()),
            ("mcp-session-id", id.to_owned()),
        ]
    };
    let delete = |id: String| {
        let headers = with(&id);
        async move {
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
            send(addr, "DELETE", &headers, "").await.0
        }
    };
    // Regression: rmcp's 202 made the official Python client log a failed termination.
    assert_eq!(delete(session.clone()).await, 200, "the open session ends");
    // Regression: rmcp answered 202 for a session that was not open.
    assert_eq!(delete(session).await, 404, "it ended already");
    assert_eq!(
        delete("no-such-session".to_owned()).await,
        404,
        "it never was"
    );
}

// Regression (issue 38): the 401 for want of the token named no scheme, so a client could
// not tell it needs a bearer token. It carries `WWW-Authenticate: Bearer` (RFC 6750), with
// `error="invalid_token"` when a token was given that is not the one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_for_want_of_the_token_names_the_bearer_scheme() {
    let root = tempfile::tempdir().expect("a temporary folder");
    let addr = serve(root.path()).await;
    for (auth, challenge) in [
        (None, "Bearer"),
        (Some("Basic czNjcmV0"), "Bearer"),
        (Some("Bearer wrong"), "Bearer error=\"invalid_token\""),
    ] {
        let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", *a)).collect();
        let (status, answer) = send(addr, "POST", &headers, INITIALIZE).await;
        assert_eq!(status, 401, "authorization {auth:?}");
        let given: Vec<&str> = answer
            .iter()
            .filter(|(n, _)| n == "www-authenticate")
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(given, [challenge], "authorization {auth:?}");
    }
}

#[tokio::test]
async fn an_empty_token_is_refused_before_anything_is_served() {
    let root = tempfile::tempdir().expect("a temporary folder");
    let listener = skills_mcp::bind("127.0.0.1:0".parse().expect("an address"))
        .await
        .expect("a free port");
    let options = HttpOptions {
        token: Some(String::new()),
        ..HttpOptions::default()
    };
    let served = skills_mcp::serve_http(
        executor(root.path()),
        SessionContext::builder().build(),
        listener,
        options,
    )
    .await;
    assert!(matches!(served, Err(McpError::EmptyToken)), "{served:?}");
    assert_eq!(served.expect_err("refused").code(), "MCP_EMPTY_TOKEN");
}

// Regression (issue 38): an address beyond loopback was served without a token, and a
// peer that sent `Host: localhost` got a session (the Host check stops browsers, not
// peers). Such an address needs a token, or the host's explicit
// `UnauthenticatedNetwork::Allowed` (`--allow-unauthenticated-network`).
#[tokio::test]
async fn a_network_address_without_a_token_is_refused_before_anything_is_served() {
    let options = |token: Option<&str>, network| HttpOptions {
        token: token.map(str::to_owned),
        unauthenticated_network: network,
        ..HttpOptions::default()
    };
    use UnauthenticatedNetwork::{Allowed, Refused};
    // (address, token, unauthenticated network, served)
    let cases = [
        ("127.0.0.1:8765", None, Refused, true),
        ("127.1.2.3:8765", None, Refused, true),
        ("[::1]:8765", None, Refused, true),
        ("[::ffff:127.0.0.1]:8765", None, Refused, true),
        ("0.0.0.0:8765", None, Refused, false),
        ("[::]:8765", None, Refused, false),
        ("192.168.1.20:8765", None, Refused, false),
        ("[::ffff:10.0.0.1]:8765", None, Refused, false),
        ("0.0.0.0:8765", Some(TOKEN), Refused, true),
        ("0.0.0.0:8765", None, Allowed, true),
        ("192.168.1.20:8765", None, Allowed, true),
    ];
    for (addr, token, network, served) in cases {
        let addr: SocketAddr = addr.parse().expect("an address");
        let checked = options(token, network).check_address(addr);
        assert_eq!(
            checked.is_ok(),
            served,
            "{addr} {token:?} {network:?}: {checked:?}"
        );
        if let Err(e) = checked {
            assert_eq!(e.code(), "MCP_UNAUTHENTICATED_NETWORK");
            assert!(
                e.to_string().contains("--allow-unauthenticated-network"),
                "{e}"
            );
        }
    }
    // A host that binds the listener itself is refused as well, before anything is served.
    let root = tempfile::tempdir().expect("a temporary folder");
    let listener = skills_mcp::bind("0.0.0.0:0".parse().expect("an address"))
        .await
        .expect("a free port");
    let served = skills_mcp::serve_http(
        executor(root.path()),
        SessionContext::builder().build(),
        listener,
        HttpOptions::default(),
    )
    .await;
    assert!(
        matches!(served, Err(McpError::UnauthenticatedNetwork(_))),
        "{served:?}"
    );
}

// Regression: sessions were opened without bound, each with a thread of its own: 1,500
// initialize requests made 1,500 threads, and at the thread limit the server panicked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_more_sessions_open_than_the_most_allowed() {
    let root = tempfile::tempdir().expect("a temporary folder");
    let options = HttpOptions {
        max_sessions: Some(2),
        ..HttpOptions::default()
    };
    let addr = serve_with(root.path(), options).await;
    let mut open = Vec::new();
    for _ in 0..2 {
        open.push(opened(addr).await);
    }
    let (status, _) = send(addr, "POST", &[], INITIALIZE).await;
    assert_eq!(status, 503, "a third session");
    // Ending one makes room for another.
    let (status, _) = send(addr, "DELETE", &[("mcp-session-id", &open[0])], "").await;
    assert_eq!(status, 200);
    let (status, _) = send(addr, "POST", &[], INITIALIZE).await;
    assert_eq!(status, 200, "a session in the place of the one ended");
}

// Regression (issue 38): `skillctl session` recorded each option loosening the defaults
// as `policy_override`; an MCP session over HTTP recorded none. Each records them as its
// handshake is answered, under its own session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_session_records_the_options_that_loosen_the_policy() {
    let root = tempfile::tempdir().expect("a temporary folder");
    let index = SkillIndex::builder()
        .root(Layer::Project, root.path())
        .build()
        .expect("an empty root indexes");
    let policy = Policy::builder()
        .trust(Layer::Project)
        .allowed_tools_mode(AllowedToolsMode::Preapprove)
        .skill_writes(SkillWrites::Allowed)
        .build();
    let sink = Arc::new(MemorySink::default());
    let executor = Executor::builder(Arc::new(index))
        .policy(policy)
        .audit_sink(Arc::clone(&sink) as Arc<dyn AuditSink>)
        .build();
    let listener = skills_mcp::bind("127.0.0.1:0".parse().expect("an address"))
        .await
        .expect("a free port");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(skills_mcp::serve_http(
        executor,
        SessionContext::builder().build(),
        listener,
        HttpOptions::default(),
    ));
    let first = opened(addr).await;
    let second = opened(addr).await;
    assert_ne!(first, second);
    let overrides: Vec<(String, String)> = sink
        .events()
        .iter()
        .filter_map(|e| {
            let v = serde_json::to_value(e).expect("an event");
            (v["event"] == "policy_override").then(|| {
                let field = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
                (field("session_id"), field("option"))
            })
        })
        .collect();
    let options: Vec<&str> = overrides.iter().map(|(_, o)| o.as_str()).collect();
    let expected = [
        "--trust project",
        "--allow-skill-writes",
        "--allowed-tools-mode preapprove",
    ];
    assert_eq!(options, [expected, expected].concat(), "{overrides:?}");
    assert_ne!(overrides[0].0, overrides[3].0, "one record per session");
}

/// The JSON-RPC answer to `body` in session `id`: the body read to its end (the request
/// asks to close the connection), and the `data:` line of its event stream that answers.
async fn rpc(addr: SocketAddr, id: &str, body: &str) -> serde_json::Value {
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nmcp-session-id: {id}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.expect("sends");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.expect("reads");
    answer
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<serde_json::Value>(d).ok())
        .find(|v| v.get("id").is_some())
        .unwrap_or_else(|| panic!("no answer in {answer}"))
}

// Regression: `resources/subscribe` kept any URI of the right shape, of any size and any
// number: 100 subscriptions of 3.9 MB held 420 MB in one session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_names_a_visible_skill_within_bounds() {
    let root = tempfile::tempdir().expect("a temporary folder");
    let dir = root.path().join("notes");
    std::fs::create_dir_all(&dir).expect("a skill folder");
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: notes\ndescription: Notes. Use when testing.\n---\nBody.\n",
    )
    .expect("a skill");
    let addr = serve_with(root.path(), HttpOptions::default()).await;
    let id = opened(addr).await;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (status, _) = send(addr, "POST", &[("mcp-session-id", &id)], initialized).await;
    assert_eq!(status, 202);
    let subscribe = |n: u32, uri: &str| {
        serde_json::json!({"jsonrpc": "2.0", "id": n, "method": "resources/subscribe", "params": {"uri": uri}})
            .to_string()
    };
    let ok = rpc(addr, &id, &subscribe(2, "skill://project/notes/SKILL.md")).await;
    assert!(ok.get("result").is_some(), "{ok}");
    let unknown = rpc(addr, &id, &subscribe(3, "skill://project/nothing/SKILL.md")).await;
    assert_eq!(unknown["error"]["code"], -32002, "{unknown}");
    let long = format!("skill://project/notes/references/{}", "a".repeat(10_000));
    let refused = rpc(addr, &id, &subscribe(4, &long)).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    // At most 1,024 at once (one is held already).
    for n in 1..1024 {
        let uri = format!("skill://project/notes/references/{n}.md");
        let ok = rpc(addr, &id, &subscribe(10 + n, &uri)).await;
        assert!(ok.get("result").is_some(), "{n}: {ok}");
    }
    let full = rpc(addr, &id, &subscribe(5, "skill://project/notes/assets/x")).await;
    assert_eq!(full["error"]["code"], -32602, "{full}");
    assert!(
        full["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("1024"),
        "{full}"
    );
}

/// Whether the server closes `stream` before answering anything: its next read finds the
/// end (or a reset), never an answer.
async fn closed_unanswered(stream: &mut tokio::net::TcpStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(stream.read(&mut byte).await, Ok(0) | Err(_))
}

// Regression: a connection that never finished its request's head stayed open for good
// (320 s and counting), before the token was checked, and 300 of them kept out a client
// with the token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_that_send_no_request_are_bounded_in_time_and_number() {
    let root = tempfile::tempdir().expect("a temporary folder");
    // A head, then a body, must come within 100 ms each: a silent connection, and one that
    // sent half a head, are closed unanswered.
    let quick = HttpOptions {
        request_timeout: Some(std::time::Duration::from_millis(100)),
        ..HttpOptions::default()
    };
    let addr = serve_with(root.path(), quick).await;
    let mut silent = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    assert!(closed_unanswered(&mut silent).await);
    let mut partial = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    partial
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\n")
        .await
        .expect("sends");
    assert!(closed_unanswered(&mut partial).await);
    // Regression (review): a body sent a byte at a time held its connection for good.
    let mut trickle = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{"
    );
    trickle.write_all(head.as_bytes()).await.expect("sends");
    let mut answer = String::new();
    let _ = trickle.read_to_string(&mut answer).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    // Two connections at most: a third is closed as it is accepted, while a request on an
    // open one is answered.
    let two = HttpOptions {
        max_connections: Some(2),
        ..HttpOptions::default()
    };
    let addr = serve_with(root.path(), two).await;
    let _first = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    let mut second = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    let mut third = tokio::net::TcpStream::connect(addr)
        .await
        .expect("connects");
    assert!(closed_unanswered(&mut third).await);
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{INITIALIZE}",
        INITIALIZE.len()
    );
    second.write_all(request.as_bytes()).await.expect("sends");
    let mut answer = String::new();
    second.read_to_string(&mut answer).await.expect("reads");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}
