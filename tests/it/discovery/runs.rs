//! Discovery end to end: the real `scraper crawl` against a generated news web
//! (feeds, a sitemap index named only in robots.txt with gzip children, a news
//! sitemap) that publishes new articles between runs. Assertions come from the
//! server's request log, its answers (200 or 304) and the files the runs leave.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use crate::support::news_web::Site;

use crate::support::fixture::{Workspace, read_jsonl, stderr};
use crate::support::web::{Reply, gzip};

fn summary(ws: &Workspace) -> serde_json::Value {
    let text =
        std::fs::read_to_string(ws.data().join("state/last_run.json")).expect("last_run.json");
    serde_json::from_str(&text).expect("a JSON summary")
}

fn stored_urls(ws: &Workspace) -> HashSet<String> {
    ws.records()
        .iter()
        .map(|r| r["url"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Story paths requested (any host), as (host, n).
fn stories(web: &crate::support::web::Web) -> Vec<(String, usize)> {
    web.log()
        .iter()
        .filter_map(|r| {
            let n = r.path.rsplit_once("/story-")?.1.parse().ok()?;
            Some((r.host.clone(), n))
        })
        .collect()
}

fn events_of<'a>(events: &'a [serde_json::Value], kind: &str) -> Vec<&'a serde_json::Value> {
    events.iter().filter(|e| e["event"] == kind).collect()
}

#[test]
fn second_auto_run_fetches_only_what_is_new() {
    let site = Site::new(&["ai.test", "wire.test"], 24, 10, true);
    let web = site.start(|_| None);
    let ws = Workspace::new(
        &web,
        "  - {host: ai.test, seeds: [http://ai.test/feed.xml]}\n  - {host: wire.test, seeds: [http://wire.test/atom.xml]}",
        "min_host_gap: 20ms",
    );
    // First run: `auto` with no previous run means no cut-off.
    let out = ws.crawl(&["--min-lastmod", "auto", "--max-duration", "25s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let events = ws.events();
    let start = events_of(&events, "run_start")[0];
    assert!(start["min_lastmod"].is_null(), "{start}");
    // The sitemap index is named only in robots.txt; it and its children were read.
    for host in ["ai.test", "wire.test"] {
        assert_eq!(web.count(host, "/sitemap_index.xml"), 1, "{host} index");
        for k in 0..3 {
            assert_eq!(
                web.count(host, &format!("/sitemaps/posts-{k}.xml.gz")),
                1,
                "{host} child {k}"
            );
        }
        assert_eq!(web.count(host, "/sitemaps/news.xml"), 1);
    }
    // Every article is listed only in the sitemaps but for the newest few: all stored.
    let first = stored_urls(&ws);
    assert_eq!(first.len(), 48, "{first:?}");
    let first_start = summary(&ws)["last_success_started_at"]
        .as_str()
        .unwrap()
        .to_string();

    // The web publishes three stories on ai.test; wire.test stays as it was.
    site.publish("ai.test", 3);
    web.clear_log();
    site.clear_answers();
    let out = ws.crawl(&["--min-lastmod", "auto", "--max-duration", "25s"]);
    assert!(out.status.success(), "{}", stderr(&out));

    // The cut-off is the first run's start minus the one-day overlap.
    let events = ws.events();
    let cut = events_of(&events, "run_start")[0]["min_lastmod"]
        .as_str()
        .unwrap()
        .to_string();
    let cut = chrono::DateTime::parse_from_rfc3339(&cut).unwrap();
    let first_start = chrono::DateTime::parse_from_rfc3339(&first_start).unwrap();
    assert_eq!(first_start - cut, chrono::Duration::days(1));

    // New articles fetched once each, old ones never.
    let fetched = stories(&web);
    let new: Vec<(String, usize)> = (24..27).map(|n| ("ai.test".to_string(), n)).collect();
    for s in &new {
        assert_eq!(
            fetched.iter().filter(|f| *f == s).count(),
            1,
            "{s:?} in {fetched:?}"
        );
    }
    assert_eq!(fetched.len(), 3, "old articles fetched again: {fetched:?}");
    let all = stored_urls(&ws);
    assert_eq!(all.len(), 51);
    for n in 24..27 {
        assert!(all.contains(&format!("http://ai.test{}", site.path(n))));
    }
    // Unchanged feeds and sitemaps answered 304 to conditional requests.
    assert_eq!(
        site.statuses("wire.test", "/atom.xml"),
        [304],
        "Atom via If-Modified-Since"
    );
    // Children whose index `<lastmod>` is not newer than our full read of
    // them are not asked at all (this index's dates are stale: the child
    // holding ai.test's new stories is not asked either; the feed and the
    // news sitemap bring them).
    for host in ["wire.test", "ai.test"] {
        for k in 0..3 {
            let path = format!("/sitemaps/posts-{k}.xml.gz");
            assert!(site.statuses(host, &path).is_empty(), "{host}{path}");
        }
    }
    assert_eq!(site.statuses("wire.test", "/sitemaps/news.xml"), [304]);
    let s = summary(&ws);
    assert_eq!(s["hosts"]["wire.test"]["listings_unchanged"], 3, "{s}");
    // Changed ones were read in full: the feed and the (undated) news sitemap.
    assert_eq!(site.statuses("ai.test", "/feed.xml"), [200]);
    assert_eq!(site.statuses("ai.test", "/sitemaps/news.xml"), [200]);
    // The robots.txt Sitemap: line was used again, and nothing was requested twice.
    assert_eq!(web.count("ai.test", "/sitemap_index.xml"), 1);
    assert_eq!(web.count("wire.test", "/sitemap_index.xml"), 1);
    let targets: Vec<String> = web
        .log()
        .iter()
        .map(|r| format!("{}{}", r.host, r.target()))
        .collect();
    let unique: HashSet<&String> = targets.iter().collect();
    assert_eq!(
        unique.len(),
        targets.len(),
        "a URL was requested twice: {targets:?}"
    );
    // No article's own comment feed was read (in either run).
    assert!(web.log().iter().all(|r| !r.path.ends_with("/feed/")));
    // Non-hit pages seen yesterday-or-today (home, tag) are not due yet.
    assert_eq!(web.count("ai.test", "/"), 0);
    assert_eq!(web.count("ai.test", "/tag/ai"), 0);
    // The 304s are counted per host (the Atom feed and the news sitemap; the
    // three children were not asked at all).
    let s = summary(&ws);
    assert_eq!(s["hosts"]["wire.test"]["not_modified"], 2, "{s}");
    let too_old: u64 = events_of(&events, "discovery")
        .iter()
        .map(|e| e["too_old"].as_u64().unwrap_or(0))
        .sum();
    assert!(too_old > 0, "the cut-off dropped nothing");
}

#[test]
fn min_lastmod_date_skips_old_entries_and_old_pages_links() {
    // 20 stories spread over 2023 and 2024; a text sitemap lists two 2023
    // stories without dates.
    let site = Site::new(&["old.test"], 20, 10, false);
    let undated = [site.path(1), site.path(3)];
    let text = format!(
        "http://old.test{}\nhttp://old.test{}\n",
        undated[0], undated[1]
    );
    let web = site.start(move |r| (r.path == "/sitemap.txt").then(|| Reply::text(text.clone())));
    let ws = Workspace::new(
        &web,
        "  - {host: old.test, seeds: [http://old.test/feed.xml, http://old.test/sitemap.txt]}",
        "min_host_gap: 20ms",
    );
    let out = ws.crawl(&["--min-lastmod", "2024-01-01", "--max-duration", "25s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let cut = chrono::NaiveDate::from_ymd_opt(2024, 1, 1).unwrap();
    let fetched: HashSet<usize> = stories(&web).into_iter().map(|(_, n)| n).collect();
    for n in 0..20 {
        let new_enough = site.date(n).date_naive() >= cut;
        let listed_undated = n == 1 || n == 3;
        assert_eq!(
            fetched.contains(&n),
            new_enough || listed_undated,
            "story {n} ({})",
            site.date(n)
        );
    }
    // Links on pages older than the cut-off are not followed; on newer ones they are.
    assert_eq!(
        web.count("old.test", "/archive/2023"),
        0,
        "a 2023 page's links were followed"
    );
    assert_eq!(web.count("old.test", "/archive/2024"), 1);
    let first = ws.records().len();
    assert_eq!(first, fetched.len());

    // Undated entries are taken once: the next run fetches no story again.
    web.clear_log();
    let out = ws.crawl(&["--min-lastmod", "2024-01-01", "--max-duration", "25s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stories(&web).is_empty(), "{:?}", stories(&web));
    assert_eq!(ws.records().len(), first);
}

#[test]
fn feeds_and_sitemaps_are_never_stored_as_articles() {
    let site = Site::new(&["mix.test"], 6, 10, false);
    // Feeds at article-like URLs, with feed Content-Types; a feed and a sitemap
    // served as text/html. Each lists stories whose own pages are articles.
    let s2 = site.clone();
    let rss = move |ns: &[usize]| {
        let items: String = ns
            .iter()
            .map(|&n| format!("<item><title>OpenAI large language model story</title><link>http://mix.test{}</link><description>The artificial intelligence lab said its large language model, trained with machine learning at OpenAI and DeepMind, beats earlier AI systems on reasoning benchmarks.</description></item>", s2.path(n)))
            .collect();
        format!(
            "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>AI news</title><link>http://mix.test/</link><description>AI</description>{items}</channel></rss>"
        )
    };
    let s3 = site.clone();
    let atom_item = s3.path(2);
    let sitemap_item = s3.path(4);
    let web = site.start(move |r| match r.path.as_str() {
        "/2024/05/01/story-rss" => Some(Reply::bytes("application/rss+xml", rss(&[0, 1]))),
        "/2024/05/02/openai-model.html" => Some(Reply::bytes(
            "application/atom+xml",
            format!("<?xml version=\"1.0\"?><feed xmlns=\"http://www.w3.org/2005/Atom\"><title>AI</title><id>x</id><updated>2024-05-02T00:00:00Z</updated><entry><title>OpenAI large language model</title><id>y</id><updated>2024-05-02T00:00:00Z</updated><link href=\"http://mix.test{atom_item}\"/><summary>The artificial intelligence lab said its large language model beats AI systems.</summary></entry></feed>"),
        )),
        "/news/rss" => Some(Reply::html(rss(&[3]))),
        "/sitemap.xml" => Some(Reply::html(format!(
            "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>http://mix.test{sitemap_item}</loc></url></urlset>"
        ))),
        _ => None,
    });
    let seeds = [
        "http://mix.test/2024/05/01/story-rss",
        "http://mix.test/2024/05/02/openai-model.html",
        "http://mix.test/news/rss",
        "http://mix.test/sitemap.xml",
    ];
    let ws = Workspace::new(
        &web,
        &format!("  - {{host: mix.test, seeds: [{}]}}", seeds.join(", ")),
        "min_host_gap: 20ms",
    );
    let out = ws.crawl(&["--max-duration", "25s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stored = stored_urls(&ws);
    for s in seeds {
        assert!(!stored.contains(s), "{s} stored as an article");
        assert_eq!(
            web.count_exact("mix.test", s.trim_start_matches("http://mix.test")),
            1
        );
    }
    // What they listed was read and stored.
    for n in [0, 1, 2, 3, 4] {
        assert!(
            stored.contains(&format!("http://mix.test{}", site.path(n))),
            "story {n} not stored: {stored:?}"
        );
    }
    // Each was read as a listing.
    let events = ws.events();
    let read: HashSet<&str> = events_of(&events, "discovery")
        .iter()
        .filter_map(|e| e["url"].as_str())
        .collect();
    for s in seeds {
        assert!(read.contains(s), "{s} not read as a listing: {read:?}");
    }
}

#[test]
fn hostile_listings_are_warnings_and_the_run_goes_on() {
    let site = Site::new(&["bad.test"], 4, 10, false);
    let first = site.path(0);
    let bomb = {
        // A real urlset head, then 60 MiB of spaces in 1 MiB gzip members.
        let mut body = gzip(format!("<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"><url><loc>http://bad.test{first}</loc></url>").as_bytes());
        let member = gzip(&vec![b' '; 1 << 20]);
        for _ in 0..60 {
            body.extend_from_slice(&member);
        }
        body
    };
    let laughs = "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\"><!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\"><!ENTITY lol4 \"&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;\"><!ENTITY lol5 \"&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;\"><!ENTITY lol6 \"&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;\"><!ENTITY lol7 \"&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;\"><!ENTITY lol8 \"&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;\"><!ENTITY lol9 \"&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;\">]><rss version=\"2.0\"><channel><title>&lol9;</title><item><title>&lol9;</title><link>http://bad.test/&lol9;</link></item></channel></rss>";
    let index = |me: &str, children: &[&str]| {
        let items: String = children
            .iter()
            .map(|c| format!("<sitemap><loc>http://bad.test{c}</loc></sitemap>"))
            .collect();
        Reply::xml(format!(
            "<?xml version=\"1.0\"?><!-- {me} --><sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{items}</sitemapindex>"
        ))
    };
    let web = site.start(move |r| {
        let p = r.path.as_str();
        Some(match p {
            "/broken.rss" => Reply::bytes(
                "application/rss+xml",
                "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>AT&T news</title><item><title>One</title><link>http://bad.test/x1</link></item><item><title>Two & three</title><link>http://bad.te",
            ),
            "/garbage.rss" => Reply::bytes("application/xml", (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect::<Vec<u8>>()),
            "/page-sitemap.xml" => Reply::html("<!doctype html><html><head><title>Sitemap</title></head><body><a href=/x>x</a></body></html>"),
            "/empty-sitemap.xml" => Reply::xml(""),
            "/laughs.rss" => Reply::bytes("application/rss+xml", laughs),
            "/bomb-sitemap.xml.gz" => Reply::bytes("application/x-gzip", bomb.clone()),
            "/sitemap-loop-a.xml" => index("a", &["/sitemap-loop-a.xml", "/sitemap-loop-b.xml"]),
            "/sitemap-loop-b.xml" => index("b", &["/sitemap-loop-a.xml"]),
            p if p.starts_with("/sitemap-deep-") => {
                let d: usize = p["/sitemap-deep-".len()..].trim_end_matches(".xml").parse().ok()?;
                index("deep", &[&format!("/sitemap-deep-{}.xml", d + 1)])
            }
            _ => return None,
        })
    });
    let seeds = [
        "/broken.rss",
        "/garbage.rss",
        "/page-sitemap.xml",
        "/empty-sitemap.xml",
        "/laughs.rss",
        "/bomb-sitemap.xml.gz",
        "/sitemap-loop-a.xml",
        "/sitemap-deep-0.xml",
        "/feed.xml",
    ];
    let list: Vec<String> = seeds
        .iter()
        .map(|s| format!("http://bad.test{s}"))
        .collect();
    let ws = Workspace::new(
        &web,
        &format!("  - {{host: bad.test, seeds: [{}]}}", list.join(", ")),
        "min_host_gap: 20ms",
    );
    let started = Instant::now();
    let out = ws.crawl(&["--max-duration", "25s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
    let events = read_jsonl(&ws.data().join("state/crawl.log"));
    let warned: HashSet<String> = events_of(&events, "warning")
        .iter()
        .filter_map(|e| e["url"].as_str().map(str::to_string))
        .collect();
    for bad in [
        "/broken.rss",
        "/garbage.rss",
        "/page-sitemap.xml",
        "/empty-sitemap.xml",
        "/bomb-sitemap.xml.gz",
        "/sitemap-deep-2.xml",
    ] {
        assert!(
            warned.contains(&format!("http://bad.test{bad}")),
            "no warning for {bad}: {warned:?}"
        );
    }
    let s = summary(&ws);
    assert!(
        s["hosts"]["bad.test"]["bad_listings"].as_u64().unwrap() >= 6,
        "{s}"
    );
    // What the broken feed and the bomb held before they broke off was still taken.
    assert_eq!(web.count("bad.test", "/x1"), 1);
    // Loops are read once; nesting stops after three levels.
    assert_eq!(web.count("bad.test", "/sitemap-loop-a.xml"), 1);
    assert_eq!(web.count("bad.test", "/sitemap-loop-b.xml"), 1);
    for d in 0..3 {
        assert_eq!(web.count("bad.test", &format!("/sitemap-deep-{d}.xml")), 1);
    }
    assert_eq!(
        web.count("bad.test", "/sitemap-deep-3.xml"),
        0,
        "nesting went deeper than 3"
    );
    // No expanded entity reached the wire.
    assert!(web.log().iter().all(|r| r.target().len() < 200));
    // And the run went on: the good feed's stories were stored.
    let stored = stored_urls(&ws);
    for n in 0..4 {
        assert!(
            stored.contains(&format!("http://bad.test{}", site.path(n))),
            "story {n}"
        );
    }
    assert_eq!(events.last().unwrap()["stopped_by"], "exhausted");
}

#[test]
fn seeds_are_fetched_again_during_a_long_run() {
    // A 150 ms gap and 12 stories keep the run going for several seconds.
    let site = Site::new(&["slow.test"], 12, 20, false);
    let web = site.start(|_| None);
    let ws = Workspace::new(
        &web,
        "  - {host: slow.test, seeds: [http://slow.test/feed.xml]}",
        "min_host_gap: 150ms\nreseed_every_secs: 1",
    );
    let out = ws.crawl(&["--max-duration", "25s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let feed = site
        .answers()
        .into_iter()
        .filter(|a| a.path == "/feed.xml")
        .collect::<Vec<_>>();
    assert!(feed.len() >= 3, "feed fetched {} times", feed.len());
    assert_eq!(feed[0].status, 200);
    for a in &feed[1..] {
        assert!(a.conditional && a.status == 304, "{a:?}");
    }
    // The robots.txt sitemap is reseeded too.
    assert!(web.count("slow.test", "/sitemap_index.xml") >= 2);
    assert_eq!(ws.records().len(), 12);
}

#[test]
fn revisited_listing_pages_are_asked_conditionally_and_hits_never() {
    let site = Site::new(&["rev.test"], 6, 10, false);
    let web = site.start(|_| None);
    let ws = Workspace::new(
        &web,
        "  - {host: rev.test, seeds: [http://rev.test/feed.xml, http://rev.test/]}",
        "min_host_gap: 20ms\nrevisit_after_days: 0",
    );
    let out = ws.crawl(&["--max-duration", "25s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(ws.records().len(), 6);
    web.clear_log();
    site.clear_answers();
    let out = ws.crawl(&["--max-duration", "25s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // The tag page (a non-hit found by a link) is due again and asked with its validator...
    let tag: Vec<_> = site
        .answers()
        .into_iter()
        .filter(|a| a.path == "/tag/ai")
        .collect();
    assert_eq!(tag.len(), 1, "{tag:?}");
    assert!(tag[0].conditional && tag[0].status == 304, "{tag:?}");
    // ...the home page (no validator) is fetched again, stored articles never.
    assert_eq!(web.count("rev.test", "/"), 1);
    assert!(stories(&web).is_empty(), "{:?}", stories(&web));
}

#[test]
fn work_a_cut_short_run_listed_is_done_by_the_next_auto_run() {
    let site = Site::new(&["queue.test"], 30, 10, false);
    let web = site.start(|_| None);
    let ws = Workspace::new(
        &web,
        "  - {host: queue.test, seeds: [http://queue.test/feed.xml]}",
        "min_host_gap: 20ms",
    );
    // The budget runs out while child sitemaps and most listed stories are
    // still queued (robots.txt, the feed, the index, two children).
    let out = ws.crawl(&["--max-pages", "5"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let first = ws.records().len();
    assert!(first < 30, "{first}");
    // Child sitemaps were left unread. The watermark moves all the same: the
    // queue carries them, and a listing never read in full is cut off at
    // `crawl.min_lastmod` (none here), not at the watermark. Stories listed
    // but not fetched are carried over.
    let s = summary(&ws);
    assert!(s["unread_listings"].as_u64().unwrap() > 0, "{s}");
    assert!(s["last_success_started_at"].is_string(), "{s}");
    assert!(
        s["hosts"]["queue.test"]["backlog"].as_u64().unwrap() > 0,
        "{s}"
    );
    let out = ws.crawl(&["--min-lastmod", "auto", "--max-duration", "25s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stored_urls(&ws).len(), 30, "listed work was dropped");
    // That run read everything; the next run is cheap.
    let s = summary(&ws);
    assert_eq!(s["unread_listings"], 0, "{s}");
    assert_eq!(s["hosts"]["queue.test"]["backlog"], 0, "{s}");
    web.clear_log();
    let out = ws.crawl(&["--min-lastmod", "auto", "--max-duration", "25s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stories(&web).is_empty(), "{:?}", stories(&web));
}
