//! Writing the chosen part of the tree out as paragraphs: block elements
//! break paragraphs, whitespace collapses, link-heavy lists and tables inside
//! the content are skipped, and short cross-link or legal lines are dropped.
//! Each paragraph kept is also marked with the block it sits in and given
//! its inline Markdown ([`super::markdown`]).

use std::sync::LazyLock;

use regex::Regex;

use super::chrome::{class_weight, spaced_sentence};
use super::markdown::{Block, Inline, Mark};
use super::stats::Stats;
use crate::date::written::first_date;
use crate::extract::dom::{Dom, Kind, NodeId};
use crate::gated::Gated;
use crate::phrases::{Phrases, is_word, lower};

tag_set! {
    /// Elements that break text into paragraphs.
    fn is_block_tag:
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
}

tag_set! {
    /// MathML token elements: each is a symbol, a number or a word of its own,
    /// so `<mi>x</mi><mn>2</mn>` reads `x 2`, not `x2`.
    fn is_math_token: "mi", "mn", "mo", "mtext", "ms"
}

/// Short paragraphs that are cross-links or legal lines, not article text
/// (matched at the start of a paragraph of at most [`BOILERPLATE_CHARS`],
/// followed by a word boundary; `back to the home…` by anything).
static BOILERPLATE: Phrases = Phrases::new(&[
    "read more",
    "related",
    "see also",
    "more from",
    "recommended",
    "sign up",
    "subscribe",
    "share this",
    "follow us",
    "all rights reserved",
    "copyright",
    "©",
    "lesen sie auch",
    "lesen sie mehr",
    "mehr zum thema",
    "mehr themen",
    "auch interessant",
    "das könnte dich",
    "das könnte sie",
    "weitere informationen",
    "weitere artikel",
    "zum thema",
    "teilen",
    "lire aussi",
    "à lire aussi",
    "lee también",
    "leer más",
    "te puede interesar",
    "czytaj też",
    "czytaj także",
    "zobacz też",
    "lesen sie hier",
    "auch lesen",
    "vea también",
    "ver también",
    "leia também",
    "mira:",
    "dowiedz się więcej",
    "czytaj więcej",
    "neugierig geworden",
    "lust auf mehr",
    "weitere infos",
    "zurück zur übersicht",
    "zurück zur listenansicht",
    "zurück zur startseite",
    "zurück zur liste",
    "back to top",
    "back to the top",
    "back to the home",
    "back to the overview",
    "back to the list",
    "bild anzeigen",
    "pingback",
    "trackback",
    "eingestellt von",
    "verfasst von",
    "posted by",
    "titelbild",
    "beitragsbild",
    "aktualisiert am",
    "zuletzt aktualisiert",
    "last updated",
    "stand:",
    "if you enjoyed",
    "suggested citation",
    "download the",
]);

/// Does a paragraph open with a [`BOILERPLATE`] phrase?
fn opens_with_boilerplate(lower: &str) -> bool {
    BOILERPLATE.opens(lower, |rest, phrase| {
        phrase == "back to the home"
            || (crate::phrases::boundary(phrase.chars().next_back(), rest.chars().next())
                && !(PROSE_OPENERS.contains(&phrase) && is_long_sentence(lower)))
    })
}

/// [`BOILERPLATE`] openers that are also ordinary first words of a
/// sentence ("Related to the first study, ...", "Teilen der Opposition
/// ging das zu weit."): after them, a long sentence is prose.
const PROSE_OPENERS: &[&str] = &["related", "recommended", "teilen"];

/// Least words of a sentence that [`PROSE_OPENERS`] do not make furniture.
const PROSE_WORDS: usize = 8;

/// Is `t` a sentence of at least [`PROSE_WORDS`] words, ending with a full
/// stop, a question or exclamation mark, with no colon after its first
/// word ("Related: ...", "Teilen: ...")?
fn is_long_sentence(t: &str) -> bool {
    let t = t.trim();
    let first_word_end = t.find(char::is_whitespace).unwrap_or(t.len());
    t.split_whitespace().nth(PROSE_WORDS - 1).is_some()
        && t.ends_with(['.', '!', '?'])
        && !t[..first_word_end].contains(':')
}

/// Whole short paragraphs that are labels of page furniture: ad markers,
/// comment counters, "Share", "Print" (the label, then at most spaces and
/// closing punctuation).
static BOILERPLATE_LINE: Phrases = Phrases::new(&[
    "advertisement",
    "advertising",
    "sponsored",
    "anzeige",
    "werbung",
    "reklama",
    "publicidad",
    "publicidade",
    "publicité",
    "pubblicità",
    "advertentie",
    "comment",
    "comments",
    "kommentar",
    "kommentare",
    "kommentieren",
    "kommentare schreiben",
    "comentarios",
    "commentaires",
    "inhaltsverzeichnis",
    "table of contents",
    "contents",
    "inhalt",
    "beitragsbild",
    "titelbild",
    "originalartikel",
    "bild anzeigen",
    "kontakt",
    "contact",
    "telefon",
    "phone",
    "von",
    "by",
    "credit",
    "credits",
    "share",
    "teilen",
    "drucken",
    "print",
    "learn more",
    "dowiedz się więcej",
    "mehr erfahren",
    "en savoir plus",
    "weiterlesen",
    "continue reading",
    "read more",
    "mehr lesen",
    "related posts",
    "ähnliche beiträge",
    "ähnliche artikel",
    "über den autor",
    "about the author",
    "lust auf mehr",
    "auch lesen",
    "quellen ausblenden",
    "quellenangaben",
    "zusatzinformationen",
]);

/// Is a paragraph only a [`BOILERPLATE_LINE`] label?
fn is_label_line(lower: &str) -> bool {
    BOILERPLATE_LINE.opens(lower, |rest, _| {
        rest.trim_start().chars().all(|c| ":.!?…»›>".contains(c))
    })
}

/// Phrases that mark a short paragraph as a prompt to share, rate, comment,
/// subscribe or read on.
static PROMPT: Phrases = Phrases::new(&[
    "artikel teilen",
    "beitrag teilen",
    "share this article",
    "share this post",
    "share this story",
    "artikel bewerten",
    "beitrag bewerten",
    "rate this article",
    "rate this post",
    "rate this recipe",
    "in den kommentaren",
    "leave a comment",
    "kommentar schreiben",
    "newsletter",
    "abonnieren sie",
    "subscribe to",
    "sign up for",
    "enjoyed reading",
    "lesen sie weiter",
    "zugang und lesen",
    "read the full story",
    "read the full article",
    "als pdf herunterladen",
    "download as pdf",
    "besuchen sie unseren",
    "follow us on",
    "folgen sie uns",
    "all rights reserved",
    "alle rechte vorbehalten",
]);
/// Longest paragraph that [`PROMPT`] may drop.
const PROMPT_CHARS: usize = 100;
/// Phrases that mark a paragraph as an ad notice, a subscription or
/// donation appeal or a licence line, in paragraphs up to
/// [`PROMPT_LONG_CHARS`]). Phrases specific enough not to occur in prose;
/// two have words between their parts ([`APP_PROMPT`], [`LICENCE_LINE`]).
static PROMPT_LONG: Phrases = Phrases::new(&[
    "enthält werbung",
    "affiliate-link",
    "affiliate link",
    "sponsored post",
    "in kontakt treten",
    "exklusive angebote",
    "nichts mehr verpassen",
    "nichts mehr versäumen",
    "never miss",
    "sign up here",
    "cancel anytime",
    "cancela cuando quieras",
    "jederzeit kündbar",
    "youtube-channel",
    "youtube channel",
    "youtubechannel",
    "youtube-kanal",
    "youtube kanal",
    "youtubekanal",
    "canal de youtube",
    "rss-feed",
    "please subscribe",
    "to view the full story",
    "already a subscriber",
    "first-time subscribers",
    "vorschau auf den nächsten",
    "der beitrag wurde am",
    "this entry was posted",
    "submit a letter to the editor",
    "write a letter to the editor",
    "help us continue",
    "support our journalism",
    "support independent journalism",
    "become a supporter",
    "become a subscriber",
    "under a creative commons",
]);
/// "Download the … app", in a paragraph that says "download the ".
static APP_PROMPT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)download the .{1,40} apps?\b").expect("static regex"));
/// "This article is licensed …", in a paragraph that says "lizenz" or "licen".
static LICENCE_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(dieser|this) (text|beitrag|artikel|article|post|work|content|story) .{0,40}(lizenz|licen[cs]ed? )")
        .expect("static regex")
});

/// Is a paragraph of at most [`PROMPT_LONG_CHARS`] an ad notice or appeal?
fn is_long_prompt(t: &str, lower: &str) -> bool {
    PROMPT_LONG.contains(lower)
        || (lower.contains("download the ") && APP_PROMPT.is_match(t))
        || ((lower.contains("lizenz") || lower.contains("licen")) && LICENCE_LINE.is_match(t))
}
/// Longest paragraph that [`PROMPT_LONG`] may drop.
const PROMPT_LONG_CHARS: usize = 160;
/// Picture credits and captions' credit lines (`Foto: ...`, `Photo: ...`).
/// Gate (see `crate::gated`): no label holds a colon, so a credit line's
/// label is all of the text before its first colon, less white space at
/// its end: short, or `Abbildung` and a number.
static CREDIT: Gated = Gated::new(
    |t| {
        t.split_once(':').is_some_and(|(label, _)| {
            let label = label.trim_start_matches('(').trim_end();
            label.chars().count() <= SHORT_LABEL
                || lower(&label.chars().take(9).collect::<String>()) == "abbildung"
        })
    },
    || {
        Regex::new(r"(?i)^\(?(foto|fotos|photo|photos|bild|image|credit|credits|bildquelle|quelle|fuente|crédito|crédits?( photos?)?|abbildung \d+|telefon|tel\.?|phone|fax|e-?mail)\s*:")
        .expect("static regex")
    },
);
/// Characters in the longest [`CREDIT`] label but `Abbildung N`
/// (`crédits photos`, 14), with room to spare.
const SHORT_LABEL: usize = 16;
/// Longest paragraph that [`CREDIT`] may drop.
const CREDIT_CHARS: usize = 80;

/// An agency or author tag closing a news item: `aja/PAP`, `(dpa/afp)`.
/// Gate: a tag has its slash and no white space (no letter is white space).
static AGENCY_TAG: Gated = Gated::new(
    |t| t.contains('/') && !t.contains(char::is_whitespace),
    || Regex::new(r"^\(?\p{Ll}{2,5}(?:/\p{L}{2,6})+\)?$").expect("static regex"),
);

/// What is left of a date line once the date, times and separators are
/// gone: a label ("Stand:", "Updated") or a commenter's name at most.
static DATE_LINE_REST: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[\d:.,|/–—·•-]+|\b(?:uhr|am|pm|h)\b").expect("static regex"));
/// What sets a kicker (a section's name) apart from the date after it.
const KICKER_SEPARATORS: &[char] = &['|', '·', '•', '–', '—'];
/// Longest paragraph read as a bare date line.
const DATE_LINE_CHARS: usize = 60;

/// A line that is only a date with a label or a name: `Stand: 05. Februar
/// 2020`, `24. März 2004, 19:49 | Genesis`.
fn is_date_line(t: &str) -> bool {
    if t.len() > DATE_LINE_CHARS {
        return false;
    }
    let Some((at, _)) = first_date(t) else {
        return false;
    };
    // The date's own words (a month name) go with the digits around them.
    let before = DATE_LINE_REST.replace_all(&t[..at], " ");
    let rest: String = DATE_LINE_REST
        .replace_all(&t[at..], " ")
        .split_whitespace()
        .skip(1)
        .chain(before.split_whitespace())
        .collect::<Vec<_>>()
        .join(" ");
    match rest.split_whitespace().count() {
        0 => true,
        // A page's own stamp ("Stand:", "Updated"), a comment's header
        // ("date | name") or a kicker ("Wissen · 5. November 2024": one
        // word, a separator, the date). "Termin: 29.02.2020" and
        // "Aktionszeitraum: 21.10.2019 – 27.10.2019" are content and stay.
        1 => {
            is_date_label(&rest)
                || t.contains(" | ")
                || t[..at].trim_end().ends_with(KICKER_SEPARATORS)
        }
        _ => false,
    }
}

/// Labels that mark a date as the page's own stamp (the label alone, with
/// punctuation at most).
static META_DATE_LABEL: Phrases = Phrases::new(&[
    "stand",
    "updated",
    "aktualisiert",
    "published",
    "veröffentlicht",
    "erschienen",
    "posted",
    "datum",
    "date",
    "modified",
    "geändert",
    "publicado",
    "actualizado",
    "publié",
]);

/// Is `rest` a [`META_DATE_LABEL`] alone?
fn is_date_label(rest: &str) -> bool {
    META_DATE_LABEL.opens(&lower(rest), |after, _| !after.chars().any(is_word))
}

/// Is a paragraph page furniture rather than article text?
fn is_boilerplate(t: &str) -> bool {
    let lower = (t.len() <= BOILERPLATE_CHARS.max(PROMPT_LONG_CHARS)).then(|| lower(t));
    let lower = lower.as_deref().unwrap_or("");
    (t.len() <= BOILERPLATE_CHARS && (opens_with_boilerplate(lower) || is_label_line(lower)))
        || (t.len() <= PROMPT_CHARS && PROMPT.contains(lower))
        || (t.len() <= PROMPT_LONG_CHARS && is_long_prompt(t, lower))
        || (t.len() <= CREDIT_CHARS && CREDIT.is_match(t))
        || AGENCY_TAG.is_match(t)
        || SLIDE_COUNTER.is_match(t)
        || TIME_LINE.is_match(t)
        || is_date_line(t)
}

/// A time of day alone (a live blog entry's stamp): `10:05`, `14.30 Uhr`.
/// Gate: the line starts with a digit (`\d` is within `char::is_numeric`)
/// and has at most 9 characters besides white space (`14.30a.m.`).
static TIME_LINE: Gated = Gated::new(
    |t| t.chars().next().is_some_and(char::is_numeric) && at_most_dark(t, 9),
    || {
        Regex::new(r"(?i)^\d{1,2}[:.h]\d{2}(\s*(uhr|h|am|pm|a\.m\.|p\.m\.))?$")
            .expect("static regex")
    },
);

/// A slideshow's counter: `3 / 12`, `Bild 3 von 12`, `Photo 3 of 12`.
/// Gate: a counter has digits (`\d` is within `char::is_numeric`) and at
/// most 21 characters besides white space (`Diapositive 123 sur 123`).
static SLIDE_COUNTER: Gated = Gated::new(
    |t| at_most_dark(t, 21) && t.chars().any(char::is_numeric),
    || {
        Regex::new(r"(?i)^((bild|foto|photo|image|slide|diapositive|imagen|画像)\s*)?\d{1,3}\s*(/|von|of|sur|de|枚中)\s*\d{1,3}\s*(枚)?$")
        .expect("static regex")
    },
);

/// Has `t` at most `n` characters that are not white space?
fn at_most_dark(t: &str, n: usize) -> bool {
    t.chars().filter(|c| !c.is_whitespace()).nth(n).is_none()
}

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
    let text = st.text[id];
    if text == 0 {
        return false;
    }
    let list = matches!(tag, "ul" | "ol");
    if list && (items_of_prose(dom, st, id) || in_prose_item(dom, st, id)) {
        return false;
    }
    if cell_value(dom, st, id) {
        return false;
    }
    // In a list, links that run on from the words before them are text.
    let link = if list {
        st.link[id].saturating_sub(run_on_chars(dom, st, id))
    } else {
        st.link[id]
    };
    let ld = f64::from(link) / f64::from(text);
    if ld > 0.5 && text.saturating_sub(link) < 400 {
        return true;
    }
    if matches!(tag, "ul" | "ol" | "div" | "section") && ld > 0.3 && st.paras[id] == 0 {
        return true;
    }
    class_weight(dom, id) < 0.0 && text < 200 && st.paras[id] < 2 || label_cloud(dom, st, id)
}

/// Is `id` a table cell's value set in a block: the only element in its
/// `td` or `th`, holding one link at most (`<td><div><a>Google
/// Maps</a></div></td>`, a row's name linked to its page)? The table was
/// judged as a whole; one linked name is not a box of links.
fn cell_value(dom: &Dom, st: &Stats, id: NodeId) -> bool {
    matches!(dom.tag(id), "div" | "section")
        && dom.nodes[id].parent().is_some_and(|c| {
            matches!(dom.tag(c), "td" | "th")
                && dom.element_children(c).filter(|&k| !st.pruned[k]).count() == 1
        })
        && dom
            .descendants(id)
            .filter(|&d| dom.tag(d) == "a" && st.text[d] > 0)
            .nth(1)
            .is_none()
}

/// Least paragraphs in a [`label_cloud`].
const CLOUD_PARAS: u32 = 8;
/// Most characters per paragraph, on average, in a [`label_cloud`].
const CLOUD_CHARS: u32 = 20;

/// A chart drawn in HTML (exported from a graphics tool, each label a
/// positioned paragraph: `$915`, `billion`, `’18`, `Jan. 2020`): many
/// paragraphs, short on average, none of them a sentence. A table's short
/// cells are data (a league table, a timetable), not a drawing.
fn label_cloud(dom: &Dom, st: &Stats, id: NodeId) -> bool {
    let paras = st.paras[id];
    paras >= CLOUD_PARAS
        && st.text[id] < paras * CLOUD_CHARS
        && dom.tag(id) != "table"
        && !dom.descendants(id).any(|d| match dom.tag(d) {
            "table" => true,
            "p" => !st.pruned[d] && reads_as_sentence(&dom.text(d)),
            _ => false,
        })
}

/// Least words of a sentence set in spaced words: fewer is a label, even
/// with an abbreviation's dot in it (`U.S. Dollar index`, `Sept. 2021`).
const SENTENCE_WORDS: usize = 4;

/// Does `t` read as a sentence: a stop of a script written without spaces,
/// or [`SENTENCE_WORDS`] words with a full stop, a question or exclamation
/// mark?
fn reads_as_sentence(t: &str) -> bool {
    let t = t.trim();
    t.ends_with(['。', '！', '？']) || spaced_sentence(t, SENTENCE_WORDS)
}

/// Least text outside links, per item, of a list of sentences with links
/// in them (release notes, a digest of changes), which stays.
const ITEM_PROSE_CHARS: u32 = 40;

/// Is the list made of sentences rather than links: at least three items
/// (those of its sub-lists counted too), each of its own items with
/// [`ITEM_PROSE_CHARS`] of text outside links on average, and most of its
/// text outside links? A sub-list is the part of its item that it details
/// (a list of links under "In progress:"), so its text and links are left
/// out of its list's figures; it is judged by [`in_prose_item`]. A link
/// that [`runs_on`] from the words before it counts as their text.
fn items_of_prose(dom: &Dom, st: &Stats, id: NodeId) -> bool {
    let items = dom
        .element_children(id)
        .filter(|&c| dom.tag(c) == "li" && !st.pruned[c])
        .count() as u32;
    let (mut text, mut link, mut sub_items) = (st.text[id], st.link[id], 0u32);
    let mut it = dom.descendants(id);
    while let Some(d) = it.next() {
        if !dom.is_element(d) {
            continue;
        }
        match dom.tag(d) {
            "ul" | "ol" => {
                it.skip_children_of(d);
                if st.pruned[d] {
                    continue;
                }
                text = text.saturating_sub(st.text[d]);
                link = link.saturating_sub(st.link[d]);
                sub_items += dom
                    .descendants(d)
                    .filter(|&x| dom.tag(x) == "li" && !st.pruned[x])
                    .count() as u32;
            }
            "a" => {
                it.skip_children_of(d);
                if !st.pruned[d] && runs_on(dom, d) {
                    link = link.saturating_sub(st.link[d]);
                }
            }
            _ => {}
        }
    }
    let own = text.saturating_sub(link);
    items + sub_items >= 3
        && items > 0
        && own >= items * ITEM_PROSE_CHARS
        && (text == 0 || f64::from(link) / f64::from(text) < 0.5)
}

/// Characters of the links in the list `id` (not in its sub-lists) that
/// [`runs_on`].
fn run_on_chars(dom: &Dom, st: &Stats, id: NodeId) -> u32 {
    let mut n = 0;
    let mut it = dom.descendants(id);
    while let Some(d) = it.next() {
        if dom.is_element(d) && matches!(dom.tag(d), "ul" | "ol" | "a") {
            it.skip_children_of(d);
            if dom.tag(d) == "a" && !st.pruned[d] && runs_on(dom, d) {
                n += st.link[d];
            }
        }
    }
    n
}

/// Does the link `a` run on from the words before it, a part of their
/// sentence rather than a title: `🌟 gero <a>removed the windowtype
/// attribute</a> from dialogs`? Its text is words (not an address) that
/// start with a small letter, and the text just before it holds a word
/// and ends no sentence or label.
/// (A teaser's link is the item, or starts it, or follows a label.)
fn runs_on(dom: &Dom, a: NodeId) -> bool {
    let text = dom.text(a);
    let words = text.split_whitespace().count();
    if words < 2 || !text.trim_start().starts_with(char::is_lowercase) {
        return false;
    }
    let before = std::iter::successors(dom.nodes[a].prev(), |&p| dom.nodes[p].prev()).find_map(
        |p| match &dom.nodes[p].kind {
            Kind::Text(t) if t.trim().is_empty() => None,
            Kind::Text(t) => Some(t.trim().to_string()),
            Kind::Element if dom.tag(p) != "a" => Some(dom.text(p).trim().to_string()),
            _ => Some(String::new()),
        },
    );
    before.is_some_and(|b| {
        b.chars().any(char::is_alphabetic) && !b.ends_with(['.', ':', '!', '?', '|', '›', '»', '>'])
    })
}

/// Levels between a sub-list and the item that holds it (`li > ul`,
/// `li > div > ul`).
const SUB_LIST_LEVELS: usize = 2;

/// Is the list a sub-list of an item of a list of sentences
/// ([`items_of_prose`])? It details that item (the changes a release note
/// lists, the links its sentence names) and stays with it, however many
/// links it holds: a menu's sub-lists sit in a list of links, which is
/// skipped before them.
fn in_prose_item(dom: &Dom, st: &Stats, id: NodeId) -> bool {
    let Some(item) = dom
        .ancestors(id)
        .take(SUB_LIST_LEVELS)
        .find(|&a| dom.tag(a) == "li")
    else {
        return false;
    };
    dom.nodes[item]
        .parent()
        .is_some_and(|l| matches!(dom.tag(l), "ul" | "ol") && items_of_prose(dom, st, l))
}

/// Is `id` a subheading with no text after it in its parent, or only
/// skipped blocks (a "Related articles" label over a pruned link list)?
fn heads_nothing(dom: &Dom, st: &Stats, id: NodeId) -> bool {
    if !matches!(dom.tag(id), "h2" | "h3" | "h4" | "h5" | "h6") || st.text[id] > LABEL_CHARS {
        return false;
    }
    let mut skipped = false;
    let mut next = dom.nodes[id].next();
    while let Some(n) = next {
        if dom.is_element(n) && st.pruned[n] && !tag_only_pruned(dom, n) {
            skipped = true;
        } else if st.text[n] > 0 {
            if dom.is_element(n) && skip_inside(dom, st, n) {
                skipped = true;
            } else {
                return false;
            }
        }
        next = dom.nodes[n].next();
    }
    skipped
}

/// Longest subheading [`heads_nothing`] may drop.
const LABEL_CHARS: u32 = 60;

/// Elements pruned for their tag alone (scripts, images...), which say
/// nothing about what a heading introduces.
fn tag_only_pruned(dom: &Dom, id: NodeId) -> bool {
    matches!(
        dom.tag(id),
        "script" | "style" | "noscript" | "img" | "picture" | "svg" | "iframe" | "template"
    )
}

/// Paragraphs of the text under `root`, appended to `out`, and how each is
/// set in Markdown, appended to `marks`.
pub(super) fn emit(
    dom: &Dom,
    st: &Stats,
    root: NodeId,
    out: &mut Vec<String>,
    marks: &mut Vec<Mark>,
) {
    emit_marked(dom, st, root, out, &mut Vec::new(), marks);
}

/// [`emit`], also marking in `labels` (one entry per paragraph appended)
/// which paragraphs are short subheadings.
pub(super) fn emit_marked(
    dom: &Dom,
    st: &Stats,
    root: NodeId,
    out: &mut Vec<String>,
    labels: &mut Vec<bool>,
    marks: &mut Vec<Mark>,
) {
    let mut e = Emitter {
        cur: String::new(),
        inline: Inline::default(),
        ctx: Context::default(),
        out,
        labels,
        marks,
    };
    // Explicit stack of (node, entering?) so deep trees do not recurse.
    let mut stack = vec![(root, true)];
    while let Some((id, enter)) = stack.pop() {
        let tag = dom.tag(id);
        let block = dom.is_element(id) && is_block_tag(tag);
        if !enter {
            if block {
                let label =
                    matches!(tag, "h2" | "h3" | "h4" | "h5" | "h6") && st.text[id] <= LABEL_CHARS;
                e.flush(label);
            }
            if is_math_token(tag) {
                e.text(" ");
            }
            e.leave(tag);
            continue;
        }
        if st.pruned[id] && id != root {
            continue;
        }
        match &dom.nodes[id].kind {
            Kind::Text(t) => e.text(t),
            Kind::Element | Kind::Document => {
                if id != root && (skip_inside(dom, st, id) || heads_nothing(dom, st, id)) {
                    continue;
                }
                if tag == "br" || tag == "hr" {
                    e.flush(false);
                    continue;
                }
                if block {
                    e.flush(false);
                } else if is_math_token(tag) {
                    e.text(" ");
                }
                e.enter(dom, id, tag);
                stack.push((id, false));
                // The children, last first (so the first is popped first).
                let mut child = dom.nodes[id].last_child();
                while let Some(c) = child {
                    stack.push((c, true));
                    child = dom.nodes[c].prev();
                }
            }
            Kind::Other => {}
        }
    }
    e.flush(false);
}

/// The paragraph being written and where it sits.
struct Emitter<'a> {
    cur: String,
    inline: Inline,
    ctx: Context,
    out: &'a mut Vec<String>,
    labels: &'a mut Vec<bool>,
    marks: &'a mut Vec<Mark>,
}

impl Emitter<'_> {
    fn text(&mut self, t: &str) {
        let from = self.cur.len();
        push_collapsed(&mut self.cur, t);
        let cell = self.ctx.cell().is_some();
        if self.ctx.pre.is_empty() || cell {
            self.inline.push(&self.cur, from, cell);
        } else {
            self.inline.push_raw(t, INVISIBLE);
        }
    }

    /// End the paragraph: keep it unless it is empty or page furniture.
    fn flush(&mut self, label: bool) {
        let code = !self.ctx.pre.is_empty() && self.ctx.cell().is_none();
        let md = self.inline.take(code);
        let t = self.cur.trim();
        if !t.is_empty() && !is_boilerplate(t) {
            self.out.push(t.to_string());
            self.labels.push(label);
            let block = self.ctx.block();
            self.marks.push(Mark {
                block,
                quote: self.ctx.quote,
                md,
            });
        }
        self.cur.clear();
    }

    fn enter(&mut self, dom: &Dom, id: NodeId, tag: &str) {
        let c = &mut self.ctx;
        match tag {
            "ul" | "ol" => {
                let start = dom
                    .attr(id, "start")
                    .and_then(|s| s.trim().parse::<u32>().ok());
                c.lists
                    .push((tag == "ol").then(|| start.unwrap_or(1).saturating_sub(1)));
            }
            "li" => {
                let depth = u8::try_from(c.lists.len().clamp(1, 8)).unwrap_or(8);
                let number = match c.lists.last_mut() {
                    Some(Some(n)) => {
                        *n = n.saturating_add(1);
                        Some(*n)
                    }
                    _ => None,
                };
                c.items.push((number, depth, false));
            }
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                c.headings.push(tag.as_bytes()[1] - b'0');
            }
            "pre" => c.pre.push(code_lang(dom, id)),
            "code" if !c.pre.is_empty() => {
                if let Some(slot @ None) = c.pre.last_mut() {
                    *slot = code_lang(dom, id);
                }
            }
            "code" => self.inline.code_open(self.cur.len()),
            "blockquote" => c.quote = c.quote.saturating_add(1),
            "table" => {
                c.tables.push((c.next_table, None, 0));
                c.next_table += 1;
            }
            "tr" => {
                if let Some(t) = c.tables.last_mut() {
                    t.1 = Some(t.1.map_or(0, |r| r + 1));
                    t.2 = 0;
                }
            }
            "td" | "th" => {
                let cell = match c.tables.last_mut() {
                    Some((table, Some(row), col)) => {
                        *col += 1;
                        let simple = !dom.descendants(id).any(|d| {
                            dom.is_element(d) && is_block_tag(dom.tag(d)) && dom.tag(d) != "br"
                        });
                        simple.then_some((*table, *row, *col - 1))
                    }
                    _ => None,
                };
                c.cells.push(cell);
            }
            "em" | "i" | "strong" | "b" if c.pre.is_empty() => {
                let marker = if matches!(tag, "em" | "i") { "*" } else { "**" };
                // `<b>` inside `<strong>` adds nothing.
                let marker = if self.inline.is_open(marker) {
                    ""
                } else {
                    marker
                };
                self.inline.open(marker);
                c.emphasis.push(true);
            }
            "em" | "i" | "strong" | "b" => c.emphasis.push(false),
            _ => {}
        }
    }

    fn leave(&mut self, tag: &str) {
        let c = &mut self.ctx;
        match tag {
            "ul" | "ol" => drop(c.lists.pop()),
            "li" => drop(c.items.pop()),
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => drop(c.headings.pop()),
            "pre" => drop(c.pre.pop()),
            "code" if c.pre.is_empty() => {
                let cell = c.cell().is_some();
                self.inline.code_close(&self.cur, cell);
            }
            "blockquote" => c.quote = c.quote.saturating_sub(1),
            "table" => drop(c.tables.pop()),
            "td" | "th" => drop(c.cells.pop()),
            // The guard pops in either case; only an element that opened a marker closes one.
            "em" | "i" | "strong" | "b" if c.emphasis.pop() == Some(true) => self.inline.close(),
            _ => {}
        }
    }
}

/// Where the walk is, for Markdown: the blocks around the current paragraph.
#[derive(Default)]
struct Context {
    /// Open lists: the last number given in an ordered one, `None` for bullets.
    lists: Vec<Option<u32>>,
    /// Open list items: number, depth, whether a paragraph was written yet.
    items: Vec<(Option<u32>, u8, bool)>,
    headings: Vec<u8>,
    /// Open `<pre>`s and the language of their code.
    pre: Vec<Option<String>>,
    quote: u8,
    /// Open tables: id, current row, next column.
    tables: Vec<(u32, Option<u32>, u32)>,
    next_table: u32,
    /// Open cells: (table, row, column) for a cell of text only, `None` for
    /// one holding blocks (a layout table), whose paragraphs stand alone.
    cells: Vec<Option<(u32, u32, u32)>>,
    /// Open emphasis elements: whether each opened a marker.
    emphasis: Vec<bool>,
}

impl Context {
    fn cell(&self) -> Option<(u32, u32, u32)> {
        self.cells.last().copied().flatten()
    }

    /// The block of the paragraph being flushed (a list item's first
    /// paragraph is marked as such).
    fn block(&mut self) -> Block {
        if let Some((table, row, col)) = self.cell() {
            return Block::Cell { table, row, col };
        }
        if let Some(lang) = self.pre.last() {
            return Block::Code { lang: lang.clone() };
        }
        if let Some(&level) = self.headings.last() {
            return Block::Heading(level);
        }
        if let Some((number, depth, written)) = self.items.last_mut() {
            let first = !*written;
            *written = true;
            return Block::Item {
                number: *number,
                depth: *depth,
                first,
            };
        }
        Block::Para
    }
}

/// The language a `<pre>` or `<code>` names: `class="language-rust"`,
/// `lang-js`, `highlight-source-python`, or `data-lang`.
fn code_lang(dom: &Dom, id: NodeId) -> Option<String> {
    let from_class = dom.attr(id, "class").and_then(|c| {
        c.split_ascii_whitespace().find_map(|t| {
            t.strip_prefix("language-")
                .or_else(|| t.strip_prefix("lang-"))
                .or_else(|| t.strip_prefix("highlight-source-"))
        })
    });
    let lang = from_class
        .or_else(|| dom.attr(id, "data-lang"))
        .or_else(|| dom.attr(id, "data-language"))?;
    let lang: String = lang
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '#' | '-' | '_' | '.'))
        .take(24)
        .collect();
    (!lang.is_empty()).then(|| lang.to_ascii_lowercase())
}

/// Characters that only hint at line breaking or byte order: soft hyphens,
/// zero-width spaces, word joiners and BOMs. They would split words for
/// every later reader of the text, so they are dropped.
const INVISIBLE: &[char] = &['\u{ad}', '\u{200b}', '\u{2060}', '\u{feff}'];

/// Append text with whitespace runs collapsed to one space.
fn push_collapsed(cur: &mut String, t: &str) {
    let mut space = cur.is_empty() || cur.ends_with(' ');
    for c in t.chars() {
        if c.is_whitespace() {
            if !space {
                cur.push(' ');
                space = true;
            }
        } else if INVISIBLE.contains(&c) {
            continue;
        } else {
            cur.push(c);
            space = false;
        }
    }
}

#[cfg(test)]
mod boilerplate_tests {
    use super::is_boilerplate;

    #[test]
    fn furniture_lines_are_dropped_and_prose_is_kept() {
        for line in [
            "Advertisement",
            "Kommentieren",
            "Diesen Artikel teilen",
            "Hier können Sie den Artikel bewerten",
            "Foto: Jane Doe/Agency",
            "(Credit: Jane Doe / Agency)",
            "Telefon: +49 - (40) - 300 30 - 1141",
            "Lesen Sie hier: Ein anderer Artikel über etwas anderes",
            "To view the full story, please subscribe to The Daily. You can choose an annual plan.",
            "*Werbung. Dieser Beitrag enthält Werbung für eine Marke.",
            "We want to hear what you think about this article. Submit a letter to the editor.",
            "Help us continue to spread the magic of words to readers everywhere",
            "Dieser Text wurde veröffentlicht unter der Lizenz CC-BY-NC-ND-4.0-DE.",
            "This article is licensed under a Creative Commons Attribution 4.0 license.",
            "Stand: 05. Februar 2020",
            "24. März 2004, 19:49 | Genesis",
            "Wissen · 5. November 2024",
            "Related: The model that learned to read maps, and what it means for the rest of us.",
            "Related stories",
            "Teilen auf Facebook",
            "Recommended for you",
            "Science • November 5, 2024",
            "aja/PAP",
            "(dpa/afp)",
            "3 / 12",
            "Bild 3 von 12",
            "10:05",
            "14.30 Uhr",
            "© 2020 Example Inc. All Rights Reserved",
            "Sign up for our newsletter",
            "Read more »",
        ] {
            assert!(is_boilerplate(line), "{line}");
        }
        for line in [
            "The newsletter industry grew by a third last year, the report found, as readers paid for independent writing.",
            "By the end of the year the model was twice as fast.",
            "Contents of the report were leaked.",
            "Back to the drawing board, the company said on Monday, after the model failed its tests.",
            "The model is licensed under Apache 2.0, which lets companies build on it freely.",
            "Das Modell steht unter der Lizenz Apache 2.0 und darf frei genutzt werden.",
            "In a letter to the editor, the researchers said the benchmark was flawed.",
            "Ukraine wants to become a member of the alliance, its minister said.",
            "Termin: 29.02.2020, 19 Uhr",
            "Einsendeschluss: 03.11.2019 (Poststempel)",
            "N/A",
            "Blob/ File",
            "Am 4. März 2024 beginnt die Konferenz in Berlin.",
            "Start · 5. November 2024 in Berlin",
            "Wahl am 5. November 2024",
            "Aktionszeitraum: 21.10.2019 – 27.10.2019",
            "Related to each other by marriage, the two families ran the firm for a century.",
            "Teilen der Opposition ging der Vorschlag der Regierung nicht weit genug.",
            "Recommended by the committee, the plan now goes to a vote in parliament.",
        ] {
            assert!(!is_boilerplate(line), "{line}");
        }
    }
}

#[cfg(test)]
mod phrase_tests {
    //! Each phrase list is held to the regex it replaced, on texts made of
    //! its phrases in several cases and surroundings.
    use super::*;
    use crate::phrases::oracle::texts;

    fn same(name: &str, list: &[&str], regex: &str, ours: impl Fn(&str) -> bool) {
        let re = Regex::new(regex).unwrap();
        // The regex's own words too, so a phrase left out of the list shows.
        let pieces = fragments(regex);
        let mut phrases = list.to_vec();
        phrases.extend(pieces.iter().map(|f| f.as_str()));
        let mut extra = texts(&phrases);
        extra.extend(
            [
                "",
                " ",
                "x",
                "über",
                "Back to the homepage",
                "BACK TO THE HOMEPAGE now",
                "Stand: 5",
                "©2020",
            ]
            .map(String::from),
        );
        for t in &extra {
            assert_eq!(ours(t), re.is_match(t), "{name} on {t:?}");
        }
    }

    /// The literal pieces of an alternation, its syntax taken out.
    fn fragments(regex: &str) -> Vec<String> {
        let syntax =
            Regex::new(r"\(\?i\)|\\[bswW]\*?|\.\{\d,\d+\}|\[[^\]]*\][*+?]?|[\^$()?*]").unwrap();
        syntax
            .replace_all(regex, " ")
            .split('|')
            .map(|f| f.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|f| !f.is_empty())
            .collect()
    }

    #[test]
    fn boilerplate_matches_its_regex() {
        same(
            "BOILERPLATE",
            &BOILERPLATE.list(),
            r"(?i)^(read more|related|see also|more from|recommended|sign up|subscribe|share this|follow us|all rights reserved|copyright|©|lesen sie auch|lesen sie mehr|mehr zum thema|mehr themen|auch interessant|das könnte dich|das könnte sie|weitere informationen|weitere artikel|zum thema|teilen|lire aussi|à lire aussi|lee también|leer más|te puede interesar|czytaj też|czytaj także|zobacz też|lesen sie hier|auch lesen|vea también|ver también|leia também|mira:|dowiedz się więcej|czytaj więcej|neugierig geworden|lust auf mehr|weitere infos|zurück zur (übersicht|listenansicht|startseite|liste)|back to (top|the (top|home\w*|overview|list))|bild anzeigen|pingback|trackback|eingestellt von|verfasst von|posted by|titelbild|beitragsbild|aktualisiert am|zuletzt aktualisiert|last updated|stand:|if you enjoyed|suggested citation|download the)\b",
            |t| opens_with_boilerplate(&lower(t)),
        );
    }

    #[test]
    fn label_lines_match_their_regex() {
        same(
            "BOILERPLATE_LINE",
            &BOILERPLATE_LINE.list(),
            r"(?i)^(advertisement|advertising|sponsored|anzeige|werbung|reklama|publicidad|publicidade|publicité|pubblicità|advertentie|comments?|kommentare?|kommentieren|kommentare schreiben|comentarios|commentaires|inhaltsverzeichnis|table of contents|contents|inhalt|beitragsbild|titelbild|originalartikel|bild anzeigen|kontakt|contact|telefon|phone|von|by|credit|credits|share|teilen|drucken|print|learn more|dowiedz się więcej|mehr erfahren|en savoir plus|weiterlesen|continue reading|read more|mehr lesen|related posts|ähnliche beiträge|ähnliche artikel|über den autor|about the author|lust auf mehr|auch lesen|quellen ausblenden|quellenangaben|zusatzinformationen)\s*[:.!?…»›>]*$",
            |t| is_label_line(&lower(t)),
        );
    }

    #[test]
    fn prompts_match_their_regexes() {
        same(
            "PROMPT",
            &PROMPT.list(),
            r"(?i)(artikel teilen|beitrag teilen|share this (article|post|story)|artikel bewerten|beitrag bewerten|rate this (article|post|recipe)|in den kommentaren|leave a comment|kommentar schreiben|newsletter|abonnieren sie|subscribe to|sign up for|enjoyed reading|lesen sie weiter|zugang und lesen|read the full (story|article)|als pdf herunterladen|download as pdf|besuchen sie unseren|follow us on|folgen sie uns|all rights reserved|alle rechte vorbehalten)",
            |t| PROMPT.contains(&lower(t)),
        );
        let mut long = PROMPT_LONG.list().to_vec();
        long.extend([
            "download the example app",
            "download the  apps",
            "this article is under the cc licence ",
            "dieser text steht unter einer lizenz",
        ]);
        same(
            "PROMPT_LONG",
            &long,
            r"(?i)(enthält werbung|affiliate[- ]links?|sponsored post|in kontakt treten|exklusive angebote|nichts mehr (verpassen|versäumen)|never miss|sign up here|cancel anytime|cancela cuando quieras|jederzeit kündbar|download the .{1,40} apps?\b|youtube[- ]?(channel|kanal)|canal de youtube|rss-feed|please subscribe|to view the full story|already a subscriber|first-time subscribers|vorschau auf den nächsten|der beitrag wurde am|this entry was posted|(submit|write) a letter to the editor|help us continue|support (our|independent) journalism|become a (supporter|subscriber)|(dieser|this) (text|beitrag|artikel|article|post|work|content|story) .{0,40}(lizenz|licen[cs]ed? )|under a creative commons)",
            |t| is_long_prompt(t, &lower(t)),
        );
    }

    #[test]
    fn date_labels_match_their_regex() {
        same(
            "META_DATE_LABEL",
            &META_DATE_LABEL.list(),
            r"(?i)^(stand|updated|aktualisiert|published|veröffentlicht|erschienen|posted|datum|date|modified|geändert|publicado|actualizado|publié)\W*$",
            is_date_label,
        );
    }

    #[test]
    fn the_short_line_gates_pass_every_line_their_regexes_match() {
        let mut lines = texts(&[
            "foto",
            "(photo",
            "crédits photos",
            "abbildung 12",
            "tel.",
            "e-mail",
            "bild 3 von 12",
            "diapositive 123 sur 123",
            "3 / 12",
            "画像 3 枚中 12 枚",
            "10:05",
            "14.30 uhr",
            "9h30 a.m.",
            "12:00 p.m.",
        ]);
        lines.extend(
            [
                "Foto      : x",
                "(Abbildung 123456789012: x",
                "１０:０５",
                "3 /\t12",
            ]
            .map(String::from),
        );
        for (name, gated) in [
            ("CREDIT", &CREDIT),
            ("TIME_LINE", &TIME_LINE),
            ("SLIDE_COUNTER", &SLIDE_COUNTER),
        ] {
            gated.assert_holds_on(name, &lines, 10);
        }
    }
}
