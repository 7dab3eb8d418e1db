//! A frontmatter as its YAML 1.2 core-schema value, as JSON: what MCP's skills extension
//! serves as an entry's `frontmatter` and what a host compares a fetched `SKILL.md` with.
//! Not the lenient loader's reading (which keeps source text): a file the loader would have
//! to repair, or whose value JSON cannot hold exactly, has no core value.

use serde_json::{Map, Number, Value};

use crate::node::{Kind, Node, ScalarType};
use crate::{split, yaml, DEFAULT_FRONTMATTER_LIMIT, DEFAULT_MAX_DEPTH, DEFAULT_MAX_NODES};

/// Why a `SKILL.md` has no core-schema frontmatter value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CoreValueError(String);

/// The frontmatter of `source` (the bytes of a `SKILL.md`) as its YAML 1.2 core-schema
/// value: a mapping with string keys, plain scalars typed by the core schema, quoted and
/// block scalars strings. Refused (with the reason) when the file does not split strictly
/// or its YAML does not parse (the lenient loader would repair it), when the frontmatter is
/// not a mapping, a key is not a string or is written twice, or a number has no exact JSON
/// form (`.inf`, `.nan`, an integer beyond 64 bits).
///
/// ```
/// let value = skills_parser::core_frontmatter(b"---\nname: a\ndescription: d\nmetadata:\n  version: 1.0\n---\n").unwrap();
/// assert_eq!(value["metadata"]["version"], serde_json::json!(1.0));
/// assert!(skills_parser::core_frontmatter(b"---\nname: a\ndescription: x: y\n---\n").is_err());
/// ```
pub fn core_frontmatter(source: &[u8]) -> Result<Map<String, Value>, CoreValueError> {
    let bytes = source.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(source);
    let text =
        std::str::from_utf8(bytes).map_err(|_| CoreValueError("SKILL.md is not UTF-8".into()))?;
    let split = split::split(text, DEFAULT_FRONTMATTER_LIMIT)
        .map_err(|d| CoreValueError(format!("the frontmatter does not split: {}", d.message)))?;
    let limits = yaml::Limits {
        max_depth: DEFAULT_MAX_DEPTH,
        max_nodes: DEFAULT_MAX_NODES,
    };
    let root = yaml::parse(split.yaml, limits).map_err(|e| {
        CoreValueError(format!(
            "the frontmatter is not YAML (line {}, column {}): {}",
            e.line + 1,
            e.col,
            e.message
        ))
    })?;
    match root.as_ref().map(value).transpose()? {
        Some(Value::Object(map)) => Ok(map),
        _ => Err(CoreValueError("the frontmatter is not a mapping".into())),
    }
}

/// One node as its core-schema JSON value.
fn value(node: &Node<'_>) -> Result<Value, CoreValueError> {
    match &node.kind {
        Kind::Scalar(s) => scalar(s.resolve(), &s.text),
        Kind::Seq(items) => items
            .iter()
            .map(value)
            .collect::<Result<_, _>>()
            .map(Value::Array),
        Kind::Map(entries) => {
            let mut map = Map::new();
            for (k, v) in entries {
                let key = match &k.kind {
                    Kind::Scalar(s) if s.resolve() == ScalarType::Str => s.text.to_string(),
                    _ => {
                        return Err(CoreValueError(format!(
                            "a key at line {} is not a string",
                            k.line
                        )))
                    }
                };
                if map.insert(key.clone(), value(v)?).is_some() {
                    return Err(CoreValueError(format!("the key {key:?} is written twice")));
                }
            }
            Ok(Value::Object(map))
        }
    }
}

/// A scalar's JSON value under the core schema.
fn scalar(kind: ScalarType, text: &str) -> Result<Value, CoreValueError> {
    let inexact = || CoreValueError(format!("{text:?} has no exact JSON number"));
    Ok(match kind {
        ScalarType::Null => Value::Null,
        ScalarType::Bool => Value::Bool(matches!(text, "true" | "True" | "TRUE")),
        ScalarType::Str => Value::String(text.to_owned()),
        ScalarType::Int => {
            let (negative, digits) = match text.as_bytes().first() {
                Some(b'-') => (true, &text[1..]),
                Some(b'+') => (false, &text[1..]),
                _ => (false, text),
            };
            let (radix, digits) = if let Some(d) = digits.strip_prefix("0x") {
                (16, d)
            } else if let Some(d) = digits.strip_prefix("0o") {
                (8, d)
            } else {
                (10, digits)
            };
            let magnitude = u64::from_str_radix(digits, radix).map_err(|_| inexact())?;
            if negative {
                let n = i64::try_from(magnitude)
                    .map(|m| -m)
                    .map_err(|_| inexact())?;
                Value::Number(n.into())
            } else {
                Value::Number(magnitude.into())
            }
        }
        ScalarType::Float => {
            let f: f64 = text.parse().map_err(|_| inexact())?;
            Value::Number(Number::from_f64(f).ok_or_else(inexact)?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::core_frontmatter;
    use serde_json::json;

    #[test]
    fn frontmatter_values_follow_the_core_schema() {
        let source = b"---\nname: a\ndescription: 'd: e'\nlicense: MIT\nversion: 1.0\ncount: 0x10\nneg: -3\non: yes\nflag: true\nnone: ~\nquoted: \"12\"\ntags: [x, 2]\nmetadata:\n  k: v\n---\nbody\n";
        let value = core_frontmatter(source).unwrap();
        assert_eq!(
            serde_json::Value::Object(value),
            json!({"name": "a", "description": "d: e", "license": "MIT", "version": 1.0,
                   "count": 16, "neg": -3, "on": "yes", "flag": true, "none": null,
                   "quoted": "12", "tags": ["x", 2], "metadata": {"k": "v"}})
        );
    }

    #[test]
    fn what_the_loader_repairs_or_json_cannot_hold_has_no_core_value() {
        for bad in [
            &b"---\nname: a\ndescription: x: y\n---\n"[..],
            b"---  \nname: a\ndescription: d\n---\n",
            b"no frontmatter\n",
            b"---\n- a\n---\n",
            b"---\nname: a\nx: .inf\n---\n",
            b"---\nname: a\n1: x\n---\n",
            b"---\nname: a\nbig: 99999999999999999999\n---\n",
        ] {
            assert!(
                core_frontmatter(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
