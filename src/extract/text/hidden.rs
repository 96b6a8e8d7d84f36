//! Text that the pruning rules would take for hidden chrome but that is the
//! article: a paywalled part (named as one, or by the page's JSON-LD
//! `cssSelector`) holding prose, hidden or not; a hidden element (`hidden`,
//! `display:none`) holding several paragraphs of prose and no chrome name
//! (the rest of an article behind a "read more" button); and the captions
//! and hidden slides of a slideshow or listicle.

use super::chrome::{chrome, hidden_or_caption, is_hidden, is_slideshow};
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
        for &id in order {
            if !dom.is_element(id) {
                continue;
            }
            let parent = dom.nodes[id].parent.unwrap_or(0);
            in_paywall[id] = in_paywall[parent];
            in_slides[id] = in_slides[parent];
            let ci = dom.class_id(id);
            if in_paywall[id] {
                k.keep[id] = is_hidden(dom, id) || marks.is_paywall(dom, id, &ci);
                continue;
            }
            if marks.is_paywall(dom, id, &ci) {
                k.paywalled = true;
                if marks.free_only {
                    k.drop[id] = true;
                    continue;
                }
                let (paras, chars) = prose(dom, id);
                if paras >= 1 && chars >= PROSE_CHARS {
                    in_paywall[id] = true;
                    k.keep[id] = true;
                    k.main[id] = true;
                    k.found.push((id, "paywall"));
                    continue;
                }
            }
            if !in_slides[id] && is_slideshow(dom, id, &ci) {
                in_slides[id] = true;
                k.found.push((id, "slideshow"));
            }
            if in_slides[id] {
                k.keep[id] = hidden_or_caption(dom, id);
                continue;
            }
            if is_hidden(dom, id) && !k.keep[parent] && !chrome(dom, id) {
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
        if len >= PARA_CHARS && linked * 4 < len {
            paras += 1;
            chars += len;
        }
    }
    (paras, chars)
}
