//! Decisions on the host's own tool calls (`check_tool`): the call's primary arguments
//! found by the policy, judged against every active skill's compiled rules, and one audit
//! event per decision naming the skill and the rule that decided.

use serde_json::Value;

use crate::audit::AuditKind;
use crate::state::SessionState;
use skills_policy::{not_plain, shown_tool, tool_key, Call, Fallback, PathAccess, ToolClass};

use crate::active::Active;
use crate::policy::PathTool;
use crate::{Decision, SkillWrites};

/// The longest path a path tool may be given (Linux's `PATH_MAX`): checking is linear in
/// the path, and the cap bounds it.
pub(crate) const PATH_MAX: usize = 4096;

impl SessionState {
    /// The work of [`Session::decide`](crate::Session::decide).
    pub(crate) fn decide(&self, tool: &str, primary_arg: Option<&str>) -> Decision {
        let Some(key) = tool_key(tool) else {
            return Decision::refused(not_plain(tool));
        };
        let stack = self.stack.lock();
        match self.exec.policy.path_tools.get(&key) {
            Some(pt) => match primary_arg {
                Some(path) => self.decide_path(&stack, tool, path, pt.access),
                None => self.decide_on(&stack, tool, None, pt.access),
            },
            None => self.decide_on(&stack, tool, primary_arg, PathAccess::None),
        }
        .bounded()
    }

    fn decide_on(
        &self,
        stack: &[Active],
        tool: &str,
        arg: Option<&str>,
        access: PathAccess,
    ) -> Decision {
        let policy = &self.exec.policy;
        let class = if policy.runs_code(tool) {
            ToolClass::CodeExecution
        } else {
            ToolClass::Other
        };
        let call = Call {
            tool,
            arg,
            access,
            path: None,
            class,
        };
        crate::resolve::decide(
            stack.iter().map(|a| &a.rules),
            call,
            Fallback {
                default: policy.default_decision,
                mode: policy.allowed_tools_mode,
            },
        )
    }

    /// One path of a path tool: capped, no NUL, not inside a skill folder for a write
    /// (unless authoring is allowed), then the rules and protections of the stack.
    fn decide_path(
        &self,
        stack: &[Active],
        tool: &str,
        path: &str,
        access: PathAccess,
    ) -> Decision {
        if path.len() > PATH_MAX {
            return Decision::refused(format!(
                "the {tool} path is {} bytes, longer than any path the system can open ({PATH_MAX})",
                path.len()
            ));
        }
        if path.contains('\0') {
            return Decision::refused(format!("the {tool} path holds a NUL byte"));
        }
        if access == PathAccess::Write && self.exec.policy.skill_writes == SkillWrites::Refused {
            if let Some(folder) = self.exec.protected_folder(path) {
                return Decision::refused(format!(
                    "{path} is inside {}: skill folders are read-only to the model while a session is live (the host can allow authoring with --allow-skill-writes)",
                    folder.display()
                ));
            }
        }
        self.decide_on(stack, tool, Some(path), access)
    }

    /// A path tool's call: every path field it holds is decided, the first denial wins. A
    /// field that is not a string is denied wherever a rule or a protection could apply;
    /// an absent optional path is the host's working folder, or denied under a path rule.
    fn decide_path_tool(
        &self,
        stack: &[Active],
        tool: &str,
        pt: &PathTool,
        input: &Value,
    ) -> Decision {
        let protected = !stack.is_empty()
            || (pt.access == PathAccess::Write
                && self.exec.policy.skill_writes == SkillWrites::Refused);
        // A pattern below the path is judged with the path only when it stays below it.
        for (field, value) in pt.patterns.iter().filter_map(|f| Some((f, input.get(f)?))) {
            // Braces and backslashes are refused too: a glob that expands braces
            // (`{..,x}/secrets`) or removes escapes (`.\./secrets`) climbs through a segment
            // that is not `..` as written.
            let stays = value.as_str().is_some_and(|p| {
                !(p.starts_with(['/', '\\', '~'])
                    || p.split(['/', '\\']).any(|part| part == "..")
                    || p.contains(['\0', '{', '\\']))
            });
            if protected && !stays {
                return Decision::refused(format!(
                    "{tool}'s {field} is not a pattern below its path (it is absolute, climbs with .., holds braces or backslashes, or is not a string), so the path rules and protections cannot be checked"
                ));
            }
        }
        let mut decision: Option<Decision> = None;
        for (field, value) in pt.fields.iter().filter_map(|f| Some((f, input.get(f)?))) {
            let d = match value.as_str() {
                Some(path) => self.decide_path(stack, tool, path, pt.access),
                None if protected => Decision::refused(format!(
                    "{tool}'s {field} is not a string, so the path rules and protections cannot be checked"
                )),
                None => self.decide_on(stack, tool, None, pt.access),
            };
            if !d.allowed {
                return d;
            }
            decision.get_or_insert(d);
        }
        if let Some(d) = decision {
            return d;
        }
        if let Some(dir) = &self.exec.policy.working_dir {
            return self.decide_path(stack, tool, &dir.to_string_lossy(), pt.access);
        }
        let path_rule = stack.iter().find(|a| {
            a.rules
                .allowed
                .as_ref()
                .is_some_and(|r| r.names_tool(tool) && !r.any_matches(tool, None))
        });
        if let Some(a) = path_rule {
            return Decision::refused(format!(
                "{tool} names no path and the host declares no working folder, so the path rules of the active skill {:?} cannot be checked",
                a.rules.skill
            ));
        }
        self.decide_on(stack, tool, None, pt.access)
    }

    /// The work of [`Session::check_tool`](crate::Session::check_tool).
    pub(crate) fn check_tool(&self, tool: &str, input: &Value) -> Decision {
        let stack = self.stack.lock();
        let key = tool_key(tool);
        let decision = match key
            .as_ref()
            .map(|k| (k, self.exec.policy.path_tools.get(k)))
        {
            None => Decision::refused(not_plain(tool)),
            Some((_, Some(pt))) => self.decide_path_tool(&stack, tool, pt, input),
            Some((key, None)) => {
                // Every declared field the input holds is checked (the host's tool may read
                // any of them); the first denial wins. A field that is not a string cannot
                // be checked.
                let mut decision = None;
                for value in self.primary_fields(key).iter().filter_map(|f| input.get(f)) {
                    let d = self.decide_on(&stack, tool, value.as_str(), PathAccess::None);
                    if !d.allowed {
                        decision = Some(d);
                        break;
                    }
                    decision.get_or_insert(d);
                }
                decision.unwrap_or_else(|| self.decide_on(&stack, tool, None, PathAccess::None))
            }
        }
        .bounded();
        let kind = if decision.script_read {
            AuditKind::ScriptReadBlocked
        } else if !decision.allowed {
            AuditKind::ToolRestrictionViolated
        } else if stack.is_empty() {
            AuditKind::ToolCheckedWithoutSkill
        } else {
            AuditKind::ToolExecutionInSkill
        };
        if !self.audited() {
            // Nothing reads audit events: the decision stands without building one.
            return decision;
        }
        let mut e = self.event(kind);
        e.tool_name = Some(shown_tool(tool).into_owned());
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
        match self.emit_decision(&e) {
            Ok(()) => decision,
            Err(err) => Decision::refused(err.to_string()),
        }
    }

    /// The input fields that hold the primary argument of the tool `key` names (its
    /// [`tool_key`]; none when undeclared).
    fn primary_fields(&self, key: &str) -> &[String] {
        self.exec
            .policy
            .primary_args
            .get(key)
            .map_or(&[], Vec::as_slice)
    }
}
