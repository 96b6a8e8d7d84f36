//! One rule for a tool the tests need outside Rust (Python modules, node,
//! Chromium, the shared eval set, a tmpfs mount): when it is missing the test
//! fails and says how to get it, unless the tool's `SCRAPER_SKIP_<TOOL>=1`
//! says skip (and the skip is said on stderr). Nothing passes silently.
//! `.ci/run` installs or provides every tool, so CI skips nothing it can run.
//! (The shell tests have the same rule for the linters: `SCRAPER_SKIP_LINT`.)

use std::process::{Command, Stdio};

/// A tool some tests need, each with its own skip variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// python3 with a module (pyarrow, datasets, duckdb, huggingface_hub, warcio,
    /// http-message-signatures): `SCRAPER_SKIP_PY`.
    Python,
    /// node, which runs the dashboard page's script: `SCRAPER_SKIP_NODE`.
    Node,
    /// Chromium, headless: `SCRAPER_SKIP_BROWSER`.
    Browser,
    /// The shared evaluation set (`../shared/eval` or `SCRAPER_EVAL`): `SCRAPER_SKIP_EVAL`.
    Eval,
    /// Mounting a small tmpfs (root, or `sudo -n`): `SCRAPER_SKIP_MOUNT`.
    Mount,
}

impl Tool {
    /// The variable that lets a test skip without this tool.
    pub fn var(self) -> &'static str {
        match self {
            Tool::Python => "SCRAPER_SKIP_PY",
            Tool::Node => "SCRAPER_SKIP_NODE",
            Tool::Browser => "SCRAPER_SKIP_BROWSER",
            Tool::Eval => "SCRAPER_SKIP_EVAL",
            Tool::Mount => "SCRAPER_SKIP_MOUNT",
        }
    }

    /// What the tool is, for the failure message.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Python => "python3 with a module",
            Tool::Node => "node",
            Tool::Browser => "Chromium",
            Tool::Eval => "the shared evaluation set",
            Tool::Mount => "a tmpfs mount",
        }
    }

    /// `true` when the variable is `1`: the caller skips `what`, said on stderr.
    pub fn skipped(self, what: &str) -> bool {
        let skip = std::env::var_os(self.var()).is_some_and(|v| v == "1");
        if skip {
            eprintln!("{}=1: skipping {what}", self.var());
        }
        skip
    }

    /// Fail the test: `what` needs this tool, which is missing; `how` gets it.
    pub fn missing(self, what: &str, how: &str) -> ! {
        panic!(
            "{what} needs {}, which is missing ({how}); set {}=1 to skip it",
            self.name(),
            self.var()
        )
    }

    /// Whether `what` may run: `false` when the variable says skip, `true`
    /// when `present()` holds; otherwise the test fails.
    pub fn need(self, what: &str, present: impl FnOnce() -> bool, how: &str) -> bool {
        if self.skipped(what) {
            return false;
        }
        if !present() {
            self.missing(what, how);
        }
        true
    }
}

/// Whether `python3 -c "import MODULES"` succeeds (`modules` comma-separated).
pub fn python_imports(modules: &str) -> bool {
    runs("python3", &["-c", &format!("import {modules}")])
}

/// Whether `program args` starts and exits 0.
pub fn runs(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
