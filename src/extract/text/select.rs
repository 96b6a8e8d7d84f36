//! Choosing the container: Readability-style scores, the headline's pull
//! on pages of several stories, siblings merged around the winner, and the
//! walk up to a better ancestor.

use super::chrome::class_weight;
use super::emit::{emit, emit_marked};
use super::lead::lead_before;
use super::stats::{Stats, link_density, visible_len};
use crate::extract::dom::{Dom, Kind, NodeId};

/// The extracted text and how it was chosen.
#[derive(Debug, Default)]
pub struct Content {
    /// Paragraphs of the main text.
    pub paragraphs: Vec<String>,
    /// How each paragraph is set in Markdown (one per paragraph, in order).
    pub marks: Vec<super::markdown::Mark>,
    /// The container chosen, if scoring found one.
    pub root: Option<NodeId>,
}

/// Score factor for a candidate next to the heading that shows the page's
/// headline (see [`crate::extract::title::anchor`]).
const ANCHOR_BOOST: f64 = 1.5;
/// How many levels above a candidate its headline may sit.
const ANCHOR_LEVELS: usize = 2;

/// Does an ancestor of `c`, at most [`ANCHOR_LEVELS`] up (body excluded),
/// contain `anchor`?
fn near(dom: &Dom, c: NodeId, anchor: NodeId, body: NodeId) -> bool {
    let mut cur = Some(c);
    for _ in 0..=ANCHOR_LEVELS {
        let Some(a) = cur else { return false };
        if a == body || a == 0 {
            return false;
        }
        if dom.is_ancestor(a, anchor) {
            return true;
        }
        cur = dom.nodes[a].parent;
    }
    false
}

/// When `best` and `anchor` sit in sibling story blocks made from one
/// template (same tag, same non-empty class), the block holding `anchor`.
fn twin_block(dom: &Dom, best: NodeId, anchor: NodeId) -> Option<NodeId> {
    let lca = dom.ancestors(best).find(|&u| dom.is_ancestor(u, anchor))?;
    let child_towards = |n: NodeId| {
        std::iter::once(n)
            .chain(dom.ancestors(n))
            .find(|&u| dom.nodes[u].parent == Some(lca))
    };
    let (b, a) = (child_towards(best)?, child_towards(anchor)?);
    let class = dom.attr(a, "class").filter(|c| !c.trim().is_empty())?;
    // Layout grids repeat their rows too: only blocks that hold an
    // `<article>` are stories.
    let story = |x: NodeId| {
        dom.tag(x) == "article"
            || dom
                .descendants(x)
                .any(|d| dom.is_element(d) && dom.tag(d) == "article")
    };
    (b != a
        && dom.tag(a) == dom.tag(b)
        && dom.attr(b, "class") == Some(class)
        && story(a)
        && story(b))
    .then_some(a)
}
/// Score, choose and emit, given pruning statistics.
pub(super) fn select(
    dom: &Dom,
    body: NodeId,
    order: &[NodeId],
    st: &Stats,
    anchor: Option<NodeId>,
) -> Content {
    // Readability-style scoring.
    let n = dom.nodes.len();
    let mut score = vec![0.0f64; n];
    let mut initialised = vec![false; n];
    let mut candidates = Vec::new();
    for &id in order {
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
        score[c] *= 1.0 - link_density(st, c);
    }
    candidates.sort_by(|a, b| score[*b].total_cmp(&score[*a]));
    // When the best container is away from the headline (a page of several
    // stories, or a long teaser block), the ones next to it get a boost.
    let mut confine = None;
    if let Some(a) = anchor
        && let Some(&best) = candidates.first()
        && !near(dom, best, a, body)
    {
        for &c in &candidates {
            if near(dom, c, a, body) {
                score[c] *= ANCHOR_BOOST;
            }
        }
        candidates.sort_by(|a, b| score[*b].total_cmp(&score[*a]));
        // Stories stacked in blocks of one template (an endless-scroll page):
        // the block with the headline holds the page's own story, however
        // long the others are.
        if let Some(&best) = candidates.first()
            && !near(dom, best, a, body)
            && let Some(twin) = twin_block(dom, best, a)
            && let Some(pos) = candidates
                .iter()
                .position(|&c| c != twin && dom.is_ancestor(twin, c))
        {
            let c = candidates.remove(pos);
            candidates.insert(0, c);
            confine = Some(twin);
        }
    }

    let mut out = Content::default();
    let Some(&first) = candidates.first() else {
        emit(dom, st, body, &mut out.paragraphs, &mut out.marks);
        return out;
    };
    let mut top = refine_top(dom, &score, &initialised, &candidates, first, body);
    if confine.is_some_and(|t| !dom.is_ancestor(t, top)) {
        top = first;
    }
    let top_score = score[top];
    let threshold = (top_score * 0.2).max(10.0);
    // Siblings are looked for beside the outermost wrapper that holds only
    // the container: a story split into parts, each in its own wrapper.
    let mut outer = top;
    while let Some(p) = dom.nodes[outer]
        .parent
        .filter(|&p| p != 0 && p != body && outer != body)
        && only_child(dom, st, p, outer)
        // An `<article>` is a whole story: its siblings are other stories.
        && dom.tag(outer) != "article"
        // Nor out of the story block the headline chose.
        && confine.is_none_or(|t| dom.is_ancestor(t, p))
    {
        outer = p;
    }
    let top_class = dom.attr(outer, "class").unwrap_or("");
    let parent = dom.nodes[outer].parent.filter(|&p| p != 0);
    let siblings: Vec<NodeId> = match parent {
        Some(p) if outer != body => dom.children(p).collect(),
        _ => vec![outer],
    };
    let mut labels = Vec::new();
    for s in siblings {
        if st.pruned[s] {
            continue;
        }
        if s == outer {
            emit_marked(
                dom,
                st,
                top,
                &mut out.paragraphs,
                &mut labels,
                &mut out.marks,
            );
            continue;
        }
        let keep = (initialised[s]
            && score[s]
                + if !top_class.is_empty() && dom.attr(s, "class") == Some(top_class) {
                    top_score * 0.2
                } else {
                    0.0
                }
                >= threshold)
            || (dom.tag(s) == "p" && {
                let ld = link_density(st, s);
                let len = st.text[s];
                (len > 80 && ld < 0.25) || (len > 0 && ld == 0.0 && dom.text(s).contains(". "))
            });
        if keep {
            emit_marked(dom, st, s, &mut out.paragraphs, &mut labels, &mut out.marks);
        }
    }
    // A subheading that ends the text introduces something left out (a
    // "Related topics" label over a pruned list).
    while labels.last() == Some(&true) && out.paragraphs.len() > 1 {
        labels.pop();
        out.paragraphs.pop();
        out.marks.pop();
    }
    if let Some(lead) = lead_before(dom, st, top, body)
        && !out.paragraphs.iter().any(|p| p.contains(&lead))
    {
        out.marks.insert(0, super::markdown::Mark::para(&lead));
        out.paragraphs.insert(0, lead);
    }
    out.root = Some(top);
    let chars: usize = out.paragraphs.iter().map(|p| p.len()).sum();
    if chars < 200 {
        let (mut all, mut marks) = (Vec::new(), Vec::new());
        emit(dom, st, body, &mut all, &mut marks);
        if all.iter().map(|p| p.len()).sum::<usize>() > chars * 2 {
            out.paragraphs = all;
            out.marks = marks;
            out.root = None;
        }
    }
    out
}

/// Is `child` the only child of `parent` with text or an element kept?
fn only_child(dom: &Dom, st: &Stats, parent: NodeId, child: NodeId) -> bool {
    dom.children(parent).all(|c| {
        c == child
            || match &dom.nodes[c].kind {
                Kind::Text(t) => t.trim().is_empty(),
                Kind::Element => st.pruned[c] || st.text[c] == 0,
                _ => true,
            }
    })
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
