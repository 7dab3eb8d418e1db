//! `skillctl`: the command-line front of agent-skills. Each subcommand parses its
//! arguments and calls the libraries; the logic a library user would need lives there.

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod author;
mod cases;
mod eval;
mod explain;
mod list;
mod lock;
mod log;
mod mcp;
mod model_command;
mod out;
mod prompt;
mod publish;
mod roots;
mod search;
mod secrets;
mod session;
mod validate;
mod watch;

/// mimalloc: the read threads allocate a few small blocks per skill, and glibc's arenas
/// grew a page at a time under them (thousands of `mprotect` calls and lock waits at
/// 10,000 skills).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Validate, list and serve Agent Skills.
#[derive(Debug, Parser)]
#[command(
    name = "skillctl",
    version,
    about,
    after_help = "Examples:
  skillctl validate --lint path/to/skills       check skills strictly, with advice
  skillctl list --preset claude                 what an agent would get here
  skillctl search \"fill a pdf form\"             find a skill by its task
  skillctl new my-skill --scripts               start a skill
  skillctl publish skills --out site            a well-known index for a static host
  skillctl session --audit audit.jsonl          serve the runtime tools as JSON lines

Exit status:
  0  success (also when a reader closes the pipe early, as with `| head`)
  1  a skill is invalid (validate), a named skill is missing (show, prompt --skill)
  2  usage error, unreadable input, a path that does not exist"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check skills against the Agent Skills specification.
    Validate(validate::Args),
    /// List the skills of every root, after precedence.
    List(list::ListArgs),
    /// Show one skill: record, body, files and digest.
    Show(list::ShowArgs),
    /// List the skills whose needs are unmet here, and what to install or set.
    Doctor(list::DoctorArgs),
    /// Print change events as JSON lines while skills change on disk.
    Watch(watch::WatchArgs),
    /// Serve the runtime tools as JSON lines on stdin and stdout.
    Session(session::SessionArgs),
    /// Serve the skills over the Model Context Protocol (stdio, or streamable HTTP).
    Mcp(mcp::McpArgs),
    /// Print the prompt text for the skills of the given roots.
    Prompt(prompt::PromptArgs),
    /// Find skills by what a task is about (the ranking skills_search serves a model).
    Search(search::SearchArgs),
    /// Evaluate skills: `eval triggers CASES`, whether requests choose the skills they should.
    Eval(eval::EvalArgs),
    /// Publish a root's skills as a well-known index (.well-known/agent-skills) for a
    /// static web server, with a catalogue page.
    Publish(publish::PublishArgs),
    /// Create a skill folder that validates clean, ready to fill in.
    New(author::NewArgs),
    /// Pin the URL roots' skills by digest in the project's skills.lock.
    Lock(lock::LockArgs),
    /// Print the JSON Schema of the SKILL.md frontmatter.
    Schema,
    /// Print a skill folder's frontmatter as JSON.
    ReadProperties(author::ReadPropertiesArgs),
    /// Print a shell completion script: bash, zsh, fish or powershell.
    Completions(CompletionsArgs),
    /// Write the man pages (skillctl.1 and one per subcommand) into a folder.
    #[command(hide = true)]
    Man(ManArgs),
}

/// Print a shell completion script.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  skillctl completions bash > ~/.local/share/bash-completion/completions/skillctl
  skillctl completions zsh > ~/.zfunc/_skillctl
  skillctl completions fish > ~/.config/fish/completions/skillctl.fish

Exit status: 0 printed, 2 an unknown shell")]
struct CompletionsArgs {
    /// The shell.
    shell: clap_complete::Shell,
}

/// Write the man pages into a folder (`cargo xtask man` calls this).
#[derive(Debug, clap::Args)]
struct ManArgs {
    /// The folder to write into (created).
    dir: std::path::PathBuf,
}

fn completions(args: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut command = <Cli as clap::CommandFactory>::command();
    // Generated in memory: clap_complete panics when a write fails, and a closed pipe must
    // end quietly like every other output.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "skillctl", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn man(args: &ManArgs) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(&args.dir)?;
    let command = <Cli as clap::CommandFactory>::command();
    clap_mangen::generate_to(command, &args.dir)?;
    Ok(ExitCode::SUCCESS)
}

/// The command line parsed with only the subcommand it names built, when that parse
/// succeeds; `None` sends it to the whole tree ([`Cli::try_parse`]), which says every help
/// text, version and error as before. Building every subcommand's arguments was a quarter
/// of the instructions of `skillctl list` on an empty root (the unit test
/// `a_narrow_parse_is_the_whole_tree_s_parse` holds the two parses equal).
fn narrow(args: impl IntoIterator<Item = std::ffi::OsString>) -> Option<Cli> {
    use clap::Args as _;
    let args: Vec<std::ffi::OsString> = args.into_iter().collect();
    let name = args.get(1)?.to_str()?;
    let sub = match name {
        "list" => list::ListArgs::augment_args(clap::Command::new("list")),
        "show" => list::ShowArgs::augment_args(clap::Command::new("show")),
        "doctor" => list::DoctorArgs::augment_args(clap::Command::new("doctor")),
        "validate" => validate::Args::augment_args(clap::Command::new("validate")),
        "prompt" => prompt::PromptArgs::augment_args(clap::Command::new("prompt")),
        "search" => search::SearchArgs::augment_args(clap::Command::new("search")),
        "session" => session::SessionArgs::augment_args(clap::Command::new("session")),
        "mcp" => mcp::McpArgs::augment_args(clap::Command::new("mcp")),
        "watch" => watch::WatchArgs::augment_args(clap::Command::new("watch")),
        _ => return None,
    };
    let matches = clap::Command::new("skillctl")
        .subcommand(sub)
        .try_get_matches_from(args)
        .ok()?;
    <Cli as clap::FromArgMatches>::from_arg_matches(&matches).ok()
}

fn main() -> ExitCode {
    // `skillctl` is also the script supervisor of its own sessions.
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if let Some((first, rest)) = args.split_first() {
        if first == skills_executor::SUPERVISE_ARG {
            std::process::exit(skills_executor::supervise(rest));
        }
    }
    // A write past a file-size limit (`ulimit -f`) is an error of that write (`EFBIG`),
    // which an audited call fails closed on and the audit file rolls back, not a death by
    // `SIGXFSZ` in the middle of a line. The handler does nothing; scripts, whose handlers
    // an `exec` resets, keep the default.
    #[cfg(unix)]
    let _ = signal_hook::flag::register(
        signal_hook::consts::SIGXFSZ,
        std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
    );
    let cli = match narrow(std::env::args_os()).map_or_else(Cli::try_parse, Ok) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    // The commands a person runs once say what the libraries warn of; the long-running
    // ones (`session`, `mcp`, `watch`) leave standard error to their host.
    if !matches!(
        cli.command,
        Command::Session(_) | Command::Mcp(_) | Command::Watch(_)
    ) {
        log::warnings_to_stderr();
    }
    let result = match cli.command {
        Command::Validate(args) => validate::run(&args),
        Command::List(args) => list::list(&args),
        Command::Show(args) => list::show(&args),
        Command::Doctor(args) => list::doctor(&args),
        Command::Watch(args) => watch::watch(&args),
        Command::Session(args) => session::run(&args),
        Command::Mcp(args) => mcp::run(&args),
        Command::Prompt(args) => prompt::run(&args),
        Command::Search(args) => search::run(&args),
        Command::Eval(args) => eval::run(&args),
        Command::Publish(args) => publish::run(&args),
        Command::New(args) => author::new(&args),
        Command::Lock(args) => lock::lock(&args),
        Command::Schema => author::schema(),
        Command::ReadProperties(args) => author::read_properties(&args),
        Command::Completions(args) => completions(&args),
        Command::Man(args) => man(&args),
    };
    match result {
        Ok(code) => code,
        // A reader that went away (`skillctl list | head -1`) ends the output, as `ls`
        // does: quietly, with status 0.
        Err(e) if broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "skillctl: {}", out::one_line(&said(&e)));
            ExitCode::from(2)
        }
    }
}

/// An error and its causes on one line, as `{:#}` writes them, but a cause the message
/// already ends with is not said again (the libraries' errors name their cause at the end
/// of their own message: "cannot write F: Permission denied"); one it only holds (in a
/// path, say) is.
fn said(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.is_empty() {
            line = text;
        } else if !line.ends_with(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
    }
    line
}

/// Standard output for a command's result: one buffer of 64 KiB, written in large blocks
/// (a line-buffered stdout made one `write` per line: ten per skill for `list --format
/// json`). Callers flush it at the end; a closed pipe then ends the command quietly.
pub(crate) fn stdout() -> std::io::BufWriter<std::io::StdoutLock<'static>> {
    std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock())
}

/// Whether an error comes from writing to a closed pipe.
fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .and_then(serde_json::Error::io_error_kind)
                == Some(std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::said;

    /// Where the narrow parse answers, it is the whole tree's parse; where the whole tree
    /// would print help, a version or an error, it does not answer.
    #[test]
    fn a_narrow_parse_is_the_whole_tree_s_parse() {
        use clap::Parser as _;
        let table: &[&[&str]] = &[
            &["list"],
            &[
                "list",
                "--no-defaults",
                "--format",
                "json",
                "--root",
                "project=/s",
                "--depth",
                "2",
            ],
            &[
                "list",
                "--shadowed",
                "--tag",
                "x",
                "--preset",
                "claude",
                "--lint",
            ],
            &["show", "deploy", "--format", "json"],
            &["doctor"],
            &["validate", "--lint", "a", "b"],
            &["prompt", "--no-defaults"],
            &["search", "fill a form"],
            &["session", "--no-defaults"],
            &["mcp"],
            &["watch", "--no-defaults"],
            &["schema"],
            &["list", "--help"],
            &["list", "-h"],
            &["list", "--no-such-flag"],
            &["list", "--format", "yaml"],
            &["list", "-V"],
            &["show"],
            &["--version"],
            &["help", "list"],
            &[],
        ];
        for args in table {
            let argv = || {
                std::iter::once("skillctl")
                    .chain(args.iter().copied())
                    .map(Into::into)
            };
            let whole = super::Cli::try_parse_from(argv());
            let narrow = super::narrow(argv());
            match (&whole, &narrow) {
                (Ok(whole), Some(narrow)) => {
                    assert_eq!(format!("{narrow:?}"), format!("{whole:?}"), "{args:?}");
                }
                (_, None) => {}
                (Err(e), Some(_)) => panic!("{args:?}: narrow parsed what the tree refuses: {e}"),
            }
            let answered = narrow.is_some();
            let known = args.first().is_some_and(|a| {
                a.starts_with(|c: char| c.is_ascii_lowercase()) && *a != "schema" && *a != "help"
            });
            assert_eq!(answered, known && whole.is_ok(), "{args:?}");
        }
    }

    #[test]
    fn an_error_says_each_cause_once() {
        let cause = || std::io::Error::other("Permission denied");
        let cases: [(anyhow::Error, &str); 4] = [
            // Regression (review): a cause held inside a path was dropped.
            (
                anyhow::Error::new(cause()).context("opening /tmp/Permission denied/a.jsonl"),
                "opening /tmp/Permission denied/a.jsonl: Permission denied",
            ),
            (
                anyhow::Error::new(cause()).context("cannot write a/SKILL.md: Permission denied"),
                "cannot write a/SKILL.md: Permission denied",
            ),
            (
                anyhow::Error::new(cause()).context("cannot write a/SKILL.md"),
                "cannot write a/SKILL.md: Permission denied",
            ),
            (
                anyhow::Error::new(cause())
                    .context("cannot list b")
                    .context("--root project=b"),
                "--root project=b: cannot list b: Permission denied",
            ),
        ];
        for (error, line) in cases {
            assert_eq!(said(&error), line);
        }
    }
}
