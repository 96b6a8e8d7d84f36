//! The `scraper` binary: parse the command line, load the config, build a
//! runtime where one is needed, and map errors to exit codes
//! (0 = done or limit reached, 130 = interrupted with state saved, 69 = an
//! outage: no host could be reached and nothing was saved, 1 = fatal).

mod check_report;
mod cli;
mod crawl_report;
mod extract_files;
mod health_out;
mod malloc;
mod progress;
mod report_out;

use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use cli::{Cli, Command};
use scraper::config::{Config, Overrides};

fn main() -> ExitCode {
    malloc::tune();
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
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
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
                min_lastmod: a
                    .min_lastmod
                    .as_deref()
                    .map(scraper::date::MinLastmod::parse)
                    .transpose()
                    .map_err(|e| anyhow::anyhow!("--min-lastmod: {e}"))?,
                scope: a.scope,
                partition: a.partition,
            });
            let opts = scraper::crawl::Options {
                data: a.data.clone(),
                seeds: a.seeds.clone(),
                resume: a.resume,
                proxy: a.proxy.clone(),
            };
            let max = config.crawl.max_duration.0;
            let progress = progress::Progress::new((!max.is_zero()).then_some(max));
            let end = runtime()?.block_on(scraper::crawl::run(config, opts, Box::new(progress)))?;
            crawl_report::show(&end);
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
            let report = runtime()?.block_on(scraper::crawl::check_url(
                &config,
                &a.url,
                a.proxy.as_deref(),
            ))?;
            check_report::show(&report, a.json);
            Ok(ExitCode::SUCCESS)
        }
        Command::Extract(a) => {
            let config = load_config(&cli)?;
            extract_files::run_files(&config, &a.paths, a.url.as_deref())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Stats(a) => {
            report_out::stats(&a.data, a.json)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Health(a) => {
            let config = load_config(&cli)?;
            let state = a.data.join("state");
            let loaded = scraper::store::health::load_recent(
                &state,
                config.health.window * scraper::health::FILES_PER_RUN,
            )?;
            let report = scraper::health::Report::new(
                &config.sources,
                &config.health,
                &loaded.runs,
                loaded.unreadable,
            );
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
            let s = scraper::dataset::build(
                &config,
                &scraper::dataset::BuildOptions {
                    data: a.data.clone(),
                    out: a.out.clone(),
                    relevance_filter: !a.no_relevance_filter,
                    strict: a.strict,
                },
            )?;
            if !s.ok {
                eprintln!(
                    "build: --strict: {} broken lines, frames or shards (see the warnings above); nothing written",
                    s.broken
                );
                return Ok(ExitCode::from(1));
            }
            let r = &s.removed;
            println!(
                "build: {} shards, {} good records, {} broken; removed {} older versions, {} by relevance, {} same URL, \
                 {} same text, {} near-duplicate text, {} repeated id; wrote {} rows in {} file(s), {:.1} MB, to {} in {:.1} s",
                s.reports.len(),
                s.read,
                s.broken,
                r.updated,
                r.relevance,
                r.same_url,
                r.same_text,
                r.near_text,
                r.same_id,
                s.rows,
                s.files.len(),
                s.file_bytes as f64 / 1e6,
                s.data_dir.display(),
                s.secs
            );
            Ok(ExitCode::SUCCESS)
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
            let folded = scraper::store::state::listings::compact(&data.state, &stamp)?;
            if folded > 0 {
                println!("folded {folded} listings files into state/listings/{stamp}.json");
            }
            let today = scraper::store::seen::day_stamp(chrono::Utc::now());
            let folded = scraper::store::state::compact_doc_cache(&data.state, &stamp, today)?;
            if folded > 0 {
                println!("folded {folded} document-cache files into state/doc_cache/{stamp}.json");
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Reextract(a) => {
            let config = load_config(&cli)?;
            let s = scraper::reextract::reextract(
                &config,
                &scraper::reextract::Options {
                    data: a.data.clone(),
                    all: a.all,
                },
            )?;
            print_reextract(&s);
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
        Command::Keys(a) => {
            keys(&cli, a.generate.as_deref())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Dashboard(a) => {
            // The health panel needs the sources: from the config when there is one.
            let config = if cli.config.exists() {
                Some(load_config(&cli)?)
            } else {
                None
            };
            runtime()?.block_on(report_out::dashboard(&a.data, a.port, config))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `scraper keys [--generate FILE]`: the key directory on stdout.
fn keys(cli: &Cli, generate: Option<&std::path::Path>) -> anyhow::Result<()> {
    use scraper::net::sign;
    let signer = match generate {
        Some(path) => {
            let s = sign::generate(path, "")?;
            eprintln!(
                "wrote a new Ed25519 key to {} (keep it secret; keyid {})",
                path.display(),
                s.keyid()
            );
            s
        }
        None => {
            let config = load_config(cli)?;
            let Some(w) = &config.crawl.web_bot_auth else {
                anyhow::bail!(
                    "{}: crawl.web_bot_auth is not set (add key_file and signature_agent, or make a key with `scraper keys --generate FILE`)",
                    cli.config.display()
                );
            };
            sign::Signer::from_config(w)?
        }
    };
    println!("{}", serde_json::to_string_pretty(&signer.directory())?);
    Ok(())
}

/// The one-line report of `scraper reextract`.
fn print_reextract(s: &scraper::reextract::Summary) {
    println!(
        "reextract: {} WARC file(s) ({} with a torn tail), {} records; {} unchanged, \
         {} written ({} no longer an article, {} no longer relevant), {} unreadable; \
         extractor {}{}",
        s.files,
        s.torn_files,
        s.records,
        s.unchanged,
        s.written,
        s.withdrawn_not_article,
        s.withdrawn_not_relevant,
        s.unreadable,
        s.version,
        s.shard
            .as_ref()
            .map(|p| format!("; shard {}", p.display()))
            .unwrap_or_default()
    );
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
