//! Partition benchmark (issue 18): one runner against four partitions
//! (`--partition i/4`, four processes at once, each with its own data
//! folder, as four Actions runners would be) on the same local web, plus the
//! memory a runner holds per queued and per seen URL.
//!
//! The web: `HOSTS` hosts, each with a home page listing `STORIES` relevant
//! articles of distinct wording. Every answer comes `LATENCY` late (a slow
//! network), the host gap is `GAP`, and every runner has `SLOTS` fetches in
//! flight: a runner is bound by its slots x latency, not by the hosts' gaps,
//! which is what one machine meets when its sources grow (see benches/README.md,
//! Scale).
//!
//! 1. Coverage: both crawl the web to the end; the partitions' stored URLs
//!    over the single run's (must be >= 0.95).
//! 2. Rate: both crawl a larger web for `BOX` seconds; relevant articles
//!    stored per wall-minute, four partitions over one runner (target >= 3x).
//! 3. Memory: bytes of RSS per URL queued in a `Frontier`, measured in this
//!    process (per seen URL: `benches/seen.rs`).
//!
//! `cargo bench --profile dev --bench partition` (debug build) or
//! `cargo bench --bench partition` (release). Takes about a minute.

#[path = "../tests/it/support"]
#[allow(dead_code, unused_imports)]
mod support {
    pub mod fixture;
    pub mod many_hosts;
    pub mod web;
}

use std::collections::HashSet;
use std::time::{Duration, Instant};

use support::fixture::{Workspace, listing_html, stderr};
use support::web::{Reply, Req, Web};

const SLOTS: usize = 4;
const LATENCY: Duration = Duration::from_millis(100);
const GAP_MS: u64 = 50;
const BOX_S: u64 = 12;

fn story(host: &str, n: usize) -> String {
    // Distinct wording per story (no near duplicates), relevant by the rule.
    support::many_hosts::unique_article(host, n)
}

fn start_web(stories: usize) -> Web {
    Web::start(move |r: &Req| {
        let reply = match r.path.as_str() {
            "/robots.txt" => Reply::not_found(),
            "/" => Reply::html(listing_html(
                "Home",
                &(0..stories)
                    .map(|n| format!("/story/{n}"))
                    .collect::<Vec<_>>(),
            )),
            p => match p.strip_prefix("/story/").and_then(|n| n.parse().ok()) {
                Some(n) if n < stories => Reply::html(story(&r.host, n)),
                _ => Reply::not_found(),
            },
        };
        reply.delay(LATENCY)
    })
}

fn sources(hosts: usize) -> String {
    (0..hosts)
        .map(|i| format!("  - {{host: b{i:02}.test, seeds: [http://b{i:02}.test/]}}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn crawl_settings() -> String {
    // The trap rule's per-pattern cap would end every host at its default.
    format!(
        "concurrency: {SLOTS}\nmin_host_gap: {GAP_MS}ms\nmax_queue: 100000\ntraps: {{max_urls_per_pattern: 100000}}"
    )
}

/// Run `parts` crawls at once (`--partition i/parts`, or none for 1); returns
/// (stored URLs, wall seconds, gap violations).
fn run(web: &Web, hosts: usize, parts: u32, extra: &[&str]) -> (Vec<String>, f64) {
    let spaces: Vec<Workspace> = (0..parts)
        .map(|_| Workspace::new(web, &sources(hosts), &crawl_settings()))
        .collect();
    let started = Instant::now();
    let children: Vec<_> = spaces
        .iter()
        .enumerate()
        .map(|(i, ws)| {
            let p = format!("{i}/{parts}");
            let mut args: Vec<&str> = extra.to_vec();
            if parts > 1 {
                args.extend(["--partition", p.as_str()]);
            }
            ws.spawn_crawl(&args)
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().expect("crawl");
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let wall = started.elapsed().as_secs_f64();
    let urls = spaces
        .iter()
        .flat_map(|ws| ws.records())
        .map(|r| r["url"].as_str().unwrap_or_default().to_string())
        .collect();
    (urls, wall)
}

fn violations(web: &Web, hosts: usize) -> usize {
    (0..hosts)
        .map(|i| web.gap_violations(&format!("b{i:02}.test"), Duration::from_millis(GAP_MS - 5)))
        .sum()
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

fn memory() {
    use scraper::frontier::{Entry, Frontier, Kind, Origin, Params};
    let n = 1_000_000usize;
    let hosts = 10_000usize;
    let before = rss_kib();
    let mut f = Frontier::new(Params {
        per_host_concurrency: 1,
        min_host_gap: Duration::from_secs(1),
        warmup_pages: 10,
        yield_alpha: 0.1,
        min_host_weight: 0.1,
        max_queue: n * 2,
        ..Params::default()
    });
    for i in 0..n {
        let host = format!("news{}.example.com", i % hosts);
        f.push(
            &host,
            // A typical article URL: about 75 bytes.
            Entry::new(
                format!("https://{host}/2026/12/01/ai-lab-ships-a-new-model-story-{i}"),
                Kind::Page,
                Origin::Relevant,
                2,
            ),
        );
    }
    let queued = (rss_kib() - before) as f64 * 1024.0 / n as f64;
    drop(f);
    println!(
        "memory: {queued:.0} bytes per queued URL (1M URLs over 10k hosts, ~75-byte URLs; \
         per seen URL: `cargo bench --bench seen`)"
    );
}

fn main() {
    memory();

    // 1. Coverage: both to the end.
    let (hosts, stories) = (16, 20);
    let web = start_web(stories);
    let (one, t1) = run(&web, hosts, 1, &["--max-duration", "120s"]);
    let v1 = violations(&web, hosts);
    web.clear_log();
    let (four, t4) = run(&web, hosts, 4, &["--max-duration", "120s"]);
    let v4 = violations(&web, hosts);
    let one: HashSet<String> = one.into_iter().collect();
    let four_set: HashSet<String> = four.iter().cloned().collect();
    let found = one.intersection(&four_set).count() as f64 / one.len().max(1) as f64;
    println!(
        "coverage ({hosts} hosts x {stories} stories, to the end): one runner {} relevant articles in {t1:.1} s, \
         four partitions {} ({} distinct) in {t4:.1} s; partitions found {found:.3} of the single run's; \
         gap violations {v1} / {v4}",
        one.len(),
        four.len(),
        four_set.len()
    );
    drop(web);

    // 2. Rate: a web larger than either can finish in the time box.
    let (hosts, stories) = (32, 200);
    let web = start_web(stories);
    let box_s = BOX_S.to_string() + "s";
    let (one, t1) = run(&web, hosts, 1, &["--max-duration", &box_s]);
    web.clear_log();
    let (four, t4) = run(&web, hosts, 4, &["--max-duration", &box_s]);
    let v4 = violations(&web, hosts);
    let r1 = one.len() as f64 / t1 * 60.0;
    let r4 = four.len() as f64 / t4 * 60.0;
    println!(
        "rate ({hosts} hosts, {BOX_S} s box, {SLOTS} slots per runner, {} ms answers, {GAP_MS} ms gap): \
         one runner {} relevant articles in {t1:.1} s = {r1:.0}/min; four partitions {} in {t4:.1} s = {r4:.0}/min; \
         {:.2}x; gap violations {v4}",
        LATENCY.as_millis(),
        one.len(),
        four.len(),
        r4 / r1
    );
}
