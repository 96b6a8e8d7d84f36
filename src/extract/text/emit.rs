//! Writing the chosen part of the tree out as paragraphs: block elements
//! break paragraphs, whitespace collapses, link-heavy lists and tables inside
//! the content are skipped, and short cross-link or legal lines are dropped.

use std::sync::LazyLock;

use regex::Regex;

use super::chrome::class_weight;
use super::stats::{Stats, link_density};
use crate::date::written::first_date;
use crate::extract::dom::{Dom, Kind, NodeId};

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
        r"(?i)^(read more|related|see also|more from|recommended|sign up|subscribe|share this|follow us|all rights reserved|copyright|©|lesen sie auch|lesen sie mehr|mehr zum thema|mehr themen|auch interessant|das könnte dich|das könnte sie|weitere informationen|weitere artikel|zum thema|teilen|lire aussi|à lire aussi|lee también|leer más|te puede interesar|czytaj też|czytaj także|zobacz też|lesen sie hier|auch lesen|vea también|ver también|leia também|mira:|dowiedz się więcej|czytaj więcej|neugierig geworden|lust auf mehr|weitere infos|zurück zur (übersicht|listenansicht|startseite|liste)|back to (top|the (top|home\w*|overview|list))|bild anzeigen|pingback|trackback|eingestellt von|verfasst von|posted by|titelbild|beitragsbild|aktualisiert am|zuletzt aktualisiert|last updated|stand:|if you enjoyed|suggested citation|download the)\b",
    )
    .expect("static regex")
});
/// Whole short paragraphs that are labels of page furniture: ad markers,
/// comment and share prompts, tables of contents, picture labels.
static BOILERPLATE_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^(advertisement|advertising|sponsored|anzeige|werbung|reklama|publicidad|publicité|pubblicità|comments?|kommentare?|kommentieren|kommentare schreiben|comentarios|commentaires|inhaltsverzeichnis|table of contents|contents|inhalt|beitragsbild|titelbild|originalartikel|bild anzeigen|kontakt|contact|telefon|phone|von|by|credit|credits|share|teilen|drucken|print|learn more|dowiedz się więcej|mehr erfahren|en savoir plus|weiterlesen|continue reading|read more|mehr lesen|related posts|ähnliche beiträge|ähnliche artikel|über den autor|about the author|lust auf mehr|auch lesen|quellen ausblenden|quellenangaben|zusatzinformationen)\s*[:.!?…»›>]*$",
    )
    .expect("static regex")
});
/// Phrases that mark a short paragraph as a prompt to share, rate, comment,
/// subscribe or pay (matched anywhere in a paragraph of at most
/// [`PROMPT_CHARS`]).
static PROMPT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(artikel teilen|beitrag teilen|share this (article|post|story)|artikel bewerten|beitrag bewerten|rate this (article|post|recipe)|in den kommentaren|leave a comment|kommentar schreiben|newsletter|abonnieren sie|subscribe to|sign up for|enjoyed reading|lesen sie weiter|zugang und lesen|read the full (story|article)|als pdf herunterladen|download as pdf|besuchen sie unseren|follow us on|folgen sie uns|all rights reserved|alle rechte vorbehalten)",
    )
    .expect("static regex")
});
/// Longest paragraph that [`PROMPT`] may drop.
const PROMPT_CHARS: usize = 100;
/// Longer calls to act: paywall notices, app and channel adverts, sponsor
/// disclosures, post footers (matched anywhere in a paragraph of at most
/// [`PROMPT_LONG_CHARS`]). Phrases specific enough not to occur in prose.
static PROMPT_LONG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(enthält werbung|affiliate[- ]links?|sponsored post|in kontakt treten|exklusive angebote|nichts mehr (verpassen|versäumen)|never miss|sign up here|cancel anytime|cancela cuando quieras|jederzeit kündbar|download the .{1,40} apps?\b|youtube[- ]?(channel|kanal)|canal de youtube|rss-feed|please subscribe|to view the full story|already a subscriber|first-time subscribers|vorschau auf den nächsten|der beitrag wurde am|this entry was posted|(submit|write) a letter to the editor|help us continue|support (our|independent) journalism|become a (supporter|subscriber)|(dieser|this) (text|beitrag|artikel|article|post|work|content|story) .{0,40}(lizenz|licen[cs]ed? )|under a creative commons)",
    )
    .expect("static regex")
});
/// Longest paragraph that [`PROMPT_LONG`] may drop.
const PROMPT_LONG_CHARS: usize = 160;
/// Picture credits and captions' credit lines (`Foto: ...`, `Photo: ...`).
static CREDIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\(?(foto|fotos|photo|photos|bild|image|credit|credits|bildquelle|quelle|fuente|crédito|crédits?( photos?)?|abbildung \d+|telefon|tel\.?|phone|fax|e-?mail)\s*:")
        .expect("static regex")
});
/// Longest paragraph that [`CREDIT`] may drop.
const CREDIT_CHARS: usize = 80;

/// An agency or author tag closing a news item: `aja/PAP`, `(dpa/afp)`.
static AGENCY_TAG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\(?\p{Ll}{2,5}(?:/\p{L}{2,6})+\)?$").expect("static regex"));

/// What is left of a date line once the date, times and separators are
/// gone: a label ("Stand:", "Updated") or a commenter's name at most.
static DATE_LINE_REST: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[\d:.,|/–—-]+|\b(?:uhr|am|pm|h)\b").expect("static regex"));
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
    let rest: String = DATE_LINE_REST
        .replace_all(&t[at..], " ")
        .split_whitespace()
        .skip(1)
        .chain(t[..at].split_whitespace())
        .collect::<Vec<_>>()
        .join(" ");
    match rest.split_whitespace().count() {
        0 => true,
        // A page's own stamp ("Stand:", "Updated") or a comment's header
        // ("date | name"); "Termin: 29.02.2020" is content and stays.
        1 => META_DATE_LABEL.is_match(&rest) || t.contains(" | "),
        _ => false,
    }
}

/// Labels that mark a date as the page's own stamp.
static META_DATE_LABEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(stand|updated|aktualisiert|published|veröffentlicht|erschienen|posted|datum|date|modified|geändert|publicado|actualizado|publié)\W*$")
        .expect("static regex")
});

/// Is a paragraph page furniture rather than article text?
fn is_boilerplate(t: &str) -> bool {
    (t.len() <= BOILERPLATE_CHARS && (BOILERPLATE.is_match(t) || BOILERPLATE_LINE.is_match(t)))
        || (t.len() <= PROMPT_CHARS && PROMPT.is_match(t))
        || (t.len() <= PROMPT_LONG_CHARS && PROMPT_LONG.is_match(t))
        || (t.len() <= CREDIT_CHARS && CREDIT.is_match(t))
        || AGENCY_TAG.is_match(t)
        || is_date_line(t)
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
    let ld = link_density(st, id);
    let text = st.text[id];
    if text == 0 {
        return false;
    }
    if ld > 0.5 && st.text[id].saturating_sub(st.link[id]) < 400 {
        return true;
    }
    if matches!(tag, "ul" | "ol" | "div" | "section") && ld > 0.3 && st.paras[id] == 0 {
        return true;
    }
    class_weight(dom, id) < 0.0 && text < 200 && st.paras[id] < 2
}

/// Is `id` a subheading with no text after it in its parent, or only
/// skipped blocks (a "Related articles" label over a pruned link list)?
fn heads_nothing(dom: &Dom, st: &Stats, id: NodeId) -> bool {
    if !matches!(dom.tag(id), "h2" | "h3" | "h4" | "h5" | "h6") || st.text[id] > LABEL_CHARS {
        return false;
    }
    let mut skipped = false;
    let mut next = dom.nodes[id].next;
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
        next = dom.nodes[n].next;
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

/// Paragraphs of the text under `root`, appended to `out`.
pub(super) fn emit(dom: &Dom, st: &Stats, root: NodeId, out: &mut Vec<String>) {
    emit_marked(dom, st, root, out, &mut Vec::new());
}

/// [`emit`], also marking in `labels` (one entry per paragraph appended)
/// which paragraphs are short subheadings.
pub(super) fn emit_marked(
    dom: &Dom,
    st: &Stats,
    root: NodeId,
    out: &mut Vec<String>,
    labels: &mut Vec<bool>,
) {
    let mut cur = String::new();
    let mut flush = |cur: &mut String, out: &mut Vec<String>, label: bool| {
        let t = cur.trim();
        if !t.is_empty() && !is_boilerplate(t) {
            out.push(t.to_string());
            labels.push(label);
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
                let label =
                    matches!(tag, "h2" | "h3" | "h4" | "h5" | "h6") && st.text[id] <= LABEL_CHARS;
                flush(&mut cur, out, label);
            }
            continue;
        }
        if st.pruned[id] && id != root {
            continue;
        }
        match &dom.nodes[id].kind {
            Kind::Text(t) => push_collapsed(&mut cur, t),
            Kind::Element | Kind::Document => {
                if id != root && (skip_inside(dom, st, id) || heads_nothing(dom, st, id)) {
                    continue;
                }
                if tag == "br" || tag == "hr" {
                    flush(&mut cur, out, false);
                    continue;
                }
                if block {
                    flush(&mut cur, out, false);
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
    flush(&mut cur, out, false);
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
            "aja/PAP",
            "(dpa/afp)",
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
        ] {
            assert!(!is_boilerplate(line), "{line}");
        }
    }
}
