//! Feeds: RSS 0.9x/1.0/2.0, Atom and JSON Feed through `feed-rs`.
//!
//! `feed-rs` 3.0 refuses an `<rss>` root whose `version` is missing or is not
//! one it names (`2.0`, `0.91`, `0.92`); such documents are handed over with the
//! root start tag rewritten to `version="2.0"`, which its RSS 2 reader handles as
//! a superset. An entry's URL is its `rel="alternate"` link, else its first link
//! without a `rel`, else any link but `self`/`enclosure`/`edit`..., else an
//! http(s) `guid`; its date is `published`, else `updated`.
//!
//! When `feed-rs` rejects an XML document (a bare `&`, mismatched tags, bytes
//! that are not in the declared encoding, a truncated body), the [`lenient`]
//! reader takes over and returns what it can read, with `partial` set when the
//! document broke off.

mod lenient;

use std::borrow::Cow;

use feed_rs::model::{Entry, Link};
use quick_xml::events::Event;
use quick_xml::reader::Reader;

use super::{DiscoverError, Limits, Listed, Listing, Parsed, clean_title, decode};
use crate::url::{self, Url};

/// Read a feed (gzip allowed, capped like sitemaps).
pub(super) fn read(body: &[u8], base: &Url, limits: &Limits) -> Result<Parsed, DiscoverError> {
    let bytes = decode::bytes(body, limits.max_decoded_bytes)?;
    let bytes = match patch_rss_version(&bytes) {
        Some(patched) => Cow::Owned(patched),
        None => bytes,
    };
    let parser = feed_rs::parser::Builder::new()
        .base_uri(Some(base.as_str()))
        .sanitize_content(false)
        .build();
    let feed = match parser.parse(bytes.as_ref()) {
        Ok(feed) => feed,
        Err(e) => {
            let strict = DiscoverError::Malformed {
                what: "feed",
                reason: e.to_string(),
            };
            let is_xml =
                bytes.trim_ascii_start().starts_with(b"<") || decode::detect_encoding(&bytes).1 > 0;
            if !is_xml {
                return Err(strict);
            }
            return match lenient::read(&bytes, base, limits) {
                Ok(parsed) if !parsed.listing.is_empty() => Ok(parsed),
                _ => Err(strict),
            };
        }
    };
    let mut entries = Vec::new();
    let mut cut = 0;
    for entry in &feed.entries {
        let Some(listed) = listed(entry, base) else {
            continue;
        };
        if entries.len() < limits.max_urls {
            entries.push(listed);
        } else {
            cut += 1;
        }
    }
    Ok(Parsed {
        listing: Listing::Feed(entries),
        cut,
        partial: None,
    })
}

fn listed(entry: &Entry, base: &Url) -> Option<Listed> {
    let href = entry_link(&entry.links).or_else(|| {
        let id = entry.id.trim();
        let lower = id.get(..8).unwrap_or(id).to_ascii_lowercase();
        (lower.starts_with("http://") || lower.starts_with("https://")).then_some(id)
    })?;
    let url = url::resolve(base, href)?;
    let lastmod = entry.published.or(entry.updated).map(|d| d.fixed_offset());
    let title = entry.title.as_ref().and_then(|t| {
        // An HTML-typed title keeps its escapes in feed-rs: undo the common ones.
        if t.content_type.subty() == "html" {
            let unescaped = quick_xml::escape::unescape(&t.content);
            clean_title(unescaped.as_deref().unwrap_or(&t.content))
        } else {
            clean_title(&t.content)
        }
    });
    Some(Listed {
        url,
        lastmod,
        title,
        modified: entry.updated.map(|d| d.fixed_offset()),
    })
}

/// The link that points at the entry's page.
fn entry_link(links: &[Link]) -> Option<&str> {
    let rel = |l: &&Link| l.rel.as_deref().map(str::trim).map(str::to_ascii_lowercase);
    let usable = |l: &&Link| !l.href.trim().is_empty();
    links
        .iter()
        .filter(usable)
        .find(|l| rel(l).as_deref() == Some("alternate"))
        .or_else(|| links.iter().filter(usable).find(|l| rel(l).is_none()))
        .or_else(|| {
            links.iter().filter(usable).find(|l| {
                !matches!(
                    rel(l).as_deref(),
                    Some("self" | "enclosure" | "edit" | "replies" | "license" | "hub")
                )
            })
        })
        .map(|l| l.href.trim())
}

/// Versions of `<rss>` that `feed-rs` accepts as they are.
const KNOWN_RSS_VERSIONS: &[&str] = &["2.0", "", "0.91", "0.92"];

/// When the root is an `<rss>` start tag with a missing or unknown `version`,
/// the document with that tag rewritten to carry `version="2.0"`; else `None`.
fn patch_rss_version(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut reader = Reader::from_reader(bytes);
    reader.config_mut().check_comments = false;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let start = usize::try_from(reader.buffer_position()).ok()?;
        let event = reader.read_event_into(&mut buf).ok()?;
        let (tag, empty) = match &event {
            Event::Start(tag) => (tag, false),
            Event::Empty(tag) => (tag, true),
            Event::Eof => return None,
            _ => continue,
        };
        if !tag.name().as_ref().eq_ignore_ascii_case("rss") {
            return None;
        }
        let mut rebuilt = String::from("<rss version=\"2.0\"");
        for attr in tag.attributes().with_checks(false) {
            let attr = attr.ok()?;
            let key: &str = attr.key.as_ref();
            if key == "version" {
                if KNOWN_RSS_VERSIONS.contains(&attr.value.trim()) {
                    return None;
                }
                continue;
            }
            let quote = if attr.value.contains('"') { '\'' } else { '"' };
            rebuilt.push_str(&format!(" {key}={quote}{}{quote}", attr.value));
        }
        rebuilt.push_str(if empty { "/>" } else { ">" });
        let end = usize::try_from(reader.buffer_position()).ok()?;
        let head = bytes.get(..start)?;
        let tail = bytes.get(end..)?;
        // Whitespace before the root arrives with the tag; keep it out of the rewrite.
        let lt = start + memchr::memchr(b'<', bytes.get(start..end)?)?;
        let mut out = Vec::with_capacity(bytes.len() + 16);
        out.extend_from_slice(head);
        out.extend_from_slice(bytes.get(start..lt)?);
        out.extend_from_slice(rebuilt.as_bytes());
        out.extend_from_slice(tail);
        return Some(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rss_version_patch_table() {
        let table: [(&str, Option<&str>); 6] = [
            (
                "<rss><channel/></rss>",
                Some("<rss version=\"2.0\"><channel/></rss>"),
            ),
            (
                "<?xml version=\"1.0\"?>\n<rss xmlns:dc='http://purl.org/dc/elements/1.1/'>",
                Some(
                    "<?xml version=\"1.0\"?>\n<rss version=\"2.0\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\">",
                ),
            ),
            (
                "<rss version=\"0.94\" a='x\"y'>",
                Some("<rss version=\"2.0\" a='x\"y'>"),
            ),
            ("<rss version=\"2.0\"><channel/></rss>", None),
            ("<rss version='0.91'>", None),
            ("<feed><entry/></feed>", None),
        ];
        for (input, want) in table {
            let got = patch_rss_version(input.as_bytes()).map(|b| String::from_utf8(b).unwrap());
            match want {
                Some(w) => assert!(
                    got.as_deref().is_some_and(|g| g.starts_with(w)),
                    "{input}: {got:?}"
                ),
                None => assert_eq!(got, None, "{input}"),
            }
        }
    }

    fn read_str(body: &[u8]) -> Result<Parsed, DiscoverError> {
        let base = url::parse("https://ex.com/feed").unwrap();
        read(body, &base, &Limits::default())
    }

    /// Documents feed-rs rejects, read by the lenient reader: (body, urls, titles, partial?).
    #[test]
    fn lenient_fallback_table() {
        type Row<'a> = (&'a [u8], &'a [&'a str], &'a [&'a str], bool);
        let table: [Row; 6] = [
            (
                b"<rss version=\"2.0\"><channel><item><title>AT&T rocks</title><link>https://ex.com/a?x=1&y=2</link></item></channel></rss>",
                &["https://ex.com/a?x=1&y=2"],
                &["AT&T rocks"],
                false,
            ),
            (
                b"<rss version=\"2.0\"><channel><item><title>x</titel><link>https://ex.com/a</link></item></channel></rss>",
                &["https://ex.com/a"],
                &["x"],
                false,
            ),
            (
                b"<rss version=\"2.0\"><channel><item><title>caf\xe9 &nbsp;ok</title><link>/a</link><pubDate>Mon, 04 Mar 2024 10:00:00 +0100</pubDate></item>\n<item><title>cut",
                &["https://ex.com/a"],
                &["caf\u{fffd} ok"],
                true,
            ),
            (
                b"<feed xmlns='http://www.w3.org/2005/Atom'><entry><title>A&B</title><link rel='self' href='/api/1'/><link rel='alternate' href='/post-1'/><id>tag:x</id></entry>\
                  <entry><title>B</title><id>https://ex.com/post-2</id></entry></feed>",
                &["https://ex.com/post-1", "https://ex.com/post-2"],
                &["A&B", "B"],
                false,
            ),
            (
                b"<rdf:RDF xmlns:rdf='r' xmlns='http://purl.org/rss/1.0/'><item><title>R&D</title><link>https://ex.com/r</link></item></rdf:RDF>",
                &["https://ex.com/r"],
                &["R&D"],
                false,
            ),
            (
                b"<rss><channel><item><link>https://ex.com/v</link><guid>https://ex.com/g</guid><title>No & version</title></item></channel></rss>",
                &["https://ex.com/v"],
                &["No & version"],
                false,
            ),
        ];
        for (body, urls, titles, partial) in table {
            let parsed =
                read_str(body).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(body)));
            let Listing::Feed(list) = &parsed.listing else {
                panic!("not a feed")
            };
            let got: Vec<&str> = list.iter().map(|l| l.url.as_str()).collect();
            assert_eq!(got, urls, "{}", String::from_utf8_lossy(body));
            let got: Vec<&str> = list.iter().filter_map(|l| l.title.as_deref()).collect();
            assert_eq!(got, titles, "{}", String::from_utf8_lossy(body));
            assert_eq!(
                parsed.partial.is_some(),
                partial,
                "{}",
                String::from_utf8_lossy(body)
            );
        }
        // A dated entry keeps its date through the fallback.
        let parsed = read_str(table[2].0).unwrap();
        let Listing::Feed(list) = parsed.listing else {
            panic!()
        };
        assert_eq!(
            list[0].lastmod.unwrap().to_rfc3339(),
            "2024-03-04T10:00:00+01:00"
        );
    }

    #[test]
    fn hopeless_feeds_are_errors() {
        let table: [&[u8]; 3] = [
            b"<rss version=\"2.0\"><channel><item><title>x &",
            b"<html><body>&amp;</body></html>",
            b"{\"version\": \"https://jsonfeed.org/version/1\", \"items\": [",
        ];
        for body in table {
            assert!(read_str(body).is_err(), "{}", String::from_utf8_lossy(body));
        }
    }
}
