//! `scraper build`: every shard into deduplicated, deterministic Parquet plus a dataset card.
//!
//! OWNER: dataset work (issue 6).

use std::path::PathBuf;

use crate::config::Config;

/// What `scraper build` was asked to do.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    pub data: PathBuf,
    pub out: PathBuf,
    pub relevance_filter: bool,
    pub strict: bool,
}

/// Build the dataset. `Ok(false)` when `--strict` found broken input.
pub fn build(_config: &Config, _opts: &BuildOptions) -> anyhow::Result<bool> {
    anyhow::bail!("scraper build is not built yet")
}
