//! Is it a feed or a sitemap? Decided from the first bytes of the document (its
//! root element), the `Content-Type`, or, before anything is fetched, the URL.

use std::cmp::Ordering;

use super::{Kind, decode};
use crate::url::Url;

/// How many decoded bytes the content sniff looks at. Enough to get past an XML
/// declaration, comments, stylesheet instructions and a modest DOCTYPE.
pub(super) const HEAD_LEN: usize = 8 * 1024;

/// What the first bytes of a document look like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Shape {
    /// `<urlset>` or `<sitemapindex>`.
    Sitemap,
    /// `<rss>`, `<rdf:RDF>`, `<feed>` (Atom).
    Feed,
    /// A JSON object (JSON Feed candidates).
    Json,
    /// XML whose root is another element, or lies beyond the head (`None`).
    Xml(Option<String>),
    Html,
    Binary,
    /// Anything else: a text sitemap candidate.
    Text,
    Empty,
}

/// Classify a document from its decoded head.
pub(super) fn shape(head: &[u8]) -> Shape {
    let text = decode::head_text(head);
    let text = text.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if text.is_empty() {
        return Shape::Empty;
    }
    if text.contains('\0') {
        return Shape::Binary;
    }
    if text.starts_with('{') {
        return Shape::Json;
    }
    if !text.starts_with('<') {
        let controls = text
            .chars()
            .take(512)
            .filter(|c| c.is_control() && !c.is_whitespace())
            .count();
        return if controls > 8 {
            Shape::Binary
        } else {
            Shape::Text
        };
    }
    match root_element(text) {
        Root::Name(name) => {
            let local = name
                .rsplit(':')
                .next()
                .unwrap_or(&name)
                .to_ascii_lowercase();
            match local.as_str() {
                "urlset" | "sitemapindex" => Shape::Sitemap,
                "rss" | "rdf" | "feed" => Shape::Feed,
                "html" => Shape::Html,
                _ => Shape::Xml(Some(name)),
            }
        }
        Root::HtmlDoctype => Shape::Html,
        Root::NotFound => Shape::Xml(None),
    }
}

enum Root {
    Name(String),
    HtmlDoctype,
    NotFound,
}

/// The first element's qualified name, skipping the prolog (declaration,
/// processing instructions, comments, DOCTYPE with its internal subset).
fn root_element(mut s: &str) -> Root {
    loop {
        s = s.trim_start();
        if let Some(rest) = s.strip_prefix("<?") {
            let Some(end) = rest.find("?>") else {
                return Root::NotFound;
            };
            s = &rest[end + 2..];
        } else if let Some(rest) = s.strip_prefix("<!--") {
            let Some(end) = rest.find("-->") else {
                return Root::NotFound;
            };
            s = &rest[end + 3..];
        } else if let Some(rest) = s.strip_prefix("<!") {
            let is_html = rest
                .get(..12)
                .is_some_and(|d| d.eq_ignore_ascii_case("doctype html"));
            if is_html {
                return Root::HtmlDoctype;
            }
            // Skip to the `>` that closes the DOCTYPE, past any `[...]` subset.
            let close = match (rest.find('['), rest.find('>')) {
                (Some(open), Some(gt)) if open < gt => rest[open..]
                    .find("]")
                    .and_then(|end| rest[open + end..].find('>').map(|gt| open + end + gt)),
                (_, gt) => gt,
            };
            let Some(close) = close else {
                return Root::NotFound;
            };
            s = &rest[close + 1..];
        } else if let Some(rest) = s.strip_prefix('<') {
            let name: String = rest
                .chars()
                .take_while(|c| !c.is_whitespace() && !matches!(c, '>' | '/'))
                .take(64)
                .collect();
            return if name.is_empty() {
                Root::NotFound
            } else {
                Root::Name(name)
            };
        } else {
            return Root::NotFound;
        }
    }
}

/// Is this response a feed or a sitemap? The body's root element decides when it
/// is recognisable (an HTML body is never a listing, whatever the headers say);
/// then the `Content-Type`; then the URL pattern ([`kind_from_url`]).
/// `None` means "an ordinary page".
pub fn sniff(url: &Url, content_type: Option<&str>, body: &[u8]) -> Option<Kind> {
    let head = decode::head(body, HEAD_LEN).unwrap_or_default();
    match shape(&head) {
        Shape::Sitemap => return Some(Kind::Sitemap),
        Shape::Feed => return Some(Kind::Feed),
        Shape::Html | Shape::Binary => return None,
        Shape::Json => {
            let text = decode::head_text(&head);
            return text.contains("jsonfeed.org/version").then_some(Kind::Feed);
        }
        Shape::Xml(Some(_)) => return None,
        Shape::Xml(None) | Shape::Text | Shape::Empty => {}
    }
    let mime = content_type
        .and_then(|ct| ct.split(';').next())
        .map(|m| m.trim().to_ascii_lowercase())
        .unwrap_or_default();
    match mime.as_str() {
        "application/rss+xml"
        | "application/atom+xml"
        | "application/rdf+xml"
        | "application/feed+json" => return Some(Kind::Feed),
        "text/html" | "application/xhtml+xml" => return None,
        _ => {}
    }
    // Ambiguous content (`application/xml`, plain text, a root past the head):
    // the URL decides, so a text body is a (text) sitemap only where the URL says so.
    kind_from_url(url)
}

/// Before fetching: does the URL look like a feed or a sitemap? Looks at the
/// path's last segments and a few well-known query forms; conservative, so that
/// an article whose slug merely mentions "rss" is not taken for a feed.
pub fn kind_from_url(url: &Url) -> Option<Kind> {
    let path = url.path().to_ascii_lowercase();
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let last = segments.last().copied().unwrap_or("");
    let file = last.strip_suffix(".gz").unwrap_or(last);

    // `sitemap.xml`, `sitemap_index.xml`, `post-sitemap2.xml`, `sitemap.txt`, `.xml.gz`;
    // a bare `/sitemap` is usually an HTML page of links, so it is left to the sniff.
    let parent = segments.len().checked_sub(2).map_or("", |i| segments[i]);
    if file.contains("sitemap") && (file.ends_with(".xml") || file.ends_with(".txt")) {
        return Some(Kind::Sitemap);
    }
    if matches!(parent, "sitemap" | "sitemaps") && file.ends_with(".xml") {
        return Some(Kind::Sitemap);
    }
    if last.ends_with(".xml.gz") {
        return Some(Kind::Sitemap);
    }

    let feed_names = [
        "feed",
        "feeds",
        "rss",
        "rss2",
        "atom",
        "rdf",
        "feed.xml",
        "rss.xml",
        "atom.xml",
        "index.xml",
        "feed.json",
        "feed.rss",
        "feed.atom",
        "rss2.xml",
        "index.rss",
    ];
    if feed_names.contains(&last)
        || [".rss", ".atom", ".rdf"]
            .iter()
            .any(|ext| last.ends_with(ext))
    {
        return Some(Kind::Feed);
    }
    // WordPress: `/feed/atom/`, `/feed/rss2/`; Blogger: `/feeds/posts/default`.
    if matches!(parent, "feed" | "feeds")
        && matches!(last, "atom" | "rss" | "rss2" | "rdf" | "default" | "json")
    {
        return Some(Kind::Feed);
    }
    if path.starts_with("/feeds/posts/") {
        return Some(Kind::Feed);
    }
    if (last.ends_with(".xml") || last.ends_with(".json"))
        && ["rss", "feed", "atom"].iter().any(|w| last.contains(w))
    {
        return Some(Kind::Feed);
    }
    if url.host_str().is_some_and(|h| h.starts_with("feeds.")) {
        return Some(Kind::Feed);
    }
    for (key, value) in url.query_pairs() {
        if key == "feed" && matches!(value.as_ref(), "rss" | "rss2" | "atom" | "rdf") {
            return Some(Kind::Feed);
        }
    }
    None
}

/// Is `feed`, announced by the article at `page` (`<link rel=alternate>`),
/// that article's own comment feed? Ask only for articles: a section page's
/// feed sits under its path too, and is worth reading. Comment feeds (WordPress `/2024/05/story/feed/`,
/// `?feed=comments-rss2`, `/comments/feed/`) list comments, not articles, and
/// following one per new article would double a daily run's cost.
pub(crate) fn is_comment_feed(page: &Url, feed: &Url) -> bool {
    if feed.host_str() != page.host_str() {
        return false;
    }
    let path = feed.path().to_ascii_lowercase();
    if path.split('/').any(|s| s == "comments")
        || feed
            .query_pairs()
            .any(|(k, v)| k == "feed" && v.starts_with("comments"))
    {
        return true;
    }
    let own = page.path().trim_end_matches('/');
    !own.is_empty() && path.starts_with(&format!("{}/", own.to_ascii_lowercase()))
}

/// Compare strings with runs of digits compared as numbers (`a9` < `a12`).
pub(super) fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a.first(), b.first()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let da = a.iter().take_while(|c| c.is_ascii_digit()).count();
                let db = b.iter().take_while(|c| c.is_ascii_digit()).count();
                let na = trim_zeros(&a[..da]);
                let nb = trim_zeros(&b[..db]);
                let ord = na.len().cmp(&nb.len()).then_with(|| na.cmp(nb));
                if ord != Ordering::Equal {
                    return ord;
                }
                a = &a[da..];
                b = &b[db..];
            }
            (Some(x), Some(y)) => {
                if x != y {
                    return x.cmp(y);
                }
                a = &a[1..];
                b = &b[1..];
            }
        }
    }
}

fn trim_zeros(digits: &[u8]) -> &[u8] {
    let zeros = digits.iter().take_while(|&&c| c == b'0').count();
    &digits[zeros..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::url;

    #[test]
    fn comment_feeds_table() {
        let table = [
            (
                "https://ex.com/2024/05/story/",
                "https://ex.com/2024/05/story/feed/",
                true,
            ),
            (
                "https://ex.com/2024/05/story",
                "https://ex.com/2024/05/story/feed",
                true,
            ),
            (
                "https://ex.com/2024/05/story/",
                "https://ex.com/comments/feed/",
                true,
            ),
            (
                "https://ex.com/2024/05/story/",
                "https://ex.com/?feed=comments-rss2",
                true,
            ),
            (
                "https://ex.com/2024/05/story/",
                "https://ex.com/feed/",
                false,
            ),
            (
                "https://ex.com/2024/05/story/",
                "https://ex.com/category/ai/feed/",
                false,
            ),
            ("https://ex.com/", "https://ex.com/feed/", false),
            (
                "https://ex.com/2024/05/story/",
                "https://other.com/2024/05/story/feed/",
                false,
            ),
            (
                "https://ex.com/2024/05/story-2/",
                "https://ex.com/2024/05/story/feed/",
                false,
            ),
        ];
        for (page, feed, want) in table {
            let (p, f) = (url::parse(page).unwrap(), url::parse(feed).unwrap());
            assert_eq!(is_comment_feed(&p, &f), want, "{page} -> {feed}");
        }
    }

    #[test]
    fn urls_table() {
        let table = [
            ("https://ex.com/sitemap.xml", Some(Kind::Sitemap)),
            ("https://ex.com/sitemap_index.xml", Some(Kind::Sitemap)),
            ("https://ex.com/post-sitemap2.xml", Some(Kind::Sitemap)),
            (
                "https://ex.com/wp-sitemap-posts-post-1.xml",
                Some(Kind::Sitemap),
            ),
            ("https://ex.com/news-sitemap.xml.gz", Some(Kind::Sitemap)),
            ("https://ex.com/sitemap.txt", Some(Kind::Sitemap)),
            ("https://ex.com/sitemaps/2024-11.xml", Some(Kind::Sitemap)),
            ("https://ex.com/archive/2024.xml.gz", Some(Kind::Sitemap)),
            ("https://ex.com/sitemap", None),
            ("https://ex.com/sitemap.html", None),
            ("https://ex.com/feed", Some(Kind::Feed)),
            ("https://ex.com/feed/", Some(Kind::Feed)),
            ("https://ex.com/category/ai/feed/", Some(Kind::Feed)),
            ("https://ex.com/feed/atom/", Some(Kind::Feed)),
            ("https://ex.com/rss.xml", Some(Kind::Feed)),
            ("https://ex.com/index.xml", Some(Kind::Feed)),
            ("https://ex.com/blog/atom.xml", Some(Kind::Feed)),
            ("https://ex.com/feed.json", Some(Kind::Feed)),
            ("https://ex.com/news.rss", Some(Kind::Feed)),
            ("https://ex.com/feeds/posts/default", Some(Kind::Feed)),
            ("https://ex.com/blog-rss.xml", Some(Kind::Feed)),
            ("https://ex.com/?feed=rss2", Some(Kind::Feed)),
            ("https://feeds.ex.com/ex/tech", Some(Kind::Feed)),
            ("https://ex.com/2024/05/rss-is-not-dead", None),
            ("https://ex.com/2024/05/why-feeds-matter.html", None),
            ("https://ex.com/news/sitemaps-explained", None),
            ("https://ex.com/", None),
            ("https://ex.com/data.xml", None),
        ];
        for (u, want) in table {
            assert_eq!(kind_from_url(&url::parse(u).unwrap()), want, "{u}");
        }
    }

    #[test]
    fn sniff_table() {
        let page = url::parse("https://ex.com/page").unwrap();
        let sitemap_url = url::parse("https://ex.com/sitemap.txt").unwrap();
        let feed_url = url::parse("https://ex.com/feed/").unwrap();
        let rss = b"<?xml version=\"1.0\"?>\n<!-- hi --><?xml-stylesheet href=\"s.xsl\"?><rss version=\"2.0\">";
        type Row<'a> = (&'a Url, Option<&'a str>, &'a [u8], Option<Kind>);
        let table: Vec<Row> = vec![
            (&page, Some("text/html"), rss, Some(Kind::Feed)),
            (&page, None, b"<urlset xmlns='x'>", Some(Kind::Sitemap)),
            (
                &page,
                None,
                b"\xef\xbb\xbf<sitemapindex>",
                Some(Kind::Sitemap),
            ),
            (
                &page,
                None,
                b"<!DOCTYPE x [<!ENTITY a 'b'>]><feed xmlns='http://www.w3.org/2005/Atom'>",
                Some(Kind::Feed),
            ),
            (&page, None, b"<rdf:RDF xmlns:rdf='r'>", Some(Kind::Feed)),
            (
                &page,
                None,
                b"{\"version\": \"https://jsonfeed.org/version/1\", \"items\": []}",
                Some(Kind::Feed),
            ),
            (&page, Some("application/json"), b"{\"a\": 1}", None),
            (
                &feed_url,
                Some("application/rss+xml"),
                b"<!doctype html><html>",
                None,
            ),
            (
                &feed_url,
                Some("application/rss+xml"),
                b"",
                Some(Kind::Feed),
            ),
            (
                &page,
                Some("application/atom+xml; charset=utf-8"),
                b"",
                Some(Kind::Feed),
            ),
            (
                &sitemap_url,
                Some("text/plain"),
                b"https://ex.com/a\n",
                Some(Kind::Sitemap),
            ),
            (&page, Some("text/plain"), b"https://ex.com/a\n", None),
            (&page, Some("application/xml"), b"<svg/>", None),
            (&feed_url, Some("image/png"), b"\x89PNG\r\n\x1a\n\0\0", None),
        ];
        for (u, ct, body, want) in table {
            assert_eq!(
                sniff(u, ct, body),
                want,
                "{u} {ct:?} {:?}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn gzip_is_sniffed_inside() {
        use std::io::Write;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b"<urlset><url><loc>https://ex.com/a</loc></url></urlset>")
            .unwrap();
        let gz = enc.finish().unwrap();
        let u = url::parse("https://ex.com/x").unwrap();
        assert_eq!(
            sniff(&u, Some("application/octet-stream"), &gz),
            Some(Kind::Sitemap)
        );
    }

    #[test]
    fn natural_order() {
        let mut names = vec![
            "s-10.xml",
            "s-9.xml",
            "s-010.xml",
            "s-2024-11.xml",
            "s-2024-2.xml",
            "a",
        ];
        names.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            names,
            [
                "a",
                "s-9.xml",
                "s-10.xml",
                "s-010.xml",
                "s-2024-2.xml",
                "s-2024-11.xml"
            ]
        );
    }
}
