//! What a skill needs to work here (`requires:`, and the conventions of other agents read
//! into the same model): programs on `PATH`, environment variables, an operating system,
//! tools the host offers, and the secrets its scripts receive. The checks are pure: the
//! caller says what is on `PATH`, what is set and which tools it offers.

use serde::{Serialize, Serializer};

/// An operating system a skill may ask for (`requires.os`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Os {
    /// Linux.
    Linux,
    /// macOS (OpenClaw's `darwin`).
    Macos,
    /// Windows (OpenClaw's `win32`).
    Windows,
}

impl Os {
    /// Reads a name: ours (`linux`, `macos`, `windows`) or Node's, as OpenClaw writes them
    /// (`darwin`, `win32`). Case is ignored.
    ///
    /// ```
    /// use skills_model::Os;
    /// assert_eq!(Os::parse("darwin"), Some(Os::Macos));
    /// assert_eq!(Os::parse("win32"), Some(Os::Windows));
    /// assert_eq!(Os::parse("Linux"), Some(Os::Linux));
    /// assert_eq!(Os::parse("beos"), None);
    /// ```
    pub fn parse(name: &str) -> Option<Os> {
        let is = |names: &[&str]| names.iter().any(|n| n.eq_ignore_ascii_case(name));
        if is(&["linux"]) {
            Some(Os::Linux)
        } else if is(&["macos", "darwin", "osx"]) {
            Some(Os::Macos)
        } else if is(&["windows", "win32"]) {
            Some(Os::Windows)
        } else {
            None
        }
    }

    /// The system this program was built for, when it is one of the three.
    pub fn current() -> Option<Os> {
        if cfg!(target_os = "linux") {
            Some(Os::Linux)
        } else if cfg!(target_os = "macos") {
            Some(Os::Macos)
        } else if cfg!(target_os = "windows") {
            Some(Os::Windows)
        } else {
            None
        }
    }

    /// Our name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Os::Linux => "linux",
            Os::Macos => "macos",
            Os::Windows => "windows",
        }
    }
}

impl Serialize for Os {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// What a skill needs. Read from `requires:` (`bins`, `env`, `os`, `secrets`) and, into a
/// second value ([`Frontmatter::requires_elsewhere`](crate::Frontmatter::requires_elsewhere)), from other agents' conventions. It
/// serialises under the keys `requires:` has, the lists that are set only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Requires {
    /// Programs that must all be on `PATH`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bins: Vec<String>,
    /// Groups of programs of which at least one must be on `PATH` (OpenClaw's `anyBins`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub any_bins: Vec<Vec<String>>,
    /// Environment variables that must be set (and not empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// Operating systems the skill works on; empty means any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub os: Vec<Os>,
    /// Names of secrets the skill's scripts need: given to them only when the host grants
    /// them, never shown to the model.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<String>,
    /// Tools (or toolsets) the host must offer: Hermes' `requires_toolsets`, Codex's
    /// `dependencies.tools`, skillscraft's required `tool-binding.dependencies`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Tools whose presence makes this skill unneeded (Hermes' `fallback_for_tools`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fallback_for_tools: Vec<String>,
    /// OpenClaw's `config` keys: kept and shown, not checked (this runtime has no OpenClaw
    /// configuration to read them in).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub config: Vec<String>,
}

impl Requires {
    /// Whether it asks for nothing.
    pub fn is_empty(&self) -> bool {
        *self == Requires::default()
    }

    /// Adds `other`'s needs to these, each name once.
    pub fn merge(&mut self, other: &Requires) {
        fn add<T: PartialEq + Clone>(into: &mut Vec<T>, from: &[T]) {
            for item in from {
                if !into.contains(item) {
                    into.push(item.clone());
                }
            }
        }
        add(&mut self.bins, &other.bins);
        add(&mut self.any_bins, &other.any_bins);
        add(&mut self.env, &other.env);
        add(&mut self.os, &other.os);
        add(&mut self.secrets, &other.secrets);
        add(&mut self.tools, &other.tools);
        add(&mut self.fallback_for_tools, &other.fallback_for_tools);
        add(&mut self.config, &other.config);
    }

    /// The needs this machine does not meet: programs (`has_program` answers for one name
    /// on the `PATH` scripts receive), variables (`is_set`) and the system (`os`). Tools are
    /// the host's to say ([`Requires::unmet_tools`]).
    ///
    /// ```
    /// use skills_model::{Os, Requires, Unmet};
    /// let needs = Requires { bins: vec!["jq".into()], os: vec![Os::Macos], ..Requires::default() };
    /// let unmet = needs.unmet_here(Some(Os::Linux), &mut |_| false, &|_| true);
    /// assert_eq!(unmet.len(), 2);
    /// assert!(matches!(&unmet[0], Unmet::Os { .. }));
    /// assert!(matches!(&unmet[1], Unmet::Program(p) if p == "jq"));
    /// ```
    pub fn unmet_here(
        &self,
        os: Option<Os>,
        has_program: &mut dyn FnMut(&str) -> bool,
        is_set: &dyn Fn(&str) -> bool,
    ) -> Vec<Unmet> {
        let mut unmet = Vec::new();
        if !self.os.is_empty() && !os.is_some_and(|here| self.os.contains(&here)) {
            unmet.push(Unmet::Os {
                wanted: self.os.clone(),
                here: os,
            });
        }
        for bin in &self.bins {
            if !has_program(bin) {
                unmet.push(Unmet::Program(bin.clone()));
            }
        }
        for group in &self.any_bins {
            if !group.is_empty() && !group.iter().any(|b| has_program(b)) {
                unmet.push(Unmet::AnyProgram(group.clone()));
            }
        }
        for name in &self.env {
            if !is_set(name) {
                unmet.push(Unmet::Variable(name.clone()));
            }
        }
        unmet
    }

    /// Whether this machine meets every need [`Requires::unmet_here`] judges, allocating
    /// nothing.
    pub fn met_here(
        &self,
        os: Option<Os>,
        has_program: &dyn Fn(&str) -> bool,
        is_set: &dyn Fn(&str) -> bool,
    ) -> bool {
        (self.os.is_empty() || os.is_some_and(|here| self.os.contains(&here)))
            && self.bins.iter().all(|b| has_program(b))
            && self
                .any_bins
                .iter()
                .all(|g| g.is_empty() || g.iter().any(|b| has_program(b)))
            && self.env.iter().all(|v| is_set(v))
    }

    /// The needs the host's tools do not meet, when the host has said which tools it
    /// offers (`None`: it has not, and tool needs are not judged).
    pub fn unmet_tools(&self, offered: Option<&[String]>) -> Vec<Unmet> {
        let Some(offered) = offered else {
            return Vec::new();
        };
        let has = |t: &String| offered.iter().any(|o| o.eq_ignore_ascii_case(t));
        let mut unmet: Vec<Unmet> = self
            .tools
            .iter()
            .filter(|t| !has(t))
            .map(|t| Unmet::Tool(t.clone()))
            .collect();
        unmet.extend(
            self.fallback_for_tools
                .iter()
                .filter(|t| has(t))
                .map(|t| Unmet::FallbackFor(t.clone())),
        );
        unmet
    }
}

/// One need not met here: why a skill is not offered, and what would meet it. For the host
/// and the operator only (`list`, `show`, `doctor`, the host-only request); never in an
/// answer to the model. It serialises as its message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Unmet {
    /// A program is not on `PATH`.
    Program(String),
    /// None of these programs is on `PATH`.
    AnyProgram(Vec<String>),
    /// An environment variable is not set.
    Variable(String),
    /// The skill is for other systems.
    Os {
        /// The systems it works on.
        wanted: Vec<Os>,
        /// This one.
        here: Option<Os>,
    },
    /// The host does not offer a tool the skill needs.
    Tool(String),
    /// The host offers a tool this skill stands in for.
    FallbackFor(String),
}

impl Unmet {
    /// What would meet it, for `doctor`.
    pub fn fix(&self) -> String {
        match self {
            Unmet::Program(p) => format!("install `{p}` or put its folder on PATH"),
            Unmet::AnyProgram(ps) => format!("install one of {}", ps.join(", ")),
            Unmet::Variable(v) => format!("set the environment variable {v}"),
            Unmet::Os { .. } => "use it on a system it names".to_owned(),
            Unmet::Tool(t) => format!("offer the tool `{t}` to the model (--host-tool {t})"),
            Unmet::FallbackFor(_) => "nothing: the tool it stands in for is offered".to_owned(),
        }
    }
}

impl std::fmt::Display for Unmet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unmet::Program(p) => write!(f, "program `{p}` is not on PATH"),
            Unmet::AnyProgram(ps) => write!(f, "none of {} is on PATH", ps.join(", ")),
            Unmet::Variable(v) => write!(f, "environment variable {v} is not set"),
            Unmet::Os { wanted, here } => {
                let wanted: Vec<&str> = wanted.iter().map(|o| o.as_str()).collect();
                let here = here.map_or("this system", Os::as_str);
                write!(f, "it works on {}, not {here}", wanted.join(", "))
            }
            Unmet::Tool(t) => write!(f, "the host does not offer the tool `{t}`"),
            Unmet::FallbackFor(t) => {
                write!(f, "the host offers `{t}`, which this skill stands in for")
            }
        }
    }
}

impl Serialize for Unmet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// One entry of skillscraft's `security.capabilities`: a name, or an object with the
/// capability, why it is needed and whether the skill works without it. It serialises as
/// it was written: a string, or `{capability, reason, optional}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Capability {
    /// The capability's name.
    pub capability: String,
    /// Why the skill needs it.
    pub reason: Option<String>,
    /// Whether the skill works without it.
    pub optional: Option<bool>,
    /// Whether it was written as an object.
    pub object: bool,
}

impl Serialize for Capability {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        if !self.object {
            return serializer.serialize_str(&self.capability);
        }
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("capability", &self.capability)?;
        if let Some(reason) = &self.reason {
            map.serialize_entry("reason", reason)?;
        }
        if let Some(optional) = &self.optional {
            map.serialize_entry("optional", optional)?;
        }
        map.end()
    }
}
