//! Sitemaps: a streaming reader on `quick-xml`'s `NsReader` for `<urlset>` and
//! `<sitemapindex>` documents, and a line reader for text sitemaps.
//!
//! The XML reader keeps only a depth counter and the entry being read, so deep
//! nesting costs no stack and memory stays at the returned entries plus one
//! event. Elements are matched by local name and namespace: `loc` and `lastmod`
//! in the sitemap namespace (or none, or the root's), directly inside `<url>` or
//! `<sitemap>`, so an `image:loc` is never taken for the page; `publication_date`
//! and `title` in the Google News namespace (an undeclared `news:` prefix is
//! accepted too). Entity references other than the five predefined ones and
//! character references are dropped, never expanded. Bare `&` in URLs and
//! mismatched end tags are tolerated.

use std::io::BufRead;

use chrono::{DateTime, FixedOffset};
use quick_xml::events::Event;
use quick_xml::name::ResolveResult;

use super::xml::{self, FieldTexts, MAX_FIELD};
use super::{DiscoverError, Limits, Listed, Listing, Parsed, clean_title, decode, listing_date};
use crate::url::{self, Url};

/// Collects entries up to the cap and counts the rest.
struct Collector<'a> {
    base: &'a Url,
    max: usize,
    urls: Vec<Listed>,
    sitemaps: Vec<Listed>,
    cut: usize,
}

impl Collector<'_> {
    fn new(base: &Url, max: usize) -> Collector<'_> {
        Collector {
            base,
            max,
            urls: Vec::new(),
            sitemaps: Vec::new(),
            cut: 0,
        }
    }

    fn push(
        &mut self,
        child: bool,
        loc: &str,
        lastmod: Option<DateTime<FixedOffset>>,
        title: Option<String>,
        modified: Option<DateTime<FixedOffset>>,
    ) {
        // Past the cap, entries are only counted (not resolved: that is the costly part).
        if self.urls.len() + self.sitemaps.len() >= self.max {
            self.cut += 1;
            return;
        }
        let Some(url) = url::resolve(self.base, loc) else {
            return;
        };
        let listed = Listed {
            url,
            lastmod,
            title,
            modified,
        };
        if child {
            self.sitemaps.push(listed);
        } else {
            self.urls.push(listed);
        }
    }

    /// Nothing was read: a problem is then a failure rather than a partial result.
    fn is_empty(&self) -> bool {
        self.urls.is_empty() && self.sitemaps.is_empty() && self.cut == 0
    }

    fn finish(self, partial: Option<DiscoverError>) -> Result<Parsed, DiscoverError> {
        match partial {
            Some(problem) if self.is_empty() => Err(problem),
            partial => Ok(Parsed {
                listing: Listing::Sitemap {
                    urls: self.urls,
                    sitemaps: self.sitemaps,
                },
                cut: self.cut,
                partial,
            }),
        }
    }
}

/// The text fields of an entry (numbered for [`FieldTexts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Loc,
    Lastmod,
    NewsDate,
    NewsTitle,
}

const FIELDS: usize = Field::NewsTitle as usize + 1;

/// The `<url>` or `<sitemap>` being read.
#[derive(Default)]
struct Entry {
    child: bool,
    texts: FieldTexts<FIELDS>,
}

impl Entry {
    fn text(&self, field: Field) -> &str {
        self.texts.get(field as usize)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ns {
    Sitemap,
    News,
    Other,
}

fn classify(ns: &ResolveResult<'_>, root_ns: Option<&str>) -> Ns {
    match ns {
        ResolveResult::Unbound => Ns::Sitemap,
        ResolveResult::Bound(n) => {
            let n: &str = n.as_ref();
            if n.contains("sitemap-news") {
                Ns::News
            } else if n.contains("sitemaps.org")
                || n.contains("google.com/schemas/sitemap/")
                || root_ns == Some(n)
            {
                Ns::Sitemap
            } else {
                Ns::Other
            }
        }
        ResolveResult::Unknown(prefix) if prefix == "news" => Ns::News,
        ResolveResult::Unknown(_) => Ns::Other,
    }
}

/// Read an XML sitemap or sitemap index.
pub(super) fn read_xml(body: &[u8], base: &Url, limits: &Limits) -> Result<Parsed, DiscoverError> {
    let gzip = decode::is_gzip(body);
    let cap = limits.max_decoded_bytes;
    let source = decode::Utf8Lossy::buffered(decode::open(body, cap))
        .map_err(|e| decode::io_error(&e, gzip, cap))?;
    let mut reader = xml::tolerant_reader(source);

    let mut out = Collector::new(base, limits.max_urls);
    let mut buf = Vec::new();
    // Open elements; the root is at depth 0, entries at 1, their fields at 2.
    let mut depth = 0usize;
    let mut root: Option<Option<String>> = None;
    let mut entry: Option<Entry> = None;
    let mut field: Option<(Field, usize)> = None;

    let problem = loop {
        buf.clear();
        let (ns, event) = match reader.read_resolved_event_into(&mut buf) {
            Ok(pair) => pair,
            Err(e) => break Some(xml_error(&e, gzip, cap)),
        };
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let opens = matches!(event, Event::Start(_));
                let local = e.local_name();
                let local: &str = local.as_ref();
                match &root {
                    None => {
                        if !local.eq_ignore_ascii_case("urlset")
                            && !local.eq_ignore_ascii_case("sitemapindex")
                        {
                            return Err(DiscoverError::NotListing(format!(
                                "XML document with root element <{local}>"
                            )));
                        }
                        let root_ns = match &ns {
                            ResolveResult::Bound(n) => Some(AsRef::<str>::as_ref(n).to_string()),
                            _ => None,
                        };
                        root = Some(root_ns);
                    }
                    Some(root_ns) => {
                        let ns = classify(&ns, root_ns.as_deref());
                        if depth == 1 && ns == Ns::Sitemap && opens {
                            if local == "url" || local == "sitemap" {
                                entry = Some(Entry {
                                    child: local == "sitemap",
                                    ..Entry::default()
                                });
                            }
                        } else if entry.is_some() && field.is_none() && opens {
                            field = match (ns, local) {
                                (Ns::Sitemap, "loc") if depth == 2 => Some((Field::Loc, depth)),
                                (Ns::Sitemap, "lastmod") if depth == 2 => {
                                    Some((Field::Lastmod, depth))
                                }
                                (Ns::News, "publication_date") => Some((Field::NewsDate, depth)),
                                (Ns::News, "title") => Some((Field::NewsTitle, depth)),
                                _ => None,
                            };
                        }
                    }
                }
                if opens {
                    depth += 1;
                }
            }
            Event::End(_) => {
                xml::leave(&mut depth, &mut field);
                if depth == 1
                    && let Some(done) = entry.take()
                {
                    finish_entry(&mut out, done);
                }
            }
            Event::Text(_) | Event::CData(_) | Event::GeneralRef(_) => {
                // An unknown entity (`&nbsp;`, ...) is dropped.
                if let (Some(entry), Some((field, _)), Some(text)) =
                    (entry.as_mut(), field, xml::text_of(&event, None))
                {
                    entry.texts.push(field as usize, &text);
                }
            }
            Event::Eof => {
                break match (&root, depth) {
                    (None, _) => Some(DiscoverError::Malformed {
                        what: "sitemap",
                        reason: "no root element".into(),
                    }),
                    (_, 0) => None,
                    _ => Some(DiscoverError::Malformed {
                        what: "sitemap",
                        reason: "document ends inside an element (truncated?)".into(),
                    }),
                };
            }
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    };
    out.finish(problem)
}

fn finish_entry(out: &mut Collector<'_>, entry: Entry) {
    let loc = entry.text(Field::Loc).trim();
    if loc.is_empty() {
        return;
    }
    if out.urls.len() + out.sitemaps.len() >= out.max {
        out.cut += 1;
        return;
    }
    let modified = listing_date(entry.text(Field::Lastmod));
    let date = listing_date(entry.text(Field::NewsDate)).or(modified);
    let title = clean_title(entry.text(Field::NewsTitle));
    out.push(entry.child, loc, date, title, modified);
}

fn xml_error(e: &quick_xml::Error, gzip: bool, cap: u64) -> DiscoverError {
    match e {
        quick_xml::Error::Io(io) => decode::io_error(io, gzip, cap),
        other => DiscoverError::Malformed {
            what: "sitemap",
            reason: other.to_string(),
        },
    }
}

/// Read a text sitemap: one absolute URL a line (root-relative paths are resolved
/// too); blank lines and anything else are skipped.
pub(super) fn read_text(body: &[u8], base: &Url, limits: &Limits) -> Result<Parsed, DiscoverError> {
    let gzip = decode::is_gzip(body);
    let cap = limits.max_decoded_bytes;
    let mut reader = decode::Utf8Lossy::buffered(decode::open(body, cap))
        .map_err(|e| decode::io_error(&e, gzip, cap))?;
    let mut out = Collector::new(base, limits.max_urls);
    let mut junk = 0usize;
    let mut line = Vec::new();
    let problem = loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => break None,
            Ok(_) => {}
            Err(e) => break Some(decode::io_error(&e, gzip, cap)),
        }
        // The reader transcodes to UTF-8, so this only fails on a line split by the cap.
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
        let looks_like_url = lower.starts_with("http://")
            || lower.starts_with("https://")
            || (text.starts_with('/') && !text.starts_with("//"));
        if looks_like_url && line.len() <= MAX_FIELD && !text.contains(char::is_whitespace) {
            out.push(false, text, None, None, None);
        } else {
            junk += 1;
        }
    };
    if out.is_empty() && problem.is_none() && junk > 0 {
        return Err(DiscoverError::NotListing(
            "text without any http(s) URL lines".into(),
        ));
    }
    out.finish(problem)
}

#[cfg(test)]
mod tests;
