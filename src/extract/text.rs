//! Main-text selection: which part of the page is the article, and its text.
//!
//! 1. **Prune chrome**: `nav`, `header`, `footer`, `aside`, forms, buttons,
//!    hidden elements, ARIA landmarks for navigation, and elements whose
//!    class or id names chrome (comments, sharing, related lists, ads...),
//!    unless that element holds most of the page's prose.
//! 2. **Score** every paragraph-like block by its length and commas and give
//!    the score to its parent and grandparent, as Readability does; scale by
//!    link density and pick the best container, then take in siblings that
//!    score well or are plain prose paragraphs.
//! 3. **Emit** the chosen blocks as paragraphs separated by `\n`, skipping
//!    link-heavy lists and tables (related stories) inside the content.
//!
//! If no container stands out, the whole pruned body is used, so every page
//! gets some text.

use std::sync::LazyLock;

use regex::Regex;

use super::dom::{Dom, Kind, NodeId};

/// Elements never part of article text.
const PRUNED_TAGS: &[&str] = &[
    "nav", "header", "footer", "aside", "button", "select", "input", "textarea", "label", "script",
    "style", "noscript", "iframe", "svg", "canvas", "video", "audio", "object", "embed", "dialog",
    "menu", "template", "head", "title", "meta", "link", "option", "datalist", "map", "area",
    "math", "picture", "source", "img",
];
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
/// Elements that break text into paragraphs.
const BLOCK_TAGS: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "main",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "ul",
    "ol",
    "li",
    "blockquote",
    "pre",
    "table",
    "tr",
    "td",
    "th",
    "dl",
    "dt",
    "dd",
    "figure",
    "figcaption",
    "address",
    "hr",
    "details",
    "summary",
    "br",
    "center",
    "caption",
    "tbody",
    "thead",
    "tfoot",
    "form",
    "fieldset",
    "header",
    "footer",
    "aside",
    "nav",
];

static CHROME_STRONG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"comment|disqus|sidebar|related|share|sharing|social|newsletter|subscri|cookie|consent|breadcrumb|outbrain|taboola|promo|advert|sponsor|popular|trending|recommend|signup|sign-up|popup|modal|(^|[\s_-])ads?($|[\s_-])|banner|author-?bio|about-?the-?author|skip-?link|print-?only|screen-?reader|sr-only|visually-?hidden|(^|[\s_-])tags?($|[\s_-])|tag-?list|pagination|pager|toolbar|paywall|more-?stories|also-?read|see-?also|rating|login|follow-?us",
    )
    .expect("static regex")
});
static CHROME_WEAK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"footer|header|masthead|menu|(^|[\s_-])nav|navbar|widget|byline|dateline|timestamp|meta|hidden|remark|extra|supplement|shoutbox|combx|community|agegate|legend|caption|credit|author|date",
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
    /// The container chosen, if scoring found one.
    pub root: Option<NodeId>,
}

/// Per-node aggregates over the pruned tree.
struct Stats {
    pruned: Vec<bool>,
    /// Characters of visible text below the node.
    text: Vec<u32>,
    /// ... of which inside links.
    link: Vec<u32>,
    /// Paragraph (`p`) descendants.
    paras: Vec<u32>,
}

fn class_id(dom: &Dom, id: NodeId) -> String {
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
fn tag_pruned(dom: &Dom, id: NodeId) -> bool {
    let tag = dom.tag(id);
    if PRUNED_TAGS.contains(&tag) || is_hidden(dom, id) {
        return true;
    }
    if dom
        .attr(id, "role")
        .is_some_and(|r| PRUNED_ROLES.contains(&r.trim().to_ascii_lowercase().as_str()))
    {
        return true;
    }
    false
}

fn class_pruned(dom: &Dom, id: NodeId) -> bool {
    if matches!(
        dom.tag(id),
        "html" | "body" | "main" | "article" | "p" | "a"
    ) {
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

fn link_density(st: &Stats, id: NodeId) -> f64 {
    if st.text[id] == 0 {
        0.0
    } else {
        f64::from(st.link[id]) / f64::from(st.text[id])
    }
}

fn class_weight(dom: &Dom, id: NodeId) -> f64 {
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
            .any(|c| matches!(&dom.nodes[c].kind, Kind::Text(t) if visible_len(t) > 40)),
        _ => false,
    }
}

/// Choose the main container and extract its paragraphs.
pub fn extract(dom: &Dom) -> Content {
    let body = dom.find("body").unwrap_or(0);
    let mut order = vec![body];
    order.extend(dom.descendants(body));
    let raw = compute(dom, body, &order, &|_| false);
    let total = raw.text[body].max(1);
    let st = compute(dom, body, &order, &|id| {
        class_pruned(dom, id) && f64::from(raw.text[id]) < 0.5 * f64::from(total)
    });

    // Readability-style scoring.
    let n = dom.nodes.len();
    let mut score = vec![0.0f64; n];
    let mut initialised = vec![false; n];
    let mut candidates = Vec::new();
    for &id in &order {
        if st.pruned[id] || !dom.is_element(id) || !is_scorable(dom, id) {
            continue;
        }
        let len = st.text[id];
        if len < 25 {
            continue;
        }
        let text = dom.text(id);
        let commas = text
            .matches([',', '\u{ff0c}', '\u{3001}', '\u{060c}'])
            .count() as f64;
        let s = 1.0 + commas + (f64::from(len) / 100.0).min(3.0);
        let mut anc = dom.nodes[id].parent;
        for level in 0..5 {
            let Some(a) = anc else { break };
            if !dom.is_element(a) || a == 0 {
                break;
            }
            if !initialised[a] {
                initialised[a] = true;
                score[a] = tag_weight(dom.tag(a)) + class_weight(dom, a);
                candidates.push(a);
            }
            score[a] += s / [1.0, 2.0, 6.0, 9.0, 12.0][level];
            if a == body {
                break;
            }
            anc = dom.nodes[a].parent;
        }
    }
    for &c in &candidates {
        score[c] *= 1.0 - link_density(&st, c);
    }
    candidates.sort_by(|a, b| score[*b].total_cmp(&score[*a]));

    let mut out = Content::default();
    let Some(&first) = candidates.first() else {
        emit(dom, &st, body, &mut out.paragraphs);
        return out;
    };
    let top = refine_top(dom, &score, &initialised, &candidates, first, body);
    let top_score = score[top];
    let threshold = (top_score * 0.2).max(10.0);
    let top_class = dom.attr(top, "class").unwrap_or("");
    let parent = dom.nodes[top].parent.filter(|&p| p != 0);
    let siblings: Vec<NodeId> = match parent {
        Some(p) if top != body => dom.children(p).collect(),
        _ => vec![top],
    };
    for s in siblings {
        if st.pruned[s] {
            continue;
        }
        let keep = s == top
            || (initialised[s]
                && score[s]
                    + if !top_class.is_empty() && dom.attr(s, "class") == Some(top_class) {
                        top_score * 0.2
                    } else {
                        0.0
                    }
                    >= threshold)
            || (dom.tag(s) == "p" && {
                let ld = link_density(&st, s);
                let len = st.text[s];
                (len > 80 && ld < 0.25) || (len > 0 && ld == 0.0 && dom.text(s).contains(". "))
            });
        if keep {
            emit(dom, &st, s, &mut out.paragraphs);
        }
    }
    out.root = Some(top);
    let chars: usize = out.paragraphs.iter().map(|p| p.len()).sum();
    if chars < 200 {
        let mut all = Vec::new();
        emit(dom, &st, body, &mut all);
        if all.iter().map(|p| p.len()).sum::<usize>() > chars * 2 {
            out.paragraphs = all;
            out.root = None;
        }
    }
    out
}

/// Readability's refinements of the best candidate: move up to an ancestor
/// shared by several near-best candidates, or to a parent that scores higher,
/// and past wrappers with a single child.
fn refine_top(
    dom: &Dom,
    score: &[f64],
    initialised: &[bool],
    ranked: &[NodeId],
    first: NodeId,
    body: NodeId,
) -> NodeId {
    let top_score = score[first];
    let mut top = first;
    let ancestors = |id: NodeId| {
        let mut v = Vec::new();
        let mut cur = dom.nodes[id].parent;
        while let Some(c) = cur {
            v.push(c);
            if c == body {
                break;
            }
            cur = dom.nodes[c].parent;
        }
        v
    };
    let alternatives: Vec<Vec<NodeId>> = ranked
        .iter()
        .skip(1)
        .take(4)
        .filter(|&&c| top_score > 0.0 && score[c] / top_score >= 0.75)
        .map(|&c| ancestors(c))
        .collect();
    if alternatives.len() >= 3 {
        let mut cur = dom.nodes[top].parent;
        while let Some(p) = cur {
            if p == body || p == 0 {
                break;
            }
            let containing = alternatives.iter().filter(|a| a.contains(&p)).count();
            if containing >= 3 {
                top = p;
                break;
            }
            cur = dom.nodes[p].parent;
        }
    }
    // A parent scoring higher than the candidate is the better container.
    let mut last = score[top];
    let threshold = last / 3.0;
    let mut cur = dom.nodes[top].parent;
    while let Some(p) = cur {
        if p == body || p == 0 {
            break;
        }
        if initialised[p] {
            if score[p] < threshold {
                break;
            }
            if score[p] > last {
                top = p;
                break;
            }
            last = score[p];
        }
        cur = dom.nodes[p].parent;
    }
    // Climb out of wrappers that hold nothing but the candidate.
    while let Some(p) = dom.nodes[top].parent {
        if p == body || p == 0 || dom.children(p).filter(|&c| dom.is_element(c)).count() != 1 {
            break;
        }
        top = p;
    }
    top
}

/// Should a container inside the content be left out (link lists, empty shells)?
fn skip_inside(dom: &Dom, st: &Stats, id: NodeId) -> bool {
    let tag = dom.tag(id);
    if !matches!(
        tag,
        "ul" | "ol" | "div" | "section" | "table" | "dl" | "form" | "figure"
    ) {
        return false;
    }
    let ld = link_density(st, id);
    let text = st.text[id];
    if text == 0 {
        return false;
    }
    if ld > 0.5 {
        return true;
    }
    if matches!(tag, "ul" | "ol" | "div" | "section") && ld > 0.3 && st.paras[id] == 0 {
        return true;
    }
    class_weight(dom, id) < 0.0 && text < 200 && st.paras[id] < 2
}

fn emit(dom: &Dom, st: &Stats, root: NodeId, out: &mut Vec<String>) {
    let mut cur = String::new();
    let flush = |cur: &mut String, out: &mut Vec<String>| {
        let t = cur.trim();
        if !t.is_empty() {
            out.push(t.to_string());
        }
        cur.clear();
    };
    // Explicit stack of (node, entering?) so deep trees do not recurse.
    let mut stack = vec![(root, true)];
    while let Some((id, enter)) = stack.pop() {
        let tag = dom.tag(id);
        let block = dom.is_element(id) && BLOCK_TAGS.contains(&tag);
        if !enter {
            if block {
                flush(&mut cur, out);
            }
            continue;
        }
        if st.pruned[id] && id != root {
            continue;
        }
        match &dom.nodes[id].kind {
            Kind::Text(t) => push_collapsed(&mut cur, t),
            Kind::Element | Kind::Document => {
                if id != root && skip_inside(dom, st, id) {
                    continue;
                }
                if tag == "br" || tag == "hr" {
                    flush(&mut cur, out);
                    continue;
                }
                if block {
                    flush(&mut cur, out);
                }
                stack.push((id, false));
                let children: Vec<NodeId> = dom.children(id).collect();
                for c in children.into_iter().rev() {
                    stack.push((c, true));
                }
            }
            Kind::Other => {}
        }
    }
    flush(&mut cur, out);
}

/// Append text with whitespace runs collapsed to one space.
fn push_collapsed(cur: &mut String, t: &str) {
    let mut space = cur.is_empty() || cur.ends_with(' ');
    for c in t.chars() {
        if c.is_whitespace() {
            if !space {
                cur.push(' ');
                space = true;
            }
        } else {
            cur.push(c);
            space = false;
        }
    }
}
