//! The lead (standfirst, dek, summary) that sits before the article's
//! text: in a header or a hero block outside what scoring chose, or in the
//! story's own header, which is pruned, at the top of the container.

use super::chrome::{CHROME_STRONG, tag_pruned};
use super::stats::Stats;
use crate::extract::dom::{Dom, NodeId};
use crate::phrases::{ClassWords, Phrases};

static LEAD: ClassWords = ClassWords {
    anywhere: Phrases::pattern(
        "lead|intro|standfirst|excerpt|abstract|teaser|chapeau|vorspann|perex|bajada|sommario|sub-?title|sub-?headline",
    ),
    tokens: &["dek", "deck", "summary", "description"],
    token_starts: &[],
};

static BYLINE: ClassWords = ClassWords {
    anywhere: Phrases::pattern("byline|author-?(bio|info|box|blurb|desc)"),
    tokens: &["author", "authors"],
    token_starts: &[],
};

/// Levels above the container searched for a lead.
const LEAD_LEVELS: usize = 4;

/// A lead paragraph placed before the chosen container's text: within
/// [`LEAD_LEVELS`] levels above `top`, not in pruned chrome, holding prose
/// and few links, and either named as a lead (class or id) or a long
/// paragraph or subheading inside a `header`. The last such block before
/// the text wins. A story's own `header` inside the container (headline,
/// standfirst, picture, byline: pruned as a heading block) counts when it
/// comes before any of the container's text; there only a paragraph found
/// by where it sits in the header is a lead, since one named as a lead and
/// not pruned is in the text already.
pub(super) fn lead_before(dom: &Dom, st: &Stats, top: NodeId, body: NodeId) -> Option<String> {
    let mut scope = top;
    for _ in 0..LEAD_LEVELS {
        match dom.nodes[scope].parent() {
            Some(p) if p != 0 => scope = p,
            _ => break,
        }
        if scope == body {
            break;
        }
    }
    let mut found = None;
    let mut in_header: Vec<NodeId> = Vec::new();
    let mut inside = false;
    let mut it = dom.descendants(scope);
    while let Some(id) = it.next() {
        if id == top {
            inside = true;
            continue;
        }
        if !dom.is_element(id) {
            // The container's text has begun: what follows is not before it.
            if inside && !st.pruned[id] && st.text[id] > 0 {
                break;
            }
            continue;
        }
        if inside && !dom.is_ancestor(top, id) {
            break;
        }
        let tag = dom.tag(id);
        if matches!(
            tag,
            "nav" | "footer" | "aside" | "a" | "ul" | "ol" | "form" | "figure"
        ) || tag_pruned(dom, id)
        {
            it.skip_children_of(id);
            continue;
        }
        let ci = dom.class_id(id);
        in_header.retain(|&h| dom.is_ancestor(h, id));
        // Headers are pruned as chrome, and their content with them; inside
        // one, only the element's own class name counts, and only when it names
        // chrome for sure (a header's parts are called header-something).
        let chrome_here = if in_header.is_empty() {
            st.pruned[id] && tag != "header"
        } else {
            CHROME_STRONG.is_match(&ci)
        };
        if chrome_here {
            it.skip_children_of(id);
            continue;
        }
        // An ancestor of the container is not a lead.
        if dom.is_ancestor(id, top) {
            continue;
        }
        if tag == "header" || tag == "hgroup" {
            in_header.push(id);
            continue;
        }
        // A byline with the author's blurb is no lead, whatever its other
        // names and wherever it sits.
        if BYLINE.is_match(&ci) {
            it.skip_children_of(id);
            continue;
        }
        let named = !inside && !ci.is_empty() && LEAD.is_match(&ci) && !CHROME_STRONG.is_match(&ci);
        let headed =
            !in_header.is_empty() && matches!(tag, "p" | "h2") && (!inside || st.pruned[id]);
        if !named && !headed {
            continue;
        }
        let text: String = dom
            .text(id)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let linked: usize = dom
            .descendants(id)
            .filter(|&d| dom.is_element(d) && dom.tag(d) == "a")
            .map(|d| dom.written_len(d))
            .sum();
        // A subheadline right under the headline may be one short sentence.
        let subhead = headed && follows_headline(dom, id);
        let least = if named {
            80
        } else if subhead {
            SUBHEAD_CHARS
        } else {
            100
        };
        // A paragraph found only by where it sits must read as sentences;
        // a short subheadline must end as one (a byline with a date,
        // `Von A. B. 19. Oktober 2019 00:04 Uhr`, does not).
        let prose = if subhead && !named && text.len() < 100 {
            text.ends_with(['.', '!', '?'])
                && text.split_whitespace().nth(SUBHEAD_WORDS - 1).is_some()
        } else {
            named || text.contains(". ") || text.ends_with('.')
        };
        if (least..=1200).contains(&text.len()) && linked * 5 < text.len() && prose {
            it.skip_children_of(id);
            found = Some(text);
        }
    }
    found
}

/// Least characters and words of a lead found as the subheadline right
/// under the headline (`<h1>…</h1><h2>Two-year-old bug exposes thousands
/// of servers to crippling attack.</h2>`).
const SUBHEAD_CHARS: usize = 40;
const SUBHEAD_WORDS: usize = 6;

/// Is the element before `id` among its siblings the headline (`h1`)?
fn follows_headline(dom: &Dom, id: NodeId) -> bool {
    std::iter::successors(dom.nodes[id].prev(), |&p| dom.nodes[p].prev())
        .find(|&p| dom.is_element(p))
        .is_some_and(|p| dom.tag(p) == "h1")
}

#[cfg(test)]
mod class_word_tests {
    use super::{BYLINE, LEAD};

    #[test]
    fn lead_and_byline_names_match_their_regexes() {
        for (words, regex) in [
            (
                &LEAD,
                r"lead|intro|standfirst|excerpt|abstract|teaser|chapeau|vorspann|perex|bajada|sommario|sub-?title|sub-?headline|(^|[\s_-])(dek|deck|summary|description)($|[\s_-])",
            ),
            (
                &BYLINE,
                r"byline|(^|[\s_-])authors?($|[\s_-])|author-?(bio|info|box|blurb|desc)",
            ),
        ] {
            let re = regex::Regex::new(regex).unwrap();
            for n in crate::phrases::oracle::class_texts(&words.anywhere.list()) {
                assert_eq!(words.is_match(&n), re.is_match(&n), "{regex} on {n:?}");
            }
        }
    }
}
