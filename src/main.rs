//! The `scraper` binary: parse the command line and dispatch to one function
//! per command (`src/cli/`), mapping errors to exit codes (0 = done or limit
//! reached, 130 = interrupted with state saved, 69 = an outage: no host could
//! be reached and nothing was saved, 1 = fatal).

mod cli;
mod malloc;

use std::process::ExitCode;

use clap::Parser;

use cli::args::{Cli, Command};
use cli::commands;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // `extract` reads one page after another on one thread: glibc's own
    // adaptive thresholds let the next page reuse a page's large buffers,
    // where the crawl's settings map and unmap them (a few % of its CPU).
    // `build` has settings of its own (`malloc::tune_build` says why).
    match cli.command {
        Command::Extract(_) => {}
        Command::Build(_) => malloc::tune_build(),
        _ => malloc::tune(),
    }
    cli::init_logging();
    match run(&cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    let config = cli.config.as_path();
    match &cli.command {
        Command::Crawl(a) => commands::crawl(config, a),
        Command::CheckUrl(a) => commands::check_url(config, a),
        Command::Extract(a) => commands::extract(config, a),
        Command::Stats(a) => commands::stats(a),
        Command::Health(a) => commands::health(config, a),
        Command::Probe(a) => commands::probe(config, a),
        Command::Build(a) => commands::build(config, a),
        Command::Compact(a) => commands::compact(a),
        Command::Reextract(a) => commands::reextract(config, a),
        Command::Renumber(a) => commands::renumber(config, a),
        Command::Keys(a) => cli::keys::keys(config, a),
        Command::Dashboard(a) => commands::dashboard(config, a),
    }
}
