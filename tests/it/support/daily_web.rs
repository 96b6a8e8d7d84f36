//! An evolving local web for the everyday-run tests and benchmark
//! (`benches/daily_week.rs`): hosts that publish a few articles a day on a
//! simulated calendar, each with robots.txt (a Disallow and a `Sitemap:`
//! line), an RSS feed of the newest items, a sitemap index of monthly
//! children whose `<lastmod>` is accurate, articles with
//! `article:published_time` / `article:modified_time`, and a 404 for
//! `tdmrep.json`. Listings and articles carry ETag / Last-Modified and answer
//! conditional requests with 304.
//!
//! The crawler is run with `SCRAPER_NOW` set to the same simulated time, so
//! its days, cut-offs and listing rates follow the calendar. The server
//! keeps a judge of its own: every time it serves a child sitemap it
//! remembers the child's `<lastmod>` then; asking again for a child whose
//! `<lastmod>` has not moved since is a *needless re-read* (the index said
//! it had not changed).
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Datelike, Duration, TimeZone, Utc};

use crate::support::web::{Reply, Req, Web};

/// Items in each feed (newest first).
pub const FEED_LEN: usize = 10;

/// One article of one host.
#[derive(Debug, Clone)]
pub struct Story {
    pub n: usize,
    pub published: DateTime<Utc>,
    /// About AI (relevant) or not.
    pub ai: bool,
    /// When the publisher last changed it (listed as `<lastmod>`), if ever.
    pub modified: Option<DateTime<Utc>>,
    /// Text revision: bumped when the text really changes.
    pub rev: u32,
}

struct Inner {
    hosts: Vec<String>,
    now: DateTime<Utc>,
    stories: HashMap<String, Vec<Story>>,
    /// (host, child path) -> the child's lastmod when last served (200 or 304).
    served: HashMap<(String, String), DateTime<Utc>>,
    needless: Vec<String>,
}

/// The web's state (cheap to clone; clones share it).
#[derive(Clone)]
pub struct World(Arc<Mutex<Inner>>);

/// Seconds since the Unix epoch of a date at 00:00 UTC.
pub fn day(y: i32, m: u32, d: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, 0, 0, 0).unwrap()
}

impl World {
    /// `hosts`, each with an archive of `per_month` articles a month from
    /// `archive_from` to `now` (two in three about AI).
    pub fn new(
        hosts: &[String],
        archive_from: DateTime<Utc>,
        per_month: usize,
        now: DateTime<Utc>,
    ) -> World {
        let mut stories = HashMap::new();
        for (h, host) in hosts.iter().enumerate() {
            let mut list = Vec::new();
            let mut month = archive_from;
            while month < now {
                for k in 0..per_month {
                    let at = month
                        + Duration::hours((k as i64 * 24 * 28) / per_month as i64 + 9 + h as i64);
                    if at < now {
                        let n = list.len();
                        list.push(Story {
                            n,
                            published: at,
                            ai: n % 3 != 2,
                            modified: None,
                            rev: 0,
                        });
                    }
                }
                month = next_month(month);
            }
            stories.insert(host.clone(), list);
        }
        World(Arc::new(Mutex::new(Inner {
            hosts: hosts.to_vec(),
            now,
            stories,
            served: HashMap::new(),
            needless: Vec::new(),
        })))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.lock().now
    }

    /// Move the calendar to `t`, publishing `per_day` articles per host
    /// (all about AI) spread over the time since the last `now`. Returns
    /// their URLs.
    pub fn advance(&self, t: DateTime<Utc>, per_day: usize) -> Vec<String> {
        let mut w = self.lock();
        let from = w.now;
        let span = (t - from).num_seconds().max(1);
        let mut new = Vec::new();
        for host in w.hosts.clone() {
            let list = w.stories.get_mut(&host).unwrap();
            for k in 0..per_day {
                let at = from + Duration::seconds(span * (k as i64 + 1) / (per_day as i64 + 1));
                let n = list.len();
                list.push(Story {
                    n,
                    published: at,
                    ai: true,
                    modified: None,
                    rev: 0,
                });
                new.push(format!("http://{host}{}", path_of(&list[n])));
            }
        }
        w.now = t;
        new
    }

    /// The publisher changes story `n` of `host` now: its `<lastmod>` moves;
    /// with `text`, its text changes too. Returns its URL.
    pub fn modify(&self, host: &str, n: usize, text: bool) -> String {
        let mut w = self.lock();
        let now = w.now - Duration::hours(2);
        let s = &mut w.stories.get_mut(host).unwrap()[n];
        s.modified = Some(now);
        if text {
            s.rev += 1;
        }
        format!("http://{host}{}", path_of(s))
    }

    /// Every story of every host: (URL, story).
    pub fn stories(&self) -> Vec<(String, Story)> {
        let w = self.lock();
        let mut out = Vec::new();
        for host in &w.hosts {
            for s in &w.stories[host] {
                out.push((format!("http://{host}{}", path_of(s)), s.clone()));
            }
        }
        out
    }

    /// Child sitemaps asked for again although their index said they had
    /// not changed since they were last served, and clear the list.
    pub fn take_needless(&self) -> Vec<String> {
        std::mem::take(&mut self.lock().needless)
    }

    /// Is a request for `path` of `host` backlog work, not the daily path:
    /// a story, or a month's child sitemap, that has not changed since
    /// `since` (the previous run)?
    pub fn is_backlog(&self, host: &str, path: &str, since: DateTime<Utc>) -> bool {
        let w = self.lock();
        let Some(list) = w.stories.get(host) else {
            return false;
        };
        if let Some(month) = path
            .strip_prefix("/sitemaps/")
            .and_then(|p| p.strip_suffix(".xml"))
        {
            let last = list
                .iter()
                .filter(|s| s.published.format("%Y-%m").to_string() == month)
                .map(changed)
                .max();
            return last.is_some_and(|l| l < since);
        }
        list.iter()
            .find(|s| path_of(s) == path)
            .is_some_and(|s| changed(s) < since)
    }

    /// Serve it.
    pub fn start(&self) -> Web {
        let world = self.clone();
        Web::start(move |r| world.answer(r))
    }

    fn answer(&self, r: &Req) -> Reply {
        let mut w = self.lock();
        let host = r.host.clone();
        let now = w.now;
        let Some(list) = w.stories.get(&host) else {
            return Reply::not_found();
        };
        let owned: Vec<Story> = list
            .iter()
            .filter(|s| s.published <= now)
            .cloned()
            .collect();
        let visible: Vec<&Story> = owned.iter().collect();
        let path = r.path.as_str();
        match path {
            "/robots.txt" => Reply::text(format!(
                "User-agent: *\nDisallow: /private/\nSitemap: http://{host}/sitemap_index.xml\n"
            )),
            "/feed.xml" => {
                let items: Vec<&Story> = visible.iter().rev().take(FEED_LEN).copied().collect();
                let body = rss(&host, &items);
                let lm = items.iter().map(|s| changed(s)).max().unwrap_or(now);
                conditional(r, body.into_bytes(), "application/rss+xml", lm)
            }
            "/sitemap_index.xml" => {
                let mut body = String::from(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
                );
                let mut lm = visible.first().map_or(now, |s| changed(s));
                for (month, stories) in months(&visible) {
                    let m = stories.iter().map(|s| changed(s)).max().unwrap();
                    lm = lm.max(m);
                    body.push_str(&format!(
                        "<sitemap><loc>http://{host}/sitemaps/{month}.xml</loc><lastmod>{}</lastmod></sitemap>\n",
                        m.to_rfc3339()
                    ));
                }
                body.push_str("</sitemapindex>\n");
                conditional(r, body.into_bytes(), "application/xml", lm)
            }
            p if p.starts_with("/sitemaps/") && p.ends_with(".xml") => {
                let month = &p["/sitemaps/".len()..p.len() - 4];
                let all = months(&visible);
                let Some((_, stories)) = all.iter().find(|(m, _)| m == month) else {
                    return Reply::not_found();
                };
                let lm = stories.iter().map(|s| changed(s)).max().unwrap();
                let key = (host.clone(), p.to_string());
                if let Some(before) = w.served.get(&key)
                    && *before >= lm
                {
                    w.needless.push(format!("{host}{p}"));
                }
                w.served.insert(key, lm);
                let urls: String = stories
                    .iter()
                    .map(|s| {
                        format!(
                            "<url><loc>http://{host}{}</loc><lastmod>{}</lastmod></url>\n",
                            path_of(s),
                            changed(s).to_rfc3339()
                        )
                    })
                    .collect();
                let body = format!(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n{urls}</urlset>\n"
                );
                conditional(r, body.into_bytes(), "application/xml", lm)
            }
            "/.well-known/tdmrep.json" => Reply::not_found(),
            p if p.starts_with("/private/") => Reply::html("<html><body>private</body></html>"),
            p => {
                let Some(s) = visible.iter().find(|s| path_of(s) == p) else {
                    return Reply::not_found();
                };
                let body = article(&host, s);
                conditional(r, body.into_bytes(), "text/html; charset=utf-8", changed(s))
            }
        }
    }
}

fn next_month(t: DateTime<Utc>) -> DateTime<Utc> {
    let (y, m) = if t.month() == 12 {
        (t.year() + 1, 1)
    } else {
        (t.year(), t.month() + 1)
    };
    day(y, m, 1)
}

/// When a story last changed.
fn changed(s: &Story) -> DateTime<Utc> {
    s.modified.unwrap_or(s.published)
}

/// `/YYYY/MM/DD/story-N`.
pub fn path_of(s: &Story) -> String {
    format!("{}/story-{}", s.published.format("/%Y/%m/%d"), s.n)
}

/// The visible stories by month (`YYYY-MM`), oldest month first.
fn months<'a>(visible: &[&'a Story]) -> Vec<(String, Vec<&'a Story>)> {
    let mut out: Vec<(String, Vec<&Story>)> = Vec::new();
    for s in visible {
        let m = s.published.format("%Y-%m").to_string();
        match out.last_mut() {
            Some((last, list)) if *last == m => list.push(s),
            _ => out.push((m, vec![s])),
        }
    }
    out
}

fn rss(host: &str, items: &[&Story]) -> String {
    let items: String = items
        .iter()
        .map(|s| {
            format!(
                "<item><title>{}</title><link>http://{host}{}</link><guid>http://{host}{}</guid><pubDate>{}</pubDate></item>\n",
                title(s),
                path_of(s),
                path_of(s),
                s.published.to_rfc2822()
            )
        })
        .collect();
    format!(
        "<?xml version=\"1.0\"?>\n<rss version=\"2.0\"><channel><title>{host}</title><link>http://{host}/</link><description>news</description>\n{items}</channel></rss>\n"
    )
}

fn title(s: &Story) -> String {
    if s.ai {
        format!("Lab trains a new large language model, report {}", s.n)
    } else {
        format!(
            "City council approves the new harbour budget, report {}",
            s.n
        )
    }
}

/// Words the generated texts are drawn from (so that no two stories are
/// near duplicates of each other).
const WORDS: &[&str] = &[
    "budget",
    "river",
    "council",
    "winter",
    "report",
    "station",
    "market",
    "engineer",
    "school",
    "harbour",
    "bridge",
    "museum",
    "garden",
    "ferry",
    "library",
    "village",
    "teacher",
    "doctor",
    "festival",
    "railway",
    "factory",
    "orchard",
    "island",
    "tunnel",
    "airport",
    "stadium",
    "clinic",
    "theatre",
    "bakery",
    "workshop",
    "meadow",
    "canal",
    "quarry",
    "lighthouse",
    "vineyard",
    "archive",
    "students",
    "farmers",
    "nurses",
    "drivers",
    "voters",
    "owners",
    "builders",
    "tenants",
    "pilots",
    "quietly",
    "slowly",
    "openly",
    "firmly",
    "briefly",
    "gladly",
    "rarely",
    "warmly",
    "boldly",
    "north",
    "south",
    "eastern",
    "western",
    "coastal",
    "rural",
    "urban",
    "ancient",
    "modern",
    "local",
];

/// `k` pseudo-random sentences for story `n` of `host`, seeded by both.
fn filler(host: &str, n: usize, rev: u32, k: usize) -> Vec<String> {
    let mut x = xxhash_rust::xxh3::xxh3_64(format!("{host}/{n}/{rev}").as_bytes()) | 1;
    let mut word = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        WORDS[(x % WORDS.len() as u64) as usize]
    };
    (0..k)
        .map(|_| {
            let w: Vec<&str> = (0..14).map(|_| word()).collect();
            format!("The {} said the {} {} near the {} {} had {} changed, and the {} {} of the {} {} were {} {} by {} {}.", w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11], w[12], w[13])
        })
        .collect()
}

/// An article page: AI stories pass the test config's relevance rule, the
/// others do not; a changed revision adds a paragraph.
pub fn article(host: &str, s: &Story) -> String {
    let t = title(s);
    let mut paras: Vec<String> = if s.ai {
        vec![
            format!("The artificial intelligence lab said its newest large language model, report {} on {host}, beats earlier AI systems on reasoning benchmarks after months of training.", s.n),
            "Researchers said machine learning engineers trained the model with reinforcement learning before the release, and critics warned that generative AI tools still make confident mistakes.".to_string(),
        ]
    } else {
        vec![
            format!("The city council approved the harbour budget on Tuesday, report {} on {host}, after a long debate about the cost of new cranes and the repair of the old quay walls.", s.n),
            "Members of the council said the money would also pay for a new ferry terminal and wider cycle paths along the water, and residents asked for more trees on the waterfront.".to_string(),
        ]
    };
    paras.extend(filler(host, s.n, 0, 6));
    if s.rev > 0 {
        paras.push(format!(
            "Update {}: the company later corrected the figures it had published and added a statement from the research team about how the language model was evaluated.",
            s.rev
        ));
    }
    let body: String = paras.iter().map(|p| format!("<p>{p}</p>\n")).collect();
    let modified = s
        .modified
        .map(|m| {
            format!(
                "<meta property=\"article:modified_time\" content=\"{}\">\n",
                m.to_rfc3339()
            )
        })
        .unwrap_or_default();
    format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>{t}</title>
<meta property="og:type" content="article">
<meta property="article:published_time" content="{}">
{modified}</head><body>
<nav><a href="/">Home</a> <a href="/private/account">Account</a></nav>
<main><article><h1>{t}</h1>
{body}</article></main>
</body></html>"#,
        s.published.to_rfc3339()
    )
}

/// A reply with an ETag and a Last-Modified, or 304 when the request's validators match.
fn conditional(r: &Req, body: Vec<u8>, ct: &str, lm: DateTime<Utc>) -> Reply {
    let etag = format!("\"{:016x}\"", xxhash_rust::xxh3::xxh3_64(&body));
    let last_modified = lm.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    let fresh = match r.header("if-none-match") {
        Some(v) => v.contains(&etag),
        None => r
            .header("if-modified-since")
            .and_then(|v| DateTime::parse_from_rfc2822(v).ok())
            .is_some_and(|since| since.timestamp() >= lm.timestamp()),
    };
    let reply = if fresh {
        Reply::status(304)
    } else {
        Reply::bytes(ct, body)
    };
    reply
        .header("etag", &etag)
        .header("last-modified", &last_modified)
}

/// How a week is run: hosts, archive, budgets.
#[derive(Debug, Clone)]
pub struct Plan {
    pub hosts: usize,
    /// Articles a month in each host's archive, since `archive_from`.
    pub per_month: usize,
    pub archive_from: DateTime<Utc>,
    /// `crawl.min_lastmod` in the config (the floor of `auto`).
    pub floor: DateTime<Utc>,
    /// The first run's day (06:30 UTC) and its fetch budget.
    pub start: DateTime<Utc>,
    pub first_budget: u64,
    /// Days after the first, their budget and time box.
    pub days: usize,
    pub daily_budget: u64,
    pub daily_secs: u64,
    /// New articles per host per day.
    pub per_day: usize,
    /// The day (1-based) before whose run `changes` stories change.
    pub change_day: usize,
    pub changes: usize,
    pub gap_ms: u64,
}

/// One day of the week, as the server saw it.
#[derive(Debug, Clone, Default)]
pub struct DayRow {
    pub day: usize,
    pub requests: usize,
    pub listing_requests: usize,
    pub not_modified: usize,
    pub new: usize,
    pub new_found: usize,
    /// (robots + one feed per host + each new article once) / new.
    pub ideal: f64,
    pub needless: usize,
    pub gap_violations: usize,
    pub robots_violations: usize,
    /// Relevant archive stories since the floor, stored so far / all.
    pub backlog_done: f64,
    pub backlog_left: u64,
    /// Requests for stories and child sitemaps unchanged since the previous run.
    pub backlog_requests: usize,
}

impl DayRow {
    pub fn per_new(&self) -> f64 {
        self.requests as f64 / self.new.max(1) as f64
    }

    /// Requests per new article on the daily path (backlog work left out).
    pub fn daily_per_new(&self) -> f64 {
        (self.requests - self.backlog_requests) as f64 / self.new.max(1) as f64
    }
}

/// What the week left: the rows, and the updates' outcome.
pub struct Week {
    pub rows: Vec<DayRow>,
    pub ws: crate::support::fixture::Workspace,
    pub world: World,
    pub web: Web,
    /// Stories whose text changed, and those only touched (lastmod moved).
    pub changed: Vec<String>,
    pub touched: Vec<String>,
    /// Requests for `/.well-known/tdmrep.json` over the week.
    pub tdmrep_requests: usize,
}

/// Run the first day and `plan.days` daily runs on the evolving web.
pub fn run_week(plan: &Plan) -> Week {
    let hosts: Vec<String> = (0..plan.hosts).map(|i| format!("d{i:02}.test")).collect();
    let world = World::new(&hosts, plan.archive_from, plan.per_month, plan.start);
    let web = world.start();
    let sources: String = hosts
        .iter()
        .map(|h| format!("  - {{host: {h}, seeds: [http://{h}/feed.xml]}}\n"))
        .collect();
    let ws = crate::support::fixture::Workspace::new(
        &web,
        sources.trim_end(),
        &format!(
            "concurrency: 8\nmin_host_gap: {}ms\nflush_every: 1s\nmin_lastmod: {}",
            plan.gap_ms,
            plan.floor.format("%Y-%m-%d")
        ),
    );
    let backlog: Vec<String> = world
        .stories()
        .into_iter()
        .filter(|(_, s)| s.ai && s.published >= plan.floor)
        .map(|(u, _)| u)
        .collect();
    let mut rows = Vec::new();
    let (mut changed, mut touched) = (Vec::new(), Vec::new());
    let mut tdmrep_requests = 0;
    for d in 0..=plan.days {
        let at = plan.start + Duration::days(d as i64);
        let new = if d == 0 {
            vec![]
        } else {
            world.advance(at, plan.per_day)
        };
        if d + 1 == plan.change_day {
            // Stored archive stories since the floor, spread over the hosts:
            // half change their text, half are only touched (lastmod moves).
            let stored = stored_urls(&ws);
            for i in 0..plan.changes * 2 {
                let host = &hosts[i % hosts.len()];
                let mine: Vec<Story> = world
                    .stories()
                    .into_iter()
                    .filter(|(u, s)| {
                        u.contains(host.as_str())
                            && s.ai
                            && s.published >= plan.floor
                            && stored.contains(u)
                    })
                    .map(|(_, s)| s)
                    .collect();
                if let Some(st) = mine.get(i / hosts.len()) {
                    let url = world.modify(host, st.n, i % 2 == 0);
                    if i % 2 == 0 {
                        changed.push(url);
                    } else {
                        touched.push(url);
                    }
                }
            }
        }
        web.clear_log();
        let _ = world.take_needless();
        let mut args = vec![
            "crawl",
            "--data",
            "data",
            "--proxy",
            ws.proxy.as_str(),
            "--min-lastmod",
            "auto",
        ];
        let budget = if d == 0 {
            plan.first_budget
        } else {
            plan.daily_budget
        }
        .to_string();
        let secs = format!("{}s", plan.daily_secs);
        args.extend([
            "--max-pages",
            budget.as_str(),
            "--max-duration",
            secs.as_str(),
        ]);
        let out = ws
            .command(&args)
            .env("SCRAPER_NOW", at.to_rfc3339())
            .output()
            .expect("run scraper");
        assert!(
            out.status.success(),
            "day {d}: {}",
            crate::support::fixture::stderr(&out)
        );
        let log = web.log();
        tdmrep_requests += log
            .iter()
            .filter(|r| r.path == "/.well-known/tdmrep.json")
            .count();
        let stored = stored_urls(&ws);
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(ws.data().join("state/last_run.json")).unwrap())
                .unwrap();
        let hosts_json = summary["hosts"].as_object().cloned().unwrap_or_default();
        let sum = |k: &str| {
            hosts_json
                .values()
                .map(|h| h[k].as_u64().unwrap_or(0))
                .sum::<u64>()
        };
        let mut gap_violations = 0;
        for h in &hosts {
            gap_violations += web.gap_violations(
                h,
                std::time::Duration::from_millis(plan.gap_ms.saturating_sub(5)),
            );
        }
        let backlog_stored = backlog.iter().filter(|u| stored.contains(*u)).count();
        rows.push(DayRow {
            day: d + 1,
            requests: log.len(),
            listing_requests: log.iter().filter(|r| r.path.ends_with(".xml")).count(),
            not_modified: sum("not_modified") as usize,
            new: new.len(),
            new_found: new.iter().filter(|u| stored.contains(*u)).count(),
            ideal: (2 * plan.hosts + new.len()) as f64 / new.len().max(1) as f64,
            needless: world.take_needless().len(),
            gap_violations,
            robots_violations: log
                .iter()
                .filter(|r| r.path.starts_with("/private/"))
                .count(),
            backlog_done: backlog_stored as f64 / backlog.len().max(1) as f64,
            backlog_left: sum("backlog"),
            backlog_requests: if d == 0 {
                0
            } else {
                let since = at - Duration::days(1);
                log.iter()
                    .filter(|r| world.is_backlog(&r.host, &r.path, since))
                    .count()
            },
        });
    }
    Week {
        rows,
        ws,
        world,
        web,
        changed,
        touched,
        tdmrep_requests,
    }
}

/// Every stored URL (once per record).
pub fn stored_urls(ws: &crate::support::fixture::Workspace) -> std::collections::HashSet<String> {
    ws.records()
        .iter()
        .filter_map(|r| r["url"].as_str().map(str::to_string))
        .collect()
}

/// The per-day table.
pub fn table(rows: &[DayRow]) -> String {
    let mut s = String::from(
        "day  requests  backlog_req  listings  304s  new  found  req/new  daily/new  ideal  ratio  daily_ratio  needless  backlog_done  left  gap  robots\n",
    );
    for r in rows {
        s.push_str(&format!(
            "{:>3}  {:>8}  {:>11}  {:>8}  {:>4}  {:>3}  {:>5}  {:>7.2}  {:>9.2}  {:>5.2}  {:>5.2}  {:>11.2}  {:>8}  {:>11.1}%  {:>4}  {:>3}  {:>6}\n",
            r.day,
            r.requests,
            r.backlog_requests,
            r.listing_requests,
            r.not_modified,
            r.new,
            r.new_found,
            r.per_new(),
            r.daily_per_new(),
            r.ideal,
            if r.new > 0 { r.per_new() / r.ideal } else { f64::NAN },
            if r.new > 0 { r.daily_per_new() / r.ideal } else { f64::NAN },
            r.needless,
            r.backlog_done * 100.0,
            r.backlog_left,
            r.gap_violations,
            r.robots_violations
        ));
    }
    s
}
