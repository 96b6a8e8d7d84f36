//! Teaser grids: lists of cards that each link to another page.
//!
//! News and blog pages put rows of "more stories" next to, under and inside
//! the article: a list whose items each hold a link plus a picture, a
//! heading or a date, and a line or two of text. Scored like paragraphs they
//! can outweigh a short article, and their link density is often low because
//! the card's text sits outside the link. Article text seldom looks like
//! that: its lists are items of prose without pictures, and its figures stand
//! between paragraphs rather than making up the whole container.

use html5ever::local_name;

use crate::extract::dom::{Dom, NodeId};

/// Fewest cards that make a grid.
const MIN_CARDS: usize = 3;
/// Longest text (characters) a card may hold.
const MAX_CARD_TEXT: usize = 600;

/// Per-node counts used to recognise cards, computed once bottom-up.
pub(super) struct CardStats {
    /// `a[href]` elements in the subtree (the node included).
    links: Vec<u32>,
    /// Pictures, headings and `time` elements in the subtree.
    marks: Vec<u32>,
    /// Text bytes in the subtree.
    text: Vec<u32>,
}

/// `t.trim().len()`, the ASCII white space at either end skipped by bytes
/// (most text nodes between tags are nothing else).
fn trimmed_len(t: &str) -> usize {
    let white = |c: &u8| super::stats::is_ascii_white(*c);
    let b = t.as_bytes();
    match (
        b.iter().position(|c| !white(c)),
        b.iter().rposition(|c| !white(c)),
    ) {
        // Both ends are next to ASCII bytes (or the text's ends): char boundaries.
        (Some(s), Some(e)) => t[s..e + 1].trim().len(),
        _ => 0,
    }
}

impl CardStats {
    pub(super) fn new(dom: &Dom, order: &[NodeId]) -> CardStats {
        let n = dom.nodes.len();
        let mut st = CardStats {
            links: vec![0; n],
            marks: vec![0; n],
            text: vec![0; n],
        };
        for &id in order.iter().rev() {
            if dom.is_element(id) {
                // Interned names: compared as atoms, not strings.
                let name = &dom.nodes[id].name.local;
                if *name == local_name!("a") {
                    if dom.attr(id, "href").is_some() {
                        st.links[id] += 1;
                    }
                } else if [
                    local_name!("img"),
                    local_name!("picture"),
                    local_name!("h2"),
                    local_name!("h3"),
                    local_name!("h4"),
                    local_name!("h5"),
                    local_name!("h6"),
                    local_name!("time"),
                ]
                .contains(name)
                {
                    st.marks[id] += 1;
                }
            } else if let crate::extract::dom::Kind::Text(t) = &dom.nodes[id].kind {
                st.text[id] = u32::try_from(trimmed_len(t)).unwrap_or(u32::MAX);
            }
            if let Some(p) = dom.nodes[id].parent() {
                st.links[p] += st.links[id];
                st.marks[p] += st.marks[id];
                st.text[p] = st.text[p].saturating_add(st.text[id]);
            }
        }
        st
    }

    fn is_card(&self, id: NodeId) -> bool {
        self.links[id] > 0 && self.marks[id] > 0 && (self.text[id] as usize) < MAX_CARD_TEXT
    }

    /// Is `id` a grid of teaser cards? Lists count by their items; other
    /// containers by element children that share one tag.
    pub(super) fn is_grid(&self, dom: &Dom, id: NodeId) -> bool {
        let tag = dom.tag(id);
        if !matches!(tag, "ul" | "ol" | "div" | "section") || self.links[id] < MIN_CARDS as u32 {
            return false;
        }
        let mut items = 0usize;
        let mut cards = 0usize;
        let mut first_tag: Option<&str> = None;
        for c in dom.children(id) {
            if !dom.is_element(c) {
                continue;
            }
            let ct = dom.tag(c);
            if matches!(ct, "script" | "style" | "template") {
                continue;
            }
            match first_tag {
                None => first_tag = Some(ct),
                Some(f) if f != ct => return false,
                _ => {}
            }
            items += 1;
            if self.is_card(c) {
                cards += 1;
            }
        }
        if matches!(tag, "div" | "section") && !matches!(first_tag, Some("div" | "article" | "li"))
        {
            return false;
        }
        items >= MIN_CARDS && cards * 4 >= items * 3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimmed_len_is_trim_len() {
        for t in [
            "",
            " ",
            "\n\t ",
            "a",
            " a ",
            "\u{a0}a\u{a0}",
            " \u{3000} é ",
            "\n  жж \u{2009}\n",
            "x\u{a0}",
        ] {
            assert_eq!(trimmed_len(t), t.trim().len(), "{t:?}");
        }
    }

    fn grid(html: &str) -> bool {
        let dom = Dom::parse(html);
        let mut order = vec![0];
        order.extend(dom.descendants(0));
        let st = CardStats::new(&dom, &order);
        let list = order
            .iter()
            .copied()
            .find(|&id| dom.is_element(id) && dom.attr(id, "id") == Some("x"))
            .unwrap();
        st.is_grid(&dom, list)
    }

    #[test]
    fn teaser_lists_are_grids_and_prose_lists_are_not() {
        let card = "<li><a href=\"/s\"><img src=\"i.jpg\"></a><div>Headline</div><p>One line of teaser text, with a comma.</p></li>";
        assert!(grid(&format!("<ul id=x>{}</ul>", card.repeat(4))));
        let card_div = "<div class=c><h3><a href=\"/s\">Headline</a></h3><p>Teaser text.</p></div>";
        assert!(grid(&format!(
            "<section id=x>{}</section>",
            card_div.repeat(5)
        )));
        // Prose items with a link but no picture, heading or date.
        let item = "<li>A point made in prose, with <a href=\"/ref\">a source</a>.</li>";
        assert!(!grid(&format!("<ul id=x>{}</ul>", item.repeat(5))));
        // An article body: paragraphs with a figure among them.
        let body = "<div id=x><p>Text <a href=\"/a\">link</a>.</p><figure><a href=\"/i\"><img src=i.jpg></a></figure><p>More text.</p><p>Even more.</p></div>";
        assert!(!grid(body));
        // Two cards are not a grid.
        assert!(!grid(&format!("<ul id=x>{}</ul>", card.repeat(2))));
    }
}
