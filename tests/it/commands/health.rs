//! `scraper health` and `scraper probe` against a local web whose sources
//! break between runs in the ways real sources do: a bot wall (403), a
//! redesign that collapses extraction, a dead feed, a feed moved off the
//! source, robots.txt closing the path; next to a quiet source (everything
//! 304) and a stable one that keeps publishing.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

use crate::support::fixture::{Workspace, article_html, article_path, day, listing_html, stderr};
use crate::support::web::{Reply, Req, Web};

/// New articles each host publishes per run.
const PER_RUN: usize = 3;
/// The run in which the breaking hosts break.
const BREAK_AT: usize = 3;

const SOURCES: &str = "  - {host: stable.test, seeds: [http://stable.test/feed.xml]}
  - {host: quiet.test, seeds: [http://quiet.test/feed.xml]}
  - {host: wall.test, seeds: [http://wall.test/feed.xml]}
  - {host: redesign.test, seeds: [http://redesign.test/feed.xml]}
  - {host: deadfeed.test, seeds: [http://deadfeed.test/feed.xml]}
  - {host: moved.test, seeds: [http://moved.test/feed.xml]}
  - {host: renamed.test, seeds: [http://renamed.test/feed.xml]}
  - {host: closed.test, path: /news, seeds: [http://closed.test/news/feed.xml]}";

/// An Atom feed of `links` (absolute URLs), each dated `day(n)`.
fn atom(host: &str, links: &[(String, usize)]) -> String {
    let entries: String = links
        .iter()
        .map(|(u, n)| {
            format!(
                "<entry><title>Story {n} from {host}</title><id>{u}</id><link href=\"{u}\"/><updated>{}T09:30:00Z</updated></entry>\n",
                day(*n)
            )
        })
        .collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\"><title>{host}</title><id>urn:{host}</id><updated>2024-05-28T00:00:00Z</updated>\n{entries}</feed>"
    )
}

fn feed_reply(r: &Req, body: String, etag: &str) -> Reply {
    if r.header("if-none-match") == Some(etag) {
        return Reply::status(304).header("etag", etag);
    }
    Reply::bytes("application/atom+xml", body).header("etag", etag)
}

/// A page after a redesign: no article markup, no date, a teaser line.
fn teaser_html(n: usize) -> String {
    format!(
        "<!doctype html><html><head><title>Story {n}</title></head><body><div class=\"app\"><div>Open the app to read about AI, story {n}.</div></div></body></html>"
    )
}

/// The changing web: `run` is the run about to start (1-based).
fn changing_web(run: Arc<AtomicUsize>) -> Web {
    Web::start(move |r: &Req| {
        let run = run.load(Ordering::SeqCst);
        let broken = run >= BREAK_AT;
        let host = r.host.as_str();
        let path = r.path.as_str();
        let published = PER_RUN * run;
        // Articles: n < published exist; the redesign serves new ones under /p/.
        let link = |n: usize| -> String {
            if host == "redesign.test" && n >= PER_RUN * (BREAK_AT - 1) {
                format!("http://{host}/p/story-{n}")
            } else if host == "closed.test" {
                format!("http://{host}/news{}", article_path(n))
            } else {
                format!("http://{host}{}", article_path(n))
            }
        };
        match (host, path) {
            ("wall.test", _) if broken => Reply::status(403).header("content-type", "text/html"),
            ("closed.test", "/robots.txt") if broken => {
                Reply::text("User-agent: *\nDisallow: /news/\n")
            }
            (_, "/robots.txt") => Reply::text("User-agent: *\nDisallow: /private\n"),
            ("quiet.test", "/feed.xml") => {
                let items: Vec<(String, usize)> = (0..PER_RUN).map(|n| (link(n), n)).collect();
                feed_reply(r, atom(host, &items), "\"quiet-1\"")
            }
            ("deadfeed.test", "/feed.xml") if broken => Reply::not_found(),
            ("moved.test", "/feed.xml") if broken => {
                Reply::redirect(301, "http://elsewhere.test/moved/feed.xml")
            }
            ("renamed.test", "/feed.xml") if broken => Reply::redirect(301, "/new/feed.xml"),
            (_, "/feed.xml" | "/new/feed.xml" | "/news/feed.xml") => {
                let items: Vec<(String, usize)> = (0..published).map(|n| (link(n), n)).collect();
                feed_reply(r, atom(host, &items), &format!("\"{host}-{run}\""))
            }
            ("redesign.test", p) if p.starts_with("/p/story-") => {
                let n: usize = p.trim_start_matches("/p/story-").parse().unwrap_or(0);
                Reply::html(teaser_html(n))
            }
            (_, p) if p.contains("/story-") => {
                let n: usize = p
                    .rsplit("story-")
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                if n >= published {
                    return Reply::not_found();
                }
                Reply::html(article_html(host, n, &day(n)))
            }
            _ => Reply::not_found(),
        }
    })
}

fn workspace(web: &Web, sources: &str) -> Workspace {
    let ws = Workspace::new(web, sources, "min_host_gap: 20ms\nconcurrency: 8");
    let path = ws.dir.path().join("config.yml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("health:\n  min_pages: 3\n  broken_after_runs: 2\n");
    std::fs::write(&path, text).unwrap();
    ws
}

fn crawl(ws: &Workspace) -> String {
    let out = ws.crawl(&["--max-duration", "20s"]);
    assert!(out.status.success(), "crawl failed: {}", stderr(&out));
    let last: Value =
        serde_json::from_slice(&std::fs::read(ws.data().join("state/last_run.json")).unwrap())
            .unwrap();
    last["run_id"].as_str().unwrap().to_string()
}

fn health(ws: &Workspace) -> Value {
    let out = ws
        .command(&["health", "--data", "data", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "health failed: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn verdict<'a>(h: &'a Value, source: &str) -> &'a Value {
    h["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["source"] == source)
        .unwrap_or_else(|| panic!("{source} missing from {h}"))
}

fn status_and_reason(h: &Value, source: &str) -> (String, String) {
    let v = verdict(h, source);
    (
        v["status"].as_str().unwrap().to_string(),
        v["findings"][0]["reason"]
            .as_str()
            .unwrap_or("")
            .to_string(),
    )
}

#[test]
fn health_names_each_broken_source_with_its_reason_and_the_run_it_started() {
    let run = Arc::new(AtomicUsize::new(1));
    let web = changing_web(run.clone());
    let ws = workspace(&web, SOURCES);
    for r in 1..BREAK_AT {
        run.store(r, Ordering::SeqCst);
        crawl(&ws);
        let h = health(&ws);
        assert_eq!(h["broken"], serde_json::json!([]), "run {r}: {h}");
        assert_eq!(h["degraded"], serde_json::json!([]), "run {r}: {h}");
    }
    run.store(BREAK_AT, Ordering::SeqCst);
    web.clear_log();
    let broke = crawl(&ws);
    let h = health(&ws);

    let expect = [
        (
            "wall.test",
            "degraded",
            format!("403 on every request since run {broke}"),
        ),
        (
            "redesign.test",
            "broken",
            format!("pages no longer judged articles since run {broke} (median text "),
        ),
        (
            "deadfeed.test",
            "broken",
            format!("feed http://deadfeed.test/feed.xml answers 404 since run {broke}"),
        ),
        (
            "moved.test",
            "broken",
            format!(
                "feed http://moved.test/feed.xml redirects to http://elsewhere.test/moved/feed.xml, outside the source, since run {broke}"
            ),
        ),
        (
            "closed.test/news",
            "broken",
            format!("robots.txt now disallows the source's path /news (since run {broke})"),
        ),
    ];
    for (source, status, reason) in &expect {
        let (s, r) = status_and_reason(&h, source);
        assert_eq!(&s, status, "{source}: {r}\n{h}");
        assert!(
            r.starts_with(reason.as_str()),
            "{source}: {r}\nexpected: {reason}"
        );
    }
    // The collapse names the text lengths before and after.
    let (_, r) = status_and_reason(&h, "redesign.test");
    let lengths: Vec<u64> = r
        .split(|c: char| !c.is_ascii_digit() && c != ',')
        .filter_map(|w| w.replace(',', "").parse().ok())
        .filter(|n| *n > 0)
        .collect();
    assert!(
        lengths.len() >= 2 && lengths[lengths.len() - 2] > 5 * lengths[lengths.len() - 1],
        "{r}"
    );
    // Quiet, stable and redirected-in-place sources are ok; the quiet one was really quiet.
    for source in ["stable.test", "quiet.test", "renamed.test"] {
        let v = verdict(&h, source);
        assert_eq!(v["status"], "ok", "{source}: {v}");
    }
    let quiet = verdict(&h, "quiet.test");
    let last = quiet["trend"].as_array().unwrap().last().unwrap();
    assert_eq!(last["not_modified"], 1, "{quiet}");
    assert_eq!(last["stored"], 0, "{quiet}");
    let renamed = verdict(&h, "renamed.test");
    assert!(
        renamed["notes"][0]
            .as_str()
            .unwrap()
            .contains("now redirects to http://renamed.test/new/feed.xml"),
        "{renamed}"
    );
    // Broken first, then degraded, then ok.
    let order: Vec<&str> = h["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["status"].as_str().unwrap())
        .collect();
    let rank = |s: &str| match s {
        "broken" => 0,
        "degraded" => 1,
        _ => 2,
    };
    assert!(
        order.windows(2).all(|w| rank(w[0]) <= rank(w[1])),
        "{order:?}"
    );
    // The run summary names the seeds to fix, with where they point now.
    let last_run: Value =
        serde_json::from_slice(&std::fs::read(ws.data().join("state/last_run.json")).unwrap())
            .unwrap();
    let seeds = last_run["seed_problems"].as_array().unwrap();
    let find = |u: &str| {
        seeds
            .iter()
            .find(|s| s["url"] == u)
            .unwrap_or_else(|| panic!("{u} in {seeds:?}"))
    };
    assert_eq!(
        find("http://renamed.test/feed.xml")["moved_to"],
        "http://renamed.test/new/feed.xml"
    );
    assert_eq!(
        find("http://moved.test/feed.xml")["moved_to"],
        "http://elsewhere.test/moved/feed.xml"
    );
    assert_eq!(find("http://deadfeed.test/feed.xml")["answer"], "404");
    // One health file per run, and the text form names the problems.
    let files = std::fs::read_dir(ws.data().join("state/health"))
        .unwrap()
        .count();
    assert_eq!(files, BREAK_AT);
    let out = ws
        .command(&["health", "--data", "data", "--problems"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("broken") && text.contains("deadfeed.test") && !text.contains("quiet.test"),
        "{text}"
    );

    let out = ws.command(&["health", "--data", "data"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("BROKEN    deadfeed.test") && text.contains("last 3 runs: stored 3 3"),
        "{text}"
    );
    // The dashboard shows the same problems.
    let shown = dashboard_health(&ws);
    let shown: Vec<(&str, &str)> = shown["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["source"].as_str().unwrap(), v["status"].as_str().unwrap()))
        .collect();
    assert_eq!(shown.len(), 5, "{shown:?}");
    assert!(
        shown.contains(&("wall.test", "degraded")) && shown.contains(&("deadfeed.test", "broken")),
        "{shown:?}"
    );

    // The wall holds for another run: broken, counted from where it started.
    run.store(BREAK_AT + 1, Ordering::SeqCst);
    crawl(&ws);
    let (s, r) = status_and_reason(&health(&ws), "wall.test");
    assert_eq!(s, "broken");
    assert_eq!(
        r,
        format!("403 on every request for 2 runs (since run {broke})")
    );
    // Nothing was fetched under the closed path once robots.txt closed it.
    let after = web
        .requests_to("closed.test")
        .into_iter()
        .filter(|q| q.path.starts_with("/news"))
        .count();
    assert_eq!(after, 0);
}

/// `GET /health` from `scraper dashboard` run on the workspace.
fn dashboard_health(ws: &Workspace) -> Value {
    use std::io::{BufRead, BufReader, Read, Write};
    let mut child = ws
        .command(&["dashboard", "--port", "0", "--data", "data"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = lines.by_ref().map_while(Result::ok).find_map(|l| {
        l.find("http://127.0.0.1:")
            .map(|at| l[at + 7..].split('/').next().unwrap().to_string())
    });
    let body = addr.and_then(|addr| {
        let mut s = std::net::TcpStream::connect(&addr).ok()?;
        write!(s, "GET /health HTTP/1.1\r\nHost: {addr}\r\n\r\n").ok()?;
        let mut text = String::new();
        s.read_to_string(&mut text).ok()?;
        text.split_once("\r\n\r\n").map(|(_, b)| b.to_string())
    });
    let _ = child.kill();
    let _ = child.wait();
    serde_json::from_str(&body.expect("dashboard answered /health")).unwrap()
}

#[test]
fn ten_runs_of_a_stable_web_flag_nothing() {
    let run = Arc::new(AtomicUsize::new(1));
    let web = changing_web(run.clone());
    let sources = "  - {host: stable.test, seeds: [http://stable.test/feed.xml]}\n  - {host: quiet.test, seeds: [http://quiet.test/feed.xml]}\n  - {host: renamed.test, seeds: [http://renamed.test/new/feed.xml]}";
    let ws = workspace(&web, sources);
    // These hosts never break: each run they publish new articles (the
    // quiet one nothing new), so every rule has fresh data to judge.
    for r in 1..=10 {
        run.store(r, Ordering::SeqCst);
        crawl(&ws);
        let h = health(&ws);
        for v in h["sources"].as_array().unwrap() {
            assert_eq!(v["status"], "ok", "run {r}: {v}");
            assert!(
                v["notes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|n| !n.as_str().unwrap().contains("redirect")),
                "{v}"
            );
        }
    }
    let h = health(&ws);
    let stable = verdict(&h, "stable.test");
    let trend = stable["trend"].as_array().unwrap();
    assert_eq!(trend.len(), 10, "{stable}");
    assert!(
        trend
            .iter()
            .all(|p| p["stored"] == PER_RUN as u64 && p["pages"] == PER_RUN as u64),
        "{stable}"
    );
}

/// A site with robots.txt (a Sitemap line, a Crawl-delay), a home page that
/// links its feed, a feed, and a sitemap with pages over two months.
fn probe_web() -> Web {
    Web::start(|r: &Req| {
        let host = r.host.as_str();
        match (host, r.path.as_str()) {
            ("probe.test", "/robots.txt") => Reply::text(
                "User-agent: *\nDisallow: /private\nCrawl-delay: 0.05\nSitemap: http://probe.test/sitemap.xml\n",
            ),
            ("probe.test", "/") => Reply::html(
                listing_html("Probe home", &[article_path(1), article_path(2)]).replace(
                    "<head>",
                    "<head><link rel=\"alternate\" type=\"application/atom+xml\" href=\"/atom-feed\">",
                ),
            ),
            ("probe.test", "/atom-feed") => {
                let items: Vec<(String, usize)> =
                    (0..4).map(|n| (format!("http://probe.test{}", article_path(n)), n)).collect();
                Reply::bytes("application/atom+xml", atom(host, &items))
            }
            ("probe.test", "/sitemap.xml") => {
                // Pages 0..4 again (dated in May) and 100..103 dated in April.
                let mut urls = String::new();
                for n in 0..4 {
                    urls.push_str(&format!("<url><loc>http://probe.test{}</loc><lastmod>{}</lastmod></url>", article_path(n), day(n)));
                }
                for n in 100..103 {
                    urls.push_str(&format!("<url><loc>http://probe.test/archive/story-{n}</loc><lastmod>2024-04-{:02}</lastmod></url>", n - 90));
                }
                Reply::xml(format!("<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{urls}</urlset>"))
            }
            ("probe.test", p) if p.contains("/story-") => {
                let n: usize = p.rsplit("story-").next().and_then(|s| s.parse().ok()).unwrap_or(0);
                Reply::html(article_html(host, n, &day(n)))
            }
            _ => Reply::not_found(),
        }
    })
}

#[test]
fn probe_lists_feed_and_sitemap_counts_by_month_samples_pages_and_its_entry_crawls() {
    let web = probe_web();
    let ws = Workspace::new(&web, "  - {host: unused.test}", "min_host_gap: 40ms");
    let out = ws
        .command(&[
            "probe",
            "http://probe.test/",
            "--json",
            "--sample",
            "3",
            "--proxy",
            &ws.proxy,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "probe failed: {}", stderr(&out));
    let p: Value = serde_json::from_slice(&out.stdout).unwrap();
    let listing = |u: &str| {
        p["listings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["url"] == u)
            .unwrap_or_else(|| panic!("{u} not in {p}"))
            .clone()
    };
    let sitemap = listing("http://probe.test/sitemap.xml");
    assert_eq!(sitemap["found_via"], "robots.txt");
    assert_eq!(sitemap["kind"], "sitemap");
    assert_eq!(sitemap["entries"], 7);
    let feed = listing("http://probe.test/atom-feed");
    assert_eq!(feed["found_via"], "link rel=alternate");
    assert_eq!(feed["kind"], "feed");
    assert_eq!(feed["entries"], 4);
    // Common paths were tried and answered 404.
    assert_eq!(listing("http://probe.test/rss.xml")["answer"], "404");
    // Seven distinct pages: four in May 2024, three in April.
    assert_eq!(p["listed"], 7);
    assert_eq!(
        p["by_month"],
        serde_json::json!({"2024-04": 3, "2024-05": 4})
    );
    assert_eq!(p["robots"]["crawl_delay_ms"], 50);
    // Three sampled pages, newest first, with the extractor's and relevance verdicts.
    let sample = p["sample"].as_array().unwrap();
    assert_eq!(sample.len(), 3);
    for s in sample {
        assert_eq!(s["is_article"], true, "{s}");
        assert_eq!(s["relevant"], true, "{s}");
        assert!(s["relevance"].as_str().unwrap().len() > 3, "{s}");
        assert!(s["text_chars"].as_u64().unwrap() > 500, "{s}");
    }
    assert!(
        sample[0]["url"].as_str().unwrap().contains("story-3"),
        "{sample:?}"
    );
    // Polite: one robots.txt, the Crawl-delay (50 ms, above the 40 ms gap) held, nothing stored.
    assert_eq!(web.count("probe.test", "/robots.txt"), 1);
    assert_eq!(
        web.gap_violations("probe.test", std::time::Duration::from_millis(48)),
        0
    );
    // Nothing stored but the rendering verdict (`state/render_verdicts.json`).
    let mut stored = Vec::new();
    let mut dirs = vec![ws.data()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type().is_ok_and(|t| t.is_dir()) {
                true => dirs.push(e.path()),
                false => stored.push(e.path()),
            }
        }
    }
    let verdicts = ws.data().join("state/render_verdicts.json");
    assert!(
        stored.iter().all(|f| *f == verdicts),
        "probe stored {stored:?}"
    );
    assert_eq!(
        p["requests"].as_u64().unwrap() as usize,
        web.count_host("probe.test")
    );

    // The suggested entry, pasted into a config as is, crawls.
    let line = p["suggested"].as_str().unwrap();
    assert!(line.contains("http://probe.test/atom-feed"), "{line}");
    let crawl_ws = Workspace::new(&web, &format!("  {line}"), "");
    let out = crawl_ws.crawl(&["--max-duration", "20s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        crawl_ws.records().len() >= 4,
        "{line}: {} records",
        crawl_ws.records().len()
    );

    // A bare host is probed over https first; the local web has no https, so over http.
    let out = ws
        .command(&[
            "probe",
            "probe.test",
            "--json",
            "--sample",
            "1",
            "--proxy",
            &ws.proxy,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "bare host probe failed: {}",
        stderr(&out)
    );
    let bare: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(bare["start_url"], "http://probe.test/", "{bare}");
    assert!(
        bare["notes"][0]
            .as_str()
            .unwrap()
            .contains("probed over http"),
        "{bare}"
    );
    assert_eq!(bare["listed"], 7, "{bare}");

    // The readable form shows the same findings.
    let out = ws
        .command(&[
            "probe",
            "http://probe.test/",
            "--sample",
            "1",
            "--proxy",
            &ws.proxy,
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "sitemap.xml",
        "atom-feed",
        "2024-04",
        "article",
        "suggested entry",
    ] {
        assert!(text.contains(want), "{want} missing:\n{text}");
    }
}

/// Each sampled page carries one AI-use signal the crawl honours beyond the
/// meta tags: a `tdm-reservation` header, a robots.txt `Content-Usage` rule
/// for its path, a `tdmrep.json` rule for its path; one carries none.
fn signals_web() -> Web {
    Web::start(|r: &Req| {
        let host = r.host.as_str();
        let page = |n: usize| Reply::html(article_html(host, n, &day(n)));
        match (host, r.path.as_str()) {
            ("sig.test", "/robots.txt") => Reply::text(
                "User-agent: *\nAllow: /\nContent-Usage: /usage/ train-ai=n\n\
                 Sitemap: http://sig.test/sitemap.xml\n",
            ),
            ("sig.test", "/.well-known/tdmrep.json") => Reply::bytes(
                "application/json",
                r#"[{"location": "/tdm/*", "tdm-reservation": 1}]"#,
            ),
            ("sig.test", "/") => Reply::html(listing_html("Signals home", &[])),
            ("sig.test", "/sitemap.xml") => {
                let urls: String = ["open", "header", "usage", "tdm"]
                    .iter()
                    .enumerate()
                    .map(|(n, dir)| {
                        format!(
                            "<url><loc>http://sig.test/{dir}/story-{n}</loc><lastmod>{}</lastmod></url>",
                            day(n)
                        )
                    })
                    .collect();
                Reply::xml(format!(
                    "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{urls}</urlset>"
                ))
            }
            ("sig.test", "/header/story-1") => page(1).header("tdm-reservation", "1"),
            ("sig.test", p) if p.contains("/story-") => page(
                p.rsplit("story-")
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0),
            ),
            _ => Reply::not_found(),
        }
    })
}

#[test]
fn probe_judges_sampled_pages_ai_use_as_the_crawl_does() {
    let web = signals_web();
    let ws = Workspace::new(
        &web,
        "  - {host: sig.test, seeds: [http://sig.test/sitemap.xml]}",
        "ai_use_policy: record",
    );
    let out = ws
        .command(&[
            "probe",
            "http://sig.test/",
            "--json",
            "--sample",
            "4",
            "--proxy",
            &ws.proxy,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "probe failed: {}", stderr(&out));
    let p: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sampled: std::collections::BTreeMap<String, bool> = p["sample"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            assert_eq!(s["error"], Value::Null, "{s}");
            (
                s["url"].as_str().unwrap().to_string(),
                s["ai_reserved"] == true,
            )
        })
        .collect();
    let want: std::collections::BTreeMap<String, bool> = [
        ("open/story-0", false),
        ("header/story-1", true),
        ("usage/story-2", true),
        ("tdm/story-3", true),
    ]
    .into_iter()
    .map(|(path, reserved)| (format!("http://sig.test/{path}"), reserved))
    .collect();
    assert_eq!(sampled, want, "{p}");
    // The start page itself reserves nothing.
    assert_eq!(p["ai_reserved"], false, "{p}");
    // tdmrep.json asked once for the origin, robots.txt once.
    assert_eq!(web.count("sig.test", "/.well-known/tdmrep.json"), 1);
    assert_eq!(web.count("sig.test", "/robots.txt"), 1);

    // The crawl marks the same pages (ai_use_policy: record stores them all).
    let out = ws.crawl(&["--max-duration", "20s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let crawled: std::collections::BTreeMap<String, bool> = ws
        .records()
        .iter()
        .map(|r| {
            (
                r["url"].as_str().unwrap().to_string(),
                r["ai_reserved"] == true,
            )
        })
        .collect();
    assert_eq!(crawled, want, "the crawl and the probe disagree");
}
