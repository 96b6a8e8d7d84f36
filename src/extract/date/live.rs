//! Live blogs and teasers: the two kinds of page where the first date a rule
//! meets is often not the page's.
//!
//! * A live blog (JSON-LD `LiveBlogPosting`, or a container named as a live
//!   blog or ticker) keeps being updated, and many publishers set
//!   `article:published_time` or `datePublished` to the last update. Its
//!   publication is the earliest of the starts it states: `coverageStartTime`,
//!   `datePublished`, `dateCreated`, the `liveBlogUpdate`s' dates, the
//!   publication metas, and the `<time>`s of its entries.
//! * A teaser (a card of another story: a small block with a linked
//!   heading, and not the page's `h1`) dates that other story.

use std::sync::LazyLock;

use chrono::NaiveDate;
use regex::Regex;
use serde_json::Value;

use super::parse_machine;
use crate::extract::dom::{Dom, NodeId};
use crate::extract::meta::{self, Meta};
use crate::record::DateSource;

static LIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"live-?blog|live-?ticker|news-?ticker|live-?coverage|live-?updates|live-?feed|live-?stream-?entries")
        .expect("static regex")
});

/// Ancestors of a date searched for the card it sits in.
const TEASER_LEVELS: usize = 5;
/// Most text (bytes) a teaser card holds.
const TEASER_TEXT: usize = 600;

/// Is `id` inside a teaser of another story: a block of at most
/// [`TEASER_TEXT`] bytes, within [`TEASER_LEVELS`] levels, with a heading
/// that is a link (or holds one) and no `h1`?
pub(super) fn in_teaser(dom: &Dom, id: NodeId) -> bool {
    for a in dom.ancestors(id).take(TEASER_LEVELS) {
        if matches!(dom.tag(a), "body" | "main" | "html" | "") || dom.text_within(a, TEASER_TEXT).is_none() {
            return false;
        }
        let mut linked = false;
        for d in dom.descendants(a) {
            if !dom.is_element(d) {
                continue;
            }
            match dom.tag(d) {
                "h1" => return false,
                "h2" | "h3" | "h4" | "h5" | "h6" => {
                    let is_link = |x: NodeId| dom.tag(x) == "a" && dom.attr(x, "href").is_some();
                    linked |= dom.ancestors(d).take_while(|&x| x != a).any(is_link)
                        || dom.descendants(d).any(is_link);
                }
                _ => {}
            }
        }
        if linked {
            return true;
        }
    }
    false
}

/// The first publication of a live blog, when the page is one: (day, the
/// raw value, its source).
pub(super) fn live_start(
    dom: &Dom,
    m: &Meta,
    published: &[&str],
    ok: &dyn Fn(NaiveDate) -> bool,
) -> Option<(NaiveDate, String, DateSource)> {
    let blogs: Vec<&Value> = m
        .jsonld
        .iter()
        .filter(|v| meta::jsonld_types(v).contains(&"LiveBlogPosting"))
        .collect();
    let containers = live_containers(dom);
    if blogs.is_empty() && containers.is_empty() {
        return None;
    }
    let mut found: Vec<(NaiveDate, String, DateSource)> = Vec::new();
    let mut take = |raw: &str, source: DateSource| {
        if let Some(d) = parse_machine(raw).filter(|&d| ok(d)) {
            found.push((d, raw.to_string(), source));
        }
    };
    for b in &blogs {
        for key in ["coverageStartTime", "datePublished", "dateCreated"] {
            if let Some(raw) = b.get(key).and_then(meta::jsonld_text) {
                take(&raw, DateSource::Jsonld);
            }
        }
        let updates = match b.get("liveBlogUpdate") {
            Some(Value::Array(a)) => a.iter().collect(),
            Some(u @ Value::Object(_)) => vec![u],
            _ => vec![],
        };
        for u in updates {
            if let Some(raw) = u.get("datePublished").and_then(meta::jsonld_text) {
                take(&raw, DateSource::Jsonld);
            }
        }
    }
    for (name, v) in &m.metas {
        if published.contains(&name.as_str()) {
            take(v, DateSource::PublishedTime);
        }
    }
    for t in &m.times {
        if dom.attr(t.0, "datetime").is_some() && containers.iter().any(|&c| dom.is_ancestor(c, t.0)) {
            take(&t.1, DateSource::Time);
        }
    }
    found.into_iter().min_by_key(|f| f.0)
}

/// The elements named as a live blog's feed (outermost only).
fn live_containers(dom: &Dom) -> Vec<NodeId> {
    let mut out: Vec<NodeId> = Vec::new();
    for id in dom.descendants(0) {
        if !dom.is_element(id) {
            continue;
        }
        let hit = [dom.attr(id, "class"), dom.attr(id, "id")]
            .into_iter()
            .flatten()
            .any(|c| {
                ["live", "Live", "LIVE", "ticker", "Ticker"]
                    .iter()
                    .any(|w| c.contains(w))
                    && LIVE.is_match(&c.to_ascii_lowercase())
            });
        if hit && !out.iter().any(|&o| dom.is_ancestor(o, id)) {
            out.push(id);
        }
    }
    out
}
