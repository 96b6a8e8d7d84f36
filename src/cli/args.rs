//! Command-line types (clap derive only). `main.rs` turns them into library calls.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use scraper::config::{Scope, Span};

#[derive(Debug, Parser)]
#[command(
    name = "scraper",
    version,
    about = "A focused, polite crawler for AI and technology articles"
)]
pub struct Cli {
    /// The configuration file.
    #[arg(
        long,
        global = true,
        default_value = "config.yml",
        env = "SCRAPER_CONFIG"
    )]
    pub config: PathBuf,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Crawl the configured sources and append articles to a new shard.
    ///
    /// Exit status: 0 when the run ended by a limit or ran out of work; 130
    /// after Ctrl-C or SIGTERM (state saved); 69 on an outage (no host could
    /// be reached: network, DNS, TLS, proxy, or robots.txt unreachable
    /// everywhere; nothing saved, so the `--min-lastmod auto` watermark and
    /// the carried-over queue are unchanged); 1 for fatal errors (bad config,
    /// unwritable data folder).
    Crawl(CrawlArgs),
    /// Fetch one page (robots.txt honoured) and show what the extractor decided.
    CheckUrl(CheckUrlArgs),
    /// Run the extractor on saved HTML files (`.gz` too); one JSON object per file.
    Extract(ExtractArgs),
    /// What is stored, by year and domain, and the last run's summary.
    Stats(StatsArgs),
    /// How each source has done over the last runs: ok, degraded or broken, with the reason and the run it started.
    Health(HealthArgs),
    /// Vet a new source without storing anything: robots.txt, AI-use signals,
    /// feeds and sitemaps, listed URLs by month, a sample of pages, a suggested `sources:` entry.
    Probe(ProbeArgs),
    /// Merge every shard into deduplicated Parquet files plus a dataset card.
    Build(BuildArgs),
    /// Make the stored records again from the WARC archives (`crawl.archive`)
    /// with the current extractor and rule, into a new shard (takes the run lock).
    Reextract(ReextractArgs),
    /// Serve a live progress page that follows the crawl log.
    Dashboard(DashboardArgs),
    /// Merge the per-run seen-set segments into compacted files, and the per-run
    /// validators files into one (takes the run lock; one machine at a time).
    Compact(CompactArgs),
    /// Give one run's shard new ids past every other shard's (after two
    /// machines crawled from the same state; takes the run lock).
    Renumber(RenumberArgs),
    /// Web Bot Auth: print the key directory of `crawl.web_bot_auth` (JSON to
    /// publish at `<signature_agent>/.well-known/http-message-signatures-directory`),
    /// the signed response for it (`--response`), a Signature Agent Card
    /// (`--card`), or make a new key with `--generate FILE`.
    Keys(KeysArgs),
}

#[derive(Debug, Args)]
pub struct CrawlArgs {
    /// The data folder (shards in `articles/`, state in `state/`).
    #[arg(long, default_value = "data")]
    pub data: PathBuf,
    /// Fetch budget: every request counts (robots, feeds, sitemaps, 304s).
    #[arg(long)]
    pub max_pages: Option<u64>,
    /// Stop after storing this many articles.
    #[arg(long)]
    pub max_hits: Option<u64>,
    /// Time box: `90s`, `40m`, `1h30m` or seconds.
    #[arg(long)]
    pub max_duration: Option<Span>,
    /// Skip feed and sitemap entries older than this: a date, an RFC 3339 time, or `auto`.
    #[arg(long)]
    pub min_lastmod: Option<String>,
    /// `domains` (configured sources only) or `open`.
    #[arg(long)]
    pub scope: Option<Scope>,
    /// Crawl only the hosts of partition `i` of `N` (0-based, e.g. `2/4`).
    #[arg(long)]
    pub partition: Option<scraper::partition::Partition>,
    /// Extra seed URL (repeatable); its host is in scope for this run.
    #[arg(long = "seed")]
    pub seeds: Vec<String>,
    /// Continue from the queue a stopped run saved in `state/frontier.jsonl`.
    #[arg(long)]
    pub resume: bool,
    /// Send every request through this proxy (overrides http_proxy/https_proxy/no_proxy).
    #[arg(long)]
    pub proxy: Option<String>,
}

#[derive(Debug, Args)]
pub struct CheckUrlArgs {
    pub url: String,
    /// Print the `extract` JSON object instead of the readable layout.
    #[arg(long)]
    pub json: bool,
    #[arg(long)]
    pub proxy: Option<String>,
}

#[derive(Debug, Args)]
pub struct ExtractArgs {
    /// HTML files (gzip-compressed when named `.gz`).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Base URL of the page (for one file).
    #[arg(long)]
    pub url: Option<String>,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    #[arg(long, default_value = "data")]
    pub data: PathBuf,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HealthArgs {
    #[arg(long, default_value = "data")]
    pub data: PathBuf,
    #[arg(long)]
    pub json: bool,
    /// Only the broken and degraded sources (one line each).
    #[arg(long)]
    pub problems: bool,
}

#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// A URL (`https://example.com/blog`) or a bare host (`example.com`, probed over https).
    pub target: String,
    #[arg(long)]
    pub json: bool,
    /// Listed pages fetched and judged.
    #[arg(long, default_value_t = 5)]
    pub sample: usize,
    /// Most requests the probe may send (robots.txt included).
    #[arg(long, default_value_t = 60)]
    pub max_requests: u64,
    #[arg(long)]
    pub proxy: Option<String>,
    /// Do not compare the sampled pages as rendered in a browser.
    #[arg(long)]
    pub no_render: bool,
    /// Where the rendering verdict is remembered (`state/render_verdicts.json`).
    #[arg(long, default_value = "data")]
    pub data: PathBuf,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    #[arg(long, default_value = "data")]
    pub data: PathBuf,
    #[arg(long, default_value = "dist")]
    pub out: PathBuf,
    /// Keep records the relevance rule would reject.
    #[arg(long)]
    pub no_relevance_filter: bool,
    /// Fail when any input line or frame is broken.
    #[arg(long)]
    pub strict: bool,
}

#[derive(Debug, Args)]
pub struct ReextractArgs {
    #[arg(long, default_value = "data")]
    pub data: PathBuf,
    /// Write every record, also those equal to the newest stored version of their id.
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, Args)]
pub struct DashboardArgs {
    #[arg(long, default_value = "data")]
    pub data: PathBuf,
    #[arg(long, default_value_t = 8765)]
    pub port: u16,
}

#[derive(Debug, Args)]
pub struct CompactArgs {
    #[arg(long, default_value = "data")]
    pub data: PathBuf,
}

#[derive(Debug, Args)]
pub struct KeysArgs {
    /// Write a new Ed25519 private key (PEM PKCS#8) to FILE, which must not
    /// exist, and print its key directory.
    #[arg(long, value_name = "FILE")]
    pub generate: Option<PathBuf>,
    /// Another key (PEM) to publish beside the configured one: the next or
    /// the previous key during a rotation. Repeatable.
    #[arg(long, value_name = "FILE")]
    pub also: Vec<PathBuf>,
    /// Print the whole signed HTTP response to serve for the key directory.
    #[arg(long, conflicts_with = "card")]
    pub response: bool,
    /// Print a Signature Agent Card describing the crawler.
    #[arg(long)]
    pub card: bool,
    /// How long the directory response's signatures stay valid, in hours.
    #[arg(long, default_value_t = 24, value_name = "HOURS")]
    pub valid_hours: u64,
}

#[derive(Debug, Args)]
pub struct RenumberArgs {
    #[arg(long, default_value = "data")]
    pub data: PathBuf,
    /// The shard to renumber: `<data>/articles/<run-id>.jsonl.zst`.
    pub shard: PathBuf,
}
