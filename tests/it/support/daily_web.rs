//! An evolving local web for the everyday-run tests and benchmark
//! (`benches/daily_week.rs`): hosts that publish a few articles a day on a
//! simulated calendar, each with robots.txt (a Disallow and a `Sitemap:`
//! line), an RSS feed of the newest items (except the last `feedless` hosts,
//! which publish none; the feed's build date changes its bytes every day),
//! a home page (a seed on every host: the newest stories, a "most read" box
//! and the day's date, so its bytes change daily), a sitemap index of
//! monthly children whose `<lastmod>` is accurate, articles with
//! `article:published_time` / `article:modified_time` that link their
//! author, topic and tag pages (each a listing of that group's newest
//! stories, with a second page) and two older stories, and a 404 for
//! `tdmrep.json`. One host (`redirect_host`) links its stories from the
//! home page and articles through a chain of two tracking redirects; one
//! (`calendar_host`) links an archive calendar from its home page: a month
//! page linking a page for each of its days and the month before, back
//! forever, none with a story. `quiet` hosts publish nothing on a day (a
//! different pair each day). Listings and articles carry ETag /
//! Last-Modified and answer conditional requests with 304; the server
//! counts full answers to unconditional requests for a listing whose bytes
//! it had already served unchanged.
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
    shape: Shape,
    /// (host, path) -> hash of the listing bytes last served in full.
    bodies: HashMap<(String, String), u64>,
    /// Listings served in full to an unconditional request, bytes unchanged.
    unconditional_same: Vec<String>,
    /// Days advanced so far (picks the quiet hosts).
    days: usize,
}

/// The kinds of hosts and pages of the web (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct Shape {
    /// The last `feedless` hosts publish no feed.
    pub feedless: usize,
    /// Hosts that publish nothing on a given day.
    pub quiet: usize,
    /// The host whose links go through tracking redirects.
    pub redirect_host: Option<usize>,
    /// The host whose home page links the archive calendar.
    pub calendar_host: Option<usize>,
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
        shape: Shape,
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
            shape,
            bodies: HashMap::new(),
            unconditional_same: Vec::new(),
            days: 0,
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
        let (n_hosts, quiet, day) = (w.hosts.len(), w.shape.quiet, w.days);
        w.days += 1;
        for (i, host) in w.hosts.clone().into_iter().enumerate() {
            // A different `quiet` hosts rest each day.
            if (0..quiet).any(|q| (day * quiet + q) % n_hosts == i) {
                continue;
            }
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

    /// Listings served in full to a request without validators although
    /// their bytes had not changed since last served, and clear the list.
    pub fn take_unconditional_same(&self) -> Vec<String> {
        std::mem::take(&mut self.lock().unconditional_same)
    }

    /// Is `path` a page of the archive calendar?
    pub fn is_calendar(path: &str) -> bool {
        path.starts_with("/archive/")
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
        let h = w.hosts.iter().position(|x| *x == host).unwrap_or(0);
        let shape = w.shape.clone();
        let feedless = h + shape.feedless >= w.hosts.len();
        let redirects = shape.redirect_host == Some(h);
        if let Some(reply) = extra_page(
            &mut w,
            r,
            &host,
            &visible,
            redirects,
            shape.calendar_host == Some(h),
        ) {
            return reply;
        }
        match path {
            "/feed.xml" if feedless => Reply::not_found(),
            "/robots.txt" => Reply::text(format!(
                "User-agent: *\nDisallow: /private/\nSitemap: http://{host}/sitemap_index.xml\n"
            )),
            "/feed.xml" => {
                let items: Vec<&Story> = visible.iter().rev().take(FEED_LEN).copied().collect();
                let body = rss(&host, &items, now);
                let lm = items.iter().map(|s| changed(s)).max().unwrap_or(now);
                track(&mut w, r, &host, body.as_bytes());
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
                track(&mut w, r, &host, body.as_bytes());
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
                track(&mut w, r, &host, body.as_bytes());
                conditional(r, body.into_bytes(), "application/xml", lm)
            }
            "/.well-known/tdmrep.json" => Reply::not_found(),
            p if p.starts_with("/private/") => Reply::html("<html><body>private</body></html>"),
            p => {
                let Some(s) = visible.iter().find(|s| path_of(s) == p) else {
                    return Reply::not_found();
                };
                let body = article_page(&host, s, &visible, redirects);
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

fn rss(host: &str, items: &[&Story], now: DateTime<Utc>) -> String {
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
        "<?xml version=\"1.0\"?>\n<rss version=\"2.0\"><channel><title>{host}</title><link>http://{host}/</link><description>news</description><lastBuildDate>{}</lastBuildDate>\n{items}</channel></rss>\n",
        now.to_rfc2822()
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
    /// Kinds of hosts and pages (feedless hosts, quiet hosts, redirects, a calendar).
    pub shape: Shape,
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
    /// Requests for pages of the archive calendar.
    pub calendar: usize,
    /// Full answers to unconditional requests for unchanged listings.
    pub unconditional_same: usize,
    /// Requests the crawler counted as exploration.
    pub explore_requests: u64,
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
    let world = World::new(
        &hosts,
        plan.archive_from,
        plan.per_month,
        plan.start,
        plan.shape.clone(),
    );
    let web = world.start();
    let sources: String = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| {
            if i + plan.shape.feedless >= hosts.len() {
                format!("  - {{host: {h}, seeds: [http://{h}/]}}\n")
            } else {
                format!("  - {{host: {h}, seeds: [http://{h}/feed.xml, http://{h}/]}}\n")
            }
        })
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
        let _ = world.take_unconditional_same();
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
        if let Ok(dir) = std::env::var("DAILY_LOG_DIR") {
            // The server's view of the day, for reading by hand.
            let lines: String = log
                .iter()
                .map(|r| {
                    format!(
                        "{} {}{}\n",
                        r.host,
                        r.path,
                        r.query
                            .as_deref()
                            .map(|q| format!("?{q}"))
                            .unwrap_or_default()
                    )
                })
                .collect();
            let _ = std::fs::create_dir_all(&dir);
            let _ = std::fs::write(format!("{dir}/day{}.log", d + 1), lines);
            let _ = std::fs::copy(
                ws.data().join("state/last_run.json"),
                format!("{dir}/day{}.json", d + 1),
            );
            let _ = std::fs::write(format!("{dir}/day{}.stderr", d + 1), &out.stderr);
        }
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
            listing_requests: log
                .iter()
                .filter(|r| r.path.ends_with(".xml") || is_html_listing(&r.path))
                .count(),
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
            calendar: log.iter().filter(|r| World::is_calendar(&r.path)).count(),
            unconditional_same: world.take_unconditional_same().len(),
            explore_requests: sum("explore_requests"),
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
        "day  requests  backlog_req  listings  304s  new  found  req/new  daily/new  ideal  ratio  daily_ratio  needless  uncond  explore  calendar  backlog_done  left  gap  robots\n",
    );
    for r in rows {
        s.push_str(&format!(
            "{:>3}  {:>8}  {:>11}  {:>8}  {:>4}  {:>3}  {:>5}  {:>7.2}  {:>9.2}  {:>5.2}  {:>5.2}  {:>11.2}  {:>8}  {:>6}  {:>7}  {:>8}  {:>11.1}%  {:>4}  {:>3}  {:>6}\n",
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
            r.unconditional_same,
            r.explore_requests,
            r.calendar,
            r.backlog_done * 100.0,
            r.backlog_left,
            r.gap_violations,
            r.robots_violations
        ));
    }
    s
}

/// Remember a listing's bytes as served in full; an unconditional request
/// answered with the same bytes as last time is an unconditional full
/// re-read of an unchanged listing.
fn track(w: &mut Inner, r: &Req, host: &str, body: &[u8]) {
    let hash = xxhash_rust::xxh3::xxh3_64(body);
    let key = (host.to_string(), r.path.clone());
    let conditional =
        r.header("if-none-match").is_some() || r.header("if-modified-since").is_some();
    if !conditional && w.bodies.get(&key) == Some(&hash) {
        w.unconditional_same.push(format!("{host}{}", r.path));
    }
    w.bodies.insert(key, hash);
}

/// The groups a story belongs to: author, topic and tag pages.
fn groups(s: &Story) -> [String; 3] {
    const TOPICS: &[&str] = &["robots", "chips", "policy"];
    [
        format!("/author/writer-{}", s.n % 4),
        format!("/topic/{}", TOPICS[s.n % 3]),
        format!("/tag/tag-{}", s.n % 5),
    ]
}

/// A story's link as the host's pages give it: through two tracking
/// redirects on the redirect host.
fn link_of(s: &Story, redirects: bool) -> String {
    if redirects {
        format!("/go/{}", s.n)
    } else {
        path_of(s)
    }
}

fn html_list(title: &str, links: &[(String, String)], extra: &str) -> String {
    let items: String = links
        .iter()
        .map(|(href, text)| format!("<li><a href=\"{href}\">{text}</a></li>\n"))
        .collect();
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head><body>\n<nav><a href=\"/\">Home</a></nav>\n<main><h1>{title}</h1>\n<ul>\n{items}</ul>\n{extra}</main></body></html>"
    )
}

/// An article page with its author, topic and tag links and two older stories.
fn article_page(host: &str, s: &Story, visible: &[&Story], redirects: bool) -> String {
    let mut links: String = groups(s)
        .iter()
        .map(|g| format!("<a href=\"{g}\">{}</a> ", &g[1..]))
        .collect();
    for back in [1, 7] {
        if let Some(o) = s.n.checked_sub(back).and_then(|n| visible.get(n)) {
            links.push_str(&format!(
                "<a href=\"{}\">{}</a> ",
                link_of(o, redirects),
                title(o)
            ));
        }
    }
    article(host, s).replace(
        "</main>",
        &format!("<div class=\"more\">{links}</div></main>"),
    )
}

/// Home, group and calendar pages and the tracking redirects; `None` for
/// the other paths.
fn extra_page(
    w: &mut Inner,
    r: &Req,
    host: &str,
    visible: &[&Story],
    redirects: bool,
    calendar: bool,
) -> Option<Reply> {
    let path = r.path.as_str();
    let now = w.now;
    if path == "/" {
        let mut links: Vec<(String, String)> = visible
            .iter()
            .rev()
            .take(12)
            .map(|s| (link_of(s, redirects), title(s)))
            .collect();
        for t in ["robots", "chips", "policy"] {
            links.push((format!("/topic/{t}"), t.to_string()));
        }
        if calendar {
            links.push((now.format("/archive/%Y/%m").to_string(), "Archive".into()));
        }
        // "Most read" changes every day.
        let k = visible.len().max(1);
        let pick = (now.timestamp() / 86_400) as usize;
        for i in 0..3 {
            let s = visible[(pick * 7 + i * 13) % k];
            links.push((link_of(s, redirects), format!("Most read: {}", title(s))));
        }
        let body = html_list(
            &format!("{host} home"),
            &links,
            &format!("<p>Updated {}</p>", now.format("%A %e %B %Y")),
        );
        track(w, r, host, body.as_bytes());
        return Some(conditional(
            r,
            body.into_bytes(),
            "text/html; charset=utf-8",
            now,
        ));
    }
    if let Some(n) = path
        .strip_prefix("/go/")
        .and_then(|n| n.parse::<usize>().ok())
    {
        return Some(Reply::redirect(302, &format!("/click?n={n}&src=home")));
    }
    if path == "/click" {
        let n: usize = r
            .query
            .as_deref()
            .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("n=")))
            .and_then(|n| n.parse().ok())?;
        let s = visible.iter().find(|s| s.n == n)?;
        return Some(Reply::redirect(302, &path_of(s)));
    }
    if let Some(rest) = path.strip_prefix("/archive/") {
        return Some(calendar_page(rest, now.date_naive()));
    }
    let (group, page) = match path.split_once("/page/") {
        Some((g, p)) => (g, p.parse::<usize>().ok()?),
        None => (path, 1),
    };
    if !["/author/", "/topic/", "/tag/"]
        .iter()
        .any(|p| group.starts_with(p))
    {
        return None;
    }
    let members: Vec<&Story> = visible
        .iter()
        .rev()
        .filter(|s| groups(s).iter().any(|g| g == group))
        .copied()
        .collect();
    if members.is_empty() {
        return Some(Reply::not_found());
    }
    let links: Vec<(String, String)> = members
        .iter()
        .skip((page - 1) * 10)
        .take(10)
        .map(|s| (link_of(s, redirects), title(s)))
        .collect();
    let more = if members.len() > page * 10 {
        format!("<a href=\"{group}/page/{}\">Older</a>", page + 1)
    } else {
        String::new()
    };
    let body = html_list(&format!("{host}: {}", &group[1..]), &links, &more);
    let lm = members.iter().map(|s| changed(s)).max().unwrap_or(now);
    track(w, r, host, body.as_bytes());
    Some(conditional(
        r,
        body.into_bytes(),
        "text/html; charset=utf-8",
        lm,
    ))
}

/// The archive calendar: `YYYY/MM` links each of its days (up to today)
/// and the month before; `YYYY/MM/DD` has no story, only a line of text.
fn calendar_page(rest: &str, today: chrono::NaiveDate) -> Reply {
    let parts: Vec<u32> = rest.split('/').filter_map(|p| p.parse().ok()).collect();
    let page = |title: String, links: Vec<(String, String)>| {
        Reply::html(html_list(
            &title,
            &links,
            "<p>No stories were archived here.</p>",
        ))
    };
    match parts.as_slice() {
        [y, m] if (1990..=today.year() as u32).contains(y) && (1..=12).contains(m) => {
            let first = chrono::NaiveDate::from_ymd_opt(*y as i32, *m, 1).unwrap();
            let mut links = Vec::new();
            let mut d = first;
            while d.month() == *m && d <= today {
                links.push((d.format("/archive/%Y/%m/%d").to_string(), d.to_string()));
                d += Duration::days(1);
            }
            let prev = first - Duration::days(1);
            links.push((prev.format("/archive/%Y/%m").to_string(), "Earlier".into()));
            page(format!("Archive {y}-{m:02}"), links)
        }
        [y, m, d] if chrono::NaiveDate::from_ymd_opt(*y as i32, *m, *d).is_some() => page(
            format!("Archive {y}-{m:02}-{d:02}"),
            vec![(format!("/archive/{y}/{m:02}"), "Month".into())],
        ),
        _ => Reply::not_found(),
    }
}

/// Home, author, topic, tag and calendar pages: the web's HTML listings.
fn is_html_listing(path: &str) -> bool {
    path == "/"
        || ["/author/", "/topic/", "/tag/", "/archive/"]
            .iter()
            .any(|p| path.starts_with(p))
}
