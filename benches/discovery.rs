//! Discovery benchmark (issue 4): what a daily `--min-lastmod auto` run costs.
//!
//! A generated web of 30 hosts x 300 articles (`tests/it/discovery/site.rs`):
//! each host has robots.txt naming a sitemap index (3 gzip children of 100
//! URLs, a news sitemap), an RSS feed of the newest 10, and articles that link
//! to the two before them, a year archive and a tag page. A first run reads it
//! all; then 2% of the articles (6 per host) are published and a second run
//! with `--min-lastmod auto` goes. Reported: the second run's requests by kind,
//! the new articles found, and requests per new article with and without the
//! per-host fixed cost (robots.txt, tdmrep.json, feeds, sitemaps, 304s included).
//!
//! `cargo bench --bench discovery` (release), or `cargo bench --profile dev
//! --bench discovery` for a debug build. `DISCOVERY_BENCH_HOSTS` and
//! `DISCOVERY_BENCH_ARTICLES` change the size.

#[path = "../tests/it"]
#[allow(dead_code)]
mod support {
    pub mod fixture;
    #[path = "discovery/site.rs"]
    pub mod site;
    pub mod web;
}

use std::collections::HashSet;
use std::time::Instant;

use support::fixture::{Workspace, stderr};
use support::site::Site;
use support::web;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let hosts_n = env_usize("DISCOVERY_BENCH_HOSTS", 30);
    let per_host = env_usize("DISCOVERY_BENCH_ARTICLES", 300);
    let new_per_host = (per_host * 2).div_ceil(100);
    let hosts: Vec<String> = (0..hosts_n).map(|i| format!("site{i}.test")).collect();
    let names: Vec<&str> = hosts.iter().map(String::as_str).collect();
    let site = Site::new(&names, per_host, 100, true);
    let web = site.start(|_| None);
    let sources: String = hosts
        .iter()
        .map(|h| format!("  - {{host: {h}, seeds: [http://{h}/feed.xml]}}\n"))
        .collect();
    let ws = Workspace::new(
        &web,
        sources.trim_end(),
        "concurrency: 16\nmin_host_gap: 10ms\nflush_every: 2s",
    );

    let t = Instant::now();
    let out = ws.crawl(&["--min-lastmod", "auto", "--max-duration", "20m"]);
    assert!(out.status.success(), "first run failed: {}", stderr(&out));
    let first_requests = web.log().len();
    let first_stored = ws.records().len();
    println!(
        "first run: {first_requests} requests, {first_stored} articles stored, {:.1} s",
        t.elapsed().as_secs_f64()
    );

    for h in &hosts {
        site.publish(h, new_per_host);
    }
    web.clear_log();
    site.clear_answers();
    let t = Instant::now();
    let out = ws.crawl(&["--min-lastmod", "auto", "--max-duration", "20m"]);
    assert!(out.status.success(), "second run failed: {}", stderr(&out));
    let secs = t.elapsed().as_secs_f64();

    let new_urls: HashSet<String> = hosts
        .iter()
        .flat_map(|h| (per_host..per_host + new_per_host).map(move |n| (h.clone(), n)))
        .map(|(h, n)| format!("http://{h}{}", site.path(n)))
        .collect();
    let stored: HashSet<String> = ws
        .records()
        .iter()
        .filter_map(|r| r["url"].as_str().map(str::to_string))
        .collect();
    let found = new_urls.iter().filter(|u| stored.contains(*u)).count();

    let answers = site.answers();
    let is_listing = |p: &str| p == "/feed.xml" || p == "/atom.xml" || p.contains("sitemap");
    // Per-host files: robots.txt and the TDMRep consent file.
    let robots = answers
        .iter()
        .filter(|a| a.path == "/robots.txt" || a.path.starts_with("/.well-known/"))
        .count();
    let listings = answers.iter().filter(|a| is_listing(&a.path)).count();
    let not_modified = answers.iter().filter(|a| a.status == 304).count();
    let stories = answers
        .iter()
        .filter(|a| a.path.contains("/story-"))
        .count();
    let total = web.log().len();
    let other = total - robots - listings - stories;
    let fixed = robots + listings;
    let per_new = total as f64 / found.max(1) as f64;
    let beyond_fixed = (total - fixed) as f64 / found.max(1) as f64;

    println!(
        "second run (--min-lastmod auto): {total} requests in {secs:.1} s for {} hosts",
        hosts_n
    );
    println!(
        "  robots.txt and tdmrep.json {robots}, feeds and sitemaps {listings} ({not_modified} answered 304), articles {stories}, other pages {other}"
    );
    println!(
        "  new articles: {found} of {} found ({} published per host)",
        new_urls.len(),
        new_per_host
    );
    println!(
        "  per-host fixed cost: {:.2} requests (robots.txt, tdmrep.json, feeds, sitemaps)",
        fixed as f64 / hosts_n as f64
    );
    println!(
        "  requests per new article: {per_new:.2} in all, {beyond_fixed:.2} beyond the fixed cost (target <= 1.5)"
    );
    assert_eq!(found, new_urls.len(), "not every new article was found");
    assert!(
        beyond_fixed <= 1.5,
        "{beyond_fixed:.2} requests per new article beyond the fixed cost"
    );
}
