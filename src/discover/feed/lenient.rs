//! A forgiving reader for RSS, RDF and Atom documents that `feed-rs` rejects:
//! a bare `&` in a title ("AT&T"), mismatched end tags, invalid UTF-8, or a body
//! cut off mid-way. It reads only what discovery needs (link, title, date) with
//! the same streaming approach as the sitemap reader: a depth counter, the item
//! being read, entities never expanded.

use quick_xml::events::{BytesStart, Event};

use super::super::xml::{self, FieldTexts};
use super::super::{
    DiscoverError, Limits, Listed, Listing, Parsed, clean_title, decode, listing_date,
};
use crate::url::{self, Url};

/// The text fields of an item (numbered for [`FieldTexts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Link,
    Guid,
    Title,
    Published,
    Updated,
}

const FIELDS: usize = Field::Updated as usize + 1;

/// The `<item>` or `<entry>` being read.
#[derive(Default)]
struct Item {
    /// Best `<link href>` so far and whether it was `rel="alternate"`.
    href: Option<(String, bool)>,
    texts: FieldTexts<FIELDS>,
}

impl Item {
    fn text(&self, field: Field) -> &str {
        self.texts.get(field as usize)
    }

    /// An Atom-style `<link href rel>`: keep the alternate one, else the first without `rel`.
    fn offer_href(&mut self, tag: &BytesStart<'_>) {
        let (mut href, mut rel) = (None, None);
        for attr in tag.attributes().with_checks(false).flatten() {
            let key: &str = attr.key.local_name().into_inner();
            match key {
                "href" => href = Some(attr.value.trim().to_string()),
                "rel" => rel = Some(attr.value.trim().to_ascii_lowercase()),
                _ => {}
            }
        }
        let Some(href) = href.filter(|h| !h.is_empty()) else {
            return;
        };
        let alternate = rel.as_deref() == Some("alternate");
        let better = match &self.href {
            None => alternate || rel.is_none(),
            Some((_, was_alternate)) => alternate && !was_alternate,
        };
        if better {
            self.href = Some((href, alternate));
        }
    }

    fn finish(self, base: &Url) -> Option<Listed> {
        let guid = self.text(Field::Guid).trim();
        let guid_is_url = ["http://", "https://"].iter().any(|p| {
            guid.get(..p.len())
                .is_some_and(|g| g.eq_ignore_ascii_case(p))
        });
        let href = self
            .href
            .as_ref()
            .map(|(h, _)| h.as_str())
            .or(Some(self.text(Field::Link).trim()).filter(|l| !l.is_empty()))
            .or(guid_is_url.then_some(guid))?;
        let url = url::resolve(base, href)?;
        let lastmod = listing_date(self.text(Field::Published))
            .or_else(|| listing_date(self.text(Field::Updated)));
        let title = clean_title(self.text(Field::Title));
        Some(Listed {
            url,
            lastmod,
            title,
            modified: listing_date(self.text(Field::Updated)),
        })
    }
}

/// Read the items of an XML feed, tolerating what `feed-rs` does not.
pub(super) fn read(bytes: &[u8], base: &Url, limits: &Limits) -> Result<Parsed, DiscoverError> {
    let source = decode::Utf8Lossy::buffered(bytes).map_err(|e| DiscoverError::Malformed {
        what: "feed",
        reason: e.to_string(),
    })?;
    let mut reader = xml::tolerant_reader(source);

    let mut entries = Vec::new();
    let mut cut = 0;
    let mut buf = Vec::new();
    let mut depth = 0usize;
    let mut seen_root = false;
    // The open item and the depth of its element.
    let mut item: Option<(Item, usize)> = None;
    let mut field: Option<(Field, usize)> = None;

    let problem = loop {
        buf.clear();
        let event = match reader.read_event_into(&mut buf) {
            Ok(event) => event,
            Err(e) => {
                break Some(DiscoverError::Malformed {
                    what: "feed",
                    reason: e.to_string(),
                });
            }
        };
        match event {
            Event::Start(ref tag) | Event::Empty(ref tag) => {
                let opens = matches!(event, Event::Start(_));
                let local = tag.local_name();
                let local = local.into_inner().to_ascii_lowercase();
                if !seen_root {
                    if !matches!(local.as_str(), "rss" | "rdf" | "feed") {
                        return Err(DiscoverError::NotListing(format!(
                            "XML document with root element <{local}>"
                        )));
                    }
                    seen_root = true;
                } else if let Some((open, at)) = item.as_mut() {
                    if depth == *at + 1 && field.is_none() {
                        if local == "link" {
                            open.offer_href(tag);
                        }
                        field = match local.as_str() {
                            "link" => Some(Field::Link),
                            "guid" | "id" => Some(Field::Guid),
                            "title" => Some(Field::Title),
                            "pubdate" | "published" | "date" | "issued" => Some(Field::Published),
                            "updated" | "modified" => Some(Field::Updated),
                            _ => None,
                        }
                        .filter(|_| opens)
                        .map(|f| (f, depth));
                    }
                } else if opens && (local == "item" || local == "entry") {
                    item = Some((Item::default(), depth));
                }
                if opens {
                    depth += 1;
                }
            }
            Event::End(_) => {
                xml::leave(&mut depth, &mut field);
                if item.as_ref().is_some_and(|(_, at)| *at == depth)
                    && let Some((done, _)) = item.take()
                    && let Some(listed) = done.finish(base)
                {
                    if entries.len() < limits.max_urls {
                        entries.push(listed);
                    } else {
                        cut += 1;
                    }
                }
            }
            Event::Text(_) | Event::CData(_) | Event::GeneralRef(_) => {
                // An unknown entity (`&nbsp;`, ...) reads as a space.
                if let (Some((item, _)), Some((field, _)), Some(text)) =
                    (item.as_mut(), field, xml::text_of(&event, Some(" ")))
                {
                    item.texts.push(field as usize, &text);
                }
            }
            Event::Eof => {
                break (depth > 0).then(|| DiscoverError::Malformed {
                    what: "feed",
                    reason: "document ends inside an element (truncated?)".into(),
                });
            }
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    };
    match problem {
        Some(problem) if entries.is_empty() && cut == 0 => Err(problem),
        partial => Ok(Parsed {
            listing: Listing::Feed(entries),
            cut,
            partial,
        }),
    }
}
