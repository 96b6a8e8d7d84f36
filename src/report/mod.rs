//! What the crawl did and is doing: `scraper stats` ([`mod@stats`], rendered by
//! [`text`]), the last run's summary ([`run`]), the live dashboard
//! ([`mod@dashboard`], fed by [`log`] and folded by [`live`]) and the crawl's
//! progress display ([`progress`]).
//!
//! Everything here only reads `data/`; nothing writes to it.

pub mod dashboard;
pub mod live;
pub mod log;
pub mod progress;
pub mod run;
pub mod stats;
pub mod text;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;

use anyhow::Context;

pub use progress::Progress;

/// `scraper stats`: print the report, or its JSON with `json`.
pub fn stats(data: &Path, json: bool) -> anyhow::Result<()> {
    let stats = stats::collect(data)?;
    let out = if json {
        let mut s = serde_json::to_string_pretty(&stats)?;
        s.push('\n');
        s
    } else {
        text::render(&stats)
    };
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(out.as_bytes()) {
        // `scraper stats | head` is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to stdout"),
    }
}

/// `scraper dashboard`: serve the live page on `127.0.0.1:port` until killed.
pub async fn dashboard(
    data: &Path,
    port: u16,
    config: Option<crate::config::Config>,
) -> anyhow::Result<()> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| {
        format!("cannot listen on {addr} (is another dashboard running? try --port)")
    })?;
    let url = format!("http://{}/", listener.local_addr()?);
    eprintln!(
        "dashboard for {} on {url} (add ?budget=40m for a countdown); Ctrl-C to stop",
        data.join("state").join("crawl.log").display()
    );
    tokio::select! {
        r = dashboard::serve_with(listener, data.to_path_buf(), config) => r,
        _ = tokio::signal::ctrl_c() => Ok(()),
    }
}
