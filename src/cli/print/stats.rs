//! What `scraper stats` prints: the report, or its JSON, on stdout.

use std::io::Write;

use anyhow::Context;

use scraper::report::stats::Stats;

/// Print the report, or its JSON with `json`.
pub fn show(stats: &Stats, json: bool) -> anyhow::Result<()> {
    let out = if json {
        let mut s = serde_json::to_string_pretty(stats)?;
        s.push('\n');
        s
    } else {
        scraper::report::text::render(stats)
    };
    match std::io::stdout().lock().write_all(out.as_bytes()) {
        // `scraper stats | head` is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to stdout"),
    }
}
