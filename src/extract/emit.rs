//! Writing the chosen part of the tree out as paragraphs: block elements
//! break paragraphs, whitespace collapses, link-heavy lists and tables inside
//! the content are skipped, and short cross-link or legal lines are dropped.

use std::sync::LazyLock;

use regex::Regex;

use super::dom::{Dom, Kind, NodeId};
use super::text::{Stats, class_weight, link_density};

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

/// Short paragraphs that are cross-links or legal lines, not article text
/// (matched at the start of a paragraph of at most [`BOILERPLATE_CHARS`]).
static BOILERPLATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^(read more|related|see also|more from|recommended|sign up|subscribe|share this|follow us|all rights reserved|copyright|©|lesen sie auch|lesen sie mehr|mehr zum thema|mehr themen|auch interessant|das könnte dich|das könnte sie|weitere informationen|weitere artikel|zum thema|teilen|lire aussi|à lire aussi|lee también|leer más|te puede interesar|czytaj też|czytaj także|zobacz też)\b",
    )
    .expect("static regex")
});
/// Longest paragraph that [`BOILERPLATE`] may drop.
const BOILERPLATE_CHARS: usize = 160;

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

pub(super) fn emit(dom: &Dom, st: &Stats, root: NodeId, out: &mut Vec<String>) {
    let mut cur = String::new();
    let flush = |cur: &mut String, out: &mut Vec<String>| {
        let t = cur.trim();
        if !t.is_empty() && (t.len() > BOILERPLATE_CHARS || !BOILERPLATE.is_match(t)) {
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
