//! Where a plugin root came from: the host's own code or the protocol. Below the executor,
//! the stack and the session, which all ask it.

/// How a plugin root came to the index: from the host's own code (its trust follows the
/// plugin layer's), or over the protocol (untrusted unless the host trusts it by id or
/// trusts the plugin layer explicitly).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginOrigin {
    /// Registered by the host's code (`SkillIndex::register_plugin`, a builder root).
    Host,
    /// Registered over the protocol (`register_plugin`).
    Protocol,
}

/// What a plugin registered over the protocol is read from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum PluginRoot<'a> {
    /// A skill folder.
    Folder(&'a std::path::Path),
    /// An MCP server the host declared, by label.
    Server(&'a str),
}
