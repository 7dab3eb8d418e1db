//! `skillctl eval triggers`: will a skill be chosen for the requests it is for? Each case
//! is ranked by the catalogue's search as a session's model would be offered skills
//! (the session's roots and visibility), and, with `--model-command`, put to the user's
//! own model; the report gives top-1 and top-5 hits overall, per skill and per tag, the
//! skill that won each miss and the request's words the expected skill lacks, and the
//! skills no case chooses. Definitions: docs/trigger-evals.md.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Result};
use serde::Serialize;
use skills_executor::{Executor, SearchQuery, Session};
use skills_model::SkillRecord;

use crate::cases::Case;
use crate::roots::RootArgs;
use crate::validate::Format;

/// Evaluate skills.
#[derive(Debug, clap::Args)]
pub(crate) struct EvalArgs {
    #[command(subcommand)]
    what: EvalCommand,
}

#[derive(Debug, clap::Subcommand)]
enum EvalCommand {
    /// Whether each request of a case file chooses the skill it should (and each skill's
    /// own test-scenarios).
    Triggers(TriggersArgs),
}

/// Whether each request of a case file chooses the skill it should.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  skillctl eval triggers cases.yaml
  skillctl eval triggers cases.jsonl --no-defaults --root project=./skills --min-top1 0.9
  skillctl eval triggers cases.yaml --model-command ./ask-my-model.sh --format json

A case is {request, expect, tags}: expect is a skill's name, or null when no skill should
be chosen. The ranking offers a skill when its score reaches the offering threshold (one
word only that skill holds, once in an average description); a case that expects no skill
is a hit when no skill reaches it. See docs/trigger-evals.md for the model command's
contract.

Exit status: 0 evaluated (and every gate passed), 1 a --min-top1 or --min-top5 gate failed,
2 usage error, an unreadable case file, a case naming no visible skill, or a model command
that failed")]
pub(crate) struct TriggersArgs {
    /// The case file: YAML (a list, or `cases:` holding one) or JSON lines.
    cases: std::path::PathBuf,
    #[command(flatten)]
    roots: RootArgs,
    #[command(flatten)]
    context: crate::session::ContextArgs,
    /// Also ask a model: a shell command given each case's prompt on stdin, answering the
    /// skill it would load (a skill tool call as JSON, a name, or `none`).
    #[arg(long, value_name = "CMD")]
    model_command: Option<String>,
    /// Fail (exit 1) when the ranking's top-1 hit rate is below this fraction (0 to 1).
    #[arg(long, value_name = "X")]
    min_top1: Option<f64>,
    /// Fail (exit 1) when the ranking's top-5 hit rate is below this fraction (0 to 1).
    #[arg(long, value_name = "X")]
    min_top5: Option<f64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

/// How many results of the ranking a case keeps (the expected skill's rank is said when it
/// is among them).
const RANKED: usize = skills_executor::MAX_SEARCH_LIMIT;

/// One case's outcome.
#[derive(Debug, Serialize)]
struct Outcome {
    case: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    request: String,
    expect: Option<String>,
    tags: Vec<String>,
    /// The ranking's first five offered skills, best first, with their scores.
    ranking: Vec<Ranked>,
    /// The skill the ranking chooses (its first offered), if any.
    chosen: Option<String>,
    top1: bool,
    top5: bool,
    /// The expected skill's 1-based rank among every skill the query matched (offered or
    /// not), when it matched at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    rank: Option<usize>,
    /// With a model command: the skill it would load, and whether that is the expected one.
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_hit: Option<bool>,
}

#[derive(Debug, Serialize)]
struct Ranked {
    skill: String,
    score: f64,
}

pub(crate) fn run(args: &EvalArgs) -> Result<ExitCode> {
    match &args.what {
        EvalCommand::Triggers(t) => triggers(t),
    }
}

fn triggers(args: &TriggersArgs) -> Result<ExitCode> {
    for (flag, value) in [("--min-top1", args.min_top1), ("--min-top5", args.min_top5)] {
        if value.is_some_and(|v| !(0.0..=1.0).contains(&v)) {
            bail!("{flag} is a fraction from 0 to 1");
        }
    }
    let mut cases = crate::cases::read_file(&args.cases)?;
    let index = Arc::new(args.roots.build_index(false)?);
    let executor = Executor::builder(index).build();
    let session = executor.session(args.context.context());
    let visible = session.visible();
    cases.extend(crate::cases::from_scenarios(&visible));
    check_expectations(&cases, &visible)?;
    let threshold = round4(session.offer_threshold());
    let instructions = session.instructions(None).instructions;
    let mut outcomes = Vec::with_capacity(cases.len());
    for case in cases {
        let mut outcome = rank(&session, case, threshold)?;
        if let Some(command) = &args.model_command {
            let prompt = crate::model_command::prompt(&instructions, &outcome.request);
            let answer = crate::model_command::ask(command, &prompt, &outcome.request)
                .map_err(|e| e.context(format!("case {}", outcome.case)))?;
            outcome.model_hit = Some(same_skill(answer.as_deref(), outcome.expect.as_deref()));
            outcome.model = Some(answer);
        }
        outcomes.push(outcome);
    }
    let report = Report::of(
        &outcomes,
        &visible,
        threshold,
        args.model_command.as_deref(),
    );
    let mut out = crate::stdout();
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &report.json(&outcomes, &visible))?;
            writeln!(out)?;
        }
        Format::Human => human(&mut out, &report, &outcomes, &visible)?,
    }
    out.flush()?;
    Ok(gate(&report, args))
}

/// Every case's `expect` names a skill this session's model may be offered.
fn check_expectations(cases: &[Case], visible: &[Arc<SkillRecord>]) -> Result<()> {
    for case in cases {
        let Some(expect) = &case.expect else {
            continue;
        };
        if visible
            .iter()
            .any(|r| r.name.as_str() == expect || r.qualified_name() == *expect)
        {
            continue;
        }
        let names: Vec<&str> = visible.iter().map(|r| r.name.as_str()).collect();
        let hint = skills_model::closest_name(expect, names.iter().copied())
            .map(|n| format!(" (did you mean {n}?)"))
            .unwrap_or_default();
        bail!(
            "{}: expects `{expect}`, which is no skill a session of these roots may be offered{hint}",
            case.source
        );
    }
    Ok(())
}

/// A case ranked as the session's `skills_search` ranks it.
fn rank(session: &Session, case: Case, threshold: f64) -> Result<Outcome> {
    let results = session.search(&SearchQuery {
        query: case.request.clone(),
        limit: Some(RANKED),
        ..SearchQuery::default()
    })?;
    let all = results.results;
    let offered: Vec<&skills_executor::SearchResult> =
        all.iter().filter(|r| r.score >= threshold).collect();
    let expect = case.expect.as_deref();
    let is_expected = |r: &skills_executor::SearchResult| {
        expect.is_some_and(|e| r.name == e || r.qualified_name == e)
    };
    let (top1, top5) = match expect {
        None => (offered.is_empty(), offered.is_empty()),
        Some(_) => (
            offered.first().is_some_and(|r| is_expected(r)),
            offered.iter().take(5).any(|r| is_expected(r)),
        ),
    };
    Ok(Outcome {
        rank: all.iter().position(is_expected).map(|p| p + 1),
        ranking: offered
            .iter()
            .take(5)
            .map(|r| Ranked {
                skill: r.name.clone(),
                score: r.score,
            })
            .collect(),
        chosen: offered.first().map(|r| r.name.clone()),
        top1,
        top5,
        case: case.source,
        name: case.name,
        request: case.request,
        expect: case.expect,
        tags: case.tags,
        model: None,
        model_hit: None,
    })
}

/// Whether a model's answer is the expected skill (both none, or the same name).
fn same_skill(answer: Option<&str>, expect: Option<&str>) -> bool {
    match (answer, expect) {
        (None, None) => true,
        (Some(a), Some(e)) => a == e || a.rsplit(':').next() == Some(e),
        _ => false,
    }
}

fn round4(x: f32) -> f64 {
    (f64::from(x) * 10_000.0).round() / 10_000.0
}

/// The exit status: 1 when a gate fails (said on standard error), else 0.
fn gate(report: &Report, args: &TriggersArgs) -> ExitCode {
    let mut failed = false;
    for (flag, min, got) in [
        ("--min-top1", args.min_top1, report.top1),
        ("--min-top5", args.min_top5, report.top5),
    ] {
        if let Some(min) = min.filter(|min| got < *min) {
            failed = true;
            let _ = writeln!(
                std::io::stderr(),
                "skillctl: the ranking's {} hit rate {got:.3} is below {flag} {min}",
                &flag[6..]
            );
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Hits of a group of cases.
#[derive(Debug, Default, Clone, Copy, Serialize)]
struct Tally {
    cases: usize,
    top1: usize,
    top5: usize,
    /// With a model: its hits.
    model: usize,
}

impl Tally {
    fn add(&mut self, o: &Outcome) {
        self.cases += 1;
        self.top1 += usize::from(o.top1);
        self.top5 += usize::from(o.top5);
        self.model += usize::from(o.model_hit == Some(true));
    }
}

/// The whole evaluation's numbers.
struct Report {
    all: Tally,
    top1: f64,
    top5: f64,
    threshold: f64,
    model_command: Option<String>,
    /// Per expected skill (`None`: cases that expect no skill).
    per_skill: BTreeMap<Option<String>, Tally>,
    per_tag: BTreeMap<String, Tally>,
    /// How many cases the ranking chose each skill for.
    chosen: BTreeMap<String, usize>,
    /// Visible skills no case's ranking chooses.
    unreached: Vec<String>,
}

impl Report {
    fn of(
        outcomes: &[Outcome],
        visible: &[Arc<SkillRecord>],
        threshold: f64,
        model_command: Option<&str>,
    ) -> Report {
        let mut all = Tally::default();
        let mut per_skill: BTreeMap<Option<String>, Tally> = BTreeMap::new();
        let mut per_tag: BTreeMap<String, Tally> = BTreeMap::new();
        let mut chosen: BTreeMap<String, usize> = BTreeMap::new();
        for o in outcomes {
            all.add(o);
            per_skill.entry(o.expect.clone()).or_default().add(o);
            for tag in &o.tags {
                per_tag.entry(tag.clone()).or_default().add(o);
            }
            if let Some(c) = &o.chosen {
                *chosen.entry(c.clone()).or_default() += 1;
            }
        }
        let unreached = visible
            .iter()
            .map(|r| r.name.to_string())
            .filter(|n| !chosen.contains_key(n))
            .collect();
        Report {
            top1: fraction(all.top1, all.cases),
            top5: fraction(all.top5, all.cases),
            all,
            threshold,
            model_command: model_command.map(str::to_owned),
            per_skill,
            per_tag,
            chosen,
            unreached,
        }
    }

    /// `--format json`: everything.
    fn json(&self, outcomes: &[Outcome], visible: &[Arc<SkillRecord>]) -> serde_json::Value {
        let tally = |t: &Tally| {
            let mut v = serde_json::json!({
                "cases": t.cases,
                "top1": fraction(t.top1, t.cases),
                "top5": fraction(t.top5, t.cases),
            });
            if self.model_command.is_some() {
                v["model_top1"] = serde_json::json!(fraction(t.model, t.cases));
            }
            v
        };
        let per_skill: Vec<serde_json::Value> = visible
            .iter()
            .map(|r| {
                let name = r.name.to_string();
                let t = self
                    .per_skill
                    .get(&Some(name.clone()))
                    .copied()
                    .unwrap_or_default();
                let mut v = tally(&t);
                v["skill"] = serde_json::json!(name);
                v["chosen"] = serde_json::json!(self.chosen.get(&name).copied().unwrap_or(0));
                v
            })
            .collect();
        let misses: Vec<serde_json::Value> = outcomes
            .iter()
            .filter(|o| !o.top1)
            .map(|o| miss(o, visible))
            .collect();
        let mut doc = serde_json::json!({
            "cases": self.all.cases,
            "top1": self.top1,
            "top5": self.top5,
            "threshold": self.threshold,
            "per_skill": per_skill,
            "no_skill": tally(&self.per_skill.get(&None).copied().unwrap_or_default()),
            "per_tag": self.per_tag.iter().map(|(k, t)| (k.clone(), tally(t))).collect::<serde_json::Map<_, _>>(),
            "misses": misses,
            "unreached": self.unreached,
            "results": outcomes,
        });
        if let Some(command) = &self.model_command {
            doc["model"] = serde_json::json!({
                "command": command,
                "top1": fraction(self.all.model, self.all.cases),
            });
        }
        doc
    }
}

/// A miss as the JSON report gives it: the case, the skill chosen instead, the expected
/// skill's rank and the request's words its name and description lack.
fn miss(o: &Outcome, visible: &[Arc<SkillRecord>]) -> serde_json::Value {
    serde_json::json!({
        "case": o.case,
        "request": o.request,
        "expect": o.expect,
        "chosen": o.chosen,
        "rank": o.rank,
        "lacking": lacking(o, visible),
    })
}

/// The words of a case's request whose search terms the expected skill's name and
/// description (with `when_to_use`) lack: what the description could say, if the request
/// is one the skill is for. Empty for a case expecting no skill.
fn lacking(o: &Outcome, visible: &[Arc<SkillRecord>]) -> Vec<String> {
    let Some(r) = o.expect.as_deref().and_then(|e| {
        visible
            .iter()
            .find(|r| r.name.as_str() == e || r.qualified_name() == e)
    }) else {
        return Vec::new();
    };
    let own = format!(
        "{} {} {}",
        r.name,
        r.description,
        r.frontmatter.when_to_use.as_deref().unwrap_or("")
    );
    let has: std::collections::HashSet<String> = skills_index::search_terms(&own)
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    let mut seen = std::collections::HashSet::new();
    skills_index::search_terms(&o.request)
        .into_iter()
        // A lone letter or digit ("2.0" is two words) is no advice.
        .filter(|(w, t)| w.chars().count() > 1 && !has.contains(t) && seen.insert(t.clone()))
        .map(|(w, _)| w.to_lowercase())
        .collect()
}

fn fraction(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    // Counts far below 2^52: exact.
    #[allow(clippy::cast_precision_loss)]
    let f = part as f64 / whole as f64;
    (f * 10_000.0).round() / 10_000.0
}

/// The human report: the totals, a table per skill, the misses and the skills no case
/// chooses.
fn human(
    out: &mut impl std::io::Write,
    report: &Report,
    outcomes: &[Outcome],
    visible: &[Arc<SkillRecord>],
) -> Result<()> {
    use crate::out::visible as shown;
    let n = report.all.cases;
    let scenario = outcomes
        .iter()
        .filter(|o| o.tags.iter().any(|t| t == "test-scenarios"))
        .count();
    writeln!(
        out,
        "{n} cases ({} from the case file, {scenario} from test-scenarios); a skill is offered from score {:.4}",
        n - scenario,
        report.threshold
    )?;
    let pct = |k: usize, of: usize| format!("{k}/{of} ({:.1}%)", fraction(k, of) * 100.0);
    writeln!(
        out,
        "ranking: top-1 {}, top-5 {}",
        pct(report.all.top1, n),
        pct(report.all.top5, n)
    )?;
    if report.model_command.is_some() {
        writeln!(out, "model:   top-1 {}", pct(report.all.model, n))?;
    }
    table(out, report, visible)?;
    let misses: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| !o.top1 || o.model_hit == Some(false))
        .collect();
    if !misses.is_empty() {
        writeln!(out, "\nmisses:")?;
    }
    for o in misses {
        miss_line(out, o, visible)?;
    }
    if !report.unreached.is_empty() {
        writeln!(
            out,
            "\nno case chooses: {}",
            report
                .unreached
                .iter()
                .map(|n| shown(n))
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    Ok(())
}

/// The table of the human report: a row per visible skill, then the cases that expect no
/// skill.
fn table(
    out: &mut impl std::io::Write,
    report: &Report,
    visible: &[Arc<SkillRecord>],
) -> Result<()> {
    use crate::out::visible as shown;
    let width = visible
        .iter()
        .map(|r| shown(r.name.as_str()).len())
        .max()
        .unwrap_or(0)
        .max(12);
    let model = if report.model_command.is_some() {
        "  model"
    } else {
        ""
    };
    writeln!(
        out,
        "\n{:width$}  cases  top-1  top-5  chosen{model}",
        "skill"
    )?;
    let rows = visible
        .iter()
        .map(|r| {
            (
                shown(r.name.as_str()).into_owned(),
                Some(r.name.to_string()),
            )
        })
        .chain([("(no skill)".to_owned(), None)]);
    for (label, key) in rows {
        let t = report.per_skill.get(&key).copied().unwrap_or_default();
        let chosen = key.as_ref().map_or("-".to_owned(), |k| {
            report.chosen.get(k).copied().unwrap_or(0).to_string()
        });
        let m = if report.model_command.is_some() {
            format!("  {:>5}", t.model)
        } else {
            String::new()
        };
        writeln!(
            out,
            "{label:width$}  {:>5}  {:>5}  {:>5}  {chosen:>6}{m}",
            t.cases, t.top1, t.top5
        )?;
    }
    Ok(())
}

/// One miss, on two lines: the case and request; what won, and what the request says
/// that the expected skill does not.
fn miss_line(
    out: &mut impl std::io::Write,
    o: &Outcome,
    visible: &[Arc<SkillRecord>],
) -> Result<()> {
    use crate::out::visible as shown;
    let name = |s: Option<&str>| s.map_or("no skill".to_owned(), |s| format!("`{}`", shown(s)));
    writeln!(out, "  {}  {:?}", shown(&o.case), shown(&o.request))?;
    let mut what = format!("    expected {}", name(o.expect.as_deref()));
    if !o.top1 {
        what.push_str(&format!(
            "; the ranking chose {}",
            name(o.chosen.as_deref())
        ));
        if let (Some(rank), Some(_)) = (o.rank, &o.expect) {
            what.push_str(&format!(" (expected ranked {rank})"));
        }
    }
    if let Some(answer) = &o.model {
        what.push_str(&format!("; the model chose {}", name(answer.as_deref())));
    }
    writeln!(out, "{what}")?;
    let lack = lacking(o, visible);
    if !o.top1 && !lack.is_empty() {
        writeln!(
            out,
            "    the request says {} that {}'s name and description do not",
            lack.join(", "),
            name(o.expect.as_deref())
        )?;
    }
    Ok(())
}
