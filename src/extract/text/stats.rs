//! Per-node aggregates over the pruned tree: which nodes are pruned, and how
//! much visible text, link text and how many paragraphs lie below each.

use html5ever::local_name;

use super::chrome::tag_pruned;
use crate::extract::dom::{Dom, Kind, NodeId};

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

/// Count visible characters (whitespace runs count as one).
pub(super) fn visible_len(s: &str) -> u32 {
    /// Bytes of an all-ASCII stretch counted at once.
    const LANE: usize = 32;
    let mut n = 0u32;
    let mut space = true;
    // By bytes, the rare non-ASCII character decoded where it starts.
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        // A stretch of ASCII without a branch per byte: a character counts
        // unless it and the one before it are both white space.
        if let Some(lane) = bytes.get(i..i + LANE)
            && lane.is_ascii()
        {
            let mut white = [0u8; LANE + 1];
            white[0] = u8::from(space);
            for (w, &b) in white[1..].iter_mut().zip(lane) {
                *w = u8::from(is_ascii_white(b));
            }
            let both: u32 = white
                .iter()
                .zip(&white[1..])
                .map(|(a, b)| u32::from(a & b))
                .sum();
            n += LANE as u32 - both;
            space = white[LANE] == 1;
            i += LANE;
            continue;
        }
        let stop = (i + LANE).min(bytes.len());
        while i < stop {
            let b = bytes[i];
            let white = if b.is_ascii() {
                i += 1;
                is_ascii_white(b)
            } else {
                let c = s[i..].chars().next().unwrap_or(' ');
                i += c.len_utf8();
                c.is_whitespace()
            };
            n += u32::from(!white || !space);
            space = white;
        }
    }
    n
}

/// `char::is_whitespace` of an ASCII character.
pub(super) fn is_ascii_white(b: u8) -> bool {
    matches!(b, b'\t'..=b'\r' | b' ')
}

/// What every pass of [`compute`] reads the same way, found once per page:
/// which elements their tag prunes ([`tag_pruned`]) and each text node's
/// [`visible_len`].
pub(super) struct Base {
    tag_pruned: Vec<bool>,
    text_len: Vec<u32>,
}

impl Base {
    pub(super) fn new(dom: &Dom, order: &[NodeId]) -> Base {
        let n = dom.nodes.len();
        let mut b = Base {
            tag_pruned: vec![false; n],
            text_len: vec![0; n],
        };
        for &id in order {
            match &dom.nodes[id].kind {
                Kind::Element => b.tag_pruned[id] = tag_pruned(dom, id),
                Kind::Text(t) => b.text_len[id] = visible_len(t),
                _ => {}
            }
        }
        b
    }
}

pub(super) fn compute(
    dom: &Dom,
    root: NodeId,
    order: &[NodeId],
    base: &Base,
    extra: &dyn Fn(NodeId) -> bool,
    keep: &[bool],
) -> Stats {
    let n = dom.nodes.len();
    let mut st = Stats {
        pruned: vec![false; n],
        text: vec![0; n],
        link: vec![0; n],
        paras: vec![0; n],
    };
    for &id in order {
        let parent_pruned = dom.nodes[id]
            .parent()
            .is_some_and(|p| p != root && st.pruned[p]);
        // `keep`: hidden elements and captions that hold the article.
        let kept = keep.get(id).copied().unwrap_or(false);
        st.pruned[id] =
            parent_pruned || (dom.is_element(id) && ((base.tag_pruned[id] && !kept) || extra(id)));
    }
    for &id in order.iter().rev() {
        if st.pruned[id] {
            continue;
        }
        // A text node has no children: its own length is its whole text.
        st.text[id] += base.text_len[id];
        let name = &dom.nodes[id].name.local;
        if *name == local_name!("a") {
            st.link[id] = st.text[id];
        }
        if *name == local_name!("p") {
            st.paras[id] += 1;
        }
        if let Some(p) = dom.nodes[id].parent() {
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

#[cfg(test)]
mod tests {
    use super::visible_len;

    #[test]
    fn ascii_and_other_text_count_alike() {
        // Runs of white space count one, leading ones none; \x0b is white space too.
        for (s, n) in [
            ("", 0),
            ("  a  b\t\n\x0b\x0cc ", 6),
            ("\n\r\n", 0),
            ("one two", 7),
            (&"  ab  cd \n".repeat(9), 54),
            (&format!("{}x", " ".repeat(40)), 1),
        ] {
            assert_eq!(visible_len(s), n, "{s:?}");
            // The same text with a non-ASCII letter after it takes the other path.
            assert_eq!(visible_len(&format!("{s}é")), n + 1, "{s:?}");
        }
        assert_eq!(visible_len("a\u{a0}\u{a0}b"), 3);
    }

    #[test]
    fn long_mixed_text_counts_as_char_by_char() {
        let naive = |s: &str| {
            let mut space = true;
            s.chars().fold(0, |n, c| {
                let white = c.is_whitespace();
                let add = u32::from(!white || !space);
                space = white;
                n + add
            })
        };
        let piece = "Ab  c\u{a0} d\t\n  \u{3000}ж é  ";
        for len in 0..120 {
            let s: String = piece.chars().cycle().take(len).collect();
            let ascii = "word  and\t".repeat(len % 9);
            for t in [
                s.clone(),
                format!("{}{s}", " ".repeat(len % 37)),
                format!("{ascii}{s}{ascii}"),
            ] {
                assert_eq!(visible_len(&t), naive(&t), "{t:?}");
            }
        }
    }
}
