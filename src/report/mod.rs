//! What the crawl did: `scraper stats`, the run summary and the live dashboard.
//!
//! OWNER: observability work (issue 8).

use std::path::Path;

/// `scraper stats`.
pub fn stats(_data: &Path, _json: bool) -> anyhow::Result<()> {
    anyhow::bail!("scraper stats is not built yet")
}

/// `scraper dashboard`.
pub async fn dashboard(_data: &Path, _port: u16) -> anyhow::Result<()> {
    anyhow::bail!("scraper dashboard is not built yet")
}
