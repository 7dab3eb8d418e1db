//! A minimal agent host built on the executor, to copy from.
//!
//! The loop is what a real host does around every model call:
//!
//! 1. put `session.instructions(...)` (the available skills, and the active ones when the
//!    policy delivers them at top level) in front of the model call, with the runtime
//!    tools of `protocol::tool_definitions(&session)`;
//! 2. route each runtime tool call the model makes (`skills_load`, `skills_read`,
//!    `skills_run_script`, ...) to `session.call_tool`, and give the model its result or
//!    its error;
//! 3. ask `session.check_tool` before running each of the host's own tools (Bash, Read,
//!    ...), and run it only when the decision allows it;
//! 4. end the task with the guard of `session.task()`, which deactivates every skill even
//!    if the task fails or panics.
//!
//! The model here is a stand-in that replays a fixed list of steps, and the host's own
//! tools are not run (the example only prints what a real host would run), so the output
//! is the same on every machine but for paths, times and the git tag the skill's script
//! prints. Some steps are refused on purpose, each with a comment saying why: a refusal's
//! message is what the model reads to do better, and the next steps show it doing so. Every decision, load, read and run is written to a
//! JSON-lines audit file, printed at the end.
//!
//! Run it with `cargo run --example host`.

// An example is a program: it prints what happens, which the workspace's lints otherwise
// forbid in library code.
#![allow(clippy::print_stdout)]

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use agent_skills::{
    protocol, AuditSink, Executor, JsonlFileSink, Layer, Policy, Session, SessionContext,
    SkillIndex,
};
use serde_json::{json, Value};

/// What the model asks for in one turn.
enum Step {
    /// A runtime tool of the executor.
    Runtime(&'static str, Value),
    /// One of the host's own tools.
    Host(&'static str, Value),
    /// The final answer.
    Answer(&'static str),
}

/// A stand-in for the model: the steps a model might take to write a commit message and a
/// changelog entry. A real host sends `instructions`, the transcript and the tool
/// definitions to its LLM and parses the reply into a step.
struct ScriptedModel {
    steps: std::vec::IntoIter<Step>,
}

impl ScriptedModel {
    fn new(changelog_script: &Path) -> ScriptedModel {
        let steps = vec![
            Step::Runtime("skills_list", json!({})),
            Step::Runtime("skills_load", json!({"skills": ["commit-messages"]})),
            Step::Host("Bash", json!({"command": "git diff --staged"})),
            Step::Host("Bash", json!({"command": "rm -rf /"})),
            Step::Runtime(
                "skills_load",
                json!({"skills": ["changelog-entry"], "mode": "add"}),
            ),
            // Both skills are active now: a call must pass both, so this is denied.
            Step::Host("Bash", json!({"command": "git diff --staged"})),
            Step::Host("Bash", json!({"command": "git log -5 --oneline"})),
            // Reading a script is refused: the model is told to run it instead.
            Step::Host("Read", json!({"file_path": changelog_script})),
            // Refused, and that is the point: commit-messages is still active and restricts
            // every call, the runtime tools included, to its allowed-tools, which do not
            // list skills_run_script. A skill cannot run another's scripts behind its back.
            Step::Runtime(
                "skills_run_script",
                json!({"path": "scripts/last_tag.py", "timeout_ms": 10_000}),
            ),
            // Done with the commit message: every skill unloaded, then changelog-entry alone,
            // which may run its own script (it prints the latest git tag, or nothing).
            Step::Runtime("skills_unload", json!({"all": true})),
            Step::Runtime("skills_load", json!({"skills": ["changelog-entry"]})),
            Step::Runtime(
                "skills_run_script",
                json!({"path": "scripts/last_tag.py", "timeout_ms": 10_000}),
            ),
            Step::Runtime("skills_read", json!({"path": "references/format.md"})),
            // Paths stay inside the skill folder.
            Step::Runtime(
                "skills_read",
                json!({"path": "../commit-messages/SKILL.md"}),
            ),
            Step::Runtime("skills_unload", json!({"all": true})),
            Step::Answer("Here is the commit message and the changelog entry."),
        ];
        ScriptedModel {
            steps: steps.into_iter(),
        }
    }

    /// One model call.
    fn next(&mut self, _instructions: &str, _transcript: &[Value]) -> Option<Step> {
        self.steps.next()
    }
}

/// A short, one-line rendering of a JSON value.
fn brief(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 160 {
        let cut: String = text.chars().take(160).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// The agent loop of one task.
fn run_task(session: &Session, model: &mut ScriptedModel) {
    // Whatever happens below, the guard deactivates every skill when the task ends.
    let _task = session.task();
    let mut transcript: Vec<Value> = Vec::new();
    loop {
        let instructions = session.instructions(Some(8_000)).instructions;
        let Some(step) = model.next(&instructions, &transcript) else {
            break;
        };
        match step {
            Step::Runtime(tool, input) => {
                println!("model -> {tool} {input}");
                let result = match protocol::call(session, tool, input) {
                    Ok(output) => json!({"ok": true, "output": output}),
                    Err(e) => {
                        json!({"ok": false, "error": {"code": e.code(), "message": e.to_string()}})
                    }
                };
                println!("   <- {}", brief(&result));
                transcript.push(result);
            }
            Step::Host(tool, input) => {
                let decision = session.check_tool(tool, &input);
                if decision.allowed {
                    println!("host {tool} {input}: allowed ({})", decision.reason);
                    println!("   (a real host runs the tool here)");
                    transcript.push(json!({"ok": true, "output": "(tool output)"}));
                } else {
                    println!("host {tool} {input}: DENIED: {}", decision.reason);
                    transcript.push(json!({"ok": false, "error": decision.reason}));
                }
            }
            Step::Answer(text) => {
                println!("model: {text}");
                break;
            }
        }
    }
}

// `pub(crate)`: `tests/examples.rs` compiles this file as a module and runs `main`.
pub(crate) fn main() -> Result<(), Box<dyn Error>> {
    let skills = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/skills");
    let index = Arc::new(
        SkillIndex::builder()
            .root(Layer::Personal, &skills)
            .build()?,
    );

    let audit_dir = tempfile::tempdir()?;
    let audit_path = audit_dir.path().join("audit.jsonl");
    let sink: Arc<dyn AuditSink> = Arc::new(JsonlFileSink::open(&audit_path)?);
    let executor = Executor::builder(index)
        .policy(Policy::builder().max_active(4).build())
        .audit_sink(sink)
        .build();
    let session = executor.session(
        SessionContext::builder()
            .agent("example-host")
            .task_id("task-1")
            .build(),
    );

    let tools: Vec<String> = protocol::tool_definitions(&session)
        .into_iter()
        .map(|d| d.name)
        .collect();
    println!("runtime tools given to the model: {}", tools.join(", "));
    println!(
        "instructions before the first call: {} characters\n",
        session
            .instructions(Some(8_000))
            .instructions
            .chars()
            .count()
    );

    let script = skills.join("changelog-entry/scripts/last_tag.py");
    run_task(&session, &mut ScriptedModel::new(&script));
    println!("\nactive skills after the task: {}", session.active().len());

    println!("\naudit trail ({}):", audit_path.display());
    for line in std::fs::read_to_string(&audit_path)?.lines() {
        println!("  {line}");
    }
    Ok(())
}
