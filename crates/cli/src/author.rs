//! The authoring commands: `skillctl new` (a skill that validates clean), `skillctl schema`
//! (the frontmatter's JSON Schema, shipped as `schema/skill-frontmatter.schema.json`) and
//! `skillctl read-properties` (a skill folder's frontmatter as JSON, as the reference CLI
//! prints it); and reading skill folders given as arguments (`prompt DIR`, `show DIR`).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use skills_index::{check_candidate, DEFAULT_SKILL_FILE_LIMIT};
use skills_model::{Layer, SkillRecord};
use skills_parser::SkillParser;
use skills_storage::{scaffold, Candidate, ScaffoldParts, SKILL_FILE};

/// The frontmatter's JSON Schema: the shipped file is the one source.
pub(crate) const SCHEMA: &str = include_str!("../../../schema/skill-frontmatter.schema.json");

/// Create a skill folder that passes `skillctl validate --lint` with no finding.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  skillctl new pdf-tools
  skillctl new pdf-tools --path .agents/skills --scripts --references

Exit status: 0 created, 2 an invalid name, an existing folder, or a write that failed")]
pub(crate) struct NewArgs {
    /// The skill's name: lowercase letters and digits joined by single hyphens.
    name: String,
    /// The folder to create it in (default: the current folder).
    #[arg(long, value_name = "DIR", default_value = ".")]
    path: PathBuf,
    /// Add scripts/ with an executable example.
    #[arg(long)]
    scripts: bool,
    /// Add references/ with a starting guide the body links to.
    #[arg(long)]
    references: bool,
    /// Add assets/.
    #[arg(long)]
    assets: bool,
}

/// Print a skill folder's frontmatter as JSON (the lenient reading).
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  skillctl read-properties ./skills/deploy

Exit status: 0 printed, 1 the frontmatter has no name, 2 no SKILL.md there")]
pub(crate) struct ReadPropertiesArgs {
    /// The skill folder (or its SKILL.md).
    dir: PathBuf,
}

pub(crate) fn new(args: &NewArgs) -> Result<ExitCode> {
    let parts = ScaffoldParts {
        scripts: args.scripts,
        references: args.references,
        assets: args.assets,
    };
    let files = scaffold(&args.path, &args.name, parts)?;
    let mut out = crate::stdout();
    for file in &files {
        writeln!(out, "created {}", file.display())?;
    }
    writeln!(
        out,
        "next: edit the description and the steps, then `skillctl validate --lint {}`",
        args.path.join(&args.name).display()
    )?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn schema() -> Result<ExitCode> {
    let mut out = crate::stdout();
    out.write_all(SCHEMA.as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Whether `arg` names a skill folder (or a `SKILL.md`) rather than a skill's name.
pub(crate) fn is_skill_path(arg: &str) -> bool {
    let path = Path::new(arg);
    path.join(SKILL_FILE).is_file()
        || (path.file_name().is_some_and(|n| n == SKILL_FILE) && path.is_file())
}

/// The folder of a skill given as a folder or as its `SKILL.md`.
fn skill_dir(path: &Path) -> PathBuf {
    if path.file_name().is_some_and(|n| n == SKILL_FILE) && path.is_file() {
        path.parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
    } else {
        path.to_path_buf()
    }
}

/// A skill folder read as the loader reads it: its record (at its resolved path), for
/// `prompt DIR` and `show DIR`.
pub(crate) fn record_of(path: &Path) -> Result<Arc<SkillRecord>> {
    let dir = skill_dir(path);
    let file = dir.join(SKILL_FILE);
    if !file.is_file() {
        bail!("{} holds no SKILL.md", dir.display());
    }
    let candidate = Candidate {
        resolved: std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone()),
        dir: dir.clone(),
        skill_file: Some(file.clone()),
        misnamed: None,
    };
    let report = check_candidate(
        &candidate,
        &SkillParser::default(),
        DEFAULT_SKILL_FILE_LIMIT,
    );
    // The parser's diagnostics are the report's (no file-level one: the file was read).
    let diagnostics = report.diagnostics;
    let parsed = report
        .parsed
        .with_context(|| format!("cannot read {}", file.display()))?;
    let Some(name) = parsed.lenient_name() else {
        bail!(
            "{} has no readable name and description (`skillctl validate {}` says why)",
            file.display(),
            dir.display()
        );
    };
    let (description, frontmatter) = SkillRecord::split_frontmatter(parsed.frontmatter);
    Ok(Arc::new(SkillRecord {
        name,
        description,
        layer: Layer::Project,
        plugin: None,
        path: candidate.resolved.join(SKILL_FILE),
        frontmatter,
        body_offset: parsed.body_offset,
        diagnostics: diagnostics.into(),
        remote: None,
    }))
}

pub(crate) fn read_properties(args: &ReadPropertiesArgs) -> Result<ExitCode> {
    let dir = skill_dir(&args.dir);
    let file = dir.join(SKILL_FILE);
    // Bounded, and refused unless a regular file, before a byte is read: a FIFO named
    // `SKILL.md` blocked this command for ever, a link to a device read without end.
    let bytes = skills_storage::read_bounded(&file, DEFAULT_SKILL_FILE_LIMIT)
        .with_context(|| format!("reading {}", file.display()))?;
    let name = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let parsed = SkillParser::default().parse(&skills_parser::ParseInput::new(&bytes, &name));
    // Only the fields the file sets, each under the key it has there, mappings as objects,
    // as the reference prints them: the frontmatter's own serialisation.
    let mut out = crate::stdout();
    serde_json::to_writer_pretty(&mut out, &parsed.frontmatter)?;
    writeln!(out)?;
    out.flush()?;
    // What kept the frontmatter from being read, placed in the file, on standard error.
    let mut err = std::io::stderr().lock();
    for d in parsed
        .diagnostics
        .iter()
        .filter(|d| d.severity == skills_model::Severity::Error)
    {
        let place = match (d.line, d.column) {
            (Some(line), Some(column)) => format!("{}:{line}:{column}", file.display()),
            _ => file.display().to_string(),
        };
        writeln!(
            err,
            "{}: {}[{}]: {}",
            crate::out::one_line(&place),
            d.severity,
            d.rule,
            crate::out::one_line(&d.message)
        )?;
    }
    Ok(if parsed.frontmatter.name.is_some() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
