//! Discovery: feeds and sitemaps, bytes in, listed URLs out. Pure: no I/O, no `.await`.
//!
//! The engine fetches a document, asks [`sniff`] (or, before fetching,
//! [`kind_from_url`]) whether it is a feed or a sitemap, hands the body to
//! [`parse`], trims the result with [`newer_than`] against the `--min-lastmod`
//! cut-off and, for a sitemap index, picks the children to fetch with
//! [`select_children`].
//!
//! Which parser reads what, and why:
//! * **Feeds** (RSS 0.9x/1.0/2.0, Atom, JSON Feed) go to `feed-rs` 3.0 (`feed.rs`): it
//!   knows every flavour, resolves `xml:base`, and never expands XML entities.
//!   Its gaps: an `<rss>` root without a `version` attribute (or with an unusual
//!   one such as `0.94`) fails in 3.0, so that start tag is rewritten first; and a
//!   malformed document is an error, not a partial result, so the XML documents
//!   it rejects (a bare `&` in "AT&T", mismatched tags, bad bytes, a truncated
//!   body) go to a small lenient reader of ours (`feed/lenient.rs`) that keeps
//!   whatever entries it can read.
//! * **Sitemaps** are read by our own streaming reader on `quick-xml`'s `NsReader`
//!   plus `flate2` (`sitemap.rs`). The `sitemap` crate is unmaintained and cannot
//!   see namespaces (so no `news:publication_date`), CDATA, W3C dates other than
//!   `YYYY-MM-DD`, gzip or text sitemaps.
//! * Both accept gzip bodies (recognised by their magic bytes, whatever the
//!   headers said) and stop at [`Limits::max_decoded_bytes`] of decoded data
//!   (`decode.rs`), so a gzip bomb costs at most the cap.
//!
//! A document's *content* decides how it is read: a sitemap URL that serves an
//! RSS feed (search engines accept those) is read as a feed, and the other way
//! round. Relative URLs are resolved against the document URL; anything that is
//! not http(s) is dropped. Entries are returned in document order and not
//! deduplicated; a sitemap index that lists itself returns its own URL, so the
//! engine can spot the loop.

mod decode;
mod feed;
mod sitemap;
mod sniff;
mod xml;

use chrono::{DateTime, FixedOffset, Utc};

pub use crate::frontier::Kind;
use crate::url::Url;
pub(crate) use sniff::is_comment_feed;
pub use sniff::{kind_from_url, sniff};

/// One URL a feed or sitemap listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub url: Url,
    /// Feeds: published, else updated. Sitemaps: `news:publication_date`, else `lastmod`.
    pub lastmod: Option<DateTime<FixedOffset>>,
    /// Feed entry title, or a news sitemap's `news:title`.
    pub title: Option<String>,
    /// When the listing says the page last changed: a feed entry's
    /// `updated`, a sitemap's `<lastmod>` (also when a news date is given).
    pub modified: Option<DateTime<FixedOffset>>,
}

impl Listed {
    /// Kept by a cut-off: no date, or dated at or after it (and everything when there is no cut-off).
    pub(crate) fn is_newer(&self, cutoff: Option<DateTime<Utc>>) -> bool {
        match (self.lastmod, cutoff) {
            (Some(date), Some(cutoff)) => date >= cutoff,
            _ => true,
        }
    }
}

/// What a document listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    /// Entries of a feed, in document order.
    Feed(Vec<Listed>),
    /// A `urlset` gives `urls`, a `sitemapindex` gives `sitemaps` (child sitemaps to fetch).
    /// A text sitemap gives `urls`.
    Sitemap {
        urls: Vec<Listed>,
        sitemaps: Vec<Listed>,
    },
}

impl Listing {
    /// Number of listed URLs (pages and child sitemaps).
    pub fn len(&self) -> usize {
        match self {
            Listing::Feed(entries) => entries.len(),
            Listing::Sitemap { urls, sitemaps } => urls.len() + sitemaps.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The result of [`parse`]: the listing, what the URL cap cut, and whether the document broke off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub listing: Listing,
    /// Entries beyond [`Limits::max_urls`], counted but not returned (nor checked to be valid URLs).
    pub cut: usize,
    /// The document broke off after some entries were read (malformed XML, size cap,
    /// truncated body): `listing` holds what came before. Worth a warning, not a failure.
    pub partial: Option<DiscoverError>,
}

/// Bounds that keep hostile documents cheap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Entries returned per document (the sitemap protocol's maximum is 50,000).
    pub max_urls: usize,
    /// Decoded (gunzipped) bytes read per document; past this the document stops.
    pub max_decoded_bytes: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_urls: 50_000,
            max_decoded_bytes: 50 * 1024 * 1024,
        }
    }
}

/// Why a document gave nothing (or, in [`Parsed::partial`], why it stopped early).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiscoverError {
    /// Neither a feed nor a sitemap (an HTML page, binary data, another XML vocabulary...).
    #[error("not a feed or sitemap: {0}")]
    NotListing(String),
    /// Looked like a feed or sitemap but could not be read.
    #[error("malformed {what}: {reason}")]
    Malformed { what: &'static str, reason: String },
    /// More than [`Limits::max_decoded_bytes`] of decoded data (a gzip bomb, or a huge document).
    #[error("document larger than the {limit}-byte cap once decoded")]
    TooLarge { limit: u64 },
    /// The body starts like gzip but does not decompress.
    #[error("broken gzip data: {0}")]
    Gzip(String),
}

/// Read a feed or sitemap. `kind` is a hint used only when the content itself is
/// ambiguous (a root element beyond the first few kilobytes); gzip is detected by
/// magic bytes; text that is not markup is read as a text sitemap (one URL a line).
pub fn parse(kind: Kind, url: &Url, body: &[u8], limits: &Limits) -> Result<Parsed, DiscoverError> {
    let head = decode::head(body, sniff::HEAD_LEN)?;
    match sniff::shape(&head) {
        sniff::Shape::Sitemap => sitemap::read_xml(body, url, limits),
        sniff::Shape::Feed | sniff::Shape::Json => feed::read(body, url, limits),
        sniff::Shape::Xml(None) if kind == Kind::Feed => feed::read(body, url, limits),
        sniff::Shape::Xml(None) => sitemap::read_xml(body, url, limits),
        sniff::Shape::Xml(Some(root)) => Err(DiscoverError::NotListing(format!(
            "XML document with root element <{root}>"
        ))),
        sniff::Shape::Html => Err(DiscoverError::NotListing("an HTML page".into())),
        sniff::Shape::Binary => Err(DiscoverError::NotListing("binary data".into())),
        sniff::Shape::Text => sitemap::read_text(body, url, limits),
        sniff::Shape::Empty => Err(DiscoverError::Malformed {
            what: "document",
            reason: "empty body".into(),
        }),
    }
}

/// Keep the entries whose date is missing or at/after `cutoff` (all of them when
/// there is no cut-off). Returns how many were dropped.
pub fn newer_than(entries: &mut Vec<Listed>, cutoff: Option<DateTime<Utc>>) -> usize {
    let before = entries.len();
    entries.retain(|e| e.is_newer(cutoff));
    before - entries.len()
}

/// Which children of a sitemap index to fetch, most promising first, at most `max`.
///
/// An index's own dates can be stale while a child already holds new URLs, so the
/// dates are not trusted alone. A child is taken when
/// * it has no date, or its date is at or after `cutoff`, or
/// * it is among the `newest` most recent children, ranked by date and then by
///   name with numbers compared as numbers (`posts-12.xml` after `posts-9.xml`,
///   `2024-11` after `2024-10`).
///
/// The result is ordered undated first (they are the unknowns), then by date,
/// newest first; ties by name, highest first.
pub fn select_children(
    sitemaps: &[Listed],
    cutoff: Option<DateTime<Utc>>,
    newest: usize,
    max: usize,
) -> Vec<Listed> {
    let mut ranked: Vec<&Listed> = sitemaps.iter().collect();
    ranked.sort_by(|a, b| {
        b.lastmod
            .is_none()
            .cmp(&a.lastmod.is_none())
            .then(b.lastmod.cmp(&a.lastmod))
            .then_with(|| sniff::natural_cmp(b.url.as_str(), a.url.as_str()))
    });
    let mut dated_seen = 0;
    let mut chosen = Vec::new();
    for child in ranked {
        if chosen.len() >= max {
            break;
        }
        let recent = child.lastmod.is_some() && dated_seen < newest;
        if child.lastmod.is_some() {
            dated_seen += 1;
        }
        if recent || child.is_newer(cutoff) {
            chosen.push(child.clone());
        }
    }
    chosen
}

/// A title as shown: trimmed, runs of whitespace collapsed, `None` when empty.
fn clean_title(text: &str) -> Option<String> {
    let title = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!title.is_empty()).then_some(title)
}

/// A listing's date (W3C datetime, RFC 3339 or RFC 2822), with a fast path for the
/// bare `YYYY-MM-DD` that most sitemaps carry (tens of thousands per document).
fn listing_date(text: &str) -> Option<DateTime<FixedOffset>> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let b = text.as_bytes();
    if b.len() == 10 && b[4] == b'-' && b[7] == b'-' {
        let day = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?;
        return Some(
            day.and_time(chrono::NaiveTime::MIN)
                .and_utc()
                .fixed_offset(),
        );
    }
    if let Ok(d) = DateTime::parse_from_rfc3339(text) {
        return Some(d);
    }
    crate::date::parse_datetime(text)
}

#[cfg(test)]
mod tests;
