//! Scheduling benchmark (issue 5), on the local test web: the real `scraper
//! crawl` with yield weighting (the default) against plain ranked round-robin
//! (`min_host_weight: 1.0`, every host weighs the same), on the same web with
//! the same politeness and the same `--max-pages` budget.
//!
//! The web: 12 hosts of 600 pages each, every page linking to five others on
//! its host. On the 4 productive hosts 80% of the pages are relevant AI
//! articles; on the other 8 only 8% are, the rest are listing pages and
//! articles about other things. The budget is far smaller than the web, so
//! every host has queued work to the end.
//!
//! Two settings, each run with both policies:
//!
//! 1. *Slot-bound*: 2 fetches in flight, a 40 ms gap, every answer 40 ms late.
//!    The hosts' gaps would allow more than the slots can do, so the scheduler
//!    decides which host each slot serves: this is where yield weighting
//!    matters (and fetches/s over the gap-bound maximum is low by design).
//! 2. *Gap-bound*: 16 fetches in flight (more than the hosts), a 100 ms gap,
//!    answers at once. Every host is served as often as its gap allows, so the
//!    figure that matters is politeness-bound efficiency: fetches per second
//!    over the sum over hosts with work of 1/gap. Weighting cannot change the
//!    mix here, and does not.
//!
//! Reported for each run: relevant articles stored per 1,000 fetches (every
//! request counts: robots.txt and tdmrep.json too), the share of fetches and
//! hits on the productive hosts, the fewest fetches of any host, fetches per
//! second over the gap-bound maximum, and gap violations as the server saw
//! them (must be 0). "Gate waits" is the time fetches spent in the
//! politeness gate after the frontier handed them out (the gate counts a gap
//! from the answer, the frontier from the send, and robots.txt and
//! tdmrep.json requests take turns the frontier does not see).
//!
//! Runs have no time box, so the default `focused` policy does not pace the
//! budget (pacing is measured by `benches/focus.rs`): what differs between
//! the two runs is the yield weighting alone.
//!
//! `cargo bench --profile dev --bench schedule` (debug build) or
//! `cargo bench --bench schedule` (release). Takes well under 2 minutes.

#[path = "../tests/it/support"]
#[allow(dead_code)]
mod support {
    pub mod fixture;
    pub mod web;
}

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use support::fixture::{Workspace, read_jsonl, stderr};
use support::web::{Reply, Req, Web};

const HOSTS: usize = 12;
const PRODUCTIVE: usize = 4;
const PAGES: usize = 600;

fn host_name(i: usize) -> String {
    format!("h{i:02}.test")
}

fn productive(host: &str) -> bool {
    host.strip_prefix('h')
        .and_then(|h| h.get(..2))
        .and_then(|n| n.parse::<usize>().ok())
        .is_some_and(|n| n < PRODUCTIVE)
}

/// A fixed pseudo-random number for (host, page), 0..100.
fn roll(host: &str, n: usize) -> u64 {
    let mut x = (n as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    for b in host.bytes() {
        x = (x ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    x ^= x >> 31;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 29;
    x % 100
}

enum PageKind {
    Relevant,
    Other,
    Listing,
}

fn kind_of(host: &str, n: usize) -> PageKind {
    let r = roll(host, n);
    let (relevant, other) = if productive(host) { (80, 90) } else { (8, 50) };
    if r < relevant {
        PageKind::Relevant
    } else if r < other {
        PageKind::Other
    } else {
        PageKind::Listing
    }
}

fn links(n: usize) -> String {
    [n + 1, n * 7 + 3, n * 13 + 5, n * 31 + 11, n * 3 + 2]
        .iter()
        .map(|m| format!("<a href=/p/{}>more {}</a> ", m % PAGES, m % PAGES))
        .collect()
}

fn article(title: &str, para: &str, host: &str, n: usize) -> String {
    let body: String = (0..6)
        .map(|i| format!("<p>{para} Paragraph {i} of story {n} on {host}.</p>\n"))
        .collect();
    format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>{title} {n}</title>\
         <meta property=og:type content=article><meta property=article:published_time content=2024-05-03T10:00:00Z>\
         </head><body><main><article><h1>{title} {n}</h1>\n{body}</article></main><footer>{}</footer></body></html>",
        links(n)
    )
}

fn page(host: &str, n: usize) -> String {
    match kind_of(host, n) {
        PageKind::Relevant => article(
            "OpenAI and DeepMind ship a new large language model",
            "The artificial intelligence lab said its new large language model, trained with \
             reinforcement learning on a large GPU cluster, beats earlier AI systems on reasoning \
             benchmarks, and machine learning engineers measured it carefully before release.",
            host,
            n,
        ),
        PageKind::Other => article(
            "A slow sourdough for the weekend",
            "Feed the starter the night before, mix the flour and water by hand, let the dough \
             rest for an hour, then fold it every half hour until it is airy and smooth, and bake \
             it in a very hot covered pot for the best crust.",
            host,
            n,
        ),
        PageKind::Listing => format!(
            "<!doctype html><html><head><title>Section {n}</title></head><body><h1>Section {n}</h1>\
             <ul><li>{}</li></ul></body></html>",
            links(n)
        ),
    }
}

fn start_web(delay: Duration) -> Web {
    Web::start(move |r: &Req| {
        let reply = match r.path.as_str() {
            "/" => Reply::html(format!(
                "<!doctype html><html><head><title>Home</title></head><body><ul>{}{}</ul></body></html>",
                links(0),
                links(PAGES / 2)
            )),
            p if p.starts_with("/p/") => match p[3..].parse::<usize>() {
                Ok(n) if n < PAGES => Reply::html(page(&r.host, n)),
                _ => Reply::not_found(),
            },
            _ => Reply::not_found(),
        };
        reply.delay(delay)
    })
}

struct Figures {
    fetches: usize,
    stored: usize,
    per_1000: f64,
    productive_fetch_share: f64,
    productive_hit_share: f64,
    fewest: usize,
    rate: f64,
    efficiency: f64,
    hosts_with_work: usize,
    violations: usize,
    waited_ms: u64,
}

struct Setting {
    gap_ms: u64,
    delay: Duration,
    concurrency: usize,
    budget: u64,
}

fn run(label: &str, s: &Setting, weight: Option<f64>) -> Figures {
    let Setting {
        gap_ms,
        delay,
        concurrency,
        budget,
    } = *s;
    let web = start_web(delay);
    let sources: String = (0..HOSTS)
        .map(|h| {
            let name = host_name(h);
            format!("  - {{host: {name}, seeds: [http://{name}/]}}\n")
        })
        .collect();
    let mut crawl = format!(
        "concurrency: {concurrency}\nmin_host_gap: {gap_ms}ms\nmax_depth: 1000\nflush_every: 2s"
    );
    if let Some(w) = weight {
        crawl.push_str(&format!("\nmin_host_weight: {w}"));
    }
    let ws = Workspace::new(&web, sources.trim_end(), &crawl);
    let budget_arg = budget.to_string();
    let mut cmd = ws.command(&[
        "crawl",
        "--data",
        "data",
        "--proxy",
        &ws.proxy,
        "--max-pages",
        &budget_arg,
    ]);
    let out = cmd.env("RUST_LOG", "warn").output().expect("run scraper");
    assert!(
        out.status.success(),
        "{label}: crawl failed: {}",
        stderr(&out)
    );

    let log = web.log();
    let fetches = log.len();
    let events = ws.events();
    let stored_urls: Vec<String> = events
        .iter()
        .filter(|e| e["event"] == "stored")
        .filter_map(|e| e["url"].as_str().map(str::to_string))
        .collect();
    let stored = stored_urls.len();
    let host_of = |u: &str| {
        u.trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap_or("")
            .to_string()
    };
    let productive_hits = stored_urls
        .iter()
        .filter(|u| productive(&host_of(u)))
        .count();
    let mut per_host: HashMap<&str, usize> = HashMap::new();
    for r in &log {
        *per_host.entry(r.host.as_str()).or_default() += 1;
    }
    let productive_fetches: usize = per_host
        .iter()
        .filter(|(h, _)| productive(h))
        .map(|(_, n)| n)
        .sum();
    let fewest = (0..HOSTS)
        .map(|h| per_host.get(host_name(h).as_str()).copied().unwrap_or(0))
        .min()
        .unwrap_or(0);
    // Hosts with work: those with URLs still queued at the end (saved for
    // --resume), or every host that was fetched when the queue is empty.
    let left = read_jsonl(&ws.data().join("state/frontier.jsonl"));
    let queued_hosts: HashSet<String> = left
        .iter()
        .filter_map(|e| e["url"].as_str().map(host_of))
        .collect();
    let hosts_with_work = if queued_hosts.is_empty() {
        per_host.len()
    } else {
        queued_hosts.len()
    };
    // Rate over the span of the requests, as the server saw them.
    let span = match (log.first(), log.last()) {
        (Some(a), Some(b)) => b.at.saturating_duration_since(a.at).as_secs_f64(),
        _ => 0.0,
    };
    let rate = if span > 0.0 {
        (fetches.saturating_sub(1)) as f64 / span
    } else {
        0.0
    };
    let bound = hosts_with_work as f64 * 1000.0 / gap_ms as f64;
    let gap = Duration::from_millis(gap_ms);
    let violations = (0..HOSTS)
        .map(|h| web.gap_violations(&host_name(h), gap))
        .sum();
    let last_run: serde_json::Value =
        std::fs::read_to_string(ws.data().join("state/last_run.json"))
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default();
    let waited_ms = sum_key(&last_run, "politeness_wait_ms");
    let f = Figures {
        fetches,
        stored,
        per_1000: stored as f64 * 1000.0 / fetches.max(1) as f64,
        productive_fetch_share: productive_fetches as f64 / fetches.max(1) as f64,
        productive_hit_share: productive_hits as f64 / stored.max(1) as f64,
        fewest,
        rate,
        efficiency: rate / bound,
        hosts_with_work,
        violations,
        waited_ms,
    };
    println!(
        "{label:<28} fetches {:5}  stored {:4}  per 1,000 {:6.1}  productive third: {:.2} of fetches, {:.2} of hits  fewest/host {:3}",
        f.fetches, f.stored, f.per_1000, f.productive_fetch_share, f.productive_hit_share, f.fewest
    );
    println!(
        "{:<28} {:.1} fetches/s of {:.0}/s gap-bound ({} hosts with work x 1/{gap_ms} ms) = {:.3}  gap violations {}  gate waits {} ms in total",
        "", f.rate, bound, f.hosts_with_work, f.efficiency, f.violations, f.waited_ms
    );
    f
}

/// Sum of every numeric `key` anywhere in `v` (the per-host funnel of last_run.json).
fn sum_key(v: &serde_json::Value, key: &str) -> u64 {
    match v {
        serde_json::Value::Object(m) => m
            .iter()
            .map(|(k, x)| {
                if k == key {
                    x.as_u64().unwrap_or(0)
                } else {
                    sum_key(x, key)
                }
            })
            .sum(),
        serde_json::Value::Array(a) => a.iter().map(|x| sum_key(x, key)).sum(),
        _ => 0,
    }
}

fn compare(title: &str, s: &Setting) -> (Figures, Figures) {
    println!(
        "-- {title}: concurrency {}, min_host_gap {} ms, answers {} ms late, --max-pages {}",
        s.concurrency,
        s.gap_ms,
        s.delay.as_millis(),
        s.budget
    );
    let w = run("weighted (default)", s, None);
    let rr = run("round-robin (weight 1.0)", s, Some(1.0));
    println!(
        "weighted / round-robin relevant articles per 1,000 fetches: {:.2}",
        w.per_1000 / rr.per_1000.max(1e-9)
    );
    (w, rr)
}

fn main() {
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!(
        "scheduling on the local web: {HOSTS} hosts x {PAGES} pages, {PRODUCTIVE} productive \
         (80% relevant articles), the others 8%; {profile} build"
    );
    let slot_bound = Setting {
        gap_ms: 40,
        delay: Duration::from_millis(40),
        concurrency: 2,
        budget: 800,
    };
    let gap_bound = Setting {
        gap_ms: 100,
        delay: Duration::ZERO,
        concurrency: 16,
        budget: 1200,
    };
    let (w, rr) = compare("slot-bound", &slot_bound);
    let (gw, grr) = compare("gap-bound", &gap_bound);
    let violations = w.violations + rr.violations + gw.violations + grr.violations;
    assert_eq!(violations, 0, "gap violations");
}
