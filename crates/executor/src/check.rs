//! Decisions on the host's own tool calls (`check_tool`): the call's primary arguments
//! found by the policy, judged against every active skill's compiled rules, and one audit
//! event per decision naming the skill and the rule that decided.

use serde_json::Value;

use crate::audit::AuditKind;
use crate::enforce::decide;
use crate::stack::Active;
use crate::{Decision, DefaultDecision, Session};

impl Session {
    /// The bare decision for a host tool call, without its audit event: for measuring and
    /// for hosts that want to preview a call. A call that will run goes through
    /// [`check_tool`](Session::check_tool), which records the decision.
    pub fn decide(&self, tool: &str, primary_arg: Option<&str>) -> Decision {
        let stack = self.stack.lock();
        self.decide_on(&stack, tool, primary_arg)
    }

    fn decide_on(&self, stack: &[Active], tool: &str, arg: Option<&str>) -> Decision {
        let default_allow = self.exec.policy.default_decision == DefaultDecision::Allow;
        decide(stack.iter().map(|a| &a.rules), tool, arg, default_allow)
    }

    /// Decides a host tool call and audits the decision. `input` is the call's input; its
    /// primary argument is found by the policy (`command` for `Bash`, `file_path` or `path`
    /// for `Read`, `Write`, `Edit`), and when it holds several of those fields each is
    /// decided, the call allowed only if all are. If the audit cannot be written, the call
    /// is denied.
    pub fn check_tool(&self, tool: &str, input: &Value) -> Decision {
        let fields = self.primary_fields(tool);
        let stack = self.stack.lock();
        // Every declared field the input holds is checked (the host's tool may read any of
        // them); the first denial wins. A field that is not a string cannot be checked.
        let mut decision = None;
        for value in fields.iter().filter_map(|f| input.get(f)) {
            let d = self.decide_on(&stack, tool, value.as_str());
            if !d.allowed {
                decision = Some(d);
                break;
            }
            decision.get_or_insert(d);
        }
        let decision = decision.unwrap_or_else(|| self.decide_on(&stack, tool, None));
        let kind = if decision.script_read {
            AuditKind::ScriptReadBlocked
        } else if !decision.allowed {
            AuditKind::ToolRestrictionViolated
        } else if stack.is_empty() {
            AuditKind::ToolCheckedWithoutSkill
        } else {
            AuditKind::ToolExecutionInSkill
        };
        let mut e = self.event(kind);
        e.tool_name = Some(tool.to_owned());
        e.tool_allowed = Some(decision.allowed);
        // The skill whose rule decided; with none deciding, the top of the stack.
        let decider = decision
            .skill
            .as_deref()
            .and_then(|s| {
                stack
                    .iter()
                    .rev()
                    .find(|a| a.skill.record.name.as_str() == s)
            })
            .or(stack.last());
        e.skill_name = decider.map(|a| a.skill.record.name.to_string());
        e.allowed_tools = decider.and_then(|a| a.rules.allowed_list());
        e.rule.clone_from(&decision.rule);
        if !decision.allowed {
            e.error = Some(decision.reason.clone());
        }
        drop(stack);
        match self.emit(&e) {
            Ok(()) => decision,
            Err(err) => Decision::refused(err.to_string()),
        }
    }

    /// The input fields that hold `tool`'s primary argument (none when undeclared).
    fn primary_fields(&self, tool: &str) -> &[String] {
        self.exec
            .policy
            .primary_args
            .get(&tool.to_ascii_lowercase())
            .map_or(&[], Vec::as_slice)
    }
}
