//! Choosing the container: Readability-style scores, the headline's pull
//! on pages of several stories, siblings merged around the winner, and the
//! walk up to a better ancestor.
//!
//! [`select`] runs the steps in order: score the paragraph-like blocks and
//! rank their ancestors ([`Scores::new`]), favour the headline's story
//! ([`Scores::favour_headline`]), choose the container ([`choose_top`]),
//! keep to the headline's story on a page of several stories in full
//! ([`story_in_feed`]), find the wrapper whose siblings may join it
//! ([`story_wrapper`]), gather the text ([`gather`]; a block holding only a
//! subheading between two joined parts joins too), drop a closing
//! subheading, put a lead in front, and fall back to the whole body when
//! the result is thin.

use super::chrome::class_weight;
use super::emit::{emit, emit_marked};
use super::lead::lead_before;
use super::markdown::Mark;
use super::stats::{Stats, link_density, visible_len};
use crate::extract::dom::{Dom, Kind, NodeId};

/// The extracted text and how it was chosen.
#[derive(Debug, Default)]
pub struct Content {
    /// Paragraphs of the main text.
    pub paragraphs: Vec<String>,
    /// How each paragraph is set in Markdown (one per paragraph, in order).
    pub marks: Vec<Mark>,
    /// The container chosen, if scoring found one.
    pub root: Option<NodeId>,
    /// Hidden, paywalled or slideshow parts read as the article's text
    /// (`paywall div.rest`, `hidden section#more`, `slideshow div.gallery`).
    pub unhidden: Vec<String>,
    /// Whether the page body holds paywall markup.
    pub paywalled: bool,
}

impl Content {
    /// Bytes of text over all paragraphs.
    pub fn chars(&self) -> usize {
        self.paragraphs.iter().map(|p| p.len()).sum()
    }
}

/// Score factor for a candidate next to the heading that shows the page's
/// headline (see [`crate::extract::title::anchor`]).
const ANCHOR_BOOST: f64 = 1.5;
/// How many levels above a candidate its headline may sit.
const ANCHOR_LEVELS: usize = 2;
/// Visible characters a block needs to be scored.
const MIN_BLOCK_CHARS: u32 = 25;
/// A block's score is shared with this many ancestors, divided by these.
const LEVEL_DIVISORS: [f64; 5] = [1.0, 2.0, 6.0, 9.0, 12.0];
/// Characters of text under which the whole body is tried instead.
const THIN_CHARS: usize = 200;

/// Score, choose and emit, given pruning statistics.
pub(super) fn select(
    dom: &Dom,
    body: NodeId,
    order: &[NodeId],
    st: &Stats,
    anchor: Option<NodeId>,
) -> Content {
    let mut scores = Scores::new(dom, body, order, st);
    let confine = anchor.and_then(|a| scores.favour_headline(dom, st, a, body));
    let Some(&first) = scores.ranked.first() else {
        return whole_body(dom, st, body);
    };
    let mut top = choose_top(dom, &scores, first, body, confine);
    let mut confine = confine;
    let headline = anchor.or_else(|| only_h1(dom, st, body));
    if let Some(story) = headline.and_then(|a| story_in_feed(dom, st, top, a))
        && let Some(&c) = scores.ranked.iter().find(|&&c| dom.is_ancestor(story, c))
    {
        top = c;
        confine = Some(story);
    }
    let outer = story_wrapper(dom, st, top, body, confine);
    let (mut out, labels) = gather(dom, st, &scores, top, outer, body);
    drop_closing_label(&mut out, labels);
    put_lead_first(dom, st, top, body, &mut out);
    out.root = Some(top);
    prefer_body_if_thin(dom, st, body, out)
}

/// Readability-style scores of the candidate containers.
struct Scores {
    /// Per node; meaningful where `initialised`.
    score: Vec<f64>,
    /// Whether the node is a candidate (an ancestor of a scored block).
    initialised: Vec<bool>,
    /// The candidates, best first.
    ranked: Vec<NodeId>,
}

impl Scores {
    /// Score every paragraph-like block and give the score to its
    /// ancestors, scale by link density, and rank.
    fn new(dom: &Dom, body: NodeId, order: &[NodeId], st: &Stats) -> Scores {
        let n = dom.nodes.len();
        let mut s = Scores {
            score: vec![0.0; n],
            initialised: vec![false; n],
            ranked: Vec::new(),
        };
        for &id in order {
            if let Some(points) = block_points(dom, st, id) {
                s.give_to_ancestors(dom, id, points, body);
            }
        }
        for &c in &s.ranked {
            s.score[c] *= 1.0 - link_density(st, c);
        }
        s.rank();
        s
    }

    /// Share a block's points with its ancestors up to `body`, less with
    /// each level; an ancestor met for the first time starts from its tag's
    /// and class names' weights.
    fn give_to_ancestors(&mut self, dom: &Dom, id: NodeId, points: f64, body: NodeId) {
        for (level, a) in dom.ancestors(id).take(LEVEL_DIVISORS.len()).enumerate() {
            if !dom.is_element(a) || a == 0 {
                break;
            }
            if !self.initialised[a] {
                self.initialised[a] = true;
                self.score[a] = tag_weight(dom.tag(a)) + class_weight(dom, a);
                self.ranked.push(a);
            }
            self.score[a] += points / LEVEL_DIVISORS[level];
            if a == body {
                break;
            }
        }
    }

    /// Best first (a stable sort: ties keep document order).
    fn rank(&mut self) {
        let score = &self.score;
        self.ranked.sort_by(|a, b| score[*b].total_cmp(&score[*a]));
    }

    /// When the best container is away from the headline (a page of several
    /// stories, or a long teaser block), the ones next to it get a boost.
    /// Returns the story block the container must stay in, if any (see
    /// [`Scores::twin_first`]).
    fn favour_headline(
        &mut self,
        dom: &Dom,
        st: &Stats,
        anchor: NodeId,
        body: NodeId,
    ) -> Option<NodeId> {
        let &best = self.ranked.first()?;
        if near(dom, best, anchor, body) {
            return None;
        }
        for &c in &self.ranked {
            if near(dom, c, anchor, body) {
                self.score[c] *= ANCHOR_BOOST;
            }
        }
        self.rank();
        self.twin_first(dom, st, anchor, body)
    }

    /// Stories stacked in blocks of one template (an endless-scroll page):
    /// the block with the headline holds the page's own story, however long
    /// the others are. Its best candidate goes first; returns the block.
    fn twin_first(
        &mut self,
        dom: &Dom,
        st: &Stats,
        anchor: NodeId,
        body: NodeId,
    ) -> Option<NodeId> {
        let &best = self.ranked.first()?;
        if near(dom, best, anchor, body) {
            return None;
        }
        let twin = twin_block(dom, st, best, anchor)?;
        let pos = self
            .ranked
            .iter()
            .position(|&c| c != twin && dom.is_ancestor(twin, c))?;
        let c = self.ranked.remove(pos);
        self.ranked.insert(0, c);
        Some(twin)
    }
}

/// The points a paragraph-like block gives (one, one per comma, one per
/// hundred characters up to three), or `None` when it is not scored.
fn block_points(dom: &Dom, st: &Stats, id: NodeId) -> Option<f64> {
    if st.pruned[id] || !dom.is_element(id) || !is_scorable(dom, id) {
        return None;
    }
    let len = st.text[id];
    if len < MIN_BLOCK_CHARS {
        return None;
    }
    let commas = dom
        .text(id)
        .matches([',', '\u{ff0c}', '\u{3001}', '\u{060c}'])
        .count() as f64;
    Some(1.0 + commas + (f64::from(len) / 100.0).min(3.0))
}

/// Does `c` or an ancestor of it, at most [`ANCHOR_LEVELS`] up (body
/// excluded), contain `anchor`?
fn near(dom: &Dom, c: NodeId, anchor: NodeId, body: NodeId) -> bool {
    dom.self_and_ancestors(c)
        .take(ANCHOR_LEVELS + 1)
        .take_while(|&a| a != body && a != 0)
        .any(|a| dom.is_ancestor(a, anchor))
}

/// When `best` and `anchor` sit in sibling story blocks made from one
/// template (same tag, same non-empty class), the block holding `anchor`.
fn twin_block(dom: &Dom, st: &Stats, best: NodeId, anchor: NodeId) -> Option<NodeId> {
    let lca = dom.ancestors(best).find(|&u| dom.is_ancestor(u, anchor))?;
    let child_towards = |n: NodeId| {
        dom.self_and_ancestors(n)
            .find(|&u| dom.nodes[u].parent() == Some(lca))
    };
    let (b, a) = (child_towards(best)?, child_towards(anchor)?);
    (b != a && twins(dom, st, a, b)).then_some(a)
}

/// Are `a` and `b` story blocks made from one template: same tag, same
/// non-empty class, each a story ([`is_story`])?
fn twins(dom: &Dom, st: &Stats, a: NodeId, b: NodeId) -> bool {
    dom.attr(a, "class").is_some_and(|c| !c.trim().is_empty())
        && dom.tag(a) == dom.tag(b)
        && dom.attr(a, "class") == dom.attr(b, "class")
        && is_story(dom, st, a)
        && is_story(dom, st, b)
}

/// Layout grids repeat their rows too: a block is a story when it is or
/// holds an `<article>`, or when it holds a linked headline (`<h1>`–`<h3>`
/// around a link to the story's own page) and a paragraph of text.
fn is_story(dom: &Dom, st: &Stats, x: NodeId) -> bool {
    dom.tag(x) == "article"
        || dom.descendants(x).any(|d| {
            dom.is_element(d)
                && (dom.tag(d) == "article" || (st.paras[x] >= 1 && linked_headline(dom, st, d)))
        })
}

/// A heading whose text is a link's.
fn linked_headline(dom: &Dom, st: &Stats, h: NodeId) -> bool {
    matches!(dom.tag(h), "h1" | "h2" | "h3")
        && st.text[h] > 0
        && dom
            .descendants(h)
            .any(|d| dom.tag(d) == "a" && st.text[d] * 10 >= st.text[h] * 8)
}

/// A page of several stories in full made from one template (a blog's
/// page of posts): when the headline sits in one of them and the container
/// is not inside it (it holds them all, or is another story's), the block
/// with the headline, the page's own story.
fn story_in_feed(dom: &Dom, st: &Stats, top: NodeId, anchor: NodeId) -> Option<NodeId> {
    let lca = dom
        .self_and_ancestors(top)
        .find(|&u| dom.is_ancestor(u, anchor))?;
    dom.self_and_ancestors(anchor)
        .take_while(|&u| u != lca)
        .find(|&u| {
            dom.nodes[u].parent().is_some_and(|p| {
                dom.element_children(p)
                    .any(|b| b != u && twins(dom, st, u, b))
            })
        })
}

/// The body's one `<h1>` with text, if it has exactly one: the headline
/// when the title could not be matched to a heading (a title in a script
/// without spaces between words).
fn only_h1(dom: &Dom, st: &Stats, body: NodeId) -> Option<NodeId> {
    let mut h1 = dom
        .descendants(body)
        .filter(|&d| dom.is_element(d) && dom.tag(d) == "h1" && st.text[d] > 0);
    match (h1.next(), h1.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// The container: the best candidate refined upwards ([`refine_top`]),
/// unless that leaves the headline's story block.
fn choose_top(
    dom: &Dom,
    scores: &Scores,
    first: NodeId,
    body: NodeId,
    confine: Option<NodeId>,
) -> NodeId {
    let top = refine_top(dom, scores, first, body);
    if confine.is_some_and(|t| !dom.is_ancestor(t, top)) {
        first
    } else {
        top
    }
}

/// Readability's refinements of the best candidate: move up to an ancestor
/// shared by several near-best candidates, or to a parent that scores higher,
/// and past wrappers with a single child.
fn refine_top(dom: &Dom, scores: &Scores, first: NodeId, body: NodeId) -> NodeId {
    let top = shared_ancestor(dom, scores, first, body).unwrap_or(first);
    let top = higher_ancestor(dom, scores, top, body).unwrap_or(top);
    past_wrappers(dom, top, body)
}

/// When at least three of the next four candidates score within 75% of
/// `first`, the nearest ancestor of `first` that holds three of them.
fn shared_ancestor(dom: &Dom, scores: &Scores, first: NodeId, body: NodeId) -> Option<NodeId> {
    let top_score = scores.score[first];
    let alternatives: Vec<Vec<NodeId>> = scores
        .ranked
        .iter()
        .skip(1)
        .take(4)
        .filter(|&&c| top_score > 0.0 && scores.score[c] / top_score >= 0.75)
        .map(|&c| dom.ancestors_until(c, body).collect())
        .collect();
    if alternatives.len() < 3 {
        return None;
    }
    dom.ancestors_until(first, body)
        .find(|p| alternatives.iter().filter(|a| a.contains(p)).count() >= 3)
}

/// A candidate ancestor scoring higher than the one below it is the better
/// container; the climb stops at one under a third of `top`'s score.
fn higher_ancestor(dom: &Dom, scores: &Scores, top: NodeId, body: NodeId) -> Option<NodeId> {
    let mut last = scores.score[top];
    let threshold = last / 3.0;
    for p in dom
        .ancestors_until(top, body)
        .filter(|&p| scores.initialised[p])
    {
        if scores.score[p] < threshold {
            return None;
        }
        if scores.score[p] > last {
            return Some(p);
        }
        last = scores.score[p];
    }
    None
}

/// Climb out of wrappers that hold nothing but the candidate.
fn past_wrappers(dom: &Dom, top: NodeId, body: NodeId) -> NodeId {
    dom.ancestors_until(top, body)
        .take_while(|&p| dom.element_children(p).count() == 1)
        .last()
        .unwrap_or(top)
}

/// Siblings are looked for beside the outermost wrapper that holds only
/// the container: a story split into parts, each in its own wrapper. Not
/// past an `<article>` (a whole story: its siblings are other stories),
/// nor out of the story block the headline chose.
fn story_wrapper(
    dom: &Dom,
    st: &Stats,
    top: NodeId,
    body: NodeId,
    confine: Option<NodeId>,
) -> NodeId {
    let mut outer = top;
    while outer != body
        && dom.tag(outer) != "article"
        && let Some(p) = dom.nodes[outer].parent().filter(|&p| p != 0 && p != body)
        && only_child(dom, st, p, outer)
        && confine.is_none_or(|t| dom.is_ancestor(t, p))
    {
        outer = p;
    }
    outer
}

/// Is `child` the only child of `parent` with text or an element kept?
/// A row of links beside it (an ad or a teaser set beside one part of a
/// split body) does not count: the part's wrapper is still just a wrapper.
fn only_child(dom: &Dom, st: &Stats, parent: NodeId, child: NodeId) -> bool {
    dom.children(parent).all(|c| {
        c == child
            || match &dom.nodes[c].kind {
                Kind::Text(t) => t.trim().is_empty(),
                Kind::Element => st.pruned[c] || st.text[c] == 0 || link_row(dom, st, c),
                _ => true,
            }
    })
}

/// A block without paragraphs whose text is mostly links, at least
/// [`ROW_LINKS`] of them: a set of teasers or ads, not a linked headline
/// or a tab's title.
fn link_row(dom: &Dom, st: &Stats, id: NodeId) -> bool {
    matches!(dom.tag(id), "div" | "section" | "aside" | "ul" | "ol")
        && st.paras[id] == 0
        && link_density(st, id) >= 0.5
        && dom
            .descendants(id)
            .filter(|&d| dom.tag(d) == "a" && st.text[d] > 0)
            .nth(ROW_LINKS - 1)
            .is_some()
}

/// Least links in a [`link_row`].
const ROW_LINKS: usize = 3;

/// The text of the container `top` and of the siblings of its wrapper
/// `outer` that [`joins`] keeps, in document order, with one flag per
/// paragraph: is it a short subheading?
fn gather(
    dom: &Dom,
    st: &Stats,
    scores: &Scores,
    top: NodeId,
    outer: NodeId,
    body: NodeId,
) -> (Content, Vec<bool>) {
    let siblings: Vec<NodeId> = match dom.nodes[outer].parent().filter(|&p| p != 0) {
        Some(p) if outer != body => dom.children(p).collect(),
        _ => vec![outer],
    };
    let roots: Vec<Option<NodeId>> = siblings
        .iter()
        .map(|&s| {
            if st.pruned[s] {
                None
            } else if s == outer {
                Some(top)
            } else if joins(dom, st, scores, top, outer, s) {
                Some(s)
            } else {
                None
            }
        })
        .collect();
    let mut out = Content::default();
    let mut labels = Vec::new();
    for (i, &s) in siblings.iter().enumerate() {
        // A block holding only a subheading between two parts of the text
        // heads the part after it.
        let root = match roots[i] {
            Some(r) => r,
            None if !st.pruned[s]
                && heading_only(dom, st, s)
                && roots[..i].iter().any(Option::is_some)
                && roots[i + 1..].iter().any(Option::is_some) =>
            {
                s
            }
            None => continue,
        };
        emit_marked(
            dom,
            st,
            root,
            &mut out.paragraphs,
            &mut labels,
            &mut out.marks,
        );
    }
    (out, labels)
}

/// Is `s` a block whose only text is one short heading (`<h2>`–`<h4>`)?
fn heading_only(dom: &Dom, st: &Stats, s: NodeId) -> bool {
    st.paras[s] == 0
        && st.text[s] > 0
        && st.text[s] <= 120
        && link_density(st, s) == 0.0
        && dom
            .descendants(s)
            .any(|d| matches!(dom.tag(d), "h2" | "h3" | "h4") && st.text[d] == st.text[s])
}

/// Does `s`, a sibling of the container's wrapper `outer`, belong to the
/// text? A candidate does when it scores a fifth of the container `top`
/// (at least 10; one with the wrapper's class gets a fifth of the
/// container's score on top), and so does a paragraph of prose.
fn joins(dom: &Dom, st: &Stats, scores: &Scores, top: NodeId, outer: NodeId, s: NodeId) -> bool {
    let top_score = scores.score[top];
    let threshold = (top_score * 0.2).max(10.0);
    let top_class = dom.attr(outer, "class").unwrap_or("");
    let bonus = if !top_class.is_empty() && dom.attr(s, "class") == Some(top_class) {
        top_score * 0.2
    } else {
        0.0
    };
    (scores.initialised[s] && scores.score[s] + bonus >= threshold)
        || (dom.tag(s) == "p" && is_prose_paragraph(dom, st, s))
        || continues(dom, st, outer, s)
}

/// Is `s` another part of a body split by ad, teaser or newsletter boxes:
/// made like the container's wrapper `outer` and holding a paragraph of
/// prose with few links? Made like it: the same tag and class names; or
/// the same tag and first class name, or no class on either (`card` and
/// `card card--text`, `prose` and `prose mt-10`, two `<section>`s), when
/// `s` holds a sentence paragraph and no linked headline (another story's).
fn continues(dom: &Dom, st: &Stats, outer: NodeId, s: NodeId) -> bool {
    let class = |n: NodeId| dom.attr(n, "class").map(str::trim).unwrap_or("");
    let first = |n: NodeId| class(n).split_whitespace().next().unwrap_or("");
    let alike = (!class(outer).is_empty() && class(s) == class(outer))
        || (first(s) == first(outer)
            && dom
                .descendants(s)
                .any(|d| dom.tag(d) == "p" && is_prose_paragraph(dom, st, d))
            && !dom.descendants(s).any(|d| linked_headline(dom, st, d)));
    alike
        && dom.tag(s) == dom.tag(outer)
        && st.paras[s] >= 1
        && st.text[s] >= 80
        && link_density(st, s) < 0.3
}

/// Long with few links, or with none and a sentence break.
fn is_prose_paragraph(dom: &Dom, st: &Stats, id: NodeId) -> bool {
    let ld = link_density(st, id);
    let len = st.text[id];
    (len > 80 && ld < 0.25) || (len > 0 && ld == 0.0 && dom.text(id).contains(". "))
}

/// A subheading that ends the text introduces something left out (a
/// "Related topics" label over a pruned list): drop it, and any before it.
fn drop_closing_label(out: &mut Content, mut labels: Vec<bool>) {
    while labels.last() == Some(&true) && out.paragraphs.len() > 1 {
        labels.pop();
        out.paragraphs.pop();
        out.marks.pop();
    }
}

/// A lead placed before the container ([`lead_before`]) comes first, unless
/// the text already holds it.
fn put_lead_first(dom: &Dom, st: &Stats, top: NodeId, body: NodeId, out: &mut Content) {
    if let Some(lead) = lead_before(dom, st, top, body)
        && !out.paragraphs.iter().any(|p| p.contains(&lead))
    {
        out.marks.insert(0, Mark::para(&lead));
        out.paragraphs.insert(0, lead);
    }
}

/// Text under [`THIN_CHARS`] gives way to the whole pruned body when that
/// holds more than twice as much.
fn prefer_body_if_thin(dom: &Dom, st: &Stats, body: NodeId, out: Content) -> Content {
    let chars = out.chars();
    if chars >= THIN_CHARS {
        return out;
    }
    let all = whole_body(dom, st, body);
    if all.chars() > chars * 2 { all } else { out }
}

/// The whole pruned body's text, no container.
fn whole_body(dom: &Dom, st: &Stats, body: NodeId) -> Content {
    let mut out = Content::default();
    emit(dom, st, body, &mut out.paragraphs, &mut out.marks);
    out
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
        "div" | "section" | "article" | "span" | "font" | "figcaption" => dom
            .children(id)
            .any(|c| matches!(&dom.nodes[c].kind, Kind::Text(t) if visible_len(t) > 40 && t.trim().contains(' '))),
        _ => false,
    }
}
