//! Unit tests for the sitemap readers.

use super::*;

fn base() -> Url {
    url::parse("https://ex.com/sitemap.xml").unwrap()
}

fn limits() -> Limits {
    Limits {
        max_urls: 1000,
        max_decoded_bytes: 1 << 20,
    }
}

/// URL and RFC 3339 date of each entry.
type Strings = Vec<(String, Option<String>)>;

/// (urls, sitemaps) as strings.
fn read(xml: &str) -> (Strings, Strings) {
    let parsed = read_xml(xml.as_bytes(), &base(), &limits()).unwrap();
    assert_eq!(parsed.partial, None, "{}", short(xml));
    let Listing::Sitemap { urls, sitemaps } = parsed.listing else {
        panic!("not a sitemap");
    };
    let strings = |list: Vec<Listed>| {
        list.into_iter()
            .map(|l| (l.url.to_string(), l.lastmod.map(|d| d.to_rfc3339())))
            .collect::<Vec<_>>()
    };
    (strings(urls), strings(sitemaps))
}

fn short(xml: &str) -> &str {
    xml.get(..200).unwrap_or(xml)
}

fn one(xml: &str) -> (String, Option<String>) {
    let (urls, _) = read(xml);
    assert_eq!(urls.len(), 1, "{}: {urls:?}", short(xml));
    urls.into_iter().next().unwrap()
}

const NS: &str = r#"xmlns="http://www.sitemaps.org/schemas/sitemap/0.9""#;

#[test]
fn url_entries_table() {
    let table = [
        // plain, with a W3C date in another time zone
        (
            format!("<urlset {NS}><url><loc>https://ex.com/a</loc><lastmod>2024-03-04T23:30:00-05:00</lastmod></url></urlset>"),
            ("https://ex.com/a", Some("2024-03-04T23:30:00-05:00")),
        ),
        // no namespace at all, date only, whitespace around
        (
            "<urlset><url>\n  <loc>\n https://ex.com/b \n</loc>\n <lastmod> 2024-03-04 </lastmod></url></urlset>".into(),
            ("https://ex.com/b", Some("2024-03-04T00:00:00+00:00")),
        ),
        // CDATA, escaped and bare ampersands
        (
            format!("<urlset {NS}><url><loc><![CDATA[https://ex.com/c?x=1&y=2]]></loc></url></urlset>"),
            ("https://ex.com/c?x=1&y=2", None),
        ),
        (
            format!("<urlset {NS}><url><loc>https://ex.com/d?x=1&amp;y=2&#38;z=3</loc></url></urlset>"),
            ("https://ex.com/d?x=1&y=2&z=3", None),
        ),
        (
            format!("<urlset {NS}><url><loc>https://ex.com/e?x=1&y=2</loc></url></urlset>"),
            ("https://ex.com/e?x=1&y=2", None),
        ),
        // relative URL resolved against the document; W3C year-month date
        (
            format!("<urlset {NS}><url><loc>/news/f</loc><lastmod>2024-03</lastmod></url></urlset>"),
            ("https://ex.com/news/f", Some("2024-03-01T00:00:00+00:00")),
        ),
        // prefixed sitemap namespace; unparsable date is dropped, not fatal
        (
            r#"<s:urlset xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9"><s:url><s:loc>https://ex.com/g</s:loc><s:lastmod>yesterday</s:lastmod></s:url></s:urlset>"#.into(),
            ("https://ex.com/g", None),
        ),
        // image:loc inside the url is not the page
        (
            format!(r#"<urlset {NS} xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"><url><image:image><image:loc>https://cdn.ex.com/i.jpg</image:loc></image:image><loc>https://ex.com/h</loc></url></urlset>"#),
            ("https://ex.com/h", None),
        ),
        // fractional seconds and Z
        (
            format!("<urlset {NS}><url><loc>https://ex.com/i</loc><lastmod>2024-03-04T10:00:00.123Z</lastmod></url></urlset>"),
            ("https://ex.com/i", Some("2024-03-04T10:00:00.123+00:00")),
        ),
    ];
    for (xml, (url, date)) in table {
        let got = one(&xml);
        assert_eq!(got, (url.to_string(), date.map(String::from)), "{xml}");
    }
}

#[test]
fn news_publication_date_wins_over_lastmod() {
    let xml = r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
      <url><loc>https://ex.com/story</loc><lastmod>2024-05-01T00:00:00Z</lastmod>
        <news:news><news:publication><news:name>Ex</news:name><news:language>en</news:language></news:publication>
          <news:publication_date>2024-04-30T18:00:00+02:00</news:publication_date>
          <news:title>Models &amp; Mayhem</news:title></news:news></url>
    </urlset>"#;
    let parsed = read_xml(xml.as_bytes(), &base(), &limits()).unwrap();
    let Listing::Sitemap { urls, .. } = parsed.listing else {
        panic!()
    };
    assert_eq!(urls.len(), 1);
    assert_eq!(
        urls[0].lastmod.unwrap().to_rfc3339(),
        "2024-04-30T18:00:00+02:00"
    );
    assert_eq!(urls[0].title.as_deref(), Some("Models & Mayhem"));
    // An undeclared `news:` prefix (a common publisher bug) is still understood.
    let sloppy = "<urlset><url><loc>https://ex.com/s</loc><news:news><news:publication_date>2024-04-30</news:publication_date></news:news></url></urlset>";
    assert_eq!(one(sloppy).1.as_deref(), Some("2024-04-30T00:00:00+00:00"));
}

#[test]
fn sitemap_index_lists_children_including_itself() {
    let xml = format!(
        "<sitemapindex {NS}><sitemap><loc>https://ex.com/sitemap.xml</loc></sitemap>\
         <sitemap><loc>posts-2.xml.gz</loc><lastmod>2024-01-02</lastmod></sitemap></sitemapindex>"
    );
    let (urls, sitemaps) = read(&xml);
    assert!(urls.is_empty());
    assert_eq!(
        sitemaps,
        vec![
            ("https://ex.com/sitemap.xml".to_string(), None),
            (
                "https://ex.com/posts-2.xml.gz".to_string(),
                Some("2024-01-02T00:00:00+00:00".to_string())
            ),
        ]
    );
}

#[test]
fn non_http_and_empty_locs_are_dropped() {
    let xml = format!(
        "<urlset {NS}><url><loc>mailto:a@ex.com</loc></url><url><loc>ftp://ex.com/f</loc></url>\
         <url><loc>  </loc></url><url></url><url/><url><loc>https://ex.com/ok</loc></url></urlset>"
    );
    assert_eq!(read(&xml).0, vec![("https://ex.com/ok".to_string(), None)]);
}

#[test]
fn url_cap_counts_what_it_cuts() {
    let mut xml = format!("<urlset {NS}>");
    for i in 0..25 {
        xml.push_str(&format!("<url><loc>https://ex.com/{i}</loc></url>"));
    }
    xml.push_str("</urlset>");
    let small = Limits {
        max_urls: 10,
        ..limits()
    };
    let parsed = read_xml(xml.as_bytes(), &base(), &small).unwrap();
    assert_eq!(parsed.listing.len(), 10);
    assert_eq!(parsed.cut, 15);
    assert_eq!(parsed.partial, None);
}

#[test]
fn broken_documents() {
    // Broken after two entries: partial result.
    let xml = format!(
        "<urlset {NS}><url><loc>https://ex.com/1</loc></url><url><loc>https://ex.com/2</loc></url><url><loc>https://ex.com/3</lo"
    );
    let parsed = read_xml(xml.as_bytes(), &base(), &limits()).unwrap();
    assert_eq!(parsed.listing.len(), 2);
    assert!(parsed.partial.is_some());
    // Broken before any entry, or not a sitemap at all: errors.
    let table = [
        "<urlset><url><loc>https://ex.com/1<",
        "<html><body>hi</body></html>",
        "<rss version=\"2.0\"></rss>",
        "just text",
        "",
    ];
    for bad in table {
        assert!(
            read_xml(bad.as_bytes(), &base(), &limits()).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn entities_are_not_expanded() {
    let mut xml =
        String::from("<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n<!ENTITY lol \"lol\">\n");
    xml.push_str("<!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n");
    for i in 2..10 {
        let p = i - 1;
        xml.push_str(&format!(
            "<!ENTITY lol{i} \"&lol{p};&lol{p};&lol{p};&lol{p};&lol{p};&lol{p};&lol{p};&lol{p};&lol{p};&lol{p};\">\n"
        ));
    }
    xml.push_str(&format!(
        "]>\n<urlset {NS}><url><loc>https://ex.com/a&lol9;</loc></url></urlset>"
    ));
    assert_eq!(one(&xml).0, "https://ex.com/a");
}

fn nested(depth: usize) -> String {
    let mut xml = format!("<urlset {NS}><url><loc>https://ex.com/a</loc></url>");
    xml.push_str(&"<x>".repeat(depth));
    xml.push_str(&"</x>".repeat(depth));
    xml.push_str("<url><loc>https://ex.com/b</loc></url></urlset>");
    xml
}

#[test]
fn deep_nesting_is_cheap() {
    let started = std::time::Instant::now();
    // Deep but within quick-xml's nesting limit: read through.
    assert_eq!(read(&nested(50_000)).0.len(), 2);
    // Deeper than the limit: what came before, plus a warning.
    let parsed = read_xml(nested(200_000).as_bytes(), &base(), &limits()).unwrap();
    assert_eq!(parsed.listing.len(), 1);
    assert!(parsed.partial.is_some());
    assert!(started.elapsed().as_secs() < 10);
}

#[test]
fn text_sitemaps() {
    let text = "https://ex.com/a\r\n\nhttp://ex.com/b?x=1\n  https://ex.com/c  \nnot a url\nmailto:x@y.z\n/rel\n";
    let parsed = read_text(text.as_bytes(), &base(), &limits()).unwrap();
    let Listing::Sitemap { urls, sitemaps } = parsed.listing else {
        panic!()
    };
    assert!(sitemaps.is_empty());
    let got: Vec<String> = urls.iter().map(|l| l.url.to_string()).collect();
    assert_eq!(
        got,
        [
            "https://ex.com/a",
            "http://ex.com/b?x=1",
            "https://ex.com/c",
            "https://ex.com/rel"
        ]
    );
    assert!(read_text(b"Not Found\n", &base(), &limits()).is_err());
}
