//! The automation around the crawler, tested without GitHub and without the
//! network: `scripts/daily.sh` with the real crawler (`daily.rs`, and four
//! partitions at once in `partition_daily.rs`) and against a fake `scraper` in temporary
//! git repositories with local bare remotes, `action.yml` and single workflow
//! steps run through an offline runner emulator, and the linters (shellcheck,
//! actionlint, zizmor) plus structure checks of the workflows, the launchd plist
//! and the cron line.
//!
//! Each test runs one script under `tests/scripts/`; the scripts print one
//! `ok:` or `FAIL:` line per check and end with `N passed, N failed`. A missing
//! linter fails the lint test unless `SCRAPER_SKIP_LINT=1`. They need bash, git,
//! python3 with PyYAML, and jq (the action's report step uses it, as runners have it).

mod daily;
mod partition_daily;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Generous: every script takes well under 30 s on two cores.
const LIMIT: Duration = Duration::from_secs(120);

fn run_script(name: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = root.join("tests/scripts").join(name);
    let started = Instant::now();
    let mut child = Command::new("bash")
        .arg(&script)
        .current_dir(root)
        // This build's binary, for the scripts that run a real crawl.
        .env("SCRAPER_REAL_BIN", env!("CARGO_BIN_EXE_scraper"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run bash {}: {e}", script.display()));
    // Read the pipes on threads so a chatty script cannot block on a full pipe.
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for the script") {
            break status;
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{name} took longer than {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    println!("{stdout}");
    eprintln!("{stderr}");
    assert!(
        status.success(),
        "{name} failed ({status}) after {:.1?}:\n{stdout}\n{stderr}",
        started.elapsed()
    );
    assert!(
        stdout.lines().any(|l| l.ends_with(", 0 failed")) && stdout.contains("ok: "),
        "{name} ran no check:\n{stdout}"
    );
}

#[test]
fn daily_sh_commits_only_shard_and_state_and_honours_exit_codes() {
    run_script("test_daily.sh");
}

#[test]
fn daily_sh_push_races_rebase_retry_and_conflicts() {
    run_script("test_daily_push.sh");
}

#[test]
fn daily_sh_lock_and_signal_forwarding() {
    run_script("test_daily_process.sh");
}

#[test]
fn action_yml_runs_offline_with_outputs_summary_and_no_injection() {
    run_script("test_action.sh");
}

#[test]
fn action_yml_on_a_cache_miss_takes_the_release_asset_and_crawls_with_it() {
    run_script("test_action_release.sh");
}

#[test]
fn workflow_steps_validate_payload_and_dispatch() {
    run_script("test_workflows.sh");
}

#[test]
fn linters_and_structure_of_scripts_workflows_plist_and_cron() {
    run_script("test_lint.sh");
}

#[test]
fn install_sh_takes_the_verified_release_asset_without_cargo_and_refuses_bad_ones() {
    run_script("test_install.sh");
}
