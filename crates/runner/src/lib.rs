//! The script runner: one script as a real child process, with argv (never a shell), an
//! environment filtered by a deny list no allow-list lifts, a timeout that kills its whole
//! process group, and capped output; and the supervisor (`skills-supervise`) under which a
//! script's every descendant dies with it. The executor decides which script may run; this
//! crate runs it.

mod cancel;
mod env;
mod redact;
mod script;
mod spawn;
mod supervisor;

pub use cancel::{cancellation, Cancellation, Canceller};
pub use env::is_refused_name;
pub use redact::{redact, MIN_SECRET_LEN};
pub use script::{interpreter_for, run_script, Ready, ScriptError, ScriptOutput, ScriptRequest};
pub use supervisor::{supervise, STOPPED, SUPERVISE_ARG};
