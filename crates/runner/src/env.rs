//! Which environment variables a script may receive from a call: a shape, and a deny list
//! as a static table (names, beginnings, ends) that no host or skill allow-list lifts.

/// Whether a call may set this environment variable for a script. An allow-list of shape
/// (`[A-Z][A-Z0-9_]*`) minus every name an interpreter, the shell or the dynamic loader
/// reads as code, a search path or options (the C library's too: its resolver, locale
/// catalogues and time zone files), and the names that move a tool's configuration
/// (`XDG_CONFIG_HOME` as well as `HOME`: git's configuration runs commands) or name a
/// program to start: a model passes data to a script, never code to what runs it.
pub(crate) fn refused(name: &str) -> bool {
    let shaped = name.as_bytes().first().is_some_and(u8::is_ascii_uppercase)
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    !shaped
        || EXACT.contains(&name)
        || PREFIXES.iter().any(|p| name.starts_with(p))
        || SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// Whether the environment filter refuses `name` whatever a host or skill allows (SECURITY
/// promise 16): such a name is never passed from a call, and is never a secret.
///
/// ```
/// assert!(skills_runner::is_refused_name("LD_PRELOAD"));
/// assert!(skills_runner::is_refused_name("PATH"));
/// assert!(!skills_runner::is_refused_name("GITHUB_TOKEN"));
/// ```
pub fn is_refused_name(name: &str) -> bool {
    refused(name)
}

/// Names refused as they are.
static EXACT: &[&str] = &[
    "ENV",
    "PATH",
    "HOME",
    "IFS",
    "PS4",
    "SHELLOPTS",
    "BASHOPTS",
    "CDPATH",
    "GCONV_PATH",
    "TMPDIR",
    "LOCPATH",
    // Programs that other programs start, and the configuration they read.
    "SHELL",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "MANPAGER",
    "BROWSER",
    "LESSOPEN",
    "LESSCLOSE",
    "ZDOTDIR",
    "PROMPT_COMMAND",
    "CURL_HOME",
    "WGETRC",
    "CLASSPATH",
    "PHPRC",
    "GLIBC_TUNABLES",
    "RUSTFLAGS",
    "TERMINFO",
    "TERMINFO_DIRS",
    "INPUTRC",
    "HOSTFILE",
    "HISTFILE",
    // Options of the shell and the C library, and the files they read in its place.
    "POSIXLY_CORRECT",
    "GLOBIGNORE",
    "NLSPATH",
    "GETCONF_DIR",
    "TZ",
    "TZDIR",
    // Name resolution (which host a name reaches) and the trust anchors of TLS.
    "HOSTALIASES",
    "RES_OPTIONS",
    "LOCALDOMAIN",
    "NIS_PATH",
    "RESOLV_HOST_CONF",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "CURL_CA_BUNDLE",
    "REQUESTS_CA_BUNDLE",
    "SSLKEYLOGFILE",
    "DATEMSK",
    "GOENV",
    "GOTOOLCHAIN",
    "GOROOT",
    "GOBIN",
    "GOCACHE",
    "AWS_CONFIG_FILE",
    // The programs `make`'s built-in rules and autoconf's scripts start by these names
    // (a recipe expands them into a shell line).
    "RM",
    "TARGET_ARCH",
    "LOADLIBES",
    "CO",
    "GET",
    "PC",
    "LINT",
    "M2C",
    "TEX",
    "TEXI2DVI",
    "WEAVE",
    "CWEAVE",
    "TANGLE",
    "CTANGLE",
    "SED",
    "GREP",
    "EGREP",
    "FGREP",
    "AWK",
    "INSTALL",
    "MKDIR_P",
    "RANLIB",
    "STRIP",
    "NM",
    "OBJDUMP",
    "OBJCOPY",
    "DLLTOOL",
    "LDSHARED",
    "CC",
    "CXX",
    "CPP",
    "LD",
    "AR",
    "AS",
    "FC",
    "YACC",
    "LEX",
    "M4",
];
/// Beginnings of refused names.
static PREFIXES: &[&str] = &[
    "LD_",
    "DYLD_",
    "BASH",
    "PYTHON",
    "PERL",
    "RUBY",
    "NODE_",
    "GIT_",
    "JAVA_",
    "JDK_",
    "GEM_",
    "NPM_",
    "XDG_",
    "OPENSSL_",
    "LUA_",
    "PHP_",
    "CARGO_",
    "RUSTC",
    "BUNDLE_",
    "PIP_",
    "SSH_",
    "TCL",
    "MALLOC_", // Build tools, runtimes and clouds whose variables start programs
    // or choose the configuration that does (`MAKEFILES`, `DOTNET_STARTUP_HOOKS`,
    // `AWS_PROFILE`'s `credential_process`, `R_PROFILE_USER`, `ERL_AFLAGS`).
    "MAKE",
    "DOTNET_",
    "CORECLR_",
    "AWS_",
    "AZURE_",
    "GOOGLE_",
    "CLOUDSDK_",
    "R_",
    "ERL_",
    "JULIA_",
    "GUILE_",
    "DENO_",
    "BUN_",
    "YARN_",
    "COMPOSER_",
    "KUBE",
    "CMAKE_",
    "RUSTUP_",
    "RSYNC_",
    "CCACHE_",
    "GTK",
    "GST_",
    "GIO_",
    "PG",
    "TF_",
    "ANSIBLE_",
    "DOCKER_",
    "IPYTHON",
    "MPL",
    "JUPYTER_",
    "COREPACK_",
    "UV_",
    "PIPX_",
    "POETRY_",
];

// Suffixes that name a search path, options, flags, a start-up or configuration file,
// a hook, a proxy, a program or a command, whoever reads them (`GOFLAGS`, `MAVEN_OPTS`,
// `AWKLIBPATH`, `VIMINIT`, `MYVIMRC`, `HTTPS_PROXY`, `GNUPGHOME`, `CONFIG_SHELL`,
// `SUDO_ASKPASS`, `GIO_EXTRA_MODULES`, `XZ_OPT`). Not `_FILE` or `_DIR`: a path to
// data is what a script is most often given.
static SUFFIXES: &[&str] = &[
    "PATH",
    "LIB",
    "LIBS",
    "OPTS",
    "OPTIONS",
    "FLAGS",
    "RC",
    "INIT",
    "HOOK",
    "HOOKS",
    "PROFILE",
    "PROFILE_USER",
    "ENVIRON",
    "PROXY",
    "PRELOAD",
    "CONFIG",
    "COMMAND",
    "HOME",
    "SHELL",
    "EDITOR",
    "PAGER",
    "ASKPASS",
    "RSH",
    "LAUNCHER",
    "WRAPPER",
    "MODULES",
    "PLUGINS",
    "CONF",
    "CFG",
    "CONFDIR",
    "CONFIGDIR",
    "CONFIG_DIR",
    "_ARGS",
    "_OPT",
    "_OPTION",
    "_ENVIRONMENT",
];
