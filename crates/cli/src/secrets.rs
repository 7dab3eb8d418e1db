//! Where secret values come from: `--secrets-file FILE` (a dotenv file, checked when the
//! command starts: a regular file, owned by this user, that no one else may read or write)
//! and `--secret NAME` (the value of NAME in this process's environment). The file rule
//! is also `--mcp-token-file`'s.

use std::io::Read as _;
use std::path::Path;

use anyhow::{bail, Context, Result};

/// The largest secrets file read.
const MAX_SECRETS_FILE: u64 = 64 * 1024;

/// The grants `--secrets-file` and `--secret` ask for, as name and value.
pub(crate) fn grants(file: Option<&Path>, names: &[String]) -> Result<Vec<(String, String)>> {
    let mut grants = Vec::new();
    if let Some(file) = file {
        let text =
            read_private(file).with_context(|| format!("--secrets-file {}", file.display()))?;
        grants.extend(
            parse_dotenv(&text).with_context(|| format!("--secrets-file {}", file.display()))?,
        );
    }
    for name in names {
        let value = std::env::var(name).with_context(|| {
            format!("--secret {name}: {name} is not set in this environment (or is not UTF-8)")
        })?;
        grants.push((name.clone(), value));
    }
    Ok(grants)
}

/// The text of `file`, refused unless it is a regular file of this user's that no one else
/// may read or write (mode `0600` or narrower): the one rule for every file holding a
/// secret (`--secrets-file`, `--mcp-token-file`).
pub(crate) fn read_private(file: &Path) -> Result<String> {
    let (handle, meta) =
        skills_storage::open_regular(file).context("cannot open it as a regular file")?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let mode = meta.mode() & 0o777;
        if mode & 0o077 != 0 {
            bail!("its mode is {mode:o}: a file holding secrets must be readable only by its owner (chmod 600)");
        }
        if meta.uid() != rustix::process::geteuid().as_raw() {
            bail!("it belongs to another user: a file holding secrets must be this user's own");
        }
    }
    if meta.len() > MAX_SECRETS_FILE {
        bail!("it is larger than {MAX_SECRETS_FILE} bytes");
    }
    let mut text = String::new();
    handle
        .take(MAX_SECRETS_FILE)
        .read_to_string(&mut text)
        .context("it is not UTF-8 text")?;
    Ok(text)
}

/// `NAME=value` lines; blank lines and `#` comments skipped; `export ` before a name and
/// one pair of matching quotes around a value allowed. Anything else is an error with its
/// line (the value is never shown).
fn parse_dotenv(text: &str) -> Result<Vec<(String, String)>> {
    let mut pairs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((name, value)) = line.split_once('=') else {
            bail!("line {}: expected NAME=value", i + 1);
        };
        let name = name.trim();
        let value = value.trim();
        let value = ['"', '\'']
            .iter()
            .find_map(|q| value.strip_prefix(*q).and_then(|v| v.strip_suffix(*q)))
            .unwrap_or(value);
        if name.is_empty() {
            bail!("line {}: a name is missing before `=`", i + 1);
        }
        pairs.push((name.to_owned(), value.to_owned()));
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    #[test]
    fn dotenv_lines_are_read_and_bad_ones_named_by_line() {
        let pairs = super::parse_dotenv(
            "# comment\n\nexport API_TOKEN=\"abc def 123\"\nOTHER='x=y=z-long'\nPLAIN=value\n",
        )
        .unwrap();
        assert_eq!(
            pairs,
            [
                ("API_TOKEN".to_owned(), "abc def 123".to_owned()),
                ("OTHER".to_owned(), "x=y=z-long".to_owned()),
                ("PLAIN".to_owned(), "value".to_owned()),
            ]
        );
        let err = super::parse_dotenv("A=1\nnot a pair\n").unwrap_err();
        assert_eq!(err.to_string(), "line 2: expected NAME=value");
    }
}
