//! `skillctl lock [--update]`: pins the URL roots' skills by digest in the project's
//! `skills.lock` (and records the local skills' `SKILL.md` digests). Without `--update`,
//! an existing lock is checked against what the roots give now, and left as it is.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::{Context, Result};
use skills_remote::{LocalDigest, Lock, RemotePin};

use crate::roots::{lock_path, Built, Pinning, RootArgs};

/// Write or check the project's skills.lock.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  skillctl lock --root enterprise=https://skills.example.com
  skillctl lock --update --root enterprise=https://skills.example.com

The lock is skills.lock in the project root (the nearest folder holding .git, else the
working directory). With a lock present, a URL root's skill whose digest differs from the
lock, or that the lock does not name, is not loaded until `skillctl lock --update`.

Exit status: 0 written or up to date, 1 the lock differs from the roots (see --update),
2 usage error")]
pub(crate) struct LockArgs {
    #[command(flatten)]
    roots: RootArgs,
    /// Rewrite the lock to what the roots give now.
    #[arg(long)]
    update: bool,
}

pub(crate) fn lock(args: &LockArgs) -> Result<ExitCode> {
    let path = lock_path()?;
    let built = args.roots.build(false, Pinning::Unpinned)?;
    let now = current(&built)?;
    let mut out = crate::stdout();
    let old = Lock::read(&path)?;
    match old {
        Some(old) if !args.update => {
            let (stale, fresh) = differences(&old, &now);
            if stale.is_empty() && fresh.is_empty() {
                writeln!(
                    out,
                    "{} is up to date ({} remote skills pinned)",
                    path.display(),
                    now.remote.len()
                )?;
                return Ok(ExitCode::SUCCESS);
            }
            for pin in stale {
                writeln!(
                    out,
                    "- {} {} {} (in the lock)",
                    pin.name, pin.index, pin.digest
                )?;
            }
            for pin in fresh {
                writeln!(
                    out,
                    "+ {} {} {} (published now)",
                    pin.name, pin.index, pin.digest
                )?;
            }
            writeln!(
                out,
                "{} differs from the roots; `skillctl lock --update` accepts them",
                path.display()
            )?;
            Ok(ExitCode::from(1))
        }
        _ => {
            now.write(&path)?;
            writeln!(
                out,
                "wrote {}: {} remote skills pinned, {} local skills recorded",
                path.display(),
                now.remote.len(),
                now.local.len()
            )?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The pins of `old` no longer published, and those published that `old` does not hold.
fn differences<'a>(old: &'a Lock, now: &'a Lock) -> (Vec<&'a RemotePin>, Vec<&'a RemotePin>) {
    let stale = old
        .remote
        .iter()
        .filter(|p| !now.remote.contains(p))
        .collect();
    let fresh = now
        .remote
        .iter()
        .filter(|p| !old.remote.contains(p))
        .collect();
    (stale, fresh)
}

/// The lock the roots give now.
fn current(built: &Built) -> Result<Lock> {
    let mut lock = Lock::new();
    for remote in &built.remotes {
        for (name, digest) in remote.digests() {
            lock.remote.push(RemotePin {
                name,
                origin: format!("url:{}", remote.origin()),
                index: remote.url().to_string(),
                digest: digest.to_string(),
            });
        }
    }
    let snap = built.index.snapshot();
    for record in snap.records() {
        if record.remote.is_some() {
            continue;
        }
        let skill = built
            .index
            .load_record(record)
            .with_context(|| format!("reading {}", record.qualified_name()))?;
        lock.local.push(LocalDigest {
            name: record.name.to_string(),
            layer: record
                .plugin
                .as_deref()
                .map_or_else(|| record.layer.to_string(), |id| format!("plugin:{id}")),
            digest: skill.digest.clone(),
        });
    }
    lock.remote.sort();
    lock.local.sort();
    Ok(lock)
}
