//! RSL 1.0 (Really Simple Licensing, published November 2025): where a
//! publisher points to its licence (a robots.txt `License:` line, a
//! `Link: <...>; rel="license"` response header, an HTML `<link
//! rel="license">`), and what the `application/rsl+xml` document says
//! about a page. Pure: `net::rsl` fetches the document.
//!
//! The document holds `<content url="...">` elements, each with one or more
//! `<license>`s (alternatives): `<permits type="usage">` and `<prohibits
//! type="usage">` list usage tokens (`all`, `ai-all`, `ai-train`,
//! `ai-input`, `ai-index`, `search`), and `<payment type="...">` says what
//! the licence costs (`free` and `attribution` cost nothing; `purchase`,
//! `subscription`, `training`, `crawl`, `use`, `contribution` do). Other
//! `permits`/`prohibits` types (`user`, `geo`) are ignored.
//!
//! The content element for a page is the one whose `url` pattern (absolute,
//! or a path; robots-style `*` and `$`) matches it, the longest first. A use
//! is allowed by a licence when the licence's usage `permits` (if it has
//! any) cover it and its `prohibits` do not; the crawler never pays, so a
//! use that only a paid licence allows is as reserved as a prohibited one
//! ([`Terms::verdict`]).

use serde::Serialize;

use super::robots::location_matches;
use super::terms::AiUsage;

/// One `<license>` of an RSL document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct License {
    /// Usage tokens of `<permits type="usage">` (empty: all not prohibited).
    pub permits: Vec<String>,
    /// Usage tokens of `<prohibits type="usage">`.
    pub prohibits: Vec<String>,
    /// `<payment type>`, `None` when the licence names no payment (free).
    pub payment: Option<String>,
}

impl License {
    fn covers(list: &[String], usage: AiUsage) -> bool {
        list.iter()
            .any(|t| usage.rsl_tokens().contains(&t.as_str()))
    }

    /// Is `usage` allowed by this licence, whatever it costs?
    pub fn allows(&self, usage: AiUsage) -> bool {
        (self.permits.is_empty() || License::covers(&self.permits, usage))
            && !License::covers(&self.prohibits, usage)
    }

    /// Does this licence ask for payment?
    pub fn paid(&self) -> bool {
        self.payment
            .as_deref()
            .is_some_and(|p| !matches!(p, "free" | "attribution"))
    }
}

/// What the licences of one page say about a use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// A licence allows it free of charge.
    Free,
    /// Only paid licences allow it: reserved for a crawler that never pays.
    Paid,
    /// No licence allows it.
    Prohibited,
}

/// The licences that apply to one page.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Terms {
    pub licenses: Vec<License>,
}

impl Terms {
    /// The verdict for `usage`; `None` without licences.
    pub fn verdict(&self, usage: AiUsage) -> Option<Verdict> {
        if self.licenses.is_empty() {
            return None;
        }
        let allowing: Vec<&License> = self.licenses.iter().filter(|l| l.allows(usage)).collect();
        Some(if allowing.iter().any(|l| !l.paid()) {
            Verdict::Free
        } else if allowing.is_empty() {
            Verdict::Prohibited
        } else {
            Verdict::Paid
        })
    }

    /// `permits=search,ai-input;prohibits=ai-train;payment=free`, licences
    /// joined by `|`: the form records keep.
    pub fn label(&self) -> String {
        let one = |l: &License| {
            let mut parts = Vec::new();
            if !l.permits.is_empty() {
                parts.push(format!("permits={}", l.permits.join(",")));
            }
            if !l.prohibits.is_empty() {
                parts.push(format!("prohibits={}", l.prohibits.join(",")));
            }
            parts.push(format!(
                "payment={}",
                l.payment.as_deref().unwrap_or("free")
            ));
            parts.join(";")
        };
        self.licenses.iter().map(one).collect::<Vec<_>>().join("|")
    }
}

/// One `<content>` element.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Content {
    /// The `url` attribute as written.
    pub url: String,
    pub terms: Terms,
}

/// An RSL document: its content elements.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RslDoc {
    pub(crate) contents: Vec<Content>,
}

impl RslDoc {
    /// The terms for the page at `page` (an absolute URL; `origin` is its
    /// `scheme://host[:port]`, `path` its path and query): the content
    /// element whose pattern matches, the longest pattern first.
    pub(crate) fn terms_for(&self, origin: &str, path: &str) -> Option<&Terms> {
        self.contents
            .iter()
            .filter_map(|c| {
                let pattern = match c.url.strip_prefix(origin) {
                    Some("") => "/",
                    Some(p) if p.starts_with('/') => p,
                    Some(_) => return None,
                    None if c.url.starts_with('/') || c.url.starts_with('*') => c.url.as_str(),
                    None => return None,
                };
                location_matches(pattern, path).then_some((pattern.len(), &c.terms))
            })
            .max_by_key(|(len, _)| *len)
            .map(|(_, t)| t)
    }
}

/// The trimmed value of attribute `key` of an element.
fn attr(e: &quick_xml::events::BytesStart, key: &str) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| {
            let name = a.key.local_name();
            let name: &str = name.as_ref();
            name == key
        })
        .and_then(|a| a.normalized_value(quick_xml::XmlVersion::Implicit1_0).ok())
        .map(|v| v.trim().to_string())
}

/// Parse an RSL document; `Err` when it is not XML with an `<rsl>` root.
pub(crate) fn parse_rsl(body: &[u8]) -> Result<RslDoc, String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_reader(body);
    let mut doc = RslDoc::default();
    let mut seen_root = false;
    // Inside `<permits>` (true) or `<prohibits>` (false) of type usage; `None` elsewhere.
    let mut reading: Option<bool> = None;
    let mut text = String::new();
    loop {
        let event = reader.read_event().map_err(|e| format!("not XML: {e}"))?;
        let (e, open) = match &event {
            Event::Start(e) => (Some(e), true),
            Event::Empty(e) => (Some(e), false),
            Event::Text(t) => {
                if reading.is_some() {
                    text.push_str(&t.xml10_content());
                }
                continue;
            }
            Event::End(_) => {
                if let Some(permits) = reading.take() {
                    add_tokens(&mut doc, permits, &text);
                }
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };
        let Some(e) = e else { continue };
        let name = e.local_name();
        let name: &str = name.as_ref();
        if !seen_root {
            if name != "rsl" {
                return Err(format!("the root element is <{name}>, not <rsl>"));
            }
            seen_root = true;
            continue;
        }
        match name {
            "content" => doc.contents.push(Content {
                url: attr(e, "url").unwrap_or_else(|| "/".into()),
                terms: Terms::default(),
            }),
            "license" => {
                if let Some(c) = doc.contents.last_mut() {
                    c.terms.licenses.push(License::default());
                }
            }
            "permits" | "prohibits" if open => {
                let usage = attr(e, "type").is_none_or(|t| t.eq_ignore_ascii_case("usage"));
                reading = usage.then_some(name == "permits");
                text.clear();
            }
            "payment" => set_payment(&mut doc, attr(e, "type")),
            _ => {}
        }
    }
    if !seen_root {
        return Err("empty document".into());
    }
    Ok(doc)
}

fn add_tokens(doc: &mut RslDoc, permits: bool, text: &str) {
    let tokens = text
        .split([' ', ',', '\t', '\n', '\r'])
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty());
    if let Some(l) = doc
        .contents
        .last_mut()
        .and_then(|c| c.terms.licenses.last_mut())
    {
        let list = if permits {
            &mut l.permits
        } else {
            &mut l.prohibits
        };
        list.extend(tokens);
    }
}

fn set_payment(doc: &mut RslDoc, kind: Option<String>) {
    if let Some(l) = doc
        .contents
        .last_mut()
        .and_then(|c| c.terms.licenses.last_mut())
    {
        l.payment = Some(kind.map_or_else(|| "purchase".to_string(), |k| k.to_ascii_lowercase()));
    }
}

/// Every robots.txt `License:` line (a top-level directive, like `Sitemap:`).
pub(crate) fn license_lines(robots_txt: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(robots_txt);
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some((k, v)) = line.split_once(':')
            && k.trim().eq_ignore_ascii_case("license")
            && !v.trim().is_empty()
            && !out.iter().any(|o| o == v.trim())
        {
            out.push(v.trim().to_string());
        }
    }
    out
}

/// Is a licence link an RSL document? Its `type` says `application/rsl+xml`,
/// or, without a type, its path ends in `.xml` or `.rsl` (a Creative Commons
/// deed, the usual `rel="license"` target, is not fetched).
fn is_rsl(href: &str, kind: Option<&str>) -> bool {
    if href.is_empty() {
        return false;
    }
    match kind {
        Some(t) => t.trim().eq_ignore_ascii_case("application/rsl+xml"),
        None => {
            let path = href
                .split(['?', '#'])
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            path.ends_with(".xml") || path.ends_with(".rsl")
        }
    }
}

/// The targets of `Link` header values whose `rel` includes `license` and
/// that point to an RSL document.
pub(crate) fn link_licenses(values: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for value in values {
        // `<a>; rel="license", <b>; rel=next`: split on `,` before a `<`.
        for link in value
            .split(",")
            .map(str::trim)
            .filter(|l| l.starts_with('<'))
        {
            let Some((target, params)) = link[1..].split_once('>') else {
                continue;
            };
            let license = params.split(';').any(|p| {
                p.trim().split_once('=').is_some_and(|(k, v)| {
                    k.trim().eq_ignore_ascii_case("rel")
                        && v.trim()
                            .trim_matches('"')
                            .split_whitespace()
                            .any(|r| r.eq_ignore_ascii_case("license"))
                })
            });
            let kind = params.split(';').find_map(|p| {
                p.trim()
                    .split_once('=')
                    .filter(|(k, _)| k.trim().eq_ignore_ascii_case("type"))
                    .map(|(_, v)| v.trim().trim_matches('"').to_string())
            });
            if license && is_rsl(target.trim(), kind.as_deref()) {
                out.push(target.trim().to_string());
            }
        }
    }
    out
}

/// How far into an HTML page `<link rel="license">` is looked for.
const HTML_HEAD_BYTES: usize = 64 << 10;

/// The `href` of every `<link rel="license">` to an RSL document in the
/// first bytes of an HTML page (the head: where `<link>` belongs).
pub(crate) fn html_licenses(html: &[u8]) -> Vec<String> {
    let head = &html[..html.len().min(HTML_HEAD_BYTES)];
    // Most pages have no licence link: one fast scan rules them out.
    if memchr::memmem::find(head, b"icense").is_none()
        && memchr::memmem::find(head, b"ICENSE").is_none()
    {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(head);
    let lower = text.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = lower[at..].find("<link") {
        let start = at + i + 5;
        let end = lower[start..].find('>').map_or(lower.len(), |e| start + e);
        let attrs = tag_attrs(&text[start..end]);
        let rel = attrs
            .iter()
            .find(|(k, _)| k == "rel")
            .map(|(_, v)| v.to_ascii_lowercase());
        let kind = attrs
            .iter()
            .find(|(k, _)| k == "type")
            .map(|(_, v)| v.as_str());
        if rel.is_some_and(|r| r.split_whitespace().any(|t| t == "license"))
            && let Some((_, href)) = attrs.iter().find(|(k, _)| k == "href")
            && is_rsl(href, kind)
        {
            out.push(href.clone());
        }
        at = end;
    }
    out
}

/// `name="value"`, `name='value'` and `name=value` attributes of a tag.
fn tag_attrs(tag: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = tag.trim_start_matches('/').trim();
    while let Some(eq) = rest.find('=') {
        let name = rest[..eq]
            .trim()
            .rsplit(char::is_whitespace)
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let after = rest[eq + 1..].trim_start();
        let (value, next) = match after.chars().next() {
            Some(q @ ('"' | '\'')) => match after[1..].find(q) {
                Some(close) => (&after[1..1 + close], &after[close + 2..]),
                None => (&after[1..], ""),
            },
            _ => {
                let end = after.find(char::is_whitespace).unwrap_or(after.len());
                (&after[..end], &after[end..])
            }
        };
        out.push((name, value.trim().to_string()));
        rest = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &[u8] = br#"<?xml version="1.0" encoding="UTF-8"?>
<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/">
    <license>
      <permits type="usage">search ai-index</permits>
      <prohibits type="usage">ai-train</prohibits>
      <payment type="free"/>
    </license>
  </content>
  <content url="https://news.test/premium/*">
    <license>
      <permits type="usage">all</permits>
      <payment type="purchase"><amount currency="USD">10</amount></payment>
    </license>
  </content>
  <content url="/open/">
    <license>
      <prohibits type="user">commercial</prohibits>
    </license>
    <license>
      <permits type="usage">ai-all</permits>
      <payment type="training"/>
    </license>
  </content>
</rsl>"#;

    #[test]
    fn licences_and_what_they_allow() {
        let doc = parse_rsl(DOC).unwrap();
        assert_eq!(doc.contents.len(), 3);
        let at = |path: &str| doc.terms_for("https://news.test", path).unwrap();
        let v = |path: &str, u| at(path).verdict(u);
        // Site-wide: search free, training prohibited.
        assert_eq!(v("/2025/a", AiUsage::TrainAi), Some(Verdict::Prohibited));
        assert_eq!(v("/2025/a", AiUsage::Search), Some(Verdict::Free));
        assert_eq!(
            at("/2025/a").label(),
            "permits=search,ai-index;prohibits=ai-train;payment=free"
        );
        // Everything, for a price: reserved for a crawler that never pays.
        assert_eq!(v("/premium/x", AiUsage::TrainAi), Some(Verdict::Paid));
        // Two alternative licences: the first (no usage limits, free) allows it.
        assert_eq!(v("/open/x", AiUsage::TrainAi), Some(Verdict::Free));
        // Another origin's absolute pattern does not apply.
        let other = doc.terms_for("https://other.test", "/premium/x").unwrap();
        assert_eq!(other.verdict(AiUsage::TrainAi), Some(Verdict::Prohibited));
        assert!(parse_rsl(b"<html><body>no</body></html>").is_err());
        assert!(parse_rsl(b"").is_err());
        assert_eq!(parse_rsl(b"<rsl/>").unwrap(), RslDoc::default());
    }

    #[test]
    fn where_licences_are_pointed_to() {
        // robots.txt: `License:` anywhere (a top-level line like Sitemap).
        let robots = b"User-agent: *\nAllow: /\nLicense: https://news.test/license.xml # RSL\n\nLicense: https://news.test/license.xml\nlicense:\n";
        assert_eq!(license_lines(robots), vec!["https://news.test/license.xml"]);
        // Link header, among other links.
        let links = link_licenses(&[
            "<https://news.test/feed>; rel=\"alternate\", <https://news.test/license.xml>; rel=\"license\"; type=\"application/rsl+xml\"",
            "</terms.xml>; rel=\"terms license\"",
            "<https://creativecommons.org/licenses/by/4.0/>; rel=license",
        ]);
        assert_eq!(links, vec!["https://news.test/license.xml", "/terms.xml"]);
        assert!(link_licenses(&["<https://x.test/>; rel=next"]).is_empty());
        // HTML <link rel="license">, any attribute order and quoting.
        let html = br#"<html><head><LINK href='/rsl.xml' REL="license" type="application/rsl+xml">
            <link rel=stylesheet href=/a.css><link rel="license" href="https://creativecommons.org/licenses/by/4.0/"/></head>"#;
        // A Creative Commons deed is a licence, but not an RSL document.
        assert_eq!(html_licenses(html), vec!["/rsl.xml"]);
        assert!(html_licenses(b"<link rel=\"license\">").is_empty());
    }
}
