//! Redaction of secret values from a script's output, before the output is cut to its cap.
//!
//! The rule: every occurrence of a secret's exact bytes that starts before the cap is
//! replaced by `[REDACTED:NAME]`, leftmost first (at one place, the longest value wins);
//! the bytes that follow the cap in the stream are dropped, then the text is cut to the cap.
//! The reader keeps `cap + longest value - 1` bytes, so an occurrence that starts before
//! the cap is always seen whole. Only the exact bytes are found: an encoding of a value
//! (base64, hex, URL escapes, a value split across writes to stdout and stderr, or a part
//! of it) is not.

/// The shortest value a secret may have, in bytes: shorter values are too easy to find by
/// chance in ordinary output, where redacting them would garble it.
pub const MIN_SECRET_LEN: usize = 8;

/// How many bytes past the cap a reader keeps so that a value that starts before the cap
/// is read whole.
pub(crate) fn slack(secrets: &[(String, String)]) -> usize {
    secrets
        .iter()
        .map(|(_, v)| v.len().saturating_sub(1))
        .max()
        .unwrap_or(0)
}

/// `data` with every value of `secrets` that starts before `limit` replaced by
/// `[REDACTED:NAME]`, and without the bytes at or past `limit` that no such occurrence
/// covers; and whether bytes were dropped. With no secrets, `data` as it is.
///
/// ```
/// let secrets = [("API_TOKEN".to_owned(), "s3cr3t-value".to_owned())];
/// let (out, cut) = skills_runner::redact(b"token=s3cr3t-value\n".to_vec(), 1024, &secrets);
/// assert_eq!(out, b"token=[REDACTED:API_TOKEN]\n");
/// assert!(!cut);
/// // A value that starts before the cap is redacted, not cut in half.
/// let (out, cut) = skills_runner::redact(b"abcs3cr3t-value".to_vec(), 5, &secrets);
/// assert_eq!(out, b"abc[REDACTED:API_TOKEN]");
/// assert!(!cut);
/// ```
pub fn redact(data: Vec<u8>, limit: usize, secrets: &[(String, String)]) -> (Vec<u8>, bool) {
    let values: Vec<(&str, &[u8])> = secrets
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(n, v)| (n.as_str(), v.as_bytes()))
        .collect();
    if values.is_empty() {
        return (data, false);
    }
    let mut out = Vec::with_capacity(data.len().min(limit));
    let mut i = 0;
    while i < data.len() && i < limit {
        let found = values
            .iter()
            .filter(|(_, v)| data[i..].starts_with(v))
            .max_by_key(|(_, v)| v.len());
        match found {
            Some((name, value)) => {
                out.extend_from_slice(b"[REDACTED:");
                out.extend_from_slice(name.as_bytes());
                out.push(b']');
                i += value.len();
            }
            None => {
                out.push(data[i]);
                i += 1;
            }
        }
    }
    (out, i < data.len())
}

#[cfg(test)]
mod tests {
    use super::redact;

    fn secrets() -> Vec<(String, String)> {
        vec![
            ("SHORT".to_owned(), "abcdefgh".to_owned()),
            ("LONG".to_owned(), "abcdefgh-and-more".to_owned()),
        ]
    }

    #[test]
    fn the_longest_value_at_a_place_wins_and_every_occurrence_goes() {
        let (out, _) = redact(b"abcdefgh-and-more abcdefgh".to_vec(), 100, &secrets());
        assert_eq!(out, b"[REDACTED:LONG] [REDACTED:SHORT]");
    }

    /// A value that would shrink the text below the cap does not let bytes from past the
    /// cap in: a prefix of a value there could be the start of a secret.
    #[test]
    fn bytes_past_the_cap_never_enter_the_output() {
        let mut data = b"abcdefgh-and-more".to_vec();
        data.extend_from_slice(b"abcd");
        let (out, cut) = redact(data, 17, &secrets());
        assert_eq!(out, b"[REDACTED:LONG]");
        assert!(cut);
    }
}
