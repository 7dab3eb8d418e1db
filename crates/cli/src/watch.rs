//! `skillctl watch`: change events as JSON lines, until SIGINT, SIGTERM or (with
//! `--exit-on-eof`) the end of standard input.

use std::io::{Read as _, Write as _};
use std::process::ExitCode;

use anyhow::{Context, Result};
use serde_json::json;

use crate::roots::RootArgs;

/// How long `skillctl watch` waits for the watcher's setup before its ready line.
const WATCH_SETUP_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Print change events as JSON lines while skills change on disk.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  skillctl watch
  skillctl watch --no-defaults --root project=./skills

Exit status: 0 stopped by SIGINT or SIGTERM, 2 usage error")]
pub(crate) struct WatchArgs {
    #[command(flatten)]
    roots: RootArgs,
    /// Exit when standard input closes (for hosts that spawn skillctl as a child).
    #[arg(long)]
    exit_on_eof: bool,
}

pub(crate) fn watch(args: &WatchArgs) -> Result<ExitCode> {
    let (stop_tx, stop_rx) = crossbeam_channel::bounded::<()>(1);
    let signal_tx = stop_tx.clone();
    ctrlc::set_handler(move || {
        let _ = signal_tx.try_send(());
    })
    .context("installing the signal handler")?;
    if args.exit_on_eof {
        std::thread::spawn(move || {
            let mut sink = [0u8; 4096];
            let mut stdin = std::io::stdin();
            while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
            let _ = stop_tx.try_send(());
        });
    }
    let index = args.roots.build_index(true)?;
    // `ready` means watching: the watcher sets its watches on a thread of its own (a
    // session answers meanwhile), and a change made before they are set is read by the
    // rescan that ends the setup, which the ready line then already holds. Bounded: a
    // setup slower than this is reported as it goes, not waited for.
    if index.watched_folders(WATCH_SETUP_WAIT).is_none() {
        tracing::warn!(
            "the watcher is still setting up its watches; changes are reported once it has"
        );
    }
    // A publication's events arrive together and are written with one flush: a burst of
    // a thousand saves is one write, not a thousand.
    let batches = index.subscribe_batches();
    let snap = index.snapshot();
    // Buffered: standard output alone writes at every newline.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let ready_generation = snap.generation();
    let ready = json!({"event": "ready", "generation": ready_generation, "skills": snap.len()});
    writeln!(out, "{ready}")?;
    out.flush()?;
    loop {
        crossbeam_channel::select! {
            recv(batches) -> batch => {
                let Ok(batch) = batch else { break };
                // A change published between subscribing and the ready line is in it already.
                let fresh = batch.iter().filter(|e| e.generation > ready_generation);
                let mut any = false;
                for event in fresh {
                    serde_json::to_writer(&mut out, event)?;
                    out.write_all(b"\n")?;
                    any = true;
                }
                if any {
                    out.flush()?;
                }
            }
            recv(stop_rx) -> _ => break,
        }
    }
    drop(index);
    Ok(ExitCode::SUCCESS)
}
