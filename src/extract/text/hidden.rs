//! Text that the pruning rules would take for hidden chrome but that is the
//! article: a paywalled part (named as one, or by the page's JSON-LD
//! `cssSelector`) holding prose, hidden or not; a hidden element (`hidden`,
//! `display:none`) holding several paragraphs of prose and no chrome name
//! (the rest of an article behind a "read more" button); and the captions
//! and hidden slides of a slideshow or listicle.

use std::collections::HashMap;

use super::chrome::{Word, chrome, hidden_or_caption, is_hidden, is_slideshow, names_have};
use super::select::Content;
use crate::extract::dom::{Dom, Kind, NodeId};
use crate::extract::paywall::Marks;

/// Paragraphs of prose a hidden element needs to be read.
const HIDDEN_PARAS: usize = 2;
/// Characters of prose a hidden element or paywalled part needs (weighed
/// as [`crate::extract::weighted_len`] does).
const PROSE_CHARS: usize = 200;
/// Characters a paragraph needs to count as prose.
const PARA_CHARS: usize = 80;

/// Which elements are read despite the pruning rules.
pub(super) struct Kept {
    /// Exempt from pruning as hidden, as a caption or by class name.
    pub(super) keep: Vec<bool>,
    /// Paywalled parts: like `article`, never pruned by class name, nor
    /// their ancestors.
    pub(super) main: Vec<bool>,
    /// Paywalled parts left out (`Marks::free_only`).
    pub(super) drop: Vec<bool>,
    /// The outermost kept elements and what they are.
    found: Vec<(NodeId, &'static str)>,
    paywalled: bool,
}

impl Kept {
    pub(super) fn new(dom: &Dom, order: &[NodeId], marks: &Marks) -> Kept {
        let n = dom.nodes.len();
        let mut k = Kept {
            keep: vec![false; n],
            main: vec![false; n],
            drop: vec![false; n],
            found: Vec::new(),
            paywalled: false,
        };
        // Per node: inside a paywalled part, inside a slideshow.
        let mut in_paywall = vec![false; n];
        let mut in_slides = vec![false; n];
        let mut runs = HashMap::new();
        for &id in order {
            if !dom.is_element(id) {
                continue;
            }
            let parent = dom.nodes[id].parent().unwrap_or(0);
            in_paywall[id] = in_paywall[parent];
            in_slides[id] = in_slides[parent];
            let paywall = marks.is_paywall_named(dom, id, names_have(dom, id, Word::Paywall));
            if in_paywall[id] {
                k.keep[id] = is_hidden(dom, id) || paywall;
                continue;
            }
            if paywall {
                k.paywalled = true;
                if marks.free_only {
                    k.drop[id] = true;
                    continue;
                }
                let (paras, chars) = prose(dom, id);
                if (paras >= 1 && chars >= PROSE_CHARS)
                    || marked_paragraph(dom, id, marks, &mut runs)
                {
                    in_paywall[id] = true;
                    k.keep[id] = true;
                    k.main[id] = true;
                    k.found.push((id, "paywall"));
                    continue;
                }
            }
            if !in_slides[id] && is_slideshow(dom, id) {
                in_slides[id] = true;
                k.found.push((id, "slideshow"));
            }
            if in_slides[id] {
                k.keep[id] = hidden_or_caption(dom, id);
                continue;
            }
            if is_hidden(dom, id)
                && collapsed(dom, id)
                && !k.keep[parent]
                && !chrome(dom, id)
                && follows_prose(dom, id)
            {
                let (paras, chars) = prose(dom, id);
                if paras >= HIDDEN_PARAS && chars >= PROSE_CHARS {
                    k.keep[id] = true;
                    k.found.push((id, "hidden"));
                }
            }
        }
        k
    }

    /// `content` with the parts it read named, those inside or around its
    /// container.
    pub(super) fn label(&self, dom: &Dom, mut content: Content) -> Content {
        content.paywalled = self.paywalled;
        for &(id, what) in &self.found {
            let read = content
                .root
                .is_none_or(|r| dom.is_ancestor(r, id) || dom.is_ancestor(id, r));
            if read {
                content
                    .unhidden
                    .push(format!("{what} {}", describe(dom, id)));
            }
        }
        content
    }
}

/// Hidden the way a "read more" section is: by the `hidden` attribute or
/// `display: none` (not `visibility: hidden` or `aria-hidden`, which hide
/// what is laid out or read aloud otherwise).
fn collapsed(dom: &Dom, id: NodeId) -> bool {
    dom.attr(id, "hidden").is_some()
        || dom.attr(id, "style").is_some_and(|s| {
            let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
            s.to_ascii_lowercase().contains("display:none")
        })
}

/// Siblings before a hidden block searched for the article's visible start.
const BEFORE_SIBLINGS: usize = 8;

/// Does a hidden block continue an article whose start is visible: is one
/// of the elements just before it a paragraph of prose (or holds one)?
fn follows_prose(dom: &Dom, id: NodeId) -> bool {
    let mut prev = dom.nodes[id].prev();
    let mut seen = 0;
    while let Some(p) = prev {
        prev = dom.nodes[p].prev();
        if !dom.is_element(p) {
            continue;
        }
        seen += 1;
        if seen > BEFORE_SIBLINGS {
            break;
        }
        if is_hidden(dom, p) {
            continue;
        }
        if prose(dom, p).0 >= 1 || (dom.tag(p) == "p" && prose_paragraph(dom, p)) {
            return true;
        }
    }
    false
}

/// `div.class` or `div#id`, for the report.
fn describe(dom: &Dom, id: NodeId) -> String {
    let tag = dom.tag(id);
    if let Some(c) = dom
        .attr(id, "class")
        .and_then(|c| c.split_whitespace().next())
    {
        format!("{tag}.{c}")
    } else if let Some(i) = dom.attr(id, "id") {
        format!("{tag}#{i}")
    } else {
        tag.to_string()
    }
}

/// Paragraphs of prose below `id` (`p` elements of at least [`PARA_CHARS`]
/// characters outside links) and their characters.
fn prose(dom: &Dom, id: NodeId) -> (usize, usize) {
    let (mut paras, mut chars) = (0, 0);
    let mut it = dom.descendants(id);
    while let Some(d) = it.next() {
        if !dom.is_element(d) || dom.tag(d) != "p" {
            continue;
        }
        it.skip_children_of(d);
        if let Some(len) = prose_len(dom, d) {
            paras += 1;
            chars += len;
        }
    }
    (paras, chars)
}

/// Is `id` a paragraph of prose that carries the paywall mark itself, or
/// a subheading so marked, among at least [`MARKED_RUN`] marked paragraphs
/// of prose under the same parent (a publisher that names each paragraph
/// of the subscribers' part: `<p class="paragraph paywall">`)? A prompt to
/// subscribe is one paragraph, or shorter. `runs` keeps each parent's
/// answer.
fn marked_paragraph(
    dom: &Dom,
    id: NodeId,
    marks: &Marks,
    runs: &mut HashMap<NodeId, bool>,
) -> bool {
    let heading = matches!(dom.tag(id), "h2" | "h3" | "h4" | "h5" | "h6");
    // Short paragraphs of the run count too ("He said so."), links alone not.
    let paragraph = dom.tag(id) == "p" && text_len(dom, id, 1).is_some();
    if !(heading || paragraph) {
        return false;
    }
    let Some(parent) = dom.nodes[id].parent() else {
        return false;
    };
    *runs.entry(parent).or_insert_with(|| {
        dom.element_children(parent)
            .filter(|&s| {
                dom.tag(s) == "p"
                    && marks.is_paywall_named(dom, s, names_have(dom, s, Word::Paywall))
                    && prose_paragraph(dom, s)
            })
            .nth(MARKED_RUN - 1)
            .is_some()
    })
}

/// Least paragraphs of prose, each marked as paywalled, under one parent
/// for each to be read ([`marked_paragraph`]).
const MARKED_RUN: usize = 2;

/// Is the `p` itself a paragraph of prose?
fn prose_paragraph(dom: &Dom, d: NodeId) -> bool {
    prose_len(dom, d).is_some()
}

/// The weighed length of a `p` of prose: at least [`PARA_CHARS`], under a
/// quarter of it in links.
fn prose_len(dom: &Dom, d: NodeId) -> Option<usize> {
    text_len(dom, d, PARA_CHARS)
}

/// The weighed length of the text below `d`, when it is at least `least`
/// and under a quarter of it is in links.
fn text_len(dom: &Dom, d: NodeId, least: usize) -> Option<usize> {
    let mut len = 0;
    let mut linked = 0;
    for x in std::iter::once(d).chain(dom.descendants(d)) {
        if let Kind::Text(t) = &dom.nodes[x].kind {
            let l = crate::extract::weighted_len(t.trim());
            len += l;
            if dom
                .ancestors(x)
                .take_while(|&a| a != d)
                .any(|a| dom.tag(a) == "a")
            {
                linked += l;
            }
        }
    }
    (len >= least && linked * 4 < len).then_some(len)
}

#[cfg(test)]
mod tests {
    use crate::extract::dom::Dom;

    fn text(html: &str) -> String {
        super::super::extract(&Dom::parse(html), None)
            .paragraphs
            .join("\n")
    }

    #[test]
    fn paragraphs_each_named_paywall_are_read_and_a_lone_prompt_is_not() {
        let p = |w: &str, class: &str| {
            format!("<p class=\"{class}\">{w} {}</p>", "The council met on Tuesday and agreed to widen the road, after a long debate about costs.".repeat(2))
        };
        let free: String = (0..8).map(|i| p(&format!("Free{i}"), "para")).collect();
        let paid: String = (0..8)
            .map(|i| p(&format!("Paid{i}"), "para paywall"))
            .collect();
        let got = text(&format!(
            "<body><article><h1>T</h1><div class=\"body\">{free}{paid}</div></article></body>"
        ));
        assert!(
            got.contains("Free0") && got.contains("Paid0") && got.contains("Paid7"),
            "{got}"
        );
        let prompt = "<p class=\"paywall-prompt\">Subscribe to keep reading: our reporters cover the council, the courts and the schools every day for you.</p>";
        let got = text(&format!(
            "<body><article><h1>T</h1><div class=\"body\">{free}{prompt}</div></article></body>"
        ));
        assert!(got.contains("Free7") && !got.contains("Subscribe"), "{got}");
    }

    #[test]
    fn a_hidden_rest_after_the_visible_start_is_read_and_a_hidden_block_alone_is_not() {
        let p = |w: &str| {
            format!("<p>{w} {}</p>", "The council met on Tuesday and agreed to widen the road, after a long debate about costs.".repeat(2))
        };
        let rest = format!("<div hidden>{}{}</div>", p("Later"), p("Finally"));
        let read = text(&format!(
            "<body><article><h1>T</h1>{}{rest}</article></body>",
            p("First")
        ));
        assert!(read.contains("Later") && read.contains("Finally"), "{read}");
        // Hidden first, with nothing visible before it: a trick, not a collapsed rest.
        let alone = format!(
            "<body><article><h1>T</h1><div style=\"display:none\">{}{}</div><div>{}{}</div></article></body>",
            p("Hidden"),
            p("Hidden"),
            p("Shown"),
            p("Shown")
        );
        let got = text(&alone);
        assert!(got.contains("Shown") && !got.contains("Hidden"), "{got}");
        // A hidden menu after the text is not prose.
        let menu = format!(
            "<body><article>{}{}<div hidden><ul><li><a href=/a>A</a></li></ul></div></article></body>",
            p("First"),
            p("Second")
        );
        assert!(
            !text(&menu).contains('A'.to_string().as_str())
                || !text(&menu).lines().any(|l| l == "A")
        );
    }
}
