//! Secrets the host grants to skills' scripts: a name and a value, never shown. A value
//! reaches a script only when the host granted the name, the skill declares it
//! (`requires.secrets`) and the skill may run scripts at all (a trusted layer or origin).

use thiserror::Error;

/// The secrets a host granted. Its `Debug` shows the names only.
#[derive(Clone, Default)]
pub struct Secrets(Vec<(String, String)>);

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// Why a host cannot grant a secret.
#[derive(Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum SecretError {
    /// The environment filter refuses the name (SECURITY promise 16): never a secret.
    #[error("{0}: the environment filter refuses this name (it makes a program read code, options or a search path), so it is never a secret")]
    RefusedName(String),
    /// The value is shorter than [`skills_runner::MIN_SECRET_LEN`] bytes.
    #[error("{0}: a secret's value must be at least 8 bytes long (a shorter one is too easy to find by chance when redacting output)")]
    TooShort(String),
    /// The value holds a NUL byte (it cannot be put in an environment).
    #[error("{0}: a secret's value cannot hold a NUL byte")]
    Nul(String),
}

impl SecretError {
    /// A stable code.
    pub fn code(&self) -> &'static str {
        match self {
            SecretError::RefusedName(_) => "SECRET_NAME_REFUSED",
            SecretError::TooShort(_) => "SECRET_TOO_SHORT",
            SecretError::Nul(_) => "SECRET_NUL",
        }
    }
}

impl Secrets {
    /// Checks a grant: a name the environment filter accepts, a value of at least
    /// [`skills_runner::MIN_SECRET_LEN`] bytes without NUL.
    ///
    /// ```
    /// use skills_executor::Secrets;
    /// assert!(Secrets::check("GITHUB_TOKEN", "ghp_0123456789").is_ok());
    /// assert!(Secrets::check("LD_PRELOAD", "/tmp/evil.so").is_err());
    /// assert!(Secrets::check("PIN", "1234").is_err());
    /// ```
    pub fn check(name: &str, value: &str) -> Result<(), SecretError> {
        if skills_runner::is_refused_name(name) {
            return Err(SecretError::RefusedName(name.to_owned()));
        }
        if value.len() < skills_runner::MIN_SECRET_LEN {
            return Err(SecretError::TooShort(name.to_owned()));
        }
        if value.contains('\0') {
            return Err(SecretError::Nul(name.to_owned()));
        }
        Ok(())
    }

    /// Grants `name`, replacing an earlier grant of it.
    pub(crate) fn grant(&mut self, name: String, value: String) -> Result<(), SecretError> {
        Secrets::check(&name, &value)?;
        self.0.retain(|(n, _)| *n != name);
        self.0.push((name, value));
        Ok(())
    }

    /// The granted names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(n, _)| n.as_str())
    }

    /// Whether `name` is granted.
    pub fn has(&self, name: &str) -> bool {
        self.0.iter().any(|(n, _)| n == name)
    }

    /// The granted value of `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

impl Secrets {
    /// `text` with every granted value replaced by `[REDACTED:NAME]` (the runner's rule,
    /// [`skills_runner::redact`]); `None` when it holds none.
    pub(crate) fn redact_text(&self, text: &str) -> Option<String> {
        if self.0.is_empty() || !self.0.iter().any(|(_, v)| text.contains(v.as_str())) {
            return None;
        }
        let (bytes, _) = skills_runner::redact(text.as_bytes().to_vec(), usize::MAX, &self.0);
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// A file served to the model, with every granted value redacted (a base64 file's
    /// bytes are redacted before they are encoded again).
    pub(crate) fn redact_content(&self, mut c: crate::FileContent) -> crate::FileContent {
        use base64::Engine as _;
        if self.0.is_empty() {
            return c;
        }
        match c.encoding {
            crate::Encoding::Text => {
                if let Some(text) = self.redact_text(&c.content) {
                    c.content = text;
                }
            }
            crate::Encoding::Base64 => {
                let engine = base64::engine::general_purpose::STANDARD;
                if let Ok(bytes) = engine.decode(&c.content) {
                    let (bytes, _) = skills_runner::redact(bytes, usize::MAX, &self.0);
                    c.content = engine.encode(bytes);
                }
            }
        }
        c
    }
}
