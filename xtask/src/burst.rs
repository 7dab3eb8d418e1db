//! The burst rows (issue 43): `skillctl watch` (the binary a user gets, `--profile dist`) over the 10,000-skill
//! corpus while 1,000 `SKILL.md` files are saved as editors save them (a temporary file
//! written in each folder, then renamed over `SKILL.md`: every write first, then every
//! rename), timed from the last rename to the 1,000th `changed` line read from its stdout;
//! three bursts, median. Beside it, one such save timed to its `changed` line. The corpus
//! is left as it was: a last burst writes the original files back.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// How long a line may take before the run is called stuck.
const STUCK: Duration = Duration::from_secs(60);
/// The temporary file an editor writes beside `SKILL.md` (hidden, as most editors name it).
const TEMP: &str = ".SKILL.md.burst-tmp";

struct Watch {
    child: Child,
    lines: Receiver<String>,
}

impl Watch {
    fn start(skillctl: &Path, corpus: &Path) -> Result<Watch> {
        let mut child = Command::new(skillctl)
            .args(["watch", "--no-defaults", "--root"])
            .arg(format!("project={}", corpus.display()))
            .stdout(Stdio::piped())
            .spawn()
            .context("starting skillctl watch")?;
        let stdout = child.stdout.take().context("no stdout")?;
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let watch = Watch { child, lines };
        let ready: Value = serde_json::from_str(&watch.line()?)?;
        if ready["event"] != "ready" {
            bail!("expected the ready line, got {ready}");
        }
        Ok(watch)
    }

    fn line(&self) -> Result<String> {
        self.lines
            .recv_timeout(STUCK)
            .context("skillctl watch went quiet")
    }

    /// Reads lines until every skill of `files` has a `changed` line; the time from `since`.
    fn changed(&self, files: &[PathBuf], since: Instant) -> Result<f64> {
        let mut left: std::collections::HashSet<&Path> =
            files.iter().map(PathBuf::as_path).collect();
        while !left.is_empty() {
            let event: Value = serde_json::from_str(&self.line()?)?;
            let path = event["path"].as_str().unwrap_or("");
            if event["event"] != "changed" || !left.remove(Path::new(path)) {
                bail!("unexpected line during a burst: {event}");
            }
        }
        Ok(since.elapsed().as_secs_f64() * 1e3)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Saves each file with its text, editor fashion; returns when the last rename is done.
fn save(files: &[PathBuf], texts: &[Vec<u8>]) -> Result<Instant> {
    for (file, text) in files.iter().zip(texts) {
        std::fs::write(file.with_file_name(TEMP), text)?;
    }
    for file in files {
        std::fs::rename(file.with_file_name(TEMP), file)?;
    }
    Ok(Instant::now())
}

/// The rows: the burst's median (its three values in the note) and one save.
pub(crate) fn rows(skillctl: &Path, corpus: &Path) -> Result<Vec<Value>> {
    let mut all = crate::skill_files(corpus);
    all.sort();
    let files: Vec<PathBuf> = all
        .iter()
        .map(|f| std::fs::canonicalize(f).unwrap_or_else(|_| f.clone()))
        .step_by(10)
        .take(1000)
        .collect();
    let originals: Vec<Vec<u8>> = files.iter().map(std::fs::read).collect::<Result<_, _>>()?;
    let watch = Watch::start(skillctl, &std::fs::canonicalize(corpus)?)?;
    let mut bursts = Vec::new();
    let mut singles = Vec::new();
    for round in 1..=3 {
        let edited: Vec<Vec<u8>> = originals
            .iter()
            .map(|t| [t.as_slice(), format!("\nBurst {round}.\n").as_bytes()].concat())
            .collect();
        let last = save(&files, &edited)?;
        bursts.push(watch.changed(&files, last)?);
        let one = &files[round..=round];
        let last = save(one, &originals[round..=round])?;
        singles.push(watch.changed(one, last)?);
    }
    drop(watch);
    save(&files, &originals)?;
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let list = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.0}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "burst: 1000 saves: {} ms; one save: {} ms",
        list(&bursts),
        list(&singles)
    );
    Ok(vec![
        crate::whole::metric(
            "1000 saves seen by skillctl watch after the last rename, 10000 skills",
            "ms",
            median(&bursts),
            None,
            &format!("three bursts: {} ms", list(&bursts)),
        ),
        crate::whole::metric(
            "one save seen by skillctl watch, 10000 skills",
            "ms",
            median(&singles),
            None,
            &format!("three saves: {} ms; debounce window 50 ms", list(&singles)),
        ),
    ])
}
