//! Live blogs and teasers: the two kinds of page where the first date a rule
//! meets is often not the page's.
//!
//! * A live blog (JSON-LD `LiveBlogPosting`) keeps being updated, and many
//!   publishers set `article:published_time` or `datePublished` to the last
//!   update. Its publication is the earliest of the starts it states:
//!   `coverageStartTime`, `datePublished`, `dateCreated`, the
//!   `liveBlogUpdate`s' dates and the publication metas. (The times of its
//!   entries are not read: pages that carry a day's entries of a long-running
//!   blog are dated by that day.)
//! * A teaser (a card of another story in a row of cards: a small block with
//!   a linked heading, and not the page's `h1`; or an item of a list of
//!   links titled like stories) dates that other story.

use chrono::NaiveDate;
use serde_json::Value;

use super::parse_machine;
use crate::extract::dom::{Dom, NodeId};
use crate::extract::meta::{self, Meta};
use crate::record::DateSource;

/// Ancestors of a date searched for the card it sits in.
const TEASER_LEVELS: usize = 5;
/// Most text (bytes) a teaser card holds.
const TEASER_TEXT: usize = 600;

/// Is `id` inside a teaser of another story: a card of at most
/// [`TEASER_TEXT`] bytes, within [`TEASER_LEVELS`] levels, with a linked
/// heading and no `h1`, in a row of such cards (two siblings of the same
/// tag with linked headings of their own)?
pub(super) fn in_teaser(dom: &Dom, id: NodeId) -> bool {
    if in_story_list(dom, id) {
        return true;
    }
    for a in dom.ancestors(id).take(TEASER_LEVELS) {
        if matches!(dom.tag(a), "body" | "main" | "html" | "")
            || dom.text_within(a, TEASER_TEXT).is_none()
        {
            return false;
        }
        match linked_heading(dom, a) {
            None => return false,
            Some(false) => continue,
            Some(true) => {}
        }
        let Some(parent) = dom.nodes[a].parent() else {
            return false;
        };
        let tag = dom.tag(a);
        let cards = dom
            .element_children(parent)
            .filter(|&s| s != a && dom.tag(s) == tag)
            .filter(|&s| dom.text_within(s, TEASER_TEXT).is_some())
            .filter(|&s| linked_heading(dom, s) == Some(true))
            .count();
        return cards >= 2;
    }
    false
}

/// Ancestors of a date searched for the list item it sits in.
const ITEM_LEVELS: usize = 4;
/// Most text (bytes) an item of a list of stories holds.
const ITEM_TEXT: usize = 300;
/// Least words of a link's text read as another story's title (a
/// section's or author's name has fewer), or least characters of one
/// written without spaces (Chinese, Japanese).
const TITLE_WORDS: usize = 3;
const TITLE_CHARS_UNSPACED: usize = 10;
/// Least items of a list of stories.
const LIST_ITEMS: usize = 3;

/// Is `id` in an item of a list of other stories (latest news, archives):
/// an `li` of at most [`ITEM_TEXT`] bytes holding a link titled like a
/// story ([`is_title`]), among at least [`LIST_ITEMS`] such items?
fn in_story_list(dom: &Dom, id: NodeId) -> bool {
    let Some(li) = dom
        .self_and_ancestors(id)
        .take(ITEM_LEVELS)
        .find(|&a| dom.tag(a) == "li")
    else {
        return false;
    };
    let titled = |item: NodeId| {
        dom.text_within(item, ITEM_TEXT).is_some()
            && dom.descendants(item).any(|d| {
                dom.is_element(d)
                    && dom.tag(d) == "a"
                    && dom.attr(d, "href").is_some()
                    && dom.text_within(d, ITEM_TEXT).is_some_and(|t| is_title(&t))
            })
    };
    if !titled(li) {
        return false;
    }
    let Some(list) = dom.nodes[li].parent() else {
        return false;
    };
    dom.element_children(list)
        .filter(|&s| dom.tag(s) == "li" && titled(s))
        .count()
        >= LIST_ITEMS
}

/// Does a link's text read as a story's title?
fn is_title(t: &str) -> bool {
    let t = t.trim();
    let words = t.split_whitespace().count();
    words >= TITLE_WORDS
        || (words == 1 && t.chars().count() >= TITLE_CHARS_UNSPACED && !t.is_ascii())
}

/// Whether the block holds a heading that is a link or holds one; `None`
/// when it holds an `h1` (the page's own headline).
fn linked_heading(dom: &Dom, a: NodeId) -> Option<bool> {
    let is_link = |x: NodeId| dom.tag(x) == "a" && dom.attr(x, "href").is_some();
    let mut linked = false;
    for d in dom.descendants(a) {
        if !dom.is_element(d) {
            continue;
        }
        match dom.tag(d) {
            "h1" => return None,
            "h2" | "h3" | "h4" | "h5" | "h6" => {
                linked |= dom.ancestors(d).take_while(|&x| x != a).any(is_link)
                    || dom.descendants(d).any(is_link);
            }
            _ => {}
        }
    }
    Some(linked)
}

/// The first publication of a live blog, when the page is one: (day, the
/// raw value, its source).
pub(super) fn live_start(
    m: &Meta,
    published: &[&str],
    ok: &dyn Fn(NaiveDate) -> bool,
) -> Option<(NaiveDate, String, DateSource)> {
    let blogs: Vec<&Value> = m
        .jsonld
        .iter()
        .filter(|v| {
            // `LiveBlogPosting`, also written `schema:LiveBlogPosting` or
            // as a full `https://schema.org/LiveBlogPosting`.
            meta::jsonld_types(v)
                .iter()
                .any(|t| t.rsplit(['/', ':']).next() == Some("LiveBlogPosting"))
        })
        .collect();
    if blogs.is_empty() {
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
    found.into_iter().min_by_key(|f| f.0)
}
