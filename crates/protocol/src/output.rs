//! What a request's output becomes: a tree ([`crate::call`]) or JSON text (the JSON-lines
//! framing), with the same keys in the same order either way.

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;
use skills_executor::{CheckResult, Decision, Verdict};

use crate::json_text::json_str;

/// What a request's output becomes: a tree or JSON text.
pub(crate) trait Output {
    type Out;
    /// Any result, through a tree, so its keys come out sorted as they always have.
    fn tree<T: Serialize>(value: T) -> Self::Out;
    /// `check_tool`'s result (the hot path), with the keys in the order a tree gives.
    fn check(result: CheckResult) -> Self::Out;
}

/// Outputs as trees, for [`crate::call`].
pub(crate) struct AsTree;

impl Output for AsTree {
    type Out = Value;
    fn tree<T: Serialize>(value: T) -> Value {
        // The result types are plain data: serialising them cannot fail.
        serde_json::to_value(value).unwrap_or(Value::Null)
    }
    fn check(result: CheckResult) -> Value {
        Self::tree(result)
    }
}

/// Outputs as JSON text, for [`crate::respond_line`]: text this crate wrote, valid JSON by
/// construction.
pub(crate) struct AsText;

impl Output for AsText {
    type Out = String;
    fn tree<T: Serialize>(value: T) -> String {
        serde_json::to_string(&AsTree::tree(value)).unwrap_or_else(|_| null().get().to_owned())
    }
    /// Written field by field, in alphabetical order, the strings escaped as serde_json
    /// escapes them ([`json_str`]), with no tree and no buffer copied.
    fn check(result: CheckResult) -> String {
        let CheckResult {
            decision,
            reason,
            rule,
            skill,
        } = result;
        // The keys and quotes take 53 bytes; a few more hold the escapes a reason has (the
        // skill's name is quoted in it).
        let mut out = String::with_capacity(
            64 + reason.len()
                + rule.as_ref().map_or(0, String::len)
                + skill.as_ref().map_or(0, String::len),
        );
        out.push_str(match decision {
            Verdict::Allow => "{\"decision\":\"allow\",\"reason\":",
            Verdict::Deny => "{\"decision\":\"deny\",\"reason\":",
        });
        json_str(&mut out, &reason);
        if let Some(rule) = &rule {
            out.push_str(",\"rule\":");
            json_str(&mut out, rule);
        }
        if let Some(skill) = &skill {
            out.push_str(",\"skill\":");
            json_str(&mut out, skill);
        }
        out.push('}');
        out
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
    /// order a tree gives them (alphabetical) and its strings escaped as serde_json escapes
    /// them, or hosts would see the bytes change.
    #[test]
    fn a_check_result_is_the_same_text_as_its_tree() {
        let escaped = CheckResult {
            decision: Verdict::Deny,
            reason: "Bash(echo \"a\\b\"\n\t\u{1}) is not in the allowed-tools of the active skill \"\u{e9}\u{1f389}\"".into(),
            skill: Some("sk\"ill".into()),
            rule: Some("Bash(git status:*)".into()),
        };
        let bare = CheckResult {
            decision: Verdict::Allow,
            reason: "why".into(),
            skill: None,
            rule: None,
        };
        let skill_only = CheckResult {
            decision: Verdict::Deny,
            reason: String::new(),
            skill: Some("s".into()),
            rule: None,
        };
        for result in [escaped, bare, skill_only] {
            let text = AsText::check(result.clone());
            let tree = serde_json::to_string(&AsTree::check(result)).unwrap();
            assert_eq!(text, tree);
        }
    }
}
