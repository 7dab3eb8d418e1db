//! `IndexUrl`: where a well-known index is, checked once: `https://`, or `http://` only on
//! a loopback address; its origin (`https://HOST[:PORT]`); and the artifact URLs it gives,
//! resolved against it (RFC 3986) under the same rule.

use std::fmt;

use url::{Host, Url};

use crate::RemoteError;

/// The path of the index below a site, when a root names the site (or a folder of it).
pub const WELL_KNOWN_INDEX: &str = ".well-known/agent-skills/index.json";

/// The URL of a well-known index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IndexUrl {
    url: Url,
}

impl IndexUrl {
    /// Reads a root's URL: `https://HOST[:PORT][/PATH]` (or `http://` on loopback). A URL
    /// whose path ends in `.json` is the index itself; any other names a site (or a folder
    /// of one) and the index is `PATH/.well-known/agent-skills/index.json` below it.
    pub fn parse(text: &str) -> Result<IndexUrl, RemoteError> {
        let bad = |reason: &str| RemoteError::Url {
            url: text.to_owned(),
            reason: reason.to_owned(),
        };
        let mut url = checked_url(text).map_err(|r| bad(&r))?;
        if !url.path().ends_with(".json") {
            let mut path = url.path().trim_end_matches('/').to_owned();
            path.push('/');
            path.push_str(WELL_KNOWN_INDEX);
            url.set_path(&path);
        }
        Ok(IndexUrl { url })
    }

    /// The index's URL as text.
    pub fn as_str(&self) -> &str {
        self.url.as_str()
    }

    /// Whether it is `https://` (else `http://` on loopback).
    pub fn is_https(&self) -> bool {
        self.url.scheme() == "https"
    }

    /// The origin, `scheme://host[:port]`, as trust names it (`url:https://HOST`).
    pub fn origin(&self) -> String {
        self.url.origin().ascii_serialization()
    }

    /// The folder holding the index (its URL without the file name and query): the place
    /// records of its skills are named under (`<folder>/<name>/SKILL.md`).
    pub fn folder(&self) -> String {
        let mut url = self.url.clone();
        url.set_query(None);
        if let Ok(mut parts) = url.path_segments_mut() {
            parts.pop();
        }
        url.as_str().trim_end_matches('/').to_owned()
    }

    /// An entry's `url` resolved against the index (RFC 3986), under the root's rule.
    pub fn resolve(&self, reference: &str) -> Result<String, String> {
        let url = self.url.join(reference).map_err(|e| e.to_string())?;
        check_scheme(&url)?;
        if self.is_https() && url.scheme() != "https" {
            return Err("an https index cannot send a client to http".into());
        }
        Ok(url.into())
    }
}

impl fmt::Display for IndexUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.url.as_str())
    }
}

/// A URL under the one rule every place that reaches a remote source follows (a URL root,
/// an MCP server over HTTP): `https://`, or `http://` only on a loopback address
/// (`localhost`, `127.0.0.0/8`, `::1`); no credentials in it (they would reach logs); the
/// fragment dropped.
pub fn checked_url(text: &str) -> Result<Url, String> {
    let mut url = Url::parse(text).map_err(|e| e.to_string())?;
    check_scheme(&url)?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err("credentials in the URL are refused".into());
    }
    url.set_fragment(None);
    Ok(url)
}

/// The URL a redirect from `from` to `location` leads to, under `root`'s rule: a redirect
/// never leaves `https`, nor `http` a loopback address.
pub(crate) fn follow(from: &str, location: &str, root: &IndexUrl) -> Result<String, String> {
    let https = root.is_https();
    let base = Url::parse(from).map_err(|e| e.to_string())?;
    let url = base.join(location).map_err(|e| e.to_string())?;
    check_scheme(&url)?;
    if https && url.scheme() != "https" {
        return Err(format!("a redirect from https to {url} is refused"));
    }
    Ok(url.into())
}

/// `https`, or `http` on a loopback address (`localhost`, `127.0.0.0/8`, `::1`).
fn check_scheme(url: &Url) -> Result<(), String> {
    match url.scheme() {
        "https" if url.host().is_some() => Ok(()),
        "http" if is_loopback(url.host()) => Ok(()),
        "http" => Err("http:// is accepted only on a loopback address; use https://".into()),
        other => Err(format!("the scheme {other}: is not https://")),
    }
}

fn is_loopback(host: Option<Host<&str>>) -> bool {
    match host {
        Some(Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_name_a_site_or_the_index_itself() {
        let cases = [
            (
                "https://skills.example.com",
                "https://skills.example.com/.well-known/agent-skills/index.json",
            ),
            (
                "https://example.com/team/",
                "https://example.com/team/.well-known/agent-skills/index.json",
            ),
            (
                "https://cdn.example.com/v2/index.json",
                "https://cdn.example.com/v2/index.json",
            ),
            (
                "http://127.0.0.1:8080",
                "http://127.0.0.1:8080/.well-known/agent-skills/index.json",
            ),
            (
                "http://[::1]:9/x",
                "http://[::1]:9/x/.well-known/agent-skills/index.json",
            ),
        ];
        for (given, index) in cases {
            assert_eq!(IndexUrl::parse(given).unwrap().as_str(), index, "{given}");
        }
        let url = IndexUrl::parse("https://Example.com:8443/a").unwrap();
        assert_eq!(url.origin(), "https://example.com:8443");
        assert_eq!(
            url.folder(),
            "https://example.com:8443/a/.well-known/agent-skills"
        );
    }

    #[test]
    fn refused_roots_say_why() {
        for (given, why) in [
            ("http://example.com", "loopback"),
            ("ftp://example.com", "not https"),
            ("https://user:pw@example.com", "credentials"),
            ("example.com", "relative URL"),
            ("file:///etc", "not https"),
        ] {
            let e = IndexUrl::parse(given).unwrap_err();
            assert_eq!(e.code(), "REMOTE_URL_INVALID");
            assert!(e.to_string().contains(why), "{given}: {e}");
        }
    }

    #[test]
    fn a_redirect_never_leaves_https_nor_loopback() {
        let https = "https://example.com/.well-known/agent-skills/index.json";
        let root = IndexUrl::parse(https).unwrap();
        assert_eq!(
            follow(https, "/v2/index.json", &root).unwrap(),
            "https://example.com/v2/index.json"
        );
        for (to, why) in [
            ("http://example.com/x", "loopback"),
            ("http://127.0.0.1/x", "from https"),
            ("file:///etc/passwd", "not https"),
        ] {
            let e = follow(https, to, &root).unwrap_err();
            assert!(e.contains(why), "{to}: {e}");
        }
        let local = "http://127.0.0.1:8080/index.json";
        let root = IndexUrl::parse(local).unwrap();
        assert!(follow(local, "http://localhost:9/x", &root).is_ok());
        assert!(follow(local, "http://example.com/x", &root).is_err());
    }

    #[test]
    fn artifact_urls_resolve_against_the_index() {
        let url = IndexUrl::parse("https://example.com").unwrap();
        let ok = [
            (
                "/.well-known/agent-skills/a/SKILL.md",
                "https://example.com/.well-known/agent-skills/a/SKILL.md",
            ),
            (
                "a.tar.gz",
                "https://example.com/.well-known/agent-skills/a.tar.gz",
            ),
            (
                "https://cdn.example.com/x.zip",
                "https://cdn.example.com/x.zip",
            ),
        ];
        for (reference, resolved) in ok {
            assert_eq!(url.resolve(reference).unwrap(), resolved);
        }
        assert!(url.resolve("http://127.0.0.1/a").is_err());
        assert!(url.resolve("http://example.org/a").is_err());
        assert!(url.resolve("file:///etc/passwd").is_err());
    }
}
