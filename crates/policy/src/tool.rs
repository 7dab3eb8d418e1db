//! Tool names as the policy keys and shows them, and what a path tool does with its path
//! (the built-in path tools' table).

use std::borrow::Cow;

/// What a tool does with the path it is given (the host's policy says which tools are
/// path tools).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathAccess {
    /// Not a path tool.
    None,
    /// It reads (Read, Grep, Glob, LS).
    Read,
    /// It may write (Write, Edit, MultiEdit, NotebookEdit, and tools the host declares).
    Write,
}

/// The built-in path tools, with their real field names (paths, then patterns below the
/// path): every path rule and protection applies to all of them.
pub const PATH_TOOLS: [(&str, PathAccess, &[&str], &[&str]); 8] = {
    use PathAccess::{Read, Write};
    [
        ("read", Read, &["file_path", "path"], &[]),
        ("grep", Read, &["path"], &[]),
        ("glob", Read, &["path"], &["pattern"]),
        ("ls", Read, &["path"], &[]),
        ("write", Write, &["file_path", "path"], &[]),
        ("edit", Write, &["file_path", "path"], &[]),
        ("multiedit", Write, &["file_path"], &[]),
        ("notebookedit", Write, &["notebook_path"], &[]),
    ]
};

/// The longest tool name judged (the bound MCP sets on tool names).
pub const TOOL_NAME_MAX: usize = 128;

/// A tool's name as the policy keys it (ASCII lowercase), or `None` when it is not a plain
/// name: 1 to 128 ASCII letters, digits, `_`, `-`, `.` or `:`. Anything else (a space, a
/// control or zero-width character, a fullwidth letter) is denied, never judged as an
/// unknown tool: a host that trims or folds names could run a path tool under it with no
/// protection applied.
pub fn tool_key(tool: &str) -> Option<String> {
    let plain = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':');
    (!tool.is_empty() && tool.len() <= TOOL_NAME_MAX && tool.bytes().all(plain))
        .then(|| tool.to_ascii_lowercase())
}

/// A tool name as answers and audit events show it: whole when plain, else its first
/// [`TOOL_NAME_MAX`] bytes (on a character boundary) and `...`, so a megabyte of
/// combining marks is not echoed, escaped, into every answer and event.
pub fn shown_tool(tool: &str) -> Cow<'_, str> {
    skills_model::cut_text(tool, TOOL_NAME_MAX)
}

/// Whether `tool` is a plain tool name, the only kind `check_tool` judges (1 to 128 ASCII
/// letters, digits, `_`, `-`, `.` or `:`): hosts check the names they declare with it, since
/// a call to a tool whose name is not plain is always denied.
///
/// ```
/// assert!(skills_policy::is_plain_tool_name("mcp__github__create_issue"));
/// assert!(!skills_policy::is_plain_tool_name("Write "));
/// assert!(!skills_policy::is_plain_tool_name("\u{c9}diter"));
/// ```
pub fn is_plain_tool_name(tool: &str) -> bool {
    tool_key(tool).is_some()
}

/// Why a tool name [`tool_key`] does not admit is denied.
pub fn not_plain(tool: &str) -> String {
    format!(
        "the tool name {:?} is not a plain name (1 to {TOOL_NAME_MAX} ASCII letters, digits, '_', '-', '.' or ':'), so no rule can be proven to apply to it",
        shown_tool(tool)
    )
}
