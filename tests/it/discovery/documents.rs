//! Integration tests: discover. Real-looking documents from `tests/fixtures/discover/`
//! through the public API, plus generated hostile ones (60,000 URLs, a gzip bomb).

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use chrono::Utc;
use scraper::discover::{
    self, DiscoverError, Kind, Limits, Listed, Listing, Parsed, kind_from_url, newer_than, sniff,
};
use scraper::url::{self, Url};

fn fixture(name: &str) -> Vec<u8> {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests",
        "fixtures",
        "discover",
        name,
    ]
    .iter()
    .collect();
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn u(s: &str) -> Url {
    url::parse(s).unwrap()
}

fn parse_fixture(kind: Kind, doc_url: &str, name: &str) -> Parsed {
    discover::parse(kind, &u(doc_url), &fixture(name), &Limits::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn feed(parsed: Parsed) -> Vec<Listed> {
    assert_eq!(parsed.partial, None);
    assert_eq!(parsed.cut, 0);
    match parsed.listing {
        Listing::Feed(entries) => entries,
        other => panic!("expected a feed, got {other:?}"),
    }
}

/// (url, date as RFC 3339 with its offset, title)
fn rows(list: &[Listed]) -> Vec<(&str, Option<String>, Option<&str>)> {
    list.iter()
        .map(|l| {
            (
                l.url.as_str(),
                l.lastmod.map(|d| d.to_rfc3339()),
                l.title.as_deref(),
            )
        })
        .collect()
}

fn d(s: &str) -> Option<String> {
    Some(s.to_string())
}

#[test]
fn every_feed_flavour() {
    let rss2 = feed(parse_fixture(
        Kind::Feed,
        "https://lab.example/blog/feed/",
        "rss2.xml",
    ));
    assert_eq!(
        rows(&rss2),
        [
            (
                "https://lab.example/blog/2024/03/scaling-laws",
                d("2024-03-05T08:15:00+00:00"),
                Some("Scaling laws, revisited")
            ),
            (
                "https://lab.example/blog/2024/03/relative",
                d("2024-03-05T04:30:00+00:00"),
                Some("A relative link")
            ),
            (
                "https://lab.example/blog/notes/undated",
                None,
                Some("Undated note")
            ),
            (
                "https://lab.example/blog/2019/01/old",
                d("2019-01-02T08:00:00+00:00"),
                Some("Old news")
            ),
        ]
    );

    let atom = feed(parse_fixture(
        Kind::Feed,
        "https://news.example/atom.xml",
        "atom.xml",
    ));
    assert_eq!(
        rows(&atom),
        [
            (
                "https://news.example/2024/03/chips",
                d("2024-03-10T06:00:00+00:00"),
                Some("Chips & models")
            ),
            (
                "https://news.example/2024/03/updated-only",
                d("2024-03-08T04:30:00+00:00"),
                Some("Updated only")
            ),
        ]
    );

    let rdf = feed(parse_fixture(
        Kind::Feed,
        "https://old.example/index.rdf",
        "rss1.rdf",
    ));
    assert_eq!(
        rows(&rdf),
        [(
            "https://old.example/story-1",
            d("2024-02-29T17:00:00+00:00"),
            Some("Story one")
        )]
    );

    let old = feed(parse_fixture(
        Kind::Feed,
        "https://vintage.example/rss",
        "rss091.xml",
    ));
    assert_eq!(
        rows(&old),
        [("https://vintage.example/hello", None, Some("Hello"))]
    );

    let noversion = feed(parse_fixture(
        Kind::Feed,
        "https://noversion.example/feed",
        "rss-noversion.xml",
    ));
    assert_eq!(
        rows(&noversion),
        [(
            "https://noversion.example/still",
            d("2024-03-01T10:00:00+00:00"),
            Some("Still a feed")
        )]
    );

    let json = feed(parse_fixture(
        Kind::Feed,
        "https://json.example/feed.json",
        "feed.json",
    ));
    assert_eq!(
        rows(&json),
        [
            (
                "https://json.example/posts/1",
                d("2024-03-11T08:00:00+00:00"),
                Some("First")
            ),
            (
                "https://json.example/posts/2",
                d("2024-03-12T00:00:00+00:00"),
                None
            ),
        ]
    );
}

fn sitemap(parsed: Parsed) -> (Vec<Listed>, Vec<Listed>) {
    assert_eq!(parsed.partial, None);
    match parsed.listing {
        Listing::Sitemap { urls, sitemaps } => (urls, sitemaps),
        other => panic!("expected a sitemap, got {other:?}"),
    }
}

#[test]
fn sitemap_index_returns_children_and_itself() {
    let index_url = "https://site.example/sitemap_index.xml";
    let (urls, children) = sitemap(parse_fixture(Kind::Sitemap, index_url, "sitemap_index.xml"));
    assert!(urls.is_empty());
    let locs: Vec<&str> = children.iter().map(|c| c.url.as_str()).collect();
    assert_eq!(
        locs,
        [
            index_url,
            "https://site.example/post-sitemap1.xml",
            "https://site.example/post-sitemap2.xml",
            "https://site.example/news-sitemap.xml.gz",
        ]
    );
    // The engine detects the loop by comparing with the document's own URL.
    assert!(children.iter().any(|c| c.url == u(index_url)));

    // Choosing children under a cut-off: the fresh, the undated, and the newest one.
    let cutoff = scraper::date::parse_cutoff("2024-03-01", Utc::now()).unwrap();
    let picked: Vec<String> = discover::select_children(&children, cutoff, 1, 10)
        .into_iter()
        .map(|c| c.url.path().to_string())
        .collect();
    assert_eq!(
        picked,
        [
            "/sitemap_index.xml",
            "/news-sitemap.xml.gz",
            "/post-sitemap2.xml"
        ]
    );
}

#[test]
fn gzip_sitemap_by_magic_bytes() {
    let body = fixture("posts.xml.gz");
    let doc = u("https://site.example/posts.xml.gz");
    assert_eq!(
        sniff(&doc, Some("application/x-gzip"), &body),
        Some(Kind::Sitemap)
    );
    let (urls, _) =
        sitemap(discover::parse(Kind::Sitemap, &doc, &body, &Limits::default()).unwrap());
    assert_eq!(
        rows(&urls),
        [
            (
                "https://site.example/2024/03/new-model",
                d("2024-03-10T10:00:00+09:00"),
                None
            ),
            (
                "https://site.example/2024/02/older-model",
                d("2024-02-01T00:00:00+00:00"),
                None
            ),
            ("https://site.example/about", None, None),
        ]
    );
}

#[test]
fn text_sitemap() {
    let (urls, _) = sitemap(parse_fixture(
        Kind::Sitemap,
        "https://site.example/sitemap.txt",
        "sitemap.txt",
    ));
    let locs: Vec<&str> = urls.iter().map(|c| c.url.as_str()).collect();
    assert_eq!(
        locs,
        [
            "https://site.example/a",
            "https://site.example/b",
            "https://site.example/c?x=1"
        ]
    );
}

#[test]
fn news_sitemap_dates_and_titles() {
    let (urls, _) = sitemap(parse_fixture(
        Kind::Sitemap,
        "https://site.example/news-sitemap.xml",
        "news_sitemap.xml",
    ));
    assert_eq!(
        rows(&urls),
        [
            (
                "https://site.example/2024/03/11/gpu-shortage",
                // publication_date wins over lastmod, with the publisher's offset kept.
                d("2024-03-11T21:45:00-07:00"),
                Some("GPU shortage & what it means")
            ),
            (
                "https://site.example/2024/03/10/older?page=2&ref=a",
                d("2024-03-10T00:00:00+00:00"),
                Some("Older")
            ),
        ]
    );
}

#[test]
fn cutoff_filtering_keeps_undated_entries() {
    let mut entries = feed(parse_fixture(
        Kind::Feed,
        "https://lab.example/blog/feed/",
        "rss2.xml",
    ));
    // 2024-03-05T04:30Z (23:30 on the 4th in New York) is kept: the cut-off is an instant.
    let cutoff = scraper::date::parse_cutoff("2024-03-05", Utc::now()).unwrap();
    assert_eq!(newer_than(&mut entries, cutoff), 1);
    let kept: Vec<&str> = entries.iter().map(|e| e.url.path()).collect();
    assert_eq!(
        kept,
        [
            "/blog/2024/03/scaling-laws",
            "/blog/2024/03/relative",
            "/blog/notes/undated"
        ]
    );
    let cutoff = scraper::date::parse_cutoff("2024-03-05T08:00:00Z", Utc::now()).unwrap();
    assert_eq!(newer_than(&mut entries, cutoff), 1);
    assert_eq!(entries.len(), 2);
}

#[test]
fn billion_laughs_are_harmless() {
    let started = Instant::now();
    let (urls, _) = sitemap(parse_fixture(
        Kind::Sitemap,
        "https://site.example/sitemap.xml",
        "billion_laughs_sitemap.xml",
    ));
    assert_eq!(urls.len(), 1);
    assert!(
        urls[0].url.as_str().len() < 100,
        "entity expanded: {}",
        urls[0].url
    );

    let parsed = parse_fixture(
        Kind::Feed,
        "https://site.example/feed",
        "billion_laughs_feed.xml",
    );
    assert!(parsed.listing.len() <= 1);
    if let Listing::Feed(entries) = &parsed.listing {
        for e in entries {
            assert!(e.title.as_deref().unwrap_or("").len() < 100);
        }
    }
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn gzip_bomb_stops_at_the_cap() {
    let body = fixture("bomb.xml.gz"); // about 200 MB once decoded
    let limits = Limits {
        max_urls: 50_000,
        max_decoded_bytes: 16 * 1024 * 1024,
    };
    let started = Instant::now();
    let parsed = discover::parse(
        Kind::Sitemap,
        &u("https://site.example/s.xml.gz"),
        &body,
        &limits,
    )
    .unwrap();
    // The entry before the padding is kept; the rest is refused with a size error.
    assert_eq!(parsed.listing.len(), 1);
    assert_eq!(
        parsed.partial,
        Some(DiscoverError::TooLarge {
            limit: 16 * 1024 * 1024
        })
    );
    assert!(started.elapsed() < Duration::from_secs(20));

    // The same as a feed: an error, not an allocation of 200 MB.
    let err = discover::parse(
        Kind::Feed,
        &u("https://site.example/feed.gz"),
        &gzip(&[b'<'; 1]),
        &limits,
    );
    assert!(err.is_err());
    let mut bomb_feed = b"<rss version=\"2.0\"><channel>".to_vec();
    bomb_feed.resize(limits.max_decoded_bytes as usize + 10, b' ');
    let err = discover::parse(
        Kind::Feed,
        &u("https://site.example/feed.gz"),
        &gzip(&bomb_feed),
        &limits,
    )
    .unwrap_err();
    assert_eq!(
        err,
        DiscoverError::TooLarge {
            limit: limits.max_decoded_bytes
        }
    );
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

#[test]
fn sixty_thousand_urls_give_the_first_fifty_thousand() {
    let mut xml = String::from(r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"#);
    for i in 0..60_000 {
        xml.push_str(&format!(
            "<url><loc>https://big.example/p/{i}</loc><lastmod>2024-01-01</lastmod></url>\n"
        ));
    }
    xml.push_str("</urlset>");
    let parsed = discover::parse(
        Kind::Sitemap,
        &u("https://big.example/sitemap.xml"),
        xml.as_bytes(),
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(parsed.cut, 10_000);
    assert_eq!(parsed.partial, None);
    let (urls, _) = match parsed.listing {
        Listing::Sitemap { urls, sitemaps } => (urls, sitemaps),
        other => panic!("{other:?}"),
    };
    assert_eq!(urls.len(), 50_000);
    assert_eq!(urls[49_999].url.as_str(), "https://big.example/p/49999");
}

#[test]
fn hostile_and_wrong_documents() {
    let doc = u("https://site.example/sitemap.xml");
    let mut deep = String::from("<urlset>");
    deep.push_str(&"<a>".repeat(100_000));
    let mut deep_feed = String::from("<rss version=\"2.0\"><channel><item>");
    deep_feed.push_str(&"<a>".repeat(100_000));
    deep_feed.push_str(&"</a>".repeat(100_000));
    deep_feed.push_str("<link>https://site.example/deep</link></item></channel></rss>");
    let mut garbage = Vec::new();
    let mut x: u32 = 12345;
    for _ in 0..100_000 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        garbage.push((x >> 16) as u8);
    }
    let table: Vec<(&str, Vec<u8>)> = vec![
        (
            "html served as a sitemap",
            b"<!doctype html><html><body>Not found</body></html>".to_vec(),
        ),
        ("random bytes", garbage.clone()),
        (
            "random bytes behind a gzip header",
            [&[0x1f, 0x8b, 8, 0][..], &garbage].concat(),
        ),
        ("deeply nested junk, no entries", deep.into_bytes()),
        (
            "unclosed root",
            b"<urlset><url><loc>https://site.example/a</loc>".to_vec(),
        ),
        ("png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec()),
        ("feed with deeply nested junk", deep_feed.into_bytes()),
        (
            "utf-16 without a byte-order mark",
            "<urlset><url><loc>https://site.example/a</loc></url></urlset>"
                .encode_utf16()
                .flat_map(u16::to_le_bytes)
                .collect(),
        ),
    ];
    let started = Instant::now();
    for (name, body) in table {
        for kind in [Kind::Sitemap, Kind::Feed] {
            let result = discover::parse(kind, &doc, &body, &Limits::default());
            assert!(
                result
                    .as_ref()
                    .map_or(true, |p| p.listing.is_empty() || p.partial.is_some()),
                "{name} as {kind:?}: {result:?}"
            );
        }
    }
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn never_stored_as_articles() {
    // By URL before fetching, by Content-Type or content after.
    let table = [
        (
            "https://site.example/feed/",
            None,
            &b""[..],
            Some(Kind::Feed),
        ),
        (
            "https://site.example/sitemap-news.xml",
            None,
            b"",
            Some(Kind::Sitemap),
        ),
        (
            "https://site.example/latest",
            Some("application/rss+xml"),
            b"",
            Some(Kind::Feed),
        ),
        (
            "https://site.example/latest",
            Some("text/xml"),
            b"<?xml version='1.0'?><rss version='2.0'>",
            Some(Kind::Feed),
        ),
        (
            "https://site.example/2024/03/story",
            Some("text/html"),
            b"<!DOCTYPE html><html>",
            None,
        ),
    ];
    for (link, ct, body, want) in table {
        let link = u(link);
        let got = if body.is_empty() && ct.is_none() {
            kind_from_url(&link)
        } else {
            sniff(&link, ct, body)
        };
        assert_eq!(got, want, "{link}");
    }
}
