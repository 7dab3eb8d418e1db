//! Starting a program when it is busy being written (`ETXTBSY`): the runner's start and
//! the supervisor's both wait it out.

use std::io;
use std::process::Command;
use std::time::Duration;

/// The longest single wait of [`spawn_when_not_busy`]; the waits double from 1 ms, so all
/// of them together are under a second.
const BUSY_WAIT: Duration = Duration::from_millis(256);

/// Starts `command`, again (after a wait that doubles each time) while the program is
/// busy being written (`ETXTBSY`). Another thread of this process that forks while it
/// holds the file open for writing (a host writing a script as a skill runs one) gives
/// its child that descriptor until the child execs, and a start in that moment fails:
/// the failure passes by itself, and a run must not fail for it.
pub(crate) fn spawn_when_not_busy(command: &mut Command) -> io::Result<std::process::Child> {
    let mut wait = Duration::from_millis(1);
    loop {
        match command.spawn() {
            Err(e) if e.kind() == io::ErrorKind::ExecutableFileBusy && wait <= BUSY_WAIT => {
                tracing::debug!(program = ?command.get_program(), "program busy being written, starting again");
                std::thread::sleep(wait);
                wait *= 2;
            }
            started => return started,
        }
    }
}
