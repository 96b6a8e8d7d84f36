//! Page metadata gathered in one walk over the tree: `<meta>` tags, `<link>`
//! relations (canonical, feeds), links, `<html lang>`, `<title>`, headings,
//! `<time>` elements, and the JSON-LD objects the pre-pass set aside.

use serde_json::Value;

use super::dom::{Dom, NodeId};
use crate::url::{self, Url};

/// What the page says about itself.
#[derive(Debug, Default)]
pub struct Meta {
    /// `(name or property or itemprop, content)`, keys lower-cased, in document order.
    pub metas: Vec<(String, String)>,
    pub title: Option<String>,
    /// Text of `h1` elements, document order.
    pub h1: Vec<(NodeId, String)>,
    pub html_lang: Option<String>,
    pub canonical: Option<Url>,
    pub feeds: Vec<Url>,
    pub links: Vec<Url>,
    /// Anchor text of each link in `links` (same order; the first non-empty
    /// text among its anchors, else its `title` or `aria-label`), at most
    /// [`MAX_ANCHOR_CHARS`] characters.
    pub anchors: Vec<String>,
    /// More than [`MAX_LINKS`] distinct links: the rest were not taken.
    pub links_cut: bool,
    pub robots: Vec<String>,
    /// `<time>` elements: (node, datetime attribute or text, marked as publication time).
    pub times: Vec<(NodeId, String, bool)>,
    /// `rel=author` link texts.
    pub author_links: Vec<String>,
    /// Flattened JSON-LD objects (every object with an `@type`, `@graph` expanded).
    pub jsonld: Vec<Value>,
}

impl Meta {
    /// First content of a meta key among `keys` (in the order of `keys`).
    pub fn get(&self, keys: &[&str]) -> Option<&str> {
        keys.iter().find_map(|k| {
            self.metas
                .iter()
                .find(|(name, v)| name == k && !v.trim().is_empty())
                .map(|(_, v)| v.trim())
        })
    }

    /// The JSON-LD objects typed as an article of some kind.
    pub fn articles(&self) -> impl Iterator<Item = &Value> + Clone {
        self.jsonld.iter().filter(|v| is_article(v))
    }

    /// A field of the first JSON-LD article that has it, as text.
    pub fn article_field(&self, key: &str) -> Option<String> {
        self.articles()
            .find_map(|v| v.get(key).and_then(jsonld_text))
    }
}

/// Is this JSON-LD object typed as an article of some kind?
pub fn is_article(v: &Value) -> bool {
    jsonld_types(v).into_iter().any(is_article_type)
}

/// Longest anchor text kept for a link.
pub const MAX_ANCHOR_CHARS: usize = 200;
/// Most distinct links taken from one page (a news home page has a few hundred).
pub const MAX_LINKS: usize = 2_000;

/// The text a link shows (or says it leads to), for ranking it before a fetch.
fn anchor_text(dom: &Dom, id: NodeId) -> String {
    let text = dom.text(id);
    let text = text.trim();
    let text = if text.is_empty() {
        dom.attr(id, "title")
            .or_else(|| dom.attr(id, "aria-label"))
            .unwrap_or("")
            .trim()
    } else {
        text
    };
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(MAX_ANCHOR_CHARS)
        .collect()
}

/// Walk the document once.
pub fn gather(dom: &Dom, base: Option<&Url>, jsonld: &[String]) -> Meta {
    let mut m = Meta::default();
    let mut base = base.cloned();
    // `<base href>` changes how links resolve; it must come first in `<head>`.
    if let Some(b) = dom.find("base").and_then(|b| dom.attr(b, "href"))
        && let Some(resolved) = match &base {
            Some(u) => url::resolve(u, b),
            None => url::parse(b),
        }
    {
        base = Some(resolved);
    }
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for id in dom.descendants(0) {
        if !dom.is_element(id) {
            continue;
        }
        match dom.tag(id) {
            "html" if m.html_lang.is_none() => {
                m.html_lang = dom
                    .attr(id, "lang")
                    .or_else(|| dom.attr(id, "xml:lang"))
                    .map(str::to_string);
            }
            "meta" => meta_tag(dom, id, &mut m),
            "title" if m.title.is_none() && !in_svg(dom, id) => {
                m.title = Some(dom.text(id));
            }
            "h1" => m.h1.push((id, dom.text(id))),
            "time" => {
                let pub_marked = dom.attr(id, "pubdate").is_some()
                    || dom
                        .attr(id, "itemprop")
                        .is_some_and(|p| p.eq_ignore_ascii_case("datePublished"));
                let value = dom
                    .attr(id, "datetime")
                    .map(str::to_string)
                    .unwrap_or_else(|| dom.text(id));
                m.times.push((id, value, pub_marked));
            }
            "link" => link_tag(dom, id, base.as_ref(), &mut m),
            "a" => {
                let rel = dom.attr(id, "rel").unwrap_or("").to_ascii_lowercase();
                if rel.split_whitespace().any(|r| r == "author") {
                    m.author_links.push(dom.text(id));
                }
                if let (Some(b), Some(href)) = (&base, dom.attr(id, "href"))
                    && let Some(u) = url::resolve(b, href)
                {
                    match seen.get(u.as_str()) {
                        Some(&i) => {
                            if m.anchors[i].is_empty() {
                                m.anchors[i] = anchor_text(dom, id);
                            }
                        }
                        None if m.links.len() >= MAX_LINKS => m.links_cut = true,
                        None => {
                            seen.insert(u.as_str().to_string(), m.links.len());
                            m.links.push(u);
                            m.anchors.push(anchor_text(dom, id));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    for raw in jsonld {
        if let Some(v) = parse_jsonld(raw) {
            flatten_jsonld(v, &mut m.jsonld, 0);
        }
    }
    m
}

fn in_svg(dom: &Dom, id: NodeId) -> bool {
    dom.ancestors(id).any(|p| dom.tag(p) == "svg")
}

fn meta_tag(dom: &Dom, id: NodeId, m: &mut Meta) {
    let Some(content) = dom.attr(id, "content").or_else(|| dom.attr(id, "datetime")) else {
        return;
    };
    for key_attr in ["name", "property", "itemprop", "http-equiv"] {
        if let Some(k) = dom.attr(id, key_attr) {
            for key in k.split_whitespace() {
                let key = key.to_ascii_lowercase();
                if key == "robots" || key.ends_with("bot") || key == "tdm-reservation" {
                    if key == "tdm-reservation" {
                        if content.trim() == "1" {
                            m.robots.push("tdm-reservation".into());
                        }
                    } else {
                        for d in content.split([',', ' ']) {
                            let d = d.trim().to_ascii_lowercase();
                            if !d.is_empty() && !m.robots.contains(&d) {
                                m.robots.push(d);
                            }
                        }
                    }
                }
                m.metas.push((key, content.to_string()));
            }
        }
    }
}

fn link_tag(dom: &Dom, id: NodeId, base: Option<&Url>, m: &mut Meta) {
    let rel = dom.attr(id, "rel").unwrap_or("").to_ascii_lowercase();
    let Some(href) = dom.attr(id, "href") else {
        return;
    };
    let resolved = match base {
        Some(b) => url::resolve(b, href),
        None => url::parse(href),
    };
    let Some(u) = resolved else { return };
    let rels: Vec<&str> = rel.split_whitespace().collect();
    if rels.contains(&"canonical") && m.canonical.is_none() {
        m.canonical = Some(u);
    } else if rels.contains(&"alternate") {
        let ty = dom.attr(id, "type").unwrap_or("").to_ascii_lowercase();
        if (ty.contains("rss") || ty.contains("atom") || ty.contains("feed+json"))
            && !m.feeds.contains(&u)
        {
            m.feeds.push(u);
        }
    }
}

/// Parse a JSON-LD script body, tolerating CDATA wrappers and stray text
/// around the JSON value.
fn parse_jsonld(raw: &str) -> Option<Value> {
    let t = raw.trim();
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        return Some(v);
    }
    let t = t.replace("<![CDATA[", "").replace("]]>", "");
    let start = t.find(['{', '['])?;
    let end = t.rfind(['}', ']'])?;
    if end <= start {
        return None;
    }
    serde_json::from_str::<Value>(&t[start..=end]).ok()
}

/// Push every typed object of a JSON-LD value, expanding `@graph` and arrays.
fn flatten_jsonld(v: Value, out: &mut Vec<Value>, depth: usize) {
    if depth > 8 {
        return;
    }
    match v {
        Value::Array(items) => {
            for i in items {
                flatten_jsonld(i, out, depth + 1);
            }
        }
        Value::Object(mut map) => {
            if let Some(graph) = map.remove("@graph") {
                flatten_jsonld(graph, out, depth + 1);
            }
            if map.contains_key("@type") {
                out.push(Value::Object(map));
            }
        }
        _ => {}
    }
}

/// The `@type` names of a JSON-LD object.
pub fn jsonld_types(v: &Value) -> Vec<&str> {
    match v.get("@type") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    }
}

/// Is this JSON-LD type an article of some kind?
pub fn is_article_type(t: &str) -> bool {
    let t = t.rsplit(['/', ':']).next().unwrap_or(t);
    t.ends_with("Article")
        || t == "BlogPosting"
        || t == "LiveBlogPosting"
        || t == "Report"
        || t == "SocialMediaPosting"
}

/// A JSON-LD field as text: a string, or the `name` of an object, or the first of an array.
pub fn jsonld_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o.get("name").and_then(jsonld_text),
        Value::Array(a) => {
            let names: Vec<String> = a.iter().filter_map(jsonld_text).collect();
            (!names.is_empty()).then(|| names.join(", "))
        }
        _ => None,
    }
}

/// Text of a node with whitespace collapsed.
pub fn clean(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
