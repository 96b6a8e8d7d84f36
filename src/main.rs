//! The `scraper` binary: parse the command line, load the config, build a
//! runtime where one is needed, and map errors to exit codes
//! (0 = done or limit reached, 130 = interrupted with state saved, 69 = an
//! outage: no host could be reached and nothing was saved, 1 = fatal).

mod cli;
mod health_out;

use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use cli::{Cli, Command};
use scraper::config::{Config, Overrides};

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

fn load_config(cli: &Cli) -> anyhow::Result<Config> {
    Ok(Config::load(&cli.config)?)
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Command::Crawl(a) => {
            let mut config = load_config(&cli)?;
            config.apply_overrides(&Overrides {
                max_pages: a.max_pages,
                max_hits: a.max_hits,
                max_duration: a.max_duration.map(|s| s.0),
                min_lastmod: a.min_lastmod.clone(),
                scope: a.scope,
                partition: a.partition,
            });
            let opts = scraper::crawl::Options {
                data: a.data.clone(),
                seeds: a.seeds.clone(),
                resume: a.resume,
                proxy: a.proxy.clone(),
            };
            let end = runtime()?.block_on(scraper::crawl::run(config, opts))?;
            if let Some(cause) = &end.outage {
                eprintln!(
                    "outage: {cause}; nothing saved (watermark, queue and state unchanged), exit {}",
                    scraper::crawl::outage::EXIT_OUTAGE
                );
                return Ok(ExitCode::from(scraper::crawl::outage::EXIT_OUTAGE));
            }
            Ok(if end.interrupted {
                ExitCode::from(130)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::CheckUrl(a) => {
            let config = load_config(&cli)?;
            runtime()?.block_on(scraper::crawl::check_url(
                &config,
                &a.url,
                a.json,
                a.proxy.as_deref(),
            ))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Extract(a) => {
            let config = load_config(&cli)?;
            scraper::extract::run_files(&config, &a.paths, a.url.as_deref())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Stats(a) => {
            scraper::report::stats(&a.data, a.json)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Health(a) => {
            let config = load_config(&cli)?;
            let state = a.data.join("state");
            let loaded = scraper::store::health::load_recent(
                &state,
                config.health.window * scraper::health::FILES_PER_RUN,
            )?;
            let report = scraper::health::Report::new(&config, &loaded.runs, loaded.unreadable);
            health_out::health(report, a.json, a.problems);
            Ok(ExitCode::SUCCESS)
        }
        Command::Probe(a) => {
            let config = load_config(&cli)?;
            let opts = scraper::crawl::probe::Options {
                sample: a.sample,
                max_requests: a.max_requests,
                proxy: a.proxy.clone(),
            };
            let p = runtime()?.block_on(scraper::crawl::probe::probe(&config, &a.target, &opts))?;
            health_out::probe(&p, a.json);
            Ok(ExitCode::SUCCESS)
        }
        Command::Build(a) => {
            let config = load_config(&cli)?;
            let ok = scraper::dataset::build(
                &config,
                &scraper::dataset::BuildOptions {
                    data: a.data.clone(),
                    out: a.out.clone(),
                    relevance_filter: !a.no_relevance_filter,
                    strict: a.strict,
                },
            )?;
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Compact(a) => {
            let data = scraper::store::DataDir::open(&a.data)?;
            let stamp = scraper::store::state::new_run_id(chrono::Utc::now());
            let r = scraper::store::seen::compact(&data.state, &stamp)?;
            println!(
                "compacted {} seen-set files ({} records, {} bytes) into {} files ({} URLs, {} bytes)",
                r.files,
                r.records_in,
                r.bytes_in,
                r.paths.len(),
                r.records_out,
                r.bytes_out
            );
            let folded = scraper::store::state::validators::compact(
                &data.state,
                &stamp,
                scraper::store::state::Validators::DEFAULT_CAP,
            )?;
            if folded > 0 {
                println!("folded {folded} validators files into state/validators/{stamp}.json");
            }
            let today = scraper::store::seen::day_stamp(chrono::Utc::now());
            let folded = scraper::store::state::compact_doc_cache(&data.state, &stamp, today)?;
            if folded > 0 {
                println!("folded {folded} document-cache files into state/doc_cache/{stamp}.json");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Renumber(a) => {
            let config = load_config(&cli)?;
            let data = scraper::store::DataDir::open(&a.data)?;
            let r = scraper::store::renumber::renumber(&data, &a.shard, config.crawl.first_id)?;
            let old = r
                .old
                .map_or("none".to_string(), |(lo, hi)| format!("{lo}..={hi}"));
            println!(
                "renumbered {} records of {}: ids {}..={} (were {old}); next_id is now {}",
                r.records,
                r.path.display(),
                r.start,
                r.start + r.records as i64 - 1,
                r.start + r.records as i64
            );
            if r.bad_lines + r.bad_frames + r.dropped_bytes > 0 {
                eprintln!(
                    "dropped: {} lines that were not JSON objects, {} corrupt frames, {} bytes of torn tail",
                    r.bad_lines, r.bad_frames, r.dropped_bytes
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Dashboard(a) => {
            // The health panel needs the sources: from the config when there is one.
            let config = if cli.config.exists() {
                Some(load_config(&cli)?)
            } else {
                None
            };
            runtime()?.block_on(scraper::report::dashboard(&a.data, a.port, config))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
