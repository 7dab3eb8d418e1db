//! `skillctl prompt`: the prompt text a host puts in front of its model, for the skills of
//! the given roots.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Result};
use skills_executor::{Delivery, Executor, LoadMode, Policy};
use skills_model::{Skill, SkillRecord};

use crate::roots::RootArgs;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PromptFormat {
    /// `<available_skills>` in the agentskills.io form (as `agentskills to-prompt` prints it).
    Agentskills,
    /// The description of the single-skill `skill` tool.
    Tool,
    /// `<active_skills>` with the bodies of the skills named by --skill.
    Active,
    /// The whole per-turn instructions: base block, available skills, active skills.
    Instructions,
}

/// Print the prompt text for the skills of the given roots.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  skillctl prompt
  skillctl prompt --budget 4000
  skillctl prompt ./skills/deploy ./skills/review
  skillctl prompt --format active --skill deploy

Exit status: 0 printed, 1 a --skill cannot be loaded, 2 usage error or a budget too small for any skill")]
pub(crate) struct PromptArgs {
    /// Skill folders to render, as `agentskills to-prompt DIR...` does (the roots are then
    /// not read).
    #[arg(value_name = "DIR")]
    dirs: Vec<std::path::PathBuf>,
    #[command(flatten)]
    roots: RootArgs,
    /// Which text.
    #[arg(long, value_enum, default_value_t = PromptFormat::Agentskills)]
    format: PromptFormat,
    /// A character budget for the available skills (descriptions are shortened, then skills
    /// left out, with a closing line saying how many).
    #[arg(long, value_name = "CHARS")]
    budget: Option<usize>,
    /// Show `<location>` in the tool form too.
    #[arg(long)]
    locations: bool,
    /// Skills to treat as active, for `--format active` and `instructions` (repeatable).
    #[arg(long = "skill", value_name = "NAME")]
    skills: Vec<String>,
    #[command(flatten)]
    context: crate::session::ContextArgs,
}

pub(crate) fn run(args: &PromptArgs) -> Result<ExitCode> {
    if args.format == PromptFormat::Active && args.skills.is_empty() {
        bail!(
            "--format active prints the skills named by --skill: name at least one (--skill NAME)"
        );
    }
    let index = Arc::new(args.roots.build_index(false)?);
    let policy = Policy::builder()
        .max_active(args.skills.len().max(1))
        .delivery(Delivery::TopLevel)
        .build();
    let executor = Executor::builder(index).policy(policy).build();
    let session = executor.session(args.context.context());
    if !args.skills.is_empty() {
        if let Err(e) = session.load(&args.skills, LoadMode::Replace) {
            let _ = writeln!(
                std::io::stderr(),
                "skillctl: {}",
                crate::out::one_line(&e.to_string())
            );
            return Ok(ExitCode::from(1));
        }
    }
    let visible = if args.dirs.is_empty() {
        session.visible()
    } else {
        args.dirs
            .iter()
            .map(|d| crate::author::record_of(d))
            .collect::<Result<Vec<_>>>()?
    };
    let records: Vec<&SkillRecord> = visible.iter().map(|r| &**r).collect();
    let active = session.active();
    let active: Vec<&Skill> = active.iter().map(|s| &**s).collect();
    // A budget too small for even one skill would print no skill at all: refuse it, and
    // say the smallest budget that shows one.
    if let (Some(budget), false) = (args.budget, records.is_empty()) {
        let render = |b: usize| match args.format {
            PromptFormat::Tool => {
                skills_executor::skill_tool_description(&records, args.locations, Some(b))
            }
            _ => skills_executor::available_skills_within(&records, Some(b)),
        };
        let shows_one = |b: usize| render(b).contains("<skill>");
        if matches!(args.format, PromptFormat::Agentskills | PromptFormat::Tool)
            && !shows_one(budget)
        {
            let whole = render(usize::MAX).chars().count();
            let (mut lo, mut hi) = (budget, whole.max(budget + 1));
            while lo + 1 < hi {
                let mid = lo + (hi - lo) / 2;
                if shows_one(mid) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            bail!(
                "--budget {budget} is too small to show any skill: at least {hi} characters show one"
            );
        }
    }
    let text = match args.format {
        PromptFormat::Agentskills => {
            skills_executor::available_skills_within(&records, args.budget)
        }
        PromptFormat::Tool => {
            skills_executor::skill_tool_description(&records, args.locations, args.budget)
        }
        PromptFormat::Active => skills_executor::active_skills(&active),
        PromptFormat::Instructions => session.instructions(args.budget).instructions,
    };
    let mut out = crate::stdout();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
