//! Table tests for [`parse`] on every feed flavour and the cut-off helpers.

use super::*;
use crate::url;

fn base() -> Url {
    url::parse("https://blog.ex.com/feed/").unwrap()
}

/// (url, lastmod as RFC 3339 in UTC, title) of each entry.
fn entries(body: &str) -> Vec<(String, Option<String>, Option<String>)> {
    let parsed = parse(Kind::Feed, &base(), body.as_bytes(), &Limits::default())
        .unwrap_or_else(|e| panic!("{e}: {body}"));
    let Listing::Feed(list) = parsed.listing else {
        panic!("not a feed: {body}");
    };
    list.into_iter()
        .map(|l| {
            (
                l.url.to_string(),
                l.lastmod.map(|d| d.with_timezone(&Utc).to_rfc3339()),
                l.title,
            )
        })
        .collect()
}

fn e(
    url: &str,
    date: Option<&str>,
    title: Option<&str>,
) -> (String, Option<String>, Option<String>) {
    (url.into(), date.map(String::from), title.map(String::from))
}

#[test]
fn feed_flavours() {
    let table: Vec<(&str, &str, Vec<_>)> = vec![
        (
            "rss 2.0 with a time zone",
            r#"<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>
               <item><title>First</title><link>https://blog.ex.com/a</link>
               <pubDate>Mon, 04 Mar 2024 23:30:00 -0500</pubDate></item>
               <item><title>Relative</title><link>/b</link></item></channel></rss>"#,
            vec![
                e(
                    "https://blog.ex.com/a",
                    Some("2024-03-05T04:30:00+00:00"),
                    Some("First"),
                ),
                e("https://blog.ex.com/b", None, Some("Relative")),
            ],
        ),
        (
            "rss without version (feed-rs 3.0 rejects it as is)",
            r#"<rss><channel><item><title>X</title><link>https://blog.ex.com/x</link>
               <pubDate>Tue, 05 Mar 2024 10:00:00 GMT</pubDate></item></channel></rss>"#,
            vec![e(
                "https://blog.ex.com/x",
                Some("2024-03-05T10:00:00+00:00"),
                Some("X"),
            )],
        ),
        (
            "rss 0.91",
            r#"<rss version="0.91"><channel><title>T</title><link>https://blog.ex.com/</link>
               <item><title>Old</title><link>https://blog.ex.com/old</link></item></channel></rss>"#,
            vec![e("https://blog.ex.com/old", None, Some("Old"))],
        ),
        (
            "rss 0.94",
            r#"<rss version="0.94"><channel><item><link>https://blog.ex.com/c</link></item></channel></rss>"#,
            vec![e("https://blog.ex.com/c", None, None)],
        ),
        (
            "rss 2.0 guid permalink and dc:date",
            r#"<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel>
               <item><guid isPermaLink="true">https://blog.ex.com/g</guid>
               <dc:date>2024-03-06T08:00:00+01:00</dc:date></item></channel></rss>"#,
            vec![e(
                "https://blog.ex.com/g",
                Some("2024-03-06T07:00:00+00:00"),
                None,
            )],
        ),
        (
            "rss 1.0 (RDF)",
            r#"<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
                 xmlns:dc="http://purl.org/dc/elements/1.1/">
               <channel rdf:about="https://blog.ex.com/"><title>T</title></channel>
               <item rdf:about="https://blog.ex.com/r"><title>R</title><link>https://blog.ex.com/r</link>
               <dc:date>2024-03-07T12:00:00Z</dc:date></item></rdf:RDF>"#,
            vec![e(
                "https://blog.ex.com/r",
                Some("2024-03-07T12:00:00+00:00"),
                Some("R"),
            )],
        ),
        (
            "atom: alternate link preferred, published over updated",
            r#"<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><id>x</id><updated>2024-03-08T00:00:00Z</updated>
               <entry><title type="html">A &amp;amp; B</title><id>tag:1</id>
               <link rel="self" href="https://blog.ex.com/api/1"/>
               <link rel="alternate" type="text/html" href="https://blog.ex.com/atom-1"/>
               <published>2024-03-08T09:00:00+09:00</published><updated>2024-03-09T00:00:00Z</updated></entry>
               <entry><title>Only updated</title><id>tag:2</id><link href="atom-2"/>
               <updated>2024-03-09T00:00:00Z</updated></entry></feed>"#,
            vec![
                e(
                    "https://blog.ex.com/atom-1",
                    Some("2024-03-08T00:00:00+00:00"),
                    Some("A & B"),
                ),
                e(
                    "https://blog.ex.com/feed/atom-2",
                    Some("2024-03-09T00:00:00+00:00"),
                    Some("Only updated"),
                ),
            ],
        ),
        (
            "json feed",
            r#"{"version": "https://jsonfeed.org/version/1.1", "title": "T",
                "items": [{"id": "1", "url": "https://blog.ex.com/j", "title": "J",
                           "date_published": "2024-03-10T10:00:00-07:00"},
                          {"id": "2", "content_text": "no url"}]}"#,
            vec![e(
                "https://blog.ex.com/j",
                Some("2024-03-10T17:00:00+00:00"),
                Some("J"),
            )],
        ),
        (
            "non-http links dropped",
            r#"<rss version="2.0"><channel><item><link>mailto:x@ex.com</link></item>
               <item><link>javascript:alert(1)</link></item></channel></rss>"#,
            vec![],
        ),
    ];
    for (name, body, want) in table {
        assert_eq!(entries(body), want, "{name}");
    }
}

#[test]
fn content_decides_over_the_hint() {
    let sitemap = "<urlset><url><loc>https://ex.com/a</loc></url></urlset>";
    let parsed = parse(Kind::Feed, &base(), sitemap.as_bytes(), &Limits::default()).unwrap();
    assert!(matches!(parsed.listing, Listing::Sitemap { .. }));
    let feed =
        r#"<rss version="2.0"><channel><item><link>https://ex.com/a</link></item></channel></rss>"#;
    let parsed = parse(Kind::Sitemap, &base(), feed.as_bytes(), &Limits::default()).unwrap();
    assert!(matches!(parsed.listing, Listing::Feed(ref v) if v.len() == 1));
}

#[test]
fn not_listings_are_errors() {
    let table: [(&str, &[u8]); 7] = [
        (
            "html",
            b"<!DOCTYPE html><html><body><a href='/x'>x</a></body></html>",
        ),
        ("html without doctype", b"  <html><head></head></html>"),
        ("binary", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0"),
        (
            "other xml",
            b"<?xml version='1.0'?><svg xmlns='http://www.w3.org/2000/svg'/>",
        ),
        ("empty", b"   \n"),
        ("json that is not a feed", b"{\"hello\": 1}"),
        (
            "truncated feed",
            b"<rss version=\"2.0\"><channel><item><link>https://ex.com/a</li",
        ),
    ];
    for (name, body) in table {
        for kind in [Kind::Feed, Kind::Sitemap, Kind::Page] {
            assert!(
                parse(kind, &base(), body, &Limits::default()).is_err(),
                "{name} as {kind:?}"
            );
        }
    }
}

#[test]
fn feed_url_cap() {
    let mut rss = String::from("<rss version=\"2.0\"><channel>");
    for i in 0..30 {
        rss.push_str(&format!("<item><link>https://ex.com/{i}</link></item>"));
    }
    rss.push_str("</channel></rss>");
    let limits = Limits {
        max_urls: 20,
        ..Limits::default()
    };
    let parsed = parse(Kind::Feed, &base(), rss.as_bytes(), &limits).unwrap();
    assert_eq!((parsed.listing.len(), parsed.cut), (20, 10));
}

fn listed(url: &str, date: Option<&str>) -> Listed {
    Listed {
        url: url::parse(url).unwrap(),
        lastmod: date.map(|d| crate::date::parse_datetime(d).unwrap()),
        title: None,
        modified: None,
    }
}

#[test]
fn cutoff_keeps_undated_and_newer() {
    let cutoff = crate::date::parse_cutoff("2024-03-05", Utc::now()).unwrap();
    let mut list = vec![
        listed("https://ex.com/old", Some("2024-03-04T23:59:59Z")),
        // 2024-03-04T20:00-05:00 is 2024-03-05T01:00Z: newer, though its local day is older.
        listed("https://ex.com/tz", Some("2024-03-04T20:00:00-05:00")),
        listed("https://ex.com/edge", Some("2024-03-05T00:00:00Z")),
        listed("https://ex.com/undated", None),
        // 2024-03-05T00:30+01:00 is 2024-03-04T23:30Z: older.
        listed("https://ex.com/tz-old", Some("2024-03-05T00:30:00+01:00")),
    ];
    let mut all = list.clone();
    assert_eq!(newer_than(&mut all, None), 0);
    assert_eq!(newer_than(&mut list, cutoff), 2);
    let kept: Vec<&str> = list.iter().map(|l| l.url.path()).collect();
    assert_eq!(kept, ["/tz", "/edge", "/undated"]);
}

#[test]
fn child_selection() {
    let cutoff = crate::date::parse_cutoff("2024-06-01", Utc::now()).unwrap();
    let children = vec![
        listed("https://ex.com/posts-1.xml", Some("2023-01-01")),
        listed("https://ex.com/posts-9.xml", Some("2024-01-01")),
        listed("https://ex.com/posts-12.xml", Some("2024-02-01")),
        listed("https://ex.com/fresh.xml", Some("2024-06-02")),
        listed("https://ex.com/pages-2.xml", None),
        listed("https://ex.com/pages-10.xml", None),
    ];
    let pick = |newest, max| -> Vec<String> {
        select_children(&children, cutoff, newest, max)
            .into_iter()
            .map(|l| l.url.path().trim_start_matches('/').to_string())
            .collect()
    };
    assert_eq!(pick(1, 10), ["pages-10.xml", "pages-2.xml", "fresh.xml"]);
    // The newest two by date are taken even though the index says they are old.
    assert_eq!(
        pick(3, 10),
        [
            "pages-10.xml",
            "pages-2.xml",
            "fresh.xml",
            "posts-12.xml",
            "posts-9.xml"
        ]
    );
    assert_eq!(pick(3, 2), ["pages-10.xml", "pages-2.xml"]);
    // Index dates all stale, none undated: still the most recent ones.
    let stale = &children[..3];
    let got: Vec<String> = select_children(stale, cutoff, 2, 10)
        .into_iter()
        .map(|l| l.url.path().to_string())
        .collect();
    assert_eq!(got, ["/posts-12.xml", "/posts-9.xml"]);
    // Without a cut-off everything is taken, up to the cap.
    assert_eq!(select_children(&children, None, 0, 100).len(), 6);
}

/// Every fixture, cut short at many points and with bytes flipped, through both
/// readers and the sniff: errors or partial results, never a panic.
#[test]
fn mangled_fixtures_never_panic() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/discover");
    let limits = Limits {
        max_urls: 100,
        max_decoded_bytes: 1 << 20,
    };
    let doc = url::parse("https://ex.com/feed.xml").unwrap();
    let mut rand = crate::xorshift::XorShift64::new(0x9e37_79b9_7f4a_7c15);
    let mut next = move || rand.next_u64();
    let mut runs = 0;
    for file in std::fs::read_dir(&dir).unwrap() {
        let path = file.unwrap().path();
        if path.file_name().is_some_and(|n| n == "bomb.xml.gz") {
            continue;
        }
        let body = std::fs::read(&path).unwrap();
        let mut variants: Vec<Vec<u8>> = (0..body.len())
            .step_by((body.len() / 40).max(1))
            .map(|cut| body[..cut].to_vec())
            .collect();
        for _ in 0..120 {
            let mut mangled = body.clone();
            for _ in 0..1 + next() % 4 {
                let at = (next() % mangled.len() as u64) as usize;
                mangled[at] = match next() % 4 {
                    0 => b'<',
                    1 => b'&',
                    2 => 0xff,
                    _ => next() as u8,
                };
            }
            variants.push(mangled);
        }
        for variant in variants {
            for kind in [Kind::Feed, Kind::Sitemap] {
                let _ = parse(kind, &doc, &variant, &limits);
                runs += 1;
            }
            let _ = sniff(&doc, Some("application/xml"), &variant);
        }
    }
    assert!(runs > 500, "{runs}");
}
