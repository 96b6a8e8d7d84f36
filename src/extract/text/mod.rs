//! Main-text selection: which part of the page is the article, and its text.
//!
//! 1. **Prune chrome**: `nav`, `header`, `footer`, `aside`, forms, buttons,
//!    hidden elements, captions, ARIA landmarks for navigation, teaser grids
//!    (`cards.rs`), and elements whose class or id names chrome
//!    (comments, sharing, related lists, ads, credits...), unless that
//!    element holds the article (`article`, `main`, `articleBody`, `hentry`).
//! 2. **Score** every paragraph-like block by its length and commas and give
//!    the score to its parent and grandparent, as Readability does; scale by
//!    link density and pick the best container (on a page of several
//!    stories, the one next to the headline's heading is favoured), then take
//!    in siblings that score well or are plain prose paragraphs, and a lead
//!    placed before the container (`lead.rs`).
//! 3. **Emit** the chosen blocks as paragraphs separated by `\n`, skipping
//!    link-heavy lists and tables (related stories) inside the content.
//!
//! If no container stands out, the whole pruned body is used, so every page
//! gets some text.

use std::sync::LazyLock;

use regex::Regex;

use super::cards::CardStats;
use super::dom::{Dom, Kind, NodeId};

pub mod markdown;
mod select;
pub(super) use select::is_ancestor;
use select::select;

/// Elements never part of article text.
const PRUNED_TAGS: &[&str] = &[
    "button",
    "select",
    "input",
    "textarea",
    "label",
    "script",
    "style",
    "noscript",
    "iframe",
    "svg",
    "canvas",
    "video",
    "audio",
    "object",
    "embed",
    "dialog",
    "menu",
    "template",
    "head",
    "title",
    "meta",
    "link",
    "option",
    "datalist",
    "map",
    "area",
    "math",
    "picture",
    "source",
    "img",
    "figcaption",
];
/// Landmarks of page chrome: pruned unless they hold the article itself
/// (unclosed `<header>`s and page-wide `<form>`s are common).
const LANDMARK_TAGS: &[&str] = &["nav", "header", "footer", "aside", "form"];
/// ARIA roles of chrome.
const PRUNED_ROLES: &[&str] = &[
    "navigation",
    "banner",
    "contentinfo",
    "complementary",
    "dialog",
    "alertdialog",
    "menu",
    "menubar",
    "search",
    "alert",
    "tablist",
    "toolbar",
];
pub(super) static CHROME_STRONG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"comment|kommentar|comentario|disqus|sidebar|related|share|sharing|social|newsletter|subscri|cookie|consent|breadcrumb|outbrain|taboola|promo|advert|sponsor|popular|trending|recommend|signup|sign-up|popup|modal|(^|[\s_-])ads?($|[\s_-])|banner|author-?bio|about-?the-?author|skip-?link|print-?only|screen-?reader|sr-only|visually-?hidden|(^|[\s_-])tags?($|[\s_-])|tag-?list|pagination|pager|toolbar|paywall|more-?stories|also-?read|see-?also|rating|login|follow-?us|caption|copyright|credit|image-?description|image-?annotation",
    )
    .expect("static regex")
});
static CHROME_WEAK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"footer|header|masthead|menu|(^|[\s_-])nav|navbar|widget|byline|dateline|timestamp|meta|hidden|remark|extra|supplement|shoutbox|combx|community|agegate|legend|author|date",
    )
    .expect("static regex")
});
static LIKELY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"article|body|content|main|post|story|entry|text|blog|column|shadow|prose")
        .expect("static regex")
});
static POSITIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"article|body|content|entry|hentry|h-entry|main|page|post|text|blog|story|prose")
        .expect("static regex")
});
static NEGATIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"hidden|banner|combx|comment|com-|contact|foot|footer|footnote|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|tool|widget|byline|author|dateline|writtenby")
        .expect("static regex")
});

/// The extracted text and how it was chosen.
#[derive(Debug, Default)]
pub struct Content {
    /// Paragraphs of the main text.
    pub paragraphs: Vec<String>,
    /// How each paragraph is set in Markdown (one per paragraph, in order).
    pub marks: Vec<markdown::Mark>,
    /// The container chosen, if scoring found one.
    pub root: Option<NodeId>,
}

/// Per-node aggregates over the pruned tree.
pub(super) struct Stats {
    pub(super) pruned: Vec<bool>,
    /// Characters of visible text below the node.
    pub(super) text: Vec<u32>,
    /// ... of which inside links.
    pub(super) link: Vec<u32>,
    /// Paragraph (`p`) descendants.
    pub(super) paras: Vec<u32>,
}

pub(super) fn class_id(dom: &Dom, id: NodeId) -> String {
    let mut s = String::new();
    if let Some(c) = dom.attr(id, "class") {
        s.push_str(c);
    }
    if let Some(i) = dom.attr(id, "id") {
        s.push(' ');
        s.push_str(i);
    }
    s.make_ascii_lowercase();
    s
}

fn is_hidden(dom: &Dom, id: NodeId) -> bool {
    if dom.attr(id, "hidden").is_some() {
        return true;
    }
    if dom.attr(id, "aria-hidden") == Some("true") && dom.tag(id) != "span" {
        return true;
    }
    dom.attr(id, "style").is_some_and(|s| {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        let s = s.to_ascii_lowercase();
        s.contains("display:none") || s.contains("visibility:hidden")
    })
}

/// Tag-level pruning (no class names).
pub(super) fn tag_pruned(dom: &Dom, id: NodeId) -> bool {
    let tag = dom.tag(id);
    PRUNED_TAGS.contains(&tag) || is_hidden(dom, id)
}

/// Chrome by landmark tag, ARIA role or class name.
fn chrome(dom: &Dom, id: NodeId) -> bool {
    LANDMARK_TAGS.contains(&dom.tag(id))
        || dom
            .attr(id, "role")
            .is_some_and(|r| PRUNED_ROLES.contains(&r.trim().to_ascii_lowercase().as_str()))
        || class_pruned(dom, id)
}

pub(super) fn class_pruned(dom: &Dom, id: NodeId) -> bool {
    if matches!(dom.tag(id), "html" | "body" | "main" | "article" | "a") {
        return false;
    }
    let ci = class_id(dom, id);
    if ci.is_empty() {
        return false;
    }
    CHROME_STRONG.is_match(&ci) || (CHROME_WEAK.is_match(&ci) && !LIKELY.is_match(&ci))
}

/// Count visible characters (whitespace runs count as one).
fn visible_len(s: &str) -> u32 {
    let mut n = 0u32;
    let mut space = true;
    for c in s.chars() {
        if c.is_whitespace() {
            if !space {
                n += 1;
            }
            space = true;
        } else {
            n += 1;
            space = false;
        }
    }
    n
}

fn compute(dom: &Dom, root: NodeId, order: &[NodeId], extra: &dyn Fn(NodeId) -> bool) -> Stats {
    let n = dom.nodes.len();
    let mut st = Stats {
        pruned: vec![false; n],
        text: vec![0; n],
        link: vec![0; n],
        paras: vec![0; n],
    };
    for &id in order {
        let parent_pruned = dom.nodes[id]
            .parent
            .is_some_and(|p| p != root && st.pruned[p]);
        st.pruned[id] = parent_pruned || (dom.is_element(id) && (tag_pruned(dom, id) || extra(id)));
    }
    for &id in order.iter().rev() {
        if st.pruned[id] {
            continue;
        }
        if let Kind::Text(t) = &dom.nodes[id].kind {
            st.text[id] = visible_len(t);
        }
        if dom.tag(id) == "a" {
            st.link[id] = st.text[id];
        }
        if dom.tag(id) == "p" {
            st.paras[id] += 1;
        }
        if let Some(p) = dom.nodes[id].parent {
            st.text[p] += st.text[id];
            st.link[p] += st.link[id];
            st.paras[p] += st.paras[id];
        }
    }
    st
}

pub(super) fn link_density(st: &Stats, id: NodeId) -> f64 {
    if st.text[id] == 0 {
        0.0
    } else {
        f64::from(st.link[id]) / f64::from(st.text[id])
    }
}

pub(super) fn class_weight(dom: &Dom, id: NodeId) -> f64 {
    let ci = class_id(dom, id);
    let mut w = 0.0;
    if NEGATIVE.is_match(&ci) {
        w -= 25.0;
    }
    if POSITIVE.is_match(&ci) {
        w += 25.0;
    }
    w
}

fn tag_weight(tag: &str) -> f64 {
    match tag {
        "article" => 10.0,
        "div" | "main" => 5.0,
        "pre" | "td" | "blockquote" | "section" => 3.0,
        "address" | "ol" | "ul" | "dl" | "dd" | "dt" | "li" | "form" => -3.0,
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "th" => -5.0,
        _ => 0.0,
    }
}

/// Is this element a paragraph-like block for scoring?
fn is_scorable(dom: &Dom, id: NodeId) -> bool {
    match dom.tag(id) {
        "p" | "pre" | "td" | "blockquote" | "dd" | "li" => true,
        // A div or section used as a paragraph: it holds text directly.
        "div" | "section" | "article" | "span" | "font" => dom
            .children(id)
            .any(|c| matches!(&dom.nodes[c].kind, Kind::Text(t) if visible_len(t) > 40 && t.trim().contains(' '))),
        _ => false,
    }
}

/// Choose the main container and extract its paragraphs.
///
/// When pruning by class names leaves less than `MIN_CHARS` of text, the
/// page is tried again without it and the longer result is kept.
pub fn extract(dom: &Dom, anchor: Option<NodeId>) -> Content {
    let body = dom.find("body").unwrap_or(0);
    let mut order = vec![body];
    order.extend(dom.descendants(body));
    let raw = compute(dom, body, &order, &|_| false);
    // Elements that hold the article itself are never pruned by class name.
    let mut holds_main = vec![false; dom.nodes.len()];
    for &id in order.iter().rev() {
        if matches!(dom.tag(id), "article" | "main")
            || dom
                .attr(id, "itemprop")
                .is_some_and(|p| p.eq_ignore_ascii_case("articleBody"))
            || is_hentry(dom, id)
        {
            holds_main[id] = true;
        }
        if holds_main[id]
            && let Some(p) = dom.nodes[id].parent
        {
            holds_main[p] = true;
        }
    }
    let cards = CardStats::new(dom, &order);
    let guard = |id: NodeId| !holds_main[id];
    let len = |c: &Content| c.paragraphs.iter().map(|p| p.len()).sum::<usize>();
    let full = compute(dom, body, &order, &|id| {
        (chrome(dom, id) || cards.is_grid(dom, id)) && guard(id)
    });
    let first = select(dom, body, &order, &full, anchor);
    if len(&first) >= MIN_CHARS {
        return first;
    }
    let landmarks = compute(dom, body, &order, &|id| {
        (LANDMARK_TAGS.contains(&dom.tag(id)) || cards.is_grid(dom, id)) && guard(id)
    });
    let second = select(dom, body, &order, &landmarks, anchor);
    if len(&second) >= MIN_CHARS {
        return second;
    }
    let third = select(dom, body, &order, &raw, anchor);
    // The most pruned result that is not much shorter than the longest: a
    // short article should not take in the page's chrome just to be longer.
    let longest = [&first, &second, &third]
        .iter()
        .map(|c| len(c))
        .max()
        .unwrap_or(0);
    [first, second, third]
        .into_iter()
        .find(|c| len(c) as f64 >= longest as f64 * SHORT_KEEP)
        .unwrap_or_default()
}

/// Share of the longest result a more pruned one must reach to be kept.
const SHORT_KEEP: f64 = 0.6;

/// A microformats entry (`hentry`, `h-entry`): the post itself, whatever
/// taxonomy words its other class names carry (`tag-social`, `custom_tags-ai`).
fn is_hentry(dom: &Dom, id: NodeId) -> bool {
    dom.attr(id, "class").is_some_and(|c| {
        c.split_ascii_whitespace()
            .any(|t| t.eq_ignore_ascii_case("hentry") || t.eq_ignore_ascii_case("h-entry"))
    })
}

/// Text below which extraction is retried without class-name pruning.
const MIN_CHARS: usize = 1000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lead_outside_the_container_comes_first() {
        let body_p = "<p>The body paragraph talks about the model, its training data, its costs, and what the researchers found when they tried it on new tasks.</p>";
        let html = format!(
            "<html><body><article><header><h1>T</h1><p class=\"article-lead\">The lead sums up the story in one sentence that is long enough to count as prose.</p></header><div class=\"body\">{}</div></article></body></html>",
            body_p.repeat(6)
        );
        let dom = Dom::parse(&html);
        let c = extract(&dom, None);
        assert!(
            c.paragraphs[0].starts_with("The lead sums up"),
            "{:?}",
            c.paragraphs
        );
    }

    /// `EXTRACT_DEBUG=page.html cargo test debug_page -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn debug_page() {
        let Ok(path) = std::env::var("EXTRACT_DEBUG") else {
            return;
        };
        let bytes = std::fs::read(path).unwrap();
        let (text, _) = super::super::charset::decode(&bytes, None, None);
        let prepared = super::super::prepass::prepare(&text);
        let dom = Dom::parse(&prepared.html);
        let body = dom.find("body").unwrap_or(0);
        let mut order = vec![body];
        order.extend(dom.descendants(body));
        let raw = compute(&dom, body, &order, &|_| false);
        let st = compute(&dom, body, &order, &|id| chrome(&dom, id));
        for &id in &order {
            if dom.is_element(id) && raw.text[id] > 500 {
                let mut depth = 0;
                let mut cur = dom.nodes[id].parent;
                while let Some(c) = cur {
                    depth += 1;
                    cur = dom.nodes[c].parent;
                }
                println!(
                    "{}{} class={:?} id={:?} raw={} kept={} pruned={} tagpruned={} classpruned={}",
                    " ".repeat(depth),
                    dom.tag(id),
                    dom.attr(id, "class").unwrap_or(""),
                    dom.attr(id, "id").unwrap_or(""),
                    raw.text[id],
                    st.text[id],
                    st.pruned[id],
                    tag_pruned(&dom, id),
                    class_pruned(&dom, id)
                );
            }
        }
        let cards = CardStats::new(&dom, &order);
        for &id in &order {
            if dom.is_element(id) && cards.is_grid(&dom, id) {
                println!(
                    "GRID {} class={:?} text={}",
                    dom.tag(id),
                    dom.attr(id, "class"),
                    raw.text[id]
                );
            }
        }
        let c = extract(&dom, None);
        println!(
            "ROOT {:?} {:?}",
            c.root.map(|r| dom.tag(r)),
            c.root.and_then(|r| dom.attr(r, "class"))
        );
        println!("{}", c.paragraphs.join("\n"));
    }
}
