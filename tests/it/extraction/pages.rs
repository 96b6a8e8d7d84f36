//! Integration tests: extract (whole pages through `extract::extract`, the
//! `scraper extract` binary, hostile inputs, and the fuzz corpus replay).

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use chrono::NaiveDate;
use scraper::config::Config;
use scraper::extract::{self, Page};
use scraper::record::DateSource;
use scraper::relevance::Rule;
use scraper::url::Url;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rule() -> Rule {
    let config = Config::load(&root().join("config.yml")).expect("shipped config loads");
    Rule::new(&config.keywords)
}

fn today() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 29).unwrap()
}

fn run(html: &str, url: Option<&str>) -> Page {
    let url = url.map(|u| Url::parse(u).unwrap());
    extract::extract(html.as_bytes(), None, url.as_ref(), &rule(), today())
}

const CHROME: &str = r#"
<header><a href="/">Home</a> <a href="/ai">AI</a> <a href="/ai/news">AI news</a></header>
<nav><ul><li><a href="/ai">AI</a></li><li><a href="/ai/tools">AI tools</a></li>
<li><a href="/ai/policy">AI policy</a></li><li><a href="/ai/research">AI research</a></li>
<li><a href="/ai/chips">AI chips</a></li><li><a href="/ai/startups">AI startups</a></li></ul></nav>"#;
const FOOTER: &str = r#"
<aside class="related"><h3>Related</h3><ul>
<li><a href="/a1">AI model beats doctors</a></li><li><a href="/a2">OpenAI news</a></li>
<li><a href="/a3">AI chatbot update</a></li><li><a href="/a4">Generative AI for all</a></li></ul></aside>
<footer><a href="/ai">AI</a> <a href="/ai">AI</a> <a href="/ai">AI</a> <a href="/ai">AI</a>
<a href="/ai">AI</a> <a href="/ai">AI</a> <a href="/ai">AI</a> <a href="/ai">AI</a>
<a href="/ai">AI</a> <a href="/ai">AI</a> <a href="/ai">AI</a> <a href="/ai">AI</a></footer>"#;

fn paragraph(topic: &str) -> String {
    format!(
        "<p>{topic} The company said the change would roll out over the coming weeks, starting \
         with customers in North America and Europe, and that prices would stay the same for \
         existing subscribers who signed up before the end of the year.</p>\n"
    )
}

fn article_page(title: &str, lede: &str, body_topic: &str, meta: &str) -> String {
    let mut body = format!("<p>{lede}</p>\n");
    for _ in 0..8 {
        body.push_str(&paragraph(body_topic));
    }
    format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>{title} | Example News</title>
<meta property="og:title" content="{title}">
<meta property="og:type" content="article">
<meta name="robots" content="index, follow, noai">
<link rel="canonical" href="https://news.example.com/2024/03/04/story?utm_source=x">
<link rel="alternate" type="application/rss+xml" href="/feed.xml">
{meta}
</head><body>{CHROME}
<main><article><h1>{title}</h1><p class="byline">By Jane Doe</p>{body}</article></main>
{FOOTER}</body></html>"#
    )
}

#[test]
fn a_real_ai_story_is_an_article_and_relevant() {
    let html = article_page(
        "OpenAI releases a new large language model",
        "OpenAI on Tuesday released a large language model that it says reasons better.",
        "The AI model powers ChatGPT.",
        r#"<meta property="article:published_time" content="2024-03-04T23:30:00-05:00">"#,
    );
    let page = run(&html, Some("https://news.example.com/2024/03/04/story"));
    assert_eq!(
        page.title.as_deref(),
        Some("OpenAI releases a new large language model")
    );
    assert_eq!(
        page.date,
        NaiveDate::from_ymd_opt(2024, 3, 4),
        "the page's own day"
    );
    assert_eq!(page.date_source, Some(DateSource::PublishedTime));
    assert_eq!(page.article_signal, Some("og_type"));
    assert!(page.is_article, "prose ratio {}", page.prose_ratio);
    assert!(page.relevance.relevant, "{:?}", page.relevance);
    assert_eq!(page.lang.as_deref(), Some("en"));
    assert_eq!(page.byline.as_deref(), Some("Jane Doe"));
    assert!(page.text.starts_with("OpenAI on Tuesday"), "{}", page.text);
    assert!(
        !page.text.contains("Related"),
        "chrome left out: {}",
        page.text
    );
    assert_eq!(
        page.canonical_url.as_ref().map(Url::as_str),
        Some("https://news.example.com/2024/03/04/story")
    );
    assert_eq!(page.feeds[0].as_str(), "https://news.example.com/feed.xml");
    assert!(page.robots_meta.contains(&"noai".to_string()));
    assert!(page.links.iter().all(|u| u.scheme() == "https"));
    assert!(
        page.links
            .iter()
            .any(|u| u.as_str() == "https://news.example.com/ai/tools")
    );
}

#[test]
fn a_tech_story_whose_chrome_says_ai_twenty_times_is_not_relevant() {
    let html = article_page(
        "The new phone lasts two days",
        "The new phone has a bigger battery and a brighter screen than last year's model.",
        "Reviewers liked the battery.",
        r#"<script type="application/ld+json">{"@type":"NewsArticle","datePublished":"2024-05-01"}</script>"#,
    );
    assert!(html.matches(">AI").count() >= 20);
    let page = run(&html, None);
    assert!(page.is_article);
    assert_eq!(page.date_source, Some(DateSource::Jsonld));
    assert_eq!(page.relevance.strong_mentions, 0, "{}", page.text);
    assert!(!page.relevance.relevant);
}

#[test]
fn a_listing_dense_with_ai_headlines_is_not_an_article() {
    let mut items = String::new();
    for i in 0..30 {
        items.push_str(&format!(
            "<li><h2><a href=\"/ai/{i}\">OpenAI and Anthropic ship a new AI model, number {i}</a></h2></li>"
        ));
    }
    let html = format!(
        "<html><head><title>AI news</title><meta property=\"og:type\" content=\"website\"></head>\
         <body>{CHROME}<main><h1>AI news</h1><ul>{items}</ul></main></body></html>"
    );
    let page = run(&html, Some("https://news.example.com/ai"));
    assert!(
        !page.is_article,
        "signal {:?} ratio {}",
        page.article_signal, page.prose_ratio
    );
}

#[test]
fn an_ai_story_naming_its_topic_only_in_the_body_is_relevant() {
    let mut body = String::from("<p>Maria Lopez used to spend her evenings answering email.</p>");
    // Six paragraphs in different words (the same paragraph six times would
    // be boilerplate, counted once).
    for d in [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
    ] {
        body.push_str(&format!(
            "<p>On {d} a chatbot drafted the replies. The large language model used on {d} \
             was tuned by the district, which says the AI it ran on {d} saved teachers hours.</p>"
        ));
    }
    let html = format!(
        "<html><head><title>The assistant that writes a teacher's email</title></head><body>\
         <article>{body}</article></body></html>"
    );
    let page = run(
        &html,
        Some("https://news.example.com/2025/01/02/teacher-email"),
    );
    assert_eq!(page.date_source, Some(DateSource::Url));
    assert_eq!(page.article_signal, Some("dated_url"));
    assert!(page.is_article);
    assert!(page.relevance.relevant, "{:?}", page.relevance);
    assert!(!page.relevance.strong_in_title_or_lede);
}

#[test]
fn implausible_dates_are_skipped_and_scripts_are_never_read() {
    let html = r#"<html><head>
<meta property="article:published_time" content="2099-01-01T00:00:00Z">
<script>var published = "March 4, 2021";</script>
<style>/* 2022-02-02 */</style></head><body><article>
<p class="date">Posted on 5 May 2023</p><p>Text of the story, long enough to be a paragraph of prose for sure.</p>
</article></body></html>"#;
    let page = run(html, None);
    assert_eq!(page.date, NaiveDate::from_ymd_opt(2023, 5, 5));
    assert_eq!(page.date_source, Some(DateSource::Byline));
}

/// The ordinary page [`hostile_inputs_give_a_result`] measures work against.
const BASELINE_BYTES: usize = 256 << 10;
/// How many times an ordinary page's work (per byte) a hostile input may take.
const WORK_MARGIN: f64 = 10.0;

/// Hostile inputs (deep nesting, unclosed inline tags, 50 MB, binary, bad
/// UTF-8, thousands of self-links) give a result, with work linear in their
/// size: bounded against an ordinary page measured in the same run, not
/// against the wall clock.
#[test]
fn hostile_inputs_give_a_result() {
    let rule = rule();
    let deep = format!("{}x{}", "<div>".repeat(100_000), "</div>".repeat(100_000));
    let inline = "<b><i>".repeat(50_000);
    let mut big = String::from("<html><body>");
    let para = paragraph("Big.");
    while big.len() < 50 << 20 {
        big.push_str(&para);
    }
    let binary: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let invalid = b"<html><body><p>caf\xe9 \xff\xfe\xc3\x28 ok</p></body></html>".to_vec();
    // Links to the page itself are read beside for a date: many of them in
    // one large undated block must not make that quadratic.
    let self_links = format!(
        r#"<html><head><link rel="canonical" href="https://a.test/p/"></head><body><div>{}</div></body></html>"#,
        format!(
            r#"<a href="https://a.test/p/">again</a>{}"#,
            paragraph("Loop.")
        )
        .repeat(20_000)
    );
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("deep", deep.into_bytes()),
        ("inline", inline.into_bytes()),
        ("big", big.into_bytes()),
        ("binary", binary),
        ("invalid", invalid),
        ("self_links", self_links.into_bytes()),
        ("empty", Vec::new()),
    ];
    // An ordinary page of 256 KiB, the unit of work: extracted before and
    // after each case, so a loaded machine slows both alike.
    let mut ordinary = String::from("<html><body><article>");
    while ordinary.len() < BASELINE_BYTES {
        ordinary.push_str(&para);
    }
    ordinary.push_str("</article></body></html>");
    let unit = || {
        let start = Instant::now();
        extract::extract(ordinary.as_bytes(), None, None, &rule, today());
        start.elapsed()
    };
    for (name, bytes) in cases {
        let before = unit();
        let start = Instant::now();
        let page = extract::extract(&bytes, None, None, &rule, today());
        let spent = start.elapsed();
        let base = before.max(unit());
        // Linear in the input's size: as much as ordinary pages of its size
        // would take, within a margin for noise; a quadratic path would be
        // hundreds of times over.
        let units = (bytes.len() as f64 / BASELINE_BYTES as f64).max(1.0);
        let allowed = base.mul_f64(units * WORK_MARGIN);
        assert!(
            spent <= allowed,
            "{name} ({} bytes) took {spent:?}; an ordinary page of 256 KiB took {base:?}",
            bytes.len()
        );
        if name == "deep" {
            assert!(page.depth_capped);
            assert!(page.text.contains('x'));
        }
        if name == "invalid" {
            assert!(page.text.contains("ok"), "{}", page.text);
        }
    }
}

/// Every file in `fuzz/corpus/extract` goes through the extractor without a panic.
#[test]
fn fuzz_corpus_replays() {
    let dir = root().join("fuzz/corpus/extract");
    let rule = rule();
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("fuzz corpus exists") {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let url = Url::parse("https://example.com/2024/01/02/x").unwrap();
        let _ = extract::extract(&bytes, Some("utf-8"), Some(&url), &rule, today());
        let _ = extract::extract(&bytes, None, None, &rule, today());
        n += 1;
    }
    assert!(n >= 5, "corpus has {n} files");
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_scraper"));
    c.arg("--config").arg(root().join("config.yml"));
    c
}

#[test]
fn the_extract_command_prints_one_object_per_input_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let html = article_page(
        "OpenAI releases a new large language model",
        "OpenAI on Tuesday released a large language model that it says reasons better.",
        "The AI model powers ChatGPT.",
        "",
    );
    let plain = dir.path().join("a.html");
    std::fs::write(&plain, &html).unwrap();
    let gz = dir.path().join("b.html.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, html.as_bytes()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let missing = dir.path().join("missing.html");
    let out = bin()
        .arg("extract")
        .args([&plain, &missing, &gz])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["path"], plain.display().to_string());
    assert!(lines[1]["error"].is_string());
    assert_eq!(
        lines[2]["title"],
        "OpenAI releases a new large language model"
    );
    for field in [
        "url",
        "title",
        "text",
        "date",
        "date_source",
        "lang",
        "byline",
        "canonical_url",
        "is_article",
        "prose_ratio",
        "relevance",
        "keywords",
        "links",
        "elapsed_ms",
    ] {
        assert!(lines[0].get(field).is_some(), "missing {field}");
    }
    assert_eq!(lines[0]["relevance"]["relevant"], true);
    assert_eq!(lines[0]["date"], "2024-03-04");
    assert_eq!(lines[0]["date_source"], "url");
}

/// (The readable `check-url` report of a page is the binary's: `src/cli/print/page.rs`.)
#[test]
fn to_json_names_the_url() {
    let html = article_page(
        "OpenAI releases a new large language model",
        "OpenAI on Tuesday released a large language model that it says reasons better.",
        "The AI model powers ChatGPT.",
        "",
    );
    let page = run(&html, Some("https://news.example.com/x"));
    let json = extract::to_json("https://news.example.com/x", &page);
    assert_eq!(json["url"], "https://news.example.com/x");
}
