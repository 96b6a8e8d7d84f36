//! The `scraper` binary's own code (not part of the library): the argument
//! types ([`args`]), one function per command ([`commands`]), `scraper
//! extract` over saved files, the progress display of a running crawl, and
//! everything that prints for people ([`print`]). The library returns values;
//! only this folder prints them.
//!
//! `EXIT_OUTAGE` (69) is defined here, once. Log lines are coloured only when
//! stderr is a terminal and `NO_COLOR` is unset, so log files and CI logs
//! carry no escape codes.

pub mod args;
pub mod commands;
mod extract_files;
pub mod keys;
mod print;
mod progress;

use std::process::ExitCode;

use anyhow::Context;

use scraper::config::Config;

/// Exit status of a run in which no host could be reached
/// (sysexits' `EX_UNAVAILABLE`): nothing saved, nothing to commit.
pub const EXIT_OUTAGE: u8 = 69;

/// Exit status after Ctrl-C or SIGTERM, state saved.
pub const EXIT_INTERRUPTED: u8 = 130;

/// Log lines (`tracing`) on stderr, `RUST_LOG` or `info`. Without
/// `RUST_LOG`, html5ever's own notes ("foster parenting not implemented",
/// on every page with text misplaced in a table) are left out: they say
/// nothing about the crawl and would fill a run's log.
pub fn init_logging() {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,html5ever=error"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour(
            std::io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR"),
        ))
        .with_target(false)
        .try_init();
}

/// Colours only on a terminal, and never when `NO_COLOR` is set to anything
/// but the empty string (<https://no-color.org>): log files and CI logs stay
/// free of escape codes.
fn colour(terminal: bool, no_color: Option<std::ffi::OsString>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// A runtime on this thread, for a command that asks a few URLs in turn
/// (no worker threads to start).
fn one_thread_runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Leave a value to the end of the process instead of freeing it piece by
/// piece: a one-page command ends right after, and freeing the config's
/// vocabularies costs more of its time than the page (`benches/one_page.sh`).
fn leave<T>(value: T) {
    std::mem::forget(value);
}

fn load_config(path: &std::path::Path) -> anyhow::Result<Config> {
    Ok(Config::load(path)?)
}

/// A command that ran to its end.
fn done(_: ()) -> ExitCode {
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::colour;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(colour(true, None));
        assert!(colour(true, Some("".into())));
        assert!(!colour(true, Some("1".into())));
        assert!(!colour(false, None));
    }
}
