//! `skill://` URIs: `skill://{layer}/{name}/{+path}` for a skill's files and
//! `skill://{layer}/{name}[/{dir}]` for its folders, the layer `enterprise`, `personal`,
//! `project` or `plugin.<id>`, the name and path percent-encoded.

use skills_model::{Layer, SkillRecord};

/// The URI segment of a skill's layer: `enterprise`, `personal`, `project`, `plugin.<id>`.
pub(crate) fn layer_segment(record: &SkillRecord) -> String {
    match &record.plugin {
        Some(id) => format!("plugin.{id}"),
        None => record.layer.to_string(),
    }
}

/// `skill://{layer}/{name}/{path}`, the name and the path percent-encoded (all but
/// letters, digits, `-._~`, and the path's `/`), so that a file named `a b#1.md` makes a
/// URI whose path is not cut at `#` or `?` by a client that parses it.
pub(crate) fn uri(record: &SkillRecord, path: &str) -> String {
    format!(
        "skill://{}/{}/{}",
        layer_segment(record),
        encoded(record.name.as_str(), ""),
        encoded(path, "/")
    )
}

/// `text` percent-encoded but for unreserved characters and those in `kept`.
pub(crate) fn encoded(text: &str, kept: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) || kept.as_bytes().contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `text` with its percent escapes decoded; `None` for a malformed escape or bytes that are
/// not UTF-8.
pub(crate) fn decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            // Two hex digits, and nothing else: `u8::from_str_radix` takes a sign too.
            let hex = bytes.get(i + 1..i + 3)?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A resource URI's skill (as a qualified name) and path, escapes decoded (a name that
/// decodes to hold `/` or `:` names no skill).
pub(crate) fn parse_uri(uri: &str) -> Option<(String, String)> {
    let rest = uri.strip_prefix("skill://")?;
    let (layer, rest) = rest.split_once('/')?;
    let (name, path) = rest.split_once('/')?;
    let name = decoded(name).filter(|n| !n.contains(['/', ':']))?;
    let qualified = match layer.strip_prefix("plugin.") {
        Some(id) => format!("{id}:{name}"),
        None => {
            layer.parse::<Layer>().ok()?;
            format!("{layer}:{name}")
        }
    };
    Some((qualified, decoded(path)?))
}

/// A directory URI's skill (as a qualified name) and folder path (`""` for the skill's
/// root, written without a trailing `/`), escapes decoded.
pub(crate) fn parse_dir_uri(uri: &str) -> Option<(String, String)> {
    let rest = uri.strip_prefix("skill://")?;
    if rest.ends_with('/') {
        return None;
    }
    let slashes = rest.matches('/').count();
    if slashes == 1 {
        let (qualified, _) = parse_uri(&format!("{uri}/x"))?;
        return Some((qualified, String::new()));
    }
    parse_uri(uri)
}
