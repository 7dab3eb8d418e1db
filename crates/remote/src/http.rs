//! HTTP through `ureq` (rustls, blocking): GETs bounded in time, size and redirects, each
//! redirect followed by hand under the root's rule (never from `https` to `http`, never
//! off loopback for an `http` root), and conditional GETs with `ETag`, else
//! `Last-Modified`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::location::follow;
use crate::{IndexUrl, RemoteError};

/// The most redirects one GET follows.
pub const MAX_REDIRECTS: usize = 5;
/// The most bytes an index may have.
pub const MAX_INDEX_BYTES: u64 = 8 << 20;
/// The most bytes one artifact may have.
pub const MAX_ARTIFACT_BYTES: u64 = 32 << 20;
/// How long one request may take in all (connect, send, receive).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long connecting may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a server said of an index's version: sent back to ask whether it changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Validators {
    /// The `ETag` header.
    pub etag: Option<String>,
    /// The `Last-Modified` header.
    pub last_modified: Option<String>,
}

/// The answer to a GET.
#[derive(Debug)]
pub(crate) enum Fetched {
    /// New bytes, with the validators that name them.
    Fresh(Vec<u8>, Validators),
    /// `304 Not Modified`: the validators sent still hold.
    NotModified,
}

/// One root's HTTP client.
#[derive(Debug, Clone)]
pub(crate) struct Fetcher {
    agent: ureq::Agent,
    root: IndexUrl,
}

impl Fetcher {
    /// A client for `root` (`https`, or `http` on loopback).
    pub(crate) fn new(root: &IndexUrl) -> Fetcher {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(REQUEST_TIMEOUT))
            .timeout_connect(Some(CONNECT_TIMEOUT))
            .max_redirects(0)
            .max_redirects_will_error(false)
            .http_status_as_error(false)
            .https_only(root.is_https())
            .user_agent(concat!("agent-skills/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Fetcher {
            agent,
            root: root.clone(),
        }
    }

    /// GETs `url`, at most `limit` bytes; with `validators`, conditionally.
    pub(crate) fn get(
        &self,
        url: &str,
        limit: u64,
        validators: Option<&Validators>,
    ) -> Result<Fetched, RemoteError> {
        let mut current = url.to_owned();
        for _ in 0..=MAX_REDIRECTS {
            let mut request = self.agent.get(&current);
            if let Some(v) = validators {
                if let Some(etag) = &v.etag {
                    request = request.header("If-None-Match", etag);
                } else if let Some(date) = &v.last_modified {
                    request = request.header("If-Modified-Since", date);
                }
            }
            let mut response = request.call().map_err(|e| RemoteError::Fetch {
                url: current.clone(),
                source: Box::new(e),
            })?;
            let header = |name: &str| {
                response
                    .headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            };
            match response.status().as_u16() {
                200 => {
                    let validators = Validators {
                        etag: header("etag"),
                        last_modified: header("last-modified"),
                    };
                    let body = response.body_mut().with_config().limit(limit).read_to_vec();
                    let bytes = body.map_err(|e| match e {
                        ureq::Error::BodyExceedsLimit(_) => RemoteError::TooLarge {
                            url: current.clone(),
                            limit,
                        },
                        e => RemoteError::Fetch {
                            url: current.clone(),
                            source: Box::new(e),
                        },
                    })?;
                    return Ok(Fetched::Fresh(bytes, validators));
                }
                304 if validators.is_some() => return Ok(Fetched::NotModified),
                301 | 302 | 303 | 307 | 308 => {
                    let refused = |reason: String| RemoteError::Redirect {
                        url: current.clone(),
                        reason,
                    };
                    let location =
                        header("location").ok_or_else(|| refused("no Location header".into()))?;
                    current = follow(&current, &location, &self.root).map_err(refused)?;
                }
                status => {
                    return Err(RemoteError::Status {
                        url: current,
                        status,
                    })
                }
            }
        }
        Err(RemoteError::Redirect {
            url: url.to_owned(),
            reason: format!("more than {MAX_REDIRECTS} redirects"),
        })
    }
}
