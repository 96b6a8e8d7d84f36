//! The author line of a page: who wrote it, as a plain name list.
//!
//! Sources, first found wins: the article's JSON-LD `author`; author
//! `<meta>` names; an element marked `itemprop="author"`; `rel="author"`
//! links; an element whose class or id names a byline or author. Each
//! candidate is cleaned of what surrounds names on pages ("By", "von",
//! "Par", the date after the name, a handle or a source after a bar), and a
//! candidate that is empty or too long after cleaning gives way to the next.
//! An organisation as the JSON-LD author (often the publisher itself) comes
//! last, after any person the page names. Failing all markup, a short line
//! written as a byline ("By Jane Doe | 12/10/2020") is read.

use std::sync::LazyLock;

use regex::Regex;

use super::dom::{Dom, Kind, NodeId};
use super::meta::{self, Meta};
use crate::date::written::first_date;
use crate::gated::Gated;
use crate::phrases::{Phrases, lower};

/// Author meta names, most specific first.
const AUTHOR_METAS: &[&str] = &[
    "author",
    "article:author",
    "article:author_name",
    "author_name",
    "parsely-author",
    "sailthru.author",
    "byl",
    "dc.creator",
    "dcterms.creator",
];

/// Longest byline kept, in characters.
const MAX_CHARS: usize = 100;
/// Elements of a class-named byline read (so a page of many bylines stays cheap).
const MAX_CLASSED: usize = 16;

/// Words that introduce a name: "By", "von", "Par", "View all posts by",
/// "Eingestellt von", or a short label and a colon ("Text und Interview:").
///
/// Gate (see `crate::gated`): the label form has its colon; every word form
/// starts with one of `abdegprsvw` in any case (of the letters no character
/// outside ASCII folds to but `ſ`, and text starting outside ASCII passes).
static LEAD: Gated = Gated::new(
    |t| {
        t.contains(':')
            || t.chars().next().is_some_and(|c| {
                !c.is_ascii() || b"abdegprsvw".contains(&(c as u8).to_ascii_lowercase())
            })
    },
    lead,
);
fn lead() -> Regex {
    Regex::new(
        r"(?i)^(?:(?:(?:view all )?posts?|posted|published|written|eingestellt|geschrieben|verfasst|rezept|artikel|beitrag|ein beitrag|ein artikel|blog beitrag|ein blog beitrag|publié|escrito|scritto)\s+(?:by|von|par|por|da)\b|(?:by|von|par|por|di|door|av|af|przez|author|autor)\b\s*:?|(?:\p{L}+\s+){0,3}\p{L}+\s*:)\s*",
    )
    .expect("static regex")
}

/// What follows the names: a separator, a handle, a line break, or "am"
/// and a day ("lupa am 26/10/13", "Isabella am Samstag").
///
/// Gate (see `crate::gated`): every form but two needs a digit or one of
/// `|•·@` or a line break; those two are a weekday (each spells `day`, `tag`
/// or is `mittwoch`, in any case) and ` am` before a capital.
static TAIL: Gated = Gated::new(
    |t| {
        t.contains(|c: char| c.is_numeric() || matches!(c, '|' | '•' | '·' | '@' | '\n'))
            || WEEKDAY_PARTS.contains(&lower(t))
            || t.match_indices("am")
                .any(|(i, _)| t[..i].chars().next_back().is_some_and(char::is_whitespace))
    },
    || {
        Regex::new(r"(?i:\s+(?:hace|vor|il y a)\s+\d|\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag)\b|\s+\d+\s*(?:h|min|hours?|minutes?|days?|stunden|minuten|tagen?)\s+ago\b)|\s*(?:[|•·]|\s@\w|\n|\s+(?:am|on|le|el|il|um)\s+\d|\s+am\s+\p{Lu})").expect("static regex")
    },
);
/// What every weekday name in [`TAIL`] spells.
static WEEKDAY_PARTS: Phrases = Phrases::new(&["day", "tag", "mittwoch"]);

/// Connecting words left at the end once a date is cut ("am", "on", "le").
///
/// Gate: a match ends the text, with a separator or one of the words.
static DANGLING: Gated = Gated::new(
    |t| {
        t.chars()
            .next_back()
            .is_some_and(|c| c.is_whitespace() || ",;:–—-".contains(c))
            || DANGLING_WORDS.opens(&lower(&last_chars(t, 3)), |rest, _| rest.is_empty())
            || DANGLING_WORDS.opens(&lower(&last_chars(t, 2)), |rest, _| rest.is_empty())
    },
    || Regex::new(r"(?i)(?:[\s,;:–—-]+(?:am|on|le|at|um|the)?)+$").expect("static regex"),
);
/// The words [`DANGLING`] cuts.
static DANGLING_WORDS: Phrases = Phrases::new(&["am", "on", "le", "at", "um", "the"]);

/// The last `n` characters of `t`.
fn last_chars(t: &str, n: usize) -> String {
    let skip = t.chars().count().saturating_sub(n);
    t.chars().skip(skip).collect()
}

/// Lines that are labels, not names ("Post author", "Follow", "Last updated").
///
/// Gate: the text holds one of the regex's words.
static NOT_A_NAME: Gated = Gated::new(
    |t| NOT_A_NAME_WORDS.contains(&lower(t)),
    || {
        Regex::new(r"(?i)^(?:post author|author|autor|follow|folgen|datum|date|name\s*\*?|share|teilen)$|\b(?:updated|aktualisiert|published|publiziert|veröffentlicht)\b|\b(?:said|schrieb|wrote)$").expect("static regex")
    },
);
/// Every word [`NOT_A_NAME`] names.
static NOT_A_NAME_WORDS: Phrases = Phrases::new(&[
    "author",
    "autor",
    "follow",
    "folgen",
    "datum",
    "date",
    "name",
    "share",
    "teilen",
    "updated",
    "aktualisiert",
    "published",
    "publiziert",
    "veröffentlicht",
    "said",
    "schrieb",
    "wrote",
]);

/// The page's byline, cleaned, if any source gives one.
pub fn find(dom: &Dom, m: &Meta) -> Option<String> {
    // An organisation as the author (the publisher itself, often) gives way
    // to a person named anywhere else on the page.
    let author = m.articles().find_map(|v| v.get("author"));
    let jsonld = author.and_then(meta::jsonld_text).and_then(|a| clean(&a));
    let site = m.get(&["og:site_name"]).map(meta::clean);
    let organisation = author.is_some_and(is_organisation)
        || jsonld.is_some() && jsonld.as_deref() == site.as_deref();
    if !organisation && jsonld.is_some() {
        return jsonld;
    }
    person(dom, m).or(jsonld)
}

/// Is a JSON-LD `author` an organisation (or a list of them only)?
fn is_organisation(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Array(a) => !a.is_empty() && a.iter().all(is_organisation),
        serde_json::Value::Object(_) => meta::jsonld_types(v)
            .iter()
            .any(|t| matches!(*t, "Organization" | "NewsMediaOrganization" | "Corporation")),
        _ => false,
    }
}

/// The byline from the page's other sources, in their order.
fn person(dom: &Dom, m: &Meta) -> Option<String> {
    let classed_line = || {
        dom.descendants(0)
            .filter(|&id| dom.is_element(id) && classed(dom, id))
            .take(MAX_CLASSED)
            .filter(|&id| !in_comments(dom, id))
            .find_map(|id| {
                dom.spaced_text_within(id, 4 * MAX_CHARS)
                    .and_then(|t| clean(&t))
            })
    };
    AUTHOR_METAS
        .iter()
        .find_map(|k| {
            m.get(&[k])
                .filter(|a| !a.starts_with("http") && !a.starts_with('@'))
                .and_then(clean)
        })
        .or_else(|| itemprop_author(dom))
        .or_else(|| m.author_links.iter().find_map(|a| clean(a)))
        .or_else(classed_line)
        .or_else(|| by_line(dom))
}

/// Longest element text read as a written byline ("By Jane Doe | date").
const BY_LINE_CHARS: usize = 80;

/// A short line written as a byline: "By Jane Doe | 12/10/2020", "Ein
/// Artikel von Pamela Sladky", "Author: Jacopo Cascioli".
static BY_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:(?:by|par|por|door|przez)\s+|(?:(?:ein|blog|ein\s+blog)\s+)?(?:artikel|beitrag)\s+von\s+|text\s+von\s+|(?:author|autor(?:in)?|von)\s*:\s*)\p{Lu}")
        .expect("static regex")
});

/// The first words a written byline opens with (a cheap test before
/// [`BY_LINE`] reads the whole line).
static BY_LINE_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:by|par|por|door|przez|ein|blog|artikel|beitrag|text|author|autor|von)\b")
        .expect("static regex")
});

/// A name: two to five words, each capitalised or a particle.
static NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\p{Lu}[\p{L}.'’-]*(?:,?\s+(?:(?:von|van|der|den|de|la|le|di|da|du|und|and|y|&)\s+)*\p{Lu}[\p{L}.'’-]*){1,3}$")
        .expect("static regex")
});

/// The first element whose whole text is a written byline, outside
/// comments: the last source, for pages that mark nothing up. Only text
/// that opens with a byline's first word is looked at, and then the element
/// (or its parent) that holds the whole line.
fn by_line(dom: &Dom) -> Option<String> {
    dom.descendants(0)
        .filter(|&id| match &dom.nodes[id].kind {
            Kind::Text(t) => {
                let t = t.trim_start();
                BY_LINE_START.is_match(&t[..t.floor_char_boundary(24)])
            }
            _ => false,
        })
        .find_map(|text_node| {
            dom.ancestors(text_node).take(2).find_map(|id| {
                let text = meta::clean(&dom.spaced_text_within(id, BY_LINE_CHARS)?);
                if !BY_LINE.is_match(&text) || in_comments(dom, id) {
                    return None;
                }
                clean(&text).filter(|name| NAME.is_match(name))
            })
        })
}

/// The name inside the first `itemprop="author"` element.
fn itemprop_author(dom: &Dom) -> Option<String> {
    let author = dom
        .descendants(0)
        .find(|&id| dom.is_element(id) && dom.attr(id, "itemprop") == Some("author"))?;
    let named = dom
        .descendants(author)
        .find(|&id| dom.is_element(id) && dom.attr(id, "itemprop") == Some("name"));
    if let Some(n) = named {
        let name = dom
            .attr(n, "content")
            .map(str::to_string)
            .or_else(|| dom.spaced_text_within(n, 4 * MAX_CHARS));
        if let Some(b) = name.and_then(|t| clean(&t)) {
            return Some(b);
        }
    }
    dom.spaced_text_within(author, 4 * MAX_CHARS)
        .and_then(|t| clean(&t))
}

/// Does the element's class or id name a byline or an author (and not an
/// author's biography box)?
fn classed(dom: &Dom, id: NodeId) -> bool {
    let ci = dom.class_id(id);
    (ci.contains("byline") || ci.contains("author") || ci.contains("autor"))
        && !ci.contains("authority")
        && !ci.contains("bio")
        && !ci.contains("about")
        && !ci.contains("avatar")
}

/// Is the element inside a comment thread or form (whose authors are not
/// the page's)?
fn in_comments(dom: &Dom, id: NodeId) -> bool {
    dom.ancestors(id).any(|a| {
        let ci = dom.class_id(a);
        ci.contains("comment")
            || ci.contains("respond")
            || ci.contains("reply")
            || dom.tag(a) == "form"
    })
}

/// A candidate reduced to its names, or `None` when nothing name-like is left.
fn clean(raw: &str) -> Option<String> {
    // Lines are kept apart until the tail is cut: a name often ends its line.
    let lines: Vec<String> = raw
        .lines()
        .map(meta::clean)
        .filter(|l| !l.is_empty())
        .collect();
    let mut s = lines.join("\n");
    for _ in 0..2 {
        let rest = LEAD.find(&s).map(|m| s[m.end()..].to_string());
        match rest {
            Some(r) if r.len() < s.len() => s = r,
            _ => break,
        }
    }
    if let Some(m) = TAIL.find(&s)
        && m.start() > 0
    {
        s.truncate(m.start());
    }
    if let Some((at, _)) = first_date(&s)
        && at > 0
    {
        s.truncate(at);
    }
    let s = DANGLING.replace(&s, "");
    let s = meta::clean(&s);
    let ok = !s.is_empty()
        && !NOT_A_NAME.is_match(&s)
        && s.chars().count() <= MAX_CHARS
        && s.chars().any(char::is_alphabetic)
        && first_date(&s).is_none();
    ok.then_some(s)
}

#[cfg(test)]
mod tests {
    use super::{DANGLING, NOT_A_NAME, TAIL, clean};

    #[test]
    fn bylines_are_reduced_to_names() {
        let table = [
            ("By Erin Cunningham", Some("Erin Cunningham")),
            ("von Redaktion,", Some("Redaktion")),
            (
                "VON MORITZ GATHMANN am 21. April 2020",
                Some("MORITZ GATHMANN"),
            ),
            (
                "Por Williams Perdomo @wperdomod -",
                Some("Williams Perdomo"),
            ),
            ("View all posts by Daniel Lemire", Some("Daniel Lemire")),
            ("Emily Burack 8 January 2020, 3:51 pm", Some("Emily Burack")),
            ("James Akinaka • 8h", Some("James Akinaka")),
            ("Hector Andrade | Agencia UNO", Some("Hector Andrade")),
            ("Janic Cathomen, 01.12.2021", Some("Janic Cathomen")),
            ("Autor: Jane Doe", Some("Jane Doe")),
            ("Jose de la Cruz", Some("Jose de la Cruz")),
            ("Mohamed el Baradei", Some("Mohamed el Baradei")),
            ("Marine Le Pen", Some("Marine Le Pen")),
            ("Ahmed el", Some("Ahmed el")),
            (
                "Fiona Bornhöft und Mariam Hofbeck",
                Some("Fiona Bornhöft und Mariam Hofbeck"),
            ),
            ("Dieter Sieckmeyer", Some("Dieter Sieckmeyer")),
            ("Par\nSébastien Farcis", Some("Sébastien Farcis")),
            ("Interview: Julia Lauter", Some("Julia Lauter")),
            ("lupa am 26/10/13, 03:48 pm", Some("lupa")),
            ("Isabella.DiBiase am Samstag", Some("Isabella.DiBiase")),
            ("Eingestellt von", None),
            ("Post author", None),
            ("Last Updated: January 7, 2025", None),
            ("stephangoeldi said", None),
            ("Said Ahmed", Some("Said Ahmed")),
            ("Ein Artikel von Pamela Sladky", Some("Pamela Sladky")),
            (
                "Blog Beitrag von Margarita Koreneva",
                Some("Margarita Koreneva"),
            ),
            ("J.R. Stone Thursday, March 5", Some("J.R. Stone")),
            ("Published by Jane Doe", Some("Jane Doe")),
            ("Author Andreas Kalt", Some("Andreas Kalt")),
            (
                "Isabel Caro y José Wilson Hace 13 horas",
                Some("Isabel Caro y José Wilson"),
            ),
            ("Houzz Deutschland vor 5 Stunden", Some("Houzz Deutschland")),
            ("Jane Doe 5 hours ago", Some("Jane Doe")),
            ("21. April 2020", None),
            ("By", None),
            ("", None),
        ];
        for (raw, want) in table {
            assert_eq!(clean(raw).as_deref(), want, "{raw}");
        }
    }

    #[test]
    fn the_gates_pass_every_line_their_regexes_match() {
        let mut lines = crate::phrases::oracle::texts(&[
            "jane doe",
            "jane doe | the times",
            "jane doe • 5 min",
            "jane doe am 5. mai",
            "jane doe am Montag",
            "jane doe on monday",
            "jane doe, friday",
            "jane doe vor 3 stunden",
            "jane doe 3 hours ago",
            "jane doe @jd",
            "jane doe\nreporter",
            "jane doe, am",
            "jane doe the",
            "jane doe -",
            "post author",
            "name *",
            "last updated",
            "veröffentlicht am",
            "he said",
            "jane doe schrieb",
            "adam",
            "sam",
            "jane doe le",
            "jane doe um",
        ]);
        lines.extend(
            [
                "Jane Doe\u{2003}am Sonntag",
                "Jane Doe\tAM",
                "JANE DOE THE",
                "Autor",
            ]
            .map(String::from),
        );
        for (name, gated) in [
            ("TAIL", &TAIL),
            ("DANGLING", &DANGLING),
            ("NOT_A_NAME", &NOT_A_NAME),
        ] {
            gated.assert_holds_on(name, &lines, 10);
        }
        assert!(!TAIL.is_match("Jane Doe") && !DANGLING.is_match("Jane Doe"));
    }
}
