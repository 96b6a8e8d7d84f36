//! Fuzzing on stable: property tests that feed URL normalisation, robots.txt,
//! feeds, sitemaps and the HTML extractor random and half-structured input
//! and require that nothing panics (plus a few properties, such as
//! normalisation being idempotent). Cases are few and inputs small, so each
//! target runs in a few seconds.
//!
//! The corpus under `tests/fixtures/fuzz/<target>/` (one input per file: odd
//! cases found by hand or by these tests) is replayed by
//! `corpus_replays_without_panics`. To keep a failing input, save it there.

use std::path::Path;

use chrono::NaiveDate;
use proptest::prelude::*;

use scraper::config::Keywords;
use scraper::discover::{self, Limits};
use scraper::extract;
use scraper::frontier::Kind;
use scraper::net::Robots;
use scraper::relevance::Rule;
use scraper::url::{self, Url};

fn base() -> Url {
    Url::parse("https://news.example.com/section/page.html").expect("base URL")
}

fn limits() -> Limits {
    Limits {
        max_urls: 1000,
        max_decoded_bytes: 1 << 20,
    }
}

fn today() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 29).expect("a valid day")
}

fn rule() -> Rule {
    Rule::new(&Keywords::default())
}

/// URL normalisation: never panics; a normalised URL normalises to itself;
/// the seen key ignores what it promises to ignore.
fn url_target(input: &[u8]) {
    let text = String::from_utf8_lossy(input);
    let b = base();
    if let Some(u) = url::resolve(&b, &text) {
        assert!(matches!(u.scheme(), "http" | "https"), "{u}");
        let again = url::parse(u.as_str()).expect("a normalised URL parses again");
        assert_eq!(again, u, "normalisation is not idempotent");
        let _ = url::seen_hash(&u);
        let _ = url::host_key(&u);
        let _ = url::domain(u.host_str().unwrap_or(""));
    }
    if let Some(u) = url::parse(&text) {
        assert_eq!(url::parse(u.as_str()), Some(u.clone()));
        assert_eq!(
            url::seen_key(&u),
            url::seen_key(&url::parse(u.as_str()).unwrap())
        );
    }
}

fn robots_target(input: &[u8]) {
    let r = Robots::parse(input, "scraper", 200);
    for p in ["/", "/private/x", "/a?b=c", "/%E2%82%AC", "/*$"] {
        if let Ok(u) = base().join(p) {
            let _ = r.allowed(&u);
        }
    }
    let _ = r.crawl_delay;
}

fn feed_target(input: &[u8]) {
    let b = base();
    let _ = discover::sniff(&b, Some("application/rss+xml"), input);
    let _ = discover::parse(Kind::Feed, &b, input, &limits());
}

fn sitemap_target(input: &[u8]) {
    let b = base();
    let _ = discover::sniff(&b, Some("application/xml"), input);
    if let Ok(p) = discover::parse(Kind::Sitemap, &b, input, &limits())
        && let discover::Listing::Sitemap { urls, sitemaps } = &p.listing
    {
        assert!(urls.len() + sitemaps.len() <= 2 * limits().max_urls);
    }
}

fn html_target(input: &[u8]) {
    let page = extract::extract(input, None, Some(&base()), &rule(), today());
    if let Some(d) = page.date {
        assert!(d <= today(), "a date after today: {d}");
    }
    let _ = extract::extract(input, Some("x-unknown"), None, &rule(), today());
}

type Target = fn(&[u8]);

const TARGETS: [(&str, Target); 5] = [
    ("url", url_target),
    ("robots", robots_target),
    ("feed", feed_target),
    ("sitemap", sitemap_target),
    ("html", html_target),
];

#[test]
fn corpus_replays_without_panics() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz");
    let mut replayed = 0;
    for (name, target) in TARGETS {
        let dir = root.join(name);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{}: empty corpus", dir.display());
        for f in files {
            let bytes = std::fs::read(&f).expect("corpus file");
            let result = std::panic::catch_unwind(|| target(&bytes));
            assert!(result.is_ok(), "{name}: {} panics", f.display());
            replayed += 1;
        }
    }
    eprintln!("fuzz corpus: {replayed} inputs replayed");
}

/// Pieces that make half-valid documents of each kind.
fn pieces(kind: &str) -> Vec<&'static str> {
    match kind {
        "url" => vec![
            "http://",
            "https://",
            "HTTP://",
            "ftp://",
            "javascript:",
            "//",
            "/",
            "../",
            "./",
            "..",
            "?",
            "#",
            "&",
            "=",
            "%",
            "%2F",
            "%zz",
            "@",
            ":",
            ":80",
            ":443",
            ":0",
            ":99999",
            "[::1]",
            "127.0.0.1",
            "xn--",
            "ex.com",
            "EX.com.",
            "www.",
            "é",
            "€",
            "\u{0}",
            " ",
            "\t",
            "\\",
            "utm_source=x",
            "page=2",
            "index.html",
            ";jsessionid=1",
        ],
        "robots" => vec![
            "User-agent: *\n",
            "User-agent: scraper\n",
            "Disallow: /\n",
            "Disallow: /private\n",
            "Allow: /\n",
            "Allow: /*.html$\n",
            "Disallow: /*?\n",
            "Crawl-delay: 5\n",
            "Crawl-delay: -1\n",
            "Crawl-delay: 1e309\n",
            "Sitemap: https://ex.com/s.xml\n",
            "Sitemap: not a url\n",
            "# comment\n",
            "\n",
            "\r\n",
            ":",
            "*",
            "$",
            "%",
            "\u{feff}",
            "Disallow:\n",
            "User-agent:\n",
        ],
        "feed" => vec![
            "<?xml version=\"1.0\"?>",
            "<rss version=\"2.0\">",
            "<rss>",
            "</rss>",
            "<channel>",
            "</channel>",
            "<item>",
            "</item>",
            "<title>",
            "</title>",
            "<link>",
            "</link>",
            "https://ex.com/a",
            "<pubDate>",
            "</pubDate>",
            "Mon, 01 Jan 2024 00:00:00 GMT",
            "Fri, 31 Dec 9999 23:59:59 GMT",
            "<feed xmlns=\"http://www.w3.org/2005/Atom\">",
            "</feed>",
            "<entry>",
            "</entry>",
            "<link href=\"/b\"/>",
            "<![CDATA[",
            "]]>",
            "&amp;",
            "&lol;",
            "<!DOCTYPE x [<!ENTITY lol \"lol\">]>",
            "<",
            ">",
            "\"",
            "xml:base=\"/x/\"",
        ],
        "sitemap" => vec![
            "<?xml version=\"1.0\"?>",
            "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">",
            "</urlset>",
            "<sitemapindex>",
            "</sitemapindex>",
            "<url>",
            "</url>",
            "<sitemap>",
            "</sitemap>",
            "<loc>",
            "</loc>",
            "https://ex.com/a",
            "/relative",
            "<lastmod>",
            "</lastmod>",
            "2024-02-30",
            "9999-12-31",
            "2024-05-01T25:00:00Z",
            "<news:publication_date>",
            "</news:publication_date>",
            "<![CDATA[",
            "]]>",
            "&amp;",
            "&lol9;",
            "<",
            ">",
        ],
        _ => vec![
            "<!doctype html>",
            "<html>",
            "</html>",
            "<head>",
            "<title>",
            "</title>",
            "<body>",
            "<article>",
            "</article>",
            "<main>",
            "<div>",
            "</div>",
            "<p>",
            "</p>",
            "<table>",
            "<td>",
            "<svg>",
            "<math>",
            "<template>",
            "<script>",
            "</script>",
            "<style>",
            "<nav>",
            "<a href=\"/x\">",
            "</a>",
            "<time datetime=\"2024-05-01\">",
            "<meta property=\"article:published_time\" content=\"9999-01-01\">",
            "<meta property=\"og:type\" content=\"article\">",
            "<meta charset=\"x-foo\">",
            "<script type=\"application/ld+json\">{\"datePublished\":",
            "\"2024-13-45\"}",
            "Artificial intelligence and large language model news. ",
            "&nbsp;",
            "&#0;",
            "&#xD800;",
            "\u{0}",
            "é",
            "<!--",
            "-->",
            "<![CDATA[",
            "]]>",
            "<base href=\"//x\">",
        ],
    }
}

/// Half-structured input: a sequence of pieces of that kind with random bytes between.
fn structured(kind: &'static str) -> impl Strategy<Value = Vec<u8>> {
    let p = pieces(kind);
    let n = p.len();
    prop::collection::vec(
        (
            0..n,
            prop::collection::vec(any::<u8>(), 0..4),
            any::<bool>(),
        ),
        0..60,
    )
    .prop_map(move |parts| {
        let mut out = Vec::new();
        for (i, noise, with_noise) in parts {
            out.extend_from_slice(p[i].as_bytes());
            if with_noise {
                out.extend_from_slice(&noise);
            }
        }
        out
    })
}

fn input(kind: &'static str) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..512),
        structured(kind),
        structured(kind),
    ]
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 200,
        max_shrink_iters: 200,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn url_normalisation_never_panics(bytes in input("url")) {
        url_target(&bytes);
    }

    #[test]
    fn robots_parsing_never_panics(bytes in input("robots")) {
        robots_target(&bytes);
    }

    #[test]
    fn feed_parsing_never_panics(bytes in input("feed")) {
        feed_target(&bytes);
    }

    #[test]
    fn sitemap_parsing_never_panics(bytes in input("sitemap")) {
        sitemap_target(&bytes);
    }

    #[test]
    fn extraction_never_panics(bytes in input("html")) {
        html_target(&bytes);
    }
}
