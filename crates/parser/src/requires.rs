//! What a skill needs, as `requires:` writes it and as other agents' conventions write it
//! inside `metadata` (OpenClaw's `metadata.openclaw.requires` and `os`, Hermes'
//! `metadata.hermes.requires_toolsets` and `fallback_for_tools`) or at the top level
//! (Hermes). Every convention is read into one [`Requires`].

use skills_model::{Frontmatter, Os, Requires};

use crate::fields::{entries, get, key_text, os_list, string_list, FieldReader};
use crate::node::Node;

impl FieldReader<'_> {
    /// `requires:` (`bins`, `env`, `os`, `secrets`): a mapping of lists of names. A key it
    /// does not know, an entry of the wrong shape and an `os` it does not know are warnings
    /// with their places; `validate` shows them.
    pub(crate) fn requires(&mut self, value: &Node<'_>) -> Option<Requires> {
        let Some(fields) = entries(value) else {
            self.ext_warning(
                "requires",
                "a mapping of `bins`, `env`, `os` and `secrets`",
                value,
            );
            return None;
        };
        let mut r = Requires::default();
        for (k, v) in fields {
            match &*key_text(k) {
                "bins" => r.bins = self.names("requires.bins", v, Names::Program),
                "env" => r.env = self.names("requires.env", v, Names::Variable),
                "secrets" => r.secrets = self.names("requires.secrets", v, Names::Variable),
                "os" => r.os = self.systems("requires.os", v),
                _ => self.ext_missing("requires", "only `bins`, `env`, `os` and `secrets`", k),
            }
        }
        Some(r)
    }

    /// A list of names (or one comma-separated string), each of the form `kind` asks.
    fn names(&mut self, field: &str, value: &Node<'_>, kind: Names) -> Vec<String> {
        let mut list = self.ext_list(field, value);
        if list.iter().all(|name| kind.ok(name)) {
            return list;
        }
        list.retain(|name| {
            let ok = kind.ok(name);
            if !ok {
                let message = format!("`{field}` entry {name:?} should be {}", kind.describe());
                self.ext_missing(field, &message, value);
            }
            ok
        });
        list
    }

    fn systems(&mut self, field: &str, value: &Node<'_>) -> Vec<Os> {
        let names = self.ext_list(field, value);
        let (known, unknown) = os_list(&names);
        for name in unknown {
            let needed = format!("`linux`, `macos` or `windows`, not {name:?}");
            self.ext_missing(field, &needed, value);
        }
        known
    }

    /// OpenClaw's and Hermes' needs inside `metadata`, read as nested mappings (the
    /// specification's `metadata` maps strings to strings; `metadata()` reports that).
    pub(crate) fn conventions_in_metadata(&mut self, fm: &mut Frontmatter, value: &Node<'_>) {
        let Some(fields) = entries(value) else {
            return;
        };
        let mut found = Requires::default();
        for alias in ["openclaw", "clawdbot"] {
            if let Some(entries) = get(fields, alias).and_then(entries) {
                openclaw(entries, &mut found);
            }
        }
        if let Some(entries) = get(fields, "hermes").and_then(entries) {
            for key in HERMES_KEYS {
                if let Some(v) = get(entries, key) {
                    hermes(key, v, &mut found);
                }
            }
        }
        add_elsewhere(fm, &found);
    }

    /// Hermes' `requires_toolsets` or `fallback_for_tools` at the top level.
    pub(crate) fn hermes_field(&mut self, fm: &mut Frontmatter, key: &str, value: &Node<'_>) {
        let mut found = Requires::default();
        hermes(key, value, &mut found);
        add_elsewhere(fm, &found);
    }
}

fn add_elsewhere(fm: &mut Frontmatter, found: &Requires) {
    if found.is_empty() {
        return;
    }
    fm.requires_elsewhere
        .get_or_insert_with(Default::default)
        .merge(found);
}

/// Hermes' keys: tools or toolsets the skill needs, and those it stands in for.
pub(crate) const HERMES_KEYS: [&str; 4] = [
    "requires_toolsets",
    "requires_tools",
    "fallback_for_tools",
    "fallback_for_toolsets",
];

fn hermes(key: &str, value: &Node<'_>, into: &mut Requires) {
    let list = string_list(value).unwrap_or_default();
    if key.starts_with("requires") {
        into.tools.extend(list);
    } else {
        into.fallback_for_tools.extend(list);
    }
}

/// OpenClaw's `requires` (`bins`, `anyBins`, `env`, `config`) and `os` (`darwin`, `linux`,
/// `win32`).
fn openclaw(fields: &[(Node<'_>, Node<'_>)], into: &mut Requires) {
    if let Some(requires) = get(fields, "requires").and_then(entries) {
        let list = |key: &str| get(requires, key).and_then(string_list).unwrap_or_default();
        into.bins.extend(list("bins"));
        let any = list("anyBins");
        if !any.is_empty() {
            into.any_bins.push(any);
        }
        into.env.extend(list("env"));
        into.config.extend(list("config"));
    }
    if let Some(os) = get(fields, "os").and_then(string_list) {
        // A name it does not know is passed over, as OpenClaw passes it over.
        into.os.extend(os_list(&os).0);
    }
}

/// What a name of a list must look like.
#[derive(Debug, Clone, Copy)]
enum Names {
    /// A program: no `/`, no NUL, not empty.
    Program,
    /// An environment variable: `[A-Za-z_][A-Za-z0-9_]*`.
    Variable,
}

impl Names {
    fn ok(self, name: &str) -> bool {
        match self {
            Names::Program => !name.is_empty() && !name.contains(['/', '\0']),
            Names::Variable => {
                name.bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                    && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            }
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Names::Program => "a program's name (no `/`)",
            Names::Variable => "a variable's name (letters, digits and `_`)",
        }
    }
}
