//! What the binary shows when a crawl ends: the per-host funnel as a
//! Markdown table on stderr, and the same under a heading appended to
//! `$GITHUB_STEP_SUMMARY` when that is set (GitHub Actions).

use std::collections::BTreeMap;
use std::io::Write;

use scraper::crawl::RunEnd;
use scraper::record::HostCounters;

/// Print the table and write the step summary.
pub fn show(end: &RunEnd) {
    let mut table = markdown(&end.hosts);
    table.push_str(&consent_lines(&end.hosts));
    if let Some(line) = end.render.as_ref().and_then(rendering) {
        table.push_str(&format!("\n{line}\n"));
    }
    eprintln!("{table}");
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) else {
        return;
    };
    let written = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&path)
        .and_then(|mut f| writeln!(f, "{}\n\n{table}", heading(end)));
    if let Err(e) = written {
        tracing::warn!(path = %path.to_string_lossy(), error = %e, "cannot write the step summary");
    }
}

/// Below the table, one line per host that reserved AI use, pointed to an
/// RSL licence or asked to be paid (never paid): what it said.
pub fn consent_lines(hosts: &BTreeMap<String, HostCounters>) -> String {
    let mut out = String::new();
    for (host, h) in hosts {
        let mut said = Vec::new();
        if !h.ai_reserved.is_empty() {
            let by: Vec<String> = h
                .ai_reserved
                .iter()
                .map(|(l, n)| format!("{l} ({n})"))
                .collect();
            said.push(format!("reserved by {}", by.join(", ")));
        }
        if !h.licenses.is_empty() {
            said.push(format!("RSL licence {}", h.licenses.join(", ")));
        }
        if let Some(p) = &h.payment {
            said.push(format!(
                "{} (not paid)",
                scraper::net::turned::payment_words(
                    p.price.as_deref(),
                    p.error.as_deref(),
                    p.terms.as_deref()
                )
            ));
        }
        if !said.is_empty() {
            out.push_str(&format!("\n{host}: {}", said.join("; ")));
        }
    }
    if !out.is_empty() {
        out.insert_str(0, "\nconsent:");
        out.push('\n');
    }
    out
}

/// The step summary's heading and one-line outcome.
fn heading(end: &RunEnd) -> String {
    match &end.outage {
        Some(cause) => format!(
            "### scraper crawl {}\n\n**Outage**: {cause}. Nothing was saved.",
            end.run_id
        ),
        None => format!(
            "### scraper crawl {}\n\nStopped by **{}**: {} requests, {} articles stored.",
            end.run_id, end.stopped_by, end.fetched, end.stored
        ),
    }
}

/// What the browser cost this run, in one line (`None` when it rendered nothing).
fn rendering(t: &scraper::render::Totals) -> Option<String> {
    if t.rendered + t.failed == 0 {
        return None;
    }
    let r = &t.requests;
    Some(format!(
        "Rendered {} pages ({} failed): {:.1} s of page time ({:.0} ms a page), browser CPU {:.1} s, \
         browser peak memory {} MB, {} start(s); its requests: {} fetched through robots, gap and budget, \
         refused {} by kind, {} to other hosts, {} by robots.txt, {} not fetched.",
        t.rendered,
        t.failed,
        t.wall_ms as f64 / 1000.0,
        t.wall_ms as f64 / t.rendered.max(1) as f64,
        t.browser_cpu_ms as f64 / 1000.0,
        t.peak_rss >> 20,
        t.launches,
        r.answered,
        r.refused_kind,
        r.refused_host,
        r.refused_robots,
        r.failed
    ))
}

/// The per-host table as Markdown (end of run, `$GITHUB_STEP_SUMMARY`).
pub fn markdown(hosts: &BTreeMap<String, HostCounters>) -> String {
    let mut out = String::from(
        "| host | discovered | fetched | robots-denied | traps | articles | relevant | stored | withheld: ai-use | 304 | errors | caps | MB | wait s | requests: listings / pages | listings skipped: unchanged / not due | updated | backlog | handed out: fresh / backlog / explore | family-stopped links | rendered: pages / s / requests |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let list = |m: &BTreeMap<String, u64>| {
        if m.is_empty() {
            return "-".to_string();
        }
        m.iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (host, h) in hosts {
        let errors: BTreeMap<String, u64> =
            h.errors.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let (errors, caps) = (list(&errors), list(&h.caps));
        out.push_str(&format!(
            "| {host} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {errors} | {caps} | {:.2} | {:.1} | {} / {} | {} / {} | {} | {} | {} / {} / {} | {} | {} / {:.1} / {} |\n",
            h.discovered,
            h.fetched,
            h.disallowed,
            h.traps,
            h.articles,
            h.relevant,
            h.stored,
            h.withheld_ai_use,
            h.not_modified,
            h.bytes as f64 / 1e6,
            h.politeness_wait_ms as f64 / 1000.0,
            h.listing_requests,
            h.page_requests,
            h.listings_unchanged,
            h.listings_not_due,
            h.updated,
            h.backlog,
            h.fresh_requests,
            h.backlog_requests,
            h.explore_requests,
            h.family_stopped,
            h.rendered,
            h.render_ms as f64 / 1000.0,
            h.render_requests
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_table_lists_every_host_and_error_class() {
        let mut hosts = BTreeMap::new();
        let mut a = HostCounters {
            fetched: 3,
            stored: 1,
            bytes: 2_000_000,
            ..Default::default()
        };
        a.errors.insert("timeout".into(), 2);
        a.errors.insert("challenge".into(), 1);
        a.traps = 4;
        a.capped("dom_nodes");
        hosts.insert("a.test".to_string(), a);
        hosts.insert("b.test".to_string(), HostCounters::default());
        let md = markdown(&hosts);
        assert_eq!(md.lines().count(), 4);
        assert!(
            md.contains(
                "| a.test | 0 | 3 | 0 | 4 | 0 | 0 | 1 | 0 | 0 | challenge: 1, timeout: 2 | dom_nodes: 1 | 2.00 | 0.0 | 0 / 0 | 0 / 0 | 0 | 0 | 0 / 0 / 0 | 0 | 0 / 0.0 / 0 |"
            ),
            "{md}"
        );
        assert!(md.contains("| b.test |"));
    }
}
