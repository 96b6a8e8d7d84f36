//! Outages: a run that reaches no host saves nothing and exits 69; a host
//! that is down keeps its queued work and its own `--min-lastmod auto`
//! cut-off, so the next run finds what it published meanwhile.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;

use crate::support::fixture::{Workspace, article_html, stderr};
use crate::support::web::{Reply, Req, Web};

/// The crawler's exit status for an outage.
const EXIT_OUTAGE: i32 = 69;

/// A small web of hosts, each with a sitemap at `/sitemap.xml` listing its
/// articles with their lastmod; a host can be taken down (its connections
/// are closed unanswered) or given a robots.txt that answers 503.
/// Host -> articles as (number, lastmod).
type Published = BTreeMap<String, Vec<(usize, DateTime<Utc>)>>;

#[derive(Clone, Default)]
struct Hosts {
    articles: Arc<Mutex<Published>>,
    down: Arc<Mutex<HashSet<String>>>,
    robots_503: Arc<Mutex<HashSet<String>>>,
}

impl Hosts {
    fn publish(&self, host: &str, n: usize, at: DateTime<Utc>) {
        self.articles
            .lock()
            .unwrap()
            .entry(host.to_string())
            .or_default()
            .push((n, at));
    }

    fn set(set: &Mutex<HashSet<String>>, host: &str, on: bool) {
        let mut s = set.lock().unwrap();
        if on {
            s.insert(host.to_string());
        } else {
            s.remove(host);
        }
    }

    fn start(&self) -> Web {
        let me = self.clone();
        Web::start(move |r: &Req| me.answer(r))
    }

    fn answer(&self, r: &Req) -> Reply {
        if self.down.lock().unwrap().contains(&r.host) {
            return Reply::close();
        }
        if r.path == "/robots.txt" {
            if self.robots_503.lock().unwrap().contains(&r.host) {
                return Reply::status(503);
            }
            return Reply::not_found();
        }
        let articles = self.articles.lock().unwrap();
        let list = articles.get(&r.host).cloned().unwrap_or_default();
        if r.path == "/sitemap.xml" {
            let mut x = String::from(
                "<?xml version=\"1.0\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
            );
            for (n, at) in &list {
                x.push_str(&format!(
                    "<url><loc>http://{}{}</loc><lastmod>{}</lastmod></url>\n",
                    r.host,
                    path(*n),
                    at.to_rfc3339_opts(SecondsFormat::Secs, true)
                ));
            }
            x.push_str("</urlset>\n");
            return Reply::xml(x);
        }
        match list.iter().find(|(n, _)| path(*n) == r.path) {
            Some((n, at)) => Reply::html(article_html(
                &r.host,
                *n,
                &at.format("%Y-%m-%d").to_string(),
            )),
            None => Reply::not_found(),
        }
    }
}

fn path(n: usize) -> String {
    format!("/news/story-{n}")
}

fn sources(hosts: &[&str]) -> String {
    hosts
        .iter()
        .map(|h| format!("  - {{host: {h}, seeds: [http://{h}/sitemap.xml]}}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn summary(ws: &Workspace) -> Value {
    let text = std::fs::read_to_string(ws.data().join("state/last_run.json")).expect("summary");
    serde_json::from_str(&text).expect("JSON")
}

fn stored(ws: &Workspace) -> BTreeSet<String> {
    ws.records()
        .iter()
        .map(|r| r["url"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Every file under `dir` (but the event log) with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if !p.ends_with("crawl.log") && !p.ends_with(".lock") {
                let name = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.insert(name, std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

/// URLs of `host` a listing gave, in `frontier.jsonl` (what a run without
/// `--resume` carries over).
fn queued(ws: &Workspace, host: &str) -> BTreeSet<String> {
    crate::support::fixture::read_jsonl(&ws.data().join("state/frontier.jsonl"))
        .iter()
        .filter(|e| e["origin"] == "listed")
        .filter_map(|e| e["url"].as_str().map(str::to_string))
        .filter(|u| u.contains(&format!("//{host}/")))
        .collect()
}

/// A proxy address nothing listens on: every request fails to connect.
fn dead_proxy() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    format!("http://{addr}")
}

fn crawl_via(ws: &Workspace, proxy: &str, args: &[&str]) -> std::process::Output {
    let mut all = vec!["crawl", "--data", "data", "--proxy", proxy];
    all.extend_from_slice(args);
    ws.command(&all).output().expect("run scraper")
}

#[test]
fn an_outage_saves_nothing_and_a_host_with_unreachable_robots_keeps_its_queue() {
    let hosts = Hosts::default();
    let old: DateTime<Utc> = "2024-05-02T09:30:00Z".parse().unwrap();
    for n in 0..30 {
        hosts.publish("queue.test", n, old);
    }
    for n in 0..3 {
        hosts.publish("other.test", n, old);
    }
    let web = hosts.start();
    let ws = Workspace::new(
        &web,
        &sources(&["queue.test", "other.test"]),
        "min_host_gap: 20ms\nconcurrency: 2",
    );
    // Run one: the budget ends it with most of queue.test's stories still queued.
    let out = ws.crawl(&["--min-lastmod", "auto", "--max-pages", "12"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let carried = queued(&ws, "queue.test");
    assert!(carried.len() >= 10, "{carried:?}");
    let before = snapshot(&ws.data());
    let watermark = summary(&ws)["last_success_started_at"].clone();
    assert!(watermark.is_string(), "run one moved the watermark");

    // Run two: no network at all (a dead proxy). Exit 69, one line saying why,
    // and not a byte of state changed: watermark, queue, seen-set, shards.
    let out = crawl_via(&ws, &dead_proxy(), &["--min-lastmod", "auto"]);
    assert_eq!(out.status.code(), Some(EXIT_OUTAGE), "{}", stderr(&out));
    let err = stderr(&out);
    let line = err
        .lines()
        .find(|l| l.starts_with("outage:"))
        .unwrap_or_else(|| panic!("no outage line: {err}"));
    assert!(
        line.contains("no host could be reached") && line.contains("connect"),
        "{line}"
    );
    assert_eq!(
        snapshot(&ws.data()),
        before,
        "an outage changed the data folder"
    );
    let done = ws.events().last().cloned().unwrap();
    assert_eq!(done["stopped_by"], "outage", "{done}");

    // Run three: robots.txt answers 503 everywhere: also an outage.
    Hosts::set(&hosts.robots_503, "queue.test", true);
    Hosts::set(&hosts.robots_503, "other.test", true);
    let out = ws.crawl(&["--min-lastmod", "auto"]);
    assert_eq!(out.status.code(), Some(EXIT_OUTAGE), "{}", stderr(&out));
    assert_eq!(snapshot(&ws.data()), before);

    // Run four: only queue.test's robots.txt is unreachable. Not an outage;
    // its carried queue is kept for the next run, not dropped.
    Hosts::set(&hosts.robots_503, "other.test", false);
    hosts.publish("other.test", 3, Utc::now());
    let out = ws.crawl(&["--min-lastmod", "auto", "--max-duration", "20s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let still = queued(&ws, "queue.test");
    assert!(
        carried.is_subset(&still),
        "lost: {:?}",
        carried.difference(&still).collect::<Vec<_>>()
    );
    let s = summary(&ws);
    assert_eq!(s["sources_down"], serde_json::json!(["queue.test"]), "{s}");
    assert!(stored(&ws).contains(&format!("http://other.test{}", path(3))));

    // Run five: back up; every story of queue.test ends up stored.
    Hosts::set(&hosts.robots_503, "queue.test", false);
    let out = ws.crawl(&["--min-lastmod", "auto", "--max-duration", "25s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let got = stored(&ws);
    for n in 0..30 {
        let u = format!("http://queue.test{}", path(n));
        assert!(got.contains(&u), "{u} never stored");
    }
}

#[test]
fn a_host_down_for_a_day_keeps_its_own_cutoff() {
    let hosts = Hosts::default();
    let old: DateTime<Utc> = "2024-05-02T09:30:00Z".parse().unwrap();
    let names = ["a.test", "b.test", "c.test"];
    for h in names {
        hosts.publish(h, 0, old);
    }
    let web = hosts.start();
    let ws = Workspace::new(
        &web,
        &sources(&names),
        "min_host_gap: 20ms\nlastmod_overlap: 0s",
    );
    let at = |v: &Value| -> DateTime<Utc> { v.as_str().unwrap().parse().unwrap() };

    let out = ws.crawl(&["--min-lastmod", "auto", "--max-duration", "20s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let run1 = at(&summary(&ws)["started_at"]);
    assert_eq!(stored(&ws).len(), 3);

    // b.test goes down for a day; meanwhile every host publishes one story.
    std::thread::sleep(Duration::from_millis(1100));
    let published = DateTime::from_timestamp(Utc::now().timestamp(), 0).unwrap();
    for h in names {
        hosts.publish(h, 1, published);
    }
    std::thread::sleep(Duration::from_millis(1100));
    Hosts::set(&hosts.down, "b.test", true);
    let out = ws.crawl(&["--min-lastmod", "auto", "--max-duration", "20s"]);
    assert!(
        out.status.success(),
        "one host down is no outage: {}",
        stderr(&out)
    );
    let s = summary(&ws);
    let run2 = at(&s["started_at"]);
    assert!(run2 > published, "the story predates run two's start");
    let marks = &s["host_watermarks"];
    assert_eq!(at(&marks["a.test"]), run2, "{marks}");
    assert_eq!(at(&marks["c.test"]), run2, "{marks}");
    assert_eq!(
        at(&marks["b.test"]),
        run1,
        "b.test kept its cut-off: {marks}"
    );
    let got = stored(&ws);
    for h in ["a.test", "c.test"] {
        assert!(got.contains(&format!("http://{h}{}", path(1))), "{h}");
    }
    assert!(
        ws.events()
            .iter()
            .any(|e| e["event"] == "source_down" && e["host"] == "b.test"),
        "no source_down event"
    );

    // b.test is back. Its story is older than run two's start (what a
    // run-wide watermark would cut at) but not than its own cut-off.
    Hosts::set(&hosts.down, "b.test", false);
    let out = ws.crawl(&["--min-lastmod", "auto", "--max-duration", "20s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stored(&ws).contains(&format!("http://b.test{}", path(1))),
        "b.test's story from its day offline was lost"
    );
    let s = summary(&ws);
    assert_eq!(at(&s["host_watermarks"]["b.test"]), at(&s["started_at"]));
}

#[test]
fn robots_and_tdmrep_are_asked_conditionally_the_next_day() {
    use crate::support::fixture::{article_path, day, listing_html};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let published = Arc::new(AtomicUsize::new(2));
    let p2 = published.clone();
    let web = Web::start(move |r: &Req| {
        let n = p2.load(Ordering::SeqCst);
        let tag = r.header("if-none-match").unwrap_or("");
        match r.path.as_str() {
            "/robots.txt" if tag == "\"r1\"" => Reply::status(304),
            "/robots.txt" => {
                Reply::text("User-agent: *\nDisallow: /private\n").header("etag", "\"r1\"")
            }
            "/.well-known/tdmrep.json" if tag == "\"t1\"" => Reply::status(304),
            "/.well-known/tdmrep.json" => {
                Reply::bytes("application/json", "[]").header("etag", "\"t1\"")
            }
            "/" => {
                let mut links: Vec<String> = (0..n).map(article_path).collect();
                links.push("/private/x".into());
                Reply::html(listing_html("Home", &links))
            }
            p if p.contains("/story-") => {
                let k: usize = p.rsplit("story-").next().unwrap().parse().unwrap();
                Reply::html(article_html(&r.host, k, &day(k)))
            }
            _ => Reply::not_found(),
        }
    });
    let ws = Workspace::new(
        &web,
        "  - {host: cond.test, seeds: [http://cond.test/]}",
        // tdmrep.json asked every run here (by default it is reused for a week).
        "min_host_gap: 20ms\ntdmrep_refresh_days: 0",
    );
    let out = ws.crawl(&["--max-duration", "20s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        ws.data()
            .join("state/doc_cache")
            .read_dir()
            .is_ok_and(|mut d| d.next().is_some())
    );
    published.store(3, Ordering::SeqCst);
    web.clear_log();
    let out = ws.crawl(&["--max-duration", "20s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let log = web.log();
    let asked = |p: &str| {
        log.iter()
            .filter(|q| q.path == p)
            .cloned()
            .collect::<Vec<_>>()
    };
    let robots = asked("/robots.txt");
    assert_eq!(robots.len(), 1, "robots.txt is read again every run");
    assert_eq!(robots[0].header("if-none-match"), Some("\"r1\""));
    let tdm = asked("/.well-known/tdmrep.json");
    assert_eq!(tdm.len(), 1);
    assert_eq!(tdm[0].header("if-none-match"), Some("\"t1\""));
    // The remembered rules still apply after the 304.
    assert!(
        asked("/private/x").is_empty(),
        "a disallowed page was fetched"
    );
    assert!(stored(&ws).contains(&format!("http://cond.test{}", article_path(2))));
}
