//! `read_yaml_items`: a YAML document that is a list of entries (a file of trigger cases,
//! `skillctl eval triggers`), each entry as a [`RawValue`] with its line; read by the same
//! bounded parser as a frontmatter.

use skills_model::RawValue;

use crate::node::Kind;
use crate::yaml::{parse, Limits};

/// Most nodes a data file's tree may hold (aliases expanded).
const MAX_DATA_NODES: usize = 500_000;

/// One entry of the list, with the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlItem {
    /// Where it starts.
    pub line: u32,
    /// Its value, as written.
    pub value: RawValue,
}

/// Why a YAML data file could not be read, with a 1-based place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct YamlProblem {
    /// The line.
    pub line: u32,
    /// The column (in characters).
    pub column: u32,
    /// What is wrong.
    pub message: String,
}

impl YamlProblem {
    /// Its stable code.
    pub fn code(&self) -> &'static str {
        "YAML_DATA"
    }
}

/// The entries of `text`: a YAML list, or a mapping whose key `key` holds the list. An
/// empty document has none.
pub fn read_yaml_items(text: &str, key: &str) -> Result<Vec<YamlItem>, YamlProblem> {
    let limits = Limits {
        max_depth: crate::DEFAULT_MAX_DEPTH,
        max_nodes: MAX_DATA_NODES,
    };
    let root = parse(text, limits).map_err(|e| YamlProblem {
        line: e.line,
        column: e.col,
        message: e.message,
    })?;
    let Some(root) = root else {
        return Ok(Vec::new());
    };
    let list = match &root.kind {
        Kind::Map(entries) => entries
            .iter()
            .find(|(k, _)| crate::fields::key_text(k) == key)
            .map(|(_, v)| v),
        _ => Some(&root),
    };
    let problem = |line: u32, column: u32| YamlProblem {
        line,
        column,
        message: format!(
            "expected a list of entries, or a mapping with the key `{key}` holding one"
        ),
    };
    let Some(list) = list else {
        return Err(problem(root.line, root.col));
    };
    let Kind::Seq(items) = &list.kind else {
        return Err(problem(list.line, list.col));
    };
    Ok(items
        .iter()
        .map(|item| YamlItem {
            line: item.line,
            value: crate::fields::raw(item),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_or_a_keyed_list_reads_and_anything_else_is_a_placed_problem() {
        let items = read_yaml_items(
            "- request: a\n  expect: x\n- request: b\n  expect: null\n",
            "cases",
        )
        .unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[1].line, 3);
        let keyed = read_yaml_items("cases:\n  - request: a\n", "cases").unwrap();
        assert_eq!(keyed.len(), 1);
        assert_eq!(read_yaml_items("", "cases").unwrap(), Vec::new());
        let bad = read_yaml_items("request: [\n", "cases").unwrap_err();
        assert!(bad.line >= 1, "{bad}");
        let wrong = read_yaml_items("other: 1\n", "cases").unwrap_err();
        assert!(wrong.message.contains("`cases`"), "{wrong}");
    }
}
