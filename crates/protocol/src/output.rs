//! What a request's output becomes: a tree ([`crate::call`]) or JSON text (the JSON-lines
//! framing), with the same keys in the same order either way.

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;
use skills_executor::{CheckResult, Decision, Verdict};

/// What a request's output becomes: a tree or JSON text.
pub(crate) trait Output {
    type Out;
    /// Any result, through a tree, so its keys come out sorted as they always have.
    fn tree<T: Serialize>(value: T) -> Self::Out;
    /// A result whose fields are declared in alphabetical order (nested ones too): written
    /// straight to text, in the same key order (`check_tool`'s, the hot path).
    fn sorted<T: Serialize>(value: T) -> Self::Out;
}

/// Outputs as trees, for [`crate::call`].
pub(crate) struct AsTree;

impl Output for AsTree {
    type Out = Value;
    fn tree<T: Serialize>(value: T) -> Value {
        // The result types are plain data: serialising them cannot fail.
        serde_json::to_value(value).unwrap_or(Value::Null)
    }
    fn sorted<T: Serialize>(value: T) -> Value {
        Self::tree(value)
    }
}

/// Outputs as JSON text, for [`crate::respond_line`].
pub(crate) struct AsText;

impl Output for AsText {
    type Out = Box<RawValue>;
    fn tree<T: Serialize>(value: T) -> Box<RawValue> {
        Self::sorted(AsTree::tree(value))
    }
    fn sorted<T: Serialize>(value: T) -> Box<RawValue> {
        serde_json::value::to_raw_value(&value).unwrap_or_else(|_| null().to_owned())
    }
}

/// The JSON text `null`: a missing id or input, and the output that cannot be written.
pub(crate) fn null() -> &'static RawValue {
    // `null` is valid JSON: this cannot fail.
    static NULL: std::sync::OnceLock<Box<RawValue>> = std::sync::OnceLock::new();
    NULL.get_or_init(|| RawValue::from_string("null".to_owned()).unwrap_or_default())
}

/// A decision as `check_tool` answers it.
pub(crate) fn check_result(d: Decision) -> CheckResult {
    CheckResult {
        decision: if d.allowed {
            Verdict::Allow
        } else {
            Verdict::Deny
        },
        reason: d.reason,
        skill: d.skill,
        rule: d.rule,
    }
}

#[cfg(test)]
mod output_order {
    use super::*;

    /// `check_tool`'s result goes to text without a tree: its keys must come out in the
    /// order a tree gives them (alphabetical), or hosts would see the bytes change.
    #[test]
    fn a_sorted_result_is_the_same_text_as_its_tree() {
        let full = CheckResult {
            decision: Verdict::Deny,
            reason: "why".into(),
            skill: Some("s".into()),
            rule: Some("Bash(git status:*)".into()),
        };
        let bare = CheckResult {
            decision: Verdict::Allow,
            reason: "why".into(),
            skill: None,
            rule: None,
        };
        for result in [full, bare] {
            let text = AsText::sorted(result.clone());
            let tree = serde_json::to_string(&AsTree::tree(result)).unwrap();
            assert_eq!(text.get(), tree);
        }
    }
}
