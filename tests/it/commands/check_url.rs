//! `scraper check-url` end to end: the real binary against the fixture web,
//! its report read line by line (redirects, Crawl-delay, the extractor's
//! decisions, the AI-use verdict), a feed reported as a listing, and a page
//! robots.txt disallows refused.

use crate::support::fixture::{Workspace, article_path, day, news_web_with, stderr};
use crate::support::web::Reply;

const SOURCES: &str = "  - {host: news.test, seeds: [http://news.test/]}";

fn rss(items: &[String]) -> String {
    let items: String = items
        .iter()
        .map(|l| format!("<item><title>{l}</title><link>http://news.test{l}</link></item>"))
        .collect();
    format!(
        "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>News</title>{items}</channel></rss>"
    )
}

fn check(ws: &Workspace, args: &[&str]) -> std::process::Output {
    let mut all = vec!["check-url", "--proxy", &ws.proxy];
    all.extend_from_slice(args);
    ws.command(&all).output().expect("run scraper")
}

#[test]
fn check_url_reports_redirects_crawl_delay_extraction_and_ai_use() {
    let web = news_web_with(|r| {
        (r.host == "news.test" && r.path == "/feed.xml").then(|| {
            Reply::bytes(
                "application/rss+xml",
                rss(&[article_path(1), article_path(2), article_path(3)]),
            )
        })
    });
    let ws = Workspace::new(&web, SOURCES, "");

    // A redirect chain to an article, under a robots.txt with a Crawl-delay.
    let out = check(&ws, &["http://news.test/old"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let line = |prefix: &str| {
        lines
            .iter()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no line starting {prefix:?} in:\n{text}"))
            .to_string()
    };
    let target = format!("http://news.test{}", article_path(100));
    // The hops that redirected, in order; the final URL is the report's URL.
    assert_eq!(
        lines[0], "redirects: http://news.test/old -> http://news.test/old2",
        "{text}"
    );
    assert_eq!(lines[1], "robots.txt Crawl-delay: 0.1s", "{text}");
    assert_eq!(line("URL:"), format!("URL:          {target}"));
    assert_eq!(line("Page:"), "Page:         an article");
    assert_eq!(
        line("Title:"),
        "Title:        OpenAI and DeepMind race to build a new large language model, part 100"
    );
    assert!(
        line("Date:").starts_with(&format!("Date:         {} (from ", day(100))),
        "{text}"
    );
    assert_eq!(
        line("Decision:"),
        "Decision:     would be stored (an article, and relevant)"
    );
    assert_eq!(
        line("AI-use:"),
        "AI-use:       no signals (tdmrep.json: 404)"
    );
    assert_eq!(
        lines.last().copied(),
        Some(
            "              decision: no AI-training reservation: stored if it is a relevant article"
        )
    );

    // The same page as JSON: the extract object plus the AI-use verdict.
    let out = check(&ws, &["--json", "http://news.test/old"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["url"], target.as_str(), "{v}");
    assert_eq!(v["is_article"], true, "{v}");
    assert_eq!(v["ai_reserved"], false, "{v}");
    assert_eq!(v["ai_signals"], serde_json::json!([]), "{v}");
    assert_eq!(v["tdmrep"], "404", "{v}");
    assert_eq!(v["robots_hash"].as_str().map(str::len), Some(16), "{v}");

    // A feed is a listing, never an article.
    let out = check(&ws, &["http://news.test/feed.xml"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "http://news.test/feed.xml\n  a Feed with 3 entries and 0 child sitemaps: never stored as an article\n"
    );
    let out = check(&ws, &["--json", "http://news.test/feed.xml"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"url": "http://news.test/feed.xml", "kind": "feed", "entries": 3, "sitemaps": 0, "is_article": false})
    );

    // robots.txt disallows it: an error naming the rule's outcome, nothing printed.
    let out = check(&ws, &["http://news.test/private/secret"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(
        stderr(&out).contains("robots.txt does not allow scraper-test/0.1"),
        "{}",
        stderr(&out)
    );
    if std::env::var_os("CHECK_URL_DUMP").is_some() {
        for args in [
            &["http://news.test/old"][..],
            &["--json", "http://news.test/old"],
            &["http://news.test/feed.xml"],
            &["--json", "http://news.test/feed.xml"],
        ] {
            let out = check(&ws, args);
            println!("=== {args:?}\n{}", String::from_utf8_lossy(&out.stdout));
        }
    }
}
