//! Support for the fuzz targets and property tests of enforcement (not part of the API):
//! the grammar's readings of a Bash line (the fast path, the parser) and the reading by the
//! shell's quoting rules that the parser's must agree with.

/// The fast path's reading of a line (`None` when it declines).
pub fn bash_fast_path(line: &str) -> Option<Vec<Vec<String>>> {
    crate::shell::fast_path(line)
}

/// The parser's reading of a line, or the construct it refuses.
pub fn bash_parse(line: &str) -> Result<Vec<Vec<String>>, String> {
    crate::shell::parse(line).map_err(|r| r.to_string())
}

/// The shell-quoting reading the grammar's must agree with (see `shell.rs`); the fuzz
/// target and the property tests check rule containment against it.
pub fn admitted_commands(line: &str) -> Option<Vec<Vec<String>>> {
    crate::shell::lexical_commands(line)
}
