//! The crawl engine: the async loop that owns the frontier, the seen-set and
//! the counters, hands fetches to workers and stores what they bring back.

use std::path::PathBuf;

use crate::config::Config;

/// Run options that are not in `config.yml`.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub data: PathBuf,
    pub seeds: Vec<String>,
    pub resume: bool,
    pub proxy: Option<String>,
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct RunEnd {
    pub interrupted: bool,
    pub stopped_by: String,
}

/// `scraper crawl`.
pub async fn run(_config: Config, _opts: Options) -> anyhow::Result<RunEnd> {
    anyhow::bail!("scraper crawl is not built yet")
}

/// `scraper check-url`.
pub async fn check_url(
    _config: &Config,
    _url: &str,
    _json: bool,
    _proxy: Option<&str>,
) -> anyhow::Result<()> {
    anyhow::bail!("scraper check-url is not built yet")
}
