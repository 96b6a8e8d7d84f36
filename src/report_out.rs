//! What the binary shows for `scraper stats` (the report, or its JSON, on
//! stdout) and `scraper dashboard` (where it listens, on stderr); the
//! library collects the numbers and serves the page.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;

use anyhow::Context;

/// `scraper stats`: print the report, or its JSON with `json`.
pub fn stats(data: &Path, json: bool) -> anyhow::Result<()> {
    let stats = scraper::report::stats::collect(data)?;
    let out = if json {
        let mut s = serde_json::to_string_pretty(&stats)?;
        s.push('\n');
        s
    } else {
        scraper::report::text::render(&stats)
    };
    match std::io::stdout().lock().write_all(out.as_bytes()) {
        // `scraper stats | head` is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to stdout"),
    }
}

/// `scraper dashboard`: serve the live page on `127.0.0.1:port` until Ctrl-C.
pub async fn dashboard(
    data: &Path,
    port: u16,
    config: Option<scraper::config::Config>,
) -> anyhow::Result<()> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| {
        format!("cannot listen on {addr} (is another dashboard running? try --port)")
    })?;
    eprintln!(
        "dashboard for {} on http://{}/ (add ?budget=40m for a countdown); Ctrl-C to stop",
        data.join("state").join("crawl.log").display(),
        listener.local_addr()?
    );
    tokio::select! {
        r = scraper::report::dashboard::serve_with(listener, data.to_path_buf(), config) => r,
        _ = tokio::signal::ctrl_c() => Ok(()),
    }
}
