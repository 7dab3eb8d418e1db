//! Links an optimised `skillctl` with its relative relocations packed (`DT_RELR`) where the
//! toolchain and the C library can run such a binary (decision 0062).
//!
//! A position-independent `skillctl` carries about 20,000 relative relocations: 490 KB of
//! table the loader reads at every start to write the binary's own addresses. Packed, the
//! table is about 10 KB, and address-space layout randomisation stays. Older linkers ignore
//! the option, and a C library before glibc 2.36 cannot load such a binary; so a small
//! program is first linked the same way, by the same compiler, flags and linker, and run.
//! Only when it runs is the option given. Cross builds, and targets other than Linux with
//! glibc, are left as they are.
//!
//! A binary so linked needs glibc 2.36 or later wherever it runs. To build one for older
//! systems on a newer one, set `SKILLCTL_PACK_RELOCATIONS=0`.

use std::path::PathBuf;
use std::process::{Command, Stdio};

const PACK: &str = "-Wl,-z,pack-relative-relocs";

/// Set to `0`, no packed relocations (a binary for systems older than its builder's).
const OPT_OUT: &str = "SKILLCTL_PACK_RELOCATIONS";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed={OPT_OUT}");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let wanted = var(OPT_OUT) != "0"
        && var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && var("PROFILE") == "release"
        && var("HOST") == var("TARGET");
    if wanted && probe_runs() {
        println!("cargo:rustc-link-arg-bin=skillctl={PACK}");
    }
}

/// Whether a program linked with packed relocations links and runs here. A Rust program
/// with the standard library has thousands of relative relocations: one left unapplied by
/// a loader that does not know the format would not get as far as its exit code, and the
/// program's own check reads a relocated pointer besides.
fn probe_runs() -> bool {
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return false;
    };
    let source = out.join("relr_probe.rs");
    let program = out.join("relr_probe");
    let text = "static WORDS: [&str; 2] = [\"packed\", \"relocations\"];\n\
                fn main() {\n\
                    let first = std::hint::black_box(&WORDS)[1].as_bytes()[0];\n\
                    std::process::exit(i32::from(first != b'r'));\n\
                }\n";
    if std::fs::write(&source, text).is_err() {
        return false;
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let mut link = Command::new(rustc);
    link.arg("--edition=2021")
        .arg("--target")
        .arg(std::env::var("TARGET").unwrap_or_default())
        .arg("-Crelocation-model=pie")
        .arg(format!("-Clink-arg={PACK}"))
        .arg("-o")
        .arg(&program)
        .arg(&source);
    // The flags the binary itself is built with (a linker chosen there, for one).
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    link.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    if let Some(linker) = std::env::var_os("RUSTC_LINKER") {
        link.arg("-C").arg({
            let mut arg = std::ffi::OsString::from("linker=");
            arg.push(linker);
            arg
        });
    }
    let quiet = |c: &mut Command| {
        c.stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    // Run where a profiling or coverage build's counters would not land in the user's files.
    let mut run = Command::new(&program);
    run.env("LLVM_PROFILE_FILE", out.join("relr_probe-%p.profraw"));
    quiet(&mut link) && quiet(&mut run)
}
