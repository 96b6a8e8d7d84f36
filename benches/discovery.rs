//! Discovery benchmark (issue 4): what a daily `--min-lastmod auto` run costs.
//!
//! A generated web of 30 hosts x 300 articles (`tests/it/support/news_web.rs`):
//! each host has robots.txt naming a sitemap index (3 gzip children of 100
//! URLs, a news sitemap), an RSS feed of the newest 10, and articles that link
//! to the two before them, a year archive and a tag page. A first run reads it
//! all; then 2% of the articles (6 per host) are published and a second run
//! with `--min-lastmod auto` goes. Reported: the second run's requests by kind,
//! the new articles found, and requests per new article with and without the
//! per-host fixed cost (robots.txt, tdmrep.json, feeds, sitemaps, 304s included).
//!
//! It starts with the day-2 benchmark of issue 16 ([`day_two`]): 10 hosts,
//! each with robots.txt, an RSS feed and articles that link to a redirect
//! loop, a 3-hop redirect chain ending in a 404 and a 50 MB page. Day one
//! crawls it all; 22 articles are published; day two runs with
//! `--min-lastmod auto`. Reported: requests per new article against the
//! ideal (robots.txt + one feed check per host + each new article once), new
//! articles found, and requests to the known failures (target: 0).
//!
//! `cargo bench --bench discovery` (release), or `cargo bench --profile dev
//! --bench discovery` for a debug build. `DISCOVERY_BENCH_HOSTS` and
//! `DISCOVERY_BENCH_ARTICLES` change the size of the second part;
//! `DISCOVERY_BENCH_DAY2_ONLY=1` runs only the day-2 part.

#[path = "../tests/it/support"]
#[allow(dead_code)]
mod support {
    pub mod fixture;
    pub mod news_web;
    pub mod web;
}

use std::collections::HashSet;
use std::time::Instant;

use support::fixture::{Workspace, stderr};
use support::news_web::Site;
use support::web;
use support::web::{Reply, Req};

/// Paths of the failures every article links to.
const FAILURES: [&str; 3] = ["/fail/loop-a", "/fail/chain-0", "/fail/big"];

/// The failures, and articles that link to them.
fn failing(site: &Site, r: &Req) -> Option<Reply> {
    let p = r.path.as_str();
    match p {
        // No Sitemap line: robots.txt and the feed are the listings.
        "/robots.txt" => return Some(Reply::text("User-agent: *\nAllow: /\n")),
        "/fail/loop-a" => return Some(Reply::redirect(302, "/fail/loop-b")),
        "/fail/loop-b" => return Some(Reply::redirect(302, "/fail/loop-a")),
        "/fail/chain-3" => return Some(Reply::not_found()),
        "/fail/big" => return Some(Reply::html("").repeat(vec![b'x'; 1 << 20], Some(50))),
        _ => {}
    }
    if let Some(k) = p
        .strip_prefix("/fail/chain-")
        .and_then(|k| k.parse::<u32>().ok())
    {
        return Some(Reply::redirect(301, &format!("/fail/chain-{}", k + 1)));
    }
    let n: usize = p.rsplit_once("/story-")?.1.parse().ok()?;
    if n >= site.visible(&r.host) {
        return None;
    }
    let links: String = FAILURES
        .iter()
        .map(|f| format!("<p>See <a href=\"{f}\">{f}</a></p>"))
        .collect();
    Some(Reply::html(
        site.article(&r.host, n)
            .replace("</article>", &format!("{links}</article>")),
    ))
}

/// A workspace crawling `hosts`, each seeded with its feed.
fn feed_workspace(web: &web::Web, hosts: &[String]) -> Workspace {
    let sources: String = hosts
        .iter()
        .map(|h| format!("  - {{host: {h}, seeds: [http://{h}/feed.xml]}}\n"))
        .collect();
    Workspace::new(
        web,
        sources.trim_end(),
        "concurrency: 16\nmin_host_gap: 10ms\nflush_every: 2s",
    )
}

/// Issue 16's day-2 run: requests per new article against the ideal, and no
/// request to a URL that failed for good the day before.
fn day_two() {
    let hosts: Vec<String> = (0..10).map(|i| format!("day{i}.test")).collect();
    let names: Vec<&str> = hosts.iter().map(String::as_str).collect();
    let site = Site::new(&names, 40, 100, true);
    let s2 = site.clone();
    let web = site.start(move |r| failing(&s2, r));
    let ws = feed_workspace(&web, &hosts);
    let out = ws.crawl(&["--min-lastmod", "auto", "--max-duration", "10m"]);
    assert!(out.status.success(), "day one failed: {}", stderr(&out));
    let day_one = web.log();
    let failures_day_one = day_one
        .iter()
        .filter(|q| q.path.starts_with("/fail/"))
        .count();
    println!(
        "day 1: {} requests, {} articles stored, {failures_day_one} requests to the failures",
        day_one.len(),
        ws.records().len()
    );
    // 22 new articles: 3 on two hosts, 2 on the others.
    let mut new_urls = HashSet::new();
    for (i, h) in hosts.iter().enumerate() {
        let k = if i < 2 { 3 } else { 2 };
        let before = site.visible(h);
        site.publish(h, k);
        for n in before..before + k {
            new_urls.insert(format!("http://{h}{}", site.path(n)));
        }
    }
    web.clear_log();
    let out = ws.crawl(&["--min-lastmod", "auto", "--max-duration", "10m"]);
    assert!(out.status.success(), "day two failed: {}", stderr(&out));
    let log = web.log();
    let stored: HashSet<String> = ws
        .records()
        .iter()
        .filter_map(|r| r["url"].as_str().map(str::to_string))
        .collect();
    let found = new_urls.iter().filter(|u| stored.contains(*u)).count();
    let refetched = log.iter().filter(|q| q.path.starts_with("/fail/")).count();
    let count = |f: &dyn Fn(&str) -> bool| log.iter().filter(|q| f(&q.path)).count();
    let robots = count(&|p| p == "/robots.txt");
    let tdm = count(&|p| p.starts_with("/.well-known/"));
    let feeds = count(&|p| p == "/feed.xml");
    let stories = count(&|p| p.contains("/story-"));
    let total = log.len();
    let mut others: Vec<String> = log
        .iter()
        .map(|q| q.path.clone())
        .filter(|p| {
            p != "/robots.txt"
                && p != "/feed.xml"
                && !p.starts_with("/.well-known/")
                && !p.contains("/story-")
                && !p.starts_with("/fail/")
        })
        .collect();
    others.sort();
    others.dedup();
    let ideal = (2 * hosts.len() + new_urls.len()) as f64 / new_urls.len() as f64;
    let per_new = total as f64 / found.max(1) as f64;
    println!(
        "day 2 (--min-lastmod auto): {total} requests: robots.txt {robots}, tdmrep.json {tdm}, feeds {feeds}, articles {stories}, failures {refetched}, other {}",
        total - robots - tdm - feeds - stories - refetched
    );
    println!("  other paths: {others:?}");
    println!(
        "  new articles found: {found} of {}; requests per new article {per_new:.2}, ideal {ideal:.2}, ratio {:.2} (target <= 2)",
        new_urls.len(),
        per_new / ideal
    );
    println!("  requests to URLs that failed for good on day 1: {refetched} (target 0)");
    assert_eq!(found, new_urls.len(), "not every new article was found");
    assert_eq!(refetched, 0, "known failures fetched again");
    assert!(per_new <= 2.0 * ideal, "{per_new:.2} per new article");
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    day_two();
    if std::env::var_os("DISCOVERY_BENCH_DAY2_ONLY").is_some() {
        return;
    }
    let hosts_n = env_usize("DISCOVERY_BENCH_HOSTS", 30);
    let per_host = env_usize("DISCOVERY_BENCH_ARTICLES", 300);
    let new_per_host = (per_host * 2).div_ceil(100);
    let hosts: Vec<String> = (0..hosts_n).map(|i| format!("site{i}.test")).collect();
    let names: Vec<&str> = hosts.iter().map(String::as_str).collect();
    let site = Site::new(&names, per_host, 100, true);
    let web = site.start(|_| None);
    let ws = feed_workspace(&web, &hosts);

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
