//! What the decision tests share: a skill's compiled rules made from its frontmatter as
//! written (read by the parser, as the index reads it), and calls resolved by hand (no
//! folder on disk: a table says where a path leads and which file it is).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use skills_model::{Diagnostic, Layer, Skill, SkillName, SkillRecord};
use skills_parser::{ParseInput, SkillParser};
use skills_policy::{
    normalize, tool_key, AllowedToolsMode, Call, CompiledRules, Decision, DefaultDecision,
    Fallback, FolderFacts, PathAccess, ResolvedPath, ToolClass, PATH_TOOLS,
};

/// The working folder relative paths are resolved from.
pub(crate) const WORKING_DIR: &str = "/cwd";

/// The compiled rules of a skill named `name` in `dir`, whose frontmatter holds `lines`
/// (beside its name and description), with the folder's facts given.
pub(crate) fn rules(name: &str, dir: &Path, lines: &str, facts: FolderFacts) -> CompiledRules {
    let text = format!("---\nname: {name}\ndescription: Test skill {name}.\n{lines}---\nBody.\n");
    let parsed = SkillParser::default().parse(&ParseInput::new(text.as_bytes(), name));
    let (_, frontmatter) = SkillRecord::split_frontmatter(parsed.frontmatter);
    let record = SkillRecord {
        name: SkillName::lenient(name).expect("a lenient name"),
        description: format!("Test skill {name}."),
        layer: Layer::Personal,
        plugin: None,
        path: dir.join("SKILL.md"),
        frontmatter,
        body_offset: parsed.body_offset,
        diagnostics: Arc::from(Vec::<Diagnostic>::new()),
        remote: None,
    };
    let skill = Skill {
        record: Arc::new(record),
        body: "Body.\n".to_owned(),
        files: Vec::new(),
        digest: "sha256:0".to_owned(),
    };
    CompiledRules::compile(&skill, facts)
}

/// The facts of a folder whose real path is its own, with no scripts.
pub(crate) fn plain_folder(dir: &Path) -> FolderFacts {
    FolderFacts {
        canonical_dir: Some(dir.to_path_buf()),
        script_files: Arc::from(Vec::new()),
        untrusted_origin: None,
    }
}

/// What a tool does with its argument by the built-in path tools' table.
pub(crate) fn access_of(tool: &str) -> PathAccess {
    let key = tool_key(tool).unwrap_or_default();
    PATH_TOOLS
        .iter()
        .find(|(name, ..)| *name == key)
        .map_or(PathAccess::None, |(_, access, ..)| *access)
}

/// A path as written, resolved with no link on the way (relative to [`WORKING_DIR`]).
pub(crate) fn plain_path(arg: &str) -> ResolvedPath {
    let lexical = normalize(Path::new(arg));
    ResolvedPath {
        resolved: Some(normalize(&Path::new(WORKING_DIR).join(arg))),
        lexical,
        identity: None,
    }
}

/// Decides `tool` on `arg` (a path resolved by `path` for a path tool) against `stack`.
pub(crate) fn decide(
    stack: &[CompiledRules],
    tool: &str,
    access: PathAccess,
    arg: Option<&str>,
    path: Option<ResolvedPath>,
    fallback: Fallback,
) -> Decision {
    let path = match (access, arg) {
        (PathAccess::None, _) | (_, None) => None,
        (_, Some(arg)) => Some(path.unwrap_or_else(|| plain_path(arg))),
    };
    // The host's one code-execution tool in these tests, as in the executor's default.
    let class = if tool.eq_ignore_ascii_case("bash") {
        ToolClass::CodeExecution
    } else {
        ToolClass::Other
    };
    let call = Call {
        tool,
        arg,
        access,
        path,
        class,
    };
    skills_policy::decide(stack.iter(), &call, fallback)
}

/// The host's defaults: restrict, allow when no skill restricts.
pub(crate) const DEFAULTS: Fallback = Fallback {
    default: DefaultDecision::Allow,
    mode: AllowedToolsMode::Restrict,
};

/// A Bash line decided against one skill `name` in `/skills/<name>` with `allowed-tools:
/// <rules>`.
pub(crate) fn bash(rules_text: &str, line: &str) -> Decision {
    let dir = PathBuf::from("/skills/bash");
    let stack = [rules(
        "bash",
        &dir,
        &format!("allowed-tools: {rules_text}\n"),
        plain_folder(&dir),
    )];
    decide(&stack, "Bash", PathAccess::None, Some(line), None, DEFAULTS)
}
