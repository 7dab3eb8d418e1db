//! `skills-supervise`: the script supervisor as an executable of its own, for hosts that
//! embed the library and would rather not serve it from their own binary. Run as
//! `skills-supervise __skills-supervise PROGRAM ARGS...` (see `skills_runner::supervise`).

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let code = match args.split_first() {
        Some((first, rest)) if first == skills_runner::SUPERVISE_ARG => {
            skills_runner::supervise(rest)
        }
        _ => 2,
    };
    std::process::exit(code);
}
