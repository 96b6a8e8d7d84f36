//! What the binary shows for `scraper check-url`: the readable report (the
//! redirects, robots.txt's Crawl-delay, the extractor's decisions, the
//! AI-use verdict) or, with `--json`, the `extract` object with the AI-use
//! fields added; a feed or sitemap as one line of counts.

use std::fmt::Write as _;

use serde_json::json;

use scraper::consent::AiDecision;
use scraper::inspect::check_url::{Consent, ListingReport, PageReport, Report};

/// Print the report on stdout.
pub fn show(report: &Report, json: bool) {
    print!("{}", render(report, json));
}

/// The report as printed.
pub fn render(report: &Report, json: bool) -> String {
    match (report, json) {
        (Report::Listing(l), true) => format!("{}\n", listing_json(l)),
        (Report::Listing(l), false) => listing_text(l),
        (Report::Page(p), true) => format!("{}\n", page_json(p)),
        (Report::Page(p), false) => page_text(p),
    }
}

fn listing_json(l: &ListingReport) -> serde_json::Value {
    json!({"url": l.url.as_str(), "kind": l.kind, "entries": l.entries, "sitemaps": l.sitemaps, "is_article": false})
}

fn listing_text(l: &ListingReport) -> String {
    format!(
        "{}\n  a {:?} with {} entries and {} child sitemaps: never stored as an article\n",
        l.url, l.kind, l.entries, l.sitemaps
    )
}

/// The `extract` object plus `ai_signals`, `ai_reserved`, `ai_decision`,
/// `robots_hash` and `tdmrep`.
fn page_json(p: &PageReport) -> serde_json::Value {
    let c = &p.consent;
    let mut v = scraper::extract::to_json(p.url.as_str(), &p.page);
    if let Some(o) = v.as_object_mut() {
        o.insert("ai_signals".into(), json!(c.signals.labels()));
        o.insert("ai_reserved".into(), json!(c.decision.reserved()));
        o.insert("ai_decision".into(), json!(decision_text(c.decision)));
        o.insert(
            "robots_hash".into(),
            json!(scraper::store::consent::robots_hash_hex(c.robots_hash)),
        );
        o.insert("tdmrep".into(), json!(c.tdmrep));
    }
    v
}

fn page_text(p: &PageReport) -> String {
    let mut s = String::new();
    if !p.redirects.is_empty() {
        let hops: Vec<&str> = p.redirects.iter().map(|r| r.as_str()).collect();
        let _ = writeln!(s, "redirects: {}", hops.join(" -> "));
    }
    if let Some(d) = p.crawl_delay {
        let _ = writeln!(s, "robots.txt Crawl-delay: {:.1}s", d.as_secs_f64());
    }
    s.push_str(&super::page::describe(&p.page, p.url.as_str()));
    s.push_str(&ai_use_text(&p.consent));
    s
}

/// The `AI-use:` lines: the signals, how tdmrep.json answered, the decision.
fn ai_use_text(c: &Consent) -> String {
    let labels = c.signals.labels();
    format!(
        "AI-use:       {} (tdmrep.json: {})\n              decision: {}\n",
        if labels.is_empty() {
            "no signals".to_string()
        } else {
            labels.join(", ")
        },
        c.tdmrep,
        decision_text(c.decision)
    )
}

/// What the crawl would do, in words (also `ai_decision` in the JSON).
fn decision_text(d: AiDecision) -> &'static str {
    match d {
        AiDecision::NoReservation => {
            "no AI-training reservation: stored if it is a relevant article"
        }
        AiDecision::Withhold => {
            "withheld: ai-use (the publisher reserves AI training; ai_use_policy: respect)"
        }
        AiDecision::StoreMarked => {
            "stored and marked ai_reserved (the publisher reserves AI training; ai_use_policy: record)"
        }
        AiDecision::StoreAnyway => {
            "stored (the publisher reserves AI training; ai_use_policy: ignore)"
        }
    }
}
